/* MPI-IO past 4 GiB: a sparse file written and read at offsets beyond
 * 2^32 through the large-count (`_c`) calls, with explicit offsets (each
 * rank 1 MiB at an odd offset past 4 GiB) and through a view whose
 * displacement is past 6 GiB (each rank every size-th block of 1 KiB,
 * collective); the size, the byte offsets of the view's positions and the
 * counts in the statuses checked, the bytes read back through MPI and, at
 * rank 0, with plain POSIX pread. Skipped (exit 77) where the file system
 * holds no file past 6 GiB. */
#include "mpitest.h"
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#define GIB ((MPI_Offset)1 << 30)
#define BLOCK (1 << 20)   /* bytes per rank at explicit offsets */
#define VINTS 256         /* ints per block of the view */
#define VBLOCKS 4         /* blocks of the view per rank */

static unsigned char byte_at(MPI_Offset off) {
    return (unsigned char)((off * 2654435761u) >> 13);
}

int main(int argc, char **argv) {
    int rank, size, errors = 0;
    char dir[512], name[600];
    mt_init(&argc, &argv, &rank, &size);
    mt_temp_name(dir, sizeof dir, "io-large");
    snprintf(name, sizeof name, "%s/big.dat", dir);

    /* Can this file system hold a sparse file past 6 GiB? */
    int can = 1;
    if (rank == 0) {
        mkdir(dir, 0700);
        int fd = open(name, O_CREAT | O_WRONLY, 0600);
        can = fd >= 0 && pwrite(fd, "x", 1, 7 * GIB) == 1;
        if (fd >= 0)
            close(fd);
        unlink(name);
    }
    MPI_Bcast(&can, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (!can) {
        if (rank == 0)
            rmdir(dir);
        mt_skip(rank, "the file system holds no sparse file past 6 GiB");
    }

    MPI_File fh;
    CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                              &fh),
                MPI_SUCCESS);

    /* Explicit offsets past 4 GiB, odd alignment. */
    MPI_Offset base = 4 * GIB + 3 + (MPI_Offset)rank * BLOCK;
    unsigned char *mine = malloc(BLOCK), *back = malloc(BLOCK);
    for (int i = 0; i < BLOCK; i++)
        mine[i] = byte_at(base + i);
    MPI_Status st;
    MPI_Count got = -1;
    CHECK_CLASS(MPI_File_write_at_c(fh, base, mine, BLOCK, MPI_BYTE, &st), MPI_SUCCESS);
    MPI_Get_count_c(&st, MPI_BYTE, &got);
    CHECK(got == BLOCK, "write_at_c wrote %lld bytes", (long long)got);

    /* A view at 6 GiB: rank r's blocks are every size-th block of VINTS ints. */
    MPI_Datatype block, filetype;
    MPI_Type_contiguous(VINTS, MPI_INT, &block);
    MPI_Type_create_resized(block, 0, (MPI_Aint)size * VINTS * 4, &filetype);
    MPI_Type_commit(&filetype);
    MPI_Offset disp = 6 * GIB + (MPI_Offset)rank * VINTS * 4;
    CHECK_CLASS(MPI_File_set_view(fh, disp, MPI_INT, filetype, "native", MPI_INFO_NULL), MPI_SUCCESS);
    int *ints = malloc(sizeof(int) * VINTS * VBLOCKS), *ints_back = malloc(sizeof(int) * VINTS * VBLOCKS);
    for (int i = 0; i < VINTS * VBLOCKS; i++)
        ints[i] = rank * 1000000 + i;
    CHECK_CLASS(MPI_File_write_all_c(fh, ints, (MPI_Count)VINTS * VBLOCKS, MPI_INT, &st), MPI_SUCCESS);
    MPI_Get_count_c(&st, MPI_INT, &got);
    CHECK(got == VINTS * VBLOCKS, "write_all_c wrote %lld ints", (long long)got);
    MPI_Offset pos = -1, byte = -1;
    MPI_File_get_position(fh, &pos);
    CHECK(pos == VINTS * VBLOCKS, "position %lld after the write", (long long)pos);
    /* Position VINTS + 1 (the second ints of this rank's second block). */
    MPI_File_get_byte_offset(fh, VINTS + 1, &byte);
    MPI_Offset want_byte = disp + (MPI_Offset)size * VINTS * 4 + 4;
    CHECK(byte == want_byte, "byte offset %lld, expected %lld", (long long)byte, (long long)want_byte);
    CHECK_CLASS(MPI_File_sync(fh), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);

    MPI_Offset fsize = -1;
    MPI_File_get_size(fh, &fsize);
    MPI_Offset want_size = 6 * GIB + (MPI_Offset)size * VINTS * 4 * VBLOCKS;
    CHECK(fsize == want_size, "size %lld, expected %lld", (long long)fsize, (long long)want_size);

    /* Read back through MPI: the view, collectively, then the explicit
     * offsets of the next rank (what another process wrote). */
    MPI_File_seek(fh, 0, MPI_SEEK_SET);
    CHECK_CLASS(MPI_File_read_all_c(fh, ints_back, (MPI_Count)VINTS * VBLOCKS, MPI_INT, &st), MPI_SUCCESS);
    CHECK(memcmp(ints, ints_back, sizeof(int) * VINTS * VBLOCKS) == 0, "the view reads back other ints");
    CHECK_CLASS(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), MPI_SUCCESS);
    int next = (rank + 1) % size;
    MPI_Offset next_base = 4 * GIB + 3 + (MPI_Offset)next * BLOCK;
    CHECK_CLASS(MPI_File_read_at_c(fh, next_base, back, BLOCK, MPI_BYTE, &st), MPI_SUCCESS);
    MPI_Get_count_c(&st, MPI_BYTE, &got);
    CHECK(got == BLOCK, "read_at_c read %lld bytes", (long long)got);
    for (int i = 0; i < BLOCK; i++)
        if (back[i] != byte_at(next_base + i)) {
            CHECK(0, "byte %lld reads %d, expected %d", (long long)(next_base + i), back[i],
                  byte_at(next_base + i));
            break;
        }
    /* Reading at the end gives a short count. */
    CHECK_CLASS(MPI_File_read_at_c(fh, want_size - 10, back, 100, MPI_BYTE, &st), MPI_SUCCESS);
    MPI_Get_count_c(&st, MPI_BYTE, &got);
    CHECK(got == 10, "a read across the end gave %lld bytes, expected 10", (long long)got);
    CHECK_CLASS(MPI_File_close(&fh), MPI_SUCCESS);

    /* Plain POSIX at rank 0: every rank's bytes where they belong, the
     * hole between them zero. */
    if (rank == 0) {
        int fd = open(name, O_RDONLY);
        CHECK(fd >= 0, "open: %s", strerror(errno));
        struct stat sb;
        CHECK(fstat(fd, &sb) == 0 && sb.st_size == want_size, "stat size %lld", (long long)sb.st_size);
        for (int r = 0; r < size; r++) {
            MPI_Offset b = 4 * GIB + 3 + (MPI_Offset)r * BLOCK;
            CHECK(pread(fd, back, BLOCK, b) == BLOCK, "pread rank %d's block", r);
            for (int i = 0; i < BLOCK; i++)
                if (back[i] != byte_at(b + i)) {
                    CHECK(0, "POSIX: byte %lld is %d, expected %d", (long long)(b + i), back[i], byte_at(b + i));
                    break;
                }
            for (int k = 0; k < VBLOCKS; k++) {
                int v[VINTS];
                MPI_Offset at = 6 * GIB + ((MPI_Offset)k * size + r) * VINTS * 4;
                CHECK(pread(fd, v, sizeof v, at) == (ssize_t)sizeof v, "pread view block");
                for (int i = 0; i < VINTS; i++)
                    if (v[i] != r * 1000000 + k * VINTS + i) {
                        CHECK(0, "POSIX: rank %d's view int %d of block %d is %d", r, i, k, v[i]);
                        break;
                    }
            }
        }
        unsigned char hole[64];
        CHECK(pread(fd, hole, sizeof hole, 5 * GIB) == (ssize_t)sizeof hole, "pread the hole");
        for (size_t i = 0; i < sizeof hole; i++)
            CHECK(hole[i] == 0, "the hole holds %d", hole[i]);
        close(fd);
        unlink(name);
        rmdir(dir);
    }
    MPI_Type_free(&filetype);
    MPI_Type_free(&block);
    free(mine);
    free(back);
    free(ints);
    free(ints_back);
    MPI_Allreduce(&mt_errors, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    mt_report(rank, errors);
    MPI_Finalize();
    return 0;
}
