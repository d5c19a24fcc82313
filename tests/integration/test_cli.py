"""The command-line contract (README.md, "Command line" and "Exit codes"): options, exit codes, spec errors."""
import os
import re
import threading
import time

import pytest

from conftest import dpkg_root, hang_open_env, run_gpugate, spec_file, stanza, write

PKG_SPEC = "packages:\n  - libze1 (>= 1.8)\n"


def test_version_and_help():
    r = run_gpugate("--version")
    assert r.rc == 0 and re.match(r"^gpugate \d+\.\d+\.\d+\n$", r.out)
    r = run_gpugate("--help")
    assert r.rc == 0
    for word in ("--profile", "--spec", "--root", "--format", "--report", "--deadline",
                 "--only", "--skip", "exit status"):
        assert word in r.out
    assert run_gpugate("check", "--help").rc == 0


@pytest.mark.parametrize("args", [
    ["check"], ["list"], ["list", "--spec-keys"], ["hf"], ["hf", "verify"], ["hf", "fetch"],
    ["stack"], ["stack", "fetch"], ["stack", "verify", "--manifest", "m.yaml"], ["bundle"],
    ["spec"], ["spec", "freeze"], ["diff"], ["serve"],
])
def test_every_command_has_help(args):
    """`gpugate CMD --help` prints CMD's usage on stdout and exits 0, for every
    command and verb (`list --help` and `stack fetch --help` were usage errors)."""
    r = run_gpugate(*args, "--help")
    assert r.rc == 0, r
    assert r.out.startswith("usage: gpugate"), r
    assert r.err == "", r


@pytest.mark.parametrize("args,hint", [
    (["diff", "--tolerance", "x", "a.json", "b.json"], "gpugate diff --help"),
    (["stack", "fetch", "--jobs", "0"], "gpugate stack --help"),
    (["stack", "verify", "--manifest", "m.yaml"], "gpugate stack --help"),
    (["spec", "freeze", "--bogus"], "gpugate spec freeze --help"),
    (["spec", "thaw"], "gpugate spec freeze --help"),
    (["list", "x"], "gpugate list --help"),
    (["hf", "fetch", "--jobs", "0", "org/name"], "gpugate hf fetch --help"),
    (["hf", "fetch", "--idle-timeout", "0", "org/name"], "gpugate hf fetch --help"),
    (["bundle"], "gpugate bundle --help"),
    (["serve", "--interval", "0"], "gpugate serve --help"),
    (["--bogus"], "gpugate --help"),
])
def test_usage_errors_point_at_the_commands_own_help(args, hint):
    """A subcommand's usage error pointed at 'gpugate --help', which lists none
    of that command's options; it now names the command's own help, which
    exits 0 (test_every_command_has_help)."""
    r = run_gpugate(*args)
    assert r.rc == 3, r
    assert r.err.endswith(f"Try '{hint}' for usage.\n"), r
    assert run_gpugate(*hint.split()[1:]).rc == 0


def test_main_help_has_no_double_blank_line():
    r = run_gpugate("--help")
    assert "\n\n\n" not in r.out, r.out
    # the units --deadline takes, as README and the man page say
    assert re.search(r"--deadline SECONDS .*500ms, 2m", r.out), r.out


@pytest.mark.parametrize("args,words", [
    (["--bogus"], "unknown option '--bogus'"),
    (["check", "--format"], "needs an argument"),
    (["--format", "yaml"], "unknown format 'yaml'"),
    (["--report", "json"], "FORMAT:FILE"),
    (["--report", "xml:out.xml"], "unknown format 'xml'"),
    (["--profile", "fast"], "unknown profile 'fast'"),
    (["--deadline", "soon"], "--deadline"),
    (["--deadline", "0"], "--deadline"),
    (["--deadline", "-5"], "--deadline"),
    (["--only", "nothing"], "'nothing'"),
    (["--skip", "packages,nope.x"], "'nope.x'"),
    (["--root", "/nonexistent/root"], "No such file"),
    (["--root", "/etc/hostname"], "not a directory"),
    (["frobnicate"], "unknown command 'frobnicate'"),
    (["check", "extra"], "unexpected argument 'extra'"),
    (["list", "x"], "no arguments"),
])
def test_usage_errors_exit_3(args, words):
    r = run_gpugate(*args)
    assert r.rc == 3, r
    assert words in r.err, r
    assert "Try 'gpugate" in r.err and "--help' for usage." in r.err
    assert r.out == ""


