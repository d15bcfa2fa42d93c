/* MPI_T variables for real: every control variable listed, found by name
 * and readable (strings by the length protocol); OXMPI_TRANSPORT reads the
 * transport the environment chose (run also with OXMPI_TRANSPORT=tcp);
 * writable ones take a value and read it back, constant ones refuse
 * (MPI_T_ERR_CVAR_SET_NEVER); enumerations; categories cover every
 * variable; no events or sources (every call answers "no such index or
 * handle"). Performance variables over 2 ranks: messages and bytes sent
 * grow by exactly what rank 0 sends rank 1 on the transport in use (and
 * not on the other), the unexpected queue's length and high-water mark
 * reach N after N unexpected sends and a barrier, a large message counts
 * one rendezvous, readreset zeroes, write fails on a read-only variable
 * and sets a counter's handle, continuous variables refuse start/stop.
 * MPI_T works before MPI_Init and after MPI_Finalize. */
#include "mpitest.h"

#define N 10
#define SMALL 100
#define LARGE (1 << 20)

static const char *knobs[] = {
    "MPIR_CVAR_FINALIZE_ATEXIT", "OXMPI_FINALIZE_ATEXIT", "OXMPI_LOG",
    "OXMPI_HOSTNAME", "OXMPI_SHM_SINGLE_COPY", "OXMPI_SHM_SEGMENTS",
    "OXMPI_SHM_SHARED_COPY", "OXMPI_INITIAL_ERRHANDLER", "OXMPI_TRANSPORT",
    "OXMPI_IFACE", "OXMPI_SPIN_POLLS", "OXMPI_OWN_CORE", "OXMPI_NODE_COLLECTIVES", "OXMPI_UNEXPECTED_LIMIT", "OXMPI_JOBID",
    "OXMPI_PSETS", "OXMPI_JOB_SECRET", "OXMPI_LAUNCHER_PID",
    "OXMPI_FAILURE_NOTICES", "OXMPI_PMI", "OXMPI_PMIX_LIBRARY", "OXMPI_CC",
};
#define NKNOBS (int)(sizeof(knobs) / sizeof(knobs[0]))

static int cvar_index(const char *name) {
    int i = -1;
    CHECK(MPI_T_cvar_get_index(name, &i) == MPI_SUCCESS, "cvar %s not found", name);
    return i;
}

/* Every control variable: info by the length protocol, found by its name,
 * read through a handle; only the two run-time knobs are writable. */
