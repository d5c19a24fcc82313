"""Words that agree with the program (issue 31 item 6): every count a user
reads goes through one plural rule (count_noun, src/lib/util.c), sizes are
human, -v shows values rather than cut JSON, a run whose report is lost says
so first, and the README and man page claims that can be checked are."""
import os
import pty
import re
import subprocess
from pathlib import Path

import pytest

import hf_builder as hb
from conftest import GPUGATE, dpkg_root, run_gpugate, spec_file, stanza
from hf_upstream import hub_env as hf_env
from test_runtime import FAKE

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text()
MAN = (REPO / "src" / "man" / "gpugate.1.in").read_text()

# "1 warnings", "1 repos", "(1 devices)", "all 1 pinned ...": a count of one
# with a plural noun after it
ONE_PLURAL = re.compile(r"(?<![\d.])1 (?:pinned package |lock |required )?(warnings|repos|files|devices|blobs|"
                        r"problems|revisions|relations|GPUs|nodes|models|packages|lines|variables|errors)\b|"
                        r"1 other processes|all 1 |"
                        r"\(1 were ")


def assert_singular(text):
    bad = ONE_PLURAL.search(text)
    assert not bad, f"{bad.group(0)!r} in:\n{text}"


def hub_with_one_repo(tmp_path):
    cache = tmp_path / "hub"
    cache.mkdir()
    hb.add_repo(str(cache), "models--solo", {hb.COMMIT_A: {"w.bin": (b"\0" * 7000, True)}}, {"main": hb.COMMIT_A})
    return cache


def test_counts_of_one_are_singular(tmp_path):
    root = dpkg_root(tmp_path, [stanza("libze1", "1.17.0-1")])
    one = spec_file(tmp_path, "packages:\n  - libze1 (>= 1.17)\n")
    r = run_gpugate("--spec", one, "--root", str(root))
    assert r.rc == 0 and "the 1 pinned package relation holds" in r.out, r
    assert_singular(r.out)
    two = spec_file(tmp_path, "packages:\n  - libze1 (>= 1.17)\n  - dpkg\n", name="two.yaml")
    r = run_gpugate("--spec", two, "--root", str(root))
    assert "all 2 pinned package relations hold" in r.out, r
    # the counts lines of text and the job summary: tests/unit/test_report_lines.c
    cache = hub_with_one_repo(tmp_path)
    for args in (["hf", "scan"], ["hf", "verify"]):
        r = run_gpugate(*args, env=hf_env(cache))
        assert r.rc == 0 and ("1 repo," in r.out), r
        assert_singular(r.out)
    spec = spec_file(tmp_path, "hf:\n  require_mount: false\n  integrity: true\n", name="hf.yaml")
    r = run_gpugate("--spec", spec, "--format", "json", env=hf_env(cache))
    for c in r.json()["checks"]:
        assert_singular(c["summary"])



# Counts of one that bypassed count_noun until the audit of issue 31
# (2026-11-28) found them.
def test_hf_checks_count_one_lock_and_one_model_in_the_singular(tmp_path):
    cache = hub_with_one_repo(tmp_path)
    (cache / ".locks" / "models--solo").mkdir(parents=True)
    (cache / ".locks" / "models--solo" / "w.lock").write_text("")
    spec = spec_file(tmp_path, "hf:\n  require_mount: false\n  min_free: 1\n  models: [solo]\n", name="one.yaml")
    r = run_gpugate("--spec", spec, "--only", "hf", env=hf_env(cache))
    assert r.rc == 0 and "hf.locks: 1 lock file" in r.out and "hf.models: " in r.out, r
    assert_singular(r.out)


