"""The healthcheck's text output fits the 4096 bytes Docker keeps of it
(Health.Log[].Output) and names every failed check, however long one
finding is: the problems share the budget, so a huge first summary (150
missing packages with long names) cannot push the others' ids out."""
import json

from conftest import run_gpugate, write

LIMIT = 4096  # what Docker keeps (real-judges.md; test_docker.py reads it from Docker itself)


def long_spec(tmp_path, n=150):
    lines = ["extends: healthcheck", "packages:"]
    lines += [f"  - libsomething-really-long-package-name-number-{i:03d}-with-extra-words (>= 1.0)" for i in range(n)]
    return write(str(tmp_path / "spec.yaml"), "\n".join(lines) + "\n")


def test_many_failures_share_the_budget(tmp_path):
    root = tmp_path / "root"
    write(str(root / "var/lib/dpkg/status"), "")
    spec = long_spec(tmp_path)
    j = run_gpugate("check", "--spec", spec, "--root", str(root), "--format", "json")
    assert j.rc == 1, j
    failed = [c["id"] for c in j.json()["checks"] if c["status"] == "fail"]
    warned = [c["id"] for c in j.json()["checks"] if c["status"] == "warn"]
    assert len(failed) >= 3 and "packages.installed" in failed, j
    t = run_gpugate("check", "--spec", spec, "--root", str(root))
    out = t.out.encode()
    assert t.rc == 1 and len(out) <= LIMIT, (len(out), t)
    full = run_gpugate("check", "--spec", spec, "--root", str(root), "--format", "json")
    assert len(json.dumps(full.json())) > LIMIT  # the report really had to be cut
    for cid in failed:
        assert f"\nFAIL  {cid}: ".encode() in out, (cid, t.out)
    for cid in warned:
        assert f"\nWARN  {cid}: ".encode() in out, (cid, t.out)
    assert t.out.endswith("(problems only, cut to fit; gpugate check --format text shows all)\n"), t.out
    assert t.out.startswith("gpugate: UNHEALTHY (profile healthcheck): packages.installed")
