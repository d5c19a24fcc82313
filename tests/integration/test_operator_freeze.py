"""gpugate spec freeze (issue 20): a spec pinning the GPU stack of a fixture
root as it is (its dpkg database, its GPUs in sysfs and /dev, an HF cache
with trees/ listings), checked back with `gpugate check --spec`: it passes
on the same root and fails, naming the package, after one package changes.
--with-baselines measures the test Level Zero driver (tests/fakes/fake_ze.c)."""
import json
import os
import re
import stat
import subprocess

import hf_builder
from conftest import GPUGATE, run_gpugate, stanza, write
from gpufixture import Root, mknod
from test_runtime import FAKE

INTEL = [("libze1", "1.17.6-1"), ("libze-intel-gpu1", "24.26.30049.6-1"), ("intel-opencl-icd", "24.26.30049.6-1"),
         ("intel-igc-core", "1.0.17193.4"), ("libigdgmm12", "22.3.19-1")]
OTHERS = [("bash", "5.2.15-2+b2"), ("libc6", "2.36-9")]

BASE = """deadline: 20s
packages:
  - libze1 (>= 1.17)
devices:
  vendor: intel
  min_gpus: 1
  by_path: require
hf:
  integrity: true
"""


def dpkg(root, packages):
    body = stanza("dpkg", "1.21.22") + "".join("\n" + stanza(n, v) for n, v in packages)
    write(os.path.join(root.path, "var/lib/dpkg/status"), body)


def set_version(root, name, version):
    path = os.path.join(root.path, "var/lib/dpkg/status")
    text = open(path).read()
    new = re.sub(r"(Package: %s\n(?:[^\n]+\n)*?Version: )[^\n]+" % re.escape(name), r"\g<1>" + version, text)
    assert new != text, name
    write(path, new)


def intel_root(tmp_path, gpus=2):
    root = Root(tmp_path / "root").add_gpus(gpus, device=0x56a0)
    dpkg(root, INTEL + OTHERS)
    cache = os.path.join(root.path, "cache")
    names = hf_builder.valid_cache(cache)["model"]  # path -> blob of the last revision (COMMIT_B)
    snap = os.path.join(cache, "models--org--tiny", "snapshots", hf_builder.COMMIT_B)
    size = {p: os.path.getsize(os.path.join(snap, p)) for p in ("config.json", "model.safetensors")}
    listing = {"format_version": 1, "files": {
        "config.json": {"size": size["config.json"], "blob_id": names["config.json"]},
        "model.safetensors": {"size": size["model.safetensors"], "blob_id": "0" * 40,
                              "lfs_sha256": names["model.safetensors"], "lfs_size": size["model.safetensors"]}}}
    write(os.path.join(cache, "models--org--tiny", "trees", hf_builder.COMMIT_B + ".json"), json.dumps(listing))
    return root


def env():
    e = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE_", "ZE_", "GPUGATE_FAKE"))}
    e["HF_HUB_CACHE"] = "/cache"  # read under --root
    return e


def freeze(root, tmp_path, *args, name="frozen.yaml", base=BASE):
    out = str(tmp_path / name)
    r = run_gpugate("spec", "freeze", "--root", root.path, "--spec", write(str(tmp_path / "base.yaml"), base),
                    "-o", out, *args, env=env())
    assert r.rc == 0, r
    return out, open(out).read()


def check(root, spec, only="packages,devices,hf.models,hf.layout"):
    return run_gpugate("check", "--root", root.path, "--spec", spec, "--only", only, "--format", "json", env=env())


def test_frozen_spec_passes_then_fails_naming_the_changed_package(tmp_path):
    root = intel_root(tmp_path)
    spec, text = freeze(root, tmp_path)
    for name, version in INTEL:
        assert f"- {name} (= {version})" in text, text
    for name, _ in OTHERS:
        assert name not in text.split("packages:")[1].split("devices:")[0], text  # not a GPU package
    assert "vendor: intel\n  min_gpus: 2\n  by_path: require" in text, text
    assert text.startswith("# Frozen by `gpugate spec freeze`"), text
    r = check(root, spec)
    assert r.rc == 0, r
    assert r.check("packages.installed")["summary"] == "all 5 pinned package relations hold", r
    set_version(root, "intel-opencl-icd", "24.35.30872.22-1")
    r = check(root, spec)
    assert r.rc == 1, r
    c = r.check("packages.installed")
    assert c["status"] == "fail" and c["summary"].endswith("do not hold: intel-opencl-icd"), c
    assert all(r.check(i)["status"] == "pass" for i in ("devices.gpus", "hf.models")), r


