/* startup.c: the smallest MPI programs, for measuring start-up.  run.sh
 * times `mpiexec -n 2 ./hello` (wall clock, launcher included).
 *
 * Built without flags: the world-model hello (MPI_Init, MPI_Comm_rank,
 * MPI_Finalize).  Built with -DUSE_SESSIONS: the sessions hello
 * (MPI_Session_init, MPI_Group_from_session_pset("mpi://WORLD"),
 * MPI_Comm_create_from_group, MPI_Comm_rank, frees, MPI_Session_finalize).
 * Errors are returned, reported on stderr, and turn into exit status 1. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static void check(int rc, const char *what)
{
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS) len = 0;
        msg[len] = '\0';
        fprintf(stderr, "startup: %s failed (code %d): %s\n", what, rc, msg);
        exit(1);
    }
}

int main(int argc, char **argv)
{
    int rank = -1, size = -1;
#ifndef USE_SESSIONS
    check(MPI_Init(&argc, &argv), "MPI_Init");
    check(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank");
    check(MPI_Comm_size(MPI_COMM_WORLD, &size), "MPI_Comm_size");
    printf("hello from rank %d of %d\n", rank, size);
    check(MPI_Finalize(), "MPI_Finalize");
#else
    (void)argc; (void)argv;
    MPI_Session session = MPI_SESSION_NULL;
    MPI_Group group = MPI_GROUP_NULL;
    MPI_Comm comm = MPI_COMM_NULL;
    check(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &session),
          "MPI_Session_init");
    check(MPI_Group_from_session_pset(session, "mpi://WORLD", &group),
          "MPI_Group_from_session_pset");
    check(MPI_Comm_create_from_group(group, "oxmpi.bench.startup",
                                     MPI_INFO_NULL, MPI_ERRORS_RETURN, &comm),
          "MPI_Comm_create_from_group");
    check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
    check(MPI_Comm_size(comm, &size), "MPI_Comm_size");
    printf("session hello from rank %d of %d\n", rank, size);
    check(MPI_Comm_free(&comm), "MPI_Comm_free");
    check(MPI_Group_free(&group), "MPI_Group_free");
    check(MPI_Session_finalize(&session), "MPI_Session_finalize");
#endif
    return 0;
}
