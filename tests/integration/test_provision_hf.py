"""gpugate hf fetch against a hub stand-in on 127.0.0.1 (provision_hub.py):
the cache tree is compared byte for byte with the layout huggingface_hub
writes, and every failure mode leaves no blob with wrong content behind."""
import hashlib
import json
import os
import re
import shutil
import subprocess

import pytest

from provision_hub import TOKEN, Repo, git_blob_sha1

GPUGATE = os.environ.get("GPUGATE", os.path.join(os.path.dirname(__file__), "../../build/gpugate"))
PROVISION = os.path.join(os.path.dirname(os.path.abspath(GPUGATE)), "gpugate-provision")
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def fetch_cmd():
    """`gpugate hf fetch` once the hf dispatcher routes it; the executable itself before."""
    r = subprocess.run([GPUGATE, "hf", "fetch", "--help"], capture_output=True, text=True)
    if r.returncode == 0 and "hf fetch" in r.stdout:
        return [GPUGATE, "hf", "fetch"]
    return [PROVISION, "hf-fetch"]


@pytest.fixture
def env(tmp_path, hub):
    e = {k: v for k, v in os.environ.items()
         if not k.startswith(("HF_", "HUGGING", "TRANSFORMERS_", "XDG_")) and "proxy" not in k.lower()}
    e.update(HF_ENDPOINT=hub.url, HF_HOME=str(tmp_path / "home"), HOME=str(tmp_path))
    os.makedirs(tmp_path / "xdg", mode=0o700, exist_ok=True)
    e["XDG_RUNTIME_DIR"] = str(tmp_path / "xdg")  # hf verify's record: never the host's /run
    return e


def run(args, env, timeout=60):
    return subprocess.run(fetch_cmd() + args, env=env, capture_output=True, text=True, timeout=timeout)


def tree(root):
    """{relative path: ("link", target) | ("file", bytes) | ("dir",)} of a folder."""
    out = {}
    for dirpath, dirs, files in os.walk(root):
        for name in dirs + files:
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, root)
            if os.path.islink(full):
                out[rel] = ("link", os.readlink(full))
            elif os.path.isdir(full):
                out[rel] = ("dir",)
            else:
                with open(full, "rb") as f:
                    out[rel] = ("file", f.read())
    return out


# huggingface_hub src/huggingface_hub/_local_folder.py, CACHEDIR_TAG_CONTENT
CACHEDIR_TAG = (b"Signature: 8a477f597d28d172789f06886806bc55\n"
                b"# This file is a cache directory tag created by huggingface_hub.\n"
                b"# For information about cache directory tags, see:\n"
                b"#\thttps://bford.info/cachedir/\n")


def listing(repo):
    """trees/<commit>.json as huggingface_hub writes it (_tree_cache.py,
    write_tree_cache and TreeCacheEntry.to_json): the same json.dump call."""
    files = {}
    for p in sorted(repo.files):
        info = {"size": len(repo.files[p]), "blob_id": repo.blob_id(p)}
        if p in repo.lfs:
            info["lfs_sha256"] = repo.etag(p)
            info["lfs_size"] = len(repo.files[p])
        files[p] = info
    return json.dumps({"format_version": 1, "files": files}, indent=1).encode()


def expected_tree(repo, paths=None, ref="main"):
    """The cache snapshot_download (paths None) or hf_hub_download of each of
    paths leaves: a listing only for the whole repo."""
    folder = "%ss--%s" % (repo.kind, repo.repo_id.replace("/", "--"))
    out = {".locks": ("dir",), ".locks/" + folder: ("dir",), folder: ("dir",),
           folder + "/blobs": ("dir",), folder + "/snapshots": ("dir",),
           folder + "/snapshots/" + repo.commit: ("dir",), "CACHEDIR.TAG": ("file", CACHEDIR_TAG)}
    if paths is None:
        out[folder + "/trees"] = ("dir",)
        out[folder + "/trees/%s.json" % repo.commit] = ("file", listing(repo))
    if ref:
        out[folder + "/refs"] = ("dir",)
        out[folder + "/refs/" + ref] = ("file", repo.commit.encode())
    for p in paths if paths is not None else repo.files:
        etag = repo.etag(p)
        out[".locks/%s/%s.lock" % (folder, etag)] = ("file", b"")
        out["%s/blobs/%s" % (folder, etag)] = ("file", repo.files[p])
        parts = p.split("/")
        for i in range(1, len(parts)):
            out["%s/snapshots/%s/%s" % (folder, repo.commit, "/".join(parts[:i]))] = ("dir",)
        out["%s/snapshots/%s/%s" % (folder, repo.commit, p)] = \
            ("link", "../" * (len(parts) + 1) + "blobs/" + etag)
    return out


def model(hub, **kw):
    files = {"config.json": b'{"hidden_size": 8}\n', "README.md": b"# test\n",
             "weights/model.safetensors": os.urandom(3 << 20), "tokenizer.json": b"{}" * 5000}
    return hub.add(Repo("org/tiny", COMMIT, files, lfs={"weights/model.safetensors"}, **kw))


