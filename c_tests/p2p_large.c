/* Large messages, 0 bytes to 64 MiB, between rank pairs (0<->1, 2<->3...),
 * both directions, contiguous and strided (a vector type): checks every
 * byte. Run with OXMPI_SHM_SINGLE_COPY=0 too (the pipelined copy). */
#include "mpitest.h"

int main(int argc, char **argv) {
    int rank, size;
    mt_init(&argc, &argv, &rank, &size);
    int peer = mt_pair_peer(rank, size);
    size_t max = 64u << 20;
    unsigned char *out = malloc(max), *in = malloc(max);
    size_t lens[] = {0, 1, 1000, 16000, 16384, 20000, 65536, 100000, 1u << 20, 5000001, 16u << 20, 64u << 20};
    for (unsigned t = 0; t < sizeof lens / sizeof lens[0]; t++) {
        size_t n = lens[t];
        for (size_t i = 0; i < n; i++) out[i] = (unsigned char)(i * 31 + rank + t);
        memset(in, 0xee, n + 1 < max ? n + 1 : max);
        MPI_Status st;
        MPI_Sendrecv(out, (int)n, MPI_BYTE, peer, (int)t, in, (int)n, MPI_BYTE, peer, (int)t, MPI_COMM_WORLD, &st);
        if (peer == MPI_PROC_NULL) continue;
        int count;
        MPI_Get_count(&st, MPI_BYTE, &count);
        CHECK((size_t)count == n, "len %zu: count %d", n, count);
        size_t bad = n;
        for (size_t i = 0; i < n; i++)
            if (in[i] != (unsigned char)(i * 31 + peer + t)) { bad = i; break; }
        CHECK(bad == n, "len %zu: wrong byte at %zu", n, bad);
        if (n + 1 < max) CHECK(in[n] == 0xee, "len %zu: wrote past the end", n);
    }
    /* Strided: every other double of a 4 MiB array. */
    int count = 1 << 18;
    double *a = malloc(sizeof(double) * 2 * count), *b = malloc(sizeof(double) * 2 * count);
    MPI_Datatype strided;
    MPI_Type_vector(count, 1, 2, MPI_DOUBLE, &strided);
    MPI_Type_commit(&strided);
    for (int i = 0; i < 2 * count; i++) { a[i] = i + rank * 0.5; b[i] = -1; }
    MPI_Sendrecv(a, 1, strided, peer, 100, b, 1, strided, peer, 100, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (peer != MPI_PROC_NULL)
        for (int i = 0; i < 2 * count; i++) {
            double want = (i % 2 == 0) ? i + peer * 0.5 : -1;
            if (b[i] != want) { CHECK(0, "strided: b[%d] = %g, want %g", i, b[i], want); break; }
        }
    MPI_Type_free(&strided);
    free(a); free(b); free(out); free(in);
    MPI_Finalize();
    mt_report(rank, mt_errors);
    return mt_errors ? 1 : 0;
}
