"""gpugate stack fetch|verify with .deb files built here by dpkg-deb (gzip,
xz and zstd control members) and served by the hub stand-in."""
import hashlib
import os
import subprocess

import pytest


GPUGATE = os.environ.get("GPUGATE", os.path.join(os.path.dirname(__file__), "../../build/gpugate"))
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "../..")


def build_deb(tmp, name, version, comp, depends=None, arch="amd64", provides=None):
    d = tmp / ("src-%s" % name)
    (d / "DEBIAN").mkdir(parents=True)
    (d / "usr/share/doc" / name).mkdir(parents=True)
    (d / "usr/share/doc" / name / "README").write_text("payload of %s\n" % name)
    control = "Package: %s\nVersion: %s\nArchitecture: %s\nMaintainer: t <t@example.org>\n" \
              "Description: test package\n continued line\n" % (name, version, arch)
    if depends:
        control += "Depends: %s\n" % depends
    if provides:
        control += "Provides: %s\n" % provides
    (d / "DEBIAN/control").write_text(control)
    out = tmp / ("%s_%s_%s.deb" % (name, version, arch))
    subprocess.run(["dpkg-deb", "--root-owner-group", "-Z" + comp, "--build", str(d), str(out)],
                   check=True, capture_output=True)
    return out


@pytest.fixture
def debs(tmp_path, hub):
    made = [build_deb(tmp_path, "libgmm", "22.3.0", "gzip"),
            build_deb(tmp_path, "igc-core", "1.0.5+1", "xz", "libgmm (>= 22.3), libc6 (>= 2.34)"),
            build_deb(tmp_path, "opencl-icd", "24.1.7-1", "zstd", "igc-core (= 1.0.5+1), libgmm | libgmm-alt")]
    for f in made:
        hub.static["/rel/" + f.name] = f.read_bytes()
    return made


def manifest(tmp_path, hub, debs, edits=None, system=("libc6",)):
    lines = ["stack: test-stack", "source: built by the test", "architecture: amd64"]
    if system is not None:
        lines.append("system_packages: [%s]" % ", ".join(system))
    lines.append("packages:")
    for f in debs:
        name, version, _ = f.name[:-4].split("_")
        e = {"package": name, "version": version, "url": hub.url + "/rel/" + f.name,
             "sha256": hashlib.sha256(f.read_bytes()).hexdigest()}
        e.update((edits or {}).get(name, {}))
        lines.append("  - package: %s" % e.pop("package"))
        lines += ["    %s: \"%s\"" % kv for kv in e.items()]
    m = tmp_path / "stack.yaml"
    m.write_text("\n".join(lines) + "\n")
    return m


def gg(*args, env=None):
    e = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    e.update(env or {})
    return subprocess.run([GPUGATE, *args], capture_output=True, text=True, timeout=60, env=e)


def test_fetch_and_verify_all_compressions(tmp_path, hub, debs):
    m = manifest(tmp_path, hub, debs)
    dest = tmp_path / "out"
    r = gg("stack", "fetch", "--manifest", str(m), "--dest", str(dest))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "all verified" in r.stdout
    for f in debs:
        assert (dest / f.name).read_bytes() == f.read_bytes()
        assert "ok   " + f.name.split("_")[0] in r.stdout
    assert not [p for p in os.listdir(dest) if p.endswith(".part")]
    # dpkg itself agrees on the control fields gpugate read
    v = subprocess.run(["dpkg-deb", "-f", str(dest / debs[2].name), "Version"], capture_output=True, text=True)
    assert v.stdout.strip() + " amd64" in r.stdout
    r = gg("stack", "verify", "--manifest", str(m), str(dest))
    assert r.returncode == 0 and "all verified" in r.stdout
    n = len(hub.log)
    r = gg("stack", "fetch", "--manifest", str(m), "--dest", str(dest))
    assert r.returncode == 0 and "already there" in r.stderr and len(hub.log) == n