def test_floor_pins_minimums_newer_passes_older_fails(tmp_path):
    root = intel_root(tmp_path, gpus=1)
    spec, text = freeze(root, tmp_path, "--floor")
    assert "- libze1 (>= 1.17.6-1)" in text and "min_gpus: 1" in text, text
    set_version(root, "libze1", "1.18.0-1")
    assert check(root, spec).rc == 0
    set_version(root, "libze1", "1.17.5-1")
    r = check(root, spec)
    assert r.rc == 1 and r.check("packages.installed")["summary"].endswith("do not hold: libze1"), r


def test_a_lost_gpu_fails_against_the_frozen_count(tmp_path):
    root = intel_root(tmp_path, gpus=2)
    spec, _ = freeze(root, tmp_path)
    os.unlink(os.path.join(root.path, "dev/dri/card1"))
    os.unlink(os.path.join(root.path, "dev/dri/renderD129"))
    r = check(root, spec)
    assert r.rc == 1 and "the spec requires at least 2" in json.dumps(r.check("devices.gpus")), r


def test_models_are_pinned_at_their_commits_with_the_listing_files(tmp_path):
    root = intel_root(tmp_path, gpus=1)
    spec, text = freeze(root, tmp_path)
    hf = text.split("\nhf:\n")[1]
    assert "integrity: true" in hf, hf
    assert ("- repo: org/tiny\n      revision: %s\n      files: # the 2 files of its trees/%s.json listing\n"
            "        - config.json\n        - model.safetensors\n" % (hf_builder.COMMIT_B, hf_builder.COMMIT_B)) in hf, hf
    assert "- repo: glue\n      type: dataset\n      revision: " + hf_builder.COMMIT_A in hf, hf
    assert "- repo: org/tiny\n      revision: " + hf_builder.COMMIT_A in hf, hf  # ref v1
    assert check(root, spec).rc == 0
    # a file the listing names, gone from the snapshot: hf.models names it
    os.unlink(os.path.join(root.path, "cache/models--org--tiny/snapshots", hf_builder.COMMIT_B, "config.json"))
    r = check(root, spec)
    assert r.rc == 1 and "config.json" in json.dumps(r.check("hf.models")), r



def test_a_listing_of_one_file_is_counted_in_the_singular(tmp_path):
    """The counts freeze writes go through the one plural rule (count_noun)."""
    root = intel_root(tmp_path, gpus=1)
    cache = os.path.join(root.path, "cache")
    hf_builder.write_listing(cache, "models--solo", hf_builder.COMMIT_A, {"w.bin": (b"\0" * 70000, True)})
    out = str(tmp_path / "frozen.yaml")
    r = run_gpugate("spec", "freeze", "--root", root.path, "--spec", write(str(tmp_path / "base.yaml"), BASE),
                    "-o", out, env=env())
    summary = r"spec freeze: .*frozen.yaml: \d+ packages, 1 intel GPU, \d+ model revisions"
    assert r.rc == 0 and re.search(summary, r.err), r
    spec, text = out, open(out).read()
    assert "# The GPUs: 1 intel GPU with a bound driver" in text, text
    assert ("- repo: solo\n      revision: %s\n      files: # the 1 file of its trees/%s.json listing\n"
            "        - w.bin\n" % (hf_builder.COMMIT_A, hf_builder.COMMIT_A)) in text, text
    assert "# the 2 files of its trees/" in text, text
    assert check(root, spec).rc == 0

def test_nvidia_root_pins_the_nvidia_packages(tmp_path):
    root = Root(tmp_path / "root").add_gpu("0000:17:00.0", vendor=0x10de, device=0x2330, driver="nvidia", by_path=False)
    mknod(root.p("dev/nvidia0"), 195, 0, 0o666)
    mknod(root.p("dev/nvidiactl"), 195, 255, 0o666)
    dpkg(root, INTEL[:1] + [("libnvidia-compute-580", "580.159.04-0ubuntu1"), ("libcuda1", "580.159.04-1"),
                            ("nvidia-utils-580", "580.159.04-0ubuntu1")] + OTHERS)
    spec, text = freeze(root, tmp_path, base="deadline: 20s\n")
    assert "- libnvidia-compute-580 (= 580.159.04-0ubuntu1)" in text and "- libcuda1 (= 580.159.04-1)" in text, text
    assert "libze1" not in text, text  # not an NVIDIA package, and the base names none
    assert "vendor: nvidia\n  min_gpus: 1\n" in text and "by_path" not in text, text
    r = check(root, spec, only="packages,devices.gpus")
    assert r.rc == 0, r
    set_version(root, "libcuda1", "575.57.08-1")
    r = check(root, spec, only="packages,devices.gpus")
    assert r.rc == 1 and r.check("packages.installed")["summary"].endswith("do not hold: libcuda1"), r


