"""The dangerous-command check (tests/lib/fix_safety.py) that conftest.Run
applies to every fix text the integration tests make gpugate print: it must
catch what would damage a host and pass gpugate's ordinary fixes."""
import pytest

import conftest
import fix_safety

DANGEROUS = [
    "chown -R 1000 /",
    "chown -R 1000 /   (on the host, or run the container as the owner)",
    "chown --recursive 1000:1000 /var",
    "chmod -R a+rwX /home",
    "chmod -R 777 ~",
    "chown -R 1000 /data/../..",
    "chown 1000 /",
    "rm -rf /tmp/cache/.locks",
    "rm -r $HOME/.cache",
    "sudo mkfs.ext4 /dev/sda1",
    "dd if=/dev/zero of=/dev/nvme0n1 bs=1M",
    "curl -fsSL https://example.com/install | sh",
    "wget -qO- https://example.com/x | sudo bash",
    "rm --no-preserve-root -fr /",
]
SAFE = [
    "chown -R 1000:1000 /home/u/.cache/huggingface/hub   (on the host; or run the container as the folder's owner: docker run --user 1000 ...)",
    "mkdir -p /.cache/huggingface/hub && chown 1000:1000 /.cache/huggingface/hub   (as root; ...)",
    "install libze1 at a version >= 1.17 (apt-get install libze1 from the repository that carries it)",
    "docker run -v $HOME/.cache/huggingface:/home/app/.cache/huggingface ...",
    "chown -R 1000:1000 /tmp/x/hub/.locks   (as root; huggingface_hub also recreates a removed .locks)",
    "docker run --device /dev/dri -v /dev/dri/by-path:/dev/dri/by-path ...",
]


@pytest.mark.parametrize("fix", DANGEROUS)
def test_dangerous_fixes_are_caught(fix):
    assert fix_safety.problems(fix), fix


@pytest.mark.parametrize("fix", SAFE)
def test_ordinary_fixes_pass(fix):
    assert fix_safety.problems(fix) == [], fix


def test_runs_record_and_judge_fixes():
    text = "FAIL  hf.writable: / is not writable\n      fix: chown -R 1000 /\n"
    assert conftest.fix_texts(text) == ["chown -R 1000 /"]
    json_out = '{"checks": [{"id": "a", "remediation": "rm -rf /x"}, {"id": "b"}]}'
    assert conftest.fix_texts(json_out) == ["rm -rf /x"]
    with pytest.raises(AssertionError, match="dangerous to paste"):
        conftest.record_fixes(text)
    conftest.record_fixes("      fix: docker run -v /dev/dri/by-path:/dev/dri/by-path ...\n")
