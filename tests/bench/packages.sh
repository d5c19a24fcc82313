#!/bin/sh
# Benchmark of the packages group: gpugate's whole process against
# dpkg-query for the same packages on the same root, in the same run.
# Goal: gpugate's median at most 0.25 of dpkg-query's.
# Also shows that a health check start loads neither libcurl nor libarchive.
set -eu
GPUGATE=${GPUGATE:-build/gpugate}
RUNS=${BENCH_RUNS:-300}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/root/var/lib/dpkg"
# this machine's real status file plus the Intel stack of the XPU image
{
	cat /var/lib/dpkg/status
	for p in "libze1 1.21.9-1" "libze-intel-gpu1 25.18.33578.6-1" "intel-opencl-icd 25.18.33578.6-1" \
		 "intel-igc-core-2 2.11.7" "libigdgmm12 22.7.2-1"; do
		set -- $p
		[ "$1" = libze1 ] && grep -q '^Package: libze1$' /var/lib/dpkg/status && continue
		[ "$1" = intel-opencl-icd ] && grep -q '^Package: intel-opencl-icd$' /var/lib/dpkg/status && continue
		[ "$1" = libigdgmm12 ] && grep -q '^Package: libigdgmm12$' /var/lib/dpkg/status && continue
		printf '\nPackage: %s\nStatus: install ok installed\nArchitecture: amd64\nVersion: %s\nDescription: bench fixture\n' "$1" "$2"
	done
} > "$work/root/var/lib/dpkg/status"
mkdir -p "$work/root/var/lib/dpkg/updates" "$work/root/var/lib/dpkg/info"
touch "$work/root/var/lib/dpkg/available"
cat > "$work/spec.yaml" <<'SPEC'
packages:
  - libze1 (>= 1.8)
  - libze-intel-gpu1 (>= 24.26) | intel-level-zero-gpu (>= 1.3.29138)
  - intel-opencl-icd (>= 22.43)
  - intel-igc-core-2 (>= 1.0.17193) | intel-igc-core (>= 1.0.17193)
  - libigdgmm12 (>= 22.3)
SPEC
pkgs="libze1 libze-intel-gpu1 intel-level-zero-gpu intel-opencl-icd intel-igc-core-2 intel-igc-core libigdgmm12"
echo "status file: $(wc -c < "$work/root/var/lib/dpkg/status") bytes, $(grep -c '^Package:' "$work/root/var/lib/dpkg/status") packages"
gp="$GPUGATE check --spec $work/spec.yaml --root $work/root --only packages --format json"
dq="dpkg-query --admindir=$work/root/var/lib/dpkg -W $pkgs"
$gp > /dev/null || { echo "gpugate failed on the bench root"; exit 1; }
if ! command -v hyperfine > /dev/null; then
	echo "hyperfine not installed: apt-get install hyperfine"
	exit 1
fi
# Rounds that alternate the commands, pooled: on a shared machine the load
# drifts during a run, and one long block per command would charge the drift
# to whichever ran in the busier half.
ROUNDS=${BENCH_ROUNDS:-6}
per=$(( (RUNS + ROUNDS - 1) / ROUNDS ))
i=0
while [ $i -lt "$ROUNDS" ]; do
	hyperfine -N -i --warmup 5 --runs "$per" --export-json "$work/h$i.json" "$gp" "$dq" "$gp --no-sandbox" > /dev/null 2>&1
	i=$((i + 1))
done
echo "load while measuring: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
/usr/bin/python3 - "$work" "$ROUNDS" <<'PY'
import json, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])
times = [[], [], []]
for i in range(rounds):
    for k, r in enumerate(json.load(open(f"{work}/h{i}.json"))["results"]):
        times[k] += r["times"]
g, d, n = (statistics.median(t) * 1e3 for t in times)
print(f"gpugate packages check (whole process): median {g:.2f} ms ({len(times[0])} runs in {rounds} rounds)")
print(f"dpkg-query -W (same packages, same root): median {d:.2f} ms")
print(f"gpugate with --no-sandbox: median {n:.2f} ms (the seccomp filter costs {g - n:+.2f} ms)")
print(f"ratio gpugate/dpkg-query: {g / d:.2f} (goal <= 0.25)")
PY
echo "libraries a healthcheck start loads (LD_DEBUG=libs):"
LD_DEBUG=libs $GPUGATE check --profile healthcheck --skip runtime --root "$work/root" > /dev/null 2> "$work/ld.txt" || true
grep -o 'calling init: [^ ]*' "$work/ld.txt" | sed 's/calling init: /  /' | sort -u
if grep -Eq 'libcurl|libarchive' "$work/ld.txt"; then
	echo "FAIL: libcurl or libarchive loaded at start"; exit 1
fi
echo "libcurl, libarchive: not loaded (ok)"
