"""Fixture roots shaped like a GPU host or container: a sysfs tree laid out as
the kernel lays it out (class/drm links into devices/, dev/char links, the
driver link), real character devices made with mknod, real by-path symlinks.
Used by test_devices.py, test_system.py and tests/bench/devices.sh."""

import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile

from report_oracles import finding_texts, validate_json_text

GPUGATE = os.environ.get("GPUGATE", os.path.join(os.path.dirname(__file__), "..", "..", "build", "gpugate"))


def _write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def _link(target, path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if os.path.lexists(path):
        os.unlink(path)
    os.symlink(target, path)


def mknod(path, major, minor, mode=0o660, uid=0, gid=0):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if os.path.lexists(path):
        os.unlink(path)
    os.mknod(path, 0o020000 | mode, os.makedev(major, minor))
    os.chown(path, uid, gid)
    os.chmod(path, mode)


class Root:
    def __init__(self, path):
        self.path = str(path)
        os.makedirs(os.path.join(self.path, "sys/class/drm"), exist_ok=True)
        os.makedirs(os.path.join(self.path, "dev/dri"), exist_ok=True)
        _write(os.path.join(self.path, "etc/group"), "root:x:0:\nvideo:x:44:\nrender:x:993:\nnogroup:x:65534:\n")

    def p(self, rel):
        return os.path.join(self.path, rel.lstrip("/"))

    def add_gpu(self, bdf, card=0, render=128, vendor=0x8086, device=0x56C0, driver="xe", nodes=True,
                by_path=True, tiles=0, mode=0o660, gid=993, uevent=True):
        """One PCI GPU with its card and render node (None: no such node)."""
        dev = "sys/devices/pci0000:00/" + bdf
        _write(self.p(dev + "/vendor"), "0x%04x\n" % vendor)
        _write(self.p(dev + "/device"), "0x%04x\n" % device)
        _write(self.p(dev + "/class"), "0x030000\n")
        if uevent:  # as the kernel writes it: no DRIVER line when none is bound
            _write(self.p(dev + "/uevent"), ("DRIVER=%s\n" % driver if driver else "") +
                   "PCI_CLASS=30000\nPCI_ID=%04X:%04X\nPCI_SUBSYS_ID=8086:0000\nPCI_SLOT_NAME=%s\n"
                   "MODALIAS=pci:v%08Xd%08Xsv00008086sd00000000bc03sc00i00\n" % (vendor, device, bdf, vendor, device))
        _link("../../../devices/pci0000:00/" + bdf, self.p("sys/bus/pci/devices/" + bdf))
        if driver:
            os.makedirs(self.p("sys/bus/pci/drivers/" + driver), exist_ok=True)
            _link("../../../bus/pci/drivers/" + driver, self.p(dev + "/driver"))
        for name, minor in (("card%d" % card if card is not None else None, card),
                            ("renderD%d" % render if render is not None else None, render)):
            if name is None:
                continue
            node = dev + "/drm/" + name
            _write(self.p(node + "/dev"), "226:%d\n" % minor)
            _link("../../../" + bdf, self.p(node + "/device"))
            _link("../../devices/pci0000:00/%s/drm/%s" % (bdf, name), self.p("sys/class/drm/" + name))
            _link("../../devices/pci0000:00/%s/drm/%s" % (bdf, name), self.p("sys/dev/char/226:%d" % minor))
            if nodes:
                mknod(self.p("dev/dri/" + name), 226, minor, mode, 0, gid)
            if by_path:
                kind = "render" if name.startswith("render") else "card"
                _link("../" + name, self.p("dev/dri/by-path/pci-%s-%s" % (bdf, kind)))
            if tiles and name.startswith("card"):
                for t in range(tiles):
                    os.makedirs(self.p(node + "/gt/gt%d" % t), exist_ok=True)
        return self

    def add_gpus(self, count, **kw):
        for i in range(count):
            self.add_gpu("0000:%02x:00.0" % (0x18 + i * 0x10), card=i, render=128 + i, **kw)
        return self

    def spec(self, text):
        path = self.p("spec.yaml")
        _write(path, text)
        return path


@contextlib.contextmanager
def shared_root(prefix):
    """A Root that another user (uid 65534 through setpriv) can read: a
    fresh 0755 temp folder, not under pytest's tmp_path, whose 0700 parents
    would keep that user out; removed afterwards."""
    path = tempfile.mkdtemp(prefix=prefix)
    try:
        os.chmod(path, 0o755)
        yield Root(path)
    finally:
        shutil.rmtree(path)


def run(root, *args, env=None, user=None, groups=None):
    """Runs gpugate check with the JSON report; returns (exit code, checks by id, stderr)."""
    cmd = [GPUGATE, "check", "--root", root.path if isinstance(root, Root) else root, "--format", "json", *args]
    if user is not None:
        pre = ["setpriv", "--reuid", str(user), "--regid", str(user)]
        pre += ["--groups", ",".join(str(g) for g in groups)] if groups else ["--clear-groups"]
        cmd = pre + cmd
    base = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    base.update(env or {})
    p = subprocess.run(cmd, capture_output=True, text=True, env=base, timeout=30)
    checks = {}
    if p.stdout.strip():
        # every report a test makes is checked against checks/report.schema.json
        doc = validate_json_text(p.stdout, " ".join(cmd)) if p.returncode in (0, 1) else json.loads(p.stdout)
        checks = {c["id"]: c for c in doc["checks"]}
    return p.returncode, checks, p.stderr


def text_of(check):
    """Everything a user reads about a check: summary, findings, remediation."""
    parts = [check.get("summary", ""), check.get("remediation") or ""]
    parts += finding_texts(check)
    return "\n".join(parts)


if __name__ == "__main__":
    # tests/bench/devices.sh: build an eight-GPU root at argv[1]
    Root(sys.argv[1]).add_gpus(int(sys.argv[2]) if len(sys.argv) > 2 else 8)
