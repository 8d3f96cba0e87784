#!/usr/bin/env python3
"""Host simulation of the `tiles` segment plan's short-segment path on the ragged case's CSR
offsets (decision 54): which share of the elements `tiles` gives to one work-item per segment,
and the warp efficiency of that path (the elements it reduces over 32 x the longest segment of
each warp's round; a warp waits for its longest). The offsets are the ragged case's
(src/check/ragged.rs, seed 0x5E6); the tile is the H200's at 2^28 (2^28 / (4 x 1056 work-groups)
rounded up to 256: 63744), `short` = max(tile / 256, 32).

    python3 scripts/ragged_tiles_sim.py LOG2N MEAN      (2^22 takes a few seconds)
"""
import math
def ragged(n, mean, seed):
    s=seed; M=(1<<64)-1
    def unif():
        nonlocal s
        s=(s*6364136223846793005+1442695040888963407)&M
        return ((s>>11)+0.5)/(1<<53)
    off=[0]; at=0
    while at<n:
        if unif()<0.25: l=0
        else:
            z=math.sqrt(-2*math.log(unif()))*math.cos(2*math.pi*unif())
            l=round((mean*4/3)*math.exp(1.5*z-1.125))
        at=min(at+l,n); off.append(at)
    return off
import sys
n=1<<int(sys.argv[1]); mean=int(sys.argv[2]); T=63744; short=max(T//256,32)
off=ragged(n,mean,0x5E6)
lens=[off[k+1]-off[k] for k in range(len(off)-1)]
# tiles short path: segments that start and end in a tile, len<=short, round robin over 256 work-items
import bisect
work=0; cost=0; nshort=0; el_short=0
tstart=0
k=0; r=len(lens)
for t in range(0,(n+T-1)//T):
    ts=t*T; te=min(ts+T,n)
    ka=bisect.bisect_left(off,ts,0,r+1); kb=bisect.bisect_left(off,te,0,r+1) if te<n else r
    segs=[lens[e] if (off[e+1]<=te and 0<lens[e]<=short) else 0 for e in range(ka,kb)]
    for base in range(0,len(segs),256):
        rnd=segs[base:base+256]
        for w in range(0,len(rnd),32):
            ws=rnd[w:w+32]; cost+=32*max(ws); work+=sum(ws)
print(f"n=2^{sys.argv[1]} mean {mean}: {r} segments, longest {max(lens)}, short<= {short}: {work/n*100:.1f}% of elements on the per-work-item path, warp efficiency there {work/max(cost,1)*100:.1f}%")
