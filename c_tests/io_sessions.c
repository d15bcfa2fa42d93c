/* MPI-IO in the sessions model: files belong to the epoch that opened
 * them. Each of several epochs opens a file on a communicator made from
 * mpi://WORLD, writes its rank's record collectively and reads the whole
 * file back; the last file of every epoch is left open, and the finalize
 * that ends the epoch closes it (its handle is then invalid, and no
 * sidecar file is left in the directory). No world model at all. */
#include "mpitest.h"
#include <dirent.h>
#include <sys/stat.h>

#define EPOCHS 3
#define R 8

/* Files in `dir` (the data files and any sidecar). */
static int entries(const char *dir) {
    int n = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            n++;
    if (d)
        closedir(d);
    return n;
}

int main(void) {
    char dir[512], name[600];
    int rank = 0, size = 1, left_open = 0;
    MPI_File stale[EPOCHS];
    const char *tmp = getenv("TMPDIR");
    /* Every process of the job makes the same name: the launcher's job id. */
    const char *job = getenv("OXMPI_JOBID");
    snprintf(dir, sizeof dir, "%s/oxmpi-io-sessions-%s", tmp && *tmp ? tmp : "/tmp",
             job ? job : "single");
    mkdir(dir, 0700);
    for (int epoch = 0; epoch < EPOCHS; epoch++) {
        MPI_Session s;
        MPI_Group g;
        MPI_Comm comm;
        MPI_File fh, keep;
        CHECK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s) == MPI_SUCCESS, "init");
        MPI_Group_from_session_pset(s, "mpi://WORLD", &g);
        MPI_Comm_create_from_group(g, "io-sessions", MPI_INFO_NULL, MPI_ERRORS_RETURN, &comm);
        MPI_Group_free(&g);
        MPI_Comm_rank(comm, &rank);
        MPI_Comm_size(comm, &size);
        /* The previous epoch's file was closed at its end. */
        if (epoch > 0) {
            int amode;
            CHECK_CLASS(MPI_File_get_amode(stale[epoch - 1], &amode), MPI_ERR_FILE);
        }
        snprintf(name, sizeof name, "%s/epoch%d", dir, epoch);
        CHECK_CLASS(MPI_File_open(comm, name, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                                  MPI_INFO_NULL, &fh),
                    MPI_SUCCESS);
        int rec[R], *all = malloc(R * size * sizeof(int));
        for (int i = 0; i < R; i++)
            rec[i] = epoch * 1000 + rank * R + i;
        MPI_File_write_at_all(fh, (MPI_Offset)rank * R * sizeof(int), rec, R, MPI_INT,
                              MPI_STATUS_IGNORE);
        MPI_File_read_at_all(fh, 0, all, R * size, MPI_INT, MPI_STATUS_IGNORE);
        for (int i = 0; i < R * size; i++)
            if (all[i] != epoch * 1000 + i) {
                CHECK(0, "epoch %d: int %d is %d", epoch, i, all[i]);
                break;
            }
        free(all);
        CHECK_CLASS(MPI_File_close(&fh), MPI_SUCCESS);
        /* One more, left open: the end of the epoch closes it. */
        snprintf(name, sizeof name, "%s/open%d", dir, epoch);
        MPI_File_open(comm, name, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &keep);
        MPI_File_write_ordered(keep, rec, 1, MPI_INT, MPI_STATUS_IGNORE);
        stale[epoch] = keep;
        MPI_Comm_free(&comm);
        CHECK(MPI_Session_finalize(&s) == MPI_SUCCESS, "finalize");
        left_open++;
    }
    /* A new epoch to gather the results; rank 0 cleans up once the
     * others are done looking. */
    MPI_Session s;
    MPI_Comm comm;
    mt_session_world(&s, "io-sessions-end", &comm);
    MPI_Barrier(comm); /* every process has ended the last epoch */
    /* What is left: the files left open (written, closed at the epochs'
     * ends), no sidecar. Every process looks (it may run alone). */
    int n = entries(dir);
    CHECK(n == left_open, "%d entries in %s, expected %d", n, dir, left_open);
    if (rank == 0) {
        for (int epoch = 0; epoch < EPOCHS; epoch++) {
            struct stat sb;
            snprintf(name, sizeof name, "%s/open%d", dir, epoch);
            CHECK(stat(name, &sb) == 0 && sb.st_size == (off_t)(size * sizeof(int)),
                  "file of epoch %d: %lld bytes", epoch, (long long)sb.st_size);
        }
    }
    int errors = 0;
    MPI_Allreduce(&mt_errors, &errors, 1, MPI_INT, MPI_SUM, comm);
    if (rank == 0) {
        for (int epoch = 0; epoch < EPOCHS; epoch++) {
            snprintf(name, sizeof name, "%s/open%d", dir, epoch);
            remove(name);
        }
        rmdir(dir);
    }
    mt_report(rank, errors);
    MPI_Comm_free(&comm);
    MPI_Session_finalize(&s);
    return 0;
}
