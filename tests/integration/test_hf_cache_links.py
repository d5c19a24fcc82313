"""Linked cache folders (issue 28): each case of
tests/vectors/hf-cache-links.tsv is made in a temp folder, counted by the
lines of huggingface_hub's scan_cache_dir() run here in real Python (pathlib
decides every link), and by `gpugate hf scan --format json` on the real
root: nb_files and size_on_disk per repo, and which repos upstream drops.
Under --root the same links out of the cache are never followed
(SECURITY.md): a separate test shows it. Nothing outside the case's folder
is read or written."""
import json
import os
import shutil
import subprocess
import sys

import conftest
from conftest import run_gpugate

VECTORS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "vectors", "hf-cache-links.tsv")

# huggingface_hub ee0a4510 (1.29.0.dev0), utils/_cache_manager.py: the lines of
# scan_cache_dir and _scan_cached_repo that decide what is followed and
# counted, quoted (refs reading and times left out: the cases keep refs/main).
ORACLE = r"""
import json, sys
from pathlib import Path
FILES_TO_IGNORE = [".DS_Store"]
class CorruptedCacheException(Exception): pass
def _scan_cached_repo(repo_path):
    if not repo_path.is_dir():
        raise CorruptedCacheException(f"Repo path is not a directory: {repo_path}")
    if "--" not in repo_path.name:
        raise CorruptedCacheException("not a valid HuggingFace cache directory")
    blob_stats = {}
    snapshots_path = repo_path / "snapshots"
    if not snapshots_path.exists() or not snapshots_path.is_dir():
        raise CorruptedCacheException(f"Snapshots dir doesn't exist in cached repo: {snapshots_path}")
    revisions = {}
    for revision_path in snapshots_path.iterdir():
        if revision_path.name in FILES_TO_IGNORE:
            continue
        if revision_path.is_file():
            raise CorruptedCacheException(f"Snapshots folder corrupted. Found a file: {revision_path}")
        cached_files = set()
        for file_path in revision_path.glob("**/*"):
            if file_path.is_dir():
                continue
            blob_path = Path(file_path).resolve()
            if not blob_path.exists():
                raise CorruptedCacheException(f"Blob missing (broken symlink): {blob_path}")
            if blob_path not in blob_stats:
                blob_stats[blob_path] = blob_path.stat()
            cached_files.add((file_path.name, file_path, blob_path))
        revisions[revision_path.name] = {
            "nb_files": len(cached_files),
            "size_on_disk": sum(blob_stats[b].st_size for b in {f[2] for f in cached_files})}
    return {"nb_files": len(blob_stats), "size_on_disk": sum(s.st_size for s in blob_stats.values()),
            "revisions": revisions}
cache_dir = Path(sys.argv[1]).expanduser().resolve()
out = {}
for repo_path in cache_dir.iterdir():
    if repo_path.name in FILES_TO_IGNORE or repo_path.name in (".locks", "CACHEDIR.TAG"):
        continue
    try:
        out[repo_path.name] = _scan_cached_repo(repo_path)
    except CorruptedCacheException as e:
        out[repo_path.name] = "corrupt"
print(json.dumps(out))
"""


