/* Every blocking collective on MPI_COMM_WORLD checked against a serial
 * computation: Bcast, Gather(v), Scatter(v), Allgather(v), Alltoall(v,w),
 * Reduce, Allreduce, Reduce_scatter(_block), Scan, Exscan, each from/to
 * several roots, with MPI_INT, a contiguous type and a vector type (whose
 * gaps must stay untouched), counts from 0 to past the long-message
 * thresholds, MPI_IN_PLACE variants, and mismatched but signature-equal
 * send and receive types. Then the same reductions on MPI_DOUBLE. */
#include "mpitest.h"

static int rank, size;

/* A datatype made of ints: `nvals` ints per element at `pos`, `extent`
 * ints apart. */
typedef struct {
    const char *name;
    MPI_Datatype type;
    int nvals, extent;
    int pos[4];
} tdesc;

#define GAP (-7)
#define NTYPES 3
static tdesc types[NTYPES];

static int value(int r, int e, int k) { return r * 100000 + e * 10 + k; }

static int *ibuf(const tdesc *t, int count) {
    int n = count * t->extent + 1;
    int *b = malloc(sizeof(int) * n);
    for (int i = 0; i < n; i++) b[i] = GAP;
    return b;
}

/* Element slot `slot` of buf holds element e of rank r's data. */
static void put(const tdesc *t, int *buf, int slot, int r, int e) {
    for (int k = 0; k < t->nvals; k++) buf[slot * t->extent + t->pos[k]] = value(r, e, k);
}

static void put_sum(const tdesc *t, int *buf, int slot, int e, int first, int last) {
    for (int k = 0; k < t->nvals; k++) {
        int s = 0;
        for (int r = first; r <= last; r++) s += value(r, e, k);
        buf[slot * t->extent + t->pos[k]] = s;
    }
}

static int same(const int *a, const int *b, int n, const char *what, const tdesc *t, int count, int root) {
    for (int i = 0; i < n; i++)
        if (a[i] != b[i]) {
            CHECK(0, "%s %s count %d root %d: int %d is %d, expected %d", what, t->name, count, root, i, a[i], b[i]);
            return 0;
        }
    return 1;
}

static void test_bcast(const tdesc *t, int count, int root) {
    int *buf = ibuf(t, count), *exp = ibuf(t, count);
    for (int e = 0; e < count; e++) {
        put(t, exp, e, root, e);
        if (rank == root) put(t, buf, e, root, e);
    }
    CHECK(MPI_Bcast(buf, count, t->type, root, MPI_COMM_WORLD) == MPI_SUCCESS, "bcast");
    same(buf, exp, count * t->extent + 1, "bcast", t, count, root);
    free(buf);
    free(exp);
}

static void test_gather(const tdesc *t, int count, int root, int in_place) {
    int *send = ibuf(t, count), *recv = ibuf(t, count * size), *exp = ibuf(t, count * size);
    for (int e = 0; e < count; e++) put(t, send, e, rank, e);
    for (int r = 0; r < size; r++)
        for (int e = 0; e < count; e++) put(t, exp, r * count + e, r, e);
    if (rank == root && in_place) {
        for (int e = 0; e < count; e++) put(t, recv, rank * count + e, rank, e);
        CHECK(MPI_Gather(MPI_IN_PLACE, -5, MPI_DATATYPE_NULL, recv, count, t->type, root, MPI_COMM_WORLD) == MPI_SUCCESS,
              "gather in place");
    } else {
        /* non-roots pass garbage receive arguments: they are insignificant */
        int rc = rank == root ? MPI_Gather(send, count, t->type, recv, count, t->type, root, MPI_COMM_WORLD)
                              : MPI_Gather(send, count, t->type, NULL, -1, MPI_DATATYPE_NULL, root, MPI_COMM_WORLD);
        CHECK(rc == MPI_SUCCESS, "gather");
    }
    if (rank == root) same(recv, exp, count * size * t->extent + 1, in_place ? "gather in place" : "gather", t, count, root);
    free(send);
    free(recv);
    free(exp);
}

/* Member r contributes (r % 3) + count elements, placed with a one-element
 * gap before each block. */
static int vcount(int r, int count) { return r % 3 + count; }

