/* The Sessions model without MPI_Init: a session with a thread level, its
 * info, the process sets and the pset length protocol, communicators from
 * mpi://WORLD, mpi://SELF and from subgroups built concurrently (even and
 * odd ranks), a string tag used twice, two sessions open at once, bad
 * input, and a second epoch after the last finalize. Run with
 * OXMPI_INITIAL_ERRHANDLER=return (errors on invalid sessions go to the
 * initial error handler). */
#include "mpitest.h"

static int world_rank = -1, world_size = -1;

/* Sum of `value` over `comm` by a ring pass (point-to-point only). */
static int ring_sum(MPI_Comm comm, int value) {
    int rank, size, acc;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (size == 1) return value;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    if (rank == 0) {
        MPI_Send(&value, 1, MPI_INT, right, 0, comm);
        MPI_Recv(&acc, 1, MPI_INT, left, 0, comm, MPI_STATUS_IGNORE);
        MPI_Send(&acc, 1, MPI_INT, right, 1, comm); /* the total goes around once more */
    } else {
        MPI_Recv(&acc, 1, MPI_INT, left, 0, comm, MPI_STATUS_IGNORE);
        acc += value;
        MPI_Send(&acc, 1, MPI_INT, right, 0, comm);
        MPI_Recv(&acc, 1, MPI_INT, left, 1, comm, MPI_STATUS_IGNORE);
        if (rank != size - 1) MPI_Send(&acc, 1, MPI_INT, right, 1, comm);
    }
    return acc;
}

static MPI_Comm comm_from_pset(MPI_Session s, const char *pset, const char *tag) {
    MPI_Group g;
    MPI_Comm c = MPI_COMM_NULL;
    CHECK(MPI_Group_from_session_pset(s, pset, &g) == MPI_SUCCESS, "group from %s", pset);
    CHECK(MPI_Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &c) == MPI_SUCCESS, "comm from %s", pset);
    MPI_Group_free(&g);
    return c;
}

