// Serves the browser build (web/dist) on loopback, the way a static host would:
// right content types (application/wasm for streaming compilation), and each
// compressible file brotli- or gzip-encoded when the browser accepts it
// (compressed once, kept beside the file as .br / .gz). Nothing outside its
// folder is served (no `..`, encoded separators or links leading out), a
// malformed request is answered 400 and the server stays up, only GET and HEAD
// are answered, and only for this machine's names (the Host header). Every file is
// sent cross-origin isolated (COOP same-origin, COEP require-corp): the page's model
// (web/model.js) runs on threads only in an isolated page (SharedArrayBuffer); any
// static host that sends these two headers serves web/dist as well, and one that does
// not still plays, the model on one thread.
// With a model server (LORELOOM_MODEL_UPSTREAM, its key in the file
// LORELOOM_MODEL_KEY_FILE) it also answers the page's model calls at /v1/…,
// forwarding them with the key: only requests from the page's own origin are
// forwarded (the Origin and Sec-Fetch-Site headers; another site's fetch is
// refused 403 before anything reaches the model), and the key never reaches
// the page. The model server itself answers no one without the key (#43).
// Usage: node web/serve.js [PORT] [DIR]     (the page is then at http://127.0.0.1:PORT/)
'use strict';
const fs = require('fs');
const http = require('http');
const path = require('path');
const zlib = require('zlib');

/// The most a page's model call may send (its prompt and settings).
const MAX_CALL = 4 << 20;

const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm', '.json': 'application/json', '.png': 'image/png',
  '.jpg': 'image/jpeg', '.ogg': 'audio/ogg', '.ttf': 'font/ttf', '.gguf': 'application/octet-stream',
  '.safetensors': 'application/octet-stream',
};
/// Threads in the page (the model's workers share memory) need it cross-origin isolated.
const ISOLATED = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
  'Cross-Origin-Resource-Policy': 'same-origin',
};
// Pictures and Vorbis are compressed already.
const COMPRESSIBLE = new Set(['.html', '.js', '.wasm', '.json', '.ttf']);

function compressed(file, encoding) {
  const out = `${file}.${encoding === 'br' ? 'br' : 'gz'}`;
  const stat = fs.statSync(file);
  if (fs.existsSync(out) && fs.statSync(out).mtimeMs >= stat.mtimeMs) return out;
  const data = fs.readFileSync(file);
  const packed = encoding === 'br'
    ? zlib.brotliCompressSync(data, { params: {
        [zlib.constants.BROTLI_PARAM_QUALITY]: 11,
        [zlib.constants.BROTLI_PARAM_SIZE_HINT]: data.length,
        [zlib.constants.BROTLI_PARAM_LGWIN]: 24 } })
    : zlib.gzipSync(data, { level: 9 });
  fs.writeFileSync(out, packed);
  return out;
}

/// Compress every compressible file now (so the first page load is not the slow one).
function precompress(root) {
  const sizes = {};
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(file);
      else if (COMPRESSIBLE.has(path.extname(file))) {
        sizes[path.relative(root, file)] = {
          raw: fs.statSync(file).size,
          br: fs.statSync(compressed(file, 'br')).size,
          gzip: fs.statSync(compressed(file, 'gzip')).size,
        };
      }
    }
  };
  walk(root);
  return sizes;
}

/// Where a request path points beneath `root`, or why it may not be served:
/// `{ status }` for a refusal. Decoded once; anything outside `root` (by
/// `..`, an encoded separator, or a link that leads out) is refused.
function resolveIn(root, rawPath) {
  let decoded;
  try { decoded = decodeURIComponent(rawPath); } catch { return { status: 400 }; }
  if (decoded.includes('\0')) return { status: 400 };
  return confined(root, path.resolve(root, `.${path.sep}${decoded}`));
}

/// `file` as it really is on disk, when that is beneath `root`.
function confined(root, file) {
  const inside = (p) => p === root || p.startsWith(root + path.sep);
  if (!inside(file)) return { status: 403 };
  let real;
  try { real = fs.realpathSync(file); } catch { return { status: 404 }; }
  if (!inside(real)) return { status: 403 };
  return { file: real };
}

/// `model`: `{ upstream: 'http://127.0.0.1:8081', key }` to answer /v1/… by
/// forwarding to that server with its key; none: /v1/… is a file path like any.
function serve(root, port = 0, model = null) {
  root = fs.realpathSync(path.resolve(root));
  const server = http.createServer((req, res) => {
    try {
      if (model && /^\/v1\//.test(req.url || '')) forward(model, server, req, res);
      else answer(root, server, req, res);
    } catch {
      if (!res.headersSent) res.writeHead(500).end(); else res.destroy();
    }
  });
  // A request line or header that does not parse: answered, never fatal.
  server.on('clientError', (_err, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
  });
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server)));
}

/// The names this server answers to (another name is a DNS rebinding).
function ownHosts(server) {
  const port = server.address().port;
  return [`127.0.0.1:${port}`, `localhost:${port}`];
}

