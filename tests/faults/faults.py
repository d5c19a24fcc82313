#!/usr/bin/python3
"""The fault matrix: every injected fault runs the built gpugate once and must
get the right verdict (exit code and key words), never a crash (a signal, an
exit code other than 0, 1 or 3) and never a hang (past the row's time limit).

Run: GPUGATE=build/gpugate python3 tests/faults/faults.py [-k WORD] [-v]
It prints one line per fault with its verdict time, then
    faults: N injected, N right verdicts, 0 gpugate crashes, 0 hangs
and exits 1 when any fault got a wrong verdict, crashed or hung.

Adding a fault: append a Fault(...) row to FAULTS (or to a group's list that
is added to FAULTS). A row is
    Fault(group, name, setup, rc, words, seconds=10, as_user=None, after=None, absent=())
where setup(fx) builds the fixture with the Fixture helpers below and returns
the gpugate arguments (a list), or (arguments, extra environment) as a tuple;
rc is the expected exit code; words must all appear in stdout+stderr; seconds
is the limit past which the run counts as a hang (a row that injects a hang
passes a short --deadline and expects rc 1 and "timed out"); as_user runs
gpugate as that uid/gid through setpriv; after(fx), when given, inspects what
the run left behind and returns a problem (a string) or None; absent are
strings that must not appear in stdout+stderr (a raw control character).
Driver rows use the fake Level Zero driver (env GPUGATE_FAKE_ZE, default
next to gpugate in fakes/; `make test-faults` builds it) through
driver_case(fault); device rows build a GPU host root with the integration
tests' gpufixture.Root, HF rows a cache with their hf_builder.
"""
import argparse
import hashlib
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time

# the integration tests' fixture builders: GPU hosts (sysfs, nodes, by-path)
# and Hugging Face caches with oracle-named blobs
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import gpufixture  # noqa: E402
import hf_builder  # noqa: E402
import provision_hub  # noqa: E402

GPUGATE = os.environ.get("GPUGATE") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", "gpugate")
# the fake Level Zero driver (tests/fakes/fake_ze.c), built next to gpugate
FAKE_ZE = os.environ.get("GPUGATE_FAKE_ZE") or os.path.join(
    os.path.dirname(os.path.abspath(GPUGATE)), "fakes", "libze_fake.so")


class Fixture:
    """A scratch folder with a root file system under root/."""

    def __init__(self, base):
        self.base = base
        self.root = os.path.join(base, "root")
        os.makedirs(self.root)
        self.cleanups = []  # run after the row (a hub stand-in's close)

    def path(self, rel):
        return os.path.join(self.base, rel)

    def file(self, rel, content, mode=None, under_root=True):
        p = os.path.join(self.root if under_root else self.base, rel.lstrip("/"))
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(content.encode() if isinstance(content, str) else content)
        if mode is not None:
            os.chmod(p, mode)
        return p

    def symlink(self, rel, target, under_root=True):
        p = os.path.join(self.root if under_root else self.base, rel.lstrip("/"))
        os.makedirs(os.path.dirname(p), exist_ok=True)
        os.symlink(target, p)
        return p

    def fifo(self, rel, under_root=True):
        p = os.path.join(self.root if under_root else self.base, rel.lstrip("/"))
        os.makedirs(os.path.dirname(p), exist_ok=True)
        os.mkfifo(p)
        return p

    def spec(self, text, name="spec.yaml"):
        return self.file(name, text, under_root=False)

    def dpkg(self, status):
        return self.file("var/lib/dpkg/status", status)

    def packages_check(self, status=None, relations=("libze1 (>= 1.17)",), extra=()):
        """The usual packages run: a status file, a spec of relations."""
        if status is not None:
            self.dpkg(status)
        spec = self.spec("packages:\n" + "".join(f"  - {r}\n" for r in relations))
        return ["--spec", spec, "--root", self.root, *extra]


def stanza(name, version, arch="amd64", state="installed"):
    want = "install" if state == "installed" else "deinstall"
    return (f"Package: {name}\nStatus: {want} ok {state}\nArchitecture: {arch}\n"
            f"Version: {version}\nDescription: fixture\n")


GOOD = stanza("dpkg", "1.21.22") + "\n" + stanza("libze1", "1.17.2-1")


class Fault:
    def __init__(self, group, name, setup, rc, words=(), seconds=10, as_user=None, after=None, absent=()):
        self.group, self.name, self.setup = group, name, setup
        self.rc, self.words, self.seconds, self.as_user = rc, tuple(words), seconds, as_user
        self.after, self.absent = after, tuple(absent)


# --- malformed specs -----------------------------------------------------
def spec_case(text):
    return lambda fx: ["--spec", fx.spec(text), "--root", fx.root]


