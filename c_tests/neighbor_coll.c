/* Neighborhood collectives, blocking, nonblocking and persistent (each
 * of the five made once and started 50 times with new data, the starts
 * in a different order at every rank): on Cartesian grids
 * (a non-periodic edge's MPI_PROC_NULL neighbour leaves its receive block
 * untouched; periodic dimensions of size 1 and 2, where one process is
 * both neighbours, put each block where MPI says), a graph, and
 * distributed graphs (repeated edges match in order; per-neighbour counts,
 * displacements and datatypes of alltoallw). Every block is checked
 * against the neighbour it must come from. Any number of ranks. */
#include "mpitest.h"

#define UNTOUCHED (-77)

static void fill(int *buf, int n, int value) {
    for (int i = 0; i < n; i++)
        buf[i] = value;
}

/* This rank's -1 and +1 neighbours in each dimension of a grid, in
 * neighbourhood order (MPI_PROC_NULL at a non-periodic edge). */
static int cart_neighbors(MPI_Comm cart, int *nbrs) {
    int nd;
    MPI_Cartdim_get(cart, &nd);
    for (int d = 0; d < nd; d++)
        MPI_Cart_shift(cart, d, 1, &nbrs[2 * d], &nbrs[2 * d + 1]);
    return 2 * nd;
}

/* Alltoall and allgather on a grid, blocking then nonblocking. */
static void test_cart(MPI_Comm cart, const char *what) {
    int rank, nbrs[8];
    MPI_Comm_rank(cart, &rank);
    int k = cart_neighbors(cart, nbrs);

    /* Allgather: two ints from every neighbour. */
    int send[2] = {rank, rank + 1000}, recv[16];
    fill(recv, 16, UNTOUCHED);
    CHECK_CLASS(MPI_Neighbor_allgather(send, 2, MPI_INT, recv, 2, MPI_INT, cart), MPI_SUCCESS);
    for (int i = 0; i < k; i++) {
        int a = nbrs[i] == MPI_PROC_NULL ? UNTOUCHED : nbrs[i];
        int b = nbrs[i] == MPI_PROC_NULL ? UNTOUCHED : nbrs[i] + 1000;
        CHECK(recv[2 * i] == a && recv[2 * i + 1] == b, "%s: allgather block %d is [%d %d], expected [%d %d]", what, i,
              recv[2 * i], recv[2 * i + 1], a, b);
    }
    CHECK(recv[2 * k] == UNTOUCHED, "%s: allgather wrote past its blocks", what);

    /* Alltoall: block j goes to neighbour j; the block sent to the -1
     * neighbour lands in its +1 block and the reverse. */
    int sendb[8], recvb[8];
    for (int j = 0; j < k; j++)
        sendb[j] = rank * 100 + j;
    fill(recvb, 8, UNTOUCHED);
    CHECK_CLASS(MPI_Neighbor_alltoall(sendb, 1, MPI_INT, recvb, 1, MPI_INT, cart), MPI_SUCCESS);
    for (int i = 0; i < k; i++) {
        int expected = nbrs[i] == MPI_PROC_NULL ? UNTOUCHED : nbrs[i] * 100 + (i ^ 1);
        CHECK(recvb[i] == expected, "%s: alltoall block %d is %d, expected %d (from %d)", what, i, recvb[i], expected,
              nbrs[i]);
    }

    /* The nonblocking forms, two in flight at once, give the same. */
    int recv2[16], recvb2[8];
    fill(recv2, 16, UNTOUCHED);
    fill(recvb2, 8, UNTOUCHED);
    MPI_Request reqs[2];
    CHECK_CLASS(MPI_Ineighbor_alltoall(sendb, 1, MPI_INT, recvb2, 1, MPI_INT, cart, &reqs[0]), MPI_SUCCESS);
    CHECK_CLASS(MPI_Ineighbor_allgather(send, 2, MPI_INT, recv2, 2, MPI_INT, cart, &reqs[1]), MPI_SUCCESS);
    MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
    CHECK(memcmp(recv, recv2, sizeof recv) == 0, "%s: Ineighbor_allgather differs from the blocking form", what);
    CHECK(memcmp(recvb, recvb2, sizeof recvb) == 0, "%s: Ineighbor_alltoall differs from the blocking form", what);

    /* Allgatherv: two ints per neighbour at reversed, spaced offsets. */
    int counts[8], displs[8], recvv[32];
    for (int i = 0; i < k; i++) {
        counts[i] = 2;
        displs[i] = (k - 1 - i) * 3;
    }
    for (int pass = 0; pass < 2; pass++) {
        fill(recvv, 32, UNTOUCHED);
        if (pass == 0) {
            CHECK_CLASS(MPI_Neighbor_allgatherv(send, 2, MPI_INT, recvv, counts, displs, MPI_INT, cart), MPI_SUCCESS);
        } else {
            MPI_Request r;
            CHECK_CLASS(MPI_Ineighbor_allgatherv(send, 2, MPI_INT, recvv, counts, displs, MPI_INT, cart, &r),
                        MPI_SUCCESS);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        }
        for (int i = 0; i < k; i++) {
            int *at = recvv + displs[i];
            int a = nbrs[i] == MPI_PROC_NULL ? UNTOUCHED : nbrs[i];
            CHECK(at[0] == a && at[2] == UNTOUCHED, "%s: allgatherv (pass %d) block %d starts %d, expected %d", what,
                  pass, i, at[0], a);
        }
    }

    /* Alltoallv: block j (to neighbour j) has j/2 + 1 ints, as the block
     * the neighbour receives it in (its j^1) expects. */
    int scounts[8], sdispls[8], rcounts[8], rdispls[8], sendv[64], recvw[64];
    int at = 0;
    for (int j = 0; j < k; j++) {
        scounts[j] = rcounts[j] = j / 2 + 1;
        sdispls[j] = rdispls[j] = at;
        for (int e = 0; e < scounts[j]; e++)
            sendv[at + e] = rank * 100 + j + 10000 * e;
        at += scounts[j] + 1;
    }
    for (int pass = 0; pass < 2; pass++) {
        fill(recvw, 64, UNTOUCHED);
        if (pass == 0) {
            CHECK_CLASS(
                MPI_Neighbor_alltoallv(sendv, scounts, sdispls, MPI_INT, recvw, rcounts, rdispls, MPI_INT, cart),
                MPI_SUCCESS);
        } else {
            MPI_Request r;
            CHECK_CLASS(MPI_Ineighbor_alltoallv(sendv, scounts, sdispls, MPI_INT, recvw, rcounts, rdispls, MPI_INT,
                                                cart, &r),
                        MPI_SUCCESS);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        }
        for (int i = 0; i < k; i++) {
            for (int e = 0; e < rcounts[i]; e++) {
                int expected = nbrs[i] == MPI_PROC_NULL ? UNTOUCHED : nbrs[i] * 100 + (i ^ 1) + 10000 * e;
                CHECK(recvw[rdispls[i] + e] == expected, "%s: alltoallv (pass %d) block %d element %d is %d, expected %d",
                      what, pass, i, e, recvw[rdispls[i] + e], expected);
            }
            CHECK(recvw[rdispls[i] + rcounts[i]] == UNTOUCHED, "%s: alltoallv wrote past block %d", what, i);
        }
    }
}

