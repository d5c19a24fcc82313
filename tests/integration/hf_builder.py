"""Builds Hugging Face hub caches for the hf tests, the way huggingface_hub
lays them out. Blob names come from the oracles: `sha256sum` for LFS files
and `git hash-object` for plain git files (never from gpugate's code)."""
import os
import subprocess

COMMIT_A = "a" * 39 + "1"
COMMIT_B = "b" * 39 + "2"


def sha256sum(data: bytes) -> str:
    out = subprocess.run(["sha256sum"], input=data, capture_output=True, check=True).stdout
    return out.split()[0].decode()


def git_hash(data: bytes) -> str:
    out = subprocess.run(["git", "hash-object", "--stdin"], input=data, capture_output=True,
                         check=True).stdout
    return out.strip().decode()


def add_repo(cache, folder, revisions, refs=None):
    """revisions: {commit: {path: (bytes, lfs)}}; refs: {name: commit}.
    Returns {path: blob name} over all revisions."""
    repo = os.path.join(cache, folder)
    os.makedirs(os.path.join(repo, "blobs"), exist_ok=True)
    names = {}
    for commit, files in revisions.items():
        for path, (data, lfs) in files.items():
            etag = sha256sum(data) if lfs else git_hash(data)
            names[path] = etag
            blob = os.path.join(repo, "blobs", etag)
            if not os.path.exists(blob):
                with open(blob, "wb") as f:
                    f.write(data)
            link = os.path.join(repo, "snapshots", commit, path)
            os.makedirs(os.path.dirname(link), exist_ok=True)
            depth = path.count("/") + 2
            os.symlink("../" * depth + "blobs/" + etag, link)
    for name, commit in (refs or {}).items():
        p = os.path.join(repo, "refs", name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(commit)  # no trailing newline, as huggingface_hub writes
    return names


def valid_cache(cache):
    """Models, a dataset, nested folders, two revisions sharing blobs."""
    os.makedirs(cache, exist_ok=True)
    with open(os.path.join(cache, "CACHEDIR.TAG"), "w") as f:
        f.write("Signature: 8a477f597d28d172789f06886806bc55\n")
    weights = bytes(range(256)) * 4096 + b"tail"
    config = b'{"model_type": "llama"}\n'
    m = {}
    m["model"] = add_repo(cache, "models--org--tiny", {
        COMMIT_A: {"config.json": (config, False), "model.safetensors": (weights, True),
                   "tokenizer/vocab.txt": (b"a\nb\nc\n", False)},
        COMMIT_B: {"config.json": (config + b"\n", False), "model.safetensors": (weights, True)},
    }, {"main": COMMIT_B, "v1": COMMIT_A})
    m["dataset"] = add_repo(cache, "datasets--glue", {
        COMMIT_A: {"data/train/part-0.parquet": (b"PAR1" * 1000, True), "README.md": (b"# glue\n", False)},
    }, {"main": COMMIT_A, "refs/pr/1": COMMIT_A})
    m["solo"] = add_repo(cache, "models--solo", {COMMIT_A: {"w.bin": (b"\0" * 70000, True)}},
                         {"main": COMMIT_A})
    os.makedirs(os.path.join(cache, ".locks", "models--org--tiny"), exist_ok=True)
    return m


def blob_path(cache, folder, name):
    return os.path.join(cache, folder, "blobs", name)


def lfs_pointer(data: bytes) -> bytes:
    """The git-lfs pointer file whose git blob id the Hub's tree API gives
    as an LFS file's `oid` (https://github.com/git-lfs/git-lfs/blob/main/docs/spec.md)."""
    return ("version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize %d\n"
            % (sha256sum(data), len(data))).encode()


def listing_entries(files):
    """files: {path: (bytes, lfs)} -> the listing's "files" map, as
    huggingface_hub's TreeCacheEntry.to_json() writes each entry
    (src/huggingface_hub/_tree_cache.py)."""
    out = {}
    for path, (data, lfs) in files.items():
        if lfs:
            out[path] = {"size": len(data), "blob_id": git_hash(lfs_pointer(data)),
                         "lfs_sha256": sha256sum(data), "lfs_size": len(data)}
        else:
            out[path] = {"size": len(data), "blob_id": git_hash(data)}
    return out


def write_listing(cache, folder, commit, files, raw=None):
    """trees/<commit>.json as write_tree_cache() writes it: format_version 1,
    files sorted, json.dump(indent=1). raw: write these bytes instead."""
    import json
    trees = os.path.join(cache, folder, "trees")
    os.makedirs(trees, exist_ok=True)
    path = os.path.join(trees, commit + ".json")
    if raw is None:
        entries = listing_entries(files)
        raw = json.dumps({"format_version": 1, "files": {p: entries[p] for p in sorted(entries)}},
                         indent=1).encode()
    with open(path, "wb") as f:
        f.write(raw)
    return path


def listed_cache(cache):
    """valid_cache() with a listing per revision, as a current
    snapshot_download leaves it. Returns (blob names, {(folder, commit): files})."""
    names = valid_cache(cache)
    weights = bytes(range(256)) * 4096 + b"tail"
    config = b'{"model_type": "llama"}\n'
    trees = {
        ("models--org--tiny", COMMIT_A): {"config.json": (config, False), "model.safetensors": (weights, True),
                                         "tokenizer/vocab.txt": (b"a\nb\nc\n", False)},
        ("models--org--tiny", COMMIT_B): {"config.json": (config + b"\n", False), "model.safetensors": (weights, True)},
        ("datasets--glue", COMMIT_A): {"data/train/part-0.parquet": (b"PAR1" * 1000, True),
                                      "README.md": (b"# glue\n", False)},
        ("models--solo", COMMIT_A): {"w.bin": (b"\0" * 70000, True)},
    }
    for (folder, commit), files in trees.items():
        write_listing(cache, folder, commit, files)
    return names, trees
