"""The CUDA backend against a fault-injecting stand-in libcuda.so.1
(tests/fakes/fake_libcuda.c) and against no driver at all: stage lines,
result JSON, error names and fixes, CUDA_VISIBLE_DEVICES, the finite sync
wait, and that a hang or crash leaves the last stage on the channel.

Driven by build/tests/cuda_probe (the backend in-process, channel on stdout)
and, where the binary has it, by the real probe child `gpugate probe`."""
import json
import os
import re
import shutil
import signal
import subprocess
import time

import pytest

from report_oracles import finding_texts

GPUGATE = os.environ.get("GPUGATE", "build/gpugate")
BUILD = os.path.dirname(os.path.abspath(GPUGATE))
CUDA_PROBE = os.path.join(BUILD, "tests", "cuda_probe")
FAKE_DIR = os.path.join(BUILD, "tests", "fake_cuda")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def has_probe_subcommand():
    r = subprocess.run([GPUGATE, "probe", "--backend", "cuda", "--fd", "1"],
                       capture_output=True, text=True, timeout=30,
                       env=dict(os.environ, LD_LIBRARY_PATH="/nonexistent"))
    return "result " in r.stdout


DRIVERS = ["cuda_probe"] + (["gpugate-probe"] if has_probe_subcommand() else [])


def command(driver, device=0, smoke=True, extra=()):
    if driver == "cuda_probe":
        cmd = [CUDA_PROBE, "--device", str(device)]
        if not smoke:
            cmd.append("--no-smoke")
    else:
        cmd = [GPUGATE, "probe", "--backend", "cuda", "--fd", "1"]
        if device >= 0:
            cmd += ["--device", str(device)]
        if smoke:
            cmd.append("--smoke")
    return cmd + list(extra)


def fail_rc(driver):
    return 1 if driver == "cuda_probe" else 3


def env_with(fault=None, libdir=FAKE_DIR, **extra):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("FAKE_CUDA_", "CUDA_VISIBLE_DEVICES"))}
    env["LD_LIBRARY_PATH"] = libdir
    if fault:
        env["FAKE_CUDA_FAULT"] = fault
    env.update(extra)
    return env


def run(driver, fault=None, timeout=30, device=0, smoke=True, extra=(), **env):
    r = subprocess.run(command(driver, device, smoke, extra), capture_output=True, text=True,
                       timeout=timeout, env=env_with(fault, **env))
    lines = r.stdout.splitlines()
    stages = [line.split()[1:] for line in lines if line.startswith("stage ")]
    results = [json.loads(line[7:]) for line in lines if line.startswith("result ")]
    assert len(results) == 1, r.stdout + r.stderr
    assert lines[-1].startswith("result "), "the result is the last line"
    return r.returncode, stages, results[0]


@pytest.mark.parametrize("driver", DRIVERS)
def test_smoke_passes_on_fake_gpu(driver):
    rc, stages, res = run(driver)
    assert rc == 0, res
    assert res["ok"] is True and res["backend"] == "cuda"
    assert [s[0] for s in stages] == ["loader", "init", "drivers", "devices", "devices", "context",
                                      "memory", "module", "launch", "sync", "verify"]
    assert stages[3] == ["devices"] and stages[4] == ["devices", "0"]
    assert stages[5] == ["context", "0000:1a:00.0"], "stages name the device by PCI address"
    assert res["driver_version"] == "12.4"
    assert res["library"] == os.path.realpath(os.path.join(FAKE_DIR, "libcuda.so.1"))
    dev, = res["devices"]
    assert dev["name"] == "Fake GPU 0" and dev["compute"] == "9.0"
    assert re.fullmatch(r"GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", dev["uuid"])
    assert dev["memory_free"] < dev["memory_total"] == 80 << 30
    assert dev["smoke"] == {"ok": True, "elements": 1 << 20, "mismatches": 0}
    for stage in ("context", "memory", "module", "launch", "sync", "verify"):
        assert dev["timings_ms"][stage] >= 0


