"""Blind sheet of choice sets: python3 choicesheet.py OUT tag:db:campaign ..."""
import json, random, sqlite3, sys, os, glob
out=sys.argv[1]; blocks=[]
def names(camp):
    ppl={}; places={}
    for f in glob.glob(camp+'/characters/**/*.json',recursive=True):
        try: d=json.load(open(f))
        except Exception: continue
        if isinstance(d,dict) and 'id' in d and 'name' in d: ppl[d['id']]=d['name']
    st=json.load(open(camp+'/world/state.json'))
    return ppl
def npc_name(camp,pid):
    f=f"{camp}/characters/npcs/{pid}/profile.json"
    try: return json.load(open(f))['name']
    except Exception: return pid.replace('_',' ')
for spec in sys.argv[2:]:
    tag,db,camp=spec.split(':')
    con=sqlite3.connect(db)
    rows=con.execute("select t.turn_index,t.action_text,t.result_json,s.state_json from turns t join scenes s on s.id=t.scene_id order by t.turn_index").fetchall()
    for ti,act,res,st in rows:
        r=json.loads(res); s=json.loads(st)
        text=' '.join(r.get('narration',[])).split()
        text=' '.join(text[:140])+(' …' if len(text)>140 else '')
        present=[npc_name(camp,p) for p in s.get('present',[]) if p!='player']
        blocks.append(dict(tag=tag,camp=os.path.basename(camp),turn=ti,move=act,place=s.get('location',''),present=present,text=text,choices=r.get('choices',[])))
random.seed(62); random.shuffle(blocks)
lines=[f'# Blind sheet: {len(blocks)} turns and the choices offered after each\n',
"""Each block is one turn of an interactive story: where the player is, who is there, the move the player made and what the story told. Then the choices the game offered for the NEXT move.

Rate **each choice** 1–3:
- 3: a sensible move here: it makes sense in this story and scene, someone or something it names is here or reachable, and a player could want to do it.
- 2: possible but muddled, pointless or oddly worded.
- 1: not a move in this story: nonsense, names people or things the story does not have, or impossible here.

And rate the **set** y/n: would a player here find at least two good things to do?

Fill `ratings.tsv`: one line per choice id (e.g. T07.2), tab-separated: id, rating, notes. And one line per block (e.g. T07), id, y or n, notes.
"""]
key=[]
for j,b in enumerate(blocks):
    tid='T%02d'%(j+1)
    pres=', '.join(b['present']) or 'nobody'
    lines.append(f"## {tid}\n\n- Place: {b['place'].replace('_',' ')}\n- Here: {pres}\n- Move: {b['move']}\n\n> {b['text']}\n\nChoices:\n")
    for i,c in enumerate(b['choices']):
        lines.append(f"- {tid}.{i+1}: {c}")
    lines.append('')
    key.append(dict(id=tid,**{k:b[k] for k in ('tag','camp','turn','choices')}))
os.makedirs(out+'/sheet',exist_ok=True)
open(out+'/sheet/sheet.md','w').write('\n'.join(lines))
open(out+'/sheet/ratings.tsv','w').write('id\trating\tnotes\n')
json.dump(key,open(out+'/key.json','w'),indent=1)
print(len(blocks), sum(len(b['choices']) for b in blocks))
