/* Collectives on an intercommunicator, blocking, nonblocking (argument
 * `nb`) or persistent (argument `persistent`), checked against a serial
 * computation: the world splits into two groups of different sizes that
 * interleave in world rank order (world ranks 1, 4, 7, ... and the rest),
 * joined by MPI_Intercomm_create. Every rooted collective (Bcast, Reduce,
 * Gather(v), Scatter(v)) runs with each group as the root's group and
 * with several roots (MPI_ROOT at the root, MPI_PROC_NULL at the rest of
 * its group, whose buffers must stay untouched); then Barrier, Allreduce,
 * Allgather(v), Alltoall(v,w), Reduce_scatter(_block), some `_c` forms,
 * a non-commutative operation (which must see the other group's
 * contributions in rank order), and the argument errors (a bad root,
 * MPI_IN_PLACE). */
#include "mpitest.h"

/* With the argument `nb`, every collective on the intercommunicator is
 * its nonblocking form followed by MPI_Wait, and a round with several
 * nonblocking collectives in flight at once is added; with `persistent`,
 * its persistent form, started and completed twice, then freed. */
static int nb; /* 0 blocking, 1 nonblocking, 2 persistent */
static MPI_Request nb_request;
static int nb_wait(int rc) { return rc != MPI_SUCCESS ? rc : MPI_Wait(&nb_request, MPI_STATUS_IGNORE); }
static int p_run(int rc) {
    if (rc != MPI_SUCCESS) return rc;
    for (int k = 0; k < 2 && rc == MPI_SUCCESS; k++) {
        rc = MPI_Start(&nb_request);
        if (rc == MPI_SUCCESS) rc = MPI_Wait(&nb_request, MPI_STATUS_IGNORE);
    }
    MPI_Request_free(&nb_request);
    return rc;
}
#define NB(blocking, nonblocking, persistent, ...)                                                 \
    (nb == 2 ? p_run(persistent(__VA_ARGS__, MPI_INFO_NULL, &nb_request))                          \
     : nb    ? nb_wait(nonblocking(__VA_ARGS__, &nb_request))                                      \
             : blocking(__VA_ARGS__))

static int wrank, wsize;
static int group, lrank, lsize, rsize; /* this group (0 or 1), its sizes */
static MPI_Comm inter;

#define UNTOUCHED (-7)
#define NCOUNTS 4
static const int counts[NCOUNTS] = {0, 1, 5, 3000};

/* Element i of the data of local rank r of group g (j: a block index). */
static int val(int g, int r, int j, int i) { return g * 100000000 + r * 100000 + j * 1000 + i % 1000; }

static int *fresh(size_t n) {
    int *b = malloc(sizeof(int) * (n + 1));
    for (size_t i = 0; i < n + 1; i++) b[i] = UNTOUCHED;
    return b;
}

static void same(const int *got, const int *exp, size_t n, const char *what, int count, int root_group, int root) {
    for (size_t i = 0; i < n; i++)
        if (got[i] != exp[i]) {
            CHECK(0, "%s count %d, root %d of group %d (this: group %d rank %d): int %zu is %d, expected %d",
                  what, count, root, root_group, group, lrank, i, got[i], exp[i]);
            return;
        }
}

/* The root argument of this process for a call rooted at local rank `root`
 * of group `rg`. */
static int root_arg(int rg, int root) {
    if (group != rg) return root;
    return lrank == root ? MPI_ROOT : MPI_PROC_NULL;
}

/* A non-commutative operation: the first operand (in rank order). */
static MPI_Op first_op;
static void first(void *in, void *inout, int *len, MPI_Datatype *dt) {
    (void)dt;
    memcpy(inout, in, sizeof(int) * (size_t)*len);
}

static int size_of(int g) { return g == group ? lsize : rsize; }

