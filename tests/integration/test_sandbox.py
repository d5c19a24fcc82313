"""The seccomp self-sandbox of `gpugate check`, seen from outside: strace
shows the filter loading before the first system file is read, the kernel
reports it, and --no-sandbox / GPUGATE_NO_SANDBOX=1 turn it off."""
import os
import re
import shutil
import subprocess

import pytest

from conftest import GPUGATE, dpkg_root, run_gpugate, spec_file, stanza

STRACE = shutil.which("strace")


def traced(tmp_path, *args, extra_env=None):
    root = dpkg_root(tmp_path, [stanza("libze1", "1.17.2-1")])
    spec = spec_file(tmp_path, "packages:\n  - libze1 (>= 1.8)\n")
    # LeakSanitizer (ASan builds) stops the world with ptrace, which a
    # process already traced by strace cannot do
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0", **(extra_env or {}))
    log = tmp_path / "strace.log"
    proc = subprocess.run([STRACE, "-f", "-o", str(log), "-e", "trace=seccomp,prctl,openat,clone,clone3",
                           GPUGATE, "check", "--spec", spec, "--root", str(root), *args],
                          capture_output=True, text=True, env=env, timeout=60)
    return proc, log.read_text()


@pytest.mark.skipif(not STRACE, reason="strace not installed")
def test_strace_shows_filter_before_system_files(tmp_path):
    proc, log = traced(tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "PR_SET_NO_NEW_PRIVS, 1" in log
    load = re.search(r"seccomp\(SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC\|SECCOMP_FILTER_FLAG_SPEC_ALLOW, "
                     r"\{len=\d+, filter=0x[0-9a-f]+\}\) = 0", log)
    assert load, log
    status = log.find("var/lib/dpkg/status")
    assert status > load.start(), "the dpkg status file was read before the filter loaded"
    # the spec (libyaml) is parsed under the filter too
    spec = log.find("spec.yaml")
    assert spec > load.start(), "the spec was read before the filter loaded"
    # Threads may start before the load (the deadline watchdog and the
    # packages group's workers, whose start overlaps it): they read nothing
    # until it is on, and TSYNC puts it on every thread of the process
    # (test_sandbox_threads.py reads each thread's Seccomp field). Before
    # it, nothing but the dynamic linker opens a file.
    assert re.search(r"clone3?\(.*CLONE_THREAD", log), log
    opened = re.findall(r'openat\([^"]*"([^"]+)"', log[:load.start()])
    assert opened and all(p == "/etc/ld.so.cache" or re.search(r"/lib[^/]*\.so[.0-9]*$", p) for p in opened), opened


@pytest.mark.skipif(not STRACE, reason="strace not installed")
@pytest.mark.parametrize("args,env", [(["--no-sandbox"], None), ([], {"GPUGATE_NO_SANDBOX": "1"})])
def test_sandbox_can_be_turned_off(tmp_path, args, env):
    proc, log = traced(tmp_path, *args, extra_env=env)
    assert proc.returncode == 0, proc.stderr
    assert "SECCOMP_SET_MODE_FILTER" not in log
    assert "var/lib/dpkg/status" in log


def test_garbage_switch_keeps_sandbox_and_verdict(tmp_path):
    root = dpkg_root(tmp_path, [stanza("libze1", "1.8.0-1")])
    spec = spec_file(tmp_path, "packages:\n  - libze1 (>= 1.17)\n")
    r = run_gpugate("--spec", spec, "--root", str(root), extra_env={"GPUGATE_NO_SANDBOX": "\x01yes"})
    assert r.rc == 1 and "libze1:amd64 1.8.0-1 is too old" in r.out, r
    assert "sandbox" not in r.err, r


def test_reports_are_written_inside_the_sandbox(tmp_path):
    root = dpkg_root(tmp_path, [stanza("libze1", "1.17.2-1")])
    spec = spec_file(tmp_path, "packages:\n  - libze1\n")
    out = tmp_path / "reports"
    out.mkdir()
    r = run_gpugate("--spec", spec, "--root", str(root), "--report", f"json:{out}/r.json",
                    "--report", f"prom:{out}/gpugate.prom")
    assert r.rc == 0 and r.err == "", r
    assert '"verdict": "pass"' in (out / "r.json").read_text()
    assert "gpugate_healthy 1" in (out / "gpugate.prom").read_text()
    assert sorted(os.listdir(out)) == ["gpugate.prom", "r.json"]


def test_help_names_the_switch():
    r = run_gpugate("--help")
    assert r.rc == 0 and "--no-sandbox" in r.out and "GPUGATE_NO_SANDBOX" in r.out


def test_own_filter_is_not_reported_as_the_containers(tmp_path):
    """system.seccomp and system.capabilities judge the container's filter,
    not the one gpugate loads on itself: the same verdicts either way."""
    def statuses(*args):
        r = run_gpugate("--profile", "ci", "--only", "system", "--format", "json", *args)
        return {c["id"]: (c["status"], c["summary"]) for c in r.json()["checks"]}, r
    sandboxed, r = statuses()
    plain, _ = statuses("--no-sandbox")
    assert sandboxed == plain, r
    assert r.check("system.seccomp")["details"]["gpugate_sandbox_filters"] == 1
