#!/usr/bin/env python3
"""Import cycles between the library's files (src/, not src/bin/ nor unit-test files).

Reads every `use crate::...`, `use super::...` and `use self::...` line (and `crate::a::b`
paths written inline), resolves each to the file that declares the module it names (the
longest path prefix that is a file: `src/a/b.rs` or `src/a/b/mod.rs`), and reports every group
of files that import each other in a circle (a strongly connected component of two or more
files). Edges between a module's `mod.rs` (or `foo.rs` with a `foo/` folder) and the files
inside its folder are not counted: the room's front file declares and re-exports its children,
and they use what it defines (lib.rs is the front file of every file). A name a front file re-exports (`pub use`, `pub(crate) use`)
resolves to the file it comes from.

Exit status 1 when a cycle is found that is not in KNOWN (those still open),
or when a KNOWN cycle no longer exists (drop it from the list). `--list` prints every edge.
"""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")

# Cycles still open, each as a sorted tuple of files relative to src/. Empty since issue 27
# (session 9): any cycle fails. Add one here only with the reason and the fix that removes it.
KNOWN = set()


def files():
    out = []
    for d, _, fs in os.walk(ROOT):
        rel = os.path.relpath(d, ROOT)
        if rel.split(os.sep)[0] == "bin":
            continue
        for f in fs:
            if f.endswith(".rs") and f != "tests.rs" and not f.endswith("_tests.rs"):
                out.append(os.path.normpath(os.path.join(rel, f)).replace(os.sep, "/"))
    return sorted(out)


def module_of(path):
    """src-relative file -> module path segments (lib.rs -> [])."""
    p = path[:-3].split("/")
    if p == ["lib"]:
        return []
    if p[-1] == "mod":
        p = p[:-1]
    return p


def file_of(mod, known):
    """The file declaring the longest prefix of `mod` that is a module."""
    for k in range(len(mod), -1, -1):
        m = mod[:k]
        if not m:
            return "lib.rs"
        for cand in ("/".join(m) + ".rs", "/".join(m) + "/mod.rs"):
            if cand in known:
                return cand
    return None


def front(path):
    """The module folder a front file owns (`a/mod.rs` or `a.rs` -> `a/`), else None."""
    if path == "lib.rs":
        return ""
    if path.endswith("/mod.rs"):
        return path[: -len("mod.rs")]
    return path[:-3] + "/"


def related(a, b):
    """A front file and a file inside its folder."""
    for x, y in ((a, b), (b, a)):
        f = front(x)
        if f is not None and y.startswith(f):
            return True
    return False


def expand(tree, prefix=()):
    """`a::{b, c::{d, e}}` -> [(a,b), (a,c,d), (a,c,e)] (aliases dropped)."""
    tree = tree.strip()
    if not tree:
        return []
    if "{" not in tree:
        segs = tuple(x for x in tree.split(" as ")[0].strip().split("::") if x)
        return [prefix + segs]
    i = tree.index("{")
    if "}" not in tree[i:]:
        return []
    head = tuple(x for x in tree[:i].split("::") if x)
    body = tree[i + 1 : tree.rindex("}")]
    parts, depth, cur = [], 0, ""
    for ch in body:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += ch == "{"
        depth -= ch == "}"
        cur += ch
    parts.append(cur)
    out = []
    for part in parts:
        out += expand(part, prefix + head)
    return out


REEXPORT = re.compile(r"(?:^|\s)pub(?:\([a-z]+\))?\s+use\s+([^;]+);")


def reexports(known):
    """front file -> {name: module path segments it re-exports from}."""
    out = {}
    for f in known:
        text = re.sub(r"//[^\n]*", "", open(os.path.join(ROOT, f), encoding="utf-8").read())
        mod = module_of(f)
        table = {}
        for m in REEXPORT.finditer(text):
            for segs in expand(" ".join(m.group(1).split())):
                segs = list(segs)
                if not segs:
                    continue
                if segs[0] == "crate":
                    base = []
                    segs = segs[1:]
                elif segs[0] == "super":
                    base = mod[:-1]
                    segs = segs[1:]
                elif segs[0] == "self":
                    base = mod
                    segs = segs[1:]
                else:
                    base = mod
                if segs:
                    table[segs[-1]] = base + segs[:-1]
        out[f] = table
    return out


def resolve(segs, known, table, depth=0):
    """The file that defines what `segs` (a crate-absolute path) names."""
    target = file_of(segs, known)
    if target is None or depth > 8:
        return target
    rest = segs[len(module_of(target)) :]
    if rest and rest[0] in table.get(target, {}):
        via = table[target][rest[0]]
        return resolve(via + rest[:1], known, table, depth + 1)
    return target


USE = re.compile(r"\b(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)+|::\{)")


USE_STMT = re.compile(r"^\s*(?:pub(?:\([a-z]+\))?\s+)?use\s+([^;]+);", re.MULTILINE)


def absolute(segs, mod):
    """A `crate::` / `super::` / `self::` path -> crate-absolute segments, else None."""
    if not segs:
        return None
    if segs[0] == "crate":
        return segs[1:]
    if segs[0] in ("super", "self"):
        base = mod if segs[0] == "self" else mod[:-1]
        segs = segs[1:]
        while segs and segs[0] == "super":
            base = base[:-1]
            segs = segs[1:]
        return base + segs
    return None


def edges(known):
    table = reexports(known)
    out = {f: set() for f in known}
    for f in known:
        mod = module_of(f)
        text = open(os.path.join(ROOT, f), encoding="utf-8").read()
        # Comments and doc text are not code.
        text = re.sub(r"//[^\n]*", "", text)
        paths = []
        for m in USE_STMT.finditer(text):
            paths += [list(p) for p in expand(" ".join(m.group(1).split()))]
        code = USE_STMT.sub(" ", text)
        for m in USE.finditer(code):
            paths.append([m.group(1)] + [x for x in m.group(2).split("::") if x and x != "{"])
        for p in paths:
            segs = absolute(p, mod)
            if segs is None:
                continue
            target = resolve(segs, known, table)
            if target and target != f and not related(f, target):
                out[f].add(target)
    return out


def sccs(graph):
    index, low, stack, on, res = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                res.append(tuple(sorted(comp)))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(res)


def main():
    known = set(files())
    g = edges(known)
    if "--list" in sys.argv:
        for f in sorted(g):
            for t in sorted(g[f]):
                print(f"{f} -> {t}")
    cycles = sccs(g)
    bad = 0
    for c in cycles:
        tag = "known" if c in KNOWN else "NEW"
        print(f"import cycle [{tag}]: " + " <-> ".join(c))
        bad += c not in KNOWN
    for c in sorted(KNOWN - set(cycles)):
        print("fixed, drop it from KNOWN in scripts/import_cycles.py: " + " <-> ".join(c))
        bad += 1
    print(f"{len(known)} files, {sum(len(v) for v in g.values())} imports between files, "
          f"{len(cycles)} cycle(s), {bad} not as expected")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
