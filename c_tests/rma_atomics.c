/* One-sided accumulates are atomic per element, whoever applies them.
 * Every rank hammers the same locations of rank 0's and then of the last
 * rank's window under MPI_Win_lock_all (no exclusion of its own), all
 * for a quarter of a second (the target for half of that, then it waits
 * in MPI calls and serves), so that accumulates applied in place and
 * accumulates applied by the target overlap; the results are checked
 * against the rounds each rank did:
 * - MPI_Accumulate(MPI_SUM) of 1 into a counter: the total is exact;
 * - MPI_Fetch_and_op(MPI_SUM) on a ticket counter: every ticket drawn
 *   in the job is distinct and they cover 0..N-1;
 * - an increment by MPI_Compare_and_swap retried until it wins (old value
 *   read with MPI_Fetch_and_op(MPI_NO_OP)): no increment is lost;
 * - MPI_Accumulate(MPI_SUM) of 0.5 into a double: exact;
 * - MPI_Get_accumulate(MPI_MAX) of rising values: the maximum, and each
 *   old value returned never exceeds what was there;
 * - MPI_Accumulate(MPI_SUM) of an array into every other int of a block
 *   (a vector target datatype): each element exact, the ints between
 *   untouched.
 * On windows of MPI_Win_allocate (ranks of a node apply accumulates to
 * each other's memory in place), MPI_Win_allocate_shared (when every
 * rank shares the node) and MPI_Win_create (always messages to the
 * target). Run also on two simulated hosts, so that rank 0's memory takes
 * accumulates in place from its node and as messages from the other. */
#include "mpitest.h"

#define SECONDS 0.25   /* each rank hammers each target this long */
#define MAXOPS 200000  /* at most this many rounds per target */
#define M 8            /* ints of the array accumulate */
#define STEP (1LL << 40) /* rank r's MPI_MAX values are r * STEP + i */

enum { COUNTER, TICKET, CAS, DSUM, MAX, ARRAY, SLOTS = ARRAY + M }; /* 8-byte slots */

/* Rounds of every operation on `target` for `seconds`; returns the rounds
 * done, the tickets drawn in `tickets`. */