static void rooted(int rg, int root, int count) {
    int other = 1 - rg, q = size_of(other), arg = root_arg(rg, root);
    int is_root = group == rg && lrank == root, in_leaf = group != rg;
    size_t n = (size_t)count, all = n * (size_t)q;

    /* Bcast */
    int *buf = fresh(n), *exp = fresh(n);
    for (size_t i = 0; i < n; i++) {
        if (is_root) buf[i] = val(rg, root, 0, i);
        if (is_root || in_leaf) exp[i] = val(rg, root, 0, i);
    }
    CHECK_CLASS(NB(MPI_Bcast, MPI_Ibcast, MPI_Bcast_init, buf, count, MPI_INT, arg, inter), MPI_SUCCESS);
    same(buf, exp, n + 1, "Bcast", count, rg, root);
    free(buf);
    free(exp);

    /* Reduce: the root gets the sum over the other group. */
    int *send = fresh(n), *recv = fresh(n);
    exp = fresh(n);
    for (size_t i = 0; i < n; i++) {
        if (in_leaf) send[i] = val(group, lrank, 0, i);
        if (is_root) {
            exp[i] = 0;
            for (int r = 0; r < q; r++) exp[i] += val(other, r, 0, i);
        }
    }
    CHECK_CLASS(NB(MPI_Reduce, MPI_Ireduce, MPI_Reduce_init, send, recv, count, MPI_INT, MPI_SUM, arg, inter), MPI_SUCCESS);
    same(recv, exp, n + 1, "Reduce", count, rg, root);
    for (size_t i = 0; i < n; i++)
        if (is_root) exp[i] = val(other, 0, 0, i);
    CHECK_CLASS(NB(MPI_Reduce, MPI_Ireduce, MPI_Reduce_init, send, recv, count, MPI_INT, first_op, arg, inter), MPI_SUCCESS);
    same(recv, exp, n + 1, "Reduce (non-commutative)", count, rg, root);
    free(send);
    free(recv);
    free(exp);

    /* Gather */
    /* (Room for Gatherv's counts too.) */
    send = fresh(n + 7);
    recv = fresh(all);
    exp = fresh(all);
    for (size_t i = 0; i < n + 7; i++) send[i] = val(group, lrank, 0, i);
    if (is_root)
        for (int r = 0; r < q; r++)
            for (size_t i = 0; i < n; i++) exp[r * n + i] = val(other, r, 0, i);
    CHECK_CLASS(NB(MPI_Gather, MPI_Igather, MPI_Gather_init, send, count, MPI_INT, recv, count, MPI_INT, arg, inter), MPI_SUCCESS);
    same(recv, exp, all + 1, "Gather", count, rg, root);
    free(recv);
    free(exp);

    /* Gatherv: remote rank r sends (count + r) % 7 ints, stored with gaps. */
    int *rcounts = malloc(sizeof(int) * q), *displs = malloc(sizeof(int) * q);
    size_t span = 0;
    for (int r = 0; r < q; r++) {
        rcounts[r] = (count + r) % 7;
        displs[r] = (int)span + 1;
        span += rcounts[r] + 2;
    }
    recv = fresh(span);
    exp = fresh(span);
    if (is_root)
        for (int r = 0; r < q; r++)
            for (int i = 0; i < rcounts[r]; i++) exp[displs[r] + i] = val(other, r, 0, i);
    int mine = (count + lrank) % 7;
    CHECK_CLASS(NB(MPI_Gatherv, MPI_Igatherv, MPI_Gatherv_init, send, in_leaf ? mine : 0, MPI_INT, recv, rcounts, displs, MPI_INT, arg, inter),
                MPI_SUCCESS);
    same(recv, exp, span + 1, "Gatherv", count, rg, root);
    free(send);
    free(recv);
    free(exp);

    /* Scatter: block r to remote rank r. */
    send = fresh(all);
    if (is_root)
        for (int r = 0; r < q; r++)
            for (size_t i = 0; i < n; i++) send[r * n + i] = val(rg, root, r, i);
    recv = fresh(n);
    exp = fresh(n);
    if (in_leaf)
        for (size_t i = 0; i < n; i++) exp[i] = val(rg, root, lrank, i);
    CHECK_CLASS(NB(MPI_Scatter, MPI_Iscatter, MPI_Scatter_init, send, count, MPI_INT, recv, count, MPI_INT, arg, inter), MPI_SUCCESS);
    same(recv, exp, n + 1, "Scatter", count, rg, root);
    free(recv);
    free(exp);

    /* Scatterv: the same counts and gaps as Gatherv. */
    int *vsend = fresh(span);
    if (is_root)
        for (int r = 0; r < q; r++)
            for (int i = 0; i < rcounts[r]; i++) vsend[displs[r] + i] = val(rg, root, r, i);
    recv = fresh(7);
    exp = fresh(7);
    if (in_leaf)
        for (int i = 0; i < mine; i++) exp[i] = val(rg, root, lrank, i);
    CHECK_CLASS(NB(MPI_Scatterv, MPI_Iscatterv, MPI_Scatterv_init, vsend, rcounts, displs, MPI_INT, recv, in_leaf ? mine : 0, MPI_INT, arg, inter),
                MPI_SUCCESS);
    same(recv, exp, 8, "Scatterv", count, rg, root);
    free(send);
    free(vsend);
    free(recv);
    free(exp);
    free(rcounts);
    free(displs);
}

