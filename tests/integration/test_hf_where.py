"""`gpugate hf where` against huggingface_hub's rules, computed here with
Python's own os.path.expanduser/expandvars (the functions constants.py
uses) in a child with the same environment."""
import json
import os

import pytest

import hf_upstream
from conftest import run_gpugate
from tally import report_tally

# The constants.py formula (tests/lib/hf_upstream.py), evaluated by the
# real posixpath in a child process whose environment is the case's.
ORACLE = hf_upstream.CONSTANTS_PY + 'print(json.dumps({"hub": HF_HUB_CACHE, "home": HF_HOME}))\n'

CASES = [
    {"HOME": "/home/u"},
    {"HOME": "/home/u/"},
    {"HOME": ""},
    {"HOME": "/h", "XDG_CACHE_HOME": "/xdg"},
    {"HOME": "/h", "XDG_CACHE_HOME": ""},
    {"HOME": "/h", "XDG_CACHE_HOME": "~/c"},
    {"HOME": "/h", "HF_HOME": "/hf", "XDG_CACHE_HOME": "/xdg"},
    {"HOME": "/h", "HF_HOME": ""},
    {"HOME": "/h", "HF_HOME": "~"},
    {"HOME": "/h", "HF_HOME": "~root/hf"},
    {"HOME": "/h", "HF_HOME": "~no_such_user_x/hf"},
    {"HOME": "/h", "HF_HOME": "$HOME/x"},
    {"HOME": "/h", "D": "/d", "HF_HOME": "${D}/x"},
    {"HOME": "/h", "HF_HOME": "$NOPE/x/${ALSO_NOT}"},
    {"HOME": "/h", "HF_HOME": "/a/${}/b/${OPEN"},
    {"HOME": "/h", "E": "", "HF_HOME": "/a$E/b$"},
    {"HOME": "/h", "V": "$HOME", "HF_HOME": "/x/$V"},
    {"HOME": "/h", "HF_HOME": "/hf", "HUGGINGFACE_HUB_CACHE": "/legacy"},
    {"HOME": "/h", "HUGGINGFACE_HUB_CACHE": "~/legacy"},
    {"HOME": "/h", "HF_HUB_CACHE": "/new", "HUGGINGFACE_HUB_CACHE": "/legacy"},
    {"HOME": "/h", "HF_HUB_CACHE": "$HOME/hub2"},
    {"HOME": "/h", "HF_HUB_CACHE": "rel/hub"},
    {"HOME": "/h", "HF_HUB_CACHE": ""},
    {"HOME": "/h", "U": "me", "HF_HUB_CACHE": "/c/$U-x/${U}y/$Unope"},
]


def base_env(case):
    return hf_upstream.case_env(**case)


# constants.py precedence cases run through the binary (test_constants_tally)
CONSTANTS = {"run": 0, "agree": 0}


@pytest.mark.parametrize("case", CASES, ids=[";".join(f"{k}={v}" for k, v in c.items()) for c in CASES])
def test_where_matches_posixpath(case):
    CONSTANTS["run"] += 1
    env = base_env(case)
    want = json.loads(hf_upstream.run(ORACLE, env=env))
    r = run_gpugate("hf", "where", env=env)
    relative = not want["hub"].startswith("/")
    assert r.rc == (1 if relative else 0), r
    assert r.out == want["hub"] + "\n", r
    if relative:
        assert "is relative" in r.err or "is empty" in r.err, r
    j = run_gpugate("hf", "where", "--format", "json", env=env).json()
    assert j["hub_cache"] == want["hub"]
    assert j["hf_home"] == want["home"]
    CONSTANTS["agree"] += 1


def test_home_unset_uses_passwd():
    env = {"PATH": "/usr/bin:/bin"}
    import pwd
    home = pwd.getpwuid(os.getuid()).pw_dir.rstrip("/")
    r = run_gpugate("hf", "where", env=env)
    assert r.rc == 0, r
    assert r.out.strip() == os.path.join(home or "/", ".cache/huggingface/hub")


