/* Small calls of MPI 4.1 beside the big ones:
 * - MPI_Alloc_mem / MPI_Free_mem: cache-line (64-byte) alignment, the
 *   mpi_minimum_memory_alignment hint, blocks used as send and receive
 *   buffers between ranks, size 0, NULL to Free_mem, and MPI_ERR_BASE for
 *   a pointer that is not from MPI_Alloc_mem or was freed already;
 * - MPI_Status_c2f / MPI_Status_f2c round trip;
 * - MPI_Pcontrol succeeds at every level. */
#include <stdint.h>
#include "mpitest.h"

int main(int argc, char **argv) {
    int rank, size;
    mt_init(&argc, &argv, &rank, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* Alignment. */
    void *blocks[8];
    for (int i = 0; i < 8; i++) {
        CHECK(MPI_Alloc_mem((MPI_Aint)(1 + 37 * i), MPI_INFO_NULL, &blocks[i]) == MPI_SUCCESS, "alloc %d", i);
        CHECK(((uintptr_t)blocks[i] % 64) == 0, "block %d at %p is 64-byte aligned", i, blocks[i]);
        memset(blocks[i], i, (size_t)(1 + 37 * i));
    }
    for (int i = 0; i < 8; i++)
        CHECK(MPI_Free_mem(blocks[i]) == MPI_SUCCESS, "free %d", i);

    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "mpi_minimum_memory_alignment", "4096");
    void *page;
    CHECK(MPI_Alloc_mem(100, info, &page) == MPI_SUCCESS, "alloc with the alignment hint");
    CHECK(((uintptr_t)page % 4096) == 0, "the hint asked for 4096-byte alignment: %p", page);
    MPI_Free_mem(page);
    MPI_Info_set(info, "mpi_minimum_memory_alignment", "3");
    CHECK(MPI_Alloc_mem(100, info, &page) == MPI_SUCCESS, "a hint that is not a power of two is ignored");
    CHECK(((uintptr_t)page % 64) == 0, "still 64-byte aligned");
    MPI_Free_mem(page);
    MPI_Info_free(&info);

    /* Size 0 gives a pointer that can be freed. */
    void *empty = NULL;
    CHECK(MPI_Alloc_mem(0, MPI_INFO_NULL, &empty) == MPI_SUCCESS, "alloc 0 bytes");
    CHECK(MPI_Free_mem(empty) == MPI_SUCCESS, "free the 0-byte block");
    CHECK(MPI_Free_mem(NULL) == MPI_SUCCESS, "Free_mem(NULL) does nothing");

    /* Errors. */
    void *p;
    CHECK_CLASS(MPI_Alloc_mem(-1, MPI_INFO_NULL, &p), MPI_ERR_SIZE);
    int local;
    CHECK_CLASS(MPI_Free_mem(&local), MPI_ERR_BASE);
    MPI_Alloc_mem(16, MPI_INFO_NULL, &p);
    MPI_Free_mem(p);
    CHECK_CLASS(MPI_Free_mem(p), MPI_ERR_BASE);

    /* Blocks as message buffers around a ring. */
    const int n = 1 << 16;
    int *out, *in;
    MPI_Alloc_mem(n * (MPI_Aint)sizeof(int), MPI_INFO_NULL, &out);
    MPI_Alloc_mem(n * (MPI_Aint)sizeof(int), MPI_INFO_NULL, &in);
    for (int i = 0; i < n; i++) out[i] = rank * n + i;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Status st;
    MPI_Sendrecv(out, n, MPI_INT, right, 3, in, n, MPI_INT, left, 3, MPI_COMM_WORLD, &st);
    int bad = 0;
    for (int i = 0; i < n; i++) bad += in[i] != left * n + i;
    CHECK(bad == 0, "%d wrong ints from rank %d", bad, left);

    /* Status_c2f / f2c. */
    MPI_Fint f[MPI_F_STATUS_SIZE];
    MPI_Status back;
    memset(&back, 0, sizeof back);
    CHECK(MPI_Status_c2f(&st, f) == MPI_SUCCESS, "Status_c2f");
    CHECK(f[MPI_F_SOURCE] == left && f[MPI_F_TAG] == 3, "Fortran status source %d tag %d", (int)f[MPI_F_SOURCE],
          (int)f[MPI_F_TAG]);
    CHECK(MPI_Status_f2c(f, &back) == MPI_SUCCESS, "Status_f2c");
    int count = -1;
    MPI_Get_count(&back, MPI_INT, &count);
    CHECK(back.MPI_SOURCE == left && back.MPI_TAG == 3 && count == n, "round trip: source %d tag %d count %d",
          back.MPI_SOURCE, back.MPI_TAG, count);
    MPI_Free_mem(out);
    MPI_Free_mem(in);

    for (int level = -1; level <= 2; level++)
        CHECK(MPI_Pcontrol(level) == MPI_SUCCESS, "Pcontrol(%d)", level);

    int errs = 0;
    MPI_Allreduce(&mt_errors, &errs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    mt_report(rank, errs);
    MPI_Finalize();
    return 0;
}
