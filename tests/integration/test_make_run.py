"""`make run`, a user's first minute: it installs only what building and
running need (.ci/install-deps build, not the test tools), builds both
executables without the compiler's lines (shown whole when the build
fails), runs `gpugate check` and ends with a line saying the verdict is this
machine's; make fails only on a build failure or gpugate's exit 3.

The run steps are run for real (`make run-check`, all of `make run` but the
packages) on a copy of the build folder with main.o removed, so that a
compile and two links happen; gpugate reads an empty fixture root."""
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
GPUGATE = Path(os.environ.get("GPUGATE", str(REPO / "build" / "gpugate"))).resolve()
INSTALL_DEPS = REPO / ".ci" / "install-deps"
# Test tools that must not be installed by `make run`.
TEST_TOOLS = {"prometheus", "prometheus-node-exporter", "hyperfine", "debootstrap", "yamllint",
              "python3-pytest", "libcmocka-dev", "cppcheck", "shellcheck", "clang-format", "buildah",
              "podman", "lintian", "nodejs", "npm", "strace", "libxml2-utils"}
VERDICT = re.compile(r"^make run: gpugate says (HEALTHY|UNHEALTHY) for this machine \(exit ([01])\): ")


def package_list(which):
    r = subprocess.run(["sh", str(INSTALL_DEPS), "--list", which], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    pkgs = r.stdout.split()
    assert pkgs and len(pkgs) == len(set(pkgs)), pkgs
    return set(pkgs)


def test_build_list_is_a_subset_of_the_test_list_without_test_tools():
    build, test = package_list("build"), package_list("test")
    assert build < test
    assert not build & TEST_TOOLS, build & TEST_TOOLS
    assert TEST_TOOLS <= test, TEST_TOOLS - test
    # the tools the other parts of make test need are in the test list
    assert {"buildah", "podman", "debhelper", "lintian", "mandoc", "bash-completion", "fakeroot",
            "dpkg-dev", "nodejs", "npm"} <= test


def test_unknown_list_is_a_usage_error():
    r = subprocess.run(["sh", str(INSTALL_DEPS), "tests"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 3 and "usage" in r.stderr


def owner(path):
    """The installed Debian package that owns a file (dpkg -S)."""
    r = subprocess.run(["dpkg-query", "-S", str(Path(path).resolve())], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, f"no package owns {path}: {r.stderr}"
    return r.stdout.split(":")[0].strip()


def depends(pkg):
    """What an installed package depends on (nothing for one not installed)."""
    r = subprocess.run(["dpkg-query", "-W", "-f", "${Depends},${Pre-Depends}", pkg],
                       capture_output=True, text=True, timeout=30)
    return {re.split(r"[ :(]", d.strip())[0] for d in r.stdout.replace("|", ",").split(",") if d.strip()}


def test_build_list_provides_what_the_makefile_builds_with():
    """Each library the Makefile asks pkg-config for, each header a source
    includes from a -dev package, and each build tool, is owned by a
    package of the build list (or one that such a package depends on)."""
    build = package_list("build")
    # build-essential -> gcc -> gcc-12; python3 -> python3.11 -> python3.11-minimal
    reachable = set(build)
    for _ in range(2):
        reachable |= {d for p in reachable for d in depends(p)}
    modules = ["yaml-0.1", "jansson", "libcurl", "libarchive", "libcrypto", "libseccomp"]
    for m in modules:
        r = subprocess.run(["pkg-config", "--variable=pcfiledir", m], capture_output=True, text=True, timeout=30)
        assert r.returncode == 0, f"pkg-config {m}: {r.stderr}"
        assert owner(Path(r.stdout.strip()) / f"{m}.pc") in build, m
    assert owner("/usr/include/level_zero/ze_api.h") in build
    for tool in ("cc", "make", "pkg-config", "clang", "llvm-spirv-14", "spirv-val", "python3"):
        path = Path("/usr/bin") / tool  # Debian's, whatever PATH puts first
        assert path.exists(), tool
        assert owner(path) in reachable, (tool, owner(path))


def test_run_target_installs_the_build_list_only():
    # -n still runs recipe lines that name $(MAKE): MAKE=true keeps it from
    # building and checking this machine
    r = subprocess.run(["make", "-n", "--no-print-directory", "-C", str(REPO), "run", "MAKE=true"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines == ["sh .ci/install-deps build", "true --no-print-directory run-check"], lines


@pytest.fixture
def build_copy(tmp_path):
    """The tested build folder's objects and archives, main.o and both
    executables removed: run-check must compile one file and link twice."""
    src = GPUGATE.parent
    dst = tmp_path / "build"
    dst.mkdir()
    for name in ("obj", "gen", "tools"):
        shutil.copytree(src / name, dst / name, symlinks=True)
    for name in ("libgpugate.a", "libgpugate-provision.a"):
        shutil.copy2(src / name, dst / name)
    main = dst / "obj" / "main.o"
    flags = build_flags(main)
    main.unlink()
    return dst, flags


def build_flags(obj):
    """The make variables an object was built with, read off it: the
    compiler from its .comment section, the sanitizers from the symbols
    their instrumentation calls (`make test` runs this under ASan too)."""
    comment = subprocess.run(["readelf", "-p", ".comment", str(obj)], capture_output=True, text=True, timeout=30)
    syms = subprocess.run(["nm", str(obj)], capture_output=True, text=True, timeout=30)
    assert comment.returncode == 0 and syms.returncode == 0, comment.stderr + syms.stderr
    flags = ["CC=clang"] if "clang version" in comment.stdout else []
    if "__asan_" in syms.stdout or "__ubsan_" in syms.stdout:
        flags.append("SANITIZE=1")
    return flags


def fixture_root(tmp_path):
    root = tmp_path / "root"
    (root / "var/lib/dpkg").mkdir(parents=True)
    (root / "var/lib/dpkg/status").write_text("")
    return root


def run_check(build, flags, *args):
    return subprocess.run(["make", "--no-print-directory", "-C", str(REPO), "run-check", f"BUILD={build}", *flags, *args],
                          capture_output=True, text=True, timeout=600)


def test_run_is_quiet_and_ends_with_whose_verdict_it_is(tmp_path, build_copy):
    build, flags = build_copy
    root = fixture_root(tmp_path)
    r = run_check(build, flags, f"RUN_ARGS=--root {root}")
    assert r.returncode == 0, f"an UNHEALTHY verdict is no make failure: {r.stdout}{r.stderr}"
    assert (build / "obj" / "main.o").exists() and (build / "gpugate").exists() and (build / "gpugate-provision").exists()
    lines = r.stdout.splitlines()
    # two lines of its own before gpugate's report, no compiler line anywhere
    assert lines[0].startswith(f"make run: building {build}/gpugate and {build}/gpugate-provision"), lines[0]
    assert lines[1] == f"make run: built; running {build}/gpugate check --root {root}", lines[1]
    assert lines[3].startswith("gpugate: UNHEALTHY (profile ci): "), lines[3]
    assert not [x for x in r.stdout.splitlines() + r.stderr.splitlines() if "-Wall" in x or "main.c" in x]
    assert r.stderr == "", r.stderr
    m = VERDICT.match(lines[-1])
    assert m and m.groups() == ("UNHEALTHY", "1"), lines[-1]
    assert "not a build failure" in lines[-1] and "without a GPU" in lines[-1]


def test_run_without_s_would_print_the_compiler_lines(tmp_path, build_copy):
    """The quietness above is run-check's doing: the same build, plain."""
    build, flags = build_copy
    r = subprocess.run(["make", "--no-print-directory", "-C", str(REPO), f"BUILD={build}", *flags,
                        f"{build}/gpugate"], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    assert "-Wall" in r.stdout and "src/main.c" in r.stdout


def test_run_says_healthy_when_gpugate_does(tmp_path, build_copy):
    build, flags = build_copy
    # one check that passes on an empty root: the system group only warns
    r = run_check(build, flags, f"RUN_ARGS=--root {fixture_root(tmp_path)} --only system.seccomp")
    assert r.returncode == 0, r.stdout + r.stderr
    m = VERDICT.match(r.stdout.splitlines()[-1])
    assert m and m.groups() == ("HEALTHY", "0"), r.stdout


def test_run_fails_on_a_usage_error(tmp_path, build_copy):
    build, flags = build_copy
    r = run_check(build, flags, "RUN_ARGS=--no-such-option")
    assert r.returncode != 0, r.stdout
    assert r.stderr.splitlines()[-2].startswith("make run: gpugate could not check this machine (exit 3"), r.stderr


def test_run_shows_a_failed_build_in_full(tmp_path, build_copy):
    build, flags = build_copy
    fake_cc = tmp_path / "cc"
    fake_cc.write_text("#!/bin/sh\necho 'src/main.c:1:1: error: the compiler says why' >&2\nexit 1\n")
    fake_cc.chmod(0o755)
    r = run_check(build, flags, f"CC={fake_cc}")
    assert r.returncode != 0, r.stdout
    assert "src/main.c:1:1: error: the compiler says why" in r.stderr, r.stderr
    assert "make run: the build failed (its output is above); gpugate did not run" in r.stderr
    assert "gpugate says" not in r.stdout
