"""Completeness from trees/<commit>.json listings, findings named by file,
copies and unverified content, against caches laid out as huggingface_hub
writes them (hf_builder.listed_cache: a listing per revision, blobs shared
across revisions, a nested file, a dataset repo). The listing format and the
rules for odd listings are those of huggingface_hub's _tree_cache.py and
_snapshot_download.py (_raise_if_incomplete_snapshot), commit
ee0a4510f4bc15e26cb722be2efc2bdb01383ca0."""
import functools
import json
import os
import pty
import select
import shutil
import subprocess

import pytest

import hf_builder as hb
from conftest import GPUGATE, STATE_DIR, finding_texts, run_gpugate, spec_file
from tally import report_tally
from hf_upstream import hub_env

TINY = "models--org--tiny"


def env_for(cache, **extra):
    return hub_env(cache, **{"XDG_RUNTIME_DIR": STATE_DIR, **extra})  # hf verify's record: never the host's /run


@pytest.fixture
def listed(tmp_path):
    c = tmp_path / "hub"
    names, trees = hb.listed_cache(str(c))
    return c, names, trees


def findings(check):
    return finding_texts(check)


def models_check(tmp_path, cache, models, profile="ci", scope=None):
    spec = spec_file(tmp_path, "profile: %s\nhf:\n  require_mount: false\n  min_free: 1\n  integrity: true\n"
                     "  models:\n%s" % (profile, "".join("    - %s\n" % m for m in models))
                     + ("  integrity_scope: %s\n" % scope if scope else ""))
    return run_gpugate("check", "--spec", spec, "--only", "hf", "--format", "json", env=env_for(cache))


def test_complete_listed_cache_passes(listed, tmp_path):
    c, names, trees = listed
    v = run_gpugate("hf", "verify", env=env_for(c))
    assert v.rc == 0, v
    s = run_gpugate("hf", "scan", "--format", "json", env=env_for(c))
    assert s.rc == 0, s
    for repo in s.json()["repos"]:
        for rev in repo["revisions"]:
            assert rev["listing"]["state"] == "ok" and rev["listing"]["missing"] == 0, rev
    r = models_check(tmp_path, c, ["org/tiny", "org/tiny@v1", "datasets/glue"])
    assert r.rc == 0, r
    assert "checked against their listings" in r.check("hf.models")["summary"], r.check("hf.models")


def test_missing_file_named_offline(listed, tmp_path):
    c, names, trees = listed
    os.unlink(c / TINY / "snapshots" / hb.COMMIT_A / "tokenizer" / "vocab.txt")
    v = run_gpugate("hf", "verify", env=env_for(c))
    assert v.rc == 1, v
    assert "tokenizer/vocab.txt is missing from snapshot " + hb.COMMIT_A + " (v1)" in v.out, v
    assert "IncompleteSnapshotError" in v.out
    # hf.models fails for the revision that lacks it, exactly as snapshot_download(local_files_only=True)
    r = models_check(tmp_path, c, ["org/tiny@v1"])
    assert r.rc == 1, r
    m = r.check("hf.models")
    assert m["status"] == "fail" and any("tokenizer/vocab.txt is missing" in f for f in findings(m)), m
    assert r.check("hf.layout")["status"] == "fail"
    # main (commit B) does not list the file: it is complete
    r = models_check(tmp_path, c, ["org/tiny"])
    assert r.check("hf.models")["status"] == "pass", r.check("hf.models")


def test_layout_fix_downloads_the_revision_with_its_repo_type(listed, tmp_path):
    """hf.layout's fix for a file missing from a revision re-downloads that
    commit, naming the repo type as `hf download` wants it (none for a model)."""
    c, names, trees = listed
    os.unlink(c / "datasets--glue" / "snapshots" / hb.COMMIT_A / "README.md")
    os.unlink(c / TINY / "snapshots" / hb.COMMIT_A / "config.json")
    r = models_check(tmp_path, c, [])
    fixes = r.check("hf.layout")["remediation"]
    assert "hf download glue --repo-type dataset --revision " + hb.COMMIT_A in fixes, fixes
    assert "hf download org/tiny --revision " + hb.COMMIT_A in fixes, fixes


