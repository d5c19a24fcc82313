"""Container-level test: the XPU image's HEALTHCHECK, run as Docker would run
it, inside a real Debian 12 root filesystem (no Docker engine needed).

1. A Debian 12 minbase rootfs from Debian's archive (debootstrap, the mirror
   this machine's apt uses), cached as build/rootfs-cache/*.tar.
2. "docker build", the parts that matter: the built gpugate where the
   Dockerfile's COPY puts it, with the shared libraries `ldd` lists that the
   minbase lacks (copied rather than apt-installed: offline after the first
   run, and it follows the Makefile's PKGS by itself); the specs the
   Dockerfile COPYs into /etc/gpugate/; the Dockerfile's own user-creating
   RUN line, run in the rootfs with its ARG defaults; fixture dpkg stanzas
   (marked as test fixtures) for the Intel stack every pinned spec asks for.
3. "docker run" + HEALTHCHECK: container-run.sh in new mount and pid
   namespaces (unshare), the Dockerfile's HEALTHCHECK argv under chroot as
   the image's USER, with /dev/dri nodes (mknod), by-path links, a fixture
   /sys and a tmpfs HF cache. Asserted: exit code, verdict, at most 4096
   bytes of output, time well under the HEALTHCHECK timeout, no file written.
"""
import fcntl
import glob
import hashlib
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "lib"))
import debfixture  # noqa: E402
import dockerfile  # noqa: E402

GPUGATE = Path(os.environ.get("GPUGATE", REPO / "build" / "gpugate"))
DOCKERFILE = REPO / "images" / "xpu.Dockerfile"
CACHE_DIR = REPO / "build" / "rootfs-cache"
RUNNER = Path(__file__).with_name("container-run.sh")
SUITE = "bookworm"  # Debian 12
DOCKER_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
PCI = "0000:03:00.0"  # an Arc A770 behind a root port, as on a real host


def debian_mirror():
    """The Debian archive this machine's apt is configured with (one-line and
    deb822 sources), or deb.debian.org where it has none (an Ubuntu runner)."""
    if os.environ.get("GPUGATE_DEBIAN_MIRROR"):
        return os.environ["GPUGATE_DEBIAN_MIRROR"]
    files = ["/etc/apt/sources.list"] + sorted(glob.glob("/etc/apt/sources.list.d/*.list"))
    for path in files:
        try:
            lines = Path(path).read_text().splitlines()
        except OSError:
            continue
        for line in lines:
            words = re.sub(r"\[[^]]*\]", "", line.split("#")[0]).split()
            if len(words) >= 4 and words[0] == "deb" and words[2] == SUITE and "main" in words[3:]:
                return words[1]
    for path in sorted(glob.glob("/etc/apt/sources.list.d/*.sources")):
        try:
            text = Path(path).read_text()
        except OSError:
            continue
        for stanza in re.split(r"\n\s*\n", text):
            fields = {}
            for line in stanza.splitlines():
                m = re.match(r"^([A-Za-z-]+):\s*(.*)$", line)
                if m:
                    fields[m.group(1).lower()] = m.group(2).split()
            if ("deb" in fields.get("types", []) and SUITE in fields.get("suites", [])
                    and "main" in fields.get("components", []) and fields.get("uris")):
                return fields["uris"][0]
    return "http://deb.debian.org/debian"


def mirror_reachable(mirror):
    try:
        with urllib.request.urlopen(f"{mirror.rstrip('/')}/dists/{SUITE}/Release", timeout=20) as r:
            return r.status == 200 and b"Codename: bookworm" in r.read(4096), f"HTTP {r.status}"
    except Exception as e:  # any network failure means: cannot reach it
        return False, str(e)


