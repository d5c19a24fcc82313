"""checks/SPEC.md documents every spec key: its key table is what
src/tools/spec_keys_md.sh makes from `gpugate list --spec-keys` (the keys,
types and help texts the check groups declare), and this test fails when a
key was added, removed or changed without `make spec-doc`."""
import os
import re
import subprocess

from conftest import GPUGATE

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SPEC_MD = os.path.join(REPO, "checks", "SPEC.md")
SCRIPT = os.path.join(REPO, "src", "tools", "spec_keys_md.sh")


def spec_keys():
    r = subprocess.run([GPUGATE, "list", "--spec-keys"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return r.stdout


def regenerate(keys_text, spec_md):
    r = subprocess.run(["sh", SCRIPT, spec_md], input=keys_text, capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return r.stdout


def table_keys(text):
    block = text.split("<!-- BEGIN spec-keys", 1)[1].split("<!-- END spec-keys", 1)[0]
    return [line.split("`")[1] for line in block.splitlines() if line.startswith("| `")]


def test_every_spec_key_is_in_spec_md():
    keys = spec_keys()
    names = [line.split("\t")[0] for line in keys.splitlines()]
    assert len(names) > 30 and "runtime.backend" in names and "hf.models[].repo" in names, names
    with open(SPEC_MD, encoding="utf-8") as f:
        current = f.read()
    missing = [n for n in names if n not in table_keys(current)]
    assert not missing, f"checks/SPEC.md does not document {missing}: run make spec-doc"
    assert regenerate(keys, SPEC_MD) == current, "checks/SPEC.md's key table is stale: run make spec-doc"


def test_a_missing_or_changed_key_is_found(tmp_path):
    """The check can fail: a key the code gained, or a help text it changed."""
    keys = spec_keys()
    with open(SPEC_MD, encoding="utf-8") as f:
        current = f.read()
    gained = keys + "runtime.new_key\tbool\tsomething new\n"
    assert "runtime.new_key" in table_keys(regenerate(gained, SPEC_MD))
    assert regenerate(gained, SPEC_MD) != current
    changed = keys.replace("the fewest usable GPUs", "the least usable GPUs")
    assert changed != keys and regenerate(changed, SPEC_MD) != current
    no_marker = tmp_path / "SPEC.md"
    no_marker.write_text("# Spec reference\n")
    r = subprocess.run(["sh", SCRIPT, str(no_marker)], input=keys, capture_output=True, text=True, timeout=30)
    assert r.returncode != 0 and "marker" in r.stderr


# --- defaults stated in SPEC.md's hand-written parts ---------------------------

def generated_defaults(keys_text):
    """key -> its default, from `gpugate list --spec-keys`' help texts, which
    say "(default X)" or "(default X; healthcheck: Y)" (src/list.c writes the
    key table's .def there)."""
    out = {}
    for line in keys_text.splitlines():
        name, _type, help_text = line.split("\t", 2)
        m = re.search(r"\(default ([^;()]+)(?:; healthcheck: [^()]+)?\)", help_text)
        if m:
            out[name] = m.group(1)
    return out


def stated_defaults(spec_md):
    """(key, default, line number) of every default the prose states outside the
    generated key table: in the YAML examples' comments ("default X",
    "X (default)", "X (default; ...)"), and in the hand-written tables whose
    columns are key, default, meaning. "default:" followed by words is prose
    about where a value comes from, not a value, and is left out."""
    head = spec_md.split("<!-- BEGIN spec-keys", 1)[0]
    found, path, in_yaml, table = [], [], False, False
    for no, line in enumerate(head.splitlines(), 1):
        if line.startswith("```"):
            in_yaml, path = line.strip() == "```yaml", []
            continue
        if in_yaml:
            m = re.match(r"^( *)(- )?([A-Za-z_]+):\s*(.*?)\s*(?:#\s*(.*))?$", line)
            if not m:
                continue
            # path: (column, name) of the keys above; a list item is a "[]" entry
            col = len(m.group(1)) + (2 if m.group(2) else 0)
            while path and path[-1][0] >= (col - 1 if m.group(2) else col):
                path.pop()
            if m.group(2):
                path.append((col - 1, "[]"))
            path.append((col, m.group(3)))
            key = ".".join(n for _, n in path).replace(".[]", "[]")
            comment = m.group(5) or ""
            d = (re.search(r"\bdefault ([^\s,;:()]+)(?=$|[:),]| \()", comment)
                 or re.search(r"(\S+) \(default[;)]", comment))
            if d:
                found.append((key, d.group(1), no))
            continue
        if line.startswith("| key | default |"):
            table = True
        elif not line.startswith("|"):
            table = False
        elif table:
            cells = [c.strip() for c in line.strip("|").split("|")]
            if cells[0].startswith("`"):
                found.append((cells[0].strip("`"), cells[1].strip("`"), no))
    return found


def stale_defaults(spec_md, keys_text):
    gen = generated_defaults(keys_text)
    bad = []
    for key, value, no in stated_defaults(spec_md):
        want = gen.get(key)
        # "none" in a table: the key has no default, or 0 (nothing required)
        if value == "none" and want in (None, "0"):
            continue
        if value != want:
            bad.append(f"checks/SPEC.md:{no}: {key}: the prose says default {value}, "
                       f"`gpugate list --spec-keys` says {want}")
    return bad


def test_defaults_in_spec_md_prose_match_the_key_table():
    keys = spec_keys()
    with open(SPEC_MD, encoding="utf-8") as f:
        current = f.read()
    stated = {k for k, _, _ in stated_defaults(current)}
    # the examples the prose states defaults in are found (the parser reads them)
    for key in ("reports.nfd_expiry", "hf.min_free", "hf.require_mount", "runtime.tolerance",
                "devices.min_gpus", "devices.by_path", "hf.models[].type"):
        assert key in stated, (key, sorted(stated))
    assert not stale_defaults(current, keys)


def test_a_changed_default_leaves_the_prose_stale():
    """The check can fail: a default the code changed but the prose still states."""
    keys = spec_keys()
    with open(SPEC_MD, encoding="utf-8") as f:
        current = f.read()
    for key, old, new in (("reports.nfd_expiry", "10m", "15m"), ("hf.min_free", "10GiB", "20GiB"),
                          ("runtime.tolerance", "20%", "25%"), ("devices.by_path", "require", "warn")):
        line = [x for x in keys.splitlines() if x.startswith(key + "\t")][0]
        assert "(default %s" % old in line, line
        changed = keys.replace(line, line.replace("(default %s" % old, "(default %s" % new))
        bad = stale_defaults(current, changed)
        assert bad and all(key + ":" in b for b in bad), (key, bad)
