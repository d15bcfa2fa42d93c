#!/bin/bash
# mpiexec serves PMI spawn (MPI_Comm_spawn's launcher side), checked with
# c_tests/spawn_pmi.c, which speaks raw PMI over PMI_FD (no MPI library):
# one spawn of two commands starts 3 children as one new process group
# (own ranks, appnum, KVS with the preput key, barrier), they read the
# parent's key through OXMPI_JOB_KVS, and bad spawns start nothing.
# Environment: MPIEXEC (default $OXMPI_PREFIX/bin/mpiexec), CC (default cc).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
MPIEXEC=${MPIEXEC:-${OXMPI_PREFIX:?}/bin/mpiexec}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"${CC:-cc}" -O1 -o "$dir/spawn_pmi" "$ROOT/c_tests/spawn_pmi.c" || exit 1
timeout -k 5 60 "$MPIEXEC" -usize 5 -n 1 "$dir/spawn_pmi" > "$dir/out" 2> "$dir/err"
rc=$?
if [ "$rc" != 0 ] || ! grep -q '^No Errors$' "$dir/out" || [ -s "$dir/err" ]; then
    echo "mpiexec exited with $rc"
    cat "$dir/out" "$dir/err" | head -n 40
    exit 1
fi
echo "No Errors"
