"""Write safety and hostile input (issue 15; SECURITY.md, "What gpugate refuses").

Every device node here is made with mknod in the test's own temp folder (never
the real /dev); FIFOs and symlinks too. Cases that need CAP_MKNOD skip without
it, saying so."""
import json
import os
import stat
import subprocess
import threading
import time

import pytest

from conftest import GPUGATE, dpkg_root, run_gpugate, spec_file, stanza


def null_node(path):
    """A character device with /dev/null's numbers (1, 3: Linux devices.txt)."""
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("mknod needs CAP_MKNOD (CI runs as root)")
    return path


def zero_node(path):
    """A character device with /dev/zero's numbers (1, 5)."""
    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 5))
    except PermissionError:
        pytest.skip("mknod needs CAP_MKNOD (CI runs as root)")
    return path


@pytest.fixture
def healthy(tmp_path):
    """A spec and root that pass: one installed package."""
    root = dpkg_root(tmp_path, [stanza("libgood", "1.0")])
    spec = spec_file(tmp_path, "packages:\n  - libgood (>= 1.0)\n")
    return ["--spec", spec, "--root", str(root)]


# ---------------------------------------------------------------- writes


@pytest.mark.parametrize("fmt", ["json", "junit", "prom", "nfd", "text", "github"])
def test_report_to_a_device_node_writes_through(healthy, tmp_path, fmt):
    """`--report json:/dev/null` used to replace the node with a regular file."""
    node = null_node(str(tmp_path / "null"))
    r = run_gpugate(*healthy, "--report", f"{fmt}:{node}")
    assert r.rc == 0, r
    st = os.lstat(node)
    assert stat.S_ISCHR(st.st_mode) and os.major(st.st_rdev) == 1 and os.minor(st.st_rdev) == 3
    assert sorted(os.listdir(tmp_path)) == ["null", "root", "spec.yaml"]  # no temp file left


def test_report_to_a_symlink_keeps_the_link(healthy, tmp_path):
    """A link such as /dev/stdout is written through, not renamed over."""
    target = tmp_path / "target.json"
    target.write_text("x" * 100000)
    link = tmp_path / "link.json"
    link.symlink_to(target)
    r = run_gpugate(*healthy, "--report", f"json:{link}")
    assert r.rc == 0, r
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert json.loads(target.read_text())["verdict"] == "pass"  # the old 100 KB cut to the report


