/* Many large messages in flight at once between rank pairs (0<->1,
 * 2<->3...), both directions: a window of nonblocking sends and receives
 * of 64 KiB to 1 MiB from and into adjacent parts of one buffer, the
 * pattern of a streaming-bandwidth benchmark. Single and shared copies of
 * several messages then go in one system call (see the engine's
 * flush_waiting); every byte is checked, and the bytes around each receive
 * must stay untouched. Run with OXMPI_SHM_SHARED_COPY=1 and =0 too. */
#include "mpitest.h"

#define WINDOW 24

static unsigned char expected(size_t i, int from, int msg, int round) {
    return (unsigned char)(i * 13 + from * 7 + msg * 3 + round);
}

int main(int argc, char **argv) {
    int rank, size;
    mt_init(&argc, &argv, &rank, &size);
    int peer = mt_pair_peer(rank, size);
    size_t lens[] = {65536, 100000, 1u << 20};
    for (int round = 0; round < 3; round++) {
        size_t len = lens[round];
        /* A gap of 64 bytes between messages, to see writes past an end. */
        size_t stride = len + 64;
        unsigned char *out = malloc(stride * WINDOW), *in = malloc(stride * WINDOW);
        for (int m = 0; m < WINDOW; m++)
            for (size_t i = 0; i < len; i++) out[m * stride + i] = expected(i, rank, m, round);
        memset(in, 0xee, stride * WINDOW);
        MPI_Request reqs[2 * WINDOW];
        for (int m = 0; m < WINDOW; m++)
            MPI_Irecv(in + m * stride, (int)len, MPI_BYTE, peer, m, MPI_COMM_WORLD, &reqs[m]);
        for (int m = 0; m < WINDOW; m++)
            MPI_Isend(out + m * stride, (int)len, MPI_BYTE, peer, m, MPI_COMM_WORLD,
                      &reqs[WINDOW + m]);
        MPI_Status st[2 * WINDOW];
        MPI_Waitall(2 * WINDOW, reqs, st);
        if (peer != MPI_PROC_NULL) {
            for (int m = 0; m < WINDOW; m++) {
                int count;
                MPI_Get_count(&st[m], MPI_BYTE, &count);
                CHECK((size_t)count == len, "round %d message %d: count %d", round, m, count);
                size_t bad = len;
                for (size_t i = 0; i < len; i++)
                    if (in[m * stride + i] != expected(i, peer, m, round)) { bad = i; break; }
                CHECK(bad == len, "round %d message %d: wrong byte at %zu", round, m, bad);
                for (size_t i = len; i < stride; i++)
                    if (in[m * stride + i] != 0xee) {
                        CHECK(0, "round %d message %d: byte %zu past the end written", round, m, i);
                        break;
                    }
            }
        }
        free(out);
        free(in);
    }
    int errors = 0;
    MPI_Reduce(&mt_errors, &errors, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    mt_report(rank, errors);
    MPI_Finalize();
    return 0;
}