@pytest.mark.skipif(not shutil.which("strace"), reason="strace not installed")
@pytest.mark.parametrize("off", [False, True])
def test_fetch_runs_under_the_network_filter(hub, env, tmp_path, off):
    """gpugate-provision loads the network profile (IP sockets and links, no
    fork or execve; the speculation mitigations kept) before hf fetch talks to
    the hub, and still writes the whole snapshot; GPUGATE_NO_SANDBOX=1 turns it off."""
    repo = model(hub)
    if off:
        env["GPUGATE_NO_SANDBOX"] = "1"
    env["ASAN_OPTIONS"] = "detect_leaks=0"  # LeakSanitizer cannot ptrace under strace
    log = tmp_path / "strace.log"
    r = subprocess.run(["strace", "-f", "-o", str(log), "-e", "trace=seccomp,connect"] + fetch_cmd() + ["org/tiny"],
                       env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert tree(tmp_path / "home" / "hub") == expected_tree(repo)
    text = log.read_text()
    load = re.search(r"seccomp\(SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, \{len=\d+, filter=0x[0-9a-f]+\}\) = 0", text)
    if off:
        assert "SECCOMP_SET_MODE_FILTER" not in text, text
    else:
        assert load, text
        first_connect = re.search(r"connect\(\d+, \{sa_family=AF_INET", text)
        assert first_connect and first_connect.start() > load.start(), "the hub was reached before the filter loaded"


def test_full_repo_matches_huggingface_layout(hub, env, tmp_path):
    repo = model(hub)
    r = run(["org/tiny"], env)
    assert r.returncode == 0, r.stderr
    cache = tmp_path / "home" / "hub"
    snapshot = cache / "models--org--tiny" / "snapshots" / COMMIT
    assert r.stdout.strip() == str(snapshot)
    assert "4 of 4 files" in r.stderr
    assert tree(cache) == expected_tree(repo)
    # gpugate's own offline verifier and layout scan accept the tree it wrote
    v = subprocess.run([GPUGATE, "hf", "verify", "--cache", str(cache), "--format", "json"], env=env,
                       capture_output=True, text=True, timeout=60)
    assert v.returncode == 0, v.stdout + v.stderr
    s = subprocess.run([GPUGATE, "hf", "scan", "--cache", str(cache)], env=env,
                       capture_output=True, text=True, timeout=60)
    assert s.returncode == 0 and "org/tiny" in s.stdout, s.stdout + s.stderr
    # independent oracles: git hash-object for plain files, sha256 for LFS
    git = subprocess.run(["git", "hash-object", str(snapshot / "config.json")], capture_output=True, text=True)
    assert git.stdout.strip() == repo.etag("config.json")
    assert hashlib.sha256((snapshot / "weights/model.safetensors").read_bytes()).hexdigest() == \
        repo.etag("weights/model.safetensors")
    # the LFS body came from the CDN host name, not from the hub's
    hosts = {(m, h.split(":")[0], p.split("/")[1]) for m, h, p, _ in hub.log}
    assert ("GET", "localhost", "cdn") in hosts
    # a second run downloads nothing and verifies what is there
    n = len(hub.log)
    r = run(["org/tiny"], env)
    assert r.returncode == 0 and "4 were already there" in r.stderr
    assert not [x for x in hub.log[n:] if x[2].startswith("/cdn/") or x[0] == "GET" and "resolve" in x[2]]
    assert tree(cache) == expected_tree(repo)


def test_files_with_the_same_content_share_one_blob(hub, env, tmp_path):
    """Two files with one etag: one blob, downloaded once, two snapshot links;
    the blob list is built in etag order with the first file as its label."""
    same = os.urandom(1 << 20)
    files = {"b/second.bin": same, "a/first.bin": same, "z.txt": b"z\n", "c.bin": os.urandom(4096)}
    repo = hub.add(Repo("org/dup", COMMIT, files, lfs={"b/second.bin", "a/first.bin", "c.bin"}))
    r = run(["org/dup"], env)
    assert r.returncode == 0, r.stderr
    assert "4 of 4 files" in r.stderr
    cache = tmp_path / "home" / "hub"
    assert tree(cache) == expected_tree(repo)
    gets = [p for m, _, p, _ in hub.log if m == "GET" and "resolve" in p and p.endswith(".bin")]
    assert len([p for p in gets if p.endswith(("first.bin", "second.bin"))]) == 1, gets


def test_selected_files_at_commit_write_no_ref(hub, env, tmp_path):
    repo = model(hub)
    r = run(["org/tiny@" + COMMIT, "config.json", "weights/model.safetensors"], env)
    assert r.returncode == 0, r.stderr
    assert tree(tmp_path / "home" / "hub") == \
        expected_tree(repo, ["config.json", "weights/model.safetensors"], ref=None)


def test_cache_location_from_hf_hub_cache_with_expansion(hub, env, tmp_path):
    model(hub)
    env["MYROOT"] = str(tmp_path / "elsewhere")
    env["HF_HUB_CACHE"] = "$MYROOT/c"
    r = run(["org/tiny", "config.json"], env)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "elsewhere/c/models--org--tiny/refs/main").read_bytes() == COMMIT.encode()
    env["HF_HUB_CACHE"] = "~/tilde"
    assert run(["org/tiny", "config.json"], env).returncode == 0
    assert (tmp_path / "tilde/models--org--tiny/refs/main").exists()


