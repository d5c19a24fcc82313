"""gpugate bundle: fixed member names, the validate report, and no secret
anywhere inside (environment values, the HF token file's content), for the
Level Zero test driver and the fake libcuda (tests/fakes/), to a file and
through a pipe (-o -)."""
import io
import json
import os
import stat
import subprocess
import tarfile

import pytest

GPUGATE = os.environ.get("GPUGATE", os.path.join(os.path.dirname(__file__), "../../build/gpugate"))
FAKE_ZE = os.environ.get("GPUGATE_FAKE_ZE") or os.path.join(
    os.path.dirname(os.path.abspath(GPUGATE)), "fakes", "libze_fake.so")
# prints a newer loader's ZE_LOADER_DEBUG_TRACE lines (tests/fakes/fake_ze_loader.c)
FAKE_LOADER_DIR = os.path.join(os.path.dirname(os.path.abspath(FAKE_ZE)), "loader")
REAL_LOADER = "/usr/lib/x86_64-linux-gnu/libze_loader.so.1"
REAL_DRIVER = "/usr/lib/x86_64-linux-gnu/libze_intel_gpu.so.1"
# the kernel command line only with --with-cmdline (issue 26)
COMMON = {"report.json", "report-stderr.txt", "environment.txt", "packages.txt", "dev-dri.txt",
          "gpus.txt", "mountinfo.txt", "os-release.txt", "kernel-gpu.txt", "index.txt"}
ZE_MEMBERS = {"probe.txt", "probe-stderr.txt", "ze-loader-debug.txt"}
CUDA_MEMBERS = {"cuda-probe.txt", "cuda-probe-stderr.txt", "nvidia-smi.txt", "nvidia-proc.txt"}
# this machine has no GPU: --backend auto collects what both runtimes say
MEMBERS = COMMON | ZE_MEMBERS | CUDA_MEMBERS
FAKE_CUDA = os.path.join(os.path.dirname(os.path.abspath(GPUGATE)), "tests", "fake_cuda")
SECRETS = {"HF_TOKEN": "hf_envtokenvalue_42", "MY_API_KEY": "k3y-value-xyz",
           "DB_PASSWORD": "pa55word!", "AWS_SECRET_ACCESS_KEY": "aws/secret+value",
           "GITHUB_TOKEN": "ghp_tokenvalue"}


def bundle_env(tmp_path, extra_env=None):
    env = {k: v for k, v in os.environ.items() if "TOKEN" not in k and "KEY" not in k}
    env.update(SECRETS)
    env["HF_HOME"] = str(tmp_path / "hfhome")
    env["https_proxy"] = "http://alice:proxypass99@proxy.example:3128"
    for k, v in (extra_env or {}).items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    (tmp_path / "hfhome").mkdir(exist_ok=True)
    (tmp_path / "hfhome" / "token").write_text("hf_filetokenvalue_77\n")
    return env


def run_bundle(tmp_path, extra_env=None, args=None):
    env = bundle_env(tmp_path, extra_env)
    out = tmp_path / "diag.tar.gz"
    r = subprocess.run([GPUGATE, "bundle", *(["-o", str(out)] if args is None else args)], env=env,
                       capture_output=True, text=True, timeout=300)
    return r, out


def read_all(path):
    with (tarfile.open(path, "r:gz") if isinstance(path, (str, os.PathLike))
          else tarfile.open(fileobj=io.BytesIO(path), mode="r:gz")) as t:
        members = t.getmembers()
        return members, {m.name: t.extractfile(m).read() for m in members}


