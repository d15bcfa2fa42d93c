/* Resource accounting across epochs: the descriptors, shared-memory
 * mappings (anonymous or named) and threads of the process are counted before the first
 * MPI_Session_init and after the last MPI_Session_finalize; they must be
 * equal after N cycles (argv[1], default 1000) of init, communicator from
 * mpi://WORLD, one message round, a shared-memory window with a put to the
 * next rank between fences, free, finalize, all under a limit of 256
 * descriptors (so a leak of one per cycle fails). With FINALIZE_ATEXIT the
 * transports stay open past the last finalize by design: then the counts
 * after the first and after the last cycle must be equal (no growth). */
#include "mpitest.h"
#include <dirent.h>
#include <sys/resource.h>

/* Lines of /proc/self/maps naming an oxmpi shared-memory segment: a named
 * one, or an anonymous one (a memfd). */
static int count_shm_mappings(void) {
    FILE *f = fopen("/proc/self/maps", "r");
    char line[1024];
    int n = 0;
    if (!f) return -1;
    while (fgets(line, sizeof line, f))
        if (strstr(line, "/dev/shm/oxmpi-") || strstr(line, "/memfd:oxmpi-segment")) n++;
    fclose(f);
    return n;
}

static int count_entries(const char *dir, const char *prefix) {
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *e;
    if (!d) return -1;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.' && (!prefix || !strncmp(e->d_name, prefix, strlen(prefix)))) n++;
    closedir(d);
    return n;
}

int main(int argc, char **argv) {
    int cycles = argc > 1 ? atoi(argv[1]) : 1000, rank = 0, size = 1;
    struct rlimit lim = {256, 256};
    setrlimit(RLIMIT_NOFILE, &lim);
    int fds0 = count_entries("/proc/self/fd", NULL);
    int threads0 = count_entries("/proc/self/task", NULL);
    const char *job = getenv("OXMPI_JOBID");

    const char *transport = getenv("OXMPI_TRANSPORT");
    int tcp_only = transport && !strcmp(transport, "tcp");
    int atexit_mode = getenv("MPIR_CVAR_FINALIZE_ATEXIT") || getenv("OXMPI_FINALIZE_ATEXIT");
    int fds_after_first = -1, threads_after_first = -1;
    for (int c = 0; c < cycles; c++) {
        MPI_Session s;
        MPI_Group g;
        MPI_Comm comm;
        if (MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s) != MPI_SUCCESS) {
            CHECK(0, "cycle %d: session init failed", c);
            break;
        }
        MPI_Group_from_session_pset(s, "mpi://WORLD", &g);
        MPI_Comm_create_from_group(g, "resources", MPI_INFO_NULL, MPI_ERRORS_RETURN, &comm);
        MPI_Comm_rank(comm, &rank);
        MPI_Comm_size(comm, &size);
        int v = c * 10 + rank, got = -1;
        MPI_Sendrecv(&v, 1, MPI_INT, (rank + 1) % size, 0, &got, 1, MPI_INT, (rank + size - 1) % size, 0, comm,
                     MPI_STATUS_IGNORE);
        CHECK(got == c * 10 + (rank + size - 1) % size, "cycle %d: got %d", c, got);
        if (c == 0 && job && !tcp_only) CHECK(count_shm_mappings() >= 1, "an inbox is mapped during an epoch");
        /* A window of the epoch: its segment, its progress and its
         * communicator go with it. */
        int *mem;
        MPI_Win win;
        MPI_Win_allocate_shared(sizeof(int), sizeof(int), MPI_INFO_NULL, comm, &mem, &win);
        *mem = -1;
        MPI_Win_fence(0, win);
        MPI_Put(&v, 1, MPI_INT, (rank + 1) % size, 0, 1, MPI_INT, win);
        MPI_Win_fence(0, win);
        CHECK(*mem == got, "cycle %d: the window holds %d, expected %d", c, *mem, got);
        MPI_Win_free(&win);
        MPI_Comm_free(&comm);
        MPI_Group_free(&g);
        MPI_Session_finalize(&s);
        if (c == 0) {
            fds_after_first = count_entries("/proc/self/fd", NULL);
            threads_after_first = count_entries("/proc/self/task", NULL);
        }
        if (mt_errors > 5) break;
    }
    int fds1 = count_entries("/proc/self/fd", NULL);
    /* A joined thread can still be listed for a moment: pthread_join
     * returns once the kernel clears the thread's id, a little before the
     * task leaves /proc. Give such a thread up to a second to go; a thread
     * that is still running (a leak) stays and fails the check. */
    int threads_expected = atexit_mode ? threads_after_first : threads0;
    int threads1 = count_entries("/proc/self/task", NULL);
    for (int i = 0; i < 100 && threads1 > threads_expected; i++) {
        usleep(10000);
        threads1 = count_entries("/proc/self/task", NULL);
    }
    int maps1 = count_shm_mappings();
    if (!atexit_mode) CHECK(maps1 == 0, "%d shared-memory mappings left after the last finalize", maps1);
    if (atexit_mode) {
        CHECK(fds1 == fds_after_first, "descriptors: %d after the first cycle, %d after %d cycles", fds_after_first, fds1,
              cycles);
        CHECK(threads1 == threads_after_first, "threads: %d after the first cycle, %d after the last", threads_after_first,
              threads1);
    } else {
        CHECK(fds1 == fds0, "descriptors: %d before, %d after %d cycles", fds0, fds1, cycles);
        CHECK(threads1 == threads0, "threads: %d before, %d after", threads0, threads1);
    }
    if (job && !atexit_mode) {
        /* Every rank's inbox of the last epoch is gone once all finalized;
         * ours is gone now. */
        char mine[300];
        snprintf(mine, sizeof mine, "oxmpi-%s-e%d-r%d", job, cycles, rank);
        CHECK(count_entries("/dev/shm", mine) == 0, "inbox %s left behind", mine);
    }
    mt_report(rank, mt_errors);
    return mt_errors ? 1 : 0;
}
