/* 8 threads per rank under MPI_THREAD_MULTIPLE, every rank at once:
 * - on distinct communicators (each thread its own duplicate of
 *   MPI_COMM_WORLD, made before the threads start: concurrent collectives
 *   on one communicator, MPI_Comm_dup included, are erroneous): a ring exchange with
 *   MPI_Sendrecv, nonblocking exchanges with every other rank, an
 *   MPI_Allreduce and an MPI_Bcast, all concurrently with the other
 *   threads' collectives on their own communicators;
 * - on one shared communicator (MPI_COMM_WORLD), a tag per thread: the
 *   same exchanges by point-to-point, with MPI_Probe + MPI_Recv and
 *   MPI_Mprobe + MPI_Mrecv (matched probes cannot be stolen by a thread
 *   receiving the same source).
 * Payload sizes vary between 8 bytes and 96 KiB (rendezvous); every byte
 * is checked. */
#include "mpitest.h"
#include <pthread.h>
#include <stdint.h>

#define THREADS 8
#define ROUNDS 40
#define MAX_INTS (24 * 1024)

static int rank, size;
static int thread_errors[THREADS];
static MPI_Comm own_comm[THREADS];

static int round_ints(int round) {
    if (round % 10 == 9) return MAX_INTS;
    return round % 3 == 1 ? 1024 : 2;
}

/* The value at index i of what `from` sends `to` in round `round` of thread t. */
static int value(int from, int to, int t, int round, int i) {
    return ((from * 131 + to) * 17 + t) * 1000003 + round * 7919 + i;
}

static void fill(int *buf, int n, int from, int to, int t, int round) {
    for (int i = 0; i < n; i++) buf[i] = value(from, to, t, round, i);
}

static int bad(const int *buf, int n, int from, int to, int t, int round) {
    for (int i = 0; i < n; i++)
        if (buf[i] != value(from, to, t, round, i)) return 1;
    return 0;
}

#define TCHECK(cond, ...)                                      \
    do {                                                       \
        if (!(cond)) {                                         \
            if (errs++ < 5) {                                  \
                fprintf(stderr, "rank %d thread %d: ", rank, t); \
                fprintf(stderr, __VA_ARGS__);                  \
                fprintf(stderr, "\n");                         \
            }                                                  \
        }                                                      \
    } while (0)

static void *worker(void *arg) {
    int t = (int)(intptr_t)arg, errs = 0;
    int *out = malloc(sizeof(int) * MAX_INTS * size), *in = malloc(sizeof(int) * MAX_INTS * size);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * 2 * size);
    MPI_Comm own = own_comm[t];
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int shared = 0; shared < 2; shared++) {
        MPI_Comm comm = shared ? MPI_COMM_WORLD : own;
        int tag = shared ? t : 0;
        for (int round = 0; round < ROUNDS; round++) {
            int n = round_ints(round), count = -1;
            MPI_Status st;
            /* Ring: to the right, from the left. */
            fill(out, n, rank, right, t, round);
            MPI_Sendrecv(out, n, MPI_INT, right, tag, in, n, MPI_INT, left, tag, comm, &st);
            MPI_Get_count(&st, MPI_INT, &count);
            TCHECK(count == n && !bad(in, n, left, rank, t, round),
                   "%s ring round %d: count %d", shared ? "shared" : "own", round, count);
            /* Every other rank at once, nonblocking. */
            int k = 0;
            for (int p = 0; p < size; p++) {
                if (p == rank) continue;
                MPI_Irecv(in + p * n, n, MPI_INT, p, tag, comm, &reqs[k++]);
            }
            for (int p = 0; p < size; p++) {
                if (p == rank) continue;
                fill(out + p * n, n, rank, p, t, round + ROUNDS);
                MPI_Isend(out + p * n, n, MPI_INT, p, tag, comm, &reqs[k++]);
            }
            MPI_Waitall(k, reqs, MPI_STATUSES_IGNORE);
            for (int p = 0; p < size; p++)
                if (p != rank)
                    TCHECK(!bad(in + p * n, n, p, rank, t, round + ROUNDS),
                           "%s all-pairs round %d: from %d", shared ? "shared" : "own", round, p);
            if (!shared) {
                /* Collectives on this thread's own communicator. */
                int mine = rank * THREADS + t + round, sum = 0, expect = 0;
                for (int p = 0; p < size; p++) expect += p * THREADS + t + round;
                MPI_Allreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, own);
                TCHECK(sum == expect, "allreduce round %d: %d, expected %d", round, sum, expect);
                int root = round % size;
                if (rank == root) fill(out, n, root, -1, t, round);
                MPI_Bcast(rank == root ? out : in, n, MPI_INT, root, own);
                if (rank != root)
                    TCHECK(!bad(in, n, root, -1, t, round), "bcast round %d from %d", round, root);
            } else {
                /* Probes on the shared communicator: this thread's tag only. */
                fill(out, n, rank, right, t, round + 2 * ROUNDS);
                MPI_Request sreq;
                MPI_Isend(out, n, MPI_INT, right, tag, comm, &sreq);
                if (round % 2) {
                    MPI_Probe(left, tag, comm, &st);
                    MPI_Get_count(&st, MPI_INT, &count);
                    TCHECK(count == n, "probe round %d: count %d", round, count);
                    MPI_Recv(in, n, MPI_INT, left, tag, comm, MPI_STATUS_IGNORE);
                } else {
                    MPI_Message msg;
                    MPI_Mprobe(left, tag, comm, &msg, &st);
                    MPI_Get_count(&st, MPI_INT, &count);
                    TCHECK(count == n, "mprobe round %d: count %d", round, count);
                    MPI_Mrecv(in, n, MPI_INT, &msg, MPI_STATUS_IGNORE);
                }
                MPI_Wait(&sreq, MPI_STATUS_IGNORE);
                TCHECK(!bad(in, n, left, rank, t, round + 2 * ROUNDS), "probed round %d", round);
            }
        }
    }
    free(out);
    free(in);
    free(reqs);
    thread_errors[t] = errs;
    return NULL;
}

int main(int argc, char **argv) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (provided != MPI_THREAD_MULTIPLE) {
        CHECK(0, "provided thread level %d", provided);
    } else {
        pthread_t threads[THREADS];
        for (int t = 0; t < THREADS; t++) MPI_Comm_dup(MPI_COMM_WORLD, &own_comm[t]);
        for (int t = 0; t < THREADS; t++) pthread_create(&threads[t], NULL, worker, (void *)(intptr_t)t);
        for (int t = 0; t < THREADS; t++) {
            pthread_join(threads[t], NULL);
            mt_errors += thread_errors[t];
        }
        for (int t = 0; t < THREADS; t++) MPI_Comm_free(&own_comm[t]);
    }
    int total = 0;
    MPI_Allreduce(&mt_errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        char tried[200];
        snprintf(tried, sizeof tried,
                 "%d ranks x %d threads under MPI_THREAD_MULTIPLE, each on its own communicator and all on "
                 "MPI_COMM_WORLD (probes, matched probes, 8 B to 96 KiB)",
                 size, THREADS);
        mt_reliability_row("load", tried, "-", "%d wrong payloads or failed calls", total);
    }
    MPI_Finalize();
    mt_report(rank, total);
    return total != 0;
}
