/* Collectives on communicators other than MPI_COMM_WORLD, in the sessions
 * model (no MPI_Init at all): a communicator from mpi://WORLD, then the
 * even and the odd ranks' communicators built at the same time, each
 * running blocking and nonblocking collectives whose results depend on
 * which communicator they ran on; a nonblocking collective still running
 * on one communicator while another is freed; MPI_COMM_SELF-like
 * one-member communicators. */
#include "mpitest.h"

static int check_comm(MPI_Comm comm, int base) {
    int errs = 0, rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int v = base + rank, sum = -1, max = -1, scan = -1;
    MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, comm);
    if (sum != size * base + size * (size - 1) / 2) errs++;
    MPI_Request r[2];
    MPI_Iallreduce(&v, &max, 1, MPI_INT, MPI_MAX, comm, &r[0]);
    MPI_Iscan(&v, &scan, 1, MPI_INT, MPI_SUM, comm, &r[1]);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    if (max != base + size - 1) errs++;
    if (scan != (rank + 1) * base + rank * (rank + 1) / 2) errs++;
    int *all = malloc(sizeof(int) * size);
    MPI_Allgather(&v, 1, MPI_INT, all, 1, MPI_INT, comm);
    for (int i = 0; i < size; i++)
        if (all[i] != base + i) errs++;
    int b = rank == size - 1 ? base * 7 : 0;
    MPI_Bcast(&b, 1, MPI_INT, size - 1, comm);
    if (b != base * 7) errs++;
    MPI_Barrier(comm);
    free(all);
    return errs;
}

int main(void) {
    MPI_Session s;
    MPI_Group world_group, half_group;
    MPI_Comm world, half, mine;
    CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s) == MPI_SUCCESS, "session init");
    MPI_Group_from_session_pset(s, "mpi://WORLD", &world_group);
    MPI_Comm_create_from_group(world_group, "coll_comms.world", MPI_INFO_NULL, MPI_ERRORS_RETURN, &world);
    int rank, size;
    MPI_Comm_rank(world, &rank);
    MPI_Comm_size(world, &size);
    mt_errors += check_comm(world, 1000);

    /* even and odd ranks, built concurrently from disjoint groups */
    int n = 0, *ranks = malloc(sizeof(int) * size);
    for (int r = rank % 2; r < size; r += 2) ranks[n++] = r;
    MPI_Group_incl(world_group, n, ranks, &half_group);
    MPI_Comm_create_from_group(half_group, rank % 2 ? "coll_comms.odd" : "coll_comms.even", MPI_INFO_NULL,
                               MPI_ERRORS_RETURN, &half);
    int half_errs = check_comm(half, rank % 2 ? 500 : 100);
    CHECK(half_errs == 0, "collectives on the %s ranks' communicator: %d wrong", rank % 2 ? "odd" : "even",
          half_errs);

    /* a nonblocking collective on `world` runs while `half` goes */
    int v = rank, out = -1;
    MPI_Request r;
    MPI_Iallreduce(&v, &out, 1, MPI_INT, MPI_SUM, world, &r);
    MPI_Comm_free(&half);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(out == size * (size - 1) / 2, "iallreduce across a free = %d", out);

    /* a communicator of one member */
    MPI_Group self_group;
    MPI_Group_from_session_pset(s, "mpi://SELF", &self_group);
    MPI_Comm_create_from_group(self_group, "coll_comms.self", MPI_INFO_NULL, MPI_ERRORS_RETURN, &mine);
    CHECK(check_comm(mine, 42) == 0, "collectives on a one-member communicator");
    double d[3] = {1, 2, 3}, e[3];
    CHECK(MPI_Alltoall(d, 1, MPI_DOUBLE, e, 1, MPI_DOUBLE, mine) == MPI_SUCCESS && e[0] == 1, "alltoall alone");
    CHECK(MPI_Reduce_scatter_block(d, e, 3, MPI_DOUBLE, MPI_SUM, mine) == MPI_SUCCESS && e[2] == 3,
          "reduce_scatter_block alone");
    CHECK(MPI_Exscan(d, e, 3, MPI_DOUBLE, MPI_SUM, mine) == MPI_SUCCESS, "exscan alone");
    MPI_Comm_free(&mine);
    MPI_Group_free(&self_group);

    int errs = 0;
    MPI_Allreduce(&mt_errors, &errs, 1, MPI_INT, MPI_SUM, world);
    mt_report(rank, errs);
    MPI_Comm_free(&world);
    MPI_Group_free(&half_group);
    MPI_Group_free(&world_group);
    free(ranks);
    MPI_Session_finalize(&s);
    return 0;
}