def test_missing_file_without_listing_is_not_checked(listed, tmp_path):
    c, names, trees = listed
    os.unlink(c / TINY / "snapshots" / hb.COMMIT_A / "tokenizer" / "vocab.txt")
    shutil.rmtree(c / TINY / "trees")
    r = models_check(tmp_path, c, ["org/tiny@v1"])
    m = r.check("hf.models")
    # snapshot_download returns a folder it cannot check: so does the gate, saying so
    assert m["status"] == "pass", m
    assert "completeness of 1 not checked" in m["summary"], m
    assert any("gpugate hf fetch" in f and "huggingface_hub" in f for f in findings(m)), m
    s = run_gpugate("hf", "scan", env=env_for(c))
    assert "no listing: completeness not checked" in s.out, s
    # hf verify says so too, and how to get a listing (the other repos keep theirs)
    v = run_gpugate("hf", "verify", env=env_for(c))
    assert v.rc == 0, v
    assert ("completeness of 2 of 4 revisions not checked: no usable trees/<commit>.json listing "
            "(re-run the download with a current huggingface_hub, or gpugate hf fetch, to write one)") in v.out, v
    j = run_gpugate("hf", "verify", "--format", "json", env=env_for(c)).json()
    assert (j["revisions"], j["revisions_without_listing"]) == (4, 2), j
    v = run_gpugate("hf", "verify", "models--solo", env=env_for(c))
    assert v.rc == 0 and "completeness" not in v.out, v  # the one selected repo has its listing


def test_wrong_size(listed):
    c, names, trees = listed
    files = dict(trees[(TINY, hb.COMMIT_B)])
    entries = hb.listing_entries(files)
    entries["config.json"]["size"] += 7
    raw = json.dumps({"format_version": 1, "files": entries}, indent=1).encode()
    path = hb.write_listing(str(c), TINY, hb.COMMIT_B, None, raw=raw)
    v = run_gpugate("hf", "verify", env=env_for(c))
    assert v.rc == 1, v
    size = len(files["config.json"][0])
    assert "config.json in snapshot %s is %d bytes, trees/%s.json says %d" % (hb.COMMIT_B, size, hb.COMMIT_B, size + 7) \
        in v.out, (v, path)


def test_flipped_byte_in_listed_lfs_blob_names_every_file(listed, tmp_path):
    c, names, trees = listed
    blob = c / TINY / "blobs" / names["model"]["model.safetensors"]
    data = bytearray(blob.read_bytes())
    data[100] ^= 0xFF
    blob.write_bytes(bytes(data))
    actual = hb.sha256sum(bytes(data))
    v = run_gpugate("hf", "verify", "--format", "json", env=env_for(c))
    assert v.rc == 1, v
    probs = [p for p in v.json()["problems"] if p.get("state") == "hash mismatch"]
    assert len(probs) == 1, v.json()
    p = probs[0]
    assert p["actual"] == actual and p["expected"] == names["model"]["model.safetensors"]
    assert p["blob"] == "blobs/" + names["model"]["model.safetensors"]
    got = {(f["revision"], f["path"], tuple(f["refs"])) for f in p["files"]}
    assert got == {(hb.COMMIT_A, "model.safetensors", ("v1",)), (hb.COMMIT_B, "model.safetensors", ("main",))}, got
    t = run_gpugate("hf", "verify", env=env_for(c))
    assert "model.safetensors in revision %s (v1)" % hb.COMMIT_A[:12] in t.out, t
    # the check's JSON report carries the blob and the files too
    i = models_check(tmp_path, c, ["org/tiny"]).check("hf.integrity")
    assert i["status"] == "fail", i
    p = i["details"]["problems"][0]
    assert p["blob"] == "blobs/" + names["model"]["model.safetensors"] and p["actual"] == actual, p
    assert {(f["revision"], f["path"]) for f in p["files"]} == {(hb.COMMIT_A, "model.safetensors"),
                                                                 (hb.COMMIT_B, "model.safetensors")}, p


