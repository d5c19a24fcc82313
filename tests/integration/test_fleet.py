"""Fleet outputs, each against the consumer that reads it:
- the Prometheus textfile, scraped from the real node_exporter (Debian
  prometheus-node-exporter) started here on a loopback port;
- node-feature-discovery's local feature file (prefix, expiry, label rules);
- node-problem-detector's custom plugin config (images/fleet/npd-gpugate.json),
  checked against NPD's own config fields, and its first output line;
- the Kubernetes DaemonSet (images/fleet/daemonset.yaml), validated with
  python3-jsonschema against the standalone JSON schema of apps/v1 DaemonSet
  of Kubernetes v1.31.0 (tests/schemas/daemonset-apps-v1.k8s-1.31.0.json,
  from redacid/k8s-json-scheme v1.31.0-standalone-strict/daemonset-apps-v1.json
  at commit 200801bf30a49e61e08d34dfaab274f4922741af, a copy of the
  yannh/kubernetes-json-schema output; kubectl cannot validate without a
  cluster), plus the fields gpugate depends on."""
import datetime
import json
import os
import re
import shutil
import socket
import subprocess
import time
import urllib.request

import pytest

from conftest import GPUGATE, dpkg_root, run_gpugate, spec_file, stanza

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
DAEMONSET = os.path.join(REPO, "images", "fleet", "daemonset.yaml")
NPD_CONFIG = os.path.join(REPO, "images", "fleet", "npd-gpugate.json")
DAEMONSET_SCHEMA = os.path.join(REPO, "tests", "schemas", "daemonset-apps-v1.k8s-1.31.0.json")
NODE_EXPORTER = shutil.which("prometheus-node-exporter") or shutil.which("node_exporter")


def fixture_root(tmp_path, version):
    root = dpkg_root(tmp_path, [stanza("libze1", version)])
    spec = spec_file(tmp_path, "packages:\n  - libze1 (>= 1.17)\n")
    features = tmp_path / "features.d"
    features.mkdir()
    return root, spec, features


def parse_nfd(text):
    """NFD's local source format (source/local/local.go): '# +expiry-time='
    directives, comments, name=value lines."""
    expiry, labels = None, {}
    for line in text.splitlines():
        if line.startswith("# +"):
            key, _, value = line[3:].partition("=")
            assert key == "expiry-time", line
            expiry = datetime.datetime.strptime(value.strip(), "%Y-%m-%dT%H:%M:%SZ").replace(
                tzinfo=datetime.timezone.utc)
            continue
        if line.startswith("#") or not line.strip():
            continue
        name, _, value = line.partition("=")
        labels[name] = value
    return expiry, labels


