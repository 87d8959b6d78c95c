import re,glob,json,os,statistics as st,sys
base='/work/main/benches/baselines'
rows=[]
for d in sorted(glob.glob(base+'/blind-sheet-*')):
    md=open(d+'/sheet.md').read()
    rat={}
    for line in open(d+'/ratings.tsv'):
        p=line.rstrip('\n').split('\t')
        if len(p)>=2 and p[1].isdigit(): rat[p[0]]=(int(p[1]),p[-1])
    key={}
    try:
        k=json.load(open(d+'/key/key.json'))
        for e in k: key[e['id']]=e.get('source')
    except Exception as e: pass
    for sec in re.split(r'\n## ',md)[1:]:
        id_=sec.split('\n',1)[0].strip()
        narr=' '.join(l[2:] for l in sec.split('\n') if l.startswith('> '))
        meta={m.group(1):m.group(2) for m in re.finditer(r'^- ([^:]+): (.*)$',sec,re.M)}
        if id_ in rat:
            rows.append(dict(sheet=os.path.basename(d),id=id_,coh=rat[id_][0],note=rat[id_][1],text=narr,meta=meta,source=key.get(id_)))
json.dump(rows,open('/work/notes/exp/rated.json','w'),indent=1)
def sents(t): return [s for s in re.split(r'(?<=[.!?])["”’]?\s+',t.strip()) if s]
by={}
for r in rows:
    n=len(sents(r['text'])); by.setdefault(min(n,6),[]).append(r['coh'])
print(len(rows))
for n in sorted(by): print(n, len(by[n]), round(st.mean(by[n]),2), sum(1 for c in by[n] if c>=4))
