#!/usr/bin/env python3
"""Fails when the modules under src/ include each other in a cycle. A module
is a .c file with its .h (src/lib/util.c and src/lib/util.h are one); a .c
without a header of its name is its own module. An edge A -> B means a file
of A includes B's header. Prints every cycle found (`make lint-static`)."""
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else "src"
include = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
edges = {}
for d, _, files in os.walk(root):
    for f in files:
        if not f.endswith((".c", ".h")):
            continue
        path = os.path.join(d, f)
        mod = os.path.splitext(os.path.relpath(path, root))[0]
        with open(path, encoding="utf-8", errors="replace") as fh:
            for inc in include.findall(fh.read()):
                target = os.path.normpath(os.path.join(d, inc))
                if not os.path.exists(target):
                    target = os.path.normpath(os.path.join(root, inc))
                if not os.path.exists(target):
                    continue  # generated (build/gen) or a system header
                other = os.path.splitext(os.path.relpath(target, root))[0]
                if other != mod:
                    edges.setdefault(mod, set()).add(other)

cycles, state, stack = [], {}, []


def visit(m):
    state[m] = 1
    stack.append(m)
    for n in sorted(edges.get(m, ())):
        if state.get(n) == 1:
            cycles.append(stack[stack.index(n):] + [n])
        elif n not in state:
            visit(n)
    stack.pop()
    state[m] = 2


for m in sorted(edges):
    if m not in state:
        visit(m)
for c in cycles:
    print("include cycle: " + " -> ".join(c), file=sys.stderr)
sys.exit(1 if cycles else 0)
