/* Cartesian topologies through the C ABI: MPI_Dims_create (balanced
 * grids, preset dimensions, errors), MPI_Cart_create (ranks past the grid
 * get MPI_COMM_NULL, zero dimensions, errors), Cart_get/Cartdim_get/
 * Cart_rank/Cart_coords against the row-major layout, Cart_shift at
 * periodic and non-periodic edges (checked by a real exchange: an
 * MPI_PROC_NULL partner leaves the buffer as it was), Cart_sub, Cart_map,
 * Topo_test, and the topology kept by MPI_Comm_dup but not by a split.
 * Any number of ranks. */
#include "mpitest.h"

static int dims_case(int nnodes, int ndims, const int *preset, const int *expected) {
    int dims[8];
    memcpy(dims, preset, sizeof(int) * ndims);
    int rc = MPI_Dims_create(nnodes, ndims, dims);
    CHECK(rc == MPI_SUCCESS, "Dims_create(%d, %d) failed: %d", nnodes, ndims, rc);
    int bad = 0;
    for (int i = 0; i < ndims; i++)
        if (dims[i] != expected[i])
            bad = 1;
    CHECK(!bad, "Dims_create(%d, %d): got [%d %d %d %d], expected [%d %d %d %d]", nnodes, ndims, dims[0],
          ndims > 1 ? dims[1] : -1, ndims > 2 ? dims[2] : -1, ndims > 3 ? dims[3] : -1, expected[0],
          ndims > 1 ? expected[1] : -1, ndims > 2 ? expected[2] : -1, ndims > 3 ? expected[3] : -1);
    return bad;
}

static void test_dims_create(void) {
    dims_case(6, 2, (int[]){0, 0}, (int[]){3, 2});
    dims_case(7, 2, (int[]){0, 0}, (int[]){7, 1});
    dims_case(16, 3, (int[]){0, 0, 0}, (int[]){4, 2, 2});
    dims_case(1, 3, (int[]){0, 0, 0}, (int[]){1, 1, 1});
    dims_case(24, 2, (int[]){0, 0}, (int[]){6, 4});
    dims_case(72, 2, (int[]){0, 0}, (int[]){9, 8});
    dims_case(4, 1, (int[]){0}, (int[]){4});
    /* Preset dimensions are kept; the free ones share the rest. */
    dims_case(12, 2, (int[]){3, 0}, (int[]){3, 4});
    dims_case(12, 3, (int[]){0, 3, 0}, (int[]){2, 3, 2});
    dims_case(24, 3, (int[]){0, 0, 2}, (int[]){4, 3, 2});
    dims_case(12, 2, (int[]){3, 4}, (int[]){3, 4});
    /* ndims 0 with a NULL array is fine. */
    CHECK_CLASS(MPI_Dims_create(1, 0, NULL), MPI_SUCCESS);
    /* Errors: fixed dimensions that do not divide, a negative entry, a
     * negative nnodes or ndims, a NULL array. */
    int d[3] = {5, 0};
    CHECK_CLASS(MPI_Dims_create(12, 2, d), MPI_ERR_DIMS);
    int e[2] = {3, 5};
    CHECK_CLASS(MPI_Dims_create(12, 2, e), MPI_ERR_DIMS);
    int f[2] = {-1, 0};
    CHECK_CLASS(MPI_Dims_create(12, 2, f), MPI_ERR_DIMS);
    int g[2] = {0, 0};
    CHECK_CLASS(MPI_Dims_create(-4, 2, g), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Dims_create(4, -1, g), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Dims_create(4, 2, NULL), MPI_ERR_ARG);
}

/* The rank of `coords` in a row-major grid. */
static int row_major(int ndims, const int *dims, const int *coords) {
    int r = 0;
    for (int i = 0; i < ndims; i++)
        r = r * dims[i] + coords[i];
    return r;
}