SPEC_FAULTS = [
    Fault("spec", "tab indentation", spec_case("packages:\n\t- libze1\n"), 3, ["spec error", "spec.yaml:2:"]),
    Fault("spec", "unclosed flow list", spec_case("packages: [libze1\n"), 3, ["YAML syntax error"]),
    Fault("spec", "unknown top key", spec_case("pakages:\n  - libze1\n"), 3, ["unknown key 'pakages'"]),
    Fault("spec", "map where a list goes", spec_case("packages:\n  libze1: 1\n"), 3, ["packages"]),
    Fault("spec", "bad relation", spec_case("packages:\n  - libze1 (=> 1.0)\n"), 3, ["spec.yaml:2:"]),
    Fault("spec", "bad deadline", spec_case("deadline: soon\npackages: [a]\n"), 3, ["deadline"]),
    Fault("spec", "empty file", spec_case(""), 3, ["is empty"]),
    Fault("spec", "scalar document", spec_case("just text\n"), 3, ["top level must be a mapping"]),
    Fault("spec", "two documents", spec_case("packages: [a]\n---\npackages: [b]\n"), 3, ["more than one YAML document"]),
    Fault("spec", "duplicate key", spec_case("packages: [a]\npackages: [b]\n"), 3, ["duplicate key 'packages'"]),
    Fault("spec", "NUL bytes", spec_case("packages:\x00 [a]\n"), 3, ["NUL bytes"]),
    Fault("spec", "binary garbage", spec_case("\xff\xfe\x81garbage\x1b[31m"), 3, ["spec error"]),
    Fault("spec", "deep flow nesting (2 MB)", spec_case("packages: " + "[" * 600000 + "]" * 600000 + "\n"),
          3, ["at most 1048576"]),
    Fault("spec", "deep flow nesting (200 KB)", spec_case("packages: " + "[" * 100000 + "]" * 100000 + "\n"),
          3, ["deeper than 64 levels"]),
    Fault("spec", "alias fan-out", spec_case("packages: &a0 [x, x]\n" + "".join(
        f"k{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]\n" for i in range(1, 9))), 3, ["more than 64 aliases"]),
    Fault("spec", "missing file", lambda fx: ["--spec", fx.path("nope.yaml")], 3, ["No such file or directory"]),
    Fault("spec", "a folder", lambda fx: ["--spec", fx.base], 3, ["is a directory"]),
    # refused at open, before a byte is read (src/lib/safe_io.c)
    Fault("spec", "/dev/zero", lambda fx: ["--spec", "/dev/zero"], 3, ["/dev/zero: cannot read the spec: it is a character device"], seconds=1),
    Fault("spec", "symlink loop", lambda fx: ["--spec", fx.symlink("loop.yaml", "loop.yaml", under_root=False)],
          3, ["Too many levels of symbolic links"]),
    Fault("spec", "unreadable by the user", lambda fx: (
        os.chmod(fx.base, 0o755), ["--spec", fx.file("s.yaml", "packages: [a]\n", mode=0o600, under_root=False)])[1],
        3, ["Permission denied"], as_user=65534),
]

# --- malformed dpkg status -----------------------------------------------
DPKG_FAULTS = [
    Fault("dpkg", "no status file", lambda fx: fx.packages_check(), 1, ["no dpkg database", "No such file"]),
    Fault("dpkg", "empty status", lambda fx: fx.packages_check(""), 1, ["libze1"]),
    Fault("dpkg", "binary garbage", lambda fx: fx.packages_check(b"\x00\xff\x80" * 5000), 1, ["packages.installed"]),
    # dpkg refuses both files (lib/dpkg/parse.c), and so does gpugate now,
    # naming the file, the line and dpkg's rule (tests/vectors/dpkg-status.tsv)
    Fault("dpkg", "no final newline", lambda fx: fx.packages_check(GOOD.rstrip("\n")), 1,
          ["status:", "missing final newline"]),
    Fault("dpkg", "CRLF line ends", lambda fx: fx.packages_check(GOOD.replace("\n", "\r\n")), 1,
          ["status:", "duplicate value for 'Package' field"]),
    Fault("dpkg", "line without colon", lambda fx: fx.packages_check("Package libze1\n" + GOOD), 1, ["status:1"]),
    Fault("dpkg", "continuation first", lambda fx: fx.packages_check(" orphan\n" + GOOD), 1, ["status:1"]),
    Fault("dpkg", "1 MB line", lambda fx: fx.packages_check(GOOD + "\nPackage: x\nDescription: " + "y" * 1048576 + "\n"),
          0, ["PASS"]),
    Fault("dpkg", "invalid installed version", lambda fx: fx.packages_check(stanza("libze1", "1:")), 1,
          ["status:", "'Version' field value '1:'", "f_version"]),
    Fault("dpkg", "stanza without Package", lambda fx: fx.packages_check("Status: install ok installed\nVersion: 1\n\n" + GOOD),
          1, ["status:1"]),
    Fault("dpkg", "status is a folder", lambda fx: (os.makedirs(fx.root + "/var/lib/dpkg/status"), fx.packages_check())[1],
          1, ["status"]),
    Fault("dpkg", "status links to /dev/zero", lambda fx: (
        fx.symlink("var/lib/dpkg/status", "/dev/zero"), fx.packages_check())[1], 1, ["packages.installed"]),
    Fault("dpkg", "status is a FIFO (refused at once, no hang)", lambda fx: (
        fx.fifo("var/lib/dpkg/status"), fx.packages_check(extra=["--deadline", "5"]))[1], 1,
        ["is a FIFO, not a regular file"], seconds=1),
    Fault("dpkg", "unreadable status", lambda fx: (
        os.chmod(fx.base, 0o755), fx.file("var/lib/dpkg/status", GOOD, mode=0o600),
        fx.packages_check())[2], 1, ["Permission denied"], as_user=65534),
]

# --- garbage environment -------------------------------------------------
def env_case(env):
    return lambda fx: (fx.packages_check(GOOD), env)


