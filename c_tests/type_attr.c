/* Attributes on datatypes (MPI_Type_create_keyval and friends):
 * - set/get/delete, replacing a value runs the delete callback on the old;
 * - MPI_Type_dup copies attributes through the copy callbacks (a callback
 *   that sets flag=0 leaves the attribute out), and a failing copy
 *   callback fails the dup with MPI_DATATYPE_NULL;
 * - freeing the last handle runs the delete callbacks;
 * - attributes on predefined datatypes;
 * - a communicator keyval on a datatype and a datatype keyval on a
 *   communicator are MPI_ERR_KEYVAL. */
#include "mpitest.h"

static int ndeleted, copy_calls, fail_copy;
static void *last_deleted;

static int count_delete(MPI_Datatype t, int keyval, void *value, void *extra) {
    (void)t;
    (void)keyval;
    CHECK(extra == (void *)&ndeleted, "extra_state reaches the delete callback");
    ndeleted++;
    last_deleted = value;
    return MPI_SUCCESS;
}

/* Copies value+1, or drops the attribute for value 100, or fails. */
static int plus_one_copy(MPI_Datatype t, int keyval, void *extra, void *in, void *out, int *flag) {
    (void)t;
    (void)keyval;
    (void)extra;
    copy_calls++;
    if (fail_copy) return MPI_ERR_OTHER;
    if ((MPI_Aint)in == 100) {
        *flag = 0;
        return MPI_SUCCESS;
    }
    *(void **)out = (void *)((MPI_Aint)in + 1);
    *flag = 1;
    return MPI_SUCCESS;
}

int main(int argc, char **argv) {
    int rank, size, flag, key, key2, ckey;
    void *got;
    mt_init(&argc, &argv, &rank, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    MPI_Datatype vec;
    MPI_Type_vector(3, 2, 4, MPI_INT, &vec);
    MPI_Type_commit(&vec);

    CHECK(MPI_Type_create_keyval(plus_one_copy, count_delete, &key, &ndeleted) == MPI_SUCCESS, "create keyval");
    CHECK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &key2, NULL) == MPI_SUCCESS,
          "create keyval with the null functions");
    CHECK(key != key2, "two keyvals differ");

    MPI_Type_get_attr(vec, key, &got, &flag);
    CHECK(!flag, "no value before set");
    CHECK(MPI_Type_set_attr(vec, key, (void *)5) == MPI_SUCCESS, "set");
    MPI_Type_get_attr(vec, key, &got, &flag);
    CHECK(flag && got == (void *)5, "get returns the value set (flag %d, %p)", flag, got);
    CHECK(MPI_Type_set_attr(vec, key, (void *)6) == MPI_SUCCESS, "replace");
    CHECK(ndeleted == 1 && last_deleted == (void *)5, "replacing deletes the old value (%d, %p)", ndeleted,
          last_deleted);
    MPI_Type_set_attr(vec, key2, (void *)9);

    /* Dup copies through the callbacks; the null copy function drops. */
    MPI_Datatype d;
    CHECK(MPI_Type_dup(vec, &d) == MPI_SUCCESS, "dup");
    MPI_Type_get_attr(d, key, &got, &flag);
    CHECK(flag && got == (void *)7, "dup copied value+1 (flag %d, %p)", flag, got);
    MPI_Type_get_attr(d, key2, &got, &flag);
    CHECK(!flag, "MPI_TYPE_NULL_COPY_FN leaves the attribute out of the dup");
    MPI_Type_get_attr(vec, key, &got, &flag);
    CHECK(flag && got == (void *)6, "the original keeps its value");

    /* The dup is a usable datatype. */
    int sizes[2];
    MPI_Type_size(vec, &sizes[0]);
    MPI_Type_size(d, &sizes[1]);
    CHECK(sizes[0] == sizes[1] && sizes[0] == 6 * (int)sizeof(int), "dup has the same size (%d, %d)", sizes[0],
          sizes[1]);

    /* A copy callback that drops the attribute. */
    MPI_Type_set_attr(d, key, (void *)100);
    CHECK(ndeleted == 2 && last_deleted == (void *)7, "replace on the dup deleted 7");
    MPI_Datatype d2;
    MPI_Type_dup(d, &d2);
    MPI_Type_get_attr(d2, key, &got, &flag);
    CHECK(!flag, "flag=0 from the copy callback leaves the attribute out");
    MPI_Type_free(&d2);

    /* A failing copy callback fails the dup. */
    fail_copy = 1;
    d2 = MPI_INT;
    int rc = MPI_Type_dup(vec, &d2);
    CHECK(rc != MPI_SUCCESS, "dup with a failing copy callback fails");
    CHECK(d2 == MPI_DATATYPE_NULL, "a failed dup gives MPI_DATATYPE_NULL");
    fail_copy = 0;

    /* Freeing runs the delete callbacks. */
    int before = ndeleted;
    MPI_Type_free(&d);
    CHECK(ndeleted == before + 1 && last_deleted == (void *)100, "free deleted the attribute (%d, %p)",
          ndeleted - before, last_deleted);

    /* Delete. */
    before = ndeleted;
    CHECK(MPI_Type_delete_attr(vec, key) == MPI_SUCCESS, "delete");
    CHECK(ndeleted == before + 1 && last_deleted == (void *)6, "delete ran the callback");
    MPI_Type_get_attr(vec, key, &got, &flag);
    CHECK(!flag, "no value after delete");
    CHECK_CLASS(MPI_Type_delete_attr(vec, key), MPI_ERR_KEYVAL);

    /* Predefined datatypes take attributes too. */
    CHECK(MPI_Type_set_attr(MPI_DOUBLE, key, (void *)42) == MPI_SUCCESS, "set on MPI_DOUBLE");
    MPI_Type_get_attr(MPI_DOUBLE, key, &got, &flag);
    CHECK(flag && got == (void *)42, "get on MPI_DOUBLE");
    MPI_Type_get_attr(MPI_INT, key, &got, &flag);
    CHECK(!flag, "MPI_INT has its own attributes");
    before = ndeleted;
    MPI_Type_delete_attr(MPI_DOUBLE, key);
    CHECK(ndeleted == before + 1 && last_deleted == (void *)42, "delete on MPI_DOUBLE");

    /* Keyvals serve their own kind of object. */
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &ckey, NULL);
    CHECK_CLASS(MPI_Type_set_attr(vec, ckey, (void *)1), MPI_ERR_KEYVAL);
    CHECK_CLASS(MPI_Comm_set_attr(MPI_COMM_WORLD, key, (void *)1), MPI_ERR_KEYVAL);
    MPI_Comm_free_keyval(&ckey);

    /* A keyval freed while attached keeps working for that attribute. */
    MPI_Type_set_attr(vec, key, (void *)11);
    int saved = key;
    CHECK(MPI_Type_free_keyval(&key) == MPI_SUCCESS, "free keyval");
    CHECK(key == MPI_KEYVAL_INVALID, "freed keyval handle is MPI_KEYVAL_INVALID");
    before = ndeleted;
    MPI_Type_free(&vec);
    CHECK(ndeleted == before + 1 && last_deleted == (void *)11, "delete callback of a freed keyval still runs");
    MPI_Type_get_attr(MPI_INT, saved, &got, &flag);
    (void)got;
    MPI_Type_free_keyval(&key2);

    int errs = 0;
    MPI_Allreduce(&mt_errors, &errs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    mt_report(rank, errs);
    MPI_Finalize();
    return 0;
}
