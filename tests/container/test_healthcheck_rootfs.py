"""Container-level test: the XPU image's HEALTHCHECK, run as Docker would run
it, inside the root filesystem of the image buildah built (no Docker engine).

1. The image: images/xpu.Dockerfile built with buildah (conftest.py), its
   `stack` stage replaced by the Debian 12 stand-in (Debian's Level Zero
   loader and the test driver tests/fakes/fake_ze.c); its root is exported
   to a temp folder. Fixture dpkg stanzas (marked as test fixtures) stand for
   the Intel stack every pinned spec asks for, which Debian does not have.
2. "docker run" + HEALTHCHECK: container-run.sh in new mount and pid
   namespaces (unshare), the HEALTHCHECK argv, USER, ENV and WORKDIR read
   from the built image's config, under chroot, with /dev/dri nodes (mknod),
   by-path links, a fixture /sys and a tmpfs HF cache. Asserted: exit code,
   verdict, at most 4096 bytes of output, time well under the HEALTHCHECK
   timeout, no file written.
"""
import hashlib
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "lib"))
import debfixture  # noqa: E402
import dockerfile  # noqa: E402
import harness  # noqa: E402
from conftest import GPUGATE  # noqa: E402
# Kept importable from here for the other container tests (test_deb_install.py).
import rootfs  # noqa: E402

DOCKER_PATH, debian_mirror, mirror_reachable, rootfs_tarball = (
    rootfs.DOCKER_PATH, rootfs.debian_mirror, rootfs.mirror_reachable, rootfs.rootfs_tarball)

DOCKERFILE = REPO / "images" / "xpu.Dockerfile"
PCI, sysfs_tree = harness.PCI, harness.sysfs_tree  # one GPU fixture for both container tests


def hf_seed(seed):
    """A one-repo hub cache as huggingface_hub lays it out: a regular file's
    blob is named by its git blob id, an LFS file's by its SHA-256."""
    repo = seed / "hub" / "models--gpugate-fixture--tiny"
    (repo / "blobs").mkdir(parents=True)
    commit = "0123456789abcdef0123456789abcdef01234567"
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    snap = repo / "snapshots" / commit
    snap.mkdir(parents=True)
    config = b'{"model_type": "gpugate-fixture"}\n'
    weights = bytes(range(256)) * 64
    cfg_id = subprocess.run(["git", "hash-object", "--stdin"], input=config, capture_output=True,
                            check=True).stdout.decode().strip() if shutil.which("git") else \
        hashlib.sha1(b"blob %d\0" % len(config) + config).hexdigest()
    for name, blob, data in (("config.json", cfg_id, config),
                             ("model.safetensors", hashlib.sha256(weights).hexdigest(), weights)):
        (repo / "blobs" / blob).write_bytes(data)
        (snap / name).symlink_to(f"../../blobs/{blob}")


@pytest.fixture(scope="module")
def image(built, tmp_path_factory):
    """The built XPU image's root and the settings `docker run` takes from
    its config."""
    rec = built["records"]["xpu"]
    for step in ("builder", "standin", "image"):
        r = rec["runs"].get(step)
        assert r is not None and r.returncode == 0, f"the XPU image did not build ({step}); see test_image_build.py"
    base = tmp_path_factory.mktemp("xpu-image")
    root = built["buildah"].export_root(rec["image"], base / "rootfs")
    config = rec["inspect"]["Docker"]["config"]

    # The specs the image pins, where its COPY lines put them.
    specs = {f"/etc/gpugate/{p.name}": p for p in sorted((root / "etc/gpugate").glob("*.yaml"))}
    # The Intel stack every spec the image runs asks for, as fixture stanzas.
    relations = debfixture.spec_packages(REPO / "checks" / "healthcheck.yaml")
    for spec in specs.values():
        relations += debfixture.spec_packages(spec)
    versions = debfixture.fixture_versions(relations)
    status = root / "var/lib/dpkg/status"
    real = status.read_text()
    # A pinned package the stand-in really has (Debian's libze1 loader, older
    # than the Intel pins) gives way to its fixture stanza; its files stay.
    real = "\n\n".join(s for s in re.split(r"\n\n+", real.strip())
                        if re.search(r"^Package: (\S+)", s, re.M).group(1) not in versions)
    status.write_text(real.rstrip("\n") + "\n\n" + debfixture.stanzas(versions))
    q = subprocess.run(["dpkg-query", f"--admindir={root}/var/lib/dpkg", "-W",
                        "-f", "${Package} ${Version} ${db:Status-Abbrev}\n", *sorted(versions)],
                       capture_output=True, text=True)
    assert q.returncode == 0, q.stderr
    got = {line.split()[0]: line.split()[1:] for line in q.stdout.splitlines()}
    assert got == {n: [v, "ii"] for n, v in versions.items()}, "dpkg reads the fixture stanzas differently"

    fix = base / "fixture"
    img = harness.image_from_config(root, config, fix)
    (fix / "by-path").mkdir(parents=True)
    (fix / "by-path" / f"pci-{PCI}-card").symlink_to("../card0")
    (fix / "by-path" / f"pci-{PCI}-render").symlink_to("../renderD128")
    sysfs_tree(fix / "sys")
    shutil.rmtree(fix / "hf-seed")
    hf_seed(fix / "hf-seed")
    assert (root / img["hf_target"].lstrip("/")).is_dir(), f"{img['hf_target']} is not in the image"

    hc = config["Healthcheck"]
    assert hc["Test"][0] == "CMD", hc
    img["env"]["ZE_ENABLE_ALT_DRIVERS"] = rec["test_driver"]
    named = img["named_groups"]
    img.update({
        "healthcheck": hc["Test"][1:], "timeout": hc["Timeout"] / 1e9,
        "render_gid": named["render"], "video_gid": named["video"], "specs": specs, "versions": versions,
        "render_gid_arg": dockerfile.arg_defaults(dockerfile.stages(
            dockerfile.parse(DOCKERFILE.read_text()))[-1]).get("RENDER_GID"),
    })
    yield img
    shutil.rmtree(base, ignore_errors=True)