def test_devices_checks_count_one_node_and_one_gpu_in_the_singular(tmp_path):
    from gpufixture import Root
    root = Root(tmp_path / "root").add_gpu("0000:03:00.0", card=None)  # a render node only
    env = {k: v for k, v in os.environ.items() if k not in ("ZE_AFFINITY_MASK", "ZE_FLAT_DEVICE_HIERARCHY")}
    r = run_gpugate("--root", root.path, "--vendor", "intel", "--only", "devices", env=env)
    assert r.rc == 0 and "devices.nodes: 1 node" in r.out and "devices.visibility: " in r.out, r
    assert_singular(r.out)


def test_runtime_checks_count_one_gpu_in_the_singular(tmp_path):
    """The fake Level Zero driver with one device, then two: runtime.devices,
    .smoke, .memory, .performance and .processes count them through the one
    rule; one foreign process on the GPU is counted in the singular too."""
    from test_runtime_perf import baseline, perf_spec, run
    spec = perf_spec(folder=tmp_path / "baselines", more="  processes: true\n  min_free_memory: 1GiB\n")
    baseline(tmp_path / "baselines")
    for n, gpus, devices in ((1, "1 GPU", "1 device"), (2, "2 GPUs", "2 devices")):
        r = run(tmp_path, "--only", "runtime", "--deadline", "30", spec=spec, extra={"GPUGATE_FAKE_DEVICES": str(n)})
        assert r.rc == 0, r
        summary = {c["id"]: c["summary"] for c in r.json()["checks"]}
        assert summary["runtime.devices"].startswith(gpus + ": "), summary
        assert summary["runtime.smoke"].startswith(f"smoke kernel correct on {devices} ("), summary
        assert summary["runtime.memory"] == f"{devices} with enough memory", summary
        assert summary["runtime.performance"].endswith(f"of the baseline on {devices}"), summary
        assert summary["runtime.processes"] == f"no other process uses the {gpus}", summary
        for text in summary.values():
            assert_singular(text)
    r = run(tmp_path, "--only", "runtime.processes", "--deadline", "30", fault="foreign_process", spec=spec)
    c = r.check("runtime.processes")
    assert c["status"] == "warn" and ": 1 other process uses the GPU: pid 4242" in c["summary"], c
    assert_singular(c["summary"])


def test_device_links_and_nvidia_nodes_count_one_in_the_singular():
    """devices.by_path and devices.nvidia: one GPU reachable, one node usable,
    one problem, each in the singular (fixture roots with real mknod nodes)."""
    from gpufixture import mknod, run, shared_root
    from test_devices import nvidia_root
    with shared_root("gpugate-words-") as root:
        root.add_gpus(1)
        rc, checks, err = run(root, "--only", "devices.by_path")
        assert rc == 0 and checks["devices.by_path"]["summary"].startswith("1 of 1 Intel GPU reachable through "), \
            (checks, err)
        link = root.p("dev/dri/by-path/pci-0000:18:00.0-render")
        os.unlink(link)
        os.symlink("../renderD200", link)
        rc, checks, err = run(root, "--only", "devices.by_path")
        assert rc == 1 and checks["devices.by_path"]["summary"].startswith("1 problem with the links under "), \
            (checks, err)
    with shared_root("gpugate-words-") as root:
        spec = nvidia_root(root)
        rc, checks, err = run(root, "--spec", spec, "--only", "devices.nvidia")
        summary = checks["devices.nvidia"]["summary"]
        assert rc == 0 and summary.startswith("nvidiactl, nvidia-uvm and 1 /dev/nvidiaN node usable; "), (summary, err)
        mknod(root.p("dev/nvidia0"), 195, 3, 0o666)
        rc, checks, err = run(root, "--spec", spec, "--only", "devices.nvidia")
        summary = checks["devices.nvidia"]["summary"]
        assert rc == 1 and summary == "1 problem with the NVIDIA driver and its nodes", (summary, err)


