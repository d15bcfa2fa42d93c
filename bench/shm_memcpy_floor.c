/* shm_memcpy_floor.c: the floor under shared-memory latency and bandwidth
 * for larger messages, for oxmpi's bench/run.sh: two processes (the program
 * forks itself) and one memcpy per message, no MPI.  Each process's message
 * buffer lives in one shared mapping, as if each could read the other's
 * memory (the single-copy ideal of CMA, XPMEM or a mapped heap): a message
 * is "sent" by a release store of a sequence number, and "received" by the
 * peer spinning on it (acquire) and copying the sender's buffer into its
 * own with memcpy.  A library that copies twice (into a shared ring and out
 * again) cannot reach it; one that copies once can come close.
 *
 *   shm_memcpy_floor latency COPY     ping-pong per size (pingpong.c's sizes): one
 *                                copy per one-way message; warm-up, then N
 *                                timed round trips; latency = elapsed / 2N, us.
 *   shm_memcpy_floor bandwidth COPY   streaming per size (bandwidth.c's sizes):
 *                                per iteration the sender signals a window of
 *                                64 messages (its buffer is not rewritten, as
 *                                in osu_bw), the receiver copies it 64 times
 *                                and acks; MB/s with 1 MB = 10^6 bytes.
 *
 * COPY is "memcpy" (glibc's) or "movsb" (one x86 "rep movsb", as the
 * kernel copies for process_vm_readv; on this AMD machine glibc leaves
 * rep movsb above the L2 size for a vector loop whose stores must first
 * fetch each line, which the string instruction avoids, so which is faster
 * depends on the size; elsewhere than x86-64 "movsb" is memcpy).
 * bench/run.sh runs both and takes the faster per size as the floor.
 *
 * Waiting is spinning only: a blocking wait (futex) would add a wake-up per
 * round trip and change nothing for the copy-bound sizes.  Counts as in
 * pingpong.c and bandwidth.c, lowered when an untimed probe shows a size
 * would take more than about BUDGET seconds.
 *
 * Output (stdout): a comment line, then one "size value" line per size.
 * Exit status 0 on success, 1 on error.  Written for oxmpi's bench/run.sh. */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "clock.h"

#define MAX_SIZE (4 << 20)
#define WINDOW 64
#define LAT_BUDGET (0.3 * budget_scale())
#define BW_BUDGET (0.5 * budget_scale())

static const int lat_sizes[] = {0, 1, 8, 64, 512, 4096, 16384, 65536, 1 << 20, 4 << 20};
static const int bw_sizes[] = {8, 64, 512, 4096, 16384, 65536, 262144, 1 << 20, 4 << 20};
#define NSIZES(a) (sizeof a / sizeof a[0])

struct flag {
    _Atomic int64_t seq;
} __attribute__((aligned(128)));

struct shared {
    struct flag to_child, to_parent;
    struct flag order[2]; /* the parent's order to the child: size, count */
};

static struct shared *sh;
static char *mem[2]; /* mem[0]: the parent's buffer, mem[1]: the child's */

static int movsb; /* copy with rep movsb instead of memcpy */

static void copy(char *dst, const char *src, size_t n)
{
#if defined(__x86_64__)
    if (movsb) {
        __asm__ volatile("rep movsb" : "+D"(dst), "+S"(src), "+c"(n) : : "memory");
        return;
    }
#endif
    memcpy(dst, src, n);
}

static void post(struct flag *f, int64_t seq)
{
    atomic_store_explicit(&f->seq, seq, memory_order_release);
}

static void wait_for(struct flag *f, int64_t seq)
{
    while (atomic_load_explicit(&f->seq, memory_order_acquire) < seq)
        ;
}

/* One phase of n iterations at size; who: 0 parent, 1 child.  The sequence
 * numbers only grow, so phases follow each other without resetting. */
