"""Real Debian packages for the tests: a private apt (its own config, lists
and cache under build/debian-archive/SUITE; the host's /etc/apt and
/var/lib/apt are only read, never written) that reads one suite of Debian's
archive, downloads .debs with `apt-get download`, and writes a dpkg
database for them the way dpkg does (each package's control fields from
`dpkg-deb -f`, plus `Status: install ok installed`).

sid's Release can carry a Valid-Until already past on a mirror, so apt runs
with Acquire::Check-Valid-Until=false; the archive's signature is still
checked (Debian's keyring)."""
import glob
import hashlib
import os
import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CACHE = REPO / "build" / "debian-archive"
KEYRING = "/usr/share/keyrings/debian-archive-keyring.gpg"
LISTS_MAX_AGE_S = 24 * 3600  # re-read the index at most daily


def debian_mirror():
    """The Debian archive this machine's apt is configured with (one-line and
    deb822 sources; the entry for any Debian suite with main), or
    deb.debian.org where it has none (an Ubuntu runner). The archive serves
    every suite, so one URL does for bookworm and sid."""
    if os.environ.get("GPUGATE_DEBIAN_MIRROR"):
        return os.environ["GPUGATE_DEBIAN_MIRROR"]
    debian_suites = {"bookworm", "trixie", "forky", "sid", "unstable", "testing", "stable"}
    files = ["/etc/apt/sources.list"] + sorted(glob.glob("/etc/apt/sources.list.d/*.list"))
    for path in files:
        try:
            lines = Path(path).read_text().splitlines()
        except OSError:
            continue
        for line in lines:
            words = re.sub(r"\[[^]]*\]", "", line.split("#")[0]).split()
            if len(words) >= 4 and words[0] == "deb" and words[2] in debian_suites and "main" in words[3:]:
                return words[1]
    for path in sorted(glob.glob("/etc/apt/sources.list.d/*.sources")):
        try:
            text = Path(path).read_text()
        except OSError:
            continue
        for stanza in re.split(r"\n\s*\n", text):
            fields = {}
            for line in stanza.splitlines():
                m = re.match(r"^([A-Za-z-]+):\s*(.*)$", line)
                if m:
                    fields[m.group(1).lower()] = m.group(2).split()
            if ("deb" in fields.get("types", []) and debian_suites & set(fields.get("suites", []))
                    and "main" in fields.get("components", []) and fields.get("uris")):
                return fields["uris"][0]
    return "http://deb.debian.org/debian"


def mirror_reachable(mirror, suite):
    """(True, why) when mirror's Release for suite answers."""
    try:
        with urllib.request.urlopen(f"{mirror.rstrip('/')}/dists/{suite}/Release", timeout=20) as r:
            head = r.read(4096)
            ok = r.status == 200 and (f"Codename: {suite}".encode() in head or f"Suite: {suite}".encode() in head)
            return ok, f"HTTP {r.status}"
    except Exception as e:  # any network failure means: cannot reach it
        return False, str(e)


def native_arch():
    return subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True,
                          check=True).stdout.strip()


def parse_deb822(text):
    """Stanzas of a Packages index or dpkg status file: list of dicts
    (continuation lines kept, joined with newlines)."""
    out = []
    for block in re.split(r"\n\s*\n", text):
        fields, last = {}, None
        for line in block.splitlines():
            if line[:1] in (" ", "\t") and last:
                fields[last] += "\n" + line
            elif ":" in line:
                last, _, value = line.partition(":")
                fields[last] = value.strip()
        if fields:
            out.append(fields)
    return out


