"""Docker is the judge: images/xpu.Dockerfile and images/cuda.Dockerfile
built by a real Docker engine (docker_engine.py: Debian's dockerd, started
and stopped here, everything under build/docker/), containers run with the
README's quick-start commands, and Docker's own health state machine
(`docker inspect --format '{{json .State.Health}}'`) gives the verdict.

- Bases: `debian:12` is the debootstrap Debian 12 root (rootfs.py) imported
  with `docker import`. A Dockerfile's `stack` stage cannot be built here
  (Ubuntu's archive and the Intel PPA, NVIDIA's registry): it is replaced,
  and the test says so, by a stand-in built from stack-standin.Containerfile
  (the Dockerfile is rewritten with `FROM <stand-in> AS stack` in place of
  that stage; every other instruction is built as written). The XPU
  stand-in's base is a Debian sid root in which apt installed Debian's real
  Intel GPU stack (libze1, libze-intel-gpu1, intel-opencl-icd, libigc2,
  libigdgmm12: rootfs.intel_stack_root()), so the HEALTHCHECK judges a real
  installed stack, plus the Level Zero test driver (tests/fakes/fake_ze.c),
  which the real loader loads with ZE_ENABLE_ALT_DRIVERS in place of a GPU.
  The CUDA stand-in is Debian 12 with gpugate's libraries (no GPU here).
- Builds: the README's own build line (`--build-arg APP_UID="$(id -u)"`,
  `RENDER_GID`), run by `sh` with the host paths pointed at fixtures, through
  the classic builder (`DOCKER_BUILDKIT=0`, `--network host` for apt), each
  image once per session; the layers stay cached in build/docker/data.
- Containers: the README's `mkdir -p` and `docker run` lines, with
  `--network none`, the fixture device nodes (mknod 226:0 and 226:128 in a
  temp folder, with by-path links) in place of /dev/dri, a fixture sysfs for
  one Intel GPU (`-v ...:/sys:ro`), the test driver, a temp $HOME, the test
  playing a user of uid 1000, and a fast health schedule
  (`--health-interval=2s --health-retries=1 --health-start-period=1s`).
Skips, saying why, when not root, without Docker, when dockerd cannot start
or the archive cannot be reached; never a pass."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1] / "tests" / "lib"))
import docker_engine  # noqa: E402
import dockerfile  # noqa: E402
import fix_safety  # noqa: E402
import harness  # noqa: E402
import images  # noqa: E402
import rootfs  # noqa: E402

REPO = docker_engine.REPO
GPUGATE = Path(os.environ.get("GPUGATE", REPO / "build" / "gpugate"))
TEST_DRIVER = GPUGATE.parent / "fakes" / "libze_fake.so"
USER_UID = 1000          # the user the test plays ($(id -u) in the README)
RENDER_GID = 992         # the fixture render node's group (not the image's default 993)
VIDEO_GID = 44           # Debian's video group
DOCKER_OUTPUT_MAX = 4096  # what Docker keeps of a health check's output
# (a zero start period would mean "the image's 60 s": Docker inherits zero values)
FAST_HEALTH = ["--health-interval=2s", "--health-timeout=10s", "--health-retries=1", "--health-start-period=1s"]
# What the stand-ins install for gpugate: the stack stage's runtime libraries
# (their names in its apt-get line) and ca-certificates.
RUNTIME_LIBS = re.compile(r"^(lib(yaml|jansson|ssl|curl|archive|microhttpd)\S*|ca-certificates)$")


# ---- the README's quick start ------------------------------------------------

def quick_start_commands():
    """The shell commands of the README's Intel quick start, in order
    (continuations joined)."""
    text = (REPO / "README.md").read_text()
    section = text[text.index("## Quick start"):]
    section = section[section.index("**Intel GPUs, Docker HEALTHCHECK.**"):]
    block = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
    commands = []
    for line in block.replace("\\\n", " ").splitlines():
        line = re.sub(r"\s+", " ", line).strip()
        if line and not line.startswith("#"):
            commands.append(line)
    return commands


def readme_command(prefix):
    found = [c for c in quick_start_commands() if c.startswith(prefix)]
    assert len(found) == 1, f"the README's quick start has {len(found)} '{prefix}' lines: {quick_start_commands()}"
    return found[0]


def on_fixtures(command, fix):
    """A README command with its host paths pointed at the fixtures; each
    replacement must apply, so a changed README is noticed here."""
    subs = [("--device /dev/dri ", f"--device {fix}/dri:/dev/dri "),
            ("-v /dev/dri/by-path:", f"-v {fix}/dri/by-path:"),
            ("stat -c %g /dev/dri/renderD128", f"stat -c %g {fix}/dri/renderD128"),
            ('"$(id -u)"', f'"{USER_UID}"')]
    for old, new in subs:
        command = command.replace(old, new)
    assert "/dev/dri" not in command.replace(":/dev/dri", ""), f"a host /dev/dri path left: {command}"
    return command


# ---- fixtures ---------------------------------------------------------------

@pytest.fixture(scope="session")
def engine():
    e = docker_engine.Engine().start()
    e.prune()
    yield e
    e.prune()
    e.stop()


def make_fixture(fix):
    """GPU nodes (mknod) with by-path links, a sysfs for one Intel GPU and a
    home of the user the test plays."""
    dri = fix / "dri"
    (dri / "by-path").mkdir(parents=True)
    for name, minor, gid in (("card0", 0, VIDEO_GID), ("renderD128", 128, RENDER_GID)):
        os.mknod(dri / name, 0o660 | 0o020000, os.makedev(226, minor))
        os.chown(dri / name, 0, gid)
        os.chmod(dri / name, 0o660)
    (dri / "by-path" / f"pci-{harness.PCI}-card").symlink_to("../card0")
    (dri / "by-path" / f"pci-{harness.PCI}-render").symlink_to("../renderD128")
    harness.sysfs_tree(fix / "sys")
    home = fix / "home"
    home.mkdir()
    os.chown(home, USER_UID, USER_UID)
    return fix


@pytest.fixture(scope="session")
def gpu(tmp_path_factory):
    fix = tmp_path_factory.mktemp("docker-gpu")
    os.chmod(fix, 0o755)
    return make_fixture(fix)


def stack_stage_replaced(path, standin):
    """The Dockerfile's text with its `stack` stage replaced by
    `FROM standin AS stack`; every other line as written."""
    lines = path.read_text().splitlines(keepends=True)
    stages = dockerfile.stages(dockerfile.parse(path.read_text()))
    starts = [s[0].line for s in stages]
    for i, stage in enumerate(stages):
        words = stage[0].rest.split()
        if len(words) >= 3 and words[1].upper() == "AS" and words[2] == "stack":
            end = starts[i + 1] - 1 if i + 1 < len(starts) else len(lines)
            head = lines[:stage[0].line - 1]
            return "".join(head) + f"FROM {standin} AS stack\n\n" + "".join(lines[end:]), words[0]
    raise AssertionError(f"{path.name} has no stage named stack")


def build_standin(engine, name, base, packages, files, scratch):
    """stack-standin.Containerfile on base, context: files {dest: source}."""
    ctx = scratch / f"{name}-standin"
    for dest, src in files.items():
        (ctx / dest.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, ctx / dest.lstrip("/"))
    (ctx / ".keep").parent.mkdir(parents=True, exist_ok=True)
    (ctx / ".keep").write_text("")
    tag = f"gpugate-test/{name}-stack-standin"
    r = engine.shell(docker_engine.quote(
        ["docker", "build", "--network", "host", "-f", str(HERE / "stack-standin.Containerfile"),
         "--build-arg", f"BASE={base}", "--build-arg", f"PACKAGES={' '.join(packages)}", "-t", tag, str(ctx)]))
    (STATE_LOGS / f"{name}-standin.log").write_text(r.stdout + r.stderr)
    assert r.returncode == 0, f"the {name} stack stand-in did not build:\n{docker_engine.out_tail(r)}"
    return tag


STATE_LOGS = docker_engine.STATE / "logs"


@pytest.fixture(scope="session")
def docker_images(engine, gpu, tmp_path_factory):
    """Both images, built once per session: {name: {tag, seconds, config}}."""
    STATE_LOGS.mkdir(parents=True, exist_ok=True)
    mirror = rootfs.debian_mirror()
    ok, why = rootfs.mirror_reachable(mirror)
    if not ok:
        pytest.skip(f"the image builds' apt-get cannot reach the Debian archive {mirror}: {why}")
    assert TEST_DRIVER.exists(), f"{TEST_DRIVER} missing: make {TEST_DRIVER.relative_to(REPO)}"
    scratch = tmp_path_factory.mktemp("docker-build")
    engine.import_tarball(rootfs.rootfs_tarball(), "debian:12")
    intel = rootfs.intel_stack_root()
    engine.import_tarball(intel, "gpugate-test/debian-sid-intel-stack")
    multiarch = subprocess.run(["gcc", "-print-multiarch"], capture_output=True, text=True,
                               check=True).stdout.strip()
    texts = {}
    for name in ("xpu", "cuda"):
        path = REPO / "images" / f"{name}.Dockerfile"
        stack = [s for s in dockerfile.stages(dockerfile.parse(path.read_text()))
                 if len(s[0].rest.split()) >= 3 and s[0].rest.split()[2] == "stack"][0]
        wanted = [p for p in images.apt_packages(stack) if RUNTIME_LIBS.match(p)]
        if name == "xpu":  # sid has Ubuntu 24.04's t64 names; the loader is in the intel stack root
            standin = build_standin(engine, name, "gpugate-test/debian-sid-intel-stack", wanted,
                                    {f"/usr/lib/{multiarch}/libze_fake.so": TEST_DRIVER}, scratch)
        else:
            standin = build_standin(engine, name, "debian:12", [images.debian_name(p) for p in wanted], {}, scratch)
        texts[name], replaced = stack_stage_replaced(path, standin)
        print(f"{name}: the stack stage's base {replaced} cannot be had here; built on {standin}")
    # One context for both images, so that their identical builder stages
    # (COPY . . of the same files) share the cached layers.
    ctx = docker_engine.context_tar(scratch / "context.tar",
                                    {f".gpugate-test/{n}.Dockerfile": t for n, t in texts.items()})
    out = {}
    for name in ("xpu", "cuda"):
        if name == "xpu":  # the README's own build line
            line = on_fixtures(readme_command("docker build "), gpu)
            assert " -f images/xpu.Dockerfile " in line and line.endswith(" -t gpugate-xpu ."), line
            line = line.replace(" -f images/xpu.Dockerfile ", f" -f .gpugate-test/{name}.Dockerfile ")
        else:  # images/README.md's
            line = f"docker build -f .gpugate-test/{name}.Dockerfile --build-arg APP_UID=\"{USER_UID}\" -t gpugate-{name} ."
        line = line.replace("docker build ", "docker build --network host ", 1)
        line = line[:-len(" .")] + f" - < {ctx}"
        r = engine.shell(line)
        (STATE_LOGS / f"{name}-image.log").write_text(line + "\n" + r.stdout + r.stderr)
        assert r.returncode == 0, f"{line}\nexited {r.returncode}:\n{docker_engine.out_tail(r)}"
        config = engine.inspect(f"gpugate-{name}", "{{json .Config}}")
        out[name] = {"tag": f"gpugate-{name}", "seconds": r.seconds, "config": config}
        print(f"gpugate-{name}: built in {r.seconds:.0f} s")
    return out


# ---- running containers -----------------------------------------------------

def health(engine, name, timeout=90):
    """Docker's verdict once it has one (Status not `starting`)."""
    deadline = time.monotonic() + timeout
    while True:
        state = engine.inspect(name, "{{json .State}}")
        h = state.get("Health") or {}
        if not state.get("Running"):
            logs = engine.docker("logs", name, check=False)
            raise AssertionError(f"container {name} stopped: {state}\n{docker_engine.out_tail(logs)}")
        if h.get("Status") not in (None, "starting"):
            return h
        if time.monotonic() > deadline:
            raise AssertionError(f"{name}: still {h.get('Status')} after {timeout} s: {h}")
        time.sleep(0.5)


