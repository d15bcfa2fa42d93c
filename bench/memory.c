/* memory.c: what an MPI job holds in memory, for oxmpi's bench/run.sh.
 * MPI_Init, one MPI_Barrier, then each rank reads
 *   - VmHWM from /proc/self/status: its peak resident set, private and
 *     shared pages it touched, library code included;
 *   - from /proc/self/smaps, over its shared mappings (permissions "s":
 *     POSIX shared memory, memfd, shared anonymous memory; shared library
 *     code is mapped private and is not counted): the Pss, its proportional
 *     share of those resident pages (a page mapped by k processes counts
 *     1/k in each), and the Size, what it has mapped.
 * Rank 0 prints (KiB): "hwm_max" and "hwm_mean" over the ranks; "shm_node",
 * the sum over the ranks of that Pss, which is the resident shared memory
 * of the job on the node (exact when only the ranks map it; a launcher
 * that maps it too holds a share that is not counted); "shm_mapped_max",
 * the largest rank's mapped shared memory. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

static long status_kib(const char *key)
{
    char line[256];
    long v = -1;
    size_t k = strlen(key);
    FILE *f = fopen("/proc/self/status", "r");
    if (!f) return -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, key, k) == 0 && line[k] == ':')
            sscanf(line + k + 1, "%ld", &v);
    fclose(f);
    return v;
}

/* Pss and Size (KiB) summed over the shared mappings. */
static void shared_kib(double *pss, double *size)
{
    char line[512], perms[8];
    int shared = 0;
    long v;
    *pss = *size = 0;
    FILE *f = fopen("/proc/self/smaps", "r");
    if (!f) return;
    while (fgets(line, sizeof line, f)) {
        unsigned long a, b;
        if (sscanf(line, "%lx-%lx %7s", &a, &b, perms) == 3)
            shared = perms[3] == 's';
        else if (shared && sscanf(line, "Pss: %ld", &v) == 1)
            *pss += (double)v;
        else if (shared && sscanf(line, "Size: %ld", &v) == 1)
            *size += (double)v;
    }
    fclose(f);
}

int main(int argc, char **argv)
{
    int rank, nranks;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    MPI_Barrier(MPI_COMM_WORLD);
    double hwm = (double)status_kib("VmHWM"), pss, size, max[2], sum[2];
    shared_kib(&pss, &size);
    double mine_max[2] = {hwm, size}, mine_sum[2] = {hwm, pss};
    MPI_Reduce(mine_max, max, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(mine_sum, sum, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("# memory: %d ranks, KiB\n", nranks);
        printf("hwm_max %.0f\nhwm_mean %.0f\n", max[0], sum[0] / nranks);
        printf("shm_node %.0f\nshm_mapped_max %.0f\n", sum[1], max[1]);
    }
    MPI_Finalize();
    return 0;
}
