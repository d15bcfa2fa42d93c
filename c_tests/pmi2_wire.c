/* A raw PMI-2 client (no MPI library) against oxmpi's mpiexec over PMI_FD,
 * run by c_tests/pmi2_wire.sh with 3 ranks and -usize 5. Each rank:
 * asks for PMI-2 with the PMI-1 init line; fullinit (rank, size, appnum);
 * job-getid; the job attributes PMI_process_mapping and universeSize;
 * a kvs-get of its own key before anyone put it (not found); kvs-put of a
 * value holding `;` and `=`; kvs-fence; kvs-get of every rank's key (found,
 * value intact) and of a key nobody put (not found, rc=0); node attributes
 * (rank 0 puts one, everyone waits for it with wait=TRUE); name-publish /
 * name-lookup across ranks; finalize, after which the server closes.
 * Messages are written as MPICH's client writes them (length left-aligned,
 * and six bytes after the body that the length counts) and as Hydra does
 * (right-aligned, exact), alternately. Rank 0 prints "No Errors"; any
 * failure prints the rank and the step on stderr and exits 1. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int fd = -1, rank = -1, nsent = 0;

static void fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "pmi2_wire rank %d: ", rank);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

static void write_all(const char *buf, size_t len) {
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n <= 0) fail("write failed");
        buf += n;
        len -= (size_t)n;
    }
}

static void read_all(char *buf, size_t len) {
    while (len > 0) {
        ssize_t n = read(fd, buf, len);
        if (n <= 0) fail("read failed (%zd) with %zu bytes to go", n, len);
        buf += n;
        len -= (size_t)n;
    }
}

/* Sends `cmd=<cmd>;` then the pairs "k", "v", ..., NULL; values escaped. */
static void send_cmd(const char *cmd, ...) {
    char body[4096];
    size_t len = (size_t)snprintf(body, sizeof body, "cmd=%s;", cmd);
    va_list ap;
    va_start(ap, cmd);
    const char *k;
    while ((k = va_arg(ap, const char *)) != NULL) {
        const char *v = va_arg(ap, const char *);
        len += (size_t)snprintf(body + len, sizeof body - len, "%s=", k);
        for (; *v; v++) {
            if (*v == ';') body[len++] = ';';
            body[len++] = *v;
        }
        body[len++] = ';';
    }
    va_end(ap);
    char frame[4200];
    if (nsent++ % 2 == 0) {
        /* MPICH 4.0.2's client: the length counts six bytes more than the
         * body, which follow it (whatever its buffer held). */
        memcpy(body + len, "bid=kv", 6);
        snprintf(frame, sizeof frame, "%-6zu", len + 6);
        memcpy(frame + 6, body, len + 6);
        write_all(frame, len + 12);
    } else {
        snprintf(frame, sizeof frame, "%6zu", len);
        memcpy(frame + 6, body, len);
        write_all(frame, len + 6);
    }
}

/* The last answer, unescaped into key/value pairs. */
static char keys[32][64], vals[32][1100];
static int npairs;

static void read_answer(const char *expected) {
    char lenbuf[7] = {0}, body[8192];
    read_all(lenbuf, 6);
    int len = atoi(lenbuf);
    if (len <= 0 || len >= (int)sizeof body) fail("bad length prefix '%s'", lenbuf);
    read_all(body, (size_t)len);
    body[len] = 0;
    npairs = 0;
    int i = 0;
    while (i < len && npairs < 32) {
        int k = 0;
        while (i < len && body[i] != '=' && k < 63) keys[npairs][k++] = body[i++];
        keys[npairs][k] = 0;
        if (i >= len || body[i] != '=') fail("field without '=' in '%s'", body);
        i++;
        int v = 0;
        for (;;) {
            if (i >= len) fail("unterminated field in '%s'", body);
            if (body[i] == ';') {
                if (i + 1 < len && body[i + 1] == ';') { vals[npairs][v++] = ';'; i += 2; continue; }
                i++;
                break;
            }
            vals[npairs][v++] = body[i++];
        }
        vals[npairs][v] = 0;
        npairs++;
    }
    if (npairs == 0 || strcmp(keys[0], "cmd") != 0 || strcmp(vals[0], expected) != 0)
        fail("expected %s, got '%s'", expected, body);
}

static const char *field(const char *key) {
    for (int i = 1; i < npairs; i++)
        if (strcmp(keys[i], key) == 0) return vals[i];
    return NULL;
}

static void expect_field(const char *step, const char *key, const char *value) {
    const char *got = field(key);
    if (got == NULL || strcmp(got, value) != 0)
        fail("%s: %s is '%s', expected '%s'", step, key, got ? got : "(absent)", value);
}

