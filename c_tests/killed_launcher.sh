#!/bin/bash
# mpiexec killed with SIGINT, SIGTERM, SIGHUP or SIGKILL while its ranks
# run and use shared memory: the ranks end (signals are forwarded; after
# a SIGKILL, PR_SET_PDEATHSIG), and since their shared memory has no name
# (anonymous segments) nothing is left in /dev/shm. With
# OXMPI_SHM_SEGMENTS=named mpiexec removes the inboxes when it lives to see
# the job end (INT, TERM, HUP); after a SIGKILL they stay behind: reported,
# not an error, and removed here.
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
errors=0
for mode in auto named; do
    for sig in INT TERM HUP KILL; do
        rm -f "$dir/ready"
        before=$(segments)
        # Background jobs of a script start with SIGINT ignored: restore it.
        OXMPI_SHM_SEGMENTS=$mode env --default-signal=INT,TERM,HUP "$PREFIX/bin/mpiexec" -n 3 \
            "$dir/spin" "$dir/ready" > /dev/null 2> "$dir/err" &
        launcher=$!
        for _ in $(seq 200); do [ -e "$dir/ready" ] && break; sleep 0.1; done
        if [ ! -e "$dir/ready" ]; then
            echo "$mode, SIG$sig: the job never got going"
            errors=$((errors + 1))
        fi
        start=$(($(date +%s%N) / 1000000))
        kill "-$sig" "$launcher"
        { wait "$launcher"; } 2>/dev/null
        rc=$?
        for _ in $(seq 50); do pgrep -f "$dir/spin" > /dev/null || break; sleep 0.1; done
        ms=$(($(date +%s%N) / 1000000 - start))
        alive=$(pgrep -f "$dir/spin" | tr '\n' ' ')
        if [ -n "$alive" ]; then
            echo "$mode, SIG$sig: ranks outlived mpiexec: $alive"
            errors=$((errors + 1))
        fi
        left=$(comm -13 <(echo "$before") <(segments) | tr '\n' ' ')
        if [ -n "$left" ] && { [ "$mode" = auto ] || [ "$sig" != KILL ]; }; then
            echo "$mode, SIG$sig: segments left in /dev/shm: $left"
            errors=$((errors + 1))
        fi
        kind=$([ "$mode" = auto ] && echo "anonymous segments, the default" || echo "OXMPI_SHM_SEGMENTS=named")
        echo "REPORT|fault|mpiexec killed with SIG$sig while 3 ranks use shared memory ($kind)|mpiexec exit $rc; ranks gone within $ms ms|$(if [ -n "$alive$left" ]; then echo "${alive:+processes: $alive}${left:+in /dev/shm: $left}"; else echo "no process, nothing in /dev/shm"; fi)"
        for name in $left; do rm -f "/dev/shm/$name"; done
    done
done
if [ "$errors" = 0 ]; then
    echo "No Errors"
    exit 0
fi
exit 1
