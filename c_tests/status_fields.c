/* The MPI_ERROR field of a status (MPI 4.1, 3.2.5): single-completion calls
 * (receives, probes, matched probes, Wait, Test, Sendrecv,
 * Request_get_status) leave it as the program set it; a multiple-completion
 * call (Waitall, Testall, Waitsome, Testsome) sets it in every status it
 * returns: MPI_SUCCESS, or with MPI_ERR_IN_STATUS how each request ended
 * (the standard allows these calls to update it; MPICH writes MPI_SUCCESS
 * there for partitioned requests, and its tests read it). The empty status
 * of a null request has MPI_ERROR = MPI_SUCCESS, whatever the call. The other fields are checked too. Ranks pair up (an
 * odd last rank only reports). */
#include "mpitest.h"

#define MARK 12345

static void fresh(MPI_Status *st) {
    memset(st, 0, sizeof *st);
    st->MPI_ERROR = MARK;
}

static void check_fields(const MPI_Status *st, int error, int source, int tag, int bytes, const char *what) {
    int count = -1;
    MPI_Get_count(st, MPI_CHAR, &count);
    CHECK(st->MPI_ERROR == error, "%s: MPI_ERROR %d, expected %d", what, st->MPI_ERROR, error);
    CHECK(st->MPI_SOURCE == source && st->MPI_TAG == tag && count == bytes,
          "%s: source %d tag %d count %d, expected %d %d %d", what, st->MPI_SOURCE, st->MPI_TAG, count, source, tag,
          bytes);
}

/* A single-completion call's status: MPI_ERROR untouched. */
static void check_status(const MPI_Status *st, int source, int tag, int bytes, const char *what) {
    check_fields(st, MARK, source, tag, bytes, what);
}

