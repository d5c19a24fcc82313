"""One build of images/*.Dockerfile per test session, shared by
test_image_build.py and test_healthcheck_rootfs.py (images.py says how)."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1] / "tests" / "lib"))
import dockerfile  # noqa: E402
import images  # noqa: E402
import rootfs  # noqa: E402

REPO = images.REPO
DOCKERFILES = sorted((REPO / "images").glob("*.Dockerfile"))
GPUGATE = Path(os.environ.get("GPUGATE", REPO / "build" / "gpugate"))
# What the stand-in installs from the stack stage's list besides the
# libraries the executables link, and why gpugate needs it at run time.
STACK_EXTRAS = {
    "libze1": "the Level Zero loader gpugate dlopens (src/backend/ze.c)",
    "ca-certificates": "gpugate-provision's HTTPS (hf fetch)",
}
TEST_DRIVER = "libze_fake.so"  # tests/fakes/fake_ze.c, built by the Makefile


def stage_list(path):
    """(alias or None, base, instructions) of each stage, in order."""
    out = []
    for stage in dockerfile.stages(dockerfile.parse(path.read_text(encoding="utf-8"))):
        words = stage[0].rest.split()
        alias = words[2] if len(words) >= 3 and words[1].upper() == "AS" else None
        out.append((alias, words[0], stage))
    return out


def multiarch():
    return subprocess.run(["gcc", "-print-multiarch"], capture_output=True, text=True,
                          check=True).stdout.strip()


def linked_packages(b, image):
    """The Debian packages owning each library the three executables in the
    builder's /out link (their DT_NEEDED sonames)."""
    script = ("for f in /out/usr/local/bin/gpugate /out/usr/local/libexec/gpugate/gpugate-provision "
              "/out/usr/local/libexec/gpugate/gpugate-serve; do "
              "objdump -p \"$f\" | awk '$1 == \"NEEDED\" {print $2}'; done | sort -u > /tmp/needed; "
              "while read -r so; do echo \"SO $so\"; dpkg -S \"*/$so\" || true; done < /tmp/needed")
    r = b.run(image, script)
    assert r.returncode == 0, images.tail(r)
    sonames, owners = [], {}
    for line in r.stdout.splitlines():
        if line.startswith("SO "):
            sonames.append(line[3:])
            continue
        pkgs, _, path = line.partition(": ")
        for so in sonames:
            if path.rsplit("/", 1)[-1] == so:
                owners.setdefault(so, set()).update(p.strip().split(":")[0] for p in pkgs.split(","))
    assert sonames, f"no NEEDED entries read:\n{images.tail(r)}"
    missing = [so for so in sonames if so not in owners]
    assert not missing, f"no package owns {missing} in the builder:\n{images.tail(r)}"
    return sonames, owners


def build_one(b, path, base_packages, scratch):
    name = path.name.split(".")[0]
    out = {"name": name, "path": path, "stages": stage_list(path), "runs": {}}
    aliases = {alias: stage for alias, _, stage in out["stages"] if alias}
    assert "builder" in aliases and "stack" in aliases, f"{path.name}: stages builder and stack expected"

    out["builder"] = f"localhost/gpugate-test/{name}-builder"
    r = b.bud(path, out["builder"], f"{name}-builder.log", target="builder")
    out["runs"]["builder"] = r
    if r.returncode != 0:
        return out

    sonames, owners = linked_packages(b, out["builder"])
    linked = set().union(*owners.values())
    out["sonames"], out["owners"] = sonames, owners
    out["linked"] = sorted(linked - base_packages)
    out["stack_list"] = [images.debian_name(p) for p in images.apt_packages(aliases["stack"])]
    # What the stack stage installs that gpugate needs, under Debian's names;
    # a library missing from the stack list is then missing in the image too.
    out["standin_packages"] = sorted(p for p in set(out["stack_list"]) if p in out["linked"] or p in STACK_EXTRAS)
    extras = {p for p in STACK_EXTRAS if p in out["stack_list"]}

    ctx = scratch / f"{name}-standin"
    if "libze1" in extras:
        fake = GPUGATE.parent / "fakes" / TEST_DRIVER
        dest = ctx / "usr" / "lib" / multiarch() / TEST_DRIVER
        dest.parent.mkdir(parents=True)
        shutil.copy2(fake, dest)
        out["test_driver"] = "/" + str(dest.relative_to(ctx))
    else:
        (ctx / "usr/share/gpugate-test").mkdir(parents=True)
        (ctx / "usr/share/gpugate-test/README").write_text("no test driver in this stand-in\n")
    out["standin"] = f"localhost/gpugate-test/{name}-stack-standin"
    r = b.bud(images.STANDIN, out["standin"], f"{name}-standin.log",
              build_args=[f"PACKAGES={' '.join(out['standin_packages'])}"], context=ctx)
    out["runs"]["standin"] = r
    if r.returncode != 0:
        return out

    out["image"] = f"localhost/gpugate-test/{name}"
    r = b.bud(path, out["image"], f"{name}-image.log", contexts=[("stack", out["standin"])])
    out["runs"]["image"] = r
    if r.returncode == 0:
        out["inspect"] = b.inspect(out["image"])
    return out


@pytest.fixture(scope="session")
def built(tmp_path_factory):
    """{name: build record} for every images/*.Dockerfile, plus the buildah."""
    for tool in ("buildah", "unshare", "objdump"):
        if not shutil.which(tool):
            pytest.skip(f"{tool} is not installed (.ci/install-deps installs it)")
    tarball = rootfs.rootfs_tarball()  # skips, saying why, offline or not root
    # The builds' apt-get uses the mirror debootstrap wrote in the root's
    # sources.list (the one the tarball is named after).
    mirror = rootfs.debian_mirror()
    ok, why = rootfs.mirror_reachable(mirror)
    if not ok:
        pytest.skip(f"the image builds' apt-get cannot reach the Debian archive {mirror}: {why}")
    scratch = tmp_path_factory.mktemp("buildah")
    with images.lock():
        b = images.Buildah(scratch)
        imported = b.import_base(tarball)
        # Images a previous run's tags moved away from (dangling); the layer
        # cache (intermediate images, with children) stays.
        b("rmi", "--prune")
        r = b.run(images.BASE, "dpkg-query -W -f '${Package}\\n'")
        assert r.returncode == 0, images.tail(r)
        base_packages = set(r.stdout.split())
        records = {}
        for path in DOCKERFILES:
            rec = build_one(b, path, base_packages, scratch)
            records[rec["name"]] = rec
    yield {"buildah": b, "records": records, "tarball": tarball, "imported": imported,
           "base_packages": base_packages}