static void v_layout(int count, int *counts, int *displs, int *total) {
    int at = 0;
    for (int r = 0; r < size; r++) {
        at += 1;
        counts[r] = vcount(r, count);
        displs[r] = at;
        at += counts[r];
    }
    *total = at;
}

static void test_gatherv(const tdesc *t, int count, int root, int in_place) {
    int *counts = malloc(sizeof(int) * size), *displs = malloc(sizeof(int) * size), total;
    v_layout(count, counts, displs, &total);
    int mine = vcount(rank, count);
    int *send = ibuf(t, mine), *recv = ibuf(t, total), *exp = ibuf(t, total);
    for (int e = 0; e < mine; e++) put(t, send, e, rank, e);
    for (int r = 0; r < size; r++)
        for (int e = 0; e < counts[r]; e++) put(t, exp, displs[r] + e, r, e);
    int rc;
    if (rank == root && in_place) {
        for (int e = 0; e < mine; e++) put(t, recv, displs[rank] + e, rank, e);
        rc = MPI_Gatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, counts, displs, t->type, root, MPI_COMM_WORLD);
    } else if (rank == root) {
        rc = MPI_Gatherv(send, mine, t->type, recv, counts, displs, t->type, root, MPI_COMM_WORLD);
    } else {
        rc = MPI_Gatherv(send, mine, t->type, NULL, NULL, NULL, MPI_DATATYPE_NULL, root, MPI_COMM_WORLD);
    }
    CHECK(rc == MPI_SUCCESS, "gatherv");
    if (rank == root) same(recv, exp, total * t->extent + 1, in_place ? "gatherv in place" : "gatherv", t, count, root);
    free(send);
    free(recv);
    free(exp);
    free(counts);
    free(displs);
}

static void test_scatter(const tdesc *t, int count, int root, int in_place) {
    int *send = ibuf(t, count * size), *recv = ibuf(t, count), *exp = ibuf(t, count);
    for (int r = 0; r < size; r++)
        for (int e = 0; e < count; e++) put(t, send, r * count + e, r, e);
    for (int e = 0; e < count; e++) put(t, exp, e, rank, e);
    int rc;
    if (rank == root && in_place)
        rc = MPI_Scatter(send, count, t->type, MPI_IN_PLACE, -3, MPI_DATATYPE_NULL, root, MPI_COMM_WORLD);
    else if (rank == root)
        rc = MPI_Scatter(send, count, t->type, recv, count, t->type, root, MPI_COMM_WORLD);
    else
        rc = MPI_Scatter(NULL, -1, MPI_DATATYPE_NULL, recv, count, t->type, root, MPI_COMM_WORLD);
    CHECK(rc == MPI_SUCCESS, "scatter");
    if (!(rank == root && in_place)) same(recv, exp, count * t->extent + 1, "scatter", t, count, root);
    free(send);
    free(recv);
    free(exp);
}

static void test_scatterv(const tdesc *t, int count, int root, int in_place) {
    int *counts = malloc(sizeof(int) * size), *displs = malloc(sizeof(int) * size), total;
    v_layout(count, counts, displs, &total);
    int mine = vcount(rank, count);
    int *send = ibuf(t, total), *recv = ibuf(t, mine), *exp = ibuf(t, mine);
    for (int r = 0; r < size; r++)
        for (int e = 0; e < counts[r]; e++) put(t, send, displs[r] + e, r, e);
    for (int e = 0; e < mine; e++) put(t, exp, e, rank, e);
    int rc;
    if (rank == root && in_place)
        rc = MPI_Scatterv(send, counts, displs, t->type, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, root, MPI_COMM_WORLD);
    else if (rank == root)
        rc = MPI_Scatterv(send, counts, displs, t->type, recv, mine, t->type, root, MPI_COMM_WORLD);
    else
        rc = MPI_Scatterv(NULL, NULL, NULL, MPI_DATATYPE_NULL, recv, mine, t->type, root, MPI_COMM_WORLD);
    CHECK(rc == MPI_SUCCESS, "scatterv");
    if (!(rank == root && in_place)) same(recv, exp, mine * t->extent + 1, "scatterv", t, count, root);
    free(send);
    free(recv);
    free(exp);
    free(counts);
    free(displs);
}

