#!/bin/bash
# A program that calls exit() with sessions (and communicators) still
# open exits cleanly, in both finalize modes, and leaves no shared-memory
# segment behind. Run under MPICH's Hydra, which (unlike oxmpi's mpiexec)
# does not clean up oxmpi's segments after the job, so a leak would show.
set -u
PREFIX=${OXMPI_PREFIX:?}
if ! command -v mpiexec.mpich > /dev/null; then
    echo "SKIP: mpiexec.mpich not installed"
    exit 77
fi
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat > "$dir/exit_open.c" <<'C'
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(void) {
    MPI_Session s, s2;
    MPI_Group g;
    MPI_Comm c;
    int rank, size, v, got;
    MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &s);
    MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &s2);
    MPI_Group_from_session_pset(s, "mpi://WORLD", &g);
    MPI_Comm_create_from_group(g, "exit.test", MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &c);
    MPI_Comm_rank(c, &rank);
    MPI_Comm_size(c, &size);
    v = rank;
    MPI_Sendrecv(&v, 1, MPI_INT, (rank + 1) % size, 0, &got, 1, MPI_INT, (rank + size - 1) % size, 0, c,
                 MPI_STATUS_IGNORE);
    MPI_Barrier(c);
    printf("rank %d got %d\n", rank, got);
    fflush(stdout);
    exit(0); /* sessions, group and communicator still open */
}
C
"$PREFIX/bin/mpicc" -o "$dir/exit_open" "$dir/exit_open.c" || exit 1
errors=0
for mode in 0 1; do
    before=$(ls /dev/shm | grep -c '^oxmpi-')
    out=$(MPIR_CVAR_FINALIZE_ATEXIT=$mode timeout 60 mpiexec.mpich -n 3 "$dir/exit_open" 2>&1)
    rc=$?
    after=$(ls /dev/shm | grep -c '^oxmpi-')
    lines=$(echo "$out" | grep -c '^rank [0-9] got [0-9]$')
    if [ "$rc" = 0 ] && [ "$lines" = 3 ] && [ "$after" = "$before" ]; then
        echo "ok - exit() with sessions open, FINALIZE_ATEXIT=$mode"
    else
        echo "not ok - FINALIZE_ATEXIT=$mode: exit $rc, $lines ranks reported, /dev/shm oxmpi entries $before -> $after"
        echo "$out" | head -20
        errors=$((errors + 1))
    fi
done
[ "$errors" = 0 ] && { echo "No Errors"; exit 0; }
exit 1
