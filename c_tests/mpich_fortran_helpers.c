/* The libmpich helpers MPICH's Fortran binding calls (MPII_*), driven from
 * C the way libmpichfort.so.12 calls them, with C stand-ins for its
 * proxies and for Fortran callbacks (every argument by reference):
 * - a value set as a Fortran INTEGER (attr_type 3) or
 *   INTEGER(KIND=MPI_ADDRESS_KIND) (1) reads back from Fortran as the
 *   value and from C as the address of the stored integer; a C value reads
 *   back from Fortran as the pointer's bits;
 * - predefined attributes read from Fortran give their values, under the
 *   Fortran keyvals (one above C's) too: MPI_TAG_UB, MPI_WIN_SIZE,
 *   MPI_WIN_BASE;
 * - after MPII_Keyval_set_proxy, MPI_Comm_dup and MPI_Comm_free call the
 *   proxies with the user function, the value and its attr_type, and the
 *   copy keeps the kind;
 * - a generalized request marked by MPII_Grequest_set_lang_f77 calls its
 *   query, free and cancel functions the Fortran way.
 * Built with mpicc.mpich and run on MPICH 4.0.2, every check but the
 * unknown attr_type one passes there too. */
#include <stdint.h>

#include "mpitest.h"

/* MPICH 4.0.2's declarations (mpir_attr_generic.h), not in mpi.h. */
int MPII_Comm_set_attr(MPI_Comm, int, void *, int);
int MPII_Comm_get_attr(MPI_Comm, int, void *, int *, int);
int MPII_Win_get_attr(MPI_Win, int, void *, int *, int);
int MPII_Type_set_attr(MPI_Datatype, int, void *, int);
int MPII_Type_get_attr(MPI_Datatype, int, void *, int *, int);
typedef int(copy_proxy)(MPI_Comm_copy_attr_function *, int, int, void *, int, void *, void **, int *);
typedef int(delete_proxy)(MPI_Comm_delete_attr_function *, int, int, int, void *, void *);
void MPII_Keyval_set_proxy(int, copy_proxy, delete_proxy);
void MPII_Grequest_set_lang_f77(MPI_Request);

enum { ATTR_PTR = 0, ATTR_AINT = 1, ATTR_INT = 3 };

/* "Fortran" callbacks: (comm, keyval, extra, in, out, flag, ierr). */
static int f_copies, f_deletes;
static MPI_Aint f_deleted;
static void f_copy(MPI_Fint *comm, MPI_Fint *keyval, MPI_Aint *extra, MPI_Aint *in, MPI_Aint *out,
                   MPI_Fint *flag, MPI_Fint *ierr) {
    (void)comm;
    (void)keyval;
    f_copies++;
    *out = *in + *extra;
    *flag = 1;
    *ierr = MPI_SUCCESS;
}
static void f_delete(MPI_Fint *comm, MPI_Fint *keyval, MPI_Aint *value, MPI_Aint *extra, MPI_Fint *ierr) {
    (void)comm;
    (void)keyval;
    (void)extra;
    f_deletes++;
    f_deleted = *value;
    *ierr = MPI_SUCCESS;
}

/* Stand-ins for libmpichfort's proxies: record the attr_type, call the
 * user function the Fortran way. */
static int copy_types[4], delete_types[4], proxy_copies, proxy_deletes;
static int my_copy_proxy(MPI_Comm_copy_attr_function *fn, int handle, int keyval, void *extra, int attr_type,
                         void *value, void **out, int *flag) {
    MPI_Fint h = handle, k = keyval, fflag = 0, ierr = 0;
    MPI_Aint in = (MPI_Aint)value, fout = 0;
    if (proxy_copies < 4) copy_types[proxy_copies] = attr_type;
    proxy_copies++;
    ((void (*)(MPI_Fint *, MPI_Fint *, MPI_Aint *, MPI_Aint *, MPI_Aint *, MPI_Fint *, MPI_Fint *))fn)(
        &h, &k, (MPI_Aint *)extra, &in, &fout, &fflag, &ierr);
    *flag = fflag;
    *out = (void *)fout;
    return ierr;
}
static int my_delete_proxy(MPI_Comm_delete_attr_function *fn, int handle, int keyval, int attr_type, void *value,
                           void *extra) {
    MPI_Fint h = handle, k = keyval, ierr = 0;
    MPI_Aint v = (MPI_Aint)value;
    if (proxy_deletes < 4) delete_types[proxy_deletes] = attr_type;
    proxy_deletes++;
    ((void (*)(MPI_Fint *, MPI_Fint *, MPI_Aint *, MPI_Aint *, MPI_Fint *))fn)(&h, &k, &v, (MPI_Aint *)extra,
                                                                              &ierr);
    return ierr;
}

/* "Fortran" generalized request callbacks. */
static int g_queries, g_frees, g_cancels, g_complete_seen = -1;
static void g_query(MPI_Aint *extra, MPI_Fint *status, MPI_Fint *ierr) {
    g_queries++;
    status[3] = (MPI_Fint)*extra; /* MPI_TAG is the 4th INTEGER */
    *ierr = MPI_SUCCESS;
}
static void g_free(MPI_Aint *extra, MPI_Fint *ierr) {
    (void)extra;
    g_frees++;
    *ierr = MPI_SUCCESS;
}
static void g_cancel(MPI_Aint *extra, MPI_Fint *complete, MPI_Fint *ierr) {
    (void)extra;
    g_cancels++;
    g_complete_seen = *complete;
    *ierr = MPI_SUCCESS;
}

