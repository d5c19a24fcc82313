"""Every check id, `gpugate check` option and spec key the documentation
and examples name is one the binary knows: README.md, OPERATORS.md, the man
page, the workflows (.github/, workflows/), the gate action, images/ and
checks/example.yaml. The names are extracted from the text and judged by
the built binary (`gpugate list`, `gpugate list --spec-keys`, `gpugate
--help`; an --only/--skip value is run: an unknown id exits 3). The
operator guides' examples name only what the repository has: every path
of the repository they mention exists, every package relation they show
is one of the vendor pins' names at a version the pin accepts, and a stack
manifest they quote is the shipped file's text."""
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from conftest import GPUGATE, run_gpugate

REPO = Path(__file__).resolve().parents[2]
DOCS = sorted({REPO / "README.md", REPO / "OPERATORS.md", REPO / "src/man/gpugate.1.in", REPO / "checks/example.yaml",
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


# -- the operator guides' examples ------------------------------------------

OPERATOR_DOCS = [REPO / "OPERATORS.md", REPO / "images" / "FLEET.md", REPO / "images" / "README.md"]
REPO_PATH = re.compile(r"(?<![\w./-])((?:images|checks|tests|src|workflows|debian|\.github|\.ci)/[\w.*+/-]*[\w*/])")
RELATION = re.compile(r"(?<![\w.+-])([a-z0-9][a-z0-9.+-]+) \((<<|<=|=|>=|>>) ([^()\s]+)\)")


def prose_and_blocks(text):
    """(prose with the fenced blocks cut out, [(info string, block text)])."""
    blocks = [(m.group(1), m.group(2)) for m in re.finditer(r"^```(\w*)\n(.*?)^```", text, re.S | re.M)]
    return re.sub(r"^```\w*\n.*?^```", "", text, flags=re.S | re.M), blocks


def pins():
    """{package name: [(op, version)]} over every vendor's built-in pins."""
    out = {}
    for path in sorted((REPO / "checks" / "vendor").glob("*.yaml")):
        for line in yaml.safe_load(path.read_text()).get("packages", []):
            for alt in line.split("|"):
                m = re.fullmatch(r"\s*([a-z0-9][a-z0-9.+-]+)(?::\w+)?(?: \((\S+) ([^)]+)\))?\s*", alt)
                assert m, f"{path.name}: {alt!r}"
                out.setdefault(m.group(1), []).append((m.group(2), m.group(3)))
    return out


def dpkg_holds(version, op, pinned):
    """dpkg's own comparison (the oracle, not gpugate's)."""
    word = {"<<": "lt", "<=": "le", "=": "eq", ">=": "ge", ">>": "gt"}[op]
    return subprocess.run(["dpkg", "--compare-versions", version, word, pinned], timeout=10).returncode == 0


def test_operator_extractors_see_a_wrong_name():
    prose, blocks = prose_and_blocks("see `images/stacks/gone.yaml`\n```yaml\n# images/x.yaml\n  - a (= 1)\n```\n")
    assert REPO_PATH.findall(prose) == ["images/stacks/gone.yaml"] and blocks[0][0] == "yaml"
    assert REPO_PATH.findall(blocks[0][1]) == ["images/x.yaml"]
    assert RELATION.findall("  - intel-igc-core-2 (= 1.0.17193.4-1): x") == [("intel-igc-core-2", "=", "1.0.17193.4-1")]
    assert "intel-igc-core-2" in pins() and not dpkg_holds("1.0.17193.4-1", ">=", "2.0")


@pytest.mark.parametrize("path", OPERATOR_DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_operator_doc_paths_exist(path):
    """A path of the repository in the prose, or in a comment of an example
    (a file a block quotes), exists; a glob matches at least one file."""
    prose, blocks = prose_and_blocks(path.read_text())
    named = set(REPO_PATH.findall(prose))
    for _, block in blocks:
        named |= {p for line in block.splitlines() if line.lstrip().startswith("#") for p in REPO_PATH.findall(line)}
    assert named, f"{path.name}: the extractor found no path"
    named = {p for p in named if not re.search(r"(?<![a-z])[A-Z]{3,}(?![a-z])", p)}  # images/FILE.yaml: a placeholder
    missing = sorted(p for p in named if not any(REPO.glob(p.rstrip("/"))))
    assert not missing, f"{path.relative_to(REPO)} names files the repository does not have: {missing}"


@pytest.mark.parametrize("path", OPERATOR_DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_operator_doc_packages_are_the_pins_names_at_accepted_versions(path):
    """Each package relation an example shows (a frozen spec, a failed pin)
    names a package the vendor pins accept, at a version that pin accepts
    (dpkg --compare-versions judges): no renamed or invented package."""
    known = pins()
    bad = []
    for name, _, version in RELATION.findall(path.read_text()):
        if name not in known:
            bad.append(f"{name}: not a name the pins in checks/vendor/ accept")
        elif not any(op is None or dpkg_holds(version, op, pinned) for op, pinned in known[name]):
            bad.append(f"{name} {version}: the pins want {known[name]}")
    # gpugate diff's package lines: NAME:ARCH OLD -> NEW
    for name, old, new in re.findall(r"^\s+([a-z0-9][a-z0-9.+-]+):\w+\s+(\S+) -> (\S+)", path.read_text(), re.M):
        if name not in known:
            bad.append(f"{name} (a diff line): not a name the pins in checks/vendor/ accept")
    assert not bad, f"{path.relative_to(REPO)}: {bad}"


def test_operator_doc_manifest_excerpt_is_the_shipped_file():
    """The stack manifest OPERATORS.md shows is a shipped one's: its stack,
    source and architecture, and each package entry as the file has it."""
    shipped = {yaml.safe_load(p.read_text())["stack"]: yaml.safe_load(p.read_text())
               for p in (REPO / "images" / "stacks").glob("*.yaml")}
    _, blocks = prose_and_blocks((REPO / "OPERATORS.md").read_text())
    quoted = [yaml.safe_load(b) for info, b in blocks if info == "yaml" and re.search(r"^stack:", b, re.M)]
    assert quoted, "OPERATORS.md quotes no stack manifest"
    for doc in quoted:
        assert doc["stack"] in shipped, f"{doc['stack']} is not in images/stacks/ ({sorted(shipped)})"
        real = shipped[doc["stack"]]
        for key in ("source", "architecture", "system_packages"):
            assert doc.get(key) in (None, real.get(key)), (doc["stack"], key)
        for entry in doc["packages"]:
            assert entry in real["packages"], f"{doc['stack']}: {entry} is not the shipped entry"
