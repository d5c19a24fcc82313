#!/usr/bin/env python3
"""Fails when the C code and checks/report.schema.json disagree about the
JSON report: a check writes a `details` key that the schema does not list
for any check of its group, or records a finding whose code is not a string
literal listed in the schema's finding codes, or the schema lists a code that
no code writes. A renamed key or code then fails `make lint-static` instead
of silently breaking `gpugate diff`, `spec freeze` or a consumer's parser.
Prints each offence as FILE:LINE: what. Usage:
report_contract_lint.py [SRC] [SCHEMA]

A facts module (src/facts/GROUP.c, the one encoder and decoder of a
group's details) names each key once, `#define K_NAME "key"`: each must be
described somewhere in that group's details schemas.

The readers of a report (src/operator/, src/report/nfd.c, src/serve/) read
it only through its decoders (src/operator/report_decode.c and src/facts/):
a json_object_get anywhere else in them fails, so no reader spells a
details key of its own."""
import json
import os
import re
import sys

src = sys.argv[1] if len(sys.argv) > 1 else "src"
schema_path = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(os.path.abspath(src)),
                                                                  "checks", "report.schema.json")
with open(schema_path, encoding="utf-8") as f:
    schema = json.load(f)
details = schema["$defs"]["details"]["properties"]  # check id -> its details schema
codes = set(schema["$defs"]["finding"]["properties"]["code"]["enum"])

# json_object_set_new(result_details(r), "key", ...) or json_object_set(d, "key", ...)
# where d = result_details(...) in the same file
SET = re.compile(r"\bjson_object_set(?:_new)?(?:_nocheck)?\s*\(\s*(result_details\s*\([^()]*\)|\w+)\s*,\s*\"([^\"]*)\"")
DETAILS_VAR = re.compile(r"\b(\w+)\s*=\s*result_details\s*\(")
FINDING = re.compile(r"(?<![\w.])result_finding\s*\(")
# a facts encoder/decoder (src/facts/GROUP.c) names its details keys once: #define K_NAME "key"
FACTS_KEY = re.compile(r"^#define\s+K_\w+\s+\"([^\"]*)\"", re.M)
# reading a JSON object by key
READ_BY_KEY = re.compile(r"\bjson_object_getn?\s*\(")
# the readers of a report, and the one decoder among them
READERS = ("operator/", "report/nfd.c", "serve/")
DECODERS = ("operator/report_decode.c",)


def property_names(schema):
    """Every property name a schema describes, at any depth."""
    names = set()
    if isinstance(schema, dict):
        names |= set(schema.get("properties", {}))
        for v in schema.values():
            names |= property_names(v)
    elif isinstance(schema, list):
        for v in schema:
            names |= property_names(v)
    return names


def line_of(text, pos):
    return text.count("\n", 0, pos) + 1


def third_argument(text, start):
    """The text of the third argument of the call whose '(' ends at start."""
    depth, args, i, quote = 0, [""], start, None
    while i < len(text):
        c = text[i]
        if quote:
            args[-1] += c
            if c == "\\":
                args[-1] += text[i + 1]
                i += 1
            elif c == quote:
                quote = None
        elif c in "\"'":
            quote = c
            args[-1] += c
        elif c in "([{":
            depth += 1
            args[-1] += c
        elif c in ")]}":
            if depth == 0:
                break
            depth -= 1
            args[-1] += c
        elif c == "," and depth == 0:
            args.append("")
        else:
            args[-1] += c
        i += 1
    return args[2].strip() if len(args) > 2 else ""


problems, used = [], set()
for dirpath, _, files in os.walk(src):
    for name in sorted(files):
        if not name.endswith(".c"):
            continue
        path = os.path.join(dirpath, name)
        rel = os.path.relpath(path, src)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for m in FINDING.finditer(text):
            if re.search(r"\bvoid\s+$", text[max(0, m.start() - 16):m.start()]):
                continue  # its definition (src/result.c)
            code = third_argument(text, m.end())
            lit = re.fullmatch(r"\"([^\"]*)\"", code)
            if not lit:
                problems.append(f"{rel}:{line_of(text, m.start())}: a finding's code is not a string literal: {code}")
            elif lit.group(1) not in codes:
                problems.append(f"{rel}:{line_of(text, m.start())}: finding code \"{lit.group(1)}\" is not in "
                                f"{os.path.basename(schema_path)} ($defs.finding.code)")
            else:
                used.add(lit.group(1))
        unix_rel = rel.replace(os.sep, "/")
        if unix_rel.startswith(READERS) and unix_rel not in DECODERS:
            for m in READ_BY_KEY.finditer(text):
                problems.append(f"{rel}:{line_of(text, m.start())}: reads JSON by key ({m.group(0).rstrip('( ')}): "
                                "a report's readers read it through src/operator/report_decode.c and "
                                "src/facts/ (add what is needed to a decoder there)")
        facts = os.path.basename(dirpath) == "facts"
        if not facts and os.path.basename(dirpath) != "checks":
            continue
        group = re.split(r"[_.]", name)[0]  # checks/devices_by_path.c, facts/devices.c: devices
        allowed = set()
        for cid, d in details.items():
            if cid.split(".")[0] == group:
                allowed |= set(d.get("properties", {}))
        if facts:
            described = property_names([d for cid, d in details.items() if cid.split(".")[0] == group])
            for m in FACTS_KEY.finditer(text):
                if m.group(1) not in described:
                    problems.append(f"{rel}:{line_of(text, m.start())}: details key \"{m.group(1)}\" is described "
                                    f"nowhere in the {group}.* checks' details in {os.path.basename(schema_path)}")
        holders = set(DETAILS_VAR.findall(text))
        for m in SET.finditer(text):
            target, key = m.group(1), m.group(2)
            if not (target.startswith("result_details") or target in holders):
                continue  # a nested object: the schema validation in the tests covers it
            if key not in allowed:
                problems.append(f"{rel}:{line_of(text, m.start())}: details key \"{key}\" is not described for "
                                f"any {group}.* check in {os.path.basename(schema_path)}")
for code in sorted(codes - used):
    problems.append(f"{os.path.basename(schema_path)}: finding code \"{code}\" is written by no code under {src}")
for p in problems:
    print(p)
sys.exit(1 if problems else 0)
