#!/usr/bin/python3
"""Wall-clock timing of several commands run in turn, one run of each per
round (the order rotating every round), so that a change of load on a shared
machine lands on all of them alike; hyperfine runs all of one command's runs
before the next, and on the shared 2-CPU build VM the load moves between two
of its batches.

    interleave.py ROUNDS WARMUP NAME=COMMAND [NAME=COMMAND ...]

COMMAND is split as a shell would split it (no shell runs it: a process
start costs the same for every command). Each run must exit 0, else this
exits 1 naming it. Prints one JSON object: "rounds", each round's times in
seconds by name ("by_round", for ratios taken within a round, whose median
is robust to the load of any one round), and each name's median time."""
import json
import os
import shlex
import statistics
import sys
import time


def run_once(argv, devnull):
    t0 = time.perf_counter()
    pid = os.posix_spawn(argv[0], argv, os.environ,
                         file_actions=[(os.POSIX_SPAWN_DUP2, devnull, 1), (os.POSIX_SPAWN_DUP2, devnull, 2)])
    _, status = os.waitpid(pid, 0)
    elapsed = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit("interleave.py: %s exited %d" % (" ".join(argv), os.waitstatus_to_exitcode(status)))
    return elapsed


def main():
    rounds, warmup = int(sys.argv[1]), int(sys.argv[2])
    cmds = []
    for spec in sys.argv[3:]:
        name, _, command = spec.partition("=")
        argv = shlex.split(command)
        if os.sep not in argv[0]:
            argv[0] = next((os.path.join(d, argv[0]) for d in os.environ.get("PATH", "").split(os.pathsep)
                            if os.access(os.path.join(d, argv[0]), os.X_OK)), argv[0])
        cmds.append((name, argv))
    devnull = os.open(os.devnull, os.O_WRONLY)
    by_round = []
    for r in range(warmup + rounds):
        k = r % len(cmds)
        this = {}
        for name, argv in cmds[k:] + cmds[:k]:
            this[name] = run_once(argv, devnull)
        if r >= warmup:
            by_round.append(this)
    out = {"rounds": rounds, "by_round": by_round,
           "median": {n: statistics.median(b[n] for b in by_round) for n, _ in cmds}}
    json.dump(out, sys.stdout)
    print()


if __name__ == "__main__":
    main()
