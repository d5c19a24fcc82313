"""The built-in Intel pins against the packages Debian really ships (issue
25 item 1): the Intel GPU stack's .debs downloaded from Debian's archive
(sid: the current stack; bookworm: the old one) with `apt-get download`
through a private apt under build/debian-archive (tests/lib/debian_archive.py),
a dpkg database written from their control fields as dpkg writes it, read
back by the real dpkg-query, and judged by `gpugate check --only packages`
under every built-in profile. Then the operator's cycle on the same data:
`spec freeze` of the bookworm stack, the sid stack checked against it, and
`gpugate diff` of the two reports. Offline, every test here is a skip that
says so (never a pass)."""
import json
import os
import subprocess
import sys

import pytest

from conftest import finding_texts, run_gpugate

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import debian_archive  # noqa: E402
import debfixture  # noqa: E402

PROFILES = ("healthcheck", "ci", "validate")
# What the packages of each suite's stack are (the Packages indexes, cited in
# checks/vendor/intel.yaml): the loader, the Level Zero driver (sid only),
# the OpenCL ICD, the graphics compiler and its OpenCL front end, gmmlib.
SID = ("libze1", "libze-intel-gpu1", "intel-opencl-icd", "libigc2", "libigdfcl2", "libigdgmm12")
BOOKWORM = ("libze1", "intel-opencl-icd", "libigc1", "libigdfcl1", "libigdgmm12")
# The head of each built-in relation: the name gpugate names when it fails.
HEADS = [debfixture.parse_relation(r)[0][0] for r in debfixture.spec_packages(debfixture.CHECKS / "ci.yaml")]


def fetch(suite, names):
    archive = debian_archive.Archive(suite)
    ok, why = archive.reachable()
    if not ok:
        pytest.skip(f"Debian's archive {archive.mirror} ({suite}) is not reachable: {why}")
    debs = archive.download(names)
    return archive, {name: debian_archive.control(path) for name, path in debs.items()}


@pytest.fixture(scope="module")
def sid():
    return fetch("sid", SID)


@pytest.fixture(scope="module")
def bookworm():
    return fetch("bookworm", BOOKWORM)


def field(control, name):
    for line in control.splitlines():
        if line.startswith(name + ":"):
            return line.split(":", 1)[1].strip()
    raise KeyError(name)


def stack_root(path, controls):
    """A root whose dpkg database holds controls, confirmed by dpkg itself."""
    admin = debian_archive.write_dpkg_db(path, controls.values())
    r = debian_archive.dpkg_query(admin, "-W", "-f", "${Package} ${Version} ${Status}\n", *controls)
    assert r.returncode == 0, f"dpkg-query cannot read the database gpugate is given:\n{r.stderr}"
    got = sorted(r.stdout.splitlines())
    want = sorted(f"{field(c, 'Package')} {field(c, 'Version')} install ok installed" for c in controls.values())
    assert got == want, (got, want)
    return str(path)


def check(root, *args):
    return run_gpugate("check", "--root", root, "--only", "packages", "--vendor", "intel", "--format", "json", *args)


def holds(version, op, wanted):
    return debfixture.dpkg_holds(version, op, wanted)


def test_sid_stack_passes_every_builtin_profile(tmp_path, sid):
    _, controls = sid
    assert HEADS == ["libze1", "libze-intel-gpu1", "intel-opencl-icd", "libigc2", "libigdgmm12"], HEADS
    root = stack_root(tmp_path / "sid", controls)
    for profile in PROFILES:
        r = check(root, "--profile", profile)
        c = r.check("packages.installed")
        assert r.rc == 0 and c["status"] == "pass", (profile, r)
        assert c["summary"] == "all 5 pinned package relations hold", c


@pytest.mark.parametrize("name", ["libze1", "libze-intel-gpu1", "intel-opencl-icd", "libigc2", "libigdgmm12"])
def test_a_removed_package_fails_naming_it_and_its_fix_works(tmp_path, sid, name):
    archive, controls = sid
    rest = {n: c for n, c in controls.items() if n != name}
    root = stack_root(tmp_path / "root", rest)
    for profile in PROFILES:
        r = check(root, "--profile", profile)
        c = r.check("packages.installed")
        assert r.rc == 1 and c["status"] == "fail", (profile, r)
        assert c["summary"] == f"1 of 5 pinned package relations do not hold: {name}", c
        assert any(f.endswith(": not installed") and f.startswith(name + " ") for f in finding_texts(c)), c
    # The fix names a package Debian carries at a version the relation
    # accepts; installing that package (its real control data) passes.
    fix = c["remediation"]
    assert name in fix, fix
    relation = next(t for t in debfixture.spec_packages(debfixture.CHECKS / "ci.yaml") if t.startswith(name + " "))
    _, _, op, wanted = debfixture.parse_relation(relation)[0]
    assert holds(archive.index()[name]["Version"], op, wanted), (name, archive.index()[name]["Version"], relation)
    root2 = stack_root(tmp_path / "fixed", {**rest, name: controls[name]})
    assert check(root2, "--profile", "ci").rc == 0