def test_blob_that_is_no_plain_file_names_every_file(listed, tmp_path):
    """A blob replaced by a FIFO is never opened; the finding names the files
    behind it (revision and ref), in text and in JSON, as a hash mismatch does."""
    c, names, trees = listed
    blob = c / TINY / "blobs" / names["model"]["model.safetensors"]
    blob.unlink()
    os.mkfifo(blob)
    want = ("model.safetensors in revision %s (v1), model.safetensors in revision %s (main): blobs/%s is not a plain "
            "file (a FIFO): never opened" % (hb.COMMIT_A[:12], hb.COMMIT_B[:12], blob.name))
    v = run_gpugate("hf", "verify", env=env_for(c), timeout=30)
    assert v.rc == 1 and "FAIL models--org--tiny: " + want in v.out, v
    p = [p for p in run_gpugate("hf", "verify", "--format", "json", env=env_for(c), timeout=30).json()["problems"]
         if "not a plain file" in p["message"]]
    assert len(p) == 1 and p[0]["blob"] == "blobs/" + blob.name, p
    assert {(f["revision"], f["path"], tuple(f["refs"])) for f in p[0]["files"]} == {
        (hb.COMMIT_A, "model.safetensors", ("v1",)), (hb.COMMIT_B, "model.safetensors", ("main",))}, p
    s = run_gpugate("hf", "scan", "--format", "json", env=env_for(c), timeout=30)
    w = [w for r in s.json()["repos"] for w in r["warnings"] if "not a plain file" in w["message"]]
    assert len(w) == 1 and w[0]["message"] == want and len(w[0]["files"]) == 2, w
    lay = models_check(tmp_path, c, ["org/tiny"]).check("hf.layout")
    assert lay["status"] == "fail" and any(want in f for f in findings(lay)), lay


@pytest.mark.parametrize("kind,raw,words", [
    ("unknown_version", b'{"format_version": 2, "files": {}}', ["format_version 2", "huggingface_hub ignores it"]),
    ("malformed", b'{"format_version": 1, "files": {"config.json": {"size": 24', ["malformed", "not JSON"]),
    ("no_blob_id", b'{"format_version": 1, "files": {"config.json": {"size": 24}}}', ["malformed", "lacks size or blob_id"]),
    ("bad_xet", b'{"format_version": 1, "files": {"config.json": {"size": 1, "blob_id": "x", "xet_hash": "zz"}}}',
     ["invalid xet_hash", "huggingface_hub ignores"]),
])
def test_unusable_listing_warns_and_is_ignored(listed, tmp_path, kind, raw, words):
    c, names, trees = listed
    os.unlink(c / TINY / "snapshots" / hb.COMMIT_A / "tokenizer" / "vocab.txt")
    hb.write_listing(str(c), TINY, hb.COMMIT_A, None, raw=raw)
    v = run_gpugate("hf", "verify", env=env_for(c))
    assert v.rc == 0, v  # behaves as without a listing: nothing known to be missing
    assert "warn models--org--tiny: trees/%s.json" % hb.COMMIT_A in v.out, v
    for w in words:
        assert w in v.out, (w, v)
    assert "missing from snapshot" not in v.out
    r = models_check(tmp_path, c, ["org/tiny@v1"])
    m = r.check("hf.models")
    assert m["status"] == "warn" and "not checked" in m["summary"], m


def test_ref_with_a_trailing_newline_fails_models_on_one_line(listed, tmp_path):
    """snapshot_download reads refs/<revision> raw (f.read(), no strip): a
    trailing newline names no snapshot, so offline it fails; the finding shows
    the ref's text escaped, on one line."""
    c, names, trees = listed
    (c / TINY / "refs" / "main").write_text(hb.COMMIT_B + "\n")
    r = models_check(tmp_path, c, ["org/tiny"])
    m = r.check("hf.models")
    want = "org/tiny@main: refs/main names '%s\\n', which is no snapshot" % hb.COMMIT_B
    assert m["status"] == "fail" and any(f.startswith(want) and "\n" not in f for f in findings(m)), m
    t = run_gpugate("check", "--spec", str(tmp_path / "spec.yaml"), "--only", "hf.models", env=env_for(c))
    assert t.rc == 1 and "      - " + want in t.out, t


def test_listing_that_crashes_huggingface_hub_fails_models(listed, tmp_path):
    c, names, trees = listed
    hb.write_listing(str(c), TINY, hb.COMMIT_A, None, raw=b"[1, 2]")  # data.get(): AttributeError upstream
    r = models_check(tmp_path, c, ["org/tiny@v1"])
    m = r.check("hf.models")
    assert m["status"] == "fail" and any("AttributeError" in f for f in findings(m)), m


