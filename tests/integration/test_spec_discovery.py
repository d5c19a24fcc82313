"""Which spec a check runs (issue 31 item 4): --spec/--profile, else
GPUGATE_SPEC/GPUGATE_PROFILE, else ROOT/etc/gpugate/gpugate.yaml when it
exists, else the ci profile; `--spec -` reads standard input with a file's
limits. Every test uses a root: the host's /etc is never read or written."""
import os
import pty
import subprocess

import pytest

from conftest import GPUGATE, dpkg_root, run_gpugate, spec_file, stanza, write

ETC_SPEC = "profile: validate\ndescription: the image's own spec\npackages:\n  - libze1 (>= 1.17)\n"


def root_with_etc_spec(tmp_path, text=ETC_SPEC):
    root = dpkg_root(tmp_path, [stanza("libze1", "1.17.0-1")])
    write(str(root / "etc/gpugate/gpugate.yaml"), text)
    return root


def ids(r):
    return [c["id"] for c in r.json()["checks"]]


def test_the_system_spec_under_the_root_is_the_default(tmp_path):
    root = root_with_etc_spec(tmp_path)
    r = run_gpugate("--root", str(root), "--format", "json")
    assert r.rc == 0, r
    assert r.json()["profile"] == "validate" and ids(r) == ["packages.installed"], r


def test_options_and_variables_win_over_the_system_spec(tmp_path):
    root = root_with_etc_spec(tmp_path)
    mine = spec_file(tmp_path, "profile: healthcheck\npackages:\n  - libze1\n")
    r = run_gpugate("--root", str(root), "--format", "json", extra_env={"GPUGATE_SPEC": mine})
    assert r.rc == 0 and r.json()["profile"] == "healthcheck", r
    r = run_gpugate("--root", str(root), "--format", "json", "--only", "packages",
                    extra_env={"GPUGATE_PROFILE": "ci"})
    assert r.json()["profile"] == "ci", r
    r = run_gpugate("--root", str(root), "--format", "json", "--only", "packages", "--profile", "healthcheck")
    assert r.json()["profile"] == "healthcheck", r


def test_no_system_spec_means_the_ci_profile(tmp_path):
    root = dpkg_root(tmp_path, [stanza("libze1", "1.17.0-1")])
    r = run_gpugate("--root", str(root), "--format", "json", "--only", "packages")
    assert r.json()["profile"] == "ci", r


def test_an_unreadable_system_spec_is_an_error_naming_it(tmp_path):
    root = root_with_etc_spec(tmp_path, "packages: [unclosed\n")
    r = run_gpugate("--root", str(root))
    assert r.rc == 3, r
    assert f"{root}/etc/gpugate/gpugate.yaml:" in r.err, r


def test_spec_from_standard_input(tmp_path):
    root = dpkg_root(tmp_path, [stanza("libze1", "1.17.0-1")])
    r = run_gpugate("--root", str(root), "--spec", "-", "--format", "json",
                    input="profile: validate\npackages:\n  - libze1 (>= 1.18)\n")
    assert r.rc == 1 and r.json()["profile"] == "validate" and ids(r) == ["packages.installed"], r
    # errors name standard input, with the line and column
    r = run_gpugate("--root", str(root), "--spec", "-", input="packages: [unclosed\n")
    assert r.rc == 3 and "standard input:" in r.err, r


def test_spec_from_standard_input_has_a_files_size_limit(tmp_path):
    big = "# padding\n" * 200000  # 2 MB, over the 1 MiB a spec may hold
    r = run_gpugate("--spec", "-", input=big)
    assert r.rc == 3 and "standard input: a spec may hold at most 1048576 bytes" in r.err, r


def test_spec_from_a_terminal_is_refused_at_once(tmp_path):
    """A terminal on standard input would wait for typing: refused, as a device is for a file."""
    parent, child = pty.openpty()
    try:
        p = subprocess.run([GPUGATE, "--spec", "-"], stdin=child, capture_output=True, text=True, timeout=20)
    finally:
        os.close(child)
        os.close(parent)
    assert p.returncode == 3, p
    assert "standard input: cannot read the spec: it is a character device, not a file or a pipe" in p.stderr, p


def test_serve_with_spec_from_a_pipe_says_what_serve_needs(tmp_path):
    """serve reads its spec again on SIGHUP, so standard input cannot be its
    spec; the refusal must say so, not blame the pipe the user gave."""
    r = run_gpugate("serve", "--listen", "127.0.0.1:0", "--interval", "1s", "--root", str(tmp_path), "--spec", "-",
                    input="extends: healthcheck\n", timeout=30)
    assert r.rc == 3, r
    assert "character device" not in r.err and "-" in r.err, r
    assert r.err.startswith("gpugate: serve: --spec -: serve reads its spec again on SIGHUP, so standard input "
                            "cannot be its spec: give a file (--spec FILE)\n"), r
    assert "listening" not in r.err, r
    for args, env in ((["--spec=-"], {}), ([], {"GPUGATE_SPEC": "-"})):
        r = run_gpugate("serve", "--listen", "127.0.0.1:0", "--root", str(tmp_path), *args, input="extends: healthcheck\n",
                        extra_env=env, timeout=30)
        assert r.rc == 3 and "give a file" in r.err, (args, env, r)


def test_bundle_with_spec_from_stdin_says_it_needs_a_file(tmp_path):
    """bundle runs the checks in a child and copies the spec into the
    archive: standard input cannot be both, so it asks for a file (not
    "--spec -: No such file or directory")."""
    out = tmp_path / "b.tar.gz"
    r = run_gpugate("bundle", "-o", str(out), "--spec", "-", input="extends: healthcheck\n", timeout=30)
    assert r.rc == 3 and not out.exists(), r
    assert r.err.startswith("gpugate: bundle: --spec -: the bundle runs the checks and keeps a copy of the spec, "
                            "so standard input cannot be its spec: give a file (--spec FILE)\n"), r
