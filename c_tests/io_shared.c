/* MPI-IO through the shared file pointer: write_shared/read_shared (each
 * record exactly once, whatever the order), iwrite_shared/iread_shared,
 * seek_shared and get_position_shared (shared by every process),
 * write_ordered/read_ordered and their split forms (rank order), and
 * MPI_MODE_APPEND (both pointers start at the end). The file is checked
 * with plain POSIX pread. */
#include "mpitest.h"
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#define R 16 /* ints per record */

static int rank, size;
static char name[600];

/* Reads the whole file with pread into a new buffer; *n gets its ints. */
static int *slurp(int *n) {
    struct stat sb;
    stat(name, &sb);
    int *all = malloc(sb.st_size + 1);
    int fd = open(name, O_RDONLY);
    ssize_t got = pread(fd, all, sb.st_size, 0);
    close(fd);
    *n = (int)(got / sizeof(int));
    return all;
}

/* Whether the file holds `records` records of R ints each naming their
 * writer (value tag*1000 + writer*R + i), each writer's `per` times. */
static void check_records(int tag, int records, int ordered, const char *what) {
    if (rank != 0)
        return;
    int n, *all = slurp(&n), *seen = calloc(size, sizeof(int));
    CHECK(n >= records * R, "%s: file has %d ints, expected %d", what, n, records * R);
    for (int r = 0; r < records && (r + 1) * R <= n; r++) {
        int writer = (all[r * R] - tag * 1000) / R;
        if (writer < 0 || writer >= size) {
            CHECK(0, "%s: record %d starts with %d", what, r, all[r * R]);
            continue;
        }
        if (ordered)
            CHECK(writer == r % size, "%s: record %d is rank %d's", what, r, writer);
        seen[writer]++;
        for (int i = 0; i < R; i++)
            if (all[r * R + i] != tag * 1000 + writer * R + i) {
                CHECK(0, "%s: record %d mixed at %d", what, r, i);
                break;
            }
    }
    for (int w = 0; w < size; w++)
        CHECK(seen[w] == records / size, "%s: rank %d's record %d times", what, w, seen[w]);
    free(all);
    free(seen);
}

static void fill(int *buf, int tag) {
    for (int i = 0; i < R; i++)
        buf[i] = tag * 1000 + rank * R + i;
}

/* Checks a record read back is someone's (ordered: rank r's). */
static int writer_of(const int *buf, int tag) {
    int w = (buf[0] - tag * 1000) / R;
    for (int i = 0; i < R; i++)
        if (buf[i] != tag * 1000 + w * R + i)
            return -1;
    return w;
}

int main(int argc, char **argv) {
    int errors = 0, buf[R], count;
    MPI_File fh;
    MPI_Status st;
    MPI_Request req;
    MPI_Offset pos;
    mt_init(&argc, &argv, &rank, &size);
    mt_temp_name(name, sizeof name, "io-shared.dat");
    MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                  MPI_INFO_NULL, &fh);
    MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL);

    /* Independent shared writes: two records per rank, in any order. */
    fill(buf, 1);
    MPI_File_write_shared(fh, buf, R, MPI_INT, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == R, "write_shared count %d", count);
    MPI_File_iwrite_shared(fh, buf, R, MPI_INT, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_get_position_shared(fh, &pos);
    CHECK(pos == 2 * size * R, "shared position %lld after the writes", (long long)pos);
    check_records(1, 2 * size, 0, "write_shared");

    /* Shared reads: every record read once, by someone. */
    MPI_File_seek_shared(fh, 0, MPI_SEEK_SET);
    int got[2];
    MPI_File_read_shared(fh, buf, R, MPI_INT, &st);
    got[0] = writer_of(buf, 1);
    MPI_File_iread_shared(fh, buf, R, MPI_INT, &req);
    MPI_Wait(&req, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == R, "iread_shared count %d", count);
    got[1] = writer_of(buf, 1);
    int *all = malloc(2 * size * sizeof(int)), *per = calloc(size, sizeof(int));
    MPI_Allgather(got, 2, MPI_INT, all, 2, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < 2 * size; i++)
        if (all[i] >= 0 && all[i] < size)
            per[all[i]]++;
    for (int w = 0; w < size; w++)
        CHECK(per[w] == 2, "rank %d's records were read %d times", w, per[w]);
    free(all);
    free(per);

    /* seek_shared from the end, then an ordered write after it. */
    MPI_File_seek_shared(fh, 0, MPI_SEEK_END);
    MPI_File_get_position_shared(fh, &pos);
    CHECK(pos == 2 * size * R, "seek_shared to the end: %lld", (long long)pos);
    MPI_File_seek_shared(fh, 0, MPI_SEEK_SET);
    fill(buf, 2);
    MPI_File_write_ordered(fh, buf, R, MPI_INT, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == R, "write_ordered count %d", count);
    MPI_File_write_ordered_begin(fh, buf, R, MPI_INT);
    MPI_File_write_ordered_end(fh, buf, &st);
    MPI_File_get_position_shared(fh, &pos);
    CHECK(pos == 2 * size * R, "shared position %lld after ordered writes", (long long)pos);
    MPI_Barrier(MPI_COMM_WORLD);
    check_records(2, 2 * size, 1, "write_ordered");

    MPI_File_seek_shared(fh, 0, MPI_SEEK_SET);
    MPI_File_read_ordered(fh, buf, R, MPI_INT, &st);
    CHECK(writer_of(buf, 2) == rank, "read_ordered gave rank %d's record", writer_of(buf, 2));
    MPI_File_read_ordered_begin(fh, buf, R, MPI_INT);
    MPI_File_read_ordered_end(fh, buf, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == R && writer_of(buf, 2) == rank, "split read_ordered: count %d, rank %d", count,
          writer_of(buf, 2));
    /* The individual pointer did not move. */
    MPI_File_get_position(fh, &pos);
    CHECK(pos == 0, "individual position %lld", (long long)pos);
    MPI_File_close(&fh);
    CHECK(access(name, F_OK) != 0, "DELETE_ON_CLOSE left the file");
    MPI_Barrier(MPI_COMM_WORLD); /* everyone looked before rank 0 makes it again */

    /* MPI_MODE_APPEND: pointers at the end of what is there. */
    if (rank == 0) {
        int fd = open(name, O_CREAT | O_WRONLY, 0600);
        char hello[10] = "0123456789";
        CHECK(write(fd, hello, 10) == 10, "write");
        close(fd);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_WRONLY | MPI_MODE_APPEND, MPI_INFO_NULL, &fh);
    MPI_File_get_position(fh, &pos);
    CHECK(pos == 10, "APPEND: individual position %lld", (long long)pos);
    MPI_File_get_position_shared(fh, &pos);
    CHECK(pos == 10, "APPEND: shared position %lld", (long long)pos);
    char c = 'a' + rank;
    MPI_File_write_ordered(fh, &c, 1, MPI_CHAR, MPI_STATUS_IGNORE);
    MPI_File_close(&fh);
    if (rank == 0) {
        char back[64] = {0};
        int fd = open(name, O_RDONLY);
        ssize_t n = pread(fd, back, sizeof back, 0);
        close(fd);
        CHECK(n == 10 + size && back[10] == 'a' && back[9 + size] == 'a' + size - 1,
              "APPEND file '%s'", back);
        MPI_File_delete(name, MPI_INFO_NULL);
    }

    MPI_Allreduce(&mt_errors, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    mt_report(rank, errors);
    MPI_Finalize();
    return 0;
}
