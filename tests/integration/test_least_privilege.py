"""Least privilege: the packages group's integration tests, run again with
gpugate as uid/gid 65534 (nobody, no groups) through setpriv, must pass
with the same verdicts (exit codes, in order) as when gpugate runs as root."""
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

from conftest import GPUGATE

HERE = os.path.dirname(os.path.abspath(__file__))

WRAPPER = """#!/bin/sh
# logs each verdict, then runs gpugate (as USER when set)
log="$GPUGATE_VERDICT_LOG"
if [ -n "$GPUGATE_AS_UID" ]; then
	setpriv --reuid "$GPUGATE_AS_UID" --regid "$GPUGATE_AS_UID" --clear-groups "$GPUGATE_REAL" "$@"
else
	"$GPUGATE_REAL" "$@"
fi
rc=$?
echo "$rc" >> "$log"
exit $rc
"""


def run_packages_tests(tmp_path, uid):
    tag = "nobody" if uid else "root"
    wrapper = tmp_path / f"gpugate-{tag}"
    wrapper.write_text(WRAPPER)
    wrapper.chmod(0o755)
    log = tmp_path / f"verdicts-{tag}.log"
    # pytest's own temp folders are 0700 under root's: use one others can enter
    scratch = tempfile.mkdtemp(prefix=f"gpugate-lp-{tag}-")
    os.chmod(scratch, 0o755)
    base = os.path.join(scratch, "base")
    env = dict(os.environ, GPUGATE=str(wrapper), GPUGATE_REAL=os.path.abspath(GPUGATE),
               GPUGATE_VERDICT_LOG=str(log), PYTHONPATH=HERE)
    if uid:
        env["GPUGATE_AS_UID"] = str(uid)
    os.chmod(tmp_path, 0o755)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "least_privilege_plugin",
                           "--basetemp", base, "-p", "no:cacheprovider",
                           os.path.join(HERE, "test_packages.py")],
                          capture_output=True, text=True, env=env, timeout=120, cwd=HERE)
    shutil.rmtree(scratch, ignore_errors=True)
    verdicts = [line.split()[0] for line in log.read_text().splitlines()] if log.exists() else []
    return proc, verdicts


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"),
                    reason="needs root and setpriv to switch to uid 65534")
def test_packages_group_as_nobody_matches_root(tmp_path):
    as_root, root_verdicts = run_packages_tests(tmp_path, 0)
    assert as_root.returncode == 0, as_root.stdout[-3000:]
    as_nobody, nobody_verdicts = run_packages_tests(tmp_path, 65534)
    assert as_nobody.returncode == 0, as_nobody.stdout[-3000:]
    assert len(root_verdicts) >= 20, root_verdicts
    assert nobody_verdicts == root_verdicts
    # both exit codes occur, so the comparison means something
    assert {"0", "1"} <= set(root_verdicts), root_verdicts


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"),
                    reason="needs root and setpriv to switch to uid 65534")
def test_the_switch_really_drops_root(tmp_path):
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    os.chmod(tmp_path, 0o755)
    proc = subprocess.run(["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups",
                           os.path.abspath(GPUGATE), "--root", str(private)],
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 3 and "Permission denied" in proc.stderr, proc.stderr