def test_bundle_contents_and_no_secrets(tmp_path):
    r, out = run_bundle(tmp_path)
    assert r.returncode == 0, r.stderr
    assert "wrote" in r.stderr and str(out) in r.stderr
    members, data = read_all(out)
    assert {m.name for m in members} == {"gpugate-bundle/" + n for n in MEMBERS}
    assert all(m.isfile() and m.mode == 0o644 for m in members)
    blob = b"\n".join(data.values())
    for value in list(SECRETS.values()) + ["hf_filetokenvalue_77", "proxypass99"]:
        assert value.encode() not in blob, value
    env_txt = data["gpugate-bundle/environment.txt"].decode()
    assert "HF_TOKEN=<redacted>\n" in env_txt  # on the allow-list (HF_*), a secret name
    for name in set(SECRETS) - {"HF_TOKEN"}:  # off the allow-list: left out, name and all
        assert name not in env_txt, env_txt
    assert "https_proxy" not in env_txt, env_txt
    assert "HF_HOME=%s" % (tmp_path / "hfhome") in env_txt
    report = json.loads(data["gpugate-bundle/report.json"])
    assert report["profile"] == "validate" and report["checks"]
    index = data["gpugate-bundle/index.txt"].decode()
    assert "report.json: gpugate check --profile validate --format json: exit" in index
    assert "probe.txt:" in index
    mounts = data["gpugate-bundle/mountinfo.txt"].decode()
    assert " / / " in mounts


def test_bundle_package_versions_match_dpkg(tmp_path):
    r, out = run_bundle(tmp_path)
    assert r.returncode == 0, r.stderr
    _, data = read_all(out)
    listed = {}
    for line in data["gpugate-bundle/packages.txt"].decode().splitlines():
        if not line.startswith("#"):
            name, version, arch, _ = line.split("\t")
            listed[name] = version
    q = subprocess.run(["dpkg-query", "-W", "-f", "${Package}\t${Version}\n", "libdrm*", "intel-*"],
                       capture_output=True, text=True)
    expected = dict(line.split("\t") for line in q.stdout.splitlines() if line.split("\t")[1])
    for name, version in expected.items():
        assert listed.get(name) == version, name


def test_bundle_secret_value_inside_other_text_is_scrubbed(tmp_path):
    # a secret that also shows up in a non-secret variable's value
    r, out = run_bundle(tmp_path, {"GPUGATE_NOTE": "uses pa55word! inside"})
    assert r.returncode == 0
    _, data = read_all(out)
    assert "GPUGATE_NOTE=uses <redacted> inside" in data["gpugate-bundle/environment.txt"].decode()


# values that are credentials whatever their variable's name (issue 26)
CREDENTIALS = {
    "GH_PAT": "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z",
    "AUTH_HEADER": "Bearer abc.def.ghi-opaque-session",
    "GPUGATE_NOTE_PAT": "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
    "HF_ENDPOINT": "https://mirror-user:mirr0rpass@hub.example.org",
    "CUDA_CACHE_NOTE": "AKIAIOSFODNN7EXAMPLE",
    "ZE_DEBUG_NOTE": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
    "NVIDIA_NOTE": "Zx8Qm2Lp9Rt4Wv7Yb1Nc6Hd3Jf5Kg0Ts8Ue2Ia4Ob",
    "GPUGATE_HF_NOTE": "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz0123",
}
# values that must stay: paths, versions, UUIDs, hex ids, the locale
KEPT = {"ZE_ENABLE_PCI_ID_DEVICE_ORDER": "1", "CUDA_VISIBLE_DEVICES": "GPU-8b6f3a4e-1d2c-4b5a-9e8f-7a6b5c4d3e2f",
        "LD_LIBRARY_PATH": "/usr/local/cuda-12.4/targets/x86_64-linux/lib:/opt/intel/oneapi/lib",
        "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "HF_HUB_CACHE": "/models/hub",
        "GPUGATE_NOTE_COMMIT": "0123456789abcdef0123456789abcdef01234567"}


def test_bundle_keeps_only_the_allow_list_and_no_credential_whatever_its_name(tmp_path):
    r, out = run_bundle(tmp_path, {**CREDENTIALS, **KEPT, "UNRELATED_SETTING": "plain-value-42"})
    assert r.returncode == 0, r.stderr
    members, data = read_all(out)
    blob = b"\n".join(data.values())
    for name, value in CREDENTIALS.items():
        assert value.encode() not in blob, (name, value)
    env_txt = data["gpugate-bundle/environment.txt"].decode()
    for name in CREDENTIALS:
        if name in ("GH_PAT", "AUTH_HEADER"):
            assert name not in env_txt, env_txt  # off the list
        else:
            assert "%s=<redacted>\n" % name in env_txt, (name, env_txt)
    for name, value in KEPT.items():
        assert "%s=%s\n" % (name, value) in env_txt, (name, env_txt)
    assert "UNRELATED_SETTING" not in env_txt and "plain-value-42" not in env_txt, env_txt
    assert "other variables left out" in env_txt, env_txt
    index = data["gpugate-bundle/index.txt"].decode()
    assert "environment.txt: " in index and "others left out" in index, index
    assert "cmdline.txt: not collected" in index, index
    assert "gpugate-bundle/cmdline.txt" not in {m.name for m in members}


