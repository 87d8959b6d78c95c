// A model download that stops sending is given up, never waited on forever (#45): the
// page's model module (web/model.js, as the built page serves it) asks a loopback server
// for the memory model, whose weights file sends its headers and 16 bytes, then nothing.
// After model.js's stall limit (30 s) the load must fail with a message naming the file,
// the page's bar must say so, and nothing of it may be kept in Cache Storage; the small
// files that did arrive are not reported as the model. Needs no build: it serves a
// folder it makes, with model.js copied from web/.
// Usage: node web/tests/stall.js        (exits non-zero on any failure)
'use strict';
const fs = require('fs');
const http = require('http');
const os = require('os');
const path = require('path');
const crypto = require('crypto');
const { chromium } = require(path.join(__dirname, '../../tools/ship-check/node_modules/playwright-core'));
const { launch } = require('./page.js');

function fail(message) {
  console.error(`web/tests/stall.js: ${message}`);
  process.exit(1);
}

const sha = (b) => crypto.createHash('sha256').update(b).digest('hex');

(async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'loreloom-stall-'));
  fs.copyFileSync(path.join(__dirname, '..', 'model.js'), path.join(dir, 'model.js'));
  fs.writeFileSync(path.join(dir, 'index.html'), '<!doctype html><meta charset="utf-8"><title>stall</title>'
    + '<div id="model-status" hidden><progress></progress><span></span></div>'
    + '<button id="model-open"></button><dialog id="model-dialog"><form method="dialog"></form></dialog>'
    + '<script type="module" src="model.js"></script>');
  const config = Buffer.from('{"hidden_size": 384}');
  const tokenizer = Buffer.from('{"model": {}}');
  const weights = { bytes: 1000000, sha256: 'a'.repeat(64) };
  const listed = (file, b) => ({ file, bytes: b.length, sha256: sha(b) });
  const manifest = { embedder: { files: {
    config: listed('models/e/config.json', config),
    tokenizer: listed('models/e/tokenizer.json', tokenizer),
    weights: { file: 'models/e/model.safetensors', ...weights },
  } } };
  const held = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://127.0.0.1');
    const send = (type, body) => { res.writeHead(200, { 'Content-Type': type, 'Content-Length': body.length }); res.end(body); };
    if (url.pathname === '/' || url.pathname === '/index.html') return send('text/html', fs.readFileSync(path.join(dir, 'index.html')));
    if (url.pathname === '/model.js') return send('text/javascript', fs.readFileSync(path.join(dir, 'model.js')));
    if (url.pathname === '/models/manifest.json') return send('application/json', Buffer.from(JSON.stringify(manifest)));
    if (url.pathname === '/models/e/config.json') return send('application/json', config);
    if (url.pathname === '/models/e/tokenizer.json') return send('application/json', tokenizer);
    if (url.pathname === '/models/e/model.safetensors') {
      // Headers and a first piece, then nothing: a connection that died without closing.
      res.writeHead(200, { 'Content-Type': 'application/octet-stream', 'Content-Length': weights.bytes });
      res.write(Buffer.alloc(16));
      held.push(res);
      return undefined;
    }
    res.writeHead(404);
    return res.end();
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${server.address().port}`;
  const browser = await launch(chromium);
  try {
    const page = await browser.newPage();
    await page.goto(`${origin}/`);
    await page.waitForFunction(() => window.loreloomModel, null, { timeout: 30000 });
    const began = Date.now();
    // Without a stall limit the load would never settle: the race keeps this test from hanging.
    const outcome = await page.evaluate(() => Promise.race([
      window.loreloomModel.embedderFiles()
        .then(() => ({ ok: true }), (e) => ({ ok: false, message: String(e && e.message ? e.message : e) })),
      new Promise((r) => setTimeout(() => r({ ok: false, message: 'no answer within 90 s: the load hangs' }), 90000)),
    ]));
    const tookS = (Date.now() - began) / 1000;
    const after = await page.evaluate(async () => ({
      embedder: window.loreloomModel.status.embedder,
      bar: document.querySelector('#model-status span').textContent,
      kept: await (await caches.open('loreloom-embedder')).keys().then((k) => k.map((r) => r.url)),
    }));
    console.log(JSON.stringify({ tookS, outcome, embedder: after.embedder, bar: after.bar, kept: after.kept }));
    if (outcome.ok) fail('the stalled download was taken as the model');
    if (!outcome.message.includes('model.safetensors') || !outcome.message.includes('nothing arrived'))
      fail(`the failure does not say which file stalled: ${outcome.message}`);
    if (tookS < 25 || tookS > 90) fail(`given up after ${tookS} s, not after the 30 s stall limit`);
    if (after.embedder.state !== 'failed') fail(`the memory model's state is ${after.embedder.state}, not failed`);
    if (!after.bar.includes('cannot load')) fail(`the page's bar does not say the model cannot load: ${after.bar}`);
    if (after.kept.some((u) => u.includes('model.safetensors'))) fail(`the stalled file was kept: ${after.kept}`);
  } finally {
    for (const r of held) r.destroy();
    await browser.close();
    server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  console.log('web/tests/stall.js: a stalled model download is given up with its reason');
})().catch((e) => fail(e.stack || String(e)));
