"""The runtime group against the fake Level Zero driver (tests/fakes/fake_ze.c,
loaded through the real Debian loader with ZE_ENABLE_ALT_DRIVERS) and against
the real Intel driver, which finds no GPU here."""
import json
import os
import uuid

import pytest

from conftest import GPUGATE, finding_texts, run_gpugate, write

FAKE = os.environ.get("GPUGATE_FAKE_ZE") or os.path.join(
    os.path.dirname(GPUGATE), "fakes", "libze_fake.so")

SPEC = """runtime:
  backend: level-zero
  smoke: true
  timeout: 30s
"""


def survivors(tag):
    """Processes whose environment carries this run's tag."""
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if tag.encode() in f.read():
                    found.append(pid)
        except OSError:
            pass
    return found


def run_fake(tmp_path, fault="", deadline="5", devices=None, spec=SPEC, validation=False, extra=None):
    if not os.path.exists(FAKE):
        pytest.fail(f"the fake driver {FAKE} is not built (make {FAKE})")
    tag = "GPUGATE_TEST_TAG=" + uuid.uuid4().hex
    env = dict(os.environ)
    env.pop("ZE_ENABLE_VALIDATION_LAYER", None)
    env.update({"ZE_ENABLE_ALT_DRIVERS": FAKE, "GPUGATE_FAKE_FAULT": fault,
                tag.split("=")[0]: tag.split("=")[1]})
    if devices:
        env["GPUGATE_FAKE_DEVICES"] = str(devices)
    # under ASan a SIGSEGV must still end the child as a signal would
    env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":handle_segv=0").lstrip(":")
    if validation:
        env["ZE_ENABLE_VALIDATION_LAYER"] = "1"
        env["ZE_ENABLE_PARAMETER_VALIDATION"] = "1"
    xdg = tmp_path / "xdg"
    xdg.mkdir(mode=0o700, exist_ok=True)
    env["XDG_RUNTIME_DIR"] = str(xdg)
    env.update(extra or {})
    path = write(str(tmp_path / "spec.yaml"), spec)
    r = run_gpugate("--spec", path, "--deadline", deadline, "--format", "json", env=env, timeout=30)
    assert survivors(tag) == [], f"probe processes survived: {r}"
    return r


def text_of(r):
    return json.dumps(r.json())


FAULTS = [
    ("hang_init", "runtime.loader", "hung in stage init"),
    ("hang_sync", "runtime.smoke", "hung in stage sync on 0000:03:00.0"),
    ("crash_init", "runtime.loader", "crashed with SIGSEGV in stage init"),
    ("crash_launch", "runtime.smoke", "crashed with SIGSEGV in stage launch on 0000:03:00.0"),
    ("oom", "runtime.smoke", "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY"),
    # one element wrong: the count reads right for one, in CUDA's words (cuda.c)
    ("wrong_result", "runtime.smoke", "computed 1 of 1048576 elements wrong (first at index 12345"),
    ("zero_devices", "runtime.devices", "reports no GPU"),
    ("permission", "runtime.loader", "ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS"),
    ("slow_init:20000", "runtime.loader", "hung in stage init"),
    ("two_devices_one_fails", "runtime.smoke", "device 1: exited 3 in stage launch on 0000:04:00.0: ZE_RESULT_ERROR_DEVICE_LOST"),
    ("bad_module", "runtime.smoke", "exited 3 in stage module on 0000:03:00.0: ZE_RESULT_ERROR_MODULE_BUILD_FAILURE"),
]


@pytest.mark.parametrize("fault,check_id,words", FAULTS, ids=[f[0] for f in FAULTS])
def test_fault_fails_the_check_in_time(tmp_path, fault, check_id, words):
    r = run_fake(tmp_path, fault)
    assert r.rc == 1, r
    assert r.seconds < 6.0, f"took {r.seconds:.2f} s with --deadline 5: {r}"
    c = r.check(check_id)
    assert c["status"] == "fail", r
    assert words in c["summary"], c
    assert c.get("remediation"), c


