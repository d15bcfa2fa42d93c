/* instr.c: the work of one small-message iteration, for counting
 * instructions (bench/run.sh runs it under valgrind's callgrind with
 * collection on only inside the MPI_Send and MPI_Recv calls).  Two ranks
 * on one node, N iterations (argument): each rank sends 8 bytes to the
 * other, then waits, outside MPI and outside the counted calls, until the
 * peer's MPI_Send has returned (a counter in a shared mapping, stored after
 * the call), then receives the peer's 8 bytes: the receive finds its
 * message, so no waiting loop inside the library is counted, and no work is
 * moved out of the counted calls (no MPI call runs between them).  One
 * iteration is one MPI_Send and one MPI_Recv per rank, the calls of one
 * ping-pong round trip.  Two runs with different N cancel the first calls'
 * set-up: instructions per iteration per rank =
 * (count(N2) - count(N1)) / (N2 - N1) / 2, counts summed over both ranks. */
#define _GNU_SOURCE
#include <mpi.h>
#include "pair.h"
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The calls, each inside a function of its own that callgrind collects in
 * (--toggle-collect=send8 --toggle-collect=recv8): everything the MPI call
 * runs, tail calls included, is counted; the MPI entry points' own names
 * would lose what a library reaches through a tail jump. */
__attribute__((noinline)) int send8(const char *buf, int peer)
{
    int rc = MPI_Send(buf, 8, MPI_CHAR, peer, 3, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS) abort();
    return rc;
}

__attribute__((noinline)) int recv8(char *buf, int peer)
{
    int rc = MPI_Recv(buf, 8, MPI_CHAR, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) abort();
    return rc;
}

int main(int argc, char **argv)
{
    int rank = pair_init(&argc, &argv, "instr");
    long n = argc > 1 ? atol(argv[1]) : 100;
    char sbuf[8] = "8 bytes", rbuf[8], name[64];
    /* The sent-counters: rank 0 creates the mapping and names it. */
    if (rank == 0) snprintf(name, sizeof name, "/oxmpi-bench-instr-%ld", (long)getpid());
    MPI_Bcast(name, sizeof name, MPI_CHAR, 0, MPI_COMM_WORLD);
    int fd = -1;
    if (rank == 0) {
        fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd < 0 || ftruncate(fd, 4096) != 0) MPI_Abort(MPI_COMM_WORLD, 3);
    }
    MPI_Barrier(MPI_COMM_WORLD); /* rank 1 opens after the truncation */
    if (rank == 1) fd = shm_open(name, O_RDWR, 0600);
    if (fd < 0) MPI_Abort(MPI_COMM_WORLD, 3);
    _Atomic long *sent = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (sent == MAP_FAILED) MPI_Abort(MPI_COMM_WORLD, 3);
    close(fd);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) shm_unlink(name);
    _Atomic long *mine = &sent[rank * 16], *theirs = &sent[(1 - rank) * 16];
    for (long i = 1; i <= n; i++) {
        send8(sbuf, 1 - rank);
        atomic_store_explicit(mine, i, memory_order_release);
        while (atomic_load_explicit(theirs, memory_order_acquire) < i)
            sched_yield();
        recv8(rbuf, 1 - rank);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
