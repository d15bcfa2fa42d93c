/* Windows as objects, and progress:
 * - MPI_Win_allocate_shared: one node segment, contiguous by default (rank
 *   r's memory right after rank r-1's), each rank's part on a page with
 *   alloc_shared_noncontig; MPI_Win_shared_query (also MPI_PROC_NULL);
 *   loads and stores of other ranks' memory with MPI_Win_sync and
 *   barriers; RMA operations on the same memory agree with them;
 * - attributes: MPI_WIN_BASE, SIZE, DISP_UNIT, CREATE_FLAVOR, MODEL of
 *   every flavor; user keyvals with a delete callback run by MPI_Win_free;
 *   name, group, info (defaults and set values), error handlers (a user
 *   handler called with the window and the code);
 * - passive-target progress: rank 0 computes in a loop without MPI calls
 *   until the value a peer puts under a lock appears in its memory. */
#include <time.h>
#include <unistd.h>
#include "mpitest.h"

static int deleted = 0;
static int delete_fn(MPI_Win win, int keyval, void *value, void *extra) {
    (void)win, (void)keyval, (void)extra;
    deleted += *(int *)value;
    return MPI_SUCCESS;
}

static int handled = 0;
static MPI_Win handled_win;
static void win_handler(MPI_Win *win, int *code, ...) {
    handled = *code;
    handled_win = *win;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void shared_memory(int rank, int size) {
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int nrank, nsize;
    MPI_Comm_rank(node, &nrank);
    MPI_Comm_size(node, &nsize);
    /* Rank r has r + 1 ints (rank 0 one, ...). */
    int *mine;
    MPI_Win win;
    MPI_Win_allocate_shared((MPI_Aint)(nrank + 1) * sizeof(int), sizeof(int), MPI_INFO_NULL, node, &mine, &win);
    for (int i = 0; i <= nrank; i++) mine[i] = nrank * 100 + i;
    MPI_Win_sync(win);
    MPI_Barrier(node);
    MPI_Win_sync(win);
    int *first = NULL;
    for (int r = 0; r < nsize; r++) {
        MPI_Aint bytes;
        int unit;
        int *base;
        MPI_Win_shared_query(win, r, &bytes, &unit, &base);
        CHECK(bytes == (MPI_Aint)(r + 1) * (MPI_Aint)sizeof(int), "rank %d has %ld bytes", r, (long)bytes);
        CHECK(unit == sizeof(int), "disp unit %d", unit);
        if (r == 0) first = base;
        CHECK(base == first + r * (r + 1) / 2, "rank %d's memory follows the previous rank's", r);
        for (int i = 0; i <= r; i++) CHECK(base[i] == r * 100 + i, "load of rank %d's %d: %d", r, i, base[i]);
        if (r == nrank) CHECK(base == mine, "my own base is the one I got");
    }
    MPI_Aint bytes;
    int unit;
    int *base;
    MPI_Win_shared_query(win, MPI_PROC_NULL, &bytes, &unit, &base);
    CHECK(base == first && bytes == sizeof(int), "MPI_PROC_NULL: the first rank with memory");
    /* Store into the right neighbour, read with MPI_Get after a fence. */
    MPI_Barrier(node);
    int right = (nrank + 1) % nsize, left = (nrank + nsize - 1) % nsize;
    MPI_Win_shared_query(win, right, &bytes, &unit, &base);
    base[0] = -nrank - 1;
    MPI_Win_sync(win);
    MPI_Barrier(node);
    MPI_Win_sync(win);
    CHECK(mine[0] == -left - 1, "a neighbour's store: %d", mine[0]);
    MPI_Win_fence(0, win);
    int got = 0;
    MPI_Get(&got, 1, MPI_INT, right, 0, 1, MPI_INT, win);
    MPI_Win_fence(0, win);
    CHECK(got == -nrank - 1, "MPI_Get sees the store: %d", got);
    int flavor, *pflavor;
    int flag;
    MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &pflavor, &flag);
    flavor = flag ? *pflavor : -1;
    CHECK(flavor == MPI_WIN_FLAVOR_SHARED, "shared flavor: %d", flavor);
    MPI_Info used;
    char value[MPI_MAX_INFO_VAL];
    MPI_Win_get_info(win, &used);
    MPI_Info_get(used, "alloc_shared_noncontig", MPI_MAX_INFO_VAL, value, &flag);
    CHECK(flag && strcmp(value, "false") == 0, "alloc_shared_noncontig reported false");
    MPI_Info_free(&used);
    MPI_Win_free(&win);

    /* Non-contiguous: each rank's part on its own page. */
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "alloc_shared_noncontig", "true");
    MPI_Win_allocate_shared(8, 1, info, node, &mine, &win);
    MPI_Info_free(&info);
    CHECK(((size_t)mine % 4096) == 0, "noncontig: %p is on a page", (void *)mine);
    MPI_Win_free(&win);
    MPI_Comm_free(&node);
    (void)rank, (void)size;
}

