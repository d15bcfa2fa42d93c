/* Starting processes under oxmpi's mpiexec (MPI_Comm_spawn,
 * MPI_Comm_spawn_multiple, MPI_Comm_get_parent):
 * - every rank of MPI_COMM_WORLD spawns 2 copies of this program; the
 *   errcodes say MPI_SUCCESS, the intercommunicator reaches 2 processes;
 *   each child's MPI_COMM_WORLD holds the 2 children and
 *   MPI_Comm_get_parent gives the intercommunicator (named
 *   MPI_COMM_PARENT); the children get
 *   their arguments and run in the directory of the info key "wdir";
 *   point-to-point both ways, a broadcast from the parents' root, and an
 *   allreduce over the merged intracommunicator; after MPI_Comm_disconnect
 *   the child's MPI_Comm_get_parent is MPI_COMM_NULL;
 * - MPI_Comm_spawn_multiple of two commands (1 and 2 processes): one world
 *   of 3, MPI_APPNUM 0 and 1, each its own arguments;
 * - a spawn from a communicator built from a session after the session
 *   was finalized and opened again (`-- sessions`): the children's first
 *   epoch is their parents' second, so they talk;
 * - errors: a program that does not exist (MPI_ERR_SPAWN at every parent,
 *   the root's errcodes filled), maxprocs 0 (MPI_ERR_ARG); a parent's
 *   MPI_Comm_get_parent is MPI_COMM_NULL.
 * The children send their error counts to the parents' root, which
 * reports for all. */
#include <limits.h>
#include <unistd.h>
#include "mpitest.h"

static char self_path[PATH_MAX];

/* A child: checks its world, its parent and its arguments
 * ("child", mode, expected parents, expected world size, expected appnum,
 * expected directory or "-"), then talks with its parents. */
static int child_main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(argc == 7, "argc %d", argc);
    if (argc != 7)
        MPI_Abort(MPI_COMM_WORLD, 3);
    int parents = atoi(argv[3]), world = atoi(argv[4]), appnum = atoi(argv[5]);
    CHECK(size == world, "the children's world has %d processes, expected %d", size, world);
    int *value, flag = 0;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &value, &flag);
    CHECK(flag && *value == appnum, "MPI_APPNUM %d, expected %d", flag ? *value : -1, appnum);
    if (strcmp(argv[6], "-") != 0) {
        char cwd[PATH_MAX];
        CHECK(getcwd(cwd, sizeof cwd) && strcmp(cwd, argv[6]) == 0, "working directory %s, expected %s",
              cwd, argv[6]);
    }
    MPI_Comm parent = MPI_COMM_NULL;
    MPI_Comm_get_parent(&parent);
    CHECK(parent != MPI_COMM_NULL, "a spawned process has a parent");
    if (parent == MPI_COMM_NULL)
        MPI_Abort(MPI_COMM_WORLD, 4);
    char name[MPI_MAX_OBJECT_NAME] = "";
    int len = 0;
    MPI_Comm_get_name(parent, name, &len);
    CHECK(strcmp(name, "MPI_COMM_PARENT") == 0, "the parent's name is \"%s\"", name);
    int is_inter = 0, remote = 0;
    MPI_Comm_test_inter(parent, &is_inter);
    MPI_Comm_remote_size(parent, &remote);
    CHECK(is_inter && remote == parents, "parent intercomm: inter %d, remote size %d, expected %d",
          is_inter, remote, parents);
    /* The children's world works on its own. */
    int sum = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(sum == size * (size - 1) / 2, "world allreduce %d", sum);
    /* Parent root -> each child, then each child -> parent root. */
    int got = -1;
    MPI_Recv(&got, 1, MPI_INT, 0, 7, parent, MPI_STATUS_IGNORE);
    CHECK(got == 1000 + rank, "from the parents' root: %d", got);
    int answer = 2000 + rank;
    MPI_Send(&answer, 1, MPI_INT, 0, 8, parent);
    int token = 0;
    MPI_Bcast(&token, 1, MPI_INT, 0, parent);
    CHECK(token == 4242, "broadcast over the intercommunicator: %d", token);
    MPI_Comm all;
    MPI_Intercomm_merge(parent, 1, &all);
    int mine = 100, total = 0, all_size = 0, all_rank = -1;
    MPI_Comm_size(all, &all_size);
    MPI_Comm_rank(all, &all_rank);
    CHECK(all_size == parents + world && all_rank == parents + rank, "merged: rank %d of %d", all_rank,
          all_size);
    MPI_Allreduce(&mine, &total, 1, MPI_INT, MPI_SUM, all);
    CHECK(total == parents + 100 * world, "merged allreduce %d", total);
    MPI_Comm_free(&all);
    /* Errors go to the parents' root, which reports. */
    MPI_Send(&mt_errors, 1, MPI_INT, 0, 9, parent);
    MPI_Comm_disconnect(&parent);
    MPI_Comm after = MPI_COMM_WORLD;
    MPI_Comm_get_parent(&after);
    int gone = after == MPI_COMM_NULL;
    MPI_Finalize();
    return (mt_errors == 0 && gone) ? 0 : 1;
}

