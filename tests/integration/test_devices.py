"""The devices group against fixture roots with real character devices,
real symlinks and a sysfs-shaped tree (see gpufixture.py)."""

import os
import shutil
import subprocess

import pytest

from gpufixture import Root, mknod, run, shared_root, text_of
from tally import report_tally

GPU_A = "0000:18:00.0"
GPU_B = "0000:28:00.0"


@pytest.fixture
def root():
    with shared_root("gpugate-devices-") as r:
        yield r


def dev_checks(checks):
    return {k: v for k, v in checks.items() if k.startswith("devices.")}


@pytest.mark.parametrize("count", [1, 2, 8])
def test_healthy_gpus(root, count):
    root.add_gpus(count)
    rc, checks, err = run(root, "--only", "devices")
    assert rc == 0, (checks, err)
    assert checks["devices.gpus"]["status"] == "pass"
    assert "%d Intel GPU" % count in checks["devices.gpus"]["summary"]
    for cid in ("devices.nodes", "devices.by_path", "devices.access", "devices.visibility"):
        assert checks[cid]["status"] == "pass", checks[cid]
    assert "%d nodes" % (2 * count) in checks["devices.nodes"]["summary"]
    assert checks["devices.nvidia"]["status"] == "skip"
    assert len(checks["devices.gpus"]["details"]["gpus"]) == count


def test_by_path_missing_fails_in_ci_warns_in_healthcheck(root):
    root.add_gpus(1, by_path=False)
    rc, checks, _ = run(root, "--only", "devices")
    assert rc == 1
    c = checks["devices.by_path"]
    assert c["status"] == "fail"
    assert "by-path is missing" in c["summary"] and "require" in c["summary"]
    assert "-v /dev/dri/by-path:/dev/dri/by-path" in c["remediation"]
    rc, checks, _ = run(root, "--profile", "healthcheck", "--only", "devices")
    assert rc == 0
    assert checks["devices.by_path"]["status"] == "warn"
    assert "renderD128..renderD191" in text_of(checks["devices.by_path"])


def test_by_path_dangling_link(root):
    root.add_gpus(1)
    os.unlink(root.p("dev/dri/by-path/pci-%s-render" % GPU_A))
    os.symlink("../renderD200", root.p("dev/dri/by-path/pci-%s-render" % GPU_A))
    rc, checks, _ = run(root, "--only", "devices")
    assert rc == 1
    c = checks["devices.by_path"]
    assert c["status"] == "fail"
    assert "dangling" in text_of(c) and "../renderD200" in text_of(c)


def test_by_path_points_at_another_gpus_node(root):
    root.add_gpus(2)
    link = root.p("dev/dri/by-path/pci-%s-render" % GPU_A)
    os.unlink(link)
    os.symlink("../renderD129", link)
    rc, checks, _ = run(root, "--only", "devices")
    assert rc == 1
    t = text_of(checks["devices.by_path"])
    assert checks["devices.by_path"]["status"] == "fail"
    assert "226:129 (renderD129 of %s)" % GPU_B in t and "expected renderD128 226:128 of %s" % GPU_A in t


def test_by_path_absolute_link_stays_under_root(root):
    root.add_gpus(1)
    link = root.p("dev/dri/by-path/pci-%s-render" % GPU_A)
    os.unlink(link)
    os.symlink("/dev/dri/renderD128", link)  # read under --root, never the host's /dev
    rc, checks, _ = run(root, "--only", "devices.by_path")
    assert rc == 0 and checks["devices.by_path"]["status"] == "pass"


@pytest.mark.parametrize("shape", ["absolute", "climbing"])
def test_sysfs_class_links_out_of_the_root_are_read_inside_it(root, shape):
    """A class entry whose link leaves the root (absolute, or one '..' too many)
    is followed inside the root, as the kernel follows it in a chroot: the
    GPU's identity comes from the root's copy of the device, never from the
    same path outside the root (here a look-alike claiming another driver and
    vendor, where a read relative to the class folder would land)."""
    root.add_gpus(1)
    outside = root.path + "-outside"
    dev = "sys/devices/pci0000:00/" + GPU_A
    try:
        shutil.copytree(root.p(dev), os.path.join(outside, dev), symlinks=True)
        with open(os.path.join(outside, dev, "uevent"), "w") as f:
            f.write("DRIVER=escaped\nPCI_CLASS=30000\nPCI_ID=10DE:2330\n")
        # the root's own copy at the path the link names under the root
        shutil.copytree(root.p(dev), root.p(outside.lstrip("/") + "/" + dev), symlinks=True)
        for name in ("card0", "renderD128"):
            target = "%s/%s/drm/%s" % (outside, dev, name)
            if shape == "climbing":
                target = "../" * 12 + target.lstrip("/")
            os.unlink(root.p("sys/class/drm/" + name))
            os.symlink(target, root.p("sys/class/drm/" + name))
            assert os.path.exists(os.path.join(root.p("sys/class/drm"), target, "device/uevent"))
        rc, checks, err = run(root, "--only", "devices.gpus")
        c = checks["devices.gpus"]
        assert rc == 0 and c["status"] == "pass", (c, err)
        assert "Intel 0x56c0 (driver xe)" in c["summary"] and "escaped" not in text_of(c), c
    finally:
        shutil.rmtree(outside)


