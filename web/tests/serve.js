// The page's server refuses what is not its own (#43): 30 hostile requests
// (traversal by `..`, encoded separators, backslashes, double encoding, a link
// leading out, a sibling folder sharing the root's prefix, NUL bytes, broken
// percent-escapes, a malformed request line, other methods, another Host)
// against a real server on loopback. None may return a byte of the files
// outside its folder, and the server must still serve its page afterwards.
// Then the model calls it forwards (#43): a stand-in model server that answers
// only its key; the page's own origin gets through with the key added, another
// origin (or a cross-site fetch, or another Host) is refused before anything
// reaches the model, and the key never comes back to the page.
// Needs no build: it serves a folder it makes.
// Usage: node web/tests/serve.js        (exits non-zero on any failure)
'use strict';
const fs = require('fs');
const net = require('net');
const os = require('os');
const path = require('path');
const { serve } = require('../serve.js');

const SECRET = 'the player secret 7f3a';

function fail(message) {
  console.error(`web/tests/serve.js: ${message}`);
  process.exit(1);
}

/// One raw request (the path exactly as written, nothing normalised); the
/// whole answer as text ('' when the server closed without one).
function raw(port, request) {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    let answer = '';
    socket.setTimeout(5000, () => { socket.destroy(); resolve(answer); });
    socket.on('data', (d) => { answer += d.toString('latin1'); });
    socket.on('end', () => resolve(answer));
    socket.on('error', () => resolve(answer));
    socket.write(request);
  });
}

const http = require('http');

/// A POST with the given extra header lines.
const post = (port, target, lines, body = '{"messages":[]}') =>
  raw(port, `POST ${target} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\n${lines.map((l) => `${l}\r\n`).join('')}Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);

/// The model calls: forwarded only from the page's origin, with the key.
async function modelCalls(root) {
  const KEY = 'per-run-key-5c1d';
  const seen = [];
  const upstream = http.createServer((req, res) => {
    seen.push({ url: req.url, auth: req.headers.authorization || '' });
    if (req.headers.authorization !== `Bearer ${KEY}`) { res.writeHead(401).end('no key'); return; }
    req.resume();
    req.on('end', () => res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"choices":[{"message":{"content":"ok"}}]}'));
  });
  await new Promise((r) => upstream.listen(0, '127.0.0.1', r));
  const up = `http://127.0.0.1:${upstream.address().port}`;
  const server = await serve(root, 0, { upstream: up, key: KEY });
  const port = server.address().port;
  const own = `Origin: http://127.0.0.1:${port}`;
  const page = await post(port, '/v1/chat/completions', [own, 'Sec-Fetch-Site: same-origin']);
  if (status(page) !== 200 || !page.includes('"ok"')) fail(`the page's own call was not forwarded: ${page.slice(0, 120)}`);
  if (seen.length !== 1 || seen[0].auth !== `Bearer ${KEY}`) fail(`the call did not carry the key: ${JSON.stringify(seen)}`);
  if (page.includes(KEY)) fail('the key came back to the page');
  const refused = [
    ['another origin', await post(port, '/v1/chat/completions', ['Origin: https://evil.example', 'Sec-Fetch-Site: cross-site'])],
    ['another origin on this machine', await post(port, '/v1/chat/completions', ['Origin: http://127.0.0.1:1', 'Sec-Fetch-Site: same-site'])],
    ['an opaque origin', await post(port, '/v1/chat/completions', ['Origin: null'])],
    ['a cross-site fetch without Origin', await post(port, '/v1/chat/completions', ['Sec-Fetch-Site: cross-site'])],
    ['a preflight from another origin', await raw(port, `OPTIONS /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nOrigin: https://evil.example\r\nAccess-Control-Request-Method: POST\r\nConnection: close\r\n\r\n`)],
    ['another Host', await raw(port, `POST /v1/chat/completions HTTP/1.1\r\nHost: evil.example\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`)],
  ];
  const through = refused.filter(([, a]) => status(a) === 200 || a.includes('"ok"')).map(([t]) => t);
  if (through.length) fail(`forwarded a model call for: ${through.join(', ')}`);
  if (seen.length !== 1) fail(`${seen.length - 1} refused calls reached the model server`);
  // Without the key the model server answers no one.
  const direct = await raw(upstream.address().port, `POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`);
  if (status(direct) !== 401) fail('the stand-in model server answered without its key');
  server.close();
  upstream.close();
  return { forwarded: 1, refused: refused.map(([t, a]) => ({ request: t, status: status(a) })) };
}

