"""`gpugate serve` against its real consumers: the Prometheus server (Debian
`prometheus`, started here on loopback with a scrape config pointing at
gpugate and a 1 s scrape interval, stopped by its pid), `curl` for the
Kubernetes-style probe endpoints, `promtool check metrics` for /metrics.
The GPUs are the fake Level Zero driver's (tests/fakes/fake_ze.c, loaded by
the real loader); a GPU breaks when the test writes `two_devices_one_fails`
into the file GPUGATE_FAKE_FAULT_FILE names, which the next run's probe
reads. Then load and abuse: 1,000 requests from 50 clients while checks run,
slowloris clients, oversized headers and garbage. Loopback only; every
process started here is stopped by its pid."""
import http.client
import json
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import threading
import time
import urllib.parse

import pytest

from conftest import GPUGATE, dpkg_root, run_gpugate, spec_file, stanza
from loopback import Daemon, free_port, http_get, http_status, wait_for
from promtool import check_metrics
from report_oracles import validate_json_text

FAKE = os.environ.get("GPUGATE_FAKE_ZE") or os.path.join(os.path.dirname(GPUGATE), "fakes", "libze_fake.so")
PROMETHEUS = shutil.which("prometheus")
CURL = shutil.which("curl")

SPEC = """packages:
  - libze1 (>= 1.17)
runtime:
  backend: level-zero
  smoke: true
  timeout: 20s
"""


class Serve(Daemon):
    """`gpugate serve` on a free loopback port, stopped by its pid."""

    def __init__(self, tmp_path, *args, interval="1s", fault_file=None):
        assert os.path.exists(FAKE), f"the fake driver {FAKE} is not built"
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        xdg = tmp_path / "xdg"
        xdg.mkdir(mode=0o700, exist_ok=True)
        # under --root the loader comes from the root or, named on purpose, LD_LIBRARY_PATH
        # (the real Debian loader of this machine; the fixture root has none)
        env = dict(os.environ, ZE_ENABLE_ALT_DRIVERS=FAKE, GPUGATE_FAKE_DEVICES="2", XDG_RUNTIME_DIR=str(xdg),
                   LD_LIBRARY_PATH="/usr/lib/x86_64-linux-gnu")
        env.pop("GPUGATE_FAKE_FAULT", None)
        if fault_file:
            env["GPUGATE_FAKE_FAULT_FILE"] = str(fault_file)
        super().__init__([GPUGATE, "serve", "--listen", f"127.0.0.1:{self.port}", "--interval", interval, *args],
                         tmp_path / "serve.log", lambda: self.status("/healthz") == 200, env=env)

    def status(self, path):
        return http_status(self.port, path)

    def get(self, path, method="GET"):
        return http_get(self.port, path, method)


def curl(url, *extra):
    """curl's own view: (status code, body)."""
    assert CURL, "curl missing (.ci/install-deps installs it)"
    p = subprocess.run([CURL, "-sS", "--max-time", "10", "-o", "-", "-w", "\n%{http_code}", *extra, url],
                       capture_output=True, text=True, timeout=20)
    assert p.returncode == 0, p.stderr
    body, _, code = p.stdout.rpartition("\n")
    return int(code), body


class Prometheus(Daemon):
    """The real Prometheus server scraping one target every second."""

    def __init__(self, tmp_path, target):
        assert PROMETHEUS, "prometheus missing (.ci/install-deps installs it)"
        self.port = free_port()
        folder = tmp_path / "prometheus"
        folder.mkdir()
        config = folder / "prometheus.yml"
        config.write_text("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                          "scrape_configs:\n  - job_name: gpugate\n"
                          f"    static_configs:\n      - targets: ['{target}']\n")
        super().__init__([PROMETHEUS, f"--config.file={config}", f"--storage.tsdb.path={folder / 'data'}",
                          f"--web.listen-address=127.0.0.1:{self.port}", "--storage.tsdb.retention.time=1h"],
                         folder / "prometheus.log", lambda: http_status(self.port, "/-/ready") == 200,
                         cwd=folder, timeout=60, stop_timeout=15)

    def query(self, expr):
        status, body, _ = http_get(self.port, "/api/v1/query?" + urllib.parse.urlencode({"query": expr}))
        answer = json.loads(body)
        assert status == 200 and answer["status"] == "success", answer
        return {tuple(sorted(s["metric"].items())): float(s["value"][1]) for s in answer["data"]["result"]}


