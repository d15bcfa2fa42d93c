/* Partitioned communication (MPI 4: MPI_Psend_init, MPI_Precv_init,
 * MPI_Pready(_range, _list), MPI_Parrived), between pairs of ranks in
 * both directions at once, checked against the data each round:
 * - sender and receiver cut alike, and differently (more send partitions
 *   than receive ones and fewer), with contiguous and non-contiguous
 *   (vector) receive types, small partitions and partitions of 256 KiB;
 * - 100 rounds with new data, partitions marked ready in a different
 *   order each round, by four threads at once in one case;
 * - the receiver polls MPI_Parrived and checks each partition as soon as
 *   it reports it arrived;
 * - matching by tag in init order; MPI_PROC_NULL; Request_free;
 * - errors: a partition marked ready twice, MPI_Pready outside a round,
 *   MPI_Parrived on a send, MPI_ANY_SOURCE, a send larger than the
 *   receive (MPI_ERR_TRUNCATE). */
#include <pthread.h>
#include "mpitest.h"

#define ROUNDS 100

static int rank, size, peer;

static int value(int from, int round, long i) { return (int)((from * 1000003L + round * 7919L + i) & 0x7fffffff); }

struct ready_job {
    MPI_Request req;
    int first, step, n;
    const int *order;
};

static void *mark_ready(void *arg) {
    struct ready_job *j = arg;
    for (int k = j->first; k < j->n; k += j->step)
        CHECK(MPI_Pready(j->order[k], j->req) == MPI_SUCCESS, "Pready(%d) from a thread", j->order[k]);
    return NULL;
}

/* One configuration: `sparts` send partitions of `scount` ints; the
 * receiver's `rparts` partitions of `rcount` elements of `rtype` (which
 * holds `per` ints with a gap after each `per`-int block when `gap`). */