def test_gated_repo_token_reaches_hub_not_cdn(hub, env, tmp_path):
    repo = model(hub, gated=True)
    r = run(["org/tiny"], env)
    assert r.returncode == 1
    assert "HTTP 401" in r.stderr and "HF_TOKEN" in r.stderr
    assert not (tmp_path / "home/hub/models--org--tiny/blobs").exists() or \
        not os.listdir(tmp_path / "home/hub/models--org--tiny/blobs")
    hub.log.clear()
    (tmp_path / "home").mkdir(exist_ok=True)
    (tmp_path / "home" / "token").write_text(TOKEN + "\n")
    r = run(["org/tiny"], env)
    assert r.returncode == 0, r.stderr
    assert TOKEN not in r.stdout + r.stderr
    hub_auth = {a for m, h, p, a in hub.log if h.startswith("127.0.0.1")}
    cdn_auth = {a for m, h, p, a in hub.log if h.startswith("localhost")}
    assert hub_auth == {"Bearer " + TOKEN}
    assert cdn_auth == {None} and cdn_auth  # the CDN was asked, without the token
    assert tree(tmp_path / "home/hub") == expected_tree(repo)


def test_hf_token_env_wins_over_file(hub, env, tmp_path):
    model(hub, gated=True)
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "token").write_text("hf_wrong_token")
    env["HF_TOKEN"] = TOKEN
    r = run(["org/tiny", "config.json"], env)
    assert r.returncode == 0, r.stderr


def test_missing_file_404_and_no_exist_marker(hub, env, tmp_path):
    model(hub)
    r = run(["org/tiny", "config.json", "nope.bin"], env)
    assert r.returncode == 1
    assert "nope.bin" in r.stderr and "EntryNotFound" in r.stderr and "HTTP 404" in r.stderr
    base = tmp_path / "home/hub/models--org--tiny"
    assert (base / ".no_exist" / COMMIT / "nope.bin").read_bytes() == b""
    assert os.readlink(base / "snapshots" / COMMIT / "config.json").startswith("../../blobs/")


def test_unknown_repo_and_revision(hub, env):
    model(hub)
    r = run(["org/other"], env)
    assert r.returncode == 1 and "RepositoryNotFound" in r.stderr
    r = run(["org/tiny@v9", "config.json"], env)
    assert r.returncode == 1 and "RevisionNotFound" in r.stderr


def test_flaky_503_and_slow_response_are_retried(hub, env, tmp_path):
    repo = model(hub)
    sha = repo.etag("weights/model.safetensors")
    hub.faults[sha] = {"503": 2, "slow": 0.2}
    hub.faults["config.json"] = {"head503": 1}
    r = run(["org/tiny"], env)
    assert r.returncode == 0, r.stderr
    assert "retrying" in r.stderr and "HTTP 503" in r.stderr
    assert tree(tmp_path / "home/hub") == expected_tree(repo)


def test_dropped_connection_resumes(hub, env, tmp_path):
    repo = model(hub)
    sha = repo.etag("weights/model.safetensors")
    hub.faults[sha] = {"drop": 1}
    r = run(["org/tiny"], env)
    assert r.returncode == 0, r.stderr
    assert "retrying" in r.stderr
    ranged = [x for x in hub.log if x[2] == "/cdn/" + sha]
    assert len(ranged) == 2
    assert tree(tmp_path / "home/hub") == expected_tree(repo)


def test_corrupt_cdn_body_leaves_nothing(hub, env, tmp_path):
    repo = model(hub)
    sha = repo.etag("weights/model.safetensors")
    hub.faults[sha] = {"corrupt": True}
    r = run(["org/tiny"], env)
    assert r.returncode == 1
    assert "sha256 mismatch" in r.stderr and "weights/model.safetensors" in r.stderr
    blobs = os.listdir(tmp_path / "home/hub/models--org--tiny/blobs")
    assert sha not in blobs
    assert not [b for b in blobs if b.endswith(".incomplete")]
    assert not (tmp_path / "home/hub/models--org--tiny/snapshots" / COMMIT / "weights/model.safetensors").exists()


def test_corrupted_blob_in_cache_is_replaced(hub, env, tmp_path):
    repo = model(hub)
    assert run(["org/tiny"], env).returncode == 0
    blob = tmp_path / "home/hub/models--org--tiny/blobs" / repo.etag("config.json")
    blob.write_bytes(b'{"hidden_size": 9}\n')
    r = run(["org/tiny"], env)
    assert r.returncode == 0 and "does not match its hash" in r.stderr
    assert tree(tmp_path / "home/hub") == expected_tree(repo)


def test_renamed_repo_follows_relative_redirect(hub, env, tmp_path):
    repo = model(hub)
    hub.renamed["old/name"] = "org/tiny"
    r = run(["old/name", "config.json"], env)
    assert r.returncode == 0, r.stderr
    link = tmp_path / "home/hub/models--old--name/snapshots" / COMMIT / "config.json"
    assert link.read_bytes() == repo.files["config.json"]


def test_dataset_repo_type(hub, env, tmp_path):
    hub.add(Repo("org/data", COMMIT, {"train.csv": b"a,b\n1,2\n"}, kind="dataset"))
    r = run(["org/data", "--repo-type", "dataset"], env)
    assert r.returncode == 0, r.stderr
    assert os.readlink(tmp_path / "home/hub/datasets--org--data/snapshots" / COMMIT / "train.csv") == \
        "../../blobs/" + git_blob_sha1(b"a,b\n1,2\n")


