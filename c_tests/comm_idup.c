/* Nonblocking communicator duplication (world model, 2-4 ranks):
 * MPI_Comm_idup must not wait for the other members (rank 0 idups, then
 * sends to rank 1, which receives before it idups); several idups in
 * flight on the same and on different communicators complete in any order
 * with MPI_Waitall; the new communicators are congruent to their parents,
 * carry their own messages apart from the parents', keep attributes and
 * info hints. */
#include "mpitest.h"

static int copy_fn(MPI_Comm c, int key, void *extra, void *in, void *out, int *flag) {
    (void)c; (void)key; (void)extra;
    *(void **)out = (void *)((char *)in + 1);
    *flag = 1;
    return MPI_SUCCESS;
}

/* Checks that `dup` is congruent to `parent` and that its messages do not
 * match the parent's: every rank sends `base + rank` on the parent and
 * `base + 100 + rank` on the dup, both to the next rank with the same tag;
 * the receive on the dup is posted first. */
static void check_dup(MPI_Comm parent, MPI_Comm dup, int base, const char *what) {
    int result, rank, size;
    CHECK(dup != MPI_COMM_NULL, "%s: null", what);
    if (dup == MPI_COMM_NULL)
        return;
    MPI_Comm_compare(parent, dup, &result);
    CHECK(result == MPI_CONGRUENT, "%s: compare gave %d", what, result);
    MPI_Comm_rank(parent, &rank);
    MPI_Comm_size(parent, &size);
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    int a = base + rank, b = base + 100 + rank, ra = -1, rb = -1;
    MPI_Request r[4];
    MPI_Irecv(&rb, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, dup, &r[0]);
    MPI_Isend(&a, 1, MPI_INT, next, 7, parent, &r[1]);
    MPI_Irecv(&ra, 1, MPI_INT, prev, 7, parent, &r[2]);
    MPI_Barrier(parent); /* the parent's message has arrived or is on its way */
    MPI_Isend(&b, 1, MPI_INT, next, 7, dup, &r[3]);
    MPI_Waitall(4, r, MPI_STATUSES_IGNORE);
    CHECK(ra == base + prev, "%s: parent got %d", what, ra);
    CHECK(rb == base + 100 + prev, "%s: dup got %d", what, rb);
}