ENV_FAULTS = [
    Fault("env", "GPUGATE_NO_SANDBOX garbage", env_case({"GPUGATE_NO_SANDBOX": "\x01\x02yes"}), 0, ["HEALTHY"]),
    Fault("env", "NO_COLOR invalid UTF-8", env_case({"NO_COLOR": "\udcff\udcfe"}), 0, ["HEALTHY"]),
    Fault("env", "HOME unset, PATH empty", env_case({"HOME": None, "PATH": ""}), 0, ["HEALTHY"]),
    Fault("env", "100 KB variable", env_case({"GPUGATE_JUNK": "x" * 100000}), 0, ["HEALTHY"]),
    Fault("env", "GPUGATE_DEADLINE garbage", env_case({"GPUGATE_DEADLINE": "\x01soon\udcff"}), 3, ["GPUGATE_DEADLINE"]),
    Fault("env", "GPUGATE_PROFILE 100 KB under --spec", env_case({"GPUGATE_PROFILE": "x" * 100000}), 0, ["HEALTHY"]),
    Fault("env", "GPUGATE_SPEC ignored under --spec", env_case({"GPUGATE_SPEC": "/nonexistent/spec.yaml"}), 0,
          ["HEALTHY"]),
    Fault("env", "locale and TZ garbage", env_case({"LANG": "xx_YY.BOGUS", "LC_ALL": "\udcff", "TZ": "/../../etc/x"}),
          0, ["HEALTHY"]),
    Fault("env", "HF variables garbage", env_case({"HF_HOME": "\udcff/../..", "HF_HUB_CACHE": "", "HF_HUB_OFFLINE": "maybe",
                                                   "ZE_AFFINITY_MASK": "0.0.0.0.x", "CUDA_VISIBLE_DEVICES": "-1,zz"}),
          0, ["HEALTHY"]),
]

# --- root, options and report paths --------------------------------------
OPTION_FAULTS = [
    Fault("options", "missing --root", lambda fx: ["--root", fx.path("nope")], 3, ["--root", "No such file"]),
    Fault("options", "--root is a file", lambda fx: ["--root", fx.file("f", "x", under_root=False)], 3,
          ["not a directory"]),
    Fault("options", "empty --root", lambda fx: fx.packages_check(), 1, ["no dpkg database"]),
    Fault("report", "report folder missing", lambda fx: fx.packages_check(GOOD, extra=[
        "--report", "json:" + fx.path("missing/r.json")]), 3, ["cannot write the json report", "No such file"]),
    Fault("report", "report path is a folder", lambda fx: fx.packages_check(GOOD, extra=[
        "--report", "nfd:" + fx.base]), 3, ["cannot write the nfd report"]),
    Fault("report", "report folder read-only to the user", lambda fx: (
        os.chmod(fx.base, 0o755), fx.packages_check(GOOD, extra=["--report", "prom:" + fx.base + "/g.prom"]))[1],
        3, ["cannot write the prom report", "Permission denied"], as_user=65534),
    Fault("report", "report into /proc", lambda fx: fx.packages_check(GOOD, extra=[
        "--report", "junit:/proc/gpugate.xml"]), 3, ["cannot write the junit report"]),
]

# --- driver faults: the fake Level Zero driver through the real loader ----
RUNTIME_SPEC = "runtime:\n  backend: level-zero\n  smoke: true\n  timeout: 30s\n"


def driver_case(fault, deadline="3", spec=RUNTIME_SPEC, env=None):
    def setup(fx):
        xdg = fx.path("xdg")
        os.makedirs(xdg, mode=0o700)
        extra = {"ZE_ENABLE_ALT_DRIVERS": FAKE_ZE, "GPUGATE_FAKE_FAULT": fault, "XDG_RUNTIME_DIR": xdg,
                 "ZE_ENABLE_VALIDATION_LAYER": None,
                 # under ASan a SIGSEGV must still end the probe child as a signal would
                 "ASAN_OPTIONS": (os.environ.get("ASAN_OPTIONS", "") + ":handle_segv=0").lstrip(":")}
        extra.update(env or {})
        return ["--spec", fx.spec(spec), "--deadline", deadline], extra
    return setup


PERF_SPEC = RUNTIME_SPEC + "  performance: true\n  bandwidth_buffer: 16MiB\n  baselines: {folder}\n"
TELEMETRY_SPEC = RUNTIME_SPEC + "  telemetry: true\n  processes: true\n"


def perf_case(fault, bandwidth=400.0):
    """The fake device (8086:56a0, 400 GB/s by its kernel timestamps) against a baseline."""
    def setup(fx):
        folder = fx.path("baselines")
        os.makedirs(folder)
        with open(os.path.join(folder, "fake.json"), "w") as f:
            f.write('{"vendor_id": "0x8086", "device_id": "0x56a0", "copy_bandwidth_gbs": %s}' % bandwidth)
        return driver_case(fault, deadline="10", spec=PERF_SPEC.format(folder=folder))(fx)
    return setup


