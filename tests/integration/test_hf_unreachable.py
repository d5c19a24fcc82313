"""A hub cache path that cannot be reached is a FAIL naming the path and the
errno text, in every profile; only a missing one (ENOENT all the way up to
an existing folder) is "not created yet", which huggingface_hub's makedirs
fixes (issue 27). The cases: a cache under a 0700 folder of another user
(EACCES, run as uid 65534 through setpriv: needs root, as CI runs the tests),
a path through a regular file and a regular file as the cache (ENOTDIR), a
link loop (ELOOP) and a link to nowhere. Everything is made in a temp folder."""
import os
import shutil
import subprocess
import tempfile

import pytest

from conftest import GPUGATE, STATE_DIR, Run, run_gpugate

MISSING_WORDS = ("not created yet", "does not exist yet", "no cache folder", "no Hugging Face volume")
# the checks that read the cache path, in each profile (hf.models: the spec lists none)
READERS = {"healthcheck": ("hf.location", "hf.writable", "hf.space", "hf.locks", "hf.layout"),
           "ci": ("hf.location", "hf.writable", "hf.space", "hf.locks", "hf.layout", "hf.integrity")}


@pytest.fixture
def tmp():
    d = tempfile.mkdtemp(prefix="gpugate-hf-unreachable-")
    os.chmod(d, 0o755)  # searchable by uid 65534 down to the case's own folder
    yield d
    shutil.rmtree(d)


def check_hf(cache, profile, as_nobody=False):
    env = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent-home", "HF_HUB_CACHE": cache,
           "XDG_RUNTIME_DIR": STATE_DIR}
    args = ("check", "--profile", profile, "--only", "hf", "--format", "json")
    if not as_nobody:
        return run_gpugate(*args, env=env)
    proc = subprocess.run(["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups", GPUGATE, *args],
                          capture_output=True, text=True, env=env, timeout=60)
    return Run(proc, 0)


def assert_unreachable(r, cache, errno_text, profile):
    """Every check that reads the path fails, naming it and the errno text;
    none calls the cache missing."""
    assert r.rc == 1, r
    for cid in READERS[profile]:
        c = r.check(cid)
        assert c["status"] == "fail", (cid, r)
        assert f"the hub cache {cache} cannot be reached: " in c["summary"] and errno_text in c["summary"], (cid, r)
        assert c["remediation"].startswith(f"namei -l {cache}   ("), (cid, r)
    for c in r.json()["checks"]:
        assert not any(w in c["summary"] for w in MISSING_WORDS), c


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"),
                    reason="needs root and setpriv to run as uid 65534")
@pytest.mark.parametrize("profile", ["healthcheck", "ci"])
def test_cache_under_another_users_private_folder(tmp, profile):
    cache = os.path.join(tmp, "private", "hub")
    os.makedirs(cache)  # the cache exists: root's, under root's 0700 folder
    os.chmod(os.path.join(tmp, "private"), 0o700)
    assert_unreachable(check_hf(cache, profile, as_nobody=True), cache, "Permission denied", profile)


@pytest.mark.parametrize("profile", ["healthcheck", "ci"])
@pytest.mark.parametrize("case,errno_text", [
    ("through_a_file", "Not a directory"),
    ("a_file", "Not a directory"),
    ("link_loop", "Too many levels of symbolic links"),
    ("link_to_nowhere", "is a link to nowhere"),
])
def test_unreachable_paths(tmp, profile, case, errno_text):
    """As root, where the old reading climbed to a writable parent and
    called the cache not created yet (the healthcheck passed)."""
    with open(os.path.join(tmp, "file"), "w") as f:
        f.write("not a folder\n")
    os.symlink(os.path.join(tmp, "loop"), os.path.join(tmp, "loop"))
    os.symlink(os.path.join(tmp, "nowhere"), os.path.join(tmp, "dangling"))
    cache = {"through_a_file": f"{tmp}/file/hub", "a_file": f"{tmp}/file", "link_loop": f"{tmp}/loop/hub",
             "link_to_nowhere": f"{tmp}/dangling/hub"}[case]
    assert_unreachable(check_hf(cache, profile), cache, errno_text, profile)


