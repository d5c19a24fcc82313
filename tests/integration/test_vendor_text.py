"""Vendor text comes from the vendor (src/vendor/): a CUDA run's runtime
findings and fixes never send an NVIDIA user to Level Zero, render nodes,
/dev/dri, ZE_AFFINITY_MASK, Sysman or xpu-smi, whatever the test driver
(tests/fakes/fake_libcuda.c) does; a Level Zero run still names its own
(the check can fail: the same words are looked for and found there)."""
import json
import os
import subprocess

import pytest

from conftest import GPUGATE, write

FAKE_CUDA = os.environ.get("GPUGATE_FAKE_CUDA") or os.path.join(os.path.dirname(GPUGATE), "tests", "fake_cuda")
FAKE_ZE = os.environ.get("GPUGATE_FAKE_ZE") or os.path.join(os.path.dirname(GPUGATE), "fakes", "libze_fake.so")
INTEL_WORDS = ("Level Zero", "level-zero", "renderD", "render node", "/dev/dri", "by-path", "ZE_AFFINITY_MASK",
               "Sysman", "xpu-smi", "intel")


def texts(report):
    """Everything a user reads of the runtime checks: summaries, findings, fixes."""
    out = []
    for c in report["checks"]:
        out += [c["summary"], c.get("remediation") or ""]
        out += (c.get("details") or {}).get("findings", [])
    return "\n".join(out)


def check(tmp_path, env, spec_text, backend="cuda"):
    spec = write(str(tmp_path / "spec.yaml"), spec_text)
    e = {k: v for k, v in os.environ.items() if not k.startswith(("FAKE_CUDA_", "CUDA_VISIBLE", "GPUGATE_FAKE"))}
    e.update(XDG_RUNTIME_DIR=str(tmp_path), **env)
    r = subprocess.run([GPUGATE, "check", "--spec", spec, "--only", "runtime", "--format", "json",
                        "--deadline", "8"], capture_output=True, text=True, env=e, timeout=60)
    assert r.returncode in (0, 1), r.stderr
    return r.returncode, json.loads(r.stdout)


FULL = ("runtime:\n  backend: cuda\n  smoke: true\n  telemetry: true\n  processes: true\n  performance: true\n"
        "  timeout: 3s\n")


@pytest.mark.parametrize("fault,extra", [
    (None, {}),
    ("hang_init", {}), ("crash_init", {}), ("no_device", {}), ("zero_devices", {}), ("launch_error", {}),
    ("wrong_result", {}), ("hang_sync", {}), ("old_ptx", {}), ("oom", {}), ("slow_copy", {}),
    (None, {"FAKE_CUDA_BUSY": "0"}),
    (None, {"CUDA_VISIBLE_DEVICES": "0,0"}),
    (None, {"LD_LIBRARY_PATH": "/nonexistent"}),  # no libcuda.so.1 at all
])
def test_cuda_findings_name_no_intel_thing(tmp_path, fault, extra):
    assert os.path.exists(os.path.join(FAKE_CUDA, "libcuda.so.1")), "make cuda-test-programs first"
    env = {"LD_LIBRARY_PATH": FAKE_CUDA, "FAKE_CUDA_DEVICES": "1"}
    if fault:
        env["FAKE_CUDA_FAULT"] = fault
    env.update(extra)
    # free memory too small on purpose: the memory check's fix is shown too
    rc, report = check(tmp_path, env, FULL + "  min_free_memory: 100GiB\n")
    assert rc == 1  # each case fails something, so its fix is printed
    said = texts(report)
    for word in INTEL_WORDS:
        assert word not in said, (word, said)


def test_level_zero_findings_still_name_their_own(tmp_path):
    env = {"ZE_ENABLE_ALT_DRIVERS": FAKE_ZE, "GPUGATE_FAKE_FAULT": "zero_devices"}
    rc, report = check(tmp_path, env, "runtime:\n  backend: level-zero\n  smoke: true\n")
    said = texts(report)
    assert rc == 1 and "renderD" in said and "ZE_AFFINITY_MASK" in said, said


@pytest.mark.parametrize("vendor,driver,other", [("nvidia", "nvidia", "i915"), ("intel", "i915 or xe", "nvidia")])
def test_no_gpu_fix_names_the_vendors_kernel_driver(tmp_path, vendor, driver, other):
    """devices.gpus on a root with no GPU: the fix told an NVIDIA user to look
    for i915 or xe in `lspci -k`; it names the spec vendor's drivers."""
    root = tmp_path / "root"
    (root / "sys" / "class").mkdir(parents=True)
    r = subprocess.run([GPUGATE, "check", "--vendor", vendor, "--root", str(root), "--only", "devices.gpus",
                        "--format", "json"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 1, r.stderr
    gpus = json.loads(r.stdout)["checks"][0]
    assert gpus["status"] == "fail", gpus
    assert f"lspci -k shows {driver} in use" in gpus["remediation"], gpus
    assert other not in gpus["remediation"], gpus
