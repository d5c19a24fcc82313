"""The health check's state cache is discarded when the stack it stands for
changed (issue 31 item 1): the driver file, the kernel log reporting a GPU
fault since the cached run. The fake Level Zero driver (tests/fakes/fake_ze.c)
loaded through the real Debian loader; the kernel log is a file bind-mounted
over /dev/kmsg inside a private mount namespace (unshare -m)."""
import json
import os
import shutil
import subprocess
import time

import pytest

from conftest import GPUGATE, run_gpugate, write
from test_runtime import FAKE, HEALTH


def env_for(tmp_path, driver, fault=""):
    xdg = tmp_path / "xdg"
    xdg.mkdir(mode=0o700, exist_ok=True)
    env = dict(os.environ)
    env.pop("ZE_ENABLE_VALIDATION_LAYER", None)
    env.update({"ZE_ENABLE_ALT_DRIVERS": str(driver), "GPUGATE_FAKE_FAULT": fault, "XDG_RUNTIME_DIR": str(xdg)})
    env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":handle_segv=0").lstrip(":")
    return env


def copied_driver(tmp_path):
    if not os.path.exists(FAKE):
        pytest.fail(f"the fake driver {FAKE} is not built (make {FAKE})")
    driver = tmp_path / "drivers" / "libze_fake.so"
    driver.parent.mkdir()
    shutil.copy(FAKE, driver)
    return driver


def loader(r):
    return r.check("runtime.loader")


def test_a_replaced_driver_file_is_probed_afresh(tmp_path):
    driver = copied_driver(tmp_path)
    spec = write(str(tmp_path / "health.yaml"), HEALTH)
    env = env_for(tmp_path, driver)
    first = run_gpugate("--spec", spec, "--format", "json", env=env)
    assert first.rc == 0 and "cached" not in loader(first)["summary"], first
    second = run_gpugate("--spec", spec, "--format", "json", env=env)
    assert second.rc == 0 and "(cached " in loader(second)["summary"], second
    # an upgrade that broke the driver: the same path, another file
    driver.unlink()
    write(str(driver), b"\x7fELF not a driver any more\n")
    third = run_gpugate("--spec", spec, "--format", "json", env=env)
    assert third.rc == 1, third
    assert "cached" not in loader(third)["summary"], third
    discarded = loader(third)["details"]["state_cache"]["discarded"]
    assert discarded == f"the file {driver} changed", third


def test_an_unchanged_stack_keeps_its_cached_result(tmp_path):
    """The control: the identity is stable between runs, so the cache is used."""
    driver = copied_driver(tmp_path)
    spec = write(str(tmp_path / "health.yaml"), HEALTH)
    env = env_for(tmp_path, driver)
    assert run_gpugate("--spec", spec, "--format", "json", env=env).rc == 0
    # a crash in init now would fail a fresh probe: the pass proves the cache was used
    env["GPUGATE_FAKE_FAULT"] = "crash_init"
    again = run_gpugate("--spec", spec, "--format", "json", env=env)
    assert again.rc == 0 and "(cached" in loader(again)["summary"], again


def kmsg_record(seq, text):
    usec = int(time.monotonic() * 1e6)
    return f"6,{seq},{usec},-;{text}\n"


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"), reason="needs root and unshare -m")
def test_a_gpu_fault_in_the_kernel_log_since_the_cached_run_discards_it(tmp_path):
    driver = copied_driver(tmp_path)
    spec = write(str(tmp_path / "health.yaml"), HEALTH)
    env = env_for(tmp_path, driver)
    log = tmp_path / "kmsg"
    log.write_text(kmsg_record(1, "i915 0000:03:00.0: [drm] GPU HANG: ecode 12:1:85dffffb") +
                   kmsg_record(2, "usb 1-1: new high-speed USB device"))

    def run(fault=""):
        env["GPUGATE_FAKE_FAULT"] = fault
        script = 'mount --bind "$1" /dev/kmsg && shift && exec "$@"'
        p = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh", str(log),
                            GPUGATE, "--spec", spec, "--format", "json"],
                           capture_output=True, text=True, env=env, timeout=60)
        assert p.returncode in (0, 1), p
        return json.loads(p.stdout)

    def runtime(report):
        return next(c for c in report["checks"] if c["id"] == "runtime.loader")

    first = run()
    assert first["verdict"] == "pass", first
    # the hang logged before the cached run does not discard it
    second = run(fault="crash_init")
    assert "(cached" in runtime(second)["summary"], second
    with open(log, "a") as f:
        f.write(kmsg_record(3, "xe 0000:03:00.0: [drm] *ERROR* GT0: GuC initialization failed"))
    third = run(fault="crash_init")
    assert third["verdict"] == "fail", third
    assert "crashed with SIGSEGV in stage init" in runtime(third)["summary"], third
    discarded = runtime(third)["details"]["state_cache"]["discarded"]
    assert discarded.startswith("the kernel log reports a GPU fault since:"), third
    assert "GuC initialization failed" in discarded, third