def test_by_path_folder_reached_through_a_symlink(root):
    """by-path opened without O_NOFOLLOW when it is a link to a folder: its
    links are still followed and checked; a dangling folder link is missing."""
    root.add_gpus(2)
    os.rename(root.p("dev/dri/by-path"), root.p("dev/dri/by-path.real"))
    os.symlink("by-path.real", root.p("dev/dri/by-path"))
    rc, checks, _ = run(root, "--only", "devices.by_path")
    c = checks["devices.by_path"]
    assert rc == 0 and c["status"] == "pass" and "2 of 2 Intel GPUs reachable" in c["summary"], c
    os.rename(root.p("dev/dri/by-path.real"), root.p("dev/dri/elsewhere"))
    rc, checks, _ = run(root, "--only", "devices.by_path")
    c = checks["devices.by_path"]
    assert rc == 1 and c["status"] == "fail" and "by-path is missing" in c["summary"], c


def test_by_path_partial_hides_the_gpu_without_link(root):
    root.add_gpus(2)
    os.unlink(root.p("dev/dri/by-path/pci-%s-render" % GPU_B))
    rc, checks, _ = run(root, "--profile", "healthcheck", "--only", "devices.by_path")
    assert rc == 1  # even where by-path only warns: the driver lists by-path alone
    assert "pci-%s-render is missing" % GPU_B in text_of(checks["devices.by_path"])


def test_node_with_wrong_major_minor(root):
    root.add_gpus(2)
    mknod(root.p("dev/dri/renderD128"), 226, 5, 0o660, 0, 993)
    rc, checks, _ = run(root, "--only", "devices")
    assert rc == 1
    c = checks["devices.nodes"]
    assert c["status"] == "fail"
    assert "renderD128 is 226:5, but sysfs says renderD128 of %s is 226:128" % GPU_A in text_of(c)
    assert "--device /dev/dri" in c["remediation"]


def test_node_that_is_a_regular_file(root):
    root.add_gpus(1)
    os.unlink(root.p("dev/dri/renderD128"))
    open(root.p("dev/dri/renderD128"), "w").close()
    rc, checks, _ = run(root, "--only", "devices.nodes")
    assert rc == 1
    assert "is a regular file, expected the character device 226:128" in text_of(checks["devices.nodes"])


def test_render_node_missing(root):
    root.add_gpus(1)
    os.unlink(root.p("dev/dri/renderD128"))
    rc, checks, _ = run(root, "--only", "devices.nodes")
    assert rc == 1
    assert "renderD128: No such file or directory" in text_of(checks["devices.nodes"])


def test_sys_dev_char_missing(root):
    root.add_gpus(1)
    os.unlink(root.p("sys/dev/char/226:128"))
    rc, checks, _ = run(root, "--only", "devices.nodes")
    assert rc == 1
    assert "sys/dev/char/226:128: No such file or directory" in text_of(checks["devices.nodes"])


def test_access_denied_then_granted_with_group(root):
    root.add_gpus(1, gid=4242)
    rc, checks, _ = run(root, "--only", "devices.access", user=65534)
    assert rc == 1
    c = checks["devices.access"]
    assert c["status"] == "fail"
    t = text_of(c)
    assert "mode 0660" in t and "group 4242, which has no name in" in t and "uid 65534" in t
    assert "docker run --group-add 4242" in c["remediation"]
    assert "securityContext.supplementalGroups: [4242]" in c["remediation"]
    rc, checks, _ = run(root, "--only", "devices.access", user=65534, groups=[4242])
    assert rc == 0, checks
    assert checks["devices.access"]["status"] == "pass"
    assert "groups 4242" in checks["devices.access"]["summary"]


def test_access_names_the_group_when_the_image_knows_it(root):
    root.add_gpus(1, gid=993)
    rc, checks, _ = run(root, "--only", "devices.access", user=65534)
    assert rc == 1
    assert "group 993 (render)" in text_of(checks["devices.access"])


def test_access_mode_without_group_bits(root):
    root.add_gpus(1, mode=0o600)
    rc, checks, _ = run(root, "--only", "devices.access", user=65534, groups=[993])
    assert rc == 1
    assert "MODE=\"0660\"" in checks["devices.access"]["remediation"]