def rootfs_tarball():
    """The cached minbase tarball, built on first use (about a minute)."""
    for tool in ("debootstrap", "unshare", "chroot", "mknod"):
        if not shutil.which(tool):
            pytest.skip(f"{tool} is not installed (.ci/install-deps installs it)")
    if os.geteuid() != 0:
        pytest.skip("the container test needs root (mknod, mount namespaces, chroot)")
    arch = debfixture.native_arch()
    mirror = debian_mirror()
    key = hashlib.sha256(mirror.encode()).hexdigest()[:8]
    tarball = CACHE_DIR / f"debian12-minbase-{arch}-{key}.tar"
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    with open(CACHE_DIR / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two runs at once build it once
        if tarball.exists():
            return tarball
        ok, why = mirror_reachable(mirror)
        if not ok:
            pytest.skip(f"debootstrap cannot reach the Debian archive {mirror}: {why}")
        work = CACHE_DIR / f"tmp.{os.getpid()}"
        shutil.rmtree(work, ignore_errors=True)
        cmd = ["debootstrap", "--variant=minbase", f"--arch={arch}"]
        if Path("/usr/share/keyrings/debian-archive-keyring.gpg").exists():
            cmd.append("--keyring=/usr/share/keyrings/debian-archive-keyring.gpg")
        cmd += [SUITE, str(work / "root"), mirror]
        print(f"building the rootfs cache: {' '.join(cmd)}", file=sys.stderr)
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        assert r.returncode == 0, f"debootstrap failed although {mirror} answers:\n{r.stdout[-3000:]}{r.stderr[-2000:]}"
        subprocess.run(["tar", "--numeric-owner", "-C", str(work / "root"), "-cf", str(work / "rootfs.tar"), "."],
                       check=True)
        os.rename(work / "rootfs.tar", tarball)
        shutil.rmtree(work)
        return tarball


def install_binary(root, dest):
    """The binary and each shared library it needs that the rootfs lacks."""
    target = root / dest.lstrip("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(GPUGATE, target)
    ldd = subprocess.run(["ldd", str(GPUGATE)], capture_output=True, text=True, check=True).stdout
    copied = []
    for lib in re.findall(r"(/\S+) \(0x", ldd):
        inside = root / lib.lstrip("/")
        if not os.path.lexists(inside) and not (root / os.path.realpath(lib).lstrip("/")).exists():
            inside.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(os.path.realpath(lib), inside)
            copied.append(lib)
    return copied


def run_build_step(root, command, args):
    """A Dockerfile RUN line, in the rootfs, with the build args as env."""
    env = {"PATH": DOCKER_PATH, "HOME": "/root"}
    env.update({k: v for k, v in args.items() if v is not None})
    r = subprocess.run(["chroot", str(root), "/bin/sh", "-c", command], env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"RUN {command}\n{r.stdout}{r.stderr}"


def passwd_entry(root, user):
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


def hf_seed(seed):
    """A one-repo hub cache as huggingface_hub lays it out: a regular file's
    blob is named by its git blob id, an LFS file's by its SHA-256."""
    repo = seed / "hub" / "models--gpugate-fixture--tiny"
    (repo / "blobs").mkdir(parents=True)
    commit = "0123456789abcdef0123456789abcdef01234567"
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    snap = repo / "snapshots" / commit
    snap.mkdir(parents=True)
    config = b'{"model_type": "gpugate-fixture"}\n'
    weights = bytes(range(256)) * 64
    cfg_id = subprocess.run(["git", "hash-object", "--stdin"], input=config, capture_output=True,
                            check=True).stdout.decode().strip() if shutil.which("git") else \
        hashlib.sha1(b"blob %d\0" % len(config) + config).hexdigest()
    for name, blob, data in (("config.json", cfg_id, config),
                             ("model.safetensors", hashlib.sha256(weights).hexdigest(), weights)):
        (repo / "blobs" / blob).write_bytes(data)
        (snap / name).symlink_to(f"../../blobs/{blob}")


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
    changed = sorted(set(before) ^ set(after)) + sorted(p for p in before.keys() & after.keys()
                                                         if before[p] != after[p])
    return changed


@pytest.fixture(scope="module")
def image(tmp_path_factory):
    """The XPU image's runtime stage, approximated on Debian 12 minbase."""
    tarball = rootfs_tarball()
    base = tmp_path_factory.mktemp("xpu-image")
    root = base / "rootfs"
    root.mkdir()
    subprocess.run(["tar", "--numeric-owner", "-C", str(root), "-xf", str(tarball)], check=True)

    instructions = dockerfile.parse(DOCKERFILE.read_text())
    runtime = dockerfile.stages(instructions)[-1]
    args = dockerfile.arg_defaults(runtime)
    specs, binary_dest, env, user, workdir = {}, None, {}, None, "/"
    for inst in runtime:
        if inst.name == "COPY":
            src, dest = inst.rest.split()[-2:]
            if inst.flags.get("from") and src.endswith("/gpugate"):
                binary_dest = dest
            elif dest.startswith("/etc/gpugate/"):
                specs[dest] = REPO / src
                (root / dest.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(REPO / src, root / dest.lstrip("/"))
        elif inst.name == "RUN" and "useradd" in inst.rest:
            run_build_step(root, inst.rest, args)
        elif inst.name == "ENV":
            env.update(dockerfile.env_of(inst))
        elif inst.name == "USER":
            user = inst.rest
        elif inst.name == "WORKDIR":
            workdir = inst.rest
    assert binary_dest, "the runtime stage does not COPY gpugate from the builder"
    assert user, "the image has no USER"
    copied = install_binary(root, binary_dest)
    # The runtime checks need a Level Zero loader and a driver: Debian's
    # loader and the test driver (tests/fakes), as the image's libze1 and
    # libze-intel-gpu1 would be, with the libraries they need.
    fake = pathlib.Path(GPUGATE).parent / "fakes" / "libze_fake.so"
    libdir = root / "usr/lib/x86_64-linux-gnu"
    for lib in (pathlib.Path("/usr/lib/x86_64-linux-gnu/libze_loader.so.1"), fake):
        shutil.copy2(os.path.realpath(lib), libdir / lib.name)
        ldd = subprocess.run(["ldd", str(lib)], capture_output=True, text=True, check=True).stdout
        for dep in re.findall(r"(/\S+) \(0x", ldd):
            if not (root / dep.lstrip("/")).exists() and not (root / os.path.realpath(dep).lstrip("/")).exists():
                shutil.copy2(os.path.realpath(dep), root / dep.lstrip("/"))
                copied.append(dep)

    # The Intel stack every spec the image runs asks for, as fixture stanzas.
    relations = debfixture.spec_packages(REPO / "checks" / "healthcheck.yaml")
    for spec in specs.values():
        relations += debfixture.spec_packages(spec)
    versions = debfixture.fixture_versions(relations)
    status = root / "var/lib/dpkg/status"
    real_status = status.read_text()
    status.write_text(real_status.rstrip("\n") + "\n\n" + debfixture.stanzas(versions))
    q = subprocess.run(["dpkg-query", f"--admindir={root}/var/lib/dpkg", "-W",
                        "-f", "${Package} ${Version} ${db:Status-Abbrev}\n", *sorted(versions)],
                       capture_output=True, text=True)
    assert q.returncode == 0, q.stderr
    got = {line.split()[0]: line.split()[1:] for line in q.stdout.splitlines()}
    assert got == {n: [v, "ii"] for n, v in versions.items()}, "dpkg reads the fixture stanzas differently"

    pw = passwd_entry(root, user)
    gids, named = group_ids(root, pw[0], pw[3])
    hf_target = env.get("HF_HOME", pw[5] + "/.cache/huggingface")
    assert (root / hf_target.lstrip("/")).is_dir(), f"{hf_target} is not in the image"

    fix = base / "fixture"
    (fix / "by-path").mkdir(parents=True)
    (fix / "by-path" / f"pci-{PCI}-card").symlink_to("../card0")
    (fix / "by-path" / f"pci-{PCI}-render").symlink_to("../renderD128")
    sysfs_tree(fix / "sys")
    hf_seed(fix / "hf-seed")
    (fix / "hf").mkdir()

    hc = dockerfile.final_healthcheck(instructions)
    container_env = {"PATH": DOCKER_PATH, "HOSTNAME": "gpugate-test", "HOME": pw[5],
                     "ZE_ENABLE_ALT_DRIVERS": "/usr/lib/x86_64-linux-gnu/libze_fake.so"}
    container_env.update(env)
    yield {
        "root": root, "fix": fix, "healthcheck": hc, "uid": pw[2], "gid": pw[3], "groups": gids,
        "render_gid": named["render"], "video_gid": named["video"], "hf_target": hf_target,
        "env": container_env, "workdir": workdir, "specs": specs, "versions": versions,
        "copied_libs": copied, "user": pw[0], "render_gid_arg": args.get("RENDER_GID"),
    }
    shutil.rmtree(base, ignore_errors=True)


def container(image, argv, by_path=True, status_override=None):
    """Runs argv in the image as its HEALTHCHECK would run; returns
    (exit code, output bytes, seconds inside, seconds in all, rootfs diff, HF diff)."""
    fix = image["fix"]
    for name in ("out", "result", "hf-before", "hf-after"):
        (fix / name).unlink(missing_ok=True)
    env = dict(os.environ, ROOTFS=str(image["root"]), FIX=str(fix), BY_PATH="1" if by_path else "0",
               RUN_UID=image["uid"], RUN_GID=image["gid"], RUN_GROUPS=",".join(map(str, image["groups"])),
               RENDER_GID=str(image["render_gid"]), VIDEO_GID=str(image["video_gid"]),
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


def profile_checks(profile):
    """The check ids a built-in profile runs, from `gpugate list`."""
    out = subprocess.run([str(GPUGATE), "list"], capture_output=True, text=True, check=True).stdout
    m = re.search(rf"^\s*{profile}\s+(.*)$", out, re.M)
    assert m, out
    return [c.strip() for c in m.group(1).split(",") if c.strip()]


def assert_probe_contract(image, out, inside, elapsed, rootfs_changed, hf_changed):
    timeout = image["healthcheck"].options["timeout"]
    assert len(out) <= 4096, f"{len(out)} bytes of output; Docker keeps 4096"
    assert inside < timeout / 5, f"the health check took {inside:.2f} s of a {timeout:.0f} s timeout"
    assert elapsed < timeout / 2, f"the container run took {elapsed:.2f} s of a {timeout:.0f} s timeout"
    assert not rootfs_changed, f"the health check wrote in the root filesystem: {rootfs_changed[:20]}"
    assert not hf_changed, f"the health check wrote in the HF cache: {hf_changed[:20]}"


def test_image_has_what_the_healthcheck_needs(image):
    assert image["healthcheck"].argv[0] == "gpugate"
    assert image["user"] != "root" and image["uid"] != "0"
    assert image["render_gid"] in image["groups"] and image["video_gid"] in image["groups"]
    # the Dockerfile's RUN line gave `render` the build argument's GID
    assert str(image["render_gid"]) == image["render_gid_arg"]
    status = (image["root"] / "var/lib/dpkg/status").read_text()
    assert status.count(debfixture.FIXTURE_MARK) == len(image["versions"])
    print(f"libraries copied into the minbase: {image['copied_libs']}")


def test_healthcheck_is_healthy(image):
    rc, out, inside, elapsed, changed, hf_changed = container(image, image["healthcheck"].argv)
    text = out.decode(errors="replace")
    assert rc == 0, f"exit {rc}:\n{text}"
    assert re.match(r"gpugate: HEALTHY \(profile healthcheck\)", text), text
    assert_probe_contract(image, out, inside, elapsed, changed, hf_changed)
    print(f"healthy: exit 0, {len(out)} bytes, {inside * 1000:.1f} ms inside, {elapsed * 1000:.0f} ms in all")


def test_healthcheck_verdict_covers_the_profile(image):
    rc, out, inside, elapsed, changed, hf_changed = container(image, image["healthcheck"].argv + ["--format", "json"])
    assert rc == 0, out.decode(errors="replace")
    report = json.loads(out)
    assert report["verdict"] == "pass" and report["profile"] == "healthcheck"
    ran = [c["id"] for c in report["checks"]]
    assert sorted(ran) == sorted(profile_checks("healthcheck"))
    assert all(c["status"] in ("pass", "warn", "skip") for c in report["checks"]), report["checks"]
    assert not changed and not hf_changed


def test_without_by_path_healthcheck_warns_and_ci_gate_fails(image):
    """Issue 3's policy: the healthcheck profile warns when /dev/dri/by-path
    is missing (the Intel driver still finds renderD128..191 by its fallback),
    and the ci pre-test gate, run in the same container, fails (exit 1)."""
    if not any(c.startswith("devices.") for c in profile_checks("healthcheck")):
        pytest.skip("the healthcheck profile has no devices checks yet")
    rc, out, inside, elapsed, changed, hf_changed = container(image, image["healthcheck"].argv, by_path=False)
    text = out.decode(errors="replace")
    assert rc == 0, f"exit {rc} without /dev/dri/by-path:\n{text}"
    assert "WARN  devices.by_path" in text and "-v /dev/dri/by-path:/dev/dri/by-path" in text, text
    assert_probe_contract(image, out, inside, elapsed, changed, hf_changed)
    gate = ["gpugate", "check", "--profile", "ci", "--only", "devices"]
    rc, out, *_ = container(image, gate, by_path=False)
    text = out.decode(errors="replace")
    assert rc == 1, f"exit {rc} of the ci gate without /dev/dri/by-path:\n{text}"
    assert text.startswith("gpugate: UNHEALTHY") and "FAIL  devices.by_path" in text, text


def test_healthcheck_with_a_half_upgraded_driver_is_unhealthy(image, tmp_path):
    # libze-intel-gpu1 from an older release than the pins: a broken image.
    status = (image["root"] / "var/lib/dpkg/status").read_text()
    broken = re.sub(r"(Package: libze-intel-gpu1\n(?:.+\n)*?Version: ).*", r"\g<1>23.43.27642.40-1ubuntu3", status)
    assert broken != status
    (tmp_path / "status").write_text(broken)
    rc, out, inside, elapsed, changed, hf_changed = container(image, image["healthcheck"].argv,
                                                              status_override=tmp_path / "status")
    text = out.decode(errors="replace")
    assert rc == 1, text
    assert text.startswith("gpugate: UNHEALTHY") and "libze-intel-gpu1" in text and "too old" in text, text
    assert_probe_contract(image, out, inside, elapsed, changed, hf_changed)


def test_pinned_specs_are_healthy_in_the_image(image):
    assert image["specs"], "xpu.Dockerfile pins no spec in /etc/gpugate/"
    for dest in image["specs"]:
        rc, out, inside, elapsed, changed, hf_changed = container(image, ["gpugate", "check", "--spec", dest])
        assert rc == 0, f"{dest}: exit {rc}:\n{out.decode(errors='replace')}"
        assert_probe_contract(image, out, inside, elapsed, changed, hf_changed)


# The harness itself: it must see what the image's user sees in a real
# container, and catch a write, or the assertions above prove nothing.
def test_container_looks_like_docker_run(image):
    script = ("id -u; id -G; ls /dev/dri; readlink /dev/dri/by-path/pci-%s-render; "
              "cat /sys/class/drm/renderD128/device/vendor; readlink /sys/class/drm/renderD128/device/driver; "
              "test -r /dev/dri/renderD128 -a -w /dev/dri/renderD128 && echo render-rw; "
              "stat -c %%t:%%T /dev/dri/renderD128; ls $HF_HOME/hub; "
              "touch /etc/x 2>/dev/null || echo no-root-write" % PCI)
    rc, out, *_ = container(image, ["sh", "-c", script])
    lines = out.decode().split("\n")
    assert rc == 0, out
    assert lines[0] == image["uid"] and str(image["render_gid"]) in lines[1].split()
    assert "by-path" in lines[2:6] and "renderD128" in lines[2:6] and "card0" in lines[2:6]
    assert "../renderD128" in lines and "0x8086" in lines and any(x.endswith("/i915") for x in lines)
    assert "render-rw" in lines and "e2:80" in lines, out  # 226:128 in hex, as stat prints it
    assert "models--gpugate-fixture--tiny" in lines and "no-root-write" in lines
    rc, out, *_ = container(image, ["ls", "/dev/dri"], by_path=False)
    assert rc == 0 and "by-path" not in out.decode().split(), out


def test_harness_catches_writes(image):
    rc, out, inside, elapsed, changed, hf_changed = container(
        image, ["sh", "-c", "echo x > /tmp/gpugate-probe-write && echo x > $HF_HOME/stray"])
    try:
        assert rc == 0, out
        assert "tmp/gpugate-probe-write" in changed and "tmp" in changed
        assert any("stray" in line for line in hf_changed)
    finally:
        (image["root"] / "tmp" / "gpugate-probe-write").unlink(missing_ok=True)
