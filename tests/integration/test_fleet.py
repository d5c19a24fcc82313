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
import subprocess
import time

import pytest

from conftest import GPUGATE, dpkg_root, run_gpugate, spec_file, stanza, write
from gpufixture import Root
from loopback import Daemon, free_port, http_get, http_status
from promtool import check_metrics

REPO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
DAEMONSET = os.path.join(REPO, "images", "fleet", "daemonset.yaml")
NPD_CONFIG = os.path.join(REPO, "images", "fleet", "npd-gpugate.json")
DAEMONSET_SCHEMA = os.path.join(REPO, "tests", "schemas", "daemonset-apps-v1.k8s-1.31.0.json")
NODE_EXPORTER = shutil.which("prometheus-node-exporter") or shutil.which("node_exporter")
FAKE_ZE = os.environ.get("GPUGATE_FAKE_ZE") or os.path.join(os.path.dirname(GPUGATE), "fakes", "libze_fake.so")


def spec_key_default_seconds(key):
    """A spec key's default as gpugate list --spec-keys prints it (the key
    table is its one owner), in seconds."""
    r = run_gpugate("list", "--spec-keys")
    assert r.rc == 0, r
    line = next(l for l in r.out.splitlines() if l.startswith(key + "\t"))
    m = re.search(r"\(default (\d+)(s|m|h)?\)$", line)
    assert m, line
    return int(m.group(1)) * {"s": 1, None: 1, "m": 60, "h": 3600}[m.group(2)]


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
    ttl = datetime.timedelta(seconds=spec_key_default_seconds("reports.nfd_expiry"))
    assert now + ttl - datetime.timedelta(minutes=2) < expiry <= now + ttl + datetime.timedelta(seconds=1), expiry
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


def test_nfd_labels_carry_the_gpus_and_driver_of_a_real_run(tmp_path):
    """A whole run under the fake Level Zero driver (loaded by the real
    loader): gpugate.gpus is what devices.gpus found, gpugate.driver_version
    what runtime.loader's probe reported, each read through the facts."""
    if not os.path.exists(FAKE_ZE):
        pytest.fail(f"the fake driver {FAKE_ZE} is not built (make {FAKE_ZE})")
    root = Root(tmp_path / "root").add_gpus(2, device=0x56a0)
    root.add_gpu("0000:00:02.0", card=5, render=133, vendor=0x1234, driver=None, nodes=False, by_path=False)
    write(root.p("var/lib/dpkg/status"), stanza("dpkg", "1.21.22") + "\n" + stanza("libze1", "1.17.6-1"))
    spec = write(str(tmp_path / "spec.yaml"), "packages:\n  - libze1 (>= 1.17)\ndevices:\n  vendor: intel\n"
                 "  min_gpus: 1\nruntime:\n  backend: level-zero\n  smoke: true\n  timeout: 30s\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GPUGATE_FAKE", "ZE_"))}
    env.update({"ZE_ENABLE_ALT_DRIVERS": FAKE_ZE, "GPUGATE_FAKE_DEVICES": "2",
                "LD_LIBRARY_PATH": "/usr/lib/x86_64-linux-gnu", "XDG_RUNTIME_DIR": str(tmp_path)})
    labels_path, report_path = tmp_path / "gpugate.labels", tmp_path / "report.json"
    r = run_gpugate("check", "--root", root.path, "--spec", spec, "--report", f"nfd:{labels_path}",
                    "--report", f"json:{report_path}", env=env, timeout=120)
    assert r.rc == 0, r
    checks = {c["id"]: c for c in json.loads(report_path.read_text())["checks"]}
    gpus = checks["devices.gpus"]["details"]["gpus"]
    assert len(gpus) == 3 and sum(g["selected"] and g["present"] for g in gpus) == 2, gpus
    version = checks["runtime.loader"]["details"]["probes"][0]["result"]["driver_version"]
    assert version == "1.3.29735", version  # the fake's, as the loader's zeDriverGetProperties gave it
    _, labels = parse_nfd(labels_path.read_text())
    assert labels == {"feature.node.kubernetes.io/gpugate.healthy": "true",
                      "feature.node.kubernetes.io/gpugate.profile": "ci",
                      "feature.node.kubernetes.io/gpugate.gpus": "2",
                      "feature.node.kubernetes.io/gpugate.driver_version": "1.3.29735"}, labels


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