def test_offline_refuses_without_request(hub, env):
    model(hub)
    for var, val in (("HF_HUB_OFFLINE", "1"), ("HF_HUB_OFFLINE", "yes"), ("TRANSFORMERS_OFFLINE", "TRUE")):
        e = dict(env, **{var: val})
        r = run(["org/tiny"], e)
        assert r.returncode == 1 and "offline" in r.stderr
    assert hub.log == []
    r = run(["org/tiny", "config.json"], dict(env, HF_HUB_OFFLINE="0", TRANSFORMERS_OFFLINE="1"))
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("name", ["../evil", "/etc/passwd", "a/../../b", "C:evil", "a\\b", "a//b"])
def test_hostile_file_names_rejected(hub, env, name):
    model(hub)
    r = run(["org/tiny", name], env)
    assert r.returncode == 3 and "file name" in r.stderr
    assert hub.log == []


def test_hostile_names_from_listing_rejected(hub, env, tmp_path):
    hub.add(Repo("org/evil", COMMIT, {"ok.txt": b"ok", "../../escape.txt": b"x"}))
    r = run(["org/evil"], env)
    assert r.returncode == 1 and "refused" in r.stderr and "escape.txt" in r.stderr
    assert not (tmp_path / "home/escape.txt").exists() and not (tmp_path / "escape.txt").exists()


def test_bad_repo_ids_are_usage_errors(env):
    # huggingface_hub's validate_repo_id, the one rule hf verify uses too
    # (hf_repo_id_problem): '.git' at the end is refused as well
    for bad in ("a--b/c", "a/b/c", "x-", "org/", "a b", "org/model.git", "a..b"):
        r = run([bad], env)
        assert r.returncode == 3 and f"'{bad}' is not a repo id (" in r.stderr, r.stderr


def test_interrupted_download_leaves_nothing(hub, env, tmp_path):
    import signal
    import time
    repo = model(hub)
    sha = repo.etag("weights/model.safetensors")
    hub.faults[sha] = {"slow": 1.0}
    p = subprocess.Popen(fetch_cmd() + ["org/tiny", "weights/model.safetensors"], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    blobs = tmp_path / "home/hub/models--org--tiny/blobs"
    deadline = time.time() + 20
    while time.time() < deadline and not (blobs.exists() and any(
            n.endswith(".incomplete") for n in os.listdir(blobs))):
        time.sleep(0.05)
    time.sleep(0.5)  # mid-body: the stand-in sends 1 MiB a second
    assert [n for n in os.listdir(blobs) if n.endswith(".incomplete")]
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=20)
    assert p.returncode == 1
    assert "interrupted" in err
    assert os.listdir(blobs) == []
    assert not (tmp_path / "home/hub/models--org--tiny/snapshots" / COMMIT / "weights/model.safetensors").exists()


