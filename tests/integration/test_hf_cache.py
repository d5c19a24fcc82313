"""`gpugate hf scan`, `hf verify` and the hf.layout / hf.models / hf.integrity
checks against caches built here: a valid one, and one corruption each.
Hashes come from the oracles (sha256sum, git hash-object)."""
import os
import re

import pytest

import hf_builder as hb
from conftest import finding_texts, run_gpugate, spec_file
from hf_upstream import hub_env as env_for


@pytest.fixture
def cache(tmp_path):
    c = tmp_path / "hub"
    names = hb.valid_cache(str(c))
    return c, names


def test_valid_cache_scan_matches_disk(cache):
    c, names = cache
    r = run_gpugate("hf", "scan", "--format", "json", env=env_for(c))
    assert r.rc == 0, r
    j = r.json()
    repos = {x["folder"]: x for x in j["repos"]}
    assert set(repos) == {"models--org--tiny", "datasets--glue", "models--solo"}
    tiny = repos["models--org--tiny"]
    assert tiny["repo_id"] == "org/tiny" and tiny["repo_type"] == "model"
    # size on disk: the unique blobs, as stat says (two revisions share the weights)
    blobs = os.listdir(c / "models--org--tiny" / "blobs")
    assert tiny["nb_files"] == len(blobs) == 4
    assert tiny["size_on_disk"] == sum(os.stat(c / "models--org--tiny" / "blobs" / b).st_size for b in blobs)
    assert tiny["refs"] == {"main": hb.COMMIT_B, "v1": hb.COMMIT_A}
    revs = {v["commit_hash"]: v for v in tiny["revisions"]}
    assert revs[hb.COMMIT_A]["nb_files"] == 3 and revs[hb.COMMIT_B]["refs"] == ["main"]
    assert repos["datasets--glue"]["refs"]["refs/pr/1"] == hb.COMMIT_A
    assert all(not x["warnings"] for x in j["repos"])
    t = run_gpugate("hf", "scan", env=env_for(c))
    assert t.rc == 0 and "org/tiny" in t.out and "dataset" in t.out and "3 repos" in t.out, t
    # sizes as hf verify writes them (src/lib/util.c human_bytes, IEC): "0B" and "4.6K" before
    total = sum(x["size_on_disk"] for x in j["repos"])
    assert t.out.splitlines()[-1].startswith(f"3 repos, {iec(total)} on disk in "), t
    assert f" {iec(tiny['size_on_disk'])} " in t.out, t


def test_a_folder_with_no_repos_is_said_to_be_one(tmp_path, cache):
    """`hf verify --cache EMPTY` said "ok: 0 repos" and nothing else: a folder
    with no repo folder now warns (exit 0, warnings allowed: nothing in it is
    broken), in text and JSON, for verify and scan; HF_HOME's folder given
    for the hub cache is pointed at its hub/; a real cache does not warn."""
    empty = tmp_path / "empty"
    empty.mkdir()
    words = f"no repos in {empty} (is this the hub cache? it has no models--/datasets--/spaces-- folders)"
    v = run_gpugate("hf", "verify", "--cache", str(empty))
    assert v.rc == 0 and f"warn {words}" in v.out and "0 problems, 1 warning" in v.out, v
    j = run_gpugate("hf", "verify", "--cache", str(empty), "--format", "json")
    assert j.rc == 0 and j.json()["problems"] == [{"severity": "warn", "state": "no repos", "message": words}], j
    s = run_gpugate("hf", "scan", "--cache", str(empty))
    assert s.rc == 0 and f"warn: {words}" in s.out, s
    home = tmp_path / "hf-home"
    (home / "hub").mkdir(parents=True)
    h = run_gpugate("hf", "verify", "--cache", str(home))
    assert f"it has a hub/ folder, as HF_HOME has: try --cache {home}/hub)" in h.out, h
    c, _ = cache
    ok = run_gpugate("hf", "verify", "--cache", str(c))
    assert ok.rc == 0 and "no repos" not in ok.out and "0 warnings" in ok.out, ok


