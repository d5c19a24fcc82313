"""Every report format, checked by a parser or tool nobody here wrote."""
import json
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET

import pytest

from conftest import dpkg_root, run_gpugate, spec_file, stanza

# Versions from a status file are text we do not control: XML, JSON and
# Prometheus escaping must survive it (and invalid UTF-8 must not leak).
HOSTILE = "1.0<&>\"'%:,\\"


@pytest.fixture
def mixed(tmp_path):
    root = dpkg_root(tmp_path, [stanza("libze1", "1.17.0-1"), stanza("libbad", HOSTILE),
                                stanza("libutf", "1.0\udcff".encode("utf-8", "surrogateescape").decode("latin-1"))])
    spec = spec_file(tmp_path, "packages:\n  - libze1 (>= 1.17)\n  - libbad (>> 2.0)\n  - libutf (>= 3)\n")
    return ["--spec", spec, "--root", str(root)]


def test_json_schema_is_exact(mixed):
    r = run_gpugate(*mixed, "--format", "json")
    doc = r.json()
    assert r.rc == 1
    assert set(doc) == {"schema", "verdict", "profile", "duration_ms", "checks"}
    assert doc["schema"] == "gpugate/v1" and doc["verdict"] == "fail" and doc["profile"] == "ci"
    assert isinstance(doc["duration_ms"], (int, float)) and doc["duration_ms"] >= 0
    for c in doc["checks"]:
        assert {"id", "status", "summary", "duration_ms"} <= set(c)
        assert set(c) <= {"id", "status", "summary", "remediation", "duration_ms", "details"}
        assert c["status"] in ("pass", "warn", "fail", "skip")
    c = r.check("packages.installed")
    assert any(HOSTILE in f for f in c["details"]["findings"])


def test_junit_is_valid_xml(mixed, tmp_path):
    out = tmp_path / "gpugate.xml"
    r = run_gpugate(*mixed, "--format", "junit", "--report", f"junit:{out}")
    assert r.rc == 1
    assert open(out).read() == r.out
    lint = subprocess.run(["xmllint", "--noout", str(out)], capture_output=True, text=True)
    assert lint.returncode == 0, lint.stderr
    suite = ET.parse(out).getroot().find("testsuite")
    assert suite.get("tests") == "1" and suite.get("failures") == "1"
    failure = suite.find("testcase").find("failure")
    assert failure is not None and "do not hold" in failure.get("message")
    assert HOSTILE in failure.text


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
    out = tmp_path / "gpugate.prom"
    r = run_gpugate(*mixed, "--format", "prom", "--report", f"prom:{out}")
    text = open(out).read()
    families, samples = parse_prom_strictly(text)
    for name in ("gpugate_check_passed", "gpugate_check_duration_seconds", "gpugate_healthy",
                 "gpugate_last_run_timestamp_seconds"):
        assert name in samples
    assert re.search(r'^gpugate_check_passed\{id="packages.installed"\} 0$', text, re.M)
    assert re.search(r"^gpugate_healthy 0$", text, re.M)
    assert [p for p in os.listdir(tmp_path) if p.startswith("gpugate.prom.")] == []  # no temp left
    promtool = shutil.which("promtool")
    if promtool:
        p = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True)
        assert p.returncode == 0, p.stdout + p.stderr


def test_github_annotations_escape(mixed):
    r = run_gpugate(*mixed, "--format", "github")
    lines = r.out.splitlines()
    errors = [l for l in lines if l.startswith("::error ")]
    assert len(errors) == 1
    assert errors[0].startswith("::error title=packages.installed::")
    assert " \u2014 install" in errors[0]
    assert "\n" not in errors[0] and "%0A" in errors[0]  # multi-line remediation escaped
    assert lines[-1].startswith("gpugate: UNHEALTHY")


def test_text_report(mixed):
    r = run_gpugate(*mixed)
    first = r.out.splitlines()[0]
    assert re.match(r"gpugate: UNHEALTHY \(profile ci\): 0 passed, 0 warnings, 1 failed, 0 skipped in \d+ ms", first)
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
    paths = {f: tmp_path / f"r.{f}" for f in ("json", "junit", "prom", "github", "text")}
    args = [a for f, p in paths.items() for a in ("--report", f"{f}:{p}")]
    r = run_gpugate(*mixed, "--format", "json", *args)
    assert r.rc == 1
    assert json.load(open(paths["json"]))["verdict"] == "fail"
    assert all(os.path.getsize(p) > 0 for p in paths.values())


def test_unwritable_report_path(mixed, tmp_path):
    r = run_gpugate(*mixed, "--report", f"json:{tmp_path}/no/such/dir/r.json")
    assert r.rc == 3 and "cannot write the json report" in r.err and "No such file" in r.err
