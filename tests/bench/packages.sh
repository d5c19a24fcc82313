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
if command -v hyperfine > /dev/null; then
	hyperfine -N -i --warmup 20 --runs "$RUNS" --export-json "$work/h.json" "$gp" "$dq" > /dev/null 2>&1
	/usr/bin/python3 - "$work/h.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
g, d = r[0]["median"] * 1e3, r[1]["median"] * 1e3
print(f"gpugate packages check (whole process): median {g:.2f} ms")
print(f"dpkg-query -W (same packages, same root): median {d:.2f} ms")
print(f"ratio gpugate/dpkg-query: {g / d:.2f} (goal <= 0.25)")
PY
else
	echo "hyperfine not installed: apt-get install hyperfine"
	exit 1
fi
echo "libraries a healthcheck start loads (LD_DEBUG=libs):"
LD_DEBUG=libs $GPUGATE check --profile healthcheck --skip runtime --root "$work/root" > /dev/null 2> "$work/ld.txt" || true
grep -o 'calling init: [^ ]*' "$work/ld.txt" | sed 's/calling init: /  /' | sort -u
if grep -Eq 'libcurl|libarchive' "$work/ld.txt"; then
	echo "FAIL: libcurl or libarchive loaded at start"; exit 1
fi
echo "libcurl, libarchive: not loaded (ok)"
