#!/usr/bin/env bash
# Issue 26: our automatic segment plans and the peers in the same device call, one table
#   shape | ours (auto plan) us | x plain | best peer (lib op us) | ours / peer
# Ours: examples/segment_bench (2^LG f32, device time, medians of REPS, every result checked
# against a float64 host reference), the plain sum of the same elements in the same process.
# Peers: benches/peers/torch_cupy_segment.py (torch.sum(dim) / cupy.sum(axis), torch
# segment_reduce / index_add_ / cupy add.reduceat; CUDA events, medians of REPS) on the same
# shapes. The ragged peers draw their own heavy-tailed lengths of the same mean (the script's
# lognormal generator, not segment_bench's), so those rows compare the same mean, not the
# same offsets.
# Built here with `bash scripts/gpu.sh build`; run there with
#   bash scripts/gpu.sh run cmd bash scripts/gpu/segment_peers.sh
# Env: DEV (NVIDIA), LG (28), REPS (20), CASES (segment_bench cases; default: the issue's 13),
# SEGBENCH_TYPE (f32; f64 / i32 pass through to both sides), PLANS (auto).
set -u
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
B=${SEGBENCH:-.gpu/segment_bench}
PEERS=${PEERS:-.gpu/peers/torch_cupy_segment.py}
[ -f "$PEERS" ] || PEERS=benches/peers/torch_cupy_segment.py
DEV=${DEV:-NVIDIA}
LG=${LG:-28}
REPS=${REPS:-20}
TY=${SEGBENCH_TYPE:-f32}
CASES=${CASES:-"rows-2^14x2^14 rows-2^20x2^8 rows-2^8x2^20 rows-2^24x2^4 rows-2^26x2^2 rows-2^0x2^28 cols-2^14x2^14 cols-2^20x2^8 cols-2^8x2^20 cols-2^24x2^4 ragged-16 ragged-256 ragged-65536"}
# Everything (our lines, the peers' JSON lines and log, the table) goes to stdout and to one
# file, $OUT/segment_peers.txt; the pieces are kept in a temporary folder.
dir=$(mktemp -d)
ours="$dir/ours.txt"
peers="$dir/peers.jsonl"
exec > >(tee "${OUT:-/tmp}/segment_peers.txt") 2>&1
t0=$SECONDS
SEGBENCH_TYPE=$TY SEGBENCH_PLANS=${PLANS:-auto} timeout 300 "$B" "$DEV" "$LG" "$REPS" $CASES 2>&1 | tee "$ours"
echo "ours: $((SECONDS - t0)) s"
# The peers' case names: TYPE-rows-RxC with decimal extents, TYPE-ragged-MEAN, TYPE-sum.
pcases=$(python3 - "$TY" $CASES <<'PY'
import sys
ty, out = sys.argv[1], [f"{sys.argv[1]}-sum"]
num = lambda s: 2 ** int(s[2:]) if s.startswith("2^") else int(s)
for c in sys.argv[2:]:
    kind, shape = c.split("-", 1)
    if kind == "ragged":
        out.append(f"{ty}-ragged-{shape}")
    else:
        r, k = shape.split("x")
        out.append(f"{ty}-{kind}-{num(r)}x{num(k)}")
print(",".join(out))
PY
)
t1=$SECONDS
timeout 400 python3 "$PEERS" --n "2^$LG" --reps "$REPS" --cases "$pcases" > "$peers" 2> "$dir/peers.log"
echo "peers: rc $? $((SECONDS - t1)) s"
cat "$peers"
grep -E "failed|skipped|Error" "$dir/peers.log" | head -n 20
python3 - "$ours" "$peers" "$TY" <<'PY'
import json, re, sys
ours_f, peers_f, ty = sys.argv[1:4]
num = lambda s: 2 ** int(s[2:]) if s.startswith("2^") else int(s)
ours, plain = {}, None
for line in open(ours_f):
    m = re.match(r"(\S+)\s+(\S+)\s+([\d.]+) us\s+([\d.]+)x\s+plan (\S+)", line)
    if not m:
        continue
    case, plan, us, x, algo = m.groups()
    if plan == "plain":
        plain = float(us)
        continue
    if plan != "auto" or "exact" in line:
        continue
    wrong = re.search(r"wrong (\d+)", line)
    ours[case] = (float(us), float(x), algo, wrong.group(1) if wrong else "?")
best, psum = {}, {}
for line in open(peers_f):
    try:
        r = json.loads(line)
    except ValueError:
        continue
    key, t = r["case"], r["device_time_us"]
    if key.endswith("-sum"):
        psum[r["lib"]] = t
        continue
    if key not in best or t < best[key][2]:
        best[key] = (r["lib"], r["op"], t)
print(f"\nplain sum: ours {plain} us; peers {', '.join(f'{k} {v:.1f} us' for k, v in psum.items())}")
print(f"| shape | ours (auto plan) | x plain | best peer | ours / peer | wrong |")
print(f"| --- | --- | --- | --- | --- | --- |")
for case, (us, x, algo, wrong) in ours.items():
    kind, shape = case.split("-", 1)
    if kind == "ragged":
        key = f"{ty}-ragged-{shape}"
    else:
        r, c = shape.split("x")
        key = f"{ty}-{kind}-{num(r)}x{num(c)}"
    p = best.get(key)
    ps = f"{p[0]} {p[1]} {p[2]:.1f} us" if p else "-"
    ratio = f"{us / p[2]:.2f}" if p else "-"
    print(f"| {case} | {us:.1f} us ({algo}) | {x:.2f} | {ps} | {ratio} | {wrong} |")
PY
echo "total: $((SECONDS - t0)) s"
rm -rf "$dir"
