/* The MPI_T interface: init/finalize nesting (also before MPI_Init),
 * variables and categories present (tool_vars checks them), no events,
 * lookups of unknown names, codes returned without calling error
 * handlers. */
#include "mpitest.h"

int main(int argc, char **argv) {
    int provided, n = -1, rank = 0, idx;
    CHECK(MPI_T_cvar_get_num(&n) == MPI_T_ERR_NOT_INITIALIZED, "before MPI_T_init_thread");
    CHECK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS, "init_thread before MPI_Init");
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    CHECK(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided) == MPI_SUCCESS && provided == MPI_THREAD_MULTIPLE,
          "nested init_thread");
    CHECK(MPI_T_cvar_get_num(&n) == MPI_SUCCESS && n > 0, "cvars %d", n);
    CHECK(MPI_T_pvar_get_num(&n) == MPI_SUCCESS && n > 0, "pvars %d", n);
    CHECK(MPI_T_category_get_num(&n) == MPI_SUCCESS && n > 0, "categories %d", n);
    CHECK(MPI_T_event_get_num(&n) == MPI_SUCCESS && n == 0, "events %d", n);
    CHECK(MPI_T_cvar_get_index("no_such_variable", &idx) == MPI_T_ERR_INVALID_NAME, "unknown cvar name");
    /* MPI_T errors never reach the (fatal) error handler. */
    CHECK(MPI_T_cvar_get_num(NULL) == MPI_ERR_ARG, "NULL argument returns a code");
    MPI_T_pvar_session session;
    CHECK(MPI_T_pvar_session_create(&session) == MPI_SUCCESS && session != MPI_T_PVAR_SESSION_NULL, "pvar session");
    MPI_T_pvar_session_free(&session);
    CHECK(session == MPI_T_PVAR_SESSION_NULL, "session freed");
    CHECK(MPI_T_finalize() == MPI_SUCCESS && MPI_T_finalize() == MPI_SUCCESS, "finalize twice");
    CHECK(MPI_T_finalize() == MPI_T_ERR_NOT_INITIALIZED, "finalize once more");
    MPI_Finalize();
    mt_report(rank, mt_errors);
    return mt_errors ? 1 : 0;
}
