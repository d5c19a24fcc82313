"""images/*.Dockerfile: every instruction is one Docker knows, the HEALTHCHECK
parses as Docker parses it, and its exec-form command is a real gpugate
invocation: the built binary runs it (against fixture roots) without a usage
error, within the deadline that fits the HEALTHCHECK timeout."""
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "lib"))
import debfixture  # noqa: E402
import dockerfile  # noqa: E402

GPUGATE = os.environ.get("GPUGATE", str(REPO / "build" / "gpugate"))
DOCKERFILES = sorted((REPO / "images").glob("*.Dockerfile"))
XPU = REPO / "images" / "xpu.Dockerfile"

XPU_PACKAGES = """libze-intel-gpu1 libze1 intel-metrics-discovery intel-opencl-icd clinfo intel-gsc
intel-media-va-driver-non-free libmfx-gen1 libvpl2 libvpl-tools libva-glx2 va-driver-all vainfo
libze-dev intel-ocloc""".split()


def load(path):
    return dockerfile.parse(path.read_text(encoding="utf-8"))


def spec_sources(instructions):
    """Image path under /etc/gpugate/ -> the repository file COPY puts there."""
    out = {}
    for inst in dockerfile.stages(instructions)[-1]:
        if inst.name == "COPY" and "from" not in inst.flags:
            words = inst.exec_form() or shlex.split(inst.rest)
            if words[-1].startswith("/etc/gpugate/"):
                out[words[-1]] = REPO / words[0]
    return out


def healthcheck_spec(path):
    """(argv for the built binary, the spec file the check reads)."""
    instructions = load(path)
    hc = dockerfile.final_healthcheck(instructions)
    argv = list(hc.argv)
    assert argv[0] == "gpugate", f"{path.name}: HEALTHCHECK runs {argv[0]}, not gpugate"
    sources = spec_sources(instructions)
    spec = None
    for i, word in enumerate(argv):
        if word == "--spec":
            assert argv[i + 1] in sources, f"{path.name}: --spec {argv[i + 1]} is not COPYed into the image"
            spec = sources[argv[i + 1]]
            argv[i + 1] = str(spec)
        if word == "--profile":
            spec = REPO / "checks" / f"{argv[i + 1]}.yaml"
    assert spec and spec.is_file(), f"{path.name}: HEALTHCHECK names neither a profile nor a shipped spec"
    return [GPUGATE] + argv[1:], spec


def run(argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, timeout=30, **kw)


@pytest.fixture
def fixture_root(tmp_path):
    def make(spec, overrides=None):
        (tmp_path / "var/lib/dpkg").mkdir(parents=True, exist_ok=True)
        versions = debfixture.fixture_versions(debfixture.spec_packages(spec))
        (tmp_path / "var/lib/dpkg/status").write_text(debfixture.stanzas(versions, overrides=overrides))
        return tmp_path
    return make


def test_there_are_dockerfiles():
    names = {p.name for p in DOCKERFILES}
    assert {"xpu.Dockerfile", "cuda.Dockerfile"} <= names


@pytest.mark.parametrize("path", DOCKERFILES, ids=lambda p: p.name)
def test_every_instruction_is_known_and_healthcheck_is_exec_form(path):
    instructions = load(path)
    assert all(i.name in dockerfile.KNOWN_INSTRUCTIONS for i in instructions)
    assert len(dockerfile.stages(instructions)) >= 2, "a builder stage and a runtime stage"
    hc = dockerfile.final_healthcheck(instructions)
    assert hc is not None, f"{path.name}: the final stage has no HEALTHCHECK"
    assert hc.argv, f"{path.name}: HEALTHCHECK must use the exec form (no shell in the probe path)"
    assert set(hc.options) == {"interval", "timeout", "start-period", "retries"}
    assert hc.options["timeout"] <= hc.options["interval"]
    # the runtime stage runs as a named non-root user, and never switches to root
    users = [i.rest for i in dockerfile.stages(instructions)[-1] if i.name == "USER"]
    assert users and users[-1] not in ("root", "0"), f"{path.name}: the image runs as root"
    assert not any(i.rest in ("root", "0") for s in dockerfile.stages(instructions) for i in s
                   if i.name == "USER"), f"{path.name}: a USER root line"
    # the builder builds with make, from this repository
    builder_runs = " ".join(i.rest for i in dockerfile.stages(instructions)[0] if i.name == "RUN")
    assert re.search(r"\bmake\b", builder_runs)


