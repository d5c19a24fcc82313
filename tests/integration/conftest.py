"""Shared helpers for the integration tests: they drive the built binary
(path in $GPUGATE) against fixture roots that the tests create."""
import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import fix_safety  # noqa: E402
from report_oracles import finding_codes, finding_texts  # noqa: E402,F401 (for the tests)
# Cases decided against the real implementation, per area (issue 28): the
# exactness tests add to it, and the run's summary prints it.
EXACT_CASES = {"dpkg status": 0, "relations/provides": 0, "token file": 0, "cache links": 0}


def pytest_terminal_summary(terminalreporter):
    if any(EXACT_CASES.values()):
        terminalreporter.write_line("exactness cases agreeing with the real implementation: " +
                                    ", ".join(f"{area} {n}" for area, n in EXACT_CASES.items()))


GPUGATE = os.environ.get("GPUGATE") or os.path.join(
    os.path.dirname(__file__), "..", "..", "build", "gpugate")

# gpugate's state folder (the probe cache, the verified-blob record of hf
# verify) is XDG_RUNTIME_DIR/gpugate, else /run/gpugate: a run that names none
# gets this session's own, so that no test writes under the host's /run.
STATE_DIR = tempfile.mkdtemp(prefix="gpugate-state-")
atexit.register(shutil.rmtree, STATE_DIR, True)
os.environ.setdefault("XDG_RUNTIME_DIR", STATE_DIR)


# Every fix text a test made gpugate print (JSON `remediation`, text `fix:`
# lines), each checked by fix_safety when it is read: a dangerous one fails
# the test that produced it.
FIX_TEXTS = []


def fix_texts(out):
    """The fix texts of one run's stdout: a JSON report's remediations, or
    the text report's `fix:` lines."""
    try:
        report = json.loads(out)
    except (ValueError, TypeError):
        report = None
    if isinstance(report, dict) and isinstance(report.get("checks"), list):
        return [c["remediation"] for c in report["checks"]
                if isinstance(c, dict) and isinstance(c.get("remediation"), str)]
    return [line.strip()[len("fix:"):].strip() for line in (out or "").splitlines()
            if line.strip().startswith("fix:")]


def record_fixes(out):
    for fix in fix_texts(out):
        FIX_TEXTS.append(fix)
        bad = fix_safety.problems(fix)
        assert not bad, f"a fix gpugate printed is dangerous to paste ({'; '.join(bad)}): {fix}"


class Run:
    def __init__(self, proc, seconds):
        self.rc = proc.returncode
        self.out = proc.stdout
        self.err = proc.stderr
        self.seconds = seconds
        record_fixes(self.out if isinstance(self.out, str) else "")

    def json(self):
        return json.loads(self.out)

    def check(self, check_id):
        for c in self.json()["checks"]:
            if c["id"] == check_id:
                return c
        raise AssertionError(f"no check {check_id} in {self.out}")

    def __repr__(self):
        return f"rc={self.rc}\nstdout:\n{self.out}\nstderr:\n{self.err}"


def run_gpugate(*args, env=None, timeout=60, input=None, extra_env=None):
    """Runs gpugate; never lets a hang pass unnoticed (timeout raises)."""
    e = dict(os.environ if env is None else env)
    if extra_env:
        e.update(extra_env)
    e.setdefault("XDG_RUNTIME_DIR", STATE_DIR)
    t0 = time.monotonic()
    proc = subprocess.run([GPUGATE, *args], capture_output=True, text=True,
                          env=e, timeout=timeout, input=input, errors="replace")
    r = Run(proc, time.monotonic() - t0)
    assert r.rc >= 0, f"gpugate died of signal {-r.rc}: {r}"
    assert r.rc != 2, f"gpugate exited 2 (reserved by Docker): {r}"
    # every JSON and JUnit report a test makes is checked by the consumers' validators
    from report_oracles import check_reports
    check_reports(args, r.rc, r.out)
    return r


def hang_open_env(path_part):
    """Environment that makes gpugate's open(2) of any path containing
    path_part block forever (tests/fakes/hang_open.c, LD_PRELOAD): a dead
    mount, for the deadline tests (a planted FIFO is refused at once)."""
    lib = os.path.join(os.path.dirname(os.path.abspath(GPUGATE)), "fakes", "libhang_open.so")
    assert os.path.exists(lib), f"{lib} missing: make {os.path.relpath(lib)}"
    asan = os.environ.get("ASAN_OPTIONS", "")
    # the sanitizer runtime wants to come first; the shim only wraps open
    return {"LD_PRELOAD": lib, "GPUGATE_HANG_PATH": path_part,
            "ASAN_OPTIONS": (asan + ":" if asan else "") + "verify_asan_link_order=0"}


def write(path, text, mode=None):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w" if isinstance(text, str) else "wb") as f:
        f.write(text)
    if mode is not None:
        os.chmod(path, mode)
    return path


def stanza(name, version, arch="amd64", state="installed"):
    want = "install" if state == "installed" else "deinstall"
    # dpkg refuses a database whose triggers states have no triggers (lib/dpkg/parse.c pkg_parse_verify)
    triggers = {"triggers-pending": "Triggers-Pending: /usr/share/x\n",
                "triggers-awaited": "Triggers-Awaited: other\n"}.get(state, "")
    return (f"Package: {name}\nStatus: {want} ok {state}\nPriority: optional\n"
            f"Architecture: {arch}\nVersion: {version}\n{triggers}Description: test fixture\n"
            f" more text\n")


def dpkg_root(tmp_path, stanzas, native="amd64"):
    """A root whose dpkg database holds the given stanzas (and dpkg itself)."""
    root = tmp_path / "root"
    body = stanza("dpkg", "1.21.22", native) + "\n" + "\n".join(stanzas)
    write(str(root / "var/lib/dpkg/status"), body)
    return root


def spec_file(tmp_path, text, name="spec.yaml"):
    return write(str(tmp_path / name), text)


@pytest.fixture
def gpugate():
    return run_gpugate


@pytest.fixture
def hub():
    """A Hugging Face hub stand-in on 127.0.0.1 (provision_hub.py), closed after the test."""
    from provision_hub import Hub
    h = Hub()
    yield h
    h.close()
