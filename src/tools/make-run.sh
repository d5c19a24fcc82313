#!/bin/sh
# `make run` after its packages (Makefile, run-check): builds both
# executables quietly, runs `gpugate check` on this machine and ends with a
# line saying whose verdict that is, so that a newcomer does not take an
# UNHEALTHY report for a broken build, or a passing make for a healthy GPU.
#   make-run.sh MAKE BUILD [gpugate check options...]
# Exit: 0 when gpugate gave a verdict (0 healthy, 1 unhealthy), gpugate's
# code for anything else (3: usage or spec error), 2 when the build failed.
set -u
make=$1
build=$2
shift 2
log="$build/make-run.log"
mkdir -p "$build"

echo "make run: building $build/gpugate and $build/gpugate-provision (compiler output in $log) ..."
# -s: no recipe lines; what the compiler says goes to the log, shown whole
# when the build fails. $make is one word or a command with its options.
# shellcheck disable=SC2086
if ! $make -s --no-print-directory BUILD="$build" "$build/gpugate" "$build/gpugate-provision" >"$log" 2>&1; then
	cat "$log" >&2
	echo "make run: the build failed (its output is above); gpugate did not run" >&2
	exit 2
fi
echo "make run: built; running $build/gpugate check${*:+ $*}"
echo

rc=0
"$build/gpugate" check "$@" || rc=$?

echo
case $rc in
0)
	echo "make run: gpugate says HEALTHY for this machine (exit 0): every check passed here"
	;;
1)
	echo "make run: gpugate says UNHEALTHY for this machine (exit 1): that is its verdict, not a build failure;" \
		"on a machine without a GPU it is the expected answer (each FAIL above names its fix)"
	rc=0
	;;
*)
	echo "make run: gpugate could not check this machine (exit $rc: a usage or spec error, above)" >&2
	;;
esac
exit "$rc"