static void test_grid(int rank, int size) {
    int dims[2] = {0, 0}, periods[2] = {1, 0};
    MPI_Dims_create(size, 2, dims);
    MPI_Comm cart;
    CHECK_CLASS(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &cart), MPI_SUCCESS);
    CHECK(cart != MPI_COMM_NULL, "every rank is in a grid of the world's size");
    MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN);
    int kind = -1, crank = -1, csize = -1, nd = -1;
    MPI_Topo_test(cart, &kind);
    CHECK(kind == MPI_CART, "Topo_test gave %d, expected MPI_CART", kind);
    MPI_Comm_rank(cart, &crank);
    MPI_Comm_size(cart, &csize);
    CHECK(crank == rank && csize == size, "ranks are not reordered: rank %d size %d", crank, csize);
    MPI_Cartdim_get(cart, &nd);
    CHECK(nd == 2, "Cartdim_get gave %d", nd);

    /* Cart_get: the dims, periods and this rank's row-major coordinates. */
    int gd[3] = {-1, -1, -1}, gp[3] = {-1, -1, -1}, gc[3] = {-1, -1, -1};
    CHECK_CLASS(MPI_Cart_get(cart, 3, gd, gp, gc), MPI_SUCCESS);
    int my[2] = {rank / dims[1], rank % dims[1]};
    CHECK(gd[0] == dims[0] && gd[1] == dims[1] && gd[2] == -1, "Cart_get dims [%d %d %d]", gd[0], gd[1], gd[2]);
    CHECK(gp[0] == 1 && gp[1] == 0, "Cart_get periods [%d %d]", gp[0], gp[1]);
    CHECK(gc[0] == my[0] && gc[1] == my[1], "Cart_get coords [%d %d], expected [%d %d]", gc[0], gc[1], my[0], my[1]);
    CHECK_CLASS(MPI_Cart_get(cart, 1, gd, gp, gc), MPI_ERR_ARG);

    /* Cart_coords and Cart_rank are inverses over the whole grid. */
    for (int r = 0; r < size; r++) {
        int c[2] = {-1, -1}, back = -1;
        MPI_Cart_coords(cart, r, 2, c);
        CHECK(c[0] == r / dims[1] && c[1] == r % dims[1], "Cart_coords(%d) = [%d %d]", r, c[0], c[1]);
        MPI_Cart_rank(cart, c, &back);
        CHECK(back == r, "Cart_rank(Cart_coords(%d)) = %d", r, back);
    }
    /* The periodic dimension wraps; the other one is an error outside. */
    int wrapped[2] = {my[0] + dims[0], my[1]}, back = -1;
    MPI_Cart_rank(cart, wrapped, &back);
    CHECK(back == rank, "Cart_rank wraps the periodic dimension: %d, expected %d", back, rank);
    wrapped[0] = my[0] - 3 * dims[0];
    MPI_Cart_rank(cart, wrapped, &back);
    CHECK(back == rank, "Cart_rank wraps negative coordinates: %d, expected %d", back, rank);
    int outside[2] = {0, dims[1]};
    CHECK_CLASS(MPI_Cart_rank(cart, outside, &back), MPI_ERR_ARG);
    outside[1] = -1;
    CHECK_CLASS(MPI_Cart_rank(cart, outside, &back), MPI_ERR_ARG);
    int c2[2];
    CHECK_CLASS(MPI_Cart_coords(cart, size, 2, c2), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Cart_coords(cart, -1, 2, c2), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Cart_coords(cart, 0, 1, c2), MPI_ERR_ARG);

    /* Shifts: dimension 0 is periodic, dimension 1 is not. */
    int src = -5, dst = -5;
    MPI_Cart_shift(cart, 0, 1, &src, &dst);
    int up[2] = {(my[0] + 1) % dims[0], my[1]}, down[2] = {(my[0] - 1 + dims[0]) % dims[0], my[1]};
    CHECK(src == row_major(2, dims, down) && dst == row_major(2, dims, up),
          "periodic shift by 1: source %d dest %d, expected %d %d", src, dst, row_major(2, dims, down),
          row_major(2, dims, up));
    MPI_Cart_shift(cart, 0, 0, &src, &dst);
    CHECK(src == rank && dst == rank, "a shift by 0 gives this rank: %d %d", src, dst);
    MPI_Cart_shift(cart, 1, 1, &src, &dst);
    int exp_src = my[1] > 0 ? rank - 1 : MPI_PROC_NULL;
    int exp_dst = my[1] < dims[1] - 1 ? rank + 1 : MPI_PROC_NULL;
    CHECK(src == exp_src && dst == exp_dst, "non-periodic shift by 1: source %d dest %d, expected %d %d", src,
          dst, exp_src, exp_dst);
    /* The exchange along it: a rank at an edge keeps its buffer. */
    int out = 1000 + rank, in = -7;
    MPI_Sendrecv(&out, 1, MPI_INT, dst, 3, &in, 1, MPI_INT, src, 3, cart, MPI_STATUS_IGNORE);
    CHECK(in == (src == MPI_PROC_NULL ? -7 : 1000 + src), "shift exchange: got %d from %d", in, src);
    MPI_Cart_shift(cart, 1, -dims[1], &src, &dst);
    CHECK(src == MPI_PROC_NULL && dst == MPI_PROC_NULL, "a shift past the whole dimension: %d %d", src, dst);
    MPI_Cart_shift(cart, 0, -2 * dims[0] - 1, &src, &dst);
    CHECK(src == row_major(2, dims, up) && dst == row_major(2, dims, down),
          "periodic shift by -(2n+1): source %d dest %d", src, dst);
    CHECK_CLASS(MPI_Cart_shift(cart, 2, 1, &src, &dst), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Cart_shift(cart, -1, 1, &src, &dst), MPI_ERR_ARG);

    /* Cart_sub keeping dimension 1: the row of this rank. */
    MPI_Comm row, col;
    CHECK_CLASS(MPI_Cart_sub(cart, (int[]){0, 1}, &row), MPI_SUCCESS);
    int rr = -1, rs = -1;
    MPI_Comm_rank(row, &rr);
    MPI_Comm_size(row, &rs);
    CHECK(rr == my[1] && rs == dims[1], "row: rank %d size %d, expected %d %d", rr, rs, my[1], dims[1]);
    int sum = 0;
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, row);
    int first = my[0] * dims[1];
    CHECK(sum == dims[1] * first + dims[1] * (dims[1] - 1) / 2, "row members: sum of world ranks %d", sum);
    MPI_Cartdim_get(row, &nd);
    MPI_Cart_get(row, 1, gd, gp, gc);
    CHECK(nd == 1 && gd[0] == dims[1] && gp[0] == 0 && gc[0] == my[1], "row grid: %d dims [%d] periods [%d] coords [%d]",
          nd, gd[0], gp[0], gc[0]);
    /* Keeping dimension 0: the column, periodic. */
    CHECK_CLASS(MPI_Cart_sub(cart, (int[]){1, 0}, &col), MPI_SUCCESS);
    MPI_Comm_rank(col, &rr);
    MPI_Comm_size(col, &rs);
    CHECK(rr == my[0] && rs == dims[0], "column: rank %d size %d, expected %d %d", rr, rs, my[0], dims[0]);
    MPI_Cart_get(col, 1, gd, gp, gc);
    CHECK(gd[0] == dims[0] && gp[0] == 1 && gc[0] == my[0], "column grid: dims [%d] periods [%d] coords [%d]", gd[0],
          gp[0], gc[0]);
    MPI_Comm_set_errhandler(col, MPI_ERRORS_RETURN);
    MPI_Cart_shift(col, 0, 1, &src, &dst);
    CHECK(src == (my[0] - 1 + dims[0]) % dims[0] && dst == (my[0] + 1) % dims[0], "column shift: %d %d", src, dst);
    MPI_Comm_free(&row);
    MPI_Comm_free(&col);
    /* Keeping no dimension: as MPICH, the first rank gets a
     * zero-dimensional grid of itself, the others MPI_COMM_NULL. */
    MPI_Comm none;
    CHECK_CLASS(MPI_Cart_sub(cart, (int[]){0, 0}, &none), MPI_SUCCESS);
    if (rank == 0) {
        int result = -1;
        CHECK(none != MPI_COMM_NULL, "rank 0 gets the zero-dimensional grid");
        if (none != MPI_COMM_NULL) {
            MPI_Comm_compare(none, MPI_COMM_SELF, &result);
            CHECK(result == MPI_CONGRUENT, "the zero-dimensional grid is congruent to MPI_COMM_SELF: %d", result);
            MPI_Cartdim_get(none, &nd);
            CHECK(nd == 0, "its Cartdim_get: %d", nd);
            MPI_Comm_set_errhandler(none, MPI_ERRORS_RETURN);
            CHECK_CLASS(MPI_Cart_shift(none, 0, 1, &src, &dst), MPI_ERR_TOPOLOGY);
            MPI_Comm_free(&none);
        }
    } else {
        CHECK(none == MPI_COMM_NULL, "rank %d gets MPI_COMM_NULL from a Cart_sub keeping nothing", rank);
    }

    /* A dup keeps the topology, a split does not. */
    MPI_Comm dup, split;
    MPI_Comm_dup(cart, &dup);
    MPI_Topo_test(dup, &kind);
    CHECK(kind == MPI_CART, "the dup's Topo_test: %d", kind);
    MPI_Cart_get(dup, 2, gd, gp, gc);
    CHECK(gd[0] == dims[0] && gd[1] == dims[1] && gc[0] == my[0] && gc[1] == my[1], "the dup's grid");
    MPI_Comm idup;
    MPI_Request req;
    MPI_Comm_idup(cart, &idup, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Topo_test(idup, &kind);
    CHECK(kind == MPI_CART, "the idup's Topo_test: %d", kind);
    MPI_Cartdim_get(idup, &nd);
    CHECK(nd == 2, "the idup's Cartdim_get: %d", nd);
    MPI_Comm_free(&idup);
    MPI_Comm_split(cart, 0, rank, &split);
    MPI_Topo_test(split, &kind);
    CHECK(kind == MPI_UNDEFINED, "a split has no topology: %d", kind);
    MPI_Comm_free(&dup);
    MPI_Comm_free(&split);
    MPI_Comm_free(&cart);
}

