#!/usr/bin/env python3
"""Checks the #include "x.h" graph of src/: no cycle between modules of one file stem
(a file's .c, .h and _internal.h count as one module) and no private header (*_internal.h) of one
folder included from another. The compiler catches upward includes between layers
(each layer's library sees only itself and the layers below); this catches what it
cannot: a cycle inside a folder, and a folder reaching into another's private header.

Usage: check_includes.py SRC_DIR   (exit 1 naming each cycle and private include)"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def module_of(stem):
    """A private header x_internal.h is part of module x (its .c files' own header)."""
    return stem[: -len("_internal")] if stem.endswith("_internal") else stem


def modules(src):
    """{module: set of modules it includes}; a module is "folder/stem", folder being the
    file's directory under src (a layer or a folder inside one: process/device)."""
    graph, problems = {}, []
    for fdir, dirs, names in sorted(os.walk(src)):
        dirs.sort()
        folder = os.path.relpath(fdir, src)
        if folder == ".":
            continue
        for name in sorted(names):
            stem, ext = os.path.splitext(name)
            if ext not in (".c", ".h"):
                continue
            mod = f"{folder}/{module_of(stem)}"
            edges = graph.setdefault(mod, set())
            with open(os.path.join(fdir, name), encoding="utf-8") as f:
                text = f.read()
            for inc in INCLUDE.findall(text):
                if "/" not in inc:
                    inc = f"{folder}/{inc}"
                if not os.path.exists(os.path.join(src, inc)):
                    continue  # generated in the build tree
                tfolder, tstem = os.path.split(os.path.splitext(inc)[0])
                target = f"{tfolder}/{module_of(tstem)}"
                if tstem.endswith("_internal") and tfolder != folder:
                    problems.append(f"{folder}/{name}: includes {inc}, a private header of another folder")
                if target != mod:
                    edges.add(target)
    return graph, problems


def cycles(graph):
    """Each strongly connected component of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
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
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: check_includes.py SRC_DIR")
    graph, problems = modules(sys.argv[1])
    if not graph:
        sys.exit(f"{sys.argv[1]}: no .c or .h files found")
    for comp in sorted(" <-> ".join(comp) for comp in cycles(graph)):
        problems.append("include cycle between modules: " + comp)
    for p in problems:
        print(p, file=sys.stderr)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