class NodeExporter(Daemon):
    """The real node_exporter, textfile collector only, on a loopback port."""

    def __init__(self, folder, log):
        self.port = free_port()
        super().__init__([NODE_EXPORTER, f"--web.listen-address=127.0.0.1:{self.port}",
                          "--collector.disable-defaults", "--collector.textfile",
                          f"--collector.textfile.directory={folder}"],
                         log, lambda: http_status(self.port, "/metrics") == 200, timeout=15)

    def scrape(self):
        status, body, _ = http_get(self.port, "/metrics", timeout=5)
        assert status == 200, (status, body)
        return body


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
    check_metrics(text)


def test_unwritable_report_folder_is_named(tmp_path):
    root, spec, _ = fixture_root(tmp_path, "1.17.2-1")
    r = run_gpugate("--spec", spec, "--root", str(root), "--report", f"nfd:{tmp_path}/missing/gpugate")
    assert r.rc == 3, r
    assert (f"cannot write the nfd report: cannot create a temporary file in {tmp_path}/missing to create "
            f"{tmp_path}/missing/gpugate: No such file or directory") in r.err, r


def test_a_report_file_in_a_folder_that_takes_no_new_file_says_so(tmp_path):
    """/proc/version exists, but nothing can be created in /proc: the message names the
    folder where the temp file (lib/safe_io.h, replaced atomically) could not be made,
    not a bare 'No such file or directory' about a file that is there."""
    root, spec, _ = fixture_root(tmp_path, "1.17.2-1")
    r = run_gpugate("--spec", spec, "--root", str(root), "--report", "json:/proc/version")
    assert r.rc == 3, r
    assert ("cannot write the json report: cannot create a temporary file in /proc to replace /proc/version: "
            in r.err), r


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


def least_privilege(c, *, caps_added=()):
    sc = c["securityContext"]
    assert sc.get("privileged") is False and sc.get("allowPrivilegeEscalation") is False, c["name"]
    assert sc.get("readOnlyRootFilesystem") is True and sc["capabilities"]["drop"] == ["ALL"], c["name"]
    assert sorted(sc["capabilities"].get("add", [])) == sorted(caps_added), c["name"]