def iec(n):
    """human_bytes: "512 B", "12.3 KiB", "1.5 GiB"."""
    units = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]
    v, u = float(n), 0
    while v >= 1024 and u + 1 < len(units):
        v, u = v / 1024, u + 1
    return f"{v:.1f} {units[u]}" if u else f"{v:.0f} {units[u]}"


def test_scan_and_verify_write_an_empty_size_alike(tmp_path):
    empty = tmp_path / "hub"
    empty.mkdir()
    scan = run_gpugate("hf", "scan", "--cache", str(empty))
    verify = run_gpugate("hf", "verify", "--cache", str(empty))
    assert ", 0 B on disk in " in scan.out and ", 0 B hashed in " in verify.out, (scan, verify)


def test_valid_cache_verify_and_checks(cache, tmp_path):
    c, names = cache
    r = run_gpugate("hf", "verify", env=env_for(c))
    assert r.rc == 0, r
    assert "ok: 3 repos, 7 blobs" in r.out
    spec = spec_file(tmp_path, "profile: ci\nhf:\n  require_mount: false\n  min_free: 1MiB\n  integrity: true\n"
                     "  models:\n    - org/tiny\n    - org/tiny@v1\n    - org/tiny@" + hb.COMMIT_A + "\n"
                     "    - repo: glue\n      type: dataset\n      files: [README.md, data/train/part-0.parquet]\n")
    r = run_gpugate("check", "--spec", spec, "--format", "json", env=env_for(c))
    assert r.rc == 0, r
    for cid in ("hf.layout", "hf.models", "hf.integrity", "hf.locks"):
        assert r.check(cid)["status"] == "pass", r.check(cid)
    # ci covers the repos the spec's models are in (org/tiny, glue: 6 blobs), not models--solo
    assert "6 files match their hash" in r.check("hf.integrity")["summary"]
    assert "scope: the 2 repos hf.models lists" in r.check("hf.integrity")["summary"]


def flip_byte(path):
    os.chmod(path, 0o644)
    with open(path, "r+b") as f:
        f.seek(100)
        b = f.read(1)
        f.seek(100)
        f.write(bytes([b[0] ^ 0xFF]))