def test_bundle_kernel_command_line_only_on_request(tmp_path):
    r, out = run_bundle(tmp_path, args=["-o", str(tmp_path / "diag.tar.gz"), "--with-cmdline"])
    assert r.returncode == 0, r.stderr
    _, data = read_all(out)
    with open("/proc/cmdline", "rb") as f:
        assert data["gpugate-bundle/cmdline.txt"] == f.read()
    assert "cmdline.txt: /proc/cmdline (--with-cmdline)" in data["gpugate-bundle/index.txt"].decode()
    help_text = subprocess.run([GPUGATE, "bundle", "--help"], capture_output=True, text=True)
    assert help_text.returncode == 0 and "--with-cmdline" in help_text.stdout
    assert "ZE_*, CUDA_*, NVIDIA_*, HF_*, GPUGATE_*" in help_text.stdout


def test_bundle_usage_and_unwritable_output(tmp_path):
    r, _ = run_bundle(tmp_path, args=[])
    assert r.returncode == 3 and "-o FILE.tar.gz is required" in r.stderr
    for args, words in [(["-o", "x", "--backend", "rocm"], "not auto, level-zero or cuda"),
                        (["-o", "x", "--spec", "a.yaml", "--profile", "ci"], "give one"),
                        (["-o", "x", "--spec", str(tmp_path / "none.yaml")], "none.yaml: No such file"),
                        (["-o", "x", "--profile", "fast"], "unknown profile 'fast'")]:
        r, _ = run_bundle(tmp_path, args=args)
        assert r.returncode == 3 and words in r.stderr, (args, r.stderr)
    r, _ = run_bundle(tmp_path, args=["-o", str(tmp_path / "no/such/dir/x.tar.gz")])
    assert r.returncode == 1 and "no/such/dir" in r.stderr
    assert not os.path.exists(tmp_path / "no")


def test_installed_layout_finds_the_provision_executable(tmp_path):
    import shutil
    prov = os.path.join(os.path.dirname(os.path.abspath(GPUGATE)), "gpugate-provision")
    (tmp_path / "bin").mkdir()
    shutil.copy(GPUGATE, tmp_path / "bin/gpugate")
    r = subprocess.run([str(tmp_path / "bin/gpugate"), "stack", "--help"], capture_output=True, text=True)
    assert r.returncode == 3 and "needs gpugate-provision" in r.stderr
    (tmp_path / "libexec/gpugate").mkdir(parents=True)
    shutil.copy(prov, tmp_path / "libexec/gpugate/gpugate-provision")
    r = subprocess.run([str(tmp_path / "bin/gpugate"), "stack", "--help"], capture_output=True, text=True)
    assert r.returncode == 0 and "gpugate stack fetch --manifest" in r.stdout


def loader_debug(tmp_path, extra_env):
    r, out = run_bundle(tmp_path, extra_env)
    assert r.returncode == 0, r.stderr
    members, data = read_all(out)
    assert "gpugate-bundle/ze-loader-debug.txt" in {m.name for m in members}
    blob = b"\n".join(data.values())
    for value in list(SECRETS.values()) + ["hf_filetokenvalue_77", "proxypass99"]:
        assert value.encode() not in blob, value
    return (data["gpugate-bundle/ze-loader-debug.txt"].decode(), data["gpugate-bundle/probe.txt"].decode(),
            data["gpugate-bundle/index.txt"].decode(), data["gpugate-bundle/probe-stderr.txt"].decode())


def real_loader_has_trace():
    """The oracle: a loader reads only the variables whose names it holds."""
    with open(os.path.realpath(REAL_LOADER), "rb") as f:
        return b"ZE_ENABLE_LOADER_DEBUG_TRACE" in f.read()


