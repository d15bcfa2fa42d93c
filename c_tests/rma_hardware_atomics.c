/* Accumulates on windows created with the info acc_single_intrinsic=true,
 * which oxmpi applies with hardware atomics on elements of 1, 2, 4 and 8
 * bytes (the lock word otherwise), for MPI_Win_allocate,
 * MPI_Win_allocate_shared and MPI_Win_create memory. Every rank at once,
 * all on rank 0's memory:
 * - MPI_Fetch_and_op MPI_SUM on a long long, many times: the final value
 *   is the sum, and every fetched value is distinct over all ranks (each
 *   update saw the one before);
 * - MPI_Accumulate MPI_SUM of ints, MPI_MAX of doubles, MPI_BXOR of
 *   unsigned ints: the exact serial results;
 * - MPI_Compare_and_swap 0 -> rank + 1 once each: exactly one wins;
 * - MPI_Get_accumulate MPI_REPLACE as a swap chain: the old values and the
 *   last value are the initial one and every rank's, once each;
 * - a long double MPI_SUM (16 bytes: the lock word) is still exact.
 * MPI_Win_get_info says acc_single_intrinsic=true, MPI_Win_set_info does
 * not change it, and rank 0's MPI_T counter oxmpi_rma_hardware_atomics
 * moves on such windows only. */
#include "mpitest.h"

#define ITER 500

struct cells {
    long long counter;
    int sum;
    unsigned int bits;
    double max;
    long long cas;
    int swap;
    int pad;
    long double ld;
};

