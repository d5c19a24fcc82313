"""`make lint`: the clang-format check fails on a badly formatted file and
passes on a well formatted one; cppcheck and shellcheck find nothing in the
tree (`make lint`: clang-format and the static checks, run by `make test`)."""
import os
import shutil
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

needs_tools = pytest.mark.skipif(not shutil.which("clang-format"), reason="clang-format not installed")


def make(*args):
    return subprocess.run(["make", "-s", "--no-print-directory", "-C", ROOT, *args],
                          capture_output=True, text=True, timeout=120)


@needs_tools
def test_badly_formatted_file_fails(tmp_path):
    bad = tmp_path / "bad.c"
    bad.write_text("int   main( void ){return 0;}\n")
    r = make("lint-format", "LINT_C=%s" % bad)
    assert r.returncode != 0
    assert "bad.c" in r.stderr


@needs_tools
def test_well_formatted_file_passes(tmp_path):
    good = tmp_path / "good.c"
    good.write_text("int main(void)\n{\n\treturn 0;\n}\n")
    r = make("lint-format", "LINT_C=%s" % good)
    assert r.returncode == 0, r.stderr


CYCLES = os.path.join(ROOT, "src", "tools", "include_cycles.py")


def include_cycles(src):
    return subprocess.run(["python3", CYCLES, str(src)], capture_output=True, text=True, timeout=60)


def test_src_has_no_include_cycle():
    """Issue 21: no module of src/ (a .c with its .h) includes another that
    includes it back, directly or around a longer loop."""
    r = include_cycles(os.path.join(ROOT, "src"))
    assert r.returncode == 0, r.stderr


def test_include_cycle_is_found(tmp_path):
    """The tool can fail: a.c includes b.h, b.c includes c.h, c.c includes a.h."""
    for mod, other in (("a", "b"), ("b", "c"), ("c", "a")):
        (tmp_path / f"{mod}.h").write_text("")
        (tmp_path / f"{mod}.c").write_text(f'#include "{mod}.h"\n#include "{other}.h"\n')
    r = include_cycles(tmp_path)
    assert r.returncode == 1 and "include cycle: a -> b -> c -> a" in r.stderr, r.stderr
    (tmp_path / "c.c").write_text('#include "c.h"\n')
    assert include_cycles(tmp_path).returncode == 0


def c_sources(*parts):
    top = os.path.join(ROOT, *parts)
    for d, _, files in os.walk(top):
        for f in sorted(files):
            if f.endswith((".c", ".h")):
                path = os.path.join(d, f)
                with open(path, encoding="utf-8") as fh:
                    yield os.path.relpath(path, ROOT), fh.read()


def test_vendor_knowledge_stays_in_backend():
    """Issue 21: only src/backend/ compares backend names (the rest asks
    backend_named() or the struct backend), and the checks read the probe's
    typed result, never its JSON."""
    import re
    names = re.compile(r'\bstr(?:n?case)?n?cmp\s*\([^;]*"(?:level-zero|cuda|ze)"')
    found = [p for p, text in c_sources("src") if not p.startswith("src/backend/") and names.search(text)]
    assert not found, found
    assert not [p for p, text in c_sources("src", "checks") if "json_object_get" in text]


def test_readme_is_a_front_door():
    """Issue 21: README.md under 12 KB (12,000 bytes), the rest in the documents its
    table names, each of which exists."""
    import re
    path = os.path.join(ROOT, "README.md")
    size = os.path.getsize(path)
    assert size < 12000, f"README.md is {size} bytes (12 KB): move detail into the documents it links"
    with open(path, encoding="utf-8") as f:
        docs = re.findall(r"^\| `([^`]+\.md)` \|", f.read(), re.M)
    assert {"checks/SPEC.md", "HACKING.md", "images/FLEET.md", "SECURITY.md"} <= set(docs), docs
    missing = [d for d in docs if not os.path.isfile(os.path.join(ROOT, d))]
    assert not missing, missing


def test_no_citation_of_files_outside_the_repository():
    """Issue 21: comments cite upstream sources or files in this repository.
    DESIGN.md and research notes live outside it."""
    import re
    outside = re.compile(r"\bDESIGN\.md\b|\bresearch/[\w.-]+\.md\b")
    found = []
    for top in ("src", "tests", "checks", "images", "Makefile", "README.md", "HACKING.md", "OPERATORS.md",
                "SECURITY.md"):
        path = os.path.join(ROOT, top)
        walk = [(path, [], [""])] if os.path.isfile(path) else os.walk(path)
        for d, _, files in walk:
            for f in files:
                p = os.path.join(d, f) if f else d
                if "/corpus/" in p or "/vectors/" in p or p == os.path.abspath(__file__):
                    continue
                try:
                    with open(p, encoding="utf-8") as fh:
                        text = fh.read()
                except (UnicodeDecodeError, OSError):
                    continue
                found += [f"{os.path.relpath(p, ROOT)}: {m.group(0)}" for m in outside.finditer(text)]
    assert not found, found


