"""Hostile names through every command and format (issue 26, item 1).

Whoever can write the Hugging Face cache or the environment chooses folder
names, ref names and paths; gpugate writes them into its text, its JSON, its
YAML and its stderr. One rule (src/lib/escape.c) keeps them from forging
lines, keys or terminal sequences there. Each output is parsed by a real
reader: the frozen spec by PyYAML (it must be the spec intended, key for
key), JSON by json.loads, text by its line count."""
import json
import os

import hf_builder
import yaml
from conftest import run_gpugate, write
from test_operator_freeze import INTEL, OTHERS, dpkg
from gpufixture import Root

# a repo folder whose name, written raw into YAML, adds keys to the hf: section
INJECT = "models--zz--a\n  min_free: 0\n  require_mount: false\n#"
# terminal and display attacks: ESC (an ANSI sequence), BEL, RLO (U+202E), a C1 CSI
TERMINAL = "models--zz--b\x1b[2J\x07\u202eexe.txt\u2066\u200f\xc2\x9b"
BIDI = ("\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069", "\u200e",
        "\u200f", "\u061c")
UNSAFE_RAW = BIDI + ("\x1b", "\x07", "\u009b", "\u2028", "\u2029")


def hostile_cache(cache):
    hf_builder.listed_cache(cache)
    for folder in (INJECT, TERMINAL):
        files = {"config.json": (b"{}\n", False)}
        hf_builder.add_repo(cache, folder, {hf_builder.COMMIT_A: files}, {"main": hf_builder.COMMIT_A})
        hf_builder.write_listing(cache, folder, hf_builder.COMMIT_A, files)


def env(extra=None):
    e = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGINGFACE_", "ZE_", "GPUGATE_FAKE"))}
    e.update(extra or {})
    return e


def assert_no_raw(text, what):
    for c in UNSAFE_RAW:
        assert c not in text, f"{what}: raw U+{ord(c):04X} in {text!r}"


def test_frozen_spec_is_the_spec_intended_key_for_key(tmp_path):
    root = Root(tmp_path / "root").add_gpus(1, device=0x56a0)
    dpkg(root, INTEL + OTHERS)
    cache = os.path.join(root.path, "cache")
    hostile_cache(cache)
    base = write(str(tmp_path / "base.yaml"), "packages:\n  - libze1 (>= 1.17)\nhf:\n  min_free: 10GiB\n")
    out = str(tmp_path / "frozen.yaml")
    r = run_gpugate("spec", "freeze", "--root", root.path, "--spec", base, "-o", out,
                    env=env({"HF_HUB_CACHE": "/cache"}))
    assert r.rc == 0, r
    assert_no_raw(r.err, "freeze stderr")
    text = open(out, encoding="utf-8").read()
    assert_no_raw(text, "frozen spec")
    spec = yaml.safe_load(text)
    assert set(spec) == {"profile", "description", "packages", "devices", "hf"}, spec.keys()
    # the hf section holds the base's one key and the models, nothing a name wrote
    assert set(spec["hf"]) == {"min_free", "models"}, spec["hf"]
    assert spec["hf"]["min_free"] == "10GiB", spec["hf"]
    repos = {m["repo"]: m for m in spec["hf"]["models"]}
    for m in spec["hf"]["models"]:
        assert set(m) <= {"repo", "type", "revision", "files"}, m
    # the hostile names come back exactly, as values, under their own key
    assert INJECT[len("models--"):].replace("--", "/", 1) in repos, repos.keys()
    assert TERMINAL[len("models--"):].replace("--", "/", 1) in repos, repos.keys()
    assert {m["revision"] for m in spec["hf"]["models"]} <= {hf_builder.COMMIT_A, hf_builder.COMMIT_B}


