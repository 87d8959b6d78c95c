"""Score a choice sheet: python3 score_choices.py DIR TAG:CAMPAIGN:SAVE... (the saves tell the engine's choices from the model's; score.txt keeps the output)."""
import json, sys, sqlite3, re, collections
d=sys.argv[1]; key=json.load(open(d+'/key.json'))
rat={}; setr={}
for line in open(d+'/sheet/ratings.tsv').read().splitlines()[1:]:
    p=line.split('\t')
    if len(p)<2: continue
    if '.' in p[0]: rat[p[0]]=int(p[1])
    else: setr[p[0]]=p[1].strip().lower()
# engine-added choices per (tag,camp,turn) from the saves
added=collections.defaultdict(set)
for spec in sys.argv[2:]:
    tag,camp,db=spec.split(':')
    for ti,pl in sqlite3.connect(db).execute("select turn_index,payload_json from turn_events where step_name='engine_apply'"):
        j=json.loads(pl); j=j if isinstance(j,dict) else {}
        m=re.match(r'choices: the engine offers "(.*)": ', j.get('refused',''))
        if m: added[(tag,camp,ti)].add(m.group(1).replace('\\"','"'))
stats=collections.defaultdict(list); sets=collections.defaultdict(list)
for k in key:
    for i,c in enumerate(k['choices']):
        r=rat.get(f"{k['id']}.{i+1}")
        if r is None: print('missing',k['id'],i+1); continue
        src='engine' if c in added[(k['tag'],k['camp'],k['turn'])] else 'model'
        stats[k['tag']].append(r); stats[(k['tag'],src)].append(r); stats[(k['tag'],k['camp'])].append(r)
    sets[k['tag']].append(setr.get(k['id'])=='y'); sets[(k['tag'],k['camp'])].append(setr.get(k['id'])=='y')
for g,v in sorted(stats.items(),key=str):
    print(g, 'n=%d mean=%.2f  1:%d 2:%d 3:%d  share3=%.0f%%'%(len(v),sum(v)/len(v),v.count(1),v.count(2),v.count(3),100*v.count(3)/len(v)))
for g,v in sorted(sets.items(),key=str):
    print('sets',g,'%d/%d y'%(sum(v),len(v)))
