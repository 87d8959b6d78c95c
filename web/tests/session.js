// Plays one turn of an open-ended session in the browser build (web/dist), in Debian's
// headless Chromium driven by playwright-core, narrated by the model inside the page
// (web/model.js: SmolLM2-135M-Instruct with the narrator adapter merged in, on llama.cpp
// in WebAssembly): no model server runs. On the title screen it starts a new session of
// "Lanterns on the Drowned Reach" (session zero, Begin); the page downloads its model
// from its own origin (a progress bar), checks its hash and keeps it; it reads the opening
// for a minute (the page's model reads the next turn's prompts meanwhile); it types a move
// into the session's text field and presses Enter, and checks the narration streams into
// the page (the published state's `streaming` grows over several reads) and the turn is
// committed. Then it reloads the page, clicks the campaign's Continue and checks the
// turn is there (the save is the SQLite database kept in IndexedDB: src/store,
// web/storage.js) and that the model came from the page's cache (no request for it).
// The embedding model (all-MiniLM-L6-v2 on candle in the game's wasm) is fetched once when
// the first session opens, and the session recalls lore and memory by meaning; after the
// reload it comes from the page's cache too.
// No request may leave the page's origin. Screenshots must show a picture.
// Last, IndexedDB is made to refuse writes and the player rewinds to the opening (a
// commit): the page must say "this turn was not kept", and stop once writes work again.
// Prints a JSON report (with the page model's timings); exits non-zero on any failure.
// Usage: [READ_MS=60000] [MODEL_THREADS=N] node web/tests/session.js DIST SHOT_DIR
'use strict';
const fs = require('fs');
const path = require('path');
const { chromium } = require(path.join(__dirname, '../../tools/ship-check/node_modules/playwright-core'));
const { serve, precompress } = require('../serve.js');
const kit = require('./page.js');
const { state, waitFor, click, launch, watchErrors } = kit;
const clickUntil = (page, name, what, pred, report, timeout) => kit.clickUntil(page, name, what, pred, report, shots, timeout);

const [dist, shots] = process.argv.slice(2);
const shoot = (page, name) => kit.shoot(page, shots, name);
const CAMPAIGN = 'Lanterns on the Drowned Reach';
const MOVE = 'I raise my lantern and look for the ferryman';
const TURN_MS = 20 * 60000; // a whole turn of the small model in WebAssembly on two shared cores
// The player reads the opening this long before moving (the page's model reads the next
// turn's prompts meanwhile: its primers); READ_MS=0 moves at once.
const READ_MS = Number(process.env.READ_MS ?? 60000);
// The first session waits for the embedding model (fetched, checked, loaded) and embeds the
// campaign's lore in the page's wasm on two shared cores.
const OPEN_MS = 4 * 60000;
// MODEL_THREADS=N gives the page's model N threads (default: the page's choice).
const MODEL_THREADS = process.env.MODEL_THREADS || '';

