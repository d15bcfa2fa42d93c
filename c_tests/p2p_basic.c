/* Point-to-point basics on any number of ranks: blocking and nonblocking
 * sends and receives with verified payloads across the eager/rendezvous
 * threshold, wildcards and statuses, non-overtaking order, synchronous
 * sends, probes, truncation, MPI_PROC_NULL, send-receive, the completion
 * calls, cancel, and bad arguments. */
#include "mpitest.h"

static int rank, size;

static void fill(int *buf, int n, int seed) {
    for (int i = 0; i < n; i++) buf[i] = seed * 1000003 + i;
}

static int verify(const int *buf, int n, int seed) {
    for (int i = 0; i < n; i++)
        if (buf[i] != seed * 1000003 + i) return i;
    return -1;
}

/* Ring exchange of n ints with blocking calls (even ranks send first). */
static void ring_blocking(int n) {
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int *out = malloc(sizeof(int) * (n ? n : 1)), *in = malloc(sizeof(int) * (n ? n : 1));
    MPI_Status st;
    fill(out, n, rank);
    if (rank % 2 == 0) {
        MPI_Send(out, n, MPI_INT, right, 7, MPI_COMM_WORLD);
        MPI_Recv(in, n, MPI_INT, left, 7, MPI_COMM_WORLD, &st);
    } else {
        MPI_Recv(in, n, MPI_INT, left, 7, MPI_COMM_WORLD, &st);
        MPI_Send(out, n, MPI_INT, right, 7, MPI_COMM_WORLD);
    }
    int count = -1;
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == n && st.MPI_SOURCE == left && st.MPI_TAG == 7, "ring %d: count %d source %d tag %d", n, count,
          st.MPI_SOURCE, st.MPI_TAG);
    int bad = verify(in, n, left);
    CHECK(bad < 0, "ring %d ints: wrong value at %d", n, bad);
    free(out);
    free(in);
}

/* Everyone sends to everyone with Isend/Irecv and Waitall. */
static void alltoall_nonblocking(int n) {
    int *out = malloc(sizeof(int) * n * size), *in = malloc(sizeof(int) * n * size);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * 2 * size);
    for (int p = 0; p < size; p++) {
        fill(out + p * n, n, rank * 100 + p);
        MPI_Irecv(in + p * n, n, MPI_INT, p, p, MPI_COMM_WORLD, &reqs[p]);
    }
    for (int p = 0; p < size; p++) MPI_Isend(out + p * n, n, MPI_INT, p, rank, MPI_COMM_WORLD, &reqs[size + p]);
    MPI_Status *sts = malloc(sizeof(MPI_Status) * 2 * size);
    CHECK(MPI_Waitall(2 * size, reqs, sts) == MPI_SUCCESS, "waitall");
    for (int p = 0; p < size; p++) {
        CHECK(reqs[p] == MPI_REQUEST_NULL, "request not nulled");
        int bad = verify(in + p * n, n, p * 100 + rank);
        CHECK(bad < 0, "alltoall %d from %d: wrong value at %d", n, p, bad);
        CHECK(sts[p].MPI_SOURCE == p && sts[p].MPI_TAG == p, "status %d: %d/%d", p, sts[p].MPI_SOURCE, sts[p].MPI_TAG);
    }
    free(out);
    free(in);
    free(reqs);
    free(sts);
}

