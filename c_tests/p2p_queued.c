/* Eager messages that find the transport full: the receiver of each rank
 * pair sleeps before it posts its receives, so most of the sender's
 * window of 16 KiB messages (more than a shared-memory ring holds) waits
 * in the sender's outbox and leaves later, packed then from the send's
 * own buffer. Checked: every message arrives whole and in order, from
 * contiguous buffers and from a strided datatype (packed at the time it
 * leaves), with an active send freed by MPI_Request_free among them
 * (its buffer is left untouched, so it must arrive too); a blocking
 * MPI_Send after them, whose buffer is cleared as soon as it returns; and
 * the sender reusing its buffers after MPI_Waitall does not change what
 * was sent. Runs over shared memory and TCP. */
#include "mpitest.h"

#define WINDOW 64
#define INTS 4096 /* 16 KiB */

static int value(int msg, int k, int round) { return msg * 100003 + k * 7 + round; }

int main(int argc, char **argv) {
    int rank, size;
    mt_init(&argc, &argv, &rank, &size);
    int peer = mt_pair_peer(rank, size);
    MPI_Datatype every_other;
    MPI_Type_vector(INTS, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    /* Contiguous messages, then a strided source twice as long. */
    int *out = malloc((size_t)WINDOW * 2 * INTS * sizeof(int));
    int *in = malloc((size_t)(WINDOW + 1) * INTS * sizeof(int));
    int wrong = 0;
    for (int round = 0; round < 4 && peer != MPI_PROC_NULL; round++) {
        if (rank % 2 == 0) {
            MPI_Request reqs[WINDOW];
            for (int m = 0; m < WINDOW; m++) {
                int *base = out + (size_t)m * 2 * INTS;
                int strided = m % 2;
                for (int k = 0; k < INTS; k++) {
                    if (strided) {
                        base[2 * k] = value(m, k, round);
                        base[2 * k + 1] = -1;
                    } else {
                        base[k] = value(m, k, round);
                    }
                }
                if (strided)
                    MPI_Isend(base, 1, every_other, peer, 7, MPI_COMM_WORLD, &reqs[m]);
                else
                    MPI_Isend(base, INTS, MPI_INT, peer, 7, MPI_COMM_WORLD, &reqs[m]);
            }
            /* Freed while active: its message must still go. */
            MPI_Request_free(&reqs[WINDOW / 2]);
            reqs[WINDOW / 2] = MPI_REQUEST_NULL;
            /* A blocking send after the window; its buffer is reused at
             * once. */
            int tail[INTS];
            for (int k = 0; k < INTS; k++) tail[k] = value(WINDOW, k, round);
            MPI_Waitall(WINDOW, reqs, MPI_STATUSES_IGNORE);
            MPI_Send(tail, INTS, MPI_INT, peer, 7, MPI_COMM_WORLD);
            memset(tail, 0, sizeof tail);
            /* The sends are complete: reusing the buffers changes nothing
             * that was sent (the receiver checks). */
            for (int m = 0; m < WINDOW; m++)
                if (m != WINDOW / 2) memset(out + (size_t)m * 2 * INTS, 0x55, 2 * INTS * sizeof(int));
            MPI_Barrier(MPI_COMM_WORLD);
        } else {
            usleep(50000);
            MPI_Request reqs[WINDOW + 1];
            memset(in, 0, (size_t)(WINDOW + 1) * INTS * sizeof(int));
            for (int m = 0; m <= WINDOW; m++)
                MPI_Irecv(in + (size_t)m * INTS, INTS, MPI_INT, peer, 7, MPI_COMM_WORLD, &reqs[m]);
            MPI_Waitall(WINDOW + 1, reqs, MPI_STATUSES_IGNORE);
            MPI_Barrier(MPI_COMM_WORLD);
            for (int m = 0; m <= WINDOW; m++)
                for (int k = 0; k < INTS; k++)
                    if (in[(size_t)m * INTS + k] != value(m, k, round)) {
                        if (wrong++ < 3)
                            fprintf(stderr, "round %d message %d int %d: %d, expected %d\n", round, m, k,
                                    in[(size_t)m * INTS + k], value(m, k, round));
                        break;
                    }
        }
    }
    if (peer == MPI_PROC_NULL)
        for (int round = 0; round < 4; round++) MPI_Barrier(MPI_COMM_WORLD);
    CHECK(wrong == 0, "%d queued messages arrived wrong", wrong);
    MPI_Type_free(&every_other);
    free(out);
    free(in);
    int errors = mt_errors;
    MPI_Allreduce(MPI_IN_PLACE, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    mt_report(rank, errors);
    MPI_Finalize();
    return errors != 0;
}
