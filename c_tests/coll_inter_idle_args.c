/* Rooted collectives on an intercommunicator: at the members of the
 * root's group that are not the root (root MPI_PROC_NULL) only the root
 * argument is significant, so they may pass no buffers, a count of 0 and a
 * type and op that would not go together (MPI_BYTE with MPI_SUM, as
 * mpi4py passes). MPI_Reduce, MPI_Ireduce and MPI_Bcast, each group the
 * root's in turn, every member of it the root once. Needs an even number
 * of ranks >= 4 (two groups of at least two). */
#include "mpitest.h"

int main(int argc, char **argv) {
    int rank, size;
    mt_init(&argc, &argv, &rank, &size);
    if (size < 4 || size % 2) {
        if (rank == 0) printf("needs an even number of at least 4 ranks\n");
        MPI_Finalize();
        return 77;
    }
    MPI_Comm half, inter;
    int color = rank % 2;
    MPI_Comm_split(MPI_COMM_WORLD, color, rank, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - color, 5, &inter);
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    int lrank, lsize, rsize;
    MPI_Comm_rank(inter, &lrank);
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_remote_size(inter, &rsize);

    for (int rooted = 0; rooted < 2; rooted++) {
        for (int root = 0; root < (rooted == color ? lsize : rsize); root++) {
            int rc, rc2, rc3;
            if (color == rooted) {
                if (lrank == root) {
                    int got[3] = {-1, -1, -1}, got2[3] = {-1, -1, -1}, b[2] = {0, 0};
                    MPI_Request req;
                    rc = MPI_Reduce(NULL, got, 3, MPI_INT, MPI_SUM, MPI_ROOT, inter);
                    rc2 = MPI_Ireduce(NULL, got2, 3, MPI_INT, MPI_MAX, MPI_ROOT, inter, &req);
                    if (rc2 == MPI_SUCCESS) rc2 = MPI_Wait(&req, MPI_STATUS_IGNORE);
                    b[0] = 77 + root;
                    b[1] = rooted;
                    rc3 = MPI_Bcast(b, 2, MPI_INT, MPI_ROOT, inter);
                    int want = rsize * (rsize - 1) / 2;
                    CHECK(rc == MPI_SUCCESS && got[0] == want && got[1] == want + rsize && got[2] == root * rsize,
                          "root %d: reduce rc %d got %d %d %d", root, rc, got[0], got[1], got[2]);
                    CHECK(rc2 == MPI_SUCCESS && got2[0] == rsize - 1, "root %d: ireduce rc %d max %d", root, rc2,
                          got2[0]);
                    CHECK(rc3 == MPI_SUCCESS, "root %d: bcast rc %d", root, rc3);
                } else {
                    MPI_Request req;
                    rc = MPI_Reduce(NULL, NULL, 0, MPI_BYTE, MPI_SUM, MPI_PROC_NULL, inter);
                    rc2 = MPI_Ireduce(NULL, NULL, 0, MPI_BYTE, MPI_SUM, MPI_PROC_NULL, inter, &req);
                    if (rc2 == MPI_SUCCESS) rc2 = MPI_Wait(&req, MPI_STATUS_IGNORE);
                    rc3 = MPI_Bcast(NULL, 0, MPI_BYTE, MPI_PROC_NULL, inter);
                    CHECK(rc == MPI_SUCCESS && rc2 == MPI_SUCCESS && rc3 == MPI_SUCCESS,
                          "idle member (root %d): reduce rc %d, ireduce rc %d, bcast rc %d", root, rc, rc2, rc3);
                }
            } else {
                int mine[3] = {lrank, lrank + 1, root}, b[2] = {-1, -1};
                MPI_Request req;
                rc = MPI_Reduce(mine, NULL, 3, MPI_INT, MPI_SUM, root, inter);
                rc2 = MPI_Ireduce(mine, NULL, 3, MPI_INT, MPI_MAX, root, inter, &req);
                if (rc2 == MPI_SUCCESS) rc2 = MPI_Wait(&req, MPI_STATUS_IGNORE);
                rc3 = MPI_Bcast(b, 2, MPI_INT, root, inter);
                CHECK(rc == MPI_SUCCESS && rc2 == MPI_SUCCESS && rc3 == MPI_SUCCESS && b[0] == 77 + root &&
                          b[1] == rooted,
                      "contributor (root %d): rc %d %d %d, bcast gave %d %d", root, rc, rc2, rc3, b[0], b[1]);
            }
        }
    }
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
    int errors = mt_errors;
    MPI_Allreduce(MPI_IN_PLACE, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    mt_report(rank, errors);
    return errors ? 1 : 0;
}
