"""Every report format, checked by the consumer's own validator where one
runs here: JSON against checks/report.schema.json (python3-jsonschema),
JUnit against Jenkins xUnit's junit-10.xsd (xmllint --schema), Prometheus
with promtool; conftest.run_gpugate validates every JSON and JUnit report
any integration test produces (report_oracles.py)."""
import json
import os
import re
import signal
import subprocess
import time
import xml.etree.ElementTree as ET

import pytest

from conftest import GPUGATE, dpkg_root, finding_texts, run_gpugate, spec_file, stanza
from promtool import check_metrics
from report_oracles import JUNIT_XSD, validate_json_text, validate_junit_file

# Versions from a status file are text we do not control: XML, JSON and
# Prometheus escaping must survive it (and invalid UTF-8 must not leak). No
# ':' in it: dpkg refuses a version whose epoch is no number, and with it the
# whole database (lib/dpkg/fields.c f_version); these characters it only warns about.
HOSTILE = "1.0<&>\"'%,\\"
# What must never reach a terminal or an XML file raw: ANSI escapes, C1 CSI,
# bidi overrides, XML 1.0's forbidden U+FFFE/U+FFFF, line separators.
NASTY = "1.0\x1b[31mRED\u202eevil\u2066\uffff\ufffe\u2028\x9b2J"
FAKE = os.environ.get("GPUGATE_FAKE_ZE") or os.path.join(os.path.dirname(GPUGATE), "fakes", "libze_fake.so")


@pytest.fixture
def mixed(tmp_path):
    root = dpkg_root(tmp_path, [stanza("libze1", "1.17.0-1"), stanza("libbad", HOSTILE),
                                stanza("libutf", "1.0\udcff".encode("utf-8", "surrogateescape").decode("latin-1"))])
    spec = spec_file(tmp_path, "packages:\n  - libze1 (>= 1.17)\n  - libbad (>> 2.0)\n  - libutf (>= 3)\n")
    return ["--spec", spec, "--root", str(root)]


@pytest.fixture
def nasty(tmp_path):
    root = dpkg_root(tmp_path, [stanza("libnasty", NASTY)])
    spec = spec_file(tmp_path, "packages:\n  - libnasty (>= 9)\n")
    return ["--spec", spec, "--root", str(root)]


def assert_no_raw_controls(text, where):
    for bad in ("\x1b", "\u202e", "\u2066", "\uffff", "\ufffe", "\u2028", "\x9b"):
        assert bad not in text, f"{where}: raw {bad!r} in {text!r}"


def test_json_report_fields_and_schema(mixed):
    r = run_gpugate(*mixed, "--format", "json")
    assert r.rc == 1
    doc = validate_json_text(r.out, "stdout")
    assert doc["schema"] == "gpugate/v1" and doc["verdict"] == "fail" and doc["profile"] == "ci"
    assert re.fullmatch(r"\d+\.\d+\.\d+.*", doc["version"])
    assert doc["hostname"] == os.uname().nodename
    ts = time.mktime(time.strptime(doc["timestamp"], "%Y-%m-%dT%H:%M:%SZ")) - time.timezone
    assert abs(ts - time.time()) < 120, doc["timestamp"]
    assert re.fullmatch(r"sha256:[0-9a-f]{64}", doc["spec_digest"])
    c = r.check("packages.installed")
    assert any(HOSTILE in f for f in finding_texts(c))


def test_schema_rejects_a_broken_report(mixed):
    """The oracle can fail: a report missing a field or with a bad status is refused."""
    doc = run_gpugate(*mixed, "--format", "json").json()
    for broken in ({k: v for k, v in doc.items() if k != "spec_digest"},
                   dict(doc, checks=[dict(doc["checks"][0], status="ok")]),
                   dict(doc, timestamp="yesterday")):
        with pytest.raises(AssertionError):
            validate_json_text(json.dumps(broken), "broken")


