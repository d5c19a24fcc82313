#!/bin/sh
# Issue 22 on a host with several NVIDIA GPUs, every command's output
# printed (run where the GPUs are; nothing here changes the GPUs' settings):
#   1. devices + runtime (smoke, memory, processes, health) on all GPUs, and
#      its time against CUDA_VISIBLE_DEVICES=0 (medians of N interleaved
#      runs; goal <= 1.3 x: the probe children run in parallel);
#   2. CUDA_VISIBLE_DEVICES subsets (0,2; a UUID; a UUID prefix; an index
#      past the count; a list cut by one): gpugate's devices.visibility and
#      runtime.devices against what the driver shows (build/tests/cuda_devices)
#      and torch.cuda.device_count() where torch is installed;
#   3. GPU 1 made busy by build/tests/hold_memory (90% of its free memory):
#      runtime.memory must fail naming only that GPU, runtime.processes must
#      name the holder's pid;
#   4. validate-profile performance on every GPU, RUNS (5) times: per-GPU
#      medians, the spread between GPUs of one model against the tolerance
#      (20%), and the baseline line (median of every run of every GPU).
# Needs: make build/gpugate cuda-test-programs; python3.
#   GPUGATE=build/gpugate sh tests/device/multi_gpu.sh
# The JSON reports land in $OUT (the device tool's folder) or a temp folder.
set -u
here=$(cd "$(dirname "$0")" && pwd)
GPUGATE=${GPUGATE:-build/gpugate}
tools=$(dirname "$GPUGATE")/tests
N=${N:-7}
RUNS=${RUNS:-5}
PY=${PYTHON:-python3}
dir=${OUT:-$(mktemp -d)}/multi
mkdir -p "$dir"
work=$(mktemp -d)
holder=""
trap '[ -n "$holder" ] && kill "$holder" 2>/dev/null; rm -rf "$work"' EXIT INT TERM

# 32 GiB free per GPU: an idle H100 or H200 has far more, a GPU that another
# process fills to 90% has less.
spec=$work/multi.yaml
cat > "$spec" <<'SPEC'
devices:
  vendor: nvidia
  min_gpus: 1
runtime:
  backend: cuda
  timeout: 60s
  smoke: true
  telemetry: true
  processes: true
  min_free_memory: 32GiB
SPEC

summary() { # $1: a JSON report; one line per check
	"$PY" - "$1" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
print(f"  verdict {doc['verdict']} in {doc['duration_ms']:.0f} ms")
for c in doc["checks"]:
    print(f"  {c['status']:5} {c['id']}: {c['summary'][:400]}")
    for f in c.get("details", {}).get("findings", [])[:8]:
        print(f"        - {f[:300]}")
PY
}

echo "== 0. the GPUs"
nvidia-smi --query-gpu=index,name,pci.bus_id,pci.device_id,uuid,memory.total,memory.used,driver_version --format=csv
"$tools/cuda_devices" > "$work/all.json"
cat "$work/all.json"
count=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["count"])' "$work/all.json")

echo "== 1. devices + runtime on all $count GPUs"
"$GPUGATE" check --spec "$spec" --only devices,runtime -v
echo "[exit $?]"
"$GPUGATE" check --spec "$spec" --only devices,runtime --format json > "$dir/all.json"
echo "[json exit $?]"
summary "$dir/all.json"
echo "-- time: all GPUs against CUDA_VISIBLE_DEVICES=0, $N interleaved runs each (ms, process start to verdict)"
: > "$work/t.all"
: > "$work/t.one"
i=0
while [ "$i" -lt "$N" ]; do
	t0=$(date +%s%N); "$GPUGATE" check --spec "$spec" --only devices,runtime -q > /dev/null; ra=$?; t1=$(date +%s%N)
	echo "$(((t1 - t0) / 1000)) $ra" >> "$work/t.all"
	t0=$(date +%s%N); CUDA_VISIBLE_DEVICES=0 "$GPUGATE" check --spec "$spec" --only devices,runtime -q > /dev/null; ro=$?; t1=$(date +%s%N)
	echo "$(((t1 - t0) / 1000)) $ro" >> "$work/t.one"
	i=$((i + 1))