@pytest.mark.parametrize("driver", DRIVERS)
def test_no_driver_fails_cleanly(driver, tmp_path):
    if subprocess.run("ldconfig -p | grep -q 'libcuda.so.1 '", shell=True).returncode == 0:
        pytest.skip("a real libcuda.so.1 is installed here")
    rc, stages, res = run(driver, libdir=str(tmp_path))
    assert rc == fail_rc(driver)
    assert stages == [["loader"]]
    assert res["ok"] is False and res["stage"] == "loader" and res["error"] == "LIBRARY_NOT_FOUND"
    assert "CUDA driver libcuda.so.1 not found" in res["message"]
    assert "--gpus all" in res["message"]


@pytest.mark.parametrize("fault,stage,error,words,driver", [
    ("no_device", "init", "CUDA_ERROR_NO_DEVICE", "--gpus all", "cuda_probe"),
    ("zero_devices", "devices", "CUDA_ERROR_NO_DEVICE", "CUDA_VISIBLE_DEVICES", "cuda_probe"),
    ("launch_error", "launch", "CUDA_ERROR_LAUNCH_FAILED", "Xid", "cuda_probe"),
    ("old_ptx", "module", "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", "upgrade the NVIDIA driver", "cuda_probe"),
    ("oom", "memory", "CUDA_ERROR_OUT_OF_MEMORY", "another process", "cuda_probe"),
] + [("launch_error", "launch", "CUDA_ERROR_LAUNCH_FAILED", "Xid", d) for d in DRIVERS[1:]])
def test_driver_errors_are_named_with_a_fix(fault, stage, error, words, driver):
    rc, stages, res = run(driver, fault)
    assert rc == fail_rc(driver)
    assert res["ok"] is False
    assert res["stage"] == stage and res["error"] == error, res
    assert words in res["message"]
    assert stages[-1][0] == stage, "the failing stage is the last one entered"


def test_wrong_result_names_the_first_bad_element():
    rc, stages, res = run("cuda_probe", "wrong_result")
    assert rc == 1
    assert res["stage"] == "verify" and res["error"] == "WRONG_RESULT"
    smoke = res["devices"][0]["smoke"]
    assert smoke == {"ok": False, "elements": 1 << 20, "mismatches": 1, "first_bad_index": 12345}
    assert "index 12345" in res["message"]


def test_sync_wait_is_finite():
    start = time.monotonic()
    rc, stages, res = run("cuda_probe", "hang_sync", extra=["--sync-timeout", "0.3"])
    elapsed = time.monotonic() - start
    assert rc == 1
    assert res["stage"] == "sync" and res["error"] == "TIMEOUT"
    assert "within 300 ms" in res["message"]
    assert elapsed < 5


