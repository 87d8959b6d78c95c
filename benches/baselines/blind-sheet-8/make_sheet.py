import json,random,os
rows=[json.loads(l) for l in open('opening.jsonl')]
random.seed(7)
order=list(range(len(rows))); random.shuffle(order)
halves=[order[:20],order[20:]]
for h,idx in enumerate(halves):
    items=[(i,a) for i in idx for a in ('before','after','third')]
    random.Random(100+h).shuffle(items)
    d=f'/tmp/rateB{h+1}'; os.makedirs(d,exist_ok=True)
    md=["# Blind sheet: narrations of moves in interactive fiction","",
    "Rate each narration on its own, against its situation (place, who is here, what was known and just before, the player's move and how it goes):","",
    "- **coherence** 1-5: it follows from the move, the outcome and the situation; it makes sense sentence to sentence; it contradicts nothing given. 1: nonsense or reverses the outcome; 2: mostly wrong; 3: follows but with a clear slip; 4: sound with a small flaw; 5: sound throughout.",
    "- **move** y/n: the player's move is carried out as given (what was asked is asked, what was given is given).",
    "- **enough** y/n: as a turn of a game, it tells the player enough of what happened to play on.","",
    "Fill `ratings.tsv`: one line per id, tab-separated (id, coherence, move, enough, notes).",""]
    tsv=["id\tcoherence\tmove\tenough\tnotes"]; key={}
    for j,(i,a) in enumerate(items,1):
        iid=f"m{j:03d}"; r=rows[i]
        sit=r['prompt'].replace('What happens next?','').strip()
        md+= [f"## {iid}","","Situation:","","> "+sit.replace("\n","\n> "),"","Narration:","","> "+r[a].strip().replace("\n","\n> "),""]
        key[iid]={'arm':a,'row':i}
    open(d+'/sheet.md','w').write('\n'.join(md)); open(d+'/ratings.tsv','w').write(tsv[0]+'\n')
    json.dump(key,open(f'keyB{h+1}.json','w'),indent=1)
    print(d,len(items))
