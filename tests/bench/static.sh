#!/bin/sh
# Benchmark of the healthcheck's static path (issue 31 item 7): everything
# `gpugate check --profile healthcheck` does but the runtime probe, on an
# eight-GPU fixture root (tests/integration/gpufixture.py) with this
# machine's real dpkg database (~1 MB, ~1,000 packages, read whole with
# dpkg's strictness: src/lib/dpkg_status.c) holding the Intel stack, and a
# mounted Hugging Face cache; against the shell script a user would write for
# the same facts, and a bare process start, all in the same run (rounds of one
# run each, interleave.py; the ratio is the median of the rounds' ratios).
# Goal: gpugate at most 0.10 x the script.
# STATIC_BENCH_BASELINE=/path/to/older/gpugate adds that binary to the same run.
# BENCH_DPKG_STATUS: the status file to start from (default this machine's).
set -eu
GPUGATE=${GPUGATE:-build/gpugate}
RUNS=${BENCH_RUNS:-300}
WARMUP=${BENCH_WARMUP:-10}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root=$work/root
/usr/bin/python3 "$here/../integration/gpufixture.py" "$root" 8
mkdir -p "$root/var/lib/dpkg/updates" "$root/var/lib/dpkg/info" "$root/proc/self" "$root/root/.cache/huggingface/hub"
: > "$root/var/lib/dpkg/available"
# this machine's status file, the Intel stack of the XPU image at the
# versions the healthcheck pins need (a package already there gets the new
# version in place: dpkg refuses the same package twice)
/usr/bin/python3 - "${BENCH_DPKG_STATUS:-/var/lib/dpkg/status}" "$root/var/lib/dpkg/status" <<'PY'
import re, sys
stack = {"libze1": "1.21.9-1", "libze-intel-gpu1": "25.18.33578.6-1", "intel-opencl-icd": "25.18.33578.6-1",
         "intel-igc-core-2": "2.11.7", "libigdgmm12": "22.7.2-1"}
text = open(sys.argv[1], encoding="utf-8", errors="surrogateescape").read()
out = []
for st in text.split("\n\n"):
    m = re.match(r"Package: (\S+)\n", st)
    if m and m.group(1) in stack:
        st = re.sub(r"(?m)^Version: .*$", "Version: " + stack.pop(m.group(1)), st)
    out.append(st)
body = "\n\n".join(out).rstrip("\n") + "\n"
for name, version in stack.items():
    body += (f"\nPackage: {name}\nStatus: install ok installed\nPriority: optional\nArchitecture: amd64\n"
             f"Maintainer: bench <bench@example.org>\nVersion: {version}\nDescription: bench fixture\n")
open(sys.argv[2], "w", encoding="utf-8", errors="surrogateescape").write(body)
PY
printf '1 0 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n2 1 8:17 / /root/.cache/huggingface rw,relatime - ext4 /dev/sdb1 rw\n' \
	> "$root/proc/self/mountinfo"
echo "status file: $(wc -c < "$root/var/lib/dpkg/status") bytes, $(grep -c '^Package:' "$root/var/lib/dpkg/status") packages"
dpkg-query --admindir="$root/var/lib/dpkg" -W libze1 > /dev/null || { echo "dpkg refuses the bench database"; exit 1; }
gp="$GPUGATE check --profile healthcheck --vendor intel --skip runtime --root $root"
HOME=/root $gp > "$work/out.txt" || { echo "gpugate: the bench root is not healthy"; cat "$work/out.txt"; exit 1; }
head -2 "$work/out.txt"
cat > "$work/shell.sh" <<'SH'
# The same facts by hand: the pinned packages and their versions, each GPU's
# render node usable, the cache mounted and writable.
R=$1
admin=$R/var/lib/dpkg
# one read of the database, then each pin compared (dpkg reads no database for that)
dpkg-query --admindir="$admin" -W -f='${Package} ${Version} ${db:Status-Abbrev}\n' \
	libze1 libze-intel-gpu1 intel-opencl-icd intel-igc-core-2 libigdgmm12 > "$R.list" 2> /dev/null || exit 1
while read -r pkg version status; do
	case $pkg in
	libze1) min=1.17 ;;
	libze-intel-gpu1 | intel-opencl-icd) min=24.26 ;;
	intel-igc-core-2) min=1.0.17193 ;;
	libigdgmm12) min=22.3.19 ;;
	esac
	[ "$status" = ii ] && dpkg --compare-versions "$version" ge "$min" || exit 1
done < "$R.list"
n=0
for link in "$R"/dev/dri/by-path/pci-*-render; do
	[ -c "$link" ] && [ -r "$link" ] && [ -w "$link" ] || exit 1
	n=$((n + 1))
done
[ "$n" -ge 1 ] || exit 1
grep -q ' /root/.cache/huggingface ' "$R/proc/self/mountinfo" || exit 1
[ -d "$R/root/.cache/huggingface/hub" ] && [ -w "$R/root/.cache/huggingface/hub" ]
SH
sh "$work/shell.sh" "$root" || { echo "the shell script fails on the bench root"; exit 1; }
sc="sh $work/shell.sh $root"
bl=""
if [ -n "${STATIC_BENCH_BASELINE:-}" ]; then
	bl="$STATIC_BENCH_BASELINE check --profile healthcheck --vendor intel --skip runtime --root $root"
	HOME=/root $bl > /dev/null || { echo "the baseline binary fails on the bench root"; exit 1; }
