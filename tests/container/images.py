"""Builds images/*.Dockerfile with Debian's buildah, as `make test` does.

Everything buildah keeps lives under build/image-cache (its --root, reused
between runs so the imported base and the apt layers are cached) and a fresh
--runroot and TMPDIR per run; every buildah call runs through buildah-ns.sh in
its own mount namespace, so nothing is written under /etc, /var or /run of
this machine (no default container storage, no blob-info cache).

The one base made here: docker.io/library/debian:12, imported from the
debootstrap Debian 12 root that rootfs.py caches for the container tests
(build/rootfs-cache). Nothing is pulled. A Dockerfile's `stack` stage (Ubuntu
24.04 with the Intel PPA, NVIDIA's CUDA base) cannot be had here, so it is
replaced with buildah's --build-context by a stand-in built from
stack-standin.Containerfile on debian:12; every other instruction of the
Dockerfile is built as written.
"""
import fcntl
import json
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
CACHE_DIR = REPO / "build" / "image-cache"
NS = HERE / "buildah-ns.sh"
STANDIN = HERE / "stack-standin.Containerfile"
BASE = "docker.io/library/debian:12"
BASE_LABEL = "org.gpugate.test.rootfs"
# What the Docker Hub debian:12 image sets; the import gets the same.
BASE_ENV = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
# The bases this test can make; any other FROM is named as not built here.
MADE_HERE = {"debian:12", BASE}
STORE_LIMIT = 16 << 30  # wipe the cached store past 16 GiB (layer cache growth; vfs copies each layer)


def pick_driver(scratch):
    """overlay where this file system and kernel mount it (in a private
    namespace), else vfs (slower, copies each layer); GPUGATE_BUILDAH_DRIVER
    overrides."""
    if os.environ.get("GPUGATE_BUILDAH_DRIVER"):
        return os.environ["GPUGATE_BUILDAH_DRIVER"]
    d = Path(tempfile.mkdtemp(dir=scratch, prefix="overlay-probe."))
    for sub in ("lower", "upper", "work", "merged"):
        (d / sub).mkdir()
    opts = f"lowerdir={d}/lower,upperdir={d}/upper,workdir={d}/work"
    r = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c",
                        f"mount -t overlay overlay -o {opts} {d}/merged && touch {d}/merged/x"],
                       capture_output=True, text=True)
    shutil.rmtree(d, ignore_errors=True)
    return "overlay" if r.returncode == 0 else "vfs"


def du(path):
    total = 0
    for dirpath, _, files in os.walk(path):
        for f in files:
            try:
                total += os.lstat(os.path.join(dirpath, f)).st_size
            except OSError:
                pass
    return total


