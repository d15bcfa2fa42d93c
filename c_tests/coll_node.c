/* Blocking collectives on communicators whose members share a node meet
 * on a board in shared memory (OXMPI_NODE_COLLECTIVES, default on): this
 * checks what they must do there, with data checked against a serial
 * computation:
 * - a barrier lets nobody out before everyone is in (each rank stores its
 *   round number in a shared window before the barrier and reads every
 *   other's after it; one rank is late now and then);
 * - broadcasts of many sizes around the board's limits (2 KiB) from
 *   rotating roots, more calls than the board has slots, readers late now
 *   and then so roots run ahead, a strided datatype at the root;
 * - allreduces around the board's limit (4 KiB), MPI_IN_PLACE, and a
 *   non-commutative user operation (2x2 matrix products) whose result must
 *   be the rank-order product at every rank;
 * - the stage beside the board (larger data): broadcasts around and across
 *   its 2 MiB banks, contiguous and strided; allreduces of many pieces
 *   (sums of doubles, the matrix product, MPI_MAXLOC on 12-byte
 *   elements, a strided result type); all-to-alls of blocks up to the
 *   largest that fits a bank and one byte more (messages), in place and
 *   with a strided receive type;
 * - boards of several communicators at once (split, dup), made and freed
 *   many times, and in sessions finalized and initialized again;
 * - a member waiting on the board still moves point-to-point traffic (a
 *   large blocking send that needs its receiver to progress while the
 *   receiver is in the barrier);
 * - the MPI_T counter oxmpi_node_board_calls counts these calls when every
 *   rank is on one node and node collectives are on, and stays at zero
 *   otherwise. */
#include "mpitest.h"

#include <stdint.h>

static int rank, size;

static void late(int round, int who) {
    if (round % 97 == 0 && rank == who) usleep(2000);
}

static void check_barrier(void) {
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int nrank, nsize;
    MPI_Comm_rank(node, &nrank);
    MPI_Comm_size(node, &nsize);
    int *mine, *base;
    MPI_Win win;
    MPI_Win_allocate_shared(sizeof(int), sizeof(int), MPI_INFO_NULL, node, &mine, &win);
    MPI_Aint len;
    int unit;
    MPI_Win_shared_query(win, 0, &len, &unit, &base);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    __atomic_store_n(mine, -1, __ATOMIC_SEQ_CST);
    MPI_Barrier(node);
    int wrong = 0;
    for (int round = 0; round < 2000; round++) {
        late(round, round % nsize);
        __atomic_store_n(mine, round, __ATOMIC_SEQ_CST);
        MPI_Barrier(node);
        for (int r = 0; r < nsize; r++) {
            int seen = __atomic_load_n(&base[r], __ATOMIC_SEQ_CST);
            if (seen < round) wrong++;
        }
        /* Nobody may store the next round's number before everyone read
         * this one's. */
        MPI_Barrier(node);
    }
    CHECK(wrong == 0, "%d times a rank left a barrier before another arrived", wrong);
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    MPI_Comm_free(&node);
}

static unsigned char pattern(int i, int root, size_t k) { return (unsigned char)(i * 31 + root * 7 + k * 13 + 1); }

