"""The validate profile's extras of the runtime group against the fake Level
Zero driver (tests/fakes/fake_ze.c) and the fake libcuda
(tests/fakes/fake_libcuda.c): copy bandwidth and launch latency against
baselines, Sysman telemetry (temperature, power, frequency, memory health,
RAS), and processes already using the GPU.

The fake Level Zero device (8086:56a0) copies at 400 GB/s by its kernel
timestamps (280 GB/s with the slow_copy fault); the fake CUDA GPU ("Fake GPU
0", no PCI device id outside /sys) at 2000 GB/s (1400 with slow_copy)."""
import json
import os
import re
import uuid

import pytest

from conftest import GPUGATE, finding_texts, run_gpugate, write
from test_runtime import FAKE, survivors

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FAKE_CUDA = os.path.join(os.path.dirname(GPUGATE), "tests", "fake_cuda")

PERF_SPEC = """runtime:
  backend: {backend}
  smoke: true
  timeout: 30s
  performance: true
  bandwidth_buffer: 16MiB
"""


def baseline(folder, file="fake.json", **fields):
    entry = {"vendor_id": "0x8086", "device_id": "0x56a0", "backend": "level-zero",
             "copy_bandwidth_gbs": 400.0, "launch_latency_us": 5000.0}
    entry.update(fields)
    entry = {k: v for k, v in entry.items() if v is not None}
    return write(os.path.join(str(folder), file), json.dumps(entry))


def run(tmp_path, *args, fault="", backend="level-zero", validation=False, extra=None, spec=None):
    """gpugate with the fake driver of backend; spec (text) or args choose the checks."""
    tag = uuid.uuid4().hex
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("GPUGATE_FAKE_", "FAKE_CUDA_", "ZE_ENABLE_VALIDATION", "ZE_ENABLE_PARAMETER"))}
    env["GPUGATE_TEST_TAG"] = tag
    env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":handle_segv=0").lstrip(":")
    if backend == "level-zero":
        if not os.path.exists(FAKE):
            pytest.fail(f"the fake driver {FAKE} is not built")
        env.update({"ZE_ENABLE_ALT_DRIVERS": FAKE, "GPUGATE_FAKE_FAULT": fault})
    else:
        if not os.path.exists(os.path.join(FAKE_CUDA, "libcuda.so.1")):
            pytest.fail(f"the fake libcuda in {FAKE_CUDA} is not built (make cuda-test-programs)")
        env.update({"LD_LIBRARY_PATH": FAKE_CUDA, "FAKE_CUDA_FAULT": fault})
    if validation:
        env.update({"ZE_ENABLE_VALIDATION_LAYER": "1", "ZE_ENABLE_PARAMETER_VALIDATION": "1"})
    xdg = tmp_path / "xdg"
    xdg.mkdir(mode=0o700, exist_ok=True)
    env["XDG_RUNTIME_DIR"] = str(xdg)
    env.update(extra or {})
    if spec is not None:
        args = ("--spec", write(str(tmp_path / "spec.yaml"), spec)) + args
    r = run_gpugate(*args, "--format", "json", env=env, timeout=120)
    assert survivors(tag) == [], f"probe processes survived: {r}"
    return r


def perf_spec(backend="level-zero", folder=None, more=""):
    text = PERF_SPEC.format(backend=backend) + more
    if folder:
        text += f"  baselines: {folder}\n"
    return text


def test_bandwidth_within_tolerance_passes_under_validation_layer(tmp_path):
    folder = tmp_path / "baselines"
    baseline(folder, copy_bandwidth_gbs=450.0)  # 400 is 11% below: inside 20%
    r = run(tmp_path, "--deadline", "20", validation=True,
            spec=perf_spec(folder=folder, more="  telemetry: true\n  processes: true\n"))
    assert r.rc == 0, r
    c = r.check("runtime.performance")
    assert c["status"] == "pass" and "within 20% of the baseline on 1 device" in c["summary"], c
    measured = c["details"]["measured"][0]
    assert abs(measured["copy_bandwidth_gbs"] - 400.0) < 0.5, measured
    assert measured["buffer_bytes"] == 16 << 20 and "kernel timestamp" in measured["method"], measured
    text = json.dumps(r.json())
    assert "ZE_RESULT" not in text and "validation" not in text.lower(), text


