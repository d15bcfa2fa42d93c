/* A completed send has left the process: after MPI_Send (and after the
 * MPI_Wait of an MPI_Isend) the message reaches its receiver even while the
 * sender blocks outside MPI, waiting for the receiver to react.
 *
 * Ranks pair up (0<->1, 2<->3...). The even rank of a pair listens on a
 * loopback TCP socket of its own, sends the port to its partner with
 * MPI_Send (their first message: the connection between them, over shared
 * memory or TCP, is made for it) and then waits in accept(), outside MPI,
 * for the partner to connect. Then it sends a token with MPI_Isend +
 * MPI_Wait and waits in read() for the partner's answer on that socket.
 * A library that completes a send while its frame still waits in the
 * library would leave the partner without the message: the waits here
 * give up after 20 s and count an error instead of hanging. */
#define _GNU_SOURCE
#include "mpitest.h"
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#define WAIT_MS 20000

/* Waits (outside MPI) until `fd` is readable; 0 when it is, -1 on timeout
 * or error. */
static int wait_readable(int fd)
{
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int n;
    while ((n = poll(&p, 1, WAIT_MS)) < 0 && errno == EINTR)
        ;
    return n == 1 ? 0 : -1;
}

int main(int argc, char **argv)
{
    int rank, size;
    mt_init(&argc, &argv, &rank, &size);
    int peer = mt_pair_peer(rank, size);

    if (peer != MPI_PROC_NULL && rank % 2 == 0) {
        struct sockaddr_in addr;
        socklen_t len = sizeof addr;
        memset(&addr, 0, sizeof addr);
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        int lfd = socket(AF_INET, SOCK_STREAM, 0);
        CHECK(lfd >= 0, "socket: %s", strerror(errno));
        CHECK(bind(lfd, (struct sockaddr *)&addr, sizeof addr) == 0, "bind: %s", strerror(errno));
        CHECK(listen(lfd, 1) == 0, "listen: %s", strerror(errno));
        CHECK(getsockname(lfd, (struct sockaddr *)&addr, &len) == 0, "getsockname");
        int port = ntohs(addr.sin_port);
        MPI_Send(&port, 1, MPI_INT, peer, 1, MPI_COMM_WORLD);
        int fd = -1;
        if (wait_readable(lfd) == 0)
            fd = accept(lfd, NULL, NULL);
        CHECK(fd >= 0, "the partner did not connect within %d ms after MPI_Send "
                       "(the port did not reach it)", WAIT_MS);
        int token = 1000 + rank;
        MPI_Request req;
        MPI_Isend(&token, 1, MPI_INT, peer, 2, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        char answer = 0;
        if (fd >= 0) {
            int ok = wait_readable(fd) == 0 && read(fd, &answer, 1) == 1;
            CHECK(ok, "no answer within %d ms after MPI_Wait of MPI_Isend "
                      "(the token did not reach the partner)", WAIT_MS);
            CHECK(!ok || answer == 'k', "answer '%c', expected 'k'", answer);
            close(fd);
        }
        close(lfd);
    } else if (peer != MPI_PROC_NULL) {
        int port = -1;
        MPI_Recv(&port, 1, MPI_INT, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        struct sockaddr_in addr;
        memset(&addr, 0, sizeof addr);
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        addr.sin_port = htons((unsigned short)port);
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        int connected = fd >= 0 && connect(fd, (struct sockaddr *)&addr, sizeof addr) == 0;
        CHECK(connected, "connect to port %d: %s", port, strerror(errno));
        int token = -1;
        MPI_Recv(&token, 1, MPI_INT, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(token == 1000 + peer, "token %d, expected %d", token, 1000 + peer);
        if (connected)
            CHECK(write(fd, "k", 1) == 1, "write: %s", strerror(errno));
        if (fd >= 0)
            close(fd);
    }

    int errors = 0;
    MPI_Allreduce(&mt_errors, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    mt_report(rank, errors);
    MPI_Finalize();
    return errors != 0;
}
