"""The scan's folder-level trust (src/hf/dir_trust.c, after git's untracked
cache): a snapshot folder's or blobs/'s listing is taken from the state
folder's record while the folder's stat data is unchanged and not racy.
Changes made after a run are racy against its record's stamp, so to show the
stat comparison alone at work a test moves the record's stamp past them (a
clock set back, a file server's clock); to show the racy rule alone, the
recorded stat data is set to the folder's (a filesystem whose timestamps are
coarser than the change). Each test fails without the rule it names."""
import json
import os
import struct
import time

import pytest

import hf_builder as hb
from conftest import run_gpugate, spec_file
from test_hf_record import env_for, snapshot_link, state_files, verify

TINY = "models--org--tiny"


@pytest.fixture
def setup(tmp_path):
    cache = tmp_path / "hub"
    names, _ = hb.listed_cache(str(cache))
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    time.sleep(2.2)  # older than the racy margin, as a cache in use is
    assert verify(cache, state)["hashed"] == 7
    return cache, state, names


FNV_OFFSET, FNV_PRIME, MASK64 = 14695981039346656037, 1099511628211, 0xFFFFFFFFFFFFFFFF
SUM_BLOCK = 64 << 10


def fnv1a_words(data):
    """FNV-1a's step over 8-byte words in the host's order, then the bytes left."""
    h = FNV_OFFSET
    words = len(data) // 8
    for (w,) in struct.iter_unpack("=Q", data[:words * 8]):
        h = ((h ^ w) * FNV_PRIME) & MASK64
    for b in data[words * 8:]:
        h = ((h ^ b) * FNV_PRIME) & MASK64
    return h


def fnv1a(data):
    """dir_trust.c's checksum: fnv1a_words up to 64 KiB; past it, the same
    step over the sums of its 64 KiB blocks."""
    if len(data) <= SUM_BLOCK:
        return fnv1a_words(data)
    h = FNV_OFFSET
    for at in range(0, len(data), SUM_BLOCK):
        h = ((h ^ fnv1a_words(data[at:at + SUM_BLOCK])) * FNV_PRIME) & MASK64
    return h


