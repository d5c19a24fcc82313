"""Debian minbase root filesystems the container tests start from:
debootstrap from Debian's archive (the mirror this machine's apt uses),
cached as build/rootfs-cache/*.tar. images.py imports the bookworm one as
debian:12.

API (stable; other tests and helpers build on it):
- debian_mirror() -> str: the Debian archive URL (serves every suite).
- mirror_reachable(mirror, suite="bookworm") -> (bool, why): its Release
  for suite answers.
- rootfs_tarball(suite="bookworm") -> Path: a minbase root of suite
  ("bookworm", "sid", ...), built on first use. Skips (pytest.skip, saying
  why) when not root, without debootstrap, or when the archive cannot be
  reached on first use.
- intel_stack_root() -> Path: a tarball of a sid minbase root in which apt
  itself (chroot, `apt-get install --no-install-recommends`) installed the
  Intel GPU stack as Debian ships it: INTEL_STACK_PACKAGES. The real
  loader and the real Intel driver; with no GPU they fail zeInit.
  Same skips. Extract it with `tar --numeric-owner -xf` as root.
- in_chroot(root, script, timeout) -> CompletedProcess: script under
  /bin/sh in root, in new mount and pid namespaces with its own /proc.
sid's Release can read as expired on these mirrors: apt inside a sid root
runs with Acquire::Check-Valid-Until=false (APT_OPTS)."""
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "lib"))
import debfixture  # noqa: E402
import debian_archive  # noqa: E402

CACHE_DIR = REPO / "build" / "rootfs-cache"
SUITE = "bookworm"  # Debian 12, the default suite
# The Intel GPU stack as Debian sid ships it (its Packages index, cited in
# checks/vendor/intel.yaml):
# the Level Zero loader, the Intel Level Zero driver, the OpenCL ICD, the
# graphics compiler and gmmlib.
INTEL_STACK_PACKAGES = ("libze1", "libze-intel-gpu1", "intel-opencl-icd", "libigc2", "libigdgmm12")
# sid's Release file can carry a Valid-Until already past on a mirror.
APT_OPTS = "-o Acquire::Check-Valid-Until=false"
# The PATH Docker gives a container whose image sets none.
DOCKER_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


# One owner for the archive's address and its reachability: tests/lib.
debian_mirror = debian_archive.debian_mirror


def mirror_reachable(mirror, suite=SUITE):
    return debian_archive.mirror_reachable(mirror, suite)


def _need_root():
    for tool in ("debootstrap", "unshare", "chroot", "mknod"):
        if not shutil.which(tool):
            pytest.skip(f"{tool} is not installed (.ci/install-deps installs it)")
    if os.geteuid() != 0:
        pytest.skip("the container test needs root (mknod, mount namespaces, chroot)")


def _cached(name, build):
    """CACHE_DIR/name, made by build(work) -> a tarball under work on first
    use; a lock per name so two runs at once build it once."""
    tarball = CACHE_DIR / name
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    with open(CACHE_DIR / f".lock-{name}", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if tarball.exists():
            return tarball
        work = CACHE_DIR / f"tmp.{name}.{os.getpid()}"
        shutil.rmtree(work, ignore_errors=True)
        work.mkdir()
        try:
            os.rename(build(work), tarball)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        return tarball


def in_chroot(root, script, timeout=600):
    """script under /bin/sh in root: a chroot in new mount and pid
    namespaces, /proc mounted for it (gone with the namespace)."""
    env = {"PATH": DOCKER_PATH, "HOME": "/root", "LC_ALL": "C", "DEBIAN_FRONTEND": "noninteractive"}
    return subprocess.run(["unshare", "--mount", "--pid", "--fork", f"--mount-proc={root}/proc",
                           "chroot", str(root), "/bin/sh", "-c", script],
                          capture_output=True, text=True, env=env, timeout=timeout)


def rootfs_tarball(suite=SUITE):
    """The cached minbase tarball of suite, built on first use (about a minute)."""
    _need_root()
    arch = debfixture.native_arch()
    mirror = debian_mirror()
    key = hashlib.sha256(mirror.encode()).hexdigest()[:8]
    label = "debian12" if suite == "bookworm" else f"debian-{suite}"

    def build(work):
        ok, why = mirror_reachable(mirror, suite)
        if not ok:
            pytest.skip(f"debootstrap cannot reach the Debian archive {mirror} ({suite}): {why}")
        cmd = ["debootstrap", "--variant=minbase", f"--arch={arch}"]
        if Path("/usr/share/keyrings/debian-archive-keyring.gpg").exists():
            cmd.append("--keyring=/usr/share/keyrings/debian-archive-keyring.gpg")
        cmd += [suite, str(work / "root"), mirror]
        print(f"building the rootfs cache: {' '.join(cmd)}", file=sys.stderr)
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        assert r.returncode == 0, f"debootstrap failed although {mirror} answers:\n{r.stdout[-3000:]}{r.stderr[-2000:]}"
        subprocess.run(["tar", "--numeric-owner", "-C", str(work / "root"), "-cf", str(work / "rootfs.tar"), "."],
                       check=True)
        return work / "rootfs.tar"

    return _cached(f"{label}-minbase-{arch}-{key}.tar", build)


def intel_stack_root():
    """A tarball of a sid minbase root with INTEL_STACK_PACKAGES installed
    by apt inside it (cached; about two minutes on first use)."""
    base = rootfs_tarball("sid")
    mirror = debian_mirror()
    key = hashlib.sha256((base.name + " ".join(INTEL_STACK_PACKAGES)).encode()).hexdigest()[:8]

    def build(work):
        ok, why = mirror_reachable(mirror, "sid")
        if not ok:
            pytest.skip(f"apt cannot reach the Debian archive {mirror} (sid): {why}")
        root = work / "root"
        root.mkdir()
        subprocess.run(["tar", "--numeric-owner", "-C", str(root), "-xf", str(base)], check=True)
        if Path("/etc/resolv.conf").exists():  # the archive by name, as on the host
            (root / "etc" / "resolv.conf").unlink(missing_ok=True)
            shutil.copy(Path("/etc/resolv.conf").resolve(), root / "etc" / "resolv.conf")
        r = in_chroot(root, f"apt-get {APT_OPTS} -q update && "
                            f"apt-get {APT_OPTS} -q install -y --no-install-recommends "
                            f"{' '.join(INTEL_STACK_PACKAGES)} && apt-get clean && rm -rf /var/lib/apt/lists/*",
                      timeout=900)
        assert r.returncode == 0, f"apt-get install of the Intel stack failed:\n{r.stdout[-4000:]}\n{r.stderr[-3000:]}"
        (root / "etc" / "resolv.conf").unlink(missing_ok=True)
        subprocess.run(["tar", "--numeric-owner", "-C", str(root), "-cf", str(work / "rootfs.tar"), "."],
                       check=True)
        return work / "rootfs.tar"

    return _cached(f"debian-sid-intel-stack-{debfixture.native_arch()}-{key}.tar", build)
