"""The system group against fixture roots: /proc/self/status, container
marks, /sys, and a kernel log file in /dev/kmsg's record format."""

import os
import shutil

import pytest

from gpufixture import run, shared_root, text_of

# CapEff of a default Docker container (no SYS_NICE, SYS_PTRACE, PERFMON)
DOCKER_CAPS = "00000000a80425fb"
ALL_CAPS = "000001ffffffffff"


@pytest.fixture
def root():
    with shared_root("gpugate-system-") as r:
        os.makedirs(r.p("sys/bus/pci/devices"))
        yield r


def status(root, seccomp=2, filters=1, caps=DOCKER_CAPS):
    os.makedirs(root.p("proc/self"), exist_ok=True)
    with open(root.p("proc/self/status"), "w") as f:
        f.write("Name:\tgpugate\nCapInh:\t0000000000000000\nCapPrm:\t%s\nCapEff:\t%s\n"
                "NoNewPrivs:\t0\nSeccomp:\t%d\nSeccomp_filters:\t%d\n" % (caps, caps, seccomp, filters))


def test_docker_default_posture_warns_but_passes(root):
    status(root)
    rc, checks, _ = run(root, "--only", "system")
    assert rc == 0
    assert checks["system.seccomp"]["status"] == "pass"
    assert "seccomp filter active (1 filter)" in checks["system.seccomp"]["summary"]
    c = checks["system.capabilities"]
    assert c["status"] == "warn"
    assert "SYS_NICE, SYS_PTRACE, PERFMON" in c["summary"]
    assert "docker run --cap-add SYS_NICE" in c["remediation"]
    assert "pidfd_getfd" in text_of(c) and "perf_event_open" in text_of(c)


def test_all_capabilities(root):
    status(root, caps=ALL_CAPS)
    rc, checks, _ = run(root, "--only", "system.capabilities")
    assert rc == 0 and checks["system.capabilities"]["status"] == "pass"
    assert "are effective" in checks["system.capabilities"]["summary"]


def test_missing_caps_without_seccomp_are_notes(root):
    status(root, seccomp=0, filters=0)
    rc, checks, _ = run(root, "--only", "system.capabilities,system.seccomp")
    assert rc == 0
    assert checks["system.capabilities"]["status"] == "pass"
    assert "no seccomp filter blocks" in checks["system.capabilities"]["summary"]
    assert checks["system.seccomp"]["summary"] == "no seccomp filter"


def test_strict_seccomp_warns(root):
    status(root, seccomp=1, filters=0)
    rc, checks, _ = run(root, "--only", "system.seccomp")
    assert rc == 0 and checks["system.seccomp"]["status"] == "warn"


def test_no_proc_skips(root):
    rc, checks, _ = run(root, "--only", "system.seccomp,system.capabilities")
    assert rc == 0
    assert checks["system.seccomp"]["status"] == "skip" and "proc/self/status" in checks["system.seccomp"]["summary"]


def test_no_sys_warns(root):
    shutil.rmtree(root.p("sys"))
    rc, checks, _ = run(root, "--only", "system.sysfs")
    assert rc == 0
    c = checks["system.sysfs"]
    assert c["status"] == "warn" and "is not visible" in c["summary"] and "/sys/dev/char" in c["summary"]


def test_no_sys_says_why_in_the_vendors_words(root):
    """Why /sys matters is the vendor's to say (src/vendor/: sysfs_use): an NVIDIA run is
    not told about the Intel driver or render nodes, but what gpugate reads there."""
    shutil.rmtree(root.p("sys"))
    rc, checks, _ = run(root, "--only", "system.sysfs", "--vendor", "nvidia")
    assert rc == 0
    summary = checks["system.sysfs"]["summary"]
    assert "is not visible" in summary and "/sys/bus/pci" in summary, summary
    for word in ("Intel", "render", "/sys/dev/char"):
        assert word not in summary, summary
    rc, checks, _ = run(root, "--only", "system.sysfs", "--vendor", "intel")
    assert "the Intel driver maps render nodes" in checks["system.sysfs"]["summary"], checks