def test_two_concurrent_fetches_share_the_lock(hub, env, tmp_path):
    repo = model(hub)
    hub.faults[repo.etag("weights/model.safetensors")] = {"slow": 0.3}
    procs = [subprocess.Popen(fetch_cmd() + ["org/tiny"], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(2)]
    results = [p.communicate(timeout=60) + (p.returncode,) for p in procs]
    assert [r[2] for r in results] == [0, 0], results
    assert tree(tmp_path / "home/hub") == expected_tree(repo)
    errs = results[0][1] + results[1][1]
    assert "waiting for another download" in errs
    # the weights went over the wire once: the second fetch found the verified blob
    assert len([x for x in hub.log if x[2].startswith("/cdn/")]) == 1


def test_main_binary_does_not_link_curl_or_archive():
    ldd = subprocess.run(["ldd", GPUGATE], capture_output=True, text=True).stdout
    assert "libc.so" in ldd
    assert "libcurl" not in ldd and "libarchive" not in ldd
    prov = subprocess.run(["ldd", PROVISION], capture_output=True, text=True).stdout
    assert "libcurl" in prov and "libarchive" in prov


def test_progress_line_on_a_tty(hub, env, tmp_path):
    model(hub)
    cmd = " ".join(fetch_cmd() + ["org/tiny"])
    r = subprocess.run(["script", "-qec", cmd, "/dev/null"], env=env, capture_output=True, timeout=60)
    assert r.returncode == 0, r.stdout
    # the shared progress line (src/lib/progress.c): bytes of total, rate, time left, files
    assert b"hf fetch: 3.01 MiB of 3.01 MiB (100%)" in r.stdout and b"left, 4/4 files\x1b[K" in r.stdout, r.stdout
    r = run(["org/tiny"], env)  # not a TTY: no progress line
    assert "\r" not in r.stderr and " left, " not in r.stderr, r.stderr
    # --quiet on a terminal: no progress line either (a fresh cache, so that
    # there is something to download)
    shutil.rmtree(tmp_path / "home/hub")
    r = subprocess.run(["script", "-qec", cmd + " --quiet", "/dev/null"], env=env, capture_output=True, timeout=60)
    assert r.returncode == 0, r.stdout
    assert b"\r" + b"hf fetch: " not in r.stdout and b" left, " not in r.stdout, r.stdout
    assert b"/snapshots/" + COMMIT.encode() in r.stdout, r.stdout  # it did fetch


@pytest.mark.parametrize("delta,message", [(-10, "more than the"), (10, "received")])
def test_size_mismatch_leaves_no_blob(hub, env, tmp_path, delta, message):
    model(hub)
    hub.faults["weights/model.safetensors"] = {"size_delta": delta}
    env["GPUGATE_RETRIES"] = "1"
    r = run(["org/tiny", "weights/model.safetensors"], env)
    assert r.returncode == 1 and message in r.stderr and "weights/model.safetensors" in r.stderr
    assert os.listdir(tmp_path / "home/hub/models--org--tiny/blobs") == []


@pytest.mark.parametrize("setting,expected", [
    ({"HF_HUB_CACHE": "{t}/a", "HUGGINGFACE_HUB_CACHE": "{t}/b", "HF_HOME": "{t}/c"}, "a"),
    ({"HUGGINGFACE_HUB_CACHE": "{t}/b", "HF_HOME": "{t}/c"}, "b"),
    ({"HF_HOME": "{t}/c", "XDG_CACHE_HOME": "{t}/x"}, "c/hub"),
    ({"XDG_CACHE_HOME": "{t}/x"}, "x/huggingface/hub"),
    ({}, ".cache/huggingface/hub"),
    ({"HF_HOME": "~/h", "HOME": "{t}"}, "h/hub"),
    ({"HF_HUB_CACHE": "${{VAR}}/v", "VAR": "{t}/var"}, "var/v"),
])
def test_cache_location_rules(hub, env, tmp_path, setting, expected):
    model(hub)
    for k in ("HF_HOME", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "XDG_CACHE_HOME"):
        env.pop(k, None)
    env["HOME"] = str(tmp_path)
    env.update({k: v.format(t=tmp_path) for k, v in setting.items()})
    r = run(["org/tiny", "config.json"], env)
    assert r.returncode == 0, r.stderr
    snap = tmp_path / expected / "models--org--tiny" / "snapshots" / COMMIT
    assert r.stdout.strip() == str(snap)
    assert (tmp_path / expected / "models--org--tiny/refs/main").read_bytes() == COMMIT.encode()


def test_token_sources_and_bad_token(hub, env, tmp_path):
    model(hub, gated=True)
    (tmp_path / "tok").write_text("  %s\n" % TOKEN)
    r = run(["org/tiny", "config.json"], dict(env, HF_TOKEN_PATH=str(tmp_path / "tok")))
    assert r.returncode == 0, r.stderr
    r = run(["org/tiny", "README.md"], dict(env, HF_TOKEN="", HUGGING_FACE_HUB_TOKEN=TOKEN))
    assert r.returncode == 0, r.stderr
    bad = "hf_has a space"
    r = run(["org/tiny", "config.json"], dict(env, HF_TOKEN=bad))
    assert r.returncode == 3 and "HF_TOKEN" in r.stderr and bad not in r.stderr
    r = run(["org/tiny", "config.json"], dict(env, HF_TOKEN="hf_wrong_but_valid"))
    assert r.returncode == 1 and "no access" in r.stderr and "hf_wrong_but_valid" not in r.stderr


# -- hostile cache layouts (issue 15 item 2) ---------------------------------
# A link planted where huggingface_hub has a folder is refused, named, and
# nothing is written through it: `hf verify` calls the same layout hostile.

def files_under(root):
    return sorted(os.path.relpath(os.path.join(d, n), root) for d, ds, fs in os.walk(root) for n in ds + fs)


@pytest.mark.parametrize("planted", [
    "models--org--tiny", "models--org--tiny/blobs", "models--org--tiny/snapshots",
    "models--org--tiny/snapshots/" + COMMIT, "models--org--tiny/snapshots/%s/weights" % COMMIT,
    "models--org--tiny/refs", "models--org--tiny/trees", ".locks", ".locks/models--org--tiny",
])
def test_symlinked_cache_folder_is_refused(hub, env, tmp_path, planted):
    model(hub)
    cache, outside = tmp_path / "home/hub", tmp_path / "outside"
    outside.mkdir()
    (cache / planted).parent.mkdir(parents=True, exist_ok=True)
    os.symlink(outside, cache / planted)
    r = run(["org/tiny"], env)
    assert r.returncode == 1, r.stderr
    name = planted.split("/")[-1]
    assert "%s is a symlink to %s: refusing to write outside the cache" % (name, outside) in r.stderr, r.stderr
    assert files_under(outside) == [], "written through the link"
    assert os.path.islink(cache / planted)


@pytest.mark.parametrize("planted", ["models--org--tiny/.no_exist", "models--org--tiny/.no_exist/" + COMMIT])
def test_symlinked_no_exist_folder_is_refused(hub, env, tmp_path, planted):
    """The marker of a file the hub does not have (404) goes under .no_exist/<commit>/:
    a link there is refused as any other folder is."""
    model(hub)
    cache, outside = tmp_path / "home/hub", tmp_path / "outside"
    outside.mkdir()
    (cache / planted).parent.mkdir(parents=True, exist_ok=True)
    os.symlink(outside, cache / planted)
    r = run(["org/tiny", "nope.bin"], env)
    assert r.returncode == 1, r.stderr
    name = planted.split("/")[-1]
    assert "%s is a symlink to %s: refusing to write outside the cache" % (name, outside) in r.stderr, r.stderr
    assert files_under(outside) == [], "written through the link"


def test_symlinked_files_in_the_cache_are_replaced_or_refused_never_followed(hub, env, tmp_path):
    """A blob, a ref or CACHEDIR.TAG that is a link to a file outside: the link
    itself is replaced (blob, ref) or left alone (the tag); the outside file is
    never written."""
    repo = model(hub)
    cache, outside = tmp_path / "home/hub", tmp_path / "outside"
    outside.mkdir()
    victims = {n: outside / n for n in ("blob", "ref", "tag")}
    for v in victims.values():
        v.write_bytes(b"keep")
    folder = cache / "models--org--tiny"
    (folder / "blobs").mkdir(parents=True)
    (folder / "refs").mkdir()
    os.symlink(victims["blob"], folder / "blobs" / repo.etag("config.json"))
    os.symlink(victims["ref"], folder / "refs/main")
    os.symlink(victims["tag"], cache / "CACHEDIR.TAG")
    r = run(["org/tiny"], env)
    assert r.returncode == 0, r.stderr
    assert "is a symlink; downloading it again" in r.stderr
    assert all(v.read_bytes() == b"keep" for v in victims.values())
    want = expected_tree(repo)
    want["CACHEDIR.TAG"] = ("link", str(victims["tag"]))
    assert tree(cache) == want


def test_symlinked_lock_file_is_refused(hub, env, tmp_path):
    repo = model(hub)
    cache, victim = tmp_path / "home/hub", tmp_path / "victim"
    victim.write_bytes(b"keep")
    locks = cache / ".locks/models--org--tiny"
    locks.mkdir(parents=True)
    os.symlink(victim, locks / (repo.etag("config.json") + ".lock"))
    r = run(["org/tiny", "config.json"], env)
    assert r.returncode == 1
    assert "%s.lock: is a symlink: refusing to write through it" % repo.etag("config.json") in r.stderr
    assert victim.read_bytes() == b"keep"


# -- a hostile hub (issue 15 items 3 and 9) ----------------------------------

@pytest.mark.parametrize("path,etag,header", [
    ("config.json", "deadbeef", "ETag"),
    ("config.json", "not-a-hash_at-all", "ETag"),
    ("weights/model.safetensors", None, "X-Linked-Etag"),  # the right sha256, in capitals
    ("weights/model.safetensors", "ab" * 20 + "cd", "X-Linked-Etag"),  # 42 hex digits
])
def test_etag_that_is_not_a_hash_is_refused(hub, env, tmp_path, path, etag, header):
    repo = model(hub)
    hub.faults[path] = {"etag": etag or repo.etag(path).upper()}
    r = run(["org/tiny", path], env)
    assert r.returncode == 1
    assert path in r.stderr and header in r.stderr and "cannot be verified" in r.stderr, r.stderr
    blobs = tmp_path / "home/hub/models--org--tiny/blobs"
    assert not blobs.exists() or os.listdir(blobs) == []


def test_body_that_does_not_match_its_etag_is_not_stored(hub, env, tmp_path):
    """A well-formed git blob id of other content: the body is checked against
    it before the final rename, and nothing is stored or linked."""
    model(hub)
    wrong = git_blob_sha1(b"something else\n")
    hub.faults["config.json"] = {"etag": wrong}
    env["GPUGATE_RETRIES"] = "0"
    r = run(["org/tiny", "config.json"], env)
    assert r.returncode == 1
    assert "config.json" in r.stderr and "git blob id mismatch" in r.stderr and wrong in r.stderr
    assert os.listdir(tmp_path / "home/hub/models--org--tiny/blobs") == []
    assert not (tmp_path / "home/hub/models--org--tiny/snapshots").exists()


def test_drip_feed_is_abandoned_by_the_idle_timeout(hub, env, tmp_path):
    import time
    model(hub)
    hub.faults["config.json"] = {"drip": 1}  # one byte a second
    env["GPUGATE_RETRIES"] = "0"
    t0 = time.monotonic()
    r = run(["org/tiny", "config.json", "--idle-timeout", "2"], env, timeout=30)
    took = time.monotonic() - t0
    assert r.returncode == 1
    assert "config.json" in r.stderr and "--idle-timeout" in r.stderr, r.stderr
    assert took < 10, took
    assert os.listdir(tmp_path / "home/hub/models--org--tiny/blobs") == []


def test_overall_timeout_ends_a_slow_fetch(hub, env, tmp_path):
    import time
    repo = model(hub)
    hub.faults[repo.etag("weights/model.safetensors")] = {"slow": 1.0}  # 1 MiB a second: not idle
    t0 = time.monotonic()
    r = run(["org/tiny", "--timeout", "1"], env, timeout=30)
    took = time.monotonic() - t0
    assert r.returncode == 1
    assert "weights/model.safetensors" in r.stderr and "overall timeout of 1 s" in r.stderr, r.stderr
    assert took < 6, took
    blobs = os.listdir(tmp_path / "home/hub/models--org--tiny/blobs")
    assert repo.etag("weights/model.safetensors") not in blobs
    assert not [b for b in blobs if b.endswith(".incomplete")]
    assert not (tmp_path / "home/hub/models--org--tiny/trees").exists()


@pytest.mark.parametrize("args", [["--timeout", "-1"], ["--timeout", "x"], ["--idle-timeout", "0"]])
def test_bad_timeouts_are_usage_errors(hub, env, args):
    r = run(["org/tiny"] + args, env)
    assert r.returncode == 3 and args[0] in r.stderr
    assert hub.log == []


# -- the listing and CACHEDIR.TAG (issue 19 item 3) -------------------------

# What huggingface_hub's snapshot_download writes for this repo, byte for
# byte: json.dump(indent=1) of _tree_cache.py's data (non-ASCII as lowercase
# \u escapes, keys in sorted order, no newline at the end); each blob_id is
# `git hash-object` of the file (of its LFS pointer for w.bin).
GOLDEN_LISTING = (
    '{\n'
    ' "format_version": 1,\n'
    ' "files": {\n'
    '  "config.json": {\n'
    '   "size": 10,\n'
    '   "blob_id": "f889d0221f5e85a207c3fa2f4ab38897937b6b04"\n'
    '  },\n'
    '  "na\\u00efve/\\u00fcn\\u00efcode.txt": {\n'
    '   "size": 1,\n'
    '   "blob_id": "c1b0730e0133447badcfd47fd144e254807b06e1"\n'
    '  },\n'
    '  "w.bin": {\n'
    '   "size": 10,\n'
    '   "blob_id": "decffe40a7d264ac09b59cab0deb276093409d67",\n'
    '   "lfs_sha256": "01d448afd928065458cf670b60f5a594d735af0172c8d67f22a81680132681ca",\n'
    '   "lfs_size": 10\n'
    '  }\n'
    ' }\n'
    '}'
)


def golden_repo(hub):
    files = {"config.json": b'{"a": 1}\n\n', "na\u00efve/\u00fcn\u00efcode.txt": b"x", "w.bin": b"\0" * 10}
    return hub.add(Repo("org/golden", COMMIT, files, lfs={"w.bin"}))


def test_listing_and_cachedir_tag_match_the_golden_files(hub, env, tmp_path):
    repo = golden_repo(hub)
    assert listing(repo).decode() == GOLDEN_LISTING  # the stand-in agrees with the golden file
    r = run(["org/golden"], env)
    assert r.returncode == 0, r.stderr
    cache = tmp_path / "home/hub"
    assert (cache / "models--org--golden/trees" / (COMMIT + ".json")).read_text() == GOLDEN_LISTING
    assert (cache / "CACHEDIR.TAG").read_bytes() == CACHEDIR_TAG
    assert tree(cache) == expected_tree(repo)
    pages = [p for m, _, p, _ in hub.log if "/tree/" in p]
    assert len(pages) == 2, pages  # 4 entries (a folder too), 2 a page: both pages were read
    # the listing's reader (src/hf/listing.c) takes it as complete and matching
    v = subprocess.run([GPUGATE, "hf", "verify", "--cache", str(cache), "--format", "json"], env=env,
                       capture_output=True, text=True, timeout=60)
    assert v.returncode == 0, v.stdout + v.stderr
    os.unlink(cache / "models--org--golden/snapshots" / COMMIT / "w.bin")
    v = subprocess.run([GPUGATE, "hf", "verify", "--cache", str(cache)], env=env,
                       capture_output=True, text=True, timeout=60)
    assert v.returncode == 1 and "w.bin" in v.stdout + v.stderr, v.stdout + v.stderr


def test_listing_that_disagrees_with_the_downloads_is_not_written(hub, env, tmp_path):
    """The hub's tree listing is trusted only where it names the hashes the
    files were verified against: a wrong blob id, a size, a missing or an
    extra file, a pointer id that is not the LFS pointer's, a bad xetHash."""
    repo = model(hub)
    cases = {
        "blob id": lambda es: [dict(e, oid="1" * 40) if e["path"] == "config.json" else e for e in es],
        "size": lambda es: [dict(e, size=e["size"] + 1) if e["path"] == "README.md" else e for e in es],
        "missing": lambda es: [e for e in es if e["path"] != "README.md"],
        "extra": lambda es: es + [{"type": "file", "oid": "2" * 40, "size": 1, "path": "extra.txt"}],
        "pointer": lambda es: [dict(e, oid="3" * 40) if "lfs" in e else e for e in es],
        "xet": lambda es: [dict(e, xetHash="zz") if "lfs" in e else e for e in es],
    }
    for what, edit in cases.items():
        hub.tree_edit = edit
        shutil.rmtree(tmp_path / "home", ignore_errors=True)
        r = run(["org/tiny"], env)
        assert r.returncode == 0, (what, r.stderr)
        assert "no trees/%s.json is written" % COMMIT in r.stderr, (what, r.stderr)
        want = expected_tree(repo, ref="main")
        del want["models--org--tiny/trees"], want["models--org--tiny/trees/%s.json" % COMMIT]
        assert tree(tmp_path / "home/hub") == want, what


def test_tree_page_on_another_host_is_not_asked(hub, env, tmp_path):
    """The token goes with every listing request, so a next page elsewhere is refused."""
    model(hub, gated=True)
    env["HF_TOKEN"] = TOKEN
    hub.tree_next_base = hub.cdn
    r = run(["org/tiny"], env)
    assert r.returncode == 0, r.stderr
    assert "another host" in r.stderr and TOKEN not in r.stderr
    assert not [x for x in hub.log if x[1].startswith("localhost") and x[2].startswith("/api/")]
    assert not (tmp_path / "home/hub/models--org--tiny/trees").exists()


def test_blank_hf_token_means_the_token_file_for_fetch_and_where(hub, env, tmp_path):
    """One token rule (hf/location.c) for both executables, as huggingface_hub's
    utils/_auth.py: a blank HF_TOKEN is cleaned to nothing, so the token file
    counts (and HUGGING_FACE_HUB_TOKEN is not read: Python's `or` kept HF_TOKEN)."""
    model(hub, gated=True)
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "token").write_text(TOKEN + "\n")
    e = dict(env, HF_TOKEN="   ", HUGGING_FACE_HUB_TOKEN="hf_not_this_one")
    r = run(["org/tiny", "config.json"], e)
    assert r.returncode == 0, r.stderr
    assert {a for m, h, p, a in hub.log if h.startswith("127.0.0.1")} == {"Bearer " + TOKEN}
    w = subprocess.run([GPUGATE, "hf", "where", "-v"], env=e, capture_output=True, text=True, timeout=30)
    assert "the token comes from the token file" in w.stdout, w.stdout + w.stderr


