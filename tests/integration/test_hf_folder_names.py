"""Repo folder names both ways (issue 27): every row of
tests/vectors/hf-repo-folders.tsv is decided by huggingface_hub's own lines,
quoted below and run in real Python; then every name a folder can have is
made in a temp cache and `gpugate hf scan` must read it as the row says
(src/hf/cache_format.c through src/hf/layout.c). tests/unit/test_hf_cache_format.c
runs the same rows through the C functions."""
import os

import conftest
from conftest import run_gpugate

VECTORS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "vectors", "hf-repo-folders.tsv")


# huggingface_hub ee0a4510 (1.29.0.dev0), quoted: constants.py
# REPO_ID_SEPARATOR and REPO_TYPES_MAPPING, file_download.py
# repo_folder_name(), utils/_cache_manager.py _scan_cached_repo() (its
# name-reading lines; it then refuses types other than dataset, model, space).
REPO_ID_SEPARATOR = "--"
REPO_TYPES_MAPPING = {"datasets": "dataset", "spaces": "space", "models": "model", "kernels": "kernel"}


def repo_folder_name(*, repo_id, repo_type):
    parts = [f"{repo_type}s", *repo_id.split("/")]
    return REPO_ID_SEPARATOR.join(parts)


def scan_cached_repo_name(name):
    """(prefix, type, id), or None where upstream raises 'not a valid
    HuggingFace cache directory'."""
    if "--" not in name:
        return None
    repo_type, repo_id = name.split("--", maxsplit=1)
    prefix = repo_type
    repo_type = repo_type[:-1]  # "models" -> "model"
    repo_id = repo_id.replace("--", "/")  # google/fleurs -> "google/fleurs"
    return prefix, repo_type, repo_id


def rows():
    out = []
    with open(VECTORS, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#"):
                continue
            cols = line.rstrip("\n").split("\t")
            assert len(cols) == 5, line
            out.append(cols)
    assert len(out) >= 31 and sum(c[4].startswith("upstream ") for c in out) >= 14
    return out


def test_vectors_agree_with_huggingface_hub():
    for name, typ, repo_id, verdict, source in rows():
        read = scan_cached_repo_name(name)
        where = f"{name!r} ({source})"
        if verdict in ("ok", "lossy", "empty-part"):
            assert repo_folder_name(repo_id=repo_id, repo_type=typ) == name, where
            assert read[1] == typ and read[0] in REPO_TYPES_MAPPING, where
        if verdict == "ok":
            assert read[2] == repo_id, where
        elif verdict == "lossy":
            assert read[2] != repo_id, where
        elif verdict == "empty-part":
            assert read[2] == repo_id and "" in repo_id.split("/"), where
        elif verdict == "unknown-type":
            assert read[0] == typ and read[0] not in REPO_TYPES_MAPPING and read[2] == repo_id, where
        elif verdict == "no-separator":
            assert read is None, where
        else:
            assert verdict == "not-a-name" and (not name or "/" in name), where
    conftest.EXACT_CASES["repo folders"] = conftest.EXACT_CASES.get("repo folders", 0) + len(rows())


def test_scan_reads_names_as_the_vectors(tmp_path):
    """Each name a folder can have, made in one cache: hf scan gives the
    row's type and id (an unknown type is kept as its prefix), warns on an
    empty part, and calls a name without the separator no cache folder."""
    expect = {}
    for name, typ, repo_id, verdict, _ in rows():
        if verdict in ("not-a-name", "lossy"):
            continue  # no such folder; a lossy row's name is an ok row's too
        (tmp_path / name).mkdir(exist_ok=True)
        expect[name] = (typ, repo_id, verdict)
    s = run_gpugate("hf", "scan", "--format", "json", "--cache", str(tmp_path))
    assert s.rc == 1, s  # no folder has snapshots/
    repos = {r["folder"]: r for r in s.json()["repos"]}
    assert set(repos) == set(expect), (set(repos) ^ set(expect))
    for name, (typ, repo_id, verdict) in expect.items():
        r, texts = repos[name], [w["message"] for w in repos[name]["warnings"]]
        if verdict == "no-separator":
            assert any("no '--'" in t for t in texts), r
            continue
        assert (r["repo_type"], r["repo_id"]) == (typ, repo_id), r
        assert any("unknown repo type" in t for t in texts) == (verdict == "unknown-type"), r
        assert any("has an empty part" in t for t in texts) == (verdict == "empty-part"), r
