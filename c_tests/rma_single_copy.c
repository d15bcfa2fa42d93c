/* Puts and gets on MPI_Win_create memory of the ranks of this node copy
 * the data straight into and out of the target's memory
 * (process_vm_writev/readv; a plain copy on a rank's own memory), with
 * no message and no work at the target. Every case checks the data at
 * the target or at the origin:
 * - under MPI_Win_lock_all every rank puts into every rank's window: a
 *   contiguous block, a strided target type, a strided origin type, and
 *   a large unaligned block (1 MiB + 3 bytes) in a second window; then
 *   gets of them back, contiguous and strided, and of the large block;
 * - MPI_Rput and MPI_Rget with their requests;
 * - hundreds of one-int puts to every target in turn with no flush
 *   between them (small puts wait in a batch written at the next
 *   synchronization, when full, or before a put to another target);
 * - puts between fences;
 * - an exclusive lock: a put, a flush, then a get of it in the same epoch;
 * - a put past the end of a window fails with MPI_ERR_RMA_RANGE and
 *   writes nothing;
 * - a window empty at one rank (size 0, NULL base) next to others;
 * - the MPI_T counter oxmpi_rma_single_copy_ops counts exactly the puts
 *   and gets whose target is a rank of this node (this rank too), and
 *   only those to this rank where the kernel forbids reading other
 *   processes (Yama ptrace_scope 2 or 3); none with
 *   OXMPI_SHM_SINGLE_COPY=0 or OXMPI_TRANSPORT=tcp, where all of them are
 *   messages and the data is the same. */
#include "mpitest.h"

#define SLOT 64                      /* ints per origin in each window */
#define STRIDED 8                    /* elements of the strided cases */
#define LARGE ((1 << 20) + 3)        /* bytes per origin in the large window */

static int rank, size;
static int *on_node;                 /* on_node[t]: rank t shares this node */

static int value(int origin, int target, int i) { return origin * 1000000 + target * 1000 + i; }
static unsigned char large_byte(int origin, int target, size_t i) {
    return (unsigned char)(origin * 31 + target * 7 + i * 13 + i / 4099);
}

/* Where single copy should serve target t from this rank. */
static int expect_single_copy(int t) {
    const char *sc = getenv("OXMPI_SHM_SINGLE_COPY");
    const char *transport = getenv("OXMPI_TRANSPORT");
    if ((sc && strcmp(sc, "0") == 0) || (transport && strcmp(transport, "tcp") == 0))
        return 0;
    if (!on_node[t])
        return 0;
    if (t == rank)
        return 1;
    int scope = 0;
    FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
    if (f) {
        if (fscanf(f, "%d", &scope) != 1) scope = 0;
        fclose(f);
    }
    return scope < 2;
}

static unsigned long long expected = 0; /* single-copy operations so far */

static void count_ops(int t, int ops) {
    if (expect_single_copy(t)) expected += (unsigned long long)ops;
}

