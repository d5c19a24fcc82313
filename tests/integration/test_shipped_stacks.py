"""Every stack manifest images/stacks/ ships passes the built-in profiles of
its vendor (issue 31 item 5): a dpkg database holding each manifest
package at its pinned name, version and architecture (what `gpugate stack
verify` proves the .deb's control file says) is judged by `gpugate check
--only packages` under healthcheck, ci and validate. Where the manifest's
files can be fetched from here (Debian's archive), `gpugate stack fetch`
downloads and verifies the real .debs and the database is made from their
own control fields; where they cannot, that part is a skip saying so."""
import os
import sys
from pathlib import Path

import pytest
import yaml

from conftest import run_gpugate

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "lib"))
import debian_archive  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
STACKS = sorted((REPO / "images" / "stacks").glob("*.yaml"))
PROFILES = ("healthcheck", "ci", "validate")
CACHE = REPO / "build" / "stacks"


def vendor(doc):
    names = [p["package"] for p in doc["packages"]]
    return "nvidia" if any(n.startswith(("cuda", "libnvidia", "libcuda")) for n in names) else "intel"


def judge(root, v):
    for profile in PROFILES:
        r = run_gpugate("check", "--root", str(root), "--only", "packages", "--profile", profile, "--vendor", v,
                        "--format", "json")
        c = r.check("packages.installed")
        assert r.rc == 0 and c["status"] == "pass", (profile, c["summary"], c.get("details"), c.get("remediation"))


def test_there_are_stacks_of_both_namings():
    names = [p.name for p in STACKS]
    assert any(n.startswith("debian-") for n in names) and any(n.startswith("intel-compute-runtime-") for n in names)


@pytest.mark.parametrize("path", STACKS, ids=lambda p: p.name)
def test_manifest_packages_pass_the_builtin_profiles(tmp_path, path):
    doc = yaml.safe_load(path.read_text())
    controls = [f"Package: {p['package']}\nVersion: {p['version']}\n"
                f"Architecture: {p.get('architecture', doc.get('architecture', 'amd64'))}\n"
                f"Maintainer: {path.name}\nDescription: from the manifest {path.name}"
                for p in doc["packages"]]
    admin = debian_archive.write_dpkg_db(tmp_path, controls)
    r = debian_archive.dpkg_query(admin, "-W")
    assert r.returncode == 0 and len(r.stdout.splitlines()) == len(controls), r.stderr
    judge(tmp_path, vendor(doc))


@pytest.mark.parametrize("path", [p for p in STACKS if p.name.startswith("debian-")], ids=lambda p: p.name)
def test_real_debs_of_a_debian_manifest_pass(tmp_path, path):
    doc = yaml.safe_load(path.read_text())
    mirror = debian_archive.debian_mirror()
    ok, why = debian_archive.mirror_reachable(mirror, "sid")
    if not ok:
        pytest.skip(f"Debian's archive {mirror} is not reachable: {why}")
    # the manifest names deb.debian.org; fetch from this machine's mirror
    text = path.read_text().replace("http://deb.debian.org/debian/", mirror.rstrip("/") + "/")
    manifest = tmp_path / path.name
    manifest.write_text(text)
    dest = CACHE / path.stem
    r = run_gpugate("stack", "fetch", "--manifest", str(manifest), "--dest", str(dest), timeout=600)
    assert r.rc == 0 and "all verified" in r.out, (
        f"{path.name}: gpugate stack fetch failed (a 404 means sid replaced a package: regenerate the "
        f"manifest as its header says):\n{r.out}\n{r.err}")
    controls = []
    for p in doc["packages"]:
        name = p.get("filename") or p["url"].rsplit("/", 1)[1]
        controls.append(debian_archive.control(dest / name))
    admin = debian_archive.write_dpkg_db(tmp_path / "root", controls)
    assert debian_archive.dpkg_query(admin, "-W").returncode == 0
    judge(tmp_path / "root", vendor(doc))


@pytest.mark.parametrize("path", STACKS, ids=lambda p: p.name)
def test_manifest_header_says_where_its_sha256_come_from(path):
    """A sha256 is only as good as where it was read: each manifest's
    opening comment names that (a URL, or Debian's Packages index), and one
    whose sums were not read from the publisher of its files (the
    `source:`) says they are a third party's."""
    header = "\n".join(line[1:].strip() for line in path.read_text().splitlines() if line.startswith("#"))
    text = " ".join(header.split())
    source = yaml.safe_load(path.read_text())["source"]
    assert "sha256" in text and ("https://" in text or "Packages index" in text), path.name
    sums = text[text.index("sha256"):]
    if source.split()[0].split("/releases/")[0] not in sums and "Packages index" not in sums:
        assert "third party" in sums, f"{path.name}: whose sha256 are these? the header must say"
