"""The Debian package installed as a user installs it: `apt-get install
./gpugate_VERSION_ARCH.deb` in a Debian 12 root (a copy of the debootstrap
root test_healthcheck_rootfs.py caches in build/rootfs-cache), apt fetching
the package's Depends from the Debian archive; then the installed
/usr/bin/gpugate runs there (chroot, in its own mount and pid namespaces with
a fresh /proc: gpugate finds gpugate-provision through /proc/self/exe), and
the package purges cleanly. And the package builds in a clean Debian 12
root from its Build-Depends alone (`apt-get build-dep` on the source).
Root only; skipped, saying why, offline."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "lib"))
sys.path.insert(0, str(Path(__file__).parent))
import debpackage  # noqa: E402
from rootfs import in_chroot as in_root  # noqa: E402
from test_healthcheck_rootfs import debian_mirror, mirror_reachable, rootfs_tarball  # noqa: E402

VERSION = debpackage.makefile_version()


def debian_root(work):
    """A fresh Debian 12 root under work, able to reach the archive."""
    tarball = rootfs_tarball()  # skips without root or debootstrap, or offline on first use
    mirror = debian_mirror()
    ok, why = mirror_reachable(mirror)
    if not ok:
        pytest.skip(f"apt cannot fetch packages: {mirror} is not reachable: {why}")
    root = work / "root"
    root.mkdir()
    subprocess.run(["tar", "--numeric-owner", "-C", str(root), "-xf", str(tarball)], check=True)
    assert (root / "dev" / "null").is_char_device(), "the cached root has no /dev/null"
    if Path("/etc/resolv.conf").exists():  # the archive by name, as on the host
        (root / "etc" / "resolv.conf").unlink(missing_ok=True)
        shutil.copy(Path("/etc/resolv.conf").resolve(), root / "etc" / "resolv.conf")
    return root


def deb_paths(deb):
    listing = subprocess.run(["dpkg-deb", "-c", str(deb)], capture_output=True, text=True, check=True).stdout
    return sorted(line.split()[-1] for line in listing.splitlines())


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    deb = debpackage.build_deb()
    work = tmp_path_factory.mktemp("deb-install")
    root = debian_root(work)
    shutil.copy2(deb, root / "tmp" / deb.name)
    r = in_root(root, "apt-get update -q && "
                      f"apt-get install -y -q --no-install-recommends /tmp/{deb.name} bash-completion",
                timeout=900)
    assert r.returncode == 0, f"apt-get install ./{deb.name} failed:\n{r.stdout[-4000:]}\n{r.stderr[-3000:]}"
    yield root
    shutil.rmtree(work, ignore_errors=True)  # a Debian root is ~200 MB


def test_dpkg_says_installed(installed):
    r = in_root(installed, "dpkg-query -W -f '${Status} ${Version}' gpugate")
    assert r.returncode == 0 and r.stdout == f"install ok installed {VERSION}", r
    r = in_root(installed, "dpkg -L gpugate")
    files = set(r.stdout.split())
    for path in ("/usr/bin/gpugate", "/usr/libexec/gpugate/gpugate-provision",
                 "/usr/share/man/man1/gpugate.1.gz", "/usr/share/bash-completion/completions/gpugate"):
        assert path in files, f"{path} not in dpkg -L gpugate:\n{r.stdout}"


def test_installed_gpugate_runs(installed):
    r = in_root(installed, "/usr/bin/gpugate --version")
    assert r.returncode == 0 and r.stdout.strip() == f"gpugate {VERSION}", r
    # no GPU, no /sys here: a verdict, not a crash (0 healthy, 1 unhealthy)
    r = in_root(installed, "gpugate check --profile healthcheck")
    assert r.returncode in (0, 1), r
    verdict = r.stdout.splitlines()[0]
    assert verdict.startswith("gpugate: HEALTHY" if r.returncode == 0 else "gpugate: UNHEALTHY"), r
    r = in_root(installed, "gpugate check --profile healthcheck --format json")
    assert r.returncode in (0, 1), r
    report = json.loads(r.stdout)
    assert report["version"] == VERSION and report["profile"] == "healthcheck", report


def test_installed_gpugate_finds_its_helper_in_usr_libexec(installed):
    r = in_root(installed, "gpugate hf where")
    assert r.returncode == 0, r
    # hf fetch is gpugate-provision's: found beside /usr/bin/gpugate's
    # ../libexec, and, from a copy elsewhere, in the configured PREFIX
    for prog in ("/usr/bin/gpugate", "/tmp/elsewhere/gpugate"):
        r = in_root(installed, f"mkdir -p /tmp/elsewhere && cp /usr/bin/gpugate /tmp/elsewhere/ && "
                               f"{prog} hf fetch --help")
        assert r.returncode == 0 and "usage" in (r.stdout + r.stderr).lower(), (prog, r)
    r = in_root(installed, "mv /usr/libexec/gpugate/gpugate-provision /tmp/p && "
                           "{ /tmp/elsewhere/gpugate hf fetch --help; echo rc=$?; }; "
                           "mv /tmp/p /usr/libexec/gpugate/gpugate-provision")
    assert "rc=3" in r.stdout and "/usr/libexec/gpugate" in r.stderr, r


def test_installed_completion_loads(installed):
    script = r'''source /usr/share/bash-completion/bash_completion
__load_completion gpugate || exit 9
COMP_WORDS=(gpugate --profile ""); COMP_CWORD=2; COMP_LINE="gpugate --profile "; COMP_POINT=18
_gpugate gpugate "" --profile
echo "${COMPREPLY[*]}"'''
    r = in_root(installed, f"bash --norc -c '{script}'")
    assert r.returncode == 0 and r.stdout.strip() == "healthcheck ci validate", r


def test_purge_removes_every_file(installed):
    r = in_root(installed, "apt-get purge -y -q gpugate")
    assert r.returncode == 0, r
    for path in ("usr/bin/gpugate", "usr/libexec/gpugate", "usr/share/doc/gpugate", "usr/share/gpugate",
                 "usr/share/man/man1/gpugate.1.gz", "usr/share/bash-completion/completions/gpugate"):
        assert not os.path.lexists(installed / path), f"{path} left after purge"


def test_builds_from_its_build_depends_alone(tmp_path):
    """debian/control's Build-Depends are enough: a clean root gets exactly
    them (apt-get build-dep on the source folder, plus build-essential, which
    Debian assumes) and builds a package with the same files."""
    deb = debpackage.build_deb()
    root = debian_root(tmp_path)
    src = root / "tmp" / f"gpugate-{VERSION}"
    # the source as make deb copies it (debian/changelog written there)
    shutil.copytree(REPO / "build" / "deb" / f"gpugate-{VERSION}", src, symlinks=True,
                    ignore=shutil.ignore_patterns("build"))
    try:
        r = in_root(root, f"apt-get update -q && apt-get install -y -q --no-install-recommends build-essential && "
                          f"apt-get build-dep -y -q --no-install-recommends /tmp/gpugate-{VERSION}", timeout=1200)
        assert r.returncode == 0, f"apt-get build-dep failed:\n{r.stdout[-4000:]}\n{r.stderr[-3000:]}"
        r = in_root(root, f"cd /tmp/gpugate-{VERSION} && DEB_BUILD_OPTIONS=parallel=2 dpkg-buildpackage -b -us -uc",
                    timeout=1200)
        assert r.returncode == 0, f"dpkg-buildpackage in a clean root failed:\n{r.stdout[-5000:]}\n{r.stderr[-3000:]}"
        built = root / "tmp" / deb.name
        assert built.is_file(), r.stdout[-3000:]
        assert deb_paths(built) == deb_paths(deb)
    finally:
        shutil.rmtree(root, ignore_errors=True)
