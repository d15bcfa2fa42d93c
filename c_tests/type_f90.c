/* MPI_Type_create_f90_integer/_real/_complex: the type's envelope names
 * the F90 combiner with the asked parameters as contents (MPI 4.1 §5.1.13,
 * as MPICH); the same parameters give the same handle; it is predefined
 * (committed, cannot be freed) and carries the values of the Fortran type
 * it stands for, in messages and reductions. (mpi4py's test_datatype
 * decodes such types.) */
#include "mpitest.h"

static void check_type(MPI_Datatype t, int combiner, int ni, int p, int r, int size, const char *what) {
    int nint = -1, nadd = -1, ndt = -1, comb = -1;
    MPI_Type_get_envelope(t, &nint, &nadd, &ndt, &comb);
    CHECK(comb == combiner && nint == ni && nadd == 0 && ndt == 0, "%s: envelope combiner %d (want %d), %d %d %d",
          what, comb, combiner, nint, nadd, ndt);
    int ints[2] = {-7, -7};
    MPI_Aint addrs[1];
    MPI_Datatype types[1];
    int rc = MPI_Type_get_contents(t, 2, 0, 0, ints, addrs, types);
    CHECK(rc == MPI_SUCCESS, "%s: MPI_Type_get_contents returned %d", what, rc);
    if (ni == 1)
        CHECK(ints[0] == r, "%s: contents [%d], want [%d]", what, ints[0], r);
    else
        CHECK(ints[0] == p && ints[1] == r, "%s: contents [%d, %d], want [%d, %d]", what, ints[0], ints[1], p, r);
    int s = -1;
    MPI_Type_size(t, &s);
    CHECK(s == size, "%s: size %d, want %d", what, s, size);
    MPI_Datatype again = MPI_DATATYPE_NULL;
    if (combiner == MPI_COMBINER_F90_INTEGER)
        MPI_Type_create_f90_integer(r, &again);
    else if (combiner == MPI_COMBINER_F90_REAL)
        MPI_Type_create_f90_real(p, r, &again);
    else
        MPI_Type_create_f90_complex(p, r, &again);
    CHECK(again == t, "%s: a second call gave another handle", what);
    MPI_Datatype copy = t;
    CHECK_CLASS(MPI_Type_free(&copy), MPI_ERR_TYPE);
    /* A duplicate is an ordinary derived type. */
    MPI_Datatype dup;
    MPI_Type_dup(t, &dup);
    MPI_Type_get_envelope(dup, &nint, &nadd, &ndt, &comb);
    CHECK(comb == MPI_COMBINER_DUP && ndt == 1, "%s: its dup's combiner %d", what, comb);
    MPI_Type_get_contents(dup, 0, 0, 1, ints, addrs, types);
    CHECK(types[0] == t, "%s: the dup names %#x, not the type %#x", what, (unsigned)types[0], (unsigned)t);
    MPI_Type_free(&dup);
}

int main(int argc, char **argv) {
    int rank, size;
    mt_init(&argc, &argv, &rank, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    MPI_Datatype i4, i8, r8, c8, r4u;
    MPI_Type_create_f90_integer(4, &i4);
    check_type(i4, MPI_COMBINER_F90_INTEGER, 1, 0, 4, 2, "integer r=4 (INTEGER2)");
    MPI_Type_create_f90_integer(15, &i8);
    check_type(i8, MPI_COMBINER_F90_INTEGER, 1, 0, 15, 8, "integer r=15");
    CHECK(i4 != i8, "two integer kinds share a handle");
    MPI_Type_create_f90_real(15, 300, &r8);
    check_type(r8, MPI_COMBINER_F90_REAL, 2, 15, 300, 8, "real (15, 300)");
    MPI_Type_create_f90_real(MPI_UNDEFINED, 30, &r4u);
    check_type(r4u, MPI_COMBINER_F90_REAL, 2, MPI_UNDEFINED, 30, 4, "real (undefined, 30)");
    MPI_Type_create_f90_complex(6, 30, &c8);
    check_type(c8, MPI_COMBINER_F90_COMPLEX, 2, 6, 30, 8, "complex (6, 30)");
    CHECK_CLASS(MPI_Type_create_f90_integer(40, &i4), MPI_ERR_ARG);

    /* Usable at once (committed), in a reduction and a message. */
    long long v = rank + 1, sum = 0;
    int rc = MPI_Allreduce(&v, &sum, 1, i8, MPI_SUM, MPI_COMM_WORLD);
    CHECK(rc == MPI_SUCCESS && sum == (long long)size * (size + 1) / 2, "allreduce on integer r=15: rc %d sum %lld",
          rc, sum);
    double d[2] = {rank + 0.5, -1.25}, back[2] = {0, 0};
    int peer = (rank + 1) % size, from = (rank + size - 1) % size;
    MPI_Sendrecv(d, 2, r8, peer, 5, back, 2, MPI_DOUBLE, from, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(back[0] == from + 0.5 && back[1] == -1.25, "real (15, 300) carried %g %g", back[0], back[1]);

    int errors = mt_errors;
    MPI_Allreduce(MPI_IN_PLACE, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    mt_report(rank, errors);
    return errors ? 1 : 0;
}