fi
# One run of each command per round, the order rotating (interleave.py):
# the load of the shared machine, which moves the shell script's dozen
# process starts most, falls on every command of a round alike; the ratio is
# taken per round, then its median over all rounds.
load_before=$(cut -d' ' -f1 /proc/loadavg)
cpu_before=$(head -1 /proc/stat)
HOME=/root /usr/bin/python3 "$here/interleave.py" "$RUNS" "$WARMUP" "gpugate=$gp" "shell=$sc" "true=/bin/true" \
	${bl:+"baseline=$bl"} > "$work/times.json"
# How much of the CPUs stood idle meanwhile (/proc/stat's idle over all):
# the packages group and the parts of the status file run on threads of
# their own only where a CPU is free, so a machine with none (a shared VM)
# cannot show what they give.
idle=$(printf '%s\n%s\n' "$cpu_before" "$(head -1 /proc/stat)" | awk '{t = 0; for (i = 2; i <= NF; i++) t += $i; tot[NR] = t; idl[NR] = $5}
	END {d = tot[2] - tot[1]; if (d > 0) printf "%.0f", 100 * (idl[2] - idl[1]) / d; else print "?"}')
echo "load while measuring: $load_before before, $(cut -d' ' -f1-3 /proc/loadavg) after, on $(nproc) cores, ${idle} % of the CPUs' time idle"
# Instructions of the whole process (callgrind): the same whatever the
# machine's load, so steps too small for the wall clock still show.
if command -v valgrind > /dev/null; then
	for cmd in "$gp" ${bl:+"$bl"}; do
		# shellcheck disable=SC2086 # the command's words
		HOME=/root valgrind --tool=callgrind --callgrind-out-file=/dev/null $cmd > /dev/null 2> "$work/cg.txt" || true
		echo "instructions, whole process: $(sed -n 's/.*Collected : //p' "$work/cg.txt") (${cmd%% *})"
	done
fi
# System calls of one run (strace -f): the threads started (clone: the
# watchdog, the second share, the status file's parts past the first), the
# stacks given back (madvise) and the futex waits and wakes between threads,
# which the wall clock folds into one number.
if command -v strace > /dev/null; then
	for cmd in "$gp" ${bl:+"$bl"}; do
		# shellcheck disable=SC2086 # the command's words
		HOME=/root strace -f -c -o "$work/st.txt" $cmd > /dev/null 2>&1 || true
		echo "system calls, one run: $(awk '$NF == "total" {print $4}' "$work/st.txt")," \
			"$(awk '$NF ~ /^(clone|clone3|madvise|futex|mmap|munmap|mprotect)$/ {n[$NF] = $4} END {
				printf "clone %d, madvise %d, futex %d, mmap %d, munmap %d, mprotect %d", n["clone"],
					n["madvise"], n["futex"], n["mmap"], n["munmap"], n["mprotect"]}' "$work/st.txt")" \
			"(${cmd%% *})"
	done
fi
# Page faults of one run (the median of 5; /usr/bin/time): each is a trap,
# and on a virtual machine a costly one; the fresh memory a run touches
# (the parts' tables, thread stacks) and the status file's pages it maps
# show here, not in the instruction count.
if [ -x /usr/bin/time ]; then
	for cmd in "$gp" ${bl:+"$bl"}; do
		# shellcheck disable=SC2086 # the command's words
		faults=$(for _ in 1 2 3 4 5; do HOME=/root /usr/bin/time -f '%R' $cmd 2>&1 > /dev/null | tail -1; done | sort -n | sed -n 3p)
		echo "page faults, one run: $faults (median of 5; ${cmd%% *})"
	done
fi
/usr/bin/python3 - "$work/times.json" <<'PY'
import json, statistics, sys
r = json.load(open(sys.argv[1]))
m = {k: v * 1e3 for k, v in r["median"].items()}
n = r["rounds"]


def ratio(a, b):  # the median over the rounds of a's time over b's in the same round
    return statistics.median(x[a] / x[b] for x in r["by_round"])


print(f"gpugate healthcheck static path (8 GPUs, whole process): median {m['gpugate']:.2f} ms ({n} rounds)")
print(f"shell script for the same facts: median {m['shell']:.2f} ms")
print(f"bare process start (/bin/true): median {m['true']:.2f} ms")
print(f"ratio gpugate/shell script: {ratio('gpugate', 'shell'):.3f} (median of the rounds' ratios; "
      f"ratio of the medians {m['gpugate'] / m['shell']:.3f}; goal <= 0.10)")
if "baseline" in m:
    print(f"baseline binary: median {m['baseline']:.2f} ms, ratio to the shell script {ratio('baseline', 'shell'):.3f}, "
          f"gpugate/baseline {ratio('gpugate', 'baseline'):.3f}")
PY
