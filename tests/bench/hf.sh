#!/bin/sh
# Benchmark of `gpugate hf verify` and `gpugate hf scan`, in the same run as
# the shell alternatives a user would type:
#   verify: `find blobs -type f | xargs -P$(nproc) -n8 sha256sum` over the same
#           blobs (mixed sizes: 256 MB LFS files down to 2 KB git blobs; note
#           the git blobs are small and hashed with git's sha1). Goal: gpugate's
#           throughput >= 0.9 of the shell's.
#   scan:   100,000 snapshot files; goal < 0.5 s (and against `find -printf`).
#   memory: peak RSS (/usr/bin/time -v) of verify over 256 MB files vs over one
#           small file: it must not grow with the file size.
# HF_BENCH_MB (default 2048) sets the data size, HF_BENCH_SCAN_FILES (default
# 100000) the scan size; HF_BENCH_DIR the folder (default under /var/tmp).
# Everything is removed at the end.
set -eu
GPUGATE=${GPUGATE:-build/gpugate}
MB=${HF_BENCH_MB:-2048}
SCAN_FILES=${HF_BENCH_SCAN_FILES:-100000}
work=$(mktemp -d "${HF_BENCH_DIR:-/var/tmp}/gpugate-hf-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.6f", b - a }'; }
min() { awk -v a="$1" -v b="$2" 'BEGIN { print (a < b) ? a : b }'; }
div() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.6f", a / b }'; }

# The data: blobs named by their hashes, each linked from one snapshot.
python3 - "$work" "$MB" "$SCAN_FILES" <<'PY'
import hashlib, os, sys
work, mb, scan_files = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
M = 1 << 20
def repo(cache, name, blobs, revisions=1):
    r = os.path.join(cache, name)
    os.makedirs(os.path.join(r, "blobs"), exist_ok=True)
    names = []
    for data in blobs:
        h = hashlib.sha256(data).hexdigest() if data[:1] != b"g" else \
            hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
        with open(os.path.join(r, "blobs", h), "wb") as f:
            f.write(data)
        names.append(h)
    return r, names
def link_all(r, names, revisions, files_per_rev):
    for v in range(revisions):
        commit = "%040x" % (v + 1)
        snap = os.path.join(r, "snapshots", commit)
        for d in range(0, files_per_rev, 1000):
            os.makedirs(os.path.join(snap, "d%03d" % (d // 1000)), exist_ok=True)
        for i in range(files_per_rev):
            os.symlink("../../../blobs/" + names[i % len(names)], os.path.join(snap, "d%03d" % (i // 1000), "f%d" % i))
    os.makedirs(os.path.join(r, "refs"), exist_ok=True)
    with open(os.path.join(r, "refs", "main"), "w") as f:
        f.write("%040x" % 1)
def gen(size, seed):
    # fast distinct content: a random block repeated with a counter stamped in
    block = os.urandom(M)
    out = bytearray()
    n = 0
    while len(out) < size:
        out += n.to_bytes(8, "little") + block[8:]
        n += 1
    return bytes(out[:size])
budget = mb * M
sizes = []
big = max(1, (budget // 2) // (256 * M)); sizes += [256 * M] * big
mid = (budget * 35 // 100) // (16 * M); sizes += [16 * M] * mid
small = (budget * 13 // 100) // (256 << 10); sizes += [256 << 10] * small
cache = os.path.join(work, "mixed")
blobs = []
r, names = repo(cache, "models--bench--mixed", [])
for i, s in enumerate(sizes):
    _, n = repo(cache, "models--bench--mixed", [gen(s, i)])
    names += n
git = [b"g%07d" % i + os.urandom(2040) for i in range(2000)]
_, n = repo(cache, "models--bench--mixed", git)
names += n
link_all(r, names, 1, len(names))
# one small file: the memory baseline
r, n = repo(os.path.join(work, "small"), "models--bench--small", [gen(4 * M, 1)])
link_all(r, n, 1, 1)
# the scan: scan_files snapshot files over 10 revisions, 1,000 tiny blobs
r, n = repo(os.path.join(work, "scan"), "models--bench--scan", [b"x%d" % i for i in range(1000)])
link_all(r, n, 10, scan_files // 10)
PY

blobs="$work/mixed/models--bench--mixed/blobs"
nblobs=$(find "$blobs" -type f | wc -l)
bytes=$(du -sb "$blobs" | cut -f1)
echo "hf verify: $nblobs blobs, $((bytes / 1048576)) MiB, $(nproc) CPUs (page cache warm for both)"
find "$blobs" -type f -print0 | xargs -0 -P"$(nproc)" -n8 sha256sum > /dev/null   # warm the page cache

best_shell=999999; best_gg=999999
for _ in 1 2; do
	t0=$(now); find "$blobs" -type f -print0 | xargs -0 -P"$(nproc)" -n8 sha256sum > /dev/null; t1=$(now)
	t=$(elapsed "$t0" "$t1"); best_shell=$(min "$t" "$best_shell")
	t0=$(now); "$GPUGATE" hf verify --cache "$work/mixed" > "$work/verify.out"; t1=$(now)
	t=$(elapsed "$t0" "$t1"); best_gg=$(min "$t" "$best_gg")
done
grep -q "hf verify: ok" "$work/verify.out" || { echo "hf verify did not pass:"; cat "$work/verify.out"; exit 1; }
printf '  shell  find|xargs -P%s -n8 sha256sum: %.3f s  %.0f MB/s\n' "$(nproc)" "$best_shell" "$(div "$bytes" "$best_shell" | awk '{ print $1 / 1000000 }')"
printf '  gpugate hf verify:                   %.3f s  %.0f MB/s\n' "$best_gg" "$(div "$bytes" "$best_gg" | awk '{ print $1 / 1000000 }')"
ratio=$(div "$best_shell" "$best_gg")
printf '  throughput ratio gpugate/shell: %.2f (goal >= 0.90)\n' "$ratio"

rss() { /usr/bin/time -v "$GPUGATE" hf verify --cache "$1" 2>&1 >/dev/null | awk -F': ' '/Maximum resident/ {print $2}'; }
rss_big=$(rss "$work/mixed"); rss_small=$(rss "$work/small")
echo "peak RSS: $rss_big KiB over files up to 256 MiB, $rss_small KiB over one 4 MiB file (ratio $(div "$rss_big" "$rss_small" | cut -c1-4); threads x 1 MiB buffer, not file size)"

files=$(find "$work/scan" -type l | wc -l)
best_scan=999999; best_find=999999
for _ in 1 2 3; do
	t0=$(now); "$GPUGATE" hf scan --format json --cache "$work/scan" > /dev/null; t1=$(now)
	t=$(elapsed "$t0" "$t1"); best_scan=$(min "$t" "$best_scan")
	t0=$(now); find "$work/scan" -printf '%y %s %p %l\n' > /dev/null; t1=$(now)
	t=$(elapsed "$t0" "$t1"); best_find=$(min "$t" "$best_find")
done
printf 'hf scan: %s snapshot files: %.3f s (goal < 0.5 s); find -printf: %.3f s; ratio gpugate/find %.2f\n' \
	"$files" "$best_scan" "$best_find" "$(div "$best_scan" "$best_find")"
