/* Error handling: MPI_ERRORS_RETURN, user handlers (called with the right
 * communicator and code, kept alive while attached after
 * MPI_Errhandler_free), MPI_Comm_call_errhandler, error classes and
 * strings, user-defined classes, codes and strings; errors of the calls
 * that take a handle's address (MPI_Comm_free) go to that object. */
#include "mpitest.h"

static int calls = 0, last_code = 0;
static MPI_Comm last_comm = MPI_COMM_NULL;

static void handler(MPI_Comm *comm, int *code, ...) {
    calls++;
    last_comm = *comm;
    last_code = *code;
}

static int failing_delete(MPI_Comm comm, int keyval, void *value, void *extra) {
    (void)comm; (void)keyval; (void)value; (void)extra;
    return MPI_ERR_OTHER;
}

int main(int argc, char **argv) {
    int rank, rc, cls, len;
    char text[MPI_MAX_ERROR_STRING];
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);

    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh);
    CHECK(eh == MPI_ERRORS_ARE_FATAL, "default handler %#x", (unsigned)eh);
    MPI_Errhandler_free(&eh);
    CHECK(eh == MPI_ERRHANDLER_NULL, "free sets NULL");

    /* A communicator made before MPI_COMM_WORLD's handler changes, and
     * never given one of its own, follows MPI_COMM_WORLD's (as in MPICH);
     * one given a handler keeps it. */
    MPI_Comm early, own;
    MPI_Comm_dup(MPI_COMM_WORLD, &early);
    MPI_Comm_dup(MPI_COMM_WORLD, &own);
    MPI_Comm_set_errhandler(own, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_CLASS(MPI_Comm_split(early, 0, 0, NULL), MPI_ERR_ARG);
    MPI_Comm later;
    MPI_Comm_dup(early, &later);
    CHECK_CLASS(MPI_Comm_rank(later, NULL), MPI_ERR_ARG);
    MPI_Errhandler kept = MPI_ERRHANDLER_NULL;
    MPI_Comm_get_errhandler(own, &kept);
    CHECK(kept == MPI_ERRORS_ARE_FATAL, "a handler set on a communicator stays its own");
    MPI_Errhandler_free(&kept);
    MPI_Comm_free(&later);
    MPI_Comm_free(&early);
    MPI_Comm_free(&own);
    rc = MPI_Comm_rank((MPI_Comm)0x12345, &rank);
    CHECK(mt_class(rc) == MPI_ERR_COMM, "bad comm gives class %d", mt_class(rc));
    MPI_Error_string(rc, text, &len);
    CHECK(strstr(text, "MPI_Comm_rank") && strstr(text, "MPI_ERR_COMM") && len == (int)strlen(text),
          "specific text '%s'", text);
    CHECK_CLASS(MPI_Comm_rank(MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Comm_size(MPI_COMM_NULL, &len), MPI_ERR_COMM);

    /* A predefined class is its own code, with the general text. */
    MPI_Error_class(MPI_ERR_TRUNCATE, &cls);
    CHECK(cls == MPI_ERR_TRUNCATE, "class of class %d", cls);
    MPI_Error_string(MPI_ERR_TRUNCATE, text, &len);
    CHECK(strstr(text, "truncated") != NULL, "truncate text '%s'", text);
    CHECK_CLASS(MPI_Error_class(-7, &cls), MPI_ERR_ARG);

    /* A user handler gets the communicator and the code. */
    MPI_Errhandler mine;
    MPI_Comm_create_errhandler(handler, &mine);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, mine);
    MPI_Errhandler_free(&mine); /* still attached: must stay alive */
    rc = MPI_Comm_get_name(MPI_COMM_SELF, NULL, &len);
    CHECK(calls == 1 && last_comm == MPI_COMM_SELF && last_code == rc, "handler calls %d comm %#x code %d/%d",
          calls, (unsigned)last_comm, last_code, rc);
    CHECK(mt_class(rc) == MPI_ERR_ARG, "NULL name class %d", mt_class(rc));

    /* Errors tied to no object go to MPI_COMM_SELF's handler when set. */
    rc = MPI_Info_create(NULL);
    CHECK(calls == 2 && mt_class(rc) == MPI_ERR_ARG, "no-object error: calls %d class %d", calls, mt_class(rc));

    /* MPI_Comm_call_errhandler invokes it with the given code. */
    MPI_Comm_call_errhandler(MPI_COMM_SELF, MPI_ERR_OTHER);
    CHECK(calls == 3 && last_code == MPI_ERR_OTHER, "call_errhandler: calls %d code %d", calls, last_code);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    /* MPI_Comm_free's error (a delete callback that fails) goes to the
     * communicator's own handler, not to the default one. */
    MPI_Comm dup;
    int keyval;
    MPI_Comm_dup(MPI_COMM_SELF, &dup);
    MPI_Comm_create_errhandler(handler, &mine);
    MPI_Comm_set_errhandler(dup, mine);
    MPI_Errhandler_free(&mine);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, failing_delete, &keyval, NULL);
    MPI_Comm_set_attr(dup, keyval, NULL);
    int before = calls;
    MPI_Comm freed = dup;
    rc = MPI_Comm_free(&freed);
    CHECK(rc != MPI_SUCCESS && calls == before + 1 && last_comm == dup,
          "MPI_Comm_free's error: rc %d, handler calls %d (before %d), comm %#x (dup %#x)", rc, calls, before,
          (unsigned)last_comm, (unsigned)dup);
    MPI_Comm_free_keyval(&keyval);

    /* A freed handler handle is no longer valid. */
    CHECK_CLASS(MPI_Comm_set_errhandler(MPI_COMM_WORLD, mine), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Comm_set_errhandler(MPI_COMM_WORLD, (MPI_Errhandler)0x54000009), MPI_ERR_ARG);

    /* User-defined classes, codes and strings. */
    int myclass, mycode, lastused, flag;
    MPI_Add_error_class(&myclass);
    MPI_Add_error_code(myclass, &mycode);
    MPI_Add_error_string(mycode, "my special error");
    MPI_Add_error_string(myclass, "my class");
    MPI_Error_class(mycode, &cls);
    CHECK(cls == myclass, "user code class %d vs %d", cls, myclass);
    MPI_Error_string(mycode, text, &len);
    CHECK(strcmp(text, "my special error") == 0, "user code text '%s'", text);
    MPI_Error_string(myclass, text, &len);
    CHECK(strcmp(text, "my class") == 0, "user class text '%s'", text);
    CHECK_CLASS(MPI_Add_error_string(MPI_ERR_ARG, "x"), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Add_error_code(myclass + 1000, &mycode), MPI_ERR_ARG);
    /* MPI_LASTUSEDCODE is never below MPI_ERR_LASTCODE and covers ours. */
    int *last = NULL;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag);
    lastused = flag && last ? *last : -1;
    CHECK(lastused >= MPI_ERR_LASTCODE && lastused >= mycode && lastused >= myclass,
          "MPI_LASTUSEDCODE %d (class %d, code %d)", lastused, myclass, mycode);
    /* MPICH's MPIX_Delete_error_*: a class goes only once its codes have;
     * deleted values are invalid, then given again. Many rounds. */
    CHECK(MPIX_Delete_error_class(myclass) != MPI_SUCCESS, "a class with a code was deleted");
    for (int round = 0; round < 2000; round++) {
        int c2, k2;
        MPI_Add_error_class(&c2);
        MPI_Add_error_code(c2, &k2);
        MPI_Add_error_string(k2, "passing");
        CHECK(MPIX_Delete_error_string(k2) == MPI_SUCCESS, "delete string");
        CHECK(MPIX_Delete_error_code(k2) == MPI_SUCCESS, "delete code");
        CHECK(MPIX_Delete_error_class(c2) == MPI_SUCCESS, "delete class");
        if (round == 0) CHECK_CLASS(MPI_Error_class(k2, &cls), MPI_ERR_ARG);
        if (mt_errors) break;
    }
    CHECK(MPIX_Delete_error_code(mycode) == MPI_SUCCESS, "delete the first code");
    CHECK(MPIX_Delete_error_class(myclass) == MPI_SUCCESS, "then its class");

    /* An error on a window goes to the window's handler (here
     * MPI_ERRORS_RETURN), with a text naming the call. */
    MPI_Win win;
    int cell = 0;
    MPI_Win_create(&cell, sizeof cell, 1, MPI_INFO_NULL, MPI_COMM_SELF, &win);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    rc = MPI_Put(&cell, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
    CHECK(mt_class(rc) == MPI_ERR_RMA_SYNC, "a put outside an epoch: class %d", mt_class(rc));
    MPI_Error_string(rc, text, &len);
    CHECK(strstr(text, "MPI_Put") && strstr(text, "epoch"), "the put's error text '%s'", text);
    MPI_Win_free(&win);

    MPI_Finalize();
    mt_report(rank, mt_errors);
    return mt_errors ? 1 : 0;
}