static long hammer(MPI_Win win, int rank, int target, long long *tickets, double seconds) {
    long long one = 1, old, got;
    double half = 0.5;
    MPI_Datatype every_other;
    MPI_Type_vector(M, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    int add[M];
    for (int j = 0; j < M; j++) add[j] = (rank + 1) * (j + 1);
    double end = MPI_Wtime() + seconds;
    long i = 0;
    for (; i < MAXOPS && (i < 10 || MPI_Wtime() < end); i++) {
        MPI_Accumulate(&one, 1, MPI_LONG_LONG, target, COUNTER, 1, MPI_LONG_LONG, MPI_SUM, win);
        MPI_Fetch_and_op(&one, &tickets[i], MPI_LONG_LONG, target, TICKET, MPI_SUM, win);
        MPI_Fetch_and_op(NULL, &old, MPI_LONG_LONG, target, CAS, MPI_NO_OP, win);
        MPI_Win_flush(target, win);
        for (;;) {
            long long next = old + 1;
            MPI_Compare_and_swap(&next, &old, &got, MPI_LONG_LONG, target, CAS, win);
            MPI_Win_flush(target, win);
            if (got == old)
                break;
            old = got;
        }
        MPI_Accumulate(&half, 1, MPI_DOUBLE, target, DSUM, 1, MPI_DOUBLE, MPI_SUM, win);
        long long mine = rank * STEP + i, seen = -2;
        MPI_Get_accumulate(&mine, 1, MPI_LONG_LONG, &seen, 1, MPI_LONG_LONG, target, MAX, 1, MPI_LONG_LONG,
                           MPI_MAX, win);
        MPI_Accumulate(add, M, MPI_INT, target, ARRAY, 1, every_other, MPI_SUM, win);
        MPI_Win_flush(target, win);
        CHECK(seen >= -1 && seen % STEP < MAXOPS, "target %d: MPI_MAX returned %lld", target, seen);
    }
    MPI_Type_free(&every_other);
    return i;
}

/* Checks the target's memory against the rounds of every rank, and the
 * tickets every rank drew from it (`all`, n of them). */
static void check(const long long *mem, int size, int target, const char *flavor, const long *rounds,
                  const long long *all) {
    long long n = 0, max = -1, weighted = 0;
    for (int r = 0; r < size; r++) {
        n += rounds[r];
        if (rounds[r] > 0 && r * STEP + rounds[r] - 1 > max)
            max = r * STEP + rounds[r] - 1;
        weighted += rounds[r] * (r + 1);
    }
    CHECK(mem[COUNTER] == n, "%s, rank %d: counter %lld, expected %lld", flavor, target, mem[COUNTER], n);
    CHECK(mem[TICKET] == n, "%s, rank %d: ticket counter %lld, expected %lld", flavor, target, mem[TICKET], n);
    CHECK(mem[CAS] == n, "%s, rank %d: %lld compare-and-swap increments of %lld", flavor, target, mem[CAS], n);
    double dsum;
    memcpy(&dsum, &mem[DSUM], sizeof dsum);
    CHECK(dsum == 0.5 * (double)n, "%s, rank %d: double sum %g, expected %g", flavor, target, dsum, 0.5 * n);
    CHECK(mem[MAX] == max, "%s, rank %d: maximum %lld, expected %lld", flavor, target, mem[MAX], max);
    const int *ints = (const int *)&mem[ARRAY];
    for (int j = 0; j < M; j++) {
        long long want = weighted * (j + 1);
        CHECK(ints[2 * j] == (int)want, "%s, rank %d: array element %d is %d, expected %lld", flavor, target, j,
              ints[2 * j], want);
        CHECK(ints[2 * j + 1] == 0, "%s, rank %d: int %d between the elements is %d", flavor, target, 2 * j + 1,
              ints[2 * j + 1]);
    }
    char *seen = calloc((size_t)n, 1);
    for (long long i = 0; i < n; i++) {
        long long t = all[i];
        if (t < 0 || t >= n || seen[t]) {
            CHECK(0, "%s, rank %d: ticket %lld out of range or drawn twice", flavor, target, t);
            break;
        }
        seen[t] = 1;
    }
    free(seen);
}

static void run(int rank, int size, const char *flavor) {
    long long *mem = NULL;
    MPI_Win win;
    MPI_Aint bytes = SLOTS * sizeof(long long);
    if (strcmp(flavor, "MPI_Win_allocate") == 0) {
        MPI_Win_allocate(bytes, sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    } else if (strcmp(flavor, "MPI_Win_allocate_shared") == 0) {
        MPI_Win_allocate_shared(bytes, sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    } else {
        MPI_Alloc_mem(bytes, MPI_INFO_NULL, &mem);
        MPI_Win_create(mem, bytes, sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    }
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    memset(mem, 0, bytes);
    mem[MAX] = -1;
    MPI_Win_unlock(rank, win);
    MPI_Barrier(MPI_COMM_WORLD);

    int targets[2] = {0, size - 1};
    int ntargets = size > 1 ? 2 : 1;
    long long *tickets = malloc(sizeof(long long) * MAXOPS);
    long *rounds = malloc(sizeof(long) * size);
    int *counts = malloc(sizeof(int) * size), *displs = malloc(sizeof(int) * size);
    for (int t = 0; t < ntargets; t++) {
        /* The target stops halfway and then waits in MPI calls (serving
         * the messages of other nodes' origins) while its node's ranks go
         * on applying theirs in place. */
        MPI_Win_lock_all(0, win);
        long done = hammer(win, rank, targets[t], tickets, rank == targets[t] ? SECONDS / 2 : SECONDS);
        MPI_Win_unlock_all(win);
        /* Every rank's rounds and tickets, at the target. */
        MPI_Allgather(&done, 1, MPI_LONG, rounds, 1, MPI_LONG, MPI_COMM_WORLD);
        long total = 0;
        for (int r = 0; r < size; r++) {
            counts[r] = (int)rounds[r];
            displs[r] = (int)total;
            total += rounds[r];
        }
        long long *all = malloc(sizeof(long long) * (size_t)total);
        MPI_Gatherv(tickets, (int)done, MPI_LONG_LONG, all, counts, displs, MPI_LONG_LONG, targets[t],
                    MPI_COMM_WORLD);
        if (rank == targets[t]) {
            MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
            check(mem, size, rank, flavor, rounds, all);
            MPI_Win_unlock(rank, win);
        }
        free(all);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    free(counts);
    free(displs);
    free(rounds);
    free(tickets);
    MPI_Win_free(&win);
    if (strcmp(flavor, "MPI_Win_create") == 0)
        MPI_Free_mem(mem);
}

int main(int argc, char **argv) {
    int rank, size, node_size;
    mt_init(&argc, &argv, &rank, &size);
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &node_size);
    MPI_Comm_free(&node);
    int one_node = node_size == size, everywhere;
    MPI_Allreduce(&one_node, &everywhere, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    run(rank, size, "MPI_Win_allocate");
    if (everywhere)
        run(rank, size, "MPI_Win_allocate_shared");
    run(rank, size, "MPI_Win_create");
    int errors;
    MPI_Allreduce(&mt_errors, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    mt_report(rank, errors);
    MPI_Finalize();
    return errors != 0;
}