LABEL_NAME = re.compile(r"(?:[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)"
                        r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?")
LABEL_VALUE = re.compile(r"(|[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)")


@pytest.mark.parametrize("version,rc,healthy", [("1.17.2-1", 0, "true"), ("1.8.0-1", 1, "false")])
def test_nfd_labels(tmp_path, version, rc, healthy):
    root, spec, features = fixture_root(tmp_path, version)
    path = features / "gpugate"
    r = run_gpugate("--spec", spec, "--root", str(root), "--report", f"nfd:{path}")
    assert r.rc == rc, r
    expiry, labels = parse_nfd(path.read_text())
    assert labels == {"feature.node.kubernetes.io/gpugate.healthy": healthy,
                      "feature.node.kubernetes.io/gpugate.profile": "ci"}
    now = datetime.datetime.now(datetime.timezone.utc)
    assert now + datetime.timedelta(minutes=8) < expiry < now + datetime.timedelta(minutes=12), expiry
    for name, value in labels.items():  # Kubernetes label rules (apimachinery validation)
        assert LABEL_NAME.fullmatch(name) and len(name.split("/")[0]) <= 253, name
        assert LABEL_VALUE.fullmatch(value), value
    assert os.listdir(features) == ["gpugate"]  # no temp file left behind
    # stdout too, for a wrapper script that places the file itself
    r = run_gpugate("--spec", spec, "--root", str(root), "--format", "nfd", "--profile", "healthcheck")
    assert r.rc == rc and f"feature.node.kubernetes.io/gpugate.healthy={healthy}\n" in r.out, r


def test_nfd_prefix_and_expiry_from_option_and_spec(tmp_path):
    root, _, features = fixture_root(tmp_path, "1.17.2-1")
    spec = spec_file(tmp_path, "packages:\n  - libze1 (>= 1.17)\nreports:\n  nfd_prefix: gpu.example.com\n"
                     "  nfd_expiry: 2m\n", "prefixed.yaml")
    r = run_gpugate("--spec", spec, "--root", str(root), "--format", "nfd")
    expiry, labels = parse_nfd(r.out)
    assert set(labels) == {"gpu.example.com/gpugate.healthy", "gpu.example.com/gpugate.profile"}, r.out
    now = datetime.datetime.now(datetime.timezone.utc)
    assert now < expiry < now + datetime.timedelta(minutes=3)
    r = run_gpugate("--spec", spec, "--root", str(root), "--format", "nfd", "--nfd-prefix", "other.example.org/")
    assert "other.example.org/gpugate.healthy=true" in r.out  # the option wins
    for bad in ("Upper.Case/", "example.com//", "-bad.com", "kubernetes.io", "x.k8s.io/"):
        r = run_gpugate("--spec", spec, "--root", str(root), "--nfd-prefix", bad)
        assert r.rc == 3 and "--nfd-prefix" in r.err, (bad, r)


@pytest.mark.skipif(not shutil.which("strace"), reason="strace not installed")
def test_nfd_writes_a_dot_file_then_renames(tmp_path):
    root, spec, features = fixture_root(tmp_path, "1.17.2-1")
    log = tmp_path / "strace.log"
    proc = subprocess.run(["strace", "-f", "-o", str(log), "-e", "trace=openat,rename,renameat,renameat2",
                           GPUGATE, "--spec", spec, "--root", str(root),
                           "--report", f"nfd:{features}/gpugate"], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, ASAN_OPTIONS="detect_leaks=0"))  # LSan cannot ptrace under strace
    assert proc.returncode == 0, proc.stderr
    trace = log.read_text()
    assert f"{features}/.gpugate." in trace, trace  # a hidden temp name: NFD skips dot files
    assert re.search(r"rename(at2?)?\(.*\.gpugate\..*gpugate\"?.*= 0", trace), trace


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class NodeExporter:
    """The real node_exporter, textfile collector only, on a loopback port."""

    def __init__(self, folder, log):
        self.port = free_port()
        self.log = open(log, "w")
        self.proc = subprocess.Popen([NODE_EXPORTER, f"--web.listen-address=127.0.0.1:{self.port}",
                                      "--collector.disable-defaults", "--collector.textfile",
                                      f"--collector.textfile.directory={folder}"],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 15
        while True:
            try:
                self.scrape()
                return
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise AssertionError(f"node_exporter did not start: {open(log).read()}")
                time.sleep(0.1)

    def scrape(self):
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=5) as resp:
            assert resp.status == 200
            return resp.read().decode()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


@pytest.fixture
def node_exporter(tmp_path):
    assert NODE_EXPORTER, "prometheus-node-exporter missing (.ci/install-deps installs it)"
    folder = tmp_path / "textfile"
    folder.mkdir()
    log = tmp_path / "node_exporter.log"
    ne = NodeExporter(folder, log)
    try:
        yield ne, folder, log
    finally:
        ne.stop()


def write_profiles(tmp_path, folder, names):
    root = dpkg_root(tmp_path, [stanza("libze1", "1.8.0-1")])
    for profile, file in names:
        spec = spec_file(tmp_path, f"profile: {profile}\npackages:\n  - libze1 (>= 1.17)\n", f"{profile}.yaml")
        r = run_gpugate("--spec", spec, "--root", str(root), "--quiet", "--report", f"prom:{folder}/{file}")
        assert r.rc == 1, r


def test_node_exporter_scrapes_both_profiles(tmp_path, node_exporter):
    ne, folder, log = node_exporter
    write_profiles(tmp_path, folder, [("healthcheck", "gpugate-healthcheck.prom"),
                                      ("validate", "gpugate-validate.prom")])
    text = ne.scrape()
    assert re.search(r"^node_textfile_scrape_error 0$", text, re.M), text
    for profile in ("healthcheck", "validate"):
        assert f'gpugate_healthy{{profile="{profile}"}} 0' in text, text
        assert f'gpugate_check_status{{id="packages.installed",profile="{profile}",status="fail"}} 1' in text
        assert re.search(rf'^gpugate_info{{profile="{profile}",version="[^"]+"}} 1$', text, re.M)
    assert "was collected before" not in open(log).read()


