// Reads a Twee 3 file with extwee's own parser, compiles it to a Twine 2
// archive, and prints what it found: title, IFID, format, start, each
// passage's name and the passages its links go to (from the archive's
// stored passages), so a test can compare them with the story.
// Usage: node twee-check.mjs story.twee
import fs from 'node:fs';
import { parseTwee, compileTwine2ArchiveHTML, parseTwine2ArchiveHTML } from 'extwee';

const [file] = process.argv.slice(2);
const story = parseTwee(fs.readFileSync(file, 'utf8'));
const archive = compileTwine2ArchiveHTML([story]);
const [back] = parseTwine2ArchiveHTML(archive);
const passages = back.passages.map((p) => ({
  name: p.name,
  links: [...p.text.matchAll(/\[\[[^\]|]*\|([^\]]+)\]/g)].map((m) => m[1]),
}));
console.log(JSON.stringify({
  title: back.name,
  ifid: back.IFID,
  format: back.format,
  formatVersion: back.formatVersion,
  start: back.start,
  passages,
}));