static int64_t seq_out, seq_in;
static double phase(int who, int lat, int size, long n)
{
    struct flag *out = who ? &sh->to_parent : &sh->to_child;
    struct flag *in = who ? &sh->to_child : &sh->to_parent;
    char *mine = mem[who], *theirs = mem[1 - who];
    double t0 = now();
    for (long i = 0; i < n; i++) {
        if (lat) {
            if (who == 0) {
                post(out, ++seq_out);
                wait_for(in, ++seq_in);
                copy(mine, theirs, (size_t)size);
            } else {
                wait_for(in, ++seq_in);
                copy(mine, theirs, (size_t)size);
                post(out, ++seq_out);
            }
        } else if (who == 0) {
            post(out, ++seq_out);      /* a window of messages is ready */
            wait_for(in, ++seq_in);    /* the ack */
        } else {
            wait_for(in, ++seq_in);
            for (int w = 0; w < WINDOW; w++)
                copy(mine, theirs, (size_t)size);
            post(out, ++seq_out);
        }
    }
    return now() - t0;
}

/* The parent's order: size and count of the next phase (count 0: stop). */
static int64_t order_seq;
static void give_order(int size, long n)
{
    atomic_store_explicit(&sh->order[1].seq, ((int64_t)size << 32) | n, memory_order_relaxed);
    post(&sh->order[0], ++order_seq);
}

int main(int argc, char **argv)
{
    int lat = -1;
    if (argc == 3 && strcmp(argv[1], "latency") == 0) lat = 1;
    if (argc == 3 && strcmp(argv[1], "bandwidth") == 0) lat = 0;
    if (lat < 0 || (strcmp(argv[2], "memcpy") != 0 && strcmp(argv[2], "movsb") != 0)) {
        fprintf(stderr, "usage: %s latency|bandwidth memcpy|movsb\n", argv[0]);
        return 2;
    }
    movsb = strcmp(argv[2], "movsb") == 0;
    size_t len = sizeof *sh + 2 * (size_t)MAX_SIZE + 4096;
    char *base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) {
        perror("shm_memcpy_floor: mmap");
        return 1;
    }
    sh = (struct shared *)base;
    mem[0] = base + 4096;
    mem[1] = mem[0] + MAX_SIZE;
    memset(mem[0], 'a', MAX_SIZE);
    memset(mem[1], 'b', MAX_SIZE);

    pid_t child = fork();
    if (child < 0) {
        perror("shm_memcpy_floor: fork");
        return 1;
    }
    if (child == 0) {
        for (int64_t k = 1;; k++) {
            wait_for(&sh->order[0], k);
            int64_t o = atomic_load_explicit(&sh->order[1].seq, memory_order_relaxed);
            long n = (long)(o & 0xffffffff);
            if (n == 0) _exit(0);
            phase(1, lat, (int)(o >> 32), n);
        }
    }

    const int *sizes = lat ? lat_sizes : bw_sizes;
    size_t nsizes = lat ? NSIZES(lat_sizes) : NSIZES(bw_sizes);
    printf("# shm_memcpy_floor %s %s: size(bytes) %s\n", argv[1], argv[2],
           lat ? "one-way-latency(us)" : "MB/s (window 64)");
    for (size_t s = 0; s < nsizes; s++) {
        int size = sizes[s];
        long warm, iters, probe = lat ? 20 : 1;
        double budget = lat ? LAT_BUDGET : BW_BUDGET;
        if (lat) {
            if (size <= 4096)       { warm = 2000; iters = 50000; }
            else if (size <= 65536) { warm = 200;  iters = 5000; }
            else                    { warm = 10;   iters = 500; }
        } else {
            if (size <= 8192) { warm = 100; iters = 1000; }
            else              { warm = 5;   iters = 50; }
        }
        give_order(size, probe);
        double per = phase(0, lat, size, probe) / (double)probe;
        if (per > 0 && per * (double)iters > budget) {
            iters = (long)(budget / per);
            if (iters < 3) iters = 3;
        }
        if (per > 0 && per * (double)warm > budget / 4) {
            warm = (long)(budget / 4 / per);
            if (warm < 1) warm = 1;
        }
        give_order(size, warm);
        phase(0, lat, size, warm);
        give_order(size, iters);
        double t = phase(0, lat, size, iters);
        if (lat)
            printf("%d %.3f\n", size, t * 1e6 / (2.0 * (double)iters));
        else
            printf("%d %.6g\n", size, (double)size * WINDOW * (double)iters / t / 1e6);
        fflush(stdout);
    }
    give_order(0, 0);
    int status = 0;
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "shm_memcpy_floor: the child failed\n");
        return 1;
    }
    return 0;
}
