import re,json,glob,os,random,statistics as st
rows=[r for r in json.load(open('/work/notes/exp/rated.json')) if r['meta']]
CAMP={'dr':'/work/main/campaigns/drowned-reach','ml':'/work/main/campaigns/minimal-lighthouse','ice':'/work/main/benches/campaigns/ice-core-station'}
def camp_of(src):
    s=src or ''
    if 'ice' in s: return 'ice'
    if 'ml' in s or 'lighthouse' in s: return 'ml'
    return 'dr'
vocab={}
for k,p in CAMP.items():
    words=set()
    for f in glob.glob(p+'/**/*',recursive=True):
        if os.path.isfile(f) and f.endswith(('.json','.md','.ron','.txt')):
            words|=set(w.lower() for w in re.findall(r"[A-Za-z][A-Za-z'-]+",open(f,errors='ignore').read()))
    vocab[k]=words
COMMON=set(open('/usr/share/dict/words').read().lower().split()) if os.path.exists('/usr/share/dict/words') else set()
def sents(t): return [s for s in re.split(r'(?:(?<=[.!?])|(?<=[.!?]["”’]))\s+',t.strip()) if s]
def invented(sent,known):
    toks=re.findall(r"(?:^|(?<=[\s(\"“]))([A-Za-z][A-Za-z'’-]*)",sent)
    out=[]
    for i,w in enumerate(toks):
        if i==0 or not w[0].isupper() or w in('I',): continue
        prev=sent[:sent.find(w)].rstrip()
        if prev.endswith(('"','“','.',':')): continue
        base=w.split("'")[0].split('’')[0].lower()
        if base in known: continue
        out.append(w)
    return out
stats={'kept':[], 'fired':0}
for r in rows:
    c=camp_of(r['source']); m=r['meta']
    ctx=' '.join([m.get('Move',''),m.get('Scene',''),m.get('Just before','')])
    known=vocab[c]|set(w.lower() for w in re.findall(r"[A-Za-z][A-Za-z'-]+",ctx))
    ss=sents(r['text']); keep=[]
    for s in ss:
        if invented(s,known): stats['fired']+=1; r.setdefault('why',[]).append(invented(s,known)); break
        keep.append(s)
        if len(keep)>=2: break
    r['cut']=' '.join(keep)
    r['n']=len(ss); r['nk']=len(keep)
print('fired',stats['fired'],'of',len(rows))
print('empty',sum(1 for r in rows if not r['cut']))
print('changed',sum(1 for r in rows if r['cut']!=r['text']))
for r in rows[:0]: pass
json.dump(rows,open('/work/notes/exp/cut.json','w'),indent=1)
for r in [r for r in rows if r.get('why')][:15]: print(r['why'], '|', r['note'])