def test_a_changed_gpu_set_or_kernel_driver_is_probed_afresh(tmp_path):
    """Under --root (the root's loader and the test driver beside it): a GPU
    node that appears, then the kernel driver's version, then a card moved to
    another PCI address, each drop the cache."""
    from test_root_runtime import root_with_stack
    root = root_with_stack(tmp_path)
    pci = root / "sys/devices/pci0000:00/0000:03:00.0"
    (pci / "drm/card0").mkdir(parents=True)
    (root / "sys/bus/pci/drivers/i915").mkdir(parents=True)
    os.symlink("../../../bus/pci/drivers/i915", pci / "driver")
    (root / "sys/class/drm").mkdir(parents=True)
    os.symlink("../../devices/pci0000:00/0000:03:00.0/drm/card0", root / "sys/class/drm/card0")
    os.symlink("../..", pci / "drm/card0/device")
    (root / "sys/module/i915").mkdir(parents=True)
    (root / "sys/module/i915/srcversion").write_text("8C4A2B1D5E6F708192A3B4C\n")
    spec = write(str(tmp_path / "health.yaml"), HEALTH)
    env = env_for(tmp_path, tmp_path / "unused")
    env.pop("ZE_ENABLE_ALT_DRIVERS")  # the root's driver, beside its loader
    env.pop("LD_LIBRARY_PATH", None)

    def run():
        return run_gpugate("--spec", spec, "--root", str(root), "--only", "runtime", "--format", "json", env=env)

    assert "cached" not in loader(run())["summary"]
    assert "(cached " in loader(run())["summary"]
    (root / "dev/dri").mkdir(parents=True)
    (root / "dev/dri/renderD128").write_text("")
    again = run()
    assert again.rc == 0 and "cached" not in loader(again)["summary"], again
    assert loader(again)["details"]["state_cache"]["discarded"].startswith("the GPU set"), again
    assert "(cached " in loader(run())["summary"]
    (root / "sys/module/i915/srcversion").write_text("0000000000000000000000A\n")
    last = run()
    assert loader(last)["details"]["state_cache"]["discarded"] == "the kernel driver's version changed", last
    # the same nodes, the same driver, but card0 is now another GPU (another PCI address)
    assert "(cached " in loader(run())["summary"]
    moved = root / "sys/devices/pci0000:00/0000:04:00.0"
    (moved / "drm/card0").mkdir(parents=True)
    os.symlink("../../../bus/pci/drivers/i915", moved / "driver")
    os.symlink("../../../0000:04:00.0", moved / "drm/card0/device")  # as sysfs spells it
    os.unlink(root / "sys/class/drm/card0")
    os.symlink("../../devices/pci0000:00/0000:04:00.0/drm/card0", root / "sys/class/drm/card0")
    swapped = run()
    assert swapped.rc == 0 and "cached" not in loader(swapped)["summary"], swapped
    assert loader(swapped)["details"]["state_cache"]["discarded"].startswith("the GPU set"), swapped


@pytest.mark.parametrize("fault,spec", [("crash_init", HEALTH), ("two_devices_one_fails", HEALTH + "  smoke: true\n")],
                         ids=["enumeration", "device"])
def test_a_failed_probe_is_stored_as_a_failure(tmp_path, fault, spec):
    """A run whose enumeration or one device child failed is stored with
    ok: false, which the cache keeps for PROBE_CACHE_FAILURE_TTL_S (30 s)
    instead of runtime.cache_ttl: a repaired stack is probed afresh soon."""
    driver = copied_driver(tmp_path)
    env = env_for(tmp_path, driver, fault)
    env["GPUGATE_FAKE_DEVICES"] = "2"
    r = run_gpugate("--spec", write(str(tmp_path / "spec.yaml"), spec), "--format", "json", env=env)
    assert r.rc == 1, r
    stored = list((tmp_path / "xdg").rglob("runtime.json"))
    assert len(stored) == 1, stored
    with open(stored[0]) as f:
        assert json.load(f)["ok"] is False, stored[0]
    # the control: a healthy run is stored as one
    env["GPUGATE_FAKE_FAULT"] = ""
    stored[0].unlink()
    assert run_gpugate("--spec", str(tmp_path / "spec.yaml"), "--format", "json", env=env).rc == 0
    with open(stored[0]) as f:
        assert json.load(f)["ok"] is True, stored[0]


@pytest.mark.skipif(not shutil.which("strace"), reason="needs strace to see the system calls")
def test_a_state_folder_already_there_is_found_by_one_lstat(tmp_path):
    """Every health check looks up the state folder (hf's verified record
    too, with --skip runtime, issue 31 item 7): once the folder is there, one
    lstat finds it, without a mkdir and without looking at the candidates
    after it (/run, /dev/shm)."""
    xdg = tmp_path / "xdg"
    xdg.mkdir(mode=0o700)
    (xdg / "gpugate").mkdir(mode=0o700)
    env = dict(os.environ, XDG_RUNTIME_DIR=str(xdg), HF_HOME=str(tmp_path / "hf"))
    log = tmp_path / "strace.txt"
    p = subprocess.run(["strace", "-f", "-qq", "-o", str(log), GPUGATE, "check", "--profile", "healthcheck",
                        "--vendor", "intel", "--only", "hf"], env=env, capture_output=True, text=True, timeout=120)
    assert p.returncode in (0, 1), p.stdout + p.stderr
    lines = log.read_text().splitlines()
    folder = f'"{xdg}/gpugate"'
    assert any(folder in line and "stat" in line for line in lines), lines
    assert not [line for line in lines if "mkdir" in line and folder in line], lines
    assert not [line for line in lines if '"/run"' in line or '"/dev/shm' in line], lines