static void attributes(int rank, int size) {
    char buf[64];
    MPI_Win win;
    MPI_Win_create(buf, sizeof buf, 2, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    void *base;
    MPI_Aint *wsize;
    int *unit, *flavor, *model, flag;
    MPI_Win_get_attr(win, MPI_WIN_BASE, &base, &flag);
    CHECK(flag && base == buf, "MPI_WIN_BASE %p", base);
    MPI_Win_get_attr(win, MPI_WIN_SIZE, &wsize, &flag);
    CHECK(flag && *wsize == sizeof buf, "MPI_WIN_SIZE %ld", (long)*wsize);
    MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &unit, &flag);
    CHECK(flag && *unit == 2, "MPI_WIN_DISP_UNIT %d", *unit);
    MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag);
    CHECK(flag && *flavor == MPI_WIN_FLAVOR_CREATE, "flavor %d", *flavor);
    MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag);
    CHECK(flag && *model == MPI_WIN_UNIFIED, "model %d", *model);

    int keyval, one = 1, two = 2;
    MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, delete_fn, &keyval, NULL);
    MPI_Win_set_attr(win, keyval, &one);
    MPI_Win_set_attr(win, keyval, &two); /* replacing deletes the old value */
    CHECK(deleted == 1, "the replaced value was deleted: %d", deleted);
    int *back;
    MPI_Win_get_attr(win, keyval, &back, &flag);
    CHECK(flag && back == &two, "user attribute read back");

    MPI_Win_set_name(win, "my window");
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    MPI_Win_get_name(win, name, &len);
    CHECK(strcmp(name, "my window") == 0 && len == 9, "name '%s'", name);

    MPI_Group g, world;
    int cmp;
    MPI_Win_get_group(win, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_compare(g, world, &cmp);
    CHECK(cmp == MPI_IDENT, "the window's group is the world's");
    MPI_Group_free(&g);
    MPI_Group_free(&world);

    MPI_Info info, used;
    char value[MPI_MAX_INFO_VAL];
    MPI_Win_get_info(win, &used);
    MPI_Info_get(used, "no_locks", MPI_MAX_INFO_VAL, value, &flag);
    CHECK(flag && strcmp(value, "false") == 0, "no_locks defaults to false");
    MPI_Info_free(&used);
    MPI_Info_create(&info);
    MPI_Info_set(info, "accumulate_ordering", "none");
    MPI_Win_set_info(win, info);
    MPI_Info_free(&info);
    MPI_Win_get_info(win, &used);
    MPI_Info_get(used, "accumulate_ordering", MPI_MAX_INFO_VAL, value, &flag);
    CHECK(flag && strcmp(value, "none") == 0, "accumulate_ordering set to '%s'", value);
    MPI_Info_free(&used);

    MPI_Errhandler eh, got;
    /* A window whose handler was never set reports through
     * MPI_COMM_WORLD's (as MPICH), while it says MPI's default. */
    MPI_Win_get_errhandler(win, &got);
    CHECK(got == MPI_ERRORS_ARE_FATAL, "a new window's handler is MPI_ERRORS_ARE_FATAL");
    MPI_Errhandler_free(&got);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int not_a_win_keyval;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &not_a_win_keyval, NULL);
    CHECK_CLASS(MPI_Win_set_attr(win, not_a_win_keyval, &flag), MPI_ERR_KEYVAL);
    MPI_Comm_free_keyval(&not_a_win_keyval);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Win_create_errhandler(win_handler, &eh);
    MPI_Win_set_errhandler(win, eh);
    MPI_Win_get_errhandler(win, &got);
    CHECK(got == eh, "the handler set is the one got");
    MPI_Errhandler_free(&got);
    MPI_Errhandler_free(&eh);
    MPI_Win_call_errhandler(win, MPI_ERR_OTHER);
    CHECK(handled == MPI_ERR_OTHER && handled_win == win, "the handler was called with the window");
    handled = 0;
    MPI_Win_unlock(size, win); /* not a rank: goes to the handler */
    CHECK(mt_class(handled) == MPI_ERR_RANK, "a bad rank raised class %d", mt_class(handled));
    MPI_Win_free(&win);
    CHECK(deleted == 3, "MPI_Win_free ran the delete callback: %d", deleted);
    MPI_Win_free_keyval(&keyval);

    /* Attributes of the other flavors. */
    MPI_Win_allocate(100, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    void *battr;
    MPI_Win_get_attr(win, MPI_WIN_BASE, &battr, &flag);
    MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag);
    CHECK(battr == base && *flavor == MPI_WIN_FLAVOR_ALLOCATE, "allocate: base and flavor %d", *flavor);
    MPI_Win_free(&win);
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, &flavor, &flag);
    MPI_Win_get_attr(win, MPI_WIN_SIZE, &wsize, &flag);
    CHECK(*flavor == MPI_WIN_FLAVOR_DYNAMIC && *wsize == 0, "dynamic: flavor %d size %ld", *flavor, (long)*wsize);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    CHECK_CLASS(MPI_Win_set_attr(win, MPI_WIN_BASE, &one), MPI_ERR_KEYVAL);
    MPI_Win_free(&win);
    (void)rank;
}

static void passive_progress(int rank, int size) {
    volatile int *mem;
    MPI_Win win;
    MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, (void *)&mem, &win);
    *mem = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        /* Compute (no MPI call) until the put shows up, at most 30 s. */
        double start = now();
        while (*mem != 4242 && now() - start < 30) {
            for (volatile int i = 0; i < 1000; i++) {
            }
        }
        CHECK(*mem == 4242, "the put arrived while the target computed: %d", *mem);
    } else if (rank == size - 1) {
        int v = 4242;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        MPI_Put(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
        MPI_Win_unlock(0, win);
    }
    MPI_Win_free(&win);
}

int main(int argc, char **argv) {
    int rank, size;
    mt_init(&argc, &argv, &rank, &size);
    shared_memory(rank, size);
    attributes(rank, size);
    if (size > 1) passive_progress(rank, size);
    int errors;
    MPI_Allreduce(&mt_errors, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    mt_report(rank, errors);
    MPI_Finalize();
    return errors != 0;
}
