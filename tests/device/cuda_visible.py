#!/usr/bin/env python3
"""The oracle for CUDA_VISIBLE_DEVICES: which GPUs the real driver shows under
each value, as cuInit + cuDeviceGetCount + cuDeviceGetUuid_v2 report them
(build/tests/cuda_devices, tests/device/cuda_devices.c). Run it on a GPU host:

    python3 tests/device/cuda_visible.py build/tests/cuda_devices > vectors.tsv
    python3 tests/device/cuda_visible.py build/tests/cuda_devices build/gpugate

With gpugate's path as well, it checks gpugate against the driver instead:
under each value, devices.visibility's count and the runtime probe's devices
(devices.vendor nvidia, runtime.backend cuda) must equal the driver's; it
prints one line per value and "N agree, M disagree" (exit 1 on any).

It prints tests/vectors/cuda-visible-devices.tsv: one line per value, the value
written with placeholders so that the vectors hold on any machine:
  {uuid0}     GPU 0's UUID as nvidia-smi -L prints it (GPU-8-4-4-4-12, lower case)
  {UUID0}     the same with its hex digits in upper case
  {hex0}      without the "GPU-" prefix
  {uuid0:N}   its first N characters
and the answer: the GPUs the driver shows, in order, by their index on the
host (unset CUDA_VISIBLE_DEVICES), or "none". Values that name a GPU the host
lacks ({uuid1} on a one-GPU host) are left out.
"""
import json
import re
import subprocess
import sys

# (value, why it is here); None is "unset"
CASES = [
    ("", "empty: no device"),
    ("0", "an index"),
    ("1", "index N on N GPUs (the host's index in a one-GPU container)"),
    ("-0", "minus zero"),
    ("+0", "a plus sign"),
    ("-1", "a negative index"),
    (" 0", "a leading blank"),
    ("0 ", "a trailing blank"),
    ("00", "a leading zero"),
    ("0x1", "hex is not read"),
    ("1gpu2", "trailing text after an index"),
    ("0a", "trailing letter"),
    ("a0", "a letter first"),
    ("0,0", "one GPU twice"),
    ("0,1", "the second entry past the GPUs"),
    ("1,0", "the first entry past the GPUs"),
    ("0,0,1", "twice, then past"),
    ("0,-1", "a negative second entry"),
    ("0,", "a trailing comma"),
    (",0", "a leading comma"),
    ("0,,1", "an empty entry"),
    ("0, 1", "a blank after the comma"),
    ("0 ,1", "a blank before the comma"),
    ("0,junk", "junk after a good entry"),
    ("{uuid0}", "a full UUID"),
    ("{UUID0}", "a full UUID in upper case"),
    ("{uuid0}x", "a full UUID with a trailing character"),
    ("{uuid0}-0", "a full UUID with trailing text"),
    ("{uuid0}0", "a full UUID with a trailing digit"),
    ("{uuid0},0", "a UUID, then an index"),
    ("0,{uuid0}", "an index, then a UUID"),
    ("{uuid0},{uuid0}", "one UUID twice"),
    ("{uuid0:12},{uuid0}", "a prefix and the full UUID of one GPU"),
    ("{uuid0},{uuid1}", "two UUIDs"),
    ("{uuid1},{uuid0}", "two UUIDs, reversed"),
    ("{uuid0:5}", "a one-digit prefix"),
    ("{uuid0:12}", "an eight-digit prefix"),
    ("{UUID0:12}", "an eight-digit prefix in upper case"),
    ("{uuid0:12},0", "a prefix, then an index"),
    ("GPU-", "a bare GPU-"),
    ("GPU", "GPU without the dash"),
    ("GPU-zzzz", "a prefix of no GPU"),
    ("gpu-{hex0}", "the GPU- prefix in lower case"),
    (" {uuid0}", "a leading blank before a UUID"),
    ("{uuid0} ", "a trailing blank after a UUID"),
    ("MIG-{uuid0}", "a GPU's UUID written as a MIG instance"),
    ("MIG-{hex0}", "MIG- and the GPU's hex digits"),
    ("MIG-GPU-{hex0}/0/0", "the pre-R470 MIG form"),
    ("MIG-GPU-{hex0}", "the pre-R470 MIG form without instances"),
    ("MIG-", "a bare MIG-"),
]


def devices(tool, value):
    env = {k: v for k, v in __import__("os").environ.items() if k != "CUDA_VISIBLE_DEVICES"}
    if value is not None:
        env["CUDA_VISIBLE_DEVICES"] = value
    out = subprocess.run([tool], env=env, capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def expand(template, uuids):
    def one(m):
        upper, i, cut = m.group(1) == "UUID", int(m.group(2)), m.group(3)
        if i >= len(uuids):
            raise IndexError
        u = uuids[i]
        if m.group(1) == "hex":
            u = u[4:]
        if upper:
            u = "GPU-" + u[4:].upper()
        return u[: int(cut)] if cut else u

    return re.sub(r"\{(uuid|UUID|hex)(\d+)(?::(\d+))?\}", one, template)


def gpugate_counts(gpugate, value, spec):
    env = {k: v for k, v in __import__("os").environ.items() if k != "CUDA_VISIBLE_DEVICES"}
    env["CUDA_VISIBLE_DEVICES"] = value
    r = subprocess.run([gpugate, "check", "--spec", spec, "--only", "devices.visibility,runtime.loader,runtime.devices",
                        "--format", "json"], env=env, capture_output=True, text=True)
    checks = {c["id"]: c for c in json.loads(r.stdout)["checks"]}
    vis = checks["devices.visibility"].get("details", {}).get("cuda_devices")
    dev = checks["runtime.devices"]
    probed = len(dev.get("details", {}).get("devices", [])) if dev["status"] == "pass" else 0
    return vis, probed


def agree(tool, gpugate, uuids):
    import tempfile
    spec = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False)
    spec.write("devices:\n  vendor: nvidia\nruntime:\n  backend: cuda\n")
    spec.close()
    good = bad = 0
    for template, why in CASES:
        try:
            value = expand(template, uuids)
        except IndexError:
            continue
        driver = devices(tool, value).get("count", 0)
        vis, probed = gpugate_counts(gpugate, value, spec.name)
        ok = vis == driver and probed == driver
        good, bad = good + ok, bad + (not ok)
        print(f"{'agree   ' if ok else 'DISAGREE'} {json.dumps(template):28} driver {driver}, "
              f"devices.visibility {vis}, runtime.devices {probed}")
    print(f"{good} agree, {bad} disagree")
    return 1 if bad else 0


def main():
    tool = sys.argv[1]
    host = devices(tool, None)
    uuids = [d["uuid"] for d in host["devices"]]
    if len(sys.argv) > 2:
        sys.exit(agree(tool, sys.argv[2], uuids))
    print("# CUDA_VISIBLE_DEVICES as the real driver reads it: tests/device/cuda_visible.py")
    print(f"# gpus: {len(uuids)} ({', '.join(d['name'] for d in host['devices'])})")
    for template, why in CASES:
        try:
            value = expand(template, uuids)
        except IndexError:
            continue
        seen = devices(tool, value)
        shown = [uuids.index(d["uuid"]) for d in seen.get("devices", [])]
        answer = ",".join(map(str, shown)) if shown else "none"
        print(f"{json.dumps(template)}\t{answer}\t{why}")


if __name__ == "__main__":
    main()