def test_to_standard_output_and_usage_errors(tmp_path):
    root = intel_root(tmp_path, gpus=1)
    r = run_gpugate("spec", "freeze", "--root", root.path, env=env())
    assert r.rc == 0 and "packages:\n  - intel-igc-core (= 1.0.17193.4)" in r.out, r
    assert "standard output: 5 packages, 1 intel GPU, 4 model revisions" in r.err, r
    for args, words in [(["--with-baselines"], "give -o FILE"), (["--bogus"], "unknown option '--bogus'"),
                        (["--profile", "nope"], "unknown profile 'nope'"),
                        (["--root", str(tmp_path / "missing")], "No such file or directory"),
                        (["--root", str(tmp_path / "missing")], "Try 'gpugate spec freeze --help'"),
                        (["--spec", write(str(tmp_path / "bad.yaml"), "packages: [\n")], "spec error")]:
        r = run_gpugate("spec", "freeze", *args, env=env())
        assert r.rc == 3 and words in r.err, (args, r)
    assert run_gpugate("spec", "thaw").rc == 3


def test_output_to_a_fifo_is_written_through(tmp_path):
    """-o at a FIFO writes into it; it is never replaced by a regular file."""
    root = intel_root(tmp_path, gpus=1)
    fifo = str(tmp_path / "pipe")
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", fifo], stdout=subprocess.PIPE, text=True)
    r = run_gpugate("spec", "freeze", "--root", root.path, "-o", fifo, env=env())
    out = reader.communicate(timeout=10)[0]
    assert r.rc == 0 and "packages:" in out, r
    assert os.path.exists(fifo) and not os.path.isfile(fifo)


def test_output_through_a_link_to_a_longer_file_is_cut_to_the_spec(tmp_path):
    """-o at a link (as /dev/stdout is) writes through it, from the start: a
    longer file it points at must not keep its old tail after the spec."""
    root = intel_root(tmp_path, gpus=1)
    target = tmp_path / "old.yaml"
    target.write_text("#" * 100000)
    link = tmp_path / "link.yaml"
    link.symlink_to(target)
    r = run_gpugate("spec", "freeze", "--root", root.path, "-o", str(link), env=env())
    assert r.rc == 0, r
    assert link.is_symlink() and os.readlink(link) == str(target)
    # Two freezes may straddle a second boundary: compare them with the freeze time masked.
    def untimed(text):
        return re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "TIME", text)
    fresh = run_gpugate("spec", "freeze", "--root", root.path, env=env())
    assert fresh.rc == 0, fresh
    written = target.read_text()
    assert len(written) < 100000 and untimed(written) == untimed(fresh.out)


def test_output_to_a_fifo_nobody_reads_is_an_error_not_a_hang(tmp_path):
    root = intel_root(tmp_path, gpus=1)
    fifo = str(tmp_path / "pipe")
    os.mkfifo(fifo)
    r = run_gpugate("spec", "freeze", "--root", root.path, "-o", fifo, env=env(), timeout=20)
    assert r.rc != 0 and "is a FIFO that nobody reads" in r.err, r
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_with_baselines_records_the_measured_figures_beside_the_spec(tmp_path):
    root = intel_root(tmp_path, gpus=1)
    base = BASE + "runtime:\n  backend: level-zero\n  timeout: 30s\n  bandwidth_buffer: 16MiB\n"
    e = env()
    e.update({"ZE_ENABLE_ALT_DRIVERS": FAKE, "LD_LIBRARY_PATH": "/usr/lib/x86_64-linux-gnu",
              "XDG_RUNTIME_DIR": str(tmp_path)})
    out = str(tmp_path / "stack.yaml")
    r = run_gpugate("spec", "freeze", "--root", root.path, "--spec", write(str(tmp_path / "base.yaml"), base),
                    "--with-baselines", "-o", out, env=e, timeout=120)
    assert r.rc == 0, r
    text = open(out).read()
    folder = str(tmp_path / "stack.baselines")
    assert f'  performance: true\n  baselines: "{folder}"' in text or f"  baselines: {folder}" in text, text
    baseline = json.load(open(os.path.join(folder, "8086-56a0-level-zero.json")))
    assert abs(baseline["copy_bandwidth_gbs"] - 400.0) < 1 and baseline["launch_latency_us"] > 0, baseline
    assert baseline["name"] == "Fake Arc A770 #0" and baseline["recorded"]["buffer_bytes"] == 16 << 20, baseline
    r = run_gpugate("check", "--root", root.path, "--spec", out, "--only", "packages,runtime", "--format", "json",
                    env=e, timeout=120)
    assert r.rc == 0 and "within 20% of the baseline on 1 device" in r.check("runtime.performance")["summary"], r
    e["GPUGATE_FAKE_FAULT"] = "slow_copy"  # 30% slower than at the freeze
    r = run_gpugate("check", "--root", root.path, "--spec", out, "--only", "runtime", "--format", "json",
                    env=e, timeout=120)
    c = r.check("runtime.performance")
    assert r.rc == 1 and "30% below the baseline 400.0 GB/s" in c["summary"] and folder in c["summary"], r


