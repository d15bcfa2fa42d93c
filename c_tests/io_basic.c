/* MPI-IO basics: open with every access mode (and the modes MPI forbids),
 * agreement on failure, close, delete, sizes, info hints, group, amode,
 * atomicity, views (get_view, bad datarep, negative displacement), file
 * error handlers (MPI_ERRORS_RETURN by default, the handler set on
 * MPI_FILE_NULL for later files, user handlers, call_errhandler), c2f/f2c,
 * and a registered data representation (ints byte-swapped in the file). */
#include "mpitest.h"
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[512];

static void path(char *out, size_t n, const char *name) {
    snprintf(out, n, "%s/%s", dir, name);
}

static int handler_calls = 0, handler_class = 0;
static void file_handler(MPI_File *fh, int *code, ...) {
    (void)fh;
    handler_calls++;
    MPI_Error_class(*code, &handler_class);
}

/* A data representation "swapped": ints reversed byte by byte. */
static int conversions = 0;
static void swap_ints(unsigned char *to, const unsigned char *from, MPI_Count n) {
    for (MPI_Count i = 0; i < n; i++)
        for (int b = 0; b < 4; b++)
            to[4 * i + b] = from[4 * i + 3 - b];
}
static int write_swapped(void *userbuf, MPI_Datatype type, int count, void *filebuf,
                         MPI_Offset position, void *extra) {
    (void)extra;
    if (type != MPI_INT || position != 0)
        return MPI_ERR_TYPE;
    swap_ints(filebuf, userbuf, count);
    conversions++;
    return MPI_SUCCESS;
}
static int read_swapped(void *userbuf, MPI_Datatype type, int count, void *filebuf,
                        MPI_Offset position, void *extra) {
    (void)extra;
    if (type != MPI_INT || position != 0)
        return MPI_ERR_TYPE;
    swap_ints(userbuf, filebuf, count);
    conversions++;
    return MPI_SUCCESS;
}
static int swapped_extent(MPI_Datatype type, MPI_Aint *extent, void *extra) {
    *extent = type == MPI_INT ? 4 : 0;
    (*(int *)extra)++;
    return MPI_SUCCESS;
}