def run_line(gpu, name, extra=(), by_path=True, hf_volume=True, sysfs=True, device=True, test_driver=True):
    """The README's `docker run` line for container name, on the fixtures,
    with the test's flags (no network, the fast health schedule, the fixture
    sysfs and the test driver) and the given parts left out."""
    line = on_fixtures(readme_command("docker run "), gpu)
    line = line.replace(" --name xpu ", f" --name {name} ")
    if not by_path:
        line = line.replace(f"-v {gpu}/dri/by-path:/dev/dri/by-path ", "")
    if not hf_volume:
        line = re.sub(r'-v "\$HOME/\.cache/huggingface:[^"]*" ', "", line)
    if not device:
        line = line.replace(f"--device {gpu}/dri:/dev/dri ", "")
    flags = ["--network", "none", *FAST_HEALTH, *extra]
    if test_driver:
        flags += ["-e", f"ZE_ENABLE_ALT_DRIVERS=/usr/lib/{MULTIARCH}/libze_fake.so"]
    if sysfs:
        flags += ["-v", f"{gpu}/sys:/sys:ro"]
    return line.replace("docker run -d ", "docker run -d " + docker_engine.quote(flags) + " ", 1)


MULTIARCH = subprocess.run(["gcc", "-print-multiarch"], capture_output=True, text=True).stdout.strip()