static void test_create_cases(int rank, int size) {
    MPI_Comm c;
    /* A grid smaller than the communicator: the others get MPI_COMM_NULL. */
    int d1[1] = {size > 1 ? size - 1 : 1}, p1[1] = {0};
    CHECK_CLASS(MPI_Cart_create(MPI_COMM_WORLD, 1, d1, p1, 0, &c), MPI_SUCCESS);
    if (rank < d1[0]) {
        int s = -1, r = -1;
        CHECK(c != MPI_COMM_NULL, "rank %d is in the grid of %d", rank, d1[0]);
        if (c != MPI_COMM_NULL) {
            MPI_Comm_size(c, &s);
            MPI_Comm_rank(c, &r);
            CHECK(s == d1[0] && r == rank, "the smaller grid: size %d rank %d", s, r);
            MPI_Comm_free(&c);
        }
    } else {
        CHECK(c == MPI_COMM_NULL, "rank %d is past the grid of %d and gets MPI_COMM_NULL", rank, d1[0]);
    }
    /* Zero dimensions: a grid of one process. */
    CHECK_CLASS(MPI_Cart_create(MPI_COMM_WORLD, 0, NULL, NULL, 0, &c), MPI_SUCCESS);
    if (rank == 0) {
        int nd = -1, s = -1;
        CHECK(c != MPI_COMM_NULL, "rank 0 gets the zero-dimensional grid");
        if (c != MPI_COMM_NULL) {
            MPI_Cartdim_get(c, &nd);
            MPI_Comm_size(c, &s);
            CHECK(nd == 0 && s == 1, "zero-dimensional grid: %d dims, size %d", nd, s);
            MPI_Comm_free(&c);
        }
    } else {
        CHECK(c == MPI_COMM_NULL, "rank %d is past a zero-dimensional grid", rank);
    }
    /* Errors (the same on every rank, so none waits for another). */
    int big[2] = {size + 1, 1}, p2[2] = {0, 0};
    c = MPI_COMM_SELF;
    CHECK_CLASS(MPI_Cart_create(MPI_COMM_WORLD, 2, big, p2, 0, &c), MPI_ERR_ARG);
    CHECK(c == MPI_COMM_NULL, "a failed Cart_create leaves MPI_COMM_NULL");
    int zero[2] = {0, 1};
    CHECK_CLASS(MPI_Cart_create(MPI_COMM_WORLD, 2, zero, p2, 0, &c), MPI_ERR_DIMS);
    int neg[2] = {-2, 1};
    CHECK_CLASS(MPI_Cart_create(MPI_COMM_WORLD, 2, neg, p2, 0, &c), MPI_ERR_DIMS);
    CHECK_CLASS(MPI_Cart_create(MPI_COMM_WORLD, -1, big, p2, 0, &c), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Cart_create(MPI_COMM_WORLD, 2, NULL, p2, 0, &c), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Cart_create(MPI_COMM_NULL, 1, d1, p1, 0, &c), MPI_ERR_COMM);

    /* Cart_map: the identity placement. */
    int newrank = -5, one[1] = {1};
    CHECK_CLASS(MPI_Cart_map(MPI_COMM_WORLD, 1, one, p1, &newrank), MPI_SUCCESS);
    CHECK(newrank == (rank == 0 ? 0 : MPI_UNDEFINED), "Cart_map of a 1-grid: %d", newrank);
    int all[1] = {size};
    MPI_Cart_map(MPI_COMM_WORLD, 1, all, p1, &newrank);
    CHECK(newrank == rank, "Cart_map of the full grid: %d", newrank);
    CHECK_CLASS(MPI_Cart_map(MPI_COMM_WORLD, 2, big, p2, &newrank), MPI_ERR_DIMS);

    /* Calls that need a Cartesian topology, on a communicator without. */
    int x[2], kind = -1;
    MPI_Topo_test(MPI_COMM_WORLD, &kind);
    CHECK(kind == MPI_UNDEFINED, "MPI_COMM_WORLD has no topology: %d", kind);
    CHECK_CLASS(MPI_Cartdim_get(MPI_COMM_WORLD, x), MPI_ERR_TOPOLOGY);
    CHECK_CLASS(MPI_Cart_get(MPI_COMM_WORLD, 2, x, x, x), MPI_ERR_TOPOLOGY);
    CHECK_CLASS(MPI_Cart_rank(MPI_COMM_WORLD, x, x), MPI_ERR_TOPOLOGY);
    CHECK_CLASS(MPI_Cart_coords(MPI_COMM_WORLD, 0, 2, x), MPI_ERR_TOPOLOGY);
    CHECK_CLASS(MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, x, x + 1), MPI_ERR_TOPOLOGY);
    CHECK_CLASS(MPI_Cart_sub(MPI_COMM_WORLD, x, &c), MPI_ERR_TOPOLOGY);
    CHECK_CLASS(MPI_Topo_test(MPI_COMM_NULL, &kind), MPI_ERR_COMM);
}

int main(int argc, char **argv) {
    int rank, size;
    mt_init(&argc, &argv, &rank, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    test_dims_create();
    test_grid(rank, size);
    test_create_cases(rank, size);
    int errors = 0;
    MPI_Allreduce(&mt_errors, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    mt_report(rank, errors);
    return errors ? 1 : 0;
}