def test_thirty_percent_slower_fails_with_both_numbers(tmp_path):
    folder = tmp_path / "baselines"
    src = baseline(folder)
    r = run(tmp_path, "--deadline", "20", fault="slow_copy", spec=perf_spec(folder=folder))
    assert r.rc == 1, r
    c = r.check("runtime.performance")
    assert c["status"] == "fail", c
    assert "copy bandwidth 280.0 GB/s is 30% below the baseline 400.0 GB/s" in c["summary"], c
    assert src in c["summary"] and "tolerance 20%" in c["summary"], c
    assert "record a new baseline" in c["remediation"], c
    # a wider tolerance lets the same run pass
    r = run(tmp_path, "--deadline", "20", fault="slow_copy", spec=perf_spec(folder=folder, more="  tolerance: 35%\n"))
    assert r.rc == 0 and r.check("runtime.performance")["status"] == "pass", r


def test_slow_launch_fails_on_latency(tmp_path):
    folder = tmp_path / "baselines"
    baseline(folder, launch_latency_us=500.0)  # the fault adds 2000 µs per submission
    r = run(tmp_path, "--deadline", "30", fault="slow_launch", spec=perf_spec(folder=folder))
    assert r.rc == 1, r
    c = r.check("runtime.performance")
    assert "kernel launch latency" in c["summary"] and "above the baseline 500.00 µs" in c["summary"], c


def test_failed_measurement_fails_performance_not_the_smoke(tmp_path):
    r = run(tmp_path, "--deadline", "20", fault="no_timestamps", spec=perf_spec())
    assert r.rc == 1, r
    c = r.check("runtime.performance")
    assert c["status"] == "fail", c
    assert "exited 3 in stage perf on 0000:03:00.0" in c["summary"], c
    assert "zeEventQueryKernelTimestamp failed" in c["summary"], c
    assert "the measurement itself failed" in c["remediation"], c
    assert r.check("runtime.smoke")["status"] == "pass", r.check("runtime.smoke")


def test_no_baseline_passes_with_the_line_that_records_one(tmp_path):
    r = run(tmp_path, "--deadline", "20", spec=perf_spec())
    assert r.rc == 0, r
    c = r.check("runtime.performance")
    assert c["status"] == "pass" and "no baseline for 8086-56a0" in c["summary"], c
    assert "checks/baselines/8086-56a0-level-zero.json" in c["summary"], c
    line = re.search(r"(\{.*\})$", c["summary"]).group(1)
    assert json.loads(line) == c["details"]["baseline_candidates"][0]
    # the printed line is a working baseline: saved, the next run compares with it
    folder = tmp_path / "recorded"
    write(str(folder / "8086-56a0-level-zero.json"), line)
    r = run(tmp_path, "--deadline", "20", spec=perf_spec(folder=folder))
    c = r.check("runtime.performance")
    assert r.rc == 0 and "within 20% of the baseline on 1 device" in c["summary"], c


@pytest.mark.parametrize("content,words", [
    ('{"vendor_id": "0x8086",\n  "device_id": ', "bad.json:2:"),
    ('{"vendor_id": "0x8086", "device_id": "0x56a0", "copy_bandwith_gbs": 400}', 'unknown key "copy_bandwith_gbs"'),
    ('{"vendor_id": "intel", "device_id": "0x56a0", "copy_bandwidth_gbs": 400}', "must be PCI ids"),
    ('{"vendor_id": "0x8086", "device_id": "0x56a0", "copy_bandwidth_gbs": -1}', "positive numbers"),
    ('[]', "one JSON object"),
], ids=["truncated", "unknown-key", "bad-id", "negative", "array"])
def test_malformed_baseline_is_a_spec_error_naming_the_file(tmp_path, content, words):
    folder = tmp_path / "baselines"
    baseline(folder, file="good.json")
    bad = write(str(folder / "bad.json"), content)
    r = run(tmp_path, "--deadline", "20", spec=perf_spec(folder=folder))
    assert r.rc == 3, r
    assert bad in r.err and words in r.err and "bad performance baseline" in r.err, r.err


