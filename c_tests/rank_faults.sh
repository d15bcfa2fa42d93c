#!/bin/bash
# A rank of an MPI job that uses shared memory fails while the others wait
# inside MPI_Recv for it: it dies by SIGSEGV or SIGKILL, exits with code 3
# without finalizing, or loops forever (the job run with -timeout 2). Each
# time mpiexec ends the whole job with one line naming the rank, its pid
# and the cause, exits with the rank's status (124 for the timeout), and
# no process and nothing in /dev/shm is left, with anonymous (default) and
# with named segments (which mpiexec removes).
set -u
PREFIX=${OXMPI_PREFIX:?}
MPIEXEC=${MPIEXEC:-$PREFIX/bin/mpiexec}
dir=$(mktemp -d)
trap 'pkill -KILL -f "$dir/" 2>/dev/null; rm -rf "$dir"' EXIT
cat > "$dir/faulty.c" <<'C'
#include <mpi.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
    int rank, size, v = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* Shared memory in use: a ring of messages. */
    MPI_Sendrecv_replace(&v, 1, MPI_INT, (rank + 1) % size, 0, (rank + size - 1) % size, 0, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
    if (rank == size - 1) {
        const char *how = argv[1];
        if (!strcmp(how, "segv")) raise(SIGSEGV);
        if (!strcmp(how, "kill")) raise(SIGKILL);
        if (!strcmp(how, "exit3")) exit(3);
        if (!strcmp(how, "stuck"))
            for (volatile unsigned long i = 0;; i++) {
            }
    } else {
        MPI_Recv(&v, 1, MPI_INT, size - 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
C
"$PREFIX/bin/mpicc" -o "$dir/faulty" "$dir/faulty.c" || exit 1
segments() { ls /dev/shm 2>/dev/null | grep '^oxmpi-' | sort; }
errors=0
# fault HOW EXPECTED_RC LINE_REGEX [MPIEXEC_OPTIONS...]
fault() {
    local how=$1 want=$2 pattern=$3
    shift 3
    for mode in auto named; do
        local before start rc ms line alive left
        before=$(segments)
        start=$(($(date +%s%N) / 1000000))
        OXMPI_SHM_SEGMENTS=$mode timeout -k 5 30 "$MPIEXEC" "$@" -n 3 "$dir/faulty" "$how" > "$dir/out" 2> "$dir/err"
        rc=$?
        ms=$(($(date +%s%N) / 1000000 - start))
        sleep 0.2
        line=$(head -n 1 "$dir/err")
        alive=$(pgrep -f "$dir/faulty" | tr '\n' ' ')
        left=$(comm -13 <(echo "$before") <(segments) | tr '\n' ' ')
        local kind=anonymous what
        [ "$mode" = named ] && kind=named
        case "$how" in
            segv) what="dies by SIGSEGV" ;;
            kill) what="dies by SIGKILL" ;;
            exit3) what="calls exit(3) without finalizing" ;;
            stuck) what="loops forever" ;;
        esac
        echo "REPORT|fault|3 ranks using shared memory ($kind segments), two waiting in MPI_Recv for rank 2, which $what${*:+ (mpiexec $*)}|exit $rc after $ms ms; $line|$(if [ -n "$alive$left" ]; then echo "${alive:+processes: $alive}${left:+in /dev/shm: $left}"; else echo "no process, nothing in /dev/shm"; fi)"
        if [ "$rc" != "$want" ]; then
            echo "not ok - $how, $mode segments: exit $rc, expected $want; stderr: $(cat "$dir/err")"
            errors=$((errors + 1))
        elif ! [[ $line =~ $pattern ]] || [ "$(grep -c . "$dir/err")" != 1 ]; then
            echo "not ok - $how, $mode segments: stderr: $(cat "$dir/err")"
            errors=$((errors + 1))
        elif [ -n "$alive" ] || [ -n "$left" ]; then
            echo "not ok - $how, $mode segments: left processes '$alive', segments '$left'"
            errors=$((errors + 1))
        else
            echo "ok - $how, $mode segments: $line"
        fi
        for name in $left; do rm -f "/dev/shm/$name"; done
    done
}
fault segv 139 '^mpiexec: rank 2 \(pid [0-9]+\) killed by signal 11 \(SIGSEGV\)$'
fault kill 137 '^mpiexec: rank 2 \(pid [0-9]+\) killed by signal 9 \(SIGKILL\)$'
fault exit3 3 '^mpiexec: rank 2 \(pid [0-9]+\) exited with code 3$'
fault stuck 124 '^mpiexec: job timed out after 2 seconds$' -timeout 2
if [ "$errors" = 0 ]; then
    echo "No Errors"
    exit 0
fi
exit 1
