#!/usr/bin/env python3
"""Checks the `talk` of authoring chains (structure and lengths; meaning is the writer's)."""
import json, sys, re

def words(t): return len(t.split())

def check(path):
    errs = []
    d = json.load(open(path))
    t = d.get("talk")
    if t is None: return ["no talk"]
    if set(t) != {"dream", "brainstorm"}: errs.append(f"talk keys {sorted(t)}: want dream and brainstorm")
    if d.get("brief", "") != "": errs.append("`brief` must stay empty")
    for stage, s in t.items():
        if set(s) != {"turns", "brief"}: errs.append(f"{stage}: keys {sorted(s)}"); continue
        turns = s["turns"]
        if not turns or len(turns) % 2 == 0: errs.append(f"{stage}: {len(turns)} turns: odd count, starting and ending with you")
        for i, x in enumerate(turns):
            want = "you" if i % 2 == 0 else "author"
            if set(x) != {"who", "text"} or x["who"] != want: errs.append(f"{stage} turn {i}: want who={want} and text"); continue
            n = words(x["text"])
            if want == "you":
                if not 70 <= n <= 190: errs.append(f"{stage} turn {i}: {n} words (70–190)")
                if not x["text"].rstrip().endswith("?"): errs.append(f"{stage} turn {i}: does not end with a question")
                if re.search(r"^\s*([-*•]|\d+\.)\s", x["text"], re.M) or "#" in x["text"] or "**" in x["text"]:
                    errs.append(f"{stage} turn {i}: markdown or a list")
            elif not 8 <= n <= 60: errs.append(f"{stage} turn {i}: author {n} words (8–60)")
        lines = [l for l in s["brief"].split("\n")]
        if not 3 <= len(lines) <= 8 or any(not l.strip() for l in lines): errs.append(f"{stage} brief: {len(lines)} lines (3–8, none empty)")
        for l in lines:
            if words(l) > 20: errs.append(f"{stage} brief line over 20 words: {l[:50]}")
            if re.match(r"\s*([-*•]|\d+\.)\s", l): errs.append(f"{stage} brief line is a bullet: {l[:40]}")
    return errs

bad = 0
for p in sys.argv[1:]:
    e = check(p)
    if e:
        bad += 1
        for x in e: print(f"{p}: {x}")
print(f"{len(sys.argv)-1-bad} of {len(sys.argv)-1} files pass")
sys.exit(1 if bad else 0)
