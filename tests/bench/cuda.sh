#!/bin/sh
# CUDA probe start-up cost: process start to verdict, median of N runs, for
#   check  gpugate check --only runtime with backend: cuda and the smoke kernel
#          (the real verdict: parent, probe child, report), where the binary
#          has the probe child
#   devrt  gpugate check --only devices,runtime (vendor nvidia), smoke on:
#          issue 21's figure, goal <= 1.10 x floor
#   probe  the CUDA backend (cuInit, primary context, 1 Mi-element smoke
#          kernel from embedded PTX, every element verified) via the probe
#          driver build/tests/cuda_probe
#   floor  the least a C program can do: cuInit + primary context + module
#          load + one launch + sync, nothing verified (tests/bench/cuda_floor.c)
#   smi    nvidia-smi -L (lists GPUs, runs nothing)
#   torch  python3 -c "import torch; x=torch.ones(1<<20, device='cuda'); ..."
#          (what CI gates use today), when torch is installed
# Goals (issue 6): probe <= 1.3 x floor, torch >= 10 x probe.
# Needs a GPU: prints "skipped" and exits 0 where libcuda.so.1 cannot load.
# Env: GPUGATE (build/gpugate; the test programs are beside it in tests/),
#      N (runs, default 11), PTX (default src/kernels/smoke.ptx),
#      CUDA_BENCH_TORCH=0 (skip torch: 5 s a run).
set -eu
: "${GPUGATE:?set GPUGATE to the gpugate binary}"
tests=$(dirname "$GPUGATE")/tests
probe=${CUDA_PROBE:-$tests/cuda_probe}
floor=${CUDA_FLOOR:-$tests/cuda_floor}
ptx=${PTX:-src/kernels/smoke.ptx}
N=${N:-11}

[ -x "$probe" ] && [ -x "$floor" ] || { echo "cuda bench: $probe or $floor missing: run make cuda-test-programs" >&2; exit 1; }
if ! "$probe" --no-smoke --device -1 >/dev/null 2>&1; then
	echo "cuda bench: skipped: no usable GPU (libcuda.so.1 missing or no device): $("$probe" --no-smoke --device -1 2>&1 | tail -1 | cut -c1-200)"
	exit 0
fi

# median_ms NAME CMD...: runs CMD N times (after one warm-up), prints the median in ms.
median_ms() {
	name=$1
	shift
	"$@" >/dev/null 2>&1 || { echo "cuda bench: $name failed: $*" >&2; return 1; }
	i=0
	: >/tmp/cuda_bench.$$
	while [ $i -lt "$N" ]; do
		t0=$(date +%s%N)
		"$@" >/dev/null 2>&1 || { echo "cuda bench: $name failed on run $i" >&2; return 1; }
		t1=$(date +%s%N)
		echo $(((t1 - t0) / 1000)) >>/tmp/cuda_bench.$$
		i=$((i + 1))
	done
	sort -n /tmp/cuda_bench.$$ | awk -v name="$name" '{ v[NR] = $1 } END {
		m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%-6s median %9.1f ms  (min %.1f, max %.1f, n=%d)\n", name, m / 1000, v[1] / 1000, v[NR] / 1000, NR
		print m / 1000 > "/tmp/cuda_bench_" name ".'$$'" }'
	rm -f /tmp/cuda_bench.$$
}
value() { cat /tmp/cuda_bench_$1.$$; }

nvidia-smi -L 2>/dev/null | head -1 || true
check=0
spec=/tmp/cuda_bench_spec.$$.yaml
printf 'runtime:\n  backend: cuda\n  smoke: true\n' >"$spec"
if "$GPUGATE" check --spec "$spec" --only runtime >/dev/null 2>&1; then
	median_ms check "$GPUGATE" check --spec "$spec" --only runtime && check=1
else
	echo "check  gpugate check --only runtime did not pass here (no probe child in this build?): skipped"
