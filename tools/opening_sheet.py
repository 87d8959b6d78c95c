#!/usr/bin/env python3
"""A blind sheet of benches/opening.rs's narrations (#42): each prompt's two tellings as separate items, shuffled, arms hidden.

Usage: tools/opening_sheet.py OPENING_JSONL OUT_DIR  (writes sheet.md and ratings.tsv for the rater, key/key.json apart)."""
import json, random, sys, os, re
src, out = sys.argv[1], sys.argv[2]
rows = [json.loads(l) for l in open(src)]
items = []
for r in rows:
    for arm in ("before", "after"):
        items.append({"arm": arm, "row": r})
random.Random(42).shuffle(items)
os.makedirs(out, exist_ok=True); os.makedirs(os.path.join(out, "key"), exist_ok=True)
md = ["# Blind sheet: narrations of moves that failed, cost something or were ruled out",
      "",
      "Rate each narration on its own, against its situation (place, who is here, what was just before, the move and how it goes):",
      "",
      "- **coherence** 1-5: it follows from the move, the outcome and the situation; it makes sense sentence to sentence; it contradicts nothing given. 1: nonsense or reverses the outcome; 2: mostly wrong; 3: follows but with a clear slip; 4: sound with a small flaw; 5: sound throughout.",
      "- **outcome** y/n: the narration shows the outcome as given (a failure fails, a partial success works at a cost, a move that cannot happen does not happen).",
      "",
      "Fill `ratings.tsv`: one line per id, tab-separated (id, coherence, outcome, notes).", ""]
key = {}
tsv = ["id\tcoherence\toutcome\tnotes"]
for i, it in enumerate(items, 1):
    iid = f"n{i:03d}"
    r = it["row"]
    prompt = r["prompt"]
    # the situation: everything of the user prompt but the final question
    situation = prompt.replace("What happens next?", "").strip()
    md += [f"## {iid}", "", "Situation (as the narrator was given it):", "", "> " + situation.replace("\n", "\n> "), "",
           "Narration:", "", "> " + r[it["arm"]].strip().replace("\n", "\n> "), ""]
    key[iid] = {"arm": it["arm"], "setting": r["setting"], "index": r["index"], "outcome": r["outcome"]}
    tsv.append(f"{iid}\t\t\t")
open(os.path.join(out, "sheet.md"), "w").write("\n".join(md))
open(os.path.join(out, "ratings.tsv"), "w").write("\n".join(tsv) + "\n")
json.dump(key, open(os.path.join(out, "key", "key.json"), "w"), indent=1)
print(len(items), "items")