static void lock_all_ops(void) {
    int *mem = calloc((size_t)size * SLOT, sizeof(int));
    unsigned char *large = calloc((size_t)size, LARGE);
    MPI_Win win, win_large;
    MPI_Win_create(mem, (MPI_Aint)size * SLOT * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_create(large, (MPI_Aint)size * LARGE, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win_large);
    MPI_Datatype stride2;
    MPI_Type_vector(STRIDED, 1, 2, MPI_INT, &stride2);
    MPI_Type_commit(&stride2);

    int contiguous[8], strided_src[2 * STRIDED], plain[STRIDED];
    unsigned char *big = malloc(LARGE);
    MPI_Win_lock_all(0, win);
    MPI_Win_lock_all(0, win_large);
    for (int t = 0; t < size; t++) {
        MPI_Aint slot = (MPI_Aint)rank * SLOT;
        for (int i = 0; i < 8; i++) contiguous[i] = value(rank, t, i);
        MPI_Put(contiguous, 8, MPI_INT, t, slot, 8, MPI_INT, win);
        for (int i = 0; i < STRIDED; i++) plain[i] = value(rank, t, 100 + i);
        MPI_Put(plain, STRIDED, MPI_INT, t, slot + 8, 1, stride2, win); /* ints 8, 10, ..., 22 */
        for (int i = 0; i < 2 * STRIDED; i++) strided_src[i] = i % 2 ? -1 : value(rank, t, 200 + i / 2);
        MPI_Put(strided_src, 1, stride2, t, slot + 24, STRIDED, MPI_INT, win); /* ints 24..31 */
        for (size_t i = 0; i < LARGE; i++) big[i] = large_byte(rank, t, i);
        MPI_Put(big, LARGE, MPI_BYTE, t, (MPI_Aint)rank * LARGE, LARGE, MPI_BYTE, win_large);
        /* The puts of this rank's own data are all complete at the
         * target once flushed: wait for them before the next round reuses
         * the buffers. */
        MPI_Win_flush(t, win);
        MPI_Win_flush(t, win_large);
        count_ops(t, 4);
    }
    MPI_Win_unlock_all(win_large);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);

    /* Every origin's data at this target. */
    int wrong = 0;
    for (int o = 0; o < size; o++) {
        int *s = mem + (size_t)o * SLOT;
        for (int i = 0; i < 8; i++) wrong += s[i] != value(o, rank, i);
        for (int i = 0; i < STRIDED; i++) wrong += s[8 + 2 * i] != value(o, rank, 100 + i) || s[9 + 2 * i] != 0;
        for (int i = 0; i < STRIDED; i++) wrong += s[24 + i] != value(o, rank, 200 + i);
        for (int i = 32; i < SLOT; i++) wrong += s[i] != 0;
        for (size_t i = 0; i < LARGE; i++) wrong += large[(size_t)o * LARGE + i] != large_byte(o, rank, i);
    }
    CHECK(wrong == 0, "%d wrong values put into rank %d's windows", wrong, rank);

    /* Gets back: this rank's block at every target, contiguous, into a
     * strided origin, from a strided target, and the large block. */
    wrong = 0;
    MPI_Win_lock_all(0, win);
    MPI_Win_lock_all(0, win_large);
    for (int t = 0; t < size; t++) {
        MPI_Aint slot = (MPI_Aint)rank * SLOT;
        int got[8] = {0}, spread[2 * STRIDED], picked[STRIDED] = {0};
        for (int i = 0; i < 2 * STRIDED; i++) spread[i] = -7;
        MPI_Get(got, 8, MPI_INT, t, slot, 8, MPI_INT, win);
        MPI_Get(spread, 1, stride2, t, slot + 24, STRIDED, MPI_INT, win);
        MPI_Get(picked, STRIDED, MPI_INT, t, slot + 8, 1, stride2, win);
        memset(big, 0, LARGE);
        MPI_Get(big, LARGE, MPI_BYTE, t, (MPI_Aint)rank * LARGE, LARGE, MPI_BYTE, win_large);
        MPI_Win_flush(t, win);
        MPI_Win_flush(t, win_large);
        count_ops(t, 4);
        for (int i = 0; i < 8; i++) wrong += got[i] != value(rank, t, i);
        for (int i = 0; i < STRIDED; i++) wrong += spread[2 * i] != value(rank, t, 200 + i) || spread[2 * i + 1] != -7;
        for (int i = 0; i < STRIDED; i++) wrong += picked[i] != value(rank, t, 100 + i);
        for (size_t i = 0; i < LARGE; i++) wrong += big[i] != large_byte(rank, t, i);
    }
    CHECK(wrong == 0, "%d wrong values in gets from the windows", wrong);

    /* Request forms: an MPI_Rput over the contiguous block, then an
     * MPI_Rget of it. */
    wrong = 0;
    for (int t = 0; t < size; t++) {
        MPI_Aint slot = (MPI_Aint)rank * SLOT;
        int out[4], in[4] = {0};
        for (int i = 0; i < 4; i++) out[i] = -value(rank, t, i);
        MPI_Request req;
        MPI_Rput(out, 4, MPI_INT, t, slot + 40, 4, MPI_INT, win, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        MPI_Win_flush(t, win);
        MPI_Rget(in, 4, MPI_INT, t, slot + 40, 4, MPI_INT, win, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        count_ops(t, 2);
        for (int i = 0; i < 4; i++) wrong += in[i] != out[i];
    }
    MPI_Win_unlock_all(win_large);
    MPI_Win_unlock_all(win);
    CHECK(wrong == 0, "%d wrong values through MPI_Rput/MPI_Rget", wrong);

    /* Fences: every rank puts one int into every window, int 48 of its
     * slot. */
    int *vals = malloc(sizeof(int) * (size_t)size);
    MPI_Win_fence(0, win);
    for (int t = 0; t < size; t++) {
        vals[t] = value(rank, t, 48);
        MPI_Put(&vals[t], 1, MPI_INT, t, (MPI_Aint)rank * SLOT + 48, 1, MPI_INT, win);
        count_ops(t, 1);
    }
    MPI_Win_fence(0, win);
    free(vals);
    wrong = 0;
    for (int o = 0; o < size; o++) wrong += mem[(size_t)o * SLOT + 48] != value(o, rank, 48);
    CHECK(wrong == 0, "%d wrong values put between fences", wrong);

    /* An exclusive lock: put, flush, get of the same ints. */
    {
        int t = (rank + 1) % size;
        int out[3] = {value(rank, t, 60), value(rank, t, 61), value(rank, t, 62)}, in[3] = {0};
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, t, 0, win);
        MPI_Put(out, 3, MPI_INT, t, (MPI_Aint)rank * SLOT + 56, 3, MPI_INT, win);
        MPI_Win_flush(t, win);
        MPI_Get(in, 3, MPI_INT, t, (MPI_Aint)rank * SLOT + 56, 3, MPI_INT, win);
        MPI_Win_unlock(t, win);
        count_ops(t, 2);
        CHECK(in[0] == out[0] && in[1] == out[1] && in[2] == out[2], "got %d %d %d back under an exclusive lock",
              in[0], in[1], in[2]);
    }

    /* Past the end of the window: an error, nothing written. */
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_Barrier(MPI_COMM_WORLD);
    {
        int t = (rank + 1) % size;
        int out[4] = {-5, -5, -5, -5};
        MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win);
        CHECK_CLASS(MPI_Put(out, 4, MPI_INT, t, (MPI_Aint)size * SLOT - 2, 4, MPI_INT, win), MPI_ERR_RMA_RANGE);
        MPI_Win_unlock(t, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    wrong = 0;
    for (int i = 0; i < size * SLOT; i++) wrong += mem[i] == -5;
    CHECK(wrong == 0, "a refused put wrote %d ints", wrong);

    MPI_Type_free(&stride2);
    MPI_Win_free(&win_large);
    MPI_Win_free(&win);
    free(big);
    free(large);
    free(mem);
}

/* Many one-int puts with no flush between them: MANY to every target in
 * turn, then one MPI_Win_flush_all (small puts wait in a batch that a
 * put to another target, a full batch or the flush writes out), then a
 * second round of other values in reverse target order under
 * MPI_Win_unlock_all. */
#define MANY 300
static void many_small_puts(void) {
    int *mem = calloc((size_t)size * MANY, sizeof(int));
    int *vals = malloc(sizeof(int) * (size_t)size * MANY);
    MPI_Win win;
    MPI_Win_create(mem, (MPI_Aint)size * MANY * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    for (int round = 0; round < 2; round++) {
        MPI_Win_lock_all(0, win);
        for (int k = 0; k < size; k++) {
            int t = round == 0 ? k : size - 1 - k;
            for (int i = 0; i < MANY; i++) {
                int *v = &vals[(size_t)t * MANY + i];
                *v = value(rank, t, i) + round;
                MPI_Put(v, 1, MPI_INT, t, (MPI_Aint)rank * MANY + i, 1, MPI_INT, win);
            }
            count_ops(t, MANY);
        }
        if (round == 0) MPI_Win_flush_all(win);
        MPI_Win_unlock_all(win);
        MPI_Barrier(MPI_COMM_WORLD);
        int wrong = 0;
        for (int o = 0; o < size; o++)
            for (int i = 0; i < MANY; i++) wrong += mem[(size_t)o * MANY + i] != value(o, rank, i) + round;
        CHECK(wrong == 0, "%d wrong ints after round %d of small puts", wrong, round);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Win_free(&win);
    free(vals);
    free(mem);
}

/* Rank 0 exposes nothing (size 0, NULL base); every other rank 4 ints,
 * into which every rank puts one int (slot rank % 4, the last writer
 * of a slot is the highest rank with that remainder). */
static void empty_at_one_rank(void) {
    int mem[4] = {0};
    int *vals = malloc(sizeof(int) * (size_t)size);
    MPI_Win win;
    MPI_Win_create(rank == 0 ? NULL : mem, rank == 0 ? 0 : (MPI_Aint)sizeof mem, sizeof(int), MPI_INFO_NULL,
                   MPI_COMM_WORLD, &win);
    for (int o = 0; o < size; o++) {
        MPI_Win_fence(0, win); /* one writer per slot per round */
        if (o != rank) continue;
        for (int t = 1; t < size; t++) {
            vals[t] = value(rank, t, 0);
            MPI_Put(&vals[t], 1, MPI_INT, t, rank % 4, 1, MPI_INT, win);
            count_ops(t, 1);
        }
    }
    MPI_Win_fence(0, win);
    if (rank != 0) {
        int wrong = 0;
        for (int slot = 0; slot < 4; slot++) {
            int last = -1;
            for (int o = 0; o < size; o++)
                if (o % 4 == slot) last = o;
            wrong += mem[slot] != (last < 0 ? 0 : value(last, rank, 0));
        }
        CHECK(wrong == 0, "%d wrong ints in a window next to an empty one", wrong);
    }
    MPI_Win_free(&win);
    free(vals);
}

int main(int argc, char **argv) {
    mt_init(&argc, &argv, &rank, &size);
    mt_counter_t counter = mt_counter("oxmpi_rma_single_copy_ops");

    /* Which ranks share this node. */
    on_node = calloc((size_t)size, sizeof(int));
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Group world_group, node_group;
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    MPI_Comm_group(node, &node_group);
    for (int t = 0; t < size; t++) {
        int in_node;
        MPI_Group_translate_ranks(world_group, 1, &t, node_group, &in_node);
        on_node[t] = in_node != MPI_UNDEFINED;
    }
    MPI_Group_free(&node_group);
    MPI_Group_free(&world_group);
    MPI_Comm_free(&node);

    unsigned long long before = mt_counter_read(counter);
    lock_all_ops();
    many_small_puts();
    empty_at_one_rank();
    unsigned long long counted = mt_counter_read(counter) - before;
    CHECK(counted == expected, "%llu puts and gets by single copy, expected %llu", counted, expected);

    mt_counter_close(&counter);
    free(on_node);
    int errors = mt_errors;
    MPI_Allreduce(MPI_IN_PLACE, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    mt_report(rank, errors);
    MPI_Finalize();
    return 0;
}
