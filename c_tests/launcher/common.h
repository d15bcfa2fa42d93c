/*
 * Shared by the launcher test helpers: PMI-1 line I/O over the socket named
 * by PMI_FD, and pid bookkeeping so that the test script can check that no
 * rank survives its job. Links no MPI library on purpose: these programs
 * test mpiexec alone.
 */
#ifndef LAUNCHER_TEST_COMMON_H
#define LAUNCHER_TEST_COMMON_H

#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
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

static inline int pmi_fd(void)
{
    int fd = env_int("PMI_FD", -1);
    if (fd < 0)
        fail("PMI_FD is not set");
    return fd;
}

/* Sends one line; `line` must end in '\n'. */
static inline void pmi_send(const char *line)
{
    int fd = pmi_fd();
    size_t len = strlen(line), done = 0;
    while (done < len) {
        ssize_t n = write(fd, line + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            fail("PMI write failed: %s", strerror(errno));
        done += (size_t) n;
    }
}

/* Reads one line without its '\n'; returns -1 at end of file. */
static inline int pmi_recv(char *buf, size_t cap)
{
    int fd = pmi_fd();
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
