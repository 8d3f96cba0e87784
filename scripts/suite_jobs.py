#!/usr/bin/env python3
"""The jobs of the test suite binary (tests/suite.rs, decision 60): one line per job,
`LABEL<TAB>TEST TEST ...`, each TEST a full test name for `SUITE --exact TEST ...`.

    python3 scripts/suite_jobs.py SUITE_BINARY [--each] [--filter TEXT ...] [MODULE ...]

The suite's modules (tests/NAME.rs) are grouped so that a few processes run them: each group
below is one job, the slow modules alone and the quick ones together, so that a process's
device probes and program cache serve several files while two lanes still end together. A
module no group names runs as a job of its own (a new file is never left out). With MODULE
arguments, only the jobs of those modules, each module a job of its own; with --each, every
module a job of its own (the GPU machine's many cores, scripts/gpu.sh). --filter TEXT keeps the
tests whose names contain TEXT (several: any of them, as libtest's filters), and leaves out
the jobs left empty.

Test names come from `SUITE --list --format terse` (`module::test: test`), so a module whose
name ends another's (`exact`, `segment_exact`) never catches the other's tests, as a
substring filter would.
"""
import subprocess
import sys

# The groups, slowest first (scripts/test.sh starts them in this order). Times on this 2-core
# machine with PoCL's kernel cache cold, decision 52: matrix 335 s, segment 132, exact 115,
# segment_plans 108, multi_segments 98, segment_exact 95; the others under 60 s each.
GROUPS = [
    ["matrix"],
    ["segment"],
    ["exact"],
    ["segment_plans"],
    ["segment_exact"],
    ["race"],
    ["tune", "props", "segment_merge"],
    ["hostile", "cli_segsplit"],
    ["closures", "features", "half"],
    ["span_large"],
    ["multi", "queues", "select"],
    ["cli", "cli_first_use", "bad_input"],
    ["errors", "errors_input", "faults"],
]


def tests_by_module(binary):
    out = subprocess.run(
        [binary, "--list", "--format", "terse"], check=True, capture_output=True, text=True
    ).stdout
    by = {}
    for line in out.splitlines():
        if not line.endswith(": test"):
            continue
        name = line[: -len(": test")]
        by.setdefault(name.split("::", 1)[0], []).append(name)
    return by


def main():
    args = sys.argv[1:]
    if not args:
        sys.exit(__doc__)
    binary, rest = args[0], args[1:]
    each, filters, wanted = False, [], []
    while rest:
        a = rest.pop(0)
        if a == "--each":
            each = True
        elif a == "--filter" and rest:
            filters.append(rest.pop(0))
        else:
            wanted.append(a)
    by = tests_by_module(binary)
    if filters:
        by = {m: [t for t in ts if any(f in t for f in filters)] for m, ts in by.items()}
    if wanted:
        unknown = [m for m in wanted if m not in by]
        if unknown:
            sys.exit(f"suite_jobs.py: no suite module {', '.join(unknown)} (have: {', '.join(sorted(by))})")
        groups = [[m] for m in wanted]
    elif each:
        groups = [[m] for m in sorted(by)]
    else:
        named = {m for g in GROUPS for m in g}
        groups = [[m for m in g if m in by] for g in GROUPS]
        groups += [[m] for m in sorted(by) if m not in named]
    for g in groups:
        names = [t for m in g for t in by[m]]
        if names:
            print("suite:" + "+".join(g) + "\t" + " ".join(names))


if __name__ == "__main__":
    main()
