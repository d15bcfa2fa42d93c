/* QMPI, MPICH's interface for chaining tools (src/abi/qmpi.rs): two tools,
 * "count" and "trace", registered from a constructor before main.
 *
 * Run with OXMPI_QMPI_TOOL_LIST=count:trace:count (argument "on"): three
 * instances, ids 1, 2 and 3. Each wrapper records its id in a call log,
 * finds the next function of the chain with QMPI_Get_function and calls
 * it, so a call's log shows the chain's order: MPI_Send goes 1, 2, 3
 * (both tools intercept it), MPI_Recv and MPI_Wtime 1, 3 (only "count"
 * does), MPI_Comm_rank none. Checked too: each instance's storage comes
 * back through the context, the chain ends at the library's QMPI_x with
 * id 0, a name the list lacks is refused, QMPI_Get_calling_address points
 * into this program, the data and results are right, and the tools stay
 * for MPI initialized again (a session after MPI_Finalize).
 *
 * Run with no list (argument "off"): registering succeeds, no init
 * function runs, and no call reaches a tool. */
#define _GNU_SOURCE
#include "mpitest.h"
#include <dlfcn.h>

static int registered_count, registered_trace, registered_absent;
static int inits;

static int call_log[16], logged;
static void log_id(int id) {
    if (logged < 16) call_log[logged] = id;
    logged++;
}

struct tool_state {
    int id;
    long calls;
};
static struct tool_state states[4];
static int bad_storage;
static int calling_address_in_program = -1;

static void check_storage(QMPI_Context context, int tool_id) {
    struct tool_state *s = NULL;
    if (QMPI_Get_tool_storage(context, tool_id, (void **)&s) != MPI_SUCCESS || s != &states[tool_id] ||
        s->id != tool_id)
        bad_storage++;
    else
        s->calls++;
}

static int count_send(QMPI_Context context, int tool_id, const void *buf, int count, MPI_Datatype type, int dest,
                      int tag, MPI_Comm comm) {
    QMPI_Send_t *next;
    int next_id;
    log_id(tool_id);
    check_storage(context, tool_id);
    QMPI_Get_function(tool_id, MPI_SEND_T, (void (**)(void))&next, &next_id);
    return next(context, next_id, buf, count, type, dest, tag, comm);
}

static int trace_send(QMPI_Context context, int tool_id, const void *buf, int count, MPI_Datatype type, int dest,
                      int tag, MPI_Comm comm) {
    QMPI_Send_t *next;
    int next_id;
    log_id(tool_id);
    check_storage(context, tool_id);
    void *address = NULL;
    if (QMPI_Get_calling_address(context, &address) == MPI_SUCCESS && address) {
        void *pc = NULL;
        Dl_info info;
        sscanf((const char *)address, "%p", &pc);
        calling_address_in_program = dladdr(pc, &info) != 0 && info.dli_fname &&
                                     !strstr(info.dli_fname, "libmpi") && !strstr(info.dli_fname, "liboxmpi");
        free(address);
    } else {
        calling_address_in_program = 0;
    }
    QMPI_Get_function(tool_id, MPI_SEND_T, (void (**)(void))&next, &next_id);
    return next(context, next_id, buf, count, type, dest, tag, comm);
}

static int count_recv(QMPI_Context context, int tool_id, void *buf, int count, MPI_Datatype type, int source, int tag,
                      MPI_Comm comm, MPI_Status *status) {
    QMPI_Recv_t *next;
    int next_id;
    log_id(tool_id);
    check_storage(context, tool_id);
    QMPI_Get_function(tool_id, MPI_RECV_T, (void (**)(void))&next, &next_id);
    return next(context, next_id, buf, count, type, source, tag, comm, status);
}

static double count_wtime(QMPI_Context context, int tool_id) {
    QMPI_Wtime_t *next;
    int next_id;
    log_id(tool_id);
    check_storage(context, tool_id);
    QMPI_Get_function(tool_id, MPI_WTIME_T, (void (**)(void))&next, &next_id);
    return next(context, next_id);
}

static void init_count(int tool_id) {
    inits++;
    states[tool_id].id = tool_id;
    QMPI_Register_tool_storage(tool_id, &states[tool_id]);
    QMPI_Register_function(tool_id, MPI_SEND_T, (void (*)(void))count_send);
    QMPI_Register_function(tool_id, MPI_RECV_T, (void (*)(void))count_recv);
    QMPI_Register_function(tool_id, MPI_WTIME_T, (void (*)(void))count_wtime);
}

static void init_trace(int tool_id) {
    inits++;
    states[tool_id].id = tool_id;
    QMPI_Register_tool_storage(tool_id, &states[tool_id]);
    QMPI_Register_function(tool_id, MPI_SEND_T, (void (*)(void))trace_send);
}

__attribute__((constructor)) static void register_tools(void) {
    registered_count = QMPI_Register_tool_name("count", init_count);
    registered_trace = QMPI_Register_tool_name("trace", init_trace);
    registered_absent = QMPI_Register_tool_name("absent", init_trace);
}

static int log_is(const int *ids, int n) {
    if (logged != n) return 0;
    for (int i = 0; i < n; i++)
        if (call_log[i] != ids[i]) return 0;
    return 1;
}

