#!/bin/bash
# `mpiexec -pset NAME=RANKLIST` publishes process sets to every process:
# the sessions_psets test run with the option instead of OXMPI_PSETS, and
# bad -pset values are refused with one line and exit code 2.
set -u
PREFIX=${OXMPI_PREFIX:?}
ROOT=${OXMPI_ROOT:-$(dirname "$0")/..}
MPIEXEC=${MPIEXEC:-$PREFIX/bin/mpiexec}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
errors=0
"$PREFIX/bin/mpicc" -I"$ROOT/c_tests" -o "$dir/sessions_psets" "$ROOT/c_tests/sessions_psets.c" || exit 1
out=$(timeout 60 "$MPIEXEC" -n 4 -pset app://even=0,2 -pset app://odd=1,3 "$dir/sessions_psets" 2>&1)
if [ $? = 0 ] && echo "$out" | grep -qx "No Errors"; then
    echo "ok - -pset app://even=0,2 -pset app://odd=1,3"
else
    echo "not ok - -pset: $out"; errors=$((errors + 1))
fi
for bad in "app://x" "=1,2" "app://x="; do
    err=$(timeout 10 "$MPIEXEC" -n 2 -pset "$bad" /bin/true 2>&1)
    rc=$?
    if [ "$rc" = 2 ] && [ "$(echo "$err" | grep -c '^mpiexec: ')" = 1 ]; then
        echo "ok - -pset '$bad' refused: $err"
    else
        echo "not ok - -pset '$bad': exit $rc: $err"; errors=$((errors + 1))
    fi
done
[ "$errors" = 0 ] && { echo "No Errors"; exit 0; }
exit 1
