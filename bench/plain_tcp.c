/* plain_tcp.c: the plain TCP baseline for the "tcp" section of oxmpi's
 * bench/run.sh (issue 5): no MPI, two processes over one loopback TCP
 * connection, measured with the methods of pingpong.c and bandwidth.c so
 * that oxmpi over TCP can be compared with what the kernel alone gives.
 *
 *   plain_tcp latency MODE    ping-pong per size (pingpong.c's sizes, 1 B to
 *                             4 MiB; 0 B means nothing on a stream): warm-up
 *                             round trips, then N timed round trips; one-way
 *                             latency = elapsed / (2 N), us.
 *   plain_tcp bandwidth MODE  streaming per size (bandwidth.c's sizes): per
 *                             iteration the sender writes a window of 64
 *                             messages back to back, the receiver reads them
 *                             and answers with a 4-byte ack; warm-up, then
 *                             timed iterations; MB/s = bytes / elapsed with
 *                             1 MB = 10^6 bytes.
 *
 * MODE is "polling" (nonblocking calls retried at once, as MPI libraries
 * wait) or "blocking" (plain blocking send and recv: the process sleeps in
 * the kernel until data or room arrives).  On 2 virtual CPUs neither is
 * always faster: polling wins small round trips (no sleep and wake-up per
 * message), blocking wins streaming (the spinning process no longer takes
 * the CPU that the kernel's loopback path needs).  bench/run.sh runs both
 * and takes the faster as the floor.
 *
 * The program forks itself, so it needs no launcher: the parent listens on
 * 127.0.0.1 (port 0, chosen by the kernel), the child connects, and both
 * set TCP_NODELAY; socket buffers keep their defaults.  The parent plays
 * rank 0 (it times and prints), the child rank 1: before each phase (probe,
 * warm-up, timed loop of one size) the parent sends an 8-byte header (size,
 * count), and the child echoes, or reads and acks, that many times; it
 * stops at end of file.  Partial reads and writes
 * are completed in loops.  As in pingpong.c and bandwidth.c, the warm-up
 * and timed counts start from fixed values and are lowered when untimed
 * probe round trips (iterations) show the timed loop would take more than
 * about BUDGET seconds.
 *
 * Output (stdout): a comment line, then one "size value" line per size, in
 * the shape pingpong and bandwidth print: "size <us>" or "size <MB/s>".  Exit status
 * 0 on success, 1 on any error (with a message on stderr), 2 on bad usage.
 *
 * Written for oxmpi's bench/run.sh; not derived from other code. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include "clock.h"

#define LAT_BUDGET (0.3 * budget_scale()) /* seconds of timed loop per size, at most (roughly) */
#define LAT_PROBE 20   /* round trips used to estimate the cost of one */
#define BW_WINDOW 64
#define BW_BUDGET (0.5 * budget_scale())
#define MAX_SIZE (4 << 20)

static const int lat_sizes[] = {1, 8, 64, 512, 4096, 16384, 65536, 1 << 20, 4 << 20};
static const int bw_sizes[] = {8, 64, 512, 4096, 16384, 65536, 262144, 1 << 20, 4 << 20};
#define NSIZES(a) (sizeof a / sizeof a[0])
#define ACCEPT_MS 10000 /* the child connects well within this */

static const char *role = "plain_tcp";
static int dontwait = MSG_DONTWAIT; /* 0 in blocking mode */

static void die(const char *what)
{
    fprintf(stderr, "%s: %s: %s\n", role, what, strerror(errno));
    exit(1);
}

/* In polling mode reads and writes are nonblocking calls retried at once,
 * as MPI libraries wait for the network; in blocking mode (dontwait = 0)
 * they are ordinary blocking calls. */

/* Reads exactly n bytes.  Returns 0 on success, -1 on end of file before
 * the first byte (the peer closed between messages); dies on anything
 * else, including end of file in the middle of a message. */
static int read_full(int fd, void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = recv(fd, (char *)buf + got, n - got, dontwait);
        if (r > 0) {
            got += (size_t)r;
        } else if (r == 0) {
            if (got == 0) return -1;
            errno = EPIPE;
            die("connection closed in the middle of a message");
        } else if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK) {
            die("read");
        }
    }
    return 0;
}

static void write_full(int fd, const void *buf, size_t n)
{
    size_t put = 0;
    while (put < n) {
        ssize_t w = send(fd, (const char *)buf + put, n - put, dontwait);
        if (w >= 0)
            put += (size_t)w;
        else if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)
            die("write");
    }
}

static void recv_msg(int fd, void *buf, size_t n)
{
    if (read_full(fd, buf, n) < 0) {
        errno = EPIPE;
        die("connection closed by the peer");
    }
}

static void nodelay(int fd)
{
    int one = 1;
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) < 0)
        die("setsockopt(TCP_NODELAY)");
}

/* ---------------------------------------------------------------- phases */

/* One phase: tell the child (size, count), then run it.  Returns seconds. */
static double phase(int fd, int lat, char *buf, int size, long n)
{
    /* the header carries -size for latency, so that the child knows */
    int32_t hdr[2] = {lat ? -size : size, (int32_t)n};
    char ack[4];
    write_full(fd, hdr, sizeof hdr);
    double t0 = now();
    for (long i = 0; i < n; i++) {
        if (lat) {
            write_full(fd, buf, (size_t)size);
            recv_msg(fd, buf, (size_t)size);
        } else {
            for (int w = 0; w < BW_WINDOW; w++)
                write_full(fd, buf, (size_t)size);
            recv_msg(fd, ack, sizeof ack);
        }
    }
    return now() - t0;
}

