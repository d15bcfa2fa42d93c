/* tcp_side_by_side.c: 8-byte latency of an MPI library over TCP and of
 * plain TCP, measured in the same two processes, block by block, for the
 * "tcp" section of oxmpi's bench/run.sh (issue 5).
 *
 * Separate runs of an MPI ping-pong and of plain_tcp.c land on different
 * placements of the two virtual CPUs and different states of the host: on
 * the project's VM the plain program alone moves between 5 and 10 us from
 * run to run, more than the difference being measured. Here both are
 * measured by the same pair of processes, in alternating blocks, so that
 * each MPI block has a plain block right before or after it on the same
 * CPUs at nearly the same moment.
 *
 * Method: after MPI_Init (the MPI library runs on TCP: the caller sets
 * OXMPI_TRANSPORT=tcp or UCX_TLS=tcp,self), rank 0 listens on 127.0.0.1
 * (port 0), sends the port to rank 1 with MPI_Send, and rank 1 connects;
 * TCP_NODELAY on both ends, default socket buffers, reads and writes are
 * nonblocking calls retried at once (as plain_tcp.c, and as the MPI
 * libraries wait). Warm-up round trips of both kinds, then BLOCKS pairs of
 * blocks of N round trips each: one block of MPI_Send/MPI_Recv round
 * trips on MPI_COMM_WORLD and one of plain socket round trips, which one
 * goes first alternating from pair to pair. N is lowered when untimed probe
 * round trips show the blocks would take more than about BUDGET seconds.
 * Rank 0 times each block; one-way latency = block time / (2 N).
 *
 * Output (rank 0, stdout): a comment line, then
 *   mpi <us>      median of the MPI blocks
 *   plain <us>    median of the plain blocks
 *   ratio <r>     median over the pairs of (MPI block / plain block)
 * Exit status 0 on success; on error a message on stderr and MPI_Abort.
 *
 * Written for oxmpi's bench/run.sh; not derived from other code. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <mpi.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "clock.h"

#define SIZE 8
#define BLOCKS 15     /* pairs of blocks */
#define BUDGET 0.6    /* seconds for all timed blocks, at most (roughly) */
#define PROBE 50      /* round trips of each kind used to estimate the cost */
#define MAX_ROUNDS 2000

static int rank = -1;

static void die(const char *what)
{
    fprintf(stderr, "tcp_side_by_side (rank %d): %s: %s\n", rank, what, strerror(errno));
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

static void read_full(int fd, char *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = recv(fd, buf + got, n - got, MSG_DONTWAIT);
        if (r > 0)
            got += (size_t)r;
        else if (r == 0) {
            errno = EPIPE;
            die("connection closed by the peer");
        } else if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)
            die("read");
    }
}

static void write_full(int fd, const char *buf, size_t n)
{
    size_t put = 0;
    while (put < n) {
        ssize_t w = send(fd, buf + put, n - put, MSG_DONTWAIT | MSG_NOSIGNAL);
        if (w >= 0)
            put += (size_t)w;
        else if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)
            die("write");
    }
}

static void mpi_rounds(char *buf, long n)
{
    int peer = 1 - rank;
    for (long i = 0; i < n; i++) {
        if (rank == 0) {
            MPI_Send(buf, SIZE, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
            MPI_Recv(buf, SIZE, MPI_CHAR, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, SIZE, MPI_CHAR, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, SIZE, MPI_CHAR, peer, 1, MPI_COMM_WORLD);
        }
    }
}

static void plain_rounds(int fd, char *buf, long n)
{
    for (long i = 0; i < n; i++) {
        if (rank == 0) {
            write_full(fd, buf, SIZE);
            read_full(fd, buf, SIZE);
        } else {
            read_full(fd, buf, SIZE);
            write_full(fd, buf, SIZE);
        }
    }
}

/* The connected socket between the two ranks. */
static int connect_pair(void)
{
    int one = 1, fd;
    struct sockaddr_in addr;
    socklen_t len = sizeof addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (rank == 0) {
        int lfd = socket(AF_INET, SOCK_STREAM, 0);
        if (lfd < 0) die("socket");
        if (bind(lfd, (struct sockaddr *)&addr, sizeof addr) < 0) die("bind");
        if (listen(lfd, 1) < 0) die("listen");
        if (getsockname(lfd, (struct sockaddr *)&addr, &len) < 0) die("getsockname");
        int port = ntohs(addr.sin_port);
        MPI_Send(&port, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
        fd = accept(lfd, NULL, NULL);
        if (fd < 0) die("accept");
        close(lfd);
    } else {
        int port;
        MPI_Recv(&port, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        addr.sin_port = htons((unsigned short)port);
        fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0) die("socket");
        if (connect(fd, (struct sockaddr *)&addr, sizeof addr) < 0) die("connect");
    }
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) < 0)
        die("setsockopt(TCP_NODELAY)");
    return fd;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    int nranks;
    char buf[SIZE];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (nranks != 2) {
        if (rank == 0) fprintf(stderr, "tcp_side_by_side: needs exactly 2 ranks, got %d\n", nranks);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    memset(buf, 'a' + rank, sizeof buf);
    int fd = connect_pair();

    /* Warm-up, then probes: rank 0 picks N and tells rank 1. */
    mpi_rounds(buf, 500);
    plain_rounds(fd, buf, 500);
    double t0 = now();
    mpi_rounds(buf, PROBE);
    plain_rounds(fd, buf, PROBE);
    double per_round = (now() - t0) / (2.0 * PROBE);
    long n = MAX_ROUNDS;
    if (rank == 0 && per_round * n * 2 * BLOCKS > BUDGET)
        n = (long)(BUDGET / (per_round * 2 * BLOCKS));
    if (n < 20) n = 20;
    MPI_Bcast(&n, 1, MPI_LONG, 0, MPI_COMM_WORLD);

    double mpi_us[BLOCKS], plain_us[BLOCKS], ratio[BLOCKS];
    for (int b = 0; b < BLOCKS; b++) {
        for (int k = 0; k < 2; k++) {
            int mpi_turn = (k == 0) == (b % 2 == 0);
            double start = now();
            if (mpi_turn)
                mpi_rounds(buf, n);
            else
                plain_rounds(fd, buf, n);
            double us = (now() - start) / (2.0 * n) * 1e6;
            if (mpi_turn)
                mpi_us[b] = us;
            else
                plain_us[b] = us;
        }
        ratio[b] = mpi_us[b] / plain_us[b];
    }
    close(fd);
    if (rank == 0) {
        printf("# tcp_side_by_side: %d pairs of blocks of %ld round trips of %d bytes\n",
               BLOCKS, n, SIZE);
        printf("ratio %.4f\n", median(ratio, BLOCKS));
        printf("mpi %.3f\n", median(mpi_us, BLOCKS));
        printf("plain %.3f\n", median(plain_us, BLOCKS));
    }
    MPI_Finalize();
    return 0;
}
