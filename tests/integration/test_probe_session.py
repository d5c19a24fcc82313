"""The probe session (src/backend/session.c) schedules one child per device
that enumerates and then smokes, not an enumeration child beside them: counted
with strace (execve of `gpugate probe`), against the fake Level Zero driver.
The first round starts a child for every GPU node passed in (here plain files
named renderD* under --root), so those start together; devices the node count
missed start in a second round, after the first child has enumerated."""
import os
import re
import shutil
import subprocess

import pytest

from conftest import GPUGATE, write

FAKE = os.environ.get("GPUGATE_FAKE_ZE") or os.path.join(os.path.dirname(GPUGATE), "fakes", "libze_fake.so")
FAKE_CUDA = os.path.join(os.path.dirname(GPUGATE), "tests", "fake_cuda")

pytestmark = pytest.mark.skipif(not shutil.which("strace"), reason="strace not installed")


def traced(tmp_path, devices, smoke=True, root=None, backend="level-zero", visible=None, rc=0):
    spec = write(str(tmp_path / "spec.yaml"),
                 "runtime:\n  backend: %s\n  smoke: %s\n" % (backend, "true" if smoke else "false"))
    env = dict(os.environ, ZE_ENABLE_ALT_DRIVERS=FAKE, GPUGATE_FAKE_DEVICES=str(devices),
               XDG_RUNTIME_DIR=str(tmp_path))
    env.pop("GPUGATE_FAKE_FAULT", None)
    env.pop("CUDA_VISIBLE_DEVICES", None)
    if backend == "cuda":
        env.update(LD_LIBRARY_PATH=FAKE_CUDA, FAKE_CUDA_DEVICES=str(devices))
        if visible is not None:
            env["CUDA_VISIBLE_DEVICES"] = visible
    # LeakSanitizer cannot run under ptrace (the sanitizer build of make test)
    env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":detect_leaks=0").lstrip(":")
    log = tmp_path / "strace.txt"
    args = ["strace", "-f", "-qq", "-e", "trace=execve,exit_group", "-o", str(log), GPUGATE, "check", "--spec", spec,
            "--only", "runtime", "--no-sandbox", "--format", "json"]
    if root:
        args += ["--root", str(root)]
        # under --root the loader comes from the root or, named on purpose, LD_LIBRARY_PATH
        if backend == "level-zero":
            env["LD_LIBRARY_PATH"] = "/usr/lib/x86_64-linux-gnu"
    r = subprocess.run(args, capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == rc, r.stdout + r.stderr
    events = []
    for line in log.read_text().splitlines():
        m = re.match(r"(\d+) +(execve|exit_group)\((.*)", line)
        if m and m.group(2) == "execve" and '"probe"' in m.group(3):
            events.append(("start", m.group(1), m.group(3)))
        elif m and m.group(2) == "exit_group":
            events.append(("exit", m.group(1), ""))
    starts = [e for e in events if e[0] == "start"]
    probe_pids = {e[1] for e in starts}
    return events, starts, probe_pids


@pytest.mark.parametrize("devices", [1, 3])
def test_one_child_per_device(tmp_path, devices):
    _, starts, _ = traced(tmp_path, devices)
    assert len(starts) == devices, starts
    for d, (_, _, args) in enumerate(sorted(starts, key=lambda s: re.search(r'"--device", "(\d+)"', s[2]).group(1))):
        assert '"--device", "%d"' % d in args and '"--smoke"' in args, args


def test_without_smoke_one_child_enumerates(tmp_path):
    _, starts, _ = traced(tmp_path, 3, smoke=False)
    assert len(starts) == 1 and '"--device"' not in starts[0][2], starts


def test_every_node_passed_in_starts_at_once(tmp_path):
    root = tmp_path / "root"
    for n in (128, 129, 130):
        write(str(root / "dev" / "dri" / ("renderD%d" % n)), "")
    events, starts, pids = traced(tmp_path, 3, root=root)
    assert len(starts) == 3, starts
    first_exit = next(i for i, e in enumerate(events) if e[0] == "exit" and e[1] in pids)
    assert all(events.index(s) < first_exit for s in starts), events


def test_devices_the_nodes_missed_start_after_the_enumeration(tmp_path):
    events, starts, pids = traced(tmp_path, 3)  # no render node under this machine's /dev/dri counts
    if os.path.isdir("/dev/dri") and any(n.startswith("renderD") for n in os.listdir("/dev/dri")):
        pytest.skip("this machine has render nodes: the first round is not one child")
    first_exit = next(i for i, e in enumerate(events) if e[0] == "exit" and e[1] in pids)
    assert events.index(starts[0]) < first_exit < events.index(starts[1]), events


@pytest.mark.parametrize("visible,children", [(None, 4), ("0", 1), ("0,2", 2), ("", 1), ("3,1,0,2", 4), ("0,0", 1)])
def test_cuda_children_are_capped_by_cuda_visible_devices(tmp_path, visible, children):
    """Four /dev/nvidiaN nodes passed in: a child for each, but no more than
    CUDA_VISIBLE_DEVICES has entries. On a 4-GPU H100 host
    CUDA_VISIBLE_DEVICES=0 started four children that all initialized GPU 0
    (the check took 1.7 x the bare driver program instead of about 1.1 x)."""
    root = tmp_path / "root"
    for name in ("nvidia0", "nvidia1", "nvidia2", "nvidia3", "nvidiactl", "nvidia-uvm"):
        write(str(root / "dev" / name), "")
    # an empty value, or one GPU named twice, hides every GPU: the one child
    # reports it, the check fails (the devices check reads the variable with
    # the same parser, src/vendor/cuda_visible.c)
    _, starts, _ = traced(tmp_path, 4, root=root, backend="cuda", visible=visible,
                          rc=1 if visible in ("", "0,0") else 0)
    assert len(starts) == children, starts