def test_copied_file_checked_against_listing(listed, tmp_path):
    c, names, trees = listed
    link = c / TINY / "snapshots" / hb.COMMIT_B / "config.json"
    link.unlink()
    link.write_bytes(b'{"model_type": "gpt22"}\n\n')  # a copy, edited, of the listed size
    v = run_gpugate("hf", "verify", env=env_for(c))
    assert v.rc == 1, v
    assert "config.json in revision %s (main) is a copied file" % hb.COMMIT_B in v.out, v
    assert hb.git_hash(b'{"model_type": "gpt22"}\n\n') in v.out
    # of another size: a finding without its hash (issue 26)
    link.write_bytes(b'{"model_type": "gpt2"}\n')
    v = run_gpugate("hf", "verify", env=env_for(c))
    assert v.rc == 1 and "is a copied file of 23 bytes; trees/%s.json says 25: not hashed" % hb.COMMIT_B in v.out, v
    assert hb.git_hash(b'{"model_type": "gpt2"}\n') not in v.out
    # the same copy, unedited, matches its listing's blob_id
    link.write_bytes(trees[(TINY, hb.COMMIT_B)]["config.json"][0])
    v = run_gpugate("hf", "verify", env=env_for(c))
    assert v.rc == 0, v
    assert "8 of 8 files match" in v.out, v


def test_copy_without_listing_and_unnamed_blob_are_unverified(listed, tmp_path):
    c, names, trees = listed
    shutil.rmtree(c / TINY / "trees")
    link = c / TINY / "snapshots" / hb.COMMIT_B / "config.json"
    link.unlink()
    link.write_bytes(b"edited")
    solo = c / "models--solo"
    (solo / "blobs" / "deadbeef").write_bytes(b"x")
    os.symlink("../../blobs/deadbeef", solo / "snapshots" / hb.COMMIT_A / "extra.bin")
    v = run_gpugate("hf", "verify", env=env_for(c))
    assert v.rc == 0, v
    assert "content unverified" in v.out and "2 unverified" in v.out, v
    assert "extra.bin in revision" in v.out, v
    for profile, status in (("ci", "warn"), ("validate", "fail")):
        r = models_check(tmp_path, c, ["org/tiny"], profile=profile, scope="cache")
        i = r.check("hf.integrity")
        assert i["status"] == status, (profile, i)
        assert "2 unverified" in i["summary"] and "7 files match" in i["summary"], i
    # ci covers the models the job needs: org/tiny's copy only
    i = models_check(tmp_path, c, ["org/tiny"]).check("hf.integrity")
    assert i["status"] == "warn" and "1 unverified" in i["summary"] and "scope: the 1 repo hf.models" in i["summary"], i


def test_uppercase_blob_name_is_matched(listed):
    """utils/_verification.py lower-cases the expected hash: a correct hash in upper case matches."""
    c, names, trees = listed
    solo = c / "models--solo"
    name = names["solo"]["w.bin"]
    os.rename(solo / "blobs" / name, solo / "blobs" / name.upper())
    link = solo / "snapshots" / hb.COMMIT_A / "w.bin"
    link.unlink()
    os.symlink("../../blobs/" + name.upper(), link)
    v = run_gpugate("hf", "verify", env=env_for(c))
    assert v.rc == 0, v
    assert "7 of 7 files match" in v.out and "0 unverified" in v.out, v


def test_absolute_link_into_the_cache_is_accepted(listed, tmp_path):
    """file_download.py _create_symlink falls back to an absolute link; inside the cache it is huggingface_hub's own."""
    c, names, trees = listed
    link = c / TINY / "snapshots" / hb.COMMIT_A / "tokenizer" / "vocab.txt"
    link.unlink()
    os.symlink(str(c / TINY / "blobs" / names["model"]["tokenizer/vocab.txt"]), link)
    for args in (("hf", "scan"), ("hf", "verify")):
        r = run_gpugate(*args, env=env_for(c))
        assert r.rc == 0, r
    r = models_check(tmp_path, c, ["org/tiny@v1"])
    assert r.check("hf.layout")["status"] == "pass" and r.check("hf.models")["status"] == "pass", r


