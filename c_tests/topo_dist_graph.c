/* Distributed graph topologies through the C ABI:
 * MPI_Dist_graph_create_adjacent (weighted, MPI_UNWEIGHTED,
 * MPI_WEIGHTS_EMPTY), MPI_Dist_graph_create with edges named by another
 * process (neighbour lists and weights at both ends), Dist_graph_neighbors
 * (_count), a neighbour exchange over the general form's graph, and the
 * errors. Any number of ranks. */
#include "mpitest.h"

/* Sorts `n` (rank, weight) pairs, so that lists whose order MPI leaves
 * open compare. */
static void sort_pairs(int n, int *ranks, int *weights) {
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && (ranks[j - 1] > ranks[j] ||
                                  (ranks[j - 1] == ranks[j] && weights[j - 1] > weights[j]));
             j--) {
            int t = ranks[j];
            ranks[j] = ranks[j - 1];
            ranks[j - 1] = t;
            t = weights[j];
            weights[j] = weights[j - 1];
            weights[j - 1] = t;
        }
}

static void test_adjacent(int rank, int size) {
    int left = (rank - 1 + size) % size, right = (rank + 1) % size;
    int srcs[2] = {left, right}, sw[2] = {10 * left + 1, 10 * right + 2};
    int dsts[2] = {right, left}, dw[2] = {10 * rank + 1, 10 * rank + 2};
    MPI_Comm dg;
    CHECK_CLASS(
        MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, srcs, sw, 2, dsts, dw, MPI_INFO_NULL, 1, &dg),
        MPI_SUCCESS);
    MPI_Comm_set_errhandler(dg, MPI_ERRORS_RETURN);
    int kind = -1, in = -1, out = -1, weighted = -1;
    MPI_Topo_test(dg, &kind);
    CHECK(kind == MPI_DIST_GRAPH, "Topo_test gave %d, expected MPI_DIST_GRAPH", kind);
    MPI_Dist_graph_neighbors_count(dg, &in, &out, &weighted);
    CHECK(in == 2 && out == 2 && weighted == 1, "neighbors_count: %d in, %d out, weighted %d", in, out, weighted);
    int gs[3] = {-1, -1, -1}, gsw[3] = {-1, -1, -1}, gd[3] = {-1, -1, -1}, gdw[3] = {-1, -1, -1};
    CHECK_CLASS(MPI_Dist_graph_neighbors(dg, 3, gs, gsw, 3, gd, gdw), MPI_SUCCESS);
    CHECK(gs[0] == srcs[0] && gs[1] == srcs[1] && gs[2] == -1, "sources [%d %d %d]", gs[0], gs[1], gs[2]);
    CHECK(gsw[0] == sw[0] && gsw[1] == sw[1] && gsw[2] == -1, "source weights [%d %d]", gsw[0], gsw[1]);
    CHECK(gd[0] == dsts[0] && gd[1] == dsts[1] && gd[2] == -1, "destinations [%d %d]", gd[0], gd[1]);
    CHECK(gdw[0] == dw[0] && gdw[1] == dw[1] && gdw[2] == -1, "destination weights [%d %d]", gdw[0], gdw[1]);
    /* MPI_UNWEIGHTED as the weight arguments: the weights are not written. */
    CHECK_CLASS(MPI_Dist_graph_neighbors(dg, 2, gs, MPI_UNWEIGHTED, 2, gd, MPI_UNWEIGHTED), MPI_SUCCESS);
    CHECK_CLASS(MPI_Dist_graph_neighbors(dg, 1, gs, gsw, 2, gd, gdw), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Dist_graph_neighbors(dg, 2, gs, gsw, 1, gd, gdw), MPI_ERR_ARG);
    /* Other kinds' calls. */
    int x[2];
    CHECK_CLASS(MPI_Cartdim_get(dg, x), MPI_ERR_TOPOLOGY);
    CHECK_CLASS(MPI_Graphdims_get(dg, x, x + 1), MPI_ERR_TOPOLOGY);
    /* A dup keeps it. */
    MPI_Comm dup;
    MPI_Comm_dup(dg, &dup);
    MPI_Dist_graph_neighbors(dup, 3, gs, gsw, 3, gd, gdw);
    CHECK(gs[0] == srcs[0] && gsw[1] == sw[1] && gd[1] == dsts[1] && gdw[0] == dw[0], "the dup's graph");
    MPI_Comm_free(&dup);
    MPI_Comm_free(&dg);

    /* Unweighted. */
    CHECK_CLASS(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, srcs, MPI_UNWEIGHTED, 2, dsts, MPI_UNWEIGHTED,
                                               MPI_INFO_NULL, 0, &dg),
                MPI_SUCCESS);
    MPI_Dist_graph_neighbors_count(dg, &in, &out, &weighted);
    CHECK(in == 2 && out == 2 && weighted == 0, "unweighted: %d in, %d out, weighted %d", in, out, weighted);
    gs[0] = gs[1] = -1;
    MPI_Dist_graph_neighbors(dg, 2, gs, MPI_UNWEIGHTED, 2, gd, MPI_UNWEIGHTED);
    CHECK(gs[0] == srcs[0] && gs[1] == srcs[1] && gd[0] == dsts[0] && gd[1] == dsts[1], "unweighted lists");
    MPI_Comm_free(&dg);

    /* No edges, weighted (MPI_WEIGHTS_EMPTY). */
    CHECK_CLASS(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, MPI_WEIGHTS_EMPTY, 0, NULL,
                                               MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 0, &dg),
                MPI_SUCCESS);
    MPI_Dist_graph_neighbors_count(dg, &in, &out, &weighted);
    CHECK(in == 0 && out == 0 && weighted == 1, "empty weighted: %d in, %d out, weighted %d", in, out, weighted);
    MPI_Comm_free(&dg);

    /* Errors (the same on every rank). */
    int far[1] = {size}, neg[1] = {-1}, w1[1] = {1};
    CHECK_CLASS(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, far, w1, 0, NULL, MPI_WEIGHTS_EMPTY,
                                               MPI_INFO_NULL, 0, &dg),
                MPI_ERR_RANK);
    CHECK_CLASS(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, MPI_WEIGHTS_EMPTY, 1, neg, w1,
                                               MPI_INFO_NULL, 0, &dg),
                MPI_ERR_RANK);
    CHECK_CLASS(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, -1, srcs, sw, 2, dsts, dw, MPI_INFO_NULL, 0, &dg),
                MPI_ERR_ARG);
    CHECK_CLASS(
        MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, srcs, MPI_UNWEIGHTED, 2, dsts, dw, MPI_INFO_NULL, 0, &dg),
        MPI_ERR_TOPOLOGY);
    CHECK_CLASS(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, NULL, sw, 2, dsts, dw, MPI_INFO_NULL, 0, &dg),
                MPI_ERR_ARG);
    CHECK_CLASS(MPI_Dist_graph_neighbors_count(MPI_COMM_WORLD, &in, &out, &weighted), MPI_ERR_TOPOLOGY);
}

