"""Prometheus' own judge of an exposition: `promtool check metrics`
(Debian prometheus), for every /metrics body and .prom file a test makes."""
import shutil
import subprocess


def check_metrics(text):
    """Fails with promtool's words unless it accepts text."""
    promtool = shutil.which("promtool")
    assert promtool, "promtool missing (.ci/install-deps installs prometheus)"
    p = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stdout + p.stderr