/* The parents' side of a spawn that started `world` children: talks with
 * them as child_main expects; returns the children's error count (at
 * `comm`'s rank 0; 0 elsewhere). */
static int talk_to_children(MPI_Comm comm, MPI_Comm inter, int world) {
    int rank, size, remote = 0, is_inter = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Comm_test_inter(inter, &is_inter);
    MPI_Comm_remote_size(inter, &remote);
    CHECK(is_inter && remote == world, "spawned intercomm: inter %d, remote size %d", is_inter, remote);
    if (rank == 0) {
        for (int c = 0; c < world; c++) {
            int v = 1000 + c;
            MPI_Send(&v, 1, MPI_INT, c, 7, inter);
        }
        for (int c = 0; c < world; c++) {
            int v = -1;
            MPI_Recv(&v, 1, MPI_INT, c, 8, inter, MPI_STATUS_IGNORE);
            CHECK(v == 2000 + c, "from child %d: %d", c, v);
        }
    }
    int token = 4242;
    MPI_Bcast(&token, 1, MPI_INT, rank == 0 ? MPI_ROOT : MPI_PROC_NULL, inter);
    MPI_Comm all;
    MPI_Intercomm_merge(inter, 0, &all);
    int mine = 1, total = 0, all_rank = -1;
    MPI_Comm_rank(all, &all_rank);
    CHECK(all_rank == rank, "merged: parents first (rank %d)", all_rank);
    MPI_Allreduce(&mine, &total, 1, MPI_INT, MPI_SUM, all);
    CHECK(total == size + 100 * world, "merged allreduce %d", total);
    MPI_Comm_free(&all);
    int child_errors = 0;
    if (rank == 0) {
        for (int c = 0; c < world; c++) {
            int e = 0;
            MPI_Recv(&e, 1, MPI_INT, c, 9, inter, MPI_STATUS_IGNORE);
            child_errors += e;
        }
    }
    MPI_Comm_disconnect(&inter);
    return child_errors;
}

/* MPI_Comm_spawn of 2 children from `comm`, in `dir`. */
static int spawn_two(MPI_Comm comm, const char *mode, const char *dir) {
    int size;
    MPI_Comm_size(comm, &size);
    char parents[16];
    snprintf(parents, sizeof parents, "%d", size);
    char *args[] = {"child", (char *)mode, parents, "2", "0", (char *)dir, NULL};
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "wdir", dir);
    MPI_Info_set(info, "oxmpi_unknown_key", "ignored");
    int codes[2] = {-1, -1};
    MPI_Comm inter = MPI_COMM_NULL;
    CHECK_CLASS(MPI_Comm_spawn(self_path, args, 2, info, 0, comm, &inter, codes), MPI_SUCCESS);
    MPI_Info_free(&info);
    CHECK(codes[0] == MPI_SUCCESS && codes[1] == MPI_SUCCESS, "errcodes %d %d", codes[0], codes[1]);
    if (inter == MPI_COMM_NULL)
        return 1;
    return talk_to_children(comm, inter, 2);
}