def test_node_exporter_drops_colliding_files(tmp_path, node_exporter):
    """The oracle can fail: two files of one profile define the same series,
    and node_exporter drops them (why each profile needs its own file)."""
    ne, folder, log = node_exporter
    write_profiles(tmp_path, folder, [("healthcheck", "gpugate-a.prom")])
    write_profiles(tmp_path / "b", folder, [("healthcheck", "gpugate-b.prom")])
    ne.scrape()
    deadline = time.monotonic() + 5
    while "was collected before with the same name and label values" not in open(log).read():
        assert time.monotonic() < deadline, open(log).read()
        time.sleep(0.1)


def test_prom_textfile_promtool(tmp_path):
    root, spec, features = fixture_root(tmp_path, "1.8.0-1")
    r = run_gpugate("--spec", spec, "--root", str(root), "--report", f"prom:{features}/gpugate-ci.prom")
    assert r.rc == 1
    text = (features / "gpugate-ci.prom").read_text()
    assert 'gpugate_check_passed{profile="ci",id="packages.installed"} 0' in text
    assert 'gpugate_healthy{profile="ci"} 0' in text
    assert os.listdir(features) == ["gpugate-ci.prom"]
    promtool = shutil.which("promtool")
    assert promtool, "promtool missing (.ci/install-deps installs prometheus)"
    p = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stdout + p.stderr


def test_unwritable_report_folder_is_named(tmp_path):
    root, spec, _ = fixture_root(tmp_path, "1.17.2-1")
    r = run_gpugate("--spec", spec, "--root", str(root), "--report", f"nfd:{tmp_path}/missing/gpugate")
    assert r.rc == 3, r
    assert f"cannot write the nfd report to {tmp_path}/missing/gpugate: No such file or directory" in r.err


# node-problem-detector's config fields, from its source (kubernetes/node-problem-detector
# at commit 6632ca67148f7a23df9cdbd98d9e89b388561a3a): pkg/custompluginmonitor/types/config.go
# (CustomPluginConfig, pluginGlobalConfig), types.go (CustomRule), pkg/types/types.go (Condition).
NPD_TOP = {"plugin", "pluginConfig", "source", "conditions", "rules", "metricsReporting"}
NPD_GLOBAL = {"invoke_interval", "timeout", "max_output_length", "concurrency",
              "enable_message_change_based_condition_update", "skip_initial_status"}
NPD_RULE = {"type", "condition", "reason", "path", "args", "timeout", "invoke_interval"}
NPD_CONDITION = {"type", "status", "transition", "reason", "message"}
GO_DURATION = re.compile(r"(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+")


def go_seconds(text):
    units = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600}
    return sum(float(n) * units[u] for n, _, u in re.findall(r"(\d+(\.\d+)?)(ns|us|µs|ms|s|m|h)", text))


def test_npd_config_follows_npd_fields():
    cfg = json.load(open(NPD_CONFIG))
    assert set(cfg) <= NPD_TOP and cfg["plugin"] == "custom"  # Validate(): only "custom"
    glob = cfg["pluginConfig"]
    assert set(glob) <= NPD_GLOBAL
    assert GO_DURATION.fullmatch(glob["invoke_interval"]) and go_seconds(glob["invoke_interval"]) > 0
    assert GO_DURATION.fullmatch(glob["timeout"])
    assert glob["max_output_length"] == 80  # NPD's default: the verdict line is built to fit it
    conditions = {c["type"] for c in cfg["conditions"]}
    for c in cfg["conditions"]:
        assert set(c) <= NPD_CONDITION and c["type"] and c["reason"]
    assert cfg["rules"]
    for rule in cfg["rules"]:
        assert set(rule) <= NPD_RULE
        assert rule["type"] in ("temporary", "permanent")
        if rule["type"] == "permanent":  # Validate(): a permanent problem needs its default condition
            assert rule["condition"] in conditions
        assert GO_DURATION.fullmatch(rule["timeout"])
        assert go_seconds(rule["timeout"]) <= go_seconds(glob["timeout"])  # Validate(): rule <= global
        args = rule["args"]
        assert args[:3] == ["check", "--profile", "healthcheck"] and "--quiet" in args
        deadline = float(args[args.index("--deadline") + 1])
        assert deadline < go_seconds(rule["timeout"])  # gpugate ends before NPD kills it
        assert rule["path"] == "/usr/local/bin/gpugate"