static void check_cvars(void) {
    int num = 0;
    CHECK(MPI_T_cvar_get_num(&num) == MPI_SUCCESS && num >= NKNOBS, "%d cvars", num);
    for (int k = 0; k < NKNOBS; k++)
        cvar_index(knobs[k]);
    for (int i = 0; i < num; i++) {
        int name_len = 0, desc_len = 0, verbosity, bind, scope, count, idx = -1;
        MPI_Datatype dt;
        MPI_T_enum et;
        /* NULL buffers: the lengths needed, NUL included. */
        CHECK(MPI_T_cvar_get_info(i, NULL, &name_len, &verbosity, &dt, &et, NULL, &desc_len,
                                  &bind, &scope) == MPI_SUCCESS, "cvar %d info", i);
        char *name = malloc(name_len), *desc = malloc(desc_len), small[4];
        int nl = name_len, dl = desc_len, sl = sizeof small;
        CHECK(MPI_T_cvar_get_info(i, name, &nl, NULL, NULL, NULL, desc, &dl, NULL, NULL) == MPI_SUCCESS,
              "cvar %d strings", i);
        CHECK(nl == name_len && (int)strlen(name) + 1 == name_len, "cvar %d name length %d", i, nl);
        CHECK(dl == desc_len && (int)strlen(desc) + 1 == desc_len && desc_len > 10, "cvar %d desc", i);
        /* A short buffer: truncated, terminated, length written. */
        CHECK(MPI_T_cvar_get_info(i, small, &sl, NULL, NULL, NULL, NULL, NULL, NULL, NULL) == MPI_SUCCESS
                  && sl == 4 && strlen(small) == 3 && strncmp(small, name, 3) == 0,
              "cvar %d truncated name %d '%s'", i, sl, small);
        CHECK(MPI_T_cvar_get_index(name, &idx) == MPI_SUCCESS && idx == i, "index of %s", name);
        CHECK(bind == MPI_T_BIND_NO_OBJECT, "%s binding", name);
        int writable = !strcmp(name, "OXMPI_SPIN_POLLS") || !strcmp(name, "OXMPI_SHM_SINGLE_COPY");
        CHECK(scope == (writable ? MPI_T_SCOPE_LOCAL : MPI_T_SCOPE_CONSTANT), "%s scope %d", name, scope);
        CHECK(dt == MPI_INT || dt == MPI_UNSIGNED || dt == MPI_UNSIGNED_LONG_LONG || dt == MPI_CHAR,
              "%s datatype", name);
        MPI_T_cvar_handle h = MPI_T_CVAR_HANDLE_NULL;
        CHECK(MPI_T_cvar_handle_alloc(i, NULL, &h, &count) == MPI_SUCCESS && h != MPI_T_CVAR_HANDLE_NULL
                  && count >= 1, "%s handle", name);
        char *buf = calloc(count + 8, 8);
        CHECK(MPI_T_cvar_read(h, buf) == MPI_SUCCESS, "%s read", name);
        if (dt == MPI_CHAR)
            CHECK((int)strlen(buf) + 1 == count, "%s string of %d", name, count);
        if (dt == MPI_INT && et != MPI_T_ENUM_NULL) {
            int items = 0, v, found = 0, len = 64;
            char item[64];
            CHECK(MPI_T_enum_get_info(et, &items, NULL, NULL) == MPI_SUCCESS && items >= 2, "%s enum", name);
            for (int j = 0; j < items; j++) {
                len = sizeof item;
                CHECK(MPI_T_enum_get_item(et, j, &v, item, &len) == MPI_SUCCESS, "%s item %d", name, j);
                found += v == *(int *)buf;
            }
            CHECK(found == 1, "%s value %d is one item", name, *(int *)buf);
            CHECK(MPI_T_enum_get_item(et, items, &v, item, &len) == MPI_T_ERR_INVALID_ITEM, "%s item past", name);
        }
        if (!writable) {
            CHECK(MPI_T_cvar_write(h, buf) == MPI_T_ERR_CVAR_SET_NEVER, "%s must not be writable", name);
        }
        CHECK(MPI_T_cvar_handle_free(&h) == MPI_SUCCESS && h == MPI_T_CVAR_HANDLE_NULL, "%s free", name);
        free(buf);
        free(name);
        free(desc);
    }
    int idx;
    CHECK(MPI_T_cvar_get_index("OXMPI_NO_SUCH_KNOB", &idx) == MPI_T_ERR_INVALID_NAME, "unknown cvar");
    CHECK(MPI_T_cvar_get_info(num, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)
              == MPI_T_ERR_INVALID_INDEX, "cvar index past the end");
    CHECK(MPI_T_cvar_read(MPI_T_CVAR_HANDLE_NULL, &idx) == MPI_T_ERR_INVALID_HANDLE, "null cvar handle");
}

/* OXMPI_TRANSPORT names the transport the environment chose. */
static void check_transport(const char *expected) {
    MPI_T_cvar_handle h;
    MPI_T_enum et;
    MPI_Datatype dt;
    int count, value = -1, len = 32, v, items;
    char item[32], ename[64];
    int i = cvar_index("OXMPI_TRANSPORT");
    MPI_T_cvar_get_info(i, NULL, NULL, NULL, &dt, &et, NULL, NULL, NULL, NULL);
    CHECK(dt == MPI_INT && et != MPI_T_ENUM_NULL, "OXMPI_TRANSPORT is an enumeration");
    len = sizeof ename;
    CHECK(MPI_T_enum_get_info(et, &items, ename, &len) == MPI_SUCCESS && items == 3, "transport enum %d", items);
    MPI_T_cvar_handle_alloc(i, NULL, &h, &count);
    MPI_T_cvar_read(h, &value);
    MPI_T_cvar_handle_free(&h);
    for (int j = 0; j < items; j++) {
        len = sizeof item;
        MPI_T_enum_get_item(et, j, &v, item, &len);
        if (v == value) {
            CHECK(strcmp(item, expected) == 0, "OXMPI_TRANSPORT reads %s, expected %s", item, expected);
            return;
        }
    }
    CHECK(0, "OXMPI_TRANSPORT value %d is no item", value);
}

