/* MPI_BOTTOM (NULL in this ABI) with datatypes of absolute addresses
 * (MPI_Get_address displacements): point-to-point send and receive,
 * nonblocking and blocking, small and 1 MiB, a broadcast and a gather, each checked
 * element by element; and NULL with a predefined type, or a derived type
 * whose data starts at displacement 0, is still MPI_ERR_BUFFER. */
#include "mpitest.h"
#include <stddef.h>

struct particle {
    double x[3];
    int id;
    char tag;
};

/* A struct type that addresses `p`'s fields absolutely. */
static MPI_Datatype absolute_type(struct particle *p) {
    int lens[3] = {3, 1, 1};
    MPI_Aint disps[3];
    MPI_Datatype types[3] = {MPI_DOUBLE, MPI_INT, MPI_CHAR}, t;
    MPI_Get_address(p->x, &disps[0]);
    MPI_Get_address(&p->id, &disps[1]);
    MPI_Get_address(&p->tag, &disps[2]);
    MPI_Type_create_struct(3, lens, disps, types, &t);
    MPI_Type_commit(&t);
    return t;
}

static void fill(struct particle *p, int seed) {
    for (int i = 0; i < 3; i++) p->x[i] = seed * 10.0 + i;
    p->id = seed;
    p->tag = (char)('a' + seed % 26);
}

static int same(const struct particle *p, int seed) {
    struct particle q;
    fill(&q, seed);
    return p->x[0] == q.x[0] && p->x[1] == q.x[1] && p->x[2] == q.x[2] && p->id == q.id && p->tag == q.tag;
}

int main(int argc, char **argv) {
    int rank, size;
    mt_init(&argc, &argv, &rank, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    struct particle mine, got;
    MPI_Datatype tm = absolute_type(&mine), tg = absolute_type(&got);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    fill(&mine, rank + 1);
    memset(&got, 0, sizeof got);
    CHECK(MPI_Sendrecv(MPI_BOTTOM, 1, tm, right, 1, MPI_BOTTOM, 1, tg, left, 1, MPI_COMM_WORLD,
                       MPI_STATUS_IGNORE) == MPI_SUCCESS,
          "MPI_Sendrecv from and to MPI_BOTTOM");
    CHECK(same(&got, left + 1), "sendrecv: got id %d", got.id);

    MPI_Request r[2];
    memset(&got, 0, sizeof got);
    MPI_Irecv(MPI_BOTTOM, 1, tg, left, 2, MPI_COMM_WORLD, &r[0]);
    MPI_Isend(MPI_BOTTOM, 1, tm, right, 2, MPI_COMM_WORLD, &r[1]);
    CHECK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE) == MPI_SUCCESS, "nonblocking from and to MPI_BOTTOM");
    CHECK(same(&got, left + 1), "isend/irecv: got id %d", got.id);

    /* Broadcast from rank 0's MPI_BOTTOM into everyone's. */
    if (rank == 0) fill(&got, 77);
    else memset(&got, 0, sizeof got);
    CHECK(MPI_Bcast(MPI_BOTTOM, 1, tg, 0, MPI_COMM_WORLD) == MPI_SUCCESS, "MPI_Bcast at MPI_BOTTOM");
    CHECK(same(&got, 77), "bcast: got id %d", got.id);

    /* Gather: each sends its particle from MPI_BOTTOM. */
    struct particle *all = calloc(size, sizeof *all);
    MPI_Datatype plain;
    {
        int lens[3] = {3, 1, 1};
        MPI_Aint disps[3] = {offsetof(struct particle, x), offsetof(struct particle, id),
                             offsetof(struct particle, tag)};
        MPI_Datatype types[3] = {MPI_DOUBLE, MPI_INT, MPI_CHAR}, t;
        MPI_Type_create_struct(3, lens, disps, types, &t);
        MPI_Type_create_resized(t, 0, sizeof(struct particle), &plain);
        MPI_Type_commit(&plain);
        MPI_Type_free(&t);
    }
    CHECK(MPI_Gather(MPI_BOTTOM, 1, tm, all, 1, plain, 0, MPI_COMM_WORLD) == MPI_SUCCESS,
          "MPI_Gather from MPI_BOTTOM");
    if (rank == 0)
        for (int i = 0; i < size; i++) CHECK(same(&all[i], i + 1), "gather: slot %d has id %d", i, all[i].id);

    /* A large message (rendezvous, single copy) from and to MPI_BOTTOM. */
    enum { BIG = 1 << 18 };
    int *out = malloc(BIG * sizeof(int)), *in = calloc(BIG, sizeof(int));
    for (int i = 0; i < BIG; i++) out[i] = i ^ rank;
    MPI_Aint at_out, at_in;
    MPI_Get_address(out, &at_out);
    MPI_Get_address(in, &at_in);
    int big = BIG;
    MPI_Datatype bo, bi;
    MPI_Type_create_hindexed(1, &big, &at_out, MPI_INT, &bo);
    MPI_Type_create_hindexed(1, &big, &at_in, MPI_INT, &bi);
    MPI_Type_commit(&bo);
    MPI_Type_commit(&bi);
    CHECK(MPI_Sendrecv(MPI_BOTTOM, 1, bo, right, 4, MPI_BOTTOM, 1, bi, left, 4, MPI_COMM_WORLD,
                       MPI_STATUS_IGNORE) == MPI_SUCCESS,
          "1 MiB from and to MPI_BOTTOM");
    int bad = 0;
    for (int i = 0; i < BIG; i++) bad += in[i] != (i ^ left);
    CHECK(bad == 0, "1 MiB at MPI_BOTTOM: %d ints wrong", bad);
    MPI_Type_free(&bo);
    MPI_Type_free(&bi);
    free(out);
    free(in);

    /* NULL that cannot be MPI_BOTTOM: a predefined type, or data at 0. */
    CHECK_CLASS(MPI_Send(NULL, 1, MPI_INT, right, 3, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Send(NULL, 1, plain, right, 3, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Bcast(NULL, 1, plain, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);

    free(all);
    MPI_Type_free(&tm);
    MPI_Type_free(&tg);
    MPI_Type_free(&plain);
    int errors = mt_errors;
    MPI_Allreduce(MPI_IN_PLACE, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    mt_report(rank, errors);
    return errors != 0;
}