def test_hf_fetch_of_one_file_counts_it_in_the_singular(tmp_path, hub):
    from provision_hub import Repo
    hub.add(Repo("org/one", "0123456789abcdef0123456789abcdef01234567", {"config.json": b"{}\n"}))
    (tmp_path / "xdg").mkdir(mode=0o700)
    env = {"PATH": "/usr/bin:/bin", "HF_ENDPOINT": hub.url, "HF_HOME": str(tmp_path / "home"), "HOME": str(tmp_path),
           "XDG_RUNTIME_DIR": str(tmp_path / "xdg")}
    for _ in range(2):  # downloaded, then already there
        r = run_gpugate("hf", "fetch", "org/one", env=env)
        assert r.rc == 0 and "org/one@main: 1 of 1 file" in r.err, r
        assert_singular(r.err)
        assert "0.0 MiB" not in r.err, r
    assert "(1 was already there, 0 B downloaded)" in r.err, r


def test_a_one_package_stack_is_counted_in_the_singular(tmp_path, hub):
    from test_provision_stack import build_deb, gg, manifest
    made = [build_deb(tmp_path, "libgmm", "22.3.0", "gzip")]
    hub.static["/rel/" + made[0].name] = made[0].read_bytes()
    r = gg("stack", "fetch", "--manifest", str(manifest(tmp_path, hub, made)), "--dest", str(tmp_path / "out"))
    assert r.returncode == 0 and "test-stack: 1 package, all verified" in r.stdout, r
    assert_singular(r.stdout + r.stderr)


def test_verbose_shows_values_with_ids_in_hex_not_cut_json(tmp_path):
    spec = spec_file(tmp_path, "runtime:\n  backend: level-zero\n")
    env = dict(os.environ, ZE_ENABLE_ALT_DRIVERS=FAKE, XDG_RUNTIME_DIR=str(tmp_path), GPUGATE_FAKE_FAULT="")
    r = run_gpugate("--spec", spec, "-v", env=env)
    assert r.rc == 0, r
    assert "devices[0].vendor_id: 0x8086" in r.out, r
    assert "32902" not in r.out and not re.search(r"^ +\w+: [\[{]", r.out, re.M), r
    assert not any(line.endswith(" ...") for line in r.out.splitlines()), r


def test_a_passing_run_whose_report_is_lost_says_so_first(tmp_path):
    root = dpkg_root(tmp_path, [stanza("libze1", "1.17.0-1")])
    spec = spec_file(tmp_path, "packages:\n  - libze1\n")
    lost = str(tmp_path / "missing" / "r.xml")
    r = run_gpugate("--spec", spec, "--root", str(root), "--report", f"junit:{lost}")
    assert r.rc == 3, r
    first = r.out.splitlines()[0]
    assert first.startswith("gpugate: NOT DELIVERED (profile ci): checks passed, but the junit report "
                            f"could not be written: cannot create a temporary file in {tmp_path / 'missing'} "
                            f"to create {lost}: No such file or directory"), r
    assert "HEALTHY" not in r.out, r
    hc = spec_file(tmp_path, "profile: healthcheck\npackages:\n  - libze1\n", name="hc.yaml")
    r = run_gpugate("--spec", hc, "--root", str(root), "--report", f"junit:{lost}")
    assert r.rc == 1 and r.out.startswith("gpugate: NOT DELIVERED"), r


def on_a_terminal(*args):
    parent, child = pty.openpty()
    try:
        p = subprocess.run([GPUGATE, *args], stdout=child, stderr=subprocess.PIPE, text=True, timeout=30)
    finally:
        os.close(child)
        os.close(parent)
    return p


def test_bundle_refuses_gzip_to_a_terminal():
    p = on_a_terminal("bundle", "-o", "-")
    assert p.returncode == 3, p
    assert "standard output is a terminal" in p.stderr and "bundle -o - > bundle.tar.gz" in p.stderr, p


def test_hf_alone_prints_hfs_usage():
    r = run_gpugate("hf")
    assert r.rc == 3, r
    assert "usage: gpugate hf where" in r.err and "gpugate hf verify" in r.err, r
    assert "--help" not in r.err, r


