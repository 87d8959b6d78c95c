// What the browser tests share: Chromium's flags, reading the page's published state
// (body[data-loreloom], src/ui/page.rs), waiting on it, clicking a control where the
// page says it is, screenshots checked for a picture, and the errors a page reports.
'use strict';
const path = require('path');

const STEP_MS = 60000; // software WebGL on two cores is slow; nothing should take a minute

function fail(message) {
  throw new Error(message);
}

/// Debian's Chromium, headless, with software WebGL and nothing reaching out.
function launch(chromium) {
  return chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--headless=new', '--no-sandbox', '--use-angle=swiftshader', '--enable-unsafe-swiftshader',
      '--use-gl=angle', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--disable-default-apps'],
  });
}

/// Page errors, console errors and failed requests go to `errors`.
function watchErrors(page, errors) {
  page.on('pageerror', (e) => errors.push(`page error: ${e}`));
  page.on('console', (m) => {
    const text = m.text();
    if (text.includes('panicked') || (m.type() === 'error' && !text.includes('Using exceptions for control flow'))) errors.push(`console: ${text} ${JSON.stringify(m.location())}`);
  });
  page.on('response', (r) => { if (r.status() >= 400) errors.push(`HTTP ${r.status()} ${r.url()}`); });
}

async function state(page) {
  return JSON.parse(await page.evaluate(() => document.body.dataset.loreloom || 'null'));
}

/// Poll the published state until `pred` holds; returns it.
async function waitFor(page, what, pred, timeout = STEP_MS) {
  const until = Date.now() + timeout;
  let last = null;
  while (Date.now() < until) {
    last = await state(page);
    if (last && pred(last)) return last;
    await page.waitForTimeout(100);
  }
  fail(`timed out waiting for ${what}; the page's state: ${JSON.stringify(last)}`);
}

/// Controls whose place changed between two reads just before a click (a window
/// that opened this frame is laid out again on the next: egui sizes it first).
const settling = { moved: 0 };

/// Where `name` is once it stays put for two reads 100 ms apart (at most 2 s).
async function settled(page, name, box) {
  const until = Date.now() + 2000;
  while (Date.now() < until) {
    await page.waitForTimeout(100);
    const again = await state(page);
    const next = again && again.targets[name];
    if (!next) return box;
    if (next.every((v, i) => Math.abs(v - box[i]) < 0.5)) return box;
    settling.moved++;
    box = next;
  }
  return box;
}

/// Click the control `name` where the page says it is (`seen`: a state already read).
async function click(page, name, seen = null) {
  const s = seen || await state(page);
  let box = s && s.targets[name];
  if (!box) fail(`no "${name}" on screen; targets: ${JSON.stringify(s && Object.keys(s.targets))}`);
  box = await settled(page, name, box);
  // As a hand clicks: over the control first, then press and release a moment apart
  // (a press and release inside one slow frame is not what players do).
  await page.mouse.move(box[0] + box[2] / 2, box[1] + box[3] / 2);
  await page.waitForTimeout(60);
  await page.mouse.down();
  await page.waitForTimeout(80);
  await page.mouse.up();
}

/// Click `name` and wait until `pred` holds. Seen now and then in headless Chromium:
/// a click nothing answers (the hover registers, the press does not); it is counted
/// in `report.lostClicks`, screenshotted into `dir`, and clicked once more; a second
/// loss fails.
async function clickUntil(page, name, what, pred, report, dir, timeout = STEP_MS) {
  await click(page, name);
  const s = await waitFor(page, what, pred, 15000).catch(() => null);
  if (s) return s;
  report.lostClicks = (report.lostClicks || 0) + 1;
  await page.screenshot({ path: path.join(dir, `lost-click-${report.lostClicks}.png`) });
  await click(page, name);
  return waitFor(page, `${what} (clicked twice)`, pred, timeout);
}

/// A screenshot into `dir`, and how much it varies: a blank (one-colour) canvas has a spread near 0.
async function shoot(page, dir, name) {
  const file = path.join(dir, `${name}.png`);
  const png = await page.screenshot({ path: file });
  const spread = await page.evaluate(async (b64) => {
    const blob = await (await fetch(`data:image/png;base64,${b64}`)).blob();
    const bitmap = await createImageBitmap(blob);
    const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
    const g = canvas.getContext('2d');
    g.drawImage(bitmap, 0, 0);
    const data = g.getImageData(0, 0, bitmap.width, bitmap.height).data;
    let sum = 0; let sq = 0; const n = data.length / 4;
    for (let i = 0; i < data.length; i += 4) {
      const l = 0.299 * data[i] + 0.587 * data[i + 1] + 0.114 * data[i + 2];
      sum += l; sq += l * l;
    }
    const mean = sum / n;
    return Math.sqrt(sq / n - mean * mean);
  }, png.toString('base64'));
  if (!(spread > 12)) fail(`${file} looks blank (luminance spread ${spread.toFixed(1)})`);
  return { file, spread: Math.round(spread * 10) / 10 };
}

module.exports = { STEP_MS, settling, fail, launch, watchErrors, state, waitFor, click, clickUntil, shoot };