/* MPI_Comm_spawn_multiple: 1 process of command 0, 2 of command 1. */
static int spawn_multiple(MPI_Comm comm) {
    int size;
    MPI_Comm_size(comm, &size);
    char parents[16];
    snprintf(parents, sizeof parents, "%d", size);
    char *args0[] = {"child", "multi", parents, "3", "0", "-", NULL};
    char *args1[] = {"child", "multi", parents, "3", "1", "-", NULL};
    char *commands[] = {self_path, self_path};
    char **argvs[] = {args0, args1};
    int maxprocs[] = {1, 2};
    MPI_Info infos[] = {MPI_INFO_NULL, MPI_INFO_NULL};
    MPI_Comm inter = MPI_COMM_NULL;
    CHECK_CLASS(MPI_Comm_spawn_multiple(2, commands, argvs, maxprocs, infos, 0, comm, &inter,
                                        MPI_ERRCODES_IGNORE),
                MPI_SUCCESS);
    if (inter == MPI_COMM_NULL)
        return 1;
    return talk_to_children(comm, inter, 3);
}

static void spawn_errors(MPI_Comm comm) {
    int rank;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm c = MPI_COMM_WORLD;
    int codes[3] = {-1, -1, -1};
    CHECK_CLASS(MPI_Comm_spawn("oxmpi-no-such-program", MPI_ARGV_NULL, 3, MPI_INFO_NULL, 0, comm, &c,
                               codes),
                MPI_ERR_SPAWN);
    CHECK(c == MPI_COMM_NULL, "a failed spawn gives MPI_COMM_NULL");
    if (rank == 0)
        CHECK(codes[0] == MPI_ERR_SPAWN && codes[2] == MPI_ERR_SPAWN, "errcodes %d %d", codes[0], codes[2]);
    c = MPI_COMM_WORLD;
    CHECK_CLASS(MPI_Comm_spawn(self_path, MPI_ARGV_NULL, 0, MPI_INFO_NULL, 0, comm, &c, MPI_ERRCODES_IGNORE),
                MPI_ERR_ARG);
    CHECK(c == MPI_COMM_NULL, "no intercommunicator");
}

/* Sessions only: a communicator of mpi://WORLD, in the session's second
 * epoch. */
static int sessions_main(void) {
    MPI_Session s;
    MPI_Group g;
    MPI_Comm comm;
    for (int round = 0; round < 2; round++) {
        MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s);
        MPI_Group_from_session_pset(s, "mpi://WORLD", &g);
        MPI_Comm_create_from_group(g, "oxmpi.spawn.test", MPI_INFO_NULL, MPI_ERRORS_RETURN, &comm);
        MPI_Group_free(&g);
        if (round == 0) {
            MPI_Comm_free(&comm);
            MPI_Session_finalize(&s);
        }
    }
    int rank;
    MPI_Comm_rank(comm, &rank);
    char dir[PATH_MAX];
    CHECK(getcwd(dir, sizeof dir) != NULL, "getcwd");
    int child_errors = spawn_two(comm, "sessions", dir);
    int errs = 0;
    MPI_Allreduce(&mt_errors, &errs, 1, MPI_INT, MPI_SUM, comm);
    mt_report(rank, errs + child_errors);
    MPI_Comm_free(&comm);
    MPI_Session_finalize(&s);
    return 0;
}

int main(int argc, char **argv) {
    ssize_t n = readlink("/proc/self/exe", self_path, sizeof self_path - 1);
    if (n <= 0)
        return 2;
    self_path[n] = 0;
    if (argc > 1 && strcmp(argv[1], "child") == 0)
        return child_main(argc, argv);
    if (argc > 1 && strcmp(argv[1], "sessions") == 0)
        return sessions_main();
    int rank, size;
    mt_init(&argc, &argv, &rank, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm parent = MPI_COMM_WORLD;
    MPI_Comm_get_parent(&parent);
    CHECK(parent == MPI_COMM_NULL, "the first world has no parent");
    int child_errors = spawn_two(MPI_COMM_WORLD, "world", "/tmp");
    child_errors += spawn_multiple(MPI_COMM_WORLD);
    spawn_errors(MPI_COMM_WORLD);
    /* A spawn from one process (MPI_COMM_SELF) while the others wait. */
    if (rank == size - 1) {
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
        child_errors += spawn_two(MPI_COMM_SELF, "self", "/");
    }
    int errs = 0, all_child_errors = 0;
    MPI_Allreduce(&mt_errors, &errs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&child_errors, &all_child_errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    mt_report(rank, errs + all_child_errors);
    MPI_Finalize();
    return 0;
}
