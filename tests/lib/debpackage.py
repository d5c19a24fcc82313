"""The Debian package under test: `make deb` (Makefile) builds it, once per
source change, as build/gpugate_VERSION_ARCH.deb; VERSION is read from the
Makefile, the only place it is written."""
import os
import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def makefile_version():
    m = re.search(r"^VERSION\s*:?=\s*(\S+)\s*$", (REPO / "Makefile").read_text(), re.M)
    assert m, "no VERSION := line in the Makefile"
    return m.group(1)


def native_arch():
    return subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True,
                          check=True).stdout.strip()


def build_deb():
    """Runs `make deb` with the default BUILD (the caller may be a make run
    with BUILD=build/asan SANITIZE=1: its flags are not passed on, so the
    package is built once, as a user builds it) and returns the .deb's path."""
    # make puts its command line's variables (BUILD=build/asan SANITIZE=1) in
    # the environment of its recipes too, so they are dropped here as well.
    dropped = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "BUILD", "SANITIZE", "FUZZ", "CC", "CFLAGS", "LDFLAGS")
    env = {k: v for k, v in os.environ.items() if k not in dropped}
    r = subprocess.run(["make", "-C", str(REPO), "--no-print-directory", "deb"], env=env,
                       capture_output=True, text=True, timeout=1200)
    assert r.returncode == 0, f"make deb failed ({r.returncode}):\n{r.stdout[-4000:]}\n{r.stderr[-4000:]}"
    deb = REPO / "build" / f"gpugate_{makefile_version()}_{native_arch()}.deb"
    assert deb.is_file(), f"make deb succeeded but {deb} is not there:\n{r.stdout[-2000:]}"
    return deb