VENDOR_LINT = os.path.join(ROOT, "src", "tools", "vendor_lint.py")


def vendor_lint(src):
    return subprocess.run(["python3", VENDOR_LINT, str(src)], capture_output=True, text=True, timeout=60)


def test_vendor_lint_passes_on_the_tree():
    r = vendor_lint(os.path.join(ROOT, "src"))
    assert r.returncode == 0, r.stdout


@pytest.mark.parametrize("code,what", [
    ("int f(unsigned v) { return v == 0x10de; }\n", "PCI vendor id 0x10de"),
    ("int f(unsigned v) { return v == 0x8086u; }\n", "PCI vendor id 0x8086"),  # with a suffix
    ("int f(int v) { return v == 32902; }\n", "PCI vendor id 32902"),
    ("#include <string.h>\nint f(const char *v) { return strcmp(v, \"nvidia\") == 0; }\n",
     "compares a string with \"nvidia\""),
    ("#include <strings.h>\nint f(const char *v) { return !strcasecmp(v, \"Level-Zero\"); }\n",
     "compares a string with \"Level-Zero\""),
    ("const char *id = \"0x8086\";\n", "PCI vendor id as a string"),
])
def test_vendor_lint_fails_outside_the_vendor_layer(tmp_path, code, what):
    (tmp_path / "checks").mkdir()
    (tmp_path / "checks" / "x.c").write_text(code)
    r = vendor_lint(tmp_path)
    assert r.returncode == 1 and what in r.stdout and "checks/x.c:" in r.stdout, r.stdout
    # the same file inside src/vendor/ is the vendor layer's own business
    (tmp_path / "vendor").mkdir()
    (tmp_path / "checks" / "x.c").rename(tmp_path / "vendor" / "x.c")
    assert vendor_lint(tmp_path).returncode == 0


def test_vendor_lint_ignores_comments_and_help_text(tmp_path):
    (tmp_path / "x.c").write_text('/* 0x8086 is Intel; strcmp(v, "intel") */\n'
                                  'const char *help = "a PCI vendor id such as 0x8086, or strcmp(x, \\"cuda\\")";\n')
    r = vendor_lint(tmp_path)
    assert r.returncode == 0, r.stdout


def test_backend_never_includes_the_context(tmp_path):
    """The probe takes a plan (src/backend/probe_plan.h): a backend file that
    reads the checks' context again fails the lint, by name."""
    (tmp_path / "backend").mkdir()
    (tmp_path / "backend" / "session.c").write_text('#include "session.h"\n#include "../context.h"\n')
    r = vendor_lint(tmp_path)
    assert r.returncode == 1, r.stdout
    assert "backend/session.c:2: src/backend/ includes ../context.h" in r.stdout, r.stdout
    (tmp_path / "backend" / "session.c").write_text('#include "session.h"\n#include "probe_plan.h"\n')
    assert vendor_lint(tmp_path).returncode == 0
    # the checks still read it
    (tmp_path / "checks").mkdir()
    (tmp_path / "checks" / "runtime.c").write_text('#include "../context.h"\n')
    assert vendor_lint(tmp_path).returncode == 0


def test_lib_includes_nothing_above_it(tmp_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "baselines.c").write_text('#include "../backend/backend.h"\n#include "util.h"\n')
    r = vendor_lint(tmp_path)
    assert r.returncode == 1 and "lib/baselines.c:1: src/lib/ includes ../backend/backend.h" in r.stdout, r.stdout
    (tmp_path / "lib" / "baselines.c").write_text('#include "util.h"\n')
    assert vendor_lint(tmp_path).returncode == 0


CONTRACT_LINT = os.path.join(ROOT, "src", "tools", "report_contract_lint.py")
REPORT_SCHEMA = os.path.join(ROOT, "checks", "report.schema.json")


def contract_lint(src, schema=REPORT_SCHEMA):
    return subprocess.run(["python3", CONTRACT_LINT, str(src), str(schema)], capture_output=True, text=True,
                          timeout=60)


def test_report_contract_lint_passes_on_the_tree():
    r = contract_lint(os.path.join(ROOT, "src"))
    assert r.returncode == 0, r.stdout