static void symmetric(int count) {
    int other = 1 - group;
    size_t n = (size_t)count, all = n * (size_t)rsize;

    CHECK_CLASS(NB(MPI_Barrier, MPI_Ibarrier, MPI_Barrier_init, inter), MPI_SUCCESS);

    /* Allreduce: each group gets the other group's sum. */
    /* (Room for Allgatherv's counts too.) */
    int *send = fresh(n + 9), *recv = fresh(n), *exp = fresh(n);
    for (size_t i = 0; i < n + 9; i++) send[i] = val(group, lrank, 0, i);
    for (size_t i = 0; i < n; i++) {
        exp[i] = 0;
        for (int r = 0; r < rsize; r++) exp[i] += val(other, r, 0, i);
    }
    CHECK_CLASS(NB(MPI_Allreduce, MPI_Iallreduce, MPI_Allreduce_init, send, recv, count, MPI_INT, MPI_SUM, inter), MPI_SUCCESS);
    same(recv, exp, n + 1, "Allreduce", count, -1, -1);
    for (size_t i = 0; i < n + 1; i++) recv[i] = UNTOUCHED;
    CHECK_CLASS(NB(MPI_Allreduce_c, MPI_Iallreduce_c, MPI_Allreduce_init_c, send, recv, (MPI_Count)count, MPI_INT, MPI_SUM, inter), MPI_SUCCESS);
    same(recv, exp, n + 1, "Allreduce_c", count, -1, -1);
    for (size_t i = 0; i < n; i++) exp[i] = val(other, 0, 0, i);
    CHECK_CLASS(NB(MPI_Allreduce, MPI_Iallreduce, MPI_Allreduce_init, send, recv, count, MPI_INT, first_op, inter), MPI_SUCCESS);
    same(recv, exp, n + 1, "Allreduce (non-commutative)", count, -1, -1);
    free(recv);
    free(exp);

    /* Allgather */
    recv = fresh(all);
    exp = fresh(all);
    for (int r = 0; r < rsize; r++)
        for (size_t i = 0; i < n; i++) exp[r * n + i] = val(other, r, 0, i);
    CHECK_CLASS(NB(MPI_Allgather, MPI_Iallgather, MPI_Allgather_init, send, count, MPI_INT, recv, count, MPI_INT, inter), MPI_SUCCESS);
    same(recv, exp, all + 1, "Allgather", count, -1, -1);
    free(recv);
    free(exp);

    /* Allgatherv: rank r of either group sends (count + 2r) % 9 ints. */
    int *rcounts = malloc(sizeof(int) * rsize), *displs = malloc(sizeof(int) * rsize);
    size_t span = 0;
    for (int r = 0; r < rsize; r++) {
        rcounts[r] = (count + 2 * r) % 9;
        displs[r] = (int)span + 2;
        span += rcounts[r] + 3;
    }
    recv = fresh(span);
    exp = fresh(span);
    for (int r = 0; r < rsize; r++)
        for (int i = 0; i < rcounts[r]; i++) exp[displs[r] + i] = val(other, r, 0, i);
    CHECK_CLASS(NB(MPI_Allgatherv, MPI_Iallgatherv, MPI_Allgatherv_init, send, (count + 2 * lrank) % 9, MPI_INT, recv, rcounts, displs, MPI_INT, inter),
                MPI_SUCCESS);
    same(recv, exp, span + 1, "Allgatherv", count, -1, -1);
    free(send);
    free(recv);
    free(exp);
    free(rcounts);
    free(displs);

    /* Alltoall: block j to remote rank j. */
    send = fresh(all);
    recv = fresh(all);
    exp = fresh(all);
    for (int j = 0; j < rsize; j++)
        for (size_t i = 0; i < n; i++) {
            send[j * n + i] = val(group, lrank, j, i);
            exp[j * n + i] = val(other, j, lrank, i);
        }
    CHECK_CLASS(NB(MPI_Alltoall, MPI_Ialltoall, MPI_Alltoall_init, send, count, MPI_INT, recv, count, MPI_INT, inter), MPI_SUCCESS);
    same(recv, exp, all + 1, "Alltoall", count, -1, -1);
    free(send);
    free(recv);
    free(exp);

    /* Alltoallv, Alltoallv_c, Alltoallw: (g, r) sends (count + r + j) % 5
     * ints to remote rank j, stored with gaps on both sides. */
    int *scounts = malloc(sizeof(int) * rsize), *sdispls = malloc(sizeof(int) * rsize);
    rcounts = malloc(sizeof(int) * rsize);
    displs = malloc(sizeof(int) * rsize);
    int *sbytes = malloc(sizeof(int) * rsize), *rbytes = malloc(sizeof(int) * rsize);
    MPI_Count *scounts_c = malloc(sizeof(MPI_Count) * rsize), *rcounts_c = malloc(sizeof(MPI_Count) * rsize);
    MPI_Aint *sdispls_c = malloc(sizeof(MPI_Aint) * rsize), *rdispls_c = malloc(sizeof(MPI_Aint) * rsize);
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * rsize);
    size_t sspan = 0, rspan = 0;
    for (int j = 0; j < rsize; j++) {
        scounts[j] = rcounts[j] = (count + lrank + j) % 5;
        sdispls[j] = (int)sspan;
        sspan += scounts[j] + 1;
        displs[j] = (int)rspan + 1;
        rspan += rcounts[j] + 2;
        sbytes[j] = sdispls[j] * (int)sizeof(int);
        rbytes[j] = displs[j] * (int)sizeof(int);
        scounts_c[j] = scounts[j];
        rcounts_c[j] = rcounts[j];
        sdispls_c[j] = sdispls[j];
        rdispls_c[j] = displs[j];
        types[j] = MPI_INT;
    }
    send = fresh(sspan);
    exp = fresh(rspan);
    for (int j = 0; j < rsize; j++)
        for (int i = 0; i < scounts[j]; i++) {
            send[sdispls[j] + i] = val(group, lrank, j, i);
            exp[displs[j] + i] = val(other, j, lrank, i);
        }
    for (int form = 0; form < 3; form++) {
        recv = fresh(rspan);
        const char *what = form == 0 ? "Alltoallv" : form == 1 ? "Alltoallv_c" : "Alltoallw";
        if (form == 0)
            CHECK_CLASS(NB(MPI_Alltoallv, MPI_Ialltoallv, MPI_Alltoallv_init, send, scounts, sdispls, MPI_INT, recv, rcounts, displs, MPI_INT, inter),
                        MPI_SUCCESS);
        else if (form == 1)
            CHECK_CLASS(NB(MPI_Alltoallv_c, MPI_Ialltoallv_c, MPI_Alltoallv_init_c, send, scounts_c, sdispls_c, MPI_INT, recv, rcounts_c, rdispls_c, MPI_INT,
                                        inter),
                        MPI_SUCCESS);
        else
            CHECK_CLASS(NB(MPI_Alltoallw, MPI_Ialltoallw, MPI_Alltoallw_init, send, scounts, sbytes, types, recv, rcounts, rbytes, types, inter),
                        MPI_SUCCESS);
        same(recv, exp, rspan + 1, what, count, -1, -1);
        free(recv);
    }
    free(send);
    free(exp);
    free(scounts);
    free(sdispls);
    free(rcounts);
    free(displs);
    free(sbytes);
    free(rbytes);
    free(scounts_c);
    free(rcounts_c);
    free(sdispls_c);
    free(rdispls_c);
    free(types);

    /* Reduce_scatter: both groups reduce vectors of the same length
     * (total), split among the receiving group's members. */
    size_t total = n * (size_t)(lsize * rsize);
    rcounts = malloc(sizeof(int) * lsize);
    size_t offset = 0, first = 0;
    for (int r = 0; r < lsize; r++) {
        rcounts[r] = (int)(total / lsize + ((size_t)r < total % lsize));
        if (r == lrank) first = offset;
        offset += rcounts[r];
    }
    send = fresh(total);
    for (size_t i = 0; i < total; i++) send[i] = val(group, lrank, 0, i);
    recv = fresh(rcounts[lrank]);
    exp = fresh(rcounts[lrank]);
    for (int i = 0; i < rcounts[lrank]; i++) {
        exp[i] = 0;
        for (int r = 0; r < rsize; r++) exp[i] += val(other, r, 0, first + i);
    }
    CHECK_CLASS(NB(MPI_Reduce_scatter, MPI_Ireduce_scatter, MPI_Reduce_scatter_init, send, recv, rcounts, MPI_INT, MPI_SUM, inter), MPI_SUCCESS);
    same(recv, exp, rcounts[lrank] + 1, "Reduce_scatter", count, -1, -1);
    free(recv);
    free(exp);
    free(rcounts);

    /* Reduce_scatter_block: recvcount * local size is the same total. */
    int block = (int)(total / lsize);
    recv = fresh(block);
    exp = fresh(block);
    for (int i = 0; i < block; i++) {
        exp[i] = 0;
        for (int r = 0; r < rsize; r++) exp[i] += val(other, r, 0, (size_t)lrank * block + i);
    }
    CHECK_CLASS(NB(MPI_Reduce_scatter_block, MPI_Ireduce_scatter_block, MPI_Reduce_scatter_block_init, send, recv, block, MPI_INT, MPI_SUM, inter), MPI_SUCCESS);
    same(recv, exp, block + 1, "Reduce_scatter_block", count, -1, -1);
    free(send);
    free(recv);
    free(exp);
}

