/* Nonblocking collectives: every I-form started together with the others
 * and completed with Waitall; many calls of one kind in flight at once;
 * two communicators whose collectives the ranks start in opposite orders;
 * blocking collectives between the start and the completion of
 * nonblocking ones on the same communicator; completion by Test, Waitany
 * and Waitsome loops; an Ibarrier that must not complete before the last
 * member enters; a non-commutative user operation in Ireduce/Iscan. Every
 * result is checked against a serial computation. */
#include <unistd.h>
#include "mpitest.h"

static int rank, size;

#define N 64
#define MAXREQ 32

static int sum_ranks(int upto) { return upto * (upto + 1) / 2; }

/* Starts one of each nonblocking collective on `comm` (sized N per
 * member) and checks them after one Waitall. */
static void all_kinds(MPI_Comm comm) {
    int p, me;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &me);
    MPI_Request req[MAXREQ];
    int nreq = 0;
    int root = p - 1;
    int *bc = malloc(sizeof(int) * N), *red_in = malloc(sizeof(int) * N), *red_out = malloc(sizeof(int) * N);
    int *ar_out = malloc(sizeof(int) * N), *g_out = malloc(sizeof(int) * N * p), *s_in = malloc(sizeof(int) * N * p);
    int *s_out = malloc(sizeof(int) * N), *ag_out = malloc(sizeof(int) * N * p), *a2a_in = malloc(sizeof(int) * N * p);
    int *a2a_out = malloc(sizeof(int) * N * p), *rs_in = malloc(sizeof(int) * N * p), *rs_out = malloc(sizeof(int) * N);
    int *sc_out = malloc(sizeof(int) * N), *ex_out = malloc(sizeof(int) * N), *counts = malloc(sizeof(int) * p);
    int *displs = malloc(sizeof(int) * p), *gv_out = malloc(sizeof(int) * N * p), *agv_out = malloc(sizeof(int) * N * p);
    int *sv_out = malloc(sizeof(int) * N), *a2av_out = malloc(sizeof(int) * N * p), *rsb_out = malloc(sizeof(int) * N);
    int *a2aw_out = malloc(sizeof(int) * N * p);
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * p);
    int *bdispls = malloc(sizeof(int) * p);
    for (int i = 0; i < N; i++) {
        bc[i] = me == 0 ? 5000 + i : -1;
        red_in[i] = me * 10 + i;
    }
    for (int r = 0; r < p; r++) {
        counts[r] = N;
        displs[r] = r * N;
        bdispls[r] = (int)(r * N * sizeof(int));
        types[r] = MPI_INT;
        for (int i = 0; i < N; i++) {
            s_in[r * N + i] = r * 1000 + i;
            a2a_in[r * N + i] = me * 1000 + r * 10 + i % 10;
            rs_in[r * N + i] = me + r + i;
        }
    }
    MPI_Ibarrier(comm, &req[nreq++]);
    MPI_Ibcast(bc, N, MPI_INT, 0, comm, &req[nreq++]);
    MPI_Ireduce(red_in, red_out, N, MPI_INT, MPI_SUM, root, comm, &req[nreq++]);
    MPI_Iallreduce(red_in, ar_out, N, MPI_INT, MPI_MAX, comm, &req[nreq++]);
    MPI_Igather(red_in, N, MPI_INT, g_out, N, MPI_INT, root, comm, &req[nreq++]);
    MPI_Igatherv(red_in, N, MPI_INT, gv_out, counts, displs, MPI_INT, 0, comm, &req[nreq++]);
    MPI_Iscatter(s_in, N, MPI_INT, s_out, N, MPI_INT, root, comm, &req[nreq++]);
    MPI_Iscatterv(s_in, counts, displs, MPI_INT, sv_out, N, MPI_INT, 0, comm, &req[nreq++]);
    MPI_Iallgather(red_in, N, MPI_INT, ag_out, N, MPI_INT, comm, &req[nreq++]);
    MPI_Iallgatherv(red_in, N, MPI_INT, agv_out, counts, displs, MPI_INT, comm, &req[nreq++]);
    MPI_Ialltoall(a2a_in, N, MPI_INT, a2a_out, N, MPI_INT, comm, &req[nreq++]);
    MPI_Ialltoallv(a2a_in, counts, displs, MPI_INT, a2av_out, counts, displs, MPI_INT, comm, &req[nreq++]);
    MPI_Ialltoallw(a2a_in, counts, bdispls, types, a2aw_out, counts, bdispls, types, comm, &req[nreq++]);
    MPI_Ireduce_scatter(rs_in, rs_out, counts, MPI_INT, MPI_SUM, comm, &req[nreq++]);
    MPI_Ireduce_scatter_block(rs_in, rsb_out, N, MPI_INT, MPI_SUM, comm, &req[nreq++]);
    MPI_Iscan(red_in, sc_out, N, MPI_INT, MPI_SUM, comm, &req[nreq++]);
    MPI_Iexscan(red_in, ex_out, N, MPI_INT, MPI_SUM, comm, &req[nreq++]);
    MPI_Status st[MAXREQ];
    for (int i = 0; i < nreq; i++) st[i].MPI_ERROR = -77; /* multiple completion sets MPI_SUCCESS */
    CHECK(MPI_Waitall(nreq, req, st) == MPI_SUCCESS, "waitall of every kind");
    for (int i = 0; i < nreq; i++) {
        CHECK(req[i] == MPI_REQUEST_NULL, "request %d not nulled", i);
        CHECK(st[i].MPI_ERROR == MPI_SUCCESS, "request %d: MPI_Waitall set MPI_ERROR to %d", i, st[i].MPI_ERROR);
    }
    for (int i = 0; i < N; i++) {
        CHECK(bc[i] == 5000 + i, "ibcast [%d] = %d", i, bc[i]);
        if (me == root) CHECK(red_out[i] == 10 * sum_ranks(p - 1) + p * i, "ireduce [%d] = %d", i, red_out[i]);
        CHECK(ar_out[i] == (p - 1) * 10 + i, "iallreduce max [%d] = %d", i, ar_out[i]);
        CHECK(s_out[i] == me * 1000 + i, "iscatter [%d] = %d", i, s_out[i]);
        CHECK(sv_out[i] == me * 1000 + i, "iscatterv [%d] = %d", i, sv_out[i]);
        int rs = 0;
        for (int r = 0; r < p; r++) rs += r + me + i;
        CHECK(rs_out[i] == rs, "ireduce_scatter [%d] = %d, expected %d", i, rs_out[i], rs);
        CHECK(rsb_out[i] == rs, "ireduce_scatter_block [%d] = %d", i, rsb_out[i]);
        CHECK(sc_out[i] == 10 * sum_ranks(me) + (me + 1) * i, "iscan [%d] = %d", i, sc_out[i]);
        if (me > 0) CHECK(ex_out[i] == 10 * sum_ranks(me - 1) + me * i, "iexscan [%d] = %d", i, ex_out[i]);
        for (int r = 0; r < p; r++) {
            if (me == root) CHECK(g_out[r * N + i] == r * 10 + i, "igather [%d][%d]", r, i);
            if (me == 0) CHECK(gv_out[r * N + i] == r * 10 + i, "igatherv [%d][%d]", r, i);
            CHECK(ag_out[r * N + i] == r * 10 + i, "iallgather [%d][%d] = %d", r, i, ag_out[r * N + i]);
            CHECK(agv_out[r * N + i] == r * 10 + i, "iallgatherv [%d][%d]", r, i);
            int a2a = r * 1000 + me * 10 + i % 10;
            CHECK(a2a_out[r * N + i] == a2a, "ialltoall [%d][%d] = %d", r, i, a2a_out[r * N + i]);
            CHECK(a2av_out[r * N + i] == a2a, "ialltoallv [%d][%d]", r, i);
            CHECK(a2aw_out[r * N + i] == a2a, "ialltoallw [%d][%d]", r, i);
        }
    }
    free(bc), free(red_in), free(red_out), free(ar_out), free(g_out), free(s_in), free(s_out), free(ag_out);
    free(a2a_in), free(a2a_out), free(rs_in), free(rs_out), free(sc_out), free(ex_out), free(counts), free(displs);
    free(gv_out), free(agv_out), free(sv_out), free(a2av_out), free(rsb_out), free(a2aw_out), free(types), free(bdispls);
}

