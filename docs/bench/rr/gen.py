# RR histories: a serial execution with phantoms (rows a predicate read
# omits because it observed them before their recent insert), and, with
# --violate, one stale item read (RR forbids it).
import random, sys, json
n=int(sys.argv[1]); seed=int(sys.argv[2]); violate=len(sys.argv)>3
rng=random.Random(seed)
K=1000; S=20
state={}      # key -> (value, writer)
prev={}       # key -> previous (value, writer) before the latest write
seq=0
out=[json.dumps({"hyperiso":1,"init":"zero"})]
bad_at = n//2 if violate else -1
for t in range(1,n+1):
    ops=[]; seen=set(); own={}
    for _ in range(5):
        r=rng.random()
        if r<0.2:
            lo=rng.randint(1,K-100); hi=lo+100
            rows=[]
            for k in range(lo,hi):
                if k in own:
                    if own[k] is not None: rows.append([k,own[k]])
                    continue
                cur=state.get(k)
                if cur is None or cur[0] is None: continue
                p=prev.get(k)
                if cur[1]>t-30 and (p is None or p[0] is None) and cur[1] not in seen and rng.random()<0.5:
                    continue  # phantom: observed absent, before its insert
                rows.append([k,cur[0]]); seen.add(cur[1])
            ops.append(["select",{"keys":[lo,hi]},rows])
        elif r<0.4:
            k=rng.randint(1,K)
            if k in own: v=own[k]
            else:
                cur=state.get(k); v=cur[0] if cur else None
                if t==bad_at and cur and cur[0] is not None and k in prev and prev[k][0] is not None and prev[k][1]!=0:
                    v=prev[k][0]; bad_at=-2  # stale item read
                elif cur: seen.add(cur[1])
            ops.append(["r",k,v])
        else:
            k=rng.randint(1,K); c=rng.randint(0,2)
            if c==2 or (c==1 and state.get(k,(None,))[0] is None):
                seq+=1; v=seq; own[k]=v; ops.append(["insert",k,v])
            else:
                own[k]=None; ops.append(["delete",k])
    if t==bad_at: bad_at+=1  # try the next transaction
    for k,v in own.items():
        prev[k]=state.get(k,(None,0)); state[k]=(v,t)
    out.append(json.dumps({"session":1+rng.randrange(S),"id":t,"ops":ops},separators=(",",":")))
if violate and bad_at!=-2: sys.stderr.write("no violation injected\n")
print("\n".join(out))