def test_sys_visible(root):
    rc, checks, _ = run(root, "--only", "system.sysfs")
    assert rc == 0 and checks["system.sysfs"]["status"] == "pass"


def test_container_detection(root):
    rc, checks, _ = run(root, "--only", "system.container")
    assert rc == 0 and checks["system.container"]["summary"].startswith("not inside a container")
    # the paths looked at, named under --root as the positive summary names them
    assert f"(no {root.path}/.dockerenv, {root.path}/run/.containerenv, container= or" in \
        checks["system.container"]["summary"], checks
    open(root.p(".dockerenv"), "w").close()
    rc, checks, _ = run(root, "--only", "system.container")
    assert f"inside a container (docker): {root.path}/.dockerenv exists" in checks["system.container"]["summary"]
    rc, checks, _ = run(root, "--only", "system.container", env={"KUBERNETES_SERVICE_HOST": "10.0.0.1"})
    assert "(kubernetes)" in checks["system.container"]["summary"]


KMSG_CLEAN = ("6,1,0,-;Linux version 6.8.0\n"
              "6,2,1500000,-;xe 0000:03:00.0: [drm] Using GuC firmware from xe/bmg_guc_70.bin\n"
              " SUBSYSTEM=pci\n")
KMSG_SICK = KMSG_CLEAN + (
    "3,3,2345678,-;xe 0000:03:00.0: [drm] *ERROR* GT0: GuC initialization failed -110\n"
    "6,4,3000000,-;i915 0000:00:02.0: [drm] GPU HANG: ecode 12:1:85dffffb, in python3 [1234]\n")


def kmsg(root, text):
    with open(root.p("dev/kmsg"), "w") as f:
        f.write(text)


def test_kernel_log_only_in_validate(root):
    kmsg(root, KMSG_SICK)
    rc, checks, _ = run(root, "--only", "system")
    assert "system.kernel_log" not in checks
    rc, checks, _ = run(root, "--profile", "validate", "--only", "system")
    assert rc == 1
    c = checks["system.kernel_log"]
    assert c["status"] == "fail" and c["summary"].startswith("2 kernel log lines")
    t = text_of(c)
    assert "GuC initialization failed -110" in t and "[    2.345678]" in t
    assert "GPU HANG: ecode" in t and "linux-firmware" in c["remediation"]


def test_kernel_log_clean(root):
    kmsg(root, KMSG_CLEAN)
    rc, checks, _ = run(root, "--profile", "validate", "--only", "system.kernel_log")
    assert rc == 0
    assert checks["system.kernel_log"]["summary"].startswith("2 kernel log lines read, no GPU hang")


def test_kernel_log_missing_or_denied_skips(root):
    rc, checks, _ = run(root, "--profile", "validate", "--only", "system.kernel_log")
    assert rc == 0 and checks["system.kernel_log"]["status"] == "skip"
    assert "--device /dev/kmsg" in checks["system.kernel_log"]["summary"]
    kmsg(root, KMSG_SICK)
    os.chmod(root.p("dev/kmsg"), 0o600)
    rc, checks, _ = run(root, "--profile", "validate", "--only", "system.kernel_log", user=65534)
    assert rc == 0 and checks["system.kernel_log"]["status"] == "skip"
    assert "CAP_SYSLOG" in checks["system.kernel_log"]["summary"]


def test_kernel_log_of_this_machine_never_hangs():
    # the real /dev/kmsg (when readable) ends at the ring buffer's end, not at a blocking read
    rc, checks, _ = run("/", "--profile", "validate", "--only", "system.kernel_log")
    assert rc in (0, 1)
    assert checks["system.kernel_log"]["status"] in ("pass", "warn", "fail", "skip")  # warn: stopped early