def test_hang_is_killed_soon_after_the_deadline(tmp_path):
    r = run_fake(tmp_path, "hang_sync", deadline="2")
    assert r.rc == 1, r
    assert 1.5 < r.seconds < 2.5, r.seconds
    assert "(killed)" in r.check("runtime.smoke")["summary"]


def test_success_one_device_under_validation_layer(tmp_path):
    r = run_fake(tmp_path, validation=True)
    assert r.rc == 0, r
    smoke = r.check("runtime.smoke")
    assert smoke["status"] == "pass" and "1048576 elements" in smoke["summary"], smoke
    dev = r.check("runtime.devices")
    assert "Fake Arc A770 #0 (0000:03:00.0)" in dev["summary"], dev
    assert dev["details"]["devices"][0]["memory_total"] == 16 << 30
    loader = r.check("runtime.loader")
    assert "libze_loader.so.1" in loader["summary"] and "driver 1.3.29735" in loader["summary"], loader
    out = text_of(r).lower()
    assert "validation" not in out and "zer_result" not in out and "error" not in out, out


def test_success_two_devices_under_validation_layer(tmp_path):
    r = run_fake(tmp_path, devices=2, validation=True)
    assert r.rc == 0, r
    assert "on 2 devices" in r.check("runtime.smoke")["summary"]
    assert "0000:04:00.0" in r.check("runtime.devices")["summary"]
    assert "error" not in text_of(r).lower()


def test_min_free_memory(tmp_path):
    r = run_fake(tmp_path, spec=SPEC + "  min_free_memory: 64GiB\n")
    assert r.rc == 1, r
    c = r.check("runtime.memory")
    assert c["status"] == "fail" and "12.0 GiB free" in c["summary"] and "64.0 GiB" in c["summary"], c
    r = run_fake(tmp_path, spec=SPEC + "  min_free_memory: 1GiB\n", extra={"GPUGATE_FAKE_FREE_MB": "512"})
    assert r.rc == 1 and "0.5 GiB free" in r.check("runtime.memory")["summary"], r
    r = run_fake(tmp_path, spec=SPEC + "  min_free_memory: 1GiB\n")
    assert r.rc == 0 and r.check("runtime.memory")["status"] == "pass", r


def test_telemetry_needs_sysman_which_the_parent_enables(tmp_path):
    r = run_fake(tmp_path, spec=SPEC + "  telemetry: true\n", extra={"ZES_ENABLE_SYSMAN": "0"})
    assert r.rc == 0, r
    c = r.check("runtime.health")
    assert c["status"] == "pass" and "device 0 45.5 °C" in c["summary"], c


def test_real_intel_driver_without_gpu():
    """Debian's intel-opencl-icd driver with no GPU: zeInit says UNINITIALIZED
    and gpugate fails cleanly (loader 1.8.12 would crash on the next call)."""
    if not os.path.exists("/usr/lib/x86_64-linux-gnu/libze_intel_gpu.so.1"):
        pytest.fail("intel-opencl-icd is not installed (.ci/install-deps installs it)")
    env = dict(os.environ)
    for k in ("ZE_ENABLE_ALT_DRIVERS", "GPUGATE_FAKE_FAULT"):
        env.pop(k, None)
    r = run_gpugate("--profile", "ci", "--only", "runtime", "--format", "json", env=env)
    assert r.rc == 1, r
    c = r.check("runtime.loader")
    assert c["status"] == "fail", c
    assert "crashed" not in c["summary"], c
    if "/asan/" in GPUGATE:
        # the sanitizer runtime refuses the driver's RTLD_DEEPBIND dlopen and
        # exits 1 inside zeInit: the child still fails cleanly in stage init
        assert "exited 1 in stage init" in c["summary"], c
        return
    assert "exited 3 in stage init: ZE_RESULT_ERROR_UNINITIALIZED" in c["summary"], c
    assert "/dev/dri/by-path" in c["remediation"]


def test_probe_subcommand_rejects_bad_arguments():
    for args in (["--backend", "nope"], ["--backend", "level-zero", "--device", "x"], []):
        r = run_gpugate("probe", *args)
        assert r.rc == 4, r
        assert "gpugate probe" in r.err


