/*
 * Shared by the launcher test helpers: PMI-1 line I/O over the socket named
 * by PMI_FD (or, for ranks on another host, over TCP to PMI_PORT with the
 * PMI_ID handshake and oxmpi's job secret), and pid bookkeeping so that the
 * test script can check that no rank survives its job. Links no MPI
 * library on purpose: these programs test mpiexec alone.
 */
#ifndef LAUNCHER_TEST_COMMON_H
#define LAUNCHER_TEST_COMMON_H

#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define PMI_LINE_MAX 1024

static inline int env_int(const char *name, int fallback)
{
    const char *v = getenv(name);
    return v && *v ? atoi(v) : fallback;
}

static inline int my_rank(void) { return env_int("PMI_RANK", -1); }
static inline int job_size(void) { return env_int("PMI_SIZE", -1); }

static inline void fail(const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "rank %d: ", my_rank());
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

static inline void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

/* Reads one line from `fd` without its '\n'; returns -1 at end of file. */
static inline int read_line_fd(int fd, char *buf, size_t cap)
{
    size_t len = 0;
    for (;;) {
        char c;
        ssize_t n = read(fd, &c, 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            fail("PMI read failed: %s", strerror(errno));
        if (n == 0)
            return len == 0 ? -1 : (int) len;
        if (c == '\n')
            break;
        if (len + 1 >= cap)
            fail("PMI answer longer than %zu bytes", cap);
        buf[len++] = c;
    }
    buf[len] = '\0';
    return (int) len;
}

static inline void write_all_fd(int fd, const char *text)
{
    size_t len = strlen(text), done = 0;
    while (done < len) {
        ssize_t n = write(fd, text + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            fail("PMI write failed: %s", strerror(errno));
        done += (size_t) n;
    }
}

/* Connects to PMI_PORT (host:port) and does the PMI_ID handshake, sending
 * OXMPI_JOB_SECRET when it is set. */
static inline int pmi_connect_port(const char *port)
{
    char host[256], line[PMI_LINE_MAX], want[64];
    const char *colon = strrchr(port, ':');
    const char *id = getenv("PMI_ID");
    const char *secret = getenv("OXMPI_JOB_SECRET");
    struct addrinfo hints = {0}, *res, *ai;
    int fd = -1;
    if (!colon || !id || (size_t) (colon - port) >= sizeof host)
        fail("bad PMI_PORT '%s' or no PMI_ID", port);
    memcpy(host, port, (size_t) (colon - port));
    host[colon - port] = '\0';
    if (host[0] == '[') { /* [v6addr] */
        memmove(host, host + 1, strlen(host));
        host[strcspn(host, "]")] = '\0';
    }
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, colon + 1, &hints, &res) != 0)
        fail("cannot resolve PMI_PORT '%s'", port);
    for (ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
            break;
        if (fd >= 0)
            close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0)
        fail("cannot connect to PMI_PORT '%s': %s", port, strerror(errno));
    if (secret && *secret)
        snprintf(line, sizeof line, "cmd=initack pmiid=%s secret=%s\n", id, secret);
    else
        snprintf(line, sizeof line, "cmd=initack pmiid=%s\n", id);
    write_all_fd(fd, line);
    if (read_line_fd(fd, line, sizeof line) < 0 || strcmp(line, "cmd=initack") != 0)
        fail("initack was not answered with cmd=initack");
    if (read_line_fd(fd, line, sizeof line) < 0 || strncmp(line, "cmd=set size=", 13) != 0)
        fail("expected cmd=set size=, got '%s'", line);
    snprintf(want, sizeof want, "cmd=set rank=%s", id);
    if (read_line_fd(fd, line, sizeof line) < 0 || strcmp(line, want) != 0)
        fail("expected '%s', got '%s'", want, line);
    if (read_line_fd(fd, line, sizeof line) < 0 || strncmp(line, "cmd=set debug=", 14) != 0)
        fail("expected cmd=set debug=, got '%s'", line);
    return fd;
}

/* The PMI connection: PMI_FD, or a TCP connection to PMI_PORT made on first use. */
static inline int pmi_fd(void)
{
    static int tcp_fd = -1;
    int fd = env_int("PMI_FD", -1);
    if (fd >= 0)
        return fd;
    if (tcp_fd < 0 && getenv("PMI_PORT"))
        tcp_fd = pmi_connect_port(getenv("PMI_PORT"));
    if (tcp_fd < 0)
        fail("neither PMI_FD nor PMI_PORT is set");
    return tcp_fd;
}

/* Sends one line; `line` must end in '\n'. */
static inline void pmi_send(const char *line)
{
    write_all_fd(pmi_fd(), line);
}

/* Reads one line without its '\n'; returns -1 at end of file. */
static inline int pmi_recv(char *buf, size_t cap)
{
    return read_line_fd(pmi_fd(), buf, cap);
}

/* Sends `request` and returns the answer line in `answer`. */
static inline void pmi_ask(const char *request, char *answer, size_t cap)
{
    pmi_send(request);
    if (pmi_recv(answer, cap) < 0)
        fail("PMI connection closed after %s", request);
}

/* The value of field `key` in `line` (copied to `out`), or NULL. */
static inline const char *pmi_field(const char *line, const char *key, char *out, size_t cap)
{
    size_t klen = strlen(key);
    const char *p = line;
    while (p && *p) {
        while (*p == ' ')
            p++;
        if (strncmp(p, key, klen) == 0 && p[klen] == '=') {
            const char *v = p + klen + 1;
            size_t n = strcspn(v, " ");
            if (n >= cap)
                n = cap - 1;
            memcpy(out, v, n);
            out[n] = '\0';
            return out;
        }
        p = strchr(p, ' ');
    }
    return NULL;
}

/* Fails unless field `key` of `line` equals `want`. */
static inline void expect_field(const char *line, const char *key, const char *want)
{
    char value[PMI_LINE_MAX];
    if (!pmi_field(line, key, value, sizeof value))
        fail("no %s= in answer '%s'", key, line);
    if (strcmp(value, want) != 0)
        fail("%s=%s in answer '%s', expected %s", key, value, line, want);
}

static inline void pmi_init(void)
{
    char answer[PMI_LINE_MAX];
    pmi_ask("cmd=init pmi_version=1 pmi_subversion=1\n", answer, sizeof answer);
    expect_field(answer, "cmd", "response_to_init");
    expect_field(answer, "rc", "0");
}

/* Writes this process's pid to <dir>/rank-<rank>.pid. */
static inline void record_pid(const char *dir)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/rank-%d.pid", dir, my_rank());
    FILE *f = fopen(path, "w");
    if (!f)
        fail("cannot write %s: %s", path, strerror(errno));
    fprintf(f, "%d\n", (int) getpid());
    fclose(f);
}

/* Waits (up to 10 s) until every rank of the job has recorded its pid. */
static inline void wait_for_all_pids(const char *dir)
{
    char path[4096];
    for (int waited = 0; waited < 10000; waited += 10) {
        int present = 0;
        for (int r = 0; r < job_size(); r++) {
            snprintf(path, sizeof path, "%s/rank-%d.pid", dir, r);
            present += access(path, F_OK) == 0;
        }
        if (present == job_size())
            return;
        sleep_ms(10);
    }
    fail("not every rank recorded its pid");
}

static inline void no_core_dumps(void)
{
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none);
}

#endif
