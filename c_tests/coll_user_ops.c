/* User operations: a commutative one and a non-commutative one (2x2
 * matrix product, whose result depends on rank order) through Reduce from
 * every root, Allreduce (short and long), Reduce_scatter(_block), Scan and
 * Exscan; a user function on a datatype with gaps (it sees the user's
 * layout and the datatype handle it was called for); the large-count
 * MPI_Op_create_c form; MPI_Op_commutative, MPI_Op_free, MPI_Reduce_local
 * (user and predefined operations, on a type with gaps). */
#include <stdint.h>
#include "mpitest.h"

static int rank, size;
static MPI_Datatype matrix_type, gapped_type;
static int bad_datatype_seen = 0;

typedef struct {
    uint32_t a, b, c, d;
} mat;

static mat product(mat x, mat y) {
    mat m = {x.a * y.a + x.b * y.c, x.a * y.b + x.b * y.d, x.c * y.a + x.d * y.c, x.c * y.b + x.d * y.d};
    return m;
}

static mat matrix_of(int r, int i) {
    mat m = {(uint32_t)(r + 2), (uint32_t)(i + 1), (uint32_t)(r * 3 + 1), (uint32_t)(i % 2)};
    return m;
}

/* inout[i] = in[i] * inout[i]: the left operand comes from lower ranks. */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt) {
    if (*dt != matrix_type) bad_datatype_seen++;
    mat *a = in, *b = inout;
    for (int i = 0; i < *len; i++) b[i] = product(a[i], b[i]);
}

static void matmul_c(void *in, void *inout, MPI_Count *len, MPI_Datatype *dt) {
    if (*dt != matrix_type) bad_datatype_seen++;
    mat *a = in, *b = inout;
    for (MPI_Count i = 0; i < *len; i++) b[i] = product(a[i], b[i]);
}

static void int_sum(void *in, void *inout, int *len, MPI_Datatype *dt) {
    (void)dt;
    int *a = in, *b = inout;
    for (int i = 0; i < *len; i++) b[i] += a[i];
}

/* The gapped type: vector(2, 1, 2) of int, extent 3 ints, data at 0, 2.
 * The function must see that layout. */
static void gapped_max(void *in, void *inout, int *len, MPI_Datatype *dt) {
    if (*dt != gapped_type) bad_datatype_seen++;
    int *a = in, *b = inout;
    for (int i = 0; i < *len; i++)
        for (int k = 0; k <= 2; k += 2)
            if (a[i * 3 + k] > b[i * 3 + k]) b[i * 3 + k] = a[i * 3 + k];
}

static mat ordered_product(int first, int last, int i) {
    mat m = matrix_of(first, i);
    for (int r = first + 1; r <= last; r++) m = product(m, matrix_of(r, i));
    return m;
}

static int mat_eq(mat x, mat y) { return x.a == y.a && x.b == y.b && x.c == y.c && x.d == y.d; }

static void check_mats(const mat *got, int n, int first, int last, int offset, const char *what) {
    for (int i = 0; i < n; i++)
        if (!mat_eq(got[i], ordered_product(first, last, offset + i))) {
            CHECK(0, "%s: element %d is not the product of ranks %d..%d in order", what, i, first, last);
            return;
        }
}

