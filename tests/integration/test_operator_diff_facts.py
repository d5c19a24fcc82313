"""gpugate diff on the hf and system facts (issue 27): two reports that
gpugate itself writes from two fixture roots (a hub cache built as
huggingface_hub lays it out, /proc/self/status, /proc/self/mountinfo, the
container marks and a kernel log in /dev/kmsg's record format) that differ in
those facts. The diff must name each change by its stable fact key and
direction in the JSON, text and Markdown formats."""
import json
import os
import shutil

import hf_builder as hb
from conftest import run_gpugate, spec_file
from hf_upstream import hub_env
from test_system import DOCKER_CAPS, KMSG_CLEAN, KMSG_SICK

CAP_CHOWN, CAP_SYS_ADMIN = 0, 21


def node(tmp_path, name, cache, mounts, seccomp, caps, docker, kmsg, drop_repo=None, corrupt=False):
    """A fixture root: the hub cache at /<cache>/hub, the rest as given."""
    root = tmp_path / name
    hub = root / cache / "hub"
    hb.valid_cache(str(hub))
    if drop_repo:
        shutil.rmtree(hub / drop_repo)
    if corrupt:  # one blob whose content no longer hashes to its name
        blobs = hub / "models--org--tiny" / "blobs"
        b = blobs / sorted(os.listdir(blobs))[0]
        data = bytearray(b.read_bytes())
        data[0] ^= 0xFF
        b.write_bytes(bytes(data))
    (root / "proc" / "self").mkdir(parents=True)
    (root / "proc" / "self" / "mountinfo").write_text(mounts)
    (root / "proc" / "self" / "status").write_text(
        "Name:\tgpugate\nCapInh:\t0000000000000000\nCapPrm:\t%s\nCapEff:\t%s\nNoNewPrivs:\t0\n"
        "Seccomp:\t%d\nSeccomp_filters:\t%d\n" % (caps, caps, seccomp, 1 if seccomp == 2 else 0))
    (root / "sys" / "bus" / "pci" / "devices").mkdir(parents=True)
    (root / "dev").mkdir()
    (root / "dev" / "kmsg").write_text(kmsg)
    if docker:
        (root / ".dockerenv").write_text("")
    return root


def report(tmp_path, root, cache, min_free, name, **extra):
    text = ("system:\n  kernel_log: true\n"
            "hf:\n  min_free: %s\n  integrity: true\n  require_mount: false\n" % min_free)
    spec = spec_file(tmp_path, text, name=name + ".yaml")
    path = str(tmp_path / (name + ".json"))
    env = hub_env("/%s/hub" % cache, XDG_RUNTIME_DIR=str(tmp_path), **extra)
    r = run_gpugate("check", "--profile", "validate", "--only", "hf,system", "--spec", spec, "--root", str(root),
                    "--report", "json:" + path, env=env, timeout=120)
    assert r.rc in (0, 1) and os.path.exists(path), r
    return path