@pytest.mark.parametrize("path", DOCKERFILES, ids=lambda p: p.name)
def test_healthcheck_command_is_a_real_gpugate_invocation(path, fixture_root):
    argv, spec = healthcheck_spec(path)
    # The pinned packages all present (test fixtures): the packages checks pass,
    # and no option of the command is unknown to the binary (that is exit 3).
    root = fixture_root(spec)
    r = run(argv + ["--root", str(root), "--format", "json"])
    assert r.returncode in (0, 1), f"exit {r.returncode}: {r.stderr}"
    report = json.loads(r.stdout)
    assert report["schema"] == "gpugate/v1"
    pkgs = [c for c in report["checks"] if c["id"].startswith("packages.")]
    assert pkgs and all(c["status"] == "pass" for c in pkgs), pkgs
    # the exact command as Docker runs it: text on stdout, within what Docker keeps
    r = run(argv + ["--root", str(root)])
    assert r.returncode in (0, 1), r.stderr
    assert len((r.stdout + r.stderr).encode()) <= 4096


@pytest.mark.parametrize("path", DOCKERFILES, ids=lambda p: p.name)
def test_healthcheck_command_fails_on_a_broken_image(path, fixture_root):
    argv, spec = healthcheck_spec(path)
    first = debfixture.parse_relation(debfixture.spec_packages(spec)[0])[0][0]
    root = fixture_root(spec, overrides={first: None})
    r = run(argv + ["--root", str(root)])
    assert r.returncode == 1, r.stdout + r.stderr
    assert "UNHEALTHY" in r.stdout and first in r.stdout
    assert len((r.stdout + r.stderr).encode()) <= 4096


@pytest.mark.parametrize("path", DOCKERFILES, ids=lambda p: p.name)
def test_healthcheck_deadline_fits_the_timeout(path):
    argv, spec = healthcheck_spec(path)
    hc = dockerfile.final_healthcheck(load(path))
    doc = yaml.safe_load(spec.read_text())
    deadline = dockerfile.parse_duration(str(doc.get("deadline", "8s")))
    behaviour = doc.get("profile") or doc.get("extends")
    assert behaviour == "healthcheck", f"{spec.name}: not healthcheck behaviour"
    # gpugate must report (and exit) before Docker kills it at the timeout,
    # or the reason is lost behind "Health check exceeded timeout".
    assert deadline < hc.options["timeout"], (deadline, hc.options["timeout"])


def test_shipped_specs_validate():
    for spec in sorted((REPO / "images").glob("*.yaml")):
        r = run([GPUGATE, "check", "--spec", str(spec), "--root", "/nonexistent-is-not-a-dir"])
        assert r.returncode == 3 and "--root" in r.stderr  # sanity: usage errors do show as 3
        r = run([GPUGATE, "check", "--spec", str(spec)])
        assert r.returncode in (0, 1), f"{spec.name}: exit {r.returncode}: {r.stderr}"
        assert "spec error" not in r.stderr


def test_xpu_image_follows_the_issue():
    instructions = load(XPU)
    builder, stack, runtime = dockerfile.stages(instructions)
    # the driver stack is the `stack` stage, which the last stage builds on
    # (tests/container builds that one on a Debian stand-in for it)
    assert builder[0].rest.split()[0] == "debian:12" and stack[0].rest == "ubuntu:24.04 AS stack"
    assert runtime[0].rest == "stack"
    runs = [i for i in stack + runtime if i.name == "RUN"]
    installs = [i for i in runs if "apt-get install" in i.rest and "intel-opencl-icd" in i.rest]
    assert len(installs) == 1, "the driver stack is installed in one RUN"
    stack = installs[0].rest
    words = set(re.split(r"\s+", stack))
    missing = [p for p in XPU_PACKAGES if p not in words]
    assert not missing, f"not installed: {missing}"
    assert "ppa:kobuk-team/intel-graphics" in stack
    for cmd in re.split(r"&&", stack):
        if "apt-get install" in cmd:
            assert "--no-install-recommends" in cmd, cmd
    assert re.search(r"rm -rf /var/lib/apt/lists/\*\s*$", stack), "apt lists removed in the same layer"
    assert not any(p in i.rest for i in runs if i is not installs[0] for p in XPU_PACKAGES[:4])
    args = dockerfile.arg_defaults(runtime)
    assert "RENDER_GID" in args and re.fullmatch(r"\d+", args["RENDER_GID"] or "")
    user_run = [i.rest for i in runs if "useradd" in i.rest]
    assert len(user_run) == 1 and "$RENDER_GID" in user_run[0]
    assert re.search(r"--groups\s+render,video\b", user_run[0])
    assert "/etc/gpugate/gpugate.yaml" in spec_sources(instructions)
    hc_line = [i for i in runtime if i.name == "HEALTHCHECK"][-1]
    assert hc_line.flags == {"interval": "30s", "timeout": "10s", "start-period": "60s", "retries": "3"}
    assert dockerfile.final_healthcheck(instructions).argv == ["gpugate", "check", "--profile", "healthcheck"]


