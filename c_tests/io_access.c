/* MPI-IO data access: every read and write call (explicit offsets,
 * individual pointer, independent, collective, nonblocking, split
 * collective, large-count forms) through three views: contiguous per
 * rank, blocks interleaved by a resized filetype tiling the file, and a
 * vector filetype with holes. What each write left in the file is checked
 * with plain POSIX pread, and every read is checked against it. Also a
 * strided memory datatype, short reads at the end of the file, external32
 * (big-endian in the file), atomic mode and offsets past 4 GiB (a sparse
 * file, written with MPI_File_write_at_c). Collective calls go through
 * collective buffering (by default one aggregator per node, which
 * MPI_File_get_info reports as cb_config_list "*:1"), or with the
 * argument `every-member` through every rank (cb_config_list "*:*"), with
 * `two-per-node` through two per node with a cb_buffer_size of 52 bytes,
 * with `one-aggregator` through one (cb_nodes), or with `small-buffer`
 * through two whose cb_buffer_size of 52 bytes takes each domain in many
 * rounds (windows that cut ints), or with `independent` without it. The
 * testlist also runs it on simulated hosts (several nodes). */
#include "mpitest.h"
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#define N 64 /* ints per rank */
#define B 4  /* ints per interleaved block */

static int rank, size;
static char name[600];

enum { W_AT, W_AT_ALL, W, W_ALL, IW_AT, IW_AT_ALL, IW, IW_ALL, W_ALL_SPLIT, W_AT_ALL_SPLIT, W_AT_C,
       W_ALL_C, NVARIANTS };
static const char *vname[] = {"write_at",     "write_at_all",  "write",          "write_all",
                              "iwrite_at",    "iwrite_at_all", "iwrite",         "iwrite_all",
                              "write_all_*",  "write_at_all_*", "write_at_c",    "write_all_c"};

/* The owner and stream index of int j of the file, for a view kind. */
static void owner_of(int kind, int j, int *owner, int *idx) {
    if (kind == 0) {
        *owner = j / N;
        *idx = j % N;
    } else {
        int block = j / B;
        *owner = block % size;
        *idx = (block / size) * B + j % B;
    }
}

static void set_view(MPI_File fh, int kind) {
    MPI_Datatype ft, blk;
    switch (kind) {
    case 0:
        MPI_File_set_view(fh, (MPI_Offset)rank * N * sizeof(int), MPI_INT, MPI_INT, "native",
                          MPI_INFO_NULL);
        break;
    case 1: /* B ints, then the other ranks' blocks: tiled */
        MPI_Type_contiguous(B, MPI_INT, &blk);
        MPI_Type_create_resized(blk, 0, (MPI_Aint)B * size * sizeof(int), &ft);
        MPI_Type_commit(&ft);
        MPI_File_set_view(fh, (MPI_Offset)rank * B * sizeof(int), MPI_INT, ft, "native",
                          MPI_INFO_NULL);
        MPI_Type_free(&blk);
        MPI_Type_free(&ft);
        break;
    default: /* one vector with holes covers all N ints */
        MPI_Type_vector(N / B, B, B * size, MPI_INT, &ft);
        MPI_Type_commit(&ft);
        MPI_File_set_view(fh, (MPI_Offset)rank * B * sizeof(int), MPI_INT, ft, "native",
                          MPI_INFO_NULL);
        MPI_Type_free(&ft);
    }
}

static int value(int variant, int owner, int idx) { return variant * 100000 + owner * 1000 + idx; }

