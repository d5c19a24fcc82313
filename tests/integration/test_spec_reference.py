"""checks/SPEC.md documents every spec key: its key table is what
src/tools/spec_keys_md.sh makes from `gpugate list --spec-keys` (the keys,
types and help texts the check groups declare), and this test fails when a
key was added, removed or changed without `make spec-doc`."""
import os
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
