/* One message of just over 2 GiB (MPI_Send_c/MPI_Recv_c with an MPI_Count
 * count past INT_MAX): it arrives whole (a pattern on every page, the last
 * byte), MPI_Get_count_c gives its size and MPI_Get_count, whose int cannot
 * hold it, MPI_UNDEFINED. Skipped when the machine has less than 4 GiB
 * available (the receiver touches all 2 GiB; malloc alone would overcommit
 * and leave the OOM killer to decide). */
#include "mpitest.h"

/* MemAvailable from /proc/meminfo in KiB, 0 when unknown. */
static long long mem_available_kib(void) {
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    long long kib = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %lld kB", &kib) == 1) break;
    if (f) fclose(f);
    return kib;
}

int main(int argc, char **argv) {
    int rank, size;
    mt_init(&argc, &argv, &rank, &size);
    if (size < 2) mt_skip(rank, "needs 2 processes");
    MPI_Count n = ((MPI_Count)1 << 31) + 4096;
    int roomy = mem_available_kib() >= 4LL << 20;
    MPI_Bcast(&roomy, 1, MPI_INT, 0, MPI_COMM_WORLD);
    unsigned char *buf = roomy && rank < 2 ? malloc((size_t)n) : NULL;
    int have = rank >= 2 || buf != NULL, all = 0;
    MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (!all) {
        if (rank == 0)
            mt_reliability_row("load", "one message of 2 GiB + 4 KiB (MPI_Send_c)", "-",
                               "skipped: needs 4 GiB of available memory, this machine had %lld MiB",
                               mem_available_kib() / 1024);
        mt_skip(rank, "needs 4 GiB of available memory");
    }
    if (rank == 0) {
        for (MPI_Count i = 0; i < n; i += 4096) buf[i] = (unsigned char)(i / 4096 * 31);
        buf[n - 1] = 0x5a;
        MPI_Send_c(buf, n, MPI_BYTE, 1, 3, MPI_COMM_WORLD);
    } else if (rank == 1) {
        memset(buf, 0, (size_t)n);
        MPI_Status st;
        MPI_Recv_c(buf, n, MPI_BYTE, 0, 3, MPI_COMM_WORLD, &st);
        MPI_Count got = 0;
        MPI_Get_count_c(&st, MPI_BYTE, &got);
        CHECK(got == n, "MPI_Get_count_c gives %lld, sent %lld", (long long)got, (long long)n);
        long bad = 0;
        for (MPI_Count i = 0; i < n; i += 4096) bad += buf[i] != (unsigned char)(i / 4096 * 31);
        CHECK(bad == 0 && buf[n - 1] == 0x5a, "%ld pages wrong, last byte %#x", bad, buf[n - 1]);
        int small = 0;
        CHECK(MPI_Get_count(&st, MPI_BYTE, &small) == MPI_SUCCESS && small == MPI_UNDEFINED,
              "MPI_Get_count gives %d", small);
    }
    int errors = mt_errors;
    MPI_Allreduce(MPI_IN_PLACE, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    long rss = mt_peak_rss_mib(), *peaks = calloc(size, sizeof(long));
    MPI_Gather(&rss, 1, MPI_LONG, peaks, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    if (rank == 0)
        mt_reliability_row("load", "one message of 2 GiB + 4 KiB (MPI_Send_c, MPI_Recv_c)", "-",
                           "%s; peak resident memory: sender %ld MiB, receiver %ld MiB",
                           errors ? "it arrived damaged" : "it arrived whole, MPI_Get_count_c right", peaks[0],
                           peaks[1]);
    free(peaks);
    free(buf);
    MPI_Finalize();
    mt_report(rank, errors);
    return errors != 0;
}
