"""The hf checks on real mounts, each in a private mount namespace
(`unshare -m`): a tmpfs volume, the root filesystem, a read-only bind mount,
a tiny full tmpfs, a cache mounted beside HF_HOME; and lock files another
user cannot write (setpriv). Needs root, as CI runs the tests."""
import os
import shutil
import subprocess
import tempfile

import pytest

from conftest import GPUGATE, Run, STATE_DIR, finding_texts

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"),
                                reason="needs root and unshare for private mounts")

BUILDER = os.path.dirname(os.path.abspath(__file__))


def in_namespace(script, env_extra, timeout=60):
    """Runs a shell script in a new mount namespace; its last command is gpugate."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "GPUGATE": os.path.abspath(GPUGATE),
           "HOME": "/nonexistent-home", "BUILDER": BUILDER, "XDG_RUNTIME_DIR": STATE_DIR}
    env.update(env_extra)
    full = "set -e\nmount --make-rprivate /\n" + script
    proc = subprocess.run(["unshare", "-m", "sh", "-c", full], capture_output=True, text=True,
                          env=env, timeout=timeout)
    r = Run(proc, 0)
    if "unshare failed" in r.err or "Operation not permitted" in r.err and r.rc != 0 and r.rc != 1:
        pytest.skip("no permission for mount namespaces here: " + r.err)
    assert r.rc in (0, 1), r
    return r


MAKE_CACHE = ('[ -d "$1" ] || /usr/bin/python3 -c "import sys; sys.path.insert(0, \'$BUILDER\'); '
              'import hf_builder; hf_builder.valid_cache(\'$1\')"\n')


def spec(tmp, body):
    p = os.path.join(tmp, "spec.yaml")
    with open(p, "w") as f:
        f.write(body)
    return p


@pytest.fixture
def tmp():
    d = tempfile.mkdtemp(prefix="gpugate-hf-")
    os.chmod(d, 0o755)
    yield d
    subprocess.run(["rm", "-rf", d])


def check(r, cid):
    return r.check(cid)


def test_tmpfs_volume_passes(tmp):
    s = spec(tmp, "profile: ci\nhf:\n  min_free: 1MiB\n  integrity: true\n")
    r = in_namespace(f"""
mkdir -p {tmp}/vol
mount -t tmpfs -o size=64m hfvol {tmp}/vol
set -- {tmp}/vol/hub
{MAKE_CACHE}
exec "$GPUGATE" check --spec {s} --format json
""", {"HF_HOME": f"{tmp}/vol"})
    assert r.rc == 0, r
    assert "own mount" in check(r, "hf.mounted")["summary"]
    assert check(r, "hf.mounted")["details"]["fstype"] == "tmpfs"
    assert check(r, "hf.writable")["status"] == "pass"
    assert check(r, "hf.integrity")["status"] == "pass"
    assert os.listdir(os.path.join(tmp, "vol")) == [], "the tmpfs must vanish with the namespace"


def test_root_filesystem_fails(tmp):
    # a folder on the same mount as "/" (checked with findmnt, the oracle)
    target = subprocess.run(["findmnt", "-n", "-o", "TARGET", "-T", "/var/tmp"], capture_output=True,
                            text=True).stdout.strip()
    if target != "/":
        pytest.skip("/var/tmp is not on the root filesystem here")
    cache = tempfile.mkdtemp(prefix="gpugate-hf-root-", dir="/var/tmp")
    try:
        s = spec(tmp, "profile: ci\nhf:\n  min_free: 1MiB\n")
        r = in_namespace(f'exec "$GPUGATE" check --spec {s} --format json\n', {"HF_HUB_CACHE": cache})
        m = check(r, "hf.mounted")
        assert r.rc == 1 and m["status"] == "fail", r
        assert "root filesystem" in m["summary"] and "not a mounted volume" in m["summary"]
        assert f"-v $HOME/.cache/huggingface/hub:{cache}" in m["remediation"]
    finally:
        shutil.rmtree(cache)


def test_read_only_bind(tmp):
    s = spec(tmp, "profile: ci\nhf:\n  min_free: 1MiB\n")
    script = f"""