static void run(MPI_Comm comm, int flavor, int rank, int size, mt_counter_t atomics) {
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "acc_single_intrinsic", "true");
    struct cells *mem = NULL;
    MPI_Win win;
    MPI_Aint bytes = rank == 0 ? (MPI_Aint)sizeof(struct cells) : 0;
    const char *what = "";
    if (flavor == 0) {
        what = "MPI_Win_allocate";
        MPI_Win_allocate(bytes, 1, info, comm, &mem, &win);
    } else if (flavor == 1) {
        what = "MPI_Win_allocate_shared";
        MPI_Win_allocate_shared(bytes, 1, info, comm, &mem, &win);
    } else {
        what = "MPI_Win_create";
        MPI_Alloc_mem(sizeof(struct cells), MPI_INFO_NULL, &mem);
        MPI_Win_create(mem, bytes, 1, info, comm, &win);
    }
    MPI_Info_free(&info);
    if (rank == 0)
        memset(mem, 0, sizeof *mem);

    MPI_Info used;
    char value[MPI_MAX_INFO_VAL];
    int flag = 0;
    MPI_Win_get_info(win, &used);
    MPI_Info_get(used, "acc_single_intrinsic", MPI_MAX_INFO_VAL, value, &flag);
    CHECK(flag && strcmp(value, "true") == 0, "%s: acc_single_intrinsic reported '%s'", what,
          flag ? value : "(none)");
    MPI_Info_free(&used);
    MPI_Info_create(&info);
    MPI_Info_set(info, "acc_single_intrinsic", "false");
    MPI_Win_set_info(win, info);
    MPI_Info_free(&info);
    MPI_Win_get_info(win, &used);
    MPI_Info_get(used, "acc_single_intrinsic", MPI_MAX_INFO_VAL, value, &flag);
    CHECK(flag && strcmp(value, "true") == 0, "%s: set_info changed acc_single_intrinsic", what);
    MPI_Info_free(&used);

    unsigned long long before = mt_counter_read(atomics);
    MPI_Barrier(comm);
    MPI_Win_lock_all(0, win);
    long long one = 1, *fetched = malloc(ITER * sizeof *fetched);
    int add = rank + 1;
    unsigned int bit = 1u << (rank % 32);
    double mine = (double)rank;
    long double ld = 0.5L;
    for (int i = 0; i < ITER; i++) {
        MPI_Fetch_and_op(&one, &fetched[i], MPI_LONG_LONG, 0, offsetof(struct cells, counter), MPI_SUM,
                         win);
        MPI_Accumulate(&add, 1, MPI_INT, 0, offsetof(struct cells, sum), 1, MPI_INT, MPI_SUM, win);
        MPI_Win_flush(0, win);
    }
    MPI_Accumulate(&bit, 1, MPI_UNSIGNED, 0, offsetof(struct cells, bits), 1, MPI_UNSIGNED, MPI_BXOR,
                   win);
    MPI_Accumulate(&mine, 1, MPI_DOUBLE, 0, offsetof(struct cells, max), 1, MPI_DOUBLE, MPI_MAX, win);
    long long want = 0, mark = rank + 1, old_cas = -1;
    MPI_Compare_and_swap(&mark, &want, &old_cas, MPI_LONG_LONG, 0, offsetof(struct cells, cas), win);
    int swap_in = 100 + rank, swap_out = -1;
    MPI_Get_accumulate(&swap_in, 1, MPI_INT, &swap_out, 1, MPI_INT, 0, offsetof(struct cells, swap), 1,
                       MPI_INT, MPI_REPLACE, win);
    MPI_Accumulate(&ld, 1, MPI_LONG_DOUBLE, 0, offsetof(struct cells, ld), 1, MPI_LONG_DOUBLE, MPI_SUM,
                   win);
    MPI_Win_unlock_all(win);
    MPI_Barrier(comm);

    /* Every fetched counter value once over all ranks. */
    long long *all = rank == 0 ? malloc((size_t)size * ITER * sizeof *all) : NULL;
    MPI_Gather(fetched, ITER, MPI_LONG_LONG, all, ITER, MPI_LONG_LONG, 0, comm);
    int won = old_cas == 0, winners = 0;
    MPI_Allreduce(&won, &winners, 1, MPI_INT, MPI_SUM, comm);
    CHECK(winners == 1, "%s: %d compare-and-swaps won", what, winners);
    int *olds = rank == 0 ? malloc((size_t)size * sizeof *olds) : NULL;
    MPI_Gather(&swap_out, 1, MPI_INT, olds, 1, MPI_INT, 0, comm);
    if (rank == 0) {
        long long n = (long long)size * ITER;
        CHECK(mem->counter == n, "%s: fetch-and-op sum %lld, expected %lld", what, mem->counter, n);
        char *seen = calloc((size_t)n, 1);
        int distinct = 1;
        for (long long i = 0; i < n; i++) {
            if (all[i] < 0 || all[i] >= n || seen[all[i]])
                distinct = 0;
            else
                seen[all[i]] = 1;
        }
        CHECK(distinct, "%s: a fetched counter value came twice or out of range", what);
        free(seen);
        int sum = ITER * size * (size + 1) / 2;
        CHECK(mem->sum == sum, "%s: accumulate sum %d, expected %d", what, mem->sum, sum);
        unsigned int bits = 0;
        for (int r = 0; r < size; r++)
            bits ^= 1u << (r % 32);
        CHECK(mem->bits == bits, "%s: bxor %#x, expected %#x", what, mem->bits, bits);
        CHECK(mem->max == (double)(size - 1), "%s: max %g", what, mem->max);
        CHECK(mem->cas >= 1 && mem->cas <= size, "%s: compare-and-swap left %lld", what, mem->cas);
        /* The swap chain: 0 and 100..100+size-1, each once among the old
         * values and the last value. */
        int count0 = 0, ok = 1;
        int *hits = calloc((size_t)size, sizeof *hits);
        for (int r = 0; r <= size; r++) {
            int v = r < size ? olds[r] : mem->swap;
            if (v == 0)
                count0++;
            else if (v >= 100 && v < 100 + size)
                hits[v - 100]++;
            else
                ok = 0;
        }
        for (int r = 0; r < size; r++)
            ok &= hits[r] == 1;
        CHECK(ok && count0 == 1, "%s: the swap chain lost or repeated a value", what);
        free(hits);
        CHECK(mem->ld == 0.5L * size, "%s: long double sum %Lg", what, mem->ld);
        unsigned long long moved = mt_counter_read(atomics) - before;
        CHECK(moved >= (unsigned long long)(2 * ITER),
              "%s: rank 0 applied %llu accumulates with hardware atomics", what, moved);
        free(all);
        free(olds);
    }
    free(fetched);
    MPI_Win_free(&win);
    if (flavor == 2)
        MPI_Free_mem(mem);
}

int main(int argc, char **argv) {
    int rank, size, errors = 0;
    mt_init(&argc, &argv, &rank, &size);
    mt_counter_t atomics = mt_counter("oxmpi_rma_hardware_atomics");
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int node_size;
    MPI_Comm_size(node, &node_size);
    run(MPI_COMM_WORLD, 0, rank, size, atomics);
    if (node_size == size)
        run(MPI_COMM_WORLD, 1, rank, size, atomics);
    run(MPI_COMM_WORLD, 2, rank, size, atomics);

    /* Without the info key the lock word does it: the counter stays. */
    long long *mem = NULL, one = 1, old = 0;
    MPI_Win win;
    MPI_Win_allocate(rank == 0 ? 8 : 0, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    if (rank == 0)
        *mem = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    unsigned long long before = mt_counter_read(atomics);
    MPI_Win_lock_all(0, win);
    MPI_Fetch_and_op(&one, &old, MPI_LONG_LONG, 0, 0, MPI_SUM, win);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(mt_counter_read(atomics) == before, "hardware atomics on a window without the info key");
    if (rank == 0)
        CHECK(*mem == size, "lock-word fetch-and-op sum %lld", *mem);
    MPI_Win_free(&win);

    MPI_Comm_free(&node);
    mt_counter_close(&atomics);
    MPI_Allreduce(&mt_errors, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    mt_report(rank, errors);
    MPI_Finalize();
    return 0;
}