def fixture(tmp_path):
    root = dpkg_root(tmp_path, [stanza("libze1", "1.17.2-1")])
    spec = spec_file(tmp_path, SPEC)
    fault = tmp_path / "fault"
    fault.write_text("")
    return root, spec, fault


def by_index(samples):
    return {dict(k)["index"]: v for k, v in samples.items()}


def test_healthy_broken_healthy_seen_by_prometheus_and_curl(tmp_path):
    root, spec, fault = fixture(tmp_path)
    serve = Serve(tmp_path, "--spec", spec, "--root", str(root), "--deadline", "20", fault_file=fault)
    prom = None
    try:
        base = serve.base
        wait_for("a healthy run", lambda: serve.status("/readyz") == 200)
        prom = Prometheus(tmp_path, f"127.0.0.1:{serve.port}")
        # healthy: the series as Prometheus stored them
        wait_for("gpugate_healthy 1 in Prometheus",
                 lambda: list(prom.query('gpugate_healthy{job="gpugate"}').values()) == [1.0])
        assert prom.query('up{job="gpugate"}') and list(prom.query('up{job="gpugate"}').values()) == [1.0]
        assert by_index(prom.query("gpugate_gpu_smoke_passed")) == {"0": 1.0, "1": 1.0}
        assert by_index(prom.query("gpugate_gpu_memory_free_bytes")) == {"0": 12884901888.0, "1": 12884901888.0}
        assert len(prom.query("gpugate_gpu_info")) == 2
        code, body = curl(f"{base}/readyz")
        assert code == 200 and body.startswith("gpugate: HEALTHY (profile ci)"), body
        assert curl(f"{base}/healthz")[0] == 200
        code, body = curl(f"{base}/report.json")
        assert code == 200 and json.loads(body)["verdict"] == "pass"
        validate_json_text(body, "/report.json")
        code, metrics = curl(f"{base}/metrics")
        assert code == 200
        check_metrics(metrics)
        assert curl(f"{base}/metrics", "-I")[0] == 200  # HEAD
        assert curl(f"{base}/metrics", "-X", "POST")[0] == 405
        assert curl(f"{base}/nothing")[0] == 404

        # a GPU breaks: its smoke kernel fails from the next run on
        fault.write_text("two_devices_one_fails\n")
        wait_for("/readyz 503", lambda: curl(f"{base}/readyz")[0] == 503)
        code, body = curl(f"{base}/readyz")
        assert body.startswith("gpugate: UNHEALTHY (profile ci): runtime.smoke"), body
        assert curl(f"{base}/healthz")[0] == 200  # the server lives whatever the GPUs say
        assert json.loads(curl(f"{base}/report.json")[1])["verdict"] == "fail"
        check_metrics(curl(f"{base}/metrics")[1])
        wait_for("gpugate_healthy 0 in Prometheus",
                 lambda: list(prom.query('gpugate_healthy{job="gpugate"}').values()) == [0.0])
        wait_for("GPU 1's smoke series at 0",
                 lambda: by_index(prom.query("gpugate_gpu_smoke_passed")) == {"0": 1.0, "1": 0.0})
        # the operator's query (images/FLEET.md) names the broken GPU only
        unhealthy = prom.query("gpugate_gpu_smoke_passed == 0")
        assert [dict(k)["pci"] for k in unhealthy] == ["0000:04:00.0"], unhealthy

        # repaired
        fault.write_text("")
        wait_for("/readyz 200 again", lambda: curl(f"{base}/readyz")[0] == 200)
        wait_for("gpugate_healthy 1 again in Prometheus",
                 lambda: list(prom.query('gpugate_healthy{job="gpugate"}').values()) == [1.0])
        wait_for("GPU 1's smoke series at 1",
                 lambda: by_index(prom.query("gpugate_gpu_smoke_passed")) == {"0": 1.0, "1": 1.0})
        assert prom.query('increase(gpugate_serve_runs_total{result="unhealthy"}[5m]) > 0')
    finally:
        if prom:
            prom.stop()
        took = serve.stop()
    assert serve.proc.returncode == 0, serve.logtext()
    assert took < 1.0, f"SIGTERM took {took:.2f} s"


