import json,random
rows=json.load(open('cut.json'))
cand=[r for r in rows if r['cut'] and r['cut']!=r['text']]
random.seed(42)
pick=random.sample(cand,40)
items=[]
for i,r in enumerate(pick):
    for v in ('orig','cut'):
        items.append(dict(src=i,variant=v,meta=r['meta'],text=r['text'] if v=='orig' else r['cut'],old=r['coh'],sheet=r['sheet'],id=r['id']))
random.shuffle(items)
out=['# Blind sheet: %d narrations\n'%len(items),
"""Rate each narration on its own, against its move, outcome and scene:

- **coherence** 1–5: it follows from the move, the outcome and the scene; it makes sense sentence to sentence; it contradicts nothing given (who is here, what is held, what failed, what was said just before). 1: nonsense or reverses the outcome; 2: mostly wrong; 3: follows but with a clear slip; 4: sound with a small flaw; 5: sound throughout.
- **in_voice** y/n: it reads as the story, telling the player what "you" do, with no assistant or meta talk.
- **grounded** y/n: it is about this scene's people, places or things, not generic.
- **enough** y/n: as a turn of a game, it tells the player enough of what happened (n: too thin to play on).

Fill `ratings.tsv`: one line per id, tab-separated (id, coherence, in_voice, grounded, enough, notes).
"""]
key=[]
for j,it in enumerate(items):
    nid='N%03d'%(j+1); m=it['meta']; oc=m.get("Outcome (the engine's)",'')
    out.append(f"## {nid}\n\n- Move: {m.get('Move','')}\n- Outcome (the engine's): {oc}\n- Scene: {m.get('Scene','')}\n- Just before: {m.get('Just before','')}\n\n> {it['text']}\n")
    key.append(dict(nid=nid,**{k:it[k] for k in ('src','variant','old','sheet','id')}))
import os
os.makedirs('sheetA',exist_ok=True); os.makedirs('keyA',exist_ok=True)
open('sheetA/sheet.md','w').write('\n'.join(out))
open('sheetA/ratings.tsv','w').write('id\tcoherence\tin_voice\tgrounded\tenough\tnotes\n')
json.dump(key,open('keyA/key.json','w'),indent=1)
print(len(items), sum(len(i['text'].split()) for i in items if i['variant']=='orig')/40, sum(len(i['text'].split()) for i in items if i['variant']=='cut')/40)