def corrupt(c, names, kind, tmp_path):
    """Applies one corruption; returns (words expected in the output, a path it names)."""
    tiny = c / "models--org--tiny"
    weights = names["model"]["model.safetensors"]
    config = names["model"]["config.json"]
    if kind == "lfs_flip":
        flip_byte(tiny / "blobs" / weights)
        actual = hb.sha256sum((tiny / "blobs" / weights).read_bytes())
        # the finding names the files behind the blob, in both revisions that use it
        return ["sha256 mismatch", "blobs/" + weights, "hashes to " + actual,
                "model.safetensors in revision " + hb.COMMIT_A[:12] + " (v1)",
                "model.safetensors in revision " + hb.COMMIT_B[:12] + " (main)"], weights
    if kind == "git_edit":
        p = tiny / "blobs" / config
        p.write_bytes(b'{"model_type": "gpt2"}\n')
        actual = hb.git_hash(p.read_bytes())
        return ["git-sha1 mismatch", "hashes to " + actual, "config.json in revision"], config
    if kind == "truncated":
        p = tiny / "blobs" / weights
        os.truncate(p, 1000)
        return ["sha256 mismatch", "hashes to " + hb.sha256sum(p.read_bytes())], weights
    if kind == "broken_link":
        os.unlink(tiny / "blobs" / config)
        return ["broken link", "blob"], "config.json"
    if kind == "absolute_passwd":
        link = tiny / "snapshots" / hb.COMMIT_A / "config.json"
        link.unlink()
        link.symlink_to("/etc/passwd")
        # followed on the real root as scan_cache_dir() follows it, counted, and a failure
        return ["/etc/passwd, outside the cache"], "config.json"
    if kind == "absolute_fifo":
        fifo = tmp_path / "trap.fifo"
        os.mkfifo(fifo)  # opening it would block: the run must not hang
        link = tiny / "snapshots" / hb.COMMIT_A / "config.json"
        link.unlink()
        link.symlink_to(fifo)
        return ["which is not a plain file"], "config.json"  # its type is read with stat: never opened
    if kind == "dotdot_escape":
        fifo = tmp_path / "hub" / "escape.fifo"
        os.mkfifo(fifo)
        link = tiny / "snapshots" / hb.COMMIT_A / "tokenizer" / "vocab.txt"
        link.unlink()
        link.symlink_to("../../../../escape.fifo")
        return ["which is not a plain file"], "vocab.txt"
    if kind == "sibling_escape":
        link = tiny / "snapshots" / hb.COMMIT_A / "config.json"
        link.unlink()
        link.symlink_to("../../../models--solo/blobs/" + names["solo"]["w.bin"])
        return ["which is no blob of this repo"], "config.json"  # counted upstream: a warning
    if kind == "ref_missing_commit":
        (tiny / "refs" / "main").write_text("c" * 40)
        return ["refs/main", "c" * 40, "no snapshot"], "refs/main"
    if kind == "ref_newline":
        (tiny / "refs" / "main").write_text(hb.COMMIT_B + "\n")
        return ["refs/main", "newline"], "refs/main"
    if kind == "file_in_snapshots":
        (tiny / "snapshots" / "stray.txt").write_text("x")
        return ["directly under snapshots/"], "stray.txt"
    if kind == "incomplete":
        (tiny / "blobs" / (weights + ".1a2b3c4d.incomplete")).write_bytes(b"\0" * 12345)
        return ["partial download", "12345 bytes"], ".incomplete"
    if kind == "no_dashes":
        (c / "notacache").mkdir()
        return ["no '--'"], "notacache"
    if kind == "unknown_type":
        (c / "widgets--org--x" / "snapshots").mkdir(parents=True)
        return ["unknown repo type", "widgets"], "widgets--org--x"
    if kind == "snapshots_missing":
        import shutil
        shutil.rmtree(c / "models--solo" / "snapshots")
        return ["snapshots/ is missing"], "models--solo"
    if kind == "refs_file":
        import shutil
        shutil.rmtree(c / "models--solo" / "refs")
        (c / "models--solo" / "refs").write_text("main")
        return ["refs is a file"], "models--solo"
    if kind == "blob_symlink":
        p = tiny / "blobs" / config
        p.unlink()
        p.symlink_to("/etc/passwd")
        return ["not a plain file", "never opened"], config
    raise AssertionError(kind)


# kind -> (fails hf verify, fails hf.layout, warn only)
KINDS = {
    "lfs_flip": "hash", "git_edit": "hash", "truncated": "hash", "broken_link": "layout",
    "absolute_passwd": "layout", "absolute_fifo": "layout", "dotdot_escape": "layout",
    "sibling_escape": "warn", "ref_missing_commit": "layout", "ref_newline": "layout",
    "file_in_snapshots": "layout", "incomplete": "warn", "no_dashes": "layout",
    "unknown_type": "layout", "snapshots_missing": "layout", "refs_file": "layout", "blob_symlink": "layout",
}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_corruption(cache, tmp_path, kind):
    c, names = cache
    words, named = corrupt(c, names, kind, tmp_path)
    what = KINDS[kind]
    v = run_gpugate("hf", "verify", env=env_for(c), timeout=30)
    assert v.rc == (0 if what == "warn" else 1), v
    for w in words:
        assert w in v.out, (w, v)
    assert named in v.out, v
    s = run_gpugate("hf", "scan", "--format", "json", env=env_for(c), timeout=30)
    assert s.rc == (1 if what == "layout" else 0), s
    # every other repo is still listed: one bad file never hides a repo
    folders = {x["folder"] for x in s.json()["repos"]}
    assert {"models--org--tiny", "datasets--glue"} <= folders
    spec = spec_file(tmp_path, "profile: ci\nhf:\n  require_mount: false\n  min_free: 1MiB\n  integrity: true\n")
    r = run_gpugate("check", "--spec", spec, "--format", "json", env=env_for(c), timeout=30)
    layout, integ = r.check("hf.layout"), r.check("hf.integrity")
    if what == "hash":
        assert r.rc == 1 and integ["status"] == "fail", r
        assert "mismatch" in " ".join(finding_texts(integ))
        assert "rm " in integ["remediation"]
    elif what == "layout":
        assert r.rc == 1 and layout["status"] == "fail", r
        assert any(words[0] in f for f in finding_texts(layout)), layout
        assert layout["remediation"]
    else:
        assert r.rc == 0 and layout["status"] == "warn", r


