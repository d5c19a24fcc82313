"""`stack verify` reads the control file dpkg reads (issue 15 item 8).

Each .deb here is built by hand with `ar` and Python's tarfile, so that it can
differ from what dpkg-deb --build makes: two control members, '..' and
absolute names, links, duplicate fields, members out of order. Every case is
put to the real `dpkg-deb -f FILE Package Version Architecture` (the oracle)
and to `gpugate stack verify`; gpugate must never accept what dpkg-deb
refuses, and what it accepts must have dpkg-deb's fields. Where dpkg-deb would
read something ambiguous or outside the package (the last of two control
members, a control symlink it follows to the host's file, an absolute name it
cuts), gpugate refuses; those cases are marked STRICTER."""
import gzip
import hashlib
import io
import os
import shutil
import stat
import subprocess
import tarfile

import pytest

from conftest import GPUGATE

pytestmark = pytest.mark.skipif(not shutil.which("dpkg-deb") or not shutil.which("ar"),
                                reason="dpkg-deb and ar (dpkg, binutils) are the oracle and the builder")

CTL = b"Package: a\nVersion: 1.0\nArchitecture: all\nMaintainer: t <t@example.org>\nDescription: d\n"


def tar_bytes(members):
    """members: (name, data) for a file, (name, target, "sym"|"hard") for a link, (name, None, "dir"|"fifo"|"chr")."""
    bio = io.BytesIO()
    with tarfile.open(fileobj=bio, mode="w", format=tarfile.GNU_FORMAT) as t:
        for m in members:
            name, data, kind = m[0], m[1], (m[2] if len(m) > 2 else "file")
            ti = tarfile.TarInfo(name)
            ti.mode = 0o644
            if kind == "file":
                ti.size = len(data)
                t.addfile(ti, io.BytesIO(data))
                continue
            ti.type = {"sym": tarfile.SYMTYPE, "hard": tarfile.LNKTYPE, "dir": tarfile.DIRTYPE,
                       "fifo": tarfile.FIFOTYPE, "chr": tarfile.CHRTYPE}[kind]
            if kind == "dir":
                ti.mode = 0o755
            elif kind == "chr":
                ti.devmajor, ti.devminor = 1, 5  # /dev/zero's numbers, only written in the tar
            elif kind in ("sym", "hard"):
                ti.linkname = data
            t.addfile(ti)
    return bio.getvalue()


def standard(control_tar, member="control.tar.gz", extra=()):
    data = gzip.compress(control_tar) if member.endswith(".gz") else control_tar
    return [("debian-binary", b"2.0\n"), (member, data), *extra, ("data.tar", tar_bytes([]))]


def one_control(text, name="./control"):
    return standard(tar_bytes([(name, text)]))


def host_control(tmp):
    """A valid control file outside any package (in the test's folder)."""
    path = tmp / "outside" / "control"
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(CTL)
    return str(path)


def build(folder, name, members):
    """An ar archive with these members, in this order, built by binutils' ar."""
    work = folder / ("parts-" + name)
    work.mkdir()
    paths = []
    for i, (member, data) in enumerate(members):
        # one folder per member: ar takes the file's base name as the member name
        d = work / str(i)
        d.mkdir()
        (d / member).write_bytes(data)
        paths.append(str(d / member))
    out = folder / (name + ".deb")
    subprocess.run(["ar", "rc", str(out), *paths], check=True, capture_output=True)
    return out