int main(void) {
    const char *s = getenv("PMI_FD");
    if (!s || !getenv("PMI_RANK") || !getenv("PMI_SIZE")) {
        printf("PMI_FD, PMI_RANK and PMI_SIZE must be set (run under mpiexec)\n");
        return 1;
    }
    fd = atoi(s);
    rank = atoi(getenv("PMI_RANK"));
    int size = atoi(getenv("PMI_SIZE"));
    char text[256], peer[64], want[64];

    const char *init = "cmd=init pmi_version=2 pmi_subversion=0\n";
    write_all(init, strlen(init));
    char line[256];
    size_t n = 0;
    while (n < sizeof line - 1) {
        read_all(line + n, 1);
        if (line[n] == '\n') break;
        n++;
    }
    line[n] = 0;
    if (strcmp(line, "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0") != 0)
        fail("init answered '%s'", line);

    snprintf(text, sizeof text, "%d", rank);
    send_cmd("fullinit", "pmirank", text, "threaded", "FALSE", NULL);
    read_answer("fullinit-response");
    expect_field("fullinit", "rc", "0");
    expect_field("fullinit", "rank", text);
    snprintf(text, sizeof text, "%d", size);
    expect_field("fullinit", "size", text);
    expect_field("fullinit", "appnum", "0");
    expect_field("fullinit", "pmi-version", "2");
    if (field("spawner-jobid")) fail("fullinit: spawner-jobid in a job nobody spawned");

    send_cmd("job-getid", NULL);
    read_answer("job-getid-response");
    expect_field("job-getid", "rc", "0");
    char jobid[256];
    if (!field("jobid") || !*field("jobid")) fail("job-getid: no jobid");
    snprintf(jobid, sizeof jobid, "%s", field("jobid"));

    send_cmd("info-getjobattr", "key", "PMI_process_mapping", NULL);
    read_answer("info-getjobattr-response");
    expect_field("getjobattr", "found", "TRUE");
    snprintf(text, sizeof text, "(vector,(0,1,%d))", size);
    expect_field("getjobattr", "value", text);
    send_cmd("info-getjobattr", "key", "universeSize", NULL);
    read_answer("info-getjobattr-response");
    expect_field("universeSize", "found", "TRUE");
    expect_field("universeSize", "value", "5");

    /* Nobody has put this rank's key yet (it puts it below). */
    snprintf(peer, sizeof peer, "key-%d", rank);
    send_cmd("kvs-get", "jobid", jobid, "srcid", "-1", "key", peer, NULL);
    read_answer("kvs-get-response");
    expect_field("early get", "rc", "0");
    expect_field("early get", "found", "FALSE");

    snprintf(text, sizeof text, "v;%d;x=y;", rank);
    send_cmd("kvs-put", "key", peer, "value", text, NULL);
    read_answer("kvs-put-response");
    expect_field("kvs-put", "rc", "0");
    if (rank == 0) {
        send_cmd("info-putnodeattr", "key", "node-key", "value", "n;1", NULL);
        read_answer("info-putnodeattr-response");
        expect_field("putnodeattr", "rc", "0");
        send_cmd("name-publish", "name", "pmi2-service", "port", "tcp://here:1", NULL);
        read_answer("name-publish-response");
        expect_field("name-publish", "rc", "0");
    }

    send_cmd("kvs-fence", NULL);
    read_answer("kvs-fence-response");
    expect_field("kvs-fence", "rc", "0");

    for (int r = 0; r < size; r++) {
        snprintf(peer, sizeof peer, "key-%d", r);
        snprintf(want, sizeof want, "v;%d;x=y;", r);
        send_cmd("kvs-get", "jobid", jobid, "srcid", "-1", "key", peer, NULL);
        read_answer("kvs-get-response");
        expect_field("get after fence", "rc", "0");
        expect_field("get after fence", "found", "TRUE");
        expect_field("get after fence", "value", want);
    }
    send_cmd("kvs-get", "jobid", jobid, "srcid", "-1", "key", "nobody-put-this", NULL);
    read_answer("kvs-get-response");
    expect_field("missing key", "rc", "0");
    expect_field("missing key", "found", "FALSE");

    send_cmd("info-getnodeattr", "key", "node-key", "wait", "TRUE", NULL);
    read_answer("info-getnodeattr-response");
    expect_field("getnodeattr", "found", "TRUE");
    expect_field("getnodeattr", "value", "n;1");
    send_cmd("info-getnodeattr", "key", "no-such-attr", "wait", "FALSE", NULL);
    read_answer("info-getnodeattr-response");
    expect_field("getnodeattr missing", "found", "FALSE");

    send_cmd("name-lookup", "name", "pmi2-service", NULL);
    read_answer("name-lookup-response");
    expect_field("name-lookup", "rc", "0");
    expect_field("name-lookup", "port", "tcp://here:1");

    /* Everyone looked the name up before rank 0 takes it back. */
    send_cmd("kvs-fence", NULL);
    read_answer("kvs-fence-response");
    if (rank == 0) {
        send_cmd("name-unpublish", "name", "pmi2-service", NULL);
        read_answer("name-unpublish-response");
        expect_field("name-unpublish", "rc", "0");
        send_cmd("name-lookup", "name", "pmi2-service", NULL);
        read_answer("name-lookup-response");
        expect_field("name-lookup after unpublish", "found", "FALSE");
    }

    send_cmd("finalize", NULL);
    read_answer("finalize-response");
    expect_field("finalize", "rc", "0");
    char byte;
    if (read(fd, &byte, 1) != 0) fail("the server kept the connection open after finalize");
    if (rank == 0) printf("No Errors\n");
    return 0;
}
