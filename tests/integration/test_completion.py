"""Bash completion (src/completion/gpugate.bash), run for real: bash with
Debian's bash-completion, the script loaded by bash-completion's own loader
from a completions folder as the package installs it, COMP_WORDS and
COMP_CWORD set as readline sets them, and COMPREPLY read back."""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import GPUGATE

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "src" / "completion" / "gpugate.bash"
BASH_COMPLETION = Path("/usr/share/bash-completion/bash_completion")

# Loads bash-completion, then lets its loader find `gpugate` in
# $XDG_DATA_DIRS/bash-completion/completions (as /usr/share is searched for
# the installed package), then completes the line in $LINE as readline
# would: words split at COMP_WORDBREAKS, the cursor at the end.
DRIVER = r'''
set -u
source /usr/share/bash-completion/bash_completion
__load_completion gpugate || { echo "bash-completion did not load gpugate" >&2; exit 9; }
spec=$(complete -p gpugate) || exit 8
read -r -a COMP_WORDS <<< "$WORDS"
[[ $LINE == *" " ]] && COMP_WORDS+=("")
COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
COMP_LINE=$LINE
COMP_POINT=${#LINE}
COMPREPLY=()
func=${spec#*-F }
func=${func%% *}
"$func" gpugate "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]:-}"
printf '%s\n' "${COMPREPLY[@]}"
'''


@pytest.fixture(scope="module")
def share(tmp_path_factory):
    assert BASH_COMPLETION.is_file(), "bash-completion is not installed (.ci/install-deps installs it)"
    share = tmp_path_factory.mktemp("share")
    (share / "bash-completion" / "completions").mkdir(parents=True)
    shutil.copy(SCRIPT, share / "bash-completion" / "completions" / "gpugate")
    return share


def complete(share, line, gpugate_dir=None):
    """COMPREPLY for the command line `line` (the cursor at its end)."""
    words = line.replace("=", " = ").rstrip()  # readline splits at '=' (COMP_WORDBREAKS)
    env = {"PATH": f"{gpugate_dir or Path(GPUGATE).parent}:/usr/bin:/bin", "HOME": str(share),
           "XDG_DATA_DIRS": str(share), "LINE": line, "WORDS": words, "LC_ALL": "C"}
    r = subprocess.run(["bash", "--norc", "--noprofile", "-c", DRIVER], capture_output=True, text=True,
                       env=env, timeout=30, cwd=share)
    assert r.returncode == 0, f"{line!r}: rc {r.returncode}\n{r.stdout}{r.stderr}"
    return [w for w in r.stdout.splitlines() if w]


def gpugate_list(*args):
    return subprocess.run([GPUGATE, "list", *args], capture_output=True, text=True, check=True).stdout


def check_ids():
    out = gpugate_list()
    ids = []
    for line in out.split("\n\n")[0].splitlines()[1:]:
        ids.append(line.split()[0])
    assert len(ids) > 20, out
    return ids


def test_subcommands(share):
    assert complete(share, "gpugate ") == ["check", "list", "hf", "stack", "bundle", "spec", "diff", "serve"]
    assert complete(share, "gpugate h") == ["hf"]
    assert complete(share, "gpugate hf ") == ["where", "scan", "verify", "fetch"]
    assert complete(share, "gpugate stack ") == ["fetch", "verify"]
    assert complete(share, "gpugate spec ") == ["freeze"]


def test_options(share):
    assert complete(share, "gpugate --pro") == ["--profile"]
    opts = complete(share, "gpugate check --")
    for o in ("--profile", "--spec", "--vendor", "--root", "--format", "--report", "--deadline", "--only",
              "--skip", "--quiet", "--verbose", "--color=", "--nfd-prefix", "--no-sandbox"):
        assert o in opts, (o, opts)
    assert complete(share, "gpugate list --") == ["--spec-keys"]
    assert complete(share, "gpugate hf where --v") == ["--verbose"]
    assert "--manifest" in complete(share, "gpugate stack fetch --")
    assert complete(share, "gpugate --format j") == ["json", "junit"]
    assert complete(share, "gpugate diff --format ") == ["text", "json", "markdown"]
    assert complete(share, "gpugate --vendor ") == ["intel", "nvidia"]
    assert complete(share, "gpugate --color=al") == ["always"]
    assert complete(share, "gpugate --report ju") == ["junit:"]
    assert complete(share, "gpugate serve --li") == ["--listen"]
    assert "--interval" in complete(share, "gpugate serve --") and "--spec" in complete(share, "gpugate serve --")
    assert complete(share, "gpugate serve --profile ") == ["healthcheck", "ci", "validate"]


def test_profiles_come_from_gpugate_list(share, tmp_path):
    profiles = [line.split()[0] for line in gpugate_list().split("profiles")[1].splitlines()[1:] if line.strip()]
    assert profiles == ["healthcheck", "ci", "validate"]
    assert complete(share, "gpugate --profile ") == profiles
    assert complete(share, "gpugate check --profile v") == ["validate"]
    # a gpugate whose list names another profile: completion follows it
    fake = tmp_path / "gpugate"
    fake.write_text("#!/bin/sh\nprintf 'checks:\\n  x.y  one\\n\\nprofiles (x):\\n  custom  x.y\\n'\n")
    fake.chmod(0o755)
    assert complete(share, "gpugate --profile ", gpugate_dir=tmp_path) == ["custom"]
    assert complete(share, "gpugate --only ", gpugate_dir=tmp_path) == ["x.y", "x"]


def test_check_ids_come_from_gpugate_list(share):
    ids = check_ids()
    offered = complete(share, "gpugate --only ")
    assert [i for i in ids if i not in offered] == []
    groups = sorted({i.split(".")[0] for i in ids})
    assert [g for g in groups if g not in offered] == []
    assert complete(share, "gpugate --skip runtime.sm") == ["runtime.smoke"]
    # after a comma, the next id of the list
    assert complete(share, "gpugate --only devices.gpus,hf.int") == ["devices.gpus,hf.integrity"]


def test_files_for_spec_and_report(share):
    (share / "mine.yaml").write_text("extends: ci\n")
    (share / "notes.txt").write_text("")
    assert complete(share, "gpugate --spec m") == ["mine.yaml"]
    assert complete(share, "gpugate --spec n") == []
    assert complete(share, "gpugate --report junit:no") == ["junit:notes.txt"]
