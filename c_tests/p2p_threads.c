/* p2p_threads.c: point-to-point from several threads at once
 * (MPI_THREAD_MULTIPLE). Rank 0 and rank 1 each run THREADS threads;
 * thread t of rank 0 sends ROUNDS messages with tag t to rank 1 and waits
 * for each reply; thread t of rank 1 receives them and answers. Blocking
 * receives run in all threads at once (only one of them can wait without a
 * request, the others wait on requests), a quarter of the threads use
 * MPI_Irecv + MPI_Wait, and each message carries its thread, round and a
 * payload pattern that the receiver checks. Odd rounds are 40 KiB (eager
 * in several frames' worth of ring cells), every 16th round 200 KiB
 * (rendezvous), the rest 8 bytes. Ranks beyond 1 only take part in the
 * final error count. */
#include "mpitest.h"
#include <pthread.h>
#include <stdint.h>

#define THREADS 4
#define ROUNDS 150
#define MAX_BYTES (200 * 1024)

static int rank;
static int thread_errors[THREADS];

static size_t round_bytes(int round)
{
    if (round % 16 == 15)
        return MAX_BYTES;
    return round % 2 ? 40 * 1024 : 8;
}

static void fill(unsigned char *buf, size_t n, int t, int round, int reply)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = (unsigned char)(i * 7 + t * 31 + round * 3 + reply * 101);
}

static int check(const unsigned char *buf, size_t n, int t, int round, int reply)
{
    for (size_t i = 0; i < n; i++)
        if (buf[i] != (unsigned char)(i * 7 + t * 31 + round * 3 + reply * 101))
            return 1;
    return 0;
}

static void receive(void *buf, size_t n, int peer, int tag, int t, MPI_Status *st)
{
    if (t % 4 == 3) {
        MPI_Request req;
        MPI_Irecv(buf, (int)n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, st);
    } else {
        MPI_Recv(buf, (int)n, MPI_BYTE, peer, tag, MPI_COMM_WORLD, st);
    }
}

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    unsigned char *out = malloc(MAX_BYTES), *in = malloc(MAX_BYTES);
    int errs = 0;
    for (int round = 0; round < ROUNDS; round++) {
        size_t n = round_bytes(round);
        MPI_Status st;
        int count = -1;
        if (rank == 0) {
            fill(out, n, t, round, 0);
            MPI_Send(out, (int)n, MPI_BYTE, 1, t, MPI_COMM_WORLD);
            receive(in, MAX_BYTES, 1, t, t, &st);
            MPI_Get_count(&st, MPI_BYTE, &count);
            if (count != (int)n || st.MPI_TAG != t || check(in, n, t, round, 1)) {
                if (errs++ < 5)
                    printf("thread %d round %d: bad reply (count %d, tag %d)\n",
                           t, round, count, st.MPI_TAG);
            }
        } else {
            receive(in, MAX_BYTES, 0, t, t, &st);
            MPI_Get_count(&st, MPI_BYTE, &count);
            if (count != (int)n || st.MPI_SOURCE != 0 || check(in, n, t, round, 0)) {
                if (errs++ < 5)
                    printf("thread %d round %d: bad message (count %d, source %d)\n",
                           t, round, count, st.MPI_SOURCE);
            }
            fill(out, n, t, round, 1);
            MPI_Send(out, (int)n, MPI_BYTE, 0, t, MPI_COMM_WORLD);
        }
    }
    free(out);
    free(in);
    thread_errors[t] = errs;
    return NULL;
}

int main(int argc, char **argv)
{
    int provided, size, errs = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided thread level %d", provided);
    if (provided == MPI_THREAD_MULTIPLE && rank < 2) {
        pthread_t threads[THREADS];
        for (int t = 0; t < THREADS; t++)
            pthread_create(&threads[t], NULL, worker, (void *)(intptr_t)t);
        for (int t = 0; t < THREADS; t++) {
            pthread_join(threads[t], NULL);
            errs += thread_errors[t];
        }
    }
    int total = 0;
    errs += mt_errors;
    MPI_Allreduce(&errs, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    mt_report(rank, total);
    MPI_Finalize();
    return 0;
}
