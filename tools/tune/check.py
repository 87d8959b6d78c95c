#!/usr/bin/env python3
"""Checks corpus setting files (training/settings/*.json): structure, references, answer style."""
import json
import re
import sys
from collections import Counter

BANDS = {
    "default-2d6": {"critical", "success", "partial", "failure"},
    "everyday-tension": {"clean_success", "mixed", "failure"},
    "inner-chorus": {"override", "influences", "natural_reaction"},
    "seven-minutes": {"bold_success", "awkward_partial", "awkward_failure"},
}
ATTITUDES = {"hostile", "cold", "neutral", "warm", "devoted"}
META = re.compile(r"\b(the story|this story|the narrator|the player|as an ai|passage|chapter|the scene)\b", re.I)
FIRST = re.compile(r"\b(I|me|my|mine|myself)\b")


def unquoted(text):
    return re.sub(r'"[^"]*"|\u201c[^\u201d]*\u201d', " ", text)


def sentences(text):
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if s.strip()]


def check(path):
    errors = []
    warn = []
    d = json.load(open(path))
    sid = d.get("id", "?")
    where = lambda kind, i: f"{path}: {kind}[{i}]"
    for key in ["id", "title", "genre", "tone", "ruleset", "calibration", "player", "people", "places", "lore", "narrate", "choices", "npc_intent"]:
        if key not in d:
            errors.append(f"{path}: missing `{key}`")
    if errors:
        return errors, warn
    if d["ruleset"] not in BANDS:
        errors.append(f"{path}: unknown ruleset {d['ruleset']}")
    people, places, lore = d["people"], d["places"], d["lore"]
    for pid, p in people.items():
        for k in ["name", "role", "personality", "motivations", "speech"]:
            if not p.get(k):
                errors.append(f"{path}: people.{pid} lacks {k}")
    seen_sentences = Counter()

    def refs(kind, i, ex):
        if ex.get("place") not in places:
            errors.append(f"{where(kind, i)}: unknown place {ex.get('place')}")
        for p in ex.get("present", []):
            if p not in people:
                errors.append(f"{where(kind, i)}: unknown person {p} in present")
        for p, a in (ex.get("regard") or {}).items() if isinstance(ex.get("regard"), dict) else []:
            if p not in people or a not in ATTITUDES:
                errors.append(f"{where(kind, i)}: bad regard {p}: {a}")

    for i, ex in enumerate(d["narrate"]):
        refs("narrate", i, ex)
        actor = ex.get("actor")
        if actor != "player" and actor not in people:
            errors.append(f"{where('narrate', i)}: unknown actor {actor}")
        if actor != "player" and actor not in ex.get("present", []):
            errors.append(f"{where('narrate', i)}: the acting NPC {actor} must be present")
        if not ex.get("move"):
            errors.append(f"{where('narrate', i)}: no move")
        if ex.get("band") and ex["band"] not in BANDS.get(d["ruleset"], ()):
            errors.append(f"{where('narrate', i)}: band {ex['band']} is not one of {sorted(BANDS[d['ruleset']])}")
        if ex.get("band") and ex.get("blocked"):
            errors.append(f"{where('narrate', i)}: both band and blocked")
        if ex.get("lore") and ex["lore"] not in lore:
            errors.append(f"{where('narrate', i)}: unknown lore {ex['lore']}")
        m = ex.get("meanwhile", [])
        if not isinstance(m, list) or not all(isinstance(x, str) and 4 <= len(x.split()) <= 40 for x in m):
            errors.append(f"{where('narrate', i)}: meanwhile must be a list of sentences (4-40 words each)")
        if ex.get("whisper_to") and ex["whisper_to"] not in people:
            errors.append(f"{where('narrate', i)}: unknown whisper_to")
        if ex.get("memory") and "you tried to " not in ex["memory"]:
            errors.append(f"{where('narrate', i)}: memory must read 'At <place>, you tried to <move> (<result>).'")
        a = ex.get("answer", "")
        words = len(a.split())
        if not 18 <= words <= 80:
            errors.append(f"{where('narrate', i)}: answer has {words} words (18-80)")
        if FIRST.search(unquoted(a)):
            errors.append(f"{where('narrate', i)}: first person outside quotes: {a[:60]}")
        if actor == "player" and not re.search(r"\b[Yy]ou(r|rs|rself)?\b", a):
            errors.append(f"{where('narrate', i)}: player narration without 'you'")
        if META.search(unquoted(a)):
            warn.append(f"{where('narrate', i)}: meta word? {META.search(unquoted(a)).group(0)}")
        for s in sentences(a):
            seen_sentences[s.lower()] += 1
    for i, ex in enumerate(d["choices"]):
        refs("choices", i, ex)
        ans = ex.get("answer")
        if not isinstance(ans, list) or len(ans) != 3:
            errors.append(f"{where('choices', i)}: answer must be 3 choices")
            continue
        for c in ans:
            if not 2 <= len(c.split()) <= 10 or len(c) > 80:
                errors.append(f"{where('choices', i)}: choice length: {c}")
            if c.endswith("."):
                errors.append(f"{where('choices', i)}: no full stop in a choice: {c}")
        if not ex.get("just_now"):
            errors.append(f"{where('choices', i)}: just_now is required")
    for i, ex in enumerate(d["npc_intent"]):
        refs("npc_intent", i, ex)
        if ex.get("npc") not in people:
            errors.append(f"{where('npc_intent', i)}: unknown npc")
        elif ex["npc"] not in ex.get("present", []):
            errors.append(f"{where('npc_intent', i)}: the NPC must be present")
        if ex.get("regard") not in ATTITUDES:
            errors.append(f"{where('npc_intent', i)}: regard must be one of {sorted(ATTITUDES)}")
        ans = ex.get("answer", {})
        if set(ans) != {"thought", "intention"} or not ans.get("intention"):
            errors.append(f"{where('npc_intent', i)}: answer needs thought and intention")
        elif len(ans["thought"]) > 160 or len(ans["intention"]) > 200:
            errors.append(f"{where('npc_intent', i)}: thought at most 160 characters, intention at most 200 (the stage's contract)")
        for h in ex.get("history", []):
            if h.get("kind") not in ("narration", "intention", "thought"):
                errors.append(f"{where('npc_intent', i)}: history kind {h.get('kind')}")
    SNAKE = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
    for i, ex in enumerate(d.get("recap", [])):
        ev = ex.get("events")
        if not isinstance(ev, list) or not 2 <= len(ev) <= 8 or not all(isinstance(e, str) and e.strip() for e in ev):
            errors.append(f"{where('recap', i)}: events must be 2-8 narrations")
        if not all(isinstance(x, str) for x in ex.get("summaries", [])):
            errors.append(f"{where('recap', i)}: summaries must be strings")
        a = ex.get("answer", "")
        words = len(a.split())
        if not 20 <= words <= 80:
            errors.append(f"{where('recap', i)}: answer has {words} words (20-80)")
        if d["player"].split()[0] not in a:
            errors.append(f"{where('recap', i)}: the recap names the player ({d['player']})")
        if FIRST.search(unquoted(a)) or re.search(r"\b[Yy]ou\b", unquoted(a)):
            errors.append(f"{where('recap', i)}: a recap is told in the third person")
        for s in sentences(a):
            seen_sentences[s.lower()] += 1
    for i, ex in enumerate(d.get("lore_extract", [])):
        if not ex.get("narration") or len(ex["narration"].split()) < 15:
            errors.append(f"{where('lore_extract', i)}: narration is required (15+ words)")
        facts = (ex.get("answer") or {}).get("facts")
        if not isinstance(facts, list) or len(facts) > 3:
            errors.append(f"{where('lore_extract', i)}: answer.facts must be a list of at most 3")
            continue
        for f in ex.get("known", []) + facts:
            if set(f) != {"subject", "predicate", "object"}:
                errors.append(f"{where('lore_extract', i)}: a fact is {{subject, predicate, object}}: {f}")
            elif not SNAKE.match(f["subject"]) or not SNAKE.match(f["predicate"]) or not 0 < len(f["object"]) <= 120:
                errors.append(f"{where('lore_extract', i)}: snake_case subject and predicate, object up to 120 characters: {f}")
    for s, n in seen_sentences.items():
        if n > 1 and len(s.split()) > 4:
            errors.append(f"{path}: sentence used {n} times: {s}")
    counts = {k: len(d.get(k, [])) for k in ("narrate", "choices", "npc_intent", "recap", "lore_extract")}
    players = sum(1 for e in d["narrate"] if e.get("actor") == "player")
    return errors, warn + [f"{path}: {counts}, player narrations {players}"]


if __name__ == "__main__":
    bad = 0
    for p in sys.argv[1:]:
        try:
            e, w = check(p)
        except (json.JSONDecodeError, OSError) as x:
            e, w = [f"{p}: {x}"], []
        for line in w:
            print("warning:", line)
        for line in e:
            print("error:", line)
        bad += len(e)
    sys.exit(1 if bad else 0)