def test_spec_digest_ignores_comments_and_follows_values(tmp_path):
    root = dpkg_root(tmp_path, [stanza("libze1", "1.17.0-1")])
    a = spec_file(tmp_path, "packages:\n  - libze1 (>= 1.17)\n", "a.yaml")
    b = spec_file(tmp_path, "# a comment\npackages: [ 'libze1 (>= 1.17)' ]\n", "b.yaml")
    c = spec_file(tmp_path, "packages:\n  - libze1 (>= 1.16)\n", "c.yaml")
    digest = {n: run_gpugate("--spec", p, "--root", str(root), "--format", "json").json()["spec_digest"]
              for n, p in (("a", a), ("b", b), ("c", c))}
    assert digest["a"] == digest["b"] != digest["c"]
    builtin = run_gpugate("--profile", "healthcheck", "--root", str(root), "--format", "json", "--only", "packages")
    assert builtin.json()["spec_digest"] not in digest.values()


def test_junit_validates_against_junit_10_xsd(mixed, tmp_path):
    out = tmp_path / "gpugate.xml"
    r = run_gpugate(*mixed, "--format", "junit", "--report", f"junit:{out}")
    assert r.rc == 1
    assert open(out).read() == r.out
    validate_junit_file(str(out))
    top = ET.parse(out).getroot()
    assert top.tag == "testsuites" and "skipped" not in top.attrib  # junit-10.xsd has no such attribute there
    suite = top.find("testsuite")
    for a in ("name", "tests", "failures", "errors", "skipped", "time", "timestamp", "hostname"):
        assert a in suite.attrib, a
    assert suite.get("tests") == "1" and suite.get("failures") == "1"
    case = suite.find("testcase")
    assert case.get("classname") == "packages" and case.get("name") == "packages.installed"
    failure = case.find("failure")
    assert failure is not None and "do not hold" in failure.get("message")
    assert HOSTILE in failure.text


def test_junit_schema_oracle_can_fail(tmp_path):
    bad = tmp_path / "bad.xml"
    bad.write_text('<testsuites skipped="1"><testsuite name="x" tests="1"/></testsuites>')
    p = subprocess.run(["xmllint", "--noout", "--schema", JUNIT_XSD, str(bad)], capture_output=True, text=True)
    assert p.returncode != 0


def test_junit_forbidden_characters_never_reach_the_file(nasty, tmp_path):
    out = tmp_path / "nasty.xml"
    r = run_gpugate(*nasty, "--report", f"junit:{out}", "--report", f"json:{tmp_path}/nasty.json")
    assert r.rc == 1
    raw = out.read_bytes().decode("utf-8")  # valid UTF-8
    assert_no_raw_controls(raw, "junit")
    assert "&#27;" not in raw and "&#xFFFF;" not in raw.upper()  # no forbidden references either
    validate_junit_file(str(out))
    p = subprocess.run(["xmllint", "--noout", str(out)], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    # shown, not hidden (C0 controls are '?' from the results on, result.c)
    assert "\\u{ffff}" in raw and "\\u{202e}" in raw and "\\u{009b}2J" in raw and "?[31mRED" in raw


def test_text_report_escapes_what_came_from_outside(nasty, tmp_path):
    r = run_gpugate(*nasty)
    assert r.rc == 1
    assert_no_raw_controls(r.out, "text")
    assert "?[31mRED\\u{202e}evil" in r.out


def test_text_report_forged_lines_and_bidi_from_environment(tmp_path):
    """HF_HOME is named in hf.location's summary: its newline cannot forge a
    PASS line, its ANSI and bidi controls are shown, not obeyed."""
    root = dpkg_root(tmp_path, [])
    hf_home = str(tmp_path) + "/x\nPASS  packages.installed: forged\x1b[2J\u202eevil"
    for fmt in ("text", "github"):
        r = run_gpugate("--root", str(root), "--only", "hf.location", "--format", fmt, "--verbose",
                        extra_env={"HF_HOME": hf_home, "HF_HUB_CACHE": ""})
        assert r.rc in (0, 1), r
        assert_no_raw_controls(r.out, fmt)
        assert not any(l.startswith("PASS  packages.installed") for l in r.out.splitlines()), r.out


def test_junit_skip(tmp_path):
    root = dpkg_root(tmp_path, [])
    spec = spec_file(tmp_path, "packages: []\n")
    r = run_gpugate("--spec", spec, "--root", str(root), "--format", "junit")
    case = ET.fromstring(r.out).find("testsuite").find("testcase")
    assert case.find("skipped") is not None and r.rc == 0


def parse_prom_strictly(text):
    """The text exposition format: HELP and TYPE before samples, names and
    label values well formed, every sample a float."""
    families, samples = {}, []
    for line in text.splitlines():
        if line.startswith("# HELP ") or line.startswith("# TYPE "):
            kind, name, rest = line[2:6], *line[7:].split(" ", 1)
            assert re.fullmatch(r"[a-zA-Z_:][a-zA-Z0-9_:]*", name)
            families.setdefault(name, {})[kind] = rest
            continue
        m = re.fullmatch(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_]\w*="(?:[^"\\\n]|\\.)*",?)*\})? (\S+)', line)
        assert m, f"bad sample line: {line!r}"
        assert m.group(1) in families and families[m.group(1)].get("TYPE") == "gauge"
        float(m.group(3))
        samples.append(m.group(1))
    return families, samples