RUNTIME_FAULTS = [
    Fault("runtime", "driver hangs in init", driver_case("hang_init"), 1, ["hung in stage init", "(killed)"], seconds=5),
    Fault("runtime", "driver hangs in sync", driver_case("hang_sync"), 1, ["hung in stage sync", "(killed)"], seconds=5),
    Fault("runtime", "driver crashes in init", driver_case("crash_init"), 1, ["crashed with SIGSEGV in stage init"]),
    Fault("runtime", "device out of memory", driver_case("oom"), 1, ["ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY"]),
    Fault("runtime", "kernel computes a wrong result", driver_case("wrong_result"), 1, ["first at index 12345"]),
    Fault("runtime", "driver reports zero devices", driver_case("zero_devices"), 1, ["reports no GPU"]),
    Fault("runtime", "driver refuses permission", driver_case("permission"), 1,
          ["ZE_RESULT_ERROR_INSUFFICIENT_PERMISSIONS"]),
    Fault("runtime", "loader finds no driver", driver_case("", env={
        "ZE_ENABLE_ALT_DRIVERS": "/nonexistent/libze_none.so", "LD_LIBRARY_PATH": "/nonexistent"}), 1, ["runtime.loader", "no Level Zero driver found a GPU"]),
    Fault("runtime", "copy bandwidth 30% below the baseline (slow_copy)", perf_case("slow_copy"), 1,
          ["runtime.performance", "280.0 GB/s is 30% below the baseline 400.0 GB/s"], seconds=15),
    Fault("runtime", "RAS reports uncorrectable errors", driver_case("ras_uncorrectable", deadline="10", spec=TELEMETRY_SPEC),
          1, ["runtime.health", "3 uncorrectable RAS errors"], seconds=15),
    Fault("runtime", "another process uses the GPU", driver_case("foreign_process", deadline="10", spec=TELEMETRY_SPEC),
          0, ["runtime.processes", "pid 4242"], seconds=15),
    Fault("runtime", "driver without Sysman telemetry", driver_case("no_telemetry", deadline="10", spec=TELEMETRY_SPEC),
          0, ["HEALTHY", "power not supported by this driver"], seconds=15),
    Fault("runtime", "cuda backend on a machine without it", driver_case(
        "", spec="runtime:\n  backend: cuda\n  smoke: true\n"), 1, ["runtime.loader", "libcuda.so.1 not found"]),
]

# --- device nodes: a GPU host root (gpufixture.Root) --------------------
GPU_A = "0000:18:00.0"


def devices_case(by_path=True, damage=None):
    def setup(fx):
        root = gpufixture.Root(fx.root).add_gpus(1, by_path=by_path)
        if damage:
            damage(root)
        return ["check", "--root", fx.root, "--profile", "ci", "--only", "devices"]
    return setup


def dangle(root):
    link = root.p("dev/dri/by-path/pci-%s-render" % GPU_A)
    os.unlink(link)
    os.symlink("../renderD200", link)


DEVICE_FAULTS = [
    Fault("devices", "by-path missing (ci)", devices_case(by_path=False), 1,
          ["devices.by_path", "by-path is missing", "-v /dev/dri/by-path:/dev/dri/by-path"]),
    Fault("devices", "dangling by-path link", devices_case(damage=dangle), 1,
          ["devices.by_path", "dangling", "../renderD200"]),
]


# --- Hugging Face cache: a valid cache (hf_builder), then one corruption ---
def hf_case(damage):
    def setup(fx):
        cache = fx.path("hub")
        names = hf_builder.valid_cache(cache)
        damage(os.path.join(cache, "models--org--tiny"), names)
        spec = fx.spec("profile: ci\nhf:\n  require_mount: false\n  min_free: 1MiB\n  integrity: true\n")
        return ["check", "--spec", spec], {"HF_HUB_CACHE": cache, "HOME": "/nonexistent-home"}
    return setup


def flip_weights(repo, names):
    blob = os.path.join(repo, "blobs", names["model"]["model.safetensors"])
    with open(blob, "r+b") as f:
        f.seek(100)
        b = f.read(1)
        f.seek(100)
        f.write(bytes([b[0] ^ 0xFF]))


def escaping_link(repo, names):
    link = os.path.join(repo, "snapshots", hf_builder.COMMIT_A, "tokenizer", "vocab.txt")
    os.unlink(link)
    os.mkfifo(os.path.join(repo, "..", "escape.fifo"))  # following it would block
    os.symlink("../../../../escape.fifo", link)


def broken_ref(repo, names):
    with open(os.path.join(repo, "refs", "main"), "w") as f:
        f.write("c" * 40)


def ref_fifo(repo, names):
    os.unlink(os.path.join(repo, "refs", "main"))
    os.mkfifo(os.path.join(repo, "refs", "main"))  # reading it would block


def huge_listing(repo, names):
    """trees/<commit>.json past the reader's 256 MiB cap (sparse: no disk used)."""
    os.makedirs(os.path.join(repo, "trees"), exist_ok=True)
    with open(os.path.join(repo, "trees", hf_builder.COMMIT_B + ".json"), "wb") as f:
        f.truncate(300 << 20)


# a repo folder whose name, written raw, forges lines, terminal sequences and YAML keys
HOSTILE_FOLDER = "models--zz--a\n  min_free: 0\n  require_mount: false\n#\x1b[2J\u202e"


def hostile_cache_case(command):
    def setup(fx):
        cache = fx.path("hub")
        hf_builder.valid_cache(cache)
        files = {"config.json": (b"{}\n", False)}
        hf_builder.add_repo(cache, HOSTILE_FOLDER, {hf_builder.COMMIT_A: files}, {"main": hf_builder.COMMIT_A})
        env = {"HF_HUB_CACHE": cache, "HOME": "/nonexistent-home"}
        if command == "freeze":
            base = fx.spec("hf:\n  min_free: 10GiB\n", name="base.yaml")
            return ["spec", "freeze", "--spec", base, "--vendor", "intel", "-o", fx.path("frozen.yaml")], env
        return ["hf", command], env
    return setup


