"""CUDA_VISIBLE_DEVICES: the devices check and the runtime probe give the
driver's answer under every value the real driver was asked
(tests/vectors/cuda-visible-devices.tsv, recorded by tests/device/cuda_visible.py
on an H100 with driver 580). One run each: devices.visibility over a
one-GPU container root whose /proc/driver/nvidia names the test driver's GPU 0
UUID, and runtime.devices through the test driver (tests/fakes/fake_libcuda.c,
which reads the variable with gpugate's parser, src/vendor/cuda_visible.c)."""
import json
import os
import re

import pytest

from gpufixture import Root, mknod, run

HERE = os.path.dirname(os.path.abspath(__file__))
VECTORS = os.path.join(HERE, "..", "vectors", "cuda-visible-devices.tsv")
FAKE_CUDA = os.path.join(os.path.dirname(os.environ.get("GPUGATE", "build/gpugate")), "tests", "fake_cuda")
UUID0 = "GPU-abababab-abab-abab-abab-ababababab00"  # the test driver's GPU 0


def vectors():
    out = []
    for line in open(VECTORS):
        if line.startswith("#"):
            continue
        template, answer, why = line.rstrip("\n").split("\t")
        out.append((json.loads(template), answer, why))
    return out


def expand(template):
    """{uuid0}, {UUID0}, {hex0}, {uuid0:N}: tests/device/cuda_visible.py's placeholders."""
    def one(m):
        kind, cut = m.group(1), m.group(2)
        u = UUID0[4:] if kind == "hex" else UUID0
        if kind == "UUID":
            u = "GPU-" + u[4:].upper()
        return u[: int(cut)] if cut else u
    return re.sub(r"\{(uuid|UUID|hex)0(?::(\d+))?\}", one, template)


def test_the_vectors_are_whole():
    assert len(vectors()) >= 45  # an empty or cut file would pass everything below


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    root = Root(tmp_path_factory.mktemp("cuda-visible"))
    bdf = "0000:1a:00.0"
    os.makedirs(root.p("proc/driver/nvidia/gpus/" + bdf))
    with open(root.p("proc/driver/nvidia/gpus/%s/information" % bdf), "w") as f:
        f.write("Model: \t\t Fake GPU 0\nGPU UUID: \t %s\nBus Location: \t %s\nDevice Minor: \t 0\n" % (UUID0, bdf))
    mknod(root.p("dev/nvidia0"), 195, 0, 0o666)
    mknod(root.p("dev/nvidiactl"), 195, 255, 0o666)
    mknod(root.p("dev/nvidia-uvm"), 511, 0, 0o666)
    return root


@pytest.mark.parametrize("template,answer,why", vectors(), ids=[v[0] or "empty" for v in vectors()])
def test_devices_check_and_probe_give_the_drivers_answer(root, template, answer, why):
    value = expand(template)
    shown = 0 if answer == "none" else len(answer.split(","))
    spec = root.spec("devices:\n  vendor: nvidia\nruntime:\n  backend: cuda\n")
    env = {"CUDA_VISIBLE_DEVICES": value, "LD_LIBRARY_PATH": FAKE_CUDA, "FAKE_CUDA_DEVICES": "1",
           "XDG_RUNTIME_DIR": root.p("run")}
    rc, checks, err = run(root, "--spec", spec, "--only", "devices.visibility,runtime.loader,runtime.devices",
                          env=env)
    assert rc == (1 if shown == 0 else 0), err
    vis, loader, dev = checks["devices.visibility"], checks["runtime.loader"], checks["runtime.devices"]
    assert vis["details"]["cuda_devices"] == shown, (value, why, vis)
    assert (vis["status"] == "fail") == (shown == 0), (value, why, vis)
    if shown == 0:  # the probe's cuInit found no device
        assert loader["status"] == "fail" and "CUDA_ERROR_NO_DEVICE" in loader["summary"], (value, why, loader)
    else:
        assert dev["status"] == "pass" and len(dev["details"]["devices"]) == shown, (value, why, dev)
