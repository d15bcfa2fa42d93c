#!/bin/bash
# mpiexec whose stdout (or stdout and stderr) is closed by its reader
# (`mpiexec ... | head -1`): the ranks die of SIGPIPE, and mpiexec reports
# (where it can), kills the other ranks, exits non-zero without panicking
# (101), and leaves no process and no /dev/shm segment behind.
set -u
PREFIX=${OXMPI_PREFIX:?}
dir=$(mktemp -d)
trap 'pkill -KILL -f "$dir/" 2>/dev/null; rm -rf "$dir"' EXIT
cat > "$dir/chatty.c" <<'C'
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int i = 0; i < 100000; i++) {
        printf("rank %d line %d\n", rank, i);
        fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
C
"$PREFIX/bin/mpicc" -o "$dir/chatty" "$dir/chatty.c" || exit 1
errors=0
segments() { ls /dev/shm 2>/dev/null | grep '^oxmpi-' | sort; }
for how in "stdout" "stdout and stderr"; do
    before=$(segments)
    if [ "$how" = stdout ]; then
        timeout -k 5 60 "$PREFIX/bin/mpiexec" -n 3 "$dir/chatty" 2> "$dir/err" | head -n 1 > "$dir/out"
    else
        timeout -k 5 60 "$PREFIX/bin/mpiexec" -n 3 "$dir/chatty" 2>&1 | head -n 1 > "$dir/out"
    fi
    rc=${PIPESTATUS[0]}
    sleep 0.2
    if [ "$rc" = 0 ] || [ "$rc" = 101 ] || [ "$rc" = 124 ]; then
        echo "closed $how: mpiexec exited with $rc (expected a rank's SIGPIPE status, not 0, 101 or a timeout)"
        errors=$((errors + 1))
    fi
    if ! grep -q '^rank [0-9] line 0$' "$dir/out"; then
        echo "closed $how: the reader got '$(cat "$dir/out")'"
        errors=$((errors + 1))
    fi
    if pgrep -f "$dir/chatty" > /dev/null; then
        echo "closed $how: ranks left running: $(pgrep -f "$dir/chatty" | tr '\n' ' ')"
        errors=$((errors + 1))
    fi
    left=$(comm -13 <(echo "$before") <(segments))
    if [ -n "$left" ]; then
        echo "closed $how: segments left in /dev/shm: $left"
        errors=$((errors + 1))
    fi
    echo "REPORT|fault|mpiexec -n 3 with its $how closed by its reader (piped into head -n 1)|exit $rc; $(if [ "$how" = stdout ]; then head -n 1 "$dir/err"; else echo "mpiexec's stderr went into the closed pipe too"; fi)|$(pgrep -f "$dir/chatty" | tr '\n' ' ')${left:-no process, nothing in /dev/shm}"
    if [ "$how" = stdout ] && ! grep -q 'SIGPIPE' "$dir/err"; then
        echo "closed stdout: mpiexec did not name the rank's SIGPIPE on stderr: $(cat "$dir/err")"
        errors=$((errors + 1))
    fi
done
if [ "$errors" = 0 ]; then
    echo "No Errors"
    exit 0
fi
exit 1