class Archive:
    """One suite of Debian's archive, read through a private apt."""

    def __init__(self, suite, mirror=None, arch=None):
        self.suite = suite
        self.mirror = (mirror or debian_mirror()).rstrip("/")
        self.arch = arch or native_arch()
        key = hashlib.sha256(self.mirror.encode()).hexdigest()[:8]  # lists are per mirror
        self.dir = CACHE / f"{suite}-{self.arch}-{key}"
        self.debs = self.dir / "debs"
        self._index = None
        for sub in ("etc/apt.conf.d", "etc/preferences.d", "etc/sources.list.d", "state/lists/partial",
                    "cache/archives/partial", "debs"):
            (self.dir / sub).mkdir(parents=True, exist_ok=True)
        (self.dir / "state" / "status").touch()
        signed = f" [signed-by={KEYRING}]" if Path(KEYRING).exists() else ""
        (self.dir / "etc" / "sources.list").write_text(f"deb{signed} {self.mirror} {suite} main\n")
        d = self.dir
        (d / "etc" / "apt.conf").write_text(
            f'Dir::Etc "{d}/etc";\nDir::Etc::main "apt.conf";\nDir::Etc::Parts "{d}/etc/apt.conf.d";\n'
            f'Dir::Etc::SourceList "{d}/etc/sources.list";\nDir::Etc::SourceParts "{d}/etc/sources.list.d";\n'
            f'Dir::Etc::Preferences "{d}/etc/preferences";\nDir::Etc::PreferencesParts "{d}/etc/preferences.d";\n'
            f'Dir::State "{d}/state";\nDir::State::status "{d}/state/status";\nDir::Cache "{d}/cache";\n'
            f'APT::Architecture "{self.arch}";\nAPT::Architectures {{ "{self.arch}"; }};\n'
            'Acquire::Check-Valid-Until "false";\nAcquire::Languages "none";\n'
            'Acquire::IndexTargets::deb::Contents-deb::DefaultEnabled "false";\n')

    def apt(self, *args, cwd=None, timeout=600):
        env = dict(os.environ, APT_CONFIG=str(self.dir / "etc" / "apt.conf"), LC_ALL="C")
        return subprocess.run(["apt-get", "-q", *args], capture_output=True, text=True, env=env,
                              cwd=cwd, timeout=timeout)

    def reachable(self):
        return mirror_reachable(self.mirror, self.suite)

    def _packages_files(self):
        return sorted((self.dir / "state" / "lists").glob("*_Packages"))

    def update(self):
        """apt-get update, unless the lists were read within a day."""
        files = self._packages_files()
        if files and time.time() - min(f.stat().st_mtime for f in files) < LISTS_MAX_AGE_S:
            return
        r = self.apt("update")
        if r.returncode != 0 or not self._packages_files():
            raise RuntimeError(f"apt-get update for {self.suite} from {self.mirror} failed:\n"
                               f"{r.stdout[-2000:]}{r.stderr[-2000:]}")

    def index(self):
        """name -> the Packages stanza of its newest version in the suite
        (read once per Archive)."""
        if self._index is not None:
            return self._index
        self.update()
        out = {}
        for path in self._packages_files():
            for st in parse_deb822(path.read_text(encoding="utf-8", errors="replace")):
                name = st.get("Package")
                if not name:
                    continue
                if name in out and subprocess.run(["dpkg", "--compare-versions", st["Version"], "le",
                                                   out[name]["Version"]]).returncode == 0:
                    continue
                out[name] = st
        self._index = out
        return out

    def url(self, stanza):
        return f"{self.mirror}/{stanza['Filename']}"

    def download(self, names):
        """{name: path of its .deb} for the suite's version of each name,
        fetched by `apt-get download` once and kept under build/."""
        idx = self.index()
        out, missing = {}, []
        for name in names:
            if name not in idx:
                raise KeyError(f"{name} is not in Debian {self.suite} ({self.arch})")
            path = self.debs / Path(idx[name]["Filename"]).name
            out[name] = path
            if not path.exists():
                missing.append(f"{name}={idx[name]['Version']}")
        if missing:
            r = self.apt("download", *missing, cwd=self.debs)
            if r.returncode != 0:
                raise RuntimeError(f"apt-get download {' '.join(missing)} failed:\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
        for name, path in out.items():
            if not path.exists():  # apt names the file by its own rules (an epoch's ':' as %3a)
                found = sorted(self.debs.glob(f"{name}_*.deb"))
                assert found, f"apt-get download left no {name}_*.deb in {self.debs}"
                out[name] = found[-1]
        return out


def control(deb):
    """The control fields of a .deb, as `dpkg-deb -f` prints them."""
    r = subprocess.run(["dpkg-deb", "-f", str(deb)], capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"dpkg-deb -f {deb}: {r.stderr.strip()}")
    return r.stdout.rstrip("\n")


def status_stanza(control_text):
    """dpkg's status stanza for an installed package: its control fields with
    `Status: install ok installed` after Package (where dpkg writes it)."""
    lines = control_text.splitlines()
    out = []
    for line in lines:
        out.append(line)
        if line.startswith("Package:"):
            out.append("Status: install ok installed")
    return "\n".join(out) + "\n"


def write_dpkg_db(root, controls):
    """A dpkg database under root/var/lib/dpkg holding each control text
    (from control(), or edited) as installed; returns the admin dir."""
    admin = Path(root) / "var" / "lib" / "dpkg"
    for sub in ("info", "updates", "triggers"):
        (admin / sub).mkdir(parents=True, exist_ok=True)
    (admin / "available").touch()
    (admin / "status").write_text("\n".join(status_stanza(c) for c in controls), encoding="utf-8")
    return admin


def dpkg_query(admin, *args):
    """The real dpkg reading the database (it refuses one it cannot parse)."""
    return subprocess.run(["dpkg-query", f"--admindir={admin}", *args], capture_output=True, text=True)


def relation_names(text):
    """Package names of a Depends field (every alternative, no versions)."""
    out = []
    for rel in (text or "").split(","):
        for alt in rel.split("|"):
            name = alt.strip().split(" ")[0].split("(")[0].split(":")[0]
            if name:
                out.append(name)
    return out


def manifest(archive, names, stack, header_comment=""):
    """A `gpugate stack` manifest (src/provision/manifest.c) for the
    suite's version of each name: each .deb's URL in the archive's pool and
    its sha256, both from the Packages index apt verified against the signed
    Release. system_packages: what their Depends name outside the stack
    (less what the stack's packages Provide)."""
    idx = archive.index()
    lines = [header_comment.rstrip("\n")] if header_comment else []
    lines += [f"stack: {stack}",
              f"source: \"{archive.mirror} {archive.suite} main, its Packages index (Filename, SHA256)\"",
              f"architecture: {archive.arch}"]
    outside = set()
    for name in names:
        outside.update(relation_names(idx[name].get("Depends")) + relation_names(idx[name].get("Pre-Depends")))
    provided = {p for name in names for p in relation_names(idx[name].get("Provides"))}
    outside -= set(names) | provided
    lines.append("system_packages: [" + ", ".join(sorted(outside)) + "]")
    lines.append("packages:")
    for name in names:
        st = idx[name]
        lines += [f"  - package: {name}", f"    version: \"{st['Version']}\"", f"    url: {archive.url(st)}",
                  f"    sha256: {st['SHA256']}"]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    # python3 tests/lib/debian_archive.py SUITE STACK-NAME PACKAGE...: prints
    # the manifest of those packages (how images/stacks/debian-*.yaml is made).
    a = Archive(sys.argv[1])
    sys.stdout.write(manifest(a, sys.argv[3:], sys.argv[2]))