def test_prom_textfile(mixed, tmp_path):
    out = tmp_path / "gpugate-ci.prom"
    r = run_gpugate(*mixed, "--format", "prom", "--report", f"prom:{out}")
    assert r.rc == 1
    text = open(out).read()
    families, samples = parse_prom_strictly(text)
    for name in ("gpugate_info", "gpugate_check_status", "gpugate_check_passed", "gpugate_check_duration_seconds",
                 "gpugate_healthy", "gpugate_last_run_timestamp_seconds"):
        assert name in samples, name
    assert re.search(r'^gpugate_info\{profile="ci",version="\d+\.\d+\.\d+[^"]*"\} 1$', text, re.M)
    assert re.search(r'^gpugate_check_passed\{profile="ci",id="packages.installed"\} 0$', text, re.M)
    assert re.search(r'^gpugate_check_status\{profile="ci",id="packages.installed",status="fail"\} 1$', text, re.M)
    assert re.search(r'^gpugate_check_status\{profile="ci",id="packages.installed",status="pass"\} 0$', text, re.M)
    assert re.search(r'^gpugate_healthy\{profile="ci"\} 0$', text, re.M)
    assert [p for p in os.listdir(tmp_path) if ".prom." in p] == []  # no temp left
    check_metrics(text)


def test_prom_skipped_check_is_not_passed(tmp_path):
    root = dpkg_root(tmp_path, [])
    spec = spec_file(tmp_path, "packages: []\n")
    r = run_gpugate("--spec", spec, "--root", str(root), "--format", "prom")
    assert 'gpugate_check_status{profile="ci",id="packages.installed",status="skip"} 1' in r.out
    assert "gpugate_check_passed{" not in r.out
    check_metrics(r.out)


def test_github_annotations_escape(mixed):
    r = run_gpugate(*mixed, "--format", "github")
    lines = r.out.splitlines()
    errors = [l for l in lines if l.startswith("::error ")]
    assert len(errors) == 1
    assert errors[0].startswith("::error title=packages.installed::")
    assert " \u2014 install" in errors[0]
    assert "\n" not in errors[0] and "%0A" in errors[0]  # multi-line remediation escaped
    assert lines[-1].startswith("gpugate: UNHEALTHY")


def test_github_step_summary_is_appended(mixed, tmp_path):
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    for _ in range(2):
        r = run_gpugate(*mixed, "--format", "github", extra_env={"GITHUB_STEP_SUMMARY": str(summary)})
        assert r.rc == 1
    text = summary.read_text()
    assert text.startswith("earlier step\n")
    assert text.count("gpugate: UNHEALTHY (profile ci)") == 2
    assert "| `packages.installed` | fail | 2 of 3 pinned package relations do not hold" in text
    assert "libbad:amd64 1.0&lt;&amp;&gt;\"'%,\\" in text  # findings, HTML-escaped
    # a table cell cannot be split by | or broken by a newline from the data
    rows = [l for l in text.splitlines() if l.startswith("| `packages.installed`")]
    assert all(len(re.findall(r"(?<!\\)\|", row)) == 5 for row in rows), rows


