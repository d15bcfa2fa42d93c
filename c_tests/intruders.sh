#!/bin/bash
# Strangers at the TCP listeners of a live job (OXMPI_TRANSPORT=tcp, 2
# ranks): garbage, random bytes, another job's handshake replayed (the
# credentials of a second, real job), this job's id with a guessed secret,
# a half-open connection and a slow loris (a hello one byte a second), at
# every listening port of every rank (c_tests/intruders.py). Meanwhile the
# ranks exchange messages of several sizes, checking every byte, until all
# strangers are dealt with. Passes when each stranger was closed without
# receiving a byte, the job completed with correct payloads, and no rank is
# left. Needs python3 (else exit 77).
set -u
PREFIX=${OXMPI_PREFIX:?}
MPIEXEC=${MPIEXEC:-$PREFIX/bin/mpiexec}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
if ! command -v python3 > /dev/null; then
    echo "SKIP: python3 is not installed"
    exit 77
fi
dir=$(mktemp -d)
trap 'pkill -KILL -f "$dir/" 2>/dev/null; rm -rf "$dir"' EXIT
cat > "$dir/target.c" <<'C'
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
static int exists(const char *dir, const char *name) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}
int main(int argc, char **argv) {
    int rank, errors = 0, rounds = 0, done = 0;
    const char *dir = argv[1];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    char path[4096];
    snprintf(path, sizeof path, "%s/pid.%d", dir, rank);
    FILE *f = fopen(path, "w");
    fprintf(f, "%d", (int)getpid());
    fclose(f);
    while (!exists(dir, "go")) {
        struct timespec ts = {0, 20000000};
        nanosleep(&ts, NULL);
    }
    static const int sizes[] = {1, 100, 5000, 70000, 300000};
    unsigned char *out = malloc(300000), *in = malloc(300000);
    while (!done || rounds < 200) {
        int n = sizes[rounds % 5];
        for (int i = 0; i < n; i++) out[i] = (unsigned char)(rounds * 31 + i + rank);
        MPI_Sendrecv(out, n, MPI_BYTE, 1 - rank, rounds, in, n, MPI_BYTE, 1 - rank, rounds, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        for (int i = 0; i < n; i++)
            if (in[i] != (unsigned char)(rounds * 31 + i + 1 - rank)) {
                errors++;
                break;
            }
        rounds++;
        if (rank == 0) done = exists(dir, "done");
        MPI_Bcast(&done, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
    int total = 0;
    MPI_Reduce(&errors, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("%d rounds exchanged, %d wrong payloads\n", rounds, total);
        if (total == 0) printf("No Errors\n");
    }
    free(out);
    free(in);
    MPI_Finalize();
    return 0;
}
C
"$PREFIX/bin/mpicc" -o "$dir/target" "$dir/target.c" || exit 1
# The credentials of another job, whose handshake the strangers replay.
other=$("$MPIEXEC" -n 1 env | grep -E '^OXMPI_(JOBID|JOB_SECRET)=')
other_job=$(sed -n 's/^OXMPI_JOBID=//p' <<< "$other")
other_secret=$(sed -n 's/^OXMPI_JOB_SECRET=//p' <<< "$other")
if [ -z "$other_job" ] || [ -z "$other_secret" ]; then
    echo "mpiexec gave no job id or secret: $other"
    exit 1
fi
errors=0
OXMPI_TRANSPORT=tcp timeout -k 5 90 "$MPIEXEC" -n 2 "$dir/target" "$dir" > "$dir/job.out" 2>&1 &
job=$!
for _ in $(seq 300); do [ -e "$dir/pid.0" ] && [ -e "$dir/pid.1" ] && break; sleep 0.1; done
if [ ! -e "$dir/pid.0" ] || [ ! -e "$dir/pid.1" ]; then
    echo "the job never got going: $(cat "$dir/job.out")"
    exit 1
fi
sleep 0.1 # the pid files are written before they are closed
python3 "$ROOT/c_tests/intruders.py" "$dir" "$other_job" "$other_secret" || errors=$((errors + 1))
wait "$job"
rc=$?
sed "s/^/job: /" "$dir/job.out"
if [ "$rc" != 0 ] || ! grep -qx "No Errors" "$dir/job.out"; then
    echo "not ok - the job under attack: exit $rc"
    errors=$((errors + 1))
else
    rounds=$(sed -n 's/ rounds exchanged.*//p' "$dir/job.out")
    echo "REPORT|attack|TCP transport, all the strangers above while 2 ranks exchange|job completed: $rounds rounds, every payload correct|nothing"
fi
if pgrep -f "$dir/target" > /dev/null; then
    echo "not ok - ranks left running"
    errors=$((errors + 1))
fi
if [ "$errors" = 0 ]; then
    echo "No Errors"
    exit 0
fi
exit 1