def test_no_sys(root):
    root.add_gpus(1)
    shutil.rmtree(root.p("sys"))
    rc, checks, _ = run(root, "--only", "devices")
    assert rc == 1
    c = checks["devices.gpus"]
    assert c["status"] == "fail" and c["summary"].startswith("no GPU found")
    assert "/sys" in c["summary"] and "renderD128" in text_of(c)
    assert checks["devices.nodes"]["status"] == "skip"


def test_no_gpu_at_all(root):
    rc, checks, _ = run(root, "--only", "devices")
    assert rc == 1
    c = checks["devices.gpus"]
    assert c["summary"].startswith("no GPU found")
    assert "--device /dev/dri" in c["remediation"]


def test_gpus_in_sysfs_but_not_passed_in(root):
    root.add_gpus(2, nodes=False, by_path=False)
    rc, checks, _ = run(root, "--only", "devices")
    assert rc == 1
    c = checks["devices.gpus"]
    assert "no GPU passed into this container" in c["summary"]
    assert "docker run --device /dev/dri" in c["remediation"]


def test_device_plugin_subset_is_fine(root):
    root.add_gpu(GPU_A, card=0, render=128)
    root.add_gpu(GPU_B, card=1, render=129, nodes=False, by_path=False)
    rc, checks, _ = run(root, "--only", "devices")
    assert rc == 0, checks
    assert "1 Intel GPU" in checks["devices.gpus"]["summary"]
    assert "not passed into this container" in text_of(checks["devices.gpus"])


def test_non_intel_only(root):
    root.add_gpu("0000:01:00.0", vendor=0x10DE, device=0x2330, driver="nvidia")
    rc, checks, _ = run(root, "--only", "devices")
    assert rc == 1
    c = checks["devices.gpus"]
    assert "no Intel GPU found" in c["summary"] and "NVIDIA 0x2330 (driver nvidia)" in c["summary"]
    assert "devices.vendor" in c["remediation"]


def test_render_minor_200_without_by_path_fails_in_every_profile(root):
    root.add_gpu(GPU_A, card=0, render=200, by_path=False)
    for profile in ("healthcheck", "ci", "validate"):
        rc, checks, _ = run(root, "--profile", profile, "--only", "devices.by_path")
        assert rc == 1, profile
        assert "minor 200" in text_of(checks["devices.by_path"]) and "invisible" in text_of(checks["devices.by_path"])


def test_wrong_or_missing_kernel_driver(root):
    root.add_gpu(GPU_A, card=0, render=128, driver="vfio-pci")
    root.add_gpu(GPU_B, card=1, render=129, driver=None)
    rc, checks, _ = run(root, "--only", "devices.gpus")
    assert rc == 1
    t = text_of(checks["devices.gpus"])
    assert "bound to kernel driver 'vfio-pci', expected i915 or xe" in t
    assert "%s: no kernel driver is bound" % GPU_B in t


def test_attribute_files_without_uevent(root):
    root.add_gpu(GPU_A, uevent=False, driver="i915", device=0x0BD5)
    rc, checks, _ = run(root, "--only", "devices.gpus")
    assert rc == 0
    assert "0x0bd5 (driver i915)" in checks["devices.gpus"]["summary"]


def test_min_gpus(root):
    root.add_gpus(1)
    spec = root.spec("devices:\n  min_gpus: 2\n")
    rc, checks, _ = run(root, "--spec", spec)
    assert rc == 1
    assert "the spec requires at least 2" in text_of(checks["devices.gpus"])


@pytest.mark.parametrize("spec,word", [
    ("devices:\n  vendor: intell\n", "devices.vendor must be"),
    ("devices:\n  by_path: maybe\n", "require|warn|ignore"),
    ("devices:\n  min_gpus: -1\n", "whole number"),
    ("devices:\n  colour: red\n", "unknown key 'devices.colour'"),
])
def test_bad_spec_exits_3(root, spec, word):
    rc, _, err = run(root, "--spec", root.spec(spec))
    assert rc == 3 and word in err


def test_by_path_ignore(root):
    root.add_gpus(1, by_path=False)
    rc, checks, _ = run(root, "--spec", root.spec("devices:\n  by_path: ignore\n"))
    assert rc == 0 and checks["devices.by_path"]["status"] == "skip"


# -- visibility ---------------------------------------------------------------
# The rules are the Intel compute-runtime's (src/lib/affinity.c cites them);
# the fixture GPUs are Flex 170 (0x56C0), whose default hierarchy is COMPOSITE.