int main(int argc, char **argv) {
    int rank, size, flag, amode, errors = 0;
    MPI_File fh, fh2;
    char name[600], other[600], value[MPI_MAX_INFO_VAL + 1];
    MPI_Offset off;

    mt_init(&argc, &argv, &rank, &size);
    mt_temp_name(dir, sizeof dir, "io-basic");
    if (rank == 0)
        mkdir(dir, 0700);
    MPI_Barrier(MPI_COMM_WORLD);
    path(name, sizeof name, "a.dat");
    path(other, sizeof other, "missing.dat");

    /* The default file error handler returns. */
    MPI_Errhandler eh;
    MPI_File_get_errhandler(MPI_FILE_NULL, &eh);
    CHECK(eh == MPI_ERRORS_RETURN, "MPI_FILE_NULL's handler is not MPI_ERRORS_RETURN");
    MPI_Errhandler_free(&eh);

    /* Access modes. */
    CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE, MPI_INFO_NULL, &fh),
                MPI_ERR_AMODE);
    CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY | MPI_MODE_RDWR, MPI_INFO_NULL,
                              &fh),
                MPI_ERR_AMODE);
    CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY | MPI_MODE_CREATE,
                              MPI_INFO_NULL, &fh),
                MPI_ERR_AMODE);
    CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY | MPI_MODE_EXCL, MPI_INFO_NULL,
                              &fh),
                MPI_ERR_AMODE);
    CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDWR | MPI_MODE_SEQUENTIAL,
                              MPI_INFO_NULL, &fh),
                MPI_ERR_AMODE);
    CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, other, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh),
                MPI_ERR_NO_SUCH_FILE);
    CHECK(fh == MPI_FILE_NULL, "a failed open leaves a handle");
    CHECK_CLASS(MPI_File_delete(other, MPI_INFO_NULL), MPI_ERR_NO_SUCH_FILE);

    /* Create, with hints; EXCL on an existing file fails everywhere. */
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "cb_buffer_size", "1048576");
    MPI_Info_set(info, "striping_factor", "4");
    MPI_Info_set(info, "access_style", "write_once");
    CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh),
                MPI_SUCCESS);
    MPI_Info_free(&info);
    CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_WRONLY,
                              MPI_INFO_NULL, &fh2),
                MPI_ERR_FILE_EXISTS);

    MPI_File_get_amode(fh, &amode);
    CHECK(amode == (MPI_MODE_CREATE | MPI_MODE_RDWR), "amode %#x", amode);
    MPI_Group g, wg;
    int cmp;
    MPI_File_get_group(fh, &g);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_compare(g, wg, &cmp);
    CHECK(cmp == MPI_IDENT, "file group differs from the communicator's (%d)", cmp);
    MPI_Group_free(&g);
    MPI_Group_free(&wg);

    MPI_Info used;
    MPI_File_get_info(fh, &used);
    MPI_Info_get(used, "cb_buffer_size", MPI_MAX_INFO_VAL, value, &flag);
    CHECK(flag && strcmp(value, "1048576") == 0, "cb_buffer_size '%s'", flag ? value : "");
    MPI_Info_get(used, "striping_factor", MPI_MAX_INFO_VAL, value, &flag);
    CHECK(flag && strcmp(value, "4") == 0, "striping_factor");
    MPI_Info_get(used, "romio_cb_write", MPI_MAX_INFO_VAL, value, &flag);
    CHECK(flag, "romio_cb_write is not reported");
    MPI_Info_free(&used);
    MPI_Info_create(&info);
    MPI_Info_set(info, "cb_nodes", "2");
    MPI_File_set_info(fh, info);
    MPI_Info_free(&info);
    MPI_File_get_info(fh, &used);
    MPI_Info_get(used, "cb_nodes", MPI_MAX_INFO_VAL, value, &flag);
    CHECK(flag && strcmp(value, "2") == 0, "cb_nodes after set_info");
    MPI_Info_free(&used);

    /* Sizes. */
    MPI_File_set_size(fh, 1000);
    MPI_File_get_size(fh, &off);
    CHECK(off == 1000, "size %lld after set_size(1000)", (long long)off);
    MPI_Barrier(MPI_COMM_WORLD); /* every rank read the size before it changes */
    MPI_File_preallocate(fh, 500);
    MPI_File_get_size(fh, &off);
    CHECK(off == 1000, "preallocate shrank the file to %lld", (long long)off);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_preallocate(fh, 4096);
    MPI_File_get_size(fh, &off);
    CHECK(off >= 4096, "size %lld after preallocate(4096)", (long long)off);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_set_size(fh, 10);
    MPI_File_get_size(fh, &off);
    CHECK(off == 10, "size %lld after set_size(10)", (long long)off);
    CHECK_CLASS(MPI_File_set_size(fh, -1), MPI_ERR_ARG);
    MPI_File_sync(fh);

    /* Atomicity. */
    MPI_File_get_atomicity(fh, &flag);
    CHECK(flag == 0, "atomic by default");
    MPI_File_set_atomicity(fh, 1);
    MPI_File_get_atomicity(fh, &flag);
    CHECK(flag == 1, "atomicity not set");
    MPI_File_set_atomicity(fh, 0);

    /* Views. */
    MPI_Offset disp;
    MPI_Datatype et, ft, vec;
    char rep[MPI_MAX_DATAREP_STRING];
    MPI_File_get_view(fh, &disp, &et, &ft, rep);
    CHECK(disp == 0 && et == MPI_BYTE && ft == MPI_BYTE && strcmp(rep, "native") == 0,
          "default view");
    MPI_Type_vector(4, 1, size, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    CHECK_CLASS(MPI_File_set_view(fh, 16, MPI_INT, vec, "native", MPI_INFO_NULL), MPI_SUCCESS);
    MPI_File_get_view(fh, &disp, &et, &ft, rep);
    CHECK(disp == 16 && et == MPI_INT && strcmp(rep, "native") == 0, "view after set_view");
    int ni, na, nd, comb;
    MPI_Type_get_envelope(ft, &ni, &na, &nd, &comb);
    CHECK(comb == MPI_COMBINER_VECTOR, "filetype combiner %d", comb);
    if (ft != MPI_INT)
        MPI_Type_free(&ft);
    MPI_Aint ext;
    MPI_File_get_type_extent(fh, MPI_DOUBLE, &ext);
    CHECK(ext == 8, "type extent %ld", (long)ext);
    MPI_File_get_byte_offset(fh, 1, &off);
    CHECK(off == 16 + 4 * size, "byte offset of etype 1: %lld", (long long)off);
    CHECK_CLASS(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "no-such-rep", MPI_INFO_NULL),
                MPI_ERR_UNSUPPORTED_DATAREP);
    CHECK_CLASS(MPI_File_set_view(fh, -8, MPI_INT, MPI_INT, "native", MPI_INFO_NULL), MPI_ERR_ARG);
    MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL);
    MPI_File_get_view(fh, &disp, &et, &ft, rep);
    CHECK(strcmp(rep, "external32") == 0, "datarep '%s'", rep);
    MPI_Type_free(&vec);

    /* A registered data representation (its errors are not about a file). */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int extent_calls = 0;
    CHECK_CLASS(MPI_Register_datarep("swapped", read_swapped, write_swapped, swapped_extent,
                                     &extent_calls),
                MPI_SUCCESS);
    CHECK_CLASS(MPI_Register_datarep("swapped", read_swapped, write_swapped, swapped_extent, NULL),
                MPI_ERR_DUP_DATAREP);
    CHECK_CLASS(MPI_Register_datarep("native", read_swapped, write_swapped, swapped_extent, NULL),
                MPI_ERR_DUP_DATAREP);
    CHECK_CLASS(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "swapped", MPI_INFO_NULL), MPI_SUCCESS);
    MPI_File_get_type_extent(fh, MPI_INT, &ext);
    CHECK(ext == 4 && extent_calls >= 1, "swapped extent %ld (%d calls)", (long)ext, extent_calls);
    int ints[2] = {0x01020304, rank}, back[2] = {0, 0};
    MPI_File_write_at(fh, 2 * rank, ints, 2, MPI_INT, MPI_STATUS_IGNORE);
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    unsigned char raw[8];
    int fd = open(name, O_RDONLY);
    CHECK(pread(fd, raw, 8, 8 * rank) == 8, "pread of swapped data");
    close(fd);
    CHECK(raw[0] == 1 && raw[3] == 4 && raw[7] == rank, "swapped bytes %02x %02x", raw[0], raw[7]);
    MPI_File_read_at(fh, 2 * rank, back, 2, MPI_INT, MPI_STATUS_IGNORE);
    CHECK(back[0] == 0x01020304 && back[1] == rank, "read back through \"swapped\": %#x %d", back[0],
          back[1]);
    CHECK(conversions == 2, "%d conversions", conversions);
    MPI_File_get_view(fh, &disp, &et, &ft, rep);
    CHECK(strcmp(rep, "swapped") == 0, "datarep '%s'", rep);