def test_npd_first_line_fits_and_names_failing_checks(tmp_path):
    """NPD: exit 0 OK, 1 NonOK, else Unknown; it keeps max_output_length (80)
    bytes of the output. The rule's own arguments, on a fixture root."""
    rule = json.load(open(NPD_CONFIG))["rules"][0]
    root = dpkg_root(tmp_path, [])
    r = run_gpugate(*rule["args"], "--root", str(root), "--format", "json")
    failing = [c["id"] for c in r.json()["checks"] if c["status"] == "fail"]
    r = run_gpugate(*rule["args"], "--root", str(root))
    assert r.rc == 1 and failing, r
    out = r.out.encode()
    assert out.count(b"\n") == 1 and len(out.rstrip(b"\n")) <= 80, out
    line = out.decode()
    named = [i for i in failing if i in line]
    more = re.search(r"\+(\d+) more", line)
    assert named and len(named) + (int(more.group(1)) if more else 0) == len(failing), (line, failing)
    r = run_gpugate(*rule["args"], "--root", str(root), "--only", "nothing.such")
    assert r.rc == 3  # NPD reads it as Unknown, never as OK


def load_daemonset():
    import yaml
    with open(DAEMONSET) as f:
        docs = [d for d in yaml.safe_load_all(f) if d]
    assert len(docs) == 1 and docs[0]["kind"] == "DaemonSet"
    return docs[0]


def test_daemonset_validates_against_kubernetes_schema():
    import jsonschema
    with open(DAEMONSET_SCHEMA) as f:
        schema = json.load(f)
    validator = jsonschema.Draft7Validator(schema)
    ds = load_daemonset()
    errors = list(validator.iter_errors(ds))
    assert not errors, [e.message for e in errors[:5]]
    # the schema is strict: a misspelt field is refused (the oracle can fail)
    broken = json.loads(json.dumps(ds))
    broken["spec"]["template"]["spec"]["containers"][0]["securityContext"]["privilegd"] = False
    assert list(validator.iter_errors(broken))


def test_daemonset_structure_least_privilege():
    ds = load_daemonset()
    spec = ds["spec"]
    labels = spec["template"]["metadata"]["labels"]
    assert all(labels.get(k) == v for k, v in spec["selector"]["matchLabels"].items())
    pod = spec["template"]["spec"]
    assert not pod.get("hostNetwork") and not pod.get("hostPID") and not pod.get("hostIPC")
    assert pod.get("automountServiceAccountToken") is False
    outputs = {"textfile", "features"}  # the two folders gpugate writes
    volumes = {v["name"]: v for v in pod["volumes"]}
    for c in pod["containers"]:
        sc = c["securityContext"]
        assert sc.get("privileged") is False and sc.get("allowPrivilegeEscalation") is False
        assert sc.get("readOnlyRootFilesystem") is True and sc["capabilities"]["drop"] == ["ALL"]
        assert not sc["capabilities"].get("add")
        assert any(k.startswith("gpu.intel.com/") for k in c["resources"]["limits"])  # the device plugin's
        for m in c["volumeMounts"]:
            v = volumes[m["name"]]
            if "hostPath" in v and m["name"] not in outputs:
                assert m.get("readOnly") is True, m
            assert not (v.get("hostPath", {}).get("path", "").startswith("/dev") and m["name"] in outputs)
        script = " ".join(c.get("command", []) + c.get("args", []))
        mounts = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
        assert f"prom:{mounts['textfile']}/gpugate-healthcheck.prom" in script
        assert f"nfd:{mounts['features']}/gpugate" in script
        probe = c["livenessProbe"]["exec"]["command"]
        assert probe[:4] == ["gpugate", "check", "--profile", "healthcheck"]
        assert float(probe[probe.index("--deadline") + 1]) < c["livenessProbe"]["timeoutSeconds"]
    host_paths = {v["hostPath"]["path"] for v in volumes.values() if "hostPath" in v}
    assert host_paths == {"/dev/dri/by-path", "/var/lib/node_exporter/textfile_collector",
                          "/etc/kubernetes/node-feature-discovery/features.d"}