# the option a usage error names is the one at fault, in every command: a letter
# inside a cluster ("-xq": glibc's optind still points at the cluster, so the
# argument before it was named), a long option given a value it does not take
# (the value is not repeated) (the hf commands: test_hf_where.py)
@pytest.mark.parametrize("args,words,hint", [
    (["check", "--format", "json", "-xq"], "gpugate: unknown option '-x'", "gpugate --help"),
    (["check", "--verbose=secret"], "gpugate: option '--verbose' takes no argument", "gpugate --help"),
    (["diff", "a.json", "-xh"], "gpugate: diff: unknown option '-x'", "gpugate diff --help"),
    (["spec", "freeze", "-o", "out.yaml", "-qo"], "gpugate: spec freeze: unknown option '-q'",
     "gpugate spec freeze --help"),
    (["spec", "freeze", "-o"], "gpugate: spec freeze: option '-o' needs an argument", "gpugate spec freeze --help"),
    (["bundle", "-o", "out.tar", "-xz"], "gpugate: bundle: unknown option '-x'", "gpugate bundle --help"),
])
def test_usage_error_names_the_option_at_fault(args, words, hint):
    r = run_gpugate(*args)
    assert r.rc == 3 and r.out == "", r
    assert r.err == f"{words}\nTry '{hint}' for usage.\n", r


def test_list_names_checks_and_profiles():
    r = run_gpugate("list")
    assert r.rc == 0
    assert re.search(r"^  packages\.installed +\S", r.out, re.M)
    for profile in ("healthcheck", "ci", "validate"):
        assert re.search(rf"^  {profile} +.*packages\.installed", r.out, re.M), r.out


def test_profile_with_spec_sets_the_behaviour_as_the_man_page_says(tmp_path):
    """--profile beside --spec is no error: the spec's checks run with the
    profile's behaviour; the man page says so (it presented them as only
    alternatives)."""
    root = dpkg_root(tmp_path, [stanza("libze1", "1.17.0-1")])
    spec = spec_file(tmp_path, "profile: ci\npackages:\n  - libze1 (>= 1.8)\n")
    r = run_gpugate("--spec", spec, "--root", str(root), "--profile", "healthcheck", "--format", "json")
    assert r.rc == 0 and r.json()["profile"] == "healthcheck", r
    assert [c["id"] for c in r.json()["checks"]] == ["packages.installed"], r
    man = open(os.path.join(os.path.dirname(__file__), "..", "..", "src", "man", "gpugate.1.in")).read()
    assert "the spec's checks run with this profile's behaviour" in man


@pytest.mark.parametrize("value", ["99999999", "1e9"])
def test_a_deadline_past_the_cap_says_the_cap(tmp_path, value):
    """A deadline too long was refused as "not a positive number of seconds";
    the option, the variable and the spec key now name the cap."""
    r = run_gpugate("--deadline", value)
    assert r.rc == 3 and "at most 10000000 s" in r.err and "positive number" not in r.err, r
    r = run_gpugate(extra_env={"GPUGATE_DEADLINE": value})
    assert r.rc == 3 and "GPUGATE_DEADLINE" in r.err and "at most 10000000 s" in r.err, r
    spec = spec_file(tmp_path, f"deadline: {value}\npackages: []\n")
    r = run_gpugate("--spec", spec)
    assert r.rc == 3 and ":1:11:" in r.err and "at most 10000000 s" in r.err, r
    r = run_gpugate("--deadline", "10000000", "--only", "packages", "--root", str(dpkg_root(tmp_path, [])))
    assert r.rc in (0, 1), r  # the cap itself is accepted


@pytest.mark.parametrize("fmt", ["json", "junit", "text"])
def test_report_to_standard_output_is_refused(fmt):
    """`--format json --report json:-` wrote two JSON documents on standard
    output (no parser reads that); standard output is --format's."""
    r = run_gpugate("--format", "json", "--report", f"{fmt}:-")
    assert r.rc == 3 and r.out == "", r
    assert f"--report {fmt}:-: standard output carries the --format report: use --format {fmt}" in r.err, r
    man = open(os.path.join(os.path.dirname(__file__), "..", "..", "src", "man", "gpugate.1.in")).read()
    assert "standard output carries the" in man


