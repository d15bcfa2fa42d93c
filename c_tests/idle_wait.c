/* A rank that waits long costs almost no CPU: rank 0 waits in MPI_Recv,
 * MPI_Barrier and MPI_Wait on an MPI_Ibarrier while rank 1 sleeps before
 * taking part, and its process's CPU time over each wait must stay under a
 * quarter of the wait (a spinning wait uses all of it; a sleeping one a few
 * percent: the polling before the first sleep lasts milliseconds). The
 * bound is on CPU used, not on how long anything takes. argv[1] sets how
 * late the peer comes to the barrier (seconds, default 0.8; the test list
 * gives 5, and docs/reliability.md reports the CPU time of that wait). */
#include "mpitest.h"
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define LATE_US 800000

static double cpu_seconds(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

static double wall_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void judge(double cpu0, double wall0, const char *what) {
    double cpu = cpu_seconds() - cpu0, wall = wall_seconds() - wall0;
    char tried[160];
    snprintf(tried, sizeof tried, "a rank waiting in %s for a peer %.1f s late", what, wall);
    mt_reliability_row("load", tried, "-", "it used %.3f s of CPU (%.1f%% of the wait)", cpu, 100 * cpu / wall);
    CHECK(wall > 0.2, "%s: the peer was late by %.3f s only (the test needs a long wait)", what, wall);
    CHECK(cpu < 0.25 * wall, "%s: %.3f s of CPU in a %.3f s wait", what, cpu, wall);
}

int main(int argc, char **argv) {
    int rank, size, v = 0;
    mt_init(&argc, &argv, &rank, &size);
    if (size != 2) mt_skip(rank, "needs exactly 2 processes");
    /* argv[1]: how late the peer comes to the barrier, in seconds. */
    useconds_t barrier_late = argc > 1 ? (useconds_t)(atof(argv[1]) * 1e6) : LATE_US;
    MPI_Request req;
    if (rank == 1) {
        usleep(LATE_US);
        MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
        usleep(barrier_late);
        MPI_Barrier(MPI_COMM_WORLD);
        usleep(LATE_US);
        MPI_Ibarrier(MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else {
        double cpu0 = cpu_seconds(), wall0 = wall_seconds();
        MPI_Recv(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        judge(cpu0, wall0, "MPI_Recv");
        cpu0 = cpu_seconds(), wall0 = wall_seconds();
        MPI_Barrier(MPI_COMM_WORLD);
        judge(cpu0, wall0, "MPI_Barrier");
        cpu0 = cpu_seconds(), wall0 = wall_seconds();
        MPI_Ibarrier(MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        judge(cpu0, wall0, "MPI_Wait(MPI_Ibarrier)");
    }
    int errors = mt_errors;
    MPI_Allreduce(MPI_IN_PLACE, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    mt_report(rank, errors);
    return errors ? 1 : 0;
}