/* A writable variable takes a value, reads it back, and is restored. */
static void check_spin_polls(void) {
    MPI_T_cvar_handle h;
    int count;
    unsigned old = 0, set = 1234, now = 0;
    MPI_T_cvar_handle_alloc(cvar_index("OXMPI_SPIN_POLLS"), NULL, &h, &count);
    CHECK(MPI_T_cvar_read(h, &old) == MPI_SUCCESS && old > 0, "spin polls %u", old);
    CHECK(MPI_T_cvar_write(h, &set) == MPI_SUCCESS, "write spin polls");
    MPI_T_cvar_read(h, &now);
    CHECK(now == set, "spin polls read %u after writing %u", now, set);
    MPI_T_cvar_write(h, &old);
    MPI_T_cvar_handle_free(&h);
}

static void check_categories(void) {
    int num = 0, ncvars = 0, covered[64] = {0}, idx;
    MPI_T_cvar_get_num(&ncvars);
    CHECK(MPI_T_category_get_num(&num) == MPI_SUCCESS && num >= 3, "%d categories", num);
    for (int c = 0; c < num; c++) {
        int name_len = 0, nc, np, nsub, ne = -1, got = -1;
        CHECK(MPI_T_category_get_info(c, NULL, &name_len, NULL, NULL, &nc, &np, &nsub) == MPI_SUCCESS,
              "category %d", c);
        char name[128];
        int l = sizeof name;
        MPI_T_category_get_info(c, name, &l, NULL, NULL, NULL, NULL, NULL);
        CHECK(l == name_len, "category %d name length", c);
        CHECK(MPI_T_category_get_index(name, &got) == MPI_SUCCESS && got == c, "category %s index", name);
        int indices[64];
        CHECK(MPI_T_category_get_cvars(c, 64, indices) == MPI_SUCCESS, "cvars of %s", name);
        for (int k = 0; k < nc; k++)
            if (indices[k] >= 0 && indices[k] < 64)
                covered[indices[k]] = 1;
        CHECK(MPI_T_category_get_pvars(c, 64, indices) == MPI_SUCCESS, "pvars of %s", name);
        CHECK(MPI_T_category_get_categories(c, 64, indices) == MPI_SUCCESS, "subcategories of %s", name);
        CHECK(MPI_T_category_get_num_events(c, &ne) == MPI_SUCCESS && ne == 0, "events of %s", name);
        CHECK(MPI_T_category_get_events(c, 64, indices) == MPI_SUCCESS, "event list of %s", name);
    }
    for (int i = 0; i < ncvars && i < 64; i++)
        CHECK(covered[i], "cvar %d in no category", i);
    CHECK(MPI_T_category_get_index("oxmpi_transport", &idx) == MPI_SUCCESS, "oxmpi_transport");
    CHECK(MPI_T_category_get_index("no_such_category", &idx) == MPI_T_ERR_INVALID_NAME, "unknown category");
    CHECK(MPI_T_category_get_info(num, NULL, NULL, NULL, NULL, NULL, NULL, NULL) == MPI_T_ERR_INVALID_INDEX,
          "category past the end");
    CHECK(MPI_T_category_changed(&idx) == MPI_SUCCESS, "category_changed");
}

static void check_no_events(void) {
    int n = -1, idx;
    MPI_T_event_registration reg = NULL;
    MPI_Count ts;
    char buf[8];
    CHECK(MPI_T_event_get_num(&n) == MPI_SUCCESS && n == 0, "%d events", n);
    CHECK(MPI_T_source_get_num(&n) == MPI_SUCCESS && n == 0, "%d sources", n);
    CHECK(MPI_T_event_get_info(0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)
              == MPI_T_ERR_INVALID_INDEX, "event info");
    CHECK(MPI_T_event_get_index("no_event", &idx) == MPI_T_ERR_INVALID_NAME, "event index");
    CHECK(MPI_T_event_handle_alloc(0, NULL, MPI_INFO_NULL, &reg) == MPI_T_ERR_INVALID_INDEX, "event alloc");
    CHECK(MPI_T_event_handle_free(reg, NULL, NULL) == MPI_T_ERR_INVALID_HANDLE, "event free");
    CHECK(MPI_T_event_read(NULL, 0, buf) == MPI_T_ERR_INVALID_HANDLE, "event read");
    CHECK(MPI_T_event_get_timestamp(NULL, &ts) == MPI_T_ERR_INVALID_HANDLE, "event timestamp");
    CHECK(MPI_T_source_get_info(0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL) == MPI_T_ERR_INVALID_INDEX,
          "source info");
    CHECK(MPI_T_source_get_timestamp(0, &ts) == MPI_T_ERR_INVALID_INDEX, "source timestamp");
}