def frozen_keys(fx):
    """The frozen spec, read by PyYAML: the hf section must hold only the base's key and models."""
    import yaml
    with open(fx.path("frozen.yaml"), encoding="utf-8") as f:
        spec = yaml.safe_load(f)
    if set(spec.get("hf", {})) != {"min_free", "models"} or spec["hf"]["min_free"] != "10GiB":
        return "hf section %r" % spec.get("hf")
    if "zz/" + HOSTILE_FOLDER[len("models--zz--"):] not in [m["repo"] for m in spec["hf"]["models"]]:
        return "the hostile repo id did not come back as a value"
    return None


def verify_case(args, big=64 << 30, record=None):
    """hf verify on a valid cache plus one sparse blob of big bytes (its name
    not its hash: it must not get that far); record: planted where the
    verified-blob record goes ("fifo" or "link")."""
    def setup(fx):
        cache = fx.path("hub")
        hf_builder.valid_cache(cache)
        blobs = os.path.join(cache, "models--org--big", "blobs")
        os.makedirs(blobs)
        with open(os.path.join(blobs, "ab" * 32), "wb") as f:
            f.truncate(big)
        snap = os.path.join(cache, "models--org--big", "snapshots", "a" * 40)
        os.makedirs(snap)
        os.symlink("../../blobs/" + "ab" * 32, os.path.join(snap, "big.bin"))
        state = fx.path("state")  # run_fault sets XDG_RUNTIME_DIR to it
        if record:
            st = os.stat(cache)
            os.makedirs(os.path.join(state, "gpugate"), mode=0o700, exist_ok=True)
            rec = os.path.join(state, "gpugate", "hf-verified-%x-%x" % (st.st_dev, st.st_ino))
            if record == "fifo":
                os.mkfifo(rec)
            else:
                os.symlink("/dev/zero", rec)
        return ["hf", "verify", "--cache", cache, *args], {"HOME": "/nonexistent-home"}
    return setup


HF_FAULTS = [
    Fault("hf", "listing past the reader's size cap (a failure, not ignored)", hf_case(huge_listing), 1,
          ["hf.layout", "beyond this reader's limits", "trees/" + hf_builder.COMMIT_B + ".json"], seconds=10),
    Fault("hf", "repo folder name forging lines (hf scan)", hostile_cache_case("scan"), 0,
          ["\\n  min_free: 0\\n", "\\x1b[2J", "\\u{202e}"], absent=["\x1b", "\u202e", "\n  min_free"]),
    Fault("hf", "repo folder name forging lines (hf verify)", hostile_cache_case("verify"), 0,
          ["hf verify: ok"], absent=["\x1b", "\u202e", "\n  min_free"]),
    Fault("hf", "repo folder name forging YAML keys (spec freeze)", hostile_cache_case("freeze"), 0,
          [], absent=["\x1b", "\u202e"], after=frozen_keys),
    Fault("hf", "hf verify --deadline on a 64 GiB sparse blob", verify_case(["--deadline", "1"]), 1,
          ["stopped at the deadline (--deadline 1)", "hashed", "left (about"], seconds=5),
    Fault("hf", "verified-blob record is a FIFO (a full hash, never a pass)", verify_case([], big=1 << 20, record="fifo"),
          1, ["files hashed, 0 blobs trusted", "record:", "FIFO"], seconds=10),
    Fault("hf", "verified-blob record is a link to /dev/zero", verify_case([], big=1 << 20, record="link"), 1,
          ["files hashed, 0 blobs trusted", "record:", "symlink"], seconds=10),
    Fault("hf", "corrupt blob (one byte flipped)", hf_case(flip_weights), 1,
          ["hf.integrity", "sha256 mismatch", "models--org--tiny/blobs/", "re-download org/tiny"]),
    # followed inside the cache as scan_cache_dir follows it (SECURITY.md), never opened: a FIFO
    Fault("hf", "snapshot link escaping the repo to a FIFO", hf_case(escaping_link), 1,
          ["hf.layout", "vocab.txt links to ../../../../escape.fifo, which is not a plain file"], seconds=2),
    Fault("hf", "ref naming a missing commit", hf_case(broken_ref), 1,
          ["hf.layout", "refs/main", "c" * 40, "no snapshot"]),
    Fault("hf", "ref is a FIFO (refused at once)", hf_case(ref_fifo), 1,
          ["hf.layout", "refs/main is not a plain file"], seconds=2),
]


# --- the hub: gpugate hf fetch against the stand-in (provision_hub.Hub) ---
HUB_COMMIT = "0123456789abcdef0123456789abcdef01234567"
HUB_WEIGHTS = bytes(range(256)) * 8192  # 2 MiB, an LFS file served from the "CDN"
HUB_SHA = hashlib.sha256(HUB_WEIGHTS).hexdigest()
# the stand-in's corrupt fault flips the first byte it sends
HUB_CORRUPT_SHA = hashlib.sha256(bytes([HUB_WEIGHTS[0] ^ 0xFF]) + HUB_WEIGHTS[1:]).hexdigest()
NO_PROXY_ENV = {k: None for k in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "all_proxy")}


def start_hub(fx):
    hub = provision_hub.Hub()
    fx.cleanups.append(hub.close)
    fx.hub = hub
    return hub


