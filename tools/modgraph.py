#!/usr/bin/env python3
"""The module graph of src/: rooms, floors, arrows that run back up, and import cycles.

A room is a top-level module of the library (`src/<name>.rs` or `src/<name>/`); `main.rs` and
`cli/` are the binary's. An arrow A -> B means some non-test code of A names `crate::B` (or, in
the binary, `sjournal::B`). Comments and `#[cfg(test)] mod ... { }` blocks are left out.

Floors: the rooms are ordered so that as few arrows as possible run from a lower floor to a
higher one (Eades-Lin-Smyth greedy feedback-arc-set order, then each room's floor is one more
than the highest floor it imports among the arrows that run down). "Back up" counts the arrows
left running up; "cycles" lists the strongly connected components of more than one room.

    tools/modgraph.py [SRC_DIR] [--rooms-depth 2] [--json] [--why]

Paths are read from `crate::`/`sjournal::` paths, `super::` paths (resolved against the file's
own module, so `use super::x` in `fold/digest/mod.rs` counts as an import of `fold`), and
`use crate::{a, b::{c, d}}` groups, nested ones included. --why prints, under each arrow back
up and each arrow of a cycle that spans folders, the file and path that make it.

With --rooms-depth 2 a folder's sub-folders are rooms of their own (`journal/session`), which
shows cycles that span two folders.
"""
import json
import os
import re
import sys
from collections import defaultdict

argv = sys.argv[1:]
depth = 1
if "--rooms-depth" in argv:
    i = argv.index("--rooms-depth")
    depth = int(argv[i + 1])
    del argv[i : i + 2]
args = [a for a in argv if not a.startswith("--")]
src = args[0] if args else os.path.join(os.path.dirname(__file__), "..", "src")
as_json = "--json" in sys.argv
show_why = "--why" in sys.argv


def strip(text):
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    out, i = [], 0
    for m in re.finditer(r"#\[cfg\(test\)\]\s*(pub\s+)?mod\s+\w+\s*\{", text):
        if m.start() < i:
            continue
        out.append(text[i:m.start()])
        j, d = m.end(), 1
        while j < len(text) and d:
            d += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        i = j
    out.append(text[i:])
    return "".join(out)


def room_of(rel):
    parts = rel[:-3].split("/") if rel.endswith(".rs") else rel.split("/")
    if parts[0] in ("main", "cli"):
        return "cli"
    if parts[-1] == "mod":
        parts = parts[:-1]
    if depth == 2 and len(parts) >= 2 and os.path.isdir(os.path.join(src, *parts[:2])):
        return "/".join(parts[:2])
    return parts[0] if parts else "lib"


rooms, files = set(), {}
for dp, _, fs in os.walk(src):
    for f in fs:
        if f.endswith(".rs"):
            rel = os.path.relpath(os.path.join(dp, f), src)
            if rel == "lib.rs" or rel.endswith("tests.rs") or "/tests/" in rel or rel.endswith("proptests.rs"):
                continue
            r = room_of(rel)
            rooms.add(r)
            files[rel] = r

top = {r.split("/")[0] for r in rooms}
edges = defaultdict(set)
why = defaultdict(list)  # (a, b) -> ["file: path", ...]


def module_path(rel):
    parts = rel[:-3].split("/")
    if parts[-1] == "mod":
        parts = parts[:-1]
    return parts


def target_room(path):
    """The room of an absolute module path (["journal", "session", "Batch"])."""
    if not path or path[0] not in top:
        return None
    if depth == 2 and len(path) >= 2 and f"{path[0]}/{path[1]}" in rooms:
        return f"{path[0]}/{path[1]}"
    return path[0] if path[0] in rooms else None


def use_tree_items(text, i):
    """The items of the `{...}` group opening at text[i] == "{", nested groups kept whole."""
    d, j, start, items = 0, i, i + 1, []
    while j < len(text):
        c = text[j]
        if c == "{":
            d += 1
        elif c == "}":
            d -= 1
            if d == 0:
                items.append(text[start:j])
                break
        elif c == "," and d == 1:
            items.append(text[start:j])
            start = j + 1
        j += 1
    return [it.strip() for it in items if it.strip()]


def expand(prefix, item):
    """Module paths named by one use-tree item under `prefix` (the first two segments are
    enough to find a room)."""
    head = re.match(r"(\w+)(?:\s*::\s*(\w+|\{))?", item)
    if not head:
        return []
    a, b = head.group(1), head.group(2)
    if b == "{":
        inner = item[item.index("{"):]
        return [prefix + [a] + p for sub in use_tree_items(inner, 0) for p in expand([], sub)] or [prefix + [a]]
    return [prefix + [a] + ([b] if b else [])]