static void check_bcast(MPI_Comm comm) {
    int me, p;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &p);
    static const int sizes[] = {0, 1, 8, 2047, 2048, 2049, 4096, 100000};
    unsigned char *buf = malloc(100000);
    int wrong = 0;
    for (int i = 0; i < 400; i++) {
        int n = sizes[i % 8], root = (i / 3) % p;
        if (me == root)
            for (int k = 0; k < n; k++) buf[k] = pattern(i, root, k);
        else
            memset(buf, 0, n);
        late(i, (root + 1) % p);
        MPI_Bcast(buf, n, MPI_BYTE, root, comm);
        for (int k = 0; k < n; k++)
            if (buf[k] != pattern(i, root, k)) {
                wrong++;
                break;
            }
    }
    CHECK(wrong == 0, "%d broadcasts delivered wrong data", wrong);
    /* A strided type at the root, contiguous ints elsewhere. */
    MPI_Datatype every_other;
    MPI_Type_vector(100, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    int strided[200], plain[100];
    for (int round = 0; round < 3; round++) {
        int root = round % p;
        if (me == root) {
            for (int k = 0; k < 200; k++) strided[k] = k % 2 ? -1 : k / 2 * 3 + round;
            MPI_Bcast(strided, 1, every_other, root, comm);
        } else {
            memset(plain, 0, sizeof plain);
            MPI_Bcast(plain, 100, MPI_INT, root, comm);
            for (int k = 0; k < 100; k++)
                if (plain[k] != k * 3 + round) {
                    wrong++;
                    break;
                }
        }
    }
    CHECK(wrong == 0, "a strided broadcast delivered wrong data");
    MPI_Type_free(&every_other);
    free(buf);

    /* Around and across the stage's banks (2 MiB), from rotating roots. */
    const size_t bank = 2 << 20;
    const size_t large[] = {bank - 1, bank, bank + 1, 2 * bank + 100001};
    unsigned char *big = malloc(large[3]);
    for (int i = 0; i < 8; i++) {
        size_t n = large[i % 4];
        int root = (i + 1) % p;
        if (me == root)
            for (size_t k = 0; k < n; k++) big[k] = pattern(i, root, k);
        else
            memset(big, 0, n);
        late(i * 97, (root + 1) % p);
        MPI_Bcast(big, (int)n, MPI_BYTE, root, comm);
        for (size_t k = 0; k < n; k++)
            if (big[k] != pattern(i, root, k)) {
                wrong++;
                break;
            }
    }
    CHECK(wrong == 0, "%d broadcasts through the stage delivered wrong data", wrong);
    /* A strided type at the root across two pieces: 700000 ints, every
     * other one of 1400000. */
    int count = 700000;
    MPI_Type_vector(count, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    int *ints = malloc(2 * (size_t)count * sizeof(int));
    int root = p - 1;
    if (me == root) {
        for (int k = 0; k < 2 * count; k++) ints[k] = k % 2 ? -1 : k / 2 * 5 + 1;
        MPI_Bcast(ints, 1, every_other, root, comm);
    } else {
        memset(ints, 0, (size_t)count * sizeof(int));
        MPI_Bcast(ints, count, MPI_INT, root, comm);
        for (int k = 0; k < count; k++)
            if (ints[k] != k * 5 + 1) {
                wrong++;
                break;
            }
    }
    CHECK(wrong == 0, "a strided broadcast through the stage delivered wrong data");
    MPI_Type_free(&every_other);
    free(ints);
    free(big);
}

typedef struct {
    int64_t a, b, c, d;
} mat;
#define MOD 1000003

static mat mul(mat x, mat y) {
    mat z = {(x.a * y.a + x.b * y.c) % MOD, (x.a * y.b + x.b * y.d) % MOD, (x.c * y.a + x.d * y.c) % MOD,
             (x.c * y.b + x.d * y.d) % MOD};
    return z;
}

/* inout = in * inout, element by element (MPI's order: in comes first). */
static void matmul(void *in, void *inout, int *len, MPI_Datatype *dt) {
    (void)dt;
    mat *x = in, *y = inout;
    for (int i = 0; i < *len; i++) y[i] = mul(x[i], y[i]);
}

static mat mat_of(int r, int i) {
    mat m = {r + 2, i % 5 + 1, r * 3 % 7, r + i % 3 + 1};
    return m;
}

static void check_allreduce(MPI_Comm comm) {
    int me, p;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &p);
    static const int counts[] = {1, 2, 512, 513, 10000};
    double *in = malloc(10000 * sizeof(double)), *out = malloc(10000 * sizeof(double));
    int wrong = 0;
    for (int i = 0; i < 300; i++) {
        int n = counts[i % 5];
        for (int k = 0; k < n; k++) in[k] = (double)(me + 1) * (k % 17 + i);
        late(i, (i / 5) % p);
        if (i % 2) {
            memcpy(out, in, n * sizeof(double));
            MPI_Allreduce(MPI_IN_PLACE, out, n, MPI_DOUBLE, MPI_SUM, comm);
        } else {
            MPI_Allreduce(in, out, n, MPI_DOUBLE, MPI_SUM, comm);
        }
        for (int k = 0; k < n; k++)
            if (out[k] != (double)p * (p + 1) / 2 * (k % 17 + i)) {
                wrong++;
                break;
            }
    }
    CHECK(wrong == 0, "%d allreduces gave a wrong sum", wrong);
    int imax, got;
    imax = me * 7 % 5;
    MPI_Allreduce(&imax, &got, 1, MPI_INT, MPI_MAX, comm);
    int want = 0;
    for (int r = 0; r < p; r++) want = r * 7 % 5 > want ? r * 7 % 5 : want;
    CHECK(got == want, "MPI_MAX gave %d, expected %d", got, want);
    /* A non-commutative operation: the product in rank order. */
    MPI_Datatype mat_type;
    MPI_Type_contiguous(4, MPI_INT64_T, &mat_type);
    MPI_Type_commit(&mat_type);
    MPI_Op op;
    MPI_Op_create(matmul, 0, &op);
    for (int i = 0; i < 50; i++) {
        mat mine[3], res[3];
        for (int j = 0; j < 3; j++) mine[j] = mat_of(me, i + j);
        MPI_Allreduce(mine, res, 3, mat_type, op, comm);
        for (int j = 0; j < 3; j++) {
            mat serial = mat_of(0, i + j);
            for (int r = 1; r < p; r++) serial = mul(serial, mat_of(r, i + j));
            if (memcmp(&serial, &res[j], sizeof serial)) wrong++;
        }
    }
    CHECK(wrong == 0, "a non-commutative allreduce was not the rank-order product");

    /* Through the stage: many pieces; a count that ends mid-piece. */
    static const int large[] = {600, 65536, 262147, 700001};
    double *lin = malloc(700001 * sizeof(double)), *lout = malloc(700001 * sizeof(double));
    for (int i = 0; i < 8; i++) {
        int n = large[i % 4];
        for (int k = 0; k < n; k++) lin[k] = (double)(me + 1) * (k % 29 + i);
        late(i * 97, i % p);
        if (i % 2) {
            memcpy(lout, lin, n * sizeof(double));
            MPI_Allreduce(MPI_IN_PLACE, lout, n, MPI_DOUBLE, MPI_SUM, comm);
        } else {
            MPI_Allreduce(lin, lout, n, MPI_DOUBLE, MPI_SUM, comm);
        }
        for (int k = 0; k < n; k++)
            if (lout[k] != (double)p * (p + 1) / 2 * (k % 29 + i)) {
                wrong++;
                break;
            }
    }
    CHECK(wrong == 0, "%d allreduces through the stage gave a wrong sum", wrong);
    /* The rank-order product of 20000 matrices (32-byte elements): pieces
     * whose elements do not split evenly among the members. */
    int nm = 20000;
    mat *mine = malloc(nm * sizeof(mat)), *res = malloc(nm * sizeof(mat));
    for (int j = 0; j < nm; j++) mine[j] = mat_of(me, j);
    MPI_Allreduce(mine, res, nm, mat_type, op, comm);
    for (int j = 0; j < nm; j++) {
        mat serial = mat_of(0, j);
        for (int r = 1; r < p; r++) serial = mul(serial, mat_of(r, j));
        if (memcmp(&serial, &res[j], sizeof serial)) {
            wrong++;
            break;
        }
    }
    CHECK(wrong == 0, "a non-commutative allreduce through the stage was not the rank-order product");
    free(mine);
    free(res);
    /* MPI_MAXLOC on MPI_DOUBLE_INT (12 bytes packed). */
    struct {
        double v;
        int at;
    } *dl = malloc(50000 * sizeof *dl), *dlr = malloc(50000 * sizeof *dlr);
    for (int k = 0; k < 50000; k++) {
        dl[k].v = (double)((me * 7 + k) % p);
        dl[k].at = me;
    }
    MPI_Allreduce(dl, dlr, 50000, MPI_DOUBLE_INT, MPI_MAXLOC, comm);
    for (int k = 0; k < 50000; k++) {
        /* The largest value is p - 1, first held by the lowest rank r with
         * (r * 7 + k) % p == p - 1. */
        int at = -1;
        for (int r = 0; r < p && at < 0; r++)
            if ((r * 7 + k) % p == p - 1) at = r;
        if (at >= 0 && (dlr[k].v != p - 1 || dlr[k].at != at)) {
            wrong++;
            break;
        }
    }
    CHECK(wrong == 0, "MPI_MAXLOC through the stage gave a wrong location");
    free(dl);
    free(dlr);
    /* A strided result type: every other double of 2 * 40000. */
    MPI_Datatype strided;
    MPI_Type_vector(40000, 1, 2, MPI_DOUBLE, &strided);
    MPI_Type_commit(&strided);
    double *sres = malloc(80000 * sizeof(double));
    for (int k = 0; k < 80000; k++) sres[k] = k % 2 ? -7.0 : (double)(me + k / 2);
    MPI_Allreduce(MPI_IN_PLACE, sres, 1, strided, MPI_SUM, comm);
    for (int k = 0; k < 80000; k++) {
        double want = k % 2 ? -7.0 : (double)p * (k / 2) + (double)p * (p - 1) / 2;
        if (sres[k] != want) {
            wrong++;
            break;
        }
    }
    CHECK(wrong == 0, "an allreduce into a strided type through the stage was wrong");
    MPI_Type_free(&strided);
    free(sres);
    free(lin);
    free(lout);
    MPI_Op_free(&op);
    MPI_Type_free(&mat_type);
    free(in);
    free(out);
}

