/* h5par.c: parallel HDF5 (Debian's libhdf5-mpich, built against MPICH)
 * on oxmpi: every rank writes its rows of a 2-D dataset and its column of
 * a second one (strided), collectively through the MPI-IO driver; the
 * file is reopened and every rank reads back the whole of both and checks
 * every element.  Rank 0 prints the MPI library's version line (it must
 * name oxmpi when run through LD_LIBRARY_PATH) and "No Errors". */
#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROWS 64  /* per rank */
#define COLS 96

static int errs = 0;
#define CHECK(c, ...) do { if (!(c)) { errs++; fprintf(stderr, "rank %d: ", rank); fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); } } while (0)

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *path = argc > 1 ? argv[1] : "h5par.h5";

    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL);
    hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    CHECK(file >= 0, "H5Fcreate failed");

    /* Dataset "rows": (size*ROWS) x COLS doubles, rank r owns rows r*ROWS.. */
    hsize_t dims[2] = {(hsize_t)size * ROWS, COLS};
    hid_t space = H5Screate_simple(2, dims, NULL);
    hid_t rows = H5Dcreate2(file, "rows", H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    /* Dataset "cols": 100 x size ints, rank r owns column r (strided). */
    hsize_t cdims[2] = {100, (hsize_t)size};
    hid_t cspace = H5Screate_simple(2, cdims, NULL);
    hid_t cols = H5Dcreate2(file, "cols", H5T_NATIVE_INT, cspace, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);

    hid_t xfer = H5Pcreate(H5P_DATASET_XFER);
    H5Pset_dxpl_mpio(xfer, H5FD_MPIO_COLLECTIVE);

    double *mine = malloc(sizeof(double) * ROWS * COLS);
    for (int i = 0; i < ROWS; i++)
        for (int j = 0; j < COLS; j++) mine[i * COLS + j] = rank * 1e6 + i * 1000 + j;
    hsize_t start[2] = {(hsize_t)rank * ROWS, 0}, count[2] = {ROWS, COLS};
    hid_t fsel = H5Dget_space(rows);
    H5Sselect_hyperslab(fsel, H5S_SELECT_SET, start, NULL, count, NULL);
    hid_t msel = H5Screate_simple(2, count, NULL);
    CHECK(H5Dwrite(rows, H5T_NATIVE_DOUBLE, msel, fsel, xfer, mine) >= 0, "H5Dwrite rows failed");
    H5Sclose(msel);
    H5Sclose(fsel);

    int col[100];
    for (int i = 0; i < 100; i++) col[i] = rank * 1000 + i;
    hsize_t cstart[2] = {0, (hsize_t)rank}, ccount[2] = {100, 1};
    fsel = H5Dget_space(cols);
    H5Sselect_hyperslab(fsel, H5S_SELECT_SET, cstart, NULL, ccount, NULL);
    msel = H5Screate_simple(2, ccount, NULL);
    CHECK(H5Dwrite(cols, H5T_NATIVE_INT, msel, fsel, xfer, col) >= 0, "H5Dwrite cols failed");
    H5Sclose(msel);
    H5Sclose(fsel);

    /* An attribute (written by every rank with the same value, as HDF5 asks). */
    hid_t aspace = H5Screate(H5S_SCALAR);
    hid_t attr = H5Acreate2(rows, "ranks", H5T_NATIVE_INT, aspace, H5P_DEFAULT, H5P_DEFAULT);
    CHECK(H5Awrite(attr, H5T_NATIVE_INT, &size) >= 0, "H5Awrite failed");
    H5Aclose(attr);
    H5Sclose(aspace);

    H5Dclose(rows);
    H5Dclose(cols);
    H5Sclose(space);
    H5Sclose(cspace);
    CHECK(H5Fclose(file) >= 0, "H5Fclose failed");

    /* Reopen read-only; everyone reads everything back (independent). */
    file = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    CHECK(file >= 0, "H5Fopen failed");
    rows = H5Dopen2(file, "rows", H5P_DEFAULT);
    cols = H5Dopen2(file, "cols", H5P_DEFAULT);
    double *all = malloc(sizeof(double) * size * ROWS * COLS);
    CHECK(H5Dread(rows, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, all) >= 0, "H5Dread rows failed");
    for (int r = 0; r < size; r++)
        for (int i = 0; i < ROWS; i++)
            for (int j = 0; j < COLS; j++) {
                double want = r * 1e6 + i * 1000 + j, got = all[((size_t)r * ROWS + i) * COLS + j];
                if (got != want) { CHECK(0, "rows[%d][%d] is %g, expected %g", r * ROWS + i, j, got, want); goto rows_done; }
            }
rows_done:;
    int *call = malloc(sizeof(int) * 100 * size);
    CHECK(H5Dread(cols, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, xfer, call) >= 0, "H5Dread cols failed");
    for (int i = 0; i < 100; i++)
        for (int r = 0; r < size; r++)
            if (call[i * size + r] != r * 1000 + i) { CHECK(0, "cols[%d][%d] is %d, expected %d", i, r, call[i * size + r], r * 1000 + i); goto cols_done; }
cols_done:;
    int ranks = -1;
    attr = H5Aopen(rows, "ranks", H5P_DEFAULT);
    CHECK(H5Aread(attr, H5T_NATIVE_INT, &ranks) >= 0 && ranks == size, "attribute ranks is %d, expected %d", ranks, size);
    H5Aclose(attr);
    H5Dclose(rows);
    H5Dclose(cols);
    H5Fclose(file);
    H5Pclose(xfer);
    H5Pclose(fapl);

    int total = 0;
    MPI_Reduce(&errs, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        char version[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(version, &len);
        printf("library: %.*s\n", (int)strcspn(version, "\n"), version);
        if (total == 0) printf("No Errors\n");
        else printf("Found %d errors\n", total);
    }
    free(mine); free(all); free(call);
    MPI_Finalize();
    return total != 0;
}
