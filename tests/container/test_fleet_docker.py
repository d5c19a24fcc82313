"""The fleet manifests run as written under the real Docker engine: each
pod of images/fleet/daemonset.yaml and images/fleet/gate-pod.yaml (as
images/FLEET.md's sed line makes it for a node) is translated, field by
field and by code from the parsed YAML, into `docker run` lines, and the
test plays the kubelet around them: volumes set up first, init containers
one after another (a failed one fails a `restartPolicy: Never` pod and no
app container starts), then the app containers.

The translation (Pod API fields -> docker run; an unknown field fails the
test, so nothing in a manifest goes unheeded):
- image -> the image built from images/xpu.Dockerfile with its defaults
  (uid 10001) by the engine of docker_engine.py, sharing test_docker.py's
  layer cache; command -> --entrypoint + its words, args -> the words after;
  env -> -e; workingDir -> -w; Docker's HEALTHCHECK off (the kubelet runs
  none).
- securityContext, the container's over the pod's: runAsUser/runAsGroup ->
  --user UID:GID; supplementalGroups and fsGroup -> --group-add (the
  kubelet gives both to every container); runAsNonRoot -> the kubelet's
  refusal of uid 0; readOnlyRootFilesystem -> --read-only; capabilities
  drop/add -> --cap-drop/--cap-add; allowPrivilegeEscalation: false ->
  --security-opt no-new-privileges; privileged -> --privileged;
  seccompProfile RuntimeDefault -> Docker's default profile.
- resources: limits.memory -> --memory; a device-plugin GPU resource ->
  --device for the node's GPU nodes (the Intel plugin hands over a GPU's
  card and render node; the _monitoring resource every GPU of the node).
- volumes, on a node that is a temp folder: hostPath Directory must exist
  there (else the kubelet fails the pod); DirectoryOrCreate is made as the
  kubelet makes it, root-owned 0755; emptyDir -> a folder (0777), or a
  tmpfs of sizeLimit for medium Memory; persistentVolumeClaim -> a fresh
  filesystem of PV_CAPACITY (a tmpfs mounted in dockerd's own mount
  namespace, so the verdict does not hang on the free space of the disk the
  tests run on), root-owned 0755 as a fresh volume is, to which the
  kubelet's fsGroup ownership is applied (group fsGroup, g+rwx, setgid:
  pkg/volume/volume_linux.go). volumeMounts -> bind mounts, readOnly ->
  readonly.
- terminationMessagePath: a fresh empty file bind-mounted there, as the
  kubelet does; the message is that file, or with FallbackToLogsOnError and
  a failure, the log's last 80 lines within 2048 bytes (the kubelet's
  MaxContainerTerminationMessageLogLines/-Length).
- network: every container `--network none`; nothing is published. The
  kubelet's probes (the manifest's httpGet path and port, a named port
  resolved through `ports`; success 200-399) and Prometheus' scrape (the
  pod's prometheus.io/port and /path annotations) are made from inside the
  serve container (`docker exec` of a bash /dev/tcp client on 127.0.0.1;
  the image has no HTTP client), where on a node they come from the pod
  network to the same 0.0.0.0 listener.
Stand-ins, the only additions to what the manifests say: the node's GPU is
the fixture of test_docker.py (mknod'ed card0/renderD128 under the node's
/dev/dri, by-path links, a sysfs for one Intel GPU bind-mounted read-only
at /sys, where the kubelet's container sees the kernel's) and the Level
Zero test driver (ZE_ENABLE_ALT_DRIVERS) in place of a GPU; the gate pod's
workload, "your workload's image" running python3 train.py, is replaced by
a shell line proving it got the GPU and the writable HF volume.
Skips, saying why, when not root, without Docker, when dockerd cannot start
or the archive cannot be reached; never a pass."""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import docker_engine  # noqa: E402
import rootfs  # noqa: E402
import loopback  # noqa: E402  (tests/lib, on the path by conftest)
import test_docker  # noqa: E402  (its fixture makers and build helpers; not its pytest fixtures)

