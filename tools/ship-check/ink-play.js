// Plays a compiled ink story (the JSON inkjs-compiler writes) along choice
// walks and prints, per walk, the passages it showed (from each knot's
// `# passage: ID` tag) and whether it reached an end.
// Usage: node ink-play.js story.json '[[1,2],[2,1,1]]'
'use strict';
const fs = require('fs');
const { Story } = require('inkjs');

const [file, walksJson] = process.argv.slice(2);
const json = fs.readFileSync(file, 'utf8').replace(/^\uFEFF/, '');
const walks = JSON.parse(walksJson || '[[]]');
const results = walks.map((walk) => {
  const story = new Story(json);
  const picks = walk.slice();
  const passages = [];
  for (;;) {
    while (story.canContinue) {
      story.Continue();
      for (const tag of story.currentTags) {
        if (tag.startsWith('passage: ')) passages.push(tag.slice('passage: '.length));
      }
    }
    if (story.currentChoices.length === 0) break;
    const n = picks.shift();
    if (n === undefined) break;
    story.ChooseChoiceIndex(n - 1);
  }
  const ended = story.currentChoices.length === 0 && !story.canContinue;
  return { passages, ended };
});
console.log(JSON.stringify(results));