def test_verbose_sources_offline_token_never_printed():
    secret = "hf_DoNotPrintThisToken123"
    env = base_env({"HOME": "/h", "HF_HOME": "/hf", "HF_TOKEN": secret, "HF_HUB_OFFLINE": "",
                    "TRANSFORMERS_OFFLINE": "yes", "TRANSFORMERS_CACHE": "/old"})
    r = run_gpugate("hf", "where", "-v", env=env)
    assert r.rc == 0, r
    assert "/hf/hub (from HF_HOME)" in r.out
    assert "token comes from HF_TOKEN" in r.out
    assert "offline:        yes (TRANSFORMERS_OFFLINE=yes)" in r.out
    assert "TRANSFORMERS_CACHE is set" in r.out
    assert "/hf/token" in r.out
    j = run_gpugate("hf", "where", "--format", "json", env=env)
    assert j.json()["token_from"] == "HF_TOKEN" and j.json()["deprecated_set"] == ["TRANSFORMERS_CACHE"]
    c = run_gpugate("check", "--format", "json", "--only", "hf.location", env=env)
    for out in (r.out + r.err, j.out + j.err, c.out + c.err):
        assert secret not in out


def test_offline_zero_ignores_transformers():
    env = base_env({"HOME": "/h", "HF_HUB_OFFLINE": "0", "TRANSFORMERS_OFFLINE": "1"})
    j = run_gpugate("hf", "where", "--format", "json", env=env).json()
    assert j["offline"] is False and j["offline_from"] == "HF_HUB_OFFLINE"


def test_usage_errors():
    for args, words in ((["hf"], "subcommand"), (["hf", "nope"], "unknown subcommand"),
                        (["hf", "where", "--format", "xml"], "unknown format"),
                        (["hf", "where", "extra"], "unexpected argument"),
                        (["hf", "scan", "--root", "/nonexistent-root"], "No such file"),
                        (["hf", "verify", "--jobs", "0"], "hf verify --jobs"),
                        (["hf", "scan", "--jobs", "2"], "hf scan --jobs"),
                        (["hf", "verify", "--deadline", "0"], "hf verify --deadline"),
                        (["hf", "verify", "--cache"], "hf verify: option '--cache' needs an argument")):
        r = run_gpugate(*args)
        assert r.rc == 3, r
        assert words in r.err, r
        # the hint names the subcommand's own help (gpugate --help lists none of
        # its options), --root's error too; bare "hf" and an unknown one: hf's
        if args[1:2] in (["where"], ["scan"], ["verify"]):
            assert r.err.endswith(f"Try 'gpugate hf {args[1]} --help' for usage.\n"), r
        elif args != ["hf"]:
            assert r.err.endswith("Try 'gpugate hf --help' for usage.\n"), r
    h = run_gpugate("hf", "--help")
    assert h.rc == 0 and "--jobs N" in h.out and "--deadline SECONDS" in h.out, h


# the option a usage error names is the one at fault: a letter inside a cluster
# ("-xv": glibc's optind still points at the cluster, so the argument before
# it was named), a long option given a value it does not take, a prefix two
# options share; a value after '=' is not repeated
BAD_OPTIONS = [
    (["hf", "verify", "--cache", "/tmp", "-xv"], "hf verify: unknown option '-x'"),
    (["hf", "where", "--root", "/", "-vq"], "hf where: unknown option '-q'"),
    (["hf", "scan", "-xv"], "hf scan: unknown option '-x'"),
    (["hf", "verify", "--full=yes"], "hf verify: option '--full' takes no argument"),
    (["hf", "scan", "--verbose=1"], "hf scan: option '--verbose' takes no argument"),
    (["hf", "verify", "--f"], "hf verify: option '--f' is ambiguous"),
    (["hf", "verify", "--bogus=hf_secret"], "hf verify: unknown option '--bogus'"),
    (["hf", "fetch", "org/a", "--cache-dir", "/tmp", "-xq"], "hf fetch: unknown option '-x'"),
    (["hf", "fetch", "org/a", "--quiet=1"], "hf fetch: option '--quiet' takes no argument"),
    (["hf", "fetch", "org/a", "--cache-dir"], "hf fetch: option '--cache-dir' needs an argument"),
]