@pytest.mark.parametrize("profile", ["healthcheck", "ci"])
def test_missing_cache_is_not_created_yet(tmp, profile):
    """The other side: ENOENT up to a writable folder is the one "missing"."""
    cache = os.path.join(tmp, "none", "hub")
    r = check_hf(cache, profile)
    loc = r.check("hf.location")
    assert loc["status"] == "pass" and loc["summary"].endswith("not created yet"), r
    assert r.check("hf.writable")["status"] == ("pass" if profile == "healthcheck" else "warn"), r
    assert r.check("hf.layout")["status"] == "skip", r
    assert not os.path.exists(os.path.join(tmp, "none")), "a check created the cache"



@pytest.mark.parametrize("profile", ["healthcheck", "ci"])
def test_nothing_of_the_path_in_the_root(tmp, profile):
    """Under --root, a cache none of whose folders exist climbs to the
    root's own folder: writable and space are judged there (the climb once
    ended at "/" with no path under the root: "Bad address")."""
    root = os.path.join(tmp, "root")
    os.mkdir(root)
    env = {"PATH": "/usr/bin:/bin", "HOME": "/home/app", "XDG_RUNTIME_DIR": STATE_DIR}
    r = run_gpugate("check", "--profile", profile, "--only", "hf", "--format", "json", "--root", root,
                    "--spec", "-", input="hf:\n  require_mount: false\n  min_free: 1\n", env=env)
    assert r.check("hf.location")["status"] == "pass", r
    assert r.check("hf.writable")["status"] in ("pass", "warn"), r
    # named where it was read, as hf.location names the cache (ROOT/...):
    # it once said "/ is writable" of the root's folder
    assert r.check("hf.writable")["summary"].startswith(f"the cache {root}/home/app/.cache/huggingface/hub "
                                                        f"does not exist yet; {root} is writable") \
        or r.check("hf.writable")["summary"] == f"{root} is writable (mount options unknown)", r
    space = r.check("hf.space")
    assert space["status"] == "pass" and "free on the cache's filesystem" in space["summary"], r
    assert os.listdir(root) == [], "a check wrote into the root"


def test_no_mount_table_under_root_says_what_to_do(tmp):
    """An unpacked root has no /proc: hf.mounted fails naming the file, and
    its fix says how to check such a root (it had no fix at all)."""
    root = os.path.join(tmp, "root")
    os.mkdir(root)
    env = {"PATH": "/usr/bin:/bin", "HOME": "/home/app", "XDG_RUNTIME_DIR": STATE_DIR}
    r = run_gpugate("check", "--only", "hf.mounted", "--format", "json", "--root", root, env=env)
    mounted = r.check("hf.mounted")
    assert mounted["status"] == "fail" and f"{root}/proc/self/mountinfo" in mounted["summary"], r
    assert "--skip hf.mounted" in mounted.get("remediation", ""), r
    r = run_gpugate("check", "--skip", "hf.mounted", "--only", "hf", "--format", "json", "--root", root, env=env)
    assert "hf.mounted" not in [c["id"] for c in r.json()["checks"]], r

