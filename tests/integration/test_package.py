"""The Debian package (`make deb`, debian/): built with debhelper, checked by
lintian, holding the files a user needs, and carrying the one version the
Makefile sets everywhere it shows. Installing it into a Debian 12 root is
tests/container/test_deb_install.py."""
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import GPUGATE, run_gpugate

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "lib"))
import debpackage  # noqa: E402

VERSION = debpackage.makefile_version()
OVERRIDES = REPO / "debian" / "gpugate.lintian-overrides"

# What a user of the package gets (issue 17): both executables where gpugate
# looks for its helper, the man page, completion, example specs, the license.
EXPECTED = [
    "usr/bin/gpugate",
    "usr/libexec/gpugate/gpugate-provision",
    "usr/libexec/gpugate/gpugate-serve",
    "usr/share/man/man1/gpugate.1.gz",
    "usr/share/bash-completion/completions/gpugate",
    "usr/share/doc/gpugate/copyright",
    "usr/share/doc/gpugate/changelog.gz",
    "usr/share/doc/gpugate/CHANGELOG.md",
    "usr/share/doc/gpugate/README.md.gz",
    "usr/share/doc/gpugate/OPERATORS.md.gz",
    "usr/share/doc/gpugate/SPEC.md.gz",
    "usr/share/gpugate/report.schema.json",
    "usr/share/gpugate/fleet/daemonset.yaml",
    "usr/share/gpugate/fleet/npd-gpugate.json",
    "usr/share/gpugate/fleet/gate-pod.yaml",
] + [f"usr/share/doc/gpugate/examples/{p.name}"
     for p in sorted(REPO.glob("checks/*.yaml")) + sorted(REPO.glob("images/*.yaml"))]


@pytest.fixture(scope="module")
def deb():
    return debpackage.build_deb()


@pytest.fixture(scope="module")
def unpacked(deb, tmp_path_factory):
    root = tmp_path_factory.mktemp("deb") / "root"
    subprocess.run(["dpkg-deb", "-x", str(deb), str(root)], check=True)
    return root