static void test_allgather(const tdesc *t, int count, int in_place) {
    int *send = ibuf(t, count), *recv = ibuf(t, count * size), *exp = ibuf(t, count * size);
    for (int e = 0; e < count; e++) put(t, send, e, rank, e);
    for (int r = 0; r < size; r++)
        for (int e = 0; e < count; e++) put(t, exp, r * count + e, r, e);
    int rc;
    if (in_place) {
        for (int e = 0; e < count; e++) put(t, recv, rank * count + e, rank, e);
        rc = MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, count, t->type, MPI_COMM_WORLD);
    } else {
        rc = MPI_Allgather(send, count, t->type, recv, count, t->type, MPI_COMM_WORLD);
    }
    CHECK(rc == MPI_SUCCESS, "allgather");
    same(recv, exp, count * size * t->extent + 1, in_place ? "allgather in place" : "allgather", t, count, -1);
    free(send);
    free(recv);
    free(exp);
}

static void test_allgatherv(const tdesc *t, int count, int in_place) {
    int *counts = malloc(sizeof(int) * size), *displs = malloc(sizeof(int) * size), total;
    v_layout(count, counts, displs, &total);
    int mine = vcount(rank, count);
    int *send = ibuf(t, mine), *recv = ibuf(t, total), *exp = ibuf(t, total);
    for (int e = 0; e < mine; e++) put(t, send, e, rank, e);
    for (int r = 0; r < size; r++)
        for (int e = 0; e < counts[r]; e++) put(t, exp, displs[r] + e, r, e);
    int rc;
    if (in_place) {
        for (int e = 0; e < mine; e++) put(t, recv, displs[rank] + e, rank, e);
        rc = MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, counts, displs, t->type, MPI_COMM_WORLD);
    } else {
        rc = MPI_Allgatherv(send, mine, t->type, recv, counts, displs, t->type, MPI_COMM_WORLD);
    }
    CHECK(rc == MPI_SUCCESS, "allgatherv");
    same(recv, exp, total * t->extent + 1, in_place ? "allgatherv in place" : "allgatherv", t, count, -1);
    free(send);
    free(recv);
    free(exp);
    free(counts);
    free(displs);
}

/* Alltoall: the block for member d from member r holds elements
 * e of "rank" r * 64 + d. */
static void test_alltoall(const tdesc *t, int count, int in_place) {
    int *send = ibuf(t, count * size), *recv = ibuf(t, count * size), *exp = ibuf(t, count * size);
    for (int d = 0; d < size; d++)
        for (int e = 0; e < count; e++) {
            put(t, send, d * count + e, rank * 64 + d, e);
            put(t, exp, d * count + e, d * 64 + rank, e);
        }
    int rc;
    if (in_place) {
        memcpy(recv, send, sizeof(int) * (count * size * t->extent + 1));
        rc = MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, count, t->type, MPI_COMM_WORLD);
    } else {
        rc = MPI_Alltoall(send, count, t->type, recv, count, t->type, MPI_COMM_WORLD);
    }
    CHECK(rc == MPI_SUCCESS, "alltoall");
    same(recv, exp, count * size * t->extent + 1, in_place ? "alltoall in place" : "alltoall", t, count, -1);
    free(send);
    free(recv);
    free(exp);
}

/* Alltoallv: member r sends (r + d) % 3 + count elements to d, with
 * gapped displacements that differ between the two sides. */
