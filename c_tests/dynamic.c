/* Dynamic process management inside one job:
 * - MPI_Open_port / MPI_Publish_name / MPI_Lookup_name: one half of the
 *   job accepts on a port it published, the other half looks it up and
 *   connects; the intercommunicator they get carries point-to-point
 *   messages and collectives between the halves, then both disconnect;
 * - MPI_Comm_join over a TCP socket between ranks 0 and 1;
 * - MPI_Comm_get_parent is MPI_COMM_NULL (nobody here was spawned);
 * - errors: an unknown port (MPI_ERR_PORT), service (MPI_ERR_NAME,
 *   MPI_ERR_SERVICE), MPI_Comm_spawn of a program that does not exist
 *   (MPI_ERR_SPAWN; spawning itself is c_tests/spawn.c's). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include "mpitest.h"

static void test_accept_connect(int rank, int size) {
    int half = rank % 2; /* 0: accepting group, 1: connecting group */
    MPI_Comm local, inter;
    MPI_Comm_split(MPI_COMM_WORLD, half, rank, &local);
    int lrank, lsize;
    MPI_Comm_rank(local, &lrank);
    MPI_Comm_size(local, &lsize);
    char port[MPI_MAX_PORT_NAME] = "";
    if (half == 0 && lrank == 0) {
        CHECK(MPI_Open_port(MPI_INFO_NULL, port) == MPI_SUCCESS, "Open_port");
        CHECK(strlen(port) > 0, "a port name");
        CHECK(MPI_Publish_name("oxmpi-dynamic-test", MPI_INFO_NULL, port) == MPI_SUCCESS, "Publish_name");
        CHECK_CLASS(MPI_Publish_name("oxmpi-dynamic-test", MPI_INFO_NULL, port), MPI_ERR_SERVICE);
    }
    MPI_Barrier(MPI_COMM_WORLD); /* published before anyone looks */
    if (half == 0) {
        CHECK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, local, &inter) == MPI_SUCCESS, "Comm_accept");
    } else {
        char found[MPI_MAX_PORT_NAME] = "";
        if (lrank == 0)
            CHECK(MPI_Lookup_name("oxmpi-dynamic-test", MPI_INFO_NULL, found) == MPI_SUCCESS, "Lookup_name");
        CHECK(MPI_Comm_connect(found, MPI_INFO_NULL, 0, local, &inter) == MPI_SUCCESS, "Comm_connect");
    }
    int flag = 0, rsize = -1;
    MPI_Comm_test_inter(inter, &flag);
    MPI_Comm_remote_size(inter, &rsize);
    int other = half ? (size + 1) / 2 : size / 2;
    CHECK(flag && rsize == other, "an intercommunicator to the other half: inter %d, remote size %d (expected %d)",
          flag, rsize, other);
    /* Point-to-point: local rank i talks to remote rank i. */
    if (lrank < rsize) {
        int mine = 1000 * half + lrank, got = -1;
        MPI_Sendrecv(&mine, 1, MPI_INT, lrank, 5, &got, 1, MPI_INT, lrank, 5, inter, MPI_STATUS_IGNORE);
        CHECK(got == 1000 * (1 - half) + lrank, "message over the connection: %d", got);
    }
    /* A collective between the halves: each gets the other's sum. */
    int v = rank, sum = -1, expect = 0;
    MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, inter);
    for (int r = 0; r < size; r++)
        if (r % 2 != half) expect += r;
    CHECK(sum == expect, "allreduce over the connection: %d, expected %d", sum, expect);
    CHECK(MPI_Comm_disconnect(&inter) == MPI_SUCCESS && inter == MPI_COMM_NULL, "Comm_disconnect");
    MPI_Barrier(MPI_COMM_WORLD);
    if (half == 0 && lrank == 0) {
        CHECK(MPI_Unpublish_name("oxmpi-dynamic-test", MPI_INFO_NULL, port) == MPI_SUCCESS, "Unpublish_name");
        CHECK(MPI_Close_port(port) == MPI_SUCCESS, "Close_port");
        CHECK_CLASS(MPI_Close_port(port), MPI_ERR_PORT);
    }
    MPI_Comm_free(&local);
}

static void test_join(int rank) {
    if (rank > 1) return;
    int fd = -1;
    if (rank == 0) {
        int lfd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {0};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        bind(lfd, (struct sockaddr *)&a, sizeof a);
        listen(lfd, 1);
        socklen_t len = sizeof a;
        getsockname(lfd, (struct sockaddr *)&a, &len);
        int port = ntohs(a.sin_port);
        MPI_Send(&port, 1, MPI_INT, 1, 77, MPI_COMM_WORLD);
        fd = accept(lfd, NULL, NULL);
        close(lfd);
    } else {
        int port = 0;
        MPI_Recv(&port, 1, MPI_INT, 0, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        fd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {0};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        a.sin_port = htons((unsigned short)port);
        connect(fd, (struct sockaddr *)&a, sizeof a);
    }
    MPI_Comm joined = MPI_COMM_NULL;
    CHECK(MPI_Comm_join(fd, &joined) == MPI_SUCCESS, "Comm_join");
    int rsize = -1, got = -1, mine = 50 + rank;
    MPI_Comm_remote_size(joined, &rsize);
    CHECK(rsize == 1, "a joined intercommunicator has one remote process: %d", rsize);
    MPI_Sendrecv(&mine, 1, MPI_INT, 0, 1, &got, 1, MPI_INT, 0, 1, joined, MPI_STATUS_IGNORE);
    CHECK(got == 50 + (1 - rank), "message over the join: %d", got);
    MPI_Comm_disconnect(&joined);
    close(fd);
}

int main(int argc, char **argv) {
    int rank, size;
    mt_init(&argc, &argv, &rank, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    MPI_Comm parent = MPI_COMM_WORLD;
    MPI_Comm_get_parent(&parent);
    CHECK(parent == MPI_COMM_NULL, "no parent");

    char port[MPI_MAX_PORT_NAME];
    CHECK_CLASS(MPI_Lookup_name("oxmpi-no-such-service", MPI_INFO_NULL, port), MPI_ERR_NAME);
    CHECK_CLASS(MPI_Unpublish_name("oxmpi-no-such-service", MPI_INFO_NULL, "x"), MPI_ERR_SERVICE);
    CHECK_CLASS(MPI_Close_port("oxmpi-port:nothing"), MPI_ERR_PORT);
    MPI_Comm self_copy, c = MPI_COMM_WORLD;
    MPI_Comm_dup(MPI_COMM_SELF, &self_copy);
    CHECK_CLASS(MPI_Comm_connect("not a port", MPI_INFO_NULL, 0, self_copy, &c), MPI_ERR_PORT);
    CHECK(c == MPI_COMM_NULL, "a failed connect gives MPI_COMM_NULL");
    MPI_Comm_free(&self_copy);
    int errcode = 0;
    CHECK_CLASS(MPI_Comm_spawn("oxmpi-no-such-program", MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0,
                               MPI_COMM_SELF, &c, &errcode),
                MPI_ERR_SPAWN);
    CHECK(c == MPI_COMM_NULL, "a failed spawn gives MPI_COMM_NULL");
    CHECK(errcode == MPI_ERR_SPAWN, "errcode %d", errcode);

    if (size >= 2) {
        test_accept_connect(rank, size);
        test_join(rank);
    }

    int errs = 0;
    MPI_Allreduce(&mt_errors, &errs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    mt_report(rank, errs);
    MPI_Finalize();
    return 0;
}
