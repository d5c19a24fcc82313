"""gpugate's packages verdicts against dpkg's own test vectors and against dpkg
itself. Each vector runs through the built gpugate (a fixture dpkg database
under --root and a spec of relations) and, in the same test, through the real
dpkg: `dpkg --compare-versions` for versions, and for relations a probe
package whose Pre-Depends is the relation, installed with `dpkg --dry-run -i`
against the same fixture database. Vectors: tests/vectors/ (upstream files
named there). Nothing outside the test's temp folder is read or written."""
import json
import os
import re
import shutil
import subprocess

import pytest

import conftest
from conftest import finding_texts, run_gpugate, spec_file, write
from tally import report_tally

VECTORS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "vectors")
DPKG = shutil.which("dpkg")
DPKG_DEB = shutil.which("dpkg-deb")
# Tallies for the report at the end of the session: vectors run, agreeing, deliberate warnings.
TALLY = {"run": 0, "agree": 0, "warn": 0}


def native_arch():
    p = subprocess.run([DPKG, "--print-architecture"], capture_output=True, text=True, check=True)
    return p.stdout.strip()


def unescape(field):
    return re.sub(r"\\(.)", lambda m: {"t": "\t", "\\": "\\"}[m.group(1)], field)


def tsv(name):
    with open(os.path.join(VECTORS, name), encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line and not line.startswith("#"):
                yield [unescape(x) for x in line.split("\t")]


def tsv_raw(name):
    """Rows of a vectors file, fields left as written (escapes kept)."""
    with open(os.path.join(VECTORS, name), encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line and not line.startswith("#"):
                yield line.split("\t")


def apt_pairs():
    with open(os.path.join(VECTORS, "apt-versions.lst"), encoding="utf-8") as f:
        for line in f:
            fields = line.split("#", 1)[0].split()
            if len(fields) >= 3:
                yield fields[0], fields[1], int(fields[2])


# -- dpkg, the oracle --------------------------------------------------------

def dpkg_level(version):
    """ok, warn or error: what dpkg --compare-versions says of the version."""
    p = subprocess.run([DPKG, "--compare-versions", version, "eq", version], capture_output=True, text=True,
                       errors="replace")
    if p.returncode not in (0, 1) or "error" in p.stderr:
        return "error"
    return "warn" if "warning" in p.stderr else "ok"


def dpkg_sign(a, b):
    def holds(op):
        p = subprocess.run([DPKG, "--compare-versions", a, op, b], capture_output=True)
        assert p.returncode in (0, 1), (a, op, b, p.stderr)
        return p.returncode == 0
    return -1 if holds("lt") else 0 if holds("eq") else 1


# -- fixture databases -------------------------------------------------------

def stanza(fields):
    f = {"Status": "install ok installed", "Priority": "optional", "Maintainer": "Test <test@example.org>",
         "Description": "fixture"}
    f.update(fields)
    order = ["Package", "Status", "Priority", "Architecture", "Multi-Arch", "Maintainer", "Version", "Provides",
             "Depends", "Config-Version", "Triggers-Pending", "Triggers-Awaited", "Description"]
    return "".join(f"{k}: {f[k]}\n" for k in order if k in f) + "\n"


def database(tmp_path, stanzas, archs=("i386",)):
    """A root whose /var/lib/dpkg is a complete dpkg admin dir (dpkg itself reads it with --root)."""
    root = tmp_path / "root"
    admin = root / "var/lib/dpkg"
    for d in ("info", "updates", "triggers"):
        os.makedirs(admin / d, exist_ok=True)
    native = native_arch()
    body = stanza({"Package": "dpkg", "Version": "1.21.22", "Architecture": native, "Multi-Arch": "foreign"})
    body += "".join(stanza(s) for s in stanzas)
    write(str(admin / "status"), body)
    write(str(admin / "available"), "")
    write(str(admin / "arch"), "".join(a + "\n" for a in (native, *archs)))
    return root


def gpugate_relations(tmp_path, root, relations):
    spec = spec_file(tmp_path, "packages:\n" + "".join(f"  - {json.dumps(r)}\n" for r in relations))
    r = run_gpugate("--spec", spec, "--root", str(root), "--only", "packages", "--format", "json")
    assert r.rc in (0, 1), r
    c = r.check("packages.installed")
    return c, {x["relation"]: x["holds"] for x in c["details"]["relations"]}


def dpkg_decides(tmp_path, root, relation):
    """Whether dpkg accepts a probe package that Pre-Depends on the relation."""
    pkg = tmp_path / "probe"
    shutil.rmtree(pkg, ignore_errors=True)
    write(str(pkg / "DEBIAN/control"),
          "Package: gpugate-probe\nVersion: 1\nArchitecture: all\nMaintainer: Test <test@example.org>\n"
          f"Pre-Depends: {relation}\nDescription: probe\n")
    deb = tmp_path / "probe.deb"
    subprocess.run([DPKG_DEB, "--build", str(pkg), str(deb)], check=True, capture_output=True)
    p = subprocess.run([DPKG, f"--root={root}", "--force-not-root", "--log=/dev/null", "--dry-run", "-i", str(deb)],
                       capture_output=True, text=True)
    assert "pre-dependency problem" in p.stderr or p.returncode == 0, p.stderr
    return p.returncode == 0


def dpkg_configure_decides(root, relation):
    """Whether dpkg would configure an unpacked probe that Depends on the
    relation (dependencies_ok in src/main/packages.c); None when dpkg cannot
    decide in a dry run (awaited triggers: it would process them first)."""
    status = root / "var/lib/dpkg/status"
    base = status.read_text()
    probe = {"Package": "gpugate-probe", "Status": "install ok unpacked", "Version": "1", "Architecture": "all",
             "Depends": relation}
    status.write_text(base + stanza(probe))
    try:
        p = subprocess.run([DPKG, f"--root={root}", "--force-not-root", "--log=/dev/null", "--dry-run", "--configure",
                            "gpugate-probe"], capture_output=True, text=True, timeout=30)
    finally:
        status.write_text(base)
    if p.returncode == 0:
        return True
    if "dependency problems prevent configuration" in p.stderr:
        return False
    assert "internal error" in p.stderr, p.stderr  # anything else is a broken fixture
    return None


def dpkg_reads(root):
    """Whether dpkg reads the fixture's database: dpkg-query -W over it
    (lib/dpkg/parse.c refuses a database with an error and exit 2)."""
    p = subprocess.run(["dpkg-query", f"--admindir={root}/var/lib/dpkg", "-W"], capture_output=True, text=True,
                       errors="replace", timeout=30)
    assert p.returncode in (0, 2), p
    assert (p.returncode == 2) == ("error" in p.stderr), p.stderr
    return p.returncode == 0


def gpugate_reads(tmp_path, root):
    """Whether gpugate reads it: its packages check, for the dpkg package
    only (the whole file is read whatever the spec names)."""
    spec = spec_file(tmp_path, "packages:\n  - dpkg\n", name="dpkg-only.yaml")
    r = run_gpugate("--spec", spec, "--root", str(root), "--only", "packages", "--format", "json")
    assert r.rc in (0, 1), r
    c = r.check("packages.installed")
    refused = c["summary"].startswith("cannot read the dpkg database")
    assert refused or c["status"] == "pass", c
    return not refused


# -- versions ----------------------------------------------------------------

def test_tools_are_here():
    assert DPKG and DPKG_DEB, "dpkg is the oracle of these tests (Debian's dpkg package)"


def test_version_syntax_vectors(tmp_path):
    """parse vectors of dpkg's t-version.c and gpugate's own: dpkg's verdict
    (ok, warning, error) through gpugate, the version installed in the
    fixture database. dpkg reads its status file laxly: a version it only
    warns about is read (gpugate warns), one it refuses makes the whole
    database unreadable (lib/dpkg/fields.c f_version), to dpkg-query and to
    gpugate alike: those are tried one database each."""
    vectors = [(v[1], v[2]) for name in ("dpkg-t-version.tsv", "dpkg-extra.tsv") for v in tsv(name) if v[0] == "parse"]
    stanzas, relations, readable = [], [], []
    for version, upstream in vectors:
        # --compare-versions takes "" as "no version" without parsing it:
        # for that one vector the upstream verdict (parseversion's) stands
        oracle = dpkg_level(version) if version else upstream
        assert oracle == upstream, (version, oracle, upstream)
        if oracle == "error":
            root = database(tmp_path / f"e{len(stanzas) + len(relations)}",
                            [{"Package": "bad", "Version": version, "Architecture": "all"}])
            TALLY["run"] += 1
            assert not dpkg_reads(root) and not gpugate_reads(tmp_path, root), version
            TALLY["agree"] += 1
            continue
        readable.append((version, oracle))
    for i, (version, _) in enumerate(readable):
        stanzas.append({"Package": f"p{i}", "Version": version, "Architecture": "all"})
        relations.append(f"p{i} (>= 0~~)")
    root = database(tmp_path, stanzas)
    assert dpkg_reads(root)
    c, holds = gpugate_relations(tmp_path, root, relations)
    findings = finding_texts(c)
    for i, (version, oracle) in enumerate(readable):
        if any(f.startswith(f"p{i} all ") and "dpkg reads its database leniently" in f for f in findings):
            got = "warn"
        else:
            got = "ok"
        TALLY["run"] += 1
        assert got == oracle, (version, got, oracle, findings)
        TALLY["agree"] += 1


def compare_vectors():
    for name in ("dpkg-t-version.tsv", "dpkg-extra.tsv"):
        for v in tsv(name):
            if v[0] == "compare":
                yield v[1], v[2], int(v[3])
            elif v[0] == "relate":
                yield v[1], v[3], None  # the sign is checked below through the relation
    yield from apt_pairs()


def test_version_order_vectors(tmp_path):
    """compare vectors of t-version.c, apt's versions.lst and gpugate's own,
    each ordered by gpugate (three relations against the installed version)
    and by dpkg --compare-versions."""
    pairs = list(compare_vectors())
    stanzas, relations = [], []
    for i, (a, b, _) in enumerate(pairs):
        stanzas.append({"Package": f"c{i}", "Version": a, "Architecture": "all"})
        relations += [f"c{i} (<< {b})", f"c{i} (= {b})", f"c{i} (>> {b})"]
    root = database(tmp_path, stanzas)
    _, holds = gpugate_relations(tmp_path, root, relations)
    for i, (a, b, upstream) in enumerate(pairs):
        lt, eq, gt = (holds[f"c{i} ({op} {b})"] for op in ("<<", "=", ">>"))
        assert lt + eq + gt == 1, (a, b, lt, eq, gt)
        got = -1 if lt else 0 if eq else 1
        oracle = dpkg_sign(a, b)
        if upstream is not None:
            assert oracle == upstream, (a, b, oracle, upstream)
        TALLY["run"] += 1
        assert got == oracle, (a, b, got, oracle)
        TALLY["agree"] += 1


def test_relate_vectors(tmp_path):
    """relate vectors of t-version.c (dpkg_version_relate) as spec relations."""
    vectors = [v for v in tsv("dpkg-t-version.tsv") if v[0] == "relate"]
    stanzas = [{"Package": f"r{i}", "Version": v[1], "Architecture": "all"} for i, v in enumerate(vectors)]
    relations = [f"r{i} ({v[2]} {v[3]})" for i, v in enumerate(vectors)]
    _, holds = gpugate_relations(tmp_path, database(tmp_path, stanzas), relations)
    for i, v in enumerate(vectors):
        TALLY["run"] += 1
        oracle = subprocess.run([DPKG, "--compare-versions", v[1],
                                 {"<<": "lt", "<=": "le", "=": "eq", ">=": "ge", ">>": "gt"}[v[2]], v[3]]).returncode == 0
        assert oracle == (v[4] == "true"), v
        assert holds[relations[i]] == oracle, (v, holds[relations[i]])
        TALLY["agree"] += 1


def test_spec_versions_dpkg_warns_about_are_warnings(tmp_path):
    """A spec version dpkg only warns about is accepted with a warning; one it
    refuses is a spec error (exit 3) naming the problem in dpkg's words."""
    root = database(tmp_path, [{"Package": "libze1", "Version": "1.0", "Architecture": "amd64"}])
    spec = spec_file(tmp_path, "packages:\n  - 'libze1 (>= 0_a)'\n  - 'libze1 (> 0.5)'\n")
    r = run_gpugate("--spec", spec, "--root", str(root), "--only", "packages", "--format", "json")
    c = r.check("packages.installed")
    assert r.rc == 0 and c["status"] == "warn", r
    text = " ".join(finding_texts(c))
    assert "invalid character in version number" in text and "obsolete" in text
    assert dpkg_level("0a") == "ok" and dpkg_level("0_a") == "warn"
    spec = spec_file(tmp_path, "packages:\n  - 'libze1 (>= 1:)'\n", name="bad.yaml")
    r = run_gpugate("--spec", spec, "--root", str(root), "--only", "packages")
    assert r.rc == 3 and "nothing after colon in version number" in r.err, r


# -- the status file: dpkg decides whether it can be read --------------------

def status_unescape(text):
    """The text column's escapes: \\n \\r \\t \\\\, \\z for ^Z (0x1a), \\xHH for a byte."""
    def one(m):
        e = m.group(1)
        return chr(int(e[1:], 16)) if e[0] == "x" else {"n": "\n", "r": "\r", "t": "\t", "z": "\x1a", "\\": "\\"}[e]
    return re.sub(r"\\(x[0-9a-f]{2}|.)", one, text)


def test_status_file_vectors(tmp_path):
    """Every case of dpkg-status.tsv: the fixture database (a dpkg stanza,
    then the case's text) read by dpkg-query and by gpugate; both must give
    the vector's verdict, and gpugate's refusal names the file, the line and
    dpkg's rule."""
    cases = list(tsv_raw("dpkg-status.tsv"))
    assert len(cases) >= 60, len(cases)
    disagree = []
    for name, verdict, rule, text in cases:
        root = database(tmp_path / name, [])
        status = root / "var/lib/dpkg/status"
        with open(status, "a", encoding="utf-8", newline="") as f:
            f.write(status_unescape(text))
        dpkg = dpkg_reads(root)
        assert dpkg == (verdict == "read"), (name, "dpkg itself disagrees with the vector", dpkg)
        got = gpugate_reads(tmp_path, root)
        if got != dpkg:
            disagree.append((name, got, dpkg))
            continue
        if not got:
            spec = spec_file(tmp_path, "packages:\n  - dpkg\n", name="dpkg-only.yaml")
            c = run_gpugate("--spec", spec, "--root", str(root), "--only", "packages", "--format", "json").check(
                "packages.installed")
            assert re.search(re.escape(str(status)) + r":\d+: ", c["summary"]) and "lib/dpkg/" in c["summary"], c
        conftest.EXACT_CASES["dpkg status"] += 1
    assert not disagree, disagree


# -- relations: dpkg decides -------------------------------------------------

def relation_cases():
    with open(os.path.join(VECTORS, "dpkg-relations.json"), encoding="utf-8") as f:
        return json.load(f)


def test_relations_agree_with_dpkg(tmp_path):
    """Every relation of dpkg-relations.json, decided by gpugate and by dpkg:
    gpugate follows dpkg's Depends check (--configure); where a dry run
    cannot decide that (awaited triggers, which dpkg processes first), the
    Pre-Depends check (-i) decides."""
    if native_arch() != "amd64":
        pytest.skip("the fixture names amd64 as the native architecture")
    cases = relation_cases()
    root = database(tmp_path, cases["database"])
    c, holds = gpugate_relations(tmp_path, root, cases["relations"])
    disagree, pre_depends_differs = [], []
    for relation in cases["relations"]:
        TALLY["run"] += 1
        depends = dpkg_configure_decides(root, relation)
        pre = dpkg_decides(tmp_path, root, relation)
        oracle = pre if depends is None else depends
        if depends is not None and depends != pre:
            pre_depends_differs.append(relation)
        got = holds[relation] if relation in holds else holds[relation.lower()]  # gpugate names it lowercased
        if got != oracle:
            disagree.append((relation, got, depends, pre))
        else:
            TALLY["agree"] += 1
            conftest.EXACT_CASES["relations/provides"] += 1
    assert not disagree, disagree
    # depisok (Pre-Depends) does not check a provider's architecture; dependencies_ok does
    assert pre_depends_differs == ["virt-i386"], pre_depends_differs
    # the verdicts the rules table in checks/SPEC.md promises, as dpkg gave them
    assert holds["trigpend (>= 2.0)"] and holds["trigawait (>= 2.0)"]
    assert not holds["unpackedpkg"] and not holds["halfconf"] and not holds["cfgfiles"]
    assert holds["virt-ver (>= 2.0)"] and not holds["virt-plain (>= 1)"]
    assert not holds["libze1:any"] and holds["allowedpkg:any (>= 3.0)"]
    assert holds["i386foreign"] and not holds["i386only"] and holds["noarch:amd64"] and not holds["noarch:i386"]
    assert not holds["virt-i386"] and holds["virt-i386:i386"] and holds["virt-tool"]
    # "native" is no architecture to dpkg (apt's spelling): lib/dpkg/arch.c knows any, all and the native name
    assert not holds["noarch:native"] and not holds["libze1:native (>= 1.17)"]
    # issue 28: a package's own Provides counts; only '=' in Provides serves
    # a versioned relation, and a version other than '=' serves nothing
    # (pkg_virtual_deppossi_satisfied); Provides over several lines; letter
    # case of Status and Multi-Arch; no Architecture is not native; names
    # of one letter or with '_'
    assert holds["selfprov (>= 2.0)"] and not holds["selfprov (>= 3.0)"] and holds["selfprov (= 1.0)"]
    assert not holds["virt-ge"] and not holds["virt-ge (>= 1)"] and not holds["virt-gt"] and not holds["virt-lt"]
    assert holds["virt-imp (= 4.0)"] and holds["virt-imp (>= 1)"] and holds["virt-imp"]
    assert holds["virt-c1"] and holds["virt-cont (>= 2.0)"] and holds["virt-c3"] and not holds["virt-cont (>> 2.0)"]
    assert holds["casepkg"] and holds["caseallowed:any"] and holds["virt-multi (>= 2.0)"]
    assert not holds["noarchfield"] and not holds["noarchfield:amd64"] and not holds["noarchfield:any"]
    assert holds["q (>= 1.0)"] and holds["under_score (= 1.0)"]
    warned = [f for f in finding_texts(c) if "leniently" in f]
    assert warned and "oddver" in warned[0]
    # capitals dpkg takes silently (it looks the name up lowercased): gpugate warns
    capitals = [f for f in finding_texts(c) if "package names are lowercase" in f]
    assert len(capitals) == 2 and holds["libze1 (>= 1.17.2)"] and holds["trigpend"], capitals
    TALLY["warn"] += len(warned) + len(capitals)


def test_native_architecture_from_the_root(tmp_path):
    """Under --root, dpkg >= 1.22.16 reads var/lib/dpkg/arch-native; otherwise
    the native architecture is the image's dpkg's own (its Architecture)."""
    stanzas = [{"Package": "libze1", "Version": "1.0", "Architecture": "arm64"}]
    root = database(tmp_path, stanzas)
    c, holds = gpugate_relations(tmp_path, root, ["libze1"])
    assert not holds["libze1"] and c["details"]["native_architecture"] == native_arch()
    write(str(root / "var/lib/dpkg/arch-native"), "arm64\n")
    c, holds = gpugate_relations(tmp_path, root, ["libze1"])
    assert holds["libze1"] and c["details"]["native_architecture"] == "arm64", c
    assert "arch-native" in c["details"]["native_architecture_from"]


def test_tally(capsys):
    """Prints the counts (run, agreeing, deliberate warnings) of the tests above."""
    report_tally(capsys, "dpkg vectors", TALLY, 258)