static void test_alltoallv(const tdesc *t, int count, int in_place) {
    int *sc = malloc(sizeof(int) * size), *sd = malloc(sizeof(int) * size);
    int *rcnt = malloc(sizeof(int) * size), *rd = malloc(sizeof(int) * size);
    int stotal = 0, rtotal = 0;
    for (int d = 0; d < size; d++) {
        sc[d] = (rank + d) % 3 + count;
        sd[d] = stotal + 1;
        stotal += sc[d] + 1;
        rcnt[d] = (d + rank) % 3 + count;
        rd[d] = rtotal + 2;
        rtotal += rcnt[d] + 2;
    }
    int *send = ibuf(t, stotal), *recv = ibuf(t, rtotal), *exp = ibuf(t, rtotal);
    for (int d = 0; d < size; d++) {
        for (int e = 0; e < sc[d]; e++) put(t, send, sd[d] + e, rank * 64 + d, e);
        for (int e = 0; e < rcnt[d]; e++) put(t, exp, rd[d] + e, d * 64 + rank, e);
    }
    int rc;
    if (in_place) {
        /* in place: the data to send is in the receive layout */
        int *inplace = ibuf(t, rtotal);
        for (int d = 0; d < size; d++)
            for (int e = 0; e < rcnt[d]; e++) put(t, inplace, rd[d] + e, rank * 64 + d, e);
        rc = MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, inplace, rcnt, rd, t->type, MPI_COMM_WORLD);
        same(inplace, exp, rtotal * t->extent + 1, "alltoallv in place", t, count, -1);
        free(inplace);
    } else {
        rc = MPI_Alltoallv(send, sc, sd, t->type, recv, rcnt, rd, t->type, MPI_COMM_WORLD);
        same(recv, exp, rtotal * t->extent + 1, "alltoallv", t, count, -1);
    }
    CHECK(rc == MPI_SUCCESS, "alltoallv");
    free(send);
    free(recv);
    free(exp);
    free(sc);
    free(sd);
    free(rcnt);
    free(rd);
}

/* Alltoallw: send `count` elements of type t to each member, receive them
 * as nvals * count MPI_INTs packed densely (byte displacements). */
static void test_alltoallw(const tdesc *t, int count) {
    int *sc = malloc(sizeof(int) * size), *sd = malloc(sizeof(int) * size);
    int *rcnt = malloc(sizeof(int) * size), *rd = malloc(sizeof(int) * size);
    MPI_Datatype *st = malloc(sizeof(MPI_Datatype) * size), *rt = malloc(sizeof(MPI_Datatype) * size);
    int *send = ibuf(t, count * size);
    int n = count * t->nvals;
    int *recv = malloc(sizeof(int) * (n * size + 1)), *exp = malloc(sizeof(int) * (n * size + 1));
    for (int i = 0; i <= n * size; i++) recv[i] = exp[i] = GAP;
    for (int d = 0; d < size; d++) {
        sc[d] = count;
        sd[d] = (int)(d * count * t->extent * sizeof(int));
        st[d] = t->type;
        rcnt[d] = n;
        rd[d] = (int)(d * n * sizeof(int));
        rt[d] = MPI_INT;
        for (int e = 0; e < count; e++) {
            put(t, send, d * count + e, rank * 64 + d, e);
            for (int k = 0; k < t->nvals; k++) exp[d * n + e * t->nvals + k] = value(d * 64 + rank, e, k);
        }
    }
    CHECK(MPI_Alltoallw(send, sc, sd, st, recv, rcnt, rd, rt, MPI_COMM_WORLD) == MPI_SUCCESS, "alltoallw");
    same(recv, exp, n * size + 1, "alltoallw", t, count, -1);
    free(send);
    free(recv);
    free(exp);
    free(sc);
    free(sd);
    free(rcnt);
    free(rd);
    free(st);
    free(rt);
}

static void test_reduce(const tdesc *t, int count, int root, int in_place) {
    int *send = ibuf(t, count), *recv = ibuf(t, count), *exp = ibuf(t, count);
    for (int e = 0; e < count; e++) {
        put(t, send, e, rank, e);
        put_sum(t, exp, e, e, 0, size - 1);
    }
    int rc;
    if (in_place && rank == root) {
        memcpy(recv, send, sizeof(int) * (count * t->extent + 1));
        rc = MPI_Reduce(MPI_IN_PLACE, recv, count, t->type, MPI_SUM, root, MPI_COMM_WORLD);
    } else {
        rc = MPI_Reduce(send, rank == root ? recv : NULL, count, t->type, MPI_SUM, root, MPI_COMM_WORLD);
    }
    CHECK(rc == MPI_SUCCESS, "reduce");
    if (rank == root) same(recv, exp, count * t->extent + 1, in_place ? "reduce in place" : "reduce", t, count, root);
    free(send);
    free(recv);
    free(exp);
}