static void do_write(MPI_File fh, int variant, int *buf) {
    MPI_Status st;
    MPI_Request req;
    int count = -1;
    st.MPI_ERROR = MPI_SUCCESS;
    switch (variant) {
    case W_AT: MPI_File_write_at(fh, 0, buf, N, MPI_INT, &st); break;
    case W_AT_ALL: MPI_File_write_at_all(fh, 0, buf, N, MPI_INT, &st); break;
    case W: MPI_File_write(fh, buf, N, MPI_INT, &st); break;
    case W_ALL: MPI_File_write_all(fh, buf, N, MPI_INT, &st); break;
    case IW_AT: MPI_File_iwrite_at(fh, 0, buf, N, MPI_INT, &req); MPI_Wait(&req, &st); break;
    case IW_AT_ALL: MPI_File_iwrite_at_all(fh, 0, buf, N, MPI_INT, &req); MPI_Wait(&req, &st); break;
    case IW: MPI_File_iwrite(fh, buf, N, MPI_INT, &req); MPI_Wait(&req, &st); break;
    case IW_ALL: MPI_File_iwrite_all(fh, buf, N, MPI_INT, &req); MPI_Wait(&req, &st); break;
    case W_ALL_SPLIT:
        MPI_File_write_all_begin(fh, buf, N, MPI_INT);
        MPI_File_write_all_end(fh, buf, &st);
        break;
    case W_AT_ALL_SPLIT:
        MPI_File_write_at_all_begin(fh, 0, buf, N, MPI_INT);
        MPI_File_write_at_all_end(fh, buf, &st);
        break;
    case W_AT_C: MPI_File_write_at_c(fh, 0, buf, (MPI_Count)N, MPI_INT, &st); break;
    case W_ALL_C: MPI_File_write_all_c(fh, buf, (MPI_Count)N, MPI_INT, &st); break;
    }
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == N, "%s: status count %d", vname[variant], count);
}

static void do_read(MPI_File fh, int variant, int *buf) {
    MPI_Status st;
    MPI_Request req;
    int count = -1;
    switch (variant) {
    case W_AT: MPI_File_read_at(fh, 0, buf, N, MPI_INT, &st); break;
    case W_AT_ALL: MPI_File_read_at_all(fh, 0, buf, N, MPI_INT, &st); break;
    case W: MPI_File_read(fh, buf, N, MPI_INT, &st); break;
    case W_ALL: MPI_File_read_all(fh, buf, N, MPI_INT, &st); break;
    case IW_AT: MPI_File_iread_at(fh, 0, buf, N, MPI_INT, &req); MPI_Wait(&req, &st); break;
    case IW_AT_ALL: MPI_File_iread_at_all(fh, 0, buf, N, MPI_INT, &req); MPI_Wait(&req, &st); break;
    case IW: MPI_File_iread(fh, buf, N, MPI_INT, &req); MPI_Wait(&req, &st); break;
    case IW_ALL: MPI_File_iread_all(fh, buf, N, MPI_INT, &req); MPI_Wait(&req, &st); break;
    case W_ALL_SPLIT:
        MPI_File_read_all_begin(fh, buf, N, MPI_INT);
        MPI_File_read_all_end(fh, buf, &st);
        break;
    case W_AT_ALL_SPLIT:
        MPI_File_read_at_all_begin(fh, 0, buf, N, MPI_INT);
        MPI_File_read_at_all_end(fh, buf, &st);
        break;
    case W_AT_C: MPI_File_read_at_c(fh, 0, buf, (MPI_Count)N, MPI_INT, &st); break;
    case W_ALL_C: MPI_File_read_all_c(fh, buf, (MPI_Count)N, MPI_INT, &st); break;
    }
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == N, "read for %s: status count %d", vname[variant], count);
}

static int individual(int variant) {
    return variant == W || variant == W_ALL || variant == IW || variant == IW_ALL ||
           variant == W_ALL_SPLIT || variant == W_ALL_C;
}

/* Rank 0 checks the whole file with pread. */
static void check_file(int kind, int variant, const char *label) {
    if (rank != 0)
        return;
    int total = N * size, *all = malloc(total * sizeof(int));
    int fd = open(name, O_RDONLY);
    ssize_t got = pread(fd, all, total * sizeof(int), 0);
    close(fd);
    CHECK(got == (ssize_t)(total * sizeof(int)), "kind %d %s: file has %zd bytes", kind, label,
          got);
    int bad = 0;
    for (int j = 0; j < total && got > 0; j++) {
        int owner, idx;
        owner_of(kind, j, &owner, &idx);
        if (all[j] != value(variant, owner, idx) && bad++ < 3)
            CHECK(0, "kind %d %s: int %d is %d, expected %d", kind, label, j, all[j],
                  value(variant, owner, idx));
    }
    free(all);
}