def test_every_per_gpu_series_from_the_runtime_facts(tmp_path):
    """/metrics's per-GPU families (src/serve/gpu_metrics.c, read through the
    runtime facts decoders) on a run that measured performance: each of the
    two fake GPUs has its memory, smoke, bandwidth and latency sample,
    labelled by backend, index, PCI address and UUID, as promtool accepts."""
    root = dpkg_root(tmp_path, [stanza("libze1", "1.17.2-1")])
    spec = spec_file(tmp_path, SPEC + "  performance: true\n  bandwidth_buffer: 16MiB\n")
    serve = Serve(tmp_path, "--root", str(root), "--spec", spec, interval="1h")
    try:
        metrics = wait_for("the first run's per-GPU series",
                           lambda: (lambda b: b if "gpugate_gpu_launch_latency_seconds{" in b else None)(
                               serve.get("/metrics")[1]), timeout=60)
    finally:
        serve.stop()
    check_metrics(metrics)
    samples = {}
    for line in metrics.splitlines():
        m = re.fullmatch(r'(gpugate_gpu_\w+)\{([^}]*)\} (\S+)', line)
        if m:
            labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2)))
            samples.setdefault(m.group(1), {})[labels["index"]] = (labels, float(m.group(3)))
    families = ("gpugate_gpu_info", "gpugate_gpu_memory_free_bytes", "gpugate_gpu_memory_total_bytes",
                "gpugate_gpu_smoke_passed", "gpugate_gpu_copy_bandwidth_bytes_per_second",
                "gpugate_gpu_launch_latency_seconds")
    assert set(samples) == set(families), metrics
    for family in families:
        assert set(samples[family]) == {"0", "1"}, (family, metrics)
        for index, (labels, _) in samples[family].items():
            assert labels["backend"] == "level-zero" and labels["profile"] == "ci", (family, labels)
            assert labels["pci"] == ("0000:03:00.0" if index == "0" else "0000:04:00.0"), (family, labels)
            assert labels["uuid"], (family, labels)  # the fake reports one per device
    assert samples["gpugate_gpu_info"]["0"][0]["name"] == "Fake Arc A770 #0"
    assert samples["gpugate_gpu_memory_total_bytes"]["0"][1] == 16 << 30
    assert samples["gpugate_gpu_smoke_passed"]["1"][1] == 1
    assert abs(samples["gpugate_gpu_copy_bandwidth_bytes_per_second"]["0"][1] - 400e9) < 1e9  # the fake's 400 GB/s
    assert 0 < samples["gpugate_gpu_launch_latency_seconds"]["0"][1] < 1


def test_sighup_reads_the_spec_again_and_sigterm_ends_it(tmp_path):
    root, spec, fault = fixture(tmp_path)
    serve = Serve(tmp_path, "--spec", spec, "--root", str(root), "--only", "packages", interval="1h")
    try:
        wait_for("a healthy run", lambda: serve.status("/readyz") == 200)
        with open(spec, "w") as f:
            f.write("packages:\n  - libze1 (>= 99)\n")
        serve.proc.send_signal(signal.SIGHUP)  # no wait for the hour
        wait_for("the new spec's verdict", lambda: serve.status("/readyz") == 503, timeout=10)
        assert serve.get("/readyz")[1].startswith("gpugate: UNHEALTHY (profile ci): packages.installed")
        # a broken spec after start: not ready, saying why; the server stays
        with open(spec, "w") as f:
            f.write("packages: [\n")
        serve.proc.send_signal(signal.SIGHUP)
        wait_for("the spec error", lambda: "spec error" in serve.get("/readyz")[1], timeout=10)
        status, body, _ = serve.get("/readyz")
        assert status == 503 and spec in body, body
        assert serve.status("/healthz") == 200 and serve.status("/report.json") == 503
        metrics = serve.get("/metrics")[1]
        assert "gpugate_healthy" not in metrics and "gpugate_serve_last_run_exit_code 3" in metrics, metrics
        check_metrics(metrics)
    finally:
        took = serve.stop()
    assert serve.proc.returncode == 0 and took < 1.0, (took, serve.logtext())