@pytest.mark.skipif(not os.path.exists(REAL_LOADER), reason="libze1 not installed")
def test_bundle_loader_debug_real_loader_with_fake_driver(tmp_path):
    dbg, probe, index, _ = loader_debug(tmp_path, {"ZE_ENABLE_ALT_DRIVERS": FAKE_ZE})
    assert "stage init" in probe and '"ok":true' in probe and "Fake Arc" in probe
    assert "# loader: /usr/lib/x86_64-linux-gnu/libze_loader.so.1" in dbg
    if real_loader_has_trace():
        assert "ZE_LOADER_DEBUG_TRACE" in dbg.split("## ZE_ENABLE_LOADER_DEBUG_TRACE=1")[1]
    else:  # Debian 12's 1.8.12: no trace of its own; its library search is the record
        assert "this loader has no debug trace or log of its own" in dbg
        assert "(0 lines)" in dbg
    search = dbg.split("## LD_DEBUG=libs")[1]
    assert "find library=libze_loader.so.1" in search
    assert "calling init: %s" % FAKE_ZE in search  # the loader loaded the test driver
    assert "libyaml" not in search  # gpugate's own libraries are left out
    assert "probe.txt: gpugate probe --backend level-zero --smoke: exit 0" in index
    assert "ze-loader-debug.txt: 0 loader trace lines" in index or real_loader_has_trace()


@pytest.mark.skipif(not os.path.exists(REAL_DRIVER), reason="intel-opencl-icd (libze_intel_gpu) not installed")
def test_bundle_loader_debug_real_loader_with_real_intel_driver(tmp_path):
    dbg, probe, index, stderr = loader_debug(tmp_path, {"ZE_ENABLE_ALT_DRIVERS": None})
    search = dbg.split("## LD_DEBUG=libs")[1]
    # the loader's driver search: the Intel GPU driver found and initialised,
    # the VPU driver looked for (not installed here)
    assert "find library=libze_intel_gpu.so.1" in search
    assert "calling init: /lib/x86_64-linux-gnu/libze_intel_gpu.so.1" in search or \
        "calling init: /usr/lib/x86_64-linux-gnu/libze_intel_gpu.so.1" in search
    assert "find library=libze_intel_vpu.so.1" in search
    if not os.path.exists("/dev/dri"):  # no GPU: the driver declines, and the stage log says where
        assert "stage init" in probe
        if "incompatible with sanitizer runtime" in stderr:
            return  # the ASan build: the real driver dlopens with RTLD_DEEPBIND, which ASan refuses
        assert "ZE_RESULT_ERROR_UNINITIALIZED" in probe
        assert "probe.txt: gpugate probe --backend level-zero --smoke: exit 3" in index


def test_bundle_loader_debug_trace_lines_of_a_newer_loader(tmp_path):
    assert os.path.exists(os.path.join(FAKE_LOADER_DIR, "libze_loader.so.1")), "make builds fakes/loader"
    dbg, probe, index, _ = loader_debug(tmp_path, {"LD_LIBRARY_PATH": FAKE_LOADER_DIR})
    trace = dbg.split("## ZE_ENABLE_LOADER_DEBUG_TRACE=1")[1].split("##")[0]
    assert "(2 lines)" in trace
    assert "ZE_LOADER_DEBUG_TRACE:Load Library of libze_intel_gpu.so.1 failed" in trace
    assert "ZE_LOADER_DEBUG_TRACE:check_drivers(fake) returned ZE_RESULT_ERROR_UNINITIALIZED" in trace
    assert "ze-loader-debug.txt: 2 loader trace lines" in index
    assert "libze_loader.so.1 lacks" in probe  # this stand-in exports no API


def no_secrets(data):
    blob = b"\n".join(data.values())
    for value in list(SECRETS.values()) + ["hf_filetokenvalue_77", "proxypass99"]:
        assert value.encode() not in blob, value