def one_used_code():
    import json
    return json.load(open(REPORT_SCHEMA))["$defs"]["finding"]["properties"]["code"]["enum"]


@pytest.mark.parametrize("code,what", [
    # a details key no packages.* check describes (a rename in the check)
    ('void f(struct result *r) { json_object_set_new(result_details(r), "relation_list", 0); }\n',
     'details key "relation_list" is not described for any packages.* check'),
    # the same through a variable holding the details object
    ('void f(struct result *r) { json_t *d = result_details(r); json_object_set_new(d, "versions", 0); }\n',
     'details key "versions" is not described'),
    ('void f(struct result *r) { result_finding(r, STATUS_FAIL, "packages.installed.gone", "x"); }\n',
     'finding code "packages.installed.gone" is not in report.schema.json'),
    ('void f(struct result *r, const char *c) { result_finding(r, STATUS_FAIL, c, "%s", "x"); }\n',
     "a finding's code is not a string literal: c"),
])
def test_report_contract_lint_fails(tmp_path, code, what):
    (tmp_path / "checks").mkdir()
    # every code the schema lists is written somewhere, as in the tree
    uses = "".join(f'void u{i}(struct result *r) {{ result_finding(r, STATUS_PASS, "{c}", "x"); }}\n'
                   for i, c in enumerate(one_used_code()))
    (tmp_path / "uses.c").write_text(uses)
    assert contract_lint(tmp_path).returncode == 0
    (tmp_path / "checks" / "packages.c").write_text(code)
    r = contract_lint(tmp_path)
    assert r.returncode == 1 and what in r.stdout and "checks/packages.c:1:" in r.stdout, r.stdout
    # a key the schema describes passes
    (tmp_path / "checks" / "packages.c").write_text(
        'void f(struct result *r) { json_object_set_new(result_details(r), "relations", 0); }\n')
    assert contract_lint(tmp_path).returncode == 0
    # and a code the schema lists that nothing writes fails
    (tmp_path / "uses.c").write_text(uses.replace('"packages.installed.unsatisfied"', '"x"'))
    r = contract_lint(tmp_path)
    assert r.returncode == 1 and 'finding code "packages.installed.unsatisfied" is written by no code' in r.stdout


def test_report_contract_lint_reads_the_facts_keys(tmp_path):
    (tmp_path / "facts").mkdir()
    uses = "".join(f'void u{i}(struct result *r) {{ result_finding(r, STATUS_PASS, "{c}", "x"); }}\n'
                   for i, c in enumerate(one_used_code()))
    (tmp_path / "uses.c").write_text(uses)
    facts = tmp_path / "facts" / "packages.c"
    facts.write_text('#define K_RELATIONS "relations"\n#define K_PACKAGE "package"\n')
    assert contract_lint(tmp_path).returncode == 0
    facts.write_text('#define K_RELATIONS "relations"\n#define K_PACKAGE "package_name"\n')
    r = contract_lint(tmp_path)
    assert r.returncode == 1 and 'facts/packages.c:2: details key "package_name"' in r.stdout, r.stdout


@pytest.mark.parametrize("path", ["operator/diff.c", "report/nfd.c", "serve/gpu_metrics.c"])
def test_report_contract_lint_fails_on_a_reader_reading_json_by_key(tmp_path, path):
    """A report's readers read it through report_decode.c and src/facts/ only."""
    uses = "".join(f'void u{i}(struct result *r) {{ result_finding(r, STATUS_PASS, "{c}", "x"); }}\n'
                   for i, c in enumerate(one_used_code()))
    (tmp_path / "uses.c").write_text(uses)
    for folder in ("operator", "report", "serve", "facts"):
        (tmp_path / folder).mkdir()
    # the decoders may
    (tmp_path / "operator" / "report_decode.c").write_text('const char *f(json_t *c) { return json_object_get(c, "id"); }\n')
    (tmp_path / "facts" / "runtime.c").write_text('json_t *g(json_t *d) { return json_object_get(d, "probes"); }\n')
    (tmp_path / "report" / "json.c").write_text('json_t *h(json_t *d) { return json_object_get(d, "x"); }\n')
    reader = tmp_path / path
    reader.write_text("static int ok(void) { return 0; }\n")
    assert contract_lint(tmp_path).returncode == 0, contract_lint(tmp_path).stdout
    reader.write_text('static const char *v(json_t *d)\n{\n\treturn json_string_value(json_object_get(d, "driver_version"));\n}\n')
    r = contract_lint(tmp_path)
    assert r.returncode == 1 and f"{path}:3: reads JSON by key (json_object_get)" in r.stdout, r.stdout
