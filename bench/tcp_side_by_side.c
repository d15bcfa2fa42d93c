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
 * OXMPI_TRANSPORT=tcp, UCX_TLS=tcp,self or Open MPI's tcp BTL), rank 0
 * listens on 127.0.0.1 (port 0), sends the port to rank 1 with MPI_Send,
 * and rank 1 connects; TCP_NODELAY on both ends, default socket buffers.
 * Plain blocks come in two kinds, as in plain_tcp.c: polling (nonblocking
 * calls retried at once, as the MPI libraries wait) and blocking (ordinary
 * blocking send and recv); the floor is the faster of the two.  Warm-up
 * round trips of every kind, then BLOCKS triples of blocks of N round trips
 * each: one block of MPI_Send/MPI_Recv round trips on MPI_COMM_WORLD, one
 * of polling plain round trips and one of blocking plain round trips, the
 * order rotating from triple to triple. N is lowered when untimed probe
 * round trips show the blocks would take more than about BUDGET seconds.
 * Rank 0 times each block; one-way latency = block time / (2 N).
 *
 * Output (rank 0, stdout): a comment line, then
 *   mpi <us>             median of the MPI blocks
 *   plain <us>           median of the polling plain blocks
 *   plain_blocking <us>  median of the blocking plain blocks
 *   floor <us>           median over the triples of the faster plain block
 *   ratio <r>            median over the triples of (MPI block / faster
 *                        plain block of the same triple)
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
#include "pair.h"

#define SIZE 8
#define BLOCKS 15     /* triples of blocks */
#define BUDGET (0.9 * budget_scale())    /* seconds for all timed blocks, at most (roughly) */
#define PROBE 50      /* round trips of each kind used to estimate the cost */
#define MAX_ROUNDS 2000

static int rank = -1;

static void die(const char *what)
{
    fprintf(stderr, "tcp_side_by_side (rank %d): %s: %s\n", rank, what, strerror(errno));
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1);
}

static void read_full(int fd, char *buf, size_t n, int flags)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = recv(fd, buf + got, n - got, flags);
        if (r > 0)
            got += (size_t)r;
        else if (r == 0) {
            errno = EPIPE;
            die("connection closed by the peer");
        } else if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)
            die("read");
    }
}

static void write_full(int fd, const char *buf, size_t n, int flags)
{
    size_t put = 0;
    while (put < n) {
        ssize_t w = send(fd, buf + put, n - put, flags | MSG_NOSIGNAL);
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

/* flags: MSG_DONTWAIT (polling) or 0 (blocking) */
static void plain_rounds(int fd, char *buf, long n, int flags)
{
    for (long i = 0; i < n; i++) {
        if (rank == 0) {
            write_full(fd, buf, SIZE, flags);
            read_full(fd, buf, SIZE, flags);
        } else {
            read_full(fd, buf, SIZE, flags);
            write_full(fd, buf, SIZE, flags);
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
    char buf[SIZE];
    rank = pair_init(&argc, &argv, "tcp_side_by_side");
    memset(buf, 'a' + rank, sizeof buf);
    int fd = connect_pair();

    /* Warm-up, then probes: rank 0 picks N and tells rank 1. */
    mpi_rounds(buf, 500);
    plain_rounds(fd, buf, 500, MSG_DONTWAIT);
    plain_rounds(fd, buf, 500, 0);
    double t0 = now();
    mpi_rounds(buf, PROBE);
    plain_rounds(fd, buf, PROBE, MSG_DONTWAIT);
    plain_rounds(fd, buf, PROBE, 0);
    double per_round = (now() - t0) / (3.0 * PROBE);
    long n = MAX_ROUNDS;
    if (rank == 0 && per_round * n * 3 * BLOCKS > BUDGET)
        n = (long)(BUDGET / (per_round * 3 * BLOCKS));
    if (n < 20) n = 20;
    MPI_Bcast(&n, 1, MPI_LONG, 0, MPI_COMM_WORLD);

    /* kind 0: MPI, 1: plain polling, 2: plain blocking */
    double us[3][BLOCKS], best[BLOCKS], ratio[BLOCKS];
    for (int b = 0; b < BLOCKS; b++) {
        for (int k = 0; k < 3; k++) {
            int kind = (k + b) % 3;
            double start = now();
            if (kind == 0)
                mpi_rounds(buf, n);
            else
                plain_rounds(fd, buf, n, kind == 1 ? MSG_DONTWAIT : 0);
            us[kind][b] = (now() - start) / (2.0 * n) * 1e6;
        }
        best[b] = us[1][b] < us[2][b] ? us[1][b] : us[2][b];
        ratio[b] = us[0][b] / best[b];
    }
    close(fd);
    if (rank == 0) {
        printf("# tcp_side_by_side: %d triples of blocks of %ld round trips of %d bytes\n",
               BLOCKS, n, SIZE);
        printf("ratio %.4f\n", median(ratio, BLOCKS));
        printf("mpi %.3f\n", median(us[0], BLOCKS));
        printf("plain %.3f\n", median(us[1], BLOCKS));
        printf("plain_blocking %.3f\n", median(us[2], BLOCKS));
        printf("floor %.3f\n", median(best, BLOCKS));
    }
    MPI_Finalize();
    return 0;
}