/* A graph: rank 0 is joined to every other rank (a star). */
static void test_graph(int rank, int size) {
    int index[64], edges[128], e = 0;
    for (int r = 0; r < size; r++) {
        if (r == 0)
            for (int o = 1; o < size; o++)
                edges[e++] = o;
        else
            edges[e++] = 0;
        index[r] = e;
    }
    MPI_Comm g;
    CHECK_CLASS(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &g), MPI_SUCCESS);
    int send = rank * 7, recv[64];
    fill(recv, 64, UNTOUCHED);
    CHECK_CLASS(MPI_Neighbor_allgather(&send, 1, MPI_INT, recv, 1, MPI_INT, g), MPI_SUCCESS);
    if (rank == 0) {
        for (int o = 1; o < size; o++)
            CHECK(recv[o - 1] == o * 7, "graph: the hub's block %d is %d", o - 1, recv[o - 1]);
        CHECK(recv[size - 1] == UNTOUCHED, "graph: the hub got too much");
    } else {
        CHECK(recv[0] == 0 && recv[1] == UNTOUCHED, "graph: a leaf got %d %d", recv[0], recv[1]);
    }
    /* Alltoall: the hub sends each leaf its own value. */
    int sendb[64], recvb[64];
    for (int j = 0; j < size; j++)
        sendb[j] = rank == 0 ? 500 + j + 1 : 900 + rank;
    fill(recvb, 64, UNTOUCHED);
    MPI_Request r;
    CHECK_CLASS(MPI_Ineighbor_alltoall(sendb, 1, MPI_INT, recvb, 1, MPI_INT, g, &r), MPI_SUCCESS);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    if (rank == 0) {
        for (int o = 1; o < size; o++)
            CHECK(recvb[o - 1] == 900 + o, "graph alltoall: the hub's block %d is %d", o - 1, recvb[o - 1]);
    } else {
        CHECK(recvb[0] == 500 + rank, "graph alltoall: leaf %d got %d", rank, recvb[0]);
    }
    MPI_Comm_free(&g);
}