static void errors(void) {
    int a[2] = {1, 2}, b[2];
    CHECK_CLASS(NB(MPI_Bcast, MPI_Ibcast, MPI_Bcast_init, a, 1, MPI_INT, -5, inter), MPI_ERR_ROOT);
    CHECK_CLASS(NB(MPI_Bcast, MPI_Ibcast, MPI_Bcast_init, a, 1, MPI_INT, rsize, inter), MPI_ERR_ROOT);
    CHECK_CLASS(NB(MPI_Reduce, MPI_Ireduce, MPI_Reduce_init, a, b, 1, MPI_INT, MPI_SUM, rsize + 3, inter), MPI_ERR_ROOT);
    CHECK_CLASS(NB(MPI_Allreduce, MPI_Iallreduce, MPI_Allreduce_init, MPI_IN_PLACE, a, 1, MPI_INT, MPI_SUM, inter), MPI_ERR_BUFFER);
    CHECK_CLASS(NB(MPI_Allgather, MPI_Iallgather, MPI_Allgather_init, MPI_IN_PLACE, 0, MPI_INT, b, 1, MPI_INT, inter), MPI_ERR_BUFFER);
    /* Still in step afterwards. */
    a[0] = group == 0 && lrank == 0 ? 42 : 0;
    CHECK_CLASS(NB(MPI_Bcast, MPI_Ibcast, MPI_Bcast_init, a, 1, MPI_INT, group == 0 ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0, inter),
                MPI_SUCCESS);
    if (group == 1) CHECK(a[0] == 42, "Bcast after the errors gave %d", a[0]);
}

