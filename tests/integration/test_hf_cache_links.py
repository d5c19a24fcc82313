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

import conftest
import hf_upstream
from conftest import run_gpugate
from hf_upstream import case_env


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
    rows = list(hf_upstream.vector_rows("hf-cache-links.tsv"))
    assert len(rows) >= 15
    disagree = []
    for name, ops, outcome in rows:
        folder = str(tmp_path / name)
        base_cache(folder)
        make(folder, ops)
        hub = os.path.join(folder, "hub")
        upstream = json.loads(hf_upstream.run(hf_upstream.SCAN_PY, hub, env=case_env(HOME=folder)))
        for repo, want in expected(outcome).items():
            got = upstream[repo] if upstream[repo] == "corrupt" else (upstream[repo]["nb_files"],
                                                                      upstream[repo]["size_on_disk"])
            assert got == want, (name, repo, "the upstream lines disagree with the vector", upstream[repo])
        env = case_env(HOME=folder, HF_HUB_CACHE=hub)
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
    env = case_env(HOME="/root", HF_HUB_CACHE="/cache/hub")
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
