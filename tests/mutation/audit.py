#!/usr/bin/env python3
"""A reproducible mutation audit of the judging code (issue 27 item 4).

Each mutant in tests/mutation/mutants.json names a file, a source snippet
that occurs exactly once in it, its replacement, a one-line reason, and
optionally the integration test files that should see it ("integration")
and why it is equivalent ("equivalent": a mutant no test can kill because
the program behaves the same). One at a time, the mutant is written into
the source, the judging unit suites (UNIT below) and, where named, the
binary are rebuilt in their own build folder (incremental: one object and
the links), and the unit suites, then the integration files, run; the first
failing test kills it. The file is restored in a finally block and checked
byte for byte, whatever happened (a build error, Ctrl-C).

    python3 tests/mutation/audit.py [--build build/mut] [--only ID ...] [--list]

Prints one line per mutant and `N killed, M survived` (survivors marked
equivalent counted apart); exits 1 while a survivor is not equivalent, or
when a mutant does not build or its snippet is not unique (a stale audit).
`make mutation-audit` runs it."""
import argparse
import glob
import hashlib
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MUTANTS = os.path.join(ROOT, "tests", "mutation", "mutants.json")
# the unit suites of the judging code: facts structs, no fixture root
UNIT = ("tests/unit/test_judge_*.c", "tests/unit/test_judging.c", "tests/unit/test_facts*.c",
        "tests/unit/test_probe_plan.c", "tests/unit/test_cuda_visible.c")
TEST_TIMEOUT = 120  # a mutant that loops forever is killed by this
# the Makefile's PYTEST: Debian's python3, which has pytest and jsonschema
PYTHON = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


def unit_names():
    names = set()
    for pattern in UNIT:
        names.update(os.path.splitext(os.path.basename(p))[0] for p in glob.glob(os.path.join(ROOT, pattern)))
    return sorted(names)


def load(path):
    with open(path, encoding="utf-8") as f:
        mutants = json.load(f)
    seen = set()
    for m in mutants:
        for key in ("id", "file", "find", "replace", "reason"):
            # an empty replacement deletes the snippet
            if not isinstance(m.get(key), str) or (not m[key] and key != "replace"):
                sys.exit(f"{path}: mutant {m.get('id', '?')}: '{key}' must be a non-empty string")
        if m["id"] in seen:
            sys.exit(f"{path}: mutant id {m['id']} given twice")
        seen.add(m["id"])
        if m["find"] == m["replace"]:
            sys.exit(f"{path}: mutant {m['id']}: the replacement is the snippet itself")
    return mutants


def make(build, targets):
    proc = subprocess.run(["make", "-j2", "--no-print-directory", f"BUILD={build}", *targets], cwd=ROOT,
                          capture_output=True, text=True)
    return proc.returncode, proc.stdout + proc.stderr


def run_tests(build, units, integration):
    """The name of the first test that fails, or None when all pass."""
    for name in units:
        try:
            proc = subprocess.run([os.path.join(ROOT, build, "tests", name)], cwd=ROOT, capture_output=True,
                                  text=True, timeout=TEST_TIMEOUT)
        except subprocess.TimeoutExpired:
            return f"{name} (timed out)"
        if proc.returncode != 0:
            return name
    if integration:
        env = dict(os.environ, GPUGATE=os.path.join(ROOT, build, "gpugate"),
                   GPUGATE_FAKE_ZE=os.path.join(ROOT, build, "fakes", "libze_fake.so"))
        for test in integration:
            try:
                proc = subprocess.run([PYTHON, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", test],
                                      cwd=ROOT, env=env, capture_output=True, text=True, timeout=TEST_TIMEOUT * 5)
            except subprocess.TimeoutExpired:
                return f"{os.path.basename(test)} (timed out)"
            if proc.returncode != 0:
                return os.path.basename(test)
    return None


def targets_for(build, units, integration):
    targets = [f"{build}/tests/{name}" for name in units]
    if integration:
        # what `make test-integration` builds first, but the other executables
        targets += [f"{build}/gpugate", f"{build}/fakes/libze_fake.so", f"{build}/fakes/libhang_open.so",
                    "cuda-test-programs"]
    return targets


def audit(build, m, units):
    """(outcome, detail): outcome is killed, survived, or error."""
    path = os.path.join(ROOT, m["file"])
    with open(path, "rb") as f:
        original = f.read()
    text = original.decode("utf-8")
    n = text.count(m["find"])
    if n != 1:
        return "error", f"the snippet occurs {n} times in {m['file']} (must be once)"
    integration = m.get("integration", [])
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text.replace(m["find"], m["replace"]))
        rc, out = make(build, targets_for(build, units, integration))
        if rc != 0:
            return "error", "does not build: " + out.strip().splitlines()[-1][:200]
        failed = run_tests(build, units, integration)
    finally:
        with open(path, "wb") as f:
            f.write(original)
        with open(path, "rb") as f:
            if hashlib.sha256(f.read()).digest() != hashlib.sha256(original).digest():
                sys.exit(f"{m['file']} was not restored: check it with git diff")
    return ("killed", failed) if failed else ("survived", "")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build/mut", help="the build folder the mutants are built in")
    ap.add_argument("--mutants", default=MUTANTS)
    ap.add_argument("--only", nargs="*", help="mutant ids to run (default: all)")
    ap.add_argument("--list", action="store_true", help="list the mutants and stop")
    args = ap.parse_args()
    mutants = load(args.mutants)
    if args.list:
        for m in mutants:
            print(f"{m['id']:<28} {m['file']}: {m['reason']}")
        return 0
    if args.only:
        unknown = set(args.only) - {m["id"] for m in mutants}
        if unknown:
            sys.exit(f"unknown mutant ids: {', '.join(sorted(unknown))}")
        mutants = [m for m in mutants if m["id"] in args.only]
    units = unit_names()
    # the unmutated tree must pass what the mutants are judged by
    integration = sorted({t for m in mutants for t in m.get("integration", [])})
    rc, out = make(args.build, targets_for(args.build, units, integration))
    if rc != 0:
        sys.exit(f"the unmutated tree does not build:\n{out[-2000:]}")
    failed = run_tests(args.build, units, integration)
    if failed:
        sys.exit(f"the unmutated tree fails {failed}: fix that before auditing")
    killed = survived = equivalent = errors = 0
    for m in mutants:
        start = time.monotonic()
        outcome, detail = audit(args.build, m, units)
        took = f"{time.monotonic() - start:5.1f}s"
        if outcome == "killed":
            killed += 1
            print(f"killed    {m['id']:<28} by {detail}  [{took}]", flush=True)
        elif outcome == "error":
            errors += 1
            print(f"ERROR     {m['id']:<28} {detail}", flush=True)
        elif m.get("equivalent"):
            equivalent += 1
            print(f"survived  {m['id']:<28} equivalent: {m['equivalent']}  [{took}]", flush=True)
        else:
            survived += 1
            print(f"SURVIVED  {m['id']:<28} {m['file']}: {m['reason']}  [{took}]", flush=True)
    print(f"{killed} killed, {survived + equivalent} survived ({equivalent} equivalent)"
          + (f", {errors} broken mutants" if errors else ""))
    return 1 if survived or errors else 0


if __name__ == "__main__":
    sys.exit(main())
