#!/bin/sh
# gpugate hf fetch of FETCH_BENCH_MB (default 2048) MB in 8 files over loopback,
# against curl fetching the same URLs in parallel into /dev/null, in the same
# run and from the same server. Prints both times and the throughput ratio
# (gpugate / curl; the target is at least 0.8). gpugate does more: it writes
# the blobs, hashes them (sha256) and fsyncs them; curl only discards bytes.
# Work files live in /dev/shm when it has room (so the disk is not measured).
set -eu
GPUGATE=${GPUGATE:-build/gpugate}
PROVISION="$(dirname "$GPUGATE")/gpugate-provision"
MB=${FETCH_BENCH_MB:-2048}
N=8
HERE=$(cd "$(dirname "$0")" && pwd)
base=/dev/shm
[ "$(df -Pm /dev/shm 2>/dev/null | awk 'NR==2 {print $4}')" -gt $((MB * 2 + 256)) ] 2>/dev/null || base=${TMPDIR:-/tmp}
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
/usr/bin/python3 "$HERE/fetch_server.py" "$work/files" > "$work/port" &
server=$!
while [ ! -s "$work/port" ]; do sleep 0.1; done
port=$(cat "$work/port")
url="http://127.0.0.1:$port"
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY ALL_PROXY all_proxy HF_HUB_OFFLINE TRANSFORMERS_OFFLINE

now() { date +%s.%N; }

curl_all() {
	i=0
	while [ $i -lt $N ]; do
		echo "$url/bench/model/resolve/main/shard-$i.bin"
		i=$((i + 1))
	done | xargs -P $N -n 1 curl -sS -f -o /dev/null
}
gpugate_all() {
	rm -rf "$work/cache"
	HF_ENDPOINT=$url HF_HUB_CACHE=$work/cache "$PROVISION" hf-fetch bench/model --quiet > /dev/null
}

# What a shell user runs for the same result: parallel curl into files, then
# sha256sum of each (in parallel too).
curl_files_sha() {
	rm -rf "$work/out"
	mkdir "$work/out"
	i=0
	while [ $i -lt $N ]; do
		echo "$i"
		i=$((i + 1))
	done | xargs -P $N -I{} sh -c "curl -sS -f -o '$work/out/shard-{}.bin' '$url/bench/model/resolve/main/shard-{}.bin' && sha256sum '$work/out/shard-{}.bin' > /dev/null"
}

# One untimed round of each first: the server's page cache, and memory that
# this VM touches for the first time (slow on Firecracker-style guests).
curl_all
gpugate_all

t0=$(now); curl_all; t1=$(now)
t2=$(now); gpugate_all; t3=$(now)
curl_files_sha
t4=$(now); curl_files_sha; t5=$(now)
n=$(ls "$work/cache/models--bench--model/blobs" | wc -l)
[ "$n" -eq $N ] || { echo "fetch.sh: expected $N blobs, found $n" >&2; exit 1; }

awk -v mb="$MB" -v c="$(awk "BEGIN {print $t1 - $t0}")" -v g="$(awk "BEGIN {print $t3 - $t2}")" -v s="$(awk "BEGIN {print $t5 - $t4}")" -v cpus="$(nproc)" 'BEGIN {
	printf "files: %d MB in 8 files over loopback (work dir on '"$base"', %d CPUs)\n", mb, cpus
	printf "curl x8 parallel -> /dev/null:        %.2f s  %7.0f MB/s\n", c, mb / c
	printf "gpugate hf fetch (sha256, fsync):     %.2f s  %7.0f MB/s\n", g, mb / g
	printf "curl x8 -> files, then sha256sum:     %.2f s  %7.0f MB/s\n", s, mb / s
	printf "ratio gpugate/curl throughput:        %.2f (target >= 0.8)\n", c / g
	printf "ratio gpugate/(curl+sha256sum):       %.2f\n", s / g
}'