def test_bundle_to_a_pipe_with_fake_cuda(tmp_path):
    """-o - streams the archive to standard output: docker exec C gpugate bundle -o - > b.tar.gz."""
    assert os.path.exists(os.path.join(FAKE_CUDA, "libcuda.so.1")), "make cuda-test-programs builds it"
    env = bundle_env(tmp_path, {"LD_LIBRARY_PATH": FAKE_CUDA})
    p = subprocess.Popen([GPUGATE, "bundle", "-o", "-", "--backend", "cuda"], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    tgz, err = p.communicate(timeout=300)
    assert p.returncode == 0, err
    assert b"wrote the bundle to standard output" in err and tgz[:2] == b"\x1f\x8b", err
    assert not os.path.exists("-")
    members, data = read_all(tgz)
    assert {m.name for m in members} == {"gpugate-bundle/" + n for n in COMMON | CUDA_MEMBERS}
    no_secrets(data)
    index = data["gpugate-bundle/index.txt"].decode()
    assert "cuda-probe.txt: gpugate probe --backend cuda --smoke --telemetry --processes: exit 0" in index, index
    assert "libcuda: %s/libcuda.so.1, driver version 12.4" % FAKE_CUDA in index, index
    probe = data["gpugate-bundle/cuda-probe.txt"].decode()
    assert '"ok":true' in probe and "Fake GPU 0" in probe and '"telemetry"' in probe, probe
    assert "/proc/driver/nvidia" in data["gpugate-bundle/nvidia-proc.txt"].decode()


def test_bundle_level_zero_only_with_a_spec(tmp_path):
    spec = tmp_path / "mine.yaml"
    spec.write_text("runtime:\n  backend: level-zero\n  smoke: true\n")
    r, out = run_bundle(tmp_path, {"ZE_ENABLE_ALT_DRIVERS": FAKE_ZE},
                        args=["-o", str(tmp_path / "diag.tar.gz"), "--backend", "level-zero", "--spec", str(spec)])
    assert r.returncode == 0, r.stderr
    members, data = read_all(out)
    assert {m.name for m in members} == {"gpugate-bundle/" + n for n in COMMON | ZE_MEMBERS | {"spec.yaml"}}
    no_secrets(data)
    index = data["gpugate-bundle/index.txt"].decode()
    assert "report.json: gpugate check --spec %s --format json: exit 0" % spec in index, index
    report = json.loads(data["gpugate-bundle/report.json"])
    assert [c["id"] for c in report["checks"]][0] == "runtime.loader", report
    assert data["gpugate-bundle/spec.yaml"] == spec.read_bytes()
    assert '"ok":true' in data["gpugate-bundle/probe.txt"].decode()


@pytest.mark.parametrize("kind", ["fifo", "symlink", "null"])
def test_bundle_target_that_is_not_a_regular_file_is_written_through(tmp_path, kind):
    """A FIFO, a link (as /dev/stdout is) or a character device (as /dev/null
    is, made here with mknod) is opened and written, never replaced."""
    target = tmp_path / "target"
    real = tmp_path / "real.tar.gz"
    if kind == "null":
        try:
            os.mknod(target, stat.S_IFCHR | 0o666, os.makedev(1, 3))  # /dev/null's numbers
        except PermissionError:
            pytest.skip("mknod needs CAP_MKNOD (CI runs as root)")
        r, _ = run_bundle(tmp_path, {"ZE_ENABLE_ALT_DRIVERS": FAKE_ZE},
                          args=["-o", str(target), "--backend", "level-zero"])
        assert r.returncode == 0, r.stderr
        st = os.lstat(target)
        assert stat.S_ISCHR(st.st_mode) and st.st_rdev == os.makedev(1, 3)
        assert not [n for n in os.listdir(tmp_path) if n.startswith(".")]  # no temp file left beside it
        return
    if kind == "fifo":
        os.mkfifo(target)
        reader = subprocess.Popen(["cat", str(target)], stdout=subprocess.PIPE)
    else:
        real.write_bytes(b"old")
        os.symlink(real, target)
    r, _ = run_bundle(tmp_path, {"ZE_ENABLE_ALT_DRIVERS": FAKE_ZE}, args=["-o", str(target), "--backend", "level-zero"])
    assert r.returncode == 0, r.stderr
    tgz = reader.communicate(timeout=60)[0] if kind == "fifo" else real.read_bytes()
    assert os.path.lexists(target) and not (os.path.isfile(target) and not os.path.islink(target))
    if kind == "symlink":
        assert os.readlink(target) == str(real)
    members, data = read_all(tgz)
    assert "gpugate-bundle/index.txt" in {m.name for m in members}
    no_secrets(data)
