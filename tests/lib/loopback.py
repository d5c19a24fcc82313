"""Servers a test starts on loopback (gpugate serve, Prometheus,
node_exporter): a free port to give them, waiting until they answer, one
HTTP request, and stopping them by their pid, so that no test leaves a
server behind or binds anything but 127.0.0.1."""
import http.client
import signal
import socket
import subprocess
import time


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what, fn, timeout=30, step=0.2):
    """fn()'s first truthy value, polled every step seconds; fails naming
    what after timeout seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = fn()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(step)


def http_get(port, path, method="GET", timeout=10):
    """(status, body, headers) of one request to 127.0.0.1:port on a
    connection of its own; OSError when nothing answers."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request(method, path)
        resp = conn.getresponse()
        return resp.status, resp.read().decode(), dict(resp.getheaders())
    finally:
        conn.close()


def http_status(port, path):
    """The status of GET path, or None while nothing answers."""
    try:
        return http_get(port, path)[0]
    except OSError:
        return None


def stop_process(proc, timeout=10):
    """SIGTERM to proc's pid, SIGKILL if it is still there after timeout
    seconds; returns the seconds it took to end."""
    t0 = time.monotonic()
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return time.monotonic() - t0


class Daemon:
    """A server process whose output goes to log_path, started and waited
    for until ready() is true (it is stopped again when it never is, or
    ends on its way); stop() ends it by its pid."""

    def __init__(self, argv, log_path, ready, *, env=None, cwd=None, timeout=30, stop_timeout=10):
        self.log_path = log_path
        self.stop_timeout = stop_timeout
        self.log = open(log_path, "w")
        self.proc = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT, env=env, cwd=cwd)
        try:
            wait_for(f"{argv[0]} to answer", lambda: self.proc.poll() is not None or ready(), timeout=timeout)
            assert self.proc.poll() is None, f"{argv[0]} ended (rc {self.proc.returncode}): {self.logtext()}"
        except BaseException:
            self.stop()
            raise

    def logtext(self):
        with open(self.log_path) as f:
            return f.read()

    def stop(self):
        """Ends it (SIGTERM, then SIGKILL); the seconds it took."""
        took = stop_process(self.proc, self.stop_timeout)
        self.log.close()
        return took