def test_list_shows_what_each_profile_is_for():
    """The spec key `description` said `gpugate list` shows it; it did not (and
    the Intel pins' overlay replaced each profile's with its own)."""
    import yaml
    r = run_gpugate("list")
    assert r.rc == 0
    checks = os.path.join(os.path.dirname(__file__), "..", "..", "checks")
    for profile in ("healthcheck", "ci", "validate"):
        with open(os.path.join(checks, f"{profile}.yaml")) as f:
            what = yaml.safe_load(f)["description"]
        assert re.search(rf"^  {profile} +{re.escape(what)}: packages\.installed", r.out, re.M), r.out


@pytest.mark.parametrize("text,where,words", [
    ("packages: [libze1\n", ":2:1:", "YAML syntax error"),
    ("packages:\n  - libze1\nbogus: 1\n", ":3:1:", "unknown key 'bogus'"),
    ("packages: libze1\n", ":1:11:", "'packages' must be a list"),
    ("packages:\n  - libze1 (>> 1:)\n", ":2:5:", "bad package relation"),
    ("packages:\n  - [a, b]\n", ":2:5:", "must be a single value"),
    ("deadline: soon\npackages: []\n", ":1:11:", "deadline must be a duration"),
    ("packages: []\npackages: []\n", ":2:1:", "duplicate key 'packages'"),
    ("- a\n- b\n", ":1:1:", "top level must be a mapping"),
    ("", "", "is empty"),
    ("a: 1\n---\nb: 2\n", "", "more than one YAML document"),
])
def test_spec_errors_exit_3_with_location(tmp_path, text, where, words):
    path = spec_file(tmp_path, text)
    r = run_gpugate("check", "--spec", path)
    assert r.rc == 3, r
    assert f"{path}{where}" in r.err, r
    assert words in r.err, r


def test_spec_unreadable_and_binary(tmp_path):
    r = run_gpugate("--spec", str(tmp_path / "missing.yaml"))
    assert r.rc == 3 and "missing.yaml: cannot read the spec: No such file" in r.err
    path = write(str(tmp_path / "bin.yaml"), b"packages:\x00\n")
    r = run_gpugate("--spec", path)
    assert r.rc == 3 and "NUL bytes" in r.err


def test_exit_codes_0_and_1(tmp_path):
    root = dpkg_root(tmp_path, [stanza("libze1", "1.8.12-1")])
    ok = spec_file(tmp_path, PKG_SPEC, "ok.yaml")
    bad = spec_file(tmp_path, "packages:\n  - libze1 (>= 1.17)\n", "bad.yaml")
    assert run_gpugate("--spec", ok, "--root", str(root)).rc == 0
    assert run_gpugate("check", "--spec", bad, "--root", str(root)).rc == 1


def test_only_and_skip_select_checks(tmp_path):
    root = dpkg_root(tmp_path, [stanza("libze1", "1.8.12-1")])
    spec = spec_file(tmp_path, "packages:\n  - libze1 (>= 9)\n")
    # no check left is a usage error, not HEALTHY with 0 checks (README.md, exit codes)
    r = run_gpugate("--spec", spec, "--root", str(root), "--format", "json", "--skip", "packages")
    assert r.rc == 3 and "no check selected" in r.err and r.out == ""
    r = run_gpugate("--spec", spec, "--root", str(root), "--format", "json", "--only", "packages.installed")
    assert r.rc == 1 and [c["id"] for c in r.json()["checks"]] == ["packages.installed"]
    r = run_gpugate("--spec", spec, "--root", str(root), "--format", "json",
                    "--only", "packages", "--skip", "packages.installed")
    assert r.rc == 3 and "no check selected" in r.err