static unsigned char cell(int from, int to, size_t k) { return (unsigned char)(from * 11 + to * 5 + k * 3 + 2); }

static void check_alltoall(MPI_Comm comm) {
    int me, p;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &p);
    /* 1 byte, 1 KiB, the largest block whose p * p fit a bank, one more. */
    size_t fit = (2 << 20) / ((size_t)p * p);
    size_t blocks[] = {1, 1024, fit, fit + 1};
    unsigned char *send = malloc((fit + 1) * p), *recv = malloc((fit + 1) * p);
    int wrong = 0;
    for (int i = 0; i < 16; i++) {
        size_t b = blocks[i % 4];
        int in_place = i % 8 >= 4;
        unsigned char *source = in_place ? recv : send;
        for (int to = 0; to < p; to++)
            for (size_t k = 0; k < b; k++) source[to * b + k] = cell(me, to, k + i);
        if (!in_place) memset(recv, 0, b * p);
        late(i * 97, i % p);
        if (in_place)
            MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, recv, (int)b, MPI_BYTE, comm);
        else
            MPI_Alltoall(send, (int)b, MPI_BYTE, recv, (int)b, MPI_BYTE, comm);
        for (int from = 0; from < p; from++)
            for (size_t k = 0; k < b; k++)
                if (recv[from * b + k] != cell(from, me, k + i)) {
                    wrong++;
                    from = p;
                    break;
                }
    }
    CHECK(wrong == 0, "%d all-to-alls delivered wrong blocks", wrong);
    /* Blocks of 100 ints sent contiguous, received every other int. */
    MPI_Datatype every_other, resized;
    MPI_Type_vector(100, 1, 2, MPI_INT, &every_other);
    MPI_Type_create_resized(every_other, 0, 200 * sizeof(int), &resized);
    MPI_Type_commit(&resized);
    int *isend = malloc(100 * sizeof(int) * p), *irecv = malloc(200 * sizeof(int) * p);
    for (int to = 0; to < p; to++)
        for (int k = 0; k < 100; k++) isend[to * 100 + k] = me * 1000 + to * 100 + k;
    for (int k = 0; k < 200 * p; k++) irecv[k] = -1;
    MPI_Alltoall(isend, 100, MPI_INT, irecv, 1, resized, comm);
    for (int from = 0; from < p; from++)
        for (int k = 0; k < 200; k++) {
            int want = k % 2 ? -1 : from * 1000 + me * 100 + k / 2;
            if (irecv[from * 200 + k] != want) {
                wrong++;
                from = p;
                break;
            }
        }
    CHECK(wrong == 0, "an all-to-all into a strided type delivered wrong data");
    MPI_Type_free(&resized);
    MPI_Type_free(&every_other);
    free(isend);
    free(irecv);
    free(send);
    free(recv);
}