def test_github_summary_unwritable_keeps_the_verdict(mixed, tmp_path):
    r = run_gpugate(*mixed, "--format", "github", extra_env={"GITHUB_STEP_SUMMARY": f"{tmp_path}/no/such/summary.md"})
    assert r.rc == 1 and "cannot append the job summary" in r.err


def run_fake_loader_crash(tmp_path, fmt):
    if not os.path.exists(FAKE):
        pytest.fail(f"the fake driver {FAKE} is not built")
    spec = spec_file(tmp_path, "runtime:\n  backend: level-zero\n  smoke: true\n  timeout: 10s\n")
    xdg = tmp_path / "xdg"
    xdg.mkdir(mode=0o700, exist_ok=True)
    env = {"ZE_ENABLE_ALT_DRIVERS": FAKE, "GPUGATE_FAKE_FAULT": "crash_init", "XDG_RUNTIME_DIR": str(xdg),
           "ASAN_OPTIONS": (os.environ.get("ASAN_OPTIONS", "") + ":handle_segv=0").lstrip(":")}
    return run_gpugate("--spec", spec, "--deadline", "10", "--format", fmt, extra_env=env, timeout=30)


def test_blocked_checks_are_skips_naming_the_cause(tmp_path):
    r = run_fake_loader_crash(tmp_path, "json")
    assert r.rc == 1, r
    assert r.check("runtime.loader")["status"] == "fail"
    for cid in ("runtime.devices", "runtime.smoke"):
        c = r.check(cid)
        assert c["status"] == "skip" and c["summary"] == "not reached: runtime.loader failed", c
    text = run_fake_loader_crash(tmp_path, "text").out
    assert text.count("crashed with SIGSEGV in stage init") == 1, text  # each summary printed once
    gh = run_fake_loader_crash(tmp_path, "github").out
    errors = [l for l in gh.splitlines() if l.startswith("::error")]
    assert len(errors) == 1 and "also blocks runtime.devices, runtime.smoke" in errors[0], gh


def test_blocked_check_whose_cause_was_not_selected_fails(tmp_path):
    r = run_fake_loader_crash(tmp_path, "json")  # warm nothing; then run smoke alone
    spec = spec_file(tmp_path, "runtime:\n  backend: level-zero\n  smoke: true\n")
    env = {"ZE_ENABLE_ALT_DRIVERS": FAKE, "GPUGATE_FAKE_FAULT": "crash_init", "XDG_RUNTIME_DIR": str(tmp_path / "xdg"),
           "ASAN_OPTIONS": (os.environ.get("ASAN_OPTIONS", "") + ":handle_segv=0").lstrip(":")}
    r = run_gpugate("--spec", spec, "--only", "runtime.smoke", "--format", "json", extra_env=env, timeout=30)
    assert r.rc == 1, r
    c = r.check("runtime.smoke")
    assert c["status"] == "fail" and "not selected" in c["summary"], c


def test_verdict_line_names_failed_checks_in_80_bytes(tmp_path):
    root = dpkg_root(tmp_path, [])
    spec = spec_file(tmp_path, "profile: healthcheck\npackages:\n  - libnothere (>= 1)\n")
    r = run_gpugate("--spec", spec, "--root", str(root))
    first = r.out.splitlines()[0]
    assert first == "gpugate: UNHEALTHY (profile healthcheck): packages.installed", r.out
    r = run_fake_loader_crash(tmp_path, "text")
    first = r.out.encode().split(b"\n")[0]
    assert len(first) <= 80 and b"runtime.loader" in first, first