/* Distributed graphs: each rank sends to the next two (ring order). */
static void test_dist_graph(int rank, int size) {
    int srcs[2] = {(rank - 1 + size) % size, (rank - 2 + 2 * size) % size};
    int dsts[2] = {(rank + 1) % size, (rank + 2) % size};
    MPI_Comm dg;
    CHECK_CLASS(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, srcs, MPI_UNWEIGHTED, 2, dsts, MPI_UNWEIGHTED,
                                               MPI_INFO_NULL, 0, &dg),
                MPI_SUCCESS);
    /* Alltoallw: one int to the first destination, two to the second,
     * received as MPI_INT and as one pair type, at byte displacements. */
    MPI_Datatype pair;
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    int sendw[4] = {rank * 10 + 1, rank * 10 + 2, rank * 10 + 3, UNTOUCHED}, recvw[6];
    int scounts[2] = {1, 2}, rcounts[2] = {1, 1};
    MPI_Aint sdispls[2] = {0, sizeof(int)}, rdispls[2] = {3 * sizeof(int), 0};
    MPI_Datatype stypes[2] = {MPI_INT, MPI_INT}, rtypes[2] = {MPI_INT, pair};
    for (int pass = 0; pass < 2; pass++) {
        fill(recvw, 6, UNTOUCHED);
        if (pass == 0) {
            CHECK_CLASS(MPI_Neighbor_alltoallw(sendw, scounts, sdispls, stypes, recvw, rcounts, rdispls, rtypes, dg),
                        MPI_SUCCESS);
        } else {
            MPI_Request r;
            CHECK_CLASS(
                MPI_Ineighbor_alltoallw(sendw, scounts, sdispls, stypes, recvw, rcounts, rdispls, rtypes, dg, &r),
                MPI_SUCCESS);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
        }
        /* From rank-1 (its first destination): one int; from rank-2 (its
         * second): two. */
        CHECK(recvw[3] == srcs[0] * 10 + 1, "alltoallw (pass %d): from %d got %d", pass, srcs[0], recvw[3]);
        CHECK(recvw[0] == srcs[1] * 10 + 2 && recvw[1] == srcs[1] * 10 + 3,
              "alltoallw (pass %d): from %d got [%d %d]", pass, srcs[1], recvw[0], recvw[1]);
        CHECK(recvw[2] == UNTOUCHED && recvw[4] == UNTOUCHED, "alltoallw (pass %d) wrote outside its blocks", pass);
    }
    MPI_Type_free(&pair);
    MPI_Comm_free(&dg);

    /* A repeated edge: two blocks to the same process arrive in order. */
    int twice_s[2] = {srcs[0], srcs[0]}, twice_d[2] = {dsts[0], dsts[0]};
    CHECK_CLASS(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, twice_s, MPI_UNWEIGHTED, 2, twice_d,
                                               MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dg),
                MPI_SUCCESS);
    int two[2] = {rank * 10, rank * 10 + 1}, got[2] = {UNTOUCHED, UNTOUCHED};
    MPI_Neighbor_alltoall(two, 1, MPI_INT, got, 1, MPI_INT, dg);
    CHECK(got[0] == srcs[0] * 10 && got[1] == srcs[0] * 10 + 1, "repeated edge: got [%d %d] from %d", got[0], got[1],
          srcs[0]);
    /* The large-count form. */
    got[0] = got[1] = UNTOUCHED;
    MPI_Count one = 1;
    CHECK_CLASS(MPI_Neighbor_allgather_c(&two[1], one, MPI_INT, got, one, MPI_INT, dg), MPI_SUCCESS);
    CHECK(got[0] == srcs[0] * 10 + 1 && got[1] == srcs[0] * 10 + 1, "allgather_c: got [%d %d]", got[0], got[1]);
    MPI_Comm_free(&dg);

    /* A rank with no neighbours at all: nothing moves. */
    CHECK_CLASS(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, MPI_UNWEIGHTED, 0, NULL, MPI_UNWEIGHTED,
                                               MPI_INFO_NULL, 0, &dg),
                MPI_SUCCESS);
    CHECK_CLASS(MPI_Neighbor_allgather(two, 1, MPI_INT, got, 1, MPI_INT, dg), MPI_SUCCESS);
    MPI_Comm_free(&dg);
}

