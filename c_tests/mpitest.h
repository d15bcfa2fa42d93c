/* Small helpers shared by the C tests: check macros that count errors and
 * name what broke, and the final "No Errors" line (printed by rank 0 of
 * the job when no rank found an error). */
#ifndef OXMPI_MPITEST_H
#define OXMPI_MPITEST_H
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static int mt_errors = 0;

#define CHECK(cond, ...)                                                     \
    do {                                                                     \
        if (!(cond)) {                                                       \
            mt_errors++;                                                     \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, \
                    #cond);                                                  \
            fprintf(stderr, __VA_ARGS__);                                    \
            fprintf(stderr, "\n");                                           \
        }                                                                    \
    } while (0)

/* The error class of a return code. */
static inline int mt_class(int rc) {
    int cls = -1;
    MPI_Error_class(rc, &cls);
    return cls;
}

#define CHECK_CLASS(call, expected)                                          \
    do {                                                                     \
        int rc_ = (call);                                                    \
        int cls_ = rc_ == MPI_SUCCESS ? MPI_SUCCESS : mt_class(rc_);         \
        CHECK(cls_ == (expected), "%s gave class %d, expected %s (%d)",      \
              #call, cls_, #expected, (expected));                           \
    } while (0)

/* MPI_Init, then this process's rank and the size of MPI_COMM_WORLD. */
static inline void mt_init(int *argc, char ***argv, int *rank, int *size) {
    MPI_Init(argc, argv);
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
}

/* The partner of `rank` when ranks pair up (0<->1, 2<->3...);
 * MPI_PROC_NULL for the last rank of an odd-sized job. */
static inline int mt_pair_peer(int rank, int size) {
    int peer = rank ^ 1;
    return peer < size ? peer : MPI_PROC_NULL;
}

/* Prints "No Errors" when `errors` (already summed over the job, or this
 * process's count for single-process checks) is zero. */
static inline void mt_report(int rank, int errors) {
    if (rank == 0) {
        if (errors == 0)
            printf("No Errors\n");
        else
            printf("Found %d errors\n", errors);
    }
    fflush(stdout);
}

/* This process's peak resident memory so far, in MiB. */
static inline long mt_peak_rss_mib(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss / 1024;
}

/* Prints one row of docs/reliability.md's tables, `REPORT|area|tried|
 * happened|left` (c_tests/run.sh collects them), `happened` formatted as
 * by printf, in one write so rows of several ranks do not mix. */
static inline void mt_reliability_row(const char *area, const char *tried, const char *left, const char *fmt,
                                      ...) {
    char happened[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(happened, sizeof happened, fmt, ap);
    va_end(ap);
    printf("REPORT|%s|%s|%s|%s\n", area, tried, happened, left);
    fflush(stdout);
}

/* A name for a scratch file or directory: `$TMPDIR/oxmpi-<stem>-<pid of
 * rank 0>` (/tmp without TMPDIR), the same at every rank of
 * MPI_COMM_WORLD (collective). */
static inline void mt_temp_name(char *out, size_t n, const char *stem) {
    const char *tmp = getenv("TMPDIR");
    int pid = (int)getpid();
    MPI_Bcast(&pid, 1, MPI_INT, 0, MPI_COMM_WORLD);
    snprintf(out, n, "%s/oxmpi-%s-%d", tmp && *tmp ? tmp : "/tmp", stem, pid);
}

/* Opens a session (errors returned) and a communicator of its
 * mpi://WORLD named by `tag` (collective over every process). */
static inline void mt_session_world(MPI_Session *s, const char *tag, MPI_Comm *comm) {
    MPI_Group g;
    MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, s);
    MPI_Group_from_session_pset(*s, "mpi://WORLD", &g);
    MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, comm);
    MPI_Group_free(&g);
}

/* One of oxmpi's MPI_T counters (class MPI_T_PVAR_CLASS_COUNTER), read
 * through a pvar session of its own: mt_counter("name") initializes
 * MPI_T and opens it (a check fails if there is no such counter),
 * mt_counter_read gives its value, mt_counter_close ends both. */
typedef struct {
    MPI_T_pvar_session session;
    MPI_T_pvar_handle handle;
} mt_counter_t;

static inline mt_counter_t mt_counter(const char *name) {
    mt_counter_t c = {MPI_T_PVAR_SESSION_NULL, MPI_T_PVAR_HANDLE_NULL};
    int provided, idx = -1, count = 0;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    CHECK(MPI_T_pvar_get_index(name, MPI_T_PVAR_CLASS_COUNTER, &idx) == MPI_SUCCESS, "no counter %s", name);
    MPI_T_pvar_session_create(&c.session);
    MPI_T_pvar_handle_alloc(c.session, idx, NULL, &c.handle, &count);
    return c;
}

static inline unsigned long long mt_counter_read(mt_counter_t c) {
    unsigned long long v = 0;
    MPI_T_pvar_read(c.session, c.handle, &v);
    return v;
}

/* Closes the counter and MPI_T. */
static inline void mt_counter_close(mt_counter_t *c) {
    MPI_T_pvar_handle_free(c->session, &c->handle);
    MPI_T_pvar_session_free(&c->session);
    MPI_T_finalize();
}

/* Ends a test that cannot run in this setting (too few processes, say):
 * rank 0 says why, and every process exits 77, which c_tests/run.sh
 * counts as skipped. A skipped test never prints "No Errors". */
static inline void mt_skip(int rank, const char *why) {
    if (rank == 0)
        printf("SKIP: %s\n", why);
    fflush(stdout);
    MPI_Finalize();
    exit(77);
}
#endif