def start(engine, gpu, name, home, mkdir=True, **kw):
    """The README's mkdir (as the user the test plays) and docker run lines."""
    engine.docker("rm", "-f", name, check=False)
    script = []
    if mkdir:
        script.append(quote(["setpriv", "--reuid", str(USER_UID), "--regid", str(USER_UID), "--clear-groups",
                             "sh", "-c", readme_command("mkdir ")]))
    script.append(run_line(gpu, name, **kw))
    r = engine.shell("set -e\n" + "\n".join(script), env_extra={"HOME": str(home)}, timeout=120)
    assert r.returncode == 0, f"{script}\nexited {r.returncode}:\n{docker_engine.out_tail(r)}"
    return script


quote = docker_engine.quote


def assert_log_sane(h):
    for entry in h["Log"]:
        assert entry["ExitCode"] in (0, 1), entry
        assert len(entry["Output"].encode()) <= DOCKER_OUTPUT_MAX, entry
        for line in entry["Output"].splitlines():
            if line.strip().startswith("fix:"):
                assert not fix_safety.problems(line.strip()[4:]), line


@pytest.fixture
def home():
    """A home of the user the test plays, where that user can reach it
    (pytest's own temp folders are root's, mode 0700)."""
    d = Path(tempfile.mkdtemp(prefix="gpugate-docker-home-"))
    os.chown(d, USER_UID, USER_UID)
    yield d
    shutil.rmtree(d, ignore_errors=True)