def test_links_inside_the_cache_are_followed_outside_refused(listed, tmp_path):
    c, names, trees = listed
    # a repo folder linked to another (both listed upstream), snapshots/ linked, a ref that is a link
    shutil.move(str(c / "models--solo"), str(c / "models--solo-v2"))
    os.symlink("models--solo-v2", c / "models--solo")
    glue = c / "datasets--glue"
    shutil.move(str(glue / "snapshots"), str(glue / "snaps"))
    os.symlink("snaps", glue / "snapshots")
    os.symlink("main", c / TINY / "refs" / "stable")
    # litter upstream skips (utils/_cache_manager.py FILES_TO_IGNORE)
    for name in (".DS_Store", "Thumbs.db", "desktop.ini"):
        (c / TINY / "refs" / name).write_text("x")
        (c / TINY / "snapshots" / name).write_text("x")
    s = run_gpugate("hf", "scan", "--format", "json", env=env_for(c))
    assert s.rc == 0, s
    repos = {r["folder"]: r for r in s.json()["repos"]}
    assert repos["models--solo"]["nb_files"] == 1 and not repos["models--solo"]["warnings"], repos["models--solo"]
    assert repos["datasets--glue"]["nb_files"] == 2, repos["datasets--glue"]
    assert repos[TINY]["refs"]["stable"] == hb.COMMIT_B, repos[TINY]["refs"]
    v = run_gpugate("hf", "verify", env=env_for(c))
    assert v.rc == 0 and "8 of 8 files match" in v.out, v  # solo's blob counted under both names
    # a repo folder moved to another disk and linked back is followed on the
    # real root, as scan_cache_dir() follows it (test_hf_cache_links.py has
    # --root, where it is not); a ref linked out of the cache is not read
    outside = tmp_path / "elsewhere"
    shutil.move(str(c / "models--solo-v2"), str(outside))
    os.unlink(c / "models--solo")
    os.symlink(str(outside), c / "models--solo")
    os.unlink(c / TINY / "refs" / "stable")
    os.symlink("/etc/hostname", c / TINY / "refs" / "stable")
    s = run_gpugate("hf", "scan", "--format", "json", env=env_for(c))
    assert s.rc == 1, s
    repos = {r["folder"]: r for r in s.json()["repos"]}
    assert repos["models--solo"]["nb_files"] == 1 and not repos["models--solo"]["warnings"], repos["models--solo"]
    s = run_gpugate("hf", "scan", env=env_for(c))
    assert "refs/stable is a link to /etc/hostname that is not followed: it points outside the cache" in s.out, s


def test_refs_nested_deep_are_read(listed):
    c, names, trees = listed
    deep = c / TINY / "refs" / "a" / "b" / "c" / "d" / "e" / "f" / "g" / "h" / "i" / "j"
    deep.mkdir(parents=True)
    (deep / "k").write_text(hb.COMMIT_A)
    s = run_gpugate("hf", "scan", "--format", "json", env=env_for(c))
    assert s.rc == 0, s
    tiny = [r for r in s.json()["repos"] if r["folder"] == TINY][0]
    assert tiny["refs"]["a/b/c/d/e/f/g/h/i/j/k"] == hb.COMMIT_A, tiny["refs"]


@pytest.mark.parametrize("label", ["hf verify", "hf.integrity"])
def test_progress_on_a_tty(tmp_path, label):
    """A large blob moves the progress line within itself: GiB, rate, time left;
    for `hf verify` and for the hf.integrity check alike."""
    c = tmp_path / "hub"
    repo = c / "models--big--one"
    (repo / "blobs").mkdir(parents=True)
    (repo / "snapshots" / hb.COMMIT_A).mkdir(parents=True)
    name = "0" * 64  # a mismatch is fine: the progress is what is tested
    with open(repo / "blobs" / name, "wb") as f:
        f.truncate(3 << 30)  # sparse: read from the page cache, no disk
    os.symlink("../../blobs/" + name, repo / "snapshots" / hb.COMMIT_A / "model.gguf")
    spec = spec_file(tmp_path, "profile: ci\nhf:\n  require_mount: false\n  min_free: 1\n  integrity: true\n")
    args = ["hf", "verify", "--jobs", "1"] if label == "hf verify" else ["check", "--spec", spec, "--only", label]
    pid, fd = pty.fork()
    if pid == 0:
        os.execve(GPUGATE, [GPUGATE] + args, env_for(c))
    out = b""
    while True:
        r, _, _ = select.select([fd], [], [], 60)
        if not r:
            break
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    _, status = os.waitpid(pid, 0)
    text = out.decode(errors="replace")
    assert os.WEXITSTATUS(status) == 1, text  # the mismatch
    frames = [f for f in text.split("\r") if f.startswith(label + ": ") and "iB/s" in f]
    assert len(frames) >= 2, text  # redrawn within the one blob
    # the shared progress line (src/lib/progress.c): done of total, rate, time left, files
    assert "of 3.00 GiB (" in frames[0] and "/s, " in frames[0] and " left, 0/1 files" in frames[0], frames


# Vectors from huggingface_hub tests/test_utils_cache.py (commit
# ee0a4510f4bc15e26cb722be2efc2bdb01383ca0), built as fixture caches; each
# counts in UPSTREAM as run, and as agreeing when its assertions held.
UPSTREAM = {"run": 0, "agree": 0}