/* Many Iallreduce calls in flight at once, completed in reverse. */
static void many_in_flight(void) {
    enum { K = 24 };
    MPI_Request req[K];
    int in[K], out[K];
    for (int k = 0; k < K; k++) {
        in[k] = rank * K + k;
        MPI_Iallreduce(&in[k], &out[k], 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[k]);
    }
    for (int k = K - 1; k >= 0; k--) {
        MPI_Wait(&req[k], MPI_STATUS_IGNORE);
        CHECK(out[k] == K * sum_ranks(size - 1) + size * k, "iallreduce %d of %d in flight = %d", k, K, out[k]);
    }
}

/* Ranks start collectives on two communicators in opposite orders (legal:
 * the order is per communicator), and a blocking collective on one of
 * them runs while a nonblocking one on it is in flight. */
static void crossed_communicators(void) {
    MPI_Comm a, b;
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    MPI_Comm_dup(MPI_COMM_WORLD, &b);
    int va = rank, vb = 100 + rank, ra = -1, rb = -1, blocking = -1;
    MPI_Request req[2];
    if (rank % 2 == 0) {
        MPI_Iallreduce(&va, &ra, 1, MPI_INT, MPI_SUM, a, &req[0]);
        MPI_Iallreduce(&vb, &rb, 1, MPI_INT, MPI_SUM, b, &req[1]);
    } else {
        MPI_Iallreduce(&vb, &rb, 1, MPI_INT, MPI_SUM, b, &req[1]);
        MPI_Iallreduce(&va, &ra, 1, MPI_INT, MPI_SUM, a, &req[0]);
    }
    /* a blocking collective on `a`, after the nonblocking one */
    MPI_Allreduce(&rank, &blocking, 1, MPI_INT, MPI_MAX, a);
    CHECK(blocking == size - 1, "blocking allreduce between nonblocking ones = %d", blocking);
    MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    CHECK(ra == sum_ranks(size - 1), "crossed a = %d", ra);
    CHECK(rb == 100 * size + sum_ranks(size - 1), "crossed b = %d", rb);
    /* all_kinds on a duplicate while world runs its own */
    all_kinds(b);
    MPI_Comm_free(&a);
    MPI_Comm_free(&b);
}

