#!/bin/sh
# Runtime probe cost with the fake Level Zero driver through the real loader:
# gpugate (start to verdict: enumeration child + smoke child over 1 M items)
# against a bare C program doing zeInit + zeDeviceGet, built here; and the
# hang detection latency after the deadline.
set -eu
GPUGATE=${GPUGATE:-build/gpugate}
FAKE=${GPUGATE_FAKE_ZE:-$(dirname "$GPUGATE")/fakes/libze_fake.so}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/bare.c" <<'C'
#include <level_zero/ze_api.h>
#include <stdio.h>
int main(void)
{
	uint32_t nd = 1, n = 0;
	ze_driver_handle_t d;
	if (zeInit(ZE_INIT_FLAG_GPU_ONLY) || zeDriverGet(&nd, &d) || zeDeviceGet(d, &n, NULL))
		return 1;
	printf("%u\n", n);
	return n ? 0 : 1;
}
C
cc -O2 -o "$tmp/bare" "$tmp/bare.c" -l:libze_loader.so.1
printf 'runtime:\n  backend: level-zero\n  smoke: true\n' > "$tmp/spec.yaml"
printf 'runtime:\n  backend: level-zero\n' > "$tmp/enum.yaml"
export ZE_ENABLE_ALT_DRIVERS="$FAKE"
N=20
ms_of() { # command... -> mean milliseconds over N runs
	python3 - "$N" "$@" <<'PY'
import subprocess, sys, time
n = int(sys.argv[1]); cmd = sys.argv[2:]
subprocess.run(cmd, capture_output=True)  # warm the page cache
t = []
for _ in range(n):
    t0 = time.monotonic(); p = subprocess.run(cmd, capture_output=True); t.append(time.monotonic() - t0)
    if p.returncode != 0: sys.exit(f"{cmd} exited {p.returncode}: {p.stdout} {p.stderr}")
t.sort(); print(f"{t[len(t)//2]*1e3:.1f}")
PY
}
bare=$(ms_of "$tmp/bare")
gate=$(ms_of "$GPUGATE" --spec "$tmp/enum.yaml")
smoke=$(ms_of "$GPUGATE" --spec "$tmp/spec.yaml")
echo "bare zeInit+zeDeviceGet program:              $bare ms (median of $N)"
echo "gpugate runtime check, enumeration (same work): $gate ms (median of $N)"
python3 -c "b=$bare; g=$gate; print(f'  over the bare program: {g-b:.1f} ms (target <= 25 ms), ratio {g/b:.2f}x')"
echo "gpugate runtime check + smoke kernel (1 M items, second child): $smoke ms (median of $N)"
# hang detection: a kernel that never finishes, --deadline 2
out=$(GPUGATE_FAKE_FAULT=hang_sync python3 - "$GPUGATE" "$tmp/spec.yaml" <<'PY'
import subprocess, sys, time
t0 = time.monotonic()
p = subprocess.run([sys.argv[1], "--spec", sys.argv[2], "--deadline", "2"], capture_output=True, text=True)
dt = time.monotonic() - t0
assert p.returncode == 1 and "(killed)" in p.stdout, p.stdout
print(f"{dt:.3f} {dt - 2:.3f}")
PY
)
set -- $out
echo "hang detection: verdict after $1 s with --deadline 2: $2 s past the deadline (target <= 0.5 s)"
