import json,sys,bisect
lines=open(sys.argv[1]).read().splitlines()
objs=[json.loads(l) for l in lines if l.strip()]
keys=set()
for o in objs:
    for op in o.get("ops",[]):
        if op[0]=="select":
            for k,v in op[2]: keys.add(k)
        else: keys.add(op[1])
ks=sorted(keys)
out=open(sys.argv[2],"w")
for o in objs:
    if "ops" in o:
        new=[]
        for op in o["ops"]:
            if op[0]=="select":
                lo,hi=op[1]["keys"]; ret=dict((k,v) for k,v in op[2])
                i=bisect.bisect_left(ks,lo)
                while i<len(ks) and ks[i]<hi:
                    k=ks[i]; new.append(["r",k,ret.get(k)]); i+=1
            else: new.append(op)
        o["ops"]=new
    if "trailer" in o: del o["trailer"]
    if "end" in o: continue
    out.write(json.dumps(o,separators=(",",":"))+"\n")