def container(image, argv, by_path=True, status_override=None):
    return harness.container(image, argv, by_path=by_path, status_override=status_override)


def profile_checks(profile):
    """The check ids a built-in profile runs, from `gpugate list` ("NAME
    DESCRIPTION: id, id, ..."; ids hold no ': ')."""
    out = subprocess.run([str(GPUGATE), "list"], capture_output=True, text=True, check=True).stdout
    m = re.search(rf"^\s*{profile}\s+.*?: ([a-z_.]+(?:, [a-z_.]+)*)$", out, re.M)
    assert m, out
    return m.group(1).split(", ")


def assert_probe_contract(image, out, inside, elapsed, rootfs_changed, hf_changed):
    timeout = image["timeout"]
    assert len(out) <= 4096, f"{len(out)} bytes of output; Docker keeps 4096"
    assert inside < timeout / 5, f"the health check took {inside:.2f} s of a {timeout:.0f} s timeout"
    assert elapsed < timeout / 2, f"the container run took {elapsed:.2f} s of a {timeout:.0f} s timeout"
    assert not rootfs_changed, f"the health check wrote in the root filesystem: {rootfs_changed[:20]}"
    assert not hf_changed, f"the health check wrote in the HF cache: {hf_changed[:20]}"


def test_image_has_what_the_healthcheck_needs(image):
    assert image["healthcheck"][0] == "gpugate"
    assert image["user"] != "root" and image["uid"] != "0"
    assert image["render_gid"] in image["groups"] and image["video_gid"] in image["groups"]
    # the Dockerfile's RUN line gave `render` the build argument's GID
    assert str(image["render_gid"]) == image["render_gid_arg"]
    status = (image["root"] / "var/lib/dpkg/status").read_text()
    assert status.count(debfixture.FIXTURE_MARK) == len(image["versions"])
    print(f"fixture stanzas for {sorted(image['versions'])}")


def test_healthcheck_is_healthy(image):
    rc, out, inside, elapsed, changed, hf_changed = container(image, image["healthcheck"])
    text = out.decode(errors="replace")
    assert rc == 0, f"exit {rc}:\n{text}"
    assert re.match(r"gpugate: HEALTHY \(profile healthcheck\)", text), text
    assert_probe_contract(image, out, inside, elapsed, changed, hf_changed)
    print(f"healthy: exit 0, {len(out)} bytes, {inside * 1000:.1f} ms inside, {elapsed * 1000:.0f} ms in all")


def test_healthcheck_verdict_covers_the_profile(image):
    rc, out, inside, elapsed, changed, hf_changed = container(image, image["healthcheck"] + ["--format", "json"])
    assert rc == 0, out.decode(errors="replace")
    report = json.loads(out)
    assert report["verdict"] == "pass" and report["profile"] == "healthcheck"
    ran = [c["id"] for c in report["checks"]]
    assert sorted(ran) == sorted(profile_checks("healthcheck"))
    assert all(c["status"] in ("pass", "warn", "skip") for c in report["checks"]), report["checks"]
    assert not changed and not hf_changed