def hub_case(faults, retries="2"):
    """gpugate hf fetch org/tiny (a config and 2 MiB of LFS weights) with
    faults {key: fault} set on the stand-in; GPUGATE_RETRIES keeps it short."""
    def setup(fx):
        hub = start_hub(fx)
        hub.add(provision_hub.Repo("org/tiny", HUB_COMMIT, {"config.json": b'{"layers": 2}\n',
                                                            "model.safetensors": HUB_WEIGHTS},
                                   lfs={"model.safetensors"}))
        hub.faults.update(faults)
        env = {"HF_ENDPOINT": hub.url, "HF_HUB_CACHE": fx.path("hub"), "HF_HOME": fx.path("hfhome"),
               "HF_TOKEN": None, "HF_HUB_OFFLINE": None, "TRANSFORMERS_OFFLINE": None,
               "GPUGATE_RETRIES": retries, **NO_PROXY_ENV}
        return ["hf", "fetch", "org/tiny", "--quiet"], env
    return setup


def lying_hub_case(set_up, args=()):
    """hub_case with the stand-in's lies (issue 26) set by set_up(hub)."""
    def setup(fx):
        made_args, env = hub_case({})(fx)
        set_up(fx.hub)
        return made_args + list(args), env
    return setup


def refused_case(fx):
    s = __import__("socket").socket()
    s.bind(("127.0.0.1", 0))  # bound, never listening: connect is refused
    fx.cleanups.append(s.close)
    env = {"HF_ENDPOINT": "http://127.0.0.1:%d" % s.getsockname()[1], "HF_HUB_CACHE": fx.path("hub"),
           "HF_HOME": fx.path("hfhome"), "HF_TOKEN": None, "HF_HUB_OFFLINE": None, "TRANSFORMERS_OFFLINE": None,
           **NO_PROXY_ENV}
    return ["hf", "fetch", "org/tiny", "--quiet"], env


def token_case(make):
    """hf fetch with HF_TOKEN_PATH at a FIFO or /dev/zero: refused before any request."""
    def setup(fx):
        args, env = hub_case({})(fx)
        env.update(HF_TOKEN_PATH=make(fx))
        return args, env
    return setup


def hub_blobs(fx, weights_expected):
    """What a fetch must leave: no .incomplete file, every blob named by its
    content's hash, and the weights blob present exactly when expected."""
    blobs = os.path.join(fx.path("hub"), "models--org--tiny", "blobs")
    names = os.listdir(blobs) if os.path.isdir(blobs) else []
    for n in names:
        if n.endswith(".incomplete"):
            return "left " + n
        with open(os.path.join(blobs, n), "rb") as f:
            data = f.read()
        if n not in (hashlib.sha256(data).hexdigest(), provision_hub.git_blob_sha1(data)):
            return "blob %s holds other content" % n
    if (HUB_SHA in names) != weights_expected:
        return "weights blob %s" % ("missing" if weights_expected else "present after a failure")
    return None


HUB_FAULTS = [
    Fault("hub", "CDN answers 503 every time", hub_case({HUB_SHA: {"503": 1000}}), 1,
          ["model.safetensors", "HTTP 503", "gave up after 3 attempts"], seconds=20,
          after=lambda fx: hub_blobs(fx, False)),
    Fault("hub", "hub HEAD answers 503 every time", hub_case({"model.safetensors": {"head503": 1000}}), 1,
          ["model.safetensors", "HTTP 503", "retrying"], seconds=20, after=lambda fx: hub_blobs(fx, False)),
    Fault("hub", "CDN body corrupted (sha256)", hub_case({HUB_SHA: {"corrupt": True}}), 1,
          ["model.safetensors", "sha256 mismatch", "expected " + HUB_SHA, "received " + HUB_CORRUPT_SHA],
          after=lambda fx: hub_blobs(fx, False)),
    Fault("hub", "connection dropped mid-body once", hub_case({HUB_SHA: {"drop": 1}}), 0,
          ["model.safetensors", "retrying", "snapshots/" + HUB_COMMIT], after=lambda fx: hub_blobs(fx, True)),
    Fault("hub", "token file is a FIFO", token_case(lambda fx: fx.fifo("token", under_root=False)), 3,
          ["token file", "not a regular file"], seconds=2),
    Fault("hub", "token file links to /dev/zero", token_case(lambda fx: fx.symlink("token", "/dev/zero", under_root=False)),
          3, ["token file", "not a regular file"], seconds=2),
    Fault("hub", "connection dropped mid-body always", hub_case({HUB_SHA: {"drop": 1000}}), 1,
          ["model.safetensors", "gave up after 3 attempts"], seconds=20, after=lambda fx: hub_blobs(fx, False)),
    Fault("hub", "tree page whose next page is itself", lying_hub_case(lambda h: setattr(h, "tree_loop", "self")),
          0, ["the tree listing failed", "page 2 repeats page 1", "the hub's pages loop"], seconds=10),
    Fault("hub", "tree pages repeating a cursor", lying_hub_case(lambda h: setattr(h, "tree_loop", "cursor")),
          0, ["the tree listing failed", "repeats the cursor", "the hub's pages loop"], seconds=10),
    Fault("hub", "endless tree listing (a new cursor each page)",
          lying_hub_case(lambda h: setattr(h, "tree_endless", 1)), 0,
          ["the tree listing failed", "more than 2000 pages"], seconds=60),
    Fault("hub", "CDN asks Retry-After 99999 s", hub_case({HUB_SHA: {"retry_after": "99999"}}), 1,
          ["model.safetensors", "the server asked to retry after 99999 s (Retry-After)"], seconds=10,
          after=lambda fx: hub_blobs(fx, False)),
    Fault("hub", "API asks Retry-After 99999 s",
          lying_hub_case(lambda h: setattr(h, "api_retry_after", [(429, "99999")]), ["--timeout", "60"]), 1,
          ["the server asked to retry after 99999 s (Retry-After), more than the"], seconds=10),
    Fault("hub", "connection refused (one retry at most)", refused_case, 1, ["onnect"], seconds=5),
    Fault("hub", "hub file name with ESC, BEL and a newline",
          lying_hub_case(lambda h: h.repos[("model", "org/tiny")].files.update({"a\x1b[2J\x07\nFAIL x": b"x"})),
          1, ["refused", "a\\x1b[2J\\x07\\nFAIL x"], absent=["\x1b", "\x07", "\nFAIL x"]),
]