@pytest.mark.parametrize("umask", [0o002, 0o022])
def test_file_modes_follow_the_umask_as_huggingface_hub(hub, env, tmp_path, umask):
    """huggingface_hub gives a blob the mode of a new file (0666 less the umask,
    _chmod_and_move) and writes refs and CACHEDIR.TAG with Path.write_text (the
    same); it makes every folder with os.makedirs (0777 less the umask); its
    lock files are 0664 whatever the umask (utils/_fixes.py WeakFileLock passes
    mode=0o664, which filelock's UnixFileLock sets with fchmod), so that the
    users sharing a cache can wait on them. The listing stays readable (0644;
    upstream's mkstemp makes it 0600)."""
    import stat
    model(hub)
    r = subprocess.run(fetch_cmd() + ["org/tiny"], env=env, capture_output=True, text=True, timeout=60,
                       preexec_fn=lambda: os.umask(umask))
    assert r.returncode == 0, r.stderr
    cache = tmp_path / "home/hub"
    folder = cache / "models--org--tiny"
    mode = lambda p: stat.S_IMODE(os.lstat(p).st_mode)  # noqa: E731
    files = {p: mode(p) for p in [cache / "CACHEDIR.TAG", folder / "refs/main"] + list((folder / "blobs").iterdir())}
    assert set(files.values()) == {0o666 & ~umask}, files
    assert mode(folder / "trees" / (COMMIT + ".json")) == 0o644
    locks = {p: mode(p) for p in (cache / ".locks/models--org--tiny").iterdir()}
    assert len(locks) == 4 and set(locks.values()) == {0o664}, locks
    folders = {d: mode(d) for d, _, _ in os.walk(tmp_path / "home")}
    assert set(folders.values()) == {0o777 & ~umask}, folders


