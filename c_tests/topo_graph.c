/* Graph topologies through the C ABI: MPI_Graph_create (nodes past the
 * graph get MPI_COMM_NULL, errors), Graphdims_get, Graph_get,
 * Graph_neighbors(_count) for every node, Graph_map, Topo_test, and the
 * calls of another topology kind refused with MPI_ERR_TOPOLOGY. Any
 * number of ranks. */
#include "mpitest.h"

/* A ring over `n` nodes (node i joined to i-1 and i+1; one node has no
 * edge, two nodes one each way) with a self-loop at node 0. */
static int ring(int n, int *index, int *edges) {
    int e = 0;
    for (int i = 0; i < n; i++) {
        if (i == 0)
            edges[e++] = 0;
        if (n > 1)
            edges[e++] = (i + n - 1) % n;
        if (n > 2)
            edges[e++] = (i + 1) % n;
        index[i] = e;
    }
    return e;
}

int main(int argc, char **argv) {
    int rank, size;
    mt_init(&argc, &argv, &rank, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    int index[64], edges[256];
    int nedges = ring(size, index, edges);
    MPI_Comm g;
    CHECK_CLASS(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 1, &g), MPI_SUCCESS);
    MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN);
    int kind = -1, r = -1;
    MPI_Topo_test(g, &kind);
    CHECK(kind == MPI_GRAPH, "Topo_test gave %d, expected MPI_GRAPH", kind);
    MPI_Comm_rank(g, &r);
    CHECK(r == rank, "no reordering: rank %d in the graph, %d in the world", r, rank);

    int nn = -1, ne = -1;
    MPI_Graphdims_get(g, &nn, &ne);
    CHECK(nn == size && ne == nedges, "Graphdims_get: %d nodes %d edges, expected %d %d", nn, ne, size, nedges);
    int gi[64], ge[256];
    CHECK_CLASS(MPI_Graph_get(g, size, nedges, gi, ge), MPI_SUCCESS);
    CHECK(memcmp(gi, index, sizeof(int) * size) == 0, "Graph_get's index differs");
    CHECK(memcmp(ge, edges, sizeof(int) * nedges) == 0, "Graph_get's edges differ");
    if (size > 1)
        CHECK_CLASS(MPI_Graph_get(g, size - 1, nedges, gi, ge), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Graph_get(g, size, nedges - 1, gi, ge), MPI_ERR_ARG);

    for (int node = 0; node < size; node++) {
        int count = -1, nbrs[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
        int start = node == 0 ? 0 : index[node - 1];
        MPI_Graph_neighbors_count(g, node, &count);
        CHECK(count == index[node] - start, "node %d: %d neighbours, expected %d", node, count, index[node] - start);
        MPI_Graph_neighbors(g, node, 8, nbrs);
        for (int i = 0; i < count; i++)
            CHECK(nbrs[i] == edges[start + i], "node %d: neighbour %d is %d, expected %d", node, i, nbrs[i],
                  edges[start + i]);
        CHECK(nbrs[count] == -1, "node %d: Graph_neighbors wrote past the neighbours", node);
    }
    int c;
    CHECK_CLASS(MPI_Graph_neighbors_count(g, size, &c), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Graph_neighbors_count(g, -1, &c), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Graph_neighbors(g, size, 8, edges), MPI_ERR_RANK);
    /* Cartesian and distributed graph calls on a graph. */
    int x[4];
    CHECK_CLASS(MPI_Cartdim_get(g, x), MPI_ERR_TOPOLOGY);
    CHECK_CLASS(MPI_Cart_shift(g, 0, 1, x, x + 1), MPI_ERR_TOPOLOGY);
    CHECK_CLASS(MPI_Dist_graph_neighbors_count(g, x, x + 1, x + 2), MPI_ERR_TOPOLOGY);
    /* A dup keeps the graph. */
    MPI_Comm dup;
    MPI_Comm_dup(g, &dup);
    MPI_Topo_test(dup, &kind);
    MPI_Graphdims_get(dup, &nn, &ne);
    CHECK(kind == MPI_GRAPH && nn == size && ne == nedges, "the dup's graph: kind %d, %d nodes, %d edges", kind, nn,
          ne);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&g);
    /* Graph calls on a communicator without a topology. */
    CHECK_CLASS(MPI_Graphdims_get(MPI_COMM_WORLD, &nn, &ne), MPI_ERR_TOPOLOGY);
    CHECK_CLASS(MPI_Graph_neighbors_count(MPI_COMM_WORLD, 0, &c), MPI_ERR_TOPOLOGY);

    /* A graph of fewer nodes: the others get MPI_COMM_NULL. */
    int half = (size + 1) / 2;
    int hn = ring(half, index, edges);
    CHECK_CLASS(MPI_Graph_create(MPI_COMM_WORLD, half, index, edges, 0, &g), MPI_SUCCESS);
    if (rank < half) {
        CHECK(g != MPI_COMM_NULL, "rank %d is a node of the %d-node graph", rank, half);
        if (g != MPI_COMM_NULL) {
            MPI_Graphdims_get(g, &nn, &ne);
            CHECK(nn == half && ne == hn, "the smaller graph: %d nodes %d edges", nn, ne);
            MPI_Comm_free(&g);
        }
    } else {
        CHECK(g == MPI_COMM_NULL, "rank %d is past the %d-node graph", rank, half);
    }

    /* Graph_map: the identity placement. */
    int newrank = -5;
    CHECK_CLASS(MPI_Graph_map(MPI_COMM_WORLD, half, index, edges, &newrank), MPI_SUCCESS);
    CHECK(newrank == (rank < half ? rank : MPI_UNDEFINED), "Graph_map: %d", newrank);

    /* Errors, the same on every rank. */
    int bad_index[2] = {2, 1}, bad_edges[2] = {0, 0};
    if (size >= 2)
        CHECK_CLASS(MPI_Graph_create(MPI_COMM_WORLD, 2, bad_index, bad_edges, 0, &g), MPI_ERR_ARG);
    int one_index[1] = {1}, far_edge[1] = {size};
    CHECK_CLASS(MPI_Graph_create(MPI_COMM_WORLD, 1, one_index, far_edge, 0, &g), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Graph_create(MPI_COMM_WORLD, size + 1, index, edges, 0, &g), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Graph_create(MPI_COMM_WORLD, -1, index, edges, 0, &g), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Graph_map(MPI_COMM_WORLD, size + 1, index, edges, &newrank), MPI_ERR_ARG);
    /* Zero nodes: every rank gets MPI_COMM_NULL. */
    CHECK_CLASS(MPI_Graph_create(MPI_COMM_WORLD, 0, NULL, NULL, 0, &g), MPI_SUCCESS);
    CHECK(g == MPI_COMM_NULL, "a graph of no node is MPI_COMM_NULL");

    int errors = 0;
    MPI_Allreduce(&mt_errors, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    mt_report(rank, errors);
    return errors ? 1 : 0;
}