def test_verify_named_repo_and_unknown(cache):
    c, names = cache
    flip_byte(c / "models--org--tiny" / "blobs" / names["model"]["model.safetensors"])
    ok = run_gpugate("hf", "verify", "datasets/glue", "solo", env=env_for(c))
    assert ok.rc == 0 and "2 repos" in ok.out, ok
    bad = run_gpugate("hf", "verify", "--format", "json", "org/tiny", env=env_for(c))
    assert bad.rc == 1, bad
    j = bad.json()
    assert j["verdict"] == "fail" and j["repos"] == 1
    assert [p["expected"] for p in j["problems"] if "expected" in p] == [names["model"]["model.safetensors"]]
    missing = run_gpugate("hf", "verify", "org/absent", env=env_for(c))
    assert missing.rc == 1 and "not in the cache" in missing.out, missing


# huggingface_hub's utils/_validators.py validate_repo_id, transcribed (the
# package is not installed here): the oracle the C grammar
# (src/hf/cache_format.c hf_repo_id_problem) is held to.
UPSTREAM_REPO_ID_REGEX = re.compile(
    r"""
    ^
    (\b[\w\-.]+\b/)? # optional namespace (username or organization)
    \b               # starts with a word boundary
    [\w\-.]{1,96}    # repo_name: alphanumeric + . _ -
    \b               # ends with a word boundary
    $
    """,
    flags=re.VERBOSE,
)


def upstream_accepts(repo_id):
    return (repo_id.count("/") <= 1 and UPSTREAM_REPO_ID_REGEX.match(repo_id) is not None
            and "--" not in repo_id and ".." not in repo_id and not repo_id.endswith(".git"))


REPO_IDS = ["gpt2", "org/tiny", "Org_1/a.b-c", "a/b", "x" * 96, "x" * 97, "o/" + "x" * 96, "bad name!!",
            "a/b/c", "/a", "a/", ".a/b", "a/b.", "a-/b", "_a/b_", "a..b", "a--b", "x.git", "x.gitx", "a b",
            "o/n\u00e9", ""]  # not "a/b\n": the regex's $ also matches before a last newline, which gpugate refuses


def test_verify_refuses_a_repo_id_huggingface_hub_refuses(tmp_path):
    """`hf verify 'bad name!!'` said "not in the cache": a name no repo can
    have is a usage error (3) naming the rule, as huggingface_hub's
    validate_repo_id refuses it; an id it accepts is looked up (1: not in
    this empty cache). The type forms (datasets/NAME) and folder names are
    taken too; a folder name no repo folder has is refused."""
    empty = tmp_path / "hub"
    empty.mkdir()
    for repo_id in REPO_IDS:
        r = run_gpugate("hf", "verify", "--cache", str(empty), "--", repo_id)
        if upstream_accepts(repo_id):
            assert r.rc == 1 and "not in the cache" in r.out, (repo_id, r)
        else:
            assert r.rc == 3 and "is not a repo id (" in r.err and "not in the cache" not in r.out, (repo_id, r)
    for form, rc in (("datasets/glue", 1), ("spaces/org/app", 1), ("models--org--tiny", 1),
                     ("datasets/bad name", 3), ("foo--bar", 3), ("models--", 3), ("models----x", 3)):
        r = run_gpugate("hf", "verify", "--cache", str(empty), form)
        assert r.rc == rc, (form, r)


