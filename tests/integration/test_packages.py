"""The packages group against fixture dpkg databases."""
import os

import pytest

from conftest import dpkg_root, finding_codes, finding_texts, run_gpugate, spec_file, stanza, write


def check(tmp_path, stanzas, relations, native="amd64"):
    root = dpkg_root(tmp_path, stanzas, native)
    spec = spec_file(tmp_path, "packages:\n" + "".join(f"  - {r}\n" for r in relations))
    r = run_gpugate("--spec", spec, "--root", str(root), "--format", "json")
    return r, r.check("packages.installed")


def test_pass_lists_installed_versions(tmp_path):
    r, c = check(tmp_path, [stanza("libze1", "1.17.2-1"), stanza("intel-opencl-icd", "24.26.30049.6-1")],
                 ["libze1 (>= 1.17)", "intel-opencl-icd"])
    assert r.rc == 0 and c["status"] == "pass", r
    assert "all 2 pinned package relations hold" in c["summary"]
    rel = c["details"]["relations"]
    assert rel[0]["holds"] and rel[0]["installed"][0]["version"] == "1.17.2-1"
    assert rel[1]["installed"][0]["package"] == "intel-opencl-icd"


def test_too_old_names_package_and_version(tmp_path):
    r, c = check(tmp_path, [stanza("libze1", "1.8.12-1")], ["libze1 (>= 1.17)"])
    assert r.rc == 1 and c["status"] == "fail"
    assert "libze1" in c["summary"]
    assert "libze1:amd64 1.8.12-1 is too old" in finding_texts(c)[0]
    assert finding_codes(c) == ["packages.installed.unsatisfied"]
    assert "libze1 at a version >= 1.17" in c["remediation"]


@pytest.mark.parametrize("installed,relation,ok", [
    ("1.0~rc1", "pkg (<< 1.0)", True),
    ("1.0", "pkg (<< 1.0)", False),
    ("1.0", "pkg (<= 1.0)", True),
    ("1.01", "pkg (= 1.1)", True),
    ("1:0.1", "pkg (>> 9.9)", True),
    ("2.0-1ubuntu1", "pkg (>= 2.0-1)", True),
    ("2.0~beta", "pkg (>= 2.0)", False),
])
def test_operators_follow_dpkg(tmp_path, installed, relation, ok):
    r, c = check(tmp_path, [stanza("pkg", installed)], [relation])
    assert (r.rc == 0) == ok and (c["status"] == "pass") == ok, r


def test_alternatives(tmp_path):
    old_name = [stanza("intel-level-zero-gpu", "1.3.29377.6")]
    rel = "libze-intel-gpu1 (>= 24.26) | intel-level-zero-gpu (>= 1.3.29138)"
    r, c = check(tmp_path, old_name, [rel])
    assert r.rc == 0 and c["status"] == "pass", r
    r, c = check(tmp_path, [stanza("intel-level-zero-gpu", "1.3.26918.9")], [rel])
    assert r.rc == 1
    assert "install one of: libze-intel-gpu1 (>= 24.26) | intel-level-zero-gpu (>= 1.3.29138)" in c["remediation"]


def test_configured_states_count(tmp_path):
    # dpkg's deppossi_ok_found() (src/main/packages.c): a configured package
    # whose triggers are pending or awaited satisfies a dependency
    for state in ("triggers-pending", "triggers-awaited"):
        r, c = check(tmp_path, [stanza("libze1", "1.17.0-1", state=state)], ["libze1 (>= 1.17)"])
        assert r.rc == 0 and c["status"] == "pass", (state, r)


def test_provides(tmp_path):
    prov = stanza("intel-opencl-icd", "24.26.30049.6-1").replace(
        "Version:", "Provides: opencl-icd, libze-intel-gpu (= 24.26)\nVersion:")
    for relation, ok in (("opencl-icd", True), ("opencl-icd (>= 1)", False), ("libze-intel-gpu (>= 24.1)", True),
                         ("libze-intel-gpu (>> 24.26)", False)):
        r, c = check(tmp_path, [prov], [relation])
        assert (r.rc == 0) == ok, (relation, r)
    r, c = check(tmp_path, [prov], ["opencl-icd (>= 1)"])
    assert "provides opencl-icd without a version, which serves only an unversioned relation" in finding_texts(c)[0]


def test_not_installed_states_do_not_count(tmp_path):
    for state in ("config-files", "half-installed", "unpacked", "half-configured"):
        r, c = check(tmp_path, [stanza("libze1", "1.17.0-1", state=state)], ["libze1"])
        assert r.rc == 1, (state, r)
        assert f"not installed (state {state})" in finding_texts(c)[0]


def test_missing_package(tmp_path):
    r, c = check(tmp_path, [stanza("other", "1")], ["libze1 (>= 1.0)"])
    assert r.rc == 1 and "libze1 (>= 1.0): not installed" in finding_texts(c)[0]
    # the stable code, and the finding's own status (the schema lists every code)
    assert c["findings"] == [{"code": "packages.installed.unsatisfied", "status": "fail",
                              "text": finding_texts(c)[0]}]