static void test_noncommutative(MPI_Op op, int count) {
    mat *in = malloc(sizeof(mat) * (count * size + 1)), *out = malloc(sizeof(mat) * (count * size + 1));
    for (int i = 0; i < count; i++) in[i] = matrix_of(rank, i);
    for (int root = 0; root < size; root += (size > 4 ? 3 : 1)) {
        MPI_Reduce(in, out, count, matrix_type, op, root, MPI_COMM_WORLD);
        if (rank == root) check_mats(out, count, 0, size - 1, 0, "reduce");
    }
    MPI_Allreduce(in, out, count, matrix_type, op, MPI_COMM_WORLD);
    check_mats(out, count, 0, size - 1, 0, "allreduce");
    memcpy(out, in, sizeof(mat) * count);
    MPI_Allreduce(MPI_IN_PLACE, out, count, matrix_type, op, MPI_COMM_WORLD);
    check_mats(out, count, 0, size - 1, 0, "allreduce in place");
    MPI_Scan(in, out, count, matrix_type, op, MPI_COMM_WORLD);
    check_mats(out, count, 0, rank, 0, "scan");
    MPI_Exscan(in, out, count, matrix_type, op, MPI_COMM_WORLD);
    if (rank > 0) check_mats(out, count, 0, rank - 1, 0, "exscan");
    /* reduce_scatter_block: member r gets elements r*count.. */
    for (int i = 0; i < count * size; i++) in[i] = matrix_of(rank, i);
    MPI_Reduce_scatter_block(in, out, count, matrix_type, op, MPI_COMM_WORLD);
    check_mats(out, count, 0, size - 1, rank * count, "reduce_scatter_block");
    int *counts = malloc(sizeof(int) * size), first = 0, total = 0;
    for (int r = 0; r < size; r++) {
        counts[r] = (r % 2) ? count : 1;
        if (r < rank) first += counts[r];
        total += counts[r];
    }
    for (int i = 0; i < total; i++) in[i] = matrix_of(rank, i);
    MPI_Reduce_scatter(in, out, counts, matrix_type, op, MPI_COMM_WORLD);
    check_mats(out, counts[rank], 0, size - 1, first, "reduce_scatter");
    free(counts);
    free(in);
    free(out);
}

static void test_commutative(void) {
    MPI_Op op;
    int commute = -1;
    MPI_Op_create(int_sum, 1, &op);
    MPI_Op_commutative(op, &commute);
    CHECK(commute == 1, "a commutative user op says %d", commute);
    int n = 30000; /* long enough for the long-vector allreduce */
    int *in = malloc(sizeof(int) * n), *out = malloc(sizeof(int) * n);
    for (int i = 0; i < n; i++) in[i] = rank * 3 + i;
    MPI_Allreduce(in, out, n, MPI_INT, op, MPI_COMM_WORLD);
    for (int i = 0; i < n; i++)
        if (out[i] != 3 * size * (size - 1) / 2 + size * i) {
            CHECK(0, "commutative user allreduce [%d] = %d", i, out[i]);
            break;
        }
    MPI_Reduce_scatter_block(in, out, n / size, MPI_INT, op, MPI_COMM_WORLD);
    for (int i = 0; i < n / size; i++)
        if (out[i] != 3 * size * (size - 1) / 2 + size * (rank * (n / size) + i)) {
            CHECK(0, "commutative user reduce_scatter_block [%d] = %d", i, out[i]);
            break;
        }
    MPI_Op_free(&op);
    CHECK(op == MPI_OP_NULL, "MPI_Op_free leaves MPI_OP_NULL");
    free(in);
    free(out);
}

static void test_gapped(void) {
    MPI_Op op;
    MPI_Op_create(gapped_max, 1, &op);
    enum { C = 5 };
    int in[C * 3], out[C * 3];
    for (int i = 0; i < C * 3; i++) {
        in[i] = (i % 3 == 1) ? -99 : (rank * 7 + i) % 13;
        out[i] = -5;
    }
    MPI_Allreduce(in, out, C, gapped_type, op, MPI_COMM_WORLD);
    for (int i = 0; i < C * 3; i++) {
        int exp = -5;
        if (i % 3 != 1) {
            exp = 0;
            for (int r = 0; r < size; r++)
                if ((r * 7 + i) % 13 > exp) exp = (r * 7 + i) % 13;
        }
        CHECK(out[i] == exp, "gapped user allreduce int %d = %d, expected %d", i, out[i], exp);
    }
    /* Reduce_local calls the function on the user's buffers directly */
    int a[C * 3], b[C * 3];
    for (int i = 0; i < C * 3; i++) {
        a[i] = i;
        b[i] = (i % 3 == 1) ? -1 : 7;
    }
    CHECK(MPI_Reduce_local(a, b, C, gapped_type, op) == MPI_SUCCESS, "reduce_local user");
    for (int i = 0; i < C * 3; i++) CHECK(b[i] == (i % 3 == 1 ? -1 : (i > 7 ? i : 7)), "reduce_local user [%d] = %d", i, b[i]);
    /* and a predefined op on the gapped type leaves the gaps alone */
    for (int i = 0; i < C * 3; i++) b[i] = (i % 3 == 1) ? -1 : 100;
    CHECK(MPI_Reduce_local(a, b, C, gapped_type, MPI_SUM) == MPI_SUCCESS, "reduce_local sum");
    for (int i = 0; i < C * 3; i++) CHECK(b[i] == (i % 3 == 1 ? -1 : 100 + i), "reduce_local sum [%d] = %d", i, b[i]);
    MPI_Op_free(&op);
}