yaml = pytest.importorskip("yaml", reason="python3-yaml reads the manifests")

REPO = docker_engine.REPO
FLEET = REPO / "images" / "fleet"
IMAGE = "gpugate-test/xpu-fleet"
RENDER_GID = test_docker.RENDER_GID  # the fixture node's render group
FALLBACK_LINES, FALLBACK_BYTES = 80, 2048  # kubelet: MaxContainerTerminationMessageLog{Lines,Length}
TERMINATION_FILE_MAX = 4096               # kubelet: the termination message file's limit
# A claim's volume as a provisioner makes it: its own filesystem, with room
# for the ci profile's hf.min_free (10GiB). tmpfs takes no memory until written.
PV_CAPACITY = "20g"

GPU_RESOURCES = ("gpu.intel.com/i915", "gpu.intel.com/xe")
MONITORING = ("gpu.intel.com/i915_monitoring", "gpu.intel.com/xe_monitoring")
# Container fields that shape no container Docker runs: scheduling,
# the kubelet's probes (played by the test), names of ports.
NOT_FOR_DOCKER = {"name", "ports", "livenessProbe", "readinessProbe", "startupProbe", "imagePullPolicy",
                  "terminationMessagePolicy"}


# ---- the engine and the image -----------------------------------------------

@pytest.fixture(scope="module")
def engine():
    e = docker_engine.Engine().start()
    yield e
    e.stop()


@pytest.fixture(scope="module")
def fleet_image(engine, tmp_path_factory):
    """images/xpu.Dockerfile built with its own defaults (the image an
    operator pushes; user app is uid 10001) and the fixture node's render
    gid, its stack stage on test_docker.py's XPU stand-in. The context is
    test_docker.py's (both rewritten Dockerfiles in it), so the builder stage
    comes from the layer cache that test_docker.py's builds left."""
    mirror = rootfs.debian_mirror()
    ok, why = rootfs.mirror_reachable(mirror)
    if not ok:
        pytest.skip(f"the image build's apt-get cannot reach the Debian archive {mirror}: {why}")
    assert test_docker.TEST_DRIVER.exists(), f"{test_docker.TEST_DRIVER} missing: make build/fakes/libze_fake.so"
    docker_engine.STATE.mkdir(parents=True, exist_ok=True)
    test_docker.STATE_LOGS.mkdir(parents=True, exist_ok=True)
    scratch = tmp_path_factory.mktemp("fleet-build")
    engine.import_tarball(rootfs.rootfs_tarball(), "debian:12")
    engine.import_tarball(rootfs.intel_stack_root(), "gpugate-test/debian-sid-intel-stack")
    texts = {}
    for name in ("xpu", "cuda"):
        texts[name], _ = test_docker.stack_stage_replaced(REPO / "images" / f"{name}.Dockerfile",
                                                          f"gpugate-test/{name}-stack-standin")
    standin = test_docker.build_standin(
        engine, "xpu", "gpugate-test/debian-sid-intel-stack",
        [p for p in test_docker.images.apt_packages(xpu_stack_stage()) if test_docker.RUNTIME_LIBS.match(p)],
        {f"/usr/lib/{test_docker.MULTIARCH}/libze_fake.so": test_docker.TEST_DRIVER}, scratch)
    assert standin == "gpugate-test/xpu-stack-standin", standin
    ctx = docker_engine.context_tar(scratch / "context.tar",
                                    {f".gpugate-test/{n}.Dockerfile": t for n, t in texts.items()})
    line = docker_engine.quote(["docker", "build", "--network", "host", "-f", ".gpugate-test/xpu.Dockerfile",
                                "--build-arg", f"RENDER_GID={RENDER_GID}", "-t", IMAGE, "-"]) + f" < {ctx}"
    r = engine.shell(line)
    (test_docker.STATE_LOGS / "xpu-fleet-image.log").write_text(line + "\n" + r.stdout + r.stderr)
    assert r.returncode == 0, f"{line}\nexited {r.returncode}:\n{docker_engine.out_tail(r)}"
    print(f"{IMAGE}: built in {r.seconds:.0f} s")
    return IMAGE