def test_spec_rejects_unknown_backend(tmp_path):
    path = write(str(tmp_path / "s.yaml"), "runtime:\n  backend: opencl\n")
    r = run_gpugate("--spec", path)
    assert r.rc == 3, r
    assert "opencl" in r.err


HEALTH = """profile: healthcheck
runtime:
  backend: level-zero
  cache_ttl: 5m
"""


def health(tmp_path, xdg, fault=""):
    env = dict(os.environ)
    env.update({"ZE_ENABLE_ALT_DRIVERS": FAKE, "GPUGATE_FAKE_FAULT": fault, "XDG_RUNTIME_DIR": str(xdg)})
    env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":handle_segv=0").lstrip(":")
    path = write(str(tmp_path / "health.yaml"), HEALTH)
    return run_gpugate("--spec", path, "--format", "json", env=env)


def age_cache(cache, seconds):
    with open(cache) as f:
        state = json.load(f)
    state["written"] -= seconds
    with open(cache, "w") as f:
        json.dump(state, f)


def test_state_cache_reuses_a_pass_for_the_ttl(tmp_path):
    xdg = tmp_path / "xdg"
    xdg.mkdir(mode=0o700)
    first = health(tmp_path, xdg)
    assert first.rc == 0 and "cached" not in first.check("runtime.loader")["summary"], first
    cache = xdg / "gpugate" / "runtime.json"
    assert oct(os.stat(cache).st_mode & 0o777) == "0o600"
    assert oct(os.stat(xdg / "gpugate").st_mode & 0o777) == "0o700"
    # a fault now would fail a fresh probe: the cached pass proves no probe ran
    second = health(tmp_path, xdg, fault="crash_init")
    assert second.rc == 0, second
    assert "(cached 0 s ago)" in second.check("runtime.loader")["summary"], second
    age_cache(cache, 200)  # still inside the 5 min TTL
    assert health(tmp_path, xdg, fault="crash_init").rc == 0
    age_cache(cache, 200)  # now 400 s old: probed again
    third = health(tmp_path, xdg, fault="crash_init")
    assert third.rc == 1 and "crashed with SIGSEGV in stage init" in third.check("runtime.loader")["summary"], third


def test_state_cache_keeps_a_failure_at_most_30_s(tmp_path):
    xdg = tmp_path / "xdg"
    xdg.mkdir(mode=0o700)
    first = health(tmp_path, xdg, fault="crash_init")
    assert first.rc == 1, first
    again = health(tmp_path, xdg)
    assert again.rc == 1 and "(cached" in again.check("runtime.loader")["summary"], again
    age_cache(xdg / "gpugate" / "runtime.json", 31)
    fresh = health(tmp_path, xdg)
    assert fresh.rc == 0 and "cached" not in fresh.check("runtime.loader")["summary"], fresh


def test_state_cache_refuses_a_foreign_folder(tmp_path):
    xdg = tmp_path / "xdg"
    xdg.mkdir(mode=0o700)
    (xdg / "gpugate").mkdir(mode=0o777)
    os.chmod(xdg / "gpugate", 0o777)
    r = health(tmp_path, xdg)
    assert r.rc == 0, r
    assert not (xdg / "gpugate" / "runtime.json").exists()
    os.chmod(xdg / "gpugate", 0o700)
    os.chown(xdg / "gpugate", 4321, 4321)
    r = health(tmp_path, xdg)
    assert r.rc == 0, r
    assert not (xdg / "gpugate" / "runtime.json").exists()


def smoke_of(r, device=0):
    probe = r.check("runtime.smoke")["details"]["probes"][device]
    return probe["result"]["devices"][device]["smoke"]


