#!/bin/sh
# Prints the performance baseline line of every GPU of this machine, measured
# RUNS times (default 3) with the validate profile's settings, for
# checks/baselines/VENDOR-DEVICE-BACKEND.json. Run it on the GPU machine:
#   GPUGATE=build/gpugate sh tests/device/record_baseline.sh
# Pick the middle of the runs' figures; when they spread by more than a few
# percent, the GPU was busy: run again.
set -eu
GPUGATE=${GPUGATE:-build/gpugate}
RUNS=${RUNS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/none"
# an empty folder of extra baselines: the built-in ones still apply, and a GPU
# that has one is compared with it (its figures are printed all the same)
cat > "$tmp/spec.yaml" <<SPEC
deadline: 300s
runtime:
  backend: ${BACKEND:-auto}
  timeout: 240s
  smoke: true
  performance: true
  baselines: $tmp/none
SPEC
i=1
while [ "$i" -le "$RUNS" ]; do
	rc=0
	"$GPUGATE" check --spec "$tmp/spec.yaml" --only runtime.performance --format json > "$tmp/r$i.json" || rc=$?
	if [ "$rc" -gt 1 ]; then
		echo "record_baseline: gpugate check exited $rc" >&2
		exit "$rc"
	fi
	"${PYTHON:-python3}" - "$tmp/r$i.json" "$i" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
for check in report["checks"]:
    if check["id"] != "runtime.performance":
        continue
    print(f"# run {sys.argv[2]}: {check['status']}: {check['summary'][:300]}")
    for line in check.get("details", {}).get("baseline_candidates", []):
        print(json.dumps(line))
    for m in check.get("details", {}).get("measured", []):
        # which GPU: on a host of several, the spread between them matters
        print(f"#   device {m.get('index', '?')} ({m.get('pci', '?')}, 0x{m.get('device_id', -1) & 0xffff:04x}): "
              f"copy {m['copy_bandwidth_gbs']:.1f} GB/s, latency {m['launch_latency_us']:.2f} us "
              f"(min {m['launch_latency_min_us']:.2f}), buffer {m['buffer_bytes']} bytes")
PY
	i=$((i + 1))
done
