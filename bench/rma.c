/* rma.c: one-sided communication between two ranks, following the OSU
 * one-sided methods (osu_put_latency, osu_put_bw, osu_fop_latency with
 * their default synchronization, lock_all + flush) on a window of
 * MPI_Win_allocate:
 * - put latency: rank 0 does MPI_Put of `size` bytes to rank 1 then
 *   MPI_Win_flush, N times; latency = elapsed / N, in microseconds;
 * - put bandwidth: rank 0 does WINDOW puts, then one flush, N times;
 *   bandwidth = size * WINDOW * N / elapsed, in MB/s (10^6 bytes);
 * - fetch-and-op latency: MPI_Fetch_and_op (MPI_SUM, one long long) then
 *   MPI_Win_flush, N times.
 * Rank 1 waits in MPI_Barrier meanwhile (it makes no other call), as in
 * OSU. N is lowered so that one size takes about BUDGET seconds.
 * All of it twice: on a window of MPI_Win_allocate, then on one of
 * MPI_Win_create over malloc'd memory (keys prefixed create_).
 *
 * Output (rank 0, stdout): a comment line, then "put_lat_SIZE us",
 * "put_bw_SIZE MBps" and "fop_lat us" lines. Written for oxmpi's
 * bench/run.sh; not derived from OSU code. */
#include <mpi.h>
#include "clock.h"
#include "pair.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUDGET (0.3 * budget_scale())
#define WINDOW 64
#define MAX (4 << 20)

static const int sizes[] = {8, 64, 512, 4096, 65536, 1 << 20, 4 << 20};

/* Times `n` rounds of `round` (rank 0 only; rank 1 waits in the barrier). */
static double timed(int rank, long n, void (*round)(char *, int, MPI_Win), char *buf, int size, MPI_Win win) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime();
    if (rank == 0)
        for (long i = 0; i < n; i++) round(buf, size, win);
    t = MPI_Wtime() - t;
    MPI_Barrier(MPI_COMM_WORLD);
    return t;
}

static void put_flush(char *buf, int size, MPI_Win win) {
    MPI_Put(buf, size, MPI_CHAR, 1, 0, size, MPI_CHAR, win);
    MPI_Win_flush(1, win);
}

static void put_window(char *buf, int size, MPI_Win win) {
    for (int w = 0; w < WINDOW; w++) MPI_Put(buf, size, MPI_CHAR, 1, 0, size, MPI_CHAR, win);
    MPI_Win_flush(1, win);
}

static void fop_flush(char *buf, int size, MPI_Win win) {
    (void)size;
    long long one = 1;
    MPI_Fetch_and_op(&one, buf, MPI_LONG_LONG, 1, 0, MPI_SUM, win);
    MPI_Win_flush(1, win);
}

/* Rounds for about BUDGET seconds, estimated from a few (rank 0 decides). */
static long rounds(int rank, void (*round)(char *, int, MPI_Win), char *buf, int size, MPI_Win win, long cap) {
    double probe = timed(rank, 10, round, buf, size, win) / 10;
    long n = probe > 0 ? (long)(BUDGET / probe) : cap;
    if (n > cap) n = cap;
    if (n < 20) n = 20;
    MPI_Bcast(&n, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    return n;
}

/* The measures on one window; `prefix` starts each output key. */
static void measure(int rank, const char *prefix, char *buf, MPI_Win win) {
    MPI_Win_lock_all(0, win);
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        int size = sizes[s];
        timed(rank, s == 0 ? 2000 : 100, put_flush, buf, size, win); /* warm-up */
        long n = rounds(rank, put_flush, buf, size, win, 100000);
        double t = timed(rank, n, put_flush, buf, size, win);
        if (rank == 0) printf("%sput_lat_%d %.3f\n", prefix, size, t / n * 1e6);
        n = rounds(rank, put_window, buf, size, win, 10000);
        t = timed(rank, n, put_window, buf, size, win);
        if (rank == 0) printf("%sput_bw_%d %.1f\n", prefix, size, (double)size * WINDOW * n / t / 1e6);
    }
    timed(rank, 1000, fop_flush, buf, 8, win);
    long n = rounds(rank, fop_flush, buf, 8, win, 100000);
    double t = timed(rank, n, fop_flush, buf, 8, win);
    if (rank == 0) printf("%sfop_lat %.3f\n", prefix, t / n * 1e6);
    MPI_Win_unlock_all(win);
}

/* Fetch-and-op latency alone, on a window created with `info`. */
static void measure_fop(int rank, const char *prefix, char *buf, MPI_Win win) {
    MPI_Win_lock_all(0, win);
    timed(rank, 1000, fop_flush, buf, 8, win);
    long n = rounds(rank, fop_flush, buf, 8, win, 100000);
    double t = timed(rank, n, fop_flush, buf, 8, win);
    if (rank == 0) printf("%sfop_lat %.3f\n", prefix, t / n * 1e6);
    MPI_Win_unlock_all(win);
}

int main(int argc, char **argv) {
    int rank = pair_init(&argc, &argv, "rma");
    char *buf = malloc(MAX), *mem;
    memset(buf, 'a' + rank, MAX);
    if (rank == 0)
        printf("# rma: put_lat_SIZE us, put_bw_SIZE MBps, fop_lat us (MPI_Win_allocate); the same "
               "prefixed create_ (MPI_Win_create of malloc'd memory); intrinsic_fop_lat (MPI_Win_allocate "
               "with acc_single_intrinsic=true)\n");
    MPI_Win win;
    MPI_Win_allocate(MAX, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    measure(rank, "", buf, win);
    MPI_Win_free(&win);
    char *exposed = calloc(1, MAX);
    MPI_Win_create(exposed, MAX, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    measure(rank, "create_", buf, win);
    MPI_Win_free(&win);
    free(exposed);
    /* The promise of single-element accumulates (Open MPI's info key;
     * oxmpi then uses hardware atomics). */
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "acc_single_intrinsic", "true");
    MPI_Win_allocate(MAX, 1, info, MPI_COMM_WORLD, &mem, &win);
    MPI_Info_free(&info);
    measure_fop(rank, "intrinsic_", buf, win);
    MPI_Win_free(&win);
    free(buf);
    MPI_Finalize();
    return 0;
}