done
"$PY" - "$work/t.all" "$work/t.one" "$count" <<'PY'
import statistics, sys
rows = [[tuple(map(int, l.split())) for l in open(p)] for p in sys.argv[1:3]]
med = [statistics.median(t for t, _ in r) / 1000 for r in rows]
for name, r, m in zip((f"all {sys.argv[3]} GPUs", "CUDA_VISIBLE_DEVICES=0"), rows, med):
    print(f"  {name:24} median {m:7.1f} ms  runs {' '.join('%.0f' % (t / 1000) for t, _ in r)}  exits {sorted(set(e for _, e in r))}")
print(f"  ratio all/one: {med[0] / med[1]:.2f} x (goal <= 1.3)")
PY

echo "== 2. CUDA_VISIBLE_DEVICES subsets: gpugate against the driver (and torch)"
"$PY" - "$work/all.json" > "$work/subsets" <<'PY'
import json, sys
devs = json.load(open(sys.argv[1]))["devices"]
n = len(devs)
u = [d["uuid"] for d in devs]
def prefix(i):
    for k in range(5, len(u[i])):
        if sum(x.startswith(u[i][:k]) for x in u) == 1:
            return u[i][:k + 2]
    return u[i]
subsets = ["0,2" if n > 2 else "0", u[min(2, n - 1)], prefix(min(1, n - 1)), str(n), "0," + str(n) + ",1", "1,0", ""]
for s in subsets:
    print(s if s else "EMPTY")
PY
torch=0
"$PY" -c 'import torch' 2>/dev/null && torch=1
while read -r sub; do
	[ "$sub" = EMPTY ] && sub=""
	tag=$(echo "cvd-$sub" | tr -c 'A-Za-z0-9,\n-' '_' | tr ',' '_' | cut -c1-40)
	CUDA_VISIBLE_DEVICES=$sub "$tools/cuda_devices" > "$work/cuda.json"
	tc=-
	[ $torch = 1 ] && tc=$(CUDA_VISIBLE_DEVICES=$sub "$PY" -c 'import torch; print(torch.cuda.device_count())' 2>&1 | tail -1)
	CUDA_VISIBLE_DEVICES=$sub "$GPUGATE" check --spec "$spec" --only devices,runtime --format json > "$dir/$tag.json"
	rc=$?
	"$PY" - "$sub" "$work/cuda.json" "$tc" "$dir/$tag.json" "$rc" <<'PY'
import json, sys
sub, cuda, tc, rep, rc = sys.argv[1], json.load(open(sys.argv[2])), sys.argv[3], json.load(open(sys.argv[4])), sys.argv[5]
checks = {c["id"]: c for c in rep["checks"]}
vis, rdev = checks.get("devices.visibility", {}), checks.get("runtime.devices", {})
listed = rdev.get("details", {}).get("devices", [])
gg = [d.get("pci", "?").lower() for d in listed]
cu = [d["pci"].lower() for d in cuda.get("devices", [])]
agree = (gg == cu or (not cu and rdev.get("status") != "pass")) and (tc in ("-", str(len(cu))))
print(f"CUDA_VISIBLE_DEVICES={sub!r}: driver {cuda['count']} {cu} (error {cuda.get('error', 0)}); torch {tc}; gpugate exit {rc}, "
      f"runtime.devices {rdev.get('status')} {gg}: {'AGREE' if agree else 'DISAGREE'}")
print(f"  devices.visibility {vis.get('status')}: {vis.get('summary', '')[:300]}")
print(f"  runtime.devices {rdev.get('status')}: {rdev.get('summary', '')[:300]}")
for cid in ("runtime.smoke", "runtime.memory"):
    print(f"  {cid} {checks.get(cid, {}).get('status')}: {checks.get(cid, {}).get('summary', '')[:200]}")
PY
done < "$work/subsets"