def test_quiet_verbose_and_color(mixed, tmp_path):
    q = run_gpugate(*mixed, "--quiet")
    assert q.rc == 1 and q.out.count("\n") == 1 and q.out.startswith("gpugate: UNHEALTHY (profile ci): packages.")
    root = dpkg_root(tmp_path / "ok", [stanza("libze1", "1.17.0-1")])
    spec = spec_file(tmp_path, "packages:\n  - libze1 (>= 1.17)\n", "ok.yaml")
    plain = run_gpugate("--spec", spec, "--root", str(root))
    verbose = run_gpugate("--spec", spec, "--root", str(root), "-v")
    assert plain.rc == verbose.rc == 0
    assert "libze1" in verbose.out.split("PASS  packages.installed", 1)[1] and len(verbose.out) > len(plain.out)
    assert "\033[" not in plain.out
    always = run_gpugate(*mixed, "--color=always")
    assert "\033[1;31mgpugate: UNHEALTHY" in always.out
    assert "\033[" not in run_gpugate(*mixed, "--color=always", "--report", f"text:{tmp_path}/t.txt").err
    assert "\033[" not in open(f"{tmp_path}/t.txt").read()  # a file never gets colour
    never = run_gpugate(*mixed, "--color", "never", extra_env={"NO_COLOR": ""})
    assert "\033[" not in never.out
    bad = run_gpugate(*mixed, "--color=sometimes")
    assert bad.rc == 3 and "--color" in bad.err
    both = run_gpugate(*mixed, "-q", "-v")
    assert both.rc == 3 and "contradict" in both.err


def test_no_color_env_on_a_terminal(mixed):
    """NO_COLOR (https://no-color.org) wins over a terminal; --color=always over NO_COLOR."""
    import pty
    def on_tty(*args, env):
        pid, fd = pty.fork()
        if pid == 0:
            os.execve(GPUGATE, [GPUGATE, *args], dict(os.environ, **env))
        import select
        out = b""
        deadline = time.monotonic() + 30
        try:
            while True:
                left = deadline - time.monotonic()
                assert left > 0, "gpugate on a pty did not finish in 30 s"
                if not select.select([fd], [], [], left)[0]:
                    continue
                try:
                    chunk = os.read(fd, 65536)
                except OSError:
                    break  # EIO: the child closed the pty
                if not chunk:
                    break
                out += chunk
        finally:
            os.close(fd)
            if os.waitpid(pid, os.WNOHANG) == (0, 0):
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
        return out.decode("utf-8", "replace")
    assert "\033[" in on_tty(*mixed, env={})
    assert "\033[" not in on_tty(*mixed, env={"NO_COLOR": "1"})
    assert "\033[" in on_tty(*mixed, "--color=always", env={"NO_COLOR": "1"})


def test_environment_defaults_and_options_win(tmp_path):
    root = dpkg_root(tmp_path, [stanza("libze1", "1.17.0-1")])
    spec = spec_file(tmp_path, "profile: validate\npackages:\n  - libze1 (>= 1.17)\n")
    r = run_gpugate("--root", str(root), "--format", "json", extra_env={"GPUGATE_SPEC": spec})
    assert r.rc == 0 and r.json()["profile"] == "validate" and [c["id"] for c in r.json()["checks"]] == ["packages.installed"]
    r = run_gpugate("--root", str(root), "--format", "json", "--only", "packages",
                    extra_env={"GPUGATE_PROFILE": "healthcheck"})
    assert r.json()["profile"] == "healthcheck"
    r = run_gpugate("--root", str(root), "--format", "json", "--profile", "ci", "--only", "packages",
                    extra_env={"GPUGATE_PROFILE": "healthcheck", "GPUGATE_SPEC": "/nonexistent.yaml"})
    assert r.rc in (0, 1) and r.json()["profile"] == "ci"  # the option wins over both variables
    for var, value in (("GPUGATE_PROFILE", "fastest"), ("GPUGATE_DEADLINE", "soon"), ("GPUGATE_DEADLINE", "-5")):
        r = run_gpugate("--root", str(root), extra_env={var: value})
        assert r.rc == 3 and var in r.err and value in r.err, r
    r = run_gpugate("--root", str(root), "--deadline", "5", "--only", "packages", extra_env={"GPUGATE_DEADLINE": "soon"})
    assert r.rc in (0, 1), r  # --deadline given: the variable is not read


