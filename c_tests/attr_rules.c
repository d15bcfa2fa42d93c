/* The attribute rules libraries rely on:
 * - MPI_Finalize first deletes MPI_COMM_SELF's attributes, the last set
 *   first, through their delete callbacks (libraries hook their cleanup
 *   there), even for keyvals already freed;
 * - a delete callback that fails makes MPI_Comm_set_attr (replacing) and
 *   MPI_Comm_delete_attr fail, and the attribute stays;
 * - a copy callback that fails makes MPI_Comm_dup fail with newcomm set
 *   to MPI_COMM_NULL;
 * - a keyval freed while attached stays usable by its attributes: its
 *   delete callback still runs, with the keyval's value, when the
 *   communicator is freed; MPI_Comm_delete_attr still takes it; freeing
 *   it again meanwhile changes nothing (as in MPICH). */
#include "mpitest.h"

#define NKEYS 5
static int keys[NKEYS], deleted[NKEYS], ndeleted, fail_callbacks;

static int record_delete(MPI_Comm comm, int keyval, void *value, void *extra) {
    (void)comm;
    (void)value;
    (void)extra;
    if (ndeleted < NKEYS) deleted[ndeleted] = keyval;
    ndeleted++;
    return MPI_SUCCESS;
}

static int failing_delete(MPI_Comm comm, int keyval, void *value, void *extra) {
    (void)comm;
    (void)keyval;
    (void)value;
    (void)extra;
    return fail_callbacks ? MPI_ERR_OTHER : MPI_SUCCESS;
}

static int failing_copy(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag) {
    (void)comm;
    (void)keyval;
    (void)extra;
    *(void **)out = in;
    *flag = 1;
    return fail_callbacks ? MPI_ERR_OTHER : MPI_SUCCESS;
}

/* A copy callback that fails with the program's own error code. */
static int my_code;
static int coded_copy(MPI_Comm comm, int keyval, void *extra, void *in, void *out, int *flag) {
    (void)comm;
    (void)keyval;
    (void)extra;
    (void)in;
    (void)out;
    *flag = 0;
    return my_code;
}