def test_shared_blob_hashed_once(cache):
    c, names = cache
    r = run_gpugate("hf", "verify", "--format", "json", "org/tiny", env=env_for(c))
    j = r.json()
    # two revisions use the weights: bytes hashed equal the unique blobs' sizes
    blobs = c / "models--org--tiny" / "blobs"
    assert j["bytes_hashed"] == sum(os.stat(blobs / b).st_size for b in os.listdir(blobs))
    assert j["blobs"] == 4


def test_models_check_failures(cache, tmp_path):
    c, names = cache
    os.makedirs(c / "datasets--glue" / ".no_exist" / hb.COMMIT_A, exist_ok=True)
    (c / "datasets--glue" / ".no_exist" / hb.COMMIT_A / "gone.txt").write_text("")
    os.unlink(c / "models--solo" / "blobs" / names["solo"]["w.bin"])
    spec = spec_file(tmp_path, "profile: ci\nhf:\n  require_mount: false\n  models:\n"
                     "    - org/tiny@nobranch\n    - org/absent\n    - solo\n"
                     "    - repo: datasets/glue\n      files: [README.md, gone.txt]\n")
    r = run_gpugate("check", "--spec", spec, "--format", "json", "--only", "hf.models", env=env_for(c))
    assert r.rc == 1, r
    m = r.check("hf.models")
    f = "\n".join(finding_texts(m))
    assert "org/tiny@nobranch: no refs/nobranch" in f
    assert "org/absent: not in the cache" in f
    assert "solo@main: w.bin is unusable: broken link" in f
    assert "gone.txt is missing" in f and ".no_exist" in f
    assert "hf download org/absent --revision main" in m["remediation"]
    assert "hf download datasets/glue --repo-type dataset --revision main README.md gone.txt" in m["remediation"]


@pytest.mark.parametrize("bad,words", [
    ("    - ../etc\n", "not a repo id"),
    ("    - org--x/y\n", "not a repo id"),  # its folder would read back as org/x/y
    ("    - org-/y\n", "not a repo id"),    # models--org---y reads back as org/-y
    ("    - repo: org/x\n      files: [../../etc/passwd]\n", "relative path inside the repo"),
    ("    - repo: org/x\n      type: widget\n", "must be one of"),
    ("    - repo: org/x\n      nope: 1\n", "unknown key"),
    ("    - revision: main\n", "needs 'repo"),
])
def test_spec_errors(tmp_path, bad, words):
    spec = spec_file(tmp_path, "hf:\n  models:\n" + bad)
    r = run_gpugate("check", "--spec", spec)
    assert r.rc == 3, r
    assert words in r.err and "spec.yaml:" in r.err, r


def test_missing_cache(tmp_path):
    r = run_gpugate("hf", "scan", env=env_for(tmp_path / "none"))
    assert r.rc == 1 and "No such file" in r.err, r
    spec = spec_file(tmp_path, "hf:\n  require_mount: false\n  min_free: 1\n  integrity: true\n")
    j = run_gpugate("check", "--spec", spec, "--format", "json", env=env_for(tmp_path / "none"))
    assert j.check("hf.layout")["status"] == "skip"
    assert j.check("hf.writable")["status"] == "warn", j  # parent writable, folder made on first download


