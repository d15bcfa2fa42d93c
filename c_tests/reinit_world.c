/* Sessions mixed with the world model across epochs: a session opened
 * before MPI_Init and finalized after MPI_Finalize, communication in it and
 * in MPI_COMM_WORLD, then (after the world model ended) new sessions in
 * new epochs; MPI_Init again is refused. */
#include "mpitest.h"

static int ring(MPI_Comm comm, int stamp) {
    int rank, size, got = -1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Sendrecv(&stamp, 1, MPI_INT, (rank + 1) % size, 0, &got, 1, MPI_INT, (rank + size - 1) % size, 0, comm,
                 MPI_STATUS_IGNORE);
    return got;
}

static MPI_Comm world_of(MPI_Session s, const char *tag) {
    MPI_Group g;
    MPI_Comm c;
    MPI_Group_from_session_pset(s, "mpi://WORLD", &g);
    MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c);
    MPI_Group_free(&g);
    return c;
}

int main(int argc, char **argv) {
    MPI_Session early, late;
    int rank, flag;
    MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &early);
    MPI_Comm ec = world_of(early, "early");
    CHECK(ring(ec, 1) == 1, "early session ring");
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    CHECK(ring(MPI_COMM_WORLD, 2) == 2, "world ring");
    CHECK(ring(ec, 3) == 3, "early session while the world model runs");
    MPI_Finalize();
    CHECK(ring(ec, 4) == 4, "early session after MPI_Finalize");
    MPI_Comm_free(&ec);
    MPI_Session_finalize(&early);
    for (int e = 0; e < 3; e++) {
        MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &late);
        MPI_Comm lc = world_of(late, "late");
        CHECK(ring(lc, 10 + e) == 10 + e, "session %d after the world model", e);
        MPI_Comm_free(&lc);
        MPI_Session_finalize(&late);
    }
    MPI_Finalized(&flag);
    CHECK(flag, "finalized");
    mt_report(rank, mt_errors);
    return mt_errors ? 1 : 0;
}