@pytest.mark.parametrize("mask,rc,status,words", [
    ("0", 0, "pass", ["sees 1 of 2", GPU_A]),
    ("1", 0, "pass", ["sees 1 of 2", GPU_B]),
    ("0,1", 0, "pass", ["sees 2 of 2"]),
    (" 0 , 1 ", 0, "pass", ["sees 2 of 2"]),
    ("0.0", 0, "pass", ["sees 1 of 2"]),
    ("0x1", 0, "pass", ["sees 1 of 2", GPU_B]),      # std::stoul(s, 0, 0): hex
    ("+1", 0, "pass", ["sees 1 of 2", GPU_B]),
    ("08", 0, "pass", ["sees 1 of 2", GPU_A]),       # octal "0", then text ignored
    ("1,", 0, "pass", ["sees 1 of 2", GPU_B]),       # no empty piece after a trailing comma
    ("", 0, "pass", ["empty (no filter)", "all 2"]),
    ("default", 0, "pass", ["all 2"]),
    ("0,5", 0, "warn", ["names device 5, which does not exist (2 devices): the driver ignores it; 1 of 2 GPUs stay visible"]),
    ("5", 1, "fail", ["names device 5", "hides every GPU"]),
    ("-1", 1, "fail", ["names device 4294967295", "hides every GPU"]),
    ("x", 1, "fail", ["'x' is not a number", "stops the program"]),
    ("0,abc", 1, "fail", ["'abc' is not a number"]),
    ("0,,1", 1, "fail", ["empty entry"]),
    ("99999999999999999999999", 1, "fail", ["too large"]),
])
def test_affinity_mask_forms(root, mask, rc, status, words):
    root.add_gpus(2)
    got, checks, _ = run(root, "--only", "devices.visibility", env={"ZE_AFFINITY_MASK": mask})
    c = checks["devices.visibility"]
    assert got == rc and c["status"] == status, c
    for w in words:
        assert w in text_of(c), (w, c)


def test_affinity_composite_with_tiles(root):
    root.add_gpus(2, tiles=2)
    env = {"ZE_FLAT_DEVICE_HIERARCHY": "COMPOSITE", "ZE_AFFINITY_MASK": "1.1"}
    rc, checks, _ = run(root, "--only", "devices.visibility", env=env)
    assert rc == 0 and "sees 1 of 2" in checks["devices.visibility"]["summary"]
    env["ZE_AFFINITY_MASK"] = "0,1.2"
    rc, checks, _ = run(root, "--only", "devices.visibility", env=env)
    c = checks["devices.visibility"]
    assert rc == 0 and c["status"] == "warn", c
    assert "GPU 1 has no sub-device 2, so the driver ignores the entry" in text_of(c)


def test_affinity_flat_counts_tiles(root):
    root.add_gpus(2, tiles=2)
    env = {"ZE_FLAT_DEVICE_HIERARCHY": "FLAT", "ZE_AFFINITY_MASK": "3"}
    rc, checks, _ = run(root, "--only", "devices.visibility", env=env)
    assert rc == 0 and GPU_B in checks["devices.visibility"]["summary"]
    env["ZE_AFFINITY_MASK"] = "0.1,4"
    rc, checks, _ = run(root, "--only", "devices.visibility", env=env)
    t = text_of(checks["devices.visibility"])
    assert rc == 1 and "ignores under FLAT and COMBINED" in t and "names device 4" in t, t


def test_unknown_hierarchy_falls_back_to_the_default(root):
    root.add_gpus(2, tiles=2)
    env = {"ZE_FLAT_DEVICE_HIERARCHY": "flat", "ZE_AFFINITY_MASK": "1.1"}
    rc, checks, _ = run(root, "--only", "devices.visibility", env=env)
    c = checks["devices.visibility"]
    assert rc == 0 and c["status"] == "warn", c
    assert "'flat' is not FLAT, COMPOSITE or COMBINED" in text_of(c)
    assert "its default for this GPU, COMPOSITE" in text_of(c)
    assert "sees 1 of 2" in c["summary"]  # 1.1 is read as COMPOSITE reads it


def test_prefixed_mask_wins(root):
    # the driver reads NEO_L0_ZE_AFFINITY_MASK, then NEO_ZE_AFFINITY_MASK, then ZE_AFFINITY_MASK
    root.add_gpus(2)
    env = {"ZE_AFFINITY_MASK": "0", "NEO_ZE_AFFINITY_MASK": "1"}
    rc, checks, _ = run(root, "--only", "devices.visibility", env=env)
    c = checks["devices.visibility"]
    assert rc == 0 and c["status"] == "warn" and GPU_B in c["summary"], c
    assert "NEO_ZE_AFFINITY_MASK='1' is set: the driver uses it and ignores ZE_AFFINITY_MASK='0'" in text_of(c)
    env["NEO_L0_ZE_AFFINITY_MASK"] = ""
    rc, checks, _ = run(root, "--only", "devices.visibility", env=env)
    assert rc == 0 and "NEO_L0_ZE_AFFINITY_MASK is empty (no filter)" in checks["devices.visibility"]["summary"]