echo "== 3. GPU 1 busy: another process holds 90% of its free memory"
: > "$work/holder.out"
CUDA_VISIBLE_DEVICES=1 "$tools/hold_memory" 90 > "$work/holder.out" 2>&1 &
holder=$!
i=0
while ! grep -q holding "$work/holder.out" && kill -0 "$holder" 2>/dev/null && [ $i -lt 600 ]; do
	sleep 0.1
	i=$((i + 1))
done
cat "$work/holder.out"
nvidia-smi --query-gpu=index,pci.bus_id,memory.used,memory.total --format=csv
nvidia-smi --query-compute-apps=pid,process_name,gpu_bus_id,used_memory --format=csv
"$GPUGATE" check --spec "$spec" --only devices,runtime -v
echo "[exit $?]"
"$GPUGATE" check --spec "$spec" --only devices,runtime --format json > "$dir/busy.json"
summary "$dir/busy.json"
"$PY" - "$dir/busy.json" "$holder" <<'PY'
import json, sys
checks = {c["id"]: c for c in json.load(open(sys.argv[1]))["checks"]}
mem, procs = checks["runtime.memory"], checks["runtime.processes"]
f = mem.get("details", {}).get("findings", [])
print("  memory fails only for device 1:", mem["status"] == "fail" and len(f) == 1 and f[0].startswith("device 1 ("), f)
print("  processes names pid", sys.argv[2] + ":", "pid " + sys.argv[2] in procs["summary"] + " ".join(procs.get("details", {}).get("findings", [])))
PY
kill "$holder"
wait "$holder" 2>/dev/null
holder=""

echo "== 4. performance on every GPU (validate profile settings), $RUNS runs"
RUNS=$RUNS BACKEND=cuda GPUGATE=$GPUGATE sh "$here/record_baseline.sh" | tee "$work/baseline.out"
"$PY" - "$work/baseline.out" <<'PY'
import json, re, statistics, sys
text = open(sys.argv[1]).read()
meas = re.findall(r"#   device (\S+) \((\S+), (0x[0-9a-f]+)\): copy ([0-9.]+) GB/s, latency ([0-9.]+) us", text)
cands = [json.loads(l) for l in text.splitlines() if l.startswith("{")]
print(f"  {len(meas)} measurements")
by_gpu, models = {}, {}
for idx, pci, dev, bw, lat in meas:
    by_gpu.setdefault((dev, idx, pci), []).append((float(bw), float(lat)))
for (dev, idx, pci), v in sorted(by_gpu.items()):
    bw, lat = statistics.median(b for b, _ in v), statistics.median(l for _, l in v)
    print(f"  device {idx} ({pci}, {dev}): copy median {bw:.1f} GB/s ({min(b for b, _ in v):.1f}-{max(b for b, _ in v):.1f}), "
          f"latency median {lat:.2f} us ({min(l for _, l in v):.2f}-{max(l for _, l in v):.2f}), n={len(v)}")
    models.setdefault(dev, []).append((bw, lat))
for dev, figs in models.items():
    bws, lats = [b for b, _ in figs], [l for _, l in figs]
    print(f"  model {dev}, {len(figs)} GPUs: copy spread {(max(bws) - min(bws)) / max(bws) * 100:.1f}% of the fastest, "
          f"latency spread {(max(lats) - min(lats)) / min(lats) * 100:.1f}% of the quickest (tolerance 20%)")
    allv = [x for k, v in by_gpu.items() if k[0] == dev for x in v]
    print(f"  model {dev}: median of every run of every GPU: copy {statistics.median(b for b, _ in allv):.1f} GB/s, "
          f"latency {statistics.median(l for _, l in allv):.2f} us")
for dev in sorted({c.get("device_id") for c in cands}):
    cs = [c for c in cands if c.get("device_id") == dev]
    line = dict(cs[0])
    line["copy_bandwidth_gbs"] = round(statistics.median(c["copy_bandwidth_gbs"] for c in cs), 1)
    line["launch_latency_us"] = round(statistics.median(c["launch_latency_us"] for c in cs), 2)
    print(f"  baseline line for {dev} (median of {len(cs)} candidate lines): " + json.dumps(line))
PY
echo "files in $dir"
