#!/bin/sh
# gpugate hf fetch of FETCH_BENCH_MB (default 2048) MB in 8 files over loopback,
# against 8 parallel curl of the same URLs into files, in the same run and from
# the same server (issue 19: the ratio must be at least 0.8). gpugate does
# more: it hashes the blobs (sha256) while they stream, fsyncs them and writes
# the snapshot links, the ref, CACHEDIR.TAG and trees/<commit>.json. Two more
# figures: curl into /dev/null (receiving only), and what a shell user would
# run for gpugate's result: curl into files, then sha256sum.
#
# Last, the hash alone (the files hashed at once, no download) and the ceiling
# it sets: each file is one sha256 stream, which no tool that verifies while
# it downloads can beat.
#
# Stand-alone: needs sh, curl, python3, openssl and the gpugate-provision binary.
#   GPUGATE=/path/to/gpugate sh tests/bench/fetch.sh   (provision binary next to it)
#   GPUGATE_PROVISION=/path/to/gpugate-provision       (or name it directly)
#   FETCH_BENCH_MB=2048 FETCH_BENCH_REPS=5             (size, repetitions)
#   FETCH_BENCH_FILES=8                                (how many files the size is split into)
#   FETCH_BENCH_BASELINE=/path/to/an/older/gpugate-provision (timed beside it)
# Each repetition runs curl and gpugate back to back (order alternating), so
# both see the same machine load; medians are printed, and the ratio of the
# medians last. The server (tests/bench/fetch_server.py) sends with
# sendfile(2) from the page cache through a large socket buffer, one thread
# per connection, so it is not what is measured. Work files live in /dev/shm
# when it has room (so the disk is not measured either).
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
GPUGATE=${GPUGATE:-$HERE/../../build/gpugate}
PROVISION=${GPUGATE_PROVISION:-$(dirname "$GPUGATE")/gpugate-provision}
PYTHON=${PYTHON:-$(command -v python3)}
MB=${FETCH_BENCH_MB:-2048}
REPS=${FETCH_BENCH_REPS:-5}
N=${FETCH_BENCH_FILES:-8}
BASELINE=${FETCH_BENCH_BASELINE:-}
[ -x "$PROVISION" ] || { echo "fetch.sh: no gpugate-provision at $PROVISION (set GPUGATE or GPUGATE_PROVISION)" >&2; exit 1; }
command -v curl > /dev/null || { echo "fetch.sh: curl not found" >&2; exit 1; }
base=/dev/shm
[ "$(df -Pm /dev/shm 2>/dev/null | awk 'NR==2 {print $4}')" -gt $((MB * 3 + 256)) ] 2>/dev/null || base=${TMPDIR:-/tmp}
work=$(mktemp -d "$base/gpugate-fetch-bench.XXXXXX")
server=""
cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$work"; }
trap cleanup EXIT INT TERM
mkdir "$work/files"
per=$((MB / N))
i=0
while [ $i -lt $N ]; do
	head -c "${per}M" /dev/urandom > "$work/files/shard-$i.bin"
	i=$((i + 1))