def test_overall_timeout_bounds_the_wait_for_another_fetchs_lock(hub, env, tmp_path):
    import fcntl
    import time
    repo = model(hub)
    locks = tmp_path / "home/hub/.locks/models--org--tiny"
    locks.mkdir(parents=True)
    with open(locks / (repo.etag("config.json") + ".lock"), "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # a stuck fetch holds it
        t0 = time.monotonic()
        r = run(["org/tiny", "config.json", "--timeout", "1"], env, timeout=30)
        took = time.monotonic() - t0
    assert r.returncode == 1
    assert "waiting for another download of config.json" in r.stderr and "--timeout" in r.stderr, r.stderr
    assert took < 6, took


def test_heads_run_in_parallel(hub, env, tmp_path):
    """Many small files: the HEADs go out --jobs at a time (snapshot_download
    runs 8 hf_hub_download at once), not one round trip after another."""
    import time
    files = {"f%02d.txt" % i: b"%d\n" % i for i in range(16)}
    repo = hub.add(Repo("org/many", COMMIT, files))
    hub.head_delay = 0.3
    t0 = time.monotonic()
    r = run(["org/many"], env)
    took = time.monotonic() - t0
    assert r.returncode == 0, r.stderr
    assert 4 <= hub.heads_at_once <= 8, hub.heads_at_once  # at most --jobs (8); the loaded test VM may lag one
    assert took < 16 * 0.3, took
    assert tree(tmp_path / "home/hub") == expected_tree(repo)
    hub.heads_at_once = 0
    shutil.rmtree(tmp_path / "home")
    assert run(["org/many", "--jobs", "1"], env).returncode == 0
    assert hub.heads_at_once == 1


@pytest.mark.parametrize("kind", ["fifo", "dir"])
def test_blob_name_taken_by_a_fifo_or_folder_is_replaced_without_blocking(hub, env, tmp_path, kind):
    repo = model(hub)
    blobs = tmp_path / "home/hub/models--org--tiny/blobs"
    blobs.mkdir(parents=True)
    target = blobs / repo.etag("config.json")
    os.mkfifo(target) if kind == "fifo" else target.mkdir()
    r = run(["org/tiny", "config.json"], env, timeout=20)
    if kind == "fifo":
        assert r.returncode == 0, r.stderr
        assert "is not a regular file; downloading it again" in r.stderr
        assert target.read_bytes() == repo.files["config.json"]
    else:  # a file cannot be renamed over a folder: an error naming the file, nothing followed
        assert r.returncode == 1 and "config.json" in r.stderr, r.stderr


def test_dangling_link_where_a_folder_must_be_is_not_made(hub, env, tmp_path):
    """mkdir -p would create the link's missing target outside the cache; the
    walk makes a folder only where the name is free."""
    model(hub)
    folder, outside = tmp_path / "home/hub/models--org--tiny", tmp_path / "outside"
    folder.mkdir(parents=True)
    outside.mkdir()
    os.symlink(outside / "made", folder / "blobs")
    r = run(["org/tiny"], env)
    assert r.returncode == 1 and "blobs is a symlink to %s" % (outside / "made") in r.stderr, r.stderr
    assert files_under(outside) == []