def test_deadline_fails_a_hung_check_in_time(tmp_path):
    """A status file whose open(2) blocks forever (a dead mount; hang_open_env):
    the run must still end at the deadline, with the check failed as timed out."""
    root = tmp_path / "root"
    os.makedirs(root / "var/lib/dpkg")
    write(str(root / "var/lib/dpkg/status"), "")
    spec = spec_file(tmp_path, PKG_SPEC)
    r = run_gpugate("--spec", spec, "--root", str(root), "--deadline", "1", "--format", "json",
                    timeout=10, extra_env=hang_open_env("/var/lib/dpkg/status"))
    assert r.rc == 1, r
    assert r.seconds < 1.8, r.seconds
    c = r.check("packages.installed")
    assert c["status"] == "fail"
    assert "timed out" in c["summary"] and "1 s deadline" in c["summary"]


@pytest.mark.parametrize("one_cpu", [False, True])
def test_deadline_ends_a_check_busy_on_the_watchdogs_cpu(tmp_path, one_cpu):
    """The watchdog sleeps on the CPU the run started on (src/runner.c,
    pin_to_this_cpu): a check that keeps that CPU busy in an endless loop (the
    status file's open spins: hang_open_env with GPUGATE_HANG_SPIN) must still
    be preempted when the watchdog wakes, the run ending at the deadline; also
    with the whole process held to one CPU (as taskset -c or a one-CPU cpuset
    holds it: the affinity gpugate inherits)."""
    root = tmp_path / "root"
    os.makedirs(root / "var/lib/dpkg")
    write(str(root / "var/lib/dpkg/status"), "")
    spec = spec_file(tmp_path, PKG_SPEC)
    env = dict(hang_open_env("/var/lib/dpkg/status"), GPUGATE_HANG_SPIN="1")
    args = ["--spec", spec, "--root", str(root), "--deadline", "1", "--format", "json"]
    allowed = os.sched_getaffinity(0)
    if one_cpu:
        os.sched_setaffinity(0, {min(allowed)})  # the child inherits it
    try:
        r = run_gpugate(*args, timeout=10, extra_env=env)
    finally:
        os.sched_setaffinity(0, allowed)
    assert r.rc == 1, r
    assert r.seconds < 1.8, r.seconds
    assert "still running when the 1 s deadline passed" in r.check("packages.installed")["summary"], r


def test_deadline_keeps_finished_results_and_writes_reports(tmp_path):
    """A check that hangs after others finished (system.seccomp's open of
    ROOT/proc/self/status never returns: hang_open_env): at the deadline the finished
    check keeps its own verdict, the hung one is 'still running', the next 'not
    started', and every --report file is written by the watchdog before the process ends."""
    root = dpkg_root(tmp_path, [stanza("libze1", "1.9.0-1")])
    write(str(root / "proc/self/status"), "")
    spec = spec_file(tmp_path, PKG_SPEC + "system:\n  kernel_log: false\n")
    junit = tmp_path / "out.xml"
    r = run_gpugate("--spec", spec, "--root", str(root), "--deadline", "1", "--format", "json",
                    "--only", "packages,system.seccomp,system.capabilities",
                    "--report", f"junit:{junit}", timeout=10, extra_env=hang_open_env("/proc/self/status"))
    assert r.rc == 1, r
    assert r.seconds < 1.8, r.seconds
    assert [c["id"] for c in r.json()["checks"]] == [
        "packages.installed", "system.seccomp", "system.capabilities"]
    assert r.check("packages.installed")["status"] == "pass", r
    assert "still running when the 1 s deadline passed" in r.check("system.seccomp")["summary"]
    assert "not started before the 1 s deadline passed" in r.check("system.capabilities")["summary"]
    xml = junit.read_text()
    assert xml.count("<testcase") == 3 and xml.count("<failure") == 2, xml


def test_a_sub_second_deadline_is_printed_as_given(tmp_path):
    """A deadline below a second reads back as the user gave it ("0.5 ms"), whether the
    watchdog fires while gpugate is still reading --root and the spec or once the hung
    check runs (its status file's open never returns: hang_open_env), never "0.0 s"
    (lib/util.h, human_seconds)."""
    root = dpkg_root(tmp_path, [stanza("libze1", "1.9.0-1")])
    spec = spec_file(tmp_path, PKG_SPEC)
    r = run_gpugate("--spec", spec, "--root", str(root), "--deadline", "0.0005", "--only", "packages",
                    timeout=10, extra_env=hang_open_env("/var/lib/dpkg/status"))
    assert r.rc in (1, 3), r
    out = r.out + r.err
    assert "0.5 ms" in out, r
    assert "0.0 s" not in out, r