def test_sigterm_during_a_run_ends_it_and_its_probe(tmp_path):
    """A run hung in the driver (hang_init) does not hold SIGTERM up, and the
    probe goes with the server."""
    root, spec, fault = fixture(tmp_path)
    fault.write_text("hang_init\n")
    serve = Serve(tmp_path, "--spec", spec, "--root", str(root), "--deadline", "30", fault_file=fault)
    time.sleep(1.5)  # the first run is inside the hung zeInit
    assert serve.status("/readyz") == 503 and serve.status("/healthz") == 200
    took = serve.stop()
    assert serve.proc.returncode == 0 and took < 1.0, (took, serve.logtext())
    tag = str(fault).encode()

    def probes_left():
        left = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/environ", "rb") as f:
                    if tag in f.read():
                        left.append(pid)
            except OSError:
                pass
        return left
    wait_for("the check child and its probe to end", lambda: not probes_left(), timeout=5)


@pytest.mark.parametrize("args,words", [
    (["--listen", "localhost"], "is not ADDR:PORT"),
    (["--listen", "127.0.0.1:99999"], "not a port"),
    (["--listen", "example.com:80"], "no IP address"),
    (["--interval", "0"], "--interval"),
    (["--interval"], "needs an argument"),
    (["--profile", "nosuch"], "unknown profile"),
    (["--spec", "/nonexistent/spec.yaml"], "/nonexistent/spec.yaml"),
    (["--only", "nosuch.check"], "nosuch.check"),
    (["--report", "json:"], "--report"),
])
def test_bad_command_lines_exit_3(args, words):
    """A bad option or spec ends the server with 3 before it says it listens (the
    check options and the spec are read by a `gpugate check --preflight` child first):
    a log that says 'listening' then exits misleads whoever reads it."""
    r = run_gpugate("serve", "--listen", f"127.0.0.1:{free_port()}", *args, timeout=30)
    assert r.rc == 3 and words in r.err, r
    assert "listening" not in r.err, r
    # said once (the loop's log line repeated the check run's own message)
    assert len([line for line in r.err.splitlines() if words in line]) == 1, r


def test_help_and_a_taken_port():
    r = run_gpugate("serve", "--help")
    assert r.rc == 0 and "--listen ADDR:PORT" in r.out and "/readyz" in r.out, r
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        r = run_gpugate("serve", "--listen", f"127.0.0.1:{s.getsockname()[1]}", timeout=30)
    assert r.rc == 3 and "Address already in use" in r.err, r


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"^VmRSS:\s+(\d+) kB", f.read(), re.M).group(1))


def well_formed(path, status, body, headers):
    if path == "/metrics":
        assert status == 200 and body.endswith("\n") and "gpugate_serve_runs_total" in body, (status, body[-200:])
        assert headers["Content-Type"].startswith("text/plain; version=0.0.4")
    elif path == "/report.json":
        assert status in (200, 503)
        if status == 200:
            assert json.loads(body)["schema"] == "gpugate/v1"
    elif path == "/readyz":
        assert status in (200, 503) and body.startswith("gpugate") and body.endswith("\n"), body
    else:
        assert status == 200 and body == "ok\n"
    assert int(headers["Content-Length"]) == len(body.encode())


def raw(port, data, wait=5.0):
    """Sends bytes, returns what comes back before the server closes (or
    None when it is still open after wait seconds)."""
    with socket.create_connection(("127.0.0.1", port), timeout=wait) as s:
        s.sendall(data)
        got = b""
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    return got
                got += chunk
        except ConnectionResetError:
            return got
        except socket.timeout:
            return None


