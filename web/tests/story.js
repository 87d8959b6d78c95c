// Plays the browser build (web/dist) in Debian's headless Chromium, driven by
// playwright-core, the way a player does: waits for the title shelf, clicks
// Begin, reads each passage to its end (clicking "more…" or the text) and
// clicks the first choice offered until the story ends; part-way it reloads
// the page and clicks Continue (the autosave lives in localStorage); at the
// ending it opens the codex. It also picks a QuestFoundry story file with the
// page's file input and checks the shelf keeps it across a reload. Every
// screenshot must show a picture, not a blank canvas. Positions come from the
// page's published state (body[data-loreloom], src/ui/page.rs), where each
// control's box is.
// Then sets "Narrator model…" to a server and back (the page's models.ron).
// Prints a JSON report: first frame, transfer sizes, frame time while the
// typewriter runs, the passages played. Exits non-zero on any failure.
// Usage: node web/tests/story.js DIST SHOT_DIR QUESTFOUNDRY_JSON
'use strict';
const fs = require('fs');
const path = require('path');
const { chromium } = require(path.join(__dirname, '../../tools/ship-check/node_modules/playwright-core'));
const { serve, precompress } = require('../serve.js');

const kit = require('./page.js');
const { fail, launch, watchErrors, state, waitFor, click } = kit;

const [dist, shots, qfStory] = process.argv.slice(2);
const shoot = (page, name) => kit.shoot(page, shots, name);

/// Read the passage on screen to its end: click "more…" until the choices (or the ending) show.
async function readToEnd(page) {
  for (let i = 0; i < 40; i++) {
    const s = await state(page);
    if (s.finished) return s;
    const before = JSON.stringify(s);
    // The same snapshot: the text may turn its page on its own between two reads.
    await click(page, s.targets.more ? 'more' : 'text', s);
    await waitFor(page, 'the text to move on', (t) => JSON.stringify(t) !== before);
  }
  fail('a passage never finished');
}