# ---- the tests --------------------------------------------------------------

def test_images_build_with_docker(docker_images):
    for name, rec in docker_images.items():
        hc = rec["config"]["Healthcheck"]
        assert hc["Test"][0] == "CMD" and hc["Test"][1] == "gpugate", hc
        assert rec["config"]["User"] == "app", rec["config"]
        print(f"{name}: HEALTHCHECK {hc['Test'][1:]}, built in {rec['seconds']:.0f} s")


def test_quick_start_is_healthy(engine, docker_images, gpu, tmp_path, home):
    """The README's quick start, as written, on a correct host: healthy.
    The README's `docker inspect` line gives Docker's verdict."""
    start(engine, gpu, "xpu", home)
    try:
        h = health(engine, "xpu")
        assert_log_sane(h)
        out = h["Log"][-1]["Output"]
        assert h["Status"] == "healthy", f"{h['Status']}:\n{out}"
        assert out.startswith("gpugate: HEALTHY (profile healthcheck)"), out
        inspect = engine.shell(readme_command("docker inspect "))
        assert inspect.returncode == 0 and json.loads(inspect.stdout)["Status"] == "healthy", inspect.stdout
        # the cache folder the README made is the user's, and the container's user is that uid
        assert (home / ".cache" / "huggingface").stat().st_uid == USER_UID
        ident = engine.docker("exec", "xpu", "id", "-u").stdout.strip()
        assert ident == str(USER_UID), ident
        print(f"healthy: {out.splitlines()[0]}")
    finally:
        engine.docker("rm", "-f", "xpu", check=False)


def test_gpu_only_container_without_hf_volume_is_healthy(engine, docker_images, gpu, tmp_path, home):
    start(engine, gpu, "xpu-no-hf", home, hf_volume=False)
    try:
        h = health(engine, "xpu-no-hf")
        assert_log_sane(h)
        out = h["Log"][-1]["Output"]
        assert h["Status"] == "healthy", out
        assert "hf.mounted" not in out or "WARN  hf.mounted" in out, out
    finally:
        engine.docker("rm", "-f", "xpu-no-hf", check=False)


def unhealthy_with(engine, name, check_id):
    h = health(engine, name)
    assert_log_sane(h)
    out = h["Log"][-1]["Output"]
    assert h["Status"] == "unhealthy", f"{name}: {h['Status']}:\n{out}"
    assert h["Log"][-1]["ExitCode"] == 1
    assert f"FAIL  {check_id}" in out and check_id in out.splitlines()[0], out
    return out


def test_without_by_path(engine, docker_images, gpu, tmp_path, home):
    """The HEALTHCHECK warns (the driver's renderD fallback works in a
    running container); the ci gate as the health command fails."""
    start(engine, gpu, "xpu-no-by-path", home, by_path=False)
    gate = ["--health-cmd", "gpugate check --profile ci --only devices"]
    start(engine, gpu, "xpu-no-by-path-ci", home, by_path=False, extra=gate)
    try:
        h = health(engine, "xpu-no-by-path")
        assert h["Status"] == "healthy" and "WARN  devices.by_path" in h["Log"][-1]["Output"], h
        out = unhealthy_with(engine, "xpu-no-by-path-ci", "devices.by_path")
        assert "-v /dev/dri/by-path:/dev/dri/by-path" in out, out
    finally:
        engine.docker("rm", "-f", "xpu-no-by-path", "xpu-no-by-path-ci", check=False)