/* One round over `comm`: each rank sends its rank to the next and
 * receives from the previous, with the logs of each call checked. */
static void round_trip(MPI_Comm comm, int on, const char *what) {
    int rank, size, got = -1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    MPI_Request req;
    MPI_Irecv(&got, 1, MPI_INT, prev, 7, comm, &req);
    logged = 0;
    MPI_Send(&rank, 1, MPI_INT, next, 7, comm);
    static const int send_chain[] = {1, 2, 3}, count_chain[] = {1, 3};
    CHECK(on ? log_is(send_chain, 3) : logged == 0, "%s: MPI_Send went through %d tools", what, logged);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    CHECK(got == prev, "%s: received %d from %d", what, got, prev);

    logged = 0;
    int back = -1;
    MPI_Irecv(&got, 1, MPI_INT, next, 8, comm, &req);
    MPI_Send(&rank, 1, MPI_INT, prev, 8, comm);
    logged = 0;
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Sendrecv(&rank, 1, MPI_INT, next, 9, &back, 1, MPI_INT, prev, 9, comm, MPI_STATUS_IGNORE);
    CHECK(logged == 0, "%s: MPI_Sendrecv reached a tool", what);
    CHECK(back == prev && got == next, "%s: got %d and %d", what, back, got);

    /* MPI_Recv: only "count" intercepts it. */
    MPI_Request sreq;
    MPI_Isend(&rank, 1, MPI_INT, next, 10, comm, &sreq);
    logged = 0;
    MPI_Recv(&got, 1, MPI_INT, prev, 10, comm, MPI_STATUS_IGNORE);
    CHECK(on ? log_is(count_chain, 2) : logged == 0, "%s: MPI_Recv went through %d tools", what, logged);
    CHECK(got == prev, "%s: MPI_Recv got %d", what, got);
    MPI_Wait(&sreq, MPI_STATUS_IGNORE);

    logged = 0;
    double t = MPI_Wtime();
    CHECK(on ? log_is(count_chain, 2) : logged == 0, "%s: MPI_Wtime went through %d tools", what, logged);
    CHECK(t > 0, "%s: MPI_Wtime gave %f", what, t);
    logged = 0;
    MPI_Comm_rank(comm, &rank);
    CHECK(logged == 0, "%s: MPI_Comm_rank reached a tool", what);
}

int main(int argc, char **argv) {
    int on = argc > 1 && strcmp(argv[1], "on") == 0;
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    CHECK(registered_count == MPI_SUCCESS && registered_trace == MPI_SUCCESS, "registration gave %d and %d",
          registered_count, registered_trace);
    if (on) {
        CHECK(registered_absent == MPI_ERR_OTHER, "a name the list lacks gave %d", registered_absent);
        CHECK(inits == 3, "%d init functions ran, expected 3", inits);
        /* The chain of MPI_Send from instance 3 ends at the library. */
        void (*f)(void) = NULL;
        int id = -1;
        CHECK(QMPI_Get_function(3, MPI_SEND_T, &f, &id) == MPI_SUCCESS && id == 0 && f == (void (*)(void))QMPI_Send,
              "the end of MPI_Send's chain is tool %d", id);
        CHECK(QMPI_Get_function(1, MPI_SEND_T, &f, &id) == MPI_SUCCESS && id == 2 && f == (void (*)(void))trace_send,
              "after instance 1 comes tool %d", id);
        CHECK(QMPI_Register_function(7, MPI_SEND_T, (void (*)(void))count_send) == MPI_ERR_ARG,
              "a tool id out of the list was accepted");
        CHECK(QMPI_Register_function(1, MPI_LAST_FUNC_T, (void (*)(void))count_send) == MPI_ERR_ARG,
              "a function number out of range was accepted");
    } else {
        CHECK(registered_absent == MPI_SUCCESS, "with no list, registering gave %d", registered_absent);
        CHECK(inits == 0, "%d init functions ran with no list", inits);
    }
    round_trip(MPI_COMM_WORLD, on, "world");
    if (on)
        CHECK(calling_address_in_program == 1, "QMPI_Get_calling_address did not point into the program (%d)",
              calling_address_in_program);
    MPI_Finalize();

    /* MPI again: a session, still under the same tools. */
    MPI_Session s;
    MPI_Group g;
    MPI_Comm comm;
    CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s) == MPI_SUCCESS, "session init");
    MPI_Group_from_session_pset(s, "mpi://WORLD", &g);
    MPI_Comm_create_from_group(g, "qmpi", MPI_INFO_NULL, MPI_ERRORS_RETURN, &comm);
    MPI_Group_free(&g);
    round_trip(comm, on, "session");
    CHECK(inits == (on ? 3 : 0), "init functions ran again (%d)", inits);
    CHECK(bad_storage == 0, "%d calls found the wrong storage", bad_storage);
    if (on)
        CHECK(states[1].calls > 0 && states[2].calls > 0 && states[3].calls == states[1].calls,
              "calls per instance: %ld %ld %ld", states[1].calls, states[2].calls, states[3].calls);
    int errors = mt_errors;
    MPI_Allreduce(MPI_IN_PLACE, &errors, 1, MPI_INT, MPI_SUM, comm);
    MPI_Comm_free(&comm);
    MPI_Session_finalize(&s);
    mt_report(rank, errors);
    return errors ? 1 : 0;
}
