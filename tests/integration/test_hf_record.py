"""hf verify's verified-blob record (src/hf/verified_record.c), the deadline,
sizes against the listing, the progress line, and hf.integrity's scope.
Each trust rule is shown failing in the way it guards against: a blob changed
with its mtime put back, replaced by another file of the same size, written in
the racy window; a record truncated, made for another cache, a FIFO or a link.
The record lives in a temp state folder (XDG_RUNTIME_DIR) of each test."""
import json
import os
import pty
import select
import shutil
import time

import pytest

import hf_builder as hb
from conftest import GPUGATE, run_gpugate, spec_file
from hf_upstream import hub_env

WEIGHTS = "model.safetensors"


def env_for(cache, state, **extra):
    return hub_env(cache, XDG_RUNTIME_DIR=str(state), **extra)


@pytest.fixture
def setup(tmp_path):
    cache = tmp_path / "hub"
    names = hb.valid_cache(str(cache))
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    # blobs written within the racy margin (2 s) before a run are hashed again
    # by the next one: let the cache age past it, as a real one has
    time.sleep(2.2)
    return cache, state, names


def verify(cache, state, *args, rc=0):
    r = run_gpugate("hf", "verify", "--format", "json", *args, env=env_for(cache, state))
    assert r.rc == rc, r
    return r.json()


def weights_blob(cache, names):
    return cache / "models--org--tiny" / "blobs" / names["model"][WEIGHTS]


def state_files(state, prefix):
    return sorted(p for p in (state / "gpugate").iterdir() if p.name.startswith(prefix))


def record_file(state):
    files = state_files(state, "hf-verified-")
    assert len(files) == 1, files
    return files[0]


def tree(path):
    return sorted(os.path.relpath(os.path.join(d, f), path) for d, _, fs in os.walk(path) for f in fs)


def test_unchanged_cache_is_trusted_and_full_hashes_all(setup):
    cache, state, names = setup
    before = tree(cache)
    first = verify(cache, state)
    assert first["hashed"] == 7 and first["trusted"] == 0 and "no record yet" in first["record_note"], first
    second = verify(cache, state)
    assert second["hashed"] == 0 and second["trusted"] == 7 and second["bytes_hashed"] == 0, second
    assert second["matching"] == 7 and second["verdict"] == "pass"
    full = verify(cache, state, "--full")
    assert full["hashed"] == 7 and full["trusted"] == 0, full
    # the record is in the state folder, nothing new in the hub cache
    assert tree(cache) == before
    assert record_file(state).stat().st_mode & 0o777 == 0o600
    text = run_gpugate("hf", "verify", env=env_for(cache, state))
    assert "0 files hashed, 7 blobs trusted from the record" in text.out, text


def test_flipped_byte_with_mtime_put_back_is_hashed(setup):
    cache, state, names = setup
    verify(cache, state)
    blob = weights_blob(cache, names)
    st = blob.stat()
    with open(blob, "r+b") as f:
        f.seek(1000)
        b = f.read(1)
        f.seek(1000)
        f.write(bytes([b[0] ^ 1]))
    os.utime(blob, ns=(st.st_atime_ns, st.st_mtime_ns))  # touch -r: mtime as it was, ctime moves
    assert blob.stat().st_mtime_ns == st.st_mtime_ns and blob.stat().st_size == st.st_size
    j = verify(cache, state, rc=1)
    assert j["hashed"] == 1 and j["trusted"] == 6, j
    assert any(p.get("state") == "hash mismatch" and p["blob"].endswith(names["model"][WEIGHTS])
               for p in j["problems"]), j
    # and it stays a failure: a mismatch is never recorded
    assert verify(cache, state, rc=1)["hashed"] == 1