def test_hung_status_file_leaves_the_other_groups_their_verdicts(tmp_path):
    """The packages group runs apart from the other groups (src/runner.c, own_thread:
    the main thread takes it, a second thread the rest): when its status file's open
    hangs, the system checks still finish on the other thread and keep their verdicts,
    packages.installed is 'still running' at the deadline, and the results stay in
    plan order."""
    root = dpkg_root(tmp_path, [stanza("libze1", "1.9.0-1")])
    write(str(root / "proc/self/status"), "")
    spec = spec_file(tmp_path, PKG_SPEC + "system:\n  kernel_log: false\n")
    r = run_gpugate("--spec", spec, "--root", str(root), "--deadline", "1", "--format", "json",
                    "--only", "packages,system.sysfs,system.container", timeout=10,
                    extra_env=hang_open_env("/var/lib/dpkg/status"))
    assert r.rc == 1, r
    assert r.seconds < 1.8, r.seconds
    assert [c["id"] for c in r.json()["checks"]] == ["packages.installed", "system.sysfs", "system.container"]
    assert "still running when the 1 s deadline passed" in r.check("packages.installed")["summary"]
    for check in ("system.sysfs", "system.container"):
        assert "timed out" not in r.check(check)["summary"], r.check(check)


def test_spec_fifo_without_writer_ends_at_the_deadline(tmp_path):
    """The spec is read before any check: a FIFO nobody writes (or a dead mount) must
    still end the run at the deadline, with exit 3 and what was in progress."""
    fifo = tmp_path / "spec.fifo"
    os.mkfifo(fifo)
    r = run_gpugate("--spec", str(fifo), "--deadline", "1", timeout=10)
    assert r.rc == 3, r
    assert r.seconds < 1.8, r.seconds
    assert "before any check ran" in r.err and f"reading the spec {fifo}" in r.err, r.err


def test_spec_from_a_pipe_still_works(tmp_path):
    """A spec from a pipe (--spec /dev/stdin, or a FIFO a writer fills later) is read
    as a file is."""
    root = dpkg_root(tmp_path, [stanza("libze1", "1.9.0-1")])
    r = run_gpugate("--spec", "/dev/stdin", "--root", str(root), "--format", "json",
                    input=PKG_SPEC, timeout=10)
    assert r.rc == 0 and r.check("packages.installed")["status"] == "pass", r
    fifo = tmp_path / "spec.fifo"
    os.mkfifo(fifo)

    def write_later():
        time.sleep(0.3)
        with open(fifo, "w") as f:
            f.write(PKG_SPEC)

    writer = threading.Thread(target=write_later)
    writer.start()
    r = run_gpugate("--spec", str(fifo), "--root", str(root), "--deadline", "5", timeout=10)
    writer.join()
    assert r.rc == 0, r


def test_spec_deadline_key_is_used(tmp_path):
    root = tmp_path / "root"
    os.makedirs(root / "var/lib/dpkg")
    write(str(root / "var/lib/dpkg/status"), "")
    spec = spec_file(tmp_path, "deadline: 300ms\n" + PKG_SPEC)
    r = run_gpugate("--spec", spec, "--root", str(root), timeout=10,
                    extra_env=hang_open_env("/var/lib/dpkg/status"))
    assert r.rc == 1 and r.seconds < 1.2 and "timed out" in r.out, r


def test_example_spec_and_profiles_are_valid():
    """checks/example.yaml documents every section: it must load (exit 0 or 1, never 3)."""
    here = os.path.dirname(os.path.abspath(__file__))
    example = os.path.join(here, "..", "..", "checks", "example.yaml")
    r = run_gpugate("check", "--spec", example, "--only", "packages", "--format", "json")
    assert r.rc in (0, 1), r
    for profile in ("healthcheck", "ci", "validate"):
        path = os.path.join(here, "..", "..", "checks", f"{profile}.yaml")
        # the built-in profiles' package pins come from checks/vendor/: system is in every profile
        r = run_gpugate("check", "--spec", path, "--only", "packages,system", "--format", "json")
        assert r.rc in (0, 1) and r.json()["profile"] == profile, r
