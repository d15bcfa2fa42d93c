#!/bin/bash
# mpiexec serves PMI-2, checked with c_tests/pmi2_wire.c, a raw PMI-2
# client over PMI_FD (no MPI library) run as 3 ranks with -usize 5:
# version detection from the init line, fullinit, job-getid, the job
# attributes PMI_process_mapping and universeSize, a get before the put
# and of a key nobody put (found=FALSE), puts visible after kvs-fence with
# `;` and `=` in values, node attributes with wait=TRUE, the name service,
# finalize. Messages are framed as MPICH's PMI-2 client and Hydra frame them.
# Environment: MPIEXEC (default $OXMPI_PREFIX/bin/mpiexec), CC (default cc).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
MPIEXEC=${MPIEXEC:-${OXMPI_PREFIX:?}/bin/mpiexec}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"${CC:-cc}" -O1 -Wall -Werror -o "$dir/pmi2_wire" "$ROOT/c_tests/pmi2_wire.c" || exit 1
timeout -k 5 60 "$MPIEXEC" -usize 5 -n 3 "$dir/pmi2_wire" > "$dir/out" 2> "$dir/err"
rc=$?
if [ "$rc" != 0 ] || ! grep -q '^No Errors$' "$dir/out" || [ -s "$dir/err" ]; then
    echo "mpiexec exited with $rc"
    cat "$dir/out" "$dir/err" | head -n 40
    exit 1
fi
echo "No Errors"
