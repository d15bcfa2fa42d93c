/* oxmpi demo: MPI Sessions with re-initialization.
 *
 * Each epoch opens a session, builds a communicator from the process set
 * mpi://WORLD, exchanges verified data around the ring (small, medium and
 * large messages), frees everything and finalizes the session. Half of the
 * ranks linger before finalizing (alternating by epoch) while the others
 * re-initialize at once and talk to them: their messages wait for the
 * lingering ranks to enter the new epoch and are delivered there, exactly
 * once. Rank 0 prints one line per epoch. MPICH 4.0.2 crashes on the second
 * MPI_Session_init; here every epoch works.
 *
 * argv[1]: number of epochs (default 5). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv) {
    int epochs = argc > 1 ? atoi(argv[1]) : 5, failures = 0;
    for (int epoch = 1; epoch <= epochs; epoch++) {
        double t0 = MPI_Wtime();
        MPI_Session session;
        MPI_Group group;
        MPI_Comm comm;
        int rank, size;
        MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &session);
        MPI_Group_from_session_pset(session, "mpi://WORLD", &group);
        MPI_Comm_create_from_group(group, "org.oxmpi.demo", MPI_INFO_NULL, MPI_ERRORS_ARE_FATAL, &comm);
        MPI_Comm_rank(comm, &rank);
        MPI_Comm_size(comm, &size);
        int right = (rank + 1) % size, left = (rank + size - 1) % size;

        long verified = 0;
        int bad = 0;
        int sizes[3] = {8, 16 << 10, 4 << 20};
        for (int k = 0; k < 3; k++) {
            int n = sizes[k];
            unsigned char *out = malloc(n), *in = malloc(n);
            for (int i = 0; i < n; i++) out[i] = (unsigned char)(i * 7 + rank * 13 + epoch);
            MPI_Sendrecv(out, n, MPI_BYTE, right, k, in, n, MPI_BYTE, left, k, comm, MPI_STATUS_IGNORE);
            for (int i = 0; i < n; i++)
                if (in[i] != (unsigned char)(i * 7 + left * 13 + epoch)) { bad = 1; break; }
            verified += n;
            free(out);
            free(in);
        }
        long total = 0;
        int any_bad = 0;
        /* Gather the counts on rank 0 with point-to-point. */
        if (rank == 0) {
            total = verified;
            any_bad = bad;
            for (int r = 1; r < size; r++) {
                long v[2];
                MPI_Recv(v, 2, MPI_LONG, r, 99, comm, MPI_STATUS_IGNORE);
                total += v[0];
                any_bad |= (int)v[1];
            }
        } else {
            long v[2] = {verified, bad};
            MPI_Send(v, 2, MPI_LONG, 0, 99, comm);
        }
        MPI_Comm_free(&comm);
        MPI_Group_free(&group);
        int lingering = (rank + epoch) % 2 == 1;
        if (lingering) usleep(100000); /* deliberate skew */
        MPI_Session_finalize(&session);
        double t1 = MPI_Wtime();
        if (rank == 0) {
            printf("epoch %d: %d ranks, transport shm, %ld bytes verified%s, %.1f ms%s\n", epoch, size, total,
                   any_bad ? " (CORRUPT)" : "", (t1 - t0) * 1e3, lingering ? " (rank 0 lingered)" : "");
            fflush(stdout);
        }
        failures += any_bad;
    }
    return failures ? 1 : 0;
}
