#!/bin/sh
# The rollout of OPERATORS.md on a fixture node, as printed there: an Intel
# node laid out in a folder (dpkg database, one GPU in sysfs with mknod'ed
# /dev/dri nodes, a hub cache with a trees/ listing; tests/integration's
# fixture helpers) and the test Level Zero driver (tests/fakes/fake_ze.c),
# whose slow_copy fault stands in for a slower new driver. Needs root (mknod)
# and `make test-integration`'s build (fakes included). Runs in $OUT or a
# temp folder; each command and its output goes to standard output.
set -u
repo=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD:-$repo/build}
dir=${OUT:-$(mktemp -d)}
mkdir -p "$dir/bin" && cd "$dir" || exit 1
ln -sf "$build/gpugate" bin/gpugate
PYTHONPATH=$repo/tests/integration /usr/bin/python3 - <<'EOF'
import json, os
from gpufixture import Root
from conftest import stanza, write
import hf_builder as h
node = os.path.abspath("node")
Root(node).add_gpus(1, device=0x56a0)
packages = [("libze1", "1.17.6-1"), ("libze-intel-gpu1", "24.26.30049.6-1"), ("intel-opencl-icd", "24.26.30049.6-1"),
            ("libigc1", "1.0.17193.4-1"), ("libigdgmm12", "22.3.19-1"), ("bash", "5.2.15-2+b2")]
write(node + "/var/lib/dpkg/status", stanza("dpkg", "1.21.22") + "".join("\n" + stanza(n, v) for n, v in packages))
write(node + "/proc/self/mountinfo", "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n")
cache = node + "/root/.cache/huggingface/hub"
config, weights = b'{"model_type": "bert"}\n', b"\0" * 4096
names = h.add_repo(cache, "models--acme--tiny-bert",
                   {h.COMMIT_A: {"config.json": (config, False), "model.safetensors": (weights, True)}}, {"main": h.COMMIT_A})
write(cache + "/models--acme--tiny-bert/trees/" + h.COMMIT_A + ".json", json.dumps({"format_version": 1, "files": {
    "config.json": {"size": len(config), "blob_id": names["config.json"]},
    "model.safetensors": {"size": len(weights), "blob_id": "0" * 40, "lfs_sha256": names["model.safetensors"],
                          "lfs_size": len(weights)}}}))
EOF
cat > node.yaml <<'EOF'
# The node's spec: the validate profile, with the cache on the root filesystem
extends: validate
hf:
  require_mount: false
  integrity: true
EOF
PATH=$dir/bin:$PATH
ZE_ENABLE_ALT_DRIVERS=$build/fakes/libze_fake.so
LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu # the runtime check looks for the loader under --root, or here
XDG_RUNTIME_DIR=$dir
export PATH ZE_ENABLE_ALT_DRIVERS LD_LIBRARY_PATH XDG_RUNTIME_DIR
run() {
	printf '\n$ %s\n' "$*"
	"$@"
	printf '[exit %s]\n' "$?"
}
run gpugate check --root node --spec node.yaml --report json:before.json
run gpugate spec freeze --root node --spec node.yaml --with-baselines -o stack-24.26.yaml
printf '$ cat stack-24.26.yaml\n'
cat stack-24.26.yaml
printf '$ cat stack-24.26.baselines/8086-56a0-level-zero.json\n'
cat stack-24.26.baselines/*.json
echo
# the upgrade: three packages move, and the new driver copies 30% slower
sed -i -e 's/^Version: 24.26.30049.6-1$/Version: 24.35.30872.22-1/' \
	-e 's/^Version: 1.0.17193.4-1$/Version: 1.0.17537.20-1/' node/var/lib/dpkg/status
GPUGATE_FAKE_FAULT=slow_copy
export GPUGATE_FAKE_FAULT
run gpugate check --root node --spec node.yaml --report json:after.json
run gpugate check --root node --spec stack-24.26.yaml
run gpugate diff before.json after.json
printf '\n$ gpugate bundle -o - --spec stack-24.26.yaml --backend level-zero > bundle.tar.gz\n'
gpugate bundle -o - --spec stack-24.26.yaml --backend level-zero > bundle.tar.gz
printf '[exit %s]\n$ tar -tzf bundle.tar.gz\n' "$?"
tar -tzf bundle.tar.gz
printf '$ tar -xzOf bundle.tar.gz gpugate-bundle/index.txt\n'
tar -xzOf bundle.tar.gz gpugate-bundle/index.txt