def cases():
    with open(VECTORS, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line and not line.startswith("#"):
                yield line.split("\t")


def base_cache(folder):
    for repo, blob, text in (("models--a--b", "aa", "hello\n"), ("models--c--d", "bb", "0123456789\n")):
        r = os.path.join(folder, "hub", repo)
        os.makedirs(os.path.join(r, "blobs"))
        os.makedirs(os.path.join(r, "snapshots", "c1"))
        os.makedirs(os.path.join(r, "refs"))
        with open(os.path.join(r, "blobs", blob), "w") as f:
            f.write(text)
        os.symlink("../../blobs/" + blob, os.path.join(r, "snapshots", "c1", "f"))
        with open(os.path.join(r, "refs", "main"), "w") as f:
            f.write("c1")


def make(folder, ops):
    for op in filter(None, ops.split(";")):
        verb, path, *rest = op.split(" ", 2)
        path = path.replace("@", folder)
        assert path.startswith(folder), op  # never outside the case's folder
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if verb == "dir":
            os.makedirs(path, exist_ok=True)
        elif verb == "file":
            with open(path, "w") as f:
                f.write(rest[0])
        elif verb == "link":
            if os.path.lexists(path):
                os.unlink(path)  # a link made again, elsewhere
            os.symlink(rest[0].replace("@", folder), path)
        elif verb == "move":
            dest = rest[0].replace("@", folder)
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            shutil.move(path, dest)
        else:
            raise AssertionError(op)


def expected(text):
    out = {}
    for item in filter(None, text.split(";")):
        folder, what = item.split("=")
        out[folder] = "corrupt" if what == "corrupt" else tuple(int(x) for x in what.split("/"))
    return out


def test_cache_link_vectors(tmp_path):
    rows = list(cases())
    assert len(rows) >= 15
    disagree = []
    for name, ops, outcome in rows:
        folder = str(tmp_path / name)
        base_cache(folder)
        make(folder, ops)
        hub = os.path.join(folder, "hub")
        p = subprocess.run([sys.executable, "-c", ORACLE, hub], capture_output=True, text=True, timeout=30)
        assert p.returncode == 0, p.stderr
        upstream = json.loads(p.stdout)
        for repo, want in expected(outcome).items():
            got = upstream[repo] if upstream[repo] == "corrupt" else (upstream[repo]["nb_files"],
                                                                      upstream[repo]["size_on_disk"])
            assert got == want, (name, repo, "the upstream lines disagree with the vector", upstream[repo])
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": folder, "HF_HUB_CACHE": hub}
        r = run_gpugate("hf", "scan", "--format", "json", env=env)
        assert r.rc in (0, 1), r
        repos = {x["folder"]: x for x in r.json()["repos"]}
        for repo, up in upstream.items():
            g = repos[repo]
            hidden = any(w.get("hidden_by_hf_cache_ls") for w in g["warnings"])
            if up == "corrupt":
                ok = hidden
            else:
                revs = {v["commit_hash"]: (v["nb_files"], v["size_on_disk"]) for v in g["revisions"]}
                ok = (not hidden and (g["nb_files"], g["size_on_disk"]) == (up["nb_files"], up["size_on_disk"])
                      and revs == {c: (v["nb_files"], v["size_on_disk"]) for c, v in up["revisions"].items()})
            if not ok:
                disagree.append((name, repo, up, g))
        if not any(d[0] == name for d in disagree):
            conftest.EXACT_CASES["cache links"] += 1
    assert not disagree, disagree


def test_links_out_of_the_cache_are_not_followed_under_root(tmp_path):
    """Under --root the cache is read at another path than huggingface_hub's:
    a link that leaves it is reported, never read through (SECURITY.md)."""
    root = tmp_path / "img"
    hub = root / "cache" / "hub"
    base_cache(str(root / "cache"))
    outside = tmp_path / "host-secret.bin"
    outside.write_text("host data\n")
    os.symlink(str(outside), hub / "models--a--b" / "snapshots" / "c1" / "g")
    os.symlink("../../../../../../host-secret.bin", hub / "models--c--d" / "snapshots" / "c1" / "g")
    shutil.move(str(hub / "models--a--b"), str(tmp_path / "moved"))
    os.symlink(str(tmp_path / "moved"), hub / "models--a--b")
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/root", "HF_HUB_CACHE": "/cache/hub"}
    r = run_gpugate("hf", "scan", "--root", str(root), "--format", "json", env=env)
    assert r.rc == 1, r
    repos = {x["folder"]: x for x in r.json()["repos"]}
    msgs = " ".join(w["message"] for x in repos.values() for w in x["warnings"])
    assert "models--a--b is a link that is not followed: it points outside the cache" in msgs, msgs
    assert "not followed under --root" in msgs and repos["models--c--d"]["nb_files"] == 1, repos["models--c--d"]
    # the same tree on the real root: followed as upstream follows it
    r = run_gpugate("hf", "scan", "--format", "json", env=dict(env, HF_HUB_CACHE=str(hub)))
    repos = {x["folder"]: x for x in r.json()["repos"]}
    assert repos["models--a--b"]["nb_files"] == 2 and repos["models--c--d"]["nb_files"] == 2, repos
