"""A real Docker engine for the container tests: Debian's dockerd, started
and stopped by the test (by the pid in its pidfile), everything it keeps
under build/docker/ and nothing on the host's network (no iptables, no
bridge, no IP forwarding or masquerading; the options are dockerd's, see
`dockerd --help` and docs.docker.com/reference/cli/dockerd/).

- Engine: `dockerd --data-root build/docker/data --exec-root EXEC --pidfile
  build/docker/dockerd.pid --host unix://build/docker/docker.sock
  --iptables=false --ip-forward=false --ip-masq=false --bridge=none
  --storage-driver=vfs`, in a mount namespace of its own (`unshare --mount
  --propagation private`): the container roots, its netns bind mount and
  the filesystems a test mounts for it (mount_tmpfs) never reach the
  host's mount table and go away with it. The client reaches it through
  DOCKER_HOST. The
  data root stays between runs, so imported bases and build layers are
  cached; EXEC is short-lived (/run-like state, under build/docker too).
- Bases: no registry is reachable, so `docker import` turns the debootstrap
  tarballs of rootfs.py into images, tagged with the tarball's name (a new
  tarball is imported again).
- Builds: `DOCKER_BUILDKIT=0 docker build --network host` (the classic
  builder: BuildKit would pull the `# syntax=` frontend), the context sent
  as a tar on stdin: the repository's files as git lists them (tracked and
  untracked, not ignored: no build/, no .git), which is what the
  Dockerfile's .dockerignore keeps too.
"""
import json
import os
import shlex
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

import images  # du(): one owner for the store size

REPO = Path(__file__).resolve().parents[2]
STATE = REPO / "build" / "docker"
# dockerd's unix sockets (containerd's among them) live under exec-root;
# sun_path is 108 bytes, so a deep checkout gets a short one under /tmp.
EXEC_ROOT_MAX = 40
# Past this the store is emptied (vfs: each layer is a full copy of the root).
STORE_LIMIT = 24 << 30


def _exec_root():
    d = STATE / "exec"
    if len(str(d)) <= EXEC_ROOT_MAX:
        return d
    return Path(f"/tmp/gpugate-dockerd-{os.getpid()}")