/* Completion by polling: Test, Waitany, Waitsome. */
static void polled_completion(void) {
    int v = rank + 1, out = 0, flag = 0, polls = 0;
    MPI_Request r;
    MPI_Iallreduce(&v, &out, 1, MPI_INT, MPI_PROD, MPI_COMM_WORLD, &r);
    while (!flag) {
        MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
        polls++;
    }
    int fact = 1;
    for (int i = 2; i <= size; i++) fact *= i;
    CHECK(out == fact, "iallreduce prod by test = %d after %d polls", out, polls);
    CHECK(r == MPI_REQUEST_NULL, "tested request not nulled");

    enum { K = 6 };
    MPI_Request req[K];
    int vals[K], outs[K], done = 0;
    for (int k = 0; k < K; k++) {
        vals[k] = k * rank;
        MPI_Iallreduce(&vals[k], &outs[k], 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &req[k]);
    }
    while (done < K / 2) {
        int idx;
        MPI_Waitany(K, req, &idx, MPI_STATUS_IGNORE);
        CHECK(idx >= 0 && idx < K && outs[idx] == idx * (size - 1), "waitany %d -> %d", idx, idx >= 0 ? outs[idx] : -1);
        done++;
    }
    while (done < K) {
        int n, idx[K];
        MPI_Waitsome(K, req, &n, idx, MPI_STATUSES_IGNORE);
        for (int i = 0; i < n; i++) CHECK(outs[idx[i]] == idx[i] * (size - 1), "waitsome %d", idx[i]);
        done += n;
    }
}

/* The last member enters Ibarrier late: nobody's may complete before. */
static void late_barrier(void) {
    int entered = 0;
    MPI_Request r;
    if (rank == size - 1) {
        usleep(100000);
        entered = 1;
    }
    /* tell everyone, after the barrier, whether they completed early */
    MPI_Ibarrier(MPI_COMM_WORLD, &r);
    int flag = 0;
    if (rank != size - 1) MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
    if (!flag) MPI_Wait(&r, MPI_STATUS_IGNORE);
    int early = rank != size - 1 && flag, any_early = 0;
    MPI_Allreduce(&early, &any_early, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    CHECK(size == 1 || !any_early, "an Ibarrier completed before the last member entered");
    (void)entered;
}

/* A non-commutative user op (keep the left operand's first digit after
 * the right's: a op b = a * 10 + b, over small counts of ranks mod 1e9). */
static void concat(void *in, void *inout, int *len, MPI_Datatype *dt) {
    (void)dt;
    long long *a = in, *b = inout;
    for (int i = 0; i < *len; i++) {
        long long scale = 1;
        while (scale <= b[i]) scale *= 10;
        b[i] = a[i] * scale + b[i];
    }
}

static void noncommutative_nonblocking(void) {
    if (size > 9) return; /* digits 1..size must be single digits */
    MPI_Op op;
    MPI_Op_create(concat, 0, &op);
    long long v = rank + 1, red = 0, sc = 0;
    MPI_Request r[2];
    MPI_Ireduce(&v, &red, 1, MPI_LONG_LONG, op, size / 2, MPI_COMM_WORLD, &r[0]);
    MPI_Iscan(&v, &sc, 1, MPI_LONG_LONG, op, MPI_COMM_WORLD, &r[1]);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    long long exp = 0;
    for (int i = 1; i <= size; i++) exp = exp * 10 + i;
    if (rank == size / 2) CHECK(red == exp, "ireduce non-commutative = %lld, expected %lld", red, exp);
    long long exps = 0;
    for (int i = 1; i <= rank + 1; i++) exps = exps * 10 + i;
    CHECK(sc == exps, "iscan non-commutative = %lld, expected %lld", sc, exps);
    MPI_Op_free(&op);
}

int main(int argc, char **argv) {
    mt_init(&argc, &argv, &rank, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int rep = 0; rep < 3; rep++) all_kinds(MPI_COMM_WORLD);
    many_in_flight();
    crossed_communicators();
    polled_completion();
    late_barrier();
    noncommutative_nonblocking();
    for (int i = 0; i < 50; i++) {
        /* a loop of short nonblocking calls (each new worker thread) */
        int v = i + rank, out = -1;
        MPI_Request r;
        MPI_Iallreduce(&v, &out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        if (out != size * i + sum_ranks(size - 1)) {
            CHECK(0, "loop %d: %d", i, out);
            break;
        }
    }
    int errs = 0;
    MPI_Allreduce(&mt_errors, &errs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    mt_report(rank, errs);
    MPI_Finalize();
    return 0;
}