def test_baseline_folder_that_cannot_be_read_is_a_spec_error(tmp_path):
    r = run(tmp_path, spec=perf_spec(folder=tmp_path / "missing"))
    assert r.rc == 3 and "cannot open the folder" in r.err and "missing" in r.err, r
    folder = tmp_path / "fifo"
    folder.mkdir()
    os.mkfifo(folder / "x.json")  # must not block the check
    r = run(tmp_path, spec=perf_spec(folder=folder))
    assert r.rc == 3 and "x.json: not a regular file" in r.err, r


@pytest.mark.parametrize("more,words", [
    ("  tolerance: fast\n", "not a percentage"),
    ("  tolerance: 150%\n", "not a percentage"),
    ("  bandwidth_buffer: 1KiB\n", "from 1MiB to 4GiB"),
    ("  bandwidth_buffer: 8GiB\n", "from 1MiB to 4GiB"),
])
def test_spec_values_are_checked(tmp_path, more, words):
    r = run(tmp_path, spec=perf_spec(more=more).replace("  bandwidth_buffer: 16MiB\n", "", 1 if "buffer" in more else 0))
    assert r.rc == 3 and words in r.err, r


def test_performance_and_processes_need_the_smoke(tmp_path):
    for key in ("performance", "processes"):
        r = run(tmp_path, spec=f"runtime:\n  backend: level-zero\n  {key}: true\n")
        assert r.rc == 3 and f"runtime.{key} needs runtime.smoke: true" in r.err, r


def test_processes_warn_in_ci_and_not_in_healthcheck(tmp_path):
    r = run(tmp_path, "--profile", "ci", "--only", "runtime", "--deadline", "20", fault="foreign_process")
    c = r.check("runtime.processes")
    assert c["status"] == "warn", c
    assert "1 other process uses the GPU: pid 4242 (2.0 GiB)" in c["summary"], c
    assert "stop them or wait" in c["remediation"], c
    assert r.check("runtime.smoke")["status"] == "pass"
    # our own process is not "another" one
    r = run(tmp_path, "--profile", "ci", "--only", "runtime.processes", "--deadline", "20")
    assert r.check("runtime.processes")["status"] == "pass", r
    assert "no other process uses the 1 GPU" in r.check("runtime.processes")["summary"]
    r = run(tmp_path, "--profile", "healthcheck", "--only", "runtime", "--deadline", "8", fault="foreign_process")
    ids = [x["id"] for x in r.json()["checks"]]
    assert "runtime.loader" in ids and "runtime.processes" not in ids and "runtime.performance" not in ids, ids


def test_ras_uncorrectable_fails_in_validate(tmp_path):
    r = run(tmp_path, "--profile", "validate", "--only", "runtime", "--deadline", "60", fault="ras_uncorrectable")
    assert r.rc == 1, r
    c = r.check("runtime.health")
    assert c["status"] == "fail", c
    assert "3 uncorrectable RAS errors since the driver loaded (and 5 correctable)" in c["summary"], c
    assert "drain the node" in c["remediation"], c
    # the same profile measured and judged the rest
    assert r.check("runtime.performance")["status"] == "pass", r.check("runtime.performance")
    assert r.check("runtime.processes")["status"] == "pass"


def test_healthy_telemetry_is_reported(tmp_path):
    r = run(tmp_path, "--deadline", "20", spec=perf_spec(more="  telemetry: true\n"))
    assert r.rc == 0, r
    c = r.check("runtime.health")
    assert c["status"] == "pass", c
    assert "device 0 45.5 °C 150 W 2100 MHz memory ok" == c["summary"], c
    t = c["details"]["telemetry"][0]
    assert t["ras"] == {"correctable": 0, "uncorrectable": 0}, t
    assert t["frequency"]["throttle_reasons"] == ["average power cap"], t


