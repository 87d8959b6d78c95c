// Plays the HTML player SHIP writes in headless Chromium (Debian's, driven by
// playwright-core) along choice walks: clicks the n-th offered choice,
// records each passage shown (the page's body[data-passage]) and whether it
// ended; opens the codex at the end of the first walk; screenshots each walk.
// Each walk starts in a fresh browser context (no save); the first is reloaded half-way
// (where the page says it is, and the choices it offers, after the reload).
// Reports walks in which a story's own script ran (`pwned`), which must be none.
// Usage: node html-play.js story.html '[[1,2],[2,1]]' SHOT_DIR
'use strict';
const path = require('path');
const { chromium } = require('playwright-core');

(async () => {
  const [file, walksJson, shots] = process.argv.slice(2);
  const walks = JSON.parse(walksJson || '[[]]');
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const requests = [];
  const errors = [];
  const results = [];
  const pwned = [];
  for (const [w, walk] of walks.entries()) {
    // Each walk in a fresh context: its own, empty storage.
    const context = await browser.newContext({ viewport: { width: 1024, height: 768 } });
    const page = await context.newPage();
    page.on('request', (r) => { if (!r.url().startsWith('file:') && !r.url().startsWith('data:')) requests.push(r.url()); });
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto('file://' + path.resolve(file));
    const passages = [await page.getAttribute('body', 'data-passage')];
    let reload = null;
    const labels = async () => page.$$eval('#choices button', (bs) => bs.map((b) => b.textContent));
    for (const [i, n] of walk.entries()) {
      const button = page.locator(`#choices button[data-number="${n}"]`);
      if ((await button.count()) === 0) {
        throw new Error(`walk ${w} ${JSON.stringify(walk)}, step ${i}: no choice ${n} at ${passages[passages.length - 1]}; offered ${JSON.stringify(await labels())}; saved ${await page.evaluate(() => JSON.stringify(localStorage))}`);
      }
      await button.click();
      passages.push(await page.getAttribute('body', 'data-passage'));
      if (w === 0 && i === Math.floor(walk.length / 2)) {
        const before = { passage: passages[passages.length - 1], choices: await labels() };
        await page.reload();
        const after = { passage: await page.getAttribute('body', 'data-passage'), choices: await labels() };
        reload = { before, after };
      }
    }
    const ended = (await page.getAttribute('body', 'data-ended')) === 'true';
    // A story's script never runs (#43): a hostile story sets window.__pwned
    // if any of its script gets to run, and offers javascript: links.
    for (const link of await page.$$('a[href^="javascript:" i]')) await link.click().catch(() => {});
    if (await page.evaluate(() => window.__pwned === 1)) pwned.push(w);
    let codex = null;
    if (w === 0) {
      await page.click('#open-codex');
      codex = await page.textContent('#codex-entries');
      await page.screenshot({ path: path.join(shots, 'codex.png') });
      await page.click('#close-codex');
    }
    await page.screenshot({ path: path.join(shots, `walk-${w}.png`) });
    results.push({ passages, ended, codex, reload });
    await context.close();
  }
  await browser.close();
  console.log(JSON.stringify({ results, requests, errors, pwned }));
})().catch((e) => { console.error(String(e && e.stack || e)); process.exit(1); });
