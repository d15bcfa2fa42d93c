/* idle.c: the CPU time an MPI rank uses while it waits, for oxmpi's
 * bench/run.sh.  Two ranks; rank 1 sleeps (nanosleep, not in MPI) for S
 * seconds (argument, default 5) and then acts, while rank 0 waits for it in
 *   recv     MPI_Recv of 8 bytes (rank 1 then sends them), and
 *   barrier  MPI_Barrier (rank 1 then enters it).
 * Rank 0's CPU time is getrusage(RUSAGE_SELF) user + system, all its
 * threads (the library's included).  The first 10 ms of the wait are left
 * out: a helper thread sleeps 10 ms after the wait begins and takes the
 * first reading there; the second is taken when the call returns.
 * Prints "recv <percent of one core>" and "barrier <percent>", plus the
 * same from the start of the wait as "recv_all" and "barrier_all". */
#define _GNU_SOURCE
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include "clock.h"
#include "pair.h"

static double cpu(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec * 1e-6;
}

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static double mark_cpu, mark_wall;
static void *marker(void *arg)
{
    (void)arg;
    sleep_s(0.010);
    mark_cpu = cpu();
    mark_wall = now();
    return NULL;
}

int main(int argc, char **argv)
{
    int rank = pair_init(&argc, &argv, "idle");
    double secs = argc > 1 ? atof(argv[1]) : 5.0;
    if (secs < 0.1) secs = 0.1;
    char buf[8] = {0};
    if (rank == 0) printf("# idle: rank 0 waits %.1f s; percent of one core\n", secs);
    for (int phase = 0; phase < 2; phase++) {
        const char *name = phase == 0 ? "recv" : "barrier";
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 1) {
            sleep_s(secs);
            if (phase == 0)
                MPI_Send(buf, 8, MPI_CHAR, 0, 7, MPI_COMM_WORLD);
            else
                MPI_Barrier(MPI_COMM_WORLD);
            continue;
        }
        pthread_t th;
        double c0 = cpu(), w0 = now();
        if (pthread_create(&th, NULL, marker, NULL) != 0) MPI_Abort(MPI_COMM_WORLD, 3);
        if (phase == 0)
            MPI_Recv(buf, 8, MPI_CHAR, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        else
            MPI_Barrier(MPI_COMM_WORLD);
        double c1 = cpu(), w1 = now();
        pthread_join(th, NULL);
        printf("%s %.3f\n%s_all %.3f\n", name,
               100.0 * (c1 - mark_cpu) / (w1 - mark_wall), name,
               100.0 * (c1 - c0) / (w1 - w0));
        fflush(stdout);
    }
    MPI_Finalize();
    return 0;
}