def test_frozen_spec_quotes_a_hostile_cache_path(tmp_path):
    root = Root(tmp_path / "root").add_gpus(1, device=0x56a0)
    dpkg(root, INTEL + OTHERS)
    rel = "/ca\nche:\n  min_free: 0\n#\u202e"
    hf_builder.listed_cache(root.path + rel)
    base = write(str(tmp_path / "base.yaml"), "hf:\n  min_free: 10GiB\n")
    out = str(tmp_path / "frozen.yaml")
    r = run_gpugate("spec", "freeze", "--root", root.path, "--spec", base, "-o", out,
                    env=env({"HF_HUB_CACHE": rel}))
    assert r.rc == 0, r
    text = open(out, encoding="utf-8").read()
    assert_no_raw(text, "frozen spec")
    spec = yaml.safe_load(text)
    assert set(spec["hf"]) == {"min_free", "models"}, spec["hf"]
    assert spec["hf"]["min_free"] == "10GiB"


def scan_env(cache):
    return env({"HF_HUB_CACHE": cache})


def test_hf_scan_and_verify_text_keep_one_line_per_entry(tmp_path):
    cache = str(tmp_path / "cache")
    hostile_cache(cache)
    plain = str(tmp_path / "plain")
    hf_builder.listed_cache(plain)
    for cmd in (["hf", "scan"], ["hf", "verify"]):
        hostile = run_gpugate(*cmd, env=scan_env(cache))
        reference = run_gpugate(*cmd, env=scan_env(plain))
        assert hostile.rc in (0, 1) and reference.rc in (0, 1), (hostile, reference)
        assert_no_raw(hostile.out + hostile.err, " ".join(cmd))
        # two more repos: hf scan shows two more lines each (the repo, its revision);
        # no line starts with a key or a verdict that a name wrote
        lines = hostile.out.splitlines()
        assert not any(line.startswith(("  min_free", "  require_mount", "#")) for line in lines), hostile
        if cmd[1] == "scan":
            assert len(lines) == len(reference.out.splitlines()) + 4, (hostile, reference)
        if cmd == ["hf", "verify"]:
            assert len(lines) == len(reference.out.splitlines()), (hostile, reference)


def test_hf_scan_verify_json_round_trip_without_raw_bidi(tmp_path):
    cache = str(tmp_path / "cache")
    hostile_cache(cache)
    for cmd in (["hf", "scan", "--format", "json"], ["hf", "verify", "--format", "json"]):
        r = run_gpugate(*cmd, env=scan_env(cache))
        assert r.rc in (0, 1), r
        assert_no_raw(r.out, " ".join(cmd))
        json.loads(r.out)


def test_check_json_and_text_escape_bidi_and_line_breaks(tmp_path):
    cache = str(tmp_path / "cache")
    hostile_cache(cache)
    # a listed file the snapshot lacks: the check names the hostile repo in a finding
    files = {"config.json": (b"{}\n", False), "w\u202eb.bin": (b"x", False)}
    hf_builder.write_listing(cache, TERMINAL, hf_builder.COMMIT_A, files)
    for fmt in ("json", "text"):
        r = run_gpugate("check", "--only", "hf.layout", "--format", fmt, env=scan_env(cache))
        assert r.rc in (0, 1), r
        assert_no_raw(r.out + r.err, "check --format " + fmt)
        if fmt == "json":
            layout = json.dumps(Run_check(json.loads(r.out), "hf.layout"), ensure_ascii=False)
            assert "w\u202eb.bin" in layout, layout  # named: the value is kept ...
            assert "w\\u202eb.bin" in r.out, r  # ... and the document carries it as an escape
        else:
            assert "w\\u{202e}b.bin" in r.out, r


def Run_check(doc, check_id):
    return next(c for c in doc["checks"] if c["id"] == check_id)


def test_hf_where_verbose_cannot_forge_a_line(tmp_path):
    home = str(tmp_path / "home\nFAIL forged line\u202e")
    plain = run_gpugate("hf", "where", "-v", env=env({"HF_HOME": str(tmp_path / "home")}))
    r = run_gpugate("hf", "where", "-v", env=env({"HF_HOME": home}))
    assert r.rc == plain.rc, (r, plain)
    assert_no_raw(r.out + r.err, "hf where -v")
    assert len(r.out.splitlines()) == len(plain.out.splitlines()), (r, plain)
    assert not any(line.startswith("FAIL") for line in r.out.splitlines()), r
    assert "\\n" in r.out, r  # shown, as an escape