done
cat "$work"/files/* > /dev/null # the page cache holds them (when not on /dev/shm)
"$PYTHON" "$HERE/fetch_server.py" "$work/files" > "$work/port" &
server=$!
while [ ! -s "$work/port" ]; do
	kill -0 "$server" 2>/dev/null || { echo "fetch.sh: the server did not start" >&2; exit 1; }
	sleep 0.1
done
port=$(cat "$work/port")
url="http://127.0.0.1:$port"
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy HF_HUB_OFFLINE TRANSFORMERS_OFFLINE HF_TOKEN

now() { date +%s.%N; }
urls() {
	i=0
	while [ $i -lt $N ]; do
		echo "$url/bench/model/resolve/main/shard-$i.bin"
		i=$((i + 1))
	done
}
curl_all() { urls | xargs -P $N -n 1 curl -sS -f -o /dev/null; }
curl_files() {
	i=0
	while [ $i -lt $N ]; do
		echo "$i"
		i=$((i + 1))
	done | xargs -P $N -I{} curl -sS -f -o "$work/out/shard-{}.bin" "$url/bench/model/resolve/main/shard-{}.bin"
}
gpugate_all() {
	HF_ENDPOINT=$url HF_HUB_CACHE=$work/cache "$PROVISION" hf-fetch bench/model --quiet > /dev/null
}
baseline_all() {
	HF_ENDPOINT=$url HF_HUB_CACHE=$work/cache "$BASELINE" hf-fetch bench/model --quiet > /dev/null
}
# What a shell user runs for the same result: curl into files, then sha256sum
# of each, all 8 in parallel.
curl_files_sha() {
	i=0
	while [ $i -lt $N ]; do
		echo "$i"
		i=$((i + 1))
	done | xargs -P $N -I{} sh -c "curl -sS -f -o '$work/out/shard-{}.bin' '$url/bench/model/resolve/main/shard-{}.bin' && sha256sum '$work/out/shard-{}.bin' > /dev/null"
}
check_blobs() {
	n=$(ls "$work/cache/models--bench--model/blobs" | wc -l)
	[ "$n" -eq $N ] || { echo "fetch.sh: expected $N blobs, found $n" >&2; exit 1; }
	[ -s "$work/cache/models--bench--model/trees/$(printf 'b%.0s' $(seq 40)).json" ] ||
		{ echo "fetch.sh: no trees/<commit>.json was written" >&2; exit 1; }
}
# Times one command into the file $2 (seconds), the clean-up before it untimed.
timed() {
	rm -rf "$work/cache" "$work/out"
	mkdir "$work/out"
	t0=$(now)
	$1
	t1=$(now)
	echo "$t1 $t0" | awk '{printf "%.4f\n", $1 - $2}' >> "$work/$2"
}

# One untimed round of each first: memory this VM touches for the first time
# is slow on Firecracker-style guests, and the server warms up.
timed curl_all warm
timed curl_files warm
timed gpugate_all warm
[ -z "$BASELINE" ] || timed baseline_all warm
r=0
while [ $r -lt "$REPS" ]; do
	if [ $((r % 2)) -eq 0 ]; then
		timed curl_files files.t
		timed gpugate_all gpugate.t
		check_blobs
	else
		timed gpugate_all gpugate.t
		check_blobs
		timed curl_files files.t
	fi
	timed curl_all curl.t
	timed curl_files_sha sha.t
	if [ -n "$BASELINE" ]; then
		timed baseline_all baseline.t
		check_blobs
	fi
	# the hash alone, no download: the N files at once, each one sha256
	# stream as gpugate hashes each file, from the page cache; the faster of
	# sha256sum and openssl (Debian's sha256sum does not use libcrypto)
	t0=$(now)
	find "$work/out" -name 'shard-*.bin' -print0 | xargs -0 -P "$N" -n 1 sha256sum > /dev/null
	t1=$(now)
	find "$work/out" -name 'shard-*.bin' -print0 | xargs -0 -P "$N" -n 1 openssl dgst -sha256 > /dev/null
	t2=$(now)
	echo "$t0 $t1 $t2" | awk '{a = $2 - $1; b = $3 - $2; printf "%.4f\n", a < b ? a : b}' >> "$work/hash.t"
	r=$((r + 1))
done

median() { sort -n "$work/$1" | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
all() { sort -n "$work/$1" | tr '\n' ' '; }
b=""; ba=""; h=$(median hash.t); ha=$(all hash.t)
[ -z "$BASELINE" ] || { b=$(median baseline.t); ba=$(all baseline.t); }
awk -v mb="$MB" -v reps="$REPS" -v c="$(median curl.t)" -v g="$(median gpugate.t)" -v s="$(median sha.t)" \
	-v f="$(median files.t)" -v cpus="$(nproc)" -v n="$N" -v base="$base" -v ca="$(all curl.t)" -v ga="$(all gpugate.t)" \
	-v sa="$(all sha.t)" -v fa="$(all files.t)" -v b="$b" -v ba="$ba" -v h="$h" -v ha="$ha" 'BEGIN {
	printf "files: %d MB in %d files over loopback (work dir on %s, %d CPUs), medians of %d runs\n", mb, n, base, cpus, reps
	printf "curl x%d parallel -> /dev/null:        %.2f s  %7.0f MB/s   (runs: %s)\n", n, c, mb / c, ca
	printf "curl x%d parallel -> files:            %.2f s  %7.0f MB/s   (runs: %s)\n", n, f, mb / f, fa
	printf "gpugate hf fetch (sha256, fsync):     %.2f s  %7.0f MB/s   (runs: %s)\n", g, mb / g, ga
	if (b != "")
		printf "baseline gpugate hf fetch:            %.2f s  %7.0f MB/s   (runs: %s)\n", b, mb / b, ba
	printf "curl x%d -> files, then sha256sum:     %.2f s  %7.0f MB/s   (runs: %s)\n", n, s, mb / s, sa
	printf "sha256 x%d of the files, no download: %.2f s  (runs: %s)\n", n, h, ha
	printf "ceiling for hashing while downloading: %.2f (curl-to-files / that: each file is one sha256 stream)\n", f / h
	printf "ratio gpugate/(curl+sha256sum):       %.2f\n", s / g
	printf "ratio gpugate/curl-to-/dev/null:      %.2f\n", c / g
	if (b != "")
		printf "ratio baseline/curl-to-files:         %.2f\n", f / b
	printf "ratio gpugate/curl-to-files:          %.2f (target >= 0.8)\n", f / g
}'