class Buildah:
    """buildah with this test's own storage, config and namespace."""

    def __init__(self, scratch):
        CACHE_DIR.mkdir(parents=True, exist_ok=True)
        self.scratch = Path(scratch)
        self.driver = pick_driver(CACHE_DIR)
        self.root = CACHE_DIR / f"storage-{self.driver}"
        if self.root.exists() and du(self.root) > STORE_LIMIT:
            self.nuke()
        self.runroot = self.scratch / "run"
        self.tmp = self.scratch / "tmp"
        for d in (self.runroot, self.tmp):
            d.mkdir(parents=True, exist_ok=True)
        # Accept unsigned local images, resolve short names to docker.io
        # without prompting: the machine's /etc/containers is not read.
        self.policy = self.scratch / "policy.json"
        self.policy.write_text('{"default": [{"type": "insecureAcceptAnything"}]}\n')
        self.registries = self.scratch / "registries.conf"
        self.registries.write_text('unqualified-search-registries = ["docker.io"]\nshort-name-mode = "permissive"\n')
        self.logs = CACHE_DIR / "logs"
        self.logs.mkdir(exist_ok=True)

    def nuke(self):
        # overlay's work dirs may be mode 000; a namespace mount could be busy
        subprocess.run(["chmod", "-R", "u+rwx", str(self.root)], capture_output=True)
        shutil.rmtree(self.root, ignore_errors=True)

    def env(self):
        return dict(os.environ, TMPDIR=str(self.tmp), CONTAINERS_REGISTRIES_CONF=str(self.registries),
                    BUILDAH_ISOLATION="chroot")

    def base_argv(self):
        return ["buildah", "--root", str(self.root), "--runroot", str(self.runroot),
                "--storage-driver", self.driver]

    def script(self, text, timeout=600, log=None):
        """Runs a shell script in buildah-ns.sh's namespace with $B set to
        this buildah; a container made there is removed there."""
        b = " ".join(shlex.quote(a) for a in self.base_argv())
        argv = ["unshare", "-m", "--propagation", "private", "sh", str(NS), "sh", "-c",
                f"B='{b}'\nset -eu\n{text}"]
        t0 = time.monotonic()
        r = subprocess.run(argv, env=self.env(), capture_output=True, text=True, timeout=timeout,
                           cwd=str(REPO))
        r.seconds = time.monotonic() - t0
        if log:
            (self.logs / log).write_text(r.stdout + r.stderr)
        return r

    def __call__(self, *args, timeout=600, log=None):
        return self.script(" ".join(["$B"] + [shlex.quote(str(a)) for a in args]), timeout=timeout, log=log)

    def inspect(self, image):
        r = self("inspect", "--type", "image", image)
        assert r.returncode == 0, f"buildah inspect {image}: {r.stderr}"
        return json.loads(r.stdout)

    def has_image(self, image):
        return self("inspect", "--type", "image", image).returncode == 0

    def import_base(self, tarball):
        """debian:12 from the debootstrap root, once per tarball."""
        r = self("inspect", "--type", "image", "--format",
                 '{{index .OCIv1.Config.Labels "' + BASE_LABEL + '"}}', BASE)
        if r.returncode == 0 and r.stdout.strip() == tarball.name:
            return False
        p = shlex.quote(str(self.policy))
        r = self.script(f"""
c=$($B from --signature-policy {p} scratch)
$B add "$c" {shlex.quote(str(tarball))} /
$B config --cmd bash --env {shlex.quote(BASE_ENV)} --label {BASE_LABEL}={shlex.quote(tarball.name)} "$c"
$B commit --signature-policy {p} --rm "$c" {BASE}
""", timeout=600, log="import-base.log")
        assert r.returncode == 0, f"importing {tarball} as {BASE} failed:\n{r.stdout[-2000:]}{r.stderr[-3000:]}"
        return True

    def bud(self, dockerfile, tag, log, target=None, contexts=(), build_args=(), context=REPO):
        argv = ["bud", "--signature-policy", self.policy, "--isolation", "chroot", "--pull=never",
                "--layers", "--format", "docker", "-f", dockerfile, "-t", tag]
        if target:
            argv += ["--target", target]
        for name, image in contexts:
            argv += ["--build-context", f"{name}=docker-image://{image}"]
        for kv in build_args:
            argv += ["--build-arg", kv]
        return self(*argv, context, timeout=1500, log=log)

    def run(self, image, command, user=None, timeout=120):
        """Runs a shell command in a container of image (chroot isolation,
        the image's USER, ENV and WORKDIR unless user is given)."""
        u = f"--user {shlex.quote(user)} " if user else ""
        p = shlex.quote(str(self.policy))
        return self.script(f"""
c=$($B from --pull=never --signature-policy {p} {shlex.quote(image)})
rc=0
$B run --isolation chroot {u}"$c" -- sh -c {shlex.quote(command)} || rc=$?
$B rm "$c" >/dev/null
exit $rc
""", timeout=timeout)

    def export_root(self, image, dest):
        """A copy of the image's root filesystem (owners, modes, nodes)."""
        dest.mkdir(parents=True, exist_ok=True)
        p = shlex.quote(str(self.policy))
        r = self.script(f"""
c=$($B from --pull=never --signature-policy {p} {shlex.quote(image)})
m=$($B mount "$c")
tar --numeric-owner -C "$m" -cf - . | tar --numeric-owner -C {shlex.quote(str(dest))} -xpf -
$B umount "$c" >/dev/null
$B rm "$c" >/dev/null
""", timeout=600)
        assert r.returncode == 0, f"exporting {image}: {r.stderr[-3000:]}"
        return dest


def lock():
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    f = open(CACHE_DIR / ".lock", "w")
    fcntl.flock(f, fcntl.LOCK_EX)  # one build at a time per checkout
    return f


def apt_packages(stage):
    """The package names every `apt-get install` of a stage's RUN lines names."""
    out = []
    for inst in stage:
        if inst.name != "RUN":
            continue
        for command in re.split(r"&&|;|\|\|", inst.rest):
            words = shlex.split(command)
            if len(words) >= 2 and words[0] == "apt-get" and "install" in words:
                out += [w for w in words[words.index("install") + 1:] if not w.startswith("-")]
    return out


def debian_name(ubuntu_name):
    """Ubuntu 24.04 renamed the libraries of the 64-bit time_t transition
    (libssl3 -> libssl3t64); Debian 12 has the old names."""
    return ubuntu_name[:-3] if ubuntu_name.endswith("t64") else ubuntu_name


def tail(r, n=3000):
    """The ends of a command's stdout (apt's or make's error) and stderr."""
    return r.stdout[-n:] + ("\n--- stderr:\n" + r.stderr[-1000:] if r.stderr.strip() else "")
