/* plain_tcp.c: the plain TCP baseline for the "tcp" section of oxmpi's
 * bench/run.sh (issue 5): no MPI, two processes over one loopback TCP
 * connection, measured with the methods of pingpong.c and bandwidth.c so
 * that oxmpi over TCP can be compared with what the kernel alone gives.
 *
 *   plain_tcp latency    8-byte ping-pong: warm-up round trips, then N timed
 *                        round trips; one-way latency = elapsed / (2 N), us.
 *   plain_tcp bandwidth  1 MiB streaming: per iteration the sender writes a
 *                        window of 64 messages of 1 MiB back to back, the
 *                        receiver reads them and answers with a 4-byte ack;
 *                        warm-up, then timed iterations; MB/s = bytes /
 *                        elapsed with 1 MB = 10^6 bytes.
 *
 * The program forks itself, so it needs no launcher: the parent listens on
 * 127.0.0.1 (port 0, chosen by the kernel), the child connects, and both
 * set TCP_NODELAY; socket buffers keep their defaults.  The parent plays
 * rank 0 (it times and prints), the child rank 1 (it echoes, or reads and
 * acks, until the parent closes the connection).  Partial reads and writes
 * are completed in loops.  As in pingpong.c and bandwidth.c, the warm-up
 * and timed counts start from fixed values and are lowered when untimed
 * probe round trips (iterations) show the timed loop would take more than
 * about BUDGET seconds.
 *
 * Output (stdout): a comment line, then one "size value" line, in the shape
 * pingpong and bandwidth print: "8 <us>" or "1048576 <MB/s>".  Exit status
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include "clock.h"

#define LAT_SIZE 8
#define LAT_BUDGET 0.3 /* seconds of timed loop, at most (roughly) */
#define LAT_PROBE 20   /* round trips used to estimate the cost of one */
#define BW_SIZE (1 << 20)
#define BW_WINDOW 64
#define BW_BUDGET 0.5
#define ACCEPT_MS 10000 /* the child connects well within this */

static const char *role = "plain_tcp";

static void die(const char *what)
{
    fprintf(stderr, "%s: %s: %s\n", role, what, strerror(errno));
    exit(1);
}

/* Reads and writes poll (nonblocking calls retried at once), as MPI
 * libraries wait for the network: a blocking read would pay for a sleep
 * and a wake-up per message, which on these VMs costs ~100 us and would
 * make the baseline look far slower than TCP is. */

/* Reads exactly n bytes.  Returns 0 on success, -1 on end of file before
 * the first byte (the peer closed between messages); dies on anything
 * else, including end of file in the middle of a message. */
static int read_full(int fd, void *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t r = recv(fd, (char *)buf + got, n - got, MSG_DONTWAIT);
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
        ssize_t w = send(fd, (const char *)buf + put, n - put, MSG_DONTWAIT);
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

/* ---------------------------------------------------------------- latency */

static void round_trips(int fd, char *buf, long n)
{
    for (long i = 0; i < n; i++) {
        write_full(fd, buf, LAT_SIZE);
        recv_msg(fd, buf, LAT_SIZE);
    }
}

static void latency(int fd)
{
    char buf[LAT_SIZE];
    long warm = 2000, iters = 50000; /* pingpong.c's counts for <= 4 KiB */
    memset(buf, 'a', sizeof buf);

    double t0 = now();
    round_trips(fd, buf, LAT_PROBE);
    double per = (now() - t0) / LAT_PROBE;
    if (per > 0 && per * (double)iters > LAT_BUDGET) {
        iters = (long)(LAT_BUDGET / per);
        if (iters < 10) iters = 10;
    }
    if (per > 0 && per * (double)warm > LAT_BUDGET / 4) {
        warm = (long)(LAT_BUDGET / 4 / per);
        if (warm < 2) warm = 2;
    }
    round_trips(fd, buf, warm);

    t0 = now();
    round_trips(fd, buf, iters);
    double t = now() - t0;
    printf("%d %.3f\n", LAT_SIZE, t * 1e6 / (2.0 * (double)iters));
}

static void latency_peer(int fd)
{
    char buf[LAT_SIZE];
    while (read_full(fd, buf, LAT_SIZE) == 0)
        write_full(fd, buf, LAT_SIZE);
}

/* ---------------------------------------------------------------- bandwidth */

static void windows(int fd, char *buf, long n)
{
    char ack[4];
    for (long i = 0; i < n; i++) {
        for (int w = 0; w < BW_WINDOW; w++)
            write_full(fd, buf, BW_SIZE);
        recv_msg(fd, ack, sizeof ack);
    }
}

static void bandwidth(int fd, char *buf)
{
    long warm = 5, iters = 50; /* bandwidth.c's counts for > 8 KiB */

    double t0 = now();
    windows(fd, buf, 1);
    double per = now() - t0;
    if (per > 0 && per * (double)iters > BW_BUDGET) {
        iters = (long)(BW_BUDGET / per);
        if (iters < 3) iters = 3;
    }
    if (per > 0 && per * (double)warm > BW_BUDGET / 4) {
        warm = (long)(BW_BUDGET / 4 / per);
        if (warm < 1) warm = 1;
    }
    windows(fd, buf, warm);

    t0 = now();
    windows(fd, buf, iters);
    double t = now() - t0;
    double bytes = (double)BW_SIZE * BW_WINDOW * (double)iters;
    printf("%d %.6g\n", BW_SIZE, bytes / t / 1e6);
}

static void bandwidth_peer(int fd, char *buf)
{
    char ack[4] = {0};
    for (;;) {
        /* End of file before a window's first message: the parent is done. */
        if (read_full(fd, buf, BW_SIZE) < 0) return;
        for (int w = 1; w < BW_WINDOW; w++)
            recv_msg(fd, buf, BW_SIZE);
        write_full(fd, ack, sizeof ack);
    }
}

/* ---------------------------------------------------------------- main */

int main(int argc, char **argv)
{
    int lat;
    if (argc == 2 && strcmp(argv[1], "latency") == 0) {
        lat = 1;
    } else if (argc == 2 && strcmp(argv[1], "bandwidth") == 0) {
        lat = 0;
    } else {
        fprintf(stderr, "usage: %s latency|bandwidth\n", argv[0]);
        return 2;
    }
    /* A dead peer shows up as EPIPE from write, not as a signal. */
    signal(SIGPIPE, SIG_IGN);

    char *buf = NULL;
    if (!lat) {
        buf = malloc(BW_SIZE);
        if (!buf) die("malloc");
        memset(buf, 'a', BW_SIZE);
    }

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
        if (lat)
            latency_peer(fd);
        else
            bandwidth_peer(fd, buf);
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
        printf("# plain_tcp latency: size(bytes) one-way-latency(us)\n");
    else
        printf("# plain_tcp bandwidth: size(bytes) MB/s (window %d)\n", BW_WINDOW);
    if (lat)
        latency(fd);
    else
        bandwidth(fd, buf);
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
