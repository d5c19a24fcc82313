"""The token file as huggingface_hub reads it (issue 28): each case of
tests/vectors/hf-token.tsv is set up in a temp folder, decided by the
lines of huggingface_hub named there run in real Python (Path.read_text
decides what raises), and by gpugate: `hf where --format json` (token_from,
token_error) and the hf.location check, which fails when every download
would raise. Nothing outside the case's folder is read or written."""
import binascii
import json
import os
import re
import subprocess
import sys

import conftest
from conftest import run_gpugate

VECTORS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "vectors", "hf-token.tsv")

# The upstream lines, quoted (huggingface_hub ee0a4510, 1.29.0.dev0):
# constants.py HF_HOME / HF_TOKEN_PATH, utils/_auth.py get_token,
# _get_token_from_environment, _get_token_from_file, _clean_token, and
# utils/_headers.py get_token_to_send (token=None, as hf_hub_download passes).
ORACLE = r"""
import json, os, sys
from pathlib import Path
def _is_true(v): return v is not None and v.upper() in {"1", "ON", "YES", "TRUE"}
default_home = os.path.join(os.path.expanduser("~"), ".cache")
HF_HOME = os.path.expandvars(os.path.expanduser(os.getenv("HF_HOME", os.path.join(os.getenv("XDG_CACHE_HOME", default_home), "huggingface"))))
HF_TOKEN_PATH = os.path.expandvars(os.path.expanduser(os.getenv("HF_TOKEN_PATH", os.path.join(HF_HOME, "token"))))
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


def unescape(text):
    return re.sub(r"\\(u[0-9a-fA-F]{4}|.)",
                  lambda m: chr(int(m.group(1)[1:], 16)) if m.group(1)[0] == "u" and len(m.group(1)) == 5
                  else {"n": "\n", "r": "\r", "t": "\t", "\\": "\\"}[m.group(1)], text)


def cases():
    with open(VECTORS, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line and not line.startswith("#"):
                yield line.split("\t")


def case_env(folder, spec):
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": folder, "LANG": "C.UTF-8"}
    for item in spec.split(";"):
        if item:
            name, value = item.split("=", 1)
            env[name] = unescape(value).replace("@", folder)
    return env


def make(path, holds):
    os.makedirs(os.path.dirname(path), exist_ok=True) if holds != "under-file" else None
    if holds == "folder":
        os.makedirs(path)
    elif holds.startswith("file:"):
        with open(path, "w", encoding="utf-8", newline="") as f:
            f.write(unescape(holds[5:]))
    elif holds.startswith("bytes:"):
        with open(path, "wb") as f:
            f.write(binascii.unhexlify(holds[6:]))
    elif holds == "fifo":
        os.mkfifo(path)
    elif holds == "dangling":
        os.symlink(path + ".nowhere", path)
    elif holds == "loop":
        os.symlink(os.path.basename(path), path)
    elif holds == "under-file":
        os.makedirs(os.path.dirname(os.path.dirname(path)), exist_ok=True)
        with open(os.path.dirname(path), "w") as f:
            f.write("a file, not a folder\n")
    else:
        assert holds == "missing", holds


def oracle(env, folder, what):
    try:
        p = subprocess.run([sys.executable, "-c", ORACLE, what], env=env, cwd=folder, capture_output=True, text=True,
                           timeout=5)
    except subprocess.TimeoutExpired:
        return "blocks"
    assert p.returncode == 0, p.stderr
    return p.stdout.strip()


def test_token_vectors(tmp_path):
    rows = list(cases())
    assert len(rows) >= 20
    disagree = []
    for name, spec, holds, outcome in rows:
        folder = str(tmp_path / name)
        os.makedirs(folder)
        env = case_env(folder, spec)
        path = oracle(env, folder, "path")
        if path:
            assert path.startswith(folder), (name, path)  # never outside the case's folder
            make(path, holds)
        assert oracle(env, folder, "decide") == outcome, (name, "the upstream lines disagree with the vector")
        r = run_gpugate("hf", "where", "--format", "json", env=env)
        j = json.loads(r.out)
        if outcome.startswith("token "):
            got_ok = j["token_from"] == outcome[6:] and j["token_error"] is None and r.rc == 0
        elif outcome == "none":
            got_ok = j["token_from"] is None and j["token_error"] is None and r.rc == 0
        elif outcome == "blocks":
            got_ok = j["token_error"] is not None and "block" in j["token_error"] and r.rc == 1
        else:
            exception = outcome.split()[1]
            got_ok = j["token_error"] is not None and exception in j["token_error"] and r.rc == 1
        if not got_ok:
            disagree.append((name, outcome, j.get("token_from"), j.get("token_error")))
            continue
        conftest.EXACT_CASES["token file"] += 1
    assert not disagree, disagree


def test_location_check_fails_when_downloads_would_raise(tmp_path):
    """hf.location fails naming the cause; `hf where -v` says why."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path), "HF_TOKEN_PATH": ""}
    r = run_gpugate("check", "--only", "hf.location", "--format", "json", env=env)
    c = r.check("hf.location")
    assert r.rc == 1 and c["status"] == "fail" and "IsADirectoryError" in c["summary"], r
    assert "unset HF_TOKEN_PATH" in c["remediation"]
    r = run_gpugate("hf", "where", "-v", env=env)
    assert r.rc == 1 and "every huggingface_hub download raises" in r.out and "IsADirectoryError" in r.out, r
    env["HF_TOKEN"] = "hf_x"  # the variable wins: the file is never read
    r = run_gpugate("check", "--only", "hf.location", "--format", "json", env=env)
    assert r.rc == 0 and r.check("hf.location")["status"] == "pass", r