// A connection of its own for each model call. Node's default agent keeps connections
// alive, and llama-server closes one idle for 5 s: a call sent on it as it closes was
// reset, and the page saw a 502 (a session test run did).
const FRESH = new http.Agent({ keepAlive: false });

/// A model call from the page, forwarded with the key; refused when it comes
/// from anywhere but the page's own origin.
function forward(model, server, req, res) {
  const hosts = ownHosts(server);
  if (!hosts.includes(String(req.headers.host || '').toLowerCase())) {
    res.writeHead(421).end('wrong host');
    return;
  }
  const origin = req.headers.origin;
  const site = req.headers['sec-fetch-site'];
  if ((origin !== undefined && !hosts.some((h) => origin === `http://${h}`))
      || (site !== undefined && site !== 'same-origin' && site !== 'none')) {
    res.writeHead(403).end('not from this page');
    return;
  }
  if (req.method !== 'POST' && req.method !== 'GET') {
    res.writeHead(405, { Allow: 'GET, POST' }).end();
    return;
  }
  const upstream = new URL(req.url, model.upstream);
  const headers = {
    'content-type': req.headers['content-type'] || 'application/json',
    accept: req.headers.accept || '*/*',
    authorization: `Bearer ${model.key}`,
  };
  const out = http.request(upstream, { method: req.method, headers, agent: FRESH }, (answer) => {
    const kept = {};
    for (const h of ['content-type', 'cache-control']) if (answer.headers[h]) kept[h] = answer.headers[h];
    res.writeHead(answer.statusCode || 502, kept);
    answer.pipe(res);
  });
  out.on('error', (e) => { if (!res.headersSent) res.writeHead(502).end(`the model server did not answer (${e.code || e.message})`); else res.destroy(); });
  let sent = 0;
  req.on('data', (chunk) => {
    sent += chunk.length;
    if (sent > MAX_CALL) {
      out.destroy();
      if (!res.headersSent) res.writeHead(413).end('too large');
      req.destroy();
      return;
    }
    out.write(chunk);
  });
  req.on('end', () => out.end());
  res.on('close', () => out.destroy());
}

function answer(root, server, req, res) {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { Allow: 'GET, HEAD' }).end();
    return;
  }
  // Only this machine's names for this port (another name is a DNS rebinding).
  const hosts = ownHosts(server);
  if (!hosts.includes(String(req.headers.host || '').toLowerCase())) {
    res.writeHead(421).end('wrong host');
    return;
  }
  let url;
  try { url = new URL(req.url, 'http://localhost'); } catch { res.writeHead(400).end(); return; }
  const found = resolveIn(root, url.pathname);
  if (found.status) { res.writeHead(found.status).end(); return; }
  let file = found.file;
  if (fs.statSync(file).isDirectory()) {
    const index = confined(root, path.join(file, 'index.html'));
    if (index.status) { res.writeHead(index.status).end(); return; }
    file = index.file;
  }
  if (!fs.statSync(file).isFile()) { res.writeHead(404).end('not found'); return; }
  const ext = path.extname(file);
  const headers = { 'Content-Type': TYPES[ext] || 'application/octet-stream', 'Cache-Control': 'no-cache', ...ISOLATED };
  const accepts = String(req.headers['accept-encoding'] || '');
  let body = file;
  if (COMPRESSIBLE.has(ext)) {
    headers.Vary = 'Accept-Encoding';
    const encoding = /\bbr\b/.test(accepts) ? 'br' : /\bgzip\b/.test(accepts) ? 'gzip' : null;
    if (encoding) { body = compressed(file, encoding); headers['Content-Encoding'] = encoding; }
  }
  headers['Content-Length'] = fs.statSync(body).size;
  res.writeHead(200, headers);
  if (req.method === 'HEAD') { res.end(); return; }
  const stream = fs.createReadStream(body);
  stream.on('error', () => res.destroy());
  stream.pipe(res);
}

module.exports = { serve, precompress, resolveIn };

if (require.main === module) {
  const port = Number(process.argv[2] || 8080);
  const root = process.argv[3] || path.join(__dirname, 'dist');
  if (!fs.existsSync(path.join(root, 'index.html'))) {
    console.error(`loreloom: ${root} has no build; run web/build.sh first`);
    process.exit(1);
  }
  precompress(root);
  let model = null;
  if (process.env.LORELOOM_MODEL_UPSTREAM) {
    const keyFile = process.env.LORELOOM_MODEL_KEY_FILE;
    const key = keyFile ? fs.readFileSync(keyFile, 'utf8').trim() : '';
    if (!key) {
      console.error('loreloom: LORELOOM_MODEL_UPSTREAM needs its key in LORELOOM_MODEL_KEY_FILE');
      process.exit(1);
    }
    model = { upstream: process.env.LORELOOM_MODEL_UPSTREAM, key };
  }
  serve(root, port, model).then((server) => {
    console.log(`loreloom: serving ${root} at http://127.0.0.1:${server.address().port}/ (Ctrl-C stops)`);
  });
}
