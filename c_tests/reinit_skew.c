/* Re-initialization with skew. Every epoch: a session, a communicator from
 * mpi://WORLD, messages of three sizes (8 B, 4 KiB, 1 MiB: eager and
 * rendezvous) around the ring, stamped with the epoch and checked, then a
 * subgroup communicator (a different subgroup in each epoch). Half of the
 * ranks (alternating by epoch) linger before finalizing, while the others
 * re-initialize at once and immediately create the next epoch's
 * communicator with them and send to them. A datatype committed in epoch 1
 * is used in epoch 3. argv[1]: number of epochs (default 6). */
#include "mpitest.h"
#include <unistd.h>

#define BIG (1 << 20)

static MPI_Datatype strided = MPI_DATATYPE_NULL;

static void fill(int *buf, int n, int epoch, int src) {
    for (int i = 0; i < n; i++) buf[i] = epoch * 1000000 + src * 10000 + (i % 9973);
}

static int check(const int *buf, int n, int epoch, int src) {
    for (int i = 0; i < n; i++)
        if (buf[i] != epoch * 1000000 + src * 10000 + (i % 9973)) return i;
    return -1;
}

static int one_epoch(int epoch) {
    MPI_Session s;
    MPI_Group wg, sub;
    MPI_Comm world, subcomm;
    int rank, size;
    CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s) == MPI_SUCCESS, "epoch %d: init", epoch);
    MPI_Group_from_session_pset(s, "mpi://WORLD", &wg);
    CHECK(MPI_Comm_create_from_group(wg, "reinit.world", MPI_INFO_NULL, MPI_ERRORS_RETURN, &world) == MPI_SUCCESS,
          "epoch %d: comm", epoch);
    MPI_Comm_rank(world, &rank);
    MPI_Comm_size(world, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    int lens[3] = {2, 1024, BIG / 4};
    for (int k = 0; k < 3; k++) {
        int n = lens[k];
        int *out = malloc(sizeof(int) * n), *in = malloc(sizeof(int) * n);
        fill(out, n, epoch, rank);
        MPI_Status st;
        MPI_Sendrecv(out, n, MPI_INT, right, k, in, n, MPI_INT, left, k, world, &st);
        int bad = check(in, n, epoch, left);
        CHECK(bad < 0, "epoch %d size %d from %d: wrong at %d (value %d: epoch %d)", epoch, n, left, bad,
              bad >= 0 ? in[bad] : 0, bad >= 0 ? in[bad] / 1000000 : 0);
        free(out);
        free(in);
    }

    /* The datatype of epoch 1, used in epoch 3. */
    if (epoch == 1) {
        MPI_Type_vector(100, 1, 3, MPI_INT, &strided);
        MPI_Type_commit(&strided);
    }
    if (epoch == 3) {
        int a[300], b[300];
        for (int i = 0; i < 300; i++) { a[i] = rank * 1000 + i; b[i] = -1; }
        MPI_Sendrecv(a, 1, strided, right, 7, b, 1, strided, left, 7, world, MPI_STATUS_IGNORE);
        for (int i = 0; i < 300; i++) {
            int want = i % 3 == 0 ? left * 1000 + i : -1;
            if (b[i] != want) { CHECK(0, "epoch 3 strided b[%d] = %d", i, b[i]); break; }
        }
        MPI_Type_free(&strided);
    }

    /* A subgroup: the lower half in even epochs, the odd ranks in odd ones. */
    int members[64], m = 0, in_sub = 0;
    for (int r = 0; r < size && m < 64; r++) {
        int take = epoch % 2 == 0 ? r < (size + 1) / 2 : r % 2 == 1;
        if (take) { members[m++] = r; in_sub |= r == rank; }
    }
    MPI_Group_incl(wg, m, members, &sub);
    if (in_sub) {
        CHECK(MPI_Comm_create_from_group(sub, "reinit.sub", MPI_INFO_NULL, MPI_ERRORS_RETURN, &subcomm) == MPI_SUCCESS,
              "epoch %d: subcomm", epoch);
        int srank, ssize, token = epoch, got = -1;
        MPI_Comm_rank(subcomm, &srank);
        MPI_Comm_size(subcomm, &ssize);
        CHECK(ssize == m, "epoch %d: sub size %d", epoch, ssize);
        MPI_Sendrecv(&token, 1, MPI_INT, (srank + 1) % ssize, 0, &got, 1, MPI_INT, (srank + ssize - 1) % ssize, 0,
                     subcomm, MPI_STATUS_IGNORE);
        CHECK(got == epoch, "epoch %d: sub token %d", epoch, got);
        MPI_Comm_free(&subcomm);
    }
    MPI_Group_free(&sub);
    MPI_Group_free(&wg);
    MPI_Comm_free(&world);
    /* Lingerers: half of the ranks, the other half in the next epoch. */
    if ((rank + epoch) % 2 == 1) usleep(150000);
    CHECK(MPI_Session_finalize(&s) == MPI_SUCCESS, "epoch %d: finalize", epoch);
    return rank;
}

int main(int argc, char **argv) {
    int epochs = argc > 1 ? atoi(argv[1]) : 6, rank = 0;
    for (int e = 1; e <= epochs; e++) rank = one_epoch(e);
    mt_report(rank, mt_errors);
    return mt_errors ? 1 : 0;
}
