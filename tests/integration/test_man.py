"""gpugate(1): built from src/man/gpugate.1.in with its SPEC section
generated from `gpugate list --spec-keys` (src/man/build.sh), clean under
mandoc's and groff's linters, and documenting every spec key."""
import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from conftest import GPUGATE

REPO = Path(__file__).resolve().parents[2]
MAN = Path(GPUGATE).parent / "gpugate.1"  # `make` builds it beside gpugate
BUILD_SH = REPO / "src" / "man" / "build.sh"
TEMPLATE = REPO / "src" / "man" / "gpugate.1.in"


def spec_keys():
    r = subprocess.run([GPUGATE, "list", "--spec-keys"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    rows = [line.split("\t") for line in r.stdout.splitlines()]
    assert rows and all(len(row) == 3 and all(row) for row in rows), r.stdout
    return rows


def roff(text):
    return text.replace("\\", "\\e").replace("-", "\\-")


def undocumented(page, keys):
    """The keys that have no tagged paragraph `.BR "KEY" " (TYPE)"` in page."""
    return [key for key, kind, _ in keys if f'.BR "{roff(key)}" " ({roff(kind)})"\n' not in page]


@pytest.fixture(scope="module")
def page():
    assert MAN.is_file(), f"{MAN} missing: `make` builds it"
    return MAN.read_text()


def test_every_spec_key_is_in_the_man_page(page):
    keys = spec_keys()
    assert len(keys) >= 40, keys
    assert undocumented(page, keys) == []


def test_a_missing_key_is_noticed(tmp_path):
    """The check above fails on a page built from fewer keys."""
    keys = spec_keys()
    short = tmp_path / "keys"
    short.write_text("".join("\t".join(k) + "\n" for k in keys if k[0] != "hf.min_free"))
    out = subprocess.run(["sh", str(BUILD_SH), str(TEMPLATE), "9.9.9", "2026-01-01", str(short)],
                         capture_output=True, text=True, check=True).stdout
    assert [k for k, _, _ in keys if k == "hf.min_free"] == undocumented(out, keys)


def test_the_generator_refuses_a_bad_key_list(tmp_path):
    for text in ("", "key without tabs\n"):
        keys = tmp_path / "keys"
        keys.write_text(text)
        r = subprocess.run(["sh", str(BUILD_SH), str(TEMPLATE), "1", "d", str(keys)], capture_output=True, text=True)
        assert r.returncode != 0, repr(text)


def yaml_paths(node, prefix=""):
    """Every key path of a spec as the loader names them: a.b, list[], list[].k."""
    if isinstance(node, dict):
        for k, v in node.items():
            path = f"{prefix}.{k}" if prefix else k
            yield path
            yield from yaml_paths(v, path)
    elif isinstance(node, list):
        for item in node:
            yield f"{prefix}[]"
            yield from yaml_paths(item, f"{prefix}[]")


def test_spec_keys_cover_every_key_the_shipped_specs_use():
    """--spec-keys lists what the loader accepts: every key the profiles and
    example specs use (the loader accepts them: test_profiles.py) is listed."""
    listed = {k for k, _, _ in spec_keys()}
    for spec in sorted(REPO.glob("checks/*.yaml")) + sorted(REPO.glob("checks/vendor/*.yaml")) + \
            sorted(REPO.glob("images/*.yaml")):
        used = set(yaml_paths(yaml.safe_load(spec.read_text()) or {}))
        assert used - listed == set(), f"{spec.relative_to(REPO)} uses keys --spec-keys does not list"


def test_mandoc_lint_is_clean(page):
    r = subprocess.run(["mandoc", "-T", "lint", "-W", "style", str(MAN)], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout == "" and r.stderr == "", r.stdout + r.stderr


def test_man_warnings_are_clean(page):
    """groff through man-db, every warning on, as `man` renders it."""
    env = dict(os.environ, MANWIDTH="80")
    r = subprocess.run(["man", "--warnings=all", "-l", str(MAN)], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stderr == "", r.stderr
    text = re.sub(r".\x08", "", r.stdout)  # overstrike bold and underline
    for heading in ("NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "SPEC", "ENVIRONMENT", "EXIT STATUS",
                    "FILES", "EXAMPLES"):
        assert re.search(rf"^{heading}$", text, re.M), f"no {heading} section"
    assert "runtime.min_free_memory (size)" in text
    assert "--profile NAME" in text  # options render with ASCII hyphens


def test_page_states_the_build_version(page):
    version = subprocess.run([GPUGATE, "--version"], capture_output=True, text=True, check=True).stdout.split()[-1]
    assert re.search(rf'^\.TH GPUGATE 1 "\d{{4}}-\d\d-\d\d" "gpugate {re.escape(version)}"', page, re.M), page[:600]