@pytest.mark.parametrize("offline", [True, False])
def test_read_only_by_design_unreachable(tmp, offline):
    """hf.read_only: true does not excuse a path that cannot be reached:
    hf.writable fails as hf.location does (it used to pass "read-only by
    design" while hf.location failed)."""
    with open(os.path.join(tmp, "file"), "w") as f:
        f.write("not a folder\n")
    cache = f"{tmp}/file/hub"
    spec = os.path.join(tmp, "spec.yaml")
    with open(spec, "w") as f:
        f.write("profile: ci\nhf:\n  read_only: true\n")
    env = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent-home", "HF_HUB_CACHE": cache,
           "XDG_RUNTIME_DIR": STATE_DIR}
    if offline:
        env["HF_HUB_OFFLINE"] = "1"
    r = run_gpugate("check", "--spec", spec, "--only", "hf.location,hf.writable", "--format", "json", env=env)
    assert r.rc == 1, r
    for cid in ("hf.location", "hf.writable"):
        c = r.check(cid)
        assert c["status"] == "fail", (cid, r)
        assert f"the hub cache {cache} cannot be reached: Not a directory" in c["summary"], (cid, r)
        assert c["remediation"].startswith(f"namei -l {cache}   ("), (cid, r)


RELATIVE_CASES = [
    ({"HOME": "/h", "HF_HOME": ""}, "'hub' (from HF_HOME, set to the empty string) is relative",
     "unset HF_HOME   (or export HF_HOME=/absolute/path)"),
    ({"HOME": "/h", "XDG_CACHE_HOME": "rel"}, "'rel/huggingface/hub' (from XDG_CACHE_HOME) is relative",
     "unset XDG_CACHE_HOME   (or export XDG_CACHE_HOME=/absolute/path)"),
    ({"HOME": "rel"}, "'rel/.cache/huggingface/hub' (from HOME) is relative", "export HOME=/absolute/path"),
    ({"HOME": "/h", "HF_HUB_CACHE": ""}, "the hub cache path is empty (HF_HUB_CACHE is set to the empty string)",
     "unset HF_HUB_CACHE   (or export HF_HUB_CACHE=/absolute/path)"),
]


@pytest.mark.parametrize("env,words,fix", RELATIVE_CASES)
def test_a_relative_cache_path_says_which_variable_and_how_to_fix_it(env, words, fix):
    """`HF_HOME=` made "the hub cache path 'hub' (from HF_HOME) is relative"
    without saying HF_HOME was empty, and every fix said "or unset it: the
    default is ~/.cache/huggingface", which for HOME is no fix at all."""
    r = run_gpugate("check", "--only", "hf.location", "--format", "json",
                    env={"PATH": "/usr/bin:/bin", "XDG_RUNTIME_DIR": STATE_DIR, **env})
    loc = r.check("hf.location")
    assert r.rc == 1 and loc["status"] == "fail" and words in loc["summary"], r
    assert loc["remediation"].startswith(fix), r
    assert "unset HOME" not in loc["remediation"] and "unset it" not in loc["remediation"], r


@pytest.mark.parametrize("command", [["hf", "where"], ["hf", "where", "-v"], ["hf", "scan"], ["hf", "verify"]])
@pytest.mark.parametrize("env,words,fix", RELATIVE_CASES)
def test_every_hf_command_says_a_relative_cache_path_as_the_check_does(env, words, fix, command, tmp_path,
                                                                       monkeypatch):
    """`HF_HOME= gpugate hf verify` said "hub: No such file or directory" (or
    read ./hub when there was one) where `hf where` said "not absolute": every
    hf command now refuses the path with hf.location's words and fix. A
    folder of the relative name in the working folder is not read."""
    monkeypatch.chdir(tmp_path)
    for rel in ("hub", "rel/huggingface/hub", "rel/.cache/huggingface/hub"):
        (tmp_path / rel).mkdir(parents=True)
    r = run_gpugate(*command, env={"PATH": "/usr/bin:/bin", "XDG_RUNTIME_DIR": STATE_DIR, **env})
    assert r.rc == 1, r
    assert words in r.err and f"gpugate: fix: {fix}" in r.err, r
    assert "No such file" not in r.err and "0 repos" not in r.out, r
    if command[-1] == "-v" and env.get("HF_HOME") == "":
        assert "HF_HOME:        '' (from HF_HOME, set to the empty string)" in r.out, r