def xpu_stack_stage():
    path = REPO / "images" / "xpu.Dockerfile"
    stages = test_docker.dockerfile.stages(test_docker.dockerfile.parse(path.read_text()))
    return [s for s in stages if len(s[0].rest.split()) >= 3 and s[0].rest.split()[2] == "stack"][0]


# ---- the manifests as an operator applies them ------------------------------

def applied(manifest):
    """The manifest as images/FLEET.md's sed line makes it for this node
    (IMAGE and RENDER_GID set), run as written."""
    text = (REPO / "images" / "FLEET.md").read_text()
    lines = [m.group(1) for m in re.finditer(r'^(sed "[^\n]*?(?:\\\n[^\n]*?)?)\| kubectl apply -f -$', text, re.M)]
    [line] = [ln for ln in lines if f"images/fleet/{manifest}" in ln]
    env = dict(os.environ, IMAGE=IMAGE, RENDER_GID=str(RENDER_GID))
    r = subprocess.run(["sh", "-c", line], cwd=REPO, capture_output=True, text=True, env=env, timeout=30)
    assert r.returncode == 0, f"{line}: {r.stderr}"
    doc = yaml.safe_load(r.stdout)
    pod = doc["spec"]["template"]["spec"] if doc["kind"] == "DaemonSet" else doc["spec"]
    images = {c["image"] for c in pod.get("initContainers", []) + pod["containers"]}
    assert images == {IMAGE}, images
    return doc, pod


# ---- the node ----------------------------------------------------------------

def make_node(tmp_path):
    """A node's filesystem under tmp_path/node: /dev/dri with one Intel GPU
    (test_docker.make_fixture: nodes by mknod, by-path links) and its sysfs."""
    node = tmp_path / "node"
    (node / "dev").mkdir(parents=True)
    for d in (tmp_path, node, node / "dev"):
        os.chmod(d, 0o755)
    test_docker.make_fixture(node / "dev")  # node/dev/dri, node/dev/sys, node/dev/home
    shutil.move(str(node / "dev" / "sys"), str(node / "sys"))
    return node


def on_node(node, path):
    return node / path.lstrip("/")


# ---- the kubelet ------------------------------------------------------------