/* Even ranks receive 1 MiB from their odd partner with MPI_Irecv, then
 * enter a barrier; odd ranks send it with a blocking MPI_Send first: the
 * send completes only if the receiver moves it along while it waits. */
static void check_progress_in_barrier(void) {
    int peer = mt_pair_peer(rank, size);
    size_t n = 1 << 20;
    char *buf = malloc(n);
    MPI_Request r = MPI_REQUEST_NULL;
    if (peer != MPI_PROC_NULL && rank % 2 == 0) {
        memset(buf, 0, n);
        MPI_Irecv(buf, (int)n, MPI_CHAR, peer, 5, MPI_COMM_WORLD, &r);
    } else if (peer != MPI_PROC_NULL) {
        memset(buf, 'x', n);
        MPI_Send(buf, (int)n, MPI_CHAR, peer, 5, MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    if (peer != MPI_PROC_NULL && rank % 2 == 0)
        CHECK(buf[0] == 'x' && buf[n - 1] == 'x', "the message sent during the barrier arrived wrong");
    /* A nonblocking broadcast in flight across blocking collectives. */
    int value = rank == 0 ? 4242 : 0, sum = 0, one = 1;
    MPI_Ibcast(&value, 1, MPI_INT, 0, MPI_COMM_WORLD, &r);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(value == 4242 && sum == size, "ibcast %d, allreduce %d", value, sum);
    free(buf);
}

static void check_many_communicators(void) {
    int wrong = 0;
    for (int i = 0; i < 30; i++) {
        MPI_Comm half, dup;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        int hsize, hrank, x = rank, y = 0, z = 0;
        MPI_Comm_size(half, &hsize);
        MPI_Comm_rank(half, &hrank);
        /* Interleaved on the two communicators. */
        MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, half);
        MPI_Barrier(dup);
        MPI_Allreduce(&x, &z, 1, MPI_INT, MPI_SUM, dup);
        int want_half = 0;
        for (int r = rank % 2; r < size; r += 2) want_half += r;
        if (y != want_half || z != size * (size - 1) / 2) wrong++;
        int root_value = hrank == 0 ? rank : -1;
        MPI_Bcast(&root_value, 1, MPI_INT, 0, half);
        /* Rank 0 of `half` is its highest world rank (keys -rank). */
        int top = rank % 2 == 0 ? (size - 1) / 2 * 2 : (size % 2 ? size - 2 : size - 1);
        if (root_value != top) wrong++;
        MPI_Comm_free(&half);
        MPI_Comm_free(&dup);
    }
    CHECK(wrong == 0, "%d wrong results on split and duplicated communicators", wrong);
}

static void check_sessions(void) {
    int wrong = 0;
    for (int cycle = 0; cycle < 3; cycle++) {
        MPI_Session s;
        MPI_Comm c;
        mt_session_world(&s, "oxmpi.test.coll_node", &c);
        int x = cycle + rank, sum = 0, b = rank == 0 ? 77 + cycle : 0;
        MPI_Barrier(c);
        MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, c);
        MPI_Bcast(&b, 1, MPI_INT, 0, c);
        if (sum != cycle * size + size * (size - 1) / 2 || b != 77 + cycle) wrong++;
        MPI_Comm_free(&c);
        MPI_Session_finalize(&s);
    }
    CHECK(wrong == 0, "%d wrong results in sessions", wrong);
}

