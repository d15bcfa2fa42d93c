/* Intercommunicators made from an intercommunicator: MPI_Comm_dup,
 * MPI_Comm_split (color by local rank parity, key reversing the order),
 * MPI_Comm_create (the even local ranks) and MPI_Intercomm_create with the
 * intercommunicator as the peer communicator give intercommunicators with
 * the right local and remote groups: each process sends its world rank to
 * every remote rank and checks what every remote rank sent against the
 * members it expects there; a merge of the dup works, and so do merges in
 * a row with the order flipping; MPI_UNDEFINED and non-members get
 * MPI_COMM_NULL. */
#include "mpitest.h"

static int wrank, wsize;

/* World ranks of the left (world rank < wsize / 2) or right half. */
static int half_member(int left, int i) { return left ? i : wsize / 2 + i; }
static int half_size(int left) { return left ? wsize / 2 : wsize - wsize / 2; }

/* Checks `ic` against the expected remote world ranks `remote` (n of them)
 * by exchanging world ranks with every remote rank. */
static void check_inter(MPI_Comm ic, const int *local, int nlocal, const int *remote, int nremote, const char *what) {
    int flag = 0, size = -1, rsize = -1, rank = -1;
    MPI_Comm_test_inter(ic, &flag);
    CHECK(flag, "%s: not an intercommunicator", what);
    if (!flag) return;
    MPI_Comm_size(ic, &size);
    MPI_Comm_remote_size(ic, &rsize);
    MPI_Comm_rank(ic, &rank);
    CHECK(size == nlocal && rsize == nremote, "%s: sizes %d/%d, expected %d/%d", what, size, rsize, nlocal, nremote);
    CHECK(rank >= 0 && rank < nlocal && local[rank] == wrank, "%s: rank %d", what, rank);
    if (size != nlocal || rsize != nremote) return;
    int *got = malloc(sizeof(int) * nremote);
    MPI_Request *r = malloc(sizeof(MPI_Request) * 2 * nremote);
    for (int i = 0; i < nremote; i++) {
        MPI_Irecv(&got[i], 1, MPI_INT, i, 5, ic, &r[i]);
        MPI_Isend(&wrank, 1, MPI_INT, i, 5, ic, &r[nremote + i]);
    }
    MPI_Waitall(2 * nremote, r, MPI_STATUSES_IGNORE);
    for (int i = 0; i < nremote; i++) CHECK(got[i] == remote[i], "%s: remote rank %d is world %d, expected %d", what, i, got[i], remote[i]);
    free(got);
    free(r);
}

int main(int argc, char **argv) {
    mt_init(&argc, &argv, &wrank, &wsize);
    if (wsize < 2) mt_skip(wrank, "needs 2 processes");
    int left = wrank < wsize / 2;
    MPI_Comm half, ic;
    MPI_Comm_split(MPI_COMM_WORLD, left, wrank, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, left ? wsize / 2 : 0, 7, &ic);
    int nl = half_size(left), nr = half_size(!left), lrank;
    MPI_Comm_rank(half, &lrank);
    int *local = malloc(sizeof(int) * wsize), *remote = malloc(sizeof(int) * wsize);

    /* dup: the same groups. */
    for (int i = 0; i < nl; i++) local[i] = half_member(left, i);
    for (int i = 0; i < nr; i++) remote[i] = half_member(!left, i);
    MPI_Comm dup;
    MPI_Comm_dup(ic, &dup);
    check_inter(dup, local, nl, remote, nr, "dup");

    /* An intercommunicator as the peer communicator of
     * MPI_Intercomm_create: both leaders are rank 0 of their group and
     * name rank 0 as the remote leader (they must still agree on who
     * talks first). */
    MPI_Comm again;
    MPI_Intercomm_create(half, 0, ic, 0, 8, &again);
    check_inter(again, local, nl, remote, nr, "created with an intercommunicator as the peer");
    MPI_Comm_free(&again);

    /* merge of the dup: an intracommunicator of everyone. */
    MPI_Comm merged;
    MPI_Intercomm_merge(dup, !left, &merged);
    int msize = 0, sum = 0, one = 1;
    MPI_Comm_size(merged, &msize);
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, merged);
    CHECK(msize == wsize && sum == wsize, "merge: size %d, sum %d", msize, sum);

    /* Merges in a row with the order flipping (each numbers the members
     * differently): sizes, ranks and a reduction on each. */
    for (int round = 0; round < 4; round++) {
        int high = round < 2 ? (round ? left : !left) : round - 2;
        MPI_Comm m;
        MPI_Intercomm_merge(ic, high, &m);
        int ms = 0, mr = -1, total = 0;
        MPI_Comm_size(m, &ms);
        MPI_Comm_rank(m, &mr);
        MPI_Allreduce(&wrank, &total, 1, MPI_INT, MPI_SUM, m);
        CHECK(ms == wsize && total == wsize * (wsize - 1) / 2, "merge %d: size %d, sum %d", round, ms, total);
        if (round < 2) {
            int expect = high ? nr + lrank : lrank;
            CHECK(mr == expect, "merge %d (high %d): rank %d, expected %d", round, high, mr, expect);
        }
        MPI_Comm_free(&m);
    }

    /* split: color = local rank parity, key reversed; rank 0 of the right
     * half opts out. */
    int color = (!left && lrank == 0) ? MPI_UNDEFINED : lrank % 2;
    MPI_Comm sp;
    MPI_Comm_split(ic, color, -lrank, &sp);
    if (color == MPI_UNDEFINED) {
        CHECK(sp == MPI_COMM_NULL, "split: MPI_UNDEFINED gave a communicator");
    } else {
        int n1 = 0, n2 = 0;
        for (int i = half_size(left) - 1; i >= 0; i--)
            if (i % 2 == color && !(!left && i == 0)) local[n1++] = half_member(left, i);
        for (int i = half_size(!left) - 1; i >= 0; i--)
            if (i % 2 == color && !(left && i == 0)) remote[n2++] = half_member(!left, i);
        if (n2 == 0)
            CHECK(sp == MPI_COMM_NULL, "split: no remote member, yet a communicator");
        else
            check_inter(sp, local, n1, remote, n2, "split");
    }

    /* create: the even local ranks on both sides. */
    MPI_Group g, evens;
    MPI_Comm_group(half, &g);
    int ranks[64], n = 0;
    for (int i = 0; i < nl && n < 64; i += 2) ranks[n++] = i;
    MPI_Group_incl(g, n, ranks, &evens);
    MPI_Comm cr;
    MPI_Comm_create(ic, evens, &cr);
    if (lrank % 2) {
        CHECK(cr == MPI_COMM_NULL, "create: a non-member got a communicator");
    } else {
        int n1 = 0, n2 = 0;
        for (int i = 0; i < nl; i += 2) local[n1++] = half_member(left, i);
        for (int i = 0; i < nr; i += 2) remote[n2++] = half_member(!left, i);
        check_inter(cr, local, n1, remote, n2, "create");
    }

    if (sp != MPI_COMM_NULL) MPI_Comm_free(&sp);
    if (cr != MPI_COMM_NULL) MPI_Comm_free(&cr);
    MPI_Group_free(&g);
    MPI_Group_free(&evens);
    MPI_Comm_free(&merged);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&ic);
    MPI_Comm_free(&half);
    free(local);
    free(remote);
    int errors = mt_errors;
    MPI_Allreduce(MPI_IN_PLACE, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    mt_report(wrank, errors);
    return errors != 0;
}