def field(deb, name):
    r = subprocess.run(["dpkg-deb", "-f", str(deb), name], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout.strip()


def lintian(deb):
    """Lintian's E: and W: lines (after the overrides), and its exit code."""
    r = subprocess.run(["lintian", "--fail-on", "error,warning", "--display-info", "--pedantic", str(deb)],
                       capture_output=True, text=True, timeout=600)
    tags = [line for line in r.stdout.splitlines() if re.match(r"^[EW]: ", line)]
    return r.returncode, tags, r.stdout + r.stderr


def test_deb_is_named_for_the_version_and_architecture(deb):
    assert deb.name == f"gpugate_{VERSION}_{debpackage.native_arch()}.deb"
    assert field(deb, "Package") == "gpugate"
    assert field(deb, "Version") == VERSION
    assert field(deb, "Architecture") == debpackage.native_arch()


def test_lintian_is_clean(deb):
    rc, tags, out = lintian(deb)
    assert tags == [], f"lintian tags not overridden:\n{out}"
    assert rc == 0, out


def test_each_lintian_override_is_justified_by_a_comment():
    lines = OVERRIDES.read_text().splitlines()
    for i, line in enumerate(lines):
        if line.strip() and not line.startswith("#"):
            assert i > 0 and lines[i - 1].startswith("#"), \
                f"{OVERRIDES.name}:{i + 1}: override without a comment above it saying why: {line}"


def test_lintian_fails_a_broken_control_field(deb, tmp_path):
    """The check above can fail: the same package with a Section lintian
    does not know and no Description is reported."""
    tree = tmp_path / "tree"
    subprocess.run(["dpkg-deb", "-R", str(deb), str(tree)], check=True)
    control = tree / "DEBIAN" / "control"
    text = control.read_text()
    text = re.sub(r"^Section: .*$", "Section: no-such-section", text, flags=re.M)
    text = re.sub(r"^Description:.*\Z", "", text, flags=re.M | re.S)
    control.write_text(text)
    broken = tmp_path / deb.name
    subprocess.run(["dpkg-deb", "--root-owner-group", "-b", str(tree), str(broken)], check=True,
                   capture_output=True)
    rc, tags, out = lintian(broken)
    assert rc != 0 and tags, f"lintian passed a broken control file:\n{out}"
    assert any("unknown-section" in t for t in tags), out


def test_package_holds_the_files(deb):
    listing = subprocess.run(["dpkg-deb", "-c", str(deb)], capture_output=True, text=True,
                             check=True).stdout
    paths = {line.split()[-1].lstrip("./").rstrip("/") for line in listing.splitlines()}
    missing = [p for p in EXPECTED if p not in paths]
    assert not missing, f"not in {deb.name}: {missing}\n{listing}"
    modes = {line.split()[-1].lstrip("./"): line.split()[0] for line in listing.splitlines()}
    for exe in ("usr/bin/gpugate", "usr/libexec/gpugate/gpugate-provision", "usr/libexec/gpugate/gpugate-serve"):
        assert modes[exe] == "-rwxr-xr-x", f"{exe}: {modes[exe]}"
    assert not [p for p in paths if p.startswith("usr/local")], listing


def test_depends_name_the_shared_libraries(deb):
    depends = field(deb, "Depends")
    for lib in ("libc6", "libyaml-0-2", "libjansson4", "libcurl4", "libarchive13", "libmicrohttpd12"):
        assert re.search(rf"(^|, ){re.escape(lib)}\b", depends), f"{lib} not in Depends: {depends}"


def test_copyright_is_dep5_and_matches_license(unpacked):
    copyright = (unpacked / "usr/share/doc/gpugate/copyright").read_text()
    assert copyright.startswith("Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/")
    assert re.search(r"^Files: \*\nCopyright: .+\nLicense: Apache-2.0$", copyright, re.M), copyright
    assert "/usr/share/common-licenses/Apache-2.0" in copyright
    # LICENSE is the full Apache-2.0 text Debian ships
    assert (REPO / "LICENSE").read_text() == Path("/usr/share/common-licenses/Apache-2.0").read_text()


def test_one_version_everywhere(deb, unpacked):
    """The Makefile's VERSION is the version of the binary, its JSON and
    Prometheus reports, the package, its changelog, its man page and the
    newest heading of CHANGELOG.md."""
    seen = {}
    seen["gpugate --version"] = subprocess.run([GPUGATE, "--version"], capture_output=True,
                                               text=True, check=True).stdout.split()[-1]
    packaged = unpacked / "usr/bin/gpugate"
    seen["packaged gpugate --version"] = subprocess.run([str(packaged), "--version"], capture_output=True,
                                                        text=True, check=True).stdout.split()[-1]
    r = run_gpugate("check", "--root", str(unpacked), "--only", "packages", "--format", "json")
    assert r.rc in (0, 1), r
    seen["JSON report version"] = r.json()["version"]
    r = run_gpugate("check", "--root", str(unpacked), "--only", "packages", "--format", "prom")
    m = re.search(r'^gpugate_info\{.*version="([^"]+)"', r.out, re.M)
    assert m, r
    seen["Prometheus gpugate_info"] = m.group(1)
    seen["package Version"] = field(deb, "Version")
    with gzip.open(unpacked / "usr/share/doc/gpugate/changelog.gz", "rt") as f:
        seen["debian changelog"] = re.match(r"gpugate \(([^)]+)\)", f.readline()).group(1)
    with gzip.open(unpacked / "usr/share/man/man1/gpugate.1.gz", "rt") as f:
        seen["man page .TH"] = re.search(r'^\.TH GPUGATE 1 "[^"]*" "gpugate ([^"]+)"', f.read(), re.M).group(1)
    heading = re.search(r"^## \[(\d[^]]*)\]", (REPO / "CHANGELOG.md").read_text(), re.M)
    seen["CHANGELOG.md newest heading"] = heading.group(1) if heading else None
    differ = {k: v for k, v in seen.items() if v != VERSION}
    assert not differ, f"Makefile VERSION is {VERSION}; these differ: {differ}"


def test_packaged_gpugate_runs_its_packaged_helper(unpacked, tmp_path):
    """gpugate finds gpugate-provision and gpugate-serve in ../libexec/gpugate
    beside itself, else in the PREFIX it was built for: /usr/libexec/gpugate."""
    gpugate = unpacked / "usr/bin/gpugate"
    data = gpugate.read_bytes()
    assert b"/usr/libexec/gpugate/" in data, "not built with PREFIX=/usr"
    assert b"/usr/local/libexec" not in data
    r = subprocess.run([str(gpugate), "hf", "fetch", "--help"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and "usage" in (r.stdout + r.stderr).lower(), r
    r = subprocess.run([str(gpugate), "serve", "--help"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and "usage: gpugate serve" in r.stdout, r
    # without the helper beside it, the message names where it looked
    alone = tmp_path / "bin" / "gpugate"
    alone.parent.mkdir()
    shutil.copy2(gpugate, alone)
    if not os.path.exists("/usr/libexec/gpugate/gpugate-provision"):
        r = subprocess.run([str(alone), "hf", "fetch", "--help"], capture_output=True, text=True, timeout=30)
        assert r.returncode == 3 and "/usr/libexec/gpugate" in r.stderr, r


def test_report_schema_in_the_package_is_the_one_reports_follow(unpacked):
    packaged = json.loads((unpacked / "usr/share/gpugate/report.schema.json").read_text())
    assert packaged == json.loads((REPO / "checks" / "report.schema.json").read_text())
