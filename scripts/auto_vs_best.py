#!/usr/bin/env python3
"""Auto plan against the best forced strategy, per point, from `clreduce bench --json` files.

    python3 scripts/auto_vs_best.py BENCH.json [MORE.json ...] [--target 1.10] [--rerun RERUN.json ...]
    python3 scripts/auto_vs_best.py BENCH.json --misses    # one line per miss: DEVICE_INDEX CASE 2^K BEST

Per device, case and size: the auto plan's median device time, the fastest forced strategy's
median, their ratio (auto / best; below 1 the auto plan beat every forced strategy, which a
measured geometry can do) and MISS where the ratio exceeds the target. Points measured in several
files (a re-run of a miss with `--strategies auto,BEST`) are listed once per file under --rerun,
with the verdict taken from the re-run: the issue's rule is to re-run a point before calling it a
miss. Prints a table and a summary line per device; exit status 0.
"""
import json
import sys
from collections import defaultdict


INDEX = {}


def points(path):
    d = json.load(open(path))
    out = defaultdict(dict)
    for p in d["points"]:
        key = (p["device"], p["case"], p["n"])
        INDEX[p["device"]] = p["device_index"]
        out[key][p["strategy"]] = (p["device_ns"]["median"], p["plan"])
    return d.get("command", ""), out


def verdicts(g, target):
    rows = {}
    for key, v in g.items():
        if "auto" not in v:
            continue
        auto, plan = v["auto"]
        forced = [(t, s) for s, (t, _) in v.items() if s != "auto"]
        if not forced:
            continue
        best, bs = min(forced)
        r = auto / max(best, 1)
        rows[key] = (plan, auto, bs, best, r, r > target)
    return rows


def main(argv):
    target = 1.10
    files, reruns = [], []
    if "--misses" in argv:
        for f in [a for a in argv if a.endswith(".json")]:
            _, g = points(f)
            for (dev, case, n), row in sorted(verdicts(g, target).items()):
                if row[5]:
                    print(INDEX[dev], case, "2^%d" % (n.bit_length() - 1), row[2])
        return
    it = iter(argv)
    into = files
    for a in it:
        if a == "--target":
            target = float(next(it))
        elif a == "--rerun":
            into = reruns
        else:
            into.append(a)
    base = {}
    for f in files:
        cmd, g = points(f)
        print(f"# {f}: {cmd}")
        base.update(verdicts(g, target))
    again = defaultdict(list)
    for f in reruns:
        cmd, g = points(f)
        print(f"# re-run {f}: {cmd}")
        for k, row in verdicts(g, target).items():
            again[k].append(row)
    print(f"# ratio = auto median device time / fastest forced strategy's; MISS above {target:.2f}x")
    hdr = f"{'device':<28} {'case':<16} {'n':>5}  {'auto plan':<52} {'auto us':>10}  {'best forced':<24} {'best us':>10} {'ratio':>6}  verdict"
    per_dev = defaultdict(lambda: [0, 0, 0])
    last_dev = None
    for key in sorted(base, key=lambda k: (k[0], k[1], k[2])):
        dev, case, n = key
        if dev != last_dev:
            print()
            print(hdr)
            last_dev = dev
        plan, auto, bs, best, r, miss = base[key]
        verdict = "MISS" if miss else "ok"
        reruns_here = again.get(key, [])
        if miss and reruns_here:
            rr = reruns_here[-1]
            verdict = ("MISS (re-run %.2fx)" if rr[5] else "ok on re-run (%.2fx)") % rr[4]
            miss = rr[5]
        per_dev[dev][0] += 1
        per_dev[dev][1] += miss
        print(
            f"{dev[:28]:<28} {case:<16} {'2^%d' % (n.bit_length() - 1):>5}  {plan[:52]:<52} {auto / 1e3:>10.1f}  {bs:<24} {best / 1e3:>10.1f} {r:>5.2f}x  {verdict}"
        )
    print()
    for dev, (n, m, _) in per_dev.items():
        print(f"summary: {dev}: {n - m} of {n} points within {target:.2f}x, {m} miss(es)")


if __name__ == "__main__":
    main(sys.argv[1:])
