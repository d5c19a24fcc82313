"""`docker run` + HEALTHCHECK without a Docker engine: container-run.sh in
new mount and pid namespaces (unshare) runs a command under chroot in a
built image's root filesystem, as the image's USER, with the image's ENV and
WORKDIR (read from the image config by images.py)."""
import os
import subprocess
import time
from pathlib import Path

RUNNER = Path(__file__).with_name("container-run.sh")


def listing(root):
    """Every path of the rootfs with its type, size, mode, owner, mtime and
    ctime: any write, create, delete, chmod or chown changes it."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames + ["."]:
            p = os.path.join(dirpath, name)
            st = os.lstat(p)
            out[os.path.relpath(p, root)] = (st.st_mode, st.st_size, st.st_uid, st.st_gid,
                                             st.st_mtime_ns, st.st_ctime_ns)
    return out


def diff(before, after):
    return sorted(set(before) ^ set(after)) + sorted(p for p in before.keys() & after.keys()
                                                     if before[p] != after[p])


def passwd_entry(root, user):
    """USER as the image's /etc/passwd has it (a name or a uid)."""
    for line in (root / "etc/passwd").read_text().splitlines():
        f = line.split(":")
        if f[0] == user or f[2] == user:
            return f
    raise AssertionError(f"USER {user} is not in the image's /etc/passwd")


def group_ids(root, user, primary):
    """The supplementary groups Docker gives USER: its groups in /etc/group."""
    gids = {int(primary)}
    named = {}
    for line in (root / "etc/group").read_text().splitlines():
        f = line.split(":")
        named[f[0]] = int(f[2])
        if user in f[3].split(","):
            gids.add(int(f[2]))
    return sorted(gids), named


def container(image, argv, by_path=True, status_override=None):
    """Runs argv in the image as its HEALTHCHECK would run; returns
    (exit code, output bytes, seconds inside, seconds in all, rootfs diff, HF diff).
    image: root, fix, uid, gid, groups, env, workdir, hf_target, and
    render_gid/video_gid for a GPU (None: no /dev/dri, empty /sys)."""
    fix = image["fix"]
    for name in ("out", "result", "hf-before", "hf-after"):
        (fix / name).unlink(missing_ok=True)
    env = dict(os.environ, ROOTFS=str(image["root"]), FIX=str(fix), BY_PATH="1" if by_path else "0",
               RUN_UID=image["uid"], RUN_GID=image["gid"], RUN_GROUPS=",".join(map(str, image["groups"])),
               RENDER_GID=str(image.get("render_gid") or ""), VIDEO_GID=str(image.get("video_gid") or ""),
               HF_TARGET=image["hf_target"], STATUS_OVERRIDE=str(status_override or ""))
    inner = ["env", "-i", "-C", image["workdir"]] + [f"{k}={v}" for k, v in image["env"].items()] + argv
    before = listing(image["root"])
    t0 = time.monotonic()
    r = subprocess.run(["unshare", "--mount", "--pid", "--fork", "--propagation", "private",
                        "sh", str(RUNNER)] + inner, env=env, capture_output=True, text=True, timeout=60)
    elapsed = time.monotonic() - t0
    after = listing(image["root"])
    assert r.returncode == 0, f"container setup failed:\n{r.stdout}{r.stderr}"
    rc, ns = (fix / "result").read_text().split()
    hf_changed = [line for line in set((fix / "hf-before").read_text().splitlines())
                  ^ set((fix / "hf-after").read_text().splitlines())]
    return int(rc), (fix / "out").read_bytes(), int(ns) / 1e9, elapsed, diff(before, after), hf_changed


def image_from_config(root, config, fix):
    """The run-time settings `docker run` takes from the image config:
    USER (and its groups), ENV, WORKDIR; HF_TARGET is HF_HOME."""
    user = config.get("User") or "root"
    pw = passwd_entry(root, user)
    gids, named = group_ids(root, pw[0], pw[3])
    env = dict(e.split("=", 1) for e in config.get("Env") or [])
    env.setdefault("HOME", pw[5])
    env.setdefault("HOSTNAME", "gpugate-test")
    hf_target = env.get("HF_HOME", pw[5] + "/.cache/huggingface")
    for d in ("hf", "hf-seed"):
        (fix / d).mkdir(parents=True, exist_ok=True)
    return {"root": root, "fix": fix, "uid": pw[2], "gid": pw[3], "groups": gids, "named_groups": named,
            "user": pw[0], "env": env, "workdir": config.get("WorkingDir") or "/", "hf_target": hf_target}


PCI = "0000:03:00.0"  # an Arc A770 behind a root port, as on a real host


def sysfs_tree(sys_dir):
    """sysfs for one Intel GPU at PCI, driver i915, card0 and renderD128."""
    dev = sys_dir / "devices" / "pci0000:00" / "0000:00:01.0" / PCI
    attrs = {"vendor": "0x8086", "device": "0x56a0", "subsystem_vendor": "0x8086",
             "subsystem_device": "0x1020", "class": "0x030000", "revision": "0x08",
             "numa_node": "-1", "enable": "1", "local_cpulist": "0-1",
             "uevent": f"DRIVER=i915\nPCI_CLASS=30000\nPCI_ID=8086:56A0\nPCI_SUBSYS_ID=8086:1020\n"
                       f"PCI_SLOT_NAME={PCI}\nMODALIAS=pci:v00008086d000056A0sv00008086sd00001020bc03sc00i00"}
    dev.mkdir(parents=True)
    for name, value in attrs.items():
        (dev / name).write_text(value + "\n")
    drivers = sys_dir / "bus" / "pci" / "drivers" / "i915"
    drivers.mkdir(parents=True)
    (drivers / PCI).symlink_to(f"../../../../devices/pci0000:00/0000:00:01.0/{PCI}")
    (dev / "driver").symlink_to("../../../../bus/pci/drivers/i915")
    (dev / "subsystem").symlink_to("../../../../bus/pci")
    (sys_dir / "bus" / "pci" / "devices").mkdir()
    (sys_dir / "bus" / "pci" / "devices" / PCI).symlink_to(f"../../../devices/pci0000:00/0000:00:01.0/{PCI}")
    (sys_dir / "class" / "drm").mkdir(parents=True)
    (sys_dir / "dev" / "char").mkdir(parents=True)
    for node, minor in (("card0", 0), ("renderD128", 128)):
        d = dev / "drm" / node
        d.mkdir(parents=True)
        (d / "dev").write_text(f"226:{minor}\n")
        (d / "uevent").write_text(f"MAJOR=226\nMINOR={minor}\nDEVNAME=dri/{node}\nDEVTYPE=drm_minor\n")
        (d / "device").symlink_to("../../../" + PCI)
        (d / "subsystem").symlink_to("../../../../../../../class/drm")
        (sys_dir / "class" / "drm" / node).symlink_to(f"../../devices/pci0000:00/0000:00:01.0/{PCI}/drm/{node}")
        (sys_dir / "dev" / "char" / f"226:{minor}").symlink_to(
            f"../../devices/pci0000:00/0000:00:01.0/{PCI}/drm/{node}")