const get = (port, target, host = `127.0.0.1:${port}`, method = 'GET') =>
  raw(port, `${method} ${target} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);

const status = (answer) => Number((answer.match(/^HTTP\/1\.1 (\d{3})/) || [])[1] || 0);

async function main() {
  const top = fs.mkdtempSync(path.join(os.tmpdir(), 'loreloom-serve-'));
  const root = path.join(top, 'dist');
  fs.mkdirSync(path.join(root, 'pkg'), { recursive: true });
  fs.writeFileSync(path.join(root, 'index.html'), '<!doctype html><title>Loreloom</title>');
  fs.writeFileSync(path.join(root, 'pkg', 'app.js'), 'console.log(1);');
  // Outside the root: a sibling sharing its prefix, a file above it, and a
  // link inside the root that leads out.
  fs.mkdirSync(path.join(top, 'dist-old'));
  fs.writeFileSync(path.join(top, 'dist-old', 'secret.txt'), SECRET);
  fs.writeFileSync(path.join(top, 'secret.txt'), SECRET);
  fs.symlinkSync(path.join(top, 'dist-old'), path.join(root, 'out'));
  fs.symlinkSync(path.join(top, 'secret.txt'), path.join(root, 'secret-link.txt'));

  const server = await serve(root, 0);
  const port = server.address().port;
  const hostile = [
    '/..%2fdist-old/secret.txt',
    '/..%2Fdist-old%2Fsecret.txt',
    '/%2e%2e/dist-old/secret.txt',
    '/%2e%2e%2fsecret.txt',
    '/../secret.txt',
    '/../../secret.txt',
    '/pkg/../../secret.txt',
    '/pkg/..%2f..%2fsecret.txt',
    '/..%5csecret.txt',
    '/..\\secret.txt',
    '/%252e%252e%252fsecret.txt',
    '/out/secret.txt',
    '/secret-link.txt',
    '/out',
    `/${top.replace(/^\//, '')}/secret.txt`,
    `//${top.replace(/^\//, '')}/secret.txt`,
    '/%2F..%2Fsecret.txt',
    '/%E0%A4%A',
    '/%',
    '/%zz',
    '/index.html%00.txt',
    '/%00',
    '/..%00/secret.txt',
    `/${'%2e%2e/'.repeat(40)}etc/passwd`,
    '/dist-old/secret.txt',
  ];
  const answers = [];
  for (const target of hostile) answers.push([target, await get(port, target)]);
  answers.push(['POST /', await get(port, '/', `127.0.0.1:${port}`, 'POST')]);
  answers.push(['DELETE /index.html', await get(port, '/index.html', `127.0.0.1:${port}`, 'DELETE')]);
  answers.push(['Host: evil.example', await get(port, '/', 'evil.example')]);
  answers.push(['a malformed request line', await raw(port, 'GET /\x01 HTTP/1.1 junk\r\n\r\n')]);
  answers.push(['a broken header', await raw(port, `GET / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nBad Header\r\n\r\n`)]);
  if (answers.length !== 30) fail(`expected 30 hostile requests, made ${answers.length}`);

  const leaked = answers.filter(([, a]) => a.includes(SECRET)).map(([t]) => t);
  const served = answers.filter(([, a]) => status(a) === 200).map(([t]) => t);
  const report = answers.map(([t, a]) => ({ request: t, status: status(a) }));
  if (leaked.length) fail(`served a file from outside its folder for: ${leaked.join(', ')}`);
  if (served.length) fail(`answered 200 to: ${served.join(', ')}`);
  if (status(answers.find(([t]) => t === 'Host: evil.example')[1]) !== 421) fail('another Host was not refused');

  // Still up, and still serving what is its own.
  const page = await get(port, '/');
  if (status(page) !== 200 || !page.includes('<title>Loreloom</title>')) fail(`the page is no longer served: ${page.slice(0, 80)}`);
  const script = await get(port, '/pkg/app.js');
  if (status(script) !== 200) fail('a file beneath the root is not served');
  const localhost = await get(port, '/', `localhost:${port}`);
  if (status(localhost) !== 200) fail('localhost is refused');

  server.close();
  const model = await modelCalls(root);
  fs.rmSync(top, { recursive: true, force: true });
  console.log(JSON.stringify({ hostile: report.length, leaked: 0, still_up: true, answers: report, model }));
}

main().catch((e) => fail(e.stack || String(e)));