def test_a_downgraded_package_fails_naming_it(tmp_path, sid, bookworm):
    _, new = sid
    _, old = bookworm
    # bookworm's real libze1 1.8.12 in place of sid's 1.32
    root = stack_root(tmp_path / "root", {**new, "libze1": old["libze1"]})
    r = check(root, "--profile", "healthcheck")
    c = r.check("packages.installed")
    assert r.rc == 1 and c["summary"] == "1 of 5 pinned package relations do not hold: libze1", r
    version = field(old["libze1"], "Version")
    assert f"libze1:amd64 {version} is too old" in "\n".join(finding_texts(c)), c
    assert "install one of: libze1 (>= 1.17)" in c["remediation"], c
    assert holds(field(new["libze1"], "Version"), ">=", "1.17")


def test_the_bookworm_stack_fails_with_the_right_names(tmp_path, bookworm):
    _, controls = bookworm
    root = stack_root(tmp_path / "bookworm", controls)
    for profile in PROFILES:
        r = check(root, "--profile", profile)
        c = r.check("packages.installed")
        assert r.rc == 1, (profile, r)
        assert c["summary"] == ("5 of 5 pinned package relations do not hold: "
                                "libze1, libze-intel-gpu1, intel-opencl-icd, libigc2, libigdgmm12"), c
        findings = "\n".join(finding_texts(c))
        for name in ("libze1", "intel-opencl-icd", "libigc1", "libigdgmm12"):
            assert f"{name}:amd64 {field(controls[name], 'Version')} is too old" in findings, findings
        assert "libze-intel-gpu1 (>= 24.26) | intel-level-zero-gpu (>= 1.3.30049): not installed" in findings


def test_freeze_the_old_stack_then_the_new_one_names_what_moved(tmp_path, sid, bookworm):
    _, new = sid
    _, old = bookworm
    old_root = stack_root(tmp_path / "old", old)
    new_root = stack_root(tmp_path / "new", new)
    spec = tmp_path / "frozen.yaml"
    r = run_gpugate("spec", "freeze", "--root", old_root, "--vendor", "intel", "-o", str(spec))
    assert r.rc == 0, r
    text = spec.read_text()
    for name in BOOKWORM:
        assert f"- {name} (= {field(old[name], 'Version')})" in text, text

    def report(root, name):
        r = run_gpugate("check", "--spec", str(spec), "--root", root, "--only", "packages", "--format", "json")
        (tmp_path / name).write_text(r.out)
        return r

    same = report(old_root, "old.json")
    assert same.rc == 0, same
    moved = report(new_root, "new.json")
    c = moved.check("packages.installed")
    assert moved.rc == 1, moved
    # each package that moved or went, by name: the versions sid carries now
    findings = "\n".join(finding_texts(c))
    for name in ("libze1", "intel-opencl-icd", "libigdgmm12"):
        assert name in c["summary"], c
        assert f"{name}:amd64 {field(new[name], 'Version')}" in findings or \
               f"{name} {field(new[name], 'Version')}" in findings, findings
    for name in ("libigc1", "libigdfcl1"):  # sid's stack uses the 2.x compiler
        assert name in c["summary"] and f"{name} (= {field(old[name], 'Version')}): not installed" in findings, findings

    d = run_gpugate("diff", str(tmp_path / "old.json"), str(tmp_path / "new.json"))
    assert d.rc == 1 and "packages.installed           pass -> fail (worse)" in d.out, d
    dj = run_gpugate("diff", "--format", "json", str(tmp_path / "old.json"), str(tmp_path / "new.json"))
    assert dj.rc == 1, dj
    changes = {p["package"]: (p["old"], p["new"], p["change"]) for p in json.loads(dj.out)["packages"]}

    def arch_name(c):
        return f"{field(c, 'Package')}:{field(c, 'Architecture')}"

    want = {arch_name(old[n]): (field(old[n], "Version"), field(new[n], "Version"), "upgraded")
            for n in ("libze1", "intel-opencl-icd", "libigdgmm12")}
    want.update({arch_name(old[n]): (field(old[n], "Version"), None, "removed") for n in ("libigc1", "libigdfcl1")})
    assert changes == want, (changes, want)