def test_blob_replaced_by_another_file_of_the_same_size_is_hashed(setup):
    cache, state, names = setup
    verify(cache, state)
    blob = weights_blob(cache, names)
    st = blob.stat()
    other = blob.with_name("replacement.tmp")
    other.write_bytes(b"x" * st.st_size)
    os.utime(other, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.rename(other, blob)
    assert blob.stat().st_ino != st.st_ino and blob.stat().st_size == st.st_size
    j = verify(cache, state, rc=1)
    assert j["hashed"] == 1 and j["trusted"] == 6, j
    assert any(p.get("state") == "hash mismatch" for p in j["problems"]), j


def test_racy_blob_is_hashed_again(setup):
    cache, state, names = setup
    blob = weights_blob(cache, names)
    # a timestamp not older than the run's start: it could still change within its granule unseen
    future = time.time_ns() + 3600 * 10**9
    os.utime(blob, ns=(future, future))
    assert verify(cache, state)["hashed"] == 7
    j = verify(cache, state)
    assert j["hashed"] == 1 and j["trusted"] == 6, j


def test_truncated_record_means_a_full_hash(setup):
    cache, state, names = setup
    verify(cache, state)
    rec = record_file(state)
    lines = rec.read_bytes().splitlines(keepends=True)
    rec.write_bytes(b"".join(lines[:-3]))  # two entries and the end line gone
    j = verify(cache, state)
    assert j["hashed"] == 7 and j["trusted"] == 0 and "cut short" in j["record_note"], j
    assert verify(cache, state)["trusted"] == 7  # written whole again


def test_record_of_another_cache_is_not_trusted(setup, tmp_path):
    cache, state, names = setup
    verify(cache, state)
    # the same folder under another path: the record names the old path
    moved = tmp_path / "moved-hub"
    os.rename(cache, moved)
    j = verify(moved, state)
    assert j["hashed"] == 7 and j["trusted"] == 0 and "another cache" in j["record_note"], j
    # a copy of the cache with the first cache's record put under the copy's name
    copy = tmp_path / "copy-hub"
    shutil.copytree(moved, copy, symlinks=True)
    os.rename(moved, cache)
    verify(cache, state, "--full")
    st = copy.stat()
    own = state / "gpugate" / f"hf-verified-{st.st_dev:x}-{st.st_ino:x}"
    shutil.copy(state / "gpugate" / f"hf-verified-{cache.stat().st_dev:x}-{cache.stat().st_ino:x}", own)
    j = verify(copy, state)
    assert j["hashed"] == 7 and j["trusted"] == 0 and "another cache" in j["record_note"], j


def cache_lines(state):
    """The "cache DEV INO PATH" line of each record in the state folder."""
    return {p.name: p.read_bytes().splitlines()[1].decode() for p in state_files(state, "hf-")}


def test_one_record_however_the_cache_path_is_spelt(setup, tmp_path, monkeypatch):
    # the record is keyed by the folder's canonical path: a relative --cache,
    # the absolute HF_HUB_CACHE (hf verify and gpugate check), a link to the
    # folder, and a path with ".." all take the first run's record as it is
    cache, state, names = setup
    monkeypatch.chdir(tmp_path)
    first = verify(cache, state, "--cache", "hub")
    assert first["hashed"] == 7 and first["trusted"] == 0, first
    st = cache.stat()
    want = "cache %d %d %s" % (st.st_dev, st.st_ino, os.path.realpath(cache))
    lines = cache_lines(state)
    assert sorted(lines) == ["hf-dirs-%x-%x" % (st.st_dev, st.st_ino), "hf-verified-%x-%x" % (st.st_dev, st.st_ino)]
    assert set(lines.values()) == {want}, lines
    texts = {p.name: p.read_bytes() for p in state_files(state, "hf-")}
    link = tmp_path / "hub-link"
    link.symlink_to(cache)
    (tmp_path / "sub").mkdir()
    for spelling in ([], ["--cache", str(link)], ["--cache", "sub/../hub"], ["--cache", "./hub-link/"]):
        j = verify(cache, state, *spelling)
        assert j["hashed"] == 0 and j["trusted"] == 7 and j["record_note"] == "", (spelling, j)
    spec = spec_file(tmp_path, "profile: ci\nhf:\n  require_mount: false\n  min_free: 1\n  integrity: true\n")
    r = run_gpugate("check", "--spec", spec, "--only", "hf.integrity", "--format", "json", env=env_for(cache, state))
    assert r.rc == 0, r
    details = r.json()["checks"][0]["details"]
    assert details["hashed"] == 0 and details["trusted"] == 7, details
    # the records were taken, never rewritten for another spelling
    assert {p.name: p.read_bytes() for p in state_files(state, "hf-")} == texts
    # under --root (the image's path read inside the root, the root given either way): the same record
    for root in (str(tmp_path), ".", "sub/.."):
        r = run_gpugate("hf", "verify", "--format", "json", "--root", root,
                        env=env_for("/hub", state))
        assert r.rc == 0 and r.json()["hashed"] == 0 and r.json()["trusted"] == 7, (root, r)
    # another folder (a copy) still gets records of its own, and leaves the first's alone
    copy = tmp_path / "copy-hub"
    shutil.copytree(cache, copy, symlinks=True)
    j = verify(copy, state, "--cache", "copy-hub")
    assert j["hashed"] == 7 and j["trusted"] == 0 and "no record yet" in j["record_note"], j
    assert len(state_files(state, "hf-verified-")) == 2 and len(state_files(state, "hf-dirs-")) == 2
    assert verify(cache, state, "--cache", "hub")["trusted"] == 7


@pytest.mark.parametrize("kind", ["fifo", "link"])
def test_record_that_is_a_fifo_or_a_link_is_refused(setup, tmp_path, kind):
    cache, state, names = setup
    verify(cache, state)
    rec = record_file(state)
    good = tmp_path / "good-record"
    shutil.copy(rec, good)
    rec.unlink()
    if kind == "fifo":
        os.mkfifo(rec, 0o600)
    else:
        rec.symlink_to(good)
    t0 = time.monotonic()
    j = verify(cache, state)
    assert time.monotonic() - t0 < 10
    assert j["hashed"] == 7 and j["trusted"] == 0, j
    assert ("FIFO" if kind == "fifo" else "symlink") in j["record_note"] and "not written" in j["record_note"], j
    # left as it was: never written through, never replaced
    assert os.path.islink(rec) if kind == "link" else os.path.exists(rec) and not os.path.islink(rec)


def big_sparse_repo(cache, size, listed_size=None):
    """A repo whose one blob is a sparse file of size bytes (zeros, not
    stored), named by a hash it does not have; with a listing giving
    listed_size when set."""
    name = "ab" * 32
    commit = hb.COMMIT_A
    hb.add_repo(str(cache), "models--org--big", {commit: {}}, refs={"main": commit})
    blobs = cache / "models--org--big" / "blobs"
    blobs.mkdir(exist_ok=True)
    with open(blobs / name, "wb") as f:
        f.truncate(size)
    snap = cache / "models--org--big" / "snapshots" / commit
    snap.mkdir(parents=True, exist_ok=True)
    (snap / "big.bin").symlink_to(f"../../blobs/{name}")
    if listed_size is not None:
        hb.write_listing(str(cache), "models--org--big", commit, {}, raw=json.dumps(
            {"format_version": 1, "files": {"big.bin": {"size": listed_size, "blob_id": "0" * 40,
                                                        "lfs_sha256": name, "lfs_size": listed_size}}}).encode())
    return blobs / name


def test_deadline_stops_mid_blob_and_says_what_is_left(setup):
    cache, state, names = setup
    big_sparse_repo(cache, 64 << 30)  # 64 GiB of holes: longer than any deadline here
    t0 = time.monotonic()
    # two threads: one stays on the big blob, the other hashes the rest
    r = run_gpugate("hf", "verify", "--deadline", "1", "--jobs", "2", "--format", "json", env=env_for(cache, state))
    took = time.monotonic() - t0
    assert r.rc == 1 and took < 3.0, (took, r)
    j = r.json()
    assert j["timed_out"] is True and j["bytes_left"] > 0 and j["bytes_hashed"] < 64 << 30, j
    stop = [p for p in j["problems"] if p.get("state") == "deadline"]
    assert len(stop) == 1 and "hashed" in stop[0]["message"] and "left (about" in stop[0]["message"], j
    # what was verified before the deadline is kept for the next run
    assert verify(cache, state, "models--org--tiny")["trusted"] == 4
    t = run_gpugate("hf", "verify", "--deadline", "0.5", env=env_for(cache, state))
    assert t.rc == 1 and "FAIL stopped at the deadline (--deadline 0.5):" in t.out, t
    # the check's own deadline: ends by it (+0.5 s) with the same account
    spec = spec_file(setup[0].parent, "profile: ci\nhf:\n  require_mount: false\n  min_free: 1\n  integrity: true\n")
    t0 = time.monotonic()
    c = run_gpugate("check", "--spec", spec, "--only", "hf.integrity", "--deadline", "2", "--format", "json",
                    env=env_for(cache, state))
    assert time.monotonic() - t0 < 2.5 + 0.5, c
    h = c.check("hf.integrity")
    assert h["status"] == "fail" and "not finished before the deadline" in h["summary"], h
    assert "left (about" in h["summary"] and h["details"]["bytes_left"] > 0, h


def test_a_short_check_deadline_still_says_what_is_left(setup):
    """With --deadline 0.3 a fixed half-second reserve for the reports would
    leave hf verify the runner's own deadline, and the runner's generic
    "timed out" would win; the reserve is at most a quarter of the time left."""
    cache, state, names = setup
    big_sparse_repo(cache, 64 << 30)
    spec = spec_file(setup[0].parent, "profile: ci\nhf:\n  require_mount: false\n  min_free: 1\n  integrity: true\n")
    c = run_gpugate("check", "--spec", spec, "--only", "hf.integrity", "--deadline", "0.3", "--format", "json",
                    env=env_for(cache, state))
    assert c.rc == 1, c
    h = c.check("hf.integrity")
    assert h["status"] == "fail" and h["summary"].startswith("not finished before the deadline: "), h
    assert " hashed, " in h["summary"] and "left (about" in h["summary"] and h["details"]["bytes_left"] > 0, h


def test_size_against_the_listing_is_a_finding_without_hashing(setup):
    cache, state, names = setup
    big_sparse_repo(cache, 8 << 30, listed_size=1234)  # 8 GiB where the listing says 1234 bytes
    t0 = time.monotonic()
    j = verify(cache, state, "--full", "models--org--big", rc=1)
    assert time.monotonic() - t0 < 5
    assert j["bytes_hashed"] < 1 << 30, j
    hit = [p for p in j["problems"] if p.get("state") == "size differs from the listing: not hashed"]
    assert len(hit) == 1 and hit[0]["listed_size"] == 1234 and hit[0]["size"] == 8 << 30, j


def run_in_pty(args, env, timeout=60):
    """Runs gpugate with stderr (and stdout) on a pseudo-terminal; returns (rc, what it wrote)."""
    pid, fd = pty.fork()
    if pid == 0:
        os.execve(GPUGATE, [GPUGATE, *args], env)
    out = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            out += chunk
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    return os.waitstatus_to_exitcode(status), out


def test_progress_line_on_a_terminal_only(setup):
    cache, state, names = setup
    big_sparse_repo(cache, 3 << 30)  # a few seconds of hashing: several redraws
    env = env_for(cache, state)
    t0 = time.monotonic()
    rc, out = run_in_pty(["hf", "verify", "--full"], env)
    took = time.monotonic() - t0
    assert rc == 1, out  # the sparse blob does not hash to its name
    draws = out.count(b"\rhf verify: ")
    assert draws >= 2 and b"GiB of 3.00 GiB" in out and b"/s, " in out and b" left, " in out, out
    assert b"\x1b[K" in out
    # at most four redraws a second, and the final one
    assert draws <= 4 * took + 1, (draws, took)
    r = run_gpugate("hf", "verify", "--full", "--format", "json", env=env)
    rc, quiet = run_in_pty(["hf", "verify", "--full", "--quiet"], env)
    assert rc == 1 and b"\rhf verify: " not in quiet and b"left," not in quiet, quiet
    # a pipe: no progress line
    assert "\r" not in r.err and " left, " not in r.err, r.err


def test_integrity_covers_the_models_a_job_needs(setup):
    cache, state, names = setup
    base = "hf:\n  require_mount: false\n  min_free: 1\n  integrity: true\n  models:\n    - org/tiny\n"

    def integrity(profile, extra=""):
        spec = spec_file(cache.parent, f"profile: {profile}\n" + base + extra)
        r = run_gpugate("check", "--spec", spec, "--only", "hf.integrity", "--format", "json",
                        env=env_for(cache, state))
        assert r.rc == 0, r
        return r.check("hf.integrity")

    ci = integrity("ci")
    d = ci["details"]
    assert d["scope"] == "models" and d["files"] == 4 and d["hashed"] == 4, ci
    assert "4 files match their hash" in ci["summary"] and "scope: the 1 repo hf.models lists" in ci["summary"], ci
    again = integrity("ci")
    assert again["details"]["hashed"] == 0 and again["details"]["trusted"] == 4, again
    # the trusted files are among those that match, not more of them
    assert again["summary"].startswith("4 files match their hash (0 B hashed in ") and \
        "; 4 of them trusted, unchanged since verified)" in again["summary"], again
    whole = integrity("ci", "  integrity_scope: cache\n")
    assert whole["summary"].startswith("7 files match their hash (") and \
        "; 4 of them trusted, unchanged since verified)" in whole["summary"], whole
    whole = whole["details"]
    assert whole["scope"] == "cache" and whole["files"] == 7 and whole["trusted"] == 4 and whole["hashed"] == 3
    # validate trusts no record and hashes the whole cache
    v = integrity("validate")["details"]
    assert v["scope"] == "cache" and v["hashed"] == 7 and v["trusted"] == 0, v


def snapshot_link(cache, commit, path, folder="models--org--tiny"):
    return cache / folder / "snapshots" / commit / path


def retarget(link, target):
    os.unlink(link)
    os.symlink(target, link)


def test_snapshot_link_retargeted_is_seen_with_every_blob_trusted(tmp_path):
    # a link is read again once its folder changes (the folder record,
    # test_hf_dir_trust.py, trusts a listing only while the folder's stat
    # data is unchanged): a link pointed at another blob of the repo is a
    # finding even when every blob is trusted
    cache = tmp_path / "hub"
    names, _ = hb.listed_cache(str(cache))
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    time.sleep(2.2)
    assert verify(cache, state)["hashed"] == 7
    assert verify(cache, state)["trusted"] == 7
    retarget(snapshot_link(cache, hb.COMMIT_A, "config.json"), "../../blobs/" + names["model"]["tokenizer/vocab.txt"])
    j = verify(cache, state, rc=1)
    assert j["hashed"] == 0 and j["trusted"] == 7, j
    assert any("config.json in snapshot %s is 6 bytes" % hb.COMMIT_A in p["message"] for p in j["problems"]), j


@pytest.mark.parametrize("form,finding,rc", [
    ("../../blobs/{name}/", "model.safetensors is a broken link", 1),  # the kernel: ENOTDIR on a file
    ("../../blobs/{name}/.", "model.safetensors is a broken link", 1),
    ("./../../blobs//{name}", None, 0),  # the kernel reads "." and "//" as nothing
    # a blob of the same name in another repo: no blob of this one (a warning)
    ("../../../models--solo/blobs/{name}", "which is no blob of this repo", 0),
    # a blob that is a link: followed to the blob it names, never taken by its own name
    ("../../blobs/alias", "no snapshot file: blob blobs/alias", 1),
])
def test_link_text_read_as_the_kernel_follows_it(setup, form, finding, rc):
    # the usual link is known from its text (layout.c usual_link); every
    # other form is followed: the verdict is the kernel's in each case
    cache, state, names = setup
    name = names["model"][WEIGHTS]
    tiny = cache / "models--org--tiny"
    if "solo" in form:
        shutil.copy(tiny / "blobs" / name, cache / "models--solo" / "blobs" / name)
    if "alias" in form:
        os.symlink(name, tiny / "blobs" / "alias")
    link = snapshot_link(cache, hb.COMMIT_A, WEIGHTS)
    retarget(link, form.format(name=name))
    assert os.path.isfile(link) == ("broken" not in (finding or ""))
    j = verify(cache, state, rc=rc)
    if finding is None:
        assert not j["problems"] and j["matching"] == 7, j
    else:
        assert any(finding in p["message"] for p in j["problems"]), j


def kept_listings(state):
    return sorted(p for p in (state / "gpugate").iterdir() if p.name.startswith("hf-listing-"))


def test_kept_listing_taken_while_unchanged_and_parsed_again_once_changed(tmp_path):
    # a parsed trees/<commit>.json is kept in the state folder and taken as
    # kept while the listing's stat data is unchanged (verified_record.h)
    cache = tmp_path / "hub"
    hb.listed_cache(str(cache))
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    time.sleep(2.2)
    assert verify(cache, state)["verdict"] == "pass"
    kept = kept_listings(state)
    assert len(kept) == 4 and all(p.stat().st_mode & 0o777 == 0o600 for p in kept), kept
    # the kept result is what the next run uses: forged here, it shows
    mine = [p for p in kept if ("key models--org--tiny %s\n" % hb.COMMIT_A) in p.read_text()]
    assert len(mine) == 1
    text = mine[0].read_text()
    assert "\n1 24 =config.json " in text, text
    mine[0].write_text(text.replace("\n1 24 =config.json ", "\n1 99 =config.json "))
    j = verify(cache, state, rc=1)
    assert any("config.json in snapshot %s is 24 bytes, trees/%s.json says 99" % (hb.COMMIT_A, hb.COMMIT_A)
               in p["message"] for p in j["problems"]), j
    assert verify(cache, state, "--full")["verdict"] == "pass"  # --full parses every listing
    # the listing's content changed, same size, mtime put back: ctime moved, parsed again
    listing = cache / "models--org--tiny" / "trees" / (hb.COMMIT_A + ".json")
    st = listing.stat()
    raw = listing.read_bytes()
    assert raw.count(b'"size": 24,') == 1
    listing.write_bytes(raw.replace(b'"size": 24,', b'"size": 42,'))
    os.utime(listing, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert listing.stat().st_mtime_ns == st.st_mtime_ns and listing.stat().st_size == st.st_size
    for _ in range(2):  # racy (changed just now): not kept, parsed on each run
        j = verify(cache, state, rc=1)
        assert any("config.json in snapshot %s is 24 bytes, trees/%s.json says 42" % (hb.COMMIT_A, hb.COMMIT_A)
                   in p["message"] for p in j["problems"]), j


@pytest.mark.parametrize("kind", ["fifo", "link", "cut"])
def test_odd_kept_listing_is_not_used(tmp_path, kind):
    # a kept listing that is a FIFO, a link or cut short is not taken: each
    # holds a forged size here, which a run that took it would report
    cache = tmp_path / "hub"
    hb.listed_cache(str(cache))
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    time.sleep(2.2)
    verify(cache, state)
    for p in kept_listings(state):
        forged = p.read_text().replace("\n1 24 =config.json ", "\n1 99 =config.json ")
        p.unlink()
        if kind == "cut":
            p.write_text(forged[:-4])
        elif kind == "fifo":
            os.mkfifo(p, 0o600)
        else:
            (tmp_path / p.name).write_text(forged)
            os.symlink(tmp_path / p.name, p)
    j = verify(cache, state)
    assert j["verdict"] == "pass" and not any("says 99" in p["message"] for p in j["problems"]), j


KEPT_MAX = 256  # HF_KEPT_LISTINGS_MAX (src/hf/verified_record.h)


def test_kept_listings_are_bounded_least_recently_used_first(tmp_path):
    # a state folder already holding more kept listings than the bound: the
    # oldest go once new ones are written, the ones just written stay, and a
    # FIFO or a link of the same prefix is neither followed nor removed
    cache = tmp_path / "hub"
    hb.listed_cache(str(cache))
    state = tmp_path / "state"
    own = state / "gpugate"
    own.mkdir(parents=True, mode=0o700)
    old = [own / ("hf-listing-%016x" % i) for i in range(KEPT_MAX + 10)]
    for i, p in enumerate(old):  # file i used at second 1000 + i
        p.write_text("gpugate-hf-listing 1\n")
        os.utime(p, (1000 + i, 1000 + i))
    os.mkfifo(own / "hf-listing-fifo")
    outside = tmp_path / "outside"
    outside.write_text("not a kept listing\n")
    (own / "hf-listing-link").symlink_to(outside)
    time.sleep(2.2)
    assert verify(cache, state)["verdict"] == "pass"
    kept = sorted(p.name for p in own.iterdir() if p.name.startswith("hf-listing-") and p.is_file()
                  and not p.is_symlink())
    new = [n for n in kept if own / n not in old]
    assert len(new) == 4, new  # the four revisions' listings just written
    assert len(kept) == KEPT_MAX, len(kept)
    # what stays of the old ones is the most recently used
    assert [own / n for n in kept if own / n in old] == old[-(KEPT_MAX - 4):]
    assert (own / "hf-listing-fifo").exists() and os.path.islink(own / "hf-listing-link")
    assert outside.read_text() == "not a kept listing\n"
    # a kept listing taken by a run is marked used: it outlives older ones
    taken = max(own / n for n in new)
    before = taken.stat().st_mtime_ns
    assert verify(cache, state)["verdict"] == "pass"
    assert taken.stat().st_mtime_ns > before


RECORD_CACHES_MAX = 16  # src/hf/record_prune.h


def test_records_are_bounded_to_the_most_recently_used_caches(tmp_path):
    # records of 20 other caches (both kinds for most, one kind for some):
    # once this cache's records are written, only the 15 other caches used
    # most recently keep theirs; names gpugate does not write, a FIFO and a
    # link of a record's name are neither followed nor removed
    cache = tmp_path / "hub"
    hb.listed_cache(str(cache))
    state = tmp_path / "state"
    own = state / "gpugate"
    own.mkdir(parents=True, mode=0o700)
    others = []
    for i in range(20):  # cache i used at second 1000 + i
        names = ["hf-verified-fe%02x-%x" % (i, 1000 + i)] + (["hf-dirs-fe%02x-%x" % (i, 1000 + i)] if i % 3 else [])
        for n in names:
            (own / n).write_text("gpugate-hf-verified 1\n")
            os.utime(own / n, (1000 + i, 1000 + i))
        others.append(names)
    odd = ["hf-verified-notes", "hf-verified-FE-1", "hf-dirs-1-2-3", "hf-verified-1-"]
    for n in odd:
        (own / n).write_text("not a record\n")
        os.utime(own / n, (1, 1))
    os.mkfifo(own / "hf-verified-aa-1")
    outside = tmp_path / "outside"
    outside.write_text("not a record\n")
    os.utime(outside, (1, 1))
    (own / "hf-dirs-aa-2").symlink_to(outside)
    time.sleep(2.2)
    assert verify(cache, state)["verdict"] == "pass"
    st = cache.stat()
    mine = ["hf-verified-%x-%x" % (st.st_dev, st.st_ino), "hf-dirs-%x-%x" % (st.st_dev, st.st_ino)]
    present = {p.name for p in own.iterdir()}
    assert set(mine) <= present, present
    kept = [i for i, names in enumerate(others) if all(n in present for n in names)]
    gone = [i for i, names in enumerate(others) if not any(n in present for n in names)]
    first = 20 - (RECORD_CACHES_MAX - 1)  # the 15 others used last, with this cache: 16
    assert kept == list(range(first, 20)) and gone == list(range(first)), present
    for n in odd + ["hf-verified-aa-1", "hf-dirs-aa-2"]:
        assert os.path.lexists(own / n), n
    assert outside.read_text() == "not a record\n"
    # a record a run takes (nothing new to write) is marked used: it outlives older ones
    for n in mine:
        os.utime(own / n, (500, 500))
    assert verify(cache, state)["trusted"] == 7
    assert all((own / n).stat().st_mtime > 500 for n in mine), [(own / n).stat() for n in mine]