def test_wrong_sha_fails_and_leaves_no_file(tmp_path, hub, debs):
    m = manifest(tmp_path, hub, debs, {"libgmm": {"sha256": "0" * 64}})
    r = gg("stack", "fetch", "--manifest", str(m), "--dest", str(tmp_path / "out"))
    assert r.returncode == 1
    assert "sha256 mismatch" in r.stderr and "libgmm" in r.stderr
    assert not (tmp_path / "out" / debs[0].name).exists()
    assert not (tmp_path / "out" / (debs[0].name + ".part")).exists()


def test_wrong_version_in_manifest(tmp_path, hub, debs):
    (tmp_path / "out").mkdir()
    for f in debs:
        (tmp_path / "out" / f.name).write_bytes(f.read_bytes())
    m = manifest(tmp_path, hub, debs, {"igc-core": {"version": "1.0.6"}})
    r = gg("stack", "verify", "--manifest", str(m), str(tmp_path / "out"))
    assert r.returncode == 1
    assert "Version is 1.0.5+1, the manifest says 1.0.6" in r.stdout
    assert "verification FAILED" in r.stdout


def test_missing_and_unmet_dependency(tmp_path, hub, debs):
    (tmp_path / "out").mkdir()
    for f in debs:
        (tmp_path / "out" / f.name).write_bytes(f.read_bytes())
    m = manifest(tmp_path, hub, debs[1:])  # libgmm left out
    r = gg("stack", "verify", "--manifest", str(m), str(tmp_path / "out"))
    assert r.returncode == 1
    assert "'libgmm (>= 22.3)': neither in the stack nor in system_packages" in r.stdout
    old = build_deb(tmp_path / "old", "libgmm", "22.2.9", "gzip") if (tmp_path / "old").mkdir() is None else None
    (tmp_path / "out" / debs[0].name).unlink()
    (tmp_path / "out" / old.name).write_bytes(old.read_bytes())
    m = manifest(tmp_path, hub, [old] + debs[1:])
    r = gg("stack", "verify", "--manifest", str(m), str(tmp_path / "out"))
    assert r.returncode == 1
    assert "igc-core Depends 'libgmm (>= 22.3)' is not met: the stack has libgmm 22.2.9" in r.stdout


def test_a_virtual_package_a_stack_package_provides(tmp_path, hub):
    # Debian's intel-opencl-icd Depends on libigc2+llvm16, which libigc2
    # Provides: met inside the stack, unversioned; a versioned relation on a
    # virtual name needs a versioned Provides, so it stays with system_packages.
    made = [build_deb(tmp_path, "igc", "2.40.14-1", "xz", provides="igc+llvm16"),
            build_deb(tmp_path, "icd", "26.27-1", "gzip", "igc (>= 2.40), igc+llvm16, libc6")]
    for f in made:
        hub.static["/rel/" + f.name] = f.read_bytes()
    r = gg("stack", "fetch", "--manifest", str(manifest(tmp_path, hub, made)), "--dest", str(tmp_path / "out"))
    assert r.returncode == 0 and "all verified" in r.stdout, r.stdout + r.stderr
    made[1] = build_deb(tmp_path / "v", "icd", "26.27-1", "gzip", "igc+llvm16 (>= 1)") \
        if (tmp_path / "v").mkdir() is None else None
    hub.static["/rel/" + made[1].name] = made[1].read_bytes()
    r = gg("stack", "fetch", "--manifest", str(manifest(tmp_path, hub, made)), "--dest", str(tmp_path / "out2"))
    assert r.returncode == 1 and "'igc+llvm16 (>= 1)': neither in the stack nor in system_packages" in r.stdout, r


