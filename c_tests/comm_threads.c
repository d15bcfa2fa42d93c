/* Threads of each process create communicators at the same time (MPI 4
 * MPI_Comm_create_from_group with a string tag per thread, and
 * MPI_Comm_dup of per-thread communicators), in a different order in each
 * process, then use them at once: every communicator must get a context of
 * its own (a shared one would mix the threads' messages: wrong sums or a
 * hang). Needs MPI_THREAD_MULTIPLE. */
#include <pthread.h>
#include "mpitest.h"

#define THREADS 4
#define ROUNDS 20

static int rank, size;
static MPI_Group world_group;

static void *work(void *arg) {
    int t = (int)(long)arg;
    for (int round = 0; round < ROUNDS; round++) {
        char tag[64];
        snprintf(tag, sizeof tag, "oxmpi.comm_threads.%d", t);
        MPI_Comm c, d;
        CHECK(MPI_Comm_create_from_group(world_group, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c) == MPI_SUCCESS,
              "thread %d: create_from_group", t);
        CHECK(MPI_Comm_dup(c, &d) == MPI_SUCCESS, "thread %d: dup", t);
        int v = 1000 * t + rank, sum = -1, sum2 = -1;
        MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, c);
        MPI_Allreduce(&v, &sum2, 1, MPI_INT, MPI_SUM, d);
        int expect = 1000 * t * size + size * (size - 1) / 2;
        CHECK(sum == expect && sum2 == expect, "thread %d round %d: sums %d %d, expected %d", t, round, sum, sum2,
              expect);
        MPI_Comm_free(&d);
        MPI_Comm_free(&c);
    }
    return NULL;
}

int main(int argc, char **argv) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (provided != MPI_THREAD_MULTIPLE) mt_skip(rank, "MPI_THREAD_MULTIPLE is not provided");
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    pthread_t th[THREADS];
    /* Threads start in a rotated order in each process. */
    for (int k = 0; k < THREADS; k++) {
        long t = (k + rank) % THREADS;
        pthread_create(&th[t], NULL, work, (void *)t);
    }
    for (int t = 0; t < THREADS; t++) pthread_join(th[t], NULL);
    MPI_Group_free(&world_group);
    int errs = 0;
    MPI_Allreduce(&mt_errors, &errs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    mt_report(rank, errs);
    MPI_Finalize();
    return 0;
}
