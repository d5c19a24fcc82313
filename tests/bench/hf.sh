#!/bin/sh
# Benchmark of `gpugate hf verify` (and `gpugate hf scan`), in one run with
# the parallel shell tools over the very same blob files:
#   verify: `xargs -P$(nproc) sha256sum` and `xargs -P$(nproc) openssl dgst
#           -sha256` (libcrypto's own speed), the files split evenly over
#           nproc processes (the shell's best case), page cache warm for all.
#           Two data sets: many small blobs, and a few large ones. Printed:
#           the best of RUNS times of each tool and the ratio
#           time(faster shell tool) / time(gpugate): goal >= 1.00.
#   scan:   100,000 snapshot files; goal < 0.5 s (and against `find -printf`).
#   memory: peak RSS of verify over the large blobs vs over as many blobs of
#           20 MiB (hashed the same way: mapped a 4 MiB window at a time): it
#           must not grow with the file size (ratio about 1).
# Environment: HF_BENCH_MB (default 2048) sets the size of each data set,
# HF_BENCH_LARGE (default 8) how many blobs the large set has,
# HF_BENCH_SMALL_KB (default 256) the size of each small blob, HF_BENCH_RUNS
# (default 5), HF_BENCH_SCAN_FILES (default 100000), HF_BENCH_DIR the folder
# (default under /var/tmp), TIME_BIN GNU time (default /usr/bin/time). Everything
# is removed at the end. HF_BENCH_BASELINE=/path/to/an/older/gpugate adds its
# times (interleaved with the others) and the new/old ratio.
# On the GPU host: sh tests/bench/hf.sh   (GPUGATE=build/gpugate by default)
set -eu
GPUGATE=${GPUGATE:-build/gpugate}
MB=${HF_BENCH_MB:-2048}
LARGE=${HF_BENCH_LARGE:-8}
SMALL_KB=${HF_BENCH_SMALL_KB:-256}
RUNS=${HF_BENCH_RUNS:-5}
SCAN_FILES=${HF_BENCH_SCAN_FILES:-100000}
BASELINE=${HF_BENCH_BASELINE:-}
NPROC=$(nproc)
work=$(mktemp -d "${HF_BENCH_DIR:-/var/tmp}/gpugate-hf-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.6f", b - a }'; }
min() { awk -v a="$1" -v b="$2" 'BEGIN { print (a < b) ? a : b }'; }
div() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.6f", a / b }'; }