def test_daemonset_serves_probes_and_metrics():
    """The serve-based DaemonSet (issue 30): Prometheus scrapes the pod,
    the kubelet probes /healthz and /readyz, all the node's GPUs, GPU taints
    tolerated, least privilege, NFD labels through a folder the user owns."""
    ds = load_daemonset()
    spec = ds["spec"]
    template = spec["template"]
    assert all(template["metadata"]["labels"].get(k) == v for k, v in spec["selector"]["matchLabels"].items())
    pod = template["spec"]
    assert not pod.get("hostNetwork") and not pod.get("hostPID") and not pod.get("hostIPC")
    assert pod.get("automountServiceAccountToken") is False
    psc = pod["securityContext"]
    assert psc["runAsNonRoot"] is True and psc["runAsUser"] != 0 and psc["seccompProfile"]["type"] == "RuntimeDefault"
    [c] = pod["containers"]
    least_privilege(c)
    assert not c["securityContext"].get("runAsUser")  # the pod's non-root user
    # the command: gpugate serve on the port Prometheus is told about
    cmd = c["command"]
    assert cmd[:2] == ["gpugate", "serve"], cmd
    listen = cmd[cmd.index("--listen") + 1]
    [port] = [p for p in c["ports"] if p["name"] == "metrics"]
    assert listen == f"0.0.0.0:{port['containerPort']}"
    notes = template["metadata"]["annotations"]
    assert notes["prometheus.io/scrape"] == "true" and notes["prometheus.io/path"] == "/metrics"
    assert int(notes["prometheus.io/port"]) == port["containerPort"]
    deadline = float(cmd[cmd.index("--deadline") + 1])
    assert cmd[cmd.index("--profile") + 1] == "ci" and deadline < 60  # a run ends before the next (--interval 60s)
    # probes: the server's life, then the verdict
    assert c["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "metrics"}
    assert c["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "metrics"}
    assert "exec" not in c["livenessProbe"]  # a broken GPU must not restart the monitor
    # all the node's GPUs: the device plugin's monitoring resource
    assert "gpu.intel.com/i915_monitoring" in c["resources"]["limits"]
    tolerated = {t["key"] for t in pod["tolerations"] if t["operator"] == "Exists"}
    assert {"gpu.intel.com/i915", "gpu.intel.com/xe", "nvidia.com/gpu"} <= tolerated
    # volumes: no metrics hostPath; NFD through the subfolder the init container hands over
    volumes = {v["name"]: v for v in pod["volumes"]}
    mounts = {m["name"]: m for m in c["volumeMounts"]}
    for name, m in mounts.items():
        if "hostPath" in volumes[name] and name != "features-gpugate":
            assert m.get("readOnly") is True, m
    nfd = cmd[cmd.index("--report") + 1]
    assert nfd == f"nfd:{mounts['features-gpugate']['mountPath']}/gpugate"
    parent = volumes["features"]["hostPath"]["path"]
    assert volumes["features-gpugate"]["hostPath"]["path"] == parent + "/gpugate.d"
    host_paths = {v["hostPath"]["path"] for v in volumes.values() if "hostPath" in v}
    assert host_paths == {"/dev/dri/by-path", parent, parent + "/gpugate.d"}
    [init] = pod["initContainers"]
    least_privilege(init, caps_added=["CHOWN"])
    assert init["securityContext"]["runAsUser"] == 0
    script = init["args"][0]
    assert f"chown {psc['runAsUser']}:{psc['runAsGroup']} " in script, script
    assert [m["name"] for m in init["volumeMounts"]] == ["features"]


def test_daemonset_nfd_folder_works_as_a_node_has_it(tmp_path):
    """The init container's script, run as written on a features.d folder as
    the kubelet makes it (root-owned 0755, gpugate.d inside it too) with CHOWN
    as its only capability, then gpugate as the pod's user writing its
    report: the file lands behind the symlink NFD reads, and nothing else of
    features.d changed owner."""
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        pytest.skip("needs root and setpriv (util-linux) to act as the init container and the pod user")
    pod = load_daemonset()["spec"]["template"]["spec"]
    [init] = pod["initContainers"]
    [c] = pod["containers"]
    uid, gid = pod["securityContext"]["runAsUser"], pod["securityContext"]["runAsGroup"]
    os.chmod(tmp_path, 0o755)
    features = tmp_path / "node" / "features.d"
    (features / "gpugate.d").mkdir(parents=True)  # hostPath DirectoryOrCreate: root 0755
    os.chmod(features.parent, 0o755)
    os.chmod(features, 0o755)
    os.chmod(features / "gpugate.d", 0o755)
    (features / "other").write_text("vendor.example.com/x=1\n")
    script = init["args"][0].replace("/features.d", str(features))
    as_init = ["setpriv", "--reuid=0", "--regid=0", "--clear-groups", "--inh-caps=-all,+chown",
               "--ambient-caps=-all,+chown", "--bounding-set=-all,+chown", "sh", "-c", script]
    r = subprocess.run(as_init, capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    root, spec, _ = fixture_root(tmp_path, "1.17.2-1")
    cmd = c["command"]
    target = cmd[cmd.index("--report") + 1].replace("/features.d", str(features / "gpugate.d"))
    # as the pod's user; CAP_DAC_READ_SEARCH only to get through pytest's 0700
    # temp folders above (it grants no write: the folder's owner must allow it)
    p = subprocess.run(["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups",
                        "--inh-caps=-all,+dac_read_search", "--ambient-caps=-all,+dac_read_search",
                        GPUGATE, "check", "--no-sandbox", "--spec", spec, "--root", str(root), "--report", target],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    _, labels = parse_nfd((features / "gpugate").read_text())  # through the symlink, as NFD reads it
    assert labels["feature.node.kubernetes.io/gpugate.healthy"] == "true"
    assert os.readlink(features / "gpugate") == "gpugate.d/gpugate"
    assert os.stat(features).st_uid == 0 and os.stat(features / "other").st_uid == 0
    assert os.stat(features / "gpugate.d").st_uid == uid
    assert sorted(os.listdir(features / "gpugate.d")) == ["gpugate"]  # no temp file left beside it
    # a pod restart runs the script again: the same result
    r = subprocess.run(as_init, capture_output=True, text=True, timeout=30)
    assert r.returncode == 0 and os.readlink(features / "gpugate") == "gpugate.d/gpugate", r.stderr
    # the oracle can fail: without CHOWN the script cannot hand the folder over
    r = subprocess.run(as_init[:4] + ["--inh-caps=-all", "--ambient-caps=-all", "--bounding-set=-all",
                                      "sh", "-c", script], capture_output=True, text=True, timeout=30)
    assert r.returncode != 0 and "chown" in r.stderr, r


def test_gate_pod_checks_the_pods_own_gpus_and_volume():
    import yaml
    with open(os.path.join(REPO, "images", "fleet", "gate-pod.yaml")) as f:
        pod = yaml.safe_load(f)
    assert pod["kind"] == "Pod" and pod["apiVersion"] == "v1"
    spec = pod["spec"]
    gate = spec["initContainers"][0]  # first: nothing runs before the gate
    assert gate["command"][:4] == ["gpugate", "check", "--profile", "ci"] and "--quiet" in gate["command"]
    assert gate["terminationMessagePolicy"] == "FallbackToLogsOnError"
    assert gate["terminationMessagePath"] == "/dev/termination-log"
    least_privilege(gate)
    [work] = spec["containers"]
    gpu = {k: v for k, v in work["resources"]["limits"].items() if k.startswith("gpu.intel.com/")}
    assert gpu and all(gate["resources"]["limits"].get(k) == v for k, v in gpu.items())  # the same GPUs
    env = {e["name"]: e["value"] for e in gate["env"]}
    work_env = {e["name"]: e["value"] for e in work["env"]}
    assert env["HF_HOME"] == work_env["HF_HOME"]
    gate_mounts = {m["name"]: m["mountPath"] for m in gate["volumeMounts"]}
    work_mounts = {m["name"]: m["mountPath"] for m in work["volumeMounts"]}
    volumes = {v["name"]: v for v in spec["volumes"]}
    hf = [n for n, p in gate_mounts.items() if p == env["HF_HOME"]]
    assert hf and work_mounts[hf[0]] == env["HF_HOME"] and "persistentVolumeClaim" in volumes[hf[0]]
    assert spec["securityContext"]["runAsNonRoot"] is True


def test_fleet_md_apply_command_gives_a_valid_daemonset():
    """The sed line images/FLEET.md gives operators, run as written (kubectl
    apply replaced by reading what it would get): the image and the render
    gid are substituted and the manifest still validates."""
    import jsonschema
    import yaml
    text = open(os.path.join(REPO, "images", "FLEET.md")).read()
    m = re.search(r'^(sed "[^\n]*\\\n[^\n]*)\| kubectl apply -f -$', text, re.M)
    assert m, "the sed | kubectl apply command is not in images/FLEET.md"
    env = dict(os.environ, IMAGE="registry.test/gpugate:1.2.3", RENDER_GID="109")
    p = subprocess.run(["sh", "-c", m.group(1)], cwd=REPO, capture_output=True, text=True, env=env, timeout=30)
    assert p.returncode == 0, p.stderr
    ds = yaml.safe_load(p.stdout)
    pod = ds["spec"]["template"]["spec"]
    assert {c["image"] for c in pod["containers"] + pod["initContainers"]} == {"registry.test/gpugate:1.2.3"}
    assert pod["securityContext"]["supplementalGroups"] == [109]
    with open(DAEMONSET_SCHEMA) as f:
        assert not list(jsonschema.Draft7Validator(json.load(f)).iter_errors(ds))
