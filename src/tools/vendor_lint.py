#!/usr/bin/env python3
"""Fails when code outside src/vendor/ knows a GPU vendor: a PCI vendor id
(0x8086, 0x10de, 0x1002, or their decimal 32902, 4318, 4098) in code, or a
comparison of a string with a vendor or backend name ("intel", "nvidia",
"amd", "level-zero", "cuda"). What is true of a vendor lives in its entry
(src/vendor/vendor.h); code asks the entry. Comments and the text of string
literals are not code: a help text may cite "such as 0x8086". Also the
bottom layer: src/lib/ includes no header from above it (backend/, checks/,
vendor/...): lib/baselines.c took the backends' table once. And the probe
takes a plan: src/backend/ never includes context.h (the runtime group's
prepare resolves a struct probe_plan from it, src/backend/probe_plan.h).
Prints each offence as FILE:LINE: what (`make lint-static`). Usage:
vendor_lint.py [SRC]"""
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else "src"
PCI_ID = re.compile(r"\b(0x0*(?:8086|10de|1002)|32902|4318|4098)[uUlL]*\b", re.I)
NAMES = r"intel|nvidia|amd|level-zero|level_zero|cuda"
# strcmp(x, "nvidia"), strcasecmp("Intel", y), strncmp(..., "cuda", 4)
COMPARE = re.compile(r"\bstr(n)?(case)?cmp\s*\(([^;]*?)\"(%s)\"" % NAMES, re.I)
# an id written as a whole string literal: "0x8086", "10de"
ID_STRING = re.compile(r"\"(0x)?0*(8086|10de|1002)\"", re.I)


def code_only(text):
    """text with comments blanked and string literals emptied (lines kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (j - i - 1) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def offences(path, text):
    code = code_only(text)
    found = []
    for m in PCI_ID.finditer(code):
        found.append((code.count("\n", 0, m.start()) + 1, "PCI vendor id %s" % m.group(1)))
    for m in COMPARE.finditer(text):
        # the comparison must be code, not inside a comment or a string
        if code[m.start():m.start() + 3] == "str":
            found.append((text.count("\n", 0, m.start()) + 1, "compares a string with \"%s\"" % m.group(4)))
    for m in ID_STRING.finditer(text):
        if text[m.start()] == '"' and code[m.start()] == '"':
            found.append((text.count("\n", 0, m.start()) + 1, "PCI vendor id as a string %s" % m.group(0)))
    return found


INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_offences(rel_dir, text):
    """src/lib/ is the bottom layer: its includes stay inside it. src/backend/
    reads the probe's plan, never the checks' context."""
    found = []
    for m in INCLUDE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        if rel_dir == "lib" and "/" in m.group(1):
            found.append((line, "src/lib/ includes %s from a layer above it" % m.group(1)))
        elif rel_dir == "backend" and os.path.basename(m.group(1)) == "context.h":
            found.append((line, "src/backend/ includes %s: it takes a struct probe_plan "
                                "(src/backend/probe_plan.h), not the checks' context" % m.group(1)))
    return found


bad = 0
for d, _, files in sorted(os.walk(root)):
    for f in sorted(files):
        if f.endswith((".c", ".h")):
            path = os.path.join(d, f)
            with open(path, encoding="utf-8", errors="replace") as fh:
                for line, what in layer_offences(os.path.relpath(d, root), fh.read()):
                    print("%s:%d: %s" % (path, line, what))
                    bad += 1
for d, _, files in sorted(os.walk(root)):
    rel = os.path.relpath(d, root)
    if rel == "vendor" or rel.startswith("vendor" + os.sep):
        continue
    for f in sorted(files):
        if not f.endswith((".c", ".h")):
            continue
        path = os.path.join(d, f)
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        for line, what in offences(path, text):
            print("%s:%d: %s outside src/vendor/: ask the vendor's entry (src/vendor/vendor.h)" % (path, line, what))
            bad += 1
sys.exit(1 if bad else 0)
