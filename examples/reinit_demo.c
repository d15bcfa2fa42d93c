/* oxmpi demo: MPI Sessions with re-initialization.
 *
 * Each epoch opens a session, builds a communicator from the process set
 * mpi://WORLD, exchanges verified data around the ring (small, medium and
 * large messages), frees everything and finalizes the session. Half of the
 * ranks linger before finalizing (alternating by epoch) while the others
 * re-initialize at once and talk to them: their messages wait for the
 * lingering ranks to enter the new epoch and are delivered there, exactly
 * once. Rank 0 prints one line per epoch. MPICH 4.0.2 crashes on the second
 * MPI_Session_init; here every epoch works. Run on two (simulated) hosts,
 * the ring's links inside a host use shared memory and the others TCP:
 *   mpiexec -hosts a:2,b:2 -launcher fork -hostname-env OXMPI_HOSTNAME -n 4 ./reinit_demo
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

        /* Which transport carries the link to the right neighbour: shared
         * memory inside a node, TCP between nodes. */
        MPI_Comm node;
        MPI_Group node_group, comm_group;
        int right_in_node;
        MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
        MPI_Comm_group(node, &node_group);
        MPI_Comm_group(comm, &comm_group);
        MPI_Group_translate_ranks(comm_group, 1, &right, node_group, &right_in_node);
        int link_is_tcp = right_in_node == MPI_UNDEFINED;
        MPI_Group_free(&node_group);
        MPI_Group_free(&comm_group);
        MPI_Comm_free(&node);

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
        /* Sum the counts on rank 0: bytes verified, corrupt links, TCP links. */
        long mine[3] = {verified, bad, link_is_tcp}, sums[3];
        MPI_Reduce(mine, sums, 3, MPI_LONG, MPI_SUM, 0, comm);
        long total = sums[0], tcp_links = sums[2];
        int any_bad = rank == 0 && sums[1] != 0;
        MPI_Comm_free(&comm);
        MPI_Group_free(&group);
        int lingering = (rank + epoch) % 2 == 1;
        if (lingering) usleep(100000); /* deliberate skew */
        MPI_Session_finalize(&session);
        double t1 = MPI_Wtime();
        if (rank == 0) {
            const char *transport = tcp_links == 0 ? "shm" : tcp_links == size ? "tcp" : "shm+tcp";
            printf("epoch %d: %d ranks, transport %s (%ld of %d ring links over tcp), %ld bytes verified%s, %.1f ms%s\n",
                   epoch, size, transport, tcp_links, size, total, any_bad ? " (CORRUPT)" : "", (t1 - t0) * 1e3,
                   lingering ? " (rank 0 lingered)" : "");
            fflush(stdout);
        }
        failures += any_bad;
    }
    return failures ? 1 : 0;
}