def test_hf_where_says_where_the_endpoint_comes_from(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    r = run_gpugate("hf", "where", "-v", env=env)
    line = next(x for x in r.out.splitlines() if x.startswith("endpoint:"))
    assert line.endswith("https://huggingface.co (huggingface_hub's default: HF_ENDPOINT is unset)"), line
    r = run_gpugate("hf", "where", "-v", env={**env, "HF_ENDPOINT": "https://mirror.example/"})
    line = next(x for x in r.out.splitlines() if x.startswith("endpoint:"))
    assert line.endswith("https://mirror.example (from HF_ENDPOINT)"), line


def test_hf_verify_sizes_are_human_and_its_summary_is_last(tmp_path):
    cache = hub_with_one_repo(tmp_path)  # 7000 bytes, no trees listing
    r = run_gpugate("hf", "verify", env=hf_env(cache))
    lines = r.out.splitlines()
    assert "0.00 GiB" not in r.out, r
    assert re.search(r"6\.8 KiB hashed in [\d.]+ s \([\d.]+ \w+/s\)", lines[-1]), r
    assert lines[-1].startswith("hf verify: ok: 1 repo, 1 blob, 1 of 1 file matches its hash"), r
    assert any("completeness of 1 of 1 revision not checked" in x for x in lines[:-1]), r


# -- README and man page claims ---------------------------------------------

def formats():
    r = run_gpugate("--format", "bogus")
    m = re.search(r"unknown format 'bogus' \(([^)]*)\)", r.err)
    assert r.rc == 3 and m, r
    return re.split(r"[|, ]+", m.group(1).strip())


def command_line_block():
    start = README.index("## Command line")
    return README[README.index("```", start):README.index("```", README.index("```", start) + 3)]


def test_every_format_is_listed_in_readme_man_and_help():
    names = formats()
    assert "nfd" in names and "prom" in names, names
    block = command_line_block()
    listed = re.search(r"--format ([a-z|]+)\]", block).group(1).split("|")
    assert listed == names, (listed, names)
    help_text = run_gpugate("--help").out
    assert re.search(r"--format " + re.escape("|".join(names)) + r"\b", help_text), help_text
    man_formats = MAN[MAN.index(".BI \\-\\-format"):]
    man_formats = man_formats[:man_formats.index(".TP")]
    for n in names:
        assert re.search(r"\b" + n + r"\b", man_formats), (n, man_formats)


def test_every_check_option_is_in_the_readme_and_man_synopsis():
    help_text = run_gpugate("--help").out
    section = help_text[help_text.index("check options:"):help_text.index("\n\n", help_text.index("check options:"))]
    # each option with its short form, where it has one ("-q, --quiet")
    options = re.findall(r"^  (?:(-[a-z]), )?(--[a-z][a-z-]+)", section, re.M)
    assert ("", "--spec") in options and ("-q", "--quiet") in options, options
    block = command_line_block()
    synopsis = MAN[MAN.index(".SH SYNOPSIS"):MAN.index(".SH DESCRIPTION")].replace("\\-", "-")
    for short, long in options:
        assert long in block, f"{long} is not in README's command-line block"
        assert long in synopsis or (short and re.search(re.escape(short) + r"\b", synopsis)), \
            f"{long} is not in the man page's SYNOPSIS"


def test_readme_says_prom_has_help_and_type_as_it_does(tmp_path):
    root = dpkg_root(tmp_path, [stanza("libze1", "1.17.0-1")])
    spec = spec_file(tmp_path, "packages:\n  - libze1\n")
    out = run_gpugate("--spec", spec, "--root", str(root), "--format", "prom").out
    assert "# HELP gpugate_healthy " in out and "# TYPE gpugate_healthy gauge" in out, out
    assert "without `# HELP`" not in README
    assert "`# HELP`/`# TYPE` lines left out here" in README


def test_readme_names_the_docs_the_package_carries():
    """The installed README says which of its files the package carries: the
    ones debian/gpugate.docs installs, by the names they are installed under."""
    docs = [Path(line).name for line in (REPO / "debian" / "gpugate.docs").read_text().split()]
    sentence = README[README.index("The Debian package carries"):]
    sentence = sentence.split("\n\n")[0]
    named = re.findall(r"`([A-Za-z]+\.md)`", " ".join(sentence.split()).split("other paths")[0])
    assert sorted(named) == sorted(docs), (named, docs)


def test_healthcheck_claims_in_the_man_page():
    assert "writes nothing" not in MAN
    example = MAN[MAN.index("A Docker HEALTHCHECK:"):]
    assert "\\-\\-start\\-period=" in example[:400], example[:400]


def test_healthcheck_claims_in_the_spec_keys_and_spec_md():
    """The `profile` key's help (the man page's SPEC section and checks/SPEC.md
    are made from it) said healthcheck makes "no writes"; it writes its state
    cache (the last GPU probe)."""
    keys = run_gpugate("list", "--spec-keys")
    assert keys.rc == 0
    profile_help = next(line for line in keys.out.splitlines() if line.startswith("profile\t"))
    assert "no writes" not in profile_help and "runtime.cache_ttl" in profile_help, profile_help
    spec_md = (REPO / "checks" / "SPEC.md").read_text()
    assert "no writes" not in spec_md and "writes nothing" not in spec_md


def test_healthcheck_claims_in_the_images_and_profiles():
    """The comments of the Dockerfiles, the XPU image's spec and the built-in
    profiles said the health check writes nothing; it writes its state cache.
    The XPU image's spec is the default there: its hint needs no --spec."""
    files = sorted((REPO / "images").glob("*.Dockerfile")) + [REPO / "images" / "gpugate.yaml"] + \
        sorted((REPO / "checks").glob("*.yaml"))
    for f in files:
        text = " ".join(f.read_text().split())
        assert "no writes" not in text and "writes nothing" not in text, f
    image_spec = (REPO / "images" / "gpugate.yaml").read_text()
    assert "--spec /etc/gpugate/gpugate.yaml" not in image_spec, image_spec
    assert "docker exec CONTAINER gpugate check\n" in image_spec, image_spec


def test_every_variable_a_check_reads_is_in_the_man_page():
    """The man page's ENVIRONMENT left out GITHUB_STEP_SUMMARY (a lost job
    summary changes the exit status), ZE_FLAT_DEVICE_HIERARCHY, CUDA_DEVICE_ORDER
    and ONEAPI_DEVICE_SELECTOR (devices.visibility reads them) and
    XDG_RUNTIME_DIR. Every variable src/checks/ and src/main.c read through
    ctx_getenv is listed there (KUBERNETES_SERVICE_HOST is only a sign of a
    container, which system.container names when it sees it)."""
    env = MAN[MAN.index(".SH ENVIRONMENT"):MAN.index(".SH EXIT STATUS")]
    read = set()
    for path in [*(REPO / "src" / "checks").glob("*.c"), REPO / "src" / "main.c"]:
        read |= set(re.findall(r'ctx_getenv\([^,]*, "([A-Z_]+)"\)', path.read_text()))
    assert {"GITHUB_STEP_SUMMARY", "ZE_AFFINITY_MASK", "NO_COLOR"} <= read, read
    missing = sorted(v for v in read - {"KUBERNETES_SERVICE_HOST"} if v not in env)
    assert not missing, f"read but not in the man page's ENVIRONMENT: {missing}"


def test_make_deb_installs_what_packaging_needs():
    listed = subprocess.run(["sh", str(REPO / ".ci" / "install-deps"), "--list", "deb"], capture_output=True,
                            text=True, check=True).stdout.split()
    assert {"debhelper", "dpkg-dev", "fakeroot"} <= set(listed), listed
    dry = subprocess.run(["make", "-n", "deb"], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert "install-deps deb" in dry.stdout, dry.stdout[:2000]
    assert "`make deb` also installs debhelper" in README