# --- stack manifests and .deb files (dpkg-deb built, served by the stand-in) ---
def build_deb(fx, name, version):
    d = fx.path("src-" + name)
    os.makedirs(os.path.join(d, "DEBIAN"))
    with open(os.path.join(d, "DEBIAN", "control"), "w") as f:
        f.write("Package: %s\nVersion: %s\nArchitecture: amd64\nMaintainer: t <t@example.org>\n"
                "Description: fault matrix package\n" % (name, version))
    out = fx.path("%s_%s_amd64.deb" % (name, version))
    subprocess.run(["dpkg-deb", "--root-owner-group", "-Zxz", "--build", d, out], check=True, capture_output=True)
    with open(out, "rb") as f:
        return os.path.basename(out), f.read()


def stack_case(verb, pin=None, manifest=None):
    """stack fetch|verify of one dpkg-deb built package; pin(sha) gives the
    manifest's sha256; manifest, when given, is the manifest text itself."""
    def setup(fx):
        hub = start_hub(fx)
        name, data = build_deb(fx, "libgmm", "22.3.0")
        hub.static["/rel/" + name] = data
        sha = hashlib.sha256(data).hexdigest()
        dest = fx.path("out")
        os.makedirs(dest)
        if verb == "verify":
            with open(os.path.join(dest, name), "wb") as f:
                f.write(data)
        text = manifest if manifest is not None else (
            "stack: faults\narchitecture: amd64\npackages:\n  - package: libgmm\n    version: \"22.3.0\"\n"
            "    url: %s/rel/%s\n    sha256: \"%s\"\n" % (hub.url, name, pin(sha) if pin else sha))
        m = fx.spec(text, name="stack.yaml")
        args = ["stack", "fetch", "--manifest", m, "--dest", dest] if verb == "fetch" else \
               ["stack", "verify", "--manifest", m, dest]
        return args, {"GPUGATE_RETRIES": "1", **NO_PROXY_ENV}
    return setup


def manifest_case(make):
    """stack verify with a manifest that is no regular file: make(fx) gives its path."""
    def setup(fx):
        dest = fx.path("out")
        os.makedirs(dest)
        return ["stack", "verify", "--manifest", make(fx), dest], {}
    return setup


def stack_left(fx, present):
    out = fx.path("out")
    names = sorted(os.listdir(out)) if os.path.isdir(out) else []
    if [n for n in names if n.endswith(".part")]:
        return "left a .part file: %s" % names
    if present != bool(names):
        return "out/ holds %s" % (names or "nothing")
    return None


WRONG_SHA = "0" * 64
STACK_FAULTS = [
    Fault("stack", ".deb with a wrong sha256 (fetch)", stack_case("fetch", pin=lambda sha: WRONG_SHA), 1,
          ["libgmm_22.3.0_amd64.deb", "sha256 mismatch", "expected " + WRONG_SHA, "received "],
          after=lambda fx: stack_left(fx, False)),
    Fault("stack", ".deb with a wrong sha256 (verify)", stack_case("verify", pin=lambda sha: WRONG_SHA), 1,
          ["libgmm_22.3.0_amd64.deb", "the manifest pins " + WRONG_SHA, "verification FAILED"]),
    Fault("stack", "manifest YAML syntax error", stack_case("verify", manifest="stack: x\npackages: [\n"), 3,
          ["manifest error", "stack.yaml:"]),
    Fault("stack", "manifest sha256 not hex", stack_case("fetch", pin=lambda sha: "xyz"), 3,
          ["manifest error", "stack.yaml:", "sha256"], after=lambda fx: stack_left(fx, False)),
    Fault("stack", "manifest entry without url", stack_case(
        "fetch", manifest="stack: x\npackages:\n  - package: a\n    version: \"1\"\n"), 3,
          ["manifest error", "stack.yaml:3:", "url"]),
    Fault("stack", "manifest is binary garbage", stack_case("verify", manifest="\xff\xfe\x00\x81\x1b[31m"), 3,
          ["manifest error", "stack.yaml"]),
    Fault("stack", "manifest is a FIFO nobody writes (refused at once)", manifest_case(
        lambda fx: fx.fifo("stack.yaml", under_root=False)), 3, ["manifest error", "stack.yaml is a FIFO"]),
    Fault("stack", "manifest is /dev/zero", manifest_case(lambda fx: "/dev/zero"), 3,
          ["manifest error", "/dev/zero is a character device"]),
]