def test_load_and_abuse(tmp_path):
    root, spec, fault = fixture(tmp_path)
    # each probe spends 0.5 s in a slow zeInit (a run ~2 s, longer than the
    # interval, so runs follow each other): requests land while checks run
    fault.write_text("slow_init:500\n")
    serve = Serve(tmp_path, "--spec", spec, "--root", str(root), "--deadline", "10", fault_file=fault)
    try:
        pid = serve.proc.pid
        wait_for("a first run", lambda: serve.status("/report.json") == 200)
        paths = ["/metrics", "/readyz", "/healthz", "/report.json"]
        errors = []

        def client(n):
            conn = None
            try:
                for i in range(n):
                    path = paths[i % len(paths)]
                    conn = http.client.HTTPConnection("127.0.0.1", serve.port, timeout=10)
                    conn.request("GET", path)
                    resp = conn.getresponse()
                    well_formed(path, resp.status, resp.read().decode(), dict(resp.getheaders()))
                    conn.close()
            except Exception as e:  # noqa: BLE001 (collected and reported below)
                errors.append(repr(e))
            finally:
                if conn:
                    conn.close()

        def burst(clients, each):
            threads = [threading.Thread(target=client, args=(each,)) for _ in range(clients)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(120)
            assert not errors, errors[:5]

        burst(10, 20)  # warm-up: the server's and the allocator's first pages
        before = rss_kib(pid)
        runs_before = json.loads(serve.get("/report.json")[1])["timestamp"]
        t0 = time.monotonic()
        burst(50, 20)  # 1,000 requests from 50 concurrent clients
        took = time.monotonic() - t0
        after = rss_kib(pid)
        with open(f"/proc/{pid}/maps") as f:
            sanitized = "libasan" in f.read()
        # ASan's quarantine holds freed memory back by design: RSS says nothing there
        assert sanitized or after - before < 1024, f"RSS grew {after - before} KiB over 1,000 requests"

        # the check loop kept its pace: runs went on, none past its deadline
        wait_for("a run after the load", lambda: json.loads(serve.get("/report.json")[1])["timestamp"] != runs_before,
                 timeout=15)
        report = json.loads(serve.get("/report.json")[1])
        assert report["timestamp"] != runs_before
        assert report["verdict"] == "pass" and 500 < report["duration_ms"] < 10000, report["duration_ms"]
        metrics = serve.get("/metrics")[1]
        assert re.search(r'^gpugate_serve_runs_total\{result="killed"\} 0$', metrics, re.M), metrics
        assert re.search(r'^gpugate_serve_runs_total\{result="error"\} 0$', metrics, re.M), metrics

        # abuse: each is closed, and the next scrape still works
        before_abuse = report["timestamp"]
        port = serve.port
        slow = []
        for _ in range(10):  # slowloris: a request that never ends
            s = socket.create_connection(("127.0.0.1", port), timeout=15)
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ")
            slow.append(s)
        assert serve.status("/metrics") == 200  # served while they hang
        huge = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 40000 + b"\r\n\r\n"
        answer = raw(port, huge)
        assert answer is not None and (answer == b"" or answer.startswith(b"HTTP/1.1 431")), answer[:100]
        many = b"GET /metrics HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-%d: y\r\n" % i for i in range(100)) + b"\r\n"
        answer = raw(port, many)
        assert answer is not None and answer.startswith(b"HTTP/1.1 431"), answer[:100]
        for garbage in (b"\x00\xff\xfe garbage\r\n\r\n", b"GET\r\n\r\n", b"HELLO / SPDY/9\r\n\r\n",
                        b"GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello"):
            answer = raw(port, garbage, wait=8)
            assert answer is not None, garbage  # closed at once or by the idle timeout, not left open
            assert answer == b"" or re.match(rb"HTTP/1\.[01] (400|405|413|505) ", answer), (garbage, answer[:100])
        for s in slow:  # the idle timeout (5 s) closed every slowloris
            try:
                rest = s.recv(1024)  # blocks until the server closes it (15 s at most)
                assert rest == b"" or rest.startswith(b"HTTP/1.1 408"), rest
            except ConnectionResetError:
                pass
            finally:
                s.close()
        status, body, headers = serve.get("/metrics")
        well_formed("/metrics", status, body, headers)
        check_metrics(body)
        assert serve.proc.poll() is None
        # the loop went on: a new run, on time and healthy
        later = wait_for("a run after the abuse", lambda: (lambda r: r["timestamp"] != before_abuse and r)(
            json.loads(serve.get("/report.json")[1])), timeout=15)
        assert later["verdict"] == "pass" and later["duration_ms"] < 10000, later["duration_ms"]
        print(f"1,000 requests from 50 clients in {took:.2f} s; RSS {before} -> {after} KiB")
    finally:
        took = serve.stop()
    assert serve.proc.returncode == 0 and took < 1.0, (took, serve.logtext())