static void test_errors(void) {
    int a[4] = {0}, b[4] = {0};
    MPI_Request r;
    CHECK_CLASS(MPI_Neighbor_allgather(a, 1, MPI_INT, b, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_TOPOLOGY);
    CHECK_CLASS(MPI_Ineighbor_alltoall(a, 1, MPI_INT, b, 1, MPI_INT, MPI_COMM_WORLD, &r), MPI_ERR_TOPOLOGY);
    CHECK_CLASS(MPI_Neighbor_allgather(a, -1, MPI_INT, b, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_COUNT);
    MPI_Comm c;
    int size, dims[1], periods[1] = {1};
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    dims[0] = size;
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    CHECK_CLASS(MPI_Neighbor_allgather(MPI_IN_PLACE, 1, MPI_INT, b, 1, MPI_INT, c), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Neighbor_alltoall(a, 1, MPI_DATATYPE_NULL, b, 1, MPI_INT, c), MPI_ERR_TYPE);
    MPI_Comm_free(&c);
    /* An intercommunicator has no topology and cannot get one. */
    if (size >= 2) {
        int rank, kind = -1;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm half, inter;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rank % 2 ? 0 : 1, 9, &inter);
        MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
        MPI_Topo_test(inter, &kind);
        CHECK(kind == MPI_UNDEFINED, "an intercommunicator's Topo_test: %d", kind);
        CHECK_CLASS(MPI_Neighbor_allgather(a, 1, MPI_INT, b, 1, MPI_INT, inter), MPI_ERR_TOPOLOGY);
        CHECK_CLASS(MPI_Ineighbor_alltoall(a, 1, MPI_INT, b, 1, MPI_INT, inter, &r), MPI_ERR_TOPOLOGY);
        CHECK_CLASS(MPI_Cart_create(inter, 1, dims, periods, 0, &c), MPI_ERR_COMM);
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
    }
}

/* The persistent forms on a grid: made once, started ROUNDS times with
 * new data, in a rotated order at each rank (the matching is fixed at the
 * init calls); every block checked each round. */
#define ROUNDS 50
static void test_persistent(MPI_Comm cart, const char *what) {
    int rank, nbrs[8];
    MPI_Comm_rank(cart, &rank);
    int k = cart_neighbors(cart, nbrs);
    int g_send[2], g_recv[16], gv_recv[16], a_send[8], a_recv[8], v_recv[8], w_recv[8];
    int counts[8], displs[8];
    MPI_Aint bdispls[8];
    MPI_Datatype types[8];
    for (int i = 0; i < k; i++) {
        counts[i] = 1;
        displs[i] = i;
        bdispls[i] = (MPI_Aint)(i * sizeof(int));
        types[i] = MPI_INT;
    }
    int gcounts[8], gdispls[8];
    for (int i = 0; i < k; i++) {
        gcounts[i] = 2;
        gdispls[i] = 2 * i;
    }
    MPI_Request r[5];
    CHECK_CLASS(MPI_Neighbor_allgather_init(g_send, 2, MPI_INT, g_recv, 2, MPI_INT, cart, MPI_INFO_NULL, &r[0]),
                MPI_SUCCESS);
    CHECK_CLASS(MPI_Neighbor_allgatherv_init(g_send, 2, MPI_INT, gv_recv, gcounts, gdispls, MPI_INT, cart,
                                             MPI_INFO_NULL, &r[1]),
                MPI_SUCCESS);
    CHECK_CLASS(MPI_Neighbor_alltoall_init(a_send, 1, MPI_INT, a_recv, 1, MPI_INT, cart, MPI_INFO_NULL, &r[2]),
                MPI_SUCCESS);
    CHECK_CLASS(MPI_Neighbor_alltoallv_init(a_send, counts, displs, MPI_INT, v_recv, counts, displs, MPI_INT, cart,
                                            MPI_INFO_NULL, &r[3]),
                MPI_SUCCESS);
    CHECK_CLASS(MPI_Neighbor_alltoallw_init(a_send, counts, bdispls, types, w_recv, counts, bdispls, types, cart,
                                            MPI_INFO_NULL, &r[4]),
                MPI_SUCCESS);
    for (int round = 0; round < ROUNDS; round++) {
        g_send[0] = rank * 100 + round;
        g_send[1] = -g_send[0];
        /* Block i goes to neighbour i; the neighbour sees it as the block
         * of the opposite direction (i ^ 1). */
        for (int i = 0; i < k; i++) a_send[i] = rank * 1000 + round * 10 + i;
        fill(g_recv, 16, UNTOUCHED);
        fill(gv_recv, 16, UNTOUCHED);
        fill(a_recv, 8, UNTOUCHED);
        fill(v_recv, 8, UNTOUCHED);
        fill(w_recv, 8, UNTOUCHED);
        if (round % 2) {
            MPI_Request rotated[5];
            for (int j = 0; j < 5; j++) rotated[j] = r[(j + rank + round) % 5];
            MPI_Startall(5, rotated);
        } else {
            for (int j = 0; j < 5; j++) MPI_Start(&r[(5 - j + rank) % 5]);
        }
        MPI_Waitall(5, r, MPI_STATUSES_IGNORE);
        int bad = 0;
        for (int i = 0; i < k; i++) {
            int n = nbrs[i];
            int g0 = n == MPI_PROC_NULL ? UNTOUCHED : n * 100 + round;
            int g1 = n == MPI_PROC_NULL ? UNTOUCHED : -(n * 100 + round);
            int a = n == MPI_PROC_NULL ? UNTOUCHED : n * 1000 + round * 10 + (i ^ 1);
            bad += g_recv[2 * i] != g0 || g_recv[2 * i + 1] != g1;
            bad += gv_recv[2 * i] != g0 || gv_recv[2 * i + 1] != g1;
            bad += a_recv[i] != a;
            bad += v_recv[i] != a;
            bad += w_recv[i] != a;
        }
        CHECK(bad == 0, "%s: persistent round %d: %d wrong blocks", what, round, bad);
    }
    for (int j = 0; j < 5; j++) MPI_Request_free(&r[j]);
}

int main(int argc, char **argv) {
    int rank, size;
    mt_init(&argc, &argv, &rank, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm cart;
    /* 1-D, not periodic: the ends have an MPI_PROC_NULL neighbour. */
    int d1[1] = {size}, p0[1] = {0}, p1[1] = {1};
    MPI_Cart_create(MPI_COMM_WORLD, 1, d1, p0, 0, &cart);
    test_cart(cart, "1-D line");
    MPI_Comm_free(&cart);
    /* 1-D periodic: with 1 or 2 ranks one process is both neighbours. */
    MPI_Cart_create(MPI_COMM_WORLD, 1, d1, p1, 0, &cart);
    test_cart(cart, "1-D ring");
    MPI_Comm_free(&cart);
    /* 2-D, periodic in the first dimension only. */
    int d2[2] = {0, 0}, p2[2] = {1, 0};
    MPI_Dims_create(size, 2, d2);
    MPI_Cart_create(MPI_COMM_WORLD, 2, d2, p2, 0, &cart);
    test_cart(cart, "2-D grid");
    MPI_Comm_free(&cart);
    /* 3-D, every dimension periodic (sizes 1 and 2 included). */
    int d3[3] = {0, 0, 0}, p3[3] = {1, 1, 1};
    MPI_Dims_create(size, 3, d3);
    MPI_Cart_create(MPI_COMM_WORLD, 3, d3, p3, 0, &cart);
    test_cart(cart, "3-D torus");
    MPI_Comm_free(&cart);
    /* Persistent forms on a 2-D grid periodic in one dimension. */
    MPI_Cart_create(MPI_COMM_WORLD, 2, d2, p2, 0, &cart);
    test_persistent(cart, "2-D grid");
    MPI_Comm_free(&cart);
    test_graph(rank, size);
    test_dist_graph(rank, size);
    test_errors();
    int errors = 0;
    MPI_Allreduce(&mt_errors, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    mt_report(rank, errors);
    return errors ? 1 : 0;
}