static void test_allreduce(const tdesc *t, int count, int in_place) {
    int *send = ibuf(t, count), *recv = ibuf(t, count), *exp = ibuf(t, count);
    for (int e = 0; e < count; e++) {
        put(t, send, e, rank, e);
        put_sum(t, exp, e, e, 0, size - 1);
    }
    int rc;
    if (in_place) {
        memcpy(recv, send, sizeof(int) * (count * t->extent + 1));
        rc = MPI_Allreduce(MPI_IN_PLACE, recv, count, t->type, MPI_SUM, MPI_COMM_WORLD);
    } else {
        rc = MPI_Allreduce(send, recv, count, t->type, MPI_SUM, MPI_COMM_WORLD);
    }
    CHECK(rc == MPI_SUCCESS, "allreduce");
    same(recv, exp, count * t->extent + 1, in_place ? "allreduce in place" : "allreduce", t, count, -1);
    free(send);
    free(recv);
    free(exp);
}

/* Reduce_scatter: member r gets r % 3 + count elements (block: `count`). */
static void test_reduce_scatter(const tdesc *t, int count, int in_place, int block) {
    int *counts = calloc(size, sizeof(int)), total = 0, first = 0;
    for (int r = 0; r < size; r++) {
        counts[r] = block ? count : vcount(r, count);
        if (r < rank) first += counts[r];
        total += counts[r];
    }
    int mine = counts[rank];
    int *send = ibuf(t, total), *recv = ibuf(t, in_place ? total : mine), *exp = ibuf(t, in_place ? total : mine);
    for (int e = 0; e < total; e++) put(t, send, e, rank, e);
    if (in_place) memcpy(exp, send, sizeof(int) * (total * t->extent + 1)); /* beyond the result: unspecified */
    for (int e = 0; e < mine; e++) put_sum(t, exp, e, first + e, 0, size - 1);
    int rc;
    const char *what = block ? (in_place ? "reduce_scatter_block in place" : "reduce_scatter_block")
                             : (in_place ? "reduce_scatter in place" : "reduce_scatter");
    void *sb = send;
    if (in_place) {
        memcpy(recv, send, sizeof(int) * (total * t->extent + 1));
        sb = MPI_IN_PLACE;
    }
    if (block)
        rc = MPI_Reduce_scatter_block(sb, recv, count, t->type, MPI_SUM, MPI_COMM_WORLD);
    else
        rc = MPI_Reduce_scatter(sb, recv, counts, t->type, MPI_SUM, MPI_COMM_WORLD);
    CHECK(rc == MPI_SUCCESS, "%s", what);
    same(recv, exp, mine * t->extent, what, t, count, -1);
    free(send);
    free(recv);
    free(exp);
    free(counts);
}

static void test_scan(const tdesc *t, int count, int in_place, int exclusive) {
    int *send = ibuf(t, count), *recv = ibuf(t, count), *exp = ibuf(t, count);
    for (int e = 0; e < count; e++) {
        put(t, send, e, rank, e);
        if (!exclusive)
            put_sum(t, exp, e, e, 0, rank);
        else if (rank > 0)
            put_sum(t, exp, e, e, 0, rank - 1);
    }
    int rc;
    void *sb = send;
    if (in_place) {
        memcpy(recv, send, sizeof(int) * (count * t->extent + 1));
        sb = MPI_IN_PLACE;
    }
    if (exclusive)
        rc = MPI_Exscan(sb, recv, count, t->type, MPI_SUM, MPI_COMM_WORLD);
    else
        rc = MPI_Scan(sb, recv, count, t->type, MPI_SUM, MPI_COMM_WORLD);
    CHECK(rc == MPI_SUCCESS, "scan");
    if (!(exclusive && rank == 0))
        same(recv, exp, count * t->extent + 1, exclusive ? "exscan" : "scan", t, count, -1);
    free(send);
    free(recv);
    free(exp);
}

