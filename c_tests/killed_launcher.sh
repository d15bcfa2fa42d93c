#!/bin/bash
# mpiexec killed with SIGKILL while its ranks run (so it cannot clean up):
# the ranks end (PR_SET_PDEATHSIG), and since their shared memory has no
# name (anonymous segments), nothing is left in /dev/shm. With
# OXMPI_SHM_SEGMENTS=named the inboxes would stay behind (mpiexec removes
# them only when it lives to see the job end).
set -u
PREFIX=${OXMPI_PREFIX:?}
dir=$(mktemp -d)
trap 'pkill -KILL -f "$dir/" 2>/dev/null; rm -rf "$dir"' EXIT
cat > "$dir/spin.c" <<'C'
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>
int main(int argc, char **argv) {
    int rank, size, v = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* Shared memory in use: a ring of messages, then say so. */
    MPI_Sendrecv_replace(&v, 1, MPI_INT, (rank + 1) % size, 0, (rank + size - 1) % size, 0, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        FILE *f = fopen(argv[1], "w");
        fclose(f);
    }
    for (;;) sleep(1);
}
C
"$PREFIX/bin/mpicc" -o "$dir/spin" "$dir/spin.c" || exit 1
segments() { ls /dev/shm 2>/dev/null | grep '^oxmpi-' | sort; }
before=$(segments)
errors=0
"$PREFIX/bin/mpiexec" -n 3 "$dir/spin" "$dir/ready" > /dev/null 2>&1 &
launcher=$!
for _ in $(seq 200); do [ -e "$dir/ready" ] && break; sleep 0.1; done
if [ ! -e "$dir/ready" ]; then
    echo "the job never got going"
    errors=$((errors + 1))
fi
kill -KILL "$launcher"
{ wait "$launcher"; } 2>/dev/null
for _ in $(seq 50); do pgrep -f "$dir/spin" > /dev/null || break; sleep 0.1; done
if pgrep -f "$dir/spin" > /dev/null; then
    echo "ranks outlived mpiexec: $(pgrep -f "$dir/spin" | tr '\n' ' ')"
    errors=$((errors + 1))
fi
left=$(comm -13 <(echo "$before") <(segments))
if [ -n "$left" ]; then
    echo "segments left in /dev/shm: $left"
    errors=$((errors + 1))
fi
if [ "$errors" = 0 ]; then
    echo "No Errors"
    exit 0
fi
exit 1