static mt_counter_t board_counter;

static unsigned long long board_calls(void) {
    return mt_counter_read(board_counter);
}

int main(int argc, char **argv) {
    mt_init(&argc, &argv, &rank, &size);
    board_counter = mt_counter("oxmpi_node_board_calls");

    /* Whether world's collectives should meet on a board. */
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    int nsize;
    MPI_Comm_size(node, &nsize);
    MPI_Comm_free(&node);
    const char *knob = getenv("OXMPI_NODE_COLLECTIVES");
    const char *transport = getenv("OXMPI_TRANSPORT");
    int enabled = !(knob && strcmp(knob, "0") == 0) && !(transport && strcmp(transport, "tcp") == 0);
    int on_board = enabled && size > 1 && nsize == size;

    unsigned long long before = board_calls();
    int one = 1, sum = 0;
    for (int i = 0; i < 10; i++) MPI_Barrier(MPI_COMM_WORLD);
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Bcast(&one, 1, MPI_INT, 0, MPI_COMM_WORLD);
    unsigned long long counted = board_calls() - before;
    CHECK(sum == size, "allreduce gave %d", sum);
    if (on_board)
        CHECK(counted == 12, "12 calls on the board, counted %llu", counted);
    else
        CHECK(counted == 0, "no board expected, counted %llu", counted);

    check_barrier();
    check_bcast(MPI_COMM_WORLD);
    check_allreduce(MPI_COMM_WORLD);
    check_alltoall(MPI_COMM_WORLD);
    check_progress_in_barrier();
    check_many_communicators();
    check_sessions();

    mt_counter_close(&board_counter);
    int errors = mt_errors;
    MPI_Allreduce(MPI_IN_PLACE, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    mt_report(rank, errors);
    MPI_Finalize();
    return errors != 0;
}
