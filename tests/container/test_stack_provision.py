"""Provisioning on real data (issue 25 item 1): a stack manifest made from
Debian sid's Packages index (each .deb's pool URL and sha256) is fetched and
verified by `gpugate stack fetch|verify`, the .debs install with the real
dpkg into a debootstrapped sid root (their system_packages by apt first),
and that root passes the built-in profiles' packages check. The same for the
root rootfs.intel_stack_root() caches, where apt itself installed the stack.
Root only (debootstrap, chroot); offline, a skip saying so."""
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO / "tests" / "lib"))
import debian_archive  # noqa: E402
import rootfs  # noqa: E402

GPUGATE = os.environ.get("GPUGATE", str(REPO / "build" / "gpugate"))
PROFILES = ("healthcheck", "ci", "validate")
STACK = ("libze1", "libze-intel-gpu1", "intel-opencl-icd", "libigc2", "libigdfcl2", "libigdgmm12")


def gpugate(*args, timeout=120):
    return subprocess.run([GPUGATE, *args], capture_output=True, text=True, timeout=timeout)


def passes_builtin_profiles(root):
    for profile in PROFILES:
        r = gpugate("check", "--root", str(root), "--only", "packages", "--profile", profile, "--vendor", "intel")
        assert r.returncode == 0 and "all 5 pinned package relations hold" in r.stdout, (profile, r.stdout, r.stderr)


def untar(tarball, root, *members):
    root.mkdir()
    subprocess.run(["tar", "--numeric-owner", "-C", str(root), "-xf", str(tarball), *members], check=True)


def test_a_manifest_from_the_archive_installs_and_passes(tmp_path):
    base = rootfs.rootfs_tarball("sid")  # skips without root or debootstrap, or offline
    archive = debian_archive.Archive("sid")
    ok, why = archive.reachable()
    if not ok:
        pytest.skip(f"Debian's archive {archive.mirror} (sid) is not reachable: {why}")
    manifest = tmp_path / "stack.yaml"
    manifest.write_text(debian_archive.manifest(archive, STACK, "debian-sid-intel-gpu"))
    debs = tmp_path / "debs"
    r = gpugate("stack", "fetch", "--manifest", str(manifest), "--dest", str(debs), timeout=600)
    assert r.returncode == 0 and "6 packages, all verified" in r.stdout, r.stdout + r.stderr
    r = gpugate("stack", "verify", "--manifest", str(manifest), str(debs))
    assert r.returncode == 0, r.stdout

    root = tmp_path / "root"
    untar(base, root)
    if Path("/etc/resolv.conf").exists():  # the archive by name, as on the host
        (root / "etc" / "resolv.conf").unlink(missing_ok=True)
        (root / "etc" / "resolv.conf").write_bytes(Path("/etc/resolv.conf").resolve().read_bytes())
    (root / "tmp" / "debs").mkdir()
    for deb in debs.glob("*.deb"):
        (root / "tmp" / "debs" / deb.name).write_bytes(deb.read_bytes())
    system = yaml.safe_load(manifest.read_text())["system_packages"]
    r = rootfs.in_chroot(root, f"apt-get {rootfs.APT_OPTS} -q update && "
                               f"apt-get {rootfs.APT_OPTS} -q install -y --no-install-recommends {' '.join(system)} "
                               "&& dpkg -i /tmp/debs/*.deb && dpkg --audit", timeout=900)
    assert r.returncode == 0, f"installing the verified .debs failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    r = rootfs.in_chroot(root, "dpkg-query -W -f '${Package} ${Status}\\n' " + " ".join(STACK))
    assert r.returncode == 0 and r.stdout.count("install ok installed") == len(STACK), r
    passes_builtin_profiles(root)


def test_the_stack_apt_installs_passes(tmp_path):
    tarball = rootfs.intel_stack_root()  # skips without root, or offline on first use
    root = tmp_path / "root"
    untar(tarball, root, "./var/lib/dpkg")
    r = debian_archive.dpkg_query(root / "var/lib/dpkg", "-W", *rootfs.INTEL_STACK_PACKAGES)
    assert r.returncode == 0 and len(r.stdout.splitlines()) == len(rootfs.INTEL_STACK_PACKAGES), r
    passes_builtin_profiles(root)