mkdir -p {tmp}/src {tmp}/ro
set -- {tmp}/src/hub
{MAKE_CACHE}
mount --bind {tmp}/src {tmp}/ro
mount -o remount,bind,ro {tmp}/ro
exec "$GPUGATE" check --spec {s} --format json {{profile}}
"""
    r = in_namespace(script.format(profile=""), {"HF_HOME": f"{tmp}/ro"})
    w = check(r, "hf.writable")
    assert r.rc == 1 and w["status"] == "fail" and "read-only" in w["summary"], r
    assert ":ro" in w["remediation"] and "read_only: true" in w["remediation"]
    # healthcheck never writes: it reads the mount options and still says read-only
    h = in_namespace(script.format(profile="--profile healthcheck --only hf.writable").replace(f"--spec {s} ", ""),
                     {"HF_HOME": f"{tmp}/ro"})
    assert h.rc == 1 and "read-only mount" in check(h, "hf.writable")["summary"], h
    # read-only on purpose: passes, and warns until HF_HUB_OFFLINE is set
    s2 = spec(tmp, "profile: ci\nhf:\n  read_only: true\n  integrity: true\n")
    r2 = in_namespace(script.format(profile="").replace(s, s2), {"HF_HOME": f"{tmp}/ro"})
    assert r2.rc == 0, r2
    assert check(r2, "hf.writable")["status"] == "warn" and "HF_HUB_OFFLINE" in check(r2, "hf.writable")["summary"]
    assert check(r2, "hf.space")["status"] == "skip" and check(r2, "hf.integrity")["status"] == "pass"
    r3 = in_namespace(script.format(profile="").replace(s, s2), {"HF_HOME": f"{tmp}/ro", "HF_HUB_OFFLINE": "1"})
    assert r3.rc == 0 and check(r3, "hf.writable")["status"] == "pass", r3


def test_full_tmpfs_fails_on_space(tmp):
    r = in_namespace(f"""
mkdir -p {tmp}/small
mount -t tmpfs -o size=1m small {tmp}/small
mkdir -p {tmp}/small/hub
dd if=/dev/zero of={tmp}/small/fill bs=64k 2>/dev/null || true
exec "$GPUGATE" check --profile ci --only hf.space,hf.writable --format json
""", {"HF_HOME": f"{tmp}/small"})
    sp = check(r, "hf.space")
    assert r.rc == 1 and sp["status"] == "fail", r
    assert "only" in sp["summary"] and "need at least 10.0 GiB" in sp["summary"]
    assert sp["details"]["free_bytes"] < 64 * 1024
    assert check(r, "hf.writable")["status"] in ("pass", "fail")  # a full disk may refuse the test file


def test_hf_home_beside_the_mount(tmp):
    r = in_namespace(f"""
mkdir -p {tmp}/mnt {tmp}/elsewhere
mount -t tmpfs -o size=16m models {tmp}/mnt
set -- {tmp}/mnt/hub
{MAKE_CACHE}
exec "$GPUGATE" check --profile ci --only hf.mounted --format json
""", {"HF_HOME": f"{tmp}/elsewhere"})
    m = check(r, "hf.mounted")
    assert r.rc == 1 and m["status"] == "fail", r
    assert any("beside the mount" in f for f in finding_texts(m)), m
    assert f"export HF_HOME={tmp}/mnt" in m["remediation"]


def test_mount_point_with_space(tmp):
    r = in_namespace(f"""