def test_with_baselines_on_the_fake_cuda_gpu_keyed_by_name(tmp_path):
    """The fake libcuda reports no PCI device id outside /sys: the baseline is keyed by name."""
    fake_cuda = os.path.join(os.path.dirname(os.path.abspath(GPUGATE)), "tests", "fake_cuda")
    e = env()
    e.update({"LD_LIBRARY_PATH": fake_cuda, "XDG_RUNTIME_DIR": str(tmp_path)})
    base = write(str(tmp_path / "base.yaml"), "runtime:\n  backend: cuda\n  timeout: 30s\n  bandwidth_buffer: 16MiB\n")
    out = str(tmp_path / "cuda.yaml")
    r = run_gpugate("spec", "freeze", "--spec", base, "--vendor", "nvidia", "--with-baselines", "-o", out, env=e,
                    timeout=120)
    assert r.rc == 0, r
    baseline = json.load(open(str(tmp_path / "cuda.baselines" / "10de-fake-gpu-0-cuda.json")))
    assert baseline["name"] == "Fake GPU 0" and "device_id" not in baseline, baseline
    assert abs(baseline["copy_bandwidth_gbs"] - 2000.0) < 1, baseline
    r = run_gpugate("check", "--spec", out, "--only", "runtime", "--format", "json", env=e, timeout=120)
    assert r.rc == 0 and "within 20% of the baseline" in r.check("runtime.performance")["summary"], r
    e["FAKE_CUDA_FAULT"] = "slow_copy"
    r = run_gpugate("check", "--spec", out, "--only", "runtime", "--format", "json", env=e, timeout=120)
    assert r.rc == 1 and "1400.0 GB/s is 30% below the baseline 2000.0 GB/s" in r.check("runtime.performance")["summary"], r


def test_the_base_extends_a_profile_and_its_other_sections_are_kept(tmp_path):
    root = intel_root(tmp_path, gpus=1)
    spec, text = freeze(root, tmp_path, base="extends: validate\nreports:\n  nfd_prefix: gpu.example.com\n")
    assert "\nprofile: validate\n" in text and "\ndeadline: 300s\n" in text, text
    assert "\nreports:\n  nfd_prefix: gpu.example.com\n" in text and "  tolerance: 20%\n" in text, text
    assert "\nextends:" not in text, text  # the frozen spec stands alone
    for name, version in INTEL:  # validate's Intel pins name them all
        assert f"- {name} (= {version})" in text, text
    assert check(root, spec, only="packages,devices.gpus").rc == 0


def test_a_root_with_nothing_to_pin_is_refused(tmp_path):
    """An empty --root (no dpkg database, no GPU): a spec pinning nothing would pass on any
    machine, so none is written, exit 3, and the message names the root and both reasons."""
    empty = tmp_path / "empty"
    empty.mkdir()
    out = tmp_path / "frozen.yaml"
    r = run_gpugate("spec", "freeze", "--root", str(empty), "-o", str(out), env=env())
    assert r.rc == 3, r
    assert f"nothing to pin under {empty}: no dpkg database" in r.err, r
    assert "no intel GPU with a bound driver and a device node" in r.err, r
    assert not out.exists(), r
    # to standard output too: nothing written there
    r = run_gpugate("spec", "freeze", "--root", str(empty), "--vendor", "nvidia", env=env())
    assert r.rc == 3 and r.out == "" and "no nvidia GPU" in r.err, r


def test_half_a_stack_is_frozen_with_a_warning_and_an_honest_header(tmp_path):
    """Packages but no GPU: written, with a warning that min_gpus 0 requires none. GPUs but
    no dpkg database: written, with a warning, and the header does not claim that a
    changed package fails."""
    no_gpu = Root(tmp_path / "nogpu")
    dpkg(no_gpu, INTEL + OTHERS)
    r = run_gpugate("spec", "freeze", "--root", no_gpu.path, env=env())
    assert r.rc == 0 and "min_gpus: 0\n" in r.out, r
    assert "warning: no intel GPU with a bound driver and a device node: min_gpus: 0 requires none" in r.err, r
    assert "a changed package fails, naming it" in r.out, r

    no_dpkg = Root(tmp_path / "nodpkg").add_gpus(1, device=0x56a0)
    r = run_gpugate("spec", "freeze", "--root", no_dpkg.path, env=env())
    assert r.rc == 0 and "min_gpus: 1\n" in r.out, r
    assert "warning: no package is pinned: no dpkg database (cannot open " in r.err, r
    assert "a changed package fails" not in r.out, r
    assert "# (no package is pinned, see below: a changed package goes unnoticed)." in r.out, r
