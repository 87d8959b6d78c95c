// Serves the browser build (web/dist) on loopback, the way a static host would:
// right content types (application/wasm for streaming compilation), and each
// compressible file brotli- or gzip-encoded when the browser accepts it
// (compressed once, kept beside the file as .br / .gz).
// Usage: node web/serve.js [PORT] [DIR]     (the page is then at http://127.0.0.1:PORT/)
'use strict';
const fs = require('fs');
const http = require('http');
const path = require('path');
const zlib = require('zlib');

const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm', '.json': 'application/json', '.png': 'image/png',
  '.jpg': 'image/jpeg', '.ogg': 'audio/ogg', '.ttf': 'font/ttf',
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

function serve(root, port = 0) {
  root = path.resolve(root);
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://localhost');
    let file = path.normalize(path.join(root, decodeURIComponent(url.pathname)));
    if (!file.startsWith(root)) { res.writeHead(403).end(); return; }
    if (fs.existsSync(file) && fs.statSync(file).isDirectory()) file = path.join(file, 'index.html');
    if (!fs.existsSync(file) || !fs.statSync(file).isFile()) { res.writeHead(404).end('not found'); return; }
    const ext = path.extname(file);
    const headers = { 'Content-Type': TYPES[ext] || 'application/octet-stream', 'Cache-Control': 'no-cache' };
    const accepts = String(req.headers['accept-encoding'] || '');
    let body = file;
    if (COMPRESSIBLE.has(ext)) {
      headers.Vary = 'Accept-Encoding';
      const encoding = /\bbr\b/.test(accepts) ? 'br' : /\bgzip\b/.test(accepts) ? 'gzip' : null;
      if (encoding) { body = compressed(file, encoding); headers['Content-Encoding'] = encoding; }
    }
    headers['Content-Length'] = fs.statSync(body).size;
    res.writeHead(200, headers);
    if (req.method === 'HEAD') res.end(); else fs.createReadStream(body).pipe(res);
  });
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server)));
}

module.exports = { serve, precompress };

if (require.main === module) {
  const port = Number(process.argv[2] || 8080);
  const root = process.argv[3] || path.join(__dirname, 'dist');
  if (!fs.existsSync(path.join(root, 'index.html'))) {
    console.error(`loreloom: ${root} has no build; run web/build.sh first`);
    process.exit(1);
  }
  precompress(root);
  serve(root, port).then((server) => {
    console.log(`loreloom: serving ${root} at http://127.0.0.1:${server.address().port}/ (Ctrl-C stops)`);
  });
}