static void test_large_count_form(void) {
    MPI_Op op;
    CHECK(MPI_Op_create_c(matmul_c, 0, &op) == MPI_SUCCESS, "op_create_c");
    enum { C = 4 };
    mat in[C], out[C];
    for (int i = 0; i < C; i++) in[i] = matrix_of(rank, i);
    CHECK(MPI_Allreduce_c(in, out, C, matrix_type, op, MPI_COMM_WORLD) == MPI_SUCCESS, "allreduce_c");
    check_mats(out, C, 0, size - 1, 0, "allreduce_c with a large-count user op");
    mat x = matrix_of(1, 0), y = matrix_of(2, 0);
    CHECK(MPI_Reduce_local_c(&x, &y, 1, matrix_type, op) == MPI_SUCCESS, "reduce_local_c");
    CHECK(mat_eq(y, product(matrix_of(1, 0), matrix_of(2, 0))), "reduce_local_c result");
    MPI_Op_free(&op);
}

static void test_op_objects(void) {
    int commute = -1;
    MPI_Op_commutative(MPI_SUM, &commute);
    CHECK(commute == 1, "MPI_SUM commutes");
    MPI_Op_commutative(MPI_MAXLOC, &commute);
    CHECK(commute == 1, "MPI_MAXLOC commutes");
    MPI_Op op, freed;
    MPI_Op_create(matmul, 0, &op);
    MPI_Op_commutative(op, &commute);
    CHECK(commute == 0, "a non-commutative user op says %d", commute);
    freed = op;
    MPI_Op_free(&op);
    CHECK(op == MPI_OP_NULL, "MPI_Op_free leaves MPI_OP_NULL");
    int v = 1, w;
    CHECK_CLASS(MPI_Op_commutative(freed, &commute), MPI_ERR_OP);
    CHECK_CLASS(MPI_Allreduce(&v, &w, 1, MPI_INT, freed, MPI_COMM_WORLD), MPI_ERR_OP);
    CHECK_CLASS(MPI_Op_free(&freed), MPI_ERR_OP);
    MPI_Op builtin = MPI_SUM;
    CHECK_CLASS(MPI_Op_free(&builtin), MPI_ERR_OP);
    CHECK_CLASS(MPI_Op_commutative(MPI_OP_NULL, &commute), MPI_ERR_OP);
    CHECK_CLASS(MPI_Op_create(NULL, 1, &op), MPI_ERR_ARG);
    /* an op made in one place keeps working after others are freed */
    MPI_Op a, b;
    MPI_Op_create(int_sum, 1, &a);
    MPI_Op_create(int_sum, 1, &b);
    MPI_Op_free(&a);
    v = rank + 1;
    CHECK(MPI_Allreduce(&v, &w, 1, MPI_INT, b, MPI_COMM_WORLD) == MPI_SUCCESS && w == size * (size + 1) / 2,
          "op b after freeing a: %d", w);
    MPI_Op_free(&b);
}

int main(int argc, char **argv) {
    mt_init(&argc, &argv, &rank, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Type_contiguous(4, MPI_UINT32_T, &matrix_type);
    MPI_Type_commit(&matrix_type);
    MPI_Type_vector(2, 1, 2, MPI_INT, &gapped_type);
    MPI_Type_commit(&gapped_type);

    MPI_Op op;
    MPI_Op_create(matmul, 0, &op);
    test_noncommutative(op, 1);
    test_noncommutative(op, 3);
    test_noncommutative(op, 5000); /* 80 KB: past the long-message thresholds */
    MPI_Op_free(&op);
    test_commutative();
    test_gapped();
    test_large_count_form();
    test_op_objects();
    CHECK(bad_datatype_seen == 0, "user functions got the wrong datatype handle %d times", bad_datatype_seen);

    MPI_Type_free(&matrix_type);
    MPI_Type_free(&gapped_type);
    int errs = 0;
    MPI_Allreduce(&mt_errors, &errs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    mt_report(rank, errs);
    MPI_Finalize();
    return 0;
}