def test_text_report(mixed):
    r = run_gpugate(*mixed)
    lines = r.out.splitlines()
    assert lines[0] == "gpugate: UNHEALTHY (profile ci): packages.installed"
    assert re.match(r"0 passed, 0 warnings, 1 failed, 0 skipped in \d+ ms$", lines[1])
    assert "\033[" not in r.out  # not a TTY: no colour
    assert "fix: install libbad" in r.out


def test_healthcheck_text_fits_docker(tmp_path):
    names = [f"libmissing-number-{i:04d}-with-a-long-name" for i in range(300)]
    root = dpkg_root(tmp_path, [])
    spec = spec_file(tmp_path, "profile: healthcheck\npackages:\n" +
                     "".join(f"  - {n} (>= 1.0)\n" for n in names))
    r = run_gpugate("--spec", spec, "--root", str(root))
    assert r.rc == 1
    assert len(r.out.encode()) <= 4096, len(r.out.encode())
    assert r.out.startswith("gpugate: UNHEALTHY (profile healthcheck)")
    # the same run in ci has no limit
    r = run_gpugate("--spec", spec, "--root", str(root), "--profile", "ci")
    assert len(r.out.encode()) > 4096


def test_several_reports_in_one_run(mixed, tmp_path):
    paths = {f: tmp_path / f"r.{f}" for f in ("json", "junit", "prom", "github", "text", "nfd")}
    args = [a for f, p in paths.items() for a in ("--report", f"{f}:{p}")]
    r = run_gpugate(*mixed, "--format", "json", *args)
    assert r.rc == 1
    assert json.load(open(paths["json"]))["verdict"] == "fail"
    assert all(os.path.getsize(p) > 0 for p in paths.values())


def test_unwritable_report_never_hides_unhealthy(mixed, tmp_path):
    r = run_gpugate(*mixed, "--report", f"json:{tmp_path}/no/such/dir/r.json")
    assert r.rc == 1 and "cannot write the json report" in r.err and "No such file" in r.err


def test_unwritable_report_of_a_healthy_run(tmp_path):
    root = dpkg_root(tmp_path, [stanza("libze1", "1.17.0-1")])
    spec = spec_file(tmp_path, "packages:\n  - libze1 (>= 1.17)\n")
    r = run_gpugate("--spec", spec, "--root", str(root), "--report", f"json:{tmp_path}/no/r.json")
    assert r.rc == 3 and "cannot write the json report" in r.err
    # Docker understands only 0 and 1: the healthcheck profile says 1
    r = run_gpugate("--spec", spec, "--root", str(root), "--profile", "healthcheck",
                    "--report", f"json:{tmp_path}/no/r.json")
    assert r.rc == 1 and "cannot write the json report" in r.err


def test_no_check_selected_is_a_usage_error(tmp_path):
    root = dpkg_root(tmp_path, [])
    empty = spec_file(tmp_path, "description: nothing\n", "empty.yaml")
    r = run_gpugate("--spec", empty, "--root", str(root))
    assert r.rc == 3 and "no check selected" in r.err, r
    spec = spec_file(tmp_path, "packages: []\n")
    r = run_gpugate("--spec", spec, "--root", str(root), "--only", "runtime")
    assert r.rc == 3 and "no check selected" in r.err, r


