#!/usr/bin/env python3
"""Compares `clreduce reduce --json` runs of one case: one device alone (*.one.json), one launch
split across devices (*.split.json) and MPI ranks (*.mpi.json), files named fam-CASE.KIND.json in
the folder given (scripts/scaleout_gpu.sh writes them).

Per variable: the result bits of each run, each run's check against the host reference, and
whether the bits agree. Bits must agree where the result does not depend on the order of the
combination (integers, min/max, argmin/argmax, exact sums, a custom max); other float results
(plain sums, products, an identity-less a+b) only need each run's check to pass. Exit status 1
on a disagreement where bits must agree, a failed check or a missing run."""
import glob
import hashlib
import json
import os
import sys

ORDER_FREE_OPS = {"min", "max", "and", "or", "xor", "land", "lor", "argmin", "argmax"}


def load(path):
    try:
        with open(path) as f:
            data = json.load(f)
        return data[0] if isinstance(data, list) and data else None
    except (OSError, ValueError):
        return None


def must_agree(case, var):
    if var.get("type", "").startswith(("i", "u")):
        return True
    if var.get("op") in ORDER_FREE_OPS or "exact" in case:
        return True
    return "custom" in case and "max" in var.get("op", "")


def main(folder):
    cases = sorted({os.path.basename(p).split(".")[0][4:] for p in glob.glob(f"{folder}/fam-*.json")})
    bad = 0
    for case in cases:
        runs = {k: load(f"{folder}/fam-{case}.{k}.json") for k in ("one", "split", "mpi")}
        present = {k: r for k, r in runs.items() if r is not None}
        missing = [k for k, r in runs.items() if r is None and os.path.exists(f"{folder}/fam-{case}.{k}.err")]
        if missing:
            bad += 1
            for k in missing:
                err = open(f"{folder}/fam-{case}.{k}.err").read().strip().splitlines()
                print(f"{case}: {k}: NO RESULT: {err[-1] if err else 'no output'}")
        if "one" not in present:
            continue
        shares = present.get("split", {}).get("split")
        print(f"{case}: n={present['one'].get('n')}" + (f", split shares {shares}" if shares else ""))
        for k, v in enumerate(present["one"]["vars"]):
            row, bits = [], set()
            for kind, r in present.items():
                vk = r["vars"][k]
                b = vk["bits"]
                bits.add(json.dumps(b))
                if isinstance(b, list):  # a span: its bins' bits, shown by count and a digest
                    b = f"{len(b)} bins #{hashlib.sha1(json.dumps(b).encode()).hexdigest()[:8]}"
                ok = vk["check"] == "OK"
                bad += 0 if ok else 1
                row.append(f"{kind} {b} ({vk['check']})")
            agree = len(bits) == 1
            need = must_agree(case, v)
            verdict = "equal" if agree else ("DIFFER" if need else "differ (order-dependent float; each checked)")
            bad += 1 if (need and not agree) else 0
            print(f"  {v['op']:>8} {v['type']}: {'; '.join(row)}: {verdict}")
    print(f"{len(cases)} case(s); problems: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