def test_ci_probes_every_time_and_caches_the_native_module(tmp_path):
    xdg = tmp_path / "xdg"
    first = run_fake(tmp_path)
    assert first.rc == 0, first
    assert smoke_of(first)["module_cache"] == "stored"
    bins = list((xdg / "gpugate").glob("smoke-86000000000000000000000000000000-1.3.29735-*.bin"))
    assert len(bins) == 1 and oct(os.stat(bins[0]).st_mode & 0o777) == "0o600", bins
    second = run_fake(tmp_path)
    assert second.rc == 0 and "cached" not in second.check("runtime.loader")["summary"], second
    assert smoke_of(second)["module_cache"] == "hit"
    assert not (xdg / "gpugate" / "runtime.json").exists()
    # a corrupt cached binary is rebuilt from the SPIR-V, never a failure
    bins[0].write_bytes(b"garbage")
    os.chmod(bins[0], 0o600)
    third = run_fake(tmp_path)
    assert third.rc == 0, third
    assert smoke_of(third)["module_cache"] == "stale: rebuilt from SPIR-V"


def test_driver_build_differs_from_its_package(tmp_path):
    """The loaded driver reports build 29735; a root whose dpkg database says
    the driver package is build 29700 gives a warning naming both."""
    root = tmp_path / "root"
    fake = os.path.realpath(FAKE)
    write(str(root / "var/lib/dpkg/info/libze-intel-gpu1:amd64.list"), f"/.\n/usr\n{fake}\n")
    write(str(root / "var/lib/dpkg/info/libze1:amd64.list"),
          "/usr/lib/x86_64-linux-gnu/libze_loader.so.1.8.0\n")
    write(str(root / "var/lib/dpkg/status"),
          "Package: libze-intel-gpu1\nStatus: install ok installed\nArchitecture: amd64\n"
          "Version: 24.22.29700.1-1\nDescription: x\n\n"
          "Package: libze1\nStatus: install ok installed\nArchitecture: amd64\n"
          "Version: 1.8.12-1\nDescription: x\n")
    env = dict(os.environ)
    # under --root the loader comes from the root or, named on purpose, LD_LIBRARY_PATH
    env.update({"ZE_ENABLE_ALT_DRIVERS": FAKE, "GPUGATE_FAKE_FAULT": "", "XDG_RUNTIME_DIR": str(tmp_path),
                "LD_LIBRARY_PATH": "/usr/lib/x86_64-linux-gnu"})
    path = write(str(tmp_path / "spec.yaml"), "runtime:\n  backend: level-zero\n")
    r = run_gpugate("--spec", path, "--root", str(root), "--format", "json", env=env)
    assert r.rc == 0, r
    c = r.check("runtime.loader")
    assert c["status"] == "warn", c
    finding = " ".join(finding_texts(c))
    assert "reports build 29735 (1.3.29735)" in finding and "libze-intel-gpu1 24.22.29700.1-1 (build 29700)" in finding, c
    prov = c["details"]["provenance"][0]
    assert prov["loader_package"] == "libze1 1.8.12-1", prov
    assert prov["driver_library"] == fake


@pytest.mark.parametrize("vendor,wanted,unwanted", [
    ("intel", "apt-get install libze1 libze-intel-gpu1", "--gpus all"),
    ("nvidia", "--gpus all", "libze-intel-gpu1"),
])
def test_no_runtime_library_fix_is_the_vendors(tmp_path, vendor, wanted, unwanted):
    """A root with no GPU runtime library at all (make run on a machine
    without a GPU): runtime.loader fails once and says what to install for
    this machine's GPU vendor (the backend's own words, src/backend/); the
    checks it blocks are skips naming it."""
    write(str(tmp_path / "var/lib/dpkg/status"), "")
    spec = tmp_path / "rt.yaml"
    spec.write_text("runtime:\n  backend: auto\n  smoke: true\n")
    r = run_gpugate("--spec", str(spec), "--root", str(tmp_path), "--vendor", vendor, "--format", "json")
    assert r.rc == 1, r
    loader = r.check("runtime.loader")
    assert loader["status"] == "fail" and "no GPU runtime library is installed" in loader["summary"], loader
    assert wanted in loader["remediation"] and unwanted not in loader["remediation"], loader
    for c in r.json()["checks"][1:]:
        assert c["status"] == "skip" and c["summary"] == "not reached: runtime.loader failed", c
