"""The probe child's library loading (src/lib/dynlib.c, shared by the Level
Zero, CUDA, NVML and libcrypto loaders): a library that is found but lacks an
entry point fails in stage loader naming the library, the missing symbol and
the fix, never a crash; the real path of the library loaded is reported."""
import json
import os
import subprocess

import pytest

GPUGATE = os.environ.get("GPUGATE", "build/gpugate")


def stub_library(tmp_path, soname, symbols):
    """A shared library named soname exporting only the given functions."""
    src = tmp_path / "stub.c"
    src.write_text("".join(f"int {s}(void) {{ return 0; }}\n" for s in symbols))
    real = tmp_path / (soname + ".0")
    subprocess.run(["cc", "-shared", "-fPIC", f"-Wl,-soname,{soname}", "-o", str(real), str(src)], check=True)
    os.symlink(real.name, tmp_path / soname)
    return real


def probe(backend, libdir):
    env = dict(os.environ, LD_LIBRARY_PATH=str(libdir))
    env.pop("ZE_ENABLE_ALT_DRIVERS", None)
    r = subprocess.run([GPUGATE, "probe", "--backend", backend, "--fd", "1"],
                       capture_output=True, text=True, timeout=30, env=env)
    assert r.returncode >= 0, f"the probe died of signal {-r.returncode}: {r.stderr}"
    results = [json.loads(line[7:]) for line in r.stdout.splitlines() if line.startswith("result ")]
    assert len(results) == 1, r.stdout + r.stderr
    return r, results[0]


@pytest.mark.parametrize("backend,soname,present,missing,fix", [
    ("level-zero", "libze_loader.so.1", ["zeInit"], "zeDriverGet", "reinstall libze1"),
    ("cuda", "libcuda.so.1", ["cuInit", "cuDriverGetVersion"], "cuDeviceGetCount", "CUDA 11.4 or later"),
])
def test_library_without_an_entry_point_fails_in_stage_loader(tmp_path, backend, soname, present, missing, fix):
    real = stub_library(tmp_path, soname, present)
    r, res = probe(backend, tmp_path)
    assert r.returncode != 0
    assert res["ok"] is False and res["stage"] == "loader", res
    assert f"{soname} lacks {missing}" in res["message"] and fix in res["message"], res
    assert res["library"] == str(real), "the real file behind the soname link is reported"

