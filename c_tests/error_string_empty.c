/* MPI 4.1 §9.5: a user-defined error class or code that has no string of
 * its own has the empty string, also when its class has one; deleting a
 * code's string gives the empty string back. (mpi4py's test_errorcode
 * checks this.) */
#include "mpitest.h"

static void expect_text(int code, const char *want, const char *what) {
    char text[MPI_MAX_ERROR_STRING];
    int len = -1;
    int rc = MPI_Error_string(code, text, &len);
    CHECK(rc == MPI_SUCCESS, "MPI_Error_string(%s) returned %d", what, rc);
    if (rc == MPI_SUCCESS)
        CHECK(strcmp(text, want) == 0 && len == (int)strlen(want), "%s: '%s' (len %d), expected '%s'", what,
              text, len, want);
}

int main(int argc, char **argv) {
    int rank, size;
    mt_init(&argc, &argv, &rank, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    int cls, code, other;
    MPI_Add_error_class(&cls);
    expect_text(cls, "", "a new class");
    MPI_Add_error_string(cls, "class text");
    expect_text(cls, "class text", "the class after its string");
    MPI_Add_error_code(cls, &code);
    expect_text(code, "", "a new code of a class with a string");
    MPI_Add_error_string(code, "code text");
    expect_text(code, "code text", "the code after its string");
    CHECK(MPIX_Delete_error_string(code) == MPI_SUCCESS, "delete the code's string");
    expect_text(code, "", "the code after its string was deleted");
    expect_text(cls, "class text", "the class after the code's string was deleted");
    /* A code added to a predefined class has no string either. */
    MPI_Add_error_code(MPI_ERR_OTHER, &other);
    expect_text(other, "", "a new code of MPI_ERR_OTHER");
    int c = -1;
    MPI_Error_class(other, &c);
    CHECK(c == MPI_ERR_OTHER, "class of the MPI_ERR_OTHER code: %d", c);

    int errors = mt_errors;
    MPI_Allreduce(MPI_IN_PLACE, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    mt_report(rank, errors);
    return errors ? 1 : 0;
}