class Record:
    """The folder record (dir_trust.h's format), to read and rewrite."""

    def __init__(self, state):
        files = state_files(state, "hf-dirs-")
        assert len(files) == 1, files
        self.path = files[0]
        text = self.path.read_bytes()
        lines = text.split(b"\n", 4)
        self.head, rest = lines[:4], lines[4]
        self.dirs = []  # [key, stat fields, body]
        while rest.startswith(b"dir "):
            line, rest = rest.split(b"\n", 1)
            f = line.split(b" ")
            size = int(f[10])
            self.dirs.append([f[1].decode(), f[2:9], rest[:size]])
            assert fnv1a(rest[:size]) == int(f[11])
            rest = rest[size:]
        assert rest == b"end\n", rest[:80]

    def find(self, key):
        return next(d for d in self.dirs if d[0] == key)

    def stamp(self, ns):
        self.head[2] = b"stamp %d %d" % (ns // 10**9, ns % 10**9)

    def write(self, checksum=True, sums=None):
        """sums: {key: sum} written instead of the body's own."""
        out = b"\n".join(self.head) + b"\n"
        for key, st, body in self.dirs:
            count = body.count(b"\n")
            sum_ = (sums or {}).get(key, fnv1a(body) if checksum else 0)
            out += b"dir %s %s %d %d %d\n" % (key.encode(), b" ".join(st), count, len(body), sum_)
            out += body
        self.path.write_bytes(out + b"end\n")


def future_stamp(state):
    """Nothing is racy against the record: only its stat data guards."""
    rec = Record(state)
    rec.stamp(time.time_ns() + 3600 * 10**9)
    rec.write()


def dir_key(commit, sub=""):
    return "%s/snapshots/%s%s" % (TINY, commit, "/" + sub if sub else "")


def test_record_is_used_while_folders_are_unchanged(setup):
    # proof that the listing comes from the record: a link put into the
    # record alone (checksum right) is seen although no such file exists
    cache, state, _ = setup
    rec = Record(state)
    d = rec.find(dir_key(hb.COMMIT_A))
    d[2] += b"l zz-ghost ../../blobs/" + b"0" * 64 + b"\n"
    rec.write()
    j = verify(cache, state, rc=1)
    assert any("zz-ghost is a broken link" in p["message"] for p in j["problems"]), j
    # --full reads every folder
    assert verify(cache, state, "--full")["verdict"] == "pass"


def test_link_retargeted_by_rename_in_a_folder_of_unchanged_size(setup):
    cache, state, names = setup
    link = snapshot_link(cache, hb.COMMIT_A, "config.json")
    folder = link.parent
    before = folder.stat()
    tmp = folder / ".tmp-link"
    os.symlink("../../blobs/" + names["model"]["tokenizer/vocab.txt"], tmp)
    os.rename(tmp, link)  # one link replaced by another: same entries, same size
    assert folder.stat().st_size == before.st_size and folder.stat().st_ino == before.st_ino
    future_stamp(state)
    j = verify(cache, state, rc=1)
    assert any("config.json in snapshot %s is 6 bytes" % hb.COMMIT_A in p["message"] for p in j["problems"]), j


def test_file_added_in_a_nested_snapshot_folder(setup):
    cache, state, _ = setup
    sub = snapshot_link(cache, hb.COMMIT_A, "tokenizer")
    parent = sub.parent.stat()
    os.symlink("../../../blobs/" + "1" * 64, sub / "extra.bin")
    # a subfolder's change leaves its parent's stat data as it was: each level is checked
    assert sub.parent.stat().st_mtime_ns == parent.st_mtime_ns and sub.parent.stat().st_ctime_ns == parent.st_ctime_ns
    future_stamp(state)
    j = verify(cache, state, rc=1)
    assert any("tokenizer/extra.bin is a broken link" in p["message"] for p in j["problems"]), j


def test_blob_removed_from_blobs(setup):
    cache, state, names = setup
    blob = cache / TINY / "blobs" / names["model"]["config.json"]
    os.unlink(blob)
    future_stamp(state)
    j = verify(cache, state, rc=1)
    # blobs/ read again: the blob is gone, its links broken (a kept listing
    # would name it and report a blob that cannot be stat'ed)
    assert any("config.json is a broken link" in p["message"] for p in j["problems"]), j
    assert not any("not a plain file" in p["message"] for p in j["problems"]), j


def test_blob_added_to_blobs(setup):
    cache, state, _ = setup
    data = b"an extra blob\n"
    (cache / TINY / "blobs" / hb.sha256sum(data)).write_bytes(data)
    future_stamp(state)
    j = verify(cache, state)
    assert j["hashed"] == 1 and j["trusted"] == 7, j  # seen, and hashed as new


def test_racy_folder_is_read_again(setup):
    # a change in the same timestamp granule as the record: the folder's
    # stat data reads as recorded (here: its mtime put back, and the record
    # given the folder's ctime, as on a filesystem of coarse timestamps)
    cache, state, _ = setup
    sub = snapshot_link(cache, hb.COMMIT_A, "tokenizer")
    old = sub.stat()
    os.symlink("../../../blobs/" + "2" * 64, sub / "racy.bin")
    os.utime(sub, ns=(old.st_atime_ns, old.st_mtime_ns))
    now = sub.stat()
    assert now.st_mtime_ns == old.st_mtime_ns and now.st_ctime_ns != old.st_ctime_ns
    rec = Record(state)
    d = rec.find(dir_key(hb.COMMIT_A, "tokenizer"))
    d[1][2] = b"%d" % now.st_size
    d[1][5:7] = [b"%d" % (now.st_ctime_ns // 10**9), b"%d" % (now.st_ctime_ns % 10**9)]
    rec.stamp(now.st_ctime_ns - 10**9)  # the record's own time: a granule before the change
    rec.write()
    j = verify(cache, state, rc=1)
    assert any("tokenizer/racy.bin is a broken link" in p["message"] for p in j["problems"]), j


def test_corrupted_entry_in_the_record_is_not_used(setup):
    # a link's text changed in the record, its checksum not: the folder is
    # read again (else the link would point at a blob that does not exist)
    cache, state, _ = setup
    rec = Record(state)
    d = rec.find(dir_key(hb.COMMIT_A))
    assert b"l config.json ../../blobs/" in d[2]
    d[2] = d[2].replace(b"l config.json ../../blobs/", b"l config.json ../../blobs/f", 1)
    rec.write(checksum=False)  # the checksum no longer matches the body
    assert verify(cache, state)["verdict"] == "pass"
    # written again from the folders read (Record checks every checksum)
    assert b"../../blobs/f" not in Record(state).find(dir_key(hb.COMMIT_A))[2]


def test_large_listing_is_summed_by_blocks(setup):
    # a folder's listing past 64 KiB is summed by 64 KiB blocks (summed side
    # by side on hf verify's threads): a record whose large listing carries
    # the block sum is used (its ghost links are seen) ...
    cache, state, _ = setup
    rec = Record(state)
    d = rec.find(dir_key(hb.COMMIT_A))
    d[2] += b"".join(b"l zz-ghost%04d ../../blobs/%s\n" % (i, b"0" * 64) for i in range(1500))
    assert len(d[2]) > 2 * SUM_BLOCK
    rec.write()
    j = verify(cache, state, rc=1)
    assert any("zz-ghost0000 is a broken link" in p["message"] for p in j["problems"]), j
    # ... and a byte changed in its second block, the sum left, is caught
    # (the folder read again: no ghost)
    rec = Record(state)
    d = rec.find(dir_key(hb.COMMIT_A))
    was = fnv1a(d[2])
    at = d[2].index(b"zz-ghost", SUM_BLOCK + 1)
    d[2] = d[2][:at] + b"zz-ghosT" + d[2][at + 8:]
    rec.write(sums={d[0]: was})  # every other folder's sum right
    assert verify(cache, state)["verdict"] == "pass"


@pytest.mark.parametrize("damage", ["truncated", "fifo", "link", "foreign", "dirs count", "entries count"])
def test_odd_record_means_a_full_walk(setup, tmp_path, damage):
    cache, state, _ = setup
    rec = Record(state)
    ghost = rec.find(dir_key(hb.COMMIT_A))
    ghost[2] += b"l zz-ghost ../../blobs/" + b"0" * 64 + b"\n"
    rec.write()  # used, it would report zz-ghost: only a full walk passes
    path = rec.path
    if damage == "truncated":
        path.write_bytes(path.read_bytes()[:-4])  # the end line cut
    elif damage == "foreign":
        path.write_bytes(path.read_bytes().replace(b"\ncache ", b"\ncache 1", 1))
    elif damage == "dirs count":  # far more folders than the file holds: refused before any allocation
        text = path.read_bytes()
        path.write_bytes(text.replace(b"\ndirs %d\n" % len(rec.dirs), b"\ndirs 8000000\n", 1))
    elif damage == "entries count":  # the folder's count past its lines, checksum right
        key, st, body = ghost
        line = b"dir %s %s " % (key.encode(), b" ".join(st))
        text = path.read_bytes()
        at = text.index(line) + len(line)
        count = text[at:text.index(b" ", at)]
        path.write_bytes(text[:at] + b"99999999" + text[at + len(count):])
    else:
        saved = tmp_path / "saved"
        os.rename(path, saved)
        if damage == "fifo":
            os.mkfifo(path, 0o600)
        else:
            path.symlink_to(saved)
    t0 = time.monotonic()
    assert verify(cache, state)["verdict"] == "pass"
    assert time.monotonic() - t0 < 10
    if damage == "fifo":
        assert not path.is_symlink() and not path.is_file()  # left as it was, never written through
    elif damage == "link":
        assert path.is_symlink()


def test_check_takes_the_folder_record_as_hf_verify_does(setup):
    # gpugate check's scan (hf.layout, hf.integrity) trusts the same record
    # in ci and healthcheck: a link put into the record alone is reported,
    # so the folder was not read (no readdir, no readlink); validate reads
    # every folder (it trusts no record); a folder changed since is read again
    cache, state, _ = setup
    rec = Record(state)
    rec.find(dir_key(hb.COMMIT_A))[2] += b"l zz-ghost ../../blobs/" + b"0" * 64 + b"\n"
    rec.write()

    def check(profile, rc):
        spec = spec_file(cache.parent, "profile: %s\nhf:\n  require_mount: false\n  min_free: 1\n"
                         "  integrity: true\n" % profile)
        r = run_gpugate("check", "--spec", spec, "--only", "hf.layout,hf.integrity", "--format", "json",
                        env=env_for(cache, state))
        assert r.rc == rc, r
        return json.dumps(r.json()["checks"])

    assert "zz-ghost" in check("ci", 1)
    assert "zz-ghost" in check("healthcheck", 1)
    assert "zz-ghost" not in check("validate", 0)
    folder = snapshot_link(cache, hb.COMMIT_A, "config.json").parent
    os.symlink("../../blobs/" + "3" * 64, folder / "zz-new")  # the folder's mtime and ctime change
    seen = check("ci", 1)
    assert "zz-ghost" not in seen and "zz-new is a broken link" in seen, seen
