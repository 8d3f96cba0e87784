#!/usr/bin/env python3
"""Where the `runs` kernels spend their instructions (issue 26, decision 84).

Usage: csr_sass.py FILE.sass E [KERNEL]

The parsing and the opcode names of exact_sass.py (imported), with the opcodes of a CSR walk:
per loop of KERNEL (default clr_main), its static instruction count and the classes below, and
for the loops with global loads, the count per element of the run (E elements per work-item per
pass of the loop): one pass of a sub-tile's loop walks E elements in each lane, so its
instruction count / E is what each element costs a lane (the branches' other paths counted
too: an upper bound on the path taken, inner loops included once).
"""

import os
import re
import sys
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import exact_sass  # noqa: E402  (op_name, counts)

KEYS = ["LDG", "STG", "LDS", "STS", "ATOMS", "SHFL", "VOTE", "BAR", "WARPSYNC", "FADD", "IADD3",
        "IMAD", "LEA", "ISETP", "LOP3", "SHF", "SEL", "FSEL", "POPC", "FLO", "PLOP3", "BSSY",
        "BSYNC", "BRA", "MOV", "DADD"]


def functions(lines):
    func, out = None, {}
    for ln in lines:
        m = re.search(r"Function : (\S+)", ln)
        if m:
            func = m.group(1)
            out[func] = []
            continue
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?);", ln)
        if m and func:
            out[func].append((int(m.group(1), 16), m.group(2).strip()))
    return out


def main():
    path, e = sys.argv[1], int(sys.argv[2])
    want = sys.argv[3] if len(sys.argv) > 3 else "clr_main"
    with open(path, errors="replace") as f:
        funcs = functions(f.readlines())
    for name, ins in funcs.items():
        if want not in name:
            continue
        total = Counter(exact_sass.op_name(t) for _, t in ins)
        print(f"SASS {name}: {len(ins)} instructions; " + exact_sass.counts(total, KEYS))
        loops = []
        for addr, text in ins:
            m = re.search(r"\bBRA\b.*?(0x[0-9a-f]+)", text)
            if m and int(m.group(1), 16) <= addr:
                tgt = int(m.group(1), 16)
                body = [t for a, t in ins if tgt <= a <= addr]
                loops.append((tgt, addr, Counter(exact_sass.op_name(t) for t in body), len(body)))
        loops.sort(key=lambda lp: (lp[2]["LDG"] == 0, -lp[3]))
        for tgt, addr, c, n in loops[:8]:
            per = f" ({n / e:.1f} per element of a run of {e})" if c["LDG"] else ""
            print(f"  loop {tgt:#06x}-{addr:#06x}: {n} instructions{per}; "
                  + exact_sass.counts(c, KEYS))


if __name__ == "__main__":
    main()
