// Packs what the browser build reads as files into web/dist/bundle.json (src/files.rs):
// the campaigns' text (stories, manifests, characters, lore, rulesets), the prompts and
// the output schemas; and copies the campaigns' pictures and music into
// web/dist/assets/, listing them so the game knows they are there (it fetches them).
// Usage: node web/bundle.js DIST
'use strict';
const fs = require('fs');
const path = require('path');

const dist = process.argv[2];
if (!dist) { console.error('usage: node web/bundle.js DIST'); process.exit(2); }
const TEXT = new Set(['.json', '.md', '.yaml', '.yml', '.ron', '.jinja', '.txt']);
const MEDIA = new Set(['.png', '.jpg', '.jpeg', '.ogg']);
const bundle = { files: {}, assets: [] };

const walk = (dir, visit) => {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const file = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) walk(file, visit); else visit(file);
  }
};
for (const root of ['campaigns', 'prompts', 'schemas']) {
  walk(root, (file) => {
    const ext = path.extname(file).toLowerCase();
    if (TEXT.has(ext)) bundle.files[file] = fs.readFileSync(file, 'utf8');
    else if (root === 'campaigns' && MEDIA.has(ext)) {
      const out = path.join(dist, 'assets', file);
      fs.mkdirSync(path.dirname(out), { recursive: true });
      fs.copyFileSync(file, out);
      bundle.assets.push(file);
    }
  });
}
const json = JSON.stringify(bundle);
fs.writeFileSync(path.join(dist, 'bundle.json'), json);
console.error(`web/dist/bundle.json: ${Object.keys(bundle.files).length} text files (${json.length} bytes), ${bundle.assets.length} pictures and sounds`);
