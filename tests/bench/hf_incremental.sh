#!/bin/sh
# Benchmark of `gpugate hf verify` with its verified-blob record (issue 29):
#   stat path: a cache of INC_BLOBS blobs (default 20,000) and INC_GIB GiB
#     (default 8) of sparse files (a distinct 16-byte head, then holes: no
#     disk). Run 1 hashes everything (a fresh state folder); run 2, nothing
#     changed, trusts every blob from the record: goal >= 100x faster than run
#     1 and under 50 ms (best of RUNS). Run 1 is also set against the faster
#     of `xargs -P$(nproc) sha256sum` and `openssl dgst` over the same blobs. Then one blob's stat changes (touch):
#     run 3 hashes that blob only; printed against run 2 plus that blob's own
#     sha256sum time.
#   hash path: a cache of real (random) data, REAL_BLOBS blobs (default
#     20,000) and REAL_GIB GiB (default 8): `hf verify --full` against the
#     faster of `xargs -P$(nproc) sha256sum` and `xargs -P$(nproc) openssl dgst
#     -sha256` over the same files, page cache warm, best of RUNS: goal ratio
#     (faster shell tool time / gpugate time) >= 1.00.
#   `hf cache verify` (huggingface_hub's CLI) is timed on both when `hf` is on
#   PATH; else the script says it is not installed (Debian packages no
#   huggingface_hub: `pip install huggingface_hub` puts `hf` on PATH).
#   BASELINE_GPUGATE (optional): another build of gpugate (main's, say) whose
#   run 2 is timed on the same cache, each of RUNS pairs run back to back
#   with this build's (its record in a state folder of its own), so that a
#   machine's load falls on both alike.
# Environment: INC_BLOBS, INC_GIB, REAL_BLOBS, REAL_GIB, RUNS (default 5), HF_RUNS (RUNS),
# BENCH_DIR (default /var/tmp), GPUGATE (default build/gpugate). Everything is
# removed at the end; the real-data set needs REAL_GIB of free disk.
# Needs nothing of the repository but this script and a gpugate binary (its
# libyaml and libjansson found by the loader: LD_LIBRARY_PATH for a copied
# build), and python3 (its standard library only: it writes the caches and
# reads the JSON), coreutils, findutils, awk and openssl; no network.
set -eu
for tool in python3 openssl xargs awk; do
	command -v "$tool" > /dev/null || { echo "hf_incremental.sh needs $tool on PATH"; exit 1; }
