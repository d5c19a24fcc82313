"""The Debian 12 minbase root filesystem the container tests start from:
debootstrap from Debian's archive (the mirror this machine's apt uses),
cached as build/rootfs-cache/*.tar. images.py imports it as debian:12."""
import fcntl
import glob
import hashlib
import os
import re
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "lib"))
import debfixture  # noqa: E402

CACHE_DIR = REPO / "build" / "rootfs-cache"
SUITE = "bookworm"  # Debian 12
# The PATH Docker gives a container whose image sets none.
DOCKER_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def debian_mirror():
    """The Debian archive this machine's apt is configured with (one-line and
    deb822 sources), or deb.debian.org where it has none (an Ubuntu runner)."""
    if os.environ.get("GPUGATE_DEBIAN_MIRROR"):
        return os.environ["GPUGATE_DEBIAN_MIRROR"]
    files = ["/etc/apt/sources.list"] + sorted(glob.glob("/etc/apt/sources.list.d/*.list"))
    for path in files:
        try:
            lines = Path(path).read_text().splitlines()
        except OSError:
            continue
        for line in lines:
            words = re.sub(r"\[[^]]*\]", "", line.split("#")[0]).split()
            if len(words) >= 4 and words[0] == "deb" and words[2] == SUITE and "main" in words[3:]:
                return words[1]
    for path in sorted(glob.glob("/etc/apt/sources.list.d/*.sources")):
        try:
            text = Path(path).read_text()
        except OSError:
            continue
        for stanza in re.split(r"\n\s*\n", text):
            fields = {}
            for line in stanza.splitlines():
                m = re.match(r"^([A-Za-z-]+):\s*(.*)$", line)
                if m:
                    fields[m.group(1).lower()] = m.group(2).split()
            if ("deb" in fields.get("types", []) and SUITE in fields.get("suites", [])
                    and "main" in fields.get("components", []) and fields.get("uris")):
                return fields["uris"][0]
    return "http://deb.debian.org/debian"


def mirror_reachable(mirror):
    try:
        with urllib.request.urlopen(f"{mirror.rstrip('/')}/dists/{SUITE}/Release", timeout=20) as r:
            return r.status == 200 and b"Codename: bookworm" in r.read(4096), f"HTTP {r.status}"
    except Exception as e:  # any network failure means: cannot reach it
        return False, str(e)


def rootfs_tarball():
    """The cached minbase tarball, built on first use (about a minute)."""
    for tool in ("debootstrap", "unshare", "chroot", "mknod"):
        if not shutil.which(tool):
            pytest.skip(f"{tool} is not installed (.ci/install-deps installs it)")
    if os.geteuid() != 0:
        pytest.skip("the container test needs root (mknod, mount namespaces, chroot)")
    arch = debfixture.native_arch()
    mirror = debian_mirror()
    key = hashlib.sha256(mirror.encode()).hexdigest()[:8]
    tarball = CACHE_DIR / f"debian12-minbase-{arch}-{key}.tar"
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    with open(CACHE_DIR / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two runs at once build it once
        if tarball.exists():
            return tarball
        ok, why = mirror_reachable(mirror)
        if not ok:
            pytest.skip(f"debootstrap cannot reach the Debian archive {mirror}: {why}")
        work = CACHE_DIR / f"tmp.{os.getpid()}"
        shutil.rmtree(work, ignore_errors=True)
        cmd = ["debootstrap", "--variant=minbase", f"--arch={arch}"]
        if Path("/usr/share/keyrings/debian-archive-keyring.gpg").exists():
            cmd.append("--keyring=/usr/share/keyrings/debian-archive-keyring.gpg")
        cmd += [SUITE, str(work / "root"), mirror]
        print(f"building the rootfs cache: {' '.join(cmd)}", file=sys.stderr)
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        assert r.returncode == 0, f"debootstrap failed although {mirror} answers:\n{r.stdout[-3000:]}{r.stderr[-2000:]}"
        subprocess.run(["tar", "--numeric-owner", "-C", str(work / "root"), "-cf", str(work / "rootfs.tar"), "."],
                       check=True)
        os.rename(work / "rootfs.tar", tarball)
        shutil.rmtree(work)
        return tarball
