"""Fixture dpkg status stanzas that satisfy a spec's `packages` relations,
for roots that stand in for the XPU image. Every version is checked with
`dpkg --compare-versions` (the real oracle), not by this module."""
import re
import subprocess
from pathlib import Path

import yaml

REL_ALT = re.compile(r"^\s*([a-z0-9][a-z0-9+.-]+)(?::([a-z0-9-]+))?\s*(?:\(\s*(<<|<=|=|>=|>>)\s*([^)\s]+)\s*\))?\s*$")
FIXTURE_MARK = "X-Gpugate-Test-Fixture: yes"


CHECKS = Path(__file__).resolve().parents[2] / "checks"
BUILTIN = ("healthcheck", "ci", "validate")


def spec_packages(path, vendor="intel"):
    """The `packages` relations gpugate applies for path on a GPU of vendor:
    a built-in profile (checks/NAME.yaml) gets the vendor's pins
    (checks/vendor/VENDOR.yaml); a spec with `extends:` and no `packages`
    section gets its profile's (src/profile.c lays them the same way)."""
    path = Path(path)
    with open(path, encoding="utf-8") as f:
        doc = yaml.safe_load(f) or {}
    if "packages" in doc:
        return list(doc["packages"] or [])
    pins = CHECKS / "vendor" / f"{vendor}.yaml"
    if path.resolve().parent == CHECKS and path.stem in BUILTIN and pins.exists():
        return spec_packages(pins)
    if doc.get("extends") in BUILTIN:
        return spec_packages(CHECKS / f"{doc['extends']}.yaml", vendor)
    return []


def parse_relation(text):
    alts = []
    for part in text.split("|"):
        m = REL_ALT.match(part)
        if not m:
            raise ValueError(f"cannot parse package relation {text!r}")
        alts.append((m.group(1), m.group(2), m.group(3), m.group(4)))
    return alts


def dpkg_holds(version, op, wanted):
    ops = {"<<": "lt", "<=": "le", "=": "eq", ">=": "ge", ">>": "gt"}
    return subprocess.run(["dpkg", "--compare-versions", version, ops[op], wanted]).returncode == 0


def fixture_versions(relations):
    """name -> a version satisfying every relation's first alternative."""
    wanted = {}
    for text in relations:
        name, _arch, op, version = parse_relation(text)[0]
        wanted.setdefault(name, [])
        if op:
            wanted[name].append((op, version))
    chosen = {}
    for name, constraints in wanted.items():
        candidates = []
        for op, v in constraints:
            candidates.append({">>": v + "+fixture", "<<": v + "~fixture"}.get(op, v))
        candidates.append("1.0-gpugate.fixture")
        for c in candidates:
            if all(dpkg_holds(c, op, v) for op, v in constraints):
                chosen[name] = c
                break
        else:
            raise ValueError(f"no fixture version of {name} satisfies {constraints}")
    return chosen


def native_arch():
    return subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True,
                          check=True).stdout.strip()


def stanzas(versions, arch=None, overrides=None):
    """dpkg status stanzas, each clearly marked as a test fixture.
    overrides: name -> version (or None to leave the package out)."""
    arch = arch or native_arch()
    merged = dict(versions)
    merged.update(overrides or {})
    out = []
    for name, version in sorted(merged.items()):
        if version is None:
            continue
        out.append(
            f"Package: {name}\n"
            "Status: install ok installed\n"
            "Priority: optional\n"
            "Section: libs\n"
            "Installed-Size: 1\n"
            "Maintainer: gpugate test fixture <fixture@invalid>\n"
            f"Architecture: {arch}\n"
            f"Version: {version}\n"
            f"{FIXTURE_MARK}\n"
            "Description: TEST FIXTURE, not a real package (gpugate tests)\n"
            " Stands in for a package that images/xpu.Dockerfile installs from\n"
            " ppa:kobuk-team/intel-graphics, so that the pinned relations hold.\n")
    return "\n".join(out)