def test_data_center_max_defaults_to_flat(root):
    root.add_gpus(1, device=0x0BD5, tiles=2)  # Data Center GPU Max 1550: Xe HPC
    rc, checks, _ = run(root, "--only", "devices.visibility", env={"ZE_AFFINITY_MASK": "1"})
    c = checks["devices.visibility"]
    assert rc == 0 and "(FLAT)" in c["summary"] and "1 device)" in c["summary"], c


def level_zero_vectors():
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "..", "vectors", "level-zero-affinity.tsv")) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            hier, gpus, tiles, mask, seen, devices, source = line.rstrip("\n").split("\t")
            yield pytest.param(hier, int(gpus), int(tiles), None if mask == "<unset>" else mask,
                               None if seen == "-" else int(seen), None if devices == "-" else int(devices),
                               id=f"{hier}-{gpus}x{tiles}-{mask}")


# vectors run, agreeing, and deliberate warnings (entries the driver skips silently)
L0_TALLY = {"run": 0, "agree": 0, "warn": 0}


@pytest.mark.parametrize("hier,gpus,tiles,mask,seen,devices", list(level_zero_vectors()))
def test_compute_runtime_vectors(root, hier, gpus, tiles, mask, seen, devices):
    """The compute-runtime's own test cases, through the built gpugate."""
    L0_TALLY["run"] += 1
    root.add_gpus(gpus, tiles=tiles if tiles > 1 else 0)
    env = {"ZE_FLAT_DEVICE_HIERARCHY": hier}
    if mask is not None:
        env["ZE_AFFINITY_MASK"] = mask
    rc, checks, _ = run(root, "--only", "devices.visibility", env=env)
    c = checks["devices.visibility"]
    got = c["summary"]
    if seen is not None:
        want = f"all {gpus} Intel GPU" if mask in (None, "") else (
            "hides every GPU" if seen == 0 else f"sees {seen} of {gpus} GPU")
        assert want in got, (want, c)
    if devices is not None:
        assert c["details"]["level_zero_devices"] == devices, c
    assert (rc == 0) == (seen != 0), c
    L0_TALLY["agree"] += 1
    L0_TALLY["warn"] += c["status"] == "warn"


def test_compute_runtime_vector_tally(capsys):
    report_tally(capsys, "compute-runtime vectors", L0_TALLY, 29)


def test_other_selectors_are_noted(root):
    root.add_gpus(1)
    rc, checks, _ = run(root, "--only", "devices.visibility",
                        env={"CUDA_VISIBLE_DEVICES": "0", "ONEAPI_DEVICE_SELECTOR": "level_zero:0"})
    assert rc == 0
    t = text_of(checks["devices.visibility"])
    assert "CUDA_VISIBLE_DEVICES='0'" in t and "ONEAPI_DEVICE_SELECTOR='level_zero:0'" in t


def test_mask_below_min_gpus(root):
    root.add_gpus(2)
    spec = root.spec("devices:\n  min_gpus: 2\n")
    rc, checks, _ = run(root, "--spec", spec, "--only", "devices.visibility", env={"ZE_AFFINITY_MASK": "0"})
    assert rc == 1 and "leaves 1 GPU visible" in checks["devices.visibility"]["summary"]


# -- NVIDIA ----------------------------------------------------------------------

def nvidia_root(root, nodes=True):
    root.add_gpu("0000:01:00.0", vendor=0x10DE, device=0x2330, driver="nvidia", nodes=False, by_path=False)
    os.makedirs(root.p("proc/driver/nvidia/gpus/0000:01:00.0"))
    with open(root.p("proc/driver/nvidia/version"), "w") as f:
        f.write("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\n")
    with open(root.p("proc/driver/nvidia/gpus/0000:01:00.0/information"), "w") as f:
        f.write("Model: \t\t NVIDIA H100\nDevice Minor: \t 0\n")
    if nodes:
        mknod(root.p("dev/nvidiactl"), 195, 255, 0o666)
        mknod(root.p("dev/nvidia-uvm"), 511, 0, 0o666)
        mknod(root.p("dev/nvidia0"), 195, 0, 0o666)
    return root.spec("devices:\n  vendor: nvidia\n")


def test_nvidia_healthy(root):
    spec = nvidia_root(root)
    rc, checks, _ = run(root, "--spec", spec)
    assert rc == 0, checks
    assert "550.54.15" in checks["devices.nvidia"]["summary"]
    assert "1 NVIDIA GPU" in checks["devices.gpus"]["summary"]


def test_nvidia_missing_nodes(root):
    spec = nvidia_root(root, nodes=False)
    rc, checks, _ = run(root, "--spec", spec)
    assert rc == 1
    assert "--gpus all" in checks["devices.gpus"]["remediation"]
    t = text_of(checks["devices.nvidia"])
    assert "nvidiactl: No such file" in t and "nvidia0: No such file" in t


