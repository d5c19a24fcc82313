"""images/xpu.Dockerfile and images/cuda.Dockerfile, built for real with
Debian's buildah (conftest.py, images.py): every stage whose base can be
made here is built from the Dockerfile as written; the `stack` stage, whose
base cannot be had here, is named as not built and replaced by a Debian 12
stand-in that installs the same libraries under their Debian names. The
image's HEALTHCHECK is read from the built image's config and run inside the
image's root with no GPU, where every shipped spec must fail."""
import pytest

import conftest
import harness
import images

NAMES = [p.name.split(".")[0] for p in conftest.DOCKERFILES]
STAGES = [(p.name.split(".")[0], i, alias or f"stage{i}", base)
          for p in conftest.DOCKERFILES for i, (alias, base, _) in enumerate(conftest.stage_list(p))]
WHY_NOT_HERE = {
    "ubuntu:24.04": "Ubuntu's archive and ppa:kobuk-team/intel-graphics are not reachable from the CI machine",
    "nvidia/cuda": "NVIDIA's CUDA base image cannot be pulled here (only Debian's archive is reachable)",
}
EXECUTABLES = ["/usr/local/bin/gpugate", "/usr/local/libexec/gpugate/gpugate-provision",
               "/usr/local/libexec/gpugate/gpugate-serve"]


def record(built, name):
    return built["records"][name]


def require(rec, step):
    r = rec["runs"].get(step)
    assert r is not None, f"{rec['name']}: {step} was not built: an earlier step failed"
    assert r.returncode == 0, (f"{rec['name']}: buildah bud ({step}) exited {r.returncode}; "
                               f"log in build/image-cache/logs:\n{images.tail(r)}")
    return r


def test_base_is_the_debootstrap_root(built):
    b = built["buildah"]
    labels = b.inspect(images.BASE)["OCIv1"]["config"].get("Labels") or {}
    assert labels.get(images.BASE_LABEL) == built["tarball"].name
    print(f"{images.BASE}: {'imported now' if built['imported'] else 'cached'} from {built['tarball'].name}"
          f" ({b.driver} storage in {b.root})")


@pytest.mark.parametrize("name,index,stage,base", STAGES, ids=[f"{n}-{s}" for n, _, s, _ in STAGES])
def test_stage(built, name, index, stage, base):
    """Each stage is built, or named here with the reason it is not."""
    rec = record(built, name)
    aliases = {a for a, _, _ in rec["stages"] if a}
    if base in images.MADE_HERE or base in aliases:
        step = "builder" if stage == "builder" else "image"
        r = require(rec, step)
        print(f"{name} {stage} (FROM {base}): built in {r.seconds:.0f} s")
        return
    why = next((v for k, v in WHY_NOT_HERE.items() if base.startswith(k)), "its base is not made here")
    pytest.skip(f"{name}.Dockerfile stage {stage} (FROM {base}) not built here: {why}; "
                f"the stages after it are built on a Debian 12 stand-in ({', '.join(rec.get('standin_packages', []))})")


@pytest.mark.parametrize("name", NAMES)
def test_builder_makes_both_executables_from_a_small_context(built, name):
    rec = record(built, name)
    require(rec, "builder")
    b = built["buildah"]
    check = " && ".join(f"test -x /out{e}" for e in EXECUTABLES)
    # .dockerignore: no git metadata, no host build/ (its rootfs cache alone is 200 MB)
    r = b.run(rec["builder"], f"{check} && /out/usr/local/bin/gpugate --version && test ! -e /src/.git "
                              "&& test ! -e /src/build/rootfs-cache && test ! -e /src/build/image-cache "
                              "&& du -sk /src")
    assert r.returncode == 0, images.tail(r)
    assert r.stdout.startswith("gpugate "), r.stdout
    print(f"{name} builder: {r.stdout.split()[0]} {r.stdout.split()[1]}, /src {int(r.stdout.split()[-2]) // 1024} MiB")


@pytest.mark.parametrize("name", NAMES)
def test_stack_installs_what_the_executables_link(built, name):
    """Every library package the executables link (beyond the base) is in
    the stack stage's apt-get list (under its Ubuntu 24.04 name)."""
    rec = record(built, name)
    require(rec, "builder")
    missing = [p for p in rec["linked"] if p not in rec["stack_list"]]
    assert not missing, f"{name}.Dockerfile's stack stage does not install {missing} (linked: {rec['owners']})"
    print(f"{name}: executables link {rec['sonames']}; the stack installs {rec['linked']}")


@pytest.mark.parametrize("name", NAMES)
def test_image_runs_gpugate_and_its_provision_executable(built, name):
    rec = record(built, name)
    require(rec, "standin")
    require(rec, "image")
    b = built["buildah"]
    # As the image's USER: the libraries resolve, gpugate finds
    # gpugate-provision where it looks (src/provision_exec.c) and the bundle
    # it writes (libarchive) reads back.
    script = ("set -e; id -un; for f in " + " ".join(EXECUTABLES) + "; do test -x $f; "
              "! ldd $f | grep 'not found'; done; command -v gpugate; gpugate --version; "
              "gpugate bundle -o /tmp/b.tar.gz; tar -tzf /tmp/b.tar.gz | grep -c ^gpugate-bundle/")
    r = b.run(rec["image"], script)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert "needs gpugate-provision" not in out
    lines = r.stdout.split()
    user = rec["inspect"]["Docker"]["config"]["User"]
    assert lines[0] == user and user != "root", out
    assert "/usr/local/bin/gpugate" in lines and int(lines[-1]) > 5, out


@pytest.mark.parametrize("name", NAMES)
def test_healthcheck_in_the_image_config(built, name):
    rec = record(built, name)
    require(rec, "image")
    hc = rec["inspect"]["Docker"]["config"].get("Healthcheck")
    assert hc, f"{name}: the built image has no HEALTHCHECK (buildah needs --format docker)"
    assert hc["Test"][0] == "CMD" and hc["Test"][1] == "gpugate", f"exec form running gpugate: {hc['Test']}"
    assert 0 < hc["Timeout"] <= hc["Interval"] and hc["Retries"] >= 1, hc


@pytest.mark.parametrize("name", NAMES)
def test_healthcheck_fails_without_a_gpu(built, name, tmp_path):
    """The image's own HEALTHCHECK (from its config), in its root, on a host
    with no GPU (no /dev/dri, empty /sys): UNHEALTHY, exit 1, not a usage
    error, within what Docker keeps and well inside the timeout."""
    rec = record(built, name)
    require(rec, "image")
    b = built["buildah"]
    config = rec["inspect"]["Docker"]["config"]
    root = b.export_root(rec["image"], tmp_path / "root")
    image = harness.image_from_config(root, config, tmp_path / "fix")
    argv = config["Healthcheck"]["Test"][1:]
    rc, out, inside, elapsed, changed, hf_changed = harness.container(image, argv)
    text = out.decode(errors="replace")
    assert rc == 1, f"exit {rc} with no GPU:\n{text}"
    assert text.startswith("gpugate: UNHEALTHY"), text
    assert len(out) <= 4096
    assert inside < config["Healthcheck"]["Timeout"] / 1e9 / 2
    assert not changed and not hf_changed, (changed[:20], hf_changed[:20])
    print(f"{name}: {' '.join(argv)} -> exit 1, {len(out)} bytes, {inside * 1000:.0f} ms: {text.splitlines()[0]}")
