"""workflows/*.yml: yamllint (with the repository's config) passes, and each
workflow does what the project promises: job timeouts, the gate's gpugate
command is one the built binary accepts and whose reports are valid, the
test step runs only when the gate passed, reports are uploaded always."""
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "lib"))
import dockerfile  # noqa: E402

GPUGATE = os.environ.get("GPUGATE", str(REPO / "build" / "gpugate"))
WORKFLOWS = sorted((REPO / "workflows").glob("*.yml"))
YAMLLINT_CONFIG = REPO / "workflows" / ".yamllint"
GATES = [p for p in WORKFLOWS if p.name.endswith("-pretest-gate.yml")]


def load(path):
    doc = yaml.safe_load(path.read_text())
    # YAML 1.1 reads the key `on` as true; GitHub reads it as "on".
    if True in doc:
        doc["on"] = doc.pop(True)
    return doc


def yamllint(*paths):
    assert shutil.which("yamllint"), "yamllint is missing (.ci/install-deps installs it)"
    return subprocess.run(["yamllint", "--strict", "-f", "parsable", "-c", str(YAMLLINT_CONFIG), *map(str, paths)],
                          capture_output=True, text=True, timeout=60)


def image_specs():
    """/etc/gpugate/... -> repository file, from every Dockerfile's COPY lines."""
    out = {}
    for df in (REPO / "images").glob("*.Dockerfile"):
        for inst in dockerfile.stages(dockerfile.parse(df.read_text()))[-1]:
            if inst.name == "COPY" and "from" not in inst.flags:
                words = shlex.split(inst.rest)
                if words[-1].startswith("/etc/gpugate/"):
                    out[words[-1]] = REPO / words[0]
    return out


def gate_steps(doc):
    for job in doc["jobs"].values():
        steps = job["steps"]
        gate = [s for s in steps if s.get("id") == "gate"]
        yield job, steps, gate[0] if gate else None


def test_workflows_exist():
    assert {p.name for p in WORKFLOWS} >= {"ci.yml", "xpu-pretest-gate.yml", "cuda-pretest-gate.yml"}


def test_yamllint_passes_on_every_workflow():
    r = yamllint(*WORKFLOWS)
    assert r.returncode == 0, r.stdout + r.stderr


def test_yamllint_config_still_catches_problems(tmp_path):
    bad = tmp_path / "bad.yml"
    bad.write_text("on:\n  push:\njobs:\n  a:\n    runs-on: x\n    runs-on: y  \n    if: yes\n"
                   "    name: " + "x" * 130 + "\n")
    r = yamllint(bad)
    assert r.returncode != 0
    for rule in ("key-duplicates", "trailing-spaces", "truthy", "line-length"):
        assert f"({rule})" in r.stdout, (rule, r.stdout)
    assert ":1:" not in r.stdout, "the `on:` key must not be flagged: " + r.stdout


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_every_job_has_a_timeout(path):
    doc = load(path)
    assert doc["on"], f"{path.name}: no triggers"
    for name, job in doc["jobs"].items():
        t = job.get("timeout-minutes")
        assert isinstance(t, int) and 0 < t <= 180, f"{path.name}: job {name}: timeout-minutes {t!r}"


def test_ci_builds_and_tests_on_ubuntu_2404():
    doc = load(REPO / "workflows" / "ci.yml")
    assert "push" in doc["on"] and "pull_request" in doc["on"]
    runs = {n: " ".join(s.get("run", "") for s in j["steps"]) for n, j in doc["jobs"].items()}
    assert all(j["runs-on"] == "ubuntu-24.04" for j in doc["jobs"].values())
    assert any("make test" in r for r in runs.values())
    assert any("SANITIZE=1" in r for r in runs.values())
    assert all(".ci/install-deps" in r for r in runs.values())


@pytest.mark.parametrize("path", GATES, ids=lambda p: p.name)
def test_gate_structure(path):
    doc = load(path)
    assert {"workflow_call", "workflow_dispatch"} <= set(doc["on"])
    for trigger in ("workflow_call", "workflow_dispatch"):
        assert "test-command" in doc["on"][trigger]["inputs"]
    for job, steps, gate in gate_steps(doc):
        assert gate is not None, f"{path.name}: no step with id: gate"
        assert "self-hosted" in job["runs-on"]
        runs = [s for s in steps if "run" in s]
        assert runs[0] is gate, "the gate is the first command of the job"
        matrix = job["strategy"]["matrix"]
        total = matrix["total-partitions"]
        assert len(total) == 1 and matrix["partition-id"] == list(range(1, total[0] + 1))
        assert job["env"]["PARTITION_ID"] == "${{ matrix.partition-id }}"
        assert job["env"]["TOTAL_PARTITIONS"] == "${{ matrix.total-partitions }}"
        test = runs[1]
        assert test["if"].replace(" ", "") == "steps.gate.outcome=='success'"
        assert test["run"] == "${{ inputs.test-command }}"
        upload = [s for s in steps if str(s.get("uses", "")).startswith("actions/upload-artifact@")]
        assert upload and upload[0]["if"] == "always()"
        assert set(upload[0]["with"]["path"].split()) == {"gpugate.xml", "gpugate.json"}
        assert "${{ matrix.partition-id }}" in upload[0]["with"]["name"], "one artifact per partition"
        assert "/.cache/huggingface" in job["container"]["options"]


def test_xpu_gate_mounts_what_the_image_needs():
    doc = load(REPO / "workflows" / "xpu-pretest-gate.yml")
    job = doc["jobs"]["xpu-test"]
    opts = job["container"]["options"].replace("${{ ", "${{").replace(" }}", "}}").split()
    assert opts[opts.index("--device") + 1] == "/dev/dri"
    assert "/dev/dri/by-path:/dev/dri/by-path" in opts
    assert opts[opts.index("--group-add") + 1] == "${{inputs.render-gid}}"
    gate = next(s for s in job["steps"] if s.get("id") == "gate")
    assert gate["run"] == ("gpugate check --profile ci --format github "
                           "--report junit:gpugate.xml --report json:gpugate.json")


@pytest.mark.parametrize("path", GATES, ids=lambda p: p.name)
def test_gate_command_runs_and_writes_valid_reports(path, tmp_path):
    """The gate's exact command, run by the built binary against an empty
    fixture root: the options exist (not exit 3), the verdict is unhealthy
    (nothing is installed there), GitHub annotations on stdout, and both
    report files are valid (xmllint, json)."""
    specs = image_specs()
    for _job, _steps, gate in gate_steps(load(path)):
        argv = shlex.split(gate["run"])
        assert argv[:2] == ["gpugate", "check"]
        for i, w in enumerate(argv):
            if w == "--spec":
                assert argv[i + 1] in specs, f"{argv[i + 1]} is not in any image"
                argv[i + 1] = str(specs[argv[i + 1]])
        root = tmp_path / "root"
        (root / "var/lib/dpkg").mkdir(parents=True)
        (root / "var/lib/dpkg/status").write_text("")
        r = subprocess.run([GPUGATE] + argv[1:] + ["--root", str(root)], cwd=tmp_path,
                           capture_output=True, text=True, timeout=90)
        assert r.returncode == 1, f"exit {r.returncode}: {r.stderr}"
        assert r.stdout.startswith("::error title=packages."), r.stdout
        subprocess.run(["xmllint", "--noout", str(tmp_path / "gpugate.xml")], check=True)
        report = json.loads((tmp_path / "gpugate.json").read_text())
        assert report["schema"] == "gpugate/v1" and report["verdict"] == "fail"
