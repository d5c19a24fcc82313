"""Specs that gate on every vendor (issue 17): the built-in profiles carry
the Intel package pins only on Intel (checks/vendor/intel.yaml, laid over by
src/profile.c), the vendor is detected (/dev/nvidiactl, /proc/driver/nvidia)
or given with --vendor, a spec may `extends:` a built-in profile and replace
only the sections it names, and every spec the project ships fails on a
root with no GPU, even one where all its packages are installed."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "lib"))
import debfixture  # noqa: E402
from report_oracles import finding_texts, validate_json_text  # noqa: E402

GPUGATE = os.environ.get("GPUGATE", str(REPO / "build" / "gpugate"))
BUILTIN = ("healthcheck", "ci", "validate")
SHIPPED = sorted(REPO.glob("checks/*.yaml")) + sorted(REPO.glob("images/*.yaml"))
VENDOR_PINS = sorted(REPO.glob("checks/vendor/*.yaml"))
INTEL_PINS = debfixture.spec_packages(REPO / "checks" / "vendor" / "intel.yaml")


def gate(*args, cwd=None):
    r = subprocess.run([GPUGATE, "check", *args], capture_output=True, text=True, timeout=60, cwd=cwd)
    return r


def report(*args):
    r = gate(*args, "--format", "json")
    assert r.returncode in (0, 1), f"exit {r.returncode}: {r.stderr}"
    doc = validate_json_text(r.stdout, " ".join(args))  # checks/report.schema.json
    return r.returncode, doc, {c["id"]: c for c in doc["checks"]}


def empty_root(tmp_path, packages=(), nvidia=False):
    """A root with no GPU, no /dev, no /sys: only a dpkg status that holds
    packages (fixture stanzas) and, for nvidia, the marks the NVIDIA
    Container Toolkit leaves (a regular file: no device behind it)."""
    root = tmp_path / "root"
    (root / "var/lib/dpkg").mkdir(parents=True)
    versions = debfixture.fixture_versions(list(packages))
    (root / "var/lib/dpkg/status").write_text(debfixture.stanzas(versions) if versions else "")
    if nvidia:
        (root / "dev").mkdir()
        (root / "dev/nvidiactl").write_text("")
    return root


def installed_findings(checks):
    return " ".join(finding_texts(checks["packages.installed"]))


def test_intel_pins_apply_on_intel_only(tmp_path):
    root = empty_root(tmp_path)
    for profile in BUILTIN:
        rc, doc, checks = report("--profile", profile, "--root", str(root))
        assert rc == 1 and doc["profile"] == profile
        assert "libze-intel-gpu1" in installed_findings(checks), profile
        # an NVIDIA root: no Intel pin, and the devices checks look for NVIDIA GPUs
        nv = empty_root(tmp_path / profile, nvidia=True)
        rc, doc, checks = report("--profile", profile, "--root", str(nv))
        assert rc == 1, f"{profile}: a root with no GPU passed"
        assert "packages.installed" not in checks, f"{profile}: Intel pins on an NVIDIA root"
        assert "NVIDIA" in checks["devices.gpus"]["remediation"] + checks["devices.gpus"]["summary"], checks["devices.gpus"]


def test_vendor_option_overrides_detection(tmp_path):
    nv = empty_root(tmp_path, nvidia=True)
    _, _, checks = report("--profile", "ci", "--root", str(nv), "--vendor", "intel")
    assert "libze1" in installed_findings(checks)
    plain = empty_root(tmp_path / "plain")
    _, _, checks = report("--profile", "ci", "--root", str(plain), "--vendor", "nvidia")
    assert "packages.installed" not in checks
    r = gate("--vendor", "amd")
    assert r.returncode == 3 and "--vendor: unknown vendor 'amd'" in r.stderr, r.stderr


def test_the_intel_stack_installed_passes_the_packages_check(tmp_path):
    root = empty_root(tmp_path, INTEL_PINS)
    _, _, checks = report("--profile", "healthcheck", "--root", str(root))
    assert checks["packages.installed"]["status"] == "pass"


def test_extends_replaces_only_the_sections_it_names(tmp_path):
    root = empty_root(tmp_path, ["coreutils (>= 9)"])
    spec = tmp_path / "mine.yaml"
    spec.write_text("extends: ci\npackages:\n  - coreutils (>= 9)\n")
    rc, doc, checks = report("--spec", str(spec), "--root", str(root))
    assert doc["profile"] == "ci"
    assert checks["packages.installed"]["status"] == "pass", checks["packages.installed"]
    # the sections it did not name are the profile's: devices, system, hf, runtime of ci
    _, _, ci = report("--profile", "ci", "--root", str(root))
    assert set(checks) == set(ci)
    assert rc == 1  # no GPU here
    # a spec naming only system keeps the profile's Intel pins
    spec.write_text("extends: healthcheck\nsystem:\n  kernel_log: false\n")
    _, doc, checks = report("--spec", str(spec), "--root", str(root))
    assert doc["profile"] == "healthcheck" and "libze1" in installed_findings(checks)


@pytest.mark.parametrize("text, words", [
    ("extends: cii\n", "mine.yaml:1:10: extends must be one of healthcheck|ci|validate, not 'cii'"),
    ("extends: [ci]\n", "mine.yaml:1:10: 'extends' must be a single value"),
])
def test_extends_errors_name_file_and_line(tmp_path, text, words):
    spec = tmp_path / "mine.yaml"
    spec.write_text(text)
    r = gate("--spec", str(spec))
    assert r.returncode == 3 and words in r.stderr, r.stderr


def spec_argv(path):
    name = path.relative_to(REPO)
    if path.parent == REPO / "checks" and path.stem in BUILTIN:
        return ["--profile", path.stem], name
    return ["--spec", str(path)], name


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: str(p.relative_to(REPO)))
def test_every_shipped_spec_fails_on_an_empty_root(path, tmp_path):
    argv, name = spec_argv(path)
    doc = yaml.safe_load(path.read_text())
    nvidia = (doc.get("devices") or {}).get("vendor") == "nvidia"
    # nothing at all
    rc, report_doc, checks = report(*argv, "--root", str(empty_root(tmp_path / "bare", nvidia=nvidia)))
    assert rc == 1 and report_doc["verdict"] == "fail", f"{name}: exit {rc} on an empty root"
    # every package it pins installed, still no GPU: devices or runtime must fail
    root = empty_root(tmp_path / "pkgs", debfixture.spec_packages(path), nvidia=nvidia)
    rc, report_doc, checks = report(*argv, "--root", str(root))
    failed = sorted(i for i, c in checks.items() if c["status"] == "fail")
    assert rc == 1, f"{name}: HEALTHY with its packages installed and no GPU"
    assert all(c["status"] == "pass" for i, c in checks.items() if i.startswith("packages.")), checks
    assert any(i.startswith(("devices.", "runtime.")) for i in failed), f"{name}: only {failed} failed"


@pytest.mark.parametrize("path", VENDOR_PINS, ids=lambda p: p.name)
def test_vendor_pins_fail_on_an_empty_root(path, tmp_path):
    """checks/vendor/*.yaml hold packages only (laid over a profile); as a
    spec of its own each still fails where none of its packages is."""
    rc, doc, checks = report("--spec", str(path), "--root", str(empty_root(tmp_path)))
    assert rc == 1 and checks["packages.installed"]["status"] == "fail"