int main(int argc, char **argv) {
    int rank, size, flag;
    void *got;
    mt_init(&argc, &argv, &rank, &size);

    /* Failing callbacks. */
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    int bomb;
    MPI_Comm_create_keyval(failing_copy, failing_delete, &bomb, NULL);
    CHECK(MPI_Comm_set_attr(dup, bomb, (void *)1) == MPI_SUCCESS, "first set");
    fail_callbacks = 1;
    CHECK(MPI_Comm_set_attr(dup, bomb, (void *)2) != MPI_SUCCESS, "replacing: the delete callback failed");
    MPI_Comm_get_attr(dup, bomb, &got, &flag);
    CHECK(flag && got == (void *)1, "the old value stays when its delete callback fails (got %p)", got);
    CHECK(MPI_Comm_delete_attr(dup, bomb) != MPI_SUCCESS, "delete: the delete callback failed");
    MPI_Comm_get_attr(dup, bomb, &got, &flag);
    CHECK(flag && got == (void *)1, "the attribute stays when its delete callback fails");
    MPI_Comm d2 = dup;
    CHECK(MPI_Comm_dup(dup, &d2) != MPI_SUCCESS, "dup: the copy callback failed");
    CHECK(d2 == MPI_COMM_NULL, "a failed dup gives MPI_COMM_NULL");
    fail_callbacks = 0;
    CHECK(MPI_Comm_free(&dup) == MPI_SUCCESS, "free once the callbacks succeed");
    MPI_Comm_free_keyval(&bomb);

    /* A callback's own error class or code is what the call returns,
     * with the program's string. */
    int my_class, coded, len;
    char text[MPI_MAX_ERROR_STRING];
    MPI_Add_error_class(&my_class);
    MPI_Add_error_code(my_class, &my_code);
    MPI_Add_error_string(my_class, "attr_rules: my class");
    MPI_Add_error_string(my_code, "attr_rules: my code");
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    MPI_Comm_create_keyval(coded_copy, MPI_COMM_NULL_DELETE_FN, &coded, NULL);
    MPI_Comm_set_attr(dup, coded, (void *)3);
    for (int pass = 0; pass < 2; pass++) {
        int want = pass == 0 ? my_code : my_class, rc, cls = -1;
        my_code = want;
        rc = MPI_Comm_dup(dup, &d2);
        MPI_Error_class(rc, &cls);
        MPI_Error_string(rc, text, &len);
        CHECK(rc == want && cls == my_class, "dup returned %d of class %d, expected %d of class %d", rc, cls, want,
              my_class);
        CHECK(strcmp(text, pass == 0 ? "attr_rules: my code" : "attr_rules: my class") == 0,
              "the returned code's string is '%s'", text);
        MPI_Add_error_code(my_class, &my_code); /* a fresh code for the next pass */
    }
    MPI_Comm_free(&dup);
    MPI_Comm_free_keyval(&coded);

    /* A keyval freed while attached. */
    int key, saved;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, record_delete, &key, NULL);
    saved = key;
    MPI_Comm_set_attr(dup, key, (void *)7);
    MPI_Comm_free_keyval(&key);
    CHECK(key == MPI_KEYVAL_INVALID, "a freed keyval handle becomes MPI_KEYVAL_INVALID");
    /* Freed twice (through a copy of the handle) while attached: the
     * second free changes nothing; the attribute can still be deleted
     * through the keyval's value. */
    int key2, saved2;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, record_delete, &key2, NULL);
    saved2 = key2;
    MPI_Comm_set_attr(dup, key2, (void *)8);
    MPI_Comm_free_keyval(&key2);
    int again = saved2;
    CHECK(MPI_Comm_free_keyval(&again) == MPI_SUCCESS, "a second free of a keyval still in use");
    ndeleted = 0;
    CHECK(MPI_Comm_delete_attr(dup, saved2) == MPI_SUCCESS, "deleting through a freed keyval still in use");
    CHECK(ndeleted == 1 && deleted[0] == saved2, "its delete callback ran %d times", ndeleted);
    ndeleted = 0;
    MPI_Comm_free(&dup);
    CHECK(ndeleted == 1 && deleted[0] == saved, "the freed keyval's delete callback ran %d times (keyval %d, %d)",
          ndeleted, deleted[0], saved);

    /* MPI_COMM_SELF at MPI_Finalize: set in the order 3 2 0 1 4, keyvals
     * freed before, deleted 4 1 0 2 3. */
    static const int order[NKEYS] = {3, 2, 0, 1, 4};
    for (int i = 0; i < NKEYS; i++) MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, record_delete, &keys[i], NULL);
    for (int i = 0; i < NKEYS; i++) MPI_Comm_set_attr(MPI_COMM_SELF, keys[order[i]], (void *)(long)i);
    int expect[NKEYS];
    for (int i = 0; i < NKEYS; i++) {
        expect[i] = keys[order[NKEYS - 1 - i]];
        int k = keys[i];
        MPI_Comm_free_keyval(&k);
    }
    int errors = mt_errors;
    MPI_Allreduce(MPI_IN_PLACE, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    ndeleted = 0;
    MPI_Finalize();
    int order_ok = ndeleted == NKEYS;
    for (int i = 0; order_ok && i < NKEYS; i++) order_ok = deleted[i] == expect[i];
    if (!order_ok) {
        fprintf(stderr, "rank %d: MPI_Finalize deleted %d of MPI_COMM_SELF's %d attributes, order", rank, ndeleted,
                NKEYS);
        for (int i = 0; i < ndeleted && i < NKEYS; i++) fprintf(stderr, " %d (expected %d)", deleted[i], expect[i]);
        fprintf(stderr, "\n");
        errors++;
    }
    /* Each rank judges its own MPI_COMM_SELF; rank 0 speaks for the
     * others through the exit status. */
    mt_report(rank, errors);
    return errors != 0;
}