class Engine:
    """One dockerd for the session; docker() runs the client against it.
    Test modules that each start() one share it (one dockerd per pidfile):
    the last stop() stops it."""

    running = None  # the started engine of this process

    def __init__(self):
        self.sock = STATE / "docker.sock"
        self.pidfile = STATE / "dockerd.pid"
        self.exec_root = _exec_root()
        self.log = STATE / "dockerd.log"
        # The client of the engine's own package (Debian's docker.io puts it
        # in /usr/bin; another docker earlier on PATH may be of another
        # version), first on PATH for the README's commands too.
        self.bin = STATE / "bin"
        self.env = dict(os.environ, DOCKER_HOST=f"unix://{self.sock}", DOCKER_BUILDKIT="0",
                        DOCKER_CONFIG=str(STATE / "client"),
                        PATH=f"{self.bin}:{os.environ.get('PATH', '/usr/bin:/bin')}")
        self.proc = None

    def start(self, timeout=90):
        shared = Engine.running
        if shared is not None and shared.proc is not None and shared.proc.poll() is None:
            shared.users += 1
            return shared
        for tool in ("dockerd", "docker", "containerd"):
            if not shutil.which(tool):
                pytest.skip(f"{tool} is not installed (.ci/install-deps installs docker.io)")
        if os.geteuid() != 0:
            pytest.skip("dockerd needs root")
        STATE.mkdir(parents=True, exist_ok=True)
        client = Path("/usr/bin/docker") if Path("/usr/bin/docker").exists() else Path(shutil.which("docker"))
        self.bin.mkdir(exist_ok=True)
        (self.bin / "docker").unlink(missing_ok=True)
        (self.bin / "docker").symlink_to(client)
        self._stop_stale()
        argv = ["unshare", "--mount", "--propagation", "private",  # execs dockerd: same pid
                "dockerd", "--data-root", str(STATE / "data"), "--exec-root", str(self.exec_root),
                "--pidfile", str(self.pidfile), "--host", f"unix://{self.sock}",
                "--iptables=false", "--ip-forward=false", "--ip-masq=false", "--bridge=none",
                "--storage-driver=vfs"]
        logf = open(self.log, "w")
        self.proc = subprocess.Popen(argv, stdout=logf, stderr=subprocess.STDOUT, start_new_session=True)
        logf.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                pytest.skip(f"dockerd could not start here (exit {self.proc.returncode}): {self.log_tail()}")
            r = self.docker("version", "--format", "{{.Server.Version}}", check=False, timeout=10)
            if r.returncode == 0:
                self.version = r.stdout.strip()
                self.users = 1
                Engine.running = self
                return self
            time.sleep(0.5)
        self.stop()
        pytest.skip(f"dockerd did not answer within {timeout} s: {self.log_tail()}")

    def _stop_stale(self):
        """A dockerd a killed test run left with this pidfile: stopped by its pid."""
        try:
            pid = int(self.pidfile.read_text().strip())
        except (OSError, ValueError):
            return
        try:
            comm = Path(f"/proc/{pid}/comm").read_text().strip()
        except OSError:
            comm = ""
        if comm == "dockerd":
            os.kill(pid, signal.SIGTERM)
            for _ in range(100):
                if not Path(f"/proc/{pid}").exists():
                    break
                time.sleep(0.2)
        self.pidfile.unlink(missing_ok=True)

    def prune(self):
        """Keeps the cache in bounds: vfs copies every layer whole, so the
        images a rebuild left untagged go (their layers are no one's cache
        any more), and past STORE_LIMIT everything does (the next run
        imports and builds again)."""
        self.docker("image", "prune", "-f", timeout=600)
        if images.du(STATE / "data") > STORE_LIMIT:
            self.docker("system", "prune", "-af", timeout=900)

    def log_tail(self, n=1500):
        try:
            return self.log.read_text(errors="replace")[-n:]
        except OSError:
            return "(no log)"

    def stop(self):
        """Every container removed, then dockerd stopped by its pid."""
        if not self.proc:
            return
        self.users = getattr(self, "users", 1) - 1
        if self.users > 0:
            return
        Engine.running = None
        if self.proc.poll() is None:
            ids = self.docker("ps", "-aq", check=False).stdout.split()
            if ids:
                self.docker("rm", "-f", *ids, check=False, timeout=120)
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)
        self.proc = None
        if self.exec_root != STATE / "exec":
            shutil.rmtree(self.exec_root, ignore_errors=True)

    def mount_tmpfs(self, path, size, mode, uid=0, gid=0):
        """A filesystem of its own at path, seen by the engine's containers
        only (mounted in dockerd's mount namespace, gone when it stops)."""
        opts = f"size={size},mode={mode:o},uid={uid},gid={gid}"
        r = subprocess.run(["nsenter", f"--target={self.proc.pid}", "--mount", "--",
                            "mount", "-t", "tmpfs", "-o", opts, "gpugate-test", str(path)],
                           capture_output=True, text=True, timeout=30)
        assert r.returncode == 0, f"mount tmpfs at {path} in dockerd's namespace: {out_tail(r)}"

    def docker(self, *args, check=True, timeout=120, input=None, env=None):
        r = subprocess.run([str(self.bin / "docker"), *map(str, args)], capture_output=True, text=True, errors="replace",
                           env=env or self.env, timeout=timeout, input=input)
        if check:
            assert r.returncode == 0, f"docker {' '.join(map(str, args))} exited {r.returncode}:\n{out_tail(r)}"
        return r

    def shell(self, script, timeout=1800, env_extra=None):
        """A shell command line against this engine (the README's commands)."""
        env = dict(self.env, **(env_extra or {}))
        t0 = time.monotonic()
        r = subprocess.run(["sh", "-c", script], capture_output=True, text=True, env=env, timeout=timeout,
                           cwd=str(REPO))
        r.seconds = time.monotonic() - t0
        return r

    def label(self, image, key):
        r = self.docker("image", "inspect", "--format", "{{json .Config.Labels}}", image, check=False)
        if r.returncode != 0:
            return None
        return (json.loads(r.stdout) or {}).get(key)

    def import_tarball(self, tarball, tag, label="org.gpugate.test.rootfs"):
        """tag from a root tarball, once per tarball (its name is the label)."""
        if self.label(tag, label) == tarball.name:
            return False
        changes = ["ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                   'CMD ["bash"]', f"LABEL {label}={tarball.name}"]
        argv = ["import"]
        for c in changes:
            argv += ["--change", c]
        self.docker(*argv, tarball, tag, timeout=900)
        return True

    def inspect(self, what, fmt="{{json .}}"):
        return json.loads(self.docker("inspect", "--format", fmt, what).stdout)


def out_tail(r, n=3000):
    out = r.stdout if isinstance(r.stdout, str) else (r.stdout or b"").decode(errors="replace")
    err = r.stderr if isinstance(r.stderr, str) else (r.stderr or b"").decode(errors="replace")
    return out[-n:] + ("\n--- stderr:\n" + err[-1500:] if err.strip() else "")


def context_tar(dest, extra):
    """The build context as a tar: the repository's files as git lists them
    (tracked and untracked but not ignored, so no build/ and no .git), plus
    extra {name in the context: text}. Made by GNU tar: dockerd 20.10's
    classic builder misreads Python tarfile's PAX headers (per-file float
    mtimes), taking another file's content for the Dockerfile."""
    r = subprocess.run(["git", "-C", str(REPO), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                       capture_output=True, check=True)
    names = sorted({n for n in r.stdout.decode().split("\0") if n and (REPO / n).exists()})
    listing = Path(f"{dest}.list")
    listing.write_bytes(b"".join(n.encode() + b"\0" for n in names))
    subprocess.run(["tar", "--format=gnu", "-C", str(REPO), "-cf", str(dest), "--no-recursion", "--null", "-T",
                    str(listing)], check=True)
    extra_dir = Path(f"{dest}.extra")
    for name, text in extra.items():
        (extra_dir / name).parent.mkdir(parents=True, exist_ok=True)
        (extra_dir / name).write_text(text)
    if extra:
        subprocess.run(["tar", "--format=gnu", "-C", str(extra_dir), "-rf", str(dest), *extra], check=True)
    return dest


def quote(words):
    return " ".join(shlex.quote(str(w)) for w in words)
