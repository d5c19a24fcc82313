"""Every thread of a check run is under the seccomp filter (SECURITY.md): the
watchdog starts before the filter is loaded (src/main.c, so that its start
overlaps the load) and gets it from the load's TSYNC (src/lib/sandbox.c);
the runner's second thread starts after it and inherits it."""
import glob
import os
import subprocess
import time

from conftest import GPUGATE, STATE_DIR, dpkg_root, hang_open_env, spec_file, stanza

PKG_SPEC = "packages:\n  - libze1 (>= 1.8)\nsystem:\n  kernel_log: false\n"


def thread_status(pid):
    """Each thread's /proc status fields, by thread id."""
    out = {}
    for task in glob.glob(f"/proc/{pid}/task/*"):
        try:
            with open(os.path.join(task, "status")) as f:
                lines = f.read().splitlines()
        except FileNotFoundError:
            continue  # ended meanwhile
        out[os.path.basename(task)] = dict(line.split(":\t", 1) for line in lines if ":\t" in line)
    return out


def test_every_thread_is_under_the_filter_the_watchdog_too(tmp_path):
    """A run held inside the packages check (its status file's open never
    returns: hang_open_env) has its watchdog and its second share running:
    each thread is in seccomp filter mode (2) with no new privileges."""
    root = dpkg_root(tmp_path, [stanza("libze1", "1.9.0-1")])
    spec = spec_file(tmp_path, PKG_SPEC)
    env = dict(os.environ, XDG_RUNTIME_DIR=STATE_DIR, **hang_open_env("/var/lib/dpkg/status"))
    env.pop("GPUGATE_NO_SANDBOX", None)
    proc = subprocess.Popen([GPUGATE, "--spec", spec, "--root", str(root), "--deadline", "3",
                             "--only", "packages,system.sysfs"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        seen = {}
        until = time.monotonic() + 2.5
        while time.monotonic() < until and len(seen) < 2:
            time.sleep(0.05)
            seen.update(thread_status(proc.pid))
        assert len(seen) >= 2, f"the watchdog thread was never seen: {seen}"
        for tid, st in seen.items():
            assert st.get("Seccomp") == "2", (tid, st.get("Seccomp"))
            assert st.get("NoNewPrivs") == "1", (tid, st.get("NoNewPrivs"))
    finally:
        rc = proc.wait(timeout=10)
        err = proc.stderr.read()
    assert rc == 1, (rc, err)  # the deadline ended it, the packages check timed out