static void run(const char *name, int sparts, int scount, int rparts, int rcount, int gap, int threads,
                int rounds) {
    long total = (long)sparts * scount;
    CHECK(total == (long)rparts * rcount, "%s: the test's own shapes differ", name);
    int *sbuf = malloc(sizeof(int) * (size_t)total);
    /* Receive buffer: with a gap, each int is followed by one unused int. */
    long stride = gap ? 2 : 1;
    int *rbuf = malloc(sizeof(int) * (size_t)(total * stride + 1));
    MPI_Datatype rtype = MPI_INT;
    if (gap) {
        MPI_Datatype v;
        MPI_Type_vector(1, 1, 2, MPI_INT, &v);
        MPI_Type_create_resized(v, 0, 2 * sizeof(int), &rtype);
        MPI_Type_free(&v);
        MPI_Type_commit(&rtype);
    }
    MPI_Request sreq, rreq;
    CHECK(MPI_Precv_init(rbuf, rparts, rcount, rtype, peer, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &rreq) == MPI_SUCCESS,
          "%s: Precv_init", name);
    CHECK(MPI_Psend_init(sbuf, sparts, scount, MPI_INT, peer, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &sreq) == MPI_SUCCESS,
          "%s: Psend_init", name);
    int *order = malloc(sizeof(int) * (size_t)sparts);
    char *seen = malloc((size_t)rparts);
    for (int round = 0; round < rounds; round++) {
        for (long i = 0; i < total; i++) sbuf[i] = value(rank, round, i);
        for (long i = 0; i < total * stride + 1; i++) rbuf[i] = -1;
        /* A different order each round: a rotation, reversed every other. */
        for (int k = 0; k < sparts; k++) {
            int p = (k + round * 3) % sparts;
            order[k] = round % 2 ? sparts - 1 - p : p;
        }
        MPI_Start(&rreq);
        MPI_Start(&sreq);
        if (threads > 1) {
            pthread_t t[8];
            struct ready_job jobs[8];
            for (int k = 0; k < threads; k++) {
                jobs[k] = (struct ready_job){sreq, k, threads, sparts, order};
                pthread_create(&t[k], NULL, mark_ready, &jobs[k]);
            }
            for (int k = 0; k < threads; k++) pthread_join(t[k], NULL);
        } else if (round % 3 == 1) {
            MPI_Pready_range(0, sparts - 1, sreq);
        } else if (round % 3 == 2) {
            MPI_Pready_list(sparts, order, sreq);
        } else {
            for (int k = 0; k < sparts; k++) MPI_Pready(order[k], sreq);
        }
        /* Poll the receive partitions; check each when it arrives. */
        memset(seen, 0, (size_t)rparts);
        int left = rparts, bad = 0, polls = 0;
        while (left > 0 && polls < 100000000) {
            polls++;
            for (int p = 0; p < rparts; p++) {
                if (seen[p]) continue;
                int flag = 0;
                MPI_Parrived(rreq, p, &flag);
                if (!flag) continue;
                seen[p] = 1;
                left--;
                for (long i = (long)p * rcount; i < (long)(p + 1) * rcount; i++)
                    if (rbuf[i * stride] != value(peer, round, i)) bad++;
            }
        }
        CHECK(left == 0, "%s round %d: %d partitions never arrived", name, round, left);
        CHECK(bad == 0, "%s round %d: %d wrong ints in partitions MPI_Parrived reported", name, round, bad);
        MPI_Status st;
        CHECK(MPI_Wait(&rreq, &st) == MPI_SUCCESS, "%s: wait receive", name);
        MPI_Wait(&sreq, MPI_STATUS_IGNORE);
        for (long i = 0; i < total; i++) {
            if (rbuf[i * stride] != value(peer, round, i)) {
                CHECK(0, "%s round %d: int %ld is %d, expected %d", name, round, i, rbuf[i * stride],
                      value(peer, round, i));
                break;
            }
            if (gap && rbuf[i * stride + 1] != -1) {
                CHECK(0, "%s round %d: the gap after int %ld was written", name, round, i);
                break;
            }
        }
        int bytes = -1;
        MPI_Get_count(&st, MPI_BYTE, &bytes);
        CHECK(st.MPI_SOURCE == peer && st.MPI_TAG == 5 && bytes == (int)(total * sizeof(int)),
              "%s: status source %d tag %d bytes %d", name, st.MPI_SOURCE, st.MPI_TAG, bytes);
        int flag = 0;
        MPI_Parrived(rreq, 0, &flag);
        CHECK(flag, "%s: MPI_Parrived on an inactive request is true", name);
    }
    MPI_Request_free(&sreq);
    MPI_Request_free(&rreq);
    CHECK(sreq == MPI_REQUEST_NULL && rreq == MPI_REQUEST_NULL, "%s: freed", name);
    if (gap) MPI_Type_free(&rtype);
    free(sbuf);
    free(rbuf);
    free(order);
    free(seen);
}