int main(int argc, char **argv) {
    int errors = 0, buf[N], rbuf[N];
    MPI_File fh;
    mt_init(&argc, &argv, &rank, &size);
    mt_temp_name(name, sizeof name, "io-access.dat");
    /* `independent`: collective calls without collective buffering. */
    MPI_Info info;
    MPI_Info_create(&info);
    if (argc > 1 && strcmp(argv[1], "independent") == 0) {
        MPI_Info_set(info, "romio_cb_write", "disable");
        MPI_Info_set(info, "romio_cb_read", "disable");
    } else if (argc > 1 && strcmp(argv[1], "one-aggregator") == 0) {
        MPI_Info_set(info, "cb_nodes", "1");
    } else if (argc > 1 && strcmp(argv[1], "small-buffer") == 0) {
        MPI_Info_set(info, "cb_nodes", "2");
        MPI_Info_set(info, "cb_buffer_size", "52");
    } else if (argc > 1 && strcmp(argv[1], "every-member") == 0) {
        MPI_Info_set(info, "cb_config_list", "*:*");
    } else if (argc > 1 && strcmp(argv[1], "two-per-node") == 0) {
        MPI_Info_set(info, "cb_config_list", "*:2");
        MPI_Info_set(info, "cb_buffer_size", "52");
    }
    CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh),
                MPI_SUCCESS);
    MPI_Info_free(&info);
    /* The aggregators per node in effect: one by default, as in ROMIO. */
    {
        MPI_Info used;
        char list[MPI_MAX_INFO_VAL + 1] = "";
        int flag = 0;
        MPI_File_get_info(fh, &used);
        MPI_Info_get(used, "cb_config_list", MPI_MAX_INFO_VAL, list, &flag);
        const char *want = argc > 1 && strcmp(argv[1], "every-member") == 0   ? "*:*"
                           : argc > 1 && strcmp(argv[1], "two-per-node") == 0 ? "*:2"
                                                                               : "*:1";
        CHECK(flag && strcmp(list, want) == 0, "cb_config_list '%s', expected '%s'", list, want);
        MPI_Info_free(&used);
    }

    for (int kind = 0; kind < 3; kind++) {
        for (int variant = 0; variant < NVARIANTS; variant++) {
            for (int i = 0; i < N; i++)
                buf[i] = value(variant, rank, i);
            set_view(fh, kind);
            do_write(fh, variant, buf);
            if (individual(variant)) {
                MPI_Offset pos;
                MPI_File_get_position(fh, &pos);
                CHECK(pos == N, "kind %d %s: position %lld", kind, vname[variant], (long long)pos);
                MPI_File_seek(fh, 0, MPI_SEEK_SET);
            }
            MPI_Barrier(MPI_COMM_WORLD);
            check_file(kind, variant, vname[variant]);
            memset(rbuf, 0xff, sizeof rbuf);
            do_read(fh, variant, rbuf);
            for (int i = 0; i < N; i++)
                if (rbuf[i] != buf[i]) {
                    CHECK(0, "kind %d read for %s: [%d] %d, expected %d", kind, vname[variant], i,
                          rbuf[i], buf[i]);
                    break;
                }
            MPI_Barrier(MPI_COMM_WORLD);
        }
    }

    /* A strided memory type: every other int of a buffer of 2N. */
    int wide[2 * N];
    MPI_Datatype every_other;
    MPI_Type_vector(N, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    for (int i = 0; i < 2 * N; i++)
        wide[i] = i % 2 ? -1 : value(50, rank, i / 2);
    set_view(fh, 1);
    MPI_File_write_at_all(fh, 0, wide, 1, every_other, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    check_file(1, 50, "strided memory");
    memset(wide, 0, sizeof wide);
    MPI_File_read_at_all(fh, 0, wide, 1, every_other, MPI_STATUS_IGNORE);
    for (int i = 0; i < N; i++)
        if (wide[2 * i] != value(50, rank, i) || wide[2 * i + 1] != 0) {
            CHECK(0, "strided memory read: [%d] %d", i, wide[2 * i]);
            break;
        }
    MPI_Type_free(&every_other);

    /* Short reads at the end of the file (default view: bytes). */
    MPI_Status st;
    int count;
    MPI_Offset fsize;
    MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
    MPI_File_get_size(fh, &fsize);
    CHECK(fsize == (MPI_Offset)N * size * sizeof(int), "file size %lld", (long long)fsize);
    MPI_File_read_at(fh, fsize - 8, rbuf, 4, MPI_INT, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == 2, "read across the end: count %d", count);
    MPI_File_read_at(fh, fsize + 100, rbuf, 4, MPI_INT, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == 0, "read past the end: count %d", count);
    MPI_File_seek(fh, -8, MPI_SEEK_END);
    MPI_Offset pos;
    MPI_File_get_position(fh, &pos);
    CHECK(pos == fsize - 8, "seek from the end: %lld", (long long)pos);
    MPI_File_read(fh, rbuf, 4, MPI_INT, &st);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == 2, "individual read across the end: count %d", count);
    MPI_Barrier(MPI_COMM_WORLD);

    /* external32: big-endian ints in the file. */
    MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL);
    int be[4] = {1, 2, 0x01020304, -2};
    if (rank == 0)
        MPI_File_write_at(fh, 0, be, 4, MPI_INT, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    unsigned char raw[16];
    int fd = open(name, O_RDONLY);
    CHECK(pread(fd, raw, 16, 0) == 16, "pread of external32 data");
    close(fd);
    CHECK(raw[3] == 1 && raw[0] == 0 && raw[8] == 1 && raw[9] == 2 && raw[10] == 3 && raw[11] == 4 &&
              raw[12] == 0xff && raw[15] == 0xfe,
          "external32 bytes %02x %02x %02x %02x", raw[0], raw[1], raw[2], raw[3]);
    int back[4] = {0};
    MPI_File_read_at(fh, 0, back, 4, MPI_INT, MPI_STATUS_IGNORE);
    CHECK(back[0] == 1 && back[2] == 0x01020304 && back[3] == -2, "external32 read back");
    MPI_Barrier(MPI_COMM_WORLD);

    /* Atomic mode: overlapping writes of whole records, each intact. */
    MPI_File_set_atomicity(fh, 1);
    MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL);
    for (int i = 0; i < N; i++)
        buf[i] = rank;
    MPI_File_write_at(fh, 0, buf, N, MPI_INT, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_File_read_at(fh, 0, rbuf, N, MPI_INT, MPI_STATUS_IGNORE);
    for (int i = 1; i < N; i++)
        if (rbuf[i] != rbuf[0]) {
            CHECK(0, "atomic writes mixed: [%d] %d vs %d", i, rbuf[i], rbuf[0]);
            break;
        }
    MPI_File_set_atomicity(fh, 0);

    /* Offsets past 4 GiB (a sparse file): a view displacement of 3 GiB and
     * an explicit offset of 2 GiB more, by the large-count call. */
    MPI_Offset big = (MPI_Offset)3 << 30, at = ((MPI_Offset)2 << 30) / sizeof(int);
    MPI_File_set_view(fh, big, MPI_INT, MPI_INT, "native", MPI_INFO_NULL);
    if (rank == 0) {
        int marks[2] = {0x5eed, 0x0b0e};
        MPI_File_write_at_c(fh, at, marks, 2, MPI_INT, MPI_STATUS_IGNORE);
        MPI_Offset bsize, boff;
        MPI_File_get_size(fh, &bsize);
        CHECK(bsize == ((MPI_Offset)5 << 30) + 8, "size past 4 GiB: %lld", (long long)bsize);
        MPI_File_get_byte_offset(fh, at + 1, &boff);
        CHECK(boff == ((MPI_Offset)5 << 30) + 4, "byte offset past 4 GiB: %lld", (long long)boff);
        int back[2] = {0, 0};
        int fd = open(name, O_RDONLY);
        CHECK(pread(fd, back, 8, (off_t)5 << 30) == 8 && back[0] == 0x5eed && back[1] == 0x0b0e,
              "pread past 4 GiB: %#x %#x", back[0], back[1]);
        close(fd);
        MPI_File_seek(fh, 0, MPI_SEEK_END);
        MPI_File_get_position(fh, &boff);
        CHECK(boff == at + 2, "end of the view past 4 GiB: %lld", (long long)boff);
    }
    MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);

    /* Writing to a file opened read-only; a datatype not made of etypes. */
    MPI_File_set_view(fh, 0, MPI_DOUBLE, MPI_DOUBLE, "native", MPI_INFO_NULL);
    CHECK_CLASS(MPI_File_write_at(fh, 0, buf, 1, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_TYPE);
    MPI_File_close(&fh);
    MPI_File_open(MPI_COMM_WORLD, name, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    CHECK_CLASS(MPI_File_write_at(fh, 0, buf, 1, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_READ_ONLY);
    MPI_File_close(&fh);

    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        MPI_File_delete(name, MPI_INFO_NULL);
    MPI_Allreduce(&mt_errors, &errors, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    mt_report(rank, errors);
    MPI_Finalize();
    return 0;
}