static MPI_T_pvar_session session;

static MPI_T_pvar_handle pvar(const char *name, int cls) {
    int i = -1, count = 0;
    MPI_T_pvar_handle h = MPI_T_PVAR_HANDLE_NULL;
    CHECK(MPI_T_pvar_get_index(name, cls, &i) == MPI_SUCCESS, "pvar %s", name);
    CHECK(MPI_T_pvar_handle_alloc(session, i, NULL, &h, &count) == MPI_SUCCESS && count == 1, "%s handle", name);
    return h;
}

static unsigned long long get(MPI_T_pvar_handle h) {
    unsigned long long v = ~0ull;
    CHECK(MPI_T_pvar_read(session, h, &v) == MPI_SUCCESS, "pvar read");
    return v;
}

static unsigned long long take(MPI_T_pvar_handle h) {
    unsigned long long v = ~0ull;
    CHECK(MPI_T_pvar_readreset(session, h, &v) == MPI_SUCCESS, "pvar readreset");
    return v;
}

int main(int argc, char **argv) {
    int provided, rank = 0, size = 0, errs = 0;
    const char *env = getenv("OXMPI_TRANSPORT");
    int tcp = env && !strcmp(env, "tcp");
    CHECK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS, "MPI_T before MPI_Init");
    check_cvars();
    check_transport(env && *env ? env : "auto");
    CHECK(MPI_T_pvar_session_create(&session) == MPI_SUCCESS, "pvar session");
    MPI_T_pvar_handle epochs = pvar("oxmpi_epochs_started", MPI_T_PVAR_CLASS_COUNTER);
    CHECK(get(epochs) == 0, "no epoch before MPI_Init");

    mt_init(&argc, &argv, &rank, &size);
    check_spin_polls();
    check_categories();
    check_no_events();
    CHECK(get(epochs) == 1, "MPI_Init started one epoch: %llu", get(epochs));
    MPI_T_pvar_handle msgs = pvar(tcp ? "oxmpi_tcp_messages_sent" : "oxmpi_shm_messages_sent",
                                  MPI_T_PVAR_CLASS_COUNTER);
    MPI_T_pvar_handle bytes = pvar(tcp ? "oxmpi_tcp_bytes_sent" : "oxmpi_shm_bytes_sent",
                                   MPI_T_PVAR_CLASS_COUNTER);
    MPI_T_pvar_handle other = pvar(tcp ? "oxmpi_shm_messages_sent" : "oxmpi_tcp_messages_sent",
                                   MPI_T_PVAR_CLASS_COUNTER);
    MPI_T_pvar_handle level = pvar("oxmpi_unexpected_queue_length", MPI_T_PVAR_CLASS_LEVEL);
    MPI_T_pvar_handle high = pvar("oxmpi_unexpected_queue_highwater", MPI_T_PVAR_CLASS_HIGHWATERMARK);
    MPI_T_pvar_handle rndv = pvar("oxmpi_rendezvous_sends", MPI_T_PVAR_CLASS_COUNTER);
    int idx;
    CHECK(MPI_T_pvar_get_index("oxmpi_shm_messages_sent", MPI_T_PVAR_CLASS_LEVEL, &idx) == MPI_T_ERR_INVALID_NAME,
          "a pvar is found with its class only");

    /* Continuous variables: no start/stop of one handle; all is a no-op. */
    CHECK(MPI_T_pvar_start(session, msgs) == MPI_T_ERR_PVAR_NO_STARTSTOP, "start a continuous pvar");
    CHECK(MPI_T_pvar_stop(session, msgs) == MPI_T_ERR_PVAR_NO_STARTSTOP, "stop a continuous pvar");
    CHECK(MPI_T_pvar_start(session, MPI_T_PVAR_ALL_HANDLES) == MPI_SUCCESS, "start all");
    /* Read-only variables refuse writes and resets. */
    unsigned long long five = 5, v;
    CHECK(MPI_T_pvar_write(session, level, &five) == MPI_T_ERR_PVAR_NO_WRITE, "write a level");
    CHECK(MPI_T_pvar_reset(session, high) == MPI_T_ERR_PVAR_NO_WRITE, "reset a high-water mark");
    CHECK(MPI_T_pvar_readreset(session, level, &v) == MPI_T_ERR_PVAR_NO_WRITE, "readreset a level");
    CHECK(MPI_T_pvar_read(session, MPI_T_PVAR_ALL_HANDLES, &v) == MPI_T_ERR_INVALID_HANDLE, "read all");

    char small[SMALL];
    char *large = calloc(LARGE, 1);
    memset(small, 7, sizeof small);
    if (rank == 0 && size >= 2) {
        take(msgs);
        take(bytes);
        take(other);
        for (int i = 0; i < N; i++)
            MPI_Send(small, SMALL, MPI_CHAR, 1, i, MPI_COMM_WORLD);
        CHECK(get(msgs) == N, "%d sends counted %llu messages", N, get(msgs));
        CHECK(get(bytes) == N * SMALL, "%d bytes counted %llu", N * SMALL, get(bytes));
        CHECK(get(other) == 0, "the other transport counted %llu", get(other));
        /* readreset zeroes; a counter's handle may be written. */
        CHECK(take(msgs) == N && get(msgs) == 0, "readreset zeroes");
        CHECK(MPI_T_pvar_write(session, msgs, &five) == MPI_SUCCESS && get(msgs) == 5, "write a counter");
        CHECK(MPI_T_pvar_reset(session, MPI_T_PVAR_ALL_HANDLES) == MPI_SUCCESS && get(msgs) == 0, "reset all");
    } else if (rank == 1) {
        unsigned long long before = get(level);
        MPI_Barrier(MPI_COMM_WORLD); /* rank 0's messages arrive first */
        CHECK(get(level) == before + N, "unexpected queue %llu after %d unexpected sends", get(level), N);
        CHECK(get(high) >= before + N, "high-water mark %llu", get(high));
        for (int i = 0; i < N; i++)
            MPI_Recv(small, SMALL, MPI_CHAR, 0, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(get(level) == before, "unexpected queue emptied: %llu", get(level));
        /* Rank 0's next message must not arrive before these checks. */
        MPI_Send(NULL, 0, MPI_CHAR, 0, 98, MPI_COMM_WORLD);
    }
    if (rank == 0 && size >= 2) {
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Recv(NULL, 0, MPI_CHAR, 1, 98, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank >= 2) {
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (rank == 0 && size >= 2) {
        take(msgs);
        take(bytes);
        take(rndv);
        MPI_Send(large, LARGE, MPI_CHAR, 1, 99, MPI_COMM_WORLD);
        CHECK(get(rndv) == 1, "a large message is one rendezvous: %llu", get(rndv));
        CHECK(get(msgs) == 1 && get(bytes) == LARGE, "large message counted %llu, %llu bytes", get(msgs),
              get(bytes));
    } else if (rank == 1) {
        MPI_Recv(large, LARGE, MPI_CHAR, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    free(large);
    MPI_Reduce(&mt_errors, &errs, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    unsigned long long epochs_before = get(epochs); /* rank 0 reset it */
    MPI_Finalize();

    /* After MPI_Finalize: MPI_T still answers. */
    int before_errors = mt_errors;
    CHECK(get(epochs) == epochs_before, "epochs after MPI_Finalize: %llu", get(epochs));
    check_transport(env && *env ? env : "auto");
    CHECK(MPI_T_pvar_handle_free(session, &msgs) == MPI_SUCCESS && msgs == MPI_T_PVAR_HANDLE_NULL, "handle free");
    CHECK(MPI_T_pvar_read(session, msgs, &v) == MPI_T_ERR_INVALID_HANDLE, "read a freed handle");
    CHECK(MPI_T_pvar_session_free(&session) == MPI_SUCCESS && session == MPI_T_PVAR_SESSION_NULL, "session free");
    CHECK(MPI_T_pvar_read(session, bytes, &v) == MPI_T_ERR_INVALID_SESSION, "read in a freed session");
    CHECK(MPI_T_finalize() == MPI_SUCCESS, "MPI_T_finalize");
    CHECK(MPI_T_cvar_get_num(&idx) == MPI_T_ERR_NOT_INITIALIZED, "after MPI_T_finalize");
    errs += mt_errors - before_errors;
    if (rank != 0)
        errs = mt_errors;
    mt_report(rank, errs);
    return errs ? 1 : 0;
}
