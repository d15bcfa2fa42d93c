/* MPI_Comm_spawn onto the job's hosts (info key "host"), under oxmpi's
 * mpiexec with a host list: `spawn_hosts HOSTS` spawns 3 children with
 * info host=HOSTS (a comma list the children go round) and checks that
 * child i runs on host i mod n, by the name MPI_Get_processor_name gives
 * (mpiexec's -hostname-env OXMPI_HOSTNAME), that each child's local id
 * (MPI_LOCALRANKID) counts the children of its host, and that children and
 * parents talk: a message each way between the parents' root and every
 * child, and an allreduce over the merged intracommunicator. A host that
 * is not one of the job's fails the spawn at every parent with
 * MPI_ERR_SPAWN, starting nothing. Run on the hosts of the testlist line
 * (simulated, `-launcher fork`) and by c_tests/multihost.sh (network
 * namespaces, where a proxy starts the remote children). */
#include "mpitest.h"

#define CHILDREN 3

/* Host `i` of the comma list `list` into `out`. */
static void nth_host(const char *list, int i, char *out, size_t n) {
    char copy[512];
    snprintf(copy, sizeof copy, "%s", list);
    int count = 1;
    for (const char *p = copy; *p; p++)
        count += *p == ',';
    int want = i % count, at = 0;
    for (char *tok = strtok(copy, ","); tok; tok = strtok(NULL, ","), at++)
        if (at == want) {
            snprintf(out, n, "%s", tok);
            return;
        }
    out[0] = 0;
}

static int child_main(const char *hosts) {
    int rank, size, len;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(size == CHILDREN, "the children's world has %d processes", size);
    char name[MPI_MAX_PROCESSOR_NAME], want[256];
    MPI_Get_processor_name(name, &len);
    nth_host(hosts, rank, want, sizeof want);
    CHECK(strcmp(name, want) == 0, "child %d runs on '%s', expected '%s'", rank, name, want);
    /* Its local id: the children before it on its host. */
    int before = 0;
    for (int r = 0; r < rank; r++) {
        char other[256];
        nth_host(hosts, r, other, sizeof other);
        before += strcmp(other, want) == 0;
    }
    const char *lid = getenv("MPI_LOCALRANKID");
    CHECK(lid && atoi(lid) == before, "child %d: MPI_LOCALRANKID %s, expected %d", rank,
          lid ? lid : "(unset)", before);
    MPI_Comm parent;
    MPI_Comm_get_parent(&parent);
    CHECK(parent != MPI_COMM_NULL, "a spawned process has a parent");
    if (parent == MPI_COMM_NULL)
        MPI_Abort(MPI_COMM_WORLD, 4);
    int got = -1, answer = 2000 + rank;
    MPI_Recv(&got, 1, MPI_INT, 0, 7, parent, MPI_STATUS_IGNORE);
    CHECK(got == 1000 + rank, "from the parents' root: %d", got);
    MPI_Send(&answer, 1, MPI_INT, 0, 8, parent);
    MPI_Comm all;
    MPI_Intercomm_merge(parent, 1, &all);
    int mine = 100, total = 0, parents = 0;
    MPI_Comm_remote_size(parent, &parents);
    MPI_Allreduce(&mine, &total, 1, MPI_INT, MPI_SUM, all);
    CHECK(total == parents + 100 * CHILDREN, "merged allreduce %d", total);
    MPI_Comm_free(&all);
    MPI_Send(&mt_errors, 1, MPI_INT, 0, 9, parent);
    MPI_Comm_disconnect(&parent);
    MPI_Finalize();
    return mt_errors == 0 ? 0 : 1;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    if (argc == 3 && strcmp(argv[1], "child") == 0)
        return child_main(argv[2]);
    int rank, size, errors = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 2) {
        if (rank == 0)
            printf("usage: spawn_hosts HOST[,HOST...]\n");
        MPI_Finalize();
        return 2;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* A host the job does not have: nothing starts, every parent fails. */
    MPI_Info bad;
    MPI_Info_create(&bad);
    MPI_Info_set(bad, "host", "oxmpi-no-such-host");
    MPI_Comm none = MPI_COMM_NULL;
    char *child_args[] = {"child", argv[1], NULL};
    CHECK_CLASS(MPI_Comm_spawn(argv[0], child_args, 1, bad, 0, MPI_COMM_WORLD, &none,
                               MPI_ERRCODES_IGNORE),
                MPI_ERR_SPAWN);
    CHECK(none == MPI_COMM_NULL, "a failed spawn gives MPI_COMM_NULL");
    MPI_Info_free(&bad);

    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "host", argv[1]);
    MPI_Comm inter = MPI_COMM_NULL;
    int codes[CHILDREN];
    CHECK_CLASS(MPI_Comm_spawn(argv[0], child_args, CHILDREN, info, 0, MPI_COMM_WORLD, &inter,
                               codes),
                MPI_SUCCESS);
    MPI_Info_free(&info);
    if (inter == MPI_COMM_NULL)
        MPI_Abort(MPI_COMM_WORLD, 5);
    for (int c = 0; c < CHILDREN; c++)
        CHECK(codes[c] == MPI_SUCCESS, "errcode of child %d: %d", c, codes[c]);
    int child_errors = 0;
    if (rank == 0) {
        for (int c = 0; c < CHILDREN; c++) {
            int v = 1000 + c;
            MPI_Send(&v, 1, MPI_INT, c, 7, inter);
        }
        for (int c = 0; c < CHILDREN; c++) {
            int v = -1;
            MPI_Recv(&v, 1, MPI_INT, c, 8, inter, MPI_STATUS_IGNORE);
            CHECK(v == 2000 + c, "from child %d: %d", c, v);
        }
    }
    MPI_Comm all;
    MPI_Intercomm_merge(inter, 0, &all);
    int mine = 1, total = 0;
    MPI_Allreduce(&mine, &total, 1, MPI_INT, MPI_SUM, all);
    CHECK(total == size + 100 * CHILDREN, "merged allreduce %d", total);
    MPI_Comm_free(&all);
    if (rank == 0)
        for (int c = 0; c < CHILDREN; c++) {
            int e = 0;
            MPI_Recv(&e, 1, MPI_INT, c, 9, inter, MPI_STATUS_IGNORE);
            child_errors += e;
        }
    MPI_Comm_disconnect(&inter);
    mt_errors += child_errors;
    MPI_Allreduce(&mt_errors, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    mt_report(rank, errors);
    MPI_Finalize();
    return 0;
}
