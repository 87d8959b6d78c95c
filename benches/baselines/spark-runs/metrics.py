"""Shape and prose metrics of an authoring project's graph.db (for #42's spark-to-story runs)."""
import json, sqlite3, sys, re

def words(t): return len(re.findall(r"[A-Za-z0-9'’-]+", t or ""))
BANDS = {"scene": (150, 400), "sequel": (100, 300), "micro_beat": (30, 120)}

def main(db):
    c = sqlite3.connect(db)
    nodes = {}
    for id_, ty, data in c.execute("select id,type,data from nodes"):
        nodes[id_] = (ty, json.loads(data))
    kind = lambda t: {k: d for k, (ty, d) in nodes.items() if ty == t}
    dil = kind("dilemma"); pas = kind("passage")
    both = sum(1 for d in dil.values() if len(d.get("explored", [])) >= 2)
    flagged = sum(1 for p in pas.values() if (p.get("review") or {}).get("flags"))
    prose = [p for p in pas.values() if (p.get("prose") or "").strip()]
    ws = [words(p["prose"]) for p in prose]
    out = {"dilemmas": len(dil), "explored_both": both, "paths": len(kind("path")),
           "beats": len(kind("beat")), "passages": len(pas), "with_prose": len(prose),
           "flagged": flagged, "unflagged_share": round((len(prose) - flagged) / max(1, len(pas)), 3),
           "words_mean": round(sum(ws) / max(1, len(ws)), 1), "words_min": min(ws or [0]), "words_max": max(ws or [0])}
    print(json.dumps(out))

main(sys.argv[1])