#ifndef MPI_ABI_VERSION /* the standard ABI has MPI_File_toint instead */
    /* Fortran handles. */
    MPI_Fint f = MPI_File_c2f(fh);
    CHECK(MPI_File_f2c(f) == fh, "c2f/f2c round trip");
    CHECK(MPI_File_c2f(MPI_FILE_NULL) == 0, "MPI_FILE_NULL's Fortran handle");
#endif

    /* Error handlers: a user handler on the file, call_errhandler. */
    MPI_Errhandler mine;
    MPI_File_create_errhandler(file_handler, &mine);
    MPI_File_set_errhandler(fh, mine);
    MPI_File_call_errhandler(fh, MPI_ERR_IO);
    CHECK(handler_calls == 1 && handler_class == MPI_ERR_IO, "call_errhandler: %d calls, class %d",
          handler_calls, handler_class);
    MPI_File_seek(fh, 0, 12345); /* bad whence goes to the handler */
    CHECK(handler_calls == 2 && handler_class == MPI_ERR_ARG, "bad whence: %d calls, class %d",
          handler_calls, handler_class);
    MPI_File_get_errhandler(fh, &eh);
    CHECK(eh == mine, "get_errhandler gives another handler");
    MPI_Errhandler_free(&eh);
    CHECK_CLASS(MPI_File_close(&fh), MPI_SUCCESS);
    CHECK(fh == MPI_FILE_NULL, "close leaves the handle");

    /* The handler on MPI_FILE_NULL: open errors and files opened later. */
    MPI_File_set_errhandler(MPI_FILE_NULL, mine);
    MPI_File_open(MPI_COMM_WORLD, other, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    CHECK(handler_calls == 3 && handler_class == MPI_ERR_NO_SUCH_FILE,
          "open of a missing file: %d calls, class %d", handler_calls, handler_class);
    MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    MPI_File_get_errhandler(fh, &eh);
    CHECK(eh == mine, "a new file does not get MPI_FILE_NULL's handler");
    MPI_Errhandler_free(&eh);
    int buf = 1;
    MPI_File_write(fh, &buf, 1, MPI_INT, MPI_STATUS_IGNORE);
    CHECK(handler_calls == 4 && handler_class == MPI_ERR_READ_ONLY,
          "write to a read-only file: %d calls, class %d", handler_calls, handler_class);
    MPI_File_close(&fh);
    MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN);
    MPI_Errhandler_free(&mine);

    /* DELETE_ON_CLOSE; then MPI_File_delete. */
    path(other, sizeof other, "temp.dat");
    MPI_File_open(MPI_COMM_WORLD, other, MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_DELETE_ON_CLOSE,
                  MPI_INFO_NULL, &fh);
    MPI_File_close(&fh);
    CHECK(access(other, F_OK) != 0, "DELETE_ON_CLOSE left the file");
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        CHECK_CLASS(MPI_File_delete(name, MPI_INFO_NULL), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(access(name, F_OK) != 0, "MPI_File_delete left the file");

    /* A directory with nothing left in it (no sidecar files). */
    if (rank == 0)
        CHECK(rmdir(dir) == 0, "the directory is not empty: %s", strerror(errno));

    MPI_Allreduce(&mt_errors, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    mt_report(rank, errors);
    MPI_Finalize();
    return 0;
}