(async () => {
  fs.mkdirSync(shots, { recursive: true });
  precompress(dist);
  if (!fs.existsSync(path.join(dist, 'models/manifest.json'))) throw new Error(`${dist} was built without the page's model (LORELOOM_PAGE_MODEL; ./run.sh test makes it)`);
  const server = await serve(dist, 0);
  const origin = `http://127.0.0.1:${server.address().port}`;
  const url = `${origin}/`;
  const browser = await launch(chromium);
  const report = { url, manifest: JSON.parse(fs.readFileSync(path.join(dist, 'models/manifest.json'), 'utf8')) };
  // Every request the page makes: none may leave its origin; the model's are counted per load.
  const requests = [];
  let page = null;
  const errors = [];
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
    context.on('request', (r) => requests.push(r.url()));
    page = await context.newPage();
    watchErrors(page, errors);

    await page.goto(url);
    if (MODEL_THREADS) await page.evaluate((n) => localStorage.setItem('loreloom:page-model-threads', n), MODEL_THREADS);
    let s = await waitFor(page, 'the campaigns on the title screen', (t) => t.screen === 'Title' && (t.campaigns || []).some((c) => c.title === CAMPAIGN));
    const index = s.campaigns.findIndex((c) => c.title === CAMPAIGN);
    report.campaigns = s.campaigns.map((c) => c.title);
    await page.waitForTimeout(1500); // the cover arrives
    await clickUntil(page, `new-session-${index}`, 'session zero', (t) => t.targets['begin-session'], report);
    // The longest the page went without an animation frame while the session opened: what
    // a player feels as the page not answering (the open runs on the frame's thread).
    await page.evaluate(() => {
      const gaps = { longest: 0, last: performance.now() };
      window.loreloomGaps = gaps;
      const tick = (t) => { gaps.longest = Math.max(gaps.longest, t - gaps.last); gaps.last = t; requestAnimationFrame(tick); };
      requestAnimationFrame(tick);
    });
    const opening = Date.now();
    s = await clickUntil(page, 'begin-session', 'the session screen',
      (t) => t.screen === 'Session' && t.session && t.targets['session-input'] && !t.session.busy, report, OPEN_MS);
    // The first session fetched the embedding model (once), and recall is by meaning.
    report.openMs = Date.now() - opening;
    report.openHeldFrameMs = s.session.open_ms; // opening the save held the frame this long
    report.openLongestStallMs = await page.evaluate(() => Math.round(window.loreloomGaps.longest));
    report.embedder = await page.evaluate(() => ({ ...window.loreloomModel.status.embedder }));
    if (report.embedder.state !== 'ready' || report.embedder.fromCache !== false) {
      throw new Error(`the page's embedding model did not download and load: ${JSON.stringify(report.embedder)}`);
    }
    if (s.session.recall !== 'meaning') throw new Error(`the session recalls by ${s.session.recall}, not by meaning, with the embedder loaded`);
    const embedderUrls = Object.values(report.manifest.embedder.files).map((f) => new URL(f.file, url).href);
    report.embedderRequestsFirstLoad = embedderUrls.map((u) => requests.filter((r) => r.startsWith(u)).length);
    if (report.embedderRequestsFirstLoad.some((n) => n !== 1)) throw new Error(`the embedder's files were requested ${JSON.stringify(report.embedderRequestsFirstLoad)} times on the first load`);
    report.opening = s.session.entries.map((e) => e.kind);
    report.shots = [await shoot(page, 'session-opening')];
    report.readMs = READ_MS;
    await page.waitForTimeout(READ_MS);
    report.primesBeforeMove = await page.evaluate(() => ({ ...window.loreloomModel.status.primes }));

    // A move, typed as a player types it.
    await clickUntil(page, 'session-input', 'the text field to take the keyboard', (t) => t.typing, report);
    await page.keyboard.type(MOVE, { delay: 20 });
    await page.keyboard.press('Enter');
    const started = Date.now();
    const streamed = [];
    const frames = []; // the page's mean frame time, read once a second, while the model works
    let firstWordsMs = null;
    const until = started + TURN_MS;
    for (;;) {
      s = await state(page);
      const ms = Number(await page.evaluate(() => document.body.dataset.loreloomFrameMs));
      if (ms > 0) frames.push(ms);
      const sess = s && s.session;
      if (sess && sess.streaming && (streamed.length === 0 || streamed[streamed.length - 1] !== sess.streaming.length)) {
        if (firstWordsMs === null) firstWordsMs = Date.now() - started;
        streamed.push(sess.streaming.length);
      }
      if (sess && sess.failure) throw new Error(`the turn failed: ${sess.failure}`);
      if (sess && !sess.busy && sess.entries.some((e) => e.kind === 'intention' && e.text === MOVE)
          && sess.entries.findIndex((e) => e.kind === 'intention' && e.text === MOVE) < sess.entries.map((e) => e.kind).lastIndexOf('narration')) break;
      if (Date.now() > until) throw new Error(`the turn did not finish in ${TURN_MS / 1000} s; state: ${JSON.stringify(sess)}`);
      await page.waitForTimeout(150);
    }
    report.turnMs = Date.now() - started;
    report.firstWordsMs = firstWordsMs;
    frames.sort((a, b) => a - b);
    report.frameMsDuringTurn = frames.length ? { p50: frames[Math.floor(frames.length / 2)], max: frames[frames.length - 1] } : null;
    report.pageModel = await page.evaluate(() => window.loreloomModel.status);
    if (report.pageModel.state !== 'ready' || report.pageModel.fromCache !== false || report.pageModel.calls < 1) {
      throw new Error(`the page's model did not download and answer: ${JSON.stringify(report.pageModel)}`);
    }
    const modelUrl = new URL(report.manifest.narrator.file, url).href;
    report.modelRequestsFirstLoad = requests.filter((r) => r.startsWith(modelUrl)).length;
    if (report.modelRequestsFirstLoad !== 1) throw new Error(`the model was requested ${report.modelRequestsFirstLoad} times on the first load`);
    // Each narration of the turn (the player's, then the people's who act) streams
    // on its own: the lengths read grow, and start again for the next one.
    const runs = [];
    streamed.forEach((n, i) => { if (i === 0 || n < streamed[i - 1]) runs.push([]); runs[runs.length - 1].push(n); });
    report.streamedLengths = runs;
    if (!runs.length || runs[0].length < 3) {
      throw new Error(`the narration did not stream into the page (lengths read: ${JSON.stringify(runs)})`);
    }
    const entries = s.session.entries;
    const narration = entries[entries.map((e) => e.kind).lastIndexOf('narration')].text;
    report.narration = narration;
    report.sceneIndex = s.session.scene_index;
    report.shots.push(await shoot(page, 'session-turn'));
    // Every write so far in IndexedDB before the page goes.
    await page.evaluate(() => window.loreloomFiles.settled());
    report.kept = await page.evaluate(() => ({
      files: window.loreloomFiles.names(),
      writes: window.loreloomFiles.written,
      failed: window.loreloomFiles.failed,
      persisted: window.loreloomFiles.persisted,
    }));
    if (report.kept.failed.length) throw new Error(`writes that did not reach IndexedDB: ${JSON.stringify(report.kept.failed)}`);
    if (typeof report.kept.persisted !== 'boolean') throw new Error('the page did not ask the browser to keep its storage (navigator.storage.persist)');
    if (!report.kept.files.some((f) => /saves\/.+\.db$/.test(f))) throw new Error(`no session save in IndexedDB: ${JSON.stringify(report.kept)}`);

    // Reload: the campaign offers Continue, and the save holds the turn.
    const before = requests.length;
    await page.reload();
    s = await waitFor(page, 'Continue on the title screen after a reload', (t) => t.screen === 'Title' && t.targets[`continue-session-${index}`]);
    await page.waitForTimeout(1500);
    s = await clickUntil(page, `continue-session-${index}`, 'the session reopened',
      (t) => t.screen === 'Session' && t.session && t.session.entries.length > 0, report, OPEN_MS);
    const back = s.session.entries;
    if (!back.some((e) => e.kind === 'intention' && e.text === MOVE)) throw new Error(`the move is not in the save after a reload: ${JSON.stringify(back)}`);
    if (!back.some((e) => e.kind === 'narration' && e.text === narration)) throw new Error(`the turn's narration is not in the save after a reload: ${JSON.stringify(back)}`);
    if (s.session.scene_index !== report.sceneIndex) throw new Error(`reopened at scene ${s.session.scene_index}, the turn made scene ${report.sceneIndex}`);
    report.reopened = back.map((e) => e.kind);
    report.reopenHeldFrameMs = s.session.open_ms;
    // The embedder came from the page's cache: no request for its files after the reload.
    report.embedderAfterReload = await page.evaluate(() => ({ ...window.loreloomModel.status.embedder }));
    if (report.embedderAfterReload.state !== 'ready' || report.embedderAfterReload.fromCache !== true || s.session.recall !== 'meaning') {
      throw new Error(`after a reload the embedder did not come from the page's cache: ${JSON.stringify(report.embedderAfterReload)}, recall by ${s.session.recall}`);
    }
    const embedderAgain = requests.slice(before).filter((r) => embedderUrls.some((u) => r.startsWith(u)));
    if (embedderAgain.length) throw new Error(`after a reload the embedder's files were requested again: ${JSON.stringify(embedderAgain)}`);
    // The model is read from the page's cache: loaded again, with no request for it.
    await page.evaluate(() => window.loreloomModel.start());
    report.pageModelAfterReload = await page.evaluate(() => window.loreloomModel.status);
    if (report.pageModelAfterReload.fromCache !== true) throw new Error(`after a reload the model did not come from the page's cache: ${JSON.stringify(report.pageModelAfterReload)}`);
    const again = requests.slice(before).filter((r) => r.startsWith(modelUrl));
    if (again.length) throw new Error(`after a reload the model was requested again: ${JSON.stringify(again)}`);
    report.shots.push(await shoot(page, 'session-reopened'));

    // Another website, open while the player plays, cannot reach the model: it lives
    // in the page, and the page's server answers no /v1 call.
    const elsewhere = require('http').createServer((_q, r) => r.end('<!doctype html><title>elsewhere</title>'));
    await new Promise((r) => elsewhere.listen(0, '127.0.0.1', r));
    report.crossOriginPort = elsewhere.address().port;
    const other = await context.newPage();
    await other.goto(`http://127.0.0.1:${elsewhere.address().port}/`);
    report.crossOrigin = await other.evaluate(async (pagePort) => fetch(`http://127.0.0.1:${pagePort}/v1/chat/completions`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'Say yes.' }], max_tokens: 4 }) })
      .then(async (r) => ({ status: r.status, body: (await r.text()).slice(0, 80) }), (e) => ({ refused: String(e) })), server.address().port);
    await other.close();
    elsewhere.close();
    if (report.crossOrigin.status === 200 || /choices/.test(report.crossOrigin.body || '')) throw new Error(`another origin drove a model through the page's server: ${JSON.stringify(report.crossOrigin)}`);

    // The reopened session writes its "Previously…" recap with the model first; the
    // field takes the keyboard once that is done.
    s = await waitFor(page, 'the reopened session idle (its recap written)', (t) => t.session && !t.session.busy && t.targets['session-input'], TURN_MS);
    report.recap = (s.session.entries.find((e) => e.kind === 'recap') || {}).text || null;

    // IndexedDB refuses the next writes (as a full disk would): the turn is
    // played, the page says it was not kept, and stops once writes work again.
    await page.evaluate(() => {
      window.__put = IDBObjectStore.prototype.put;
      IDBObjectStore.prototype.put = function refuse() { throw new DOMException('the disk is full (test)', 'QuotaExceededError'); };
    });
    await clickUntil(page, 'session-input', 'the text field to take the keyboard', (t) => t.typing, report);
    // A rewind to the opening: a commit with no model call (a second turn of the page's
    // model takes as long as the first: minutes on two cores).
    await page.keyboard.type('/rewind 0', { delay: 20 });
    await page.keyboard.press('Enter');
    s = await waitFor(page, '"this turn was not kept" on the page', (t) => t.session && typeof t.session.not_kept === 'string', TURN_MS);
    report.notKept = s.session.not_kept;
    if (!/this turn was not kept/.test(report.notKept)) throw new Error(`the page said: ${report.notKept}`);
    report.shots.push(await shoot(page, 'session-not-kept'));
    const writtenBefore = await page.evaluate(() => { IDBObjectStore.prototype.put = window.__put; return window.loreloomFiles.written; });
    s = await waitFor(page, 'the warning gone once writes work', (t) => t.session && t.session.not_kept === null, 60000);
    await page.evaluate(() => window.loreloomFiles.settled());
    report.keptAgain = await page.evaluate((n) => window.loreloomFiles.written - n, writtenBefore);
    if (!(report.keptAgain > 0)) throw new Error('the warning went but no write reached IndexedDB');
    errors.splice(0, errors.length, ...errors.filter((e) => !/IndexedDB|not kept|disk is full/.test(e)));
    const outside = requests.filter((r) => !r.startsWith(`${origin}/`) && !r.startsWith(`blob:${origin}/`) && !r.startsWith('data:')
      && !r.startsWith(`http://127.0.0.1:${report.crossOriginPort}`));
    report.requests = requests.length;
    if (outside.length) throw new Error(`requests left the page's origin: ${JSON.stringify(outside.slice(0, 5))}`);
    if (errors.length) throw new Error(`the page reported errors:\n${errors.join('\n')}`);
    report.movedTargets = kit.settling.moved;
    console.log(JSON.stringify(report, null, 1));
  } catch (err) {
    if (page) await page.screenshot({ path: path.join(shots, 'session-failure.png') }).catch(() => {});
    if (page) report.pageModelAtFailure = await page.evaluate(() => window.loreloomModel && window.loreloomModel.status).catch(() => null);
    report.movedTargets = kit.settling.moved;
    console.log(JSON.stringify(report, null, 1));
    console.error(`web session test: ${err.message}`);
    if (errors.length) console.error(errors.join('\n'));
    process.exitCode = 1;
  } finally {
    await browser.close();
    server.close();
  }
})();
