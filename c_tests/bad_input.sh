#!/bin/bash
# Bad input across the whole function table: tools/gen_bad_input.py writes a
# program that calls every implemented function (both forms of a twin) once
# per argument it can make invalid (a handle that is a garbage integer,
# null, freed or of another kind, an uncommitted datatype, a negative count
# or tag, a NULL output, a rank out of range), with every other argument
# harmless, under MPI_ERRORS_RETURN; each call must return the class of the
# invalid argument, and none may crash or hang. Runs on 1 and 2 processes.
set -u
PREFIX=${OXMPI_PREFIX:?}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
python3 "$ROOT/tools/gen_bad_input.py" "$ROOT/src/abi/mpi_functions.txt" "$PREFIX/include/mpi.h" \
    > "$dir/bad_input.c" || exit 1
"$PREFIX/bin/mpicc" -O0 -I "$ROOT/c_tests" -o "$dir/bad_input" "$dir/bad_input.c" || exit 1
errors=0
functions=$(grep -o 'expect("[A-Za-z_0-9]*"' "$dir/bad_input.c" | sort -u | wc -l)
for n in 1 2; do
    timeout -k 5 120 "$PREFIX/bin/mpiexec" -n "$n" "$dir/bad_input" > "$dir/out" 2> "$dir/calls"
    rc=$?
    summary=$(sed -n 's/^rank 0: //p' "$dir/out")
    echo "REPORT|bad input|$functions functions (every implemented one, both forms of a twin), each called once per argument made invalid (a handle that is a garbage integer, null, freed or of another kind; an uncommitted datatype; a NULL output; a negative count or tag; a rank or root out of range), MPI_ERRORS_RETURN, $n process(es)|exit $rc: ${summary:-no summary (it crashed or hung at: $(tail -n 1 "$dir/calls"))}|-"
    if [ "$rc" != 0 ] || ! grep -q '^No Errors$' "$dir/out"; then
        echo "on $n processes: exit $rc; the last call made: $(tail -n 1 "$dir/calls")"
        grep -v '^No Errors$' "$dir/out" | head -n 40
        errors=$((errors + 1))
    fi
done
if [ "$errors" = 0 ]; then
    grep 'calls with an invalid argument' "$dir/out" | head -n 1
    echo "No Errors"
    exit 0
fi
exit 1