def test_unpinned_refused_unless_allowed(tmp_path, hub, debs):
    m = manifest(tmp_path, hub, debs, {"libgmm": {"sha256": "", "url": "https://127.0.0.1:1/libgmm.deb"}})
    r = gg("stack", "fetch", "--manifest", str(m), "--dest", str(tmp_path / "out"))
    assert r.returncode == 1 and "unpinned" in r.stderr and "libgmm has no sha256" in r.stderr
    assert hub.log == []
    # allowed: it is tried (and fails here: nothing listens on port 1)
    r = gg("stack", "fetch", "--manifest", str(m), "--dest", str(tmp_path / "out"), "--allow-unpinned",
           env={"GPUGATE_RETRIES": "1"})
    assert r.returncode == 1 and "libgmm.deb" in r.stderr and "has no sha256" not in r.stderr
    assert "gave up after 2 attempts" in r.stderr
    # http:// is refused for an unpinned entry: nothing would protect it
    m = manifest(tmp_path, hub, debs, {"libgmm": {"sha256": ""}})
    r = gg("stack", "fetch", "--manifest", str(m), "--dest", str(tmp_path / "out"), "--allow-unpinned")
    assert r.returncode == 3 and "must come over https" in r.stderr


def test_resume_after_dropped_connection_and_503(tmp_path, hub, debs):
    hub.faults["/rel/" + debs[1].name] = {"drop": 1}
    hub.faults["/rel/" + debs[2].name] = {"503": 1}
    m = manifest(tmp_path, hub, debs)
    r = gg("stack", "fetch", "--manifest", str(m), "--dest", str(tmp_path / "out"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "retrying" in r.stderr and "all verified" in r.stdout


def test_partial_file_from_earlier_run_is_resumed(tmp_path, hub, debs):
    dest = tmp_path / "out"
    dest.mkdir()
    data = debs[1].read_bytes()
    (dest / (debs[1].name + ".part")).write_bytes(data[: len(data) // 2])
    m = manifest(tmp_path, hub, debs)
    hub.log.clear()
    r = gg("stack", "fetch", "--manifest", str(m), "--dest", str(dest))
    assert r.returncode == 0, r.stdout + r.stderr
    assert (dest / debs[1].name).read_bytes() == data


def test_not_a_deb_and_bad_manifests(tmp_path, hub, debs):
    (tmp_path / "out").mkdir()
    fake = tmp_path / "out" / debs[0].name
    fake.write_bytes(b"!<arch>\nnot really\n")
    m = manifest(tmp_path, hub, debs[:1], {"libgmm": {"sha256": hashlib.sha256(fake.read_bytes()).hexdigest()}})
    r = gg("stack", "verify", "--manifest", str(m), str(tmp_path / "out"))
    assert r.returncode == 1 and debs[0].name in r.stdout
    bad = tmp_path / "bad.yaml"
    bad.write_text("stack: x\npackages:\n  - package: a\n    version: 1\n    url: ftp://x/a.deb\n")
    r = gg("stack", "verify", "--manifest", str(bad), str(tmp_path))
    assert r.returncode == 3 and "bad.yaml:3:" in r.stderr and "https://" in r.stderr
    bad.write_text("stack: x\npackages:\n  - package: a\n    version: 1\n    colour: red\n")
    r = gg("stack", "verify", "--manifest", str(bad), str(tmp_path))
    assert r.returncode == 3 and "unknown key 'colour'" in r.stderr


def test_shipped_intel_manifest_loads(tmp_path):
    stacks = os.path.join(ROOT, "images/stacks")
    files = [f for f in os.listdir(stacks) if f.endswith(".yaml")]
    assert files
    for f in files:
        r = gg("stack", "verify", "--manifest", os.path.join(stacks, f), str(tmp_path))
        # nothing downloaded here: every package is missing, but the manifest parses
        assert r.returncode == 1, r.stderr
        assert "No such file or directory" in r.stdout and "manifest error" not in r.stderr


def test_verify_of_a_folder_that_is_not_there(tmp_path):
    """A missing DIR is one usage error naming it (exit 3), not a FAIL per package."""
    m = os.path.join(ROOT, "images/stacks/debian-sid-intel-gpu.yaml")
    for where, words in ((tmp_path / "nowhere", "No such file or directory"), (__file__, "not a folder")):
        r = gg("stack", "verify", "--manifest", m, str(where))
        assert r.returncode == 3, r
        assert r.stdout == "" and f"stack verify: {where}: {words}" in r.stderr, r
    r = gg("stack", "verify", "--manifest", m)
    assert r.returncode == 3 and "give the folder" in r.stderr, r
