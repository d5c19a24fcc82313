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

import conftest
import hf_upstream
from conftest import run_gpugate
from hf_upstream import case_env


def unescape(text):
    return re.sub(r"\\(u[0-9a-fA-F]{4}|.)",
                  lambda m: chr(int(m.group(1)[1:], 16)) if m.group(1)[0] == "u" and len(m.group(1)) == 5
                  else {"n": "\n", "r": "\r", "t": "\t", "\\": "\\"}[m.group(1)], text)


def vector_env(folder, spec):
    env = case_env(HOME=folder, LANG="C.UTF-8")
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
        return hf_upstream.run(hf_upstream.TOKEN_PY, what, env=env, cwd=folder, timeout=5)
    except subprocess.TimeoutExpired:
        return "blocks"


def test_token_vectors(tmp_path):
    rows = list(hf_upstream.vector_rows("hf-token.tsv"))
    assert len(rows) >= 20
    disagree = []
    for name, spec, holds, outcome in rows:
        folder = str(tmp_path / name)
        os.makedirs(folder)
        env = vector_env(folder, spec)
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
    env = case_env(HOME=str(tmp_path), HF_TOKEN_PATH="")
    r = run_gpugate("check", "--only", "hf.location", "--format", "json", env=env)
    c = r.check("hf.location")
    assert r.rc == 1 and c["status"] == "fail" and "IsADirectoryError" in c["summary"], r
    assert "unset HF_TOKEN_PATH" in c["remediation"]
    r = run_gpugate("hf", "where", "-v", env=env)
    assert r.rc == 1 and "every huggingface_hub download raises" in r.out and "IsADirectoryError" in r.out, r
    env["HF_TOKEN"] = "hf_x"  # the variable wins: the file is never read
    r = run_gpugate("check", "--only", "hf.location", "--format", "json", env=env)
    assert r.rc == 0 and r.check("hf.location")["status"] == "pass", r
