#!/bin/sh
# Benchmark of the devices group on an eight-GPU fixture root (real character
# devices, by-path links, sysfs in the kernel's layout), measured three ways:
#  - the group's own time inside gpugate (sum of the devices.* durations in
#    the JSON report; prepare is inside the first), median of many processes;
#  - the CPU time (user+sys) the group adds to a gpugate process: a run with
#    the group minus a run with the same spec and the group skipped;
#  - the same group run repeatedly inside one process (warm code and caches),
#    built here from tests/bench/devices_repeat.c against build/obj;
#  - the shell a user would run for the same facts (readlink/stat/cat/test per
#    GPU), whole script, median.
# Goal: the group under 0.3 ms.
set -eu
GPUGATE=${GPUGATE:-build/gpugate}
RUNS=${BENCH_RUNS:-200}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 "$here/../integration/gpufixture.py" "$work/root" 8
printf 'devices:\n  by_path: require\n' > "$work/spec.yaml"
cat > "$work/shell.sh" <<'SH'
# the same facts by hand: each by-path render link, its node, sysfs identity, access
cd "$1"
for link in dev/dri/by-path/pci-*-render; do
	bdf=${link#dev/dri/by-path/pci-}; bdf=${bdf%-render}
	node=$(readlink -f "$link")
	stat -c '%F %t:%T %a %g' "$node" > /dev/null
	cat "sys/bus/pci/devices/$bdf/vendor" "sys/bus/pci/devices/$bdf/device" > /dev/null
	basename "$(readlink "sys/bus/pci/devices/$bdf/driver")" > /dev/null
	[ -r "$node" ] && [ -w "$node" ]
done
SH
$GPUGATE check --spec "$work/spec.yaml" --root "$work/root" --only devices > /dev/null || {
	echo "gpugate failed on the bench root"; $GPUGATE check --spec "$work/spec.yaml" --root "$work/root" --only devices; exit 1; }
lib=$(dirname "$GPUGATE")/libgpugate.a
warm=""
# shellcheck disable=SC2046 # pkg-config's flags are words
if [ -f "$lib" ] && cc -O2 -std=c11 -D_GNU_SOURCE -I"$here/../../src" -o "$work/repeat" "$here/devices_repeat.c" \
	"$lib" $(pkg-config --libs yaml-0.1 jansson libcrypto libseccomp) -ldl -lpthread -lm 2> "$work/cc.txt"; then
	warm=$("$work/repeat" "$work/root" 2000)
else
	echo "(no warm figure: cannot build tests/bench/devices_repeat.c: $(head -c 300 "$work/cc.txt"))"
fi
/usr/bin/python3 - "$GPUGATE" "$work" "$RUNS" "$warm" <<'PY'
import json, os, resource, statistics, subprocess, sys, time
gpugate, work, runs, warm = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4].split()
base = [gpugate, "check", "--spec", work + "/spec.yaml", "--root", work + "/root", "--format", "json"]

def cpu_ms(cmd):
    """(median wall ms, median child CPU ms) over runs; also returns the outputs' group times."""
    walls, cpus, groups = [], [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True)
        walls.append((time.perf_counter() - t0) * 1e3)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)) * 1e3)
        if p.stdout.startswith("{"):
            d = json.loads(p.stdout)
            groups.append(sum(c["duration_ms"] for c in d["checks"] if c["id"].startswith("devices.")))
    return statistics.median(walls), statistics.mean(cpus), groups

_, cpu_with, groups = cpu_ms(base + ["--only", "devices"])
_, cpu_without, _ = cpu_ms(base + ["--skip", "devices"])
shell_wall, _, _ = cpu_ms(["sh", work + "/shell.sh", work + "/root"])
groups.sort()
med, p90 = statistics.median(groups), groups[int(len(groups) * 0.9)]
print(f"devices group on 8 GPUs, inside gpugate (one cold run per process): median {med:.3f} ms, p90 {p90:.3f} ms, best {groups[0]:.3f} ms ({runs} runs)")
print(f"CPU time the group adds to the process, its report included: {cpu_with - cpu_without:.3f} ms (with {cpu_with:.3f} ms, skipped {cpu_without:.3f} ms, mean of {runs})")
if warm:
    print(f"devices group repeated in one process (warm, 2000 runs): median {float(warm[0]):.3f} ms, best {float(warm[1]):.3f} ms")
print(f"the same facts with a shell script (readlink/stat/cat/test per GPU): median {shell_wall:.2f} ms")
print(f"ratio gpugate devices group / shell script: {med / shell_wall:.4f}")
verdict = lambda v: "met" if v < 0.3 else "NOT met"
print(f"goal, group under 0.3 ms: cold first run per process {verdict(med)} ({med:.3f} ms)" +
      (f", warm {verdict(float(warm[0]))} ({float(warm[0]):.3f} ms)" if warm else ""))
PY
# System calls of the group, counted by strace: the whole process with the
# group against the same run with it skipped, and which calls the group adds.
if command -v strace > /dev/null; then
	/usr/bin/python3 - "$GPUGATE" "$work" <<'PY'
import collections, os, re, subprocess, sys
gpugate, work = sys.argv[1], sys.argv[2]

def trace(args):
    log = os.path.join(work, "strace.log")
    subprocess.run(["strace", "-f", "-qq", "-o", log, gpugate, "check", "--spec", work + "/spec.yaml",
                    "--root", work + "/root", "--format", "json", *args], capture_output=True)
    lines = [l for l in open(log) if "resumed>" not in l and not re.match(r"^\d+\s+(\+\+\+|---)", l)]
    return len(lines), collections.Counter(re.match(r"^\d+\s+(\w+)", l).group(1) for l in lines)

total, with_group = trace(["--only", "devices"])
skipped, without_group = trace(["--skip", "devices"])
print(f"system calls (strace -f): whole process {total}, {skipped} with the group skipped (+{total - skipped})")
print("  the group adds: " + ", ".join(f"{name} {n}" for name, n in (with_group - without_group).most_common()))
PY
else
	echo "(no system call count: strace not installed)"
fi