def upstream_vector(test):
    @functools.wraps(test)
    def counted(*args, **kwargs):
        UPSTREAM["run"] += 1
        test(*args, **kwargs)
        UPSTREAM["agree"] += 1
    return counted


@upstream_vector
def test_upstream_ignore_os_metadata_files(tmp_path):
    """test_ignore_os_metadata_files_in_cache_structure: 0 warnings, 1 repo."""
    repo = tmp_path / "models--foo--bar"
    (repo / "snapshots" / "123").mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("123")
    for name in (".DS_Store", "Thumbs.db", "desktop.ini"):
        (tmp_path / name).touch()
        (repo / "refs" / name).touch()
        (repo / "snapshots" / name).touch()
    s = run_gpugate("hf", "scan", "--format", "json", "--cache", str(tmp_path))
    assert s.rc == 0, s
    assert [r["folder"] for r in s.json()["repos"]] == ["models--foo--bar"]
    assert s.json()["repos"][0]["warnings"] == []


@upstream_vector
def test_upstream_repo_with_no_snapshots_has_folder_times(tmp_path):
    """test_repo_with_no_snapshots: last_modified/last_accessed are the repo folder's."""
    repo = tmp_path / "models--foo--bar"
    (repo / "snapshots").mkdir(parents=True)
    os.utime(repo, (1700000000, 1600000000))
    s = run_gpugate("hf", "scan", "--format", "json", "--cache", str(tmp_path))
    assert s.rc == 0, s
    r = s.json()["repos"][0]
    assert (r["last_accessed"], r["last_modified"], r["size_on_disk"], r["warnings"]) == (1700000000, 1600000000, 0, [])


@upstream_vector
def test_upstream_snapshot_with_no_blob_files(tmp_path):
    """test_snapshot_with_no_blob_files: an empty revision is no warning."""
    repo = tmp_path / "models--foo--bar"
    (repo / "snapshots" / hb.COMMIT_A).mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(hb.COMMIT_A)
    s = run_gpugate("hf", "scan", "--format", "json", "--cache", str(tmp_path))
    assert s.rc == 0, s
    rev = s.json()["repos"][0]["revisions"][0]
    assert rev["nb_files"] == 0 and rev["size_on_disk"] == 0


@upstream_vector
def test_upstream_ref_to_missing_revision(tmp_path):
    """test_ref_to_missing_revision: the repo is dropped with a warning."""
    repo = tmp_path / "models--foo--bar"
    (repo / "snapshots" / hb.COMMIT_A).mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "not_main").write_text("revision_hash_that_does_not_exist")
    s = run_gpugate("hf", "scan", "--format", "json", "--cache", str(tmp_path))
    assert s.rc == 1, s
    w = s.json()["repos"][0]["warnings"]
    assert len(w) == 1 and w[0]["hidden_by_hf_cache_ls"] and "revision_hash_that_does_not_exist" in w[0]["message"], w


@pytest.mark.parametrize("folder,make,words", [
    ("models--foo--bar", "file", "is not a folder"),                      # test_repo_path_not_valid_dir
    ("not_a_cache_folder", "dir", "no '--'"),                              # test_repo_path_not_valid_name
    ("not-model--foo--bar", "dir", "unknown repo type"),                   # test_repo_type_not_valid
])
@upstream_vector
def test_upstream_corrupted_repo_folders(tmp_path, folder, make, words):
    p = tmp_path / folder
    if make == "file":
        p.touch()
    else:
        p.mkdir()
    s = run_gpugate("hf", "scan", "--format", "json", "--cache", str(tmp_path))
    assert s.rc == 1, s
    w = s.json()["repos"][0]["warnings"]
    assert len(w) == 1 and w[0]["hidden_by_hf_cache_ls"] and words in w[0]["message"], w


