"""`--root` never mixes worlds (issue 31 item 3): the runtime checks load the
root's own loader and driver (the real Debian loader copied into the root,
the fake Level Zero driver installed there under the Intel driver's soname),
or, with no loader in the root, fail saying the root has none: never this
machine's system library (only what LD_LIBRARY_PATH names on purpose). Paths are named the same way in every check: where gpugate read
them, ROOT/... under --root."""
import json
import os
import shutil

import pytest

from conftest import run_gpugate, write
from test_runtime import FAKE

LIBDIR = "usr/lib/x86_64-linux-gnu"
HOST_LOADER = os.path.realpath(f"/{LIBDIR}/libze_loader.so.1")
SPEC = "runtime:\n  backend: level-zero\n"


def root_with_stack(tmp_path, driver=True, listed=True):
    """A root holding the loader (a copy of Debian's) and, with driver, the
    test driver as libze_intel_gpu.so.1; its dpkg database owns the loader."""
    if not os.path.exists(HOST_LOADER):
        pytest.fail(f"the Level Zero loader {HOST_LOADER} is not installed (.ci/install-deps: libze1)")
    root = tmp_path / "root"
    lib = root / LIBDIR
    lib.mkdir(parents=True)
    name = os.path.basename(HOST_LOADER)
    shutil.copy(HOST_LOADER, lib / name)
    os.symlink(name, lib / "libze_loader.so.1")
    if driver:
        shutil.copy(FAKE, lib / "libze_intel_gpu.so.1")
    write(str(root / "var/lib/dpkg/status"),
          "Package: libze1\nStatus: install ok installed\nArchitecture: amd64\nVersion: 1.8.12-1\nDescription: x\n")
    if listed:
        write(str(root / "var/lib/dpkg/info/libze1:amd64.list"), f"/.\n/{LIBDIR}\n/{LIBDIR}/{name}\n")
    return root


def check(tmp_path, root, spec=SPEC, **env_extra):
    env = {k: v for k, v in os.environ.items()
           if k not in ("ZE_ENABLE_ALT_DRIVERS", "GPUGATE_FAKE_FAULT", "LD_LIBRARY_PATH")}
    env.update(XDG_RUNTIME_DIR=str(tmp_path), **env_extra)
    env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":handle_segv=0").lstrip(":")
    path = write(str(tmp_path / "spec.yaml"), spec)
    return run_gpugate("--spec", path, "--root", str(root), "--format", "json", env=env)


def test_the_probe_loads_the_roots_loader_and_driver(tmp_path):
    root = root_with_stack(tmp_path)
    real_root = os.path.realpath(root)
    r = check(tmp_path, root)
    assert r.rc == 0, r
    loader = r.check("runtime.loader")
    result = loader["details"]["probes"][0]["result"]
    assert result["library"] == f"{real_root}/{LIBDIR}/{os.path.basename(HOST_LOADER)}", result
    # the root's driver, found beside the root's loader (not this machine's libze_intel_gpu.so.1)
    assert result["driver_library"] == f"{real_root}/{LIBDIR}/libze_intel_gpu.so.1", result
    # the root's package database owns the root's loader; nothing "shadows" anything
    prov = loader["details"]["provenance"][0]
    assert prov["loader_package"] == "libze1 1.8.12-1", prov
    assert "shadows" not in json.dumps(r.json()), r
    assert f"level-zero: {real_root}/{LIBDIR}/" in loader["summary"], loader


def test_a_root_without_a_driver_never_gets_this_machines(tmp_path):
    """The root's loader with no driver beside it: zeInit finds none, rather
    than the loader picking up this machine's Intel driver."""
    root = root_with_stack(tmp_path, driver=False)
    r = check(tmp_path, root)
    assert r.rc == 1, r
    result = r.check("runtime.loader")["details"]["probes"][0]["result"]
    assert "driver_library" not in result, result
    assert result["error"] == "ZE_RESULT_ERROR_UNINITIALIZED", result


def test_a_root_without_a_loader_fails_naming_the_root_and_starts_no_probe(tmp_path):
    root = tmp_path / "root"
    write(str(root / "var/lib/dpkg/status"), "")
    # the test driver in the environment would pass if this machine's loader were used
    r = check(tmp_path, root, ZE_ENABLE_ALT_DRIVERS=FAKE)
    assert r.rc == 1, r
    loader = r.check("runtime.loader")
    assert loader["status"] == "fail", loader
    assert loader["summary"].startswith(f"no GPU runtime library is installed under --root {root}: "
                                        "looked for libze_loader.so.1"), loader
    assert "probes" not in loader.get("details", {}), loader


def test_paths_are_named_where_they_were_read(tmp_path):
    """hf.location and the devices checks both name ROOT/...: one rule."""
    root = root_with_stack(tmp_path)
    (root / "root/.cache/huggingface/hub").mkdir(parents=True)
    spec = "devices:\n  min_gpus: 1\nhf:\n  require_mount: false\n"
    r = check(tmp_path, root, spec=spec, HOME="/root")
    hf = r.check("hf.location")
    assert hf["summary"].startswith(f"hub cache {root}/root/.cache/huggingface/hub "), hf
    gpus = r.check("devices.gpus")
    assert f"{root}/" in gpus["summary"], gpus
    # and no summary names the cache without its root
    for c in r.json()["checks"]:
        assert " /root/.cache" not in c["summary"], c