@pytest.mark.parametrize("args,words", BAD_OPTIONS)
def test_usage_error_names_the_option_at_fault(args, words):
    r = run_gpugate(*args)
    assert r.rc == 3 and r.out == "", r
    first = r.err.splitlines()[0]
    assert first == "gpugate: " + words, r
    assert "hf_secret" not in r.err and "/tmp" not in first, r
    assert r.err.endswith(f"Try 'gpugate hf {args[1]} --help' for usage.\n"), r


def test_fetch_routes_to_provisioning():
    r = run_gpugate("hf", "fetch")
    assert r.rc == 3 and "hf fetch" in r.err, r


def test_location_check_relative_and_empty():
    for env_case, words in (({"HF_HUB_CACHE": ""}, "empty"), ({"HF_HOME": "rel"}, "relative")):
        env = base_env({"HOME": "/h", **env_case})
        r = run_gpugate("check", "--format", "json", "--only", "hf.location", env=env)
        assert r.rc == 1, r
        c = r.check("hf.location")
        assert c["status"] == "fail" and words in c["summary"], c
        assert "export" in c["remediation"] or "unset" in c["remediation"]


# The rest of constants.py (tests/lib/hf_upstream.py): the legacy assets
# variable, the xet cache taken as written (no expansion), the endpoint and
# staging mode, which moves the token file but not the hub cache.
ORACLE_MORE = hf_upstream.CONSTANTS_PY + """
print(json.dumps({"hub_cache": HF_HUB_CACHE, "assets_cache": HF_ASSETS_CACHE, "xet_cache": HF_XET_CACHE,
                  "token_path": HF_TOKEN_PATH, "endpoint": ENDPOINT}))
"""

MORE_CASES = [
    {"HOME": "/h"},
    {"HOME": "/h", "HUGGINGFACE_ASSETS_CACHE": "~/old"},
    {"HOME": "/h", "HF_ASSETS_CACHE": "/new", "HUGGINGFACE_ASSETS_CACHE": "/old"},
    {"HOME": "/h", "HF_ASSETS_CACHE": "$HOME/a"},
    {"HOME": "/h", "HF_XET_CACHE": "~/x/$HOME"},
    {"HOME": "/h", "HF_HOME": "/hf"},
    {"HOME": "/h", "HF_ENDPOINT": "http://hub.local:8080//"},
    {"HOME": "/h", "HUGGINGFACE_CO_STAGING": "yes", "HF_ENDPOINT": "http://x", "HF_TOKEN_PATH": "/t"},
    {"HOME": "/h", "HUGGINGFACE_CO_STAGING": "True", "HF_HUB_CACHE": "/c"},
    {"HOME": "/h", "HUGGINGFACE_CO_STAGING": "0", "HF_TOKEN_PATH": "$HOME/t"},
    {"HOME": "/h", "HF_TOKEN_PATH": "~/tok"},
]


@pytest.mark.parametrize("case", MORE_CASES, ids=[";".join(f"{k}={v}" for k, v in c.items()) for c in MORE_CASES])
def test_related_paths_match_constants_py(case):
    CONSTANTS["run"] += 1
    env = base_env(case)
    want = json.loads(hf_upstream.run(ORACLE_MORE, env=env))
    j = run_gpugate("hf", "where", "--format", "json", env=env)
    assert j.rc == 0, j
    got = j.json()
    assert {k: got[k] for k in want} == want
    CONSTANTS["agree"] += 1


def test_constants_tally(capsys):
    """Prints the counts of the constants.py cases above (run, agreeing)."""
    report_tally(capsys, "huggingface_hub constants.py cases", CONSTANTS, 35)