(async () => {
  fs.mkdirSync(shots, { recursive: true });
  const sizes = precompress(dist);
  const server = await serve(dist, 0);
  const url = `http://127.0.0.1:${server.address().port}/`;
  const browser = await launch(chromium);
  const errors = [];
  const report = { url };
  let lastPage = null;
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
    const page = await context.newPage();
    lastPage = page;
    // When the page first shows Loreloom's state (its first frame), in ms after navigation start.
    await page.addInitScript(() => {
      new MutationObserver((_, observer) => {
        if (document.body && document.body.dataset.loreloom && window.__firstFrame === undefined) {
          window.__firstFrame = performance.now();
          observer.disconnect();
        }
      }).observe(document, { attributes: true, subtree: true, attributeFilter: ['data-loreloom'] });
    });
    watchErrors(page, errors);
    const transfers = [];
    page.on('requestfinished', async (r) => {
      const sizes = await r.sizes().catch(() => null);
      if (sizes) transfers.push({ url: r.url().replace(url, ''), bytes: sizes.responseBodySize, at: Date.now() });
    });

    // The title shelf.
    await page.goto(url);
    let s = await waitFor(page, 'the title screen', (t) => t.screen === 'Title' && t.targets.begin);
    const timing = await page.evaluate(() => ({
      firstFrame: window.__firstFrame,
      load: performance.getEntriesByType('navigation')[0].loadEventEnd,
    }));
    await page.waitForTimeout(1500); // the cover arrives
    report.firstFrameMs = Math.round(timing.firstFrame);
    report.loadMs = Math.round(timing.load);
    report.firstScreenTransfer = transfers.reduce((n, t) => n + t.bytes, 0);
    report.transfers = transfers.map((t) => `${t.url} ${t.bytes}`);
    report.sizes = sizes;
    report.shelf = s.shelf;
    report.shots = [await shoot(page, 'title')];

    // Begin, and the typewriter's frame time while the first page types out.
    await click(page, 'begin');
    s = await waitFor(page, 'the first passage', (t) => t.screen === 'Playing' && t.passage);
    const passages = [s.passage];
    await page.waitForTimeout(2200);
    report.typewriterFrameMs = Number(await page.evaluate(() => document.body.dataset.loreloomFrameMs));
    report.shots.push(await shoot(page, 'first-passage'));
    report.audio = await page.evaluate(() => (window.loreloomAudioContexts || []).map((c) => c.state));
    if (!report.audio.includes('running')) fail(`no sound after the first click: audio contexts ${JSON.stringify(report.audio)}`);

    // Play: the first choice each time, to an ending; reload and Continue after the third choice.
    let choices = 0;
    while (!(s = await readToEnd(page)).ending) {
      if (choices === 3) {
        const saved = s.passage;
        await page.reload();
        s = await waitFor(page, 'the title screen after a reload', (t) => t.screen === 'Title' && t.targets.continue);
        await click(page, 'continue');
        s = await waitFor(page, 'the saved passage', (t) => t.screen === 'Playing' && t.passage);
        if (s.passage !== saved) fail(`Continue opened ${s.passage}, the save was at ${saved}`);
        report.reload = { saved, continued: s.passage };
        s = await readToEnd(page);
      }
      if (!s.targets['choice-1']) fail(`no choice at ${s.passage}: ${JSON.stringify(s)}`);
      const at = s.passage;
      choices += 1;
      s = await kit.clickUntil(page, 'choice-1', `the passage after ${at}`, (t) => t.passage && t.passage !== at, report, shots);
      passages.push(s.passage);
      if (choices > 40) fail('no ending after 40 choices');
    }
    report.passages = passages;
    report.ending = s.ending;
    report.shots.push(await shoot(page, 'ending'));
    await click(page, 'codex');
    await waitFor(page, 'the codex', (t) => t.codex);
    await page.waitForTimeout(500);
    report.shots.push(await shoot(page, 'codex'));
    const keys = await page.evaluate(() => Object.keys(localStorage));
    if (!keys.some((k) => /saves\/.+\/autosave\.json$/.test(k))) fail(`no autosave in localStorage: ${JSON.stringify(keys)}`);
    if (!keys.some((k) => /settings\.ron$/.test(k))) fail(`no settings in localStorage: ${JSON.stringify(keys)}`);
    report.storage = keys;

    // A story file picked with the page's file input joins the shelf and stays after a reload.
    await page.keyboard.press('Escape');
    await page.reload();
    await waitFor(page, 'the title screen', (t) => t.screen === 'Title' && t.targets.begin);
    const before = (await state(page)).shelf.length;
    await page.setInputFiles('#file', qfStory);
    s = await waitFor(page, 'the picked story on the shelf', (t) => t.shelf.length === before + 1);
    const picked = s.shelf[s.selected];
    if (picked.startsWith('(cannot open)')) fail(`the picked story did not open: ${picked}`);
    await page.reload();
    s = await waitFor(page, 'the shelf after a reload', (t) => t.screen === 'Title' && t.shelf.length === before + 1);
    report.picked = picked;
    report.shots.push(await shoot(page, 'shelf-after-reload'));

    // "Narrator model…" on the title screen: a server with an address is written to the
    // page's models.ron (the page reloads); choosing the page's model again removes it.
    await page.click('#model-open');
    if (!await page.evaluate(() => document.getElementById('model-dialog').open)) fail('"Narrator model…" opened no dialog');
    await page.check('#model-dialog input[value=server]');
    await page.fill('#model-dialog input[name=url]', 'http://127.0.0.1:9/v1');
    await Promise.all([page.waitForNavigation(), page.click('#model-dialog button[value=save]')]);
    const ron = await page.evaluate(() => localStorage.getItem('loreloom:.loreloom/models.ron'));
    if (!ron || !ron.includes('OpenAi(url: "http://127.0.0.1:9/v1"')) fail(`the chosen server is not in models.ron: ${ron}`);
    await waitFor(page, 'the title screen after choosing a server', (t) => t.screen === 'Title' && t.targets.begin);
    await page.click('#model-open');
    await page.check('#model-dialog input[value=page]');
    await Promise.all([page.waitForNavigation(), page.click('#model-dialog button[value=save]')]);
    const back = await page.evaluate(() => [localStorage.getItem('loreloom:page-model'), localStorage.getItem('loreloom:.loreloom/models.ron')]);
    if (back[0] !== 'page' || back[1] !== null) fail(`choosing the page's model again left ${JSON.stringify(back)}`);
    await waitFor(page, 'the title screen after choosing the page', (t) => t.screen === 'Title' && t.targets.begin);
    report.modelSetting = 'server written to models.ron, then the page model again';
    if (errors.length) fail(`the page reported errors:\n${errors.join('\n')}`);
    report.movedTargets = kit.settling.moved;
    console.log(JSON.stringify(report, null, 1));
  } catch (err) {
    if (lastPage) await lastPage.screenshot({ path: path.join(shots, 'failure.png') }).catch(() => {});
    report.movedTargets = kit.settling.moved;
    console.log(JSON.stringify(report, null, 1));
    console.error(`web story test: ${err.message}`);
    if (errors.length) console.error(errors.join('\n'));
    process.exitCode = 1;
  } finally {
    await browser.close();
    server.close();
  }
})();
