"""huggingface_hub's own lines, quoted, as the oracle of the hf tests: run
in real Python in a child process (the real posixpath, pathlib and open
decide), with the case's environment and nothing else, against the inputs
gpugate is given. One place quotes them, at one upstream commit:
huggingface_hub ee0a4510f4bc15e26cb722be2efc2bdb01383ca0 (1.29.0.dev0).
Callers: test_hf_where.py (constants.py), test_hf_token.py (the token
file), test_hf_cache_links.py (scan_cache_dir); the hf tests take a case's
environment from case_env or hub_env."""
import os
import subprocess
import sys

VECTORS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "vectors")

# src/huggingface_hub/constants.py, its statements in their order: the
# endpoint and staging mode (which moves the token file but not the hub
# cache), HF_HOME, the hub and assets caches with their legacy variables,
# the token file, the xet cache taken as written (no expansion).
CONSTANTS_PY = r"""
import json, os, sys
def exp(p): return os.path.expandvars(os.path.expanduser(p))
def _is_true(v): return v is not None and v.upper() in {"1", "ON", "YES", "TRUE"}
_staging_mode = _is_true(os.environ.get("HUGGINGFACE_CO_STAGING"))
ENDPOINT = os.getenv("HF_ENDPOINT", "https://huggingface.co").rstrip("/")
if _staging_mode:
    ENDPOINT = "https://hub-ci.huggingface.co"
default_home = os.path.join(os.path.expanduser("~"), ".cache")
HF_HOME = exp(os.getenv("HF_HOME", os.path.join(os.getenv("XDG_CACHE_HOME", default_home), "huggingface")))
HUGGINGFACE_HUB_CACHE = os.getenv("HUGGINGFACE_HUB_CACHE", os.path.join(HF_HOME, "hub"))
HUGGINGFACE_ASSETS_CACHE = os.getenv("HUGGINGFACE_ASSETS_CACHE", os.path.join(HF_HOME, "assets"))
HF_HUB_CACHE = exp(os.getenv("HF_HUB_CACHE", HUGGINGFACE_HUB_CACHE))
HF_ASSETS_CACHE = exp(os.getenv("HF_ASSETS_CACHE", HUGGINGFACE_ASSETS_CACHE))
HF_TOKEN_PATH = exp(os.getenv("HF_TOKEN_PATH", os.path.join(HF_HOME, "token")))
if _staging_mode:
    _staging_home = os.path.join(os.path.expanduser("~"), ".cache", "huggingface_staging")
    HF_TOKEN_PATH = os.path.join(_staging_home, "token")
HF_XET_CACHE = os.getenv("HF_XET_CACHE", os.path.join(HF_HOME, "xet"))
"""

# After CONSTANTS_PY, with argv[1] "decide": utils/_auth.py get_token,
# _get_token_from_environment, _get_token_from_file, _clean_token, and
# utils/_headers.py get_token_to_send (token=None, as hf_hub_download
# passes); prints "token VARIABLE", "token the token file", "none" or
# "raises EXCEPTION". With "path": the token file's path.
TOKEN_PY = CONSTANTS_PY + r"""
from pathlib import Path
if sys.argv[1] == "path":
    print(HF_TOKEN_PATH)
    sys.exit(0)
def _clean_token(token):
    if token is None:
        return None
    return token.replace("\r", "").replace("\n", "").strip() or None
def _get_token_from_environment():
    return _clean_token(os.environ.get("HF_TOKEN") or os.environ.get("HUGGING_FACE_HUB_TOKEN"))
def _get_token_from_file():
    try:
        return _clean_token(Path(HF_TOKEN_PATH).read_text())
    except FileNotFoundError:
        return None
if _is_true(os.environ.get("HF_HUB_DISABLE_IMPLICIT_TOKEN")):
    print("none")
    sys.exit(0)
env = _get_token_from_environment()
if env:
    print("token " + ("HF_TOKEN" if os.environ.get("HF_TOKEN") else "HUGGING_FACE_HUB_TOKEN"))
    sys.exit(0)
try:
    print("token the token file" if _get_token_from_file() else "none")
except Exception as e:
    print("raises " + type(e).__name__)
"""

# utils/_cache_manager.py: the lines of scan_cache_dir and _scan_cached_repo
# that decide what is followed and counted (refs reading and times left
# out); argv[1] is the hub cache. Prints {repo folder: {nb_files,
# size_on_disk, revisions: {commit: {nb_files, size_on_disk}}} or "corrupt"}.
SCAN_PY = r"""
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


def run(code, *args, env, cwd=None, timeout=30):
    """What code prints (stripped), run by this Python with exactly env;
    subprocess.TimeoutExpired when it blocks past timeout seconds."""
    p = subprocess.run([sys.executable, "-c", code, *args], env=env, cwd=cwd, capture_output=True, text=True,
                       timeout=timeout)
    assert p.returncode == 0, p.stderr
    return p.stdout.strip()


def case_env(**variables):
    """A case's whole environment: PATH and the variables the case sets
    (HOME among them); nothing else of the test's own leaks in."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **variables}


def hub_env(cache, **extra):
    """A case's environment around one hub cache: HF_HUB_CACHE names it and
    HOME names no folder, so nothing of the test's own home is read; extra
    adds or overrides."""
    env = case_env(HOME="/nonexistent-home", HF_HUB_CACHE=str(cache))
    env.update(extra)
    return env


def vector_rows(name):
    """The tab-separated rows of tests/vectors/NAME, comments and blank
    lines left out."""
    with open(os.path.join(VECTORS, name), encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line and not line.startswith("#"):
                yield line.split("\t")