int main(int argc, char **argv) {
    int rank, size;
    mt_init(&argc, &argv, &rank, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int peer = mt_pair_peer(rank, size);
    char out[16] = "0123456789abcde", in[16];
    MPI_Status st, sts[3];
    MPI_Request req, reqs[3];
    MPI_Message msg;
    int flag;

    if (peer != MPI_PROC_NULL) {
        /* The peer sends 8 messages of 4 bytes, tags 1..8, and one of tag
         * 10; this rank takes them in as many ways. */
        for (int t = 1; t <= 8; t++) MPI_Send(out, 4, MPI_CHAR, peer, t, MPI_COMM_WORLD);
        MPI_Send(out, 4, MPI_CHAR, peer, 10, MPI_COMM_WORLD);

        fresh(&st);
        MPI_Recv(in, 16, MPI_CHAR, peer, 1, MPI_COMM_WORLD, &st);
        check_status(&st, peer, 1, 4, "MPI_Recv");

        fresh(&st);
        MPI_Probe(peer, 2, MPI_COMM_WORLD, &st);
        check_status(&st, peer, 2, 4, "MPI_Probe");
        fresh(&st);
        do MPI_Iprobe(peer, 2, MPI_COMM_WORLD, &flag, &st); while (!flag);
        check_status(&st, peer, 2, 4, "MPI_Iprobe");
        MPI_Recv(in, 16, MPI_CHAR, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);

        fresh(&st);
        MPI_Mprobe(peer, 3, MPI_COMM_WORLD, &msg, &st);
        check_status(&st, peer, 3, 4, "MPI_Mprobe");
        fresh(&st);
        MPI_Mrecv(in, 16, MPI_CHAR, &msg, &st);
        check_status(&st, peer, 3, 4, "MPI_Mrecv");

        fresh(&st);
        do MPI_Improbe(peer, 4, MPI_COMM_WORLD, &flag, &msg, &st); while (!flag);
        check_status(&st, peer, 4, 4, "MPI_Improbe");
        MPI_Imrecv(in, 16, MPI_CHAR, &msg, &req);
        fresh(&st);
        MPI_Wait(&req, &st);
        check_status(&st, peer, 4, 4, "MPI_Wait after MPI_Imrecv");

        MPI_Irecv(in, 16, MPI_CHAR, peer, 5, MPI_COMM_WORLD, &req);
        fresh(&st);
        do MPI_Request_get_status(req, &flag, &st); while (!flag);
        check_status(&st, peer, 5, 4, "MPI_Request_get_status");
        fresh(&st);
        do MPI_Test(&req, &flag, &st); while (!flag);
        check_status(&st, peer, 5, 4, "MPI_Test");

        /* All succeed: MPI_Waitall says MPI_SUCCESS in every status. */
        for (int i = 0; i < 2; i++) {
            MPI_Irecv(in + 8 * i, 8, MPI_CHAR, peer, 6 + i, MPI_COMM_WORLD, &reqs[i]);
            fresh(&sts[i]);
        }
        int rc = MPI_Waitall(2, reqs, sts);
        CHECK(rc == MPI_SUCCESS, "MPI_Waitall gave %d", rc);
        check_fields(&sts[0], MPI_SUCCESS, peer, 6, 4, "MPI_Waitall[0]");
        check_fields(&sts[1], MPI_SUCCESS, peer, 7, 4, "MPI_Waitall[1]");
        /* And MPI_Testsome, the other multiple-completion shape. */
        MPI_Irecv(in, 8, MPI_CHAR, peer, 10, MPI_COMM_WORLD, &reqs[0]);
        fresh(&sts[0]);
        int outcount = 0, index[2];
        do MPI_Testsome(1, reqs, &outcount, index, sts); while (outcount == 0);
        CHECK(outcount == 1 && index[0] == 0, "MPI_Testsome gave %d requests", outcount);
        check_fields(&sts[0], MPI_SUCCESS, peer, 10, 4, "MPI_Testsome");

        /* One truncated receive: MPI_ERR_IN_STATUS, and every status says
         * how its request ended. */
        MPI_Irecv(in, 2, MPI_CHAR, peer, 8, MPI_COMM_WORLD, &reqs[0]);
        MPI_Irecv(in + 8, 8, MPI_CHAR, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &reqs[1]);
        fresh(&sts[0]);
        fresh(&sts[1]);
        rc = MPI_Waitall(2, reqs, sts);
        CHECK(mt_class(rc) == MPI_ERR_IN_STATUS, "truncated MPI_Waitall gave class %d", mt_class(rc));
        CHECK(mt_class(sts[0].MPI_ERROR) == MPI_ERR_TRUNCATE, "truncated status says %d", sts[0].MPI_ERROR);
        CHECK(sts[1].MPI_ERROR == MPI_SUCCESS, "the good status says %d", sts[1].MPI_ERROR);

        /* MPI_Sendrecv is a single-completion call too. */
        fresh(&st);
        MPI_Sendrecv(out, 3, MPI_CHAR, peer, 9, in, 16, MPI_CHAR, peer, 9, MPI_COMM_WORLD, &st);
        check_status(&st, peer, 9, 3, "MPI_Sendrecv");
    }
    /* A null request's status is empty, MPI_ERROR = MPI_SUCCESS included
     * (MPI 4.1, 3.7.3), from single-completion calls too. */
    {
        MPI_Request null = MPI_REQUEST_NULL;
        MPI_Status st;
        int flag = 0;
        fresh(&st);
        MPI_Wait(&null, &st);
        check_fields(&st, MPI_SUCCESS, MPI_ANY_SOURCE, MPI_ANY_TAG, 0, "MPI_Wait(MPI_REQUEST_NULL)");
        fresh(&st);
        MPI_Request_get_status(MPI_REQUEST_NULL, &flag, &st);
        CHECK(flag, "MPI_Request_get_status(MPI_REQUEST_NULL) gave flag 0");
        check_fields(&st, MPI_SUCCESS, MPI_ANY_SOURCE, MPI_ANY_TAG, 0, "MPI_Request_get_status(MPI_REQUEST_NULL)");
    }
    int errors = mt_errors;
    MPI_Allreduce(MPI_IN_PLACE, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        mt_reliability_row("bad input",
                           "the standard's status rules: MPI_ERROR untouched by single-completion calls, set in "
                           "every status of an array (MPI_SUCCESS, or each request's error with MPI_ERR_IN_STATUS)",
                           "-", "%d statuses broke them (%d ranks)", errors, size);
    MPI_Finalize();
    mt_report(rank, errors);
    return errors ? 1 : 0;
}