mkdir -p "{tmp}/my models"
mount -t tmpfs -o size=16m sp "{tmp}/my models"
exec "$GPUGATE" check --profile ci --only hf.mounted --format json
""", {"HF_HUB_CACHE": f"{tmp}/my models/hub"})
    m = check(r, "hf.mounted")
    assert r.rc == 0 and m["details"]["mount_point"] == f"{tmp}/my models", r


@pytest.mark.skipif(not shutil.which("setpriv"), reason="needs setpriv")
def test_locks_of_another_user(tmp):
    hub = os.path.join(tmp, "hub")
    os.makedirs(os.path.join(hub, ".locks", "models--org--x"))
    os.chmod(os.path.join(hub, ".locks"), 0o777)
    os.chmod(os.path.join(hub, ".locks", "models--org--x"), 0o777)
    lock = os.path.join(hub, ".locks", "models--org--x", "abc.lock")
    open(lock, "w").close()
    os.chmod(lock, 0o644)  # root's, as an older client left it
    env = {"PATH": "/usr/bin:/bin", "HF_HUB_CACHE": hub, "HOME": "/nonexistent-home"}
    proc = subprocess.run(["setpriv", "--reuid", "1000", "--regid", "1000", "--clear-groups",
                           GPUGATE, "check", "--profile", "ci", "--only", "hf.locks", "--format", "json"],
                          capture_output=True, text=True, env=env, timeout=30)
    r = Run(proc, 0)
    c = r.check("hf.locks")
    assert r.rc == 1 and c["status"] == "fail", r
    assert any("abc.lock is owned by uid 0 with mode 0644" in f for f in finding_texts(c)), c
    assert c["remediation"].startswith(f"chown -R 1000:1000 {hub}/.locks   (as root;"), c
    os.chmod(lock, 0o666)
    proc = subprocess.run(["setpriv", "--reuid", "1000", "--regid", "1000", "--clear-groups",
                           GPUGATE, "check", "--profile", "ci", "--only", "hf.locks", "--format", "json"],
                          capture_output=True, text=True, env=env, timeout=30)
    assert Run(proc, 0).rc == 0, Run(proc, 0)


def test_gpu_only_container_is_healthy(tmp):
    """No Hugging Face use (no volume, no hf.models, no cache folder): the
    healthcheck warns about the missing volume, the ci gate still fails."""
    target = subprocess.run(["findmnt", "-n", "-o", "TARGET", "-T", "/var/tmp"], capture_output=True,
                            text=True).stdout.strip()
    if target != "/":
        pytest.skip("/var/tmp is not on the root filesystem here")
    home = tempfile.mkdtemp(prefix="gpugate-hf-gpu-only-", dir="/var/tmp")
    try:
        env = {"HF_HOME": f"{home}/huggingface"}  # not created: nobody downloaded anything
        h = in_namespace('exec "$GPUGATE" check --profile healthcheck --only hf --format json\n', env)
        m = check(h, "hf.mounted")
        assert h.rc == 0 and m["status"] == "warn", h
        assert "no Hugging Face volume" in m["summary"] and "-v $HOME/.cache/huggingface:" in m["remediation"]
        c = in_namespace('exec "$GPUGATE" check --profile ci --only hf.mounted --format json\n', env)
        assert c.rc == 1 and check(c, "hf.mounted")["status"] == "fail", c
        # a model listed in the spec is Hugging Face use: the volume is required again
        s = spec(tmp, "extends: healthcheck\nhf:\n  models: [org/tiny]\n")
        u = in_namespace(f'exec "$GPUGATE" check --spec {s} --only hf.mounted --format json\n', env)
        assert u.rc == 1 and check(u, "hf.mounted")["status"] == "fail", u
    finally:
        shutil.rmtree(home)


@pytest.mark.skipif(not shutil.which("setpriv"), reason="needs setpriv")
def test_home_at_root_gets_no_chown_of_root(tmp):
    """`docker run --user 1000` gives HOME=/: the cache would be
    /.cache/huggingface/hub, whose nearest folder is /. The fix makes the cache
    folder itself, never `chown -R 1000 /`; both profiles say the same."""
    if os.path.exists("/.cache"):
        pytest.skip("/.cache exists on this machine")
    fixes = {}
    for profile in ("healthcheck", "ci"):
        proc = subprocess.run(["setpriv", "--reuid", "1000", "--regid", "1000", "--clear-groups", GPUGATE, "check",
                               "--profile", profile, "--only", "hf.writable", "--format", "json"],
                              capture_output=True, text=True, env={"PATH": "/usr/bin:/bin", "HOME": "/"}, timeout=30)
        r = Run(proc, 0)  # Run checks every fix with fix_safety
        w = r.check("hf.writable")
        assert w["status"] in ("warn", "fail") and "uid 1000" in w["summary"], r
        fixes[profile] = w["remediation"]
    assert fixes["healthcheck"] == fixes["ci"], fixes
    assert fixes["ci"].startswith("mkdir -p /.cache/huggingface/hub && chown 1000:1000 /.cache/huggingface/hub"), fixes
    assert not os.path.exists("/.cache")


@pytest.mark.skipif(not shutil.which("setpriv"), reason="needs setpriv")
def test_bind_mounted_cache_fix_names_the_host_folder(tmp):
    """A root-owned host folder bind-mounted as the cache: the fix names the
    host folder the mount table gives (findmnt's FSROOT is the oracle), the
    same in both profiles, recursive only on the cache itself."""
    fixes = {}
    for profile in ("healthcheck", "ci"):
        r = in_namespace(f"""
mkdir -p {tmp}/host-hf/hub {tmp}/container-hf
mount --bind {tmp}/host-hf {tmp}/container-hf
findmnt -n -o FSROOT {tmp}/container-hf > {tmp}/fsroot
exec setpriv --reuid 1000 --regid 1000 --clear-groups "$GPUGATE" check --profile {profile} --only hf.writable --format json
""", {"HF_HOME": f"{tmp}/container-hf"})
        w = check(r, "hf.writable")
        assert r.rc == 1 and w["status"] == "fail", r
        fixes[profile] = w["remediation"]
    fsroot = open(f"{tmp}/fsroot").read().strip()
    assert fsroot.endswith("/host-hf"), fsroot
    assert fixes["healthcheck"] == fixes["ci"], fixes
    assert fixes["ci"].startswith(f"chown -R 1000:1000 {fsroot}/hub   (on the host;"), fixes