fi
# Issue 21's figure: the devices group too (vendor nvidia: the device nodes,
# /proc/driver/nvidia, CUDA_VISIBLE_DEVICES) with the runtime and its smoke
# kernel, one probe child per GPU
printf 'devices:\n  vendor: nvidia\nruntime:\n  backend: cuda\n  smoke: true\n' >"$spec"
devrt=0
if "$GPUGATE" check --spec "$spec" --only devices,runtime >/dev/null 2>&1; then
	median_ms devrt "$GPUGATE" check --spec "$spec" --only devices,runtime && devrt=1
else
	echo "devrt  gpugate check --only devices,runtime did not pass here: skipped"
	"$GPUGATE" check --spec "$spec" --only devices,runtime | head -20
fi
# The same figure with the two programs interleaved (devrt, floor, floor,
# devrt, ...): the blocks above run one after the other, and the host's speed
# drifts between blocks by more than the 10% the goal allows. Each round's
# devrt/floor is one pair; the median of the pairs is the figure.
if [ $devrt = 1 ]; then
	i=0
	: >/tmp/cuda_bench_pairs.$$
	while [ $i -lt "$N" ]; do
		t_devrt=0
		t_floor=0
		for who in $([ $((i % 2)) = 0 ] && echo "devrt floor" || echo "floor devrt"); do
			t0=$(date +%s%N)
			if [ "$who" = devrt ]; then
				"$GPUGATE" check --spec "$spec" --only devices,runtime >/dev/null 2>&1
				t_devrt=$((($(date +%s%N) - t0) / 1000))
			else
				"$floor" "$ptx" >/dev/null 2>&1
				t_floor=$((($(date +%s%N) - t0) / 1000))
			fi
		done
		echo "$t_devrt $t_floor" | awk '{ printf "%.4f %d %d\n", $1 / $2, $1, $2 }' >>/tmp/cuda_bench_pairs.$$
		i=$((i + 1))
	done
	sort -n /tmp/cuda_bench_pairs.$$ | awk '{ r[NR] = $1 } END {
		m = (NR % 2) ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2
		printf "interleaved devrt/floor  %.2f x (median of %d pairs, %.2f-%.2f; devices + runtime + smoke; goal <= 1.10, issue 21)\n",
			m, NR, r[1], r[NR] }'
	rm -f /tmp/cuda_bench_pairs.$$
fi
rm -f "$spec"
median_ms probe "$probe"
median_ms floor "$floor" "$ptx"
command -v nvidia-smi >/dev/null && median_ms smi nvidia-smi -L
torch=0
if [ "${CUDA_BENCH_TORCH:-1}" = 1 ] && python3 -c 'import torch' 2>/dev/null; then
	median_ms torch python3 -c "import torch; x=torch.ones(1<<20, device='cuda'); torch.cuda.synchronize(); assert x.sum()==1<<20" && torch=1
else
	echo "torch  skipped (CUDA_BENCH_TORCH=0, or torch not installed)"
fi
awk -v p="$(value probe)" -v f="$(value floor)" 'BEGIN { printf "probe/floor  %.2f x (goal <= 1.3)\n", p / f }'
[ $check = 1 ] && awk -v c="$(value check)" -v f="$(value floor)" 'BEGIN { printf "check/floor  %.2f x (goal <= 1.3)\n", c / f }'
[ $devrt = 1 ] && awk -v c="$(value devrt)" -v f="$(value floor)" 'BEGIN { printf "devrt/floor  %.2f x (devices + runtime + smoke; goal <= 1.10, issue 21)\n", c / f }'
[ $check = 1 ] && [ $torch = 1 ] && awk -v c="$(value check)" -v t="$(value torch)" 'BEGIN { printf "torch/check  %.2f x (goal >= 10)\n", t / c }'
[ -f /tmp/cuda_bench_smi.$$ ] && awk -v p="$(value probe)" -v s="$(value smi)" 'BEGIN { printf "smi/probe    %.2f x\n", s / p }'
[ $torch = 1 ] && awk -v p="$(value probe)" -v t="$(value torch)" 'BEGIN { printf "torch/probe  %.2f x (goal >= 10)\n", t / p }'
rm -f /tmp/cuda_bench_*.$$
