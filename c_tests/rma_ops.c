/* One-sided communication, every operation under every synchronization:
 * - fence: MPI_Put, MPI_Get and MPI_Accumulate between all ranks on a
 *   window of MPI_Win_create, with a strided (vector) target datatype and
 *   a contiguous origin, values checked on both sides;
 * - lock/unlock: every rank adds to one counter on rank 0 with
 *   MPI_Accumulate (exclusive and shared locks), MPI_Fetch_and_op (each
 *   ticket it draws is unique) and MPI_Compare_and_swap (one winner);
 *   the totals are the exact serial results;
 * - lock_all + flush + MPI_Rput/MPI_Rget/MPI_Rget_accumulate with
 *   requests, on a window of MPI_Win_allocate;
 * - post/start/complete/wait (and MPI_Win_test) in a ring;
 * - MPI_Win_create_dynamic with attach, addresses exchanged, put and get;
 * - MPI_Get_accumulate with MPI_NO_OP and MPI_REPLACE, MPI_MAXLOC on
 *   MPI_2INT pairs;
 * - large puts and gets (their data moves without packing): fence
 *   exchange checked element by element, and exclusive locks handed
 *   between ranks that each put their id over a whole region then get it
 *   back in another epoch: every get sees one rank's values, never a mix
 *   (a get's data must be read before the lock passes on).
 * Run over shared memory and over TCP (OXMPI_TRANSPORT=tcp). */
#include "mpitest.h"

#define N 16