def test_root_prefix(tmp_path):
    """--root: the resolved path is read under the root, mountinfo too."""
    root = tmp_path / "img"
    hb.valid_cache(str(root / "cache" / "hub"))
    (root / "proc" / "self").mkdir(parents=True)
    (root / "proc" / "self" / "mountinfo").write_text(
        "1 0 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n"
        "2 1 0:50 / /cache rw,relatime - tmpfs tmpfs rw\n")
    spec = spec_file(tmp_path, "hf:\n  min_free: 1\n  integrity: true\n")
    e = env_for("/cache/hub")
    r = run_gpugate("check", "--spec", spec, "--root", str(root), "--format", "json", env=e)
    assert r.rc == 0, r
    assert "own mount /cache" in r.check("hf.mounted")["summary"]
    assert "7 files match their hash" in r.check("hf.integrity")["summary"]
    s = run_gpugate("hf", "scan", "--root", str(root), "--format", "json", env=e)
    assert s.rc == 0 and len(s.json()["repos"]) == 3, s
    # the same image with the cache on its root filesystem
    (root / "proc" / "self" / "mountinfo").write_text("1 0 8:1 / / rw - overlay overlay rw\n")
    r = run_gpugate("check", "--spec", spec, "--root", str(root), "--format", "json", env=e)
    m = r.check("hf.mounted")
    assert r.rc == 1 and m["status"] == "fail" and "root filesystem" in m["summary"], r
    assert "-v $HOME/.cache/huggingface/hub:/cache/hub" in m["remediation"]
    (root / "proc" / "self" / "mountinfo").write_text("garbage\n")
    r = run_gpugate("check", "--spec", spec, "--root", str(root), "--format", "json", env=e)
    assert r.check("hf.mounted")["status"] == "fail" and "line 1" in r.check("hf.mounted")["summary"]


def test_large_blobs_are_hashed_whole(tmp_path):
    """Blobs of 16 MiB and more are hashed from the page cache a window at a
    time: each verifies, and a byte flipped past the first window, in an LFS
    (sha256) and a git (sha1) blob, is found and named."""
    c = tmp_path / "hub"
    weights = os.urandom(1 << 20) * 17 + b"tail"
    text = (b"line of a large text file\n" * 700000)[: (16 << 20) + 3]
    names = hb.add_repo(str(c), "models--org--big", {
        hb.COMMIT_A: {"model.safetensors": (weights, True), "data.txt": (text, False)}}, {"main": hb.COMMIT_A})
    r = run_gpugate("hf", "verify", "--format", "json", env=env_for(c))
    assert r.rc == 0 and r.json()["verdict"] == "pass", r
    # and as hf.integrity, inside check's seccomp sandbox
    spec = spec_file(tmp_path, "profile: ci\nhf:\n  require_mount: false\n  min_free: 1MiB\n  integrity: true\n"
                     "  models:\n    - org/big\n")
    r = run_gpugate("check", "--spec", spec, "--only", "hf.integrity", "--format", "json", env=env_for(c))
    assert r.rc == 0 and r.check("hf.integrity")["status"] == "pass", r
    assert "2 files match their hash" in r.check("hf.integrity")["summary"], r
    for path, at in (("model.safetensors", (9 << 20) + 7), ("data.txt", (16 << 20) + 1)):
        blob = c / "models--org--big" / "blobs" / names[path]
        os.chmod(blob, 0o644)
        with open(blob, "r+b") as f:
            f.seek(at)
            b = f.read(1)
            f.seek(at)
            f.write(bytes([b[0] ^ 1]))
    r = run_gpugate("hf", "verify", env=env_for(c))
    assert r.rc == 1, r
    assert "model.safetensors in revision " + hb.COMMIT_A[:12] in r.out and "sha256 mismatch" in r.out, r
    assert "data.txt in revision " + hb.COMMIT_A[:12] in r.out and "git-sha1 mismatch" in r.out, r
    r = run_gpugate("check", "--spec", spec, "--only", "hf.integrity", "--format", "json", env=env_for(c))
    assert r.rc == 1 and r.check("hf.integrity")["status"] == "fail", r


def test_verify_that_ends_at_once_waits_for_libcrypto(cache):
    """hf verify loads libcrypto on a thread while it scans; a run with
    nothing to hash ends before that load does. Exiting under it hung 1 run
    in 5 under ASan (LeakSanitizer's exit check against the loader's lock):
    the thread is joined first. 40 runs, each well within its timeout."""
    c, names = cache
    for _ in range(40):
        r = run_gpugate("hf", "verify", "org/absent", env=env_for(c), timeout=20)
        assert r.rc == 1 and "not in the cache" in r.out, r
