"""Every check id, `gpugate check` option and spec key the documentation
and examples name is one the binary knows: README.md, the man page, the
workflows (.github/, workflows/), the gate action, images/ and
checks/example.yaml. The names are extracted from the text and judged by
the built binary (`gpugate list`, `gpugate list --spec-keys`, `gpugate
--help`; an --only/--skip value is run: an unknown id exits 3)."""
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from conftest import GPUGATE, run_gpugate

REPO = Path(__file__).resolve().parents[2]
DOCS = sorted({REPO / "README.md", REPO / "src/man/gpugate.1.in", REPO / "checks/example.yaml",
               *[p for p in (REPO / ".github").rglob("*.yml")],
               *[p for p in (REPO / "workflows").iterdir() if p.is_file()],
               *[p for p in (REPO / "images").rglob("*") if p.is_file()]})
SPECS = [p for p in DOCS if p.suffix == ".yaml" and (p.name == "example.yaml" or p.parent.name == "images")]


def binary(*args):
    r = subprocess.run([GPUGATE, *args], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    return r.stdout


def known_ids():
    return {m.group(1) for m in re.finditer(r"^  ([a-z_]+\.[a-z_]+)\s", binary("list"), re.M)}


def known_keys():
    return {line.split("\t")[0] for line in binary("list", "--spec-keys").splitlines() if line}


def known_options():
    return set(re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", binary("--help"))) | {"--help", "--version"}


def text_of(path):
    # roff escapes: \- is a minus, \& a zero-width break
    return path.read_text(errors="replace").replace("\\-", "-").replace("\\&", "")


def dotted_names(text, groups):
    """group.name tokens (not file names such as hf.c or devices.yaml)."""
    pat = re.compile(r"(?<![\w./$-])((?:%s)\.[a-z_]+)(?![\w(-])(?!\.[a-z])" % "|".join(sorted(groups)))
    return {m.group(1) for m in pat.finditer(text) if m.group(1).rsplit(".", 1)[1] not in FILE_SUFFIXES}


FILE_SUFFIXES = {"c", "h", "py", "yaml", "yml", "md", "json", "so", "sh", "conf", "txt", "tar", "gz"}


def gpugate_commands(text):
    """The `gpugate check ...` (or bare `gpugate --option`) command lines, up
    to a shell separator or a comment, continuations joined."""
    text = text.replace("\\\n", " ")
    out = []
    for m in re.finditer(r"(?<![\w/-])gpugate(?: check)?((?: +--?[a-z][\w=-]*(?: +[^\s|;&#-][^\s|;&#]*)?)+)", text):
        out.append(m.group(1))
    return out


def only_skip_values(text):
    return {v for m in re.finditer(r"--(?:only|skip)[ =]+([a-z_.,]+)", text) for v in m.group(1).split(",") if v}


def test_extractors_find_names():
    """The extractors must see a wrong name, or the tests below prove nothing."""
    assert dotted_names("use --skip hf.mount) and hf.c and devices.yaml", {"hf", "devices"}) == {"hf.mount"}
    assert only_skip_values("args: --skip hf.mount, --only runtime,hf.integrity") == \
        {"hf.mount", "runtime", "hf.integrity"}
    assert gpugate_commands("$ gpugate check --profile ci --fromat json | head") == [" --profile ci --fromat json"]


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_dotted_names_are_check_ids_or_spec_keys(path):
    ids, keys = known_ids(), known_keys()
    groups = {i.split(".")[0] for i in ids}
    bad = []
    for name in dotted_names(text_of(path), groups):
        if name in ids or name in keys or any(k.startswith((name + ".", name + "[")) for k in keys):
            continue
        bad.append(name)
    assert not bad, f"{path.relative_to(REPO)} names no check id or spec key: {sorted(bad)}"


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_only_skip_values_run(path, tmp_path):
    for value in sorted(only_skip_values(text_of(path))):
        r = run_gpugate("check", "--root", str(tmp_path), "--only", value, "--deadline", "10", "--format", "json")
        assert r.rc in (0, 1), f"{path.relative_to(REPO)}: --only {value} exits {r.rc}: {r.err}"


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_check_options_exist(path):
    known = known_options()
    bad = set()
    for command in gpugate_commands(text_of(path)):
        for opt in re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", command):
            if opt not in known:
                bad.add(opt)
    assert not bad, f"{path.relative_to(REPO)}: gpugate check has no option {sorted(bad)} (gpugate --help)"


def spec_paths(node, prefix=""):
    if isinstance(node, dict):
        for k, v in node.items():
            path = f"{prefix}.{k}" if prefix else str(k)
            yield path
            yield from spec_paths(v, path)
    elif isinstance(node, list):
        for item in node:
            yield from spec_paths(item, prefix + "[]")


@pytest.mark.parametrize("path", SPECS, ids=lambda p: str(p.relative_to(REPO)))
def test_spec_keys_exist(path):
    keys = known_keys()
    doc = yaml.safe_load(path.read_text())
    if not isinstance(doc, dict) or "kind" in doc or "apiVersion" in doc:
        pytest.skip(f"{path.name} is not a gpugate spec")
    bad = [p for p in spec_paths(doc) if p not in keys and not p.startswith("packages[]")]
    assert not bad, f"{path.relative_to(REPO)}: no such spec keys {bad}"
    r = run_gpugate("check", "--spec", str(path), "--root", "/nonexistent-root", "--only", "packages")
    assert "unknown key" not in r.err, r


def test_unknown_names_get_did_you_mean(tmp_path):
    r = run_gpugate("check", "--skip", "hf.mount")
    assert r.rc == 3 and "did you mean 'hf.mounted'?" in r.err, r
    r = run_gpugate("check", "--only", "devices.bypath")
    assert r.rc == 3 and "did you mean 'devices.by_path'?" in r.err, r
    spec = tmp_path / "spec.yaml"
    spec.write_text("hf:\n  requre_mount: true\n")
    r = run_gpugate("check", "--spec", str(spec))
    assert r.rc == 3 and "unknown key 'hf.requre_mount' (did you mean 'hf.require_mount'?)" in r.err, r
    spec.write_text("runtme:\n  smoke: true\n")
    r = run_gpugate("check", "--spec", str(spec))
    assert r.rc == 3 and "did you mean 'runtime'?" in r.err, r
    spec.write_text("zzzzzzzz: 1\n")
    r = run_gpugate("check", "--spec", str(spec))
    assert r.rc == 3 and "did you mean" not in r.err and "(sections: " in r.err, r