def test_hf_and_system_changes_are_named_in_every_format(tmp_path):
    old_caps = int(DOCKER_CAPS, 16)
    new_caps = "%016x" % ((old_caps & ~(1 << CAP_CHOWN)) | (1 << CAP_SYS_ADMIN))
    a = node(tmp_path, "a", "cache", "1 0 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n"
             "2 1 0:50 / /cache rw,relatime - tmpfs tmpfs rw\n", 2, DOCKER_CAPS, True, KMSG_CLEAN)
    b = node(tmp_path, "b", "data", "1 0 8:1 / / rw - overlay overlay rw\n", 0, new_caps, False, KMSG_SICK,
             drop_repo="models--solo", corrupt=True)
    old = report(tmp_path, a, "cache", "1", "old")
    new = report(tmp_path, b, "data", "1000TiB", "new", KUBERNETES_SERVICE_HOST="10.0.0.1")

    want = {  # fact: (old, new, change); None: any value
        "hf.location.hub_cache": ("/cache/hub", "/data/hub", "changed"),
        "hf.mounted.own_mount": ("true", "false", "worse"),
        "hf.mounted.mount_point": ("/cache", "/", "changed"),
        "hf.space.below_min_free": (None, None, "worse"),
        "hf.layout.repos": ("3", "2", "changed"),
        "hf.integrity.files": ("7", "6", "changed"),
        "hf.integrity.not_matching": ("0", "1", "worse"),
        "system.seccomp.mode": ("filter", "off", "changed"),
        "system.capabilities.CAP_CHOWN": ("effective", "not effective", "lost"),
        "system.capabilities.CAP_SYS_ADMIN": ("not effective", "effective", "gained"),
        "system.container.engine": ("docker", "kubernetes", "changed"),
        "system.kernel_log.gpu_errors": ("0", "2", "worse"),
    }
    r = run_gpugate("diff", "--format", "json", old, new)
    assert r.rc == 1, r  # NEW fails hf.space, hf.mounted, hf.integrity and system.kernel_log: through the checks
    d = json.loads(r.out)
    got = {f["fact"]: (f["old"], f["new"], f["change"]) for f in d["hf"] + d["system"]}
    for fact, (o, n, change) in want.items():
        assert fact in got, (fact, got)
        assert got[fact][2] == change and o in (None, got[fact][0]) and n in (None, got[fact][1]), (fact, got)
    assert all(f["fact"].startswith("hf.") for f in d["hf"]) and all(
        f["fact"].startswith("system.") for f in d["system"]), d
    # the facts are shown, the regressions stay the checks' (no hf or system sentence of their own)
    assert not any(s.startswith(("hf.", "system.")) and "->" not in s for s in d["regressions"]), d

    text = run_gpugate("diff", old, new)
    assert text.rc == 1, text
    assert "hf cache facts changed: %d\n" % len(d["hf"]) in text.out, text
    assert "system facts changed: %d\n" % len(d["system"]) in text.out, text
    lines = text.out.splitlines()
    for fact, (o, n, change) in want.items():
        line = [x for x in lines if x.strip().startswith(fact + " ")]
        assert len(line) == 1 and line[0].endswith("(%s)" % change), (fact, text.out)

    md = run_gpugate("diff", "--format", "markdown", old, new)
    assert md.rc == 1, md
    assert "### Hugging Face cache (%d changed)" % len(d["hf"]) in md.out, md
    assert "### System (%d changed)" % len(d["system"]) in md.out, md
    for fact, (o, n, change) in want.items():
        row = [x for x in md.out.splitlines() if x.startswith("| `%s` |" % fact)]
        assert len(row) == 1 and row[0].endswith("| %s |" % change), (fact, md.out)

    # the same report twice: nothing changed, in every format
    same = run_gpugate("diff", "--format", "json", new, new)
    assert same.rc == 0 and json.loads(same.out)["hf"] == [] and json.loads(same.out)["system"] == [], same
    assert "hf cache facts changed: 0\n" in run_gpugate("diff", new, new).out
    assert "### System (0 changed)\n\nNone.\n" in run_gpugate("diff", "--format", "markdown", new, new).out


def test_hf_and_system_details_of_the_wrong_type_are_unusable_input(tmp_path):
    a = node(tmp_path, "a", "cache", "1 0 8:1 / / rw - ext4 /dev/sda1 rw\n", 2, DOCKER_CAPS, True, KMSG_CLEAN)
    good = report(tmp_path, a, "cache", "1", "good")
    doc = json.load(open(good))
    for cid, key, value in (("hf.space", "free_bytes", "lots"), ("system.capabilities", "CapEff", "xyz"),
                            ("system.kernel_log", "gpu_errors", "two")):
        bad = json.loads(json.dumps(doc))
        for c in bad["checks"]:
            if c["id"] == cid:
                c["details"][key] = value
        path = spec_file(tmp_path, json.dumps(bad), name="bad.json")
        r = run_gpugate("diff", good, path)
        assert r.rc == 3 and "bad.json" in r.err and cid in r.err and key in r.err and r.out == "", (cid, r)