static void one_epoch(int epoch) {
    MPI_Session s, s2;
    MPI_Info info, used;
    int flag, len, n;
    char value[MPI_MAX_INFO_VAL];

    MPI_Info_create(&info);
    MPI_Info_set(info, "thread_level", "MPI_THREAD_MULTIPLE");
    CHECK(MPI_Session_init(info, MPI_ERRORS_RETURN, &s) == MPI_SUCCESS, "session init");
    MPI_Info_free(&info);
    MPI_Session_get_info(s, &used);
    len = sizeof value;
    MPI_Info_get_string(used, "thread_level", &len, value, &flag);
    CHECK(flag && strcmp(value, "MPI_THREAD_MULTIPLE") == 0, "thread_level '%s'", value);
    MPI_Info_free(&used);

    /* Process sets, with the length protocol. */
    MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n);
    CHECK(n >= 3, "num psets %d", n);
    int seen_world = 0, seen_self = 0, seen_shared = 0;
    for (int i = 0; i < n; i++) {
        int plen = 0;
        MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &plen, NULL);
        char *name = malloc(plen);
        MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &plen, name);
        CHECK((int)strlen(name) + 1 == plen, "pset %d length %d for '%s'", i, plen, name);
        seen_world |= !strcmp(name, "mpi://WORLD");
        seen_self |= !strcmp(name, "mpi://SELF");
        seen_shared |= !strcmp(name, "mpix://SHARED");
        free(name);
    }
    CHECK(seen_world && seen_self && seen_shared, "predefined psets listed");
    char shortname[5];
    int plen = sizeof shortname;
    MPI_Session_get_nth_pset(s, MPI_INFO_NULL, 0, &plen, shortname);
    CHECK(strlen(shortname) == 4 && plen > 5, "truncated pset name '%s' len %d", shortname, plen);

    MPI_Info pinfo;
    MPI_Session_get_pset_info(s, "mpi://WORLD", &pinfo);
    len = sizeof value;
    MPI_Info_get_string(pinfo, "mpi_size", &len, value, &flag);
    MPI_Info_free(&pinfo);

    /* A communicator from mpi://world (names are case-insensitive). */
    MPI_Comm world = comm_from_pset(s, "mpi://world", "org.oxmpi.test.world");
    MPI_Comm_rank(world, &world_rank);
    MPI_Comm_size(world, &world_size);
    CHECK(flag && atoi(value) == world_size, "mpi_size '%s' vs %d", value, world_size);
    int sum = ring_sum(world, world_rank + epoch);
    CHECK(sum == world_size * (world_size - 1) / 2 + world_size * epoch, "world sum %d", sum);
    MPI_Barrier(world);

    MPI_Comm self = comm_from_pset(s, "mpi://SELF", "org.oxmpi.test.self");
    int ssize;
    MPI_Comm_size(self, &ssize);
    CHECK(ssize == 1, "self size %d", ssize);
    MPI_Comm_free(&self);

    /* Subgroups built at the same time: the even and the odd ranks. */
    MPI_Group wg, sub;
    MPI_Comm_group(world, &wg);
    int parity = world_rank % 2, nsub = (world_size + 1 - parity) / 2;
    int ranges[1][3] = {{parity, world_size - 1, 2}};
    MPI_Group_range_incl(wg, 1, ranges, &sub);
    MPI_Comm subcomm;
    CHECK(MPI_Comm_create_from_group(sub, parity ? "odd" : "even", MPI_INFO_NULL, MPI_ERRORS_RETURN, &subcomm) ==
              MPI_SUCCESS, "subgroup comm");
    int subsize, subrank;
    MPI_Comm_size(subcomm, &subsize);
    MPI_Comm_rank(subcomm, &subrank);
    CHECK(subsize == nsub && subrank == world_rank / 2, "sub size %d rank %d", subsize, subrank);
    sum = ring_sum(subcomm, world_rank);
    int expect = 0;
    for (int r = parity; r < world_size; r += 2) expect += r;
    CHECK(sum == expect, "sub sum %d expected %d", sum, expect);

    /* The same tag again gives a new, independent communicator. */
    MPI_Comm again;
    MPI_Comm_create_from_group(sub, parity ? "odd" : "even", MPI_INFO_NULL, MPI_ERRORS_RETURN, &again);
    int result;
    MPI_Comm_compare(subcomm, again, &result);
    CHECK(result == MPI_CONGRUENT, "same tag twice: compare %d", result);
    if (subsize > 1) {
        int right = (subrank + 1) % subsize, left = (subrank + subsize - 1) % subsize, got = -1, v = 100 + subrank;
        MPI_Request rq;
        MPI_Irecv(&got, 1, MPI_INT, left, 3, subcomm, &rq);
        MPI_Send(&v, 1, MPI_INT, right, 3, again);
        int other;
        MPI_Recv(&other, 1, MPI_INT, left, 3, again, MPI_STATUS_IGNORE);
        CHECK(other == 100 + left, "message on the second comm %d", other);
        MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
        CHECK(!flag, "the second communicator's message matched the first");
        MPI_Barrier(again); /* nobody sends on the first before everyone tested */
        MPI_Send(&v, 1, MPI_INT, right, 3, subcomm);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        CHECK(got == 100 + left, "message on the first comm %d", got);
    }
    MPI_Comm_free(&again);
    MPI_Comm_free(&subcomm);
    MPI_Group_free(&sub);
    MPI_Group_free(&wg);

    /* A second session at the same time, finalized first. */
    CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s2) == MPI_SUCCESS, "second session");
    /* Without a requested level a session is thread-safe (as in MPICH). */
    MPI_Session_get_info(s2, &used);
    len = sizeof value;
    MPI_Info_get_string(used, "thread_level", &len, value, &flag);
    CHECK(flag && strcmp(value, "MPI_THREAD_MULTIPLE") == 0, "default thread_level '%s'", value);
    MPI_Info_free(&used);
    MPI_Comm w2 = comm_from_pset(s2, "mpi://WORLD", "org.oxmpi.test.second");
    sum = ring_sum(w2, 1);
    CHECK(sum == world_size, "second session sum %d", sum);
    MPI_Comm_free(&w2);
    MPI_Session_finalize(&s2);
    CHECK(s2 == MPI_SESSION_NULL, "finalize nulls the handle");

    /* Bad input. */
    MPI_Group g;
    CHECK_CLASS(MPI_Group_from_session_pset(s, "mpi://nowhere", &g), MPI_ERR_ARG);
    plen = 0;
    CHECK_CLASS(MPI_Session_get_nth_pset(s, MPI_INFO_NULL, n, &plen, NULL), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Session_get_num_psets(MPI_SESSION_NULL, MPI_INFO_NULL, &n), MPI_ERR_SESSION);
    CHECK_CLASS(MPI_Session_finalize(&s2), MPI_ERR_SESSION);
    MPI_Comm none;
    CHECK(MPI_Comm_create_from_group(MPI_GROUP_EMPTY, "empty", MPI_INFO_NULL, MPI_ERRORS_RETURN, &none) == MPI_SUCCESS &&
              none == MPI_COMM_NULL, "empty group gives MPI_COMM_NULL");

    MPI_Barrier(world);
    MPI_Comm_free(&world);
    CHECK(MPI_Session_finalize(&s) == MPI_SUCCESS, "finalize");
}

int main(void) {
    int flag;
    one_epoch(1);
    one_epoch(2); /* a new epoch after the last finalize */
    MPI_Initialized(&flag);
    CHECK(!flag, "sessions do not initialize the world model");
    mt_report(world_rank, mt_errors);
    return mt_errors ? 1 : 0;
}