@pytest.mark.parametrize("fmt", ["text", "json", "junit"])
def test_sigpipe_keeps_reports_and_the_verdict(mixed, tmp_path, fmt):
    """`gpugate check | head -1`: the reader leaves before gpugate writes;
    gpugate is not killed by SIGPIPE, writes its --report files and exits
    with the verdict."""
    out = tmp_path / "r.json"
    read_end, write_end = os.pipe()
    os.close(read_end)  # nobody reads: the first write gets EPIPE
    p = subprocess.run([GPUGATE, *mixed, "--format", fmt, "--report", f"json:{out}"], stdout=write_end,
                       stderr=subprocess.PIPE, text=True, timeout=60,
                       preexec_fn=lambda: signal.signal(signal.SIGPIPE, signal.SIG_DFL))
    os.close(write_end)
    assert p.returncode == 1, (p.returncode, p.stderr)
    assert json.load(open(out))["verdict"] == "fail"
    assert "cannot write" not in p.stderr


def test_sigpipe_with_head(mixed, tmp_path):
    out = tmp_path / "r.junit"
    cmd = " ".join(f"'{a}'" for a in [GPUGATE, *mixed, "--verbose", "--report", f"junit:{out}"])
    p = subprocess.run(["bash", "-c", f"set -o pipefail; {cmd} | head -c 1 >/dev/null; echo ${{PIPESTATUS[0]}}"],
                       capture_output=True, text=True, timeout=60)
    assert p.stdout.strip() == "1", p
    validate_junit_file(str(out))


def test_spec_deadline_guards_reading_the_spec(tmp_path):
    """A spec fed slowly through a FIFO, whose deadline has passed by the
    time it is read, is refused at once rather than run late."""
    fifo = tmp_path / "spec.fifo"
    os.mkfifo(fifo)
    root = dpkg_root(tmp_path, [])
    proc = subprocess.Popen([GPUGATE, "--spec", str(fifo), "--root", str(root)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(1.5)
        with open(fifo, "w") as f:
            f.write("deadline: 1s\npackages: []\n")
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 3, (out, err)
    assert "past the deadline of 1 s it sets" in err, err


def test_kernel_log_scan_stopped_early_is_a_warning(tmp_path):
    """A kernel log larger than the scan's size cap (64 MiB, src/lib/kmsg.c)
    is not a pass: the check warns and says what it did not read."""
    root = dpkg_root(tmp_path, [])
    os.makedirs(root / "dev")
    line = b"6,1,1000,-;a harmless kernel message, padded to make the log long enough....\n"
    with open(root / "dev" / "kmsg", "wb") as f:
        f.write(line * ((65 << 20) // len(line) + 1))
    r = run_gpugate("--root", str(root), "--profile", "validate", "--only", "system.kernel_log", "--format", "json")
    c = r.check("system.kernel_log")
    assert r.rc == 0 and c["status"] == "warn", c
    assert "stopped early" in c["summary"] and "was not scanned" in c["summary"] and c["details"]["stopped_early"]


def test_bundle_environment_lines_cannot_be_forged(tmp_path):
    """environment.txt in the bundle: a value's newline, ANSI or bidi
    control is written escaped (src/lib/escape.h), one variable a line."""
    import tarfile
    out = tmp_path / "b.tar.gz"
    # a name on the bundle's allow-list (GPUGATE_*): its value is written
    env = dict(os.environ, GPUGATE_FORGED_VALUE="x\nPATH_LOOKS=forged\x1b[31m\u202eevil", HF_HOME=str(tmp_path / "hf"))
    p = subprocess.run([GPUGATE, "bundle", "-o", str(out)], env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    with tarfile.open(out, "r:gz") as t:
        text = t.extractfile("gpugate-bundle/environment.txt").read().decode("utf-8")
    assert_no_raw_controls(text, "environment.txt")
    assert "GPUGATE_FORGED_VALUE=x\\nPATH_LOOKS=forged" in text
    assert not any(l.startswith("PATH_LOOKS=") for l in text.splitlines())


def test_spec_error_quotes_outside_text_escaped(tmp_path):
    """A spec key with a bidi override is named in the error, escaped."""
    spec = tmp_path / "bad.yaml"
    spec.write_bytes("badkey\u202eevil: 1\n".encode())
    r = run_gpugate("--spec", str(spec))
    assert r.rc == 3 and "badkey\\u{202e}evil" in r.err and "\u202e" not in r.err, r