/* Several nonblocking collectives in flight at once on the
 * intercommunicator and one on the local communicator, completed in
 * reverse order: each takes its place in the sequence at its call. */
static void in_flight(void) {
    int root_here = group == 0 && lrank == 0;
    int bc = root_here ? 99 : -1, mine = 1000 * group + lrank, sum = -1;
    int *gathered = fresh((size_t)rsize);
    MPI_Request r[4];
    MPI_Ibcast(&bc, 1, MPI_INT, group == 0 ? (root_here ? MPI_ROOT : MPI_PROC_NULL) : 0, inter, &r[0]);
    MPI_Iallreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, inter, &r[1]);
    MPI_Iallgather(&mine, 1, MPI_INT, gathered, 1, MPI_INT, inter, &r[2]);
    MPI_Ibarrier(inter, &r[3]);
    for (int k = 3; k >= 0; k--) CHECK(MPI_Wait(&r[k], MPI_STATUS_IGNORE) == MPI_SUCCESS, "wait %d", k);
    if (group == 1) CHECK(bc == 99, "Ibcast in flight gave %d", bc);
    int want = 0;
    for (int i = 0; i < rsize; i++) want += 1000 * (1 - group) + i;
    CHECK(sum == want, "Iallreduce in flight gave %d, expected %d (the other group's sum)", sum, want);
    for (int i = 0; i < rsize; i++)
        CHECK(gathered[i] == 1000 * (1 - group) + i, "Iallgather in flight: [%d] = %d", i, gathered[i]);
    free(gathered);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    nb = argc > 1 && strcmp(argv[1], "nb") == 0 ? 1 : argc > 1 && strcmp(argv[1], "persistent") == 0 ? 2 : 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (wsize < 2)
        mt_skip(wrank, "an intercommunicator needs at least 2 processes");
    group = wrank % 3 == 1;
    MPI_Comm local;
    MPI_Comm_split(MPI_COMM_WORLD, group, wrank, &local);
    MPI_Comm_rank(local, &lrank);
    MPI_Comm_size(local, &lsize);
    /* The other group's leader: its lowest world rank. */
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, group ? 0 : 1, 77, &inter);
    MPI_Comm_remote_size(inter, &rsize);
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    MPI_Op_create(first, 0, &first_op);

    for (int c = 0; c < NCOUNTS; c++) {
        for (int rg = 0; rg < 2; rg++) {
            int p = size_of(rg);
            rooted(rg, 0, counts[c]);
            if (p > 1) rooted(rg, p - 1, counts[c]);
        }
        symmetric(counts[c]);
    }
    /* A _c form of a rooted call. */
    int x[3] = {0, 0, 0};
    if (group == 1 && lrank == 0) x[0] = 5, x[1] = 6, x[2] = 7;
    CHECK_CLASS(NB(MPI_Bcast_c, MPI_Ibcast_c, MPI_Bcast_init_c, x, 3, MPI_INT, group == 1 ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0, inter),
                MPI_SUCCESS);
    if (group == 0) CHECK(x[0] == 5 && x[1] == 6 && x[2] == 7, "Bcast_c gave %d %d %d", x[0], x[1], x[2]);
    errors();
    if (nb == 1) in_flight();

    MPI_Op_free(&first_op);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
    int errs = 0;
    MPI_Allreduce(&mt_errors, &errs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    mt_report(wrank, errs);
    MPI_Finalize();
    return 0;
}