int main(int argc, char **argv) {
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    peer = mt_pair_peer(rank, size);
    if (peer == MPI_PROC_NULL) peer = rank; /* the odd one out talks to itself */

    run("same cut", 8, 64, 8, 64, 0, 1, ROUNDS);
    run("more send partitions", 16, 32, 4, 128, 0, 1, ROUNDS);
    run("fewer send partitions", 2, 96, 16, 12, 0, 1, ROUNDS);
    run("non-contiguous receive, another cut", 12, 40, 8, 60, 1, 1, ROUNDS);
    run("non-contiguous receive, same cut", 6, 50, 6, 50, 1, 1, 20);
    run("threads", 64, 16, 32, 32, 0, provided == MPI_THREAD_MULTIPLE ? 4 : 1, ROUNDS);
    run("large partitions", 4, 65536, 2, 131072, 0, 1, 5);

    /* Matching by tag, in init order at each side. */
    {
        int a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8}, ra[4] = {0}, rb[4] = {0};
        MPI_Request s[2], r[2];
        MPI_Precv_init(rb, 1, 4, MPI_INT, peer, 21, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]);
        MPI_Precv_init(ra, 2, 2, MPI_INT, peer, 20, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]);
        MPI_Psend_init(a, 2, 2, MPI_INT, peer, 20, MPI_COMM_WORLD, MPI_INFO_NULL, &s[0]);
        MPI_Psend_init(b, 4, 1, MPI_INT, peer, 21, MPI_COMM_WORLD, MPI_INFO_NULL, &s[1]);
        MPI_Startall(2, r);
        MPI_Startall(2, s);
        MPI_Pready_range(0, 3, s[1]);
        MPI_Pready_range(0, 1, s[0]);
        MPI_Waitall(2, s, MPI_STATUSES_IGNORE);
        MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
        for (int i = 0; i < 4; i++)
            CHECK(ra[i] == a[i] && rb[i] == b[i], "by tag: ra[%d]=%d rb[%d]=%d", i, ra[i], i, rb[i]);
        for (int k = 0; k < 2; k++) {
            MPI_Request_free(&s[k]);
            MPI_Request_free(&r[k]);
        }
    }

    /* MPI_PROC_NULL: a round completes once every partition is ready. */
    {
        int x[4] = {9, 9, 9, 9};
        MPI_Request s, r;
        MPI_Psend_init(x, 4, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &s);
        MPI_Precv_init(x, 4, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
        MPI_Start(&s);
        MPI_Start(&r);
        int flag = 0;
        MPI_Test(&s, &flag, MPI_STATUS_IGNORE);
        CHECK(!flag, "a send to MPI_PROC_NULL is not complete before its partitions are ready");
        MPI_Pready_range(0, 3, s);
        MPI_Wait(&s, MPI_STATUS_IGNORE);
        MPI_Status st;
        MPI_Wait(&r, &st);
        CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "a receive from MPI_PROC_NULL: source %d", st.MPI_SOURCE);
        CHECK(x[0] == 9, "untouched");
        MPI_Request_free(&s);
        MPI_Request_free(&r);
    }

    /* Errors. */
    {
        int x[8] = {0}, y[8] = {0};
        MPI_Request s, r;
        MPI_Precv_init(y, 2, 4, MPI_INT, peer, 30, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
        MPI_Psend_init(x, 2, 4, MPI_INT, peer, 30, MPI_COMM_WORLD, MPI_INFO_NULL, &s);
        CHECK_CLASS(MPI_Pready(0, s), MPI_ERR_REQUEST); /* not started */
        int flag;
        CHECK_CLASS(MPI_Parrived(s, 0, &flag), MPI_ERR_REQUEST);
        MPI_Start(&r);
        MPI_Start(&s);
        CHECK_CLASS(MPI_Pready(2, s), MPI_ERR_ARG);
        CHECK_CLASS(MPI_Pready(-1, s), MPI_ERR_ARG);
        CHECK_CLASS(MPI_Pready(0, r), MPI_ERR_REQUEST);
        CHECK_CLASS(MPI_Parrived(r, 2, &flag), MPI_ERR_ARG);
        CHECK(MPI_Pready(1, s) == MPI_SUCCESS, "Pready 1");
        CHECK_CLASS(MPI_Pready(1, s), MPI_ERR_ARG); /* twice */
        CHECK_CLASS(MPI_Cancel(&s), MPI_ERR_REQUEST);
        MPI_Pready(0, s);
        MPI_Wait(&s, MPI_STATUS_IGNORE);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
        MPI_Request_free(&s);
        MPI_Request_free(&r);
        CHECK_CLASS(MPI_Precv_init(y, 1, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r),
                    MPI_ERR_RANK);
        CHECK_CLASS(MPI_Psend_init(x, 1, 1, MPI_INT, size, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &s), MPI_ERR_RANK);
        /* More bytes sent than the receive holds. */
        MPI_Precv_init(y, 1, 4, MPI_INT, peer, 31, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
        MPI_Psend_init(x, 2, 4, MPI_INT, peer, 31, MPI_COMM_WORLD, MPI_INFO_NULL, &s);
        MPI_Start(&r);
        MPI_Start(&s);
        MPI_Pready_range(0, 1, s);
        MPI_Wait(&s, MPI_STATUS_IGNORE);
        CHECK_CLASS(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_ERR_TRUNCATE);
        MPI_Request_free(&s);
        MPI_Request_free(&r);
        /* A request freed before it ever started. */
        MPI_Precv_init(y, 1, 4, MPI_INT, peer, 32, MPI_COMM_WORLD, MPI_INFO_NULL, &r);
        MPI_Psend_init(x, 1, 4, MPI_INT, peer, 32, MPI_COMM_WORLD, MPI_INFO_NULL, &s);
        MPI_Request_free(&s);
        MPI_Request_free(&r);
    }

    int errs = 0;
    MPI_Allreduce(&mt_errors, &errs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    mt_report(rank, errs);
    MPI_Finalize();
    return 0;
}
