/* File views in representations whose values have other sizes than in
 * memory: external32 (4-byte MPI_LONG, 16-byte binary128 long double) and
 * a registered representation that stores MPI_INT in 2 bytes. Checks the
 * file's bytes with plain POSIX reads, the layout of derived filetypes in
 * the file (element-counted constructors scale with the file sizes, byte
 * displacements stay as given), MPI_File_get_type_extent, byte offsets,
 * short reads at the end of the file, collective and independent access,
 * and MPI_ERR_CONVERSION where a representation without conversion
 * functions changes sizes. */
#include "mpitest.h"
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[512];

static void path(char *out, size_t n, const char *name) {
    snprintf(out, n, "%s/%s", dir, name);
}

/* The 4-byte big-endian integer at byte `at` of `raw`. */
static long be32(const unsigned char *raw, size_t at) {
    uint32_t u = ((uint32_t)raw[at] << 24) | ((uint32_t)raw[at + 1] << 16) |
                 ((uint32_t)raw[at + 2] << 8) | raw[at + 3];
    return (long)(int32_t)u;
}

static long value(int rank, int k) {
    return (k % 2 ? -1 : 1) * (rank + 1) * 100000L + k;
}

/* Reads the whole file `name` (at most `n` bytes); returns its size. */
static long slurp(const char *name, unsigned char *raw, size_t n) {
    int fd = open(name, O_RDONLY);
    if (fd < 0)
        return -1;
    long got = (long)pread(fd, raw, n, 0);
    close(fd);
    return got;
}

/* "int16": MPI_INT stored as 2-byte little-endian values. */
static int int16_extent(MPI_Datatype type, MPI_Aint *extent, void *extra) {
    (void)extra;
    if (type != MPI_INT)
        return MPI_ERR_TYPE;
    *extent = 2;
    return MPI_SUCCESS;
}
static int int16_write(void *userbuf, MPI_Datatype type, int count, void *filebuf,
                       MPI_Offset position, void *extra) {
    (void)extra;
    if (type != MPI_INT)
        return MPI_ERR_TYPE;
    const int *in = (const int *)userbuf + position;
    unsigned char *out = filebuf;
    for (int i = 0; i < count; i++) {
        out[2 * i] = (unsigned char)(in[i] & 0xff);
        out[2 * i + 1] = (unsigned char)((in[i] >> 8) & 0xff);
    }
    return MPI_SUCCESS;
}
static int int16_read(void *userbuf, MPI_Datatype type, int count, void *filebuf,
                      MPI_Offset position, void *extra) {
    (void)extra;
    if (type != MPI_INT)
        return MPI_ERR_TYPE;
    int *out = (int *)userbuf + position;
    const unsigned char *in = filebuf;
    for (int i = 0; i < count; i++)
        out[i] = (int16_t)(in[2 * i] | (in[2 * i + 1] << 8));
    return MPI_SUCCESS;
}