int main(int argc, char **argv) {
    int rank, size;
    mt_init(&argc, &argv, &rank, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* The idup does not wait for rank 1, which joins only after the send. */
    {
        MPI_Comm d = MPI_COMM_NULL;
        MPI_Request req;
        int v = 42, got = 0;
        if (rank == 0) {
            MPI_Comm_idup(MPI_COMM_WORLD, &d, &req);
            MPI_Send(&v, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(&got, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(got == 42, "deadlock scenario got %d", got);
            MPI_Comm_idup(MPI_COMM_WORLD, &d, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else {
            MPI_Comm_idup(MPI_COMM_WORLD, &d, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        }
        check_dup(MPI_COMM_WORLD, d, 1000, "first idup");
        MPI_Comm_free(&d);
    }

    /* A communicator of half the ranks (by parity), with an attribute. */
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    int key;
    static char anchor[4];
    MPI_Comm_create_keyval(copy_fn, MPI_COMM_NULL_DELETE_FN, &key, NULL);
    MPI_Comm_set_attr(half, key, anchor);

    /* Several in flight: three on world, two on half, mixed with a
     * nonblocking collective and a blocking dup, completed in reverse. */
    for (int round = 0; round < 3; round++) {
        MPI_Comm w[3], h[2], bd;
        MPI_Request r[6];
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "mpi_assert_allow_overtaking", "false");
        int sum_in = rank, sum_out = -1;
        MPI_Comm_idup(MPI_COMM_WORLD, &w[0], &r[5]);
        MPI_Comm_idup(half, &h[0], &r[4]);
        MPI_Iallreduce(&sum_in, &sum_out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[3]);
        MPI_Comm_idup_with_info(MPI_COMM_WORLD, info, &w[1], &r[2]);
        MPI_Info_free(&info);
        MPI_Comm_dup(half, &bd); /* blocking, while the others are in flight */
        MPI_Comm_idup(half, &h[1], &r[1]);
        MPI_Comm_idup(MPI_COMM_WORLD, &w[2], &r[0]);
        if (round == 1) {
            for (int i = 5; i >= 0; i--)
                MPI_Wait(&r[i], MPI_STATUS_IGNORE);
        } else {
            int rc = MPI_Waitall(6, r, MPI_STATUSES_IGNORE);
            CHECK(rc == MPI_SUCCESS, "waitall gave %d", rc);
        }
        CHECK(sum_out == size * (size - 1) / 2, "iallreduce gave %d", sum_out);
        for (int i = 0; i < 3; i++)
            check_dup(MPI_COMM_WORLD, w[i], 2000 + 300 * i, "world idup");
        for (int i = 0; i < 2; i++)
            check_dup(half, h[i], 3000 + 300 * i, "half idup");
        check_dup(half, bd, 4000, "half dup");
        /* Distinct contexts: a message on one dup never matches another. */
        if (size >= 2) {
            int x = rank, y = -1, z = -1;
            MPI_Request q[4];
            MPI_Irecv(&y, 1, MPI_INT, MPI_ANY_SOURCE, 5, w[1], &q[0]);
            MPI_Irecv(&z, 1, MPI_INT, MPI_ANY_SOURCE, 5, w[0], &q[1]);
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_Isend(&x, 1, MPI_INT, (rank + 1) % size, 5, w[0], &q[2]);
            MPI_Isend(&x, 1, MPI_INT, (rank + 1) % size, 5, w[1], &q[3]);
            MPI_Waitall(4, q, MPI_STATUSES_IGNORE);
            CHECK(y == (rank + size - 1) % size && z == y, "dups crossed: %d %d", y, z);
        }
        /* Attributes were copied; info hints arrived. */
        for (int i = 0; i < 2; i++) {
            void *val;
            int flag;
            MPI_Comm_get_attr(h[i], key, &val, &flag);
            CHECK(flag && val == anchor + 1, "attribute on half idup %d", i);
        }
        {
            MPI_Info got;
            char value[MPI_MAX_INFO_VAL];
            int flag = 0;
            MPI_Comm_get_info(w[1], &got);
            MPI_Info_get_string(got, "mpi_assert_allow_overtaking", &(int){MPI_MAX_INFO_VAL}, value, &flag);
            CHECK(flag && strcmp(value, "false") == 0, "idup_with_info hint");
            MPI_Info_free(&got);
        }
        for (int i = 0; i < 3; i++)
            MPI_Comm_free(&w[i]);
        for (int i = 0; i < 2; i++)
            MPI_Comm_free(&h[i]);
        MPI_Comm_free(&bd);
    }

    /* Idup of a dup of an idup, freeing the parent before completion. */
    {
        MPI_Comm a, b;
        MPI_Request r;
        MPI_Comm_idup(MPI_COMM_WORLD, &a, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        MPI_Comm_idup(a, &b, &r);
        MPI_Comm_free(&a);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        check_dup(MPI_COMM_WORLD, b, 5000, "idup of freed parent");
        MPI_Comm_free(&b);
    }

    /* An intercommunicator's idup does not wait either: every member but
     * each side's rank 0 idups, then sends to the remote rank 0, which
     * receives from all of them before it idups; the dup is an
     * intercommunicator of the same groups, and carries messages. */
    if (size >= 2) {
        MPI_Comm local, ic, d;
        MPI_Request r;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &local);
        MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, rank == 0 ? 1 : 0, 77, &ic);
        int lrank, lsize, rsize, v = 0, flag = 0, dsize = -1, drsize = -1;
        MPI_Comm_rank(ic, &lrank);
        MPI_Comm_size(ic, &lsize);
        MPI_Comm_remote_size(ic, &rsize);
        if (lrank == 0) {
            for (int i = 1; i < rsize; i++) MPI_Recv(&v, 1, MPI_INT, i, 0, ic, MPI_STATUS_IGNORE);
            MPI_Comm_idup(ic, &d, &r);
        } else {
            MPI_Comm_idup(ic, &d, &r);
            MPI_Ssend(&lrank, 1, MPI_INT, 0, 0, ic);
        }
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        MPI_Comm_test_inter(d, &flag);
        MPI_Comm_size(d, &dsize);
        MPI_Comm_remote_size(d, &drsize);
        CHECK(flag && dsize == lsize && drsize == rsize, "intercomm idup: inter %d, sizes %d/%d", flag, dsize, drsize);
        /* Each local rank i exchanges with remote rank i (if there is one). */
        if (lrank < rsize) {
            int out = 1000 + rank, in = -1;
            MPI_Sendrecv(&out, 1, MPI_INT, lrank, 3, &in, 1, MPI_INT, lrank, 3, d, MPI_STATUS_IGNORE);
            CHECK(in >= 1000 && (in - 1000) % 2 != rank % 2, "intercomm idup: got %d from the other side", in);
        }
        MPI_Comm_free(&d);
        MPI_Comm_free(&ic);
        MPI_Comm_free(&local);
    }

    MPI_Comm_free_keyval(&key);
    MPI_Comm_free(&half);
    int errors = 0;
    MPI_Allreduce(&mt_errors, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    mt_report(rank, errors);
    MPI_Finalize();
    return errors != 0;
}