class Pod:
    """One pod's containers run by Docker as the kubelet would run them."""

    def __init__(self, engine, pod, node, tmp_path, name, pv_capacity=None):
        self.engine, self.pod, self.node, self.tmp, self.name = engine, pod, node, tmp_path, name
        self.pv_capacity = pv_capacity or PV_CAPACITY
        self.volumes = {}
        self.status = {}
        self.started = []

    def cname(self, c):
        return f"{self.name}-{c['name']}"

    def setup_volumes(self):
        """As the kubelet does before any container starts."""
        psc = self.pod.get("securityContext", {})
        for v in self.pod["volumes"]:
            if "hostPath" in v:
                hp = v["hostPath"]
                path = on_node(self.node, hp["path"])
                kind = hp.get("type", "")
                if kind == "DirectoryOrCreate" and not path.exists():
                    path.mkdir(parents=True, mode=0o755)  # kubelet: MkdirAll(path, 0755), as root
                    os.chmod(path, 0o755)
                assert kind in ("Directory", "DirectoryOrCreate"), f"hostPath type {kind!r} not translated"
                if not path.is_dir():
                    raise PodFailed(f"volume {v['name']}: hostPath {hp['path']} is not a directory on the node")
                self.volumes[v["name"]] = ("bind", path)
            elif "emptyDir" in v:
                ed = v["emptyDir"] or {}
                if ed.get("medium") == "Memory":
                    self.volumes[v["name"]] = ("tmpfs", k8s_bytes(ed["sizeLimit"]) if "sizeLimit" in ed else None)
                else:
                    path = self.tmp / "emptydir" / v["name"]
                    path.mkdir(parents=True)
                    os.chmod(path, 0o777)  # kubelet: emptyDir folders are 0777
                    self.volumes[v["name"]] = ("bind", path)
            elif "persistentVolumeClaim" in v:
                path = self.tmp / "pv" / v["persistentVolumeClaim"]["claimName"]
                path.mkdir(parents=True)
                mode, gid = 0o755, 0  # a fresh filesystem's root: root 0755
                if "fsGroup" in psc:  # SetVolumeOwnership: group fsGroup, rwx for it, setgid
                    mode, gid = 0o755 | 0o070 | 0o2000, psc["fsGroup"]
                self.engine.mount_tmpfs(path, self.pv_capacity, mode, gid=gid)
                self.volumes[v["name"]] = ("bind", path)
            else:
                raise AssertionError(f"volume {v['name']}: source {sorted(set(v) - {'name'})} not translated")

    def argv(self, c, detach=True):
        """docker run's arguments for container c of this pod."""
        unknown = set(c) - NOT_FOR_DOCKER - {"image", "command", "args", "env", "workingDir", "resources",
                                             "securityContext", "volumeMounts", "terminationMessagePath"}
        assert not unknown, f"{c['name']}: fields {sorted(unknown)} not translated"
        psc = self.pod.get("securityContext", {})
        sc = c.get("securityContext", {})
        assert set(psc) <= {"runAsNonRoot", "runAsUser", "runAsGroup", "fsGroup", "supplementalGroups",
                            "seccompProfile"}, psc
        assert set(sc) <= {"runAsNonRoot", "runAsUser", "runAsGroup", "privileged", "allowPrivilegeEscalation",
                           "readOnlyRootFilesystem", "capabilities", "seccompProfile"}, sc
        merged = dict(psc, **sc)
        argv = ["run", "--name", self.cname(c), "--network", "none", "--no-healthcheck"]
        if detach:
            argv.append("-d")
        uid, gid = merged.get("runAsUser"), merged.get("runAsGroup")
        if merged.get("runAsNonRoot") and uid in (None, 0):
            raise PodFailed(f"{c['name']}: runAsNonRoot and uid {uid}: the kubelet refuses to start it")
        if uid is not None:
            argv += ["--user", f"{uid}:{gid}" if gid is not None else str(uid)]
        for g in list(psc.get("supplementalGroups", [])) + ([psc["fsGroup"]] if "fsGroup" in psc else []):
            argv += ["--group-add", str(g)]
        if merged.get("privileged"):
            argv.append("--privileged")
        if merged.get("allowPrivilegeEscalation") is False:
            argv += ["--security-opt", "no-new-privileges"]
        if merged.get("readOnlyRootFilesystem"):
            argv.append("--read-only")
        caps = merged.get("capabilities", {})
        assert set(caps) <= {"drop", "add"}, caps
        for cap in caps.get("drop", []):
            argv += ["--cap-drop", cap]
        for cap in caps.get("add", []):
            argv += ["--cap-add", cap]
        seccomp = merged.get("seccompProfile", {}).get("type", "RuntimeDefault")
        if seccomp == "Unconfined":
            argv += ["--security-opt", "seccomp=unconfined"]
        assert seccomp in ("RuntimeDefault", "Unconfined"), seccomp  # RuntimeDefault: Docker's default profile
        limits = c.get("resources", {}).get("limits", {})
        for key, value in limits.items():
            if key == "memory":
                argv += ["--memory", str(k8s_bytes(value))]
            elif key in GPU_RESOURCES or key in MONITORING:
                for dev in self.gpu_nodes(key, int(value)):
                    argv += ["--device", f"{dev}:/{dev.relative_to(self.node)}"]
            else:
                assert key == "cpu", f"{c['name']}: limit {key} not translated"
                argv += ["--cpus", str(k8s_cpus(value))]
        for e in c.get("env", []):
            assert set(e) == {"name", "value"}, f"{c['name']}: env {e} not translated"
            argv += ["-e", f"{e['name']}={e['value']}"]
        if "workingDir" in c:
            argv += ["-w", c["workingDir"]]
        for m in c.get("volumeMounts", []):
            assert set(m) <= {"name", "mountPath", "readOnly"}, f"{c['name']}: mount {m} not translated"
            kind, src = self.volumes[m["name"]]
            if kind == "tmpfs":
                opts = f"type=tmpfs,destination={m['mountPath']},tmpfs-mode=0777"
                argv += ["--mount", opts + (f",tmpfs-size={src}" if src else "")]
            else:
                argv += ["--mount", f"type=bind,source={src},destination={m['mountPath']}"
                         + (",readonly" if m.get("readOnly") else "")]
        log = self.termination_file(c)
        argv += ["--mount", f"type=bind,source={log},destination={c.get('terminationMessagePath', '/dev/termination-log')}"]
        # the stand-ins for a GPU (the module's docstring)
        argv += ["-e", f"ZE_ENABLE_ALT_DRIVERS=/usr/lib/{test_docker.MULTIARCH}/libze_fake.so",
                 "--mount", f"type=bind,source={self.node / 'sys'},destination=/sys,readonly"]
        command, args = c.get("command"), c.get("args", [])
        if command:
            argv += ["--entrypoint", command[0], c["image"], *command[1:], *args]
        else:
            argv += [c["image"], *args]
        return argv

    def gpu_nodes(self, resource, count):
        """What the device plugin hands over: a GPU's card and render nodes;
        for the monitoring resource, every GPU node of the node."""
        dri = self.node / "dev" / "dri"
        nodes = sorted(p for p in dri.iterdir() if re.fullmatch(r"card\d+|renderD\d+", p.name))
        if resource in MONITORING:
            return nodes
        assert count == 1 and len(nodes) == 2, "the fixture node has one GPU"
        return nodes

    def termination_file(self, c):
        path = self.tmp / "termination" / self.cname(c)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
        os.chmod(path, 0o666)
        return path

    def termination_message(self, c, code):
        text = (self.tmp / "termination" / self.cname(c)).read_bytes()[:TERMINATION_FILE_MAX].decode(errors="replace")
        if not text and code != 0 and c.get("terminationMessagePolicy") == "FallbackToLogsOnError":
            logs = self.engine.docker("logs", self.cname(c), check=False)
            tail = "".join((logs.stdout + logs.stderr).splitlines(keepends=True)[-FALLBACK_LINES:])
            text = tail.encode()[-FALLBACK_BYTES:].decode(errors="replace")
        return text

    def run(self, init_timeout=180, replace_command=None):
        """Volumes, then the init containers in order, each to its end, then
        the app containers (detached). A failed init container stops there."""
        self.setup_volumes()
        for c in self.pod.get("initContainers", []):
            self.started.append(self.cname(c))
            self.engine.docker(*self.argv(c))
            r = self.engine.docker("wait", self.cname(c), timeout=init_timeout)
            code = int(r.stdout.strip())
            self.status[c["name"]] = {"exit": code, "message": self.termination_message(c, code)}
            if code != 0:
                assert self.pod.get("restartPolicy", "Always") in ("Never", "Always", "OnFailure")
                return False  # Never: the pod fails; otherwise the kubelet retries the init container
        for c in self.pod["containers"]:
            if replace_command and c["name"] in replace_command:
                c = dict(c, command=replace_command[c["name"]], args=[])
            self.started.append(self.cname(c))
            self.engine.docker(*self.argv(c))
        return True

    def remove(self):
        if self.started:
            self.engine.docker("rm", "-f", *self.started, check=False)


