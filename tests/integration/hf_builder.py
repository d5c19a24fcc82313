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
