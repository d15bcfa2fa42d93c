#!/bin/bash
# A rank that ends without finalizing MPI while a peer waits for it: with
# _exit(0), or by returning from main after MPI_Init without MPI_Finalize.
# mpiexec ends the whole job (its peer would wait forever), names the rank,
# exits non-zero and leaves no process behind. Sessions may stay open at
# exit (the library says goodbye to the launcher then), and a program that
# never uses MPI exits as it likes.
set -u
PREFIX=${OXMPI_PREFIX:?}
dir=$(mktemp -d)
trap 'pkill -KILL -f "$dir/" 2>/dev/null; rm -rf "$dir"' EXIT
cat > "$dir/nofin.c" <<'C'
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int rank, v = 0;
    if (argc > 1 && strcmp(argv[1], "session") == 0) {
        MPI_Session s;
        MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &s);
        return 0; /* a session left open: allowed */
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 1) {
        if (argc > 1 && strcmp(argv[1], "_exit") == 0)
            _exit(0);
        return 0; /* no MPI_Finalize */
    }
    MPI_Recv(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    return 0;
}
C
"$PREFIX/bin/mpicc" -o "$dir/nofin" "$dir/nofin.c" || exit 1
errors=0
for how in _exit return; do
    start=$(($(date +%s%N) / 1000000))
    timeout -k 5 30 "$PREFIX/bin/mpiexec" -n 2 "$dir/nofin" "$how" > "$dir/out" 2> "$dir/err"
    rc=$?
    ms=$(($(date +%s%N) / 1000000 - start))
    if [ "$rc" = 0 ] || [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
        echo "$how: mpiexec exited with $rc (expected the job to fail, not to succeed or hang)"
        errors=$((errors + 1))
    fi
    if ! grep -q '^mpiexec: rank 1 (pid [0-9]*) exited without finalizing MPI$' "$dir/err"; then
        echo "$how: mpiexec said: $(cat "$dir/err")"
        errors=$((errors + 1))
    fi
    sleep 0.2
    left=$(pgrep -f "$dir/nofin" | tr '\n' ' ')
    if [ -n "$left" ]; then
        echo "$how: ranks left running"
        errors=$((errors + 1))
    fi
    [ "$how" = return ] && how="returns from main"
    echo "REPORT|fault|2 ranks, rank 1 $how without MPI_Finalize while rank 0 waits in MPI_Recv from it|exit $rc after $ms ms; $(head -n 1 "$dir/err")|${left:+processes: }${left:-no process}"
done
timeout -k 5 30 "$PREFIX/bin/mpiexec" -n 2 "$dir/nofin" session > "$dir/out" 2> "$dir/err"
rc=$?
if [ "$rc" != 0 ] || [ -s "$dir/err" ]; then
    echo "a session left open at exit: mpiexec exited with $rc: $(cat "$dir/err")"
    errors=$((errors + 1))
fi
timeout -k 5 30 "$PREFIX/bin/mpiexec" -n 2 true 2> "$dir/err"
rc=$?
if [ "$rc" != 0 ] || [ -s "$dir/err" ]; then
    echo "a program without MPI: mpiexec exited with $rc: $(cat "$dir/err")"
    errors=$((errors + 1))
fi
if [ "$errors" = 0 ]; then
    echo "No Errors"
    exit 0
fi
exit 1