# --- gpugate bundle: credentials in the environment, whatever their names ---
BUNDLE_SECRETS = {"GH_PAT": "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3z",
                  "AUTH_HEADER": "Bearer opaque-session-value-1234",
                  "GPUGATE_NOTE": "AKIAIOSFODNN7EXAMPLE",
                  "HF_ENDPOINT": "https://u:hunter2pass@hub.example.org"}


def bundle_case(fx):
    return ["bundle", "-o", fx.path("b.tar.gz"), "--backend", "level-zero"], {
        **BUNDLE_SECRETS, "ZE_ENABLE_ALT_DRIVERS": FAKE_ZE, "HF_HOME": fx.path("hfhome")}


def bundle_clean(fx):
    import tarfile
    with tarfile.open(fx.path("b.tar.gz"), "r:gz") as t:
        names = t.getnames()
        blob = b"".join(t.extractfile(m).read() for m in t.getmembers())
    leaked = [k for k, v in BUNDLE_SECRETS.items() if v.encode() in blob or v.split("@")[0].encode() in blob]
    if leaked:
        return "the bundle holds the value of %s" % leaked
    if "gpugate-bundle/cmdline.txt" in names:
        return "cmdline.txt without --with-cmdline"
    return None


BUNDLE_FAULTS = [
    Fault("bundle", "credentials in the environment under any name", bundle_case, 0, ["wrote"], seconds=120,
          after=bundle_clean),
]

FAULTS = (SPEC_FAULTS + DPKG_FAULTS + ENV_FAULTS + OPTION_FAULTS + RUNTIME_FAULTS + DEVICE_FAULTS
          + HF_FAULTS + HUB_FAULTS + STACK_FAULTS + BUNDLE_FAULTS)


def run_fault(fault, verbose):
    base = tempfile.mkdtemp(prefix="gpugate-fault-")
    fx = None
    try:
        os.chmod(base, 0o755)
        fx = Fixture(base)
        made = fault.setup(fx)
        args, extra_env = made if isinstance(made, tuple) else (made, {})
        env = dict(os.environ)
        # gpugate's state folder (probe cache, hf verify's record) inside the case's folder, never /run
        xdg = os.path.join(base, "state")
        os.makedirs(xdg, 0o700, exist_ok=True)
        if fault.as_user is not None:
            os.chown(xdg, fault.as_user, fault.as_user)
        env["XDG_RUNTIME_DIR"] = xdg
        for k, v in extra_env.items():
            if v is None:
                env.pop(k, None)
            else:
                env[k] = v
        env = {k.encode(): v.encode("utf-8", "surrogateescape") for k, v in env.items()}
        cmd = [GPUGATE, *args]
        if fault.as_user is not None:
            cmd = ["setpriv", f"--reuid={fault.as_user}", f"--regid={fault.as_user}", "--clear-groups", *cmd]
        t0 = time.monotonic()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                start_new_session=True)
        try:
            out, err = proc.communicate(timeout=fault.seconds)
            hung = False
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            hung = True
        seconds = time.monotonic() - t0
        text = (out + err).decode("utf-8", "replace")
        rc = proc.returncode
        crashed = not hung and (rc < 0 or rc not in (0, 1, 3))
        missing = [w for w in fault.words if w not in text]
        missing += ["absent but written: %r" % a for a in fault.absent if a in text]
        problem = fault.after(fx) if fault.after and not hung else None
        if problem:
            missing.append("after the run: " + problem)
        right = not hung and not crashed and rc == fault.rc and not missing
        return right, crashed, hung, rc, seconds, missing, text
    finally:
        for close in getattr(fx, "cleanups", ()) if fx else ():
            close()
        for dirpath, dirnames, _ in os.walk(base):
            for d in dirnames:
                try:
                    os.chmod(os.path.join(dirpath, d), 0o755)
                except OSError:
                    pass
        shutil.rmtree(base, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-k", help="only faults whose group or name contains this")
    ap.add_argument("-v", action="store_true", help="print gpugate's output for every fault")
    opts = ap.parse_args()
    if not os.access(GPUGATE, os.X_OK):
        sys.exit(f"faults: no gpugate binary at {GPUGATE} (set GPUGATE)")
    rows = [f for f in FAULTS if not opts.k or opts.k in f.group or opts.k in f.name]
    can_switch_user = os.geteuid() == 0 and shutil.which("setpriv")
    injected = right_n = crashes = hangs = skipped = 0
    for f in rows:
        if f.as_user is not None and not can_switch_user:
            print(f"  SKIP  {f.group:8} {f.name} (needs root and setpriv to run as uid {f.as_user})")
            skipped += 1
            continue
        injected += 1
        right, crashed, hung, rc, seconds, missing, text = run_fault(f, opts.v)
        right_n += right
        crashes += crashed
        hangs += hung
        what = "ok" if right else "HANG" if hung else "CRASH" if crashed else "WRONG"
        print(f"  {what:5} {f.group:8} {f.name:40} rc={rc} (want {f.rc}) {seconds * 1e3:8.1f} ms")
        if not right or opts.v:
            if missing:
                print(f"        missing words: {missing}")
            print("        " + text.strip().replace("\n", "\n        ")[:2000])
    print(f"faults: {injected} injected, {right_n} right verdicts, {crashes} gpugate crashes, {hangs} hangs"
          + (f" ({skipped} skipped)" if skipped else ""))
    return 0 if right_n == injected and not crashes and not hangs else 1


if __name__ == "__main__":
    sys.exit(main())
