"""Fleet outputs: node-feature-discovery labels and the Prometheus textfile,
both written to a hidden temp file in the same folder and renamed."""
import os
import re
import shutil
import subprocess

import pytest

from conftest import GPUGATE, dpkg_root, run_gpugate, spec_file, stanza


def fixture_root(tmp_path, version):
    root = dpkg_root(tmp_path, [stanza("libze1", version)])
    spec = spec_file(tmp_path, "packages:\n  - libze1 (>= 1.17)\n")
    features = tmp_path / "features.d"
    features.mkdir()
    return root, spec, features


@pytest.mark.parametrize("version,rc,healthy", [("1.17.2-1", 0, "true"), ("1.8.0-1", 1, "false")])
def test_nfd_labels(tmp_path, version, rc, healthy):
    root, spec, features = fixture_root(tmp_path, version)
    path = features / "gpugate"
    r = run_gpugate("--spec", spec, "--root", str(root), "--report", f"nfd:{path}")
    assert r.rc == rc, r
    assert path.read_text() == f"gpugate.healthy={healthy}\ngpugate.profile=ci\n"
    assert os.listdir(features) == ["gpugate"]  # no temp file left behind
    # stdout too, for a wrapper script that places the file itself
    r = run_gpugate("--spec", spec, "--root", str(root), "--format", "nfd", "--profile", "healthcheck")
    assert r.rc == rc and r.out.startswith(f"gpugate.healthy={healthy}\n"), r


@pytest.mark.skipif(not shutil.which("strace"), reason="strace not installed")
def test_nfd_writes_a_dot_file_then_renames(tmp_path):
    root, spec, features = fixture_root(tmp_path, "1.17.2-1")
    log = tmp_path / "strace.log"
    proc = subprocess.run(["strace", "-f", "-o", str(log), "-e", "trace=openat,rename,renameat2",
                           GPUGATE, "--spec", spec, "--root", str(root),
                           "--report", f"nfd:{features}/gpugate"], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, ASAN_OPTIONS="detect_leaks=0"))  # LSan cannot ptrace under strace
    assert proc.returncode == 0, proc.stderr
    trace = log.read_text()
    assert f'openat(AT_FDCWD, "{features}/.gpugate.' in trace, trace
    # a new file is put in place with renameat2(RENAME_NOREPLACE), a present one with rename (lib/safe_io.c)
    assert re.search(r'rename(at2)?\((AT_FDCWD, )?"%s/\.gpugate\.[^"]*", (AT_FDCWD, )?"%s/gpugate"(, RENAME_NOREPLACE)?\) = 0'
                     % (re.escape(str(features)), re.escape(str(features))), trace), trace


def test_prom_textfile(tmp_path):
    root, spec, features = fixture_root(tmp_path, "1.8.0-1")
    r = run_gpugate("--spec", spec, "--root", str(root), "--report", f"prom:{features}/gpugate.prom")
    assert r.rc == 1
    text = (features / "gpugate.prom").read_text()
    assert 'gpugate_check_passed{id="packages.installed"} 0' in text
    assert "gpugate_healthy 0" in text
    assert os.listdir(features) == ["gpugate.prom"]
    promtool = shutil.which("promtool")
    if promtool:
        p = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True)
        assert p.returncode == 0, p.stdout + p.stderr


def test_unwritable_report_folder_is_named(tmp_path):
    root, spec, _ = fixture_root(tmp_path, "1.17.2-1")
    r = run_gpugate("--spec", spec, "--root", str(root), "--report", f"nfd:{tmp_path}/missing/gpugate")
    assert r.rc == 3, r
    assert f"cannot write the nfd report to {tmp_path}/missing/gpugate: No such file or directory" in r.err