@upstream_vector
def test_upstream_layout_several_revisions(tmp_path):
    """tests/test_cache_layout.py test_multiple_refs_for_same_file and
    test_file_downloaded_in_cache_several_revisions: refs file-2 and main on one
    commit, three revisions with 8 links to 5 unique blobs."""
    c = tmp_path / "hub"
    f = lambda s: (s.encode(), False)  # noqa: E731
    c1, c2, c3 = "1" * 40, "2" * 40, "3" * 40
    hb.add_repo(str(c), "models--user--repo", {
        c1: {"file_0.txt": f("File 0"), "file_1.txt": f("File 1")},
        c2: {"file_0.txt": f("File 0"), "file_1.txt": f("File 1 bis"), "file_2.txt": f("File 2")},
        c3: {"file_0.txt": f("File 0"), "file_1.txt": f("File 1 bis"), "file_3.txt": f("File 3")},
    }, {"main": c3, "file-2": c2, "file-3": c3})
    s = run_gpugate("hf", "scan", "--format", "json", env=env_for(c))
    assert s.rc == 0, s
    r = s.json()["repos"][0]
    assert r["nb_files"] == 5 and sum(v["nb_files"] for v in r["revisions"]) == 8, r
    assert [sorted(v["refs"]) for v in r["revisions"] if v["commit_hash"] == c3] == [["file-3", "main"]]
    v = run_gpugate("hf", "verify", env=env_for(c))
    assert v.rc == 0 and "5 of 5 files match" in v.out, v


def test_upstream_tally(capsys):
    """Prints the counts of the upstream vectors above: run, agreeing, and
    deliberate warnings (none: gpugate warns and fails where upstream does)."""
    report_tally(capsys, "huggingface_hub cache vectors", UPSTREAM, 8)


def test_absolute_link_under_root_uses_the_path_inside_the_root(tmp_path):
    """Under --root the cache is /cache/hub inside the image: an absolute link
    huggingface_hub wrote there reads /cache/hub/..., never the host's path."""
    root = tmp_path / "img"
    c = root / "cache" / "hub"
    names, trees = hb.listed_cache(str(c))
    link = c / TINY / "snapshots" / hb.COMMIT_A / "config.json"
    link.unlink()
    blob = hb.git_hash(trees[(TINY, hb.COMMIT_A)]["config.json"][0])
    os.symlink("/cache/hub/%s/blobs/%s" % (TINY, blob), link)
    e = env_for("/cache/hub")
    for args in (("hf", "scan"), ("hf", "verify")):
        r = run_gpugate(*args, "--root", str(root), env=e)
        assert r.rc == 0, r
    # the same link read without --root points nowhere on this machine: a broken link
    r = run_gpugate("hf", "scan", env=env_for(c))
    assert r.rc == 1 and "is a broken link (/cache/hub/" in r.out, r


def test_dotdot_after_a_name_is_followed_as_the_kernel_does(listed):
    """"x/../../blobs/<n>": the kernel resolves ".." after following x; so
    does Path.resolve() upstream, and gpugate (one component at a time)."""
    c, names, trees = listed
    link = c / TINY / "snapshots" / hb.COMMIT_A / "config.json"
    link.unlink()
    os.symlink("tokenizer/../../../blobs/" + hb.git_hash(trees[(TINY, hb.COMMIT_A)]["config.json"][0]), link)
    s = run_gpugate("hf", "scan", env=env_for(c))
    assert s.rc == 0, s


def test_healthcheck_reads_no_listing(listed):
    """Every 30 s a listing of 100,000 files would be 22 MB of JSON to parse: the
    healthcheck profile leaves completeness to ci and validate, and says so."""
    c, names, trees = listed
    os.unlink(c / TINY / "snapshots" / hb.COMMIT_A / "tokenizer" / "vocab.txt")
    r = run_gpugate("check", "--profile", "healthcheck", "--only", "hf.layout", "--format", "json",
                    env=env_for(c, HF_HUB_OFFLINE="1"))
    lay = r.check("hf.layout")
    assert lay["status"] == "pass" and "listings not read in the healthcheck profile" in lay["summary"], lay
    r = run_gpugate("check", "--profile", "ci", "--only", "hf.layout", "--format", "json", env=env_for(c))
    assert r.check("hf.layout")["status"] == "fail", r.check("hf.layout")


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"), reason="needs root and unshare -m")
def test_threads_follow_the_cpu_quota(listed, tmp_path):
    """A container's CPU quota (cgroup v2 cpu.max) caps the hashing threads,
    read in a private mount namespace where /sys/fs/cgroup is a tmpfs."""
    c, names, trees = listed
    script = ("mount -t tmpfs none /sys/fs/cgroup && echo '50000 100000' > /sys/fs/cgroup/cpu.max && "
              "exec %s hf verify --format json --cache %s" % (GPUGATE, c))
    p = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    assert json.loads(p.stdout)["threads"] == 1, p.stdout  # half a CPU rounds up to one