# The reader itself: it must reject what Docker rejects, or the tests above
# would pass on a broken Dockerfile.
@pytest.mark.parametrize("text, words", [
    ("FROM x\nRUNN true\n", "unknown instruction 'RUNN'"),
    ("FROM x\nHEALTHCHECK --intervall=30s CMD [\"a\"]\n", "unknown option --intervall"),
    ("FROM x\nHEALTHCHECK --timeout=10 CMD [\"a\"]\n", "not a duration"),
    ("FROM x\nHEALTHCHECK --retries=x CMD [\"a\"]\n", "not a whole number"),
    ("FROM x\nHEALTHCHECK CMD [\"a\", \n", "not a JSON array"),
    ("FROM x\nHEALTHCHECK [\"a\"]\n", "wants [OPTIONS] CMD"),
    ("FROM x\nHEALTHCHECK --retries=3 NONE\n", "NONE takes no options"),
    ("FROM x\nCMD [1, 2]\n", "array of strings"),
    ("RUN true\n", "must start with FROM"),
    ("FROM x\nUSER\n", "needs arguments"),
])
def test_reader_rejects(text, words):
    with pytest.raises(dockerfile.DockerfileError) as e:
        dockerfile.parse(text)
    assert words in str(e.value)


def test_reader_follows_docker_rules():
    text = ("# escape=`\n# a comment\nFROM debian:12 AS b\nRUN echo a `\n    # dropped comment\n\n"
            "    && echo b\nHEALTHCHECK --interval=1m30s --timeout=500ms --retries=2 `\n"
            "  CMD [\"gpugate\", \"check\"]\n")
    inst = dockerfile.parse(text)
    assert [i.name for i in inst] == ["FROM", "RUN", "HEALTHCHECK"]
    assert inst[1].rest.split() == ["echo", "a", "&&", "echo", "b"] and inst[1].line == 4
    hc = dockerfile.final_healthcheck(inst)
    assert hc.options == {"interval": 90.0, "timeout": 0.5, "retries": 2}
    assert hc.argv == ["gpugate", "check"]


# Ubuntu 24.04 runtime package of each pkg-config name the Makefile links
# (the t64 names of the 64-bit time_t transition).
UBUNTU_RUNTIME = {"yaml-0.1": "libyaml-0-2", "jansson": "libjansson4", "libcrypto": "libssl3t64",
                  "libseccomp": "libseccomp2", "libcurl": "libcurl4t64", "libarchive": "libarchive13t64",
                  "libdrm": "libdrm2", "json-c": "libjson-c5", "libfyaml": "libfyaml0"}


@pytest.mark.parametrize("path", DOCKERFILES, ids=lambda p: p.name)
def test_runtime_stage_installs_what_the_makefile_links(path):
    m = re.search(r"^PKGS\s*:?=\s*(.*)$", (REPO / "Makefile").read_text(), re.M)
    pkgs = m.group(1).split()
    stack = [s for s in dockerfile.stages(load(path)) if s[0].rest.endswith(" AS stack")][0]
    installed = set(re.split(r"\s+", " ".join(i.rest for i in stack if i.name == "RUN")))
    for pkg in pkgs:
        assert pkg in UBUNTU_RUNTIME, f"Makefile PKGS has {pkg}: add its Ubuntu 24.04 runtime package " \
                                      f"to images/*.Dockerfile and to UBUNTU_RUNTIME here"
        assert UBUNTU_RUNTIME[pkg] in installed, f"{path.name}: the stack stage lacks {UBUNTU_RUNTIME[pkg]} ({pkg})"


def test_readme_builds_every_image_it_runs():
    """The README's NVIDIA quick start ran `gpugate-cuda` without building it,
    and without APP_UID, so the HF cache it mounts from $HOME (not made first:
    Docker makes it root's) was not writable by the image's user. Every
    image a README `docker run` uses is built there, from its Dockerfile, as
    you when it mounts your HF cache, after `mkdir -p` of that cache."""
    text = (REPO / "README.md").read_text()
    blocks = [b.replace("\\\n", " ") for b in re.findall(r"```sh\n(.*?)```", text, re.S)]
    for block in blocks:
        lines = [re.sub(r"\s+", " ", line).strip() for line in block.splitlines()]
        built = {}
        for i, line in enumerate(lines):
            m = re.match(r'docker build -f (images/(\w+)\.Dockerfile) .* -t (gpugate-\w+) \.$', line)
            if m:
                assert (REPO / m.group(1)).exists(), line
                assert m.group(3) == f"gpugate-{m.group(2)}", line
                built[m.group(3)] = (i, line)
            if not line.startswith("docker run "):
                continue
            image = next(w for w in line.split() if w.startswith("gpugate-"))
            assert image in built, f"README runs {image} but does not build it: {line}"
            b, build_line = built[image]
            if '-v "$HOME/.cache/huggingface:' in line:
                assert '--build-arg APP_UID="$(id -u)"' in build_line, build_line
                assert 'mkdir -p "$HOME/.cache/huggingface"' in lines[b:i], lines