int main(int argc, char **argv) {
    int rank, size, flag, key;
    intptr_t slot;
    void *p;
    mt_init(&argc, &argv, &rank, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* Predefined attributes from Fortran: values, under both spellings. */
    int *tag_ub;
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
    slot = 0;
    CHECK(MPII_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB + 1, &slot, &flag, ATTR_AINT) == MPI_SUCCESS && flag &&
              slot == *tag_ub,
          "Fortran MPI_TAG_UB is the value %ld", (long)slot);
    slot = 0;
    MPII_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &slot, &flag, ATTR_INT);
    CHECK(flag && slot == *tag_ub, "MPI_Attr_get of MPI_TAG_UB from Fortran");
    /* An unknown attr_type (oxmpi checks it; MPICH does not). */
    CHECK_CLASS(MPII_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &slot, &flag, 2), MPI_ERR_ARG);

    /* Values set from Fortran, read from both languages. */
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &key, NULL);
    MPII_Comm_set_attr(MPI_COMM_WORLD, key, (void *)(intptr_t)-5, ATTR_INT);
    slot = 0;
    MPII_Comm_get_attr(MPI_COMM_WORLD, key, &slot, &flag, ATTR_INT);
    CHECK(flag && (int)slot == -5, "Fortran INTEGER reads back: %ld", (long)slot);
    MPI_Comm_get_attr(MPI_COMM_WORLD, key, &p, &flag);
    CHECK(flag && *(int *)p == -5, "C gets the address of a Fortran INTEGER");
    MPII_Comm_set_attr(MPI_COMM_WORLD, key, (void *)(intptr_t)0x123456789, ATTR_AINT);
    MPI_Comm_get_attr(MPI_COMM_WORLD, key, &p, &flag);
    CHECK(flag && *(MPI_Aint *)p == 0x123456789, "C gets the address of a Fortran address-sized integer");
    MPI_Comm_set_attr(MPI_COMM_WORLD, key, &size);
    MPII_Comm_get_attr(MPI_COMM_WORLD, key, &slot, &flag, ATTR_AINT);
    CHECK(flag && slot == (intptr_t)&size, "Fortran gets a C value's bits");
    MPI_Comm_free_keyval(&key);

    /* Datatype attributes take the same path. */
    int tkey;
    MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &tkey, NULL);
    MPII_Type_set_attr(MPI_INT, tkey, (void *)(intptr_t)31, ATTR_AINT);
    slot = 0;
    MPII_Type_get_attr(MPI_INT, tkey, &slot, &flag, ATTR_AINT);
    CHECK(flag && slot == 31, "type attribute from Fortran");
    MPI_Type_delete_attr(MPI_INT, tkey);
    MPI_Type_free_keyval(&tkey);

    /* Window predefined attributes from Fortran. */
    int buf[8];
    MPI_Win win;
    MPI_Win_create(buf, sizeof buf, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    slot = 0;
    MPII_Win_get_attr(win, MPI_WIN_SIZE + 1, &slot, &flag, ATTR_AINT);
    CHECK(flag && slot == (intptr_t)sizeof buf, "Fortran MPI_WIN_SIZE: %ld", (long)slot);
    MPII_Win_get_attr(win, MPI_WIN_BASE + 1, &slot, &flag, ATTR_AINT);
    CHECK(flag && slot == (intptr_t)buf, "Fortran MPI_WIN_BASE");
    MPII_Win_get_attr(win, MPI_WIN_DISP_UNIT + 1, &slot, &flag, ATTR_AINT);
    CHECK(flag && slot == 4, "Fortran MPI_WIN_DISP_UNIT");
    MPI_Win_free(&win);

    /* Callbacks through the proxies. */
    static MPI_Aint extra = 100;
    MPI_Comm dup1, dup2;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup1);
    MPI_Comm_create_keyval((MPI_Comm_copy_attr_function *)f_copy, (MPI_Comm_delete_attr_function *)f_delete, &key,
                           &extra);
    MPII_Keyval_set_proxy(key, my_copy_proxy, my_delete_proxy);
    MPII_Comm_set_attr(dup1, key, (void *)(intptr_t)7, ATTR_INT);
    MPI_Comm_dup(dup1, &dup2);
    CHECK(proxy_copies == 1 && f_copies == 1 && copy_types[0] == ATTR_INT,
          "dup copies through the proxy (calls %d/%d, type %d)", proxy_copies, f_copies, copy_types[0]);
    MPI_Comm_get_attr(dup2, key, &p, &flag);
    CHECK(flag && *(int *)p == 107, "the copy is the callback's and stays a Fortran INTEGER");
    MPI_Comm_free(&dup2);
    CHECK(proxy_deletes == 1 && f_deletes == 1 && f_deleted == 107 && delete_types[0] == ATTR_INT,
          "free deletes through the proxy");
    MPI_Comm_free(&dup1);
    CHECK(proxy_deletes == 2 && f_deleted == 7, "the original is deleted too");
    MPI_Comm_free_keyval(&key);

    /* A generalized request with "Fortran" callbacks. */
    static MPI_Aint greq_extra = 37;
    MPI_Request req;
    MPI_Status st;
    MPI_Grequest_start((MPI_Grequest_query_function *)g_query, (MPI_Grequest_free_function *)g_free,
                       (MPI_Grequest_cancel_function *)g_cancel, &greq_extra, &req);
    MPII_Grequest_set_lang_f77(req);
    MPI_Cancel(&req);
    CHECK(g_cancels == 1 && g_complete_seen == 0, "cancel called the Fortran way");
    MPI_Grequest_complete(req);
    MPI_Wait(&req, &st);
    CHECK(g_queries == 1 && g_frees == 1 && st.MPI_TAG == 37, "query and free called the Fortran way (tag %d)",
          st.MPI_TAG);

    int errs = 0;
    MPI_Allreduce(&mt_errors, &errs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    mt_report(rank, errs);
    MPI_Finalize();
    return 0;
}