# dpkg's deparchsatisfied() (lib/dpkg/depcon.c); test_dpkg_exact.py has dpkg decide these too
@pytest.mark.parametrize("relation,ok", [
    ("libfoo:amd64", True),
    ("libfoo:i386 (>= 1.0)", True),
    ("libfoo:arm64", False),
    ("libfoo (>= 2.0)", True),          # unqualified: the native architecture
    ("libfoo (<< 2.0)", False),         # ... so the i386 1.5-1 does not count
    ("libfoo:any (>= 2.0)", False),     # :any needs Multi-Arch: allowed
    ("libfoo:native (>= 2.0)", False),  # apt's spelling: no architecture to dpkg (lib/dpkg/arch.c)
    ("libfoo:i386 (>= 2.0)", False),
    ("noarch:amd64", True),             # Architecture: all counts as native
    ("noarch:arm64", False),
    ("tool:any", True),                 # Multi-Arch: allowed
    ("helper", True),                   # Multi-Arch: foreign, of another architecture
])
def test_arch_qualifiers_with_multiarch(tmp_path, relation, ok):
    same = "Multi-Arch: same\nVersion:"  # two instances of a name: dpkg needs both Multi-Arch: same
    stanzas = [stanza("libfoo", "2.0-1", "amd64").replace("Version:", same),
               stanza("libfoo", "1.5-1", "i386").replace("Version:", same),
               stanza("noarch", "1", "all"),
               stanza("tool", "1", "amd64").replace("Version:", "Multi-Arch: allowed\nVersion:"),
               stanza("helper", "1", "i386").replace("Version:", "Multi-Arch: foreign\nVersion:")]
    r, c = check(tmp_path, stanzas, [relation])
    assert (c["status"] == "pass") == ok, (relation, r)


def test_native_follows_dpkg_architecture(tmp_path):
    stanzas = [stanza("libfoo", "2.0-1", "amd64").replace("Version:", "Multi-Arch: same\nVersion:"),
               stanza("libfoo", "1.5-1", "arm64").replace("Version:", "Multi-Arch: same\nVersion:")]
    r, c = check(tmp_path, stanzas, ["libfoo (>= 2.0)"], native="arm64")
    assert r.rc == 1 and c["status"] == "fail"


def test_native_qualifier_says_dpkg_knows_no_such_architecture(tmp_path):
    r, c = check(tmp_path, [stanza("libfoo", "2.0-1", "amd64")], ["libfoo:native (>= 2.0)"])
    assert r.rc == 1 and "dpkg knows no such architecture" in " ".join(finding_texts(c)), c


def test_no_dpkg_database(tmp_path):
    os.makedirs(tmp_path / "root")
    spec = spec_file(tmp_path, "packages:\n  - libze1\n")
    r = run_gpugate("--spec", spec, "--root", str(tmp_path / "root"), "--format", "json")
    c = r.check("packages.installed")
    assert r.rc == 1
    assert f"no dpkg database at {tmp_path}/root/var/lib/dpkg (not a Debian/Ubuntu image?)" in c["summary"]


@pytest.mark.parametrize("body,words", [
    # dpkg's own rules and words (lib/dpkg/parse.c, fields.c); dpkg-status.tsv has dpkg decide them
    ("Package: libze1\nStatus: install ok installed\nVersion 1.0\n", "status:3: field name 'Version' must be followed by colon"),
    ("Package: libze1\nStatus: installed\nVersion: 1.0\n", "status:2: second (error) word in 'Status' field"),
    (" stray continuation\n", "status:1: empty field name"),
    # a NUL byte: the Status value read up to it, as dpkg reads it (dpkg-status.tsv nul-cuts-status-word)
    ("Package: libze1\nStatus: install ok inst\x00alled\nVersion: 1\n", "status:2: third (status) word in 'Status'"),
])
def test_malformed_status_fails_naming_file_and_line(tmp_path, body, words):
    root = tmp_path / "root"
    write(str(root / "var/lib/dpkg/status"), body)
    spec = spec_file(tmp_path, "packages:\n  - libze1\n")
    r = run_gpugate("--spec", spec, "--root", str(root), "--format", "json")
    c = r.check("packages.installed")
    assert r.rc == 1 and c["status"] == "fail"
    assert f"{root}/var/lib/dpkg/{words}" in c["summary"], c


def test_status_is_a_directory(tmp_path):
    root = tmp_path / "root"
    os.makedirs(root / "var/lib/dpkg/status")
    spec = spec_file(tmp_path, "packages:\n  - libze1\n")
    r = run_gpugate("--spec", spec, "--root", str(root), "--format", "json")
    assert r.rc == 1 and "not a regular file" in r.check("packages.installed")["summary"]


def test_empty_package_list_skips(tmp_path):
    root = dpkg_root(tmp_path, [])
    spec = spec_file(tmp_path, "packages: []\n")
    r = run_gpugate("--spec", spec, "--root", str(root), "--format", "json")
    assert r.rc == 0 and r.check("packages.installed")["status"] == "skip"


def test_builtin_profiles_pin_the_intel_stack(tmp_path):
    stack = [stanza("libze1", "1.21.9-1"), stanza("libze-intel-gpu1", "25.18.33578.6-1"),
             stanza("intel-opencl-icd", "25.18.33578.6-1"), stanza("intel-igc-core-2", "2.11.7"),
             stanza("libigdgmm12", "22.7.2-1")]
    root = dpkg_root(tmp_path, stack)
    for profile in ("healthcheck", "ci", "validate"):
        r = run_gpugate("--profile", profile, "--root", str(root), "--only", "packages", "--format", "json")
        assert r.rc == 0, (profile, r)
        assert r.json()["profile"] == profile
    old = dpkg_root(tmp_path / "old", [stanza("intel-opencl-icd", "22.43.24595.41-1")])
    r = run_gpugate("--root", str(old), "--only", "packages", "--format", "json")
    assert r.rc == 1
    assert "intel-opencl-icd:amd64 22.43.24595.41-1 is too old" in "\n".join(
        finding_texts(r.check("packages.installed")))
