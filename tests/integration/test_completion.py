"""Bash completion (src/completion/gpugate.bash), run for real: interactive
bash under a pseudo-terminal typing a line and <Tab> (Terminal, below), and
bash with
Debian's bash-completion, the script loaded by bash-completion's own loader
from a completions folder as the package installs it, COMP_WORDS and
COMP_CWORD set as readline sets them, and COMPREPLY read back."""
import os
import pty
import re
import select
import shutil
import subprocess
import time
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


def test_files_for_spec(share):
    (share / "mine.yaml").write_text("extends: ci\n")
    (share / "notes.txt").write_text("")
    assert complete(share, "gpugate --spec m") == ["mine.yaml"]
    assert complete(share, "gpugate --spec n") == []


class Terminal:
    """Real interactive bash under a pseudo-terminal: readline splits the words
    (at COMP_WORDBREAKS, ':' and '=' included), runs the completion and edits
    the line; a key bound with `bind -x` prints the edited line back."""

    MARK = b">>\r\n"

    def __init__(self, share, cwd):
        env = {"PATH": f"{Path(GPUGATE).parent}:/usr/bin:/bin", "HOME": str(share), "XDG_DATA_DIRS": str(share),
               "TERM": "dumb", "LC_ALL": "C", "PS1": "$ ", "INPUTRC": "/dev/null"}
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # the child: bash, reading the terminal
            os.chdir(cwd)
            os.execve("/bin/bash", ["bash", "--norc", "--noprofile", "-i"], env)
        # bash-completion, its loader finding gpugate in XDG_DATA_DIRS; one
        # candidate per line when several match; C-x C-l prints the line
        self.send("source /usr/share/bash-completion/bash_completion; bind 'set show-all-if-ambiguous on';"
                  " bind 'set completion-display-width 0'; bind 'set page-completions off';"
                  " bind -x '\"\\C-x\\C-l\": printf \"\\n<<%s>>\\n\" \"$READLINE_LINE\"'; echo READY\n")
        self.read_until(b"READY\r\n")

    def send(self, text):
        os.write(self.fd, text.encode())

    def read_until(self, marker, timeout=20):
        buf = b""
        end = time.monotonic() + timeout
        while marker not in buf:
            ready, _, _ = select.select([self.fd], [], [], max(0.0, end - time.monotonic()))
            assert ready, f"bash did not answer within {timeout} s: {buf!r}"
            chunk = os.read(self.fd, 4096)
            assert chunk, f"bash ended: {buf!r}"
            buf += chunk
        return buf.decode(errors="replace")

    def tab(self, text):
        """The line after typing text and <Tab>, and the candidates listed."""
        self.send(text + "\t\x18\x0c")  # <Tab>, then C-x C-l
        out = self.read_until(self.MARK)
        self.send("\x15")  # C-u: an empty line for the next one
        line = out[out.rfind("<<") + 2:out.rfind(">>")]
        shown = out[:out.rfind("<<")].split("\r\n")
        # a listing: the lines between the typed text and the redrawn prompt
        listed = [w for w in shown[1:-1] if w and not w.startswith("$ ")]
        return line, listed

    def close(self):
        self.send("exit\n")
        os.waitpid(self.pid, 0)
        os.close(self.fd)


@pytest.fixture(scope="module")
def terminal(share, tmp_path_factory):
    cwd = tmp_path_factory.mktemp("cwd")
    (cwd / "report.json").write_text("")
    (cwd / "mine.yaml").write_text("extends: ci\n")
    (cwd / "out").mkdir()
    t = Terminal(share, cwd)
    yield t
    t.close()


# (typed, the line after <Tab>) in real bash: every form an option's value takes
LINES = [
    ("gpugate check --report json:re", "gpugate check --report json:report.json "),
    ("gpugate check --report=json:re", "gpugate check --report=json:report.json "),
    ("gpugate --report json:ou", "gpugate --report json:out/"),
    ("gpugate --report ju", "gpugate --report junit:"),
    ("gpugate --report=ju", "gpugate --report=junit:"),
    ("gpugate --format js", "gpugate --format json "),
    ("gpugate --format=jso", "gpugate --format=json "),
    ("gpugate --format ju", "gpugate --format junit "),
    ("gpugate --profile v", "gpugate --profile validate "),
    ("gpugate --profile=hea", "gpugate --profile=healthcheck "),
    ("gpugate --color al", "gpugate --color always "),
    ("gpugate --color=al", "gpugate --color=always "),
    ("gpugate --vendor=nv", "gpugate --vendor=nvidia "),
    ("gpugate --only devices.gpus,hf.int", "gpugate --only devices.gpus,hf.integrity"),
    ("gpugate --skip=runtime.sm", "gpugate --skip=runtime.smoke"),
    ("gpugate --spec mi", "gpugate --spec mine.yaml "),
    ("gpugate --spec=mi", "gpugate --spec=mine.yaml "),
    ("gpugate --no-sa", "gpugate --no-sandbox "),
    ("gpugate check --verb", "gpugate check --verbose "),
    ("gpugate hf wh", "gpugate hf where "),
    ("gpugate hf where --verb", "gpugate hf where --verbose "),
    ("gpugate bundle -o re", "gpugate bundle -o report.json "),
    ("gpugate bundle --output=re", "gpugate bundle --output=report.json "),
    ("gpugate diff --format=mark", "gpugate diff --format=markdown "),
    ("gpugate spec freeze --flo", "gpugate spec freeze --floor "),
]


@pytest.mark.parametrize("typed,expected", LINES)
def test_completion_in_real_bash(terminal, typed, expected):
    line, _ = terminal.tab(typed)
    assert line == expected, (typed, line)


def test_candidates_listed_in_real_bash(terminal):
    line, listed = terminal.tab("gpugate --report j")
    assert line == "gpugate --report j" and sorted(listed) == ["json:", "junit:"], (line, listed)
    line, listed = terminal.tab("gpugate --format=j")
    assert sorted(listed) == ["json", "junit"], (line, listed)


# Each command's getopt table (the options the program takes) against what
# completion offers after `--` for it: a new option must reach both.
TABLES = [  # (source file, the command lines whose offers together must cover it)
    ("src/main.c", ["gpugate check --"]),
    ("src/hf/hf_cmd.c", ["gpugate hf where --", "gpugate hf scan --", "gpugate hf verify --"]),
    ("src/provision/hf_fetch.c", ["gpugate hf fetch --"]),
    ("src/provision/stack.c", ["gpugate stack fetch --"]),
    ("src/provision/bundle.c", ["gpugate bundle --"]),
    ("src/operator/freeze.c", ["gpugate spec freeze --"]),
    ("src/operator/diff.c", ["gpugate diff --"]),
]
INTERNAL = {"preflight"}  # gpugate serve's own call of check, not a user's option


def getopt_long_names(path):
    text = (REPO / path).read_text()
    names = re.findall(r'\{\s*"([a-z][a-z-]*)",\s*(?:no|required|optional)_argument', text)
    assert names, f"no getopt_long table found in {path}"
    return set(names) - INTERNAL


@pytest.mark.parametrize("path,lines", TABLES, ids=[t[0] for t in TABLES])
def test_completion_offers_every_option_of_the_getopt_tables(share, path, lines):
    offered = set()
    for line in lines:
        offered |= {o.lstrip("-").rstrip("=") for o in complete(share, line)}
    missing = sorted(getopt_long_names(path) - offered)
    assert not missing, f"{path} takes --{', --'.join(missing)}, which completion does not offer after {lines}"
