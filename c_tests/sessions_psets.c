/* Launcher-defined process sets (mpiexec -pset, here through OXMPI_PSETS
 * "app://even=0,2,...;app://odd=1,3,..."), communicators from them, and an
 * intercommunicator between two psets built with
 * MPI_Intercomm_create_from_groups, without MPI_Init. */
#include "mpitest.h"

int main(void) {
    MPI_Session s;
    MPI_Group world_g, even_g, odd_g, shared_g;
    MPI_Comm world, mine, inter, merged, shared;
    int rank, size, n, flag;
    MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s);
    MPI_Group_from_session_pset(s, "mpi://WORLD", &world_g);
    MPI_Comm_create_from_group(world_g, "psets.world", MPI_INFO_NULL, MPI_ERRORS_RETURN, &world);
    MPI_Comm_rank(world, &rank);
    MPI_Comm_size(world, &size);

    MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n);
    int found = 0;
    for (int i = 0; i < n; i++) {
        char name[MPI_MAX_PSET_NAME_LEN];
        int len = sizeof name;
        MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, name);
        found += !strcmp(name, "app://even") || !strcmp(name, "app://odd");
    }
    CHECK(found == 2, "launcher psets listed: %d", found);
    CHECK(MPI_Group_from_session_pset(s, "APP://EVEN", &even_g) == MPI_SUCCESS, "even group");
    MPI_Group_from_session_pset(s, "app://odd", &odd_g);
    int esize, osize;
    MPI_Group_size(even_g, &esize);
    MPI_Group_size(odd_g, &osize);
    CHECK(esize == (size + 1) / 2 && osize == size / 2, "pset sizes %d %d", esize, osize);
    MPI_Info info;
    MPI_Session_get_pset_info(s, "app://odd", &info);
    char value[32];
    int len = sizeof value;
    MPI_Info_get_string(info, "mpi_size", &len, value, &flag);
    CHECK(flag && atoi(value) == osize, "odd mpi_size %s", value);
    MPI_Info_free(&info);

    MPI_Group_from_session_pset(s, "mpix://SHARED", &shared_g);
    MPI_Comm_create_from_group(shared_g, "psets.shared", MPI_INFO_NULL, MPI_ERRORS_RETURN, &shared);
    int ssize;
    MPI_Comm_size(shared, &ssize);
    CHECK(ssize == size, "one node: mpix://SHARED size %d", ssize);

    int even = rank % 2 == 0;
    MPI_Comm_create_from_group(even ? even_g : odd_g, even ? "psets.even" : "psets.odd", MPI_INFO_NULL,
                               MPI_ERRORS_RETURN, &mine);
    int mrank;
    MPI_Comm_rank(mine, &mrank);
    CHECK(mrank == rank / 2, "rank in my pset %d", mrank);

    if (osize > 0) {
        CHECK(MPI_Intercomm_create_from_groups(even ? even_g : odd_g, 0, even ? odd_g : even_g, 0, "psets.inter",
                                               MPI_INFO_NULL, MPI_ERRORS_RETURN, &inter) == MPI_SUCCESS,
              "intercomm from groups");
        int rsize, lrank;
        MPI_Comm_remote_size(inter, &rsize);
        MPI_Comm_rank(inter, &lrank);
        CHECK(rsize == (even ? osize : esize), "remote size %d", rsize);
        if (lrank < rsize) {
            int got = -1;
            MPI_Sendrecv(&rank, 1, MPI_INT, lrank, 1, &got, 1, MPI_INT, lrank, 1, inter, MPI_STATUS_IGNORE);
            CHECK(got == (even ? rank + 1 : rank - 1), "intercomm exchange got %d", got);
        }
        MPI_Intercomm_merge(inter, !even, &merged);
        int grank, gsize;
        MPI_Comm_rank(merged, &grank);
        MPI_Comm_size(merged, &gsize);
        CHECK(gsize == size && grank == (even ? rank / 2 : esize + rank / 2), "merged %d of %d", grank, gsize);
        MPI_Barrier(merged);
        MPI_Comm_free(&merged);
        MPI_Comm_free(&inter);
    }
    MPI_Barrier(world);
    MPI_Comm_free(&mine);
    MPI_Comm_free(&shared);
    MPI_Comm_free(&world);
    MPI_Group_free(&even_g);
    MPI_Group_free(&odd_g);
    MPI_Group_free(&shared_g);
    MPI_Group_free(&world_g);
    MPI_Session_finalize(&s);
    mt_report(rank, mt_errors);
    return mt_errors ? 1 : 0;
}