/* The general form: rank 0 names every edge r -> r+1 (weight 100 + r) and
 * r -> r+2 (weight 200 + r); every rank names the edge r+1 -> r+3
 * (weight 300 + r) for another process. */
static void test_general(int rank, int size) {
    int n = 0, sources[130], degrees[130], dests[260], weights[260], e = 0;
    if (rank == 0) {
        for (int r = 0; r < size; r++) {
            sources[n] = r;
            degrees[n++] = 2;
            dests[e] = (r + 1) % size;
            weights[e++] = 100 + r;
            dests[e] = (r + 2) % size;
            weights[e++] = 200 + r;
        }
    }
    sources[n] = (rank + 1) % size;
    degrees[n++] = 1;
    dests[e] = (rank + 3) % size;
    weights[e++] = 300 + rank;
    MPI_Comm dg;
    CHECK_CLASS(MPI_Dist_graph_create(MPI_COMM_WORLD, n, sources, degrees, dests, weights, MPI_INFO_NULL, 0, &dg),
                MPI_SUCCESS);
    int in = -1, out = -1, weighted = -1;
    MPI_Dist_graph_neighbors_count(dg, &in, &out, &weighted);
    CHECK(in == 3 && out == 3 && weighted == 1, "general: %d in, %d out, weighted %d", in, out, weighted);
    int gs[3], gsw[3], gd[3], gdw[3];
    MPI_Dist_graph_neighbors(dg, 3, gs, gsw, 3, gd, gdw);
    /* In: from r-1 (weight 100 + r-1), r-2 (200 + r-2) and r-2 again (the
     * edge r-3 named: 300 + r-3). Out: to r+1 (100 + r), r+2 (200 + r)
     * and r+2 again (named by r-1: 300 + r-1). */
    int es[3] = {(rank - 1 + size) % size, (rank - 2 + 2 * size) % size, (rank - 2 + 2 * size) % size};
    int esw[3] = {100 + es[0], 200 + es[1], 300 + (rank - 3 + 3 * size) % size};
    int ed[3] = {(rank + 1) % size, (rank + 2) % size, (rank + 2) % size};
    int edw[3] = {100 + rank, 200 + rank, 300 + (rank - 1 + size) % size};
    sort_pairs(3, gs, gsw);
    sort_pairs(3, es, esw);
    sort_pairs(3, gd, gdw);
    sort_pairs(3, ed, edw);
    for (int i = 0; i < 3; i++) {
        CHECK(gs[i] == es[i] && gsw[i] == esw[i], "general: source %d is (%d, w %d), expected (%d, w %d)", i, gs[i],
              gsw[i], es[i], esw[i]);
        CHECK(gd[i] == ed[i] && gdw[i] == edw[i], "general: destination %d is (%d, w %d), expected (%d, w %d)", i,
              gd[i], gdw[i], ed[i], edw[i]);
    }
    /* An exchange over it: each destination gets a value naming the
     * edge's weight, which must arrive in the block of the same edge. */
    MPI_Dist_graph_neighbors(dg, 3, gs, gsw, 3, gd, gdw);
    int send[3], recv[3] = {-1, -1, -1};
    for (int j = 0; j < 3; j++)
        send[j] = gdw[j] * 1000 + rank;
    CHECK_CLASS(MPI_Neighbor_alltoall(send, 1, MPI_INT, recv, 1, MPI_INT, dg), MPI_SUCCESS);
    for (int i = 0; i < 3; i++)
        CHECK(recv[i] == gsw[i] * 1000 + gs[i], "general exchange: block %d is %d, expected %d", i, recv[i],
              gsw[i] * 1000 + gs[i]);
    MPI_Comm_free(&dg);

    /* Unweighted, each rank naming its own outgoing edge. */
    int me[1] = {rank}, one[1] = {1}, next[1] = {(rank + 1) % size};
    CHECK_CLASS(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, me, one, next, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dg),
                MPI_SUCCESS);
    MPI_Dist_graph_neighbors_count(dg, &in, &out, &weighted);
    CHECK(in == 1 && out == 1 && weighted == 0, "own edges: %d in, %d out, weighted %d", in, out, weighted);
    MPI_Dist_graph_neighbors(dg, 1, gs, MPI_UNWEIGHTED, 1, gd, MPI_UNWEIGHTED);
    CHECK(gs[0] == (rank - 1 + size) % size && gd[0] == next[0], "own edges: from %d to %d", gs[0], gd[0]);
    MPI_Comm_free(&dg);

    /* Errors. */
    int negdeg[1] = {-1}, far[1] = {size};
    CHECK_CLASS(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, me, negdeg, next, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dg),
                MPI_ERR_ARG);
    CHECK_CLASS(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, me, one, far, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dg),
                MPI_ERR_RANK);
    CHECK_CLASS(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, far, one, next, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dg),
                MPI_ERR_RANK);
    CHECK_CLASS(MPI_Dist_graph_create(MPI_COMM_WORLD, -1, me, one, next, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dg),
                MPI_ERR_ARG);
}

int main(int argc, char **argv) {
    int rank, size;
    mt_init(&argc, &argv, &rank, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    test_adjacent(rank, size);
    test_general(rank, size);
    int errors = 0;
    MPI_Allreduce(&mt_errors, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    mt_report(rank, errors);
    return errors ? 1 : 0;
}