for rel, r in files.items():
    text = strip(open(os.path.join(src, rel), encoding="utf-8").read())
    me = module_path(rel)
    found = []
    # `crate::a::b`, `sjournal::a::b`, `super::a`, `super::super::a`, and `{...}` groups
    for m in re.finditer(r"\b(crate|sjournal|(?:super\s*::\s*)+)\s*::\s*", text):
        kw = m.group(1)
        if kw in ("crate", "sjournal"):
            base = []
        else:
            ups = kw.count("super")
            base = me[: max(len(me) - ups, 0)]
        rest = text[m.end():]
        if rest.startswith("{"):
            for it in use_tree_items(rest, 0):
                found += expand(base, it)
        else:
            found += expand(base, re.match(r"[\w\s:]*", rest).group(0).replace(" ", ""))
    for path in found:
        t = target_room(path)
        if t and t != r:
            edges[r].add(t)
            why[(r, t)].append(f"{rel}: {'::'.join(path)}")

# strongly connected components (Tarjan)
idx, low, st, on, comps, n = {}, {}, [], set(), [], [0]


def sc(v):
    idx[v] = low[v] = n[0]
    n[0] += 1
    st.append(v)
    on.add(v)
    for w in edges[v]:
        if w not in idx:
            sc(w)
            low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], idx[w])
    if low[v] == idx[v]:
        c = []
        while True:
            w = st.pop()
            on.discard(w)
            c.append(w)
            if w == v:
                break
        comps.append(sorted(c))


sys.setrecursionlimit(10000)
for v in sorted(rooms):
    if v not in idx:
        sc(v)

# Eades-Lin-Smyth order: sinks last, sources first, else max(out - in)
g = {v: set(edges[v]) for v in rooms}
rev = defaultdict(set)
for v, ws in g.items():
    for w in ws:
        rev[w].add(v)
left, s1, s2 = set(rooms), [], []
while left:
    changed = True
    while changed:
        changed = False
        for v in sorted(left):
            if not (g[v] & left):
                s2.insert(0, v)
                left.discard(v)
                changed = True
        for v in sorted(left):
            if not (rev[v] & left):
                s1.append(v)
                left.discard(v)
                changed = True
    if left:
        v = max(sorted(left), key=lambda v: len(g[v] & left) - len(rev[v] & left))
        s1.append(v)
        left.discard(v)
order = s1 + s2  # importers before what they import
pos = {v: i for i, v in enumerate(order)}
back = sorted((a, b) for a in rooms for b in g[a] if pos[b] < pos[a])
floor = {}
for v in reversed(order):
    down = [floor[w] for w in g[v] if pos[w] > pos[v]]
    floor[v] = 1 + max(down, default=0)

cycles = [c for c in comps if len(c) > 1]
result = {
    "rooms": len(rooms),
    "arrows": sum(len(v) for v in g.values()),
    "floors": max(floor.values()),
    "back_up": [f"{a} -> {b}" for a, b in back],
    "cycles": cycles,
    "cycles_spanning_folders": [c for c in cycles if len({x.split('/')[0] for x in c}) > 1],
    "by_floor": {f: sorted(v for v in rooms if floor[v] == f) for f in sorted(set(floor.values()), reverse=True)},
}
if as_json:
    print(json.dumps(result, indent=1))
else:
    print(f"rooms {result['rooms']}, arrows {result['arrows']}, floors {result['floors']}")
    for f, rs in result["by_floor"].items():
        print(f"  floor {f:2}: {', '.join(rs)}")
    print(f"arrows back up: {len(back)}")
    for a, b in back:
        print(f"  {a} -> {b}")
        if show_why:
            for w in sorted(set(why[(a, b)]))[:6]:
                print(f"      {w}")
    print(f"cycles: {len(cycles)} ({len(result['cycles_spanning_folders'])} spanning folders)")
    for c in cycles:
        print("  " + " <-> ".join(c))
        if show_why and len({x.split('/')[0] for x in c}) > 1:
            for a in c:
                for b in sorted(g[a] & set(c)):
                    if a.split("/")[0] != b.split("/")[0]:
                        print(f"      {a} -> {b}: {sorted(set(why[(a, b)]))[0]}")