static void run_all(const tdesc *t, int count, int roots) {
    int rootlist[3] = {0, size - 1, size / 2};
    for (int i = 0; i < roots; i++) {
        int root = rootlist[i];
        test_bcast(t, count, root);
        for (int ip = 0; ip < 2; ip++) {
            test_gather(t, count, root, ip);
            test_gatherv(t, count, root, ip);
            test_scatter(t, count, root, ip);
            test_scatterv(t, count, root, ip);
            test_reduce(t, count, root, ip);
        }
    }
    for (int ip = 0; ip < 2; ip++) {
        test_allgather(t, count, ip);
        test_allgatherv(t, count, ip);
        test_alltoall(t, count, ip);
        test_alltoallv(t, count, ip);
        test_allreduce(t, count, ip);
        test_reduce_scatter(t, count, ip, 0);
        test_reduce_scatter(t, count, ip, 1);
        test_scan(t, count, ip, 0);
        test_scan(t, count, ip, 1);
    }
    test_alltoallw(t, count);
}

/* Reductions on doubles (values exact in binary, so any order gives the
 * same sum) and MPI_MAX / MPI_MIN / MPI_PROD on them. */
static void test_doubles(int count) {
    double *in = malloc(sizeof(double) * (count + 1)), *out = malloc(sizeof(double) * (count + 1));
    for (int i = 0; i < count; i++) in[i] = rank * 0.5 + i * 0.25;
    MPI_Allreduce(in, out, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    for (int i = 0; i < count; i++) {
        double s = 0;
        for (int r = 0; r < size; r++) s += r * 0.5 + i * 0.25;
        if (out[i] != s) {
            CHECK(0, "allreduce double sum count %d [%d] = %g, expected %g", count, i, out[i], s);
            break;
        }
    }
    MPI_Allreduce(in, out, count, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    for (int i = 0; i < count; i++)
        if (out[i] != (size - 1) * 0.5 + i * 0.25) {
            CHECK(0, "allreduce double max [%d] = %g", i, out[i]);
            break;
        }
    MPI_Reduce(in, out, count, MPI_DOUBLE, MPI_MIN, size - 1, MPI_COMM_WORLD);
    if (rank == size - 1)
        for (int i = 0; i < count; i++)
            if (out[i] != i * 0.25) {
                CHECK(0, "reduce double min [%d] = %g", i, out[i]);
                break;
            }
    for (int i = 0; i < count; i++) in[i] = (rank % 2) ? 2.0 : 0.5;
    MPI_Scan(in, out, count, MPI_DOUBLE, MPI_PROD, MPI_COMM_WORLD);
    double p = 1;
    for (int r = 0; r <= rank; r++) p *= (r % 2) ? 2.0 : 0.5;
    for (int i = 0; i < count; i++)
        if (out[i] != p) {
            CHECK(0, "scan double prod [%d] = %g, expected %g", i, out[i], p);
            break;
        }
    double *all = malloc(sizeof(double) * (count * size + 1));
    for (int i = 0; i < count; i++) in[i] = rank + i / 8.0;
    MPI_Allgather(in, count, MPI_DOUBLE, all, count, MPI_DOUBLE, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < count; i++)
            if (all[r * count + i] != r + i / 8.0) {
                CHECK(0, "allgather double [%d][%d] = %g", r, i, all[r * count + i]);
                r = size;
                break;
            }
    free(all);
    free(in);
    free(out);
}

/* The large-count (_c) entry points: MPI_Count counts, MPI_Aint
 * displacements. */
static void test_large_count_forms(void) {
    enum { K = 3 };
    MPI_Count *counts = malloc(sizeof(MPI_Count) * size);
    MPI_Aint *displs = malloc(sizeof(MPI_Aint) * size), *bdispls = malloc(sizeof(MPI_Aint) * size);
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * size);
    int *in = malloc(sizeof(int) * K * size), *out = malloc(sizeof(int) * K * size), b[K];
    for (int r = 0; r < size; r++) {
        counts[r] = K;
        displs[r] = (MPI_Aint)r * K;
        bdispls[r] = (MPI_Aint)(r * K * sizeof(int));
        types[r] = MPI_INT;
        for (int i = 0; i < K; i++) in[r * K + i] = rank * 100 + r * 10 + i;
    }
    for (int i = 0; i < K; i++) b[i] = rank == 0 ? 70 + i : -1;
    CHECK(MPI_Bcast_c(b, K, MPI_INT, 0, MPI_COMM_WORLD) == MPI_SUCCESS && b[2] == 72, "bcast_c");
    CHECK(MPI_Allgatherv_c(in, K, MPI_INT, out, counts, displs, MPI_INT, MPI_COMM_WORLD) == MPI_SUCCESS,
          "allgatherv_c");
    for (int r = 0; r < size; r++) CHECK(out[r * K + 1] == r * 100 + 1, "allgatherv_c [%d] = %d", r, out[r * K + 1]);
    CHECK(MPI_Gatherv_c(in, K, MPI_INT, out, counts, displs, MPI_INT, 0, MPI_COMM_WORLD) == MPI_SUCCESS, "gatherv_c");
    if (rank == 0)
        for (int r = 0; r < size; r++) CHECK(out[r * K + 2] == r * 100 + 2, "gatherv_c [%d]", r);
    CHECK(MPI_Scatterv_c(in, counts, displs, MPI_INT, b, K, MPI_INT, 0, MPI_COMM_WORLD) == MPI_SUCCESS &&
              b[1] == rank * 10 + 1,
          "scatterv_c %d", b[1]);
    CHECK(MPI_Alltoallv_c(in, counts, displs, MPI_INT, out, counts, displs, MPI_INT, MPI_COMM_WORLD) == MPI_SUCCESS,
          "alltoallv_c");
    for (int r = 0; r < size; r++) CHECK(out[r * K] == r * 100 + rank * 10, "alltoallv_c [%d]", r);
    CHECK(MPI_Alltoallw_c(in, counts, bdispls, types, out, counts, bdispls, types, MPI_COMM_WORLD) == MPI_SUCCESS,
          "alltoallw_c");
    for (int r = 0; r < size; r++) CHECK(out[r * K + 2] == r * 100 + rank * 10 + 2, "alltoallw_c [%d]", r);
    CHECK(MPI_Reduce_scatter_c(in, b, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS, "reduce_scatter_c");
    CHECK(b[0] == 100 * size * (size - 1) / 2 + size * rank * 10, "reduce_scatter_c = %d", b[0]);
    MPI_Request r[2];
    int e[K];
    MPI_Ireduce_scatter_block_c(in, b, K, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &r[0]);
    MPI_Iexscan_c(in, e, K, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[1]);
    MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
    CHECK(b[1] == (size - 1) * 100 + rank * 10 + 1, "ireduce_scatter_block_c = %d", b[1]);
    if (rank > 0) CHECK(e[2] == 100 * rank * (rank - 1) / 2 + rank * 2, "iexscan_c = %d", e[2]);
    free(counts), free(displs), free(bdispls), free(types), free(in), free(out);
}

int main(int argc, char **argv) {
    mt_init(&argc, &argv, &rank, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    types[0] = (tdesc){"MPI_INT", MPI_INT, 1, 1, {0}};
    types[1] = (tdesc){"contiguous(3,int)", MPI_DATATYPE_NULL, 3, 3, {0, 1, 2}};
    MPI_Type_contiguous(3, MPI_INT, &types[1].type);
    MPI_Type_commit(&types[1].type);
    /* vector(2, 2, 3) of int: extent 5 ints, data at 0, 1, 3, 4 */
    types[2] = (tdesc){"vector(2,2,3,int)", MPI_DATATYPE_NULL, 4, 5, {0, 1, 3, 4}};
    MPI_Type_vector(2, 2, 3, MPI_INT, &types[2].type);
    MPI_Type_commit(&types[2].type);

    int counts[] = {0, 1, 7};
    for (int t = 0; t < NTYPES; t++)
        for (int c = 0; c < 3; c++) run_all(&types[t], counts[c], size < 4 ? size : 3);
    /* Past the long-message thresholds (64 KiB): scatter+allgather
     * broadcast, Rabenseifner allreduce, ring allgather. */
    run_all(&types[1], 6000, 1);
    run_all(&types[0], 20000, 1);

    int dcounts[] = {1, 100, 10000};
    for (int c = 0; c < 3; c++) test_doubles(dcounts[c]);
    test_large_count_forms();

    MPI_Type_free(&types[1].type);
    MPI_Type_free(&types[2].type);
    int errs = 0;
    MPI_Allreduce(&mt_errors, &errs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    mt_report(rank, errs);
    MPI_Finalize();
    return 0;
}