int main(int argc, char **argv) {
    mt_init(&argc, &argv, &rank, &size);
    int sizes[] = {0, 1, 100, 4000, 4200, 16384, 70000, 1 << 20};
    for (unsigned i = 0; i < sizeof sizes / sizeof sizes[0]; i++) ring_blocking(sizes[i]);
    alltoall_nonblocking(10);
    alltoall_nonblocking(50000);

    /* Wildcards, non-overtaking order, synchronous sends (rank 0 <-> 1). */
    if (size >= 2 && rank < 2) {
        int peer = 1 - rank, v, i;
        MPI_Status st;
        if (rank == 0) {
            for (i = 0; i < 200; i++) MPI_Send(&i, 1, MPI_INT, peer, i % 3, MPI_COMM_WORLD);
            int big[5000];
            fill(big, 5000, 9);
            MPI_Ssend(big, 5000, MPI_INT, peer, 99, MPI_COMM_WORLD);
            MPI_Ssend(&i, 1, MPI_INT, peer, 98, MPI_COMM_WORLD);
        } else {
            for (i = 0; i < 200; i++) {
                MPI_Recv(&v, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
                CHECK(v == i && st.MPI_TAG == i % 3 && st.MPI_SOURCE == 0, "order: got %d tag %d, expected %d", v,
                      st.MPI_TAG, i);
            }
            int big[5000];
            MPI_Recv(big, 5000, MPI_INT, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(verify(big, 5000, 9) < 0, "ssend payload");
            MPI_Recv(&v, 1, MPI_INT, 0, 98, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }

    /* Probe, Iprobe and truncation (rank 0 -> last). */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (size >= 2 && (rank == 0 || rank == size - 1)) {
        int last = size - 1;
        if (rank == 0) {
            int data[10];
            fill(data, 10, 3);
            MPI_Send(data, 10, MPI_INT, last, 5, MPI_COMM_WORLD);
            MPI_Send(data, 10, MPI_INT, last, 6, MPI_COMM_WORLD);
            MPI_Send(data, 3, MPI_BYTE, last, 7, MPI_COMM_WORLD);
            MPI_Send(data, 3, MPI_BYTE, last, 7, MPI_COMM_WORLD);
        } else {
            MPI_Status st;
            int flag = 0, count = 0, data[10];
            MPI_Probe(0, 5, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, MPI_INT, &count);
            CHECK(count == 10 && st.MPI_SOURCE == 0 && st.MPI_TAG == 5, "probe count %d", count);
            while (!flag) MPI_Iprobe(MPI_ANY_SOURCE, 6, MPI_COMM_WORLD, &flag, &st);
            CHECK(st.MPI_TAG == 6, "iprobe tag %d", st.MPI_TAG);
            MPI_Recv(data, 10, MPI_INT, 0, 5, MPI_COMM_WORLD, &st);
            CHECK(verify(data, 10, 3) < 0, "probed payload");
            memset(data, 0, sizeof data);
            int rc = MPI_Recv(data, 4, MPI_INT, 0, 6, MPI_COMM_WORLD, &st);
            CHECK(mt_class(rc) == MPI_ERR_TRUNCATE, "truncation gives class %d", mt_class(rc));
            CHECK(verify(data, 4, 3) < 0 && data[4] == 0, "truncated payload");
            MPI_Iprobe(0, 6, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            CHECK(!flag, "truncated message consumed");
            /* 3 bytes into ints: a contiguous buffer takes them (no whole
             * element: MPI_UNDEFINED), one of several blocks reports the
             * signatures that cannot match (MPI_ERR_TYPE), as MPICH. */
            MPI_Datatype every_other;
            MPI_Type_vector(4, 1, 2, MPI_INT, &every_other);
            MPI_Type_commit(&every_other);
            rc = MPI_Recv(data, 4, MPI_INT, 0, 7, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, MPI_INT, &count);
            CHECK(rc == MPI_SUCCESS && count == MPI_UNDEFINED, "3 bytes into ints: rc %d, count %d", rc, count);
            rc = MPI_Recv(data, 1, every_other, 0, 7, MPI_COMM_WORLD, &st);
            CHECK(mt_class(rc) == MPI_ERR_TYPE, "3 bytes into a vector of ints: class %d", mt_class(rc));
            MPI_Type_free(&every_other);
        }
    }

    /* MPI_PROC_NULL. */
    {
        MPI_Status st;
        int v = 5, count = -1;
        CHECK(MPI_Send(&v, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD) == MPI_SUCCESS, "send to PROC_NULL");
        CHECK(MPI_Recv(&v, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st) == MPI_SUCCESS, "recv PROC_NULL");
        MPI_Get_count(&st, MPI_INT, &count);
        CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && count == 0 && v == 5,
              "PROC_NULL status %d %d %d", st.MPI_SOURCE, st.MPI_TAG, count);
    }

    /* Sendrecv and Sendrecv_replace around the ring. */
    {
        int right = (rank + 1) % size, left = (rank + size - 1) % size;
        int out[300], in[300];
        fill(out, 300, rank);
        MPI_Sendrecv(out, 300, MPI_INT, right, 1, in, 300, MPI_INT, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(verify(in, 300, left) < 0, "sendrecv");
        MPI_Sendrecv_replace(out, 300, MPI_INT, right, 2, left, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(verify(out, 300, left) < 0, "sendrecv_replace");
    }

    /* Test, Testall, Waitany, Waitsome, Request_get_status, self messages. */
    {
        int a = 1, b = 2, x = 0, y = 0, flag = 0, idx = -1, outcount = 0, indices[2];
        MPI_Request r[2];
        MPI_Irecv(&x, 1, MPI_INT, rank, 11, MPI_COMM_WORLD, &r[0]);
        MPI_Irecv(&y, 1, MPI_INT, rank, 12, MPI_COMM_WORLD, &r[1]);
        MPI_Testall(2, r, &flag, MPI_STATUSES_IGNORE);
        CHECK(!flag, "testall before any send");
        MPI_Send(&b, 1, MPI_INT, rank, 12, MPI_COMM_WORLD);
        MPI_Waitany(2, r, &idx, MPI_STATUS_IGNORE);
        CHECK(idx == 1 && y == 2 && r[1] == MPI_REQUEST_NULL, "waitany idx %d y %d", idx, y);
        MPI_Request_get_status(r[0], &flag, MPI_STATUS_IGNORE);
        CHECK(!flag, "get_status of a pending receive");
        MPI_Send(&a, 1, MPI_INT, rank, 11, MPI_COMM_WORLD);
        MPI_Waitsome(2, r, &outcount, indices, MPI_STATUSES_IGNORE);
        CHECK(outcount == 1 && indices[0] == 0 && x == 1, "waitsome %d %d", outcount, indices[0]);
        MPI_Waitsome(2, r, &outcount, indices, MPI_STATUSES_IGNORE);
        CHECK(outcount == MPI_UNDEFINED, "waitsome on null requests %d", outcount);
        MPI_Request rq;
        MPI_Isend(&a, 1, MPI_INT, rank, 13, MPI_COMM_WORLD, &rq);
        flag = 0;
        while (!flag) MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
        CHECK(rq == MPI_REQUEST_NULL, "test nulls the request");
        MPI_Recv(&x, 1, MPI_INT, rank, 13, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }

    /* Cancel a receive; free an active send request. */
    {
        int v = 0;
        MPI_Request rq;
        MPI_Status st;
        MPI_Irecv(&v, 1, MPI_INT, rank, 77, MPI_COMM_WORLD, &rq);
        MPI_Cancel(&rq);
        MPI_Wait(&rq, &st);
        int cancelled = 0;
        MPI_Test_cancelled(&st, &cancelled);
        CHECK(cancelled, "receive cancelled");
        int w = 42;
        MPI_Isend(&w, 1, MPI_INT, rank, 78, MPI_COMM_WORLD, &rq);
        MPI_Request_free(&rq);
        CHECK(rq == MPI_REQUEST_NULL, "request_free nulls");
        MPI_Recv(&v, 1, MPI_INT, rank, 78, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(v == 42, "freed send delivered %d", v);
    }

    /* Bad arguments give the right classes. */
    {
        int v = 0;
        CHECK_CLASS(MPI_Send(&v, 1, MPI_INT, size, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
        CHECK_CLASS(MPI_Send(&v, 1, MPI_INT, -5, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
        CHECK_CLASS(MPI_Send(&v, -1, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
        CHECK_CLASS(MPI_Send(&v, 1, MPI_INT, 0, -3, MPI_COMM_WORLD), MPI_ERR_TAG);
        CHECK_CLASS(MPI_Send(&v, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
        CHECK_CLASS(MPI_Send(&v, 1, MPI_INT, 0, 0, MPI_COMM_NULL), MPI_ERR_COMM);
        CHECK_CLASS(MPI_Send(NULL, 1, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
        CHECK_CLASS(MPI_Recv(&v, 1, MPI_INT, size + 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_RANK);
#ifndef MPI_ABI_VERSION /* in the standard ABI, NULL is MPI_STATUS_IGNORE */
        CHECK_CLASS(MPI_Recv(&v, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, NULL), MPI_ERR_ARG);
#endif
        MPI_Request bogus = (MPI_Request)0x12345;
        CHECK_CLASS(MPI_Wait(&bogus, MPI_STATUS_IGNORE), MPI_ERR_REQUEST);
    }

    /* Communicators: dup, split, compare, free, barrier. */
    {
        MPI_Comm dup, half;
        int result, v = rank, sum = 0;
        MPI_Comm_dup(MPI_COMM_WORLD, &dup);
        MPI_Comm_compare(MPI_COMM_WORLD, dup, &result);
        CHECK(result == MPI_CONGRUENT, "dup compare %d", result);
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
        int hrank, hsize;
        MPI_Comm_rank(half, &hrank);
        MPI_Comm_size(half, &hsize);
        CHECK(hsize == (size + 1 - rank % 2) / 2, "split size %d", hsize);
        CHECK(hrank == (hsize - 1 - rank / 2), "split rank %d (keys reverse the order)", hrank);
        MPI_Comm_compare(MPI_COMM_WORLD, half, &result);
        CHECK(result == (size == 1 ? MPI_CONGRUENT : MPI_UNEQUAL), "split compare %d", result);
        /* Messages on dup do not match receives on WORLD. */
        int right = (rank + 1) % size, left = (rank + size - 1) % size, got = -1;
        MPI_Request rq;
        MPI_Irecv(&got, 1, MPI_INT, left, 0, MPI_COMM_WORLD, &rq);
        MPI_Send(&v, 1, MPI_INT, right, 0, dup);
        MPI_Recv(&sum, 1, MPI_INT, left, 0, dup, MPI_STATUS_IGNORE);
        CHECK(sum == left, "dup message %d", sum);
        int flag = 0;
        MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
        CHECK(!flag, "a message on the dup matched a WORLD receive");
        MPI_Barrier(dup); /* nobody sends on WORLD before everyone tested */
        MPI_Send(&v, 1, MPI_INT, right, 0, MPI_COMM_WORLD);
        MPI_Wait(&rq, MPI_STATUS_IGNORE);
        CHECK(got == left, "world message %d", got);
        MPI_Barrier(half);
        MPI_Barrier(dup);
        MPI_Comm_free(&dup);
        MPI_Comm_free(&half);
        CHECK(dup == MPI_COMM_NULL && half == MPI_COMM_NULL, "free nulls");
        CHECK_CLASS(MPI_Comm_free(&dup), MPI_ERR_COMM);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    mt_report(rank, mt_errors);
    return mt_errors ? 1 : 0;
}