done
GPUGATE=${GPUGATE:-build/gpugate}
"$GPUGATE" --version > /dev/null || { echo "$GPUGATE does not run (LD_LIBRARY_PATH for its libyaml and libjansson?)"; exit 1; }
INC_BLOBS=${INC_BLOBS:-20000}
INC_GIB=${INC_GIB:-8}
REAL_BLOBS=${REAL_BLOBS:-20000}
REAL_GIB=${REAL_GIB:-8}
RUNS=${RUNS:-5}
HF_RUNS=${HF_RUNS:-$RUNS} # hf cache verify hashes in one Python process: slow on 8 GiB
NPROC=$(nproc)
work=$(mktemp -d "${BENCH_DIR:-/var/tmp}/gpugate-hf-incremental.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
mkdir -m 700 "$work/state"
export XDG_RUNTIME_DIR="$work/state" # the record: in this run's own state folder

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.6f", b - a }'; }
min() { awk -v a="$1" -v b="$2" 'BEGIN { print (a < b) ? a : b }'; }
div() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
ms() { awk -v a="$1" 'BEGIN { printf "%.1f ms", a * 1000 }'; }
field() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

# One repo per cache; blobs named by their sha256, linked from one snapshot
# in folders of 1000. sparse: a 16-byte head and holes (hashed here in
# parallel, reading zeros); else random bytes.
make_cache() { # $1 folder, $2 blobs, $3 GiB, $4 sparse|real
	python3 - "$@" <<'PY'
import hashlib, os, sys
from multiprocessing import Pool
cache, n, gib, kind = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
repo = os.path.join(cache, "models--bench--inc")
blobs = os.path.join(repo, "blobs")
os.makedirs(blobs)
size = int(gib * (1 << 30)) // n
ZERO = bytes(1 << 20)
def one(i):
    head = os.urandom(16)
    tmp = os.path.join(blobs, "tmp%d" % i)
    h = hashlib.sha256()
    with open(tmp, "wb") as f:
        if kind == "sparse":
            f.write(head)
            f.truncate(size)
            h.update(head)
            left = size - len(head)
            while left:
                k = min(left, len(ZERO))
                h.update(ZERO[:k])
                left -= k
        else:
            data = head + os.urandom(size - len(head))
            f.write(data)
            h.update(data)
    name = h.hexdigest()
    os.rename(tmp, os.path.join(blobs, name))
    return name
with Pool(os.cpu_count()) as p:
    names = p.map(one, range(n), chunksize=64)
snap = os.path.join(repo, "snapshots", "%040x" % 1)
for i, name in enumerate(names):
    d = os.path.join(snap, "d%03d" % (i // 1000))
    if i % 1000 == 0:
        os.makedirs(d)
    os.symlink("../../../blobs/" + name, os.path.join(d, "f%d" % i))
os.makedirs(os.path.join(repo, "refs"))
with open(os.path.join(repo, "refs", "main"), "w") as f:
    f.write("%040x" % 1)
# the listing a current huggingface_hub writes (trees/<commit>.json): every
# file an LFS file, so that `hf cache verify` has its sha256 too
import json
files = {}
for i, name in enumerate(names):
    pointer = b"version https://git-lfs.github.com/spec/v1\noid sha256:%s\nsize %d\n" % (name.encode(), size)
    blob_id = hashlib.sha1(b"blob %d\0" % len(pointer) + pointer).hexdigest()
    files["d%03d/f%d" % (i // 1000, i)] = {"size": size, "blob_id": blob_id, "lfs_sha256": name, "lfs_size": size}
os.makedirs(os.path.join(repo, "trees"))
with open(os.path.join(repo, "trees", "%040x.json" % 1), "w") as f:
    json.dump({"format_version": 1, "files": dict(sorted(files.items()))}, f, indent=1)
PY
}

# The wall time of one command, its stdout to a file: python's monotonic
# clock read just before its spawn and just after its exit is waited for.
# (`date` before and after it put a date process's own start, ~0.5-0.9 ms,
# into every interval: a tenth of a 5 ms run 2.) Exits with its status.
timed() { # $1 stdout file, then the command; prints seconds
	python3 -c '
import subprocess, sys, time
with open(sys.argv[1], "wb") as out:
    t0 = time.monotonic_ns()
    rc = subprocess.run(sys.argv[2:], stdout=out).returncode
    t1 = time.monotonic_ns()
print("%.6f" % ((t1 - t0) / 1e9))
sys.exit(rc)' "$@"
}

verify() { # $1 cache, $2 JSON out, more args; prints the wall time
	c=$1 out=$2
	shift 2
	timed "$out" "$GPUGATE" hf verify --format json --cache "$c" "$@" || { echo "hf verify failed:"; cat "$out"; exit 1; }
}

have_hf=$(command -v hf || true)
hf_cache_verify() { # $1 cache: best of HF_RUNS of `hf cache verify` over its repo, or "not installed"
	if [ -z "$have_hf" ]; then
		echo "not installed (huggingface_hub's CLI is not packaged in this Debian release: apt-cache search huggingface finds nothing)"
		return
	fi
	best=999999
	for _ in $(seq "$HF_RUNS"); do
		t0=$(now)
		if ! HF_DEBUG=1 HF_HUB_CACHE=$1 HF_HUB_OFFLINE=1 timeout 60 hf cache verify bench/inc > "$work/hf.out" 2>&1; then
			if grep -q OfflineModeIsEnabled "$work/hf.out"; then # seen with huggingface_hub 1.33
				echo "cannot run offline: it asks the Hub for the repo's file tree (OfflineModeIsEnabled)"
			else
				echo "failed here ($(tail -1 "$work/hf.out" | cut -c1-200))"
			fi
			return
		fi
		t1=$(now)
		best=$(min "$(elapsed "$t0" "$t1")" "$best")
	done
	echo "$best s (best of $HF_RUNS; $(tail -1 "$work/hf.out" | cut -c1-120))"
}

# --- the stat path ----------------------------------------------------------
make_cache "$work/sparse" "$INC_BLOBS" "$INC_GIB" sparse
blobs=$(find "$work/sparse/models--bench--inc/blobs" -type f | wc -l)
bytes=$(du -sb --apparent-size "$work/sparse/models--bench--inc/blobs" | cut -f1)
sleep 3 # older than the record's racy margin (2 s), as a cache in use is
find "$work/sparse/models--bench--inc/blobs" -type f -exec cat {} + > /dev/null # the page cache warm for run 1 too
# run 1 against the faster parallel shell hasher over the same blobs (one run each)
find "$work/sparse/models--bench--inc/blobs" -type f -print0 > "$work/sparse.list"
per=$(( (blobs + NPROC - 1) / NPROC ))
t0=$(now); xargs -0 -P"$NPROC" -n"$per" sha256sum < "$work/sparse.list" > /dev/null; t1=$(now)
s_sum=$(elapsed "$t0" "$t1")
t0=$(now); xargs -0 -P"$NPROC" -n"$per" openssl dgst -sha256 < "$work/sparse.list" > /dev/null; t1=$(now)
s_ssl=$(elapsed "$t0" "$t1")
s_best=$(min "$s_sum" "$s_ssl")
t_first=$(verify "$work/sparse" "$work/first.json")
[ "$(field "$work/first.json" hashed)" = "$blobs" ] || { echo "run 1 did not hash every blob"; exit 1; }
t_second=999999; all2=""
for _ in $(seq "$RUNS"); do
	t=$(verify "$work/sparse" "$work/second.json")
	all2="$all2 $(ms "$t")"
	t_second=$(min "$t" "$t_second")
done
if [ "$(field "$work/second.json" trusted)" != "$blobs" ] || [ "$(field "$work/second.json" hashed)" != 0 ]; then
	echo "run 2 did not trust every blob:"; cat "$work/second.json"; exit 1
fi
if [ -n "${BASELINE_GPUGATE:-}" ]; then # run 2 against the baseline build, pair by pair
	mkdir -m 700 "$work/state-base"
	(XDG_RUNTIME_DIR="$work/state-base" GPUGATE=$BASELINE_GPUGATE verify "$work/sparse" "$work/base1.json" > /dev/null)
	pairs_base=""; pairs_this=""
	for _ in $(seq "$RUNS"); do
		pairs_base="$pairs_base $(XDG_RUNTIME_DIR="$work/state-base" GPUGATE=$BASELINE_GPUGATE verify "$work/sparse" "$work/base2.json")"
		pairs_this="$pairs_this $(verify "$work/sparse" "$work/second.json")"
	done
	median() { echo "$@" | tr ' ' '\n' | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
	pairs_out=$(
		printf '  run 2 pairs, %s against %s (%d pairs): medians %s / %s = %.2fx\n' "$BASELINE_GPUGATE" "$GPUGATE" \
			"$RUNS" "$(ms "$(median $pairs_base)")" "$(ms "$(median $pairs_this)")" \
			"$(awk -v a="$(median $pairs_base)" -v b="$(median $pairs_this)" 'BEGIN { print a / b }')"
		printf '    baseline:%s\n    this:    %s\n' "$(for t in $pairs_base; do printf ' %s' "$(ms "$t")"; done)" \
			"$(for t in $pairs_this; do printf ' %s' "$(ms "$t")"; done)"
	)
fi
one=$(find "$work/sparse/models--bench--inc/blobs" -type f | head -1)
touch "$one"
sleep 3 # out of the racy window
t0=$(now); sha256sum "$one" > /dev/null; t1=$(now)
t_one=$(elapsed "$t0" "$t1")
t_third=$(verify "$work/sparse" "$work/third.json")
[ "$(field "$work/third.json" hashed)" = 1 ] || { echo "run 3 did not hash exactly one blob:"; cat "$work/third.json"; exit 1; }
printf 'hf verify, stat path: %d blobs, %.2f GiB (sparse), %d CPUs\n' "$blobs" "$(div "$bytes" 1073741824)" "$NPROC"
printf '  run 1 (no record, hashes all):     %.3f s; xargs -P%d sha256sum %.3f s, openssl dgst %.3f s:\n' \
	"$t_first" "$NPROC" "$s_sum" "$s_ssl"
printf '    ratio (faster shell tool time / run 1) = %s (goal >= 1.00)\n' "$(div "$s_best" "$t_first")"
printf '  run 2 (nothing changed, best of %d): %s (goal < 50 ms); run 1 / run 2 = %.0fx (goal >= 100x)\n' \
	"$RUNS" "$(ms "$t_second")" "$(awk -v a="$t_first" -v b="$t_second" 'BEGIN { print a / b }')"
printf '    run 2, all %d: %s\n' "$RUNS" "$all2"
printf '  run 3 (one blob touched):          %s = run 2 %s + that blob alone (sha256sum %s) + %s\n' \
	"$(ms "$t_third")" "$(ms "$t_second")" "$(ms "$t_one")" \
	"$(ms "$(awk -v a="$t_third" -v b="$t_second" -v c="$t_one" 'BEGIN { print a - b - c }')")"
[ -z "${pairs_out:-}" ] || echo "$pairs_out"
printf '  hf cache verify: %s\n' "$(hf_cache_verify "$work/sparse")"
rm -rf "$work/sparse" "$work/state/gpugate"

# --- the hash path ----------------------------------------------------------
make_cache "$work/real" "$REAL_BLOBS" "$REAL_GIB" real
cache="$work/real"
list="$work/list"
find "$cache/models--bench--inc/blobs" -type f -print0 > "$list"
count=$(tr -cd '\0' < "$list" | wc -c)
bytes=$(du -sb "$cache/models--bench--inc/blobs" | cut -f1)
per=$(( (count + NPROC - 1) / NPROC ))
xargs -0 -P"$NPROC" -n"$per" sha256sum < "$list" > /dev/null # warm the page cache
t_sum=999999; t_ssl=999999; t_gg=999999; all=""
for _ in $(seq "$RUNS"); do
	t0=$(now); xargs -0 -P"$NPROC" -n"$per" sha256sum < "$list" > /dev/null; t1=$(now)
	t_sum=$(min "$(elapsed "$t0" "$t1")" "$t_sum")
	t0=$(now); xargs -0 -P"$NPROC" -n"$per" openssl dgst -sha256 < "$list" > /dev/null; t1=$(now)
	t_ssl=$(min "$(elapsed "$t0" "$t1")" "$t_ssl")
	t=$(verify "$cache" "$work/full.json" --full)
	[ "$(field "$work/full.json" hashed)" = "$count" ] || { echo "--full did not hash every blob"; exit 1; }
	all="$all $(printf '%.3f' "$t")"
	t_gg=$(min "$t" "$t_gg")
done
best=$(min "$t_sum" "$t_ssl")
gib() { awk -v b="$bytes" -v t="$1" 'BEGIN { printf "%.2f GiB/s", b / t / 1073741824 }'; }
printf 'hf verify --full, hash path: %d blobs, %.2f GiB (random data), %d CPUs, best of %d\n' "$count" \
	"$(div "$bytes" 1073741824)" "$NPROC" "$RUNS"
printf '  xargs -P%d sha256sum:    %.3f s  %s\n' "$NPROC" "$t_sum" "$(gib "$t_sum")"
printf '  xargs -P%d openssl dgst: %.3f s  %s\n' "$NPROC" "$t_ssl" "$(gib "$t_ssl")"
printf '  gpugate hf verify --full: %.3f s  %s  (all runs:%s)\n' "$t_gg" "$(gib "$t_gg")" "$all"
printf '  ratio (faster shell tool time / gpugate time): %s (goal >= 1.00)\n' "$(div "$best" "$t_gg")"
printf '  hf cache verify: %s\n' "$(hf_cache_verify "$cache")"