def stream_until_killed(cmd, env, wait_s):
    """Runs cmd, kills it after wait_s if still running; returns (rc, lines)."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env, start_new_session=True)
    try:
        out, _ = p.communicate(timeout=wait_s)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
    return p.returncode, out.splitlines()


def test_hang_in_init_leaves_the_stage_for_the_watchdog():
    rc, lines = stream_until_killed(command("cuda_probe"), env_with("hang_init"), 1.5)
    assert rc == -signal.SIGKILL
    assert lines == ["stage loader", "stage init"], "no result; the last stage is init"


def test_crash_in_init_leaves_the_stage():
    # under ASan the sanitizer would catch the signal; let it kill the process as in production
    env = env_with("crash_init", ASAN_OPTIONS="handle_segv=0")
    rc, lines = stream_until_killed(command("cuda_probe"), env, 20)
    assert rc == -signal.SIGSEGV
    assert lines[-1] == "stage init"
    assert not any(line.startswith("result ") for line in lines)


@pytest.mark.parametrize("visible,count,ok,pci", [
    ("", 2, False, None),
    ("5", 2, False, None),
    ("1", 2, True, "0000:1b:00.0"),
    ("1,0", 2, True, "0000:1b:00.0"),
])
def test_cuda_visible_devices_is_honoured_and_reported(visible, count, ok, pci):
    rc, stages, res = run("cuda_probe", CUDA_VISIBLE_DEVICES=visible, FAKE_CUDA_DEVICES=str(count))
    assert res["cuda_visible_devices"] == visible
    assert res["ok"] is ok and rc == (0 if ok else 1)
    if ok:
        assert res["devices"][0]["pci"] == pci and res["devices"][0]["index"] == 0
    else:
        assert res["error"] == "CUDA_ERROR_NO_DEVICE"
        assert f'CUDA_VISIBLE_DEVICES="{visible}" is set' in res["message"]


def test_enumerate_all_devices_without_smoke():
    rc, stages, res = run("cuda_probe", device=-1, smoke=False, FAKE_CUDA_DEVICES="3")
    assert rc == 0
    assert res["device_count"] == 3
    assert [d["pci"] for d in res["devices"]] == ["0000:1a:00.0", "0000:1b:00.0", "0000:1c:00.0"]
    assert all("smoke" not in d and "memory_free" not in d for d in res["devices"])
    assert "context" not in [s[0] for s in stages], "enumeration creates no context"


def test_device_index_past_the_count():
    rc, stages, res = run("cuda_probe", device=2)
    assert rc == 1
    assert res["error"] == "CUDA_ERROR_INVALID_DEVICE"
    assert "device 2 was asked for, but the driver sees 1 GPU" in res["message"]


def test_telemetry_without_nvml_says_why():
    if subprocess.run("ldconfig -p | grep -q 'libnvidia-ml.so.1 '", shell=True).returncode == 0:
        pytest.skip("a real libnvidia-ml.so.1 is installed here")
    rc, stages, res = run("cuda_probe", extra=["--telemetry"])
    assert rc == 0
    tele = res["devices"][0]["telemetry"]
    assert tele["nvml"].startswith("not loaded (libnvidia-ml.so.1")
    assert "kernel log" in tele["xid"]
    assert stages[-1] == ["telemetry", "0000:1a:00.0"]


def test_embedded_ptx_is_the_checked_in_kernel():
    ptx = open(os.path.join(ROOT, "src", "kernels", "smoke.ptx"), "rb").read()
    assert b".visible .entry smoke(" in ptx and b".version 6.3" in ptx
    assert ptx in open(GPUGATE, "rb").read(), "build/gpugate embeds src/kernels/smoke.ptx"


def test_checked_in_ptx_is_valid_where_ptxas_exists():
    ptxas = shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"
    if not os.access(ptxas, os.X_OK):
        pytest.skip("no ptxas here (CUDA toolkit not installed)")
    r = subprocess.run([ptxas, "-arch=sm_75", "-o", "/dev/null",
                        os.path.join(ROOT, "src", "kernels", "smoke.ptx")], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_bench_skips_cleanly_without_a_gpu(tmp_path):
    env = env_with(libdir=str(tmp_path), GPUGATE=GPUGATE)
    r = subprocess.run(["sh", os.path.join(ROOT, "tests", "bench", "cuda.sh")], capture_output=True,
                       text=True, env=env, cwd=ROOT, timeout=60)
    assert r.returncode == 0, r.stderr
    assert "cuda bench: skipped: no usable GPU" in r.stdout
    assert "libcuda.so.1 not found" in r.stdout


# 79GiB: exactly what is free is enough (the boundary a mutation audit found untested)
@pytest.mark.parametrize("minimum,ok", [("70GiB", True), ("79GiB", True), ("79.5GiB", False)])
def test_check_enforces_min_free_memory_from_the_smoke_probe(tmp_path, minimum, ok):
    """The fake driver reports 79 GiB free of 80 through cuMemGetInfo, which
    needs a context: only the smoke probe has one, and its figure must count."""
    if "gpugate-probe" not in DRIVERS:
        pytest.skip("this gpugate has no probe child")
    spec = tmp_path / "cuda.yaml"
    spec.write_text(f"runtime:\n  backend: cuda\n  smoke: true\n  min_free_memory: {minimum}\n")
    r = subprocess.run([GPUGATE, "check", "--spec", str(spec), "--format", "json", "--deadline", "20"],
                       capture_output=True, text=True, timeout=60, env=env_with())
    doc = json.loads(r.stdout)
    mem = next(c for c in doc["checks"] if c["id"] == "runtime.memory")
    assert (r.returncode == 0) == ok, r.stdout + r.stderr
    assert mem["status"] == ("pass" if ok else "fail"), mem
    if not ok:
        assert "79.0 GiB free, the spec wants 79.5 GiB free" in mem["summary"], mem


def test_min_free_memory_is_checked_on_every_gpu(tmp_path):
    """Each CUDA smoke child lists only its own device: the free memory of GPU
    1 must come from GPU 1's child, not fall back to its total."""
    if "gpugate-probe" not in DRIVERS:
        pytest.skip("this gpugate has no probe child")
    spec = tmp_path / "cuda.yaml"
    spec.write_text("runtime:\n  backend: cuda\n  smoke: true\n  min_free_memory: 79.5GiB\n")
    r = subprocess.run([GPUGATE, "check", "--spec", str(spec), "--format", "json", "--deadline", "20"],
                       capture_output=True, text=True, timeout=60, env=env_with(FAKE_CUDA_DEVICES="2"))
    mem = next(c for c in json.loads(r.stdout)["checks"] if c["id"] == "runtime.memory")
    assert r.returncode == 1 and mem["status"] == "fail", mem
    findings = finding_texts(mem)
    for d in (0, 1):
        assert any(f.startswith(f"device {d} (Fake GPU {d}, 0000:{0x1a + d:02x}:00.0): 79.0 GiB free, "
                                "the spec wants 79.5 GiB free") for f in findings), findings
    assert not any("Sysman" in f for f in findings), findings