def test_unsupported_telemetry_says_so_and_passes(tmp_path):
    r = run(tmp_path, "--deadline", "20", fault="no_telemetry",
            spec=perf_spec(more="  telemetry: true\n  processes: true\n"))
    assert r.rc == 0, r
    c = r.check("runtime.health")
    assert c["status"] == "pass", c
    for what in ("temperature", "power", "frequency", "RAS error counters"):
        assert f"{what} not supported by this driver" in c["summary"], c
    p = r.check("runtime.processes")
    assert p["status"] == "pass" and "not supported by this driver" in p["summary"], p


def test_cuda_bandwidth_against_a_baseline_keyed_by_name(tmp_path):
    folder = tmp_path / "baselines"
    baseline(folder, vendor_id="0x10de", device_id=None, name="Fake GPU 0", backend="cuda",
             copy_bandwidth_gbs=2000.0, launch_latency_us=5000.0)
    r = run(tmp_path, "--deadline", "20", backend="cuda", spec=perf_spec("cuda", folder))
    assert r.rc == 0, r
    c = r.check("runtime.performance")
    assert "within 20% of the baseline on 1 device" in c["summary"], c
    assert "cuEventElapsedTime" in c["details"]["measured"][0]["method"]
    r = run(tmp_path, "--deadline", "20", backend="cuda", fault="slow_copy", spec=perf_spec("cuda", folder))
    assert r.rc == 1, r
    c = r.check("runtime.performance")
    assert "copy bandwidth 1400.0 GB/s is 30% below the baseline 2000.0 GB/s" in c["summary"], c


def test_the_summary_names_the_gpu_that_failed_not_the_first_that_passed(tmp_path):
    """Seen on a 4-GPU H100 host: the check failed on one GPU's latency while
    its summary quoted GPU 0's passing figures. Of two GPUs, only the second
    has a baseline it misses: the summary is that GPU's failure."""
    folder = tmp_path / "baselines"
    baseline(folder, vendor_id="0x10de", device_id=None, name="Fake GPU 1", backend="cuda",
             copy_bandwidth_gbs=4000.0, launch_latency_us=5000.0)
    r = run(tmp_path, "--deadline", "20", backend="cuda", spec=perf_spec("cuda", folder),
            extra={"FAKE_CUDA_DEVICES": "2"})
    assert r.rc == 1, r
    c = r.check("runtime.performance")
    findings = finding_texts(c)
    assert findings[0].startswith("cuda device 0 (Fake GPU 0") and "no baseline" in findings[0], findings
    assert c["summary"].startswith("cuda device 1 (Fake GPU 1, 0000:1b:00.0): copy bandwidth 2000.0 GB/s is 50% below"), c


def test_cuda_without_nvml_says_why_and_passes(tmp_path):
    r = run(tmp_path, "--deadline", "20", backend="cuda",
            spec=perf_spec("cuda", more="  telemetry: true\n  processes: true\n"))
    assert r.rc == 0, r
    assert "NVML not loaded" in r.check("runtime.health")["summary"]
    p = r.check("runtime.processes")
    assert p["status"] == "pass" and "process list is not available" in p["summary"], p
    c = r.check("runtime.performance")
    assert "no baseline for 10de-" in c["summary"] and '"name":"Fake GPU 0"' in c["summary"], c


def test_example_documents_every_runtime_key():
    with open(os.path.join(ROOT, "src", "checks", "runtime.c")) as f:
        keys = set(re.findall(r'\{ "runtime\.(\w+)", SPEC_', f.read()))
    assert {"performance", "tolerance", "baselines", "processes", "bandwidth_buffer"} <= keys, keys
    with open(os.path.join(ROOT, "checks", "example.yaml")) as f:
        example = f.read()
    missing = [k for k in keys if not re.search(rf"^\s*#?\s*{k}:", example, re.M)]
    assert missing == [], f"checks/example.yaml does not document runtime.{missing}"


def test_checked_in_baselines_are_valid(tmp_path):
    """Every built-in baseline loads (the validator parses them with performance on)."""
    r = run(tmp_path, spec="runtime:\n  backend: level-zero\n  smoke: true\n  performance: true\n",
            extra={"GPUGATE_FAKE_FAULT": "permission"})
    assert r.rc == 1, r  # the spec is valid; the fake driver refuses
