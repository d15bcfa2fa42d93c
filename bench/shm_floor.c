/* shm_floor.c: the floor under any shared-memory ping-pong on this machine,
 * for oxmpi's bench/run.sh: two processes (the program forks itself) pass an
 * 8-byte message back and forth through one cache line each way, with no
 * MPI, no matching and no queues: a writer stores the payload and then a
 * sequence number (release), the reader spins on the sequence number
 * (acquire) and copies the payload.  What remains is the time for a cache
 * line to move between the two cores, which on a virtual machine depends
 * on where the hypervisor placed the two virtual CPUs at that moment.
 *
 * Method as in pingpong.c: warm-up round trips, then N timed round trips
 * (lowered when untimed probe round trips show the loop would take more
 * than about BUDGET seconds); one-way latency = elapsed / (2 N).
 *
 * Output (stdout): a comment line, then "8 <us>".  Exit status 0 on
 * success, 1 on error.  Written for oxmpi's bench/run.sh. */
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

#define BUDGET (0.3 * budget_scale())
#define PROBE 1000

struct line {
    _Atomic uint64_t seq;
    char payload[8];
} __attribute__((aligned(64)));

/* Two lines apart, so that the adjacent-line prefetcher does not pair them. */
struct shared {
    struct line ping;
    char pad1[64];
    struct line pong;
    char pad2[64];
};

static void pass(struct line *out, struct line *in, uint64_t seq, char *buf)
{
    memcpy(out->payload, buf, 8);
    atomic_store_explicit(&out->seq, seq, memory_order_release);
    while (atomic_load_explicit(&in->seq, memory_order_acquire) != seq)
        ;
    memcpy(buf, in->payload, 8);
}

static void echo(struct line *in, struct line *out, uint64_t seq, char *buf)
{
    while (atomic_load_explicit(&in->seq, memory_order_acquire) != seq)
        ;
    memcpy(buf, in->payload, 8);
    memcpy(out->payload, buf, 8);
    atomic_store_explicit(&out->seq, seq, memory_order_release);
}

int main(void)
{
    struct shared *s = mmap(NULL, sizeof *s, PROT_READ | PROT_WRITE,
                            MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (s == MAP_FAILED) {
        perror("shm_floor: mmap");
        return 1;
    }
    char buf[8] = "pingpong";
    pid_t child = fork();
    if (child < 0) {
        perror("shm_floor: fork");
        return 1;
    }
    uint64_t seq = 0;
    if (child == 0) {
        /* Echo until the message "stopstop" (echoed too). */
        for (;;) {
            echo(&s->ping, &s->pong, ++seq, buf);
            if (memcmp(buf, "stopstop", 8) == 0)
                _exit(0);
        }
    }
    for (int i = 0; i < PROBE; i++)
        pass(&s->ping, &s->pong, ++seq, buf);
    double t0 = now();
    for (int i = 0; i < PROBE; i++)
        pass(&s->ping, &s->pong, ++seq, buf);
    double per_trip = (now() - t0) / PROBE;
    long n = 1000000;
    if (per_trip * n > BUDGET)
        n = (long)(BUDGET / per_trip) + 1;
    t0 = now();
    for (long i = 0; i < n; i++)
        pass(&s->ping, &s->pong, ++seq, buf);
    double elapsed = now() - t0;
    memcpy(buf, "stopstop", 8);
    pass(&s->ping, &s->pong, ++seq, buf);
    int status = 0;
    if (waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "shm_floor: the echoing child failed\n");
        return 1;
    }
    printf("# shm_floor: one cache line each way, one-way latency in us\n");
    printf("8 %.3f\n", elapsed * 1e6 / (2.0 * n));
    return 0;
}