# The data: blobs named by their sha256 (as LFS files are), each linked from
# one snapshot, in two caches: small/ and large/.
python3 - "$work" "$MB" "$LARGE" "$SMALL_KB" "$SCAN_FILES" <<'PY'
import hashlib, os, sys
work, mb, large, small_kb, scan_files = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
M = 1 << 20
def write_repo(cache, name, blobs, revisions=1, per_rev=None):
    r = os.path.join(cache, name)
    os.makedirs(os.path.join(r, "blobs"), exist_ok=True)
    names = []
    for data in blobs:
        h = hashlib.sha256(data).hexdigest()
        with open(os.path.join(r, "blobs", h), "wb") as f:
            f.write(data)
        names.append(h)
    per_rev = per_rev or len(names)
    for v in range(revisions):
        snap = os.path.join(r, "snapshots", "%040x" % (v + 1))
        for d in range(0, per_rev, 1000):
            os.makedirs(os.path.join(snap, "d%03d" % (d // 1000)), exist_ok=True)
        for i in range(per_rev):
            os.symlink("../../../blobs/" + names[i % len(names)], os.path.join(snap, "d%03d" % (i // 1000), "f%d" % i))
    os.makedirs(os.path.join(r, "refs"), exist_ok=True)
    with open(os.path.join(r, "refs", "main"), "w") as f:
        f.write("%040x" % 1)
def gen(size):
    # distinct content quickly: a random block with a counter stamped in
    block = os.urandom(M)
    out = bytearray()
    n = 0
    while len(out) < size:
        out += n.to_bytes(8, "little") + block[8:]
        n += 1
    return bytes(out[:size])
budget = mb * M
write_repo(os.path.join(work, "large"), "models--bench--large", (gen(budget // large) for _ in range(large)))
small = max(1, budget // (small_kb << 10))
write_repo(os.path.join(work, "small"), "models--bench--small",
           (os.urandom(16) + bytes(small_kb * 1024 - 16) for _ in range(small)))
write_repo(os.path.join(work, "medium"), "models--bench--medium", (gen(20 * M) for _ in range(large)))
write_repo(os.path.join(work, "scan"), "models--bench--scan", [b"x%d" % i for i in range(1000)], 10, scan_files // 10)
PY

bench_set() { # $1: the set's name; prints the times and the ratio
	cache="$work/$1"
	blobs=$(echo "$cache"/models--*/blobs)
	count=$(find "$blobs" -type f | wc -l)
	bytes=$(du -sb "$blobs" | cut -f1)
	per=$(( (count + NPROC - 1) / NPROC ))
	find "$blobs" -type f -print0 > "$work/list"
	xargs -0 -P"$NPROC" -n"$per" sha256sum < "$work/list" > /dev/null   # warm the page cache
	t_sum=999999; t_ssl=999999; t_gg=999999; t_old=999999
	: > "$work/gg.times"; : > "$work/old.times"
	i=0
	while [ "$i" -lt "$RUNS" ]; do
		t0=$(now); xargs -0 -P"$NPROC" -n"$per" sha256sum < "$work/list" > /dev/null; t1=$(now)
		t_sum=$(min "$(elapsed "$t0" "$t1")" "$t_sum")
		t0=$(now); xargs -0 -P"$NPROC" -n"$per" openssl dgst -sha256 < "$work/list" > /dev/null; t1=$(now)
		t_ssl=$(min "$(elapsed "$t0" "$t1")" "$t_ssl")
		t0=$(now); "$GPUGATE" hf verify --cache "$cache" > "$work/verify.out"; t1=$(now)
		t=$(elapsed "$t0" "$t1"); echo "$t" >> "$work/gg.times"
		t_gg=$(min "$t" "$t_gg")
		grep -q "hf verify: ok" "$work/verify.out" || { echo "hf verify did not pass:"; cat "$work/verify.out"; exit 1; }
		if [ -n "$BASELINE" ]; then
			t0=$(now); "$BASELINE" hf verify --cache "$cache" > "$work/verify.out"; t1=$(now)
			t=$(elapsed "$t0" "$t1"); echo "$t" >> "$work/old.times"
			t_old=$(min "$t" "$t_old")
			grep -q "hf verify: ok" "$work/verify.out" || { echo "baseline hf verify did not pass:"; cat "$work/verify.out"; exit 1; }
		fi
		i=$((i + 1))
	done
	best=$(min "$t_sum" "$t_ssl")
	gib() { awk -v b="$bytes" -v t="$1" 'BEGIN { printf "%.2f GiB/s", b / t / 1073741824 }'; }
	printf 'hf verify, %s: %d blobs, %.2f GiB, %d CPUs, best of %d\n' "$1" "$count" \
		"$(div "$bytes" 1073741824)" "$NPROC" "$RUNS"
	printf '  xargs -P%d sha256sum:         %.3f s  %s\n' "$NPROC" "$t_sum" "$(gib "$t_sum")"
	printf '  xargs -P%d openssl dgst:      %.3f s  %s\n' "$NPROC" "$t_ssl" "$(gib "$t_ssl")"
	printf '  gpugate hf verify:            %.3f s  %s  (all runs: %s)\n' "$t_gg" "$(gib "$t_gg")" \
		"$(sort -n "$work/gg.times" | awk '{ printf "%s%.3f", (NR == 1 ? "" : " "), $1 }')"
	if [ -n "$BASELINE" ]; then
		printf '  baseline gpugate hf verify:   %.3f s  %s  (all runs: %s)\n' "$t_old" "$(gib "$t_old")" \
			"$(sort -n "$work/old.times" | awk '{ printf "%s%.3f", (NR == 1 ? "" : " "), $1 }')"
		printf '  ratio baseline: %.2f; gpugate time / baseline time: %.2f\n' "$(div "$best" "$t_old")" \
			"$(div "$t_gg" "$t_old")"
	fi
	# where gpugate's wall time goes: its own hashing phase (threads started
	# to last result) against the rest (start, cache scan, report)
	"$GPUGATE" hf verify --format json --cache "$cache" > "$work/verify.json"
	python3 - "$work/verify.json" "$t_gg" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
print("  gpugate hashing phase: %.3f s on %d threads (one more run); the rest of the best wall time: %.3f s"
      % (j["seconds"], j["threads"], float(sys.argv[2]) - j["seconds"]))
PY
	printf '  ratio (faster shell tool time / gpugate time): %.2f (goal >= 1.00)\n' "$(div "$best" "$t_gg")"
}
bench_set large
bench_set small

rss() { "${TIME_BIN:-/usr/bin/time}" -v "$GPUGATE" hf verify --cache "$1" 2>&1 >/dev/null | awk -F': ' '/Maximum resident/ {print $2}'; }
rss_big=$(rss "$work/large"); rss_medium=$(rss "$work/medium")
big_mib=$(( MB / LARGE ))
echo "peak RSS: $rss_big KiB over $LARGE blobs of $big_mib MiB, $rss_medium KiB over $LARGE of 20 MiB (ratio $(div "$rss_big" "$rss_medium" | cut -c1-4); threads x 4 MiB window, not file size)"

files=$(find "$work/scan" -type l | wc -l)
best_scan=999999; best_find=999999
for _ in 1 2 3; do
	t0=$(now); "$GPUGATE" hf scan --format json --cache "$work/scan" > /dev/null; t1=$(now)
	best_scan=$(min "$(elapsed "$t0" "$t1")" "$best_scan")
	t0=$(now); find "$work/scan" -printf '%y %s %p %l\n' > /dev/null; t1=$(now)
	best_find=$(min "$(elapsed "$t0" "$t1")" "$best_find")
done
printf 'hf scan: %s snapshot files: %.3f s (goal < 0.5 s); find -printf: %.3f s; ratio gpugate/find %.2f\n' \
	"$files" "$best_scan" "$best_find" "$(div "$best_scan" "$best_find")"