def test_nvidia_wrong_major(root):
    spec = nvidia_root(root)
    mknod(root.p("dev/nvidia0"), 195, 3, 0o666)
    rc, checks, _ = run(root, "--spec", spec)
    assert rc == 1 and "nvidia0 is 195:3, expected 195:0" in text_of(checks["devices.nvidia"])


def test_cuda_visible_devices_empty_hides_all(root):
    spec = nvidia_root(root)
    rc, checks, _ = run(root, "--spec", spec, env={"CUDA_VISIBLE_DEVICES": ""})
    assert rc == 1 and "hides every GPU" in checks["devices.visibility"]["summary"]


UUIDS = ["GPU-aaaa1111-d72c-4106-c12f-20bd9faed9f6", "GPU-aaaa2222-0c1b-22a4-51f2-0a3f5e2b77c1",
         "GPU-bbbb3333-5e2a-4b6f-9d1e-7c3a2f4e6b80", "GPU-cccc4444-1a2b-3c4d-5e6f-708192a3b4c5"]


def nvidia_gpus(root, count=4, min_gpus=1, models=None):
    """count NVIDIA GPUs as /proc/driver/nvidia and /dev show them in a container (no sysfs)."""
    models = models or ["NVIDIA H100 80GB HBM3"] * count
    for i in range(count):
        bdf = "0000:%02x:00.0" % (0x19 + i * 0x10)
        os.makedirs(root.p("proc/driver/nvidia/gpus/" + bdf))
        with open(root.p("proc/driver/nvidia/gpus/%s/information" % bdf), "w") as f:
            f.write("Model: \t\t %s\nIRQ:   \t\t 0\nGPU UUID: \t %s\n"
                    "Bus Location: \t %s\nDevice Minor: \t %d\n" % (models[i], UUIDS[i], bdf, i))
        mknod(root.p("dev/nvidia%d" % i), 195, i, 0o666)
    mknod(root.p("dev/nvidiactl"), 195, 255, 0o666)
    mknod(root.p("dev/nvidia-uvm"), 511, 0, 0o666)
    with open(root.p("proc/driver/nvidia/version"), "w") as f:
        f.write("NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024\n")
    return root.spec("devices:\n  vendor: nvidia\n  min_gpus: %d\n" % min_gpus)


# CUDA_VISIBLE_DEVICES as NVIDIA documents it (devices_visibility.c cites the
# guides): indices read like strtoul, the list ending at the first entry that
# names no GPU, UUID prefixes naming exactly one GPU, MIG forms, duplicates
# showing nothing.
@pytest.mark.parametrize("value,rc,status,seen,words", [
    (None, 0, "pass", 4, ["unset: CUDA sees all 4"]),
    ("0,2,-1,1", 0, "warn", 2, ["'-1' is not a device index", "2 of 4 GPUs stay visible"]),  # the guide's example
    ("2,1", 0, "pass", 2, ["sees 2 of 4", "0000:39:00.0, 0000:29:00.0"]),
    ("1gpu2", 0, "pass", 1, ["sees 1 of 4", "0000:29:00.0"]),
    (" 3", 0, "pass", 1, ["0000:49:00.0"]),
    ("0,9", 0, "warn", 1, ["index 9 names no GPU (this container has 4: 0..3)"]),
    ("99", 1, "fail", 0, ["hides every GPU", "index 99 names no GPU"]),
    ("abc", 1, "fail", 0, ["hides every GPU", "'abc' is not a device index"]),
    ("", 1, "fail", 0, ["hides every GPU"]),
    ("-1", 1, "fail", 0, ["hides every GPU"]),
    ("0,0", 1, "fail", 0, ["names one GPU twice"]),
    ("1,GPU-aaaa2222", 0, "warn", 1, ["'GPU-aaaa2222' is not a device index"]),
    ("GPU-bbbb", 0, "pass", 1, ["0000:39:00.0"]),
    ("GPU-aaaa", 1, "fail", 0, ["start of more than one GPU's UUID"]),
    ("GPU-aaaa1111,GPU-cccc", 0, "pass", 2, ["0000:19:00.0, 0000:49:00.0"]),
    ("GPU-cccc,GPU-cccc4444", 1, "fail", 0, ["names one GPU twice"]),
    ("GPU-aaaa1111,0", 0, "warn", 1, ["'0' is not a GPU- entry like the first"]),
    ("GPU-ffff", 1, "fail", 0, ["the UUID of no GPU here"]),
    # the pre-R470 MIG form: driver 580 shows no device (tests/vectors/cuda-visible-devices.tsv)
    ("MIG-GPU-bbbb3333-5e2a-4b6f-9d1e-7c3a2f4e6b80/1/0", 1, "fail", 0, ["MIG form of drivers before R470"]),
    ("MIG-GPU-ffff/1/0", 1, "fail", 0, ["MIG form of drivers before R470"]),
    # the driver's own answers (issue 28): upper case, trailing text after a
    # full UUID, -0, and a bare GPU-
    ("GPU-BBBB3333", 0, "pass", 1, ["0000:39:00.0"]),
    ("GPU-bbbb3333-5e2a-4b6f-9d1e-7c3a2f4e6b80x", 0, "pass", 1, ["0000:39:00.0"]),
    ("-0", 0, "pass", 1, ["0000:19:00.0"]),
    ("GPU-", 1, "fail", 0, ["has no UUID after it"]),
    ("4", 1, "fail", 0, ["index 4 names no GPU (this container has 4: 0..3)"]),  # N on N GPUs: the host's index
    ("MIG-5e2a5b6f-3c1d-5a7e-9b2c-1d4e6f8a0b3c", 0, "pass", 1, ["a MIG instance"]),
])
def test_cuda_visible_devices(root, value, rc, status, seen, words):
    spec = nvidia_gpus(root)
    env = {} if value is None else {"CUDA_VISIBLE_DEVICES": value}
    got, checks, _ = run(root, "--spec", spec, "--only", "devices.visibility", env=env)
    c = checks["devices.visibility"]
    assert got == rc and c["status"] == status, c
    if value is not None:
        assert c["details"]["cuda_devices"] == seen, c
    for w in words:
        assert w in text_of(c), (w, c)


