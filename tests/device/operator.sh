#!/bin/sh
# The operator's rollout (OPERATORS.md) on a real GPU host, each command's
# output printed: a validate run, a freeze of the stack as it is (with its
# measured baselines), a second validate run, a check against the frozen
# spec, the diff of the two validate runs, and a bundle.
#   make && make cuda-test-programs   # not needed: the real driver is used
#   GPUGATE=build/gpugate sh tests/device/operator.sh
# The files land in $OUT (the device tool's folder) or a temp folder.
# gpugate's own exit codes are printed, never fatal: an unhealthy host is
# output too.
set -u
GPUGATE=${GPUGATE:-build/gpugate}
dir=${OUT:-$(mktemp -d)}
mkdir -p "$dir"

step() {
	printf '\n$ %s\n' "$*"
	"$@"
	printf '[exit %s]\n' "$?"
}

step "$GPUGATE" --version
step "$GPUGATE" check --profile validate --report json:"$dir/old.json"
step "$GPUGATE" spec freeze --profile validate --with-baselines -o "$dir/stack.yaml"
printf '\n$ cat %s\n' "$dir/stack.yaml"
cat "$dir/stack.yaml"
for f in "$dir"/stack.baselines/*.json; do
	[ -e "$f" ] || continue
	printf '\n$ cat %s\n' "$f"
	cat "$f"
	echo
done
step "$GPUGATE" check --profile validate --report json:"$dir/new.json"
step "$GPUGATE" check --spec "$dir/stack.yaml"
step "$GPUGATE" diff "$dir/old.json" "$dir/new.json"
step "$GPUGATE" diff --format markdown "$dir/old.json" "$dir/new.json"
step "$GPUGATE" bundle -o "$dir/bundle.tar.gz"
printf '\n$ tar -xzOf %s gpugate-bundle/index.txt\n' "$dir/bundle.tar.gz"
tar -xzOf "$dir/bundle.tar.gz" gpugate-bundle/index.txt
echo "files in $dir"