# src/serve/http.c, as images/FLEET.md and gpugate(1) document them: a
# connection idle this long is closed, and a request that takes longer than
# REQUEST_LIMIT from its first byte awaited to its answer sent is ended
# however its bytes trickle (src/serve/request_deadline.c).
IDLE_TIMEOUT = 5
REQUEST_LIMIT = 10


def trickle(port, gap, give_up):
    """A slowloris that sends one byte of a never-ending request every gap
    seconds (inside the idle timeout, which each byte restarts): the
    seconds from connecting until the server ends the connection, or None
    when it is still open after give_up seconds."""
    request = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 200
    with socket.create_connection(("127.0.0.1", port), timeout=give_up) as s:
        t0 = time.monotonic()
        try:
            for byte in request:
                s.sendall(bytes([byte]))
                readable, _, _ = select.select([s], [], [], gap)
                if readable:
                    rest = s.recv(1024)  # the end, or a 408 before it
                    assert rest == b"" or rest.startswith(b"HTTP/1.1 408"), rest
                    if rest == b"" or not s.recv(1024):
                        return time.monotonic() - t0
                if time.monotonic() - t0 > give_up:
                    return None
        except (BrokenPipeError, ConnectionResetError):
            return time.monotonic() - t0
    return None


def test_tricklers_are_ended_by_the_request_deadline_and_scrapes_go_on(tmp_path):
    """N slowloris clients each trickle a byte every 2 s, so the idle
    timeout never fires: a scrape still answers within 1 s while they hold
    their connections, and each is ended within REQUEST_LIMIT (plus the
    watcher's step and some slack), not before the idle timeout would have
    ended it (so it was the deadline, not the idle timeout, that did)."""
    root, spec, _ = fixture(tmp_path)
    serve = Serve(tmp_path, "--spec", spec, "--root", str(root), "--only", "packages", interval="1h")
    try:
        wait_for("a run", lambda: serve.status("/readyz") == 200)
        ended = {}
        threads = [threading.Thread(target=lambda i=i: ended.__setitem__(i, trickle(serve.port, 2, 30)))
                   for i in range(20)]
        for t in threads:
            t.start()
        time.sleep(1)  # all of them connected and trickling
        slowest = 0.0
        t0 = time.monotonic()
        while time.monotonic() - t0 < REQUEST_LIMIT - 2:
            started = time.monotonic()
            status, body, _ = serve.get("/metrics")
            took = time.monotonic() - started
            assert status == 200 and "gpugate_serve_runs_total" in body, status
            assert took < 1.0, f"a scrape took {took:.2f} s while the tricklers trickled"
            slowest = max(slowest, took)
            time.sleep(0.5)
        for t in threads:
            t.join(60)
        assert len(ended) == 20 and None not in ended.values(), ended
        assert all(IDLE_TIMEOUT + 1 < e < REQUEST_LIMIT + 2 for e in ended.values()), sorted(ended.values())
        status, body, headers = serve.get("/metrics")
        well_formed("/metrics", status, body, headers)
        assert serve.proc.poll() is None
        print(f"20 tricklers ended after {min(ended.values()):.2f}-{max(ended.values()):.2f} s; "
              f"slowest scrape meanwhile {slowest * 1000:.0f} ms")
    finally:
        took = serve.stop()
    assert serve.proc.returncode == 0 and took < 1.0, (took, serve.logtext())


def needed(path):
    p = subprocess.run(["objdump", "-p", path], capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    return re.findall(r"^\s*NEEDED\s+(\S+)", p.stdout, re.M)


def test_check_path_loads_no_http_library():
    """The HEALTHCHECK binary stays as cheap to start as before serve: the
    HTTP library is gpugate-serve's alone (measured: tests/bench/RESULTS.md)."""
    serve = os.path.join(os.path.dirname(GPUGATE), "gpugate-serve")
    assert not [n for n in needed(GPUGATE) if "microhttpd" in n], needed(GPUGATE)
    assert [n for n in needed(serve) if n.startswith("libmicrohttpd.so")], needed(serve)
