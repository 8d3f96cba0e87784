#!/usr/bin/env python3
"""What NVIDIA's compiler made of a kernel's loops (issue 28: the exact f64 loop).

Usage: exact_sass.py FILE.sass|FILE.ptx [KERNEL]

For SASS (cuobjdump -sass / nvdisasm output): each loop (a backward branch and its target)
of KERNEL (default: every function) with its instruction count and the opcodes that matter
for a loop at memory bandwidth: global loads (LDG), local-memory loads and stores (LDL/STL:
spills or private arrays), double additions (DADD/DFMA), integer and conversion work, shared
memory atomics (ATOMS: the redo's deposits), barriers. For PTX: the same per loop label
(`$L__BB..` targets of backward `bra`), with ld.global / ld.local / st.local / add.f64 ...
One line per loop, the innermost (smallest) loops with global loads first.
"""

import re
import sys
from collections import Counter

SASS_KEYS = ["LDG", "LDL", "STL", "LDS", "STS", "ATOMS", "ATOMG", "RED", "DADD", "DFMA", "DMUL",
             "DSETP", "IMAD", "IADD3", "LEA", "ISETP", "LOP3", "SHF", "IMNMX", "VIMNMX", "F2F",
             "I2F", "BAR", "BRA", "MOV", "SEL", "FSEL"]
PTX_KEYS = ["ld.global", "ld.local", "st.local", "ld.shared", "st.shared", "atom.shared",
            "atom.global", "add.f64", "sub.f64", "fma.rn.f64", "setp", "mad.wide", "mul.wide",
            "cvt", "bar.sync", "bra", "mov", "selp", "max.u32", "min.u32"]


def sass(lines, want):
    func, instrs = None, {}
    for ln in lines:
        m = re.search(r"Function : (\S+)", ln)
        if m:
            func = m.group(1)
            instrs[func] = []
            continue
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?);", ln)
        if m and func:
            instrs[func].append((int(m.group(1), 16), m.group(2).strip()))
    for f, ins in instrs.items():
        if want and want not in f:
            continue
        total = Counter(op_name(t) for _, t in ins)
        print(f"SASS {f}: {len(ins)} instructions; " + counts(total, SASS_KEYS))
        loops = []
        for k, (addr, text) in enumerate(ins):
            m = re.search(r"\bBRA\b.*?(0x[0-9a-f]+)", text)
            if m and int(m.group(1), 16) <= addr:
                tgt = int(m.group(1), 16)
                body = [t for a, t in ins if tgt <= a <= addr]
                loops.append((tgt, addr, Counter(op_name(t) for t in body), len(body)))
        loops.sort(key=lambda l: (l[2]["LDG"] == 0, l[3]))
        for tgt, addr, c, n in loops[:6]:
            print(f"  loop {tgt:#06x}-{addr:#06x}: {n} instructions; " + counts(c, SASS_KEYS))
        # The order of the innermost loop with global loads, opcodes run-length coded: whether
        # its loads are issued together before the arithmetic that uses them.
        def innermost(lp):
            return not any(o is not lp and lp[0] <= o[0] and o[1] <= lp[1] for o in loops)
        hot = sorted((l for l in loops if l[2]["LDG"] and innermost(l)),
                     key=lambda l: (-l[2]["LDG"], l[3]))
        if hot:
            tgt, addr = hot[0][0], hot[0][1]
            seq = [op_name(t) for a, t in ins if tgt <= a <= addr]
            rle, k = [], 0
            while k < len(seq):
                j = k
                while j < len(seq) and seq[j] == seq[k]:
                    j += 1
                rle.append(seq[k] + (str(j - k) if j - k > 1 else ""))
                k = j
            print("  order: " + " ".join(rle)[:1500])


def op_name(text):
    t = re.sub(r"^@!?U?P[T0-9]\s+", "", text)
    return t.split()[0].split(".")[0] if t else ""


def counts(c, keys):
    return " ".join(f"{k} {c[k]}" for k in keys if c[k])


def ptx(lines, want):
    func, body = None, {}
    for ln in lines:
        m = re.match(r"\.(?:visible )?\.?(?:entry|func)\s+(?:\([^)]*\)\s*)?(\w+)", ln.strip())
        if m:
            func = m.group(1)
            body[func] = []
            continue
        if func:
            body[func].append(ln.strip())
    for f, ls in body.items():
        if want and want not in f:
            continue
        total = Counter()
        for t in ls:
            for k in PTX_KEYS:
                if t.startswith(k) or re.match(r"@%p\d+\s+" + re.escape(k), t):
                    total[k] += 1
        print(f"PTX {f}: {len(ls)} lines; " + counts(total, PTX_KEYS))
        labels = {t[:-1]: i for i, t in enumerate(ls) if re.match(r"\$L__BB\w+:$", t)}
        loops = []
        for i, t in enumerate(ls):
            m = re.search(r"\bbra(?:\.uni)?\s+(\$L__BB\w+);", t)
            if m and m.group(1) in labels and labels[m.group(1)] <= i:
                seg = ls[labels[m.group(1)]:i + 1]
                c = Counter()
                for u in seg:
                    u = re.sub(r"^@!?%p\d+\s+", "", u)
                    for k in PTX_KEYS:
                        if u.startswith(k):
                            c[k] += 1
                loops.append((m.group(1), len(seg), c))
        # The loops with the most global loads first (the unrolled hot loop), the smallest of
        # those first (not the loops around it).
        loops.sort(key=lambda l: (-l[2]["ld.global"], l[1]))
        for name, n, c in loops[:4]:
            print(f"  loop {name}: {n} lines; " + counts(c, PTX_KEYS))


def main():
    path = sys.argv[1]
    want = sys.argv[2] if len(sys.argv) > 2 else None
    with open(path, errors="replace") as f:
        lines = f.readlines()
    if path.endswith(".ptx"):
        ptx(lines, want)
    else:
        sass(lines, want)


if __name__ == "__main__":
    try:
        main()
    except BrokenPipeError:  # a `| head` that stopped reading
        sys.stderr.close()
