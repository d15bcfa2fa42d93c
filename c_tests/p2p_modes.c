/* Point-to-point beyond the basics, on any number of ranks (messages go
 * around a ring; one rank talks to itself): large-count (_c) calls,
 * persistent requests, buffered mode, matched probes, Isendrecv(_replace),
 * generalized requests, cancellation of sends and receives, and the error
 * classes of bad arguments to these calls. Payloads and statuses are
 * verified; sizes cross the eager/rendezvous threshold. Built against the
 * standard ABI too (then without MPICH's MPIX_ generalized requests). */
#include "mpitest.h"

static int rank, size, left, right;

/* Element counts: empty, eager, rendezvous over shm, large. */
static const int sizes[] = {0, 10, 5000, 300000};
#define NSIZES ((int)(sizeof sizes / sizeof sizes[0]))

static void fill(int *buf, int n, int seed) {
    for (int i = 0; i < n; i++) buf[i] = seed * 1000003 + i;
}

static int verify(const int *buf, int n, int seed) {
    for (int i = 0; i < n; i++)
        if (buf[i] != seed * 1000003 + i) return i;
    return -1;
}

static int *alloc_ints(int n) { return malloc(sizeof(int) * (n ? n : 1)); }

/* Checks a receive's status: source, tag, element count. */
static void check_status(const MPI_Status *st, int source, int tag, int n, const char *what) {
    int count = -1;
    MPI_Count count_c = -1;
    MPI_Get_count(st, MPI_INT, &count);
    MPI_Get_count_c(st, MPI_INT, &count_c);
    CHECK(st->MPI_SOURCE == source && st->MPI_TAG == tag && count == n && count_c == n,
          "%s: status source %d tag %d count %d/%ld, expected %d %d %d", what, st->MPI_SOURCE, st->MPI_TAG,
          count, (long)count_c, source, tag, n);
}

static int is_empty_status(const MPI_Status *st) {
    int count = -1, cancelled = 1;
    MPI_Get_count(st, MPI_INT, &count);
    MPI_Test_cancelled(st, &cancelled);
    return st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG && count == 0 && !cancelled;
}

/* ---- Cancelling sends --------------------------------------------------
 * A send is cancelled while its frame has not left this process. The very
 * first message to a peer in an epoch waits for the peer's address to be
 * looked up, so an Issend cancelled at once is cancelled for sure; a later
 * one has usually left already. Either way the receiver's posted receive
 * must get the message exactly when the sender's status says it was not
 * cancelled (the receiver is told which by a second message, which cannot
 * overtake the first). */
static void cancel_send_to(int peer, int tag, int expect_cancelled) {
    int v = 4242, cancelled = -1;
    MPI_Request rq;
    MPI_Status st;
    MPI_Issend(&v, 1, MPI_INT, peer, tag, MPI_COMM_WORLD, &rq);
    MPI_Cancel(&rq);
    MPI_Wait(&rq, &st);
    MPI_Test_cancelled(&st, &cancelled);
    if (expect_cancelled >= 0)
        CHECK(cancelled == expect_cancelled, "cancel of an Issend to %d: cancelled %d, expected %d", peer, cancelled,
              expect_cancelled);
    MPI_Send(&cancelled, 1, MPI_INT, peer, tag + 1, MPI_COMM_WORLD);
}