def test_large_listing_compared_on_several_threads_as_on_one(tmp_path):
    # a listing of 3,000 files (past the one-thread slice: src/hf/layout.c,
    # MATCH_SLICE) with files missing, of another size and linked to another
    # blob, far apart: the findings, their order and the counts past the
    # first 20 of each kind are the same on 2 CPUs (compared in slices on
    # two threads) as on 1
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs 2 CPUs to compare on two threads")
    cache = tmp_path / "hub"
    files = {"part/%04d.bin" % i: (b"content %d\n" % i, i % 2 == 0) for i in range(3000)}
    hb.add_repo(str(cache), "models--org--wide", {hb.COMMIT_A: files}, {"main": hb.COMMIT_A})
    entries = hb.listing_entries(files)
    missing = ["gone/%04d.bin" % i for i in range(0, 3000, 97)]  # 31: 20 named, "and 11 more"
    for p in missing:
        entries[p] = {"size": 5, "blob_id": "0" * 40}
    resized = ["part/%04d.bin" % i for i in range(1, 3000, 113)]  # 27
    for p in resized:
        entries[p]["size"] += 1
    other = ["part/%04d.bin" % i for i in range(2, 3000, 131)]  # 23, LFS files: lfs_sha256 names another blob
    for p in other:
        entries[p]["lfs_sha256"] = "f" * 64
    raw = json.dumps({"format_version": 1, "files": {p: entries[p] for p in sorted(entries)}}, indent=1).encode()
    hb.write_listing(str(cache), "models--org--wide", hb.COMMIT_A, None, raw=raw)

    def messages(cpus):
        p = subprocess.run(["taskset", "-c", cpus, GPUGATE, "hf", "scan", "--format", "json"],
                           capture_output=True, text=True, env=env_for(cache), timeout=120)
        assert p.returncode == 1, p.stdout + p.stderr
        (repo,) = json.loads(p.stdout)["repos"]
        return [w["message"] for w in repo["warnings"]]

    one, two = messages("0"), messages("0,1")
    assert one == two
    named = [m for m in two if "is missing from snapshot" in m]
    assert [m.split(" ")[0] for m in named] == sorted(missing)[:20]
    assert any("and 11 more files" in m for m in two), two
    assert len([m for m in two if " bytes, trees/" in m]) == 20 and any("and 7 more files" in m for m in two)
    assert len([m for m in two if "links to blob" in m]) == 20 and any("and 3 more files" in m for m in two)


def test_subfolders_walked_on_several_threads_as_on_one(tmp_path):
    # a revision whose top folder holds files and several subfolders (one
    # nested), with broken links and another file type in some: the top
    # folder's subfolders are walked on threads of their own (src/hf/layout.c,
    # sub_walk) and spliced back in order, so the scan's report (files,
    # sizes, warnings and their order) is the same on 2 CPUs as on 1
    if len(os.sched_getaffinity(0)) < 2:
        pytest.skip("needs 2 CPUs to walk on two threads")
    cache = tmp_path / "hub"
    files = {}
    for d in ("a", "b", "b/inner", "c", "d"):
        for i in range(5):
            files["%s/f%d.bin" % (d, i)] = (b"%s %d\n" % (d.encode(), i), i % 2 == 0)
    files["top.txt"] = (b"top\n", False)
    files["zz.txt"] = (b"zz\n", False)
    hb.add_repo(str(cache), "models--org--deep", {hb.COMMIT_A: files}, {"main": hb.COMMIT_A})
    snap = cache / "models--org--deep" / "snapshots" / hb.COMMIT_A
    for d in ("a", "b/inner", "d"):
        os.symlink("../../../blobs/" + "e" * 64, snap / d / "broken.bin")
    os.mkfifo(snap / "c" / "odd")

    def report(cpus):
        p = subprocess.run(["taskset", "-c", cpus, GPUGATE, "hf", "scan", "--format", "json"],
                           capture_output=True, text=True, env=env_for(cache), timeout=120)
        assert p.returncode == 1, p.stdout + p.stderr
        return json.loads(p.stdout)

    one, two = report("0"), report("0,1")
    assert one == two
    (repo,) = two["repos"]
    broken = [w["message"] for w in repo["warnings"] if "broken link" in w["message"]]
    assert [m.split(" ")[0].split(hb.COMMIT_A + "/")[1] for m in broken] == ["a/broken.bin", "b/inner/broken.bin",
                                                                            "d/broken.bin"], broken
    assert any("c/odd is neither a file nor a link" in w["message"] for w in repo["warnings"]), repo["warnings"]