def test_report_to_stdout_link_lands_on_stdout(healthy, tmp_path):
    """/proc/self/fd/1 (what /dev/stdout points to) is our standard output."""
    # subprocess itself: conftest's report oracle would read the path in this process
    r = subprocess.run([GPUGATE, *healthy, "--format", "text", "--report", "json:/proc/self/fd/1"],
                       capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stdout + r.stderr
    # the report files are written before standard output's (a lost one is said on its first line)
    assert "\ngpugate: HEALTHY" in r.stdout and r.stdout.startswith("{")
    assert '"schema":"gpugate/v1"' in r.stdout.replace(" ", "")


def test_report_to_a_fifo_is_read_by_its_reader(healthy, tmp_path):
    fifo = str(tmp_path / "pipe")
    os.mkfifo(fifo)
    got = []

    def reader():
        with open(fifo) as f:
            got.append(f.read())

    t = threading.Thread(target=reader)
    t.start()
    try:
        r = run_gpugate(*healthy, "--report", f"json:{fifo}")
    finally:
        if t.is_alive():  # gpugate never opened it: let the reader go
            with open(fifo, "w"):
                pass
        t.join(10)
    assert r.rc == 0, r
    assert got and '"verdict"' in got[0]
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_report_to_a_dangling_link_creates_nothing(healthy, tmp_path):
    link = tmp_path / "dangling.json"
    nowhere = tmp_path / "elsewhere" / "planted.json"
    (tmp_path / "elsewhere").mkdir()
    link.symlink_to(nowhere)
    r = run_gpugate(*healthy, "--report", f"json:{link}")
    assert r.rc == 3, r
    assert "dangling.json" in r.err
    assert not nowhere.exists()


# ---------------------------------------------------------------- reads


@pytest.fixture
def gpu_root():
    """A GPU host root readable by uid 65534 (gpufixture.shared_root)."""
    import gpufixture
    with gpufixture.shared_root("gpugate-safety-") as r:
        yield r


@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_group_file_that_is_a_fifo_or_dev_zero_is_refused_at_once(gpu_root, kind):
    """devices.access names a node's group from ROOT/etc/group: a FIFO there
    blocked the check, /dev/zero fed it NULs, both until the deadline."""
    import gpufixture
    root = gpu_root.add_gpus(1, gid=993)
    group = root.p("etc/group")
    os.unlink(group)
    os.mkfifo(group) if kind == "fifo" else zero_node(group)
    t0 = time.monotonic()
    rc, checks, _ = gpufixture.run(root, "--only", "devices.access", "--deadline", "20", user=65534)
    assert time.monotonic() - t0 < 5
    text = gpufixture.text_of(checks["devices.access"])
    assert rc == 1 and "timed out" not in text, text
    assert "group 993 (cannot read %s/etc/group" % root.path in text, text


@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_passwd_file_that_is_a_fifo_or_dev_zero_is_refused_at_once(tmp_path, kind):
    """hf.location reads the home folder from ROOT/etc/passwd when HOME is
    unset: a FIFO or /dev/zero there is no passwd file, not a hang."""
    passwd = tmp_path / "root" / "etc" / "passwd"
    passwd.parent.mkdir(parents=True)
    os.mkfifo(passwd) if kind == "fifo" else zero_node(str(passwd))
    t0 = time.monotonic()
    r = subprocess.run([GPUGATE, "check", "--root", str(tmp_path / "root"), "--profile", "ci", "--only", "hf.location",
                        "--deadline", "20"], capture_output=True, text=True, timeout=60,
                       env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
    assert time.monotonic() - t0 < 5
    assert r.returncode == 1 and "timed out" not in r.stdout, r.stdout + r.stderr
    assert "'~/.cache/huggingface/hub'" in r.stdout, r.stdout


def test_memory_limited_run_reads_inputs_larger_than_its_memory(tmp_path):
    """Under a 96 MiB address-space limit (ulimit -v), a 120 MiB dpkg status
    and a 65 MiB kernel log are read without running out of memory: status
    stanzas are parsed one at a time, the log scan is capped (src/lib/kmsg.c)."""
    import resource
    with open(GPUGATE, "rb") as f:
        if b"__asan_init" in f.read():
            pytest.skip("ASan reserves terabytes of address space: ulimit -v cannot apply")
    root = tmp_path / "root"
    os.makedirs(root / "var/lib/dpkg")
    os.makedirs(root / "dev")
    # stanzas dpkg reads (each package once, one Description each: lib/dpkg/parse.c)
    one = "Package: libother{}\nStatus: install ok installed\nArchitecture: amd64\nVersion: 1.0\nDescription: " + \
        "x" * 4000 + "\n\n"
    with open(root / "var/lib/dpkg/status", "w") as f:
        f.write(stanza("libgood", "1.0") + "\n")
        f.write("".join(one.format(i) for i in range((120 << 20) // len(one))))
    line = b"6,1,1000,-;a harmless kernel message, padded to make the log long enough....\n"
    with open(root / "dev/kmsg", "wb") as f:
        f.write(line * ((65 << 20) // len(line) + 1))
    spec = spec_file(tmp_path, "profile: validate\npackages:\n  - libgood (>= 1.0)\nsystem:\n  kernel_log: true\n")

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (96 << 20, 96 << 20))
    p = subprocess.run([GPUGATE, "--spec", spec, "--root", str(root), "--only", "packages,system.kernel_log"],
                       capture_output=True, text=True, timeout=120, preexec_fn=limit)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "PASS  packages.installed" in p.stdout and "stopped early" in p.stdout, p.stdout


# ---------------------------------------------------------------- small ones


def test_probe_without_proc_says_proc_self_exe_is_missing(tmp_path):
    """The probe child is this binary run again through /proc/self/exe: with
    no /proc (a tmpfs over it, in a mount namespace of the test's own) the
    verdict a user reads says why, not only "exited 127"."""
    spec = spec_file(tmp_path, "runtime:\n  backend: level-zero\n  smoke: true\n")
    p = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c",
                        'mount -t tmpfs none /proc && exec "$0" check --spec "$1" --deadline 10',
                        GPUGATE, spec], capture_output=True, text=True, timeout=60)
    if "mount" in p.stderr and ("ermission" in p.stderr or "not permitted" in p.stderr):
        pytest.skip("unshare -m and mount need CAP_SYS_ADMIN (CI runs as root)")
    assert p.returncode == 1, p.stdout + p.stderr
    line = [x for x in p.stdout.splitlines() if x.startswith("FAIL  runtime.loader:")]
    assert line and "/proc/self/exe is missing" in line[0], p.stdout