static void cancel_send_from(int peer, int tag) {
    int cancelled = -1, flag = -1, v = 0, receive_cancelled = 0;
    MPI_Request rq;
    MPI_Status st;
    MPI_Irecv(&v, 1, MPI_INT, peer, tag, MPI_COMM_WORLD, &rq);
    MPI_Recv(&cancelled, 1, MPI_INT, peer, tag + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Test(&rq, &flag, MPI_STATUS_IGNORE);
    CHECK(flag == !cancelled, "sender says cancelled=%d but the message is %s", cancelled,
          flag ? "here" : "missing");
    if (flag) {
        CHECK(v == 4242, "uncancelled message %d", v);
    } else {
        MPI_Cancel(&rq);
        MPI_Wait(&rq, &st);
        MPI_Test_cancelled(&st, &receive_cancelled);
        CHECK(receive_cancelled, "the receive of a cancelled send");
    }
}

static void test_cancel_first_contact(void) {
    if (size < 2 || rank > 1) return;
    if (rank == 0) {
        cancel_send_to(1, 900, 1);
        cancel_send_to(1, 910, -1); /* the route is known now */
    } else {
        cancel_send_from(0, 900);
        cancel_send_from(0, 910);
    }
}

/* A self-send cancelled after it left: matched by the receive posted next. */
static void test_cancel_self(void) {
    int v = 7, got = 0, cancelled = -1;
    MPI_Request s, r;
    MPI_Status st;
    MPI_Issend(&v, 1, MPI_INT, rank, 920, MPI_COMM_WORLD, &s);
    MPI_Cancel(&s);
    MPI_Irecv(&got, 1, MPI_INT, rank, 920, MPI_COMM_WORLD, &r);
    MPI_Wait(&s, &st);
    MPI_Test_cancelled(&st, &cancelled);
    if (cancelled) {
        MPI_Cancel(&r);
        MPI_Wait(&r, &st);
        MPI_Test_cancelled(&st, &cancelled);
        CHECK(cancelled, "the receive of a cancelled self-send");
    } else {
        MPI_Wait(&r, &st);
        CHECK(got == 7, "self-send that was not cancelled: got %d", got);
    }
}

/* ---- Large-count calls ------------------------------------------------ */
static void test_large_count(int n) {
    MPI_Count nc = n;
    int *out = alloc_ints(n), *in = alloc_ints(n);
    MPI_Status st;
    MPI_Request rq[2];
    fill(out, n, rank);

    /* Send_c / Recv_c (even ranks send first; at size 1, buffered by Isend). */
    memset(in, 0, sizeof(int) * n);
    MPI_Irecv_c(in, nc, MPI_INT, left, 1, MPI_COMM_WORLD, &rq[0]);
    MPI_Send_c(out, nc, MPI_INT, right, 1, MPI_COMM_WORLD);
    MPI_Wait(&rq[0], &st);
    check_status(&st, left, 1, n, "Send_c/Irecv_c");
    CHECK(verify(in, n, left) < 0, "Send_c payload (%d ints)", n);

    memset(in, 0, sizeof(int) * n);
    MPI_Isend_c(out, nc, MPI_INT, right, 2, MPI_COMM_WORLD, &rq[0]);
    MPI_Recv_c(in, nc, MPI_INT, left, 2, MPI_COMM_WORLD, &st);
    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    check_status(&st, left, 2, n, "Isend_c/Recv_c");
    CHECK(verify(in, n, left) < 0, "Isend_c payload (%d ints)", n);

    memset(in, 0, sizeof(int) * n);
    MPI_Irecv_c(in, nc, MPI_INT, left, 3, MPI_COMM_WORLD, &rq[0]);
    MPI_Issend_c(out, nc, MPI_INT, right, 3, MPI_COMM_WORLD, &rq[1]);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    CHECK(verify(in, n, left) < 0, "Issend_c payload (%d ints)", n);

    /* Ready mode: the receive is posted before anyone sends. */
    memset(in, 0, sizeof(int) * n);
    MPI_Irecv_c(in, nc, MPI_INT, left, 4, MPI_COMM_WORLD, &rq[0]);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Irsend_c(out, nc, MPI_INT, right, 4, MPI_COMM_WORLD, &rq[1]);
    MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    CHECK(verify(in, n, left) < 0, "Irsend_c payload (%d ints)", n);
    memset(in, 0, sizeof(int) * n);
    MPI_Irecv_c(in, nc, MPI_INT, left, 5, MPI_COMM_WORLD, &rq[0]);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Rsend_c(out, nc, MPI_INT, right, 5, MPI_COMM_WORLD);
    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    CHECK(verify(in, n, left) < 0, "Rsend_c payload (%d ints)", n);

    /* Ssend_c after the receive is posted (it completes on the match). */
    memset(in, 0, sizeof(int) * n);
    MPI_Irecv_c(in, nc, MPI_INT, left, 6, MPI_COMM_WORLD, &rq[0]);
    MPI_Ssend_c(out, nc, MPI_INT, right, 6, MPI_COMM_WORLD);
    MPI_Wait(&rq[0], MPI_STATUS_IGNORE);
    CHECK(verify(in, n, left) < 0, "Ssend_c payload (%d ints)", n);

    memset(in, 0, sizeof(int) * n);
    MPI_Sendrecv_c(out, nc, MPI_INT, right, 7, in, nc, MPI_INT, left, 7, MPI_COMM_WORLD, &st);
    check_status(&st, left, 7, n, "Sendrecv_c");
    CHECK(verify(in, n, left) < 0, "Sendrecv_c payload (%d ints)", n);

    memcpy(in, out, sizeof(int) * n);
    MPI_Sendrecv_replace_c(in, nc, MPI_INT, right, 8, left, 8, MPI_COMM_WORLD, &st);
    check_status(&st, left, 8, n, "Sendrecv_replace_c");
    CHECK(verify(in, n, left) < 0, "Sendrecv_replace_c payload (%d ints)", n);

    free(out);
    free(in);
}

/* ---- Isendrecv and Isendrecv_replace --------------------------------- */
static void test_isendrecv(int n) {
    int *out = alloc_ints(n), *in = alloc_ints(n);
    MPI_Request rq;
    MPI_Status st;
    fill(out, n, rank + 10);
    memset(in, 0, sizeof(int) * n);
    MPI_Isendrecv(out, n, MPI_INT, right, 30, in, n, MPI_INT, left, 30, MPI_COMM_WORLD, &rq);
    MPI_Wait(&rq, &st);
    CHECK(rq == MPI_REQUEST_NULL, "Isendrecv request nulled");
    check_status(&st, left, 30, n, "Isendrecv");
    CHECK(verify(in, n, left + 10) < 0, "Isendrecv payload (%d ints)", n);

    memset(in, 0, sizeof(int) * n);
    MPI_Isendrecv_c(out, (MPI_Count)n, MPI_INT, right, 31, in, (MPI_Count)n, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG,
                    MPI_COMM_WORLD, &rq);
    int flag = 0;
    while (!flag) MPI_Test(&rq, &flag, &st);
    check_status(&st, left, 31, n, "Isendrecv_c");
    CHECK(verify(in, n, left + 10) < 0, "Isendrecv_c payload (%d ints)", n);

    memcpy(in, out, sizeof(int) * n);
    MPI_Isendrecv_replace(in, n, MPI_INT, right, 32, left, 32, MPI_COMM_WORLD, &rq);
    MPI_Wait(&rq, &st);
    check_status(&st, left, 32, n, "Isendrecv_replace");
    CHECK(verify(in, n, left + 10) < 0, "Isendrecv_replace payload (%d ints)", n);

    memcpy(in, out, sizeof(int) * n);
    MPI_Isendrecv_replace_c(in, (MPI_Count)n, MPI_INT, right, 33, left, 33, MPI_COMM_WORLD, &rq);
    MPI_Waitall(1, &rq, &st);
    check_status(&st, left, 33, n, "Isendrecv_replace_c");
    CHECK(verify(in, n, left + 10) < 0, "Isendrecv_replace_c payload (%d ints)", n);
    free(out);
    free(in);
}

static void test_isendrecv_proc_null(void) {
    int v = 1, w = 5;
    MPI_Request rq;
    MPI_Status st;
    MPI_Isendrecv(&v, 1, MPI_INT, MPI_PROC_NULL, 0, &w, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &rq);
    MPI_Wait(&rq, &st);
    check_status(&st, MPI_PROC_NULL, MPI_ANY_TAG, 0, "Isendrecv with MPI_PROC_NULL");
    CHECK(w == 5, "nothing received from MPI_PROC_NULL");
    /* Half to MPI_PROC_NULL: the receive's status. */
    MPI_Isendrecv(&v, 1, MPI_INT, MPI_PROC_NULL, 0, &w, 1, MPI_INT, rank, 34, MPI_COMM_WORLD, &rq);
    MPI_Send(&v, 1, MPI_INT, rank, 34, MPI_COMM_WORLD);
    MPI_Wait(&rq, &st);
    check_status(&st, rank, 34, 1, "Isendrecv receiving from self");
    MPI_Isendrecv_replace(&w, 1, MPI_INT, rank, 35, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &rq);
    MPI_Wait(&rq, &st);
    check_status(&st, MPI_PROC_NULL, MPI_ANY_TAG, 0, "Isendrecv_replace sending only");
    MPI_Recv(&v, 1, MPI_INT, rank, 35, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(v == 1, "Isendrecv_replace to self sent %d", v);
}

/* ---- Persistent requests --------------------------------------------- */
static void test_persistent(int n) {
    int *out = alloc_ints(n), *in = alloc_ints(n);
    MPI_Request rq[2];
    MPI_Status st[2];
    MPI_Send_init(out, n, MPI_INT, right, 40, MPI_COMM_WORLD, &rq[0]);
    MPI_Recv_init(in, n, MPI_INT, left, 40, MPI_COMM_WORLD, &rq[1]);
    for (int round = 0; round < 3; round++) {
        fill(out, n, rank * 7 + round);
        memset(in, 0, sizeof(int) * n);
        if (round == 1) {
            MPI_Start(&rq[1]);
            MPI_Start(&rq[0]);
        } else {
            MPI_Startall(2, rq);
        }
        MPI_Waitall(2, rq, st);
        CHECK(rq[0] != MPI_REQUEST_NULL && rq[1] != MPI_REQUEST_NULL, "persistent handles stay valid");
        check_status(&st[1], left, 40, n, "persistent receive");
        CHECK(verify(in, n, left * 7 + round) < 0, "persistent round %d payload (%d ints)", round, n);
    }
    MPI_Request_free(&rq[0]);
    MPI_Request_free(&rq[1]);
    CHECK(rq[0] == MPI_REQUEST_NULL && rq[1] == MPI_REQUEST_NULL, "request_free of persistent requests");

    /* The _c and the other modes. */
    MPI_Request modes[4];
    MPI_Count nc = n;
    int *ins[4];
    for (int m = 0; m < 4; m++) ins[m] = alloc_ints(n);
    fill(out, n, rank + 3);
    MPI_Ssend_init_c(out, nc, MPI_INT, right, 41, MPI_COMM_WORLD, &modes[0]);
    MPI_Send_init_c(out, nc, MPI_INT, right, 42, MPI_COMM_WORLD, &modes[1]);
    MPI_Ssend_init(out, n, MPI_INT, right, 43, MPI_COMM_WORLD, &modes[2]);
    MPI_Rsend_init_c(out, nc, MPI_INT, right, 44, MPI_COMM_WORLD, &modes[3]);
    MPI_Request recvs[4];
    for (int round = 0; round < 2; round++) {
        for (int m = 0; m < 4; m++) {
            memset(ins[m], 0, sizeof(int) * n);
            if (m % 2)
                MPI_Recv_init_c(ins[m], nc, MPI_INT, left, 41 + m, MPI_COMM_WORLD, &recvs[m]);
            else
                MPI_Recv_init(ins[m], n, MPI_INT, left, 41 + m, MPI_COMM_WORLD, &recvs[m]);
        }
        MPI_Startall(4, recvs);
        MPI_Barrier(MPI_COMM_WORLD); /* ready mode needs the receives posted */
        MPI_Startall(4, modes);
        MPI_Waitall(4, modes, MPI_STATUSES_IGNORE);
        MPI_Waitall(4, recvs, MPI_STATUSES_IGNORE);
        for (int m = 0; m < 4; m++) {
            CHECK(verify(ins[m], n, left + 3) < 0, "persistent mode %d round %d (%d ints)", m, round, n);
            MPI_Request_free(&recvs[m]);
        }
    }
    for (int m = 0; m < 4; m++) {
        MPI_Request_free(&modes[m]);
        free(ins[m]);
    }
    free(out);
    free(in);
}

/* Inactive persistent requests count as empty in every completion call. */
static void test_inactive(void) {
    int v = 0, flag = -1, index = -1, outcount = -1, indices[2];
    MPI_Request rq[2];
    MPI_Status st, sts[2];
    MPI_Recv_init(&v, 1, MPI_INT, left, 50, MPI_COMM_WORLD, &rq[0]);
    MPI_Send_init(&v, 1, MPI_INT, right, 50, MPI_COMM_WORLD, &rq[1]);
    MPI_Request keep0 = rq[0];

    memset(&st, 0x55, sizeof st);
    MPI_Wait(&rq[0], &st);
    CHECK(rq[0] == keep0 && is_empty_status(&st), "Wait on an inactive request");
    memset(&st, 0x55, sizeof st);
    MPI_Test(&rq[0], &flag, &st);
    CHECK(flag == 1 && rq[0] == keep0 && is_empty_status(&st), "Test on an inactive request");
    MPI_Request_get_status(rq[0], &flag, &st);
    CHECK(flag == 1 && is_empty_status(&st), "Request_get_status on an inactive request");
    MPI_Waitany(2, rq, &index, &st);
    CHECK(index == MPI_UNDEFINED && is_empty_status(&st), "Waitany on inactive requests: index %d", index);
    MPI_Testany(2, rq, &index, &flag, &st);
    CHECK(flag == 1 && index == MPI_UNDEFINED, "Testany on inactive requests: flag %d index %d", flag, index);
    MPI_Waitsome(2, rq, &outcount, indices, sts);
    CHECK(outcount == MPI_UNDEFINED, "Waitsome on inactive requests: %d", outcount);
    MPI_Testsome(2, rq, &outcount, indices, sts);
    CHECK(outcount == MPI_UNDEFINED, "Testsome on inactive requests: %d", outcount);
    MPI_Testall(2, rq, &flag, sts);
    CHECK(flag == 1 && is_empty_status(&sts[0]) && is_empty_status(&sts[1]), "Testall on inactive requests");
    MPI_Waitall(2, rq, sts);
    CHECK(rq[0] == keep0 && is_empty_status(&sts[1]), "Waitall on inactive requests");

    /* One active among inactive and null ones. */
    MPI_Request mixed[3] = {MPI_REQUEST_NULL, rq[0], rq[1]};
    MPI_Start(&mixed[1]);
    MPI_Start(&mixed[2]);
    int done = 0;
    while (done < 2) {
        MPI_Waitany(3, mixed, &index, &st);
        CHECK(index == 1 || index == 2, "Waitany index %d", index);
        CHECK(mixed[index] != MPI_REQUEST_NULL, "Waitany keeps persistent handles");
        done++;
    }
    MPI_Waitany(3, mixed, &index, &st);
    CHECK(index == MPI_UNDEFINED, "Waitany after both completed: %d", index);

    /* Testsome and Waitsome mark completions and then see inactive ones. */
    MPI_Startall(2, rq);
    int seen = 0;
    while (seen < 2) {
        MPI_Testsome(2, rq, &outcount, indices, sts);
        CHECK(outcount != MPI_UNDEFINED, "Testsome while active");
        if (outcount != MPI_UNDEFINED) seen += outcount;
    }
    MPI_Startall(2, rq);
    seen = 0;
    while (seen < 2) {
        MPI_Waitsome(2, rq, &outcount, indices, sts);
        CHECK(outcount >= 1, "Waitsome while active: %d", outcount);
        if (outcount >= 1) seen += outcount;
    }
    MPI_Request_free(&rq[0]);
    MPI_Request_free(&rq[1]);
}

/* Cancel on persistent receives; freeing an active persistent send. */
static void test_persistent_cancel(void) {
    int v = 0, cancelled = 0;
    MPI_Request rq;
    MPI_Status st;
    MPI_Recv_init(&v, 1, MPI_INT, left, 51, MPI_COMM_WORLD, &rq);
    for (int i = 0; i < 2; i++) {
        MPI_Start(&rq);
        MPI_Cancel(&rq);
        MPI_Wait(&rq, &st);
        MPI_Test_cancelled(&st, &cancelled);
        CHECK(cancelled && rq != MPI_REQUEST_NULL, "cancel of an active persistent receive (%d)", i);
    }
    CHECK_CLASS(MPI_Cancel(&rq), MPI_ERR_REQUEST);
    MPI_Request_free(&rq);

    int w = rank + 100;
    MPI_Send_init(&w, 1, MPI_INT, right, 52, MPI_COMM_WORLD, &rq);
    MPI_Start(&rq);
    MPI_Request_free(&rq);
    MPI_Recv(&v, 1, MPI_INT, left, 52, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(v == left + 100, "freed active persistent send delivered %d", v);

    /* A persistent receive freed while active still receives. */
    int got = -1;
    MPI_Recv_init(&got, 1, MPI_INT, left, 53, MPI_COMM_WORLD, &rq);
    MPI_Start(&rq);
    MPI_Request_free(&rq);
    MPI_Send(&w, 1, MPI_INT, right, 53, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Send(&w, 1, MPI_INT, right, 54, MPI_COMM_WORLD);
    MPI_Recv(&v, 1, MPI_INT, left, 54, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(got == left + 100, "freed active persistent receive got %d", got);
}

/* ---- Buffered mode ---------------------------------------------------- */
static void test_buffered(void) {
    int pack = 0;
    const int nmsg = 3, n = 20000; /* above the eager limit: the space is held */
    MPI_Pack_size(n, MPI_INT, MPI_COMM_WORLD, &pack);
    int bytes = nmsg * (pack + MPI_BSEND_OVERHEAD);
    char *space = malloc(bytes);
    int *out = alloc_ints(n * nmsg), *in = alloc_ints(n);
    CHECK(MPI_Buffer_attach(space, bytes) == MPI_SUCCESS, "attach");
    CHECK_CLASS(MPI_Buffer_attach(space, bytes), MPI_ERR_BUFFER);

    /* nmsg messages fill the buffer exactly; the user data changes right
     * after each call, so the messages must come from the buffer. */
    MPI_Request rq;
    for (int m = 0; m < nmsg; m++) {
        fill(out + m * n, n, rank * 10 + m);
        if (m == 0)
            MPI_Bsend(out, n, MPI_INT, right, 60 + m, MPI_COMM_WORLD);
        else if (m == 1) {
            MPI_Ibsend(out + n, n, MPI_INT, right, 60 + m, MPI_COMM_WORLD, &rq);
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
        } else
            MPI_Bsend_c(out + 2 * n, (MPI_Count)n, MPI_INT, right, 60 + m, MPI_COMM_WORLD);
        memset(out + m * n, 0xee, sizeof(int) * n);
    }
    /* Nobody receives before the barrier, so the buffer is still full (at
     * one rank the messages went to this process and were copied at once). */
    int extra = 0;
    if (size > 1) CHECK_CLASS(MPI_Bsend(&extra, 1, MPI_INT, right, 69, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int m = nmsg - 1; m >= 0; m--) {
        MPI_Status st;
        MPI_Recv(in, n, MPI_INT, left, 60 + m, MPI_COMM_WORLD, &st);
        check_status(&st, left, 60 + m, n, "buffered message");
        CHECK(verify(in, n, left * 10 + m) < 0, "buffered message %d payload", m);
    }
    void *addr = NULL;
    int got_size = -1;
    MPI_Buffer_detach(&addr, &got_size);
    CHECK(addr == space && got_size == bytes, "detach gives %p %d, attached %p %d", addr, got_size, (void *)space,
          bytes);
    MPI_Buffer_detach(&addr, &got_size);
    CHECK(addr == NULL && got_size == 0, "detach with nothing attached");

    /* Space comes back when a send completes: room for one message only,
     * reused every round (the acknowledgement arrives after the sender's
     * completion, on the same channel). */
    MPI_Count one = pack + MPI_BSEND_OVERHEAD;
    MPI_Buffer_attach_c(space, one);
    MPI_Request bi;
    MPI_Bsend_init(out, n, MPI_INT, right, 70, MPI_COMM_WORLD, &bi);
    for (int round = 0; round < 4; round++) {
        fill(out, n, rank + round);
        if (round % 2)
            MPI_Bsend(out, n, MPI_INT, right, 70, MPI_COMM_WORLD);
        else {
            MPI_Start(&bi);
            MPI_Wait(&bi, MPI_STATUS_IGNORE);
        }
        MPI_Recv(in, n, MPI_INT, left, 70, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(verify(in, n, left + round) < 0, "reused buffer round %d", round);
        MPI_Send(NULL, 0, MPI_INT, left, 71, MPI_COMM_WORLD);
        MPI_Recv(NULL, 0, MPI_INT, right, 71, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Bsend(out, n, MPI_INT, rank, 72, MPI_COMM_WORLD); /* to self: copied at once */
    MPI_Recv(in, n, MPI_INT, rank, 72, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(verify(in, n, rank + 3) < 0, "bsend to self");
    MPI_Count got_c = -1;
    MPI_Buffer_detach_c(&addr, &got_c);
    CHECK(addr == space && got_c == one, "detach_c gives %p %ld", addr, (long)got_c);
    /* Bsend_init's start fails cleanly without space. */
    CHECK_CLASS(MPI_Start(&bi), MPI_ERR_BUFFER);
    MPI_Buffer_attach(space, MPI_BSEND_OVERHEAD + 10);
    CHECK_CLASS(MPI_Start(&bi), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Ibsend(out, n, MPI_INT, right, 73, MPI_COMM_WORLD, &rq), MPI_ERR_BUFFER);
    MPI_Request_free(&bi);
    MPI_Buffer_detach(&addr, &got_size);
    CHECK_CLASS(MPI_Buffer_attach(space, -1), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Bsend(out, 1, MPI_INT, right, 74, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    MPI_Barrier(MPI_COMM_WORLD);
    free(space);
    free(out);
    free(in);
}

/* ---- Matched probes --------------------------------------------------- */
static void test_matched_probe(void) {
    const int big = 5000, small = 3;
    int *bigout = alloc_ints(big), *bigin = alloc_ints(big), smallout[3], smallin[3];
    fill(bigout, big, rank);
    fill(smallout, small, rank + 50);
    /* The probed message is the big (rendezvous) one; the small one behind
     * it must go to the receive posted before Mrecv. */
    for (int order = 0; order < 2; order++) {
        MPI_Request s[2], r;
        MPI_Message msg = MPI_MESSAGE_NULL;
        MPI_Status st;
        int *first = order ? smallout : bigout, *second = order ? bigout : smallout;
        int nfirst = order ? small : big, nsecond = order ? big : small;
        MPI_Isend(first, nfirst, MPI_INT, right, 80, MPI_COMM_WORLD, &s[0]);
        MPI_Isend(second, nsecond, MPI_INT, right, 80, MPI_COMM_WORLD, &s[1]);
        if (order == 0) {
            MPI_Mprobe(left, 80, MPI_COMM_WORLD, &msg, &st);
        } else {
            int flag = 0;
            while (!flag) MPI_Improbe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, &st);
        }
        check_status(&st, left, 80, nfirst, "matched probe");
        CHECK(msg != MPI_MESSAGE_NULL && msg != MPI_MESSAGE_NO_PROC, "a message handle");
        int *secondin = order ? bigin : smallin, *firstin = order ? smallin : bigin;
        MPI_Irecv(secondin, nsecond, MPI_INT, MPI_ANY_SOURCE, 80, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, &st);
        check_status(&st, left, 80, nsecond, "receive after a matched probe");
        if (order == 0) {
            MPI_Mrecv(firstin, nfirst, MPI_INT, &msg, &st);
        } else {
            MPI_Request mr;
            MPI_Imrecv_c(firstin, (MPI_Count)nfirst, MPI_INT, &msg, &mr);
            MPI_Wait(&mr, &st);
        }
        CHECK(msg == MPI_MESSAGE_NULL, "Mrecv sets MPI_MESSAGE_NULL");
        check_status(&st, left, 80, nfirst, "Mrecv");
        CHECK(verify(bigin, big, left) < 0 && verify(smallin, small, left + 50) < 0, "matched probe payloads (%d)",
              order);
        MPI_Waitall(2, s, MPI_STATUSES_IGNORE);
    }
    /* Mrecv_c, Imrecv, and truncation. */
    {
        MPI_Message msg;
        MPI_Status st;
        MPI_Request s, mr;
        MPI_Isend(smallout, small, MPI_INT, right, 81, MPI_COMM_WORLD, &s);
        MPI_Mprobe(left, 81, MPI_COMM_WORLD, &msg, MPI_STATUS_IGNORE);
        MPI_Mrecv_c(smallin, (MPI_Count)small, MPI_INT, &msg, &st);
        check_status(&st, left, 81, small, "Mrecv_c");
        MPI_Wait(&s, MPI_STATUS_IGNORE);
        MPI_Isend(smallout, small, MPI_INT, right, 82, MPI_COMM_WORLD, &s);
        MPI_Mprobe(left, 82, MPI_COMM_WORLD, &msg, MPI_STATUS_IGNORE);
        MPI_Imrecv(smallin, small, MPI_INT, &msg, &mr);
        CHECK(msg == MPI_MESSAGE_NULL, "Imrecv sets MPI_MESSAGE_NULL");
        MPI_Wait(&mr, &st);
        check_status(&st, left, 82, small, "Imrecv");
        MPI_Wait(&s, MPI_STATUS_IGNORE);
        MPI_Isend(smallout, small, MPI_INT, right, 83, MPI_COMM_WORLD, &s);
        MPI_Mprobe(left, 83, MPI_COMM_WORLD, &msg, MPI_STATUS_IGNORE);
        memset(smallin, 0, sizeof smallin);
        CHECK_CLASS(MPI_Mrecv(smallin, 2, MPI_INT, &msg, &st), MPI_ERR_TRUNCATE);
        CHECK(smallin[0] == left * 1000003 + 50 * 1000003 && smallin[2] == 0, "truncated Mrecv payload");
        MPI_Wait(&s, MPI_STATUS_IGNORE);
    }
    /* MPI_PROC_NULL. */
    {
        MPI_Message msg = MPI_MESSAGE_NULL;
        MPI_Status st;
        int flag = 0, v = 9;
        MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &msg, &st);
        CHECK(msg == MPI_MESSAGE_NO_PROC, "Mprobe(MPI_PROC_NULL) gives MPI_MESSAGE_NO_PROC");
        check_status(&st, MPI_PROC_NULL, MPI_ANY_TAG, 0, "Mprobe(MPI_PROC_NULL)");
        MPI_Mrecv(&v, 1, MPI_INT, &msg, &st);
        CHECK(msg == MPI_MESSAGE_NULL && v == 9, "Mrecv(MPI_MESSAGE_NO_PROC)");
        check_status(&st, MPI_PROC_NULL, MPI_ANY_TAG, 0, "Mrecv(MPI_MESSAGE_NO_PROC)");
        MPI_Improbe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &msg, &st);
        CHECK(flag && msg == MPI_MESSAGE_NO_PROC, "Improbe(MPI_PROC_NULL)");
        MPI_Request mr;
        MPI_Imrecv(&v, 1, MPI_INT, &msg, &mr);
        MPI_Wait(&mr, &st);
        check_status(&st, MPI_PROC_NULL, MPI_ANY_TAG, 0, "Imrecv(MPI_MESSAGE_NO_PROC)");
        CHECK_CLASS(MPI_Mrecv(&v, 1, MPI_INT, &msg, &st), MPI_ERR_REQUEST);
        MPI_Improbe(left, 12345, MPI_COMM_WORLD, &flag, &msg, &st);
        CHECK(!flag, "Improbe without a message");
    }
    free(bigout);
    free(bigin);
}

/* ---- Generalized requests -------------------------------------------- */
struct greq {
    int queries, frees, cancels, polls, cancelled, query_rc, complete_after;
    MPI_Request self;
};

static int greq_query(void *state, MPI_Status *st) {
    struct greq *g = state;
    int me = -1;
    MPI_Comm_rank(MPI_COMM_WORLD, &me); /* callbacks may call MPI */
    g->queries++;
    st->MPI_SOURCE = me;
    st->MPI_TAG = 77;
    MPI_Status_set_elements(st, MPI_INT, 3);
    MPI_Status_set_cancelled(st, g->cancelled);
    return g->query_rc;
}

static int greq_free(void *state) {
    ((struct greq *)state)->frees++;
    return MPI_SUCCESS;
}

static int greq_cancel(void *state, int complete) {
    struct greq *g = state;
    g->cancels++;
    if (!complete) {
        g->cancelled = 1;
        MPI_Grequest_complete(g->self);
    }
    return MPI_SUCCESS;
}

#ifndef MPI_ABI_VERSION
static int greq_poll(void *state, MPI_Status *st) {
    struct greq *g = state;
    (void)st;
    if (++g->polls == g->complete_after) MPI_Grequest_complete(g->self);
    return MPI_SUCCESS;
}
#endif

static void test_generalized(void) {
    struct greq g = {0};
    MPI_Request rq;
    MPI_Status st;
    int flag = -1, count = -1, cancelled = -1;

    MPI_Grequest_start(greq_query, greq_free, greq_cancel, &g, &rq);
    g.self = rq;
    MPI_Test(&rq, &flag, &st);
    CHECK(!flag && g.queries == 0, "Test before Grequest_complete");
    MPI_Request_get_status(rq, &flag, &st);
    CHECK(!flag, "Request_get_status before Grequest_complete");
    MPI_Grequest_complete(rq);
    MPI_Request_get_status(rq, &flag, &st);
    CHECK(flag && g.queries == 1 && g.frees == 0 && st.MPI_TAG == 77, "Request_get_status calls query only");
    MPI_Wait(&rq, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    MPI_Test_cancelled(&st, &cancelled);
    CHECK(rq == MPI_REQUEST_NULL && g.queries == 2 && g.frees == 1 && st.MPI_SOURCE == rank && st.MPI_TAG == 77 &&
              count == 3 && !cancelled,
          "Wait on a generalized request: queries %d frees %d source %d count %d", g.queries, g.frees, st.MPI_SOURCE,
          count);

    /* Cancel: the cancel function completes it; query reports it. */
    memset(&g, 0, sizeof g);
    MPI_Grequest_start(greq_query, greq_free, greq_cancel, &g, &rq);
    g.self = rq;
    MPI_Cancel(&rq);
    MPI_Wait(&rq, &st);
    MPI_Test_cancelled(&st, &cancelled);
    CHECK(g.cancels == 1 && cancelled && g.frees == 1, "cancelled generalized request");

    /* Freed before completion: free runs at Grequest_complete, no query. */
    memset(&g, 0, sizeof g);
    MPI_Grequest_start(greq_query, greq_free, greq_cancel, &g, &rq);
    MPI_Request keep = rq;
    MPI_Request_free(&rq);
    CHECK(g.frees == 0, "free waits for completion");
    MPI_Grequest_complete(keep);
    CHECK(g.frees == 1 && g.queries == 0, "free at Grequest_complete: frees %d queries %d", g.frees, g.queries);

    /* Mixed with point-to-point requests in Waitall/Waitany. */
    memset(&g, 0, sizeof g);
    int v = rank, got = -1, index = -1;
    MPI_Request rs[3];
    MPI_Status sts[3];
    MPI_Grequest_start(greq_query, greq_free, greq_cancel, &g, &rs[0]);
    g.self = rs[0];
    MPI_Irecv(&got, 1, MPI_INT, left, 90, MPI_COMM_WORLD, &rs[1]);
    MPI_Isend(&v, 1, MPI_INT, right, 90, MPI_COMM_WORLD, &rs[2]);
    MPI_Waitany(2, &rs[1], &index, &st);
    MPI_Grequest_complete(rs[0]);
    MPI_Waitall(3, rs, sts);
    CHECK(got == left && sts[0].MPI_TAG == 77 && g.frees == 1, "Waitall with a generalized request");

    /* An error from the query function is the call's error. */
    memset(&g, 0, sizeof g);
    g.query_rc = MPI_ERR_OTHER;
    MPI_Grequest_start(greq_query, greq_free, greq_cancel, &g, &rq);
    MPI_Grequest_complete(rq);
    CHECK_CLASS(MPI_Wait(&rq, &st), MPI_ERR_OTHER);
    CHECK(g.frees == 1, "free after a failing query");

#ifndef MPI_ABI_VERSION /* MPICH's MPIX_ extensions are not in the standard ABI */
    /* MPICH's extension: a poll function drives the request. */
    memset(&g, 0, sizeof g);
    g.complete_after = 5;
    MPIX_Grequest_start(greq_query, greq_free, greq_cancel, greq_poll, NULL, &g, &rq);
    g.self = rq;
    MPI_Wait(&rq, &st);
    CHECK(g.polls == 5 && g.queries == 1 && g.frees == 1, "MPIX poll function: polls %d", g.polls);
    memset(&g, 0, sizeof g);
    g.complete_after = 3;
    MPIX_Grequest_start(greq_query, greq_free, greq_cancel, greq_poll, NULL, &g, &rq);
    g.self = rq;
    flag = 0;
    while (!flag) MPI_Test(&rq, &flag, &st);
    CHECK(g.polls == 3 && g.frees == 1, "MPIX poll function with Test: polls %d", g.polls);

    /* MPICH's request classes: one set of callbacks, many requests. */
    MPIX_Grequest_class cls, other;
    CHECK(MPIX_Grequest_class_create(greq_query, greq_free, greq_cancel, greq_poll, NULL, &cls) == MPI_SUCCESS,
          "Grequest_class_create");
    MPIX_Grequest_class_create(greq_query, greq_free, greq_cancel, NULL, NULL, &other);
    CHECK(cls != other, "two classes differ");
    struct greq ga = {0}, gb = {0};
    MPI_Request two[2];
    ga.complete_after = 2;
    gb.complete_after = 4;
    CHECK(MPIX_Grequest_class_allocate(cls, &ga, &two[0]) == MPI_SUCCESS, "Grequest_class_allocate");
    MPIX_Grequest_class_allocate(cls, &gb, &two[1]);
    ga.self = two[0];
    gb.self = two[1];
    MPI_Waitall(2, two, MPI_STATUSES_IGNORE);
    CHECK(ga.polls == 2 && gb.polls == 4 && ga.frees == 1 && gb.frees == 1 && ga.queries == 1,
          "class requests: polls %d %d frees %d %d", ga.polls, gb.polls, ga.frees, gb.frees);
    memset(&ga, 0, sizeof ga);
    MPIX_Grequest_class_allocate(other, &ga, &rq);
    MPI_Grequest_complete(rq);
    MPI_Wait(&rq, &st);
    CHECK(ga.queries == 1 && ga.frees == 1 && st.MPI_TAG == 77, "a class without poll function");
    CHECK_CLASS(MPIX_Grequest_class_allocate(12345, &ga, &rq), MPI_ERR_ARG);

    /* No GPU support, said plainly. */
    int gpu = -1;
    CHECK(MPIX_GPU_query_support(MPIX_GPU_SUPPORT_CUDA, &gpu) == MPI_SUCCESS && gpu == 0, "CUDA: %d", gpu);
    gpu = -1;
    CHECK(MPIX_GPU_query_support(MPIX_GPU_SUPPORT_HIP, &gpu) == MPI_SUCCESS && gpu == 0, "HIP: %d", gpu);
    CHECK_CLASS(MPIX_GPU_query_support(99, &gpu), MPI_ERR_ARG);
    CHECK(!MPIX_Query_cuda_support() && !MPIX_Query_hip_support() && !MPIX_Query_ze_support(),
          "MPIX_Query_*_support");
#endif

    CHECK_CLASS(MPI_Grequest_complete(MPI_REQUEST_NULL), MPI_ERR_REQUEST);
    MPI_Irecv(&got, 1, MPI_INT, rank, 91, MPI_COMM_WORLD, &rq);
    CHECK_CLASS(MPI_Grequest_complete(rq), MPI_ERR_REQUEST);
    MPI_Cancel(&rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    MPI_Status plain;
    memset(&plain, 0, sizeof plain);
    MPI_Status_set_cancelled(&plain, 1);
    MPI_Test_cancelled(&plain, &cancelled);
    CHECK(cancelled, "Status_set_cancelled");
    MPI_Status_set_cancelled(&plain, 0);
    MPI_Test_cancelled(&plain, &cancelled);
    CHECK(!cancelled, "Status_set_cancelled(0)");
}

/* ---- Bad arguments ---------------------------------------------------- */
static void test_bad_arguments(void) {
    int v = 0, flag;
    MPI_Request rq;
    MPI_Message msg;
    MPI_Status st;
    /* MPI_ERR_COUNT */
    CHECK_CLASS(MPI_Send_c(&v, -1, MPI_INT, right, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Isend_c(&v, -1, MPI_INT, right, 0, MPI_COMM_WORLD, &rq), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Recv_c(&v, -1, MPI_INT, left, 0, MPI_COMM_WORLD, &st), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Bsend(&v, -1, MPI_INT, right, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Send_init(&v, -1, MPI_INT, right, 0, MPI_COMM_WORLD, &rq), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Recv_init_c(&v, -2, MPI_INT, left, 0, MPI_COMM_WORLD, &rq), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Isendrecv(&v, -1, MPI_INT, right, 0, &v, 1, MPI_INT, left, 0, MPI_COMM_WORLD, &rq),
                MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Sendrecv_replace_c(&v, -1, MPI_INT, right, 0, left, 0, MPI_COMM_WORLD, &st), MPI_ERR_COUNT);
    msg = MPI_MESSAGE_NO_PROC;
    CHECK_CLASS(MPI_Mrecv_c(&v, -1, MPI_INT, &msg, &st), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Startall(-1, &rq), MPI_ERR_COUNT);
    /* MPI_ERR_TAG */
    CHECK_CLASS(MPI_Send_c(&v, 1, MPI_INT, right, -1, MPI_COMM_WORLD), MPI_ERR_TAG);
    CHECK_CLASS(MPI_Ibsend(&v, 1, MPI_INT, right, -5, MPI_COMM_WORLD, &rq), MPI_ERR_TAG);
    CHECK_CLASS(MPI_Send_init(&v, 1, MPI_INT, right, -5, MPI_COMM_WORLD, &rq), MPI_ERR_TAG);
    CHECK_CLASS(MPI_Bsend_init(&v, 1, MPI_INT, right, MPI_ANY_TAG, MPI_COMM_WORLD, &rq), MPI_ERR_TAG);
    CHECK_CLASS(MPI_Recv_init(&v, 1, MPI_INT, left, -7, MPI_COMM_WORLD, &rq), MPI_ERR_TAG);
    CHECK_CLASS(MPI_Isendrecv(&v, 1, MPI_INT, right, -1, &v, 1, MPI_INT, left, 0, MPI_COMM_WORLD, &rq), MPI_ERR_TAG);
    CHECK_CLASS(MPI_Isendrecv_replace(&v, 1, MPI_INT, right, 0, left, -9, MPI_COMM_WORLD, &rq), MPI_ERR_TAG);
    CHECK_CLASS(MPI_Mprobe(left, -3, MPI_COMM_WORLD, &msg, &st), MPI_ERR_TAG);
    CHECK_CLASS(MPI_Improbe(left, -3, MPI_COMM_WORLD, &flag, &msg, &st), MPI_ERR_TAG);
    /* MPI_ERR_RANK */
    CHECK_CLASS(MPI_Send_c(&v, 1, MPI_INT, size, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Bsend(&v, 1, MPI_INT, -4, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Ssend_init(&v, 1, MPI_INT, size, 0, MPI_COMM_WORLD, &rq), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Recv_init(&v, 1, MPI_INT, size, 0, MPI_COMM_WORLD, &rq), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Isendrecv(&v, 1, MPI_INT, -5, 0, &v, 1, MPI_INT, left, 0, MPI_COMM_WORLD, &rq), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Isendrecv_replace(&v, 1, MPI_INT, right, 0, size + 2, 0, MPI_COMM_WORLD, &rq), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Mprobe(size + 1, 0, MPI_COMM_WORLD, &msg, &st), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Improbe(-9, 0, MPI_COMM_WORLD, &flag, &msg, &st), MPI_ERR_RANK);
    /* MPI_ERR_REQUEST */
    rq = MPI_REQUEST_NULL;
    CHECK_CLASS(MPI_Start(&rq), MPI_ERR_REQUEST);
    MPI_Request pair[2];
    MPI_Send_init(&v, 1, MPI_INT, rank, 95, MPI_COMM_WORLD, &pair[0]);
    MPI_Irecv(&v, 1, MPI_INT, rank, 95, MPI_COMM_WORLD, &pair[1]);
    CHECK_CLASS(MPI_Start(&pair[1]), MPI_ERR_REQUEST);
    CHECK_CLASS(MPI_Startall(2, pair), MPI_ERR_REQUEST);
    MPI_Start(&pair[0]);
    CHECK_CLASS(MPI_Start(&pair[0]), MPI_ERR_REQUEST);
    MPI_Waitall(2, pair, MPI_STATUSES_IGNORE);
    MPI_Request_free(&pair[0]);
    msg = MPI_MESSAGE_NULL;
    CHECK_CLASS(MPI_Mrecv(&v, 1, MPI_INT, &msg, &st), MPI_ERR_REQUEST);
    CHECK_CLASS(MPI_Imrecv(&v, 1, MPI_INT, &msg, &rq), MPI_ERR_REQUEST);
    /* A request handle is not a message, and a message is not a request. */
    MPI_Irecv(&v, 1, MPI_INT, rank, 96, MPI_COMM_WORLD, &rq);
    msg = (MPI_Message)rq;
    CHECK_CLASS(MPI_Mrecv(&v, 1, MPI_INT, &msg, &st), MPI_ERR_REQUEST);
    MPI_Cancel(&rq);
    MPI_Wait(&rq, MPI_STATUS_IGNORE);
    MPI_Send(&v, 1, MPI_INT, rank, 97, MPI_COMM_WORLD);
    MPI_Mprobe(rank, 97, MPI_COMM_WORLD, &msg, &st);
    rq = (MPI_Request)msg;
    CHECK_CLASS(MPI_Wait(&rq, &st), MPI_ERR_REQUEST);
    CHECK_CLASS(MPI_Cancel(&rq), MPI_ERR_REQUEST);
    MPI_Mrecv(&v, 1, MPI_INT, &msg, &st);
    rq = MPI_REQUEST_NULL;
    CHECK_CLASS(MPI_Cancel(&rq), MPI_ERR_REQUEST);
    /* MPI_ERR_BUFFER for a NULL buffer of the new calls. */
    CHECK_CLASS(MPI_Send_init(NULL, 1, MPI_INT, right, 0, MPI_COMM_WORLD, &rq), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Isendrecv_replace(NULL, 1, MPI_INT, right, 0, left, 0, MPI_COMM_WORLD, &rq), MPI_ERR_BUFFER);
}

int main(int argc, char **argv) {
    mt_init(&argc, &argv, &rank, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;

    test_cancel_first_contact(); /* must be the first communication */
    test_cancel_self();
    for (int i = 0; i < NSIZES; i++) {
        test_large_count(sizes[i]);
        test_isendrecv(sizes[i]);
        test_persistent(sizes[i]);
    }
    test_isendrecv_proc_null();
    test_inactive();
    test_persistent_cancel();
    MPI_Barrier(MPI_COMM_WORLD);
    test_buffered();
    test_matched_probe();
    test_generalized();
    test_bad_arguments();

    int errors = 0;
    MPI_Allreduce(&mt_errors, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    mt_report(rank, errors);
    return errors ? 1 : 0;
}