def test_only_the_busy_gpu_fails_min_free_memory_named_by_index_and_pci(tmp_path):
    """Of four GPUs, the second is held by another process (8 GiB free, as
    seen on a real multi-GPU host with a cuMemAlloc of 90%): runtime.memory
    fails naming that one by index, name and PCI address, and no other."""
    if "gpugate-probe" not in DRIVERS:
        pytest.skip("this gpugate has no probe child")
    spec = tmp_path / "cuda.yaml"
    spec.write_text("runtime:\n  backend: cuda\n  smoke: true\n  min_free_memory: 32GiB\n")
    r = subprocess.run([GPUGATE, "check", "--spec", str(spec), "--format", "json", "--deadline", "20"],
                       capture_output=True, text=True, timeout=60,
                       env=env_with(FAKE_CUDA_DEVICES="4", FAKE_CUDA_BUSY="1"))
    mem = next(c for c in json.loads(r.stdout)["checks"] if c["id"] == "runtime.memory")
    assert r.returncode == 1 and mem["status"] == "fail", mem
    assert finding_texts(mem) == [
        "device 1 (Fake GPU 1, 0000:1b:00.0): 8.0 GiB free, the spec wants 32.0 GiB free"], mem
    assert mem["summary"] == finding_texts(mem)[0], mem
    assert "runtime.processes lists them" in mem["remediation"], mem


def test_hang_remediation_is_nvidia_specific(tmp_path):
    if "gpugate-probe" not in DRIVERS:
        pytest.skip("this gpugate has no probe child")
    spec = tmp_path / "cuda.yaml"
    spec.write_text("runtime:\n  backend: cuda\n  smoke: true\n")
    r = subprocess.run([GPUGATE, "check", "--spec", str(spec), "--deadline", "1.5"], capture_output=True,
                       text=True, timeout=30, env=env_with("hang_init"))
    assert r.returncode == 1, r.stdout
    assert "hung in stage init" in r.stdout and "dmesg | grep -i xid" in r.stdout, r.stdout
    assert "i915" not in r.stdout