def test_cache_not_writable(engine, docker_images, gpu, tmp_path, home):
    """The README's mkdir left out: Docker creates the cache folder owned by
    root, which the image's user cannot write."""
    start(engine, gpu, "xpu-cache-root", home, mkdir=False)
    try:
        assert (home / ".cache" / "huggingface").stat().st_uid == 0  # Docker made it
        out = unhealthy_with(engine, "xpu-cache-root", "hf.writable")
        fix = [line for line in out.splitlines() if "hf.writable" in line or "mkdir -p" in line]
        assert any(f"{home}/.cache/huggingface/hub" in line for line in out.splitlines()), out  # the host path
        print(fix)
    finally:
        engine.docker("rm", "-f", "xpu-cache-root", check=False)


def test_stack_too_old(engine, docker_images, gpu, tmp_path, home):
    """The real installed stack's dpkg database with libze-intel-gpu1 at an
    older release than the pins (a half-upgraded driver), mounted over the
    image's: unhealthy, naming packages.installed."""
    status = engine.docker("run", "--rm", "--network", "none", "--entrypoint", "cat", "gpugate-xpu",
                           "/var/lib/dpkg/status").stdout
    assert re.search(r"^Package: libze-intel-gpu1$", status, re.M), "the stand-in has no libze-intel-gpu1"
    old = re.sub(r"(Package: libze-intel-gpu1\n(?:.+\n)*?Version: ).*", r"\g<1>23.43.27642.40-1", status)
    assert old != status
    (tmp_path / "status").write_text(old)
    start(engine, gpu, "xpu-old-stack", home, extra=["-v", f"{tmp_path}/status:/var/lib/dpkg/status:ro"])
    try:
        out = unhealthy_with(engine, "xpu-old-stack", "packages.installed")
        assert "libze-intel-gpu1" in out, out
    finally:
        engine.docker("rm", "-f", "xpu-old-stack", check=False)


def test_many_failures_fit_docker_output(engine, docker_images, gpu, tmp_path, home):
    """No GPU passed in (no nodes, the host's /sys, no test driver: the real
    loader and Intel driver fail zeInit) and a spec of 150 long missing
    packages: the output Docker keeps holds every failed check id."""
    spec = ["extends: healthcheck", "packages:"]
    spec += [f"  - libsomething-really-long-package-name-number-{i:03d}-with-extra-words (>= 1.0)"
             for i in range(150)]
    (tmp_path / "spec.yaml").write_text("\n".join(spec) + "\n")
    extra = ["-v", f"{tmp_path}/spec.yaml:/etc/gpugate/long.yaml:ro",
             "--health-cmd", "gpugate check --spec /etc/gpugate/long.yaml"]
    start(engine, gpu, "xpu-many", home, extra=extra, device=False, sysfs=False, test_driver=False)
    try:
        h = health(engine, "xpu-many")
        assert h["Status"] == "unhealthy", h
        out = h["Log"][-1]["Output"]
        report = json.loads(engine.docker("exec", "xpu-many", "gpugate", "check", "--spec", "/etc/gpugate/long.yaml",
                                          "--format", "json", check=False).stdout)
        failed = [c["id"] for c in report["checks"] if c["status"] == "fail"]
        assert {"packages.installed", "devices.gpus", "runtime.loader"} <= set(failed), failed
        assert len(out.encode()) <= DOCKER_OUTPUT_MAX
        for cid in failed:
            assert f"FAIL  {cid}: " in out, (cid, out)
    finally:
        engine.docker("rm", "-f", "xpu-many", check=False)


def test_cuda_image_without_gpu_is_unhealthy(engine, docker_images, tmp_path):
    """No NVIDIA GPU or driver here: Docker judges the CUDA image unhealthy,
    the failing checks named in the output it keeps."""
    engine.docker("rm", "-f", "cuda", check=False)
    engine.docker("run", "-d", "--name", "cuda", "--network", "none", *FAST_HEALTH, "gpugate-cuda",
                  "sleep", "infinity")
    try:
        h = health(engine, "cuda")
        assert_log_sane(h)
        out = h["Log"][-1]["Output"]
        assert h["Status"] == "unhealthy" and out.startswith("gpugate: UNHEALTHY"), out
        first = re.match(r"gpugate: UNHEALTHY \(profile [^)]*\): ([a-z]+\.[a-z_]+)", out)
        assert first and f"FAIL  {first.group(1)}: " in out, out
    finally:
        engine.docker("rm", "-f", "cuda", check=False)