def dpkg_fields(deb):
    p = subprocess.run(["dpkg-deb", "-f", str(deb), "Package", "Version", "Architecture"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        return None
    fields = dict(line.split(": ", 1) for line in p.stdout.splitlines() if ": " in line)
    return fields


def verify(tmp_path, deb, package="a", version="1.0", arch="all"):
    manifest = tmp_path / "stack.yaml"
    manifest.write_text(
        "stack: control-test\nsource: built by the test\narchitecture: amd64\npackages:\n"
        f"  - package: {package}\n    version: \"{version}\"\n    architecture: {arch}\n"
        f"    url: https://example.invalid/{deb.name}\n"
        f"    sha256: {hashlib.sha256(deb.read_bytes()).hexdigest()}\n")
    return subprocess.run([GPUGATE, "stack", "verify", "--manifest", str(manifest), str(deb.parent)],
                          capture_output=True, text=True, timeout=30)


# name: (members, gpugate accepts?, words in gpugate's FAIL line, STRICTER than dpkg-deb?)
CASES = {
    "plain ./control": (one_control(CTL), True, [], False),
    "control without ./": (one_control(CTL, "control"), True, [], False),
    "uncompressed control.tar": (standard(tar_bytes([("./control", CTL)]), member="control.tar"), True, [], False),
    ".//control": (one_control(CTL, ".//control"), True, [], False),
    "'_' member skipped": ([("debian-binary", b"2.0\n"), ("_extra", b"x"),
                            ("control.tar.gz", gzip.compress(tar_bytes([("./control", CTL)]))),
                            ("data.tar", tar_bytes([]))], True, [], False),
    "CRLF lines": (one_control(CTL.replace(b"\n", b"\r\n")), True, [], False),
    "Package in capitals": (one_control(CTL.replace(b"Package: a", b"Package: A")), True, [], False),
    "space before the colon": (one_control(CTL.replace(b"Package: a", b"Package : a")), True, [], False),
    "epoch version": (one_control(CTL.replace(b"Version: 1.0", b"Version: 2:1.0-1")), True, [], False),
    # dpkg-deb refuses these; so must gpugate
    "duplicate field": (one_control(CTL + b"Package: b\n"), False, ["Package appears twice"], False),
    "duplicate field, other case": (one_control(CTL + b"PACKAGE: b\n"), False, ["appears twice"], False),
    "two stanzas": (one_control(CTL + b"\nPackage: b\nVersion: 2\n"), False, ["second stanza"], False),
    "comment line": (one_control(b"# c\n" + CTL), False, ["not followed by a colon"], False),
    "continuation first": (one_control(b" x\n" + CTL), False, ["continuation line before any field"], False),
    "no final newline": (one_control(CTL.rstrip(b"\n")), False, ["final newline"], False),
    "bad version": (one_control(CTL.replace(b"Version: 1.0", b"Version: abc")), False, ["Version 'abc'"], False),
    "version over two lines": (one_control(CTL.replace(b"Version: 1.0", b"Version: 1.0\n 2")), False,
                               ["Version"], False),
    "bad package name": (one_control(CTL.replace(b"Package: a", b"Package: -a")), False,
                         ["not a valid package name"], False),
    "'..' member": (standard(tar_bytes([("./control", CTL), ("x/../y", b"z")])), False, ["'..'"], False),
    "../control": (one_control(CTL, "../control"), False, ["'..'"], False),
    "control is a folder": (standard(tar_bytes([("./control", None, "dir")])), False, ["a directory"], False),
    "data.tar before control.tar": ([("debian-binary", b"2.0\n"), ("data.tar", tar_bytes([])),
                                     ("control.tar.gz", gzip.compress(tar_bytes([("./control", CTL)])))],
                                    False, ["member 'data.tar' where control.tar belongs"], False),
    "unknown member before control.tar": ([("debian-binary", b"2.0\n"), ("foo", b"x"),
                                           ("control.tar.gz", gzip.compress(tar_bytes([("./control", CTL)]))),
                                           ("data.tar", tar_bytes([]))], False, ["member 'foo'"], False),
    "control.tar.bz2": (standard(tar_bytes([("./control", CTL)]), member="control.tar.bz2"), False,
                        ["unknown compression"], False),
    "debian-binary 3.0": ([("debian-binary", b"3.0\n")] + one_control(CTL)[1:], False, ["debian-binary 2.x"], False),
    # dpkg-deb reads these, but not unambiguously or not only from the package
    "./control and control": (standard(tar_bytes([("./control", CTL),
                                                  ("control", CTL.replace(b"Package: a", b"Package: b"))])),
                              False, ["two control members"], True),
    "absolute /control": (one_control(CTL, "/control"), False, ["is absolute"], True),
    # dpkg-deb follows the link out of the package and reads that file as the control
    "control symlink to a file outside": (lambda tmp: standard(tar_bytes([("./control", host_control(tmp), "sym")])),
                                          False, ["a symlink"], True),
    "control hard link": (standard(tar_bytes([("./other", CTL), ("./control", "./other", "hard")])), False,
                          ["a hard link"], True),
    "NUL byte in control": (one_control(CTL.replace(b"Version: 1.0", b"Version: 1.0\x00x")), False,
                            ["NUL byte"], True),
    "empty Architecture": (one_control(CTL.replace(b"Architecture: all", b"Architecture:")), False,
                           ["no Architecture field"], True),
}


@pytest.mark.parametrize("case", list(CASES))
def test_stack_verify_agrees_with_dpkg_deb(tmp_path, case):
    members, accepts, words, stricter = CASES[case]
    if callable(members):
        members = members(tmp_path)
    deb = build(tmp_path, "case", members)
    oracle = dpkg_fields(deb)
    r = verify(tmp_path, deb)
    if accepts:
        assert oracle is not None, f"dpkg-deb refuses {case}: the case is wrong"
        assert oracle == {"Package": "a", "Version": oracle["Version"], "Architecture": "all"}, oracle
        version = oracle["Version"]
        r = verify(tmp_path, deb, version=version)
        assert r.returncode == 0, r.stdout + r.stderr
        assert f"ok   {oracle['Package']} {version} {oracle['Architecture']}" in r.stdout, r.stdout
    else:
        assert r.returncode == 1, r.stdout + r.stderr
        fail = [line for line in r.stdout.splitlines() if line.startswith("FAIL")]
        assert fail and all(w in fail[0] for w in words), r.stdout
        assert deb.name in fail[0], r.stdout
        if stricter:
            assert oracle is not None, f"dpkg-deb refuses {case} too: not a STRICTER case"
        else:
            assert oracle is None, f"dpkg-deb reads {case} ({oracle}) but gpugate refuses it"


@pytest.mark.parametrize("kind,words", [("fifo", "control is a FIFO,"), ("chr", "control is a character device,")])
def test_control_of_another_kind_is_refused_by_its_kind(tmp_path, kind, words):
    # named as every other file kind is (lib/safe_io.c safe_kind_name), never read; no
    # dpkg-deb oracle here: dpkg-deb -f makes the FIFO and blocks opening it
    deb = build(tmp_path, "case", standard(tar_bytes([("./control", None, kind)])))
    r = verify(tmp_path, deb)
    assert r.returncode == 1, r.stdout + r.stderr
    fail = [line for line in r.stdout.splitlines() if line.startswith("FAIL")]
    assert fail and words in fail[0] and deb.name in fail[0], r.stdout


@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_a_deb_that_is_a_fifo_or_dev_zero_is_refused_at_once(tmp_path, kind):
    deb = tmp_path / "a_1.0_all.deb"
    if kind == "fifo":
        os.mkfifo(deb)
    else:
        try:
            os.mknod(deb, stat.S_IFCHR | 0o666, os.makedev(1, 5))  # /dev/zero's numbers
        except PermissionError:
            pytest.skip("mknod needs CAP_MKNOD (CI runs as root)")
    manifest = tmp_path / "stack.yaml"
    manifest.write_text("stack: s\nsource: test\narchitecture: amd64\npackages:\n  - package: a\n"
                        "    version: \"1.0\"\n    url: https://example.invalid/a_1.0_all.deb\n"
                        "    sha256: " + "0" * 64 + "\n")
    r = subprocess.run([GPUGATE, "stack", "verify", "--manifest", str(manifest), str(tmp_path)],
                       capture_output=True, text=True, timeout=10)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "not a regular file" in r.stdout and deb.name in r.stdout, r.stdout