int main(int argc, char **argv) {
    int rank, size, errors = 0, count;
    char name[600];
    unsigned char raw[4096];
    MPI_File fh;
    MPI_Status st;
    MPI_Aint ext;
    MPI_Offset off;

    mt_init(&argc, &argv, &rank, &size);
    mt_temp_name(dir, sizeof dir, "io-datarep");
    if (rank == 0)
        mkdir(dir, 0700);
    MPI_Barrier(MPI_COMM_WORLD);

    /* ---- external32 longs, interleaved between the ranks ---- */
    path(name, sizeof name, "longs.dat");
    CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
                              &fh),
                MPI_SUCCESS);
    CHECK_CLASS(MPI_File_set_view(fh, 0, MPI_LONG, MPI_LONG, "external32", MPI_INFO_NULL),
                MPI_SUCCESS);
    MPI_File_get_type_extent(fh, MPI_LONG, &ext);
    CHECK(ext == 4, "external32 extent of MPI_LONG: %ld", (long)ext);
    /* Two longs `size` apart (a _c constructor), tiled every 2 * size. */
    MPI_Datatype vec, tile;
    MPI_Type_vector_c(2, 1, size, MPI_LONG, &vec);
    MPI_Type_commit(&vec);
    MPI_File_get_type_extent(fh, vec, &ext);
    CHECK(ext == 4 * (size + 1), "external32 extent of the vector: %ld", (long)ext);
    MPI_Type_create_resized(vec, 0, 2 * size * 4, &tile);
    MPI_Type_commit(&tile);
    MPI_File_get_type_extent(fh, tile, &ext);
    CHECK(ext == 8 * size, "a resized type keeps its byte extent: %ld", (long)ext);
    CHECK_CLASS(MPI_File_set_view(fh, 4 * rank, MPI_LONG, tile, "external32", MPI_INFO_NULL),
                MPI_SUCCESS);
    long out[6], in[8];
    for (int k = 0; k < 6; k++)
        out[k] = value(rank, k);
    CHECK_CLASS(MPI_File_write_all(fh, out, 6, MPI_LONG, &st), MPI_SUCCESS);
    MPI_Get_count(&st, MPI_LONG, &count);
    CHECK(count == 6, "write_all count %d", count);
    MPI_File_get_position(fh, &off);
    CHECK(off == 6, "position after the write: %lld", (long long)off);
    MPI_File_get_byte_offset(fh, 3, &off);
    CHECK(off == 4 * rank + 12 * size, "byte offset of etype 3: %lld", (long long)off);
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        long n = slurp(name, raw, sizeof raw);
        CHECK(n == 24L * size, "file of %ld bytes, expected %d", n, 24 * size);
        for (int r = 0; r < size && n == 24L * size; r++)
            for (int k = 0; k < 6; k++)
                CHECK(be32(raw, 4 * (k * size + r)) == value(r, k),
                      "long %d of rank %d in the file: %ld", k, r, be32(raw, 4 * (k * size + r)));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    memset(in, 0, sizeof in);
    CHECK_CLASS(MPI_File_read_at_all(fh, 0, in, 6, MPI_LONG, &st), MPI_SUCCESS);
    for (int k = 0; k < 6; k++)
        CHECK(in[k] == out[k], "read_at_all long %d: %ld, expected %ld", k, in[k], out[k]);
    /* Asking for 8 gets the 6 there are. */
    memset(in, 0, sizeof in);
    MPI_File_seek(fh, 0, MPI_SEEK_SET);
    CHECK_CLASS(MPI_File_read(fh, in, 8, MPI_LONG, &st), MPI_SUCCESS);
    MPI_Get_count(&st, MPI_LONG, &count);
    CHECK(count == 6 && in[5] == out[5] && in[6] == 0, "short read: %d longs", count);
    MPI_File_get_position(fh, &off);
    CHECK(off == 6, "position after the short read: %lld", (long long)off);
    MPI_Type_free(&vec);
    MPI_Type_free(&tile);

    /* ---- a subarray (one row each) and a darray (one block each) ---- */
    int sizes[2] = {size, 4}, subsizes[2] = {1, 4}, starts[2] = {rank, 0};
    MPI_Datatype row, block;
    MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_LONG, &row);
    MPI_Type_commit(&row);
    MPI_File_get_type_extent(fh, row, &ext);
    CHECK(ext == 16 * size, "external32 extent of the subarray: %ld", (long)ext);
    int gsize = 4 * size, distrib = MPI_DISTRIBUTE_BLOCK, darg = MPI_DISTRIBUTE_DFLT_DARG;
    MPI_Type_create_darray(size, rank, 1, &gsize, &distrib, &darg, &size, MPI_ORDER_C, MPI_LONG,
                           &block);
    MPI_Type_commit(&block);
    MPI_File_set_view(fh, 0, MPI_LONG, row, "external32", MPI_INFO_NULL);
    long four[4];
    for (int k = 0; k < 4; k++)
        four[k] = -value(rank, k);
    CHECK_CLASS(MPI_File_write_at_all(fh, 0, four, 4, MPI_LONG, &st), MPI_SUCCESS);
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    /* The darray view sees the same longs: rank r's block is row r. */
    MPI_File_set_view(fh, 0, MPI_LONG, block, "external32", MPI_INFO_NULL);
    memset(in, 0, sizeof in);
    CHECK_CLASS(MPI_File_read_at(fh, 0, in, 4, MPI_LONG, &st), MPI_SUCCESS);
    for (int k = 0; k < 4; k++)
        CHECK(in[k] == four[k], "darray view long %d: %ld, expected %ld", k, in[k], four[k]);
    if (rank == 0) {
        slurp(name, raw, sizeof raw);
        for (int r = 0; r < size; r++)
            for (int k = 0; k < 4; k++)
                CHECK(be32(raw, 16 * r + 4 * k) == -value(r, k), "row %d long %d in the file: %ld",
                      r, k, be32(raw, 16 * r + 4 * k));
    }
    MPI_Type_free(&row);
    MPI_Type_free(&block);

    /* ---- a struct in file terms: a long at 0, a double at 4 ---- */
    int lens[2] = {1, 1};
    MPI_Aint disps[2] = {0, 4};
    MPI_Datatype types[2] = {MPI_LONG, MPI_DOUBLE}, rec, rec12, mem;
    MPI_Type_create_struct(2, lens, disps, types, &rec);
    MPI_File_get_type_extent(fh, rec, &ext);
    CHECK(ext == 16, "a struct's file extent is rounded to the native alignment: %ld", (long)ext);
    MPI_Type_create_resized(rec, 0, 12, &rec12);
    MPI_Type_commit(&rec12);
    struct pair {
        long l;
        double d;
    } pairs[2] = {{7, 0.5}, {-9, 1e100}}, pback[2];
    MPI_Aint mdisps[2] = {offsetof(struct pair, l), offsetof(struct pair, d)};
    MPI_Type_create_struct(2, lens, mdisps, types, &mem);
    MPI_Type_commit(&mem);
    MPI_File_close(&fh);
    if (rank == 0) {
        path(name, sizeof name, "pairs.dat");
        MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
        MPI_File_set_view(fh, 0, rec12, rec12, "external32", MPI_INFO_NULL);
        CHECK_CLASS(MPI_File_write(fh, pairs, 2, mem, &st), MPI_SUCCESS);
        MPI_Get_count(&st, mem, &count);
        CHECK(count == 2, "struct write count %d", count);
        MPI_File_sync(fh);
        long n = slurp(name, raw, sizeof raw);
        CHECK(n == 24, "two 12-byte records: %ld bytes", n);
        CHECK(be32(raw, 0) == 7 && be32(raw, 12) == -9, "the records' longs: %ld %ld", be32(raw, 0),
              be32(raw, 12));
        CHECK(raw[4] == 0x3f && raw[5] == 0xe0, "0.5 as a big-endian double: %02x %02x", raw[4],
              raw[5]);
        memset(pback, 0, sizeof pback);
        CHECK_CLASS(MPI_File_read_at(fh, 0, pback, 2, mem, &st), MPI_SUCCESS);
        CHECK(pback[0].l == 7 && pback[0].d == 0.5 && pback[1].l == -9 && pback[1].d == 1e100,
              "records read back: %ld %g %ld %g", pback[0].l, pback[0].d, pback[1].l, pback[1].d);
        MPI_File_close(&fh);

        /* ---- long double: IEEE binary128 in the file ---- */
        path(name, sizeof name, "longdouble.dat");
        MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
        MPI_File_set_view(fh, 0, MPI_LONG_DOUBLE, MPI_LONG_DOUBLE, "external32", MPI_INFO_NULL);
        long double ld[3] = {1.5L, -2.25L, 1e4000L}, ldback[3];
        CHECK_CLASS(MPI_File_write(fh, ld, 3, MPI_LONG_DOUBLE, &st), MPI_SUCCESS);
        MPI_File_sync(fh);
        n = slurp(name, raw, sizeof raw);
        CHECK(n == 48, "three binary128 values: %ld bytes", n);
        int zero = 1;
        for (int b = 3; b < 16; b++)
            zero &= raw[b] == 0;
        CHECK(raw[0] == 0x3f && raw[1] == 0xff && raw[2] == 0x80 && zero,
              "1.5 in binary128: %02x %02x %02x", raw[0], raw[1], raw[2]);
        CHECK(raw[16] == 0xc0 && raw[17] == 0x00 && raw[18] == 0x20, "-2.25 in binary128: %02x %02x",
              raw[16], raw[18]);
        memset(ldback, 0, sizeof ldback);
        CHECK_CLASS(MPI_File_read_at(fh, 0, ldback, 3, MPI_LONG_DOUBLE, &st), MPI_SUCCESS);
        CHECK(ldback[0] == ld[0] && ldback[1] == ld[1] && ldback[2] == ld[2],
              "long doubles read back: %Lg %Lg %Lg", ldback[0], ldback[1], ldback[2]);
        MPI_File_close(&fh);
    }
    MPI_Type_free(&rec);
    MPI_Type_free(&rec12);
    MPI_Type_free(&mem);

    /* ---- a registered representation: ints in 2 bytes ---- */
    CHECK_CLASS(MPI_Register_datarep("int16", int16_read, int16_write, int16_extent, NULL),
                MPI_SUCCESS);
    CHECK_CLASS(MPI_Register_datarep("int16-raw", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL,
                                     int16_extent, NULL),
                MPI_SUCCESS);
    char mine[64];
    snprintf(mine, sizeof mine, "int16-%d.dat", rank);
    path(name, sizeof name, mine);
    MPI_File_open(MPI_COMM_SELF, name, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh);
    MPI_Datatype pairs_of_ints;
    MPI_Type_vector(2, 1, 2, MPI_INT, &pairs_of_ints); /* ints 0 and 2 of 3 */
    MPI_Type_commit(&pairs_of_ints);
    CHECK_CLASS(MPI_File_set_view(fh, 0, MPI_INT, pairs_of_ints, "int16", MPI_INFO_NULL),
                MPI_SUCCESS);
    MPI_File_get_type_extent(fh, MPI_INT, &ext);
    CHECK(ext == 2, "int16 extent of MPI_INT: %ld", (long)ext);
    MPI_File_get_type_extent(fh, pairs_of_ints, &ext);
    CHECK(ext == 6, "int16 extent of the vector: %ld", (long)ext);
    int ints[4] = {1, -2, 300, -32768 + rank}, iback[6];
    CHECK_CLASS(MPI_File_write(fh, ints, 4, MPI_INT, &st), MPI_SUCCESS);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == 4, "int16 write count %d", count);
    MPI_File_get_byte_offset(fh, 2, &off);
    CHECK(off == 6, "int16 byte offset of etype 2: %lld", (long long)off);
    MPI_File_sync(fh);
    long n = slurp(name, raw, sizeof raw);
    CHECK(n == 12, "int16 file of %ld bytes", n);
    CHECK(raw[0] == 0x01 && raw[1] == 0 && raw[4] == 0xfe && raw[5] == 0xff && raw[6] == 0x2c &&
              raw[7] == 0x01 && raw[10] == (unsigned char)rank && raw[11] == 0x80,
          "int16 bytes %02x %02x %02x %02x %02x %02x", raw[0], raw[4], raw[6], raw[7], raw[10],
          raw[11]);
    memset(iback, 0, sizeof iback);
    CHECK_CLASS(MPI_File_read_at(fh, 0, iback, 6, MPI_INT, &st), MPI_SUCCESS);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == 4 && iback[0] == 1 && iback[1] == -2 && iback[2] == 300 &&
              iback[3] == -32768 + rank && iback[4] == 0,
          "int16 read back (%d): %d %d %d %d", count, iback[0], iback[1], iback[2], iback[3]);
    /* Without conversion functions, sizes that change cannot be moved. */
    CHECK_CLASS(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "int16-raw", MPI_INFO_NULL), MPI_SUCCESS);
    CHECK_CLASS(MPI_File_write_at(fh, 0, ints, 1, MPI_INT, &st), MPI_ERR_CONVERSION);
    CHECK_CLASS(MPI_File_read_at(fh, 0, iback, 1, MPI_INT, &st), MPI_ERR_CONVERSION);
    MPI_File_close(&fh);
    MPI_Type_free(&pairs_of_ints);

    unlink(name);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        const char *files[] = {"longs.dat", "pairs.dat", "longdouble.dat"};
        for (int i = 0; i < 3; i++) {
            path(name, sizeof name, files[i]);
            unlink(name);
        }
        CHECK(rmdir(dir) == 0, "the directory is not empty");
    }
    MPI_Allreduce(&mt_errors, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    mt_report(rank, errors);
    MPI_Finalize();
    return 0;
}