def test_without_by_path_healthcheck_warns_and_ci_gate_fails(image):
    """Issue 3's policy: the healthcheck profile warns when /dev/dri/by-path
    is missing (the Intel driver still finds renderD128..191 by its fallback),
    and the ci pre-test gate, run in the same container, fails (exit 1)."""
    if not any(c.startswith("devices.") for c in profile_checks("healthcheck")):
        pytest.skip("the healthcheck profile has no devices checks yet")
    rc, out, inside, elapsed, changed, hf_changed = container(image, image["healthcheck"], by_path=False)
    text = out.decode(errors="replace")
    assert rc == 0, f"exit {rc} without /dev/dri/by-path:\n{text}"
    assert "WARN  devices.by_path" in text and "-v /dev/dri/by-path:/dev/dri/by-path" in text, text
    assert_probe_contract(image, out, inside, elapsed, changed, hf_changed)
    gate = ["gpugate", "check", "--profile", "ci", "--only", "devices"]
    rc, out, *_ = container(image, gate, by_path=False)
    text = out.decode(errors="replace")
    assert rc == 1, f"exit {rc} of the ci gate without /dev/dri/by-path:\n{text}"
    assert text.startswith("gpugate: UNHEALTHY") and "FAIL  devices.by_path" in text, text


def test_healthcheck_with_a_half_upgraded_driver_is_unhealthy(image, tmp_path):
    # libze-intel-gpu1 from an older release than the pins: a broken image.
    status = (image["root"] / "var/lib/dpkg/status").read_text()
    broken = re.sub(r"(Package: libze-intel-gpu1\n(?:.+\n)*?Version: ).*", r"\g<1>23.43.27642.40-1ubuntu3", status)
    assert broken != status
    (tmp_path / "status").write_text(broken)
    rc, out, inside, elapsed, changed, hf_changed = container(image, image["healthcheck"],
                                                              status_override=tmp_path / "status")
    text = out.decode(errors="replace")
    assert rc == 1, text
    assert text.startswith("gpugate: UNHEALTHY") and "libze-intel-gpu1" in text and "too old" in text, text
    assert_probe_contract(image, out, inside, elapsed, changed, hf_changed)


def test_pinned_specs_are_healthy_in_the_image(image):
    assert image["specs"], "xpu.Dockerfile pins no spec in /etc/gpugate/"
    for dest in image["specs"]:
        rc, out, inside, elapsed, changed, hf_changed = container(image, ["gpugate", "check", "--spec", dest])
        assert rc == 0, f"{dest}: exit {rc}:\n{out.decode(errors='replace')}"
        assert_probe_contract(image, out, inside, elapsed, changed, hf_changed)


# The harness itself: it must see what the image's user sees in a real
# container, and catch a write, or the assertions above prove nothing.
def test_container_looks_like_docker_run(image):
    script = ("id -u; id -G; ls /dev/dri; readlink /dev/dri/by-path/pci-%s-render; "
              "cat /sys/class/drm/renderD128/device/vendor; readlink /sys/class/drm/renderD128/device/driver; "
              "test -r /dev/dri/renderD128 -a -w /dev/dri/renderD128 && echo render-rw; "
              "stat -c %%t:%%T /dev/dri/renderD128; ls $HF_HOME/hub; "
              "touch /etc/x 2>/dev/null || echo no-root-write" % PCI)
    rc, out, *_ = container(image, ["sh", "-c", script])
    lines = out.decode().split("\n")
    assert rc == 0, out
    assert lines[0] == image["uid"] and str(image["render_gid"]) in lines[1].split()
    assert "by-path" in lines[2:6] and "renderD128" in lines[2:6] and "card0" in lines[2:6]
    assert "../renderD128" in lines and "0x8086" in lines and any(x.endswith("/i915") for x in lines)
    assert "render-rw" in lines and "e2:80" in lines, out  # 226:128 in hex, as stat prints it
    assert "models--gpugate-fixture--tiny" in lines and "no-root-write" in lines
    rc, out, *_ = container(image, ["ls", "/dev/dri"], by_path=False)
    assert rc == 0 and "by-path" not in out.decode().split(), out


def test_harness_catches_writes(image):
    rc, out, inside, elapsed, changed, hf_changed = container(
        image, ["sh", "-c", "echo x > /tmp/gpugate-probe-write && echo x > $HF_HOME/stray"])
    try:
        assert rc == 0, out
        assert "tmp/gpugate-probe-write" in changed and "tmp" in changed
        assert any("stray" in line for line in hf_changed)
    finally:
        (image["root"] / "tmp" / "gpugate-probe-write").unlink(missing_ok=True)