/* The child: phases until end of file. */
static void peer(int fd, char *buf)
{
    int32_t hdr[2];
    char ack[4] = {0};
    while (read_full(fd, hdr, sizeof hdr) == 0) {
        for (long i = 0; i < hdr[1]; i++) {
            if (hdr[0] < 0) {        /* latency: echo */
                recv_msg(fd, buf, (size_t)-hdr[0]);
                write_full(fd, buf, (size_t)-hdr[0]);
            } else {                 /* bandwidth: a window, then an ack */
                for (int w = 0; w < BW_WINDOW; w++)
                    recv_msg(fd, buf, (size_t)hdr[0]);
                write_full(fd, ack, sizeof ack);
            }
        }
    }
}

/* pingpong.c's and bandwidth.c's counts, lowered to the budget. */
static void measure(int fd, int lat, char *buf)
{
    const int *sizes = lat ? lat_sizes : bw_sizes;
    size_t nsizes = lat ? NSIZES(lat_sizes) : NSIZES(bw_sizes);
    for (size_t s = 0; s < nsizes; s++) {
        int size = sizes[s];
        long warm, iters, probe = lat ? LAT_PROBE : 1;
        double budget = lat ? LAT_BUDGET : BW_BUDGET;
        if (lat) {
            if (size <= 4096)       { warm = 2000; iters = 50000; }
            else if (size <= 65536) { warm = 200;  iters = 5000; }
            else                    { warm = 10;   iters = 500; }
        } else {
            if (size <= 8192) { warm = 100; iters = 1000; }
            else              { warm = 5;   iters = 50; }
        }
        double per = phase(fd, lat, buf, size, probe) / (double)probe;
        if (per > 0 && per * (double)iters > budget) {
            iters = (long)(budget / per);
            if (iters < 3) iters = 3;
        }
        if (per > 0 && per * (double)warm > budget / 4) {
            warm = (long)(budget / 4 / per);
            if (warm < 1) warm = 1;
        }
        phase(fd, lat, buf, size, warm);
        double t = phase(fd, lat, buf, size, iters);
        if (lat)
            printf("%d %.3f\n", size, t * 1e6 / (2.0 * (double)iters));
        else
            printf("%d %.6g\n", size, (double)size * BW_WINDOW * (double)iters / t / 1e6);
        fflush(stdout);
    }
}

/* ---------------------------------------------------------------- main */

int main(int argc, char **argv)
{
    int lat = -1;
    if (argc == 3 && strcmp(argv[1], "latency") == 0)
        lat = 1;
    else if (argc == 3 && strcmp(argv[1], "bandwidth") == 0)
        lat = 0;
    if (lat < 0 || (strcmp(argv[2], "polling") != 0 && strcmp(argv[2], "blocking") != 0)) {
        fprintf(stderr, "usage: %s latency|bandwidth polling|blocking\n", argv[0]);
        return 2;
    }
    if (strcmp(argv[2], "blocking") == 0)
        dontwait = 0;
    /* A dead peer shows up as EPIPE from write, not as a signal. */
    signal(SIGPIPE, SIG_IGN);

    char *buf = malloc(MAX_SIZE);
    if (!buf) die("malloc");
    memset(buf, 'a', MAX_SIZE);

    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    if (lfd < 0) die("socket");
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    if (bind(lfd, (struct sockaddr *)&addr, sizeof addr) < 0) die("bind");
    if (listen(lfd, 1) < 0) die("listen");
    socklen_t alen = sizeof addr;
    if (getsockname(lfd, (struct sockaddr *)&addr, &alen) < 0) die("getsockname");

    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) die("fork");
    if (pid == 0) {
        role = "plain_tcp (child)";
        close(lfd);
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0) die("socket");
        if (connect(fd, (struct sockaddr *)&addr, sizeof addr) < 0) die("connect");
        nodelay(fd);
        peer(fd, buf);
        close(fd);
        free(buf);
        _exit(0);
    }

    /* A child that fails before connecting must not leave us in accept. */
    struct pollfd pfd = {.fd = lfd, .events = POLLIN};
    int ready;
    while ((ready = poll(&pfd, 1, ACCEPT_MS)) < 0)
        if (errno != EINTR) die("poll");
    if (ready == 0) {
        errno = ETIMEDOUT;
        die("no connection from the child");
    }
    int fd;
    while ((fd = accept(lfd, NULL, NULL)) < 0)
        if (errno != EINTR) die("accept");
    close(lfd);
    nodelay(fd);
    if (lat)
        printf("# plain_tcp latency %s: size(bytes) one-way-latency(us)\n", argv[2]);
    else
        printf("# plain_tcp bandwidth %s: size(bytes) MB/s (window %d)\n", argv[2], BW_WINDOW);
    measure(fd, lat, buf);
    fflush(stdout);
    close(fd); /* the child sees end of file and exits */
    free(buf);

    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) die("waitpid");
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "%s: the child process failed (status 0x%x)\n", role, status);
        return 1;
    }
    return 0;
}
