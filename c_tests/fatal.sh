#!/bin/bash
# MPI_ERRORS_ARE_FATAL (also a window's default), MPI_ERRORS_ABORT and MPI_Abort
# end the job through the launcher: one line naming the rank, the
# call and the problem on stderr, and a non-zero exit (MPI_Abort's code).
set -u
PREFIX=${OXMPI_PREFIX:?}
MPIEXEC=${MPIEXEC:-$PREFIX/bin/mpiexec}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/fatal.c" <<'C'
#include <mpi.h>
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv) {
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *mode = argv[1];
    if (rank == size - 1) {
        if (!strcmp(mode, "badcomm")) MPI_Comm_size((MPI_Comm)0x7777, &size);
        if (!strcmp(mode, "abortcode")) MPI_Abort(MPI_COMM_WORLD, 7);
        if (!strcmp(mode, "errors_abort")) {
            MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ABORT);
            MPI_Comm_rank(MPI_COMM_WORLD, NULL);
        }
        if (!strcmp(mode, "window")) {
            /* A window's default handler is MPI_ERRORS_ARE_FATAL. */
            MPI_Win win;
            int cell = 0;
            MPI_Win_create(&cell, sizeof cell, 1, MPI_INFO_NULL, MPI_COMM_SELF, &win);
            MPI_Put(&cell, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
        }
        printf("survived %s\n", mode);
    } else {
        /* The other ranks wait; the launcher must bring them down. */
        for (;;) { struct timespec ts = {0, 10000000}; nanosleep(&ts, NULL); }
    }
    MPI_Finalize();
    return 0;
}
C
sed -i '1i #include <time.h>' "$dir/fatal.c"
"$PREFIX/bin/mpicc" -o "$dir/fatal" "$dir/fatal.c" || exit 1
errors=0
shm_before=$(ls /dev/shm | grep -c '^oxmpi-')
expect() { # mode expected_exit grep_pattern
    local start=$(($(date +%s%N) / 1000000))
    timeout 20 "$MPIEXEC" -n 3 "$dir/fatal" "$1" > "$dir/out" 2> "$dir/err"
    rc=$?
    local ms=$(($(date +%s%N) / 1000000 - start))
    sleep 0.2
    local left
    left=$( (pgrep -f "$dir/fatal" | tr '\n' ' '; ls /dev/shm | grep '^oxmpi-' | tr '\n' ' ') | sed 's/ $//')
    local what=$1
    case "$1" in
        badcomm) what="an invalid communicator under the default handler" ;;
        abortcode) what="MPI_Abort(MPI_COMM_WORLD, 7)" ;;
        errors_abort) what="an invalid argument under MPI_ERRORS_ABORT" ;;
        window) what="an RMA operation outside an epoch under a window's default handler" ;;
    esac
    echo "REPORT|fault|3 ranks, rank 2: $what (the others wait outside MPI)|exit $rc after $ms ms; $(grep -m1 '^oxmpi: ' "$dir/err")|${left:-no process, nothing in /dev/shm}"
    lines=$(grep -c . "$dir/err")
    if [ "$rc" = 0 ] || { [ -n "$2" ] && [ "$rc" != "$2" ]; } || [ "$rc" = 124 ]; then
        echo "not ok - $1: exit $rc (expected ${2:-non-zero})"; errors=$((errors + 1))
    elif ! grep -q -- "$3" "$dir/err"; then
        echo "not ok - $1: stderr lacks '$3':"; cat "$dir/err"; errors=$((errors + 1))
    elif grep -q survived "$dir/out"; then
        echo "not ok - $1: the program went on after the error"; errors=$((errors + 1))
    elif [ "$(grep -c '^oxmpi: ' "$dir/err")" != 1 ]; then
        echo "not ok - $1: expected one oxmpi line, got:"; cat "$dir/err"; errors=$((errors + 1))
    else
        echo "ok - $1 (exit $rc, $lines stderr lines): $(grep '^oxmpi: ' "$dir/err")"
    fi
}
expect badcomm "" "oxmpi: rank 2: MPI_Comm_size: .*MPI_ERR_COMM"
expect abortcode 7 "MPI_Abort(MPI_COMM_WORLD, 7)"
expect errors_abort "" "oxmpi: rank 2: MPI_Comm_rank: .*MPI_ERR_ARG"
expect window "" "oxmpi: rank 2: MPI_Put: .*MPI_ERR_RMA_SYNC"
# A singleton (no launcher) aborts the same way.
"$dir/fatal" abortcode > /dev/null 2> "$dir/err"; rc=$?
if [ "$rc" = 7 ]; then echo "ok - singleton MPI_Abort exit 7"; else echo "not ok - singleton abort exit $rc"; errors=$((errors + 1)); fi
# Ranks killed while their epoch was open leave no segment: mpiexec removes
# what they could not.
shm_after=$(ls /dev/shm | grep -c '^oxmpi-')
if [ "$shm_after" = "$shm_before" ]; then
    echo "ok - no shared-memory segment left by the killed jobs"
else
    echo "not ok - /dev/shm oxmpi entries: $shm_before before, $shm_after after"; errors=$((errors + 1))
fi
if [ "$errors" = 0 ]; then echo "No Errors"; exit 0; fi
exit 1
