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

/// Controls whose place changed between two frames just before a click.
const settling = { moved: 0 };

const frameNo = async (page) => Number(await page.evaluate(() => document.body.dataset.loreloomFrame || 0));

/// Where `name` is once its corner stays put for two frames drawn after it was read, or once the
/// page draws no frame for a second (it sleeps when nothing moves). Time alone is no
/// test: a window that opens lays itself out over its first frames (egui sizes it, then
/// anchors it by the size it found; Session zero's Begin crossed 170 px), and on SwiftShader
/// two frames can be 300 ms apart, so two reads 100 ms apart saw one frame's place twice
/// and the click went where the button had been (the lost first click of #45).
async function settled(page, name, box) {
  const until = Date.now() + 5000;
  let frame = await frameNo(page);
  let quietSince = Date.now();
  let still = 0;
  while (Date.now() < until) {
    await page.waitForTimeout(50);
    const now = await frameNo(page);
    if (now === frame) {
      if (Date.now() - quietSince >= 1000) return box;
      continue;
    }
    frame = now;
    quietSince = Date.now();
    const again = await state(page);
    const next = again && again.targets[name];
    if (!next) return box;
    // Its corner, not its size: text typing out grows its box where it stands.
    if (Math.abs(next[0] - box[0]) < 0.5 && Math.abs(next[1] - box[1]) < 0.5) {
      box = next;
      if (++still >= 2) return box;
    } else {
      if (process.env.SETTLE_DEBUG) console.error(`${name} moved: ${JSON.stringify(box)} -> ${JSON.stringify(next)} (frame ${frame})`);
      settling.moved++;
      box = next;
      still = 0;
    }
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

/// Click `name` and wait until `pred` holds; a click nothing answers fails, with a
/// screenshot in `dir` (`lost-click-N.png`) and `report.lostClicks` counted.
async function clickUntil(page, name, what, pred, report, dir, timeout = STEP_MS) {
  await click(page, name);
  const s = await waitFor(page, what, pred, timeout).catch(() => null);
  if (s) return s;
  report.lostClicks = (report.lostClicks || 0) + 1;
  await page.screenshot({ path: path.join(dir, `lost-click-${report.lostClicks}.png`) });
  fail(`a click on "${name}" went unanswered: no ${what} within ${timeout / 1000} s (screenshot lost-click-${report.lostClicks}.png)`);
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