static void fence_ops(int rank, int size) {
    /* Each rank's window: N ints per rank; rank r writes into slot r. */
    int *mem = calloc((size_t)size * 2 * N, sizeof(int));
    MPI_Win win;
    MPI_Win_create(mem, (MPI_Aint)size * 2 * N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    /* Target type: N ints, every second one (stride 2). */
    MPI_Datatype strided;
    MPI_Type_vector(N, 1, 2, MPI_INT, &strided);
    MPI_Type_commit(&strided);
    int out[N];
    for (int i = 0; i < N; i++) out[i] = 1000 * rank + i;
    MPI_Win_fence(MPI_MODE_NOPRECEDE, win);
    for (int t = 0; t < size; t++)
        MPI_Put(out, N, MPI_INT, t, (MPI_Aint)rank * 2 * N, 1, strided, win);
    MPI_Win_fence(0, win);
    for (int r = 0; r < size; r++)
        for (int i = 0; i < N; i++) {
            CHECK(mem[r * 2 * N + 2 * i] == 1000 * r + i, "fence put: slot %d elt %d is %d", r, i,
                  mem[r * 2 * N + 2 * i]);
            CHECK(mem[r * 2 * N + 2 * i + 1] == 0, "fence put: the hole %d/%d stays 0", r, i);
        }
    /* Local reads above and remote updates below are in different epochs. */
    MPI_Win_fence(0, win);
    /* Everyone adds its rank + 1 to the holes of every target. */
    int add[N];
    for (int i = 0; i < N; i++) add[i] = rank + 1;
    for (int t = 0; t < size; t++)
        for (int r = 0; r < size; r++)
            MPI_Accumulate(add, N, MPI_INT, t, (MPI_Aint)r * 2 * N + 1, 1, strided, MPI_SUM, win);
    MPI_Win_fence(0, win);
    int total = size * (size + 1) / 2;
    for (int r = 0; r < size; r++)
        for (int i = 0; i < N; i++)
            CHECK(mem[r * 2 * N + 2 * i + 1] == total, "fence accumulate: %d/%d is %d, expected %d", r, i,
                  mem[r * 2 * N + 2 * i + 1], total);
    /* Get the right neighbour's slot of ours, packed. */
    int right = (rank + 1) % size;
    int in[2 * N];
    memset(in, -1, sizeof in);
    MPI_Get(in, 2 * N, MPI_INT, right, (MPI_Aint)rank * 2 * N, 2 * N, MPI_INT, win);
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    for (int i = 0; i < N; i++) {
        CHECK(in[2 * i] == 1000 * rank + i, "fence get: %d is %d", 2 * i, in[2 * i]);
        CHECK(in[2 * i + 1] == total, "fence get: %d is %d", 2 * i + 1, in[2 * i + 1]);
    }
    /* Outside an epoch an operation is MPI_ERR_RMA_SYNC; outside the window, RMA_RANGE. */
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    CHECK_CLASS(MPI_Put(out, 1, MPI_INT, right, 0, 1, MPI_INT, win), MPI_ERR_RMA_SYNC);
    MPI_Win_fence(0, win);
    CHECK_CLASS(MPI_Put(out, 2, MPI_INT, right, (MPI_Aint)size * 2 * N - 1, 2, MPI_INT, win), MPI_ERR_RMA_RANGE);
    CHECK_CLASS(MPI_Put(out, 1, MPI_INT, size, 0, 1, MPI_INT, win), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Accumulate(out, 1, MPI_INT, right, 0, 1, MPI_INT, MPI_OP_NULL, win), MPI_ERR_OP);
    CHECK(MPI_Put(out, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win) == MPI_SUCCESS, "MPI_PROC_NULL target");
    MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
    MPI_Type_free(&strided);
    MPI_Win_free(&win);
    CHECK(win == MPI_WIN_NULL, "MPI_Win_free sets MPI_WIN_NULL");
    free(mem);
}

static void lock_ops(int rank, int size) {
    long long *mem;
    MPI_Win win;
    MPI_Win_allocate(4 * sizeof(long long), sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    mem[0] = mem[1] = mem[2] = 0;
    mem[3] = -1;
    MPI_Barrier(MPI_COMM_WORLD);
    const int rounds = 50;
    long long one = 1, ticket, tickets[50];
    for (int i = 0; i < rounds; i++) {
        MPI_Win_lock(i % 2 ? MPI_LOCK_SHARED : MPI_LOCK_EXCLUSIVE, 0, 0, win);
        MPI_Accumulate(&one, 1, MPI_LONG_LONG, 0, 0, 1, MPI_LONG_LONG, MPI_SUM, win);
        MPI_Fetch_and_op(&one, &ticket, MPI_LONG_LONG, 0, 1, MPI_SUM, win);
        MPI_Win_unlock(0, win);
        tickets[i] = ticket;
    }
    /* One compare-and-swap wins: slot 3 goes from -1 to a rank. */
    long long me = rank, old = -2, expect = -1;
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    MPI_Compare_and_swap(&me, &expect, &old, MPI_LONG_LONG, 0, 3, win);
    MPI_Win_unlock(0, win);
    int won = old == -1, winners;
    MPI_Allreduce(&won, &winners, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(winners == 1, "%d compare-and-swaps won, expected 1", winners);
    CHECK(old == -1 || (old >= 0 && old < size), "the old value %lld is -1 or a rank", old);
    /* Tickets: all distinct across the job, 0..size*rounds-1. */
    long long *all = malloc(sizeof(long long) * (size_t)size * rounds);
    MPI_Allgather(tickets, rounds, MPI_LONG_LONG, all, rounds, MPI_LONG_LONG, MPI_COMM_WORLD);
    char *seen = calloc((size_t)size * rounds, 1);
    for (int i = 0; i < size * rounds; i++) {
        CHECK(all[i] >= 0 && all[i] < size * rounds, "ticket %lld in range", all[i]);
        if (all[i] >= 0 && all[i] < size * rounds) {
            CHECK(!seen[all[i]], "ticket %lld drawn twice", all[i]);
            seen[all[i]] = 1;
        }
    }
    free(seen);
    free(all);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        CHECK(mem[0] == (long long)size * rounds, "counter is %lld, expected %d", mem[0], size * rounds);
        CHECK(mem[1] == (long long)size * rounds, "ticket counter is %lld", mem[1]);
        MPI_Win_unlock(0, win);
    }
    /* Lock misuse. */
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    CHECK_CLASS(MPI_Win_unlock(0, win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Win_lock(12345, 0, 0, win), MPI_ERR_LOCKTYPE);
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    CHECK_CLASS(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win), MPI_ERR_RMA_SYNC);
    MPI_Win_unlock(0, win);
    MPI_Win_free(&win);
}

static void request_ops(int rank, int size) {
    int *mem;
    MPI_Win win;
    MPI_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    for (int i = 0; i < N; i++) mem[i] = rank * 100 + i;
    MPI_Barrier(MPI_COMM_WORLD);
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    MPI_Win_lock_all(0, win);
    int got[N], fetched[N], mine[N];
    MPI_Request reqs[3];
    MPI_Rget(got, N, MPI_INT, right, 0, N, MPI_INT, win, &reqs[0]);
    MPI_Waitall(1, reqs, MPI_STATUSES_IGNORE);
    for (int i = 0; i < N; i++)
        CHECK(got[i] == right * 100 + i, "Rget %d is %d", i, got[i]);
    MPI_Win_flush_all(win);
    /* Every Rget is done before anyone writes. */
    MPI_Barrier(MPI_COMM_WORLD);
    /* Everyone writes its rank into the left neighbour's first half... */
    for (int i = 0; i < N; i++) mine[i] = -rank;
    MPI_Rput(mine, N / 2, MPI_INT, left, 0, N / 2, MPI_INT, win, &reqs[1]);
    MPI_Wait(&reqs[1], MPI_STATUS_IGNORE);
    MPI_Win_flush(left, win);
    /* ...and fetches-and-adds the second half of the right one. */
    int ones[N];
    for (int i = 0; i < N; i++) ones[i] = 1;
    MPI_Rget_accumulate(ones, N / 2, MPI_INT, fetched, N / 2, MPI_INT, right, N / 2, N / 2, MPI_INT, MPI_SUM, win,
                        &reqs[2]);
    MPI_Wait(&reqs[2], MPI_STATUS_IGNORE);
    for (int i = 0; i < N / 2; i++)
        CHECK(fetched[i] == right * 100 + N / 2 + i, "Rget_accumulate fetched %d: %d", i, fetched[i]);
    MPI_Win_flush_local_all(win);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    for (int i = 0; i < N / 2; i++)
        CHECK(mem[i] == -right, "my first half %d is %d, from rank %d", i, mem[i], right);
    for (int i = N / 2; i < N; i++)
        CHECK(mem[i] == rank * 100 + i + 1, "my second half %d is %d", i, mem[i]);
    MPI_Win_unlock(rank, win);
    /* NO_OP reads, REPLACE swaps. */
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win);
    int before, swapped, val = 7 + rank;
    MPI_Get_accumulate(NULL, 0, MPI_INT, &before, 1, MPI_INT, right, N - 1, 1, MPI_INT, MPI_NO_OP, win);
    MPI_Win_flush(right, win);
    CHECK(before == right * 100 + N, "NO_OP read %d", before);
    MPI_Win_unlock(right, win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
    MPI_Get_accumulate(&val, 1, MPI_INT, &swapped, 1, MPI_INT, right, 0, 1, MPI_INT, MPI_REPLACE, win);
    MPI_Win_unlock(right, win);
    CHECK(swapped == -((right + 1) % size), "REPLACE gave back %d", swapped);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(mem[0] == 7 + left, "REPLACE wrote %d", mem[0]);
    MPI_Win_free(&win);
}

static void pscw_ops(int rank, int size) {
    int mem[2] = {0, 0};
    MPI_Win win;
    MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Group world, from, to;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    MPI_Group_incl(world, 1, &left, &from);
    MPI_Group_incl(world, 1, &right, &to);
    for (int round = 1; round <= 5; round++) {
        MPI_Win_post(from, 0, win);
        MPI_Win_start(to, 0, win);
        int v = rank * 10 + round;
        MPI_Put(&v, 1, MPI_INT, right, 0, 1, MPI_INT, win);
        MPI_Accumulate(&round, 1, MPI_INT, right, 1, 1, MPI_INT, MPI_SUM, win);
        MPI_Win_complete(win);
        if (round % 2) {
            MPI_Win_wait(win);
        } else {
            int flag = 0;
            while (!flag) MPI_Win_test(win, &flag);
        }
        CHECK(mem[0] == left * 10 + round, "PSCW round %d: %d", round, mem[0]);
        CHECK(mem[1] == round * (round + 1) / 2, "PSCW round %d sum: %d", round, mem[1]);
    }
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    CHECK_CLASS(MPI_Win_complete(win), MPI_ERR_RMA_SYNC);
    CHECK_CLASS(MPI_Win_wait(win), MPI_ERR_RMA_SYNC);
    MPI_Group_free(&from);
    MPI_Group_free(&to);
    MPI_Group_free(&world);
    MPI_Win_free(&win);
}

static void dynamic_ops(int rank, int size) {
    MPI_Win win;
    MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    double *region = calloc(N, sizeof(double));
    MPI_Win_attach(win, region, N * sizeof(double));
    MPI_Aint mine, *addrs = malloc(sizeof(MPI_Aint) * (size_t)size);
    MPI_Get_address(region, &mine);
    MPI_Allgather(&mine, 1, MPI_AINT, addrs, 1, MPI_AINT, MPI_COMM_WORLD);
    int right = (rank + 1) % size;
    double v[N], back[N];
    for (int i = 0; i < N; i++) v[i] = rank + i / 8.0;
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win);
    MPI_Put(v, N, MPI_DOUBLE, right, addrs[right], N, MPI_DOUBLE, win);
    MPI_Win_flush(right, win);
    MPI_Get(back, N, MPI_DOUBLE, right, addrs[right], N, MPI_DOUBLE, win);
    MPI_Win_unlock(right, win);
    for (int i = 0; i < N; i++) CHECK(back[i] == v[i], "dynamic get %d: %g", i, back[i]);
    MPI_Barrier(MPI_COMM_WORLD);
    int left = (rank + size - 1) % size;
    for (int i = 0; i < N; i++) CHECK(region[i] == left + i / 8.0, "dynamic put landed %d: %g", i, region[i]);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    CHECK_CLASS(MPI_Win_detach(win, v), MPI_ERR_RMA_ATTACH);
    MPI_Win_detach(win, region);
    MPI_Win_free(&win);
    free(region);
    free(addrs);
}

static void maxloc_ops(int rank, int size) {
    int pair[2] = {-1, -1};
    MPI_Win win;
    MPI_Win_create(pair, sizeof pair, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    MPI_Win_fence(0, win);
    int mine[2] = {(rank * 7) % size, rank};
    MPI_Accumulate(mine, 1, MPI_2INT, 0, 0, 1, MPI_2INT, MPI_MAXLOC, win);
    MPI_Win_fence(0, win);
    if (rank == 0) {
        int best = -1, at = -1;
        for (int r = 0; r < size; r++)
            if ((r * 7) % size > best) best = (r * 7) % size, at = r;
        CHECK(pair[0] == best && pair[1] == at, "MAXLOC gave (%d, %d), expected (%d, %d)", pair[0], pair[1], best,
              at);
    }
    MPI_Win_free(&win);
}

#define BIG (64 * 1024)

static void large_ops(int rank, int size) {
    int *mem, *buf = malloc(BIG * sizeof(int));
    MPI_Win win;
    MPI_Win_allocate(2 * BIG * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int i = 0; i < BIG; i++) buf[i] = rank * BIG + i;
    MPI_Win_fence(0, win);
    MPI_Put(buf, BIG, MPI_INT, right, BIG, BIG, MPI_INT, win);
    MPI_Win_fence(0, win);
    int bad = 0;
    for (int i = 0; i < BIG; i++) bad += mem[BIG + i] != left * BIG + i;
    CHECK(bad == 0, "large fence put: %d elements wrong", bad);
    MPI_Win_fence(0, win);
    memset(buf, 0, BIG * sizeof(int));
    MPI_Get(buf, BIG, MPI_INT, left, BIG, BIG, MPI_INT, win);
    MPI_Win_fence(0, win);
    bad = 0;
    for (int i = 0; i < BIG; i++) bad += buf[i] != ((left + size - 1) % size) * BIG + i;
    CHECK(bad == 0, "large fence get: %d elements wrong", bad);
    /* Exclusive locks on rank 0's region: whole-region puts and gets. */
    MPI_Barrier(MPI_COMM_WORLD);
    for (int round = 0; round < 10; round++) {
        for (int i = 0; i < BIG; i++) buf[i] = rank + 1;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        MPI_Put(buf, BIG, MPI_INT, 0, 0, BIG, MPI_INT, win);
        MPI_Win_unlock(0, win);
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        MPI_Get(buf, BIG, MPI_INT, 0, 0, BIG, MPI_INT, win);
        MPI_Win_unlock(0, win);
        int mixed = 0;
        for (int i = 1; i < BIG; i++) mixed += buf[i] != buf[0];
        CHECK(mixed == 0 && buf[0] >= 1 && buf[0] <= size, "round %d: a get saw %d values unlike its first (%d)",
              round, mixed, buf[0]);
    }
    MPI_Win_free(&win);
    free(buf);
}

int main(int argc, char **argv) {
    int rank, size;
    mt_init(&argc, &argv, &rank, &size);
    fence_ops(rank, size);
    lock_ops(rank, size);
    request_ops(rank, size);
    pscw_ops(rank, size);
    dynamic_ops(rank, size);
    maxloc_ops(rank, size);
    large_ops(rank, size);
    int errors;
    MPI_Allreduce(&mt_errors, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    mt_report(rank, errors);
    MPI_Finalize();
    return errors != 0;
}