def test_cuda_indices_of_mixed_models_follow_cuda_device_order(root):
    # CUDA numbers fastest first unless CUDA_DEVICE_ORDER=PCI_BUS_ID: with two
    # models an index names no PCI address until that is set
    spec = nvidia_gpus(root, models=["NVIDIA H100 80GB HBM3", "NVIDIA L4", "NVIDIA L4", "NVIDIA H100 80GB HBM3"])
    rc, checks, _ = run(root, "--spec", spec, "--only", "devices.visibility", env={"CUDA_VISIBLE_DEVICES": "2,1"})
    c = checks["devices.visibility"]
    assert rc == 0 and "device 2, device 1" in c["summary"] and "CUDA_DEVICE_ORDER=PCI_BUS_ID" in c["summary"], c
    env = {"CUDA_VISIBLE_DEVICES": "2,1", "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}
    rc, checks, _ = run(root, "--spec", spec, "--only", "devices.visibility", env=env)
    assert rc == 0 and "0000:39:00.0, 0000:29:00.0" in checks["devices.visibility"]["summary"], checks


def test_cuda_uuids_unreadable_are_counted_with_a_warning(root):
    spec = nvidia_gpus(root, count=2)
    for minor, d in enumerate(sorted(os.listdir(root.p("proc/driver/nvidia/gpus")))):
        with open(root.p("proc/driver/nvidia/gpus/%s/information" % d), "w") as f:
            f.write("Device Minor: \t %d\n" % minor)
    rc, checks, _ = run(root, "--spec", spec, "--only", "devices.visibility", env={"CUDA_VISIBLE_DEVICES": "GPU-aaaa,GPU-bbbb,GPU-cccc"})
    c = checks["devices.visibility"]
    assert rc == 0 and c["status"] == "warn" and c["details"]["cuda_devices"] == 2, c
    assert "UUIDs of the GPUs are not readable" in text_of(c) and "one entry more than there are GPUs" in text_of(c)


def test_cuda_visible_devices_below_min_gpus(root):
    spec = nvidia_gpus(root, min_gpus=2)
    rc, checks, _ = run(root, "--spec", spec, "--only", "devices.visibility", env={"CUDA_VISIBLE_DEVICES": "3,7"})
    c = checks["devices.visibility"]
    assert rc == 1 and "leaves 1 GPU visible to CUDA, the spec requires at least 2" in c["summary"], c
    assert "index 7 names no GPU" in text_of(c)


def test_text_report_without_any_gpu(tmp_path):
    # an empty root (as this build machine: no /sys/class/drm, no /dev/dri) gets a clear verdict
    from gpufixture import GPUGATE
    p = subprocess.run([GPUGATE, "check", "--only", "devices", "--root", str(tmp_path)],
                       capture_output=True, text=True)
    assert p.returncode == 1
    assert "UNHEALTHY" in p.stdout and "no GPU found" in p.stdout


def test_no_sys_finding_is_in_the_vendors_words(root):
    """devices.gpus.no_sysfs: DRM nodes but no /sys. Under an NVIDIA spec the finding says
    what gpugate reads in /sys, not what the Intel driver does (src/vendor/: sysfs_use)."""
    root.add_gpus(1)
    shutil.rmtree(root.p("sys"))
    spec = root.spec("devices:\n  vendor: nvidia\n")
    rc, checks, _ = run(root, "--spec", spec, "--only", "devices.gpus")
    assert rc == 1
    text = text_of(checks["devices.gpus"])
    assert "renderD128" in text and "/sys is not visible" in text and "/sys/bus/pci" in text, text
    assert "Intel" not in text, text
    rc, checks, _ = run(root, "--only", "devices.gpus")
    assert "the Intel driver maps render nodes" in text_of(checks["devices.gpus"]), checks


def test_nvidia_without_sysfs_uses_proc(root):
    # seen on a real H100 container: /proc/driver/nvidia/gpus/<address> but no /sys/class/drm
    spec = nvidia_root(root)
    shutil.rmtree(root.p("sys"))
    rc, checks, _ = run(root, "--spec", spec)
    assert rc == 0, checks
    assert "0000:01:00.0 NVIDIA (driver nvidia, from /proc/driver/nvidia)" in checks["devices.gpus"]["summary"]
    assert checks["devices.nvidia"]["status"] == "pass"


def test_by_path_link_loop_is_reported_not_followed_forever(root):
    root.add_gpus(1)
    render = "pci-%s-render" % GPU_A
    os.unlink(root.p("dev/dri/by-path/" + render))
    os.symlink("other", root.p("dev/dri/by-path/" + render))  # render -> other -> render
    os.symlink(render, root.p("dev/dri/by-path/other"))
    rc, checks, _ = run(root, "--only", "devices.by_path")
    assert rc == 1
    assert "Too many levels of symbolic links" in text_of(checks["devices.by_path"])


def test_access_as_root_says_so(root):
    root.add_gpus(1)
    rc, checks, _ = run(root, "--only", "devices.access")
    assert rc == 0
    assert "running as root" in text_of(checks["devices.access"])


def test_vendor_any_counts_every_gpu(root):
    root.add_gpu(GPU_A, card=0, render=128)
    root.add_gpu("0000:c1:00.0", card=1, render=129, vendor=0x1002, device=0x744C, driver="amdgpu")
    rc, checks, _ = run(root, "--spec", root.spec("devices:\n  vendor: any\n  min_gpus: 2\n"))
    assert rc == 0, checks
    assert "2 any-vendor GPUs" in checks["devices.gpus"]["summary"]
    assert "AMD 0x744c (driver amdgpu)" in checks["devices.gpus"]["summary"]


def test_drivers_list_overrides_the_default(root):
    root.add_gpus(1)  # bound to xe
    rc, checks, _ = run(root, "--spec", root.spec("devices:\n  drivers: [i915]\n"), "--only", "devices.gpus")
    assert rc == 1 and "bound to kernel driver 'xe', expected i915" in text_of(checks["devices.gpus"])


def test_by_path_entry_for_unknown_gpu_warns(root):
    root.add_gpus(1)
    os.symlink("../renderD130", root.p("dev/dri/by-path/pci-0000:99:00.0-render"))
    rc, checks, _ = run(root, "--only", "devices.by_path")
    assert rc == 0
    c = checks["devices.by_path"]
    assert c["status"] == "warn" and "names 0000:99:00.0, which sysfs does not list as a GPU" in text_of(c)


def test_checks_without_a_gpu_are_blocked_by_devices_gpus(tmp_path):
    """No GPU here: devices.gpus fails once (whatever min_gpus says) and the
    checks that need a GPU are skips naming it (the result model of issue
    18). Selected alone, such a check fails rather than pass a machine
    without a GPU."""
    root = Root(str(tmp_path))
    for args in (["--vendor", "intel"], ["--spec", root.spec("devices:\n  vendor: intel\n  min_gpus: 0\n")]):
        rc, checks, err = run(root, "--only", "devices", *args)
        assert rc == 1 and checks["devices.gpus"]["status"] == "fail", (checks, err)
        for cid in ("devices.nodes", "devices.by_path", "devices.access", "devices.visibility"):
            assert checks[cid]["status"] == "skip", checks[cid]
            assert checks[cid]["summary"] == "not reached: devices.gpus failed", checks[cid]
    rc, checks, err = run(root, "--only", "devices.access", "--vendor", "intel")
    assert rc == 1 and checks["devices.access"]["status"] == "fail", (checks, err)
    assert "it needs devices.gpus" in checks["devices.access"]["summary"], checks


# The Intel driver's fallback without by-path opens renderD128..renderD191
# (DRM_RENDER_MINOR_FALLBACK_END): minor 191 is still found (a warning in
# healthcheck, where by-path is only advised), 192 is invisible (a failure).
@pytest.mark.parametrize("minor,status", [(191, "warn"), (192, "fail")])
def test_render_minor_boundary_without_by_path(root, minor, status):
    root.add_gpu(GPU_A, card=0, render=minor, by_path=False)
    rc, checks, _ = run(root, "--profile", "healthcheck", "--only", "devices.by_path")
    c = checks["devices.by_path"]
    assert c["status"] == status, c
    assert rc == (1 if status == "fail" else 0)
    assert ("renderD%d of %s has minor %d" % (minor, GPU_A, minor) in text_of(c)) == (status == "fail"), c