class PodFailed(Exception):
    pass


def k8s_bytes(q):
    m = re.fullmatch(r"(\d+)(Ki|Mi|Gi)?", str(q))
    assert m, f"quantity {q} not translated"
    return int(m.group(1)) * {None: 1, "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30}[m.group(2)]


def k8s_cpus(q):
    q = str(q)
    return int(q[:-1]) / 1000 if q.endswith("m") else float(q)


@pytest.fixture
def kubelet(engine, tmp_path):
    pods = []

    def make(pod, node, name, **kw):
        p = Pod(engine, pod, node, tmp_path, name, **kw)
        pods.append(p)
        return p
    yield make
    for p in pods:
        p.remove()


# ---- talking to gpugate serve from inside its container ----------------------

# HTTP/1.0 over bash's /dev/tcp: the image has no HTTP client, and nothing
# is published out of the container.
HTTP_GET = 'exec 3<>"/dev/tcp/127.0.0.1/$1" && printf "GET %s HTTP/1.0\\r\\nHost: localhost\\r\\n\\r\\n" "$2" >&3 && cat <&3'


def http_get(engine, container, port, path):
    r = engine.docker("exec", container, "bash", "-c", HTTP_GET, "get", port, path, check=False, timeout=30)
    if r.returncode != 0:
        if not engine.inspect(container, "{{json .State.Running}}"):
            logs = engine.docker("logs", container, check=False)
            raise AssertionError(f"{container} stopped:\n{docker_engine.out_tail(logs)}")
        return None, r.stderr
    head, _, body = r.stdout.replace("\r\n", "\n").partition("\n\n")  # the client reads text: CRLF or LF
    status = head.split("\n")[0].split()
    return int(status[1]), body


def wait_for(what, fn, timeout=90):  # a container's server takes longer than a local one
    return loopback.wait_for(what, fn, timeout=timeout, step=0.5)


def proc_status(engine, container, pid=1):
    text = engine.docker("exec", container, "cat", f"/proc/{pid}/status").stdout
    return dict(line.split(":\t", 1) for line in text.splitlines() if ":\t" in line)


def nfd_read(features):
    """NFD's local source (source/local/local.go): the entries of features.d
    not starting with '.', os.Stat'ed (links followed), folders skipped,
    each file's name=value lines."""
    labels = {}
    for name in sorted(os.listdir(features)):
        path = features / name
        if name.startswith(".") or path.is_dir():
            continue
        for line in path.read_text().splitlines():
            if line.strip() and not line.startswith("#"):
                key, _, value = line.partition("=")
                labels[key] = value
    return labels


# ---- the DaemonSet ---------------------------------------------------------

def http_target(c, port, path):
    """A port (a number or the name of one of c's ports) and path, as the
    kubelet's httpGet probe and Prometheus' scrape resolve them."""
    if isinstance(port, str) and not port.isdigit():
        [port] = [p["containerPort"] for p in c["ports"] if p["name"] == port]
    return str(port), path


def probe(engine, container, c, which):
    """The kubelet's httpGet probe which (livenessProbe, readinessProbe) of
    container c: success is a status from 200 to 399."""
    get = c[which]["httpGet"]
    status, body = http_get(engine, container, *http_target(c, get["port"], get["path"]))
    return status is not None and 200 <= status < 400, status, body


def test_daemonset_serves_and_labels_the_node(engine, fleet_image, kubelet, tmp_path):
    """The init container hands features.d/gpugate.d over with CHOWN only;
    gpugate serve, as uid 10001 on a read-only root with no capability,
    answers /healthz, /readyz and /metrics, and its NFD file lands where NFD
    reads it; a node whose by-path links go turns /readyz 503 and the label
    healthy=false, and back when they return (SIGHUP: the next run now)."""
    ds, pod = applied("daemonset.yaml")
    node = make_node(tmp_path)
    p = kubelet(pod, node, "ds")
    assert p.run(), p.status
    [init] = pod["initContainers"]
    [c] = pod["containers"]
    assert p.status[init["name"]]["exit"] == 0, p.status
    serve = p.cname(c)
    notes = ds["spec"]["template"]["metadata"]["annotations"]  # what Prometheus' kubernetes-pods job reads
    scrape = http_target(c, notes["prometheus.io/port"], notes["prometheus.io/path"])
    features = on_node(node, next(v for v in pod["volumes"] if v["name"] == "features")["hostPath"]["path"])
    # what the init container did, with CHOWN as its only capability
    uid, gid = pod["securityContext"]["runAsUser"], pod["securityContext"]["runAsGroup"]
    st = os.stat(features / "gpugate.d")
    assert (st.st_uid, st.st_gid) == (uid, gid)
    assert os.stat(features).st_uid == 0 and (os.stat(features).st_mode & 0o777) == 0o755
    assert os.readlink(features / "gpugate") == "gpugate.d/gpugate"
    try:
        wait_for("live", lambda: probe(engine, serve, c, "livenessProbe")[0])
        ready, status, body = wait_for("ready", lambda: (lambda r: r if r[0] else None)(
            probe(engine, serve, c, "readinessProbe")), timeout=120)
        assert status == 200 and body.startswith("gpugate: HEALTHY (profile ci)"), body
        status, metrics = http_get(engine, serve, *scrape)
        assert status == 200 and re.search(r'^gpugate_healthy\{profile="ci"\} 1$', metrics, re.M), metrics[-2000:]
        assert re.search(r"^gpugate_gpu_smoke_passed\{.*\} 1$", metrics, re.M), metrics[-2000:]
        # the process as the kernel sees it: the pod's user and groups, no
        # capability, no privilege escalation, a read-only root
        ps = proc_status(engine, serve)
        assert ps["Uid"].split()[:2] == [str(uid)] * 2 and ps["Gid"].split()[:2] == [str(gid)] * 2, ps
        assert str(RENDER_GID) in ps["Groups"].split(), ps
        assert int(ps["CapEff"], 16) == 0 and int(ps["CapBnd"], 16) == 0 and ps["NoNewPrivs"] == "1", ps
        root = [ln for ln in engine.docker("exec", serve, "cat", "/proc/1/mountinfo").stdout.splitlines()
                if ln.split()[4] == "/"]
        assert root and "ro" in root[0].split()[5].split(","), root
        # the NFD file, through the init container's link, as NFD reads it
        labels = wait_for("the NFD file", lambda: (features / "gpugate").exists() and nfd_read(features))
        assert labels["feature.node.kubernetes.io/gpugate.healthy"] == "true", labels
        assert labels["feature.node.kubernetes.io/gpugate.gpus"] == "1", labels
        assert os.stat(features / "gpugate.d" / "gpugate").st_uid == uid

        # the node loses its by-path links (udev did not make them)
        by_path = node / "dev" / "dri" / "by-path"
        links = {p.name: os.readlink(p) for p in by_path.iterdir()}
        for name in links:
            (by_path / name).unlink()
        engine.docker("kill", "--signal", "HUP", serve)
        ready, status, body = wait_for("not ready", lambda: (lambda r: r if r[1] == 503 else None)(
            probe(engine, serve, c, "readinessProbe")), timeout=120)
        assert body.startswith("gpugate: UNHEALTHY (profile ci)") and "devices.by_path" in body, body
        assert probe(engine, serve, c, "livenessProbe")[:2] == (True, 200)  # the server lives on: no restart
        metrics = http_get(engine, serve, *scrape)[1]
        assert re.search(r'^gpugate_healthy\{profile="ci"\} 0$', metrics, re.M), metrics[-2000:]
        labels = wait_for("healthy=false", lambda: (lambda lb: lb if lb.get(
            "feature.node.kubernetes.io/gpugate.healthy") == "false" else None)(nfd_read(features)), timeout=30)
        # and back
        for name, target in links.items():
            (by_path / name).symlink_to(target)
        engine.docker("kill", "--signal", "HUP", serve)
        wait_for("ready again", lambda: probe(engine, serve, c, "readinessProbe")[0], timeout=120)
        wait_for("healthy=true again",
                 lambda: nfd_read(features).get("feature.node.kubernetes.io/gpugate.healthy") == "true", timeout=30)
        assert sorted(os.listdir(features / "gpugate.d")) == ["gpugate"]  # no temp file left
    finally:
        logs = engine.docker("logs", serve, check=False)
        print(docker_engine.out_tail(logs, 1500))


def test_daemonset_init_container_needs_its_chown(engine, fleet_image, kubelet, tmp_path):
    """The oracle can fail: the init container without its one added
    capability cannot hand the folder over, and the pod goes no further."""
    _, pod = applied("daemonset.yaml")
    [init] = pod["initContainers"]
    del init["securityContext"]["capabilities"]["add"]
    p = kubelet(pod, make_node(tmp_path), "ds-nochown")
    assert not p.run()
    assert p.status[init["name"]]["exit"] != 0, p.status
    logs = engine.docker("logs", p.cname(init), check=False)
    assert "Operation not permitted" in logs.stdout + logs.stderr, logs
    assert p.started == [p.cname(init)]


# ---- the gate pod -----------------------------------------------------------

WORKLOAD = ["sh", "-c", 'test -c /dev/dri/renderD128 && test -w "$HF_HOME" && echo workload-ran']


def test_gate_pod_lets_the_workload_start_on_a_good_gpu(engine, fleet_image, kubelet, tmp_path):
    _, pod = applied("gate-pod.yaml")
    p = kubelet(pod, make_node(tmp_path), "gate-ok")
    [gate] = pod["initContainers"]
    [work] = pod["containers"]
    ok = p.run(replace_command={work["name"]: WORKLOAD})
    assert ok, f"{p.status}\n{docker_engine.out_tail(engine.docker('logs', p.cname(gate), check=False))}"
    assert p.status[gate["name"]] == {"exit": 0, "message": ""}, p.status
    code = int(engine.docker("wait", p.cname(work), timeout=60).stdout.strip())
    logs = engine.docker("logs", p.cname(work), check=False)
    assert code == 0 and logs.stdout.strip() == "workload-ran", docker_engine.out_tail(logs)


def test_gate_pod_keeps_the_workload_from_a_broken_node(engine, fleet_image, kubelet, tmp_path):
    """The node's by-path links are missing: the gate exits 1, its
    termination message (the log's tail, FallbackToLogsOnError) names
    devices.by_path, and the workload container is never created."""
    _, pod = applied("gate-pod.yaml")
    node = make_node(tmp_path)
    for link in (node / "dev" / "dri" / "by-path").iterdir():
        link.unlink()
    p = kubelet(pod, node, "gate-broken")
    [gate] = pod["initContainers"]
    [work] = pod["containers"]
    assert not p.run(replace_command={work["name"]: WORKLOAD})
    st = p.status[gate["name"]]
    assert st["exit"] == 1, st
    assert st["message"].startswith("gpugate: UNHEALTHY (profile ci)") and "devices.by_path" in st["message"], st
    assert len(st["message"].encode()) <= FALLBACK_BYTES
    assert p.started == [p.cname(gate)]
    assert not engine.docker("ps", "-aq", "--filter", f"name=^{p.cname(work)}$").stdout.strip()


def test_gate_pod_needs_its_fs_group(engine, fleet_image, kubelet, tmp_path):
    """The oracle can fail: without the pod's fsGroup the kubelet leaves the
    HF volume root's 0755, the gate's user cannot write it, and the gate
    says so before the workload would have."""
    _, pod = applied("gate-pod.yaml")
    del pod["securityContext"]["fsGroup"]
    p = kubelet(pod, make_node(tmp_path), "gate-no-fsgroup")
    [gate] = pod["initContainers"]
    assert not p.run(replace_command={pod["containers"][0]["name"]: WORKLOAD})
    st = p.status[gate["name"]]
    assert st["exit"] == 1 and "hf.writable" in st["message"], st
    assert p.started == [p.cname(gate)]


def test_gate_pod_keeps_the_workload_from_a_full_volume(engine, fleet_image, kubelet, tmp_path):
    """A claim with less room than the ci profile's hf.min_free (10GiB): the
    gate names hf.space; so the good pod above passes on its volume's room,
    not on the free space of the disk the tests run on."""
    _, pod = applied("gate-pod.yaml")
    p = kubelet(pod, make_node(tmp_path), "gate-full", pv_capacity="64m")
    [gate] = pod["initContainers"]
    assert not p.run(replace_command={pod["containers"][0]["name"]: WORKLOAD})
    st = p.status[gate["name"]]
    assert st["exit"] == 1 and "hf.space" in st["message"], st
    assert p.started == [p.cname(gate)]
