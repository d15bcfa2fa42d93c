/* Datatypes, single process: every constructor (sizes, bounds and true
 * bounds as MPICH computes them), pack/unpack round trips with exact bytes,
 * envelope/contents, names, addresses, MPI_Get_count/MPI_Get_elements on
 * statuses filled by MPI_Status_set_elements, external32, and bad input. */
#include <stddef.h>
#include <stdint.h>
#include "mpitest.h"

/* size, lb, extent, true lb, true extent of a type (all three APIs agree). */
static void check_shape(const char *what, MPI_Datatype t, MPI_Count size, MPI_Aint lb, MPI_Aint ext,
                        MPI_Aint tlb, MPI_Aint text, int line) {
    int isize = -1;
    MPI_Count csize = -1, clb = -1, cext = -1, ctlb = -1, ctext = -1, xsize = -1;
    MPI_Count c2lb = -1, c2ext = -1, xtlb = -1, xtext = -1;
    MPI_Aint alb = -1, aext = -1, atlb = -1, atext = -1, dext = -1, dlb = -1, dub = -1;
    MPI_Type_size(t, &isize);
    MPI_Type_size_x(t, &xsize);
    MPI_Type_size_c(t, &csize);
    MPI_Type_get_extent(t, &alb, &aext);
    MPI_Type_get_extent_x(t, &clb, &cext);
    MPI_Type_get_true_extent(t, &atlb, &atext);
    MPI_Type_get_true_extent_c(t, &ctlb, &ctext);
    MPI_Type_get_extent_c(t, &c2lb, &c2ext);
    MPI_Type_get_true_extent_x(t, &xtlb, &xtext);
    MPI_Type_extent(t, &dext);
    MPI_Type_lb(t, &dlb);
    MPI_Type_ub(t, &dub);
    if (isize != size || xsize != size || csize != size || alb != lb || aext != ext || clb != lb ||
        cext != ext || atlb != tlb || atext != text || ctlb != tlb || ctext != text || dext != ext ||
        dlb != lb || dub != lb + ext || c2lb != lb || c2ext != ext || xtlb != tlb || xtext != text) {
        mt_errors++;
        fprintf(stderr,
                "line %d: %s: size %d/%ld/%ld lb %ld/%ld extent %ld/%ld true lb %ld/%ld true extent %ld/%ld "
                "(deprecated %ld %ld %ld); expected size %ld lb %ld extent %ld true lb %ld true extent %ld\n",
                line, what, isize, (long)xsize, (long)csize, (long)alb, (long)clb, (long)aext, (long)cext,
                (long)atlb, (long)ctlb, (long)atext, (long)ctext, (long)dext, (long)dlb, (long)dub,
                (long)size, (long)lb, (long)ext, (long)tlb, (long)text);
    }
}
#define SHAPE(t, size, lb, ext, tlb, text) check_shape(#t, t, size, lb, ext, tlb, text, __LINE__)

static void check_envelope(MPI_Datatype t, int ni, int na, int nd, int combiner, int line) {
    int gi = -1, ga = -1, gd = -1, gc = -1;
    MPI_Type_get_envelope(t, &gi, &ga, &gd, &gc);
    if (gi != ni || ga != na || gd != nd || gc != combiner) {
        mt_errors++;
        fprintf(stderr, "line %d: envelope %d %d %d combiner %d, expected %d %d %d %d\n", line, gi, ga, gd,
                gc, ni, na, nd, combiner);
    }
}
#define ENVELOPE(t, ni, na, nd, comb) check_envelope(t, ni, na, nd, comb, __LINE__)

/* Packs `count` elements of `t` from `src`, checks the packed bytes against
 * `expected`, unpacks into a zeroed buffer and checks it equals `after`. */
static void round_trip(const char *what, MPI_Datatype t, int count, const void *src, size_t span,
                       const unsigned char *expected, int nexpected, const unsigned char *after, int line) {
    unsigned char packed[1024], back[1024];
    int psize = -1, pos = 0, rc;
    MPI_Pack_size(count, t, MPI_COMM_WORLD, &psize);
    if (psize != nexpected) {
        mt_errors++;
        fprintf(stderr, "line %d: %s: pack size %d, expected %d\n", line, what, psize, nexpected);
        return;
    }
    memset(packed, 0xee, sizeof packed);
    rc = MPI_Pack(src, count, t, packed, sizeof packed, &pos, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS || pos != nexpected || memcmp(packed, expected, nexpected) != 0) {
        mt_errors++;
        fprintf(stderr, "line %d: %s: pack rc %d position %d (expected %d); bytes:", line, what, rc, pos,
                nexpected);
        for (int i = 0; i < pos && i < 64; i++)
            fprintf(stderr, " %02x", packed[i]);
        fprintf(stderr, "\n");
        return;
    }
    memset(back, 0, sizeof back);
    pos = 0;
    rc = MPI_Unpack(packed, nexpected, &pos, back, count, t, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS || pos != nexpected || memcmp(back, after, span) != 0) {
        mt_errors++;
        fprintf(stderr, "line %d: %s: unpack rc %d position %d; memory differs\n", line, what, rc, pos);
    }
}

/* The bytes of ints: the packed form of int data. */
static void ints_to_bytes(const int *v, int n, unsigned char *out) { memcpy(out, v, n * sizeof(int)); }

static int big_endian_int(const unsigned char *p) {
    return (int)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]);
}

int main(int argc, char **argv) {
    int rank = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* ---- Predefined types ---- */
    SHAPE(MPI_CHAR, 1, 0, 1, 0, 1);
    SHAPE(MPI_INT, 4, 0, 4, 0, 4);
    SHAPE(MPI_DOUBLE, 8, 0, 8, 0, 8);
    SHAPE(MPI_LONG_DOUBLE, 16, 0, 16, 0, 16);
    SHAPE(MPI_C_DOUBLE_COMPLEX, 16, 0, 16, 0, 16);
    SHAPE(MPI_FLOAT_INT, 8, 0, 8, 0, 8);
    SHAPE(MPI_DOUBLE_INT, 12, 0, 16, 0, 12);
    SHAPE(MPI_LONG_INT, 12, 0, 16, 0, 12);
    SHAPE(MPI_SHORT_INT, 6, 0, 8, 0, 8);
    SHAPE(MPI_LONG_DOUBLE_INT, 20, 0, 32, 0, 20);
    SHAPE(MPI_2INT, 8, 0, 8, 0, 8);
    SHAPE(MPI_2DOUBLE_PRECISION, 16, 0, 16, 0, 16);
    SHAPE(MPI_LB, 0, 0, 0, 0, 0);
    SHAPE(MPI_UB, 0, 0, 0, 0, 0);
    ENVELOPE(MPI_INT, 0, 0, 0, MPI_COMBINER_NAMED);
    ENVELOPE(MPI_DOUBLE_INT, 0, 0, 0, MPI_COMBINER_NAMED);
    {
        char name[MPI_MAX_OBJECT_NAME];
        int len = -1;
        MPI_Type_get_name(MPI_INT, name, &len);
        CHECK(strcmp(name, "MPI_INT") == 0 && len == 7, "name of MPI_INT '%s' %d", name, len);
        MPI_Type_get_name(MPI_DOUBLE_INT, name, &len);
        CHECK(strcmp(name, "MPI_DOUBLE_INT") == 0, "name of MPI_DOUBLE_INT '%s'", name);
        MPI_Type_get_name(MPI_LONG_LONG, name, &len);
        CHECK(strcmp(name, "MPI_LONG_LONG_INT") == 0, "name of MPI_LONG_LONG '%s'", name);
        MPI_Type_get_name(MPI_UNSIGNED_LONG, name, &len);
        CHECK(strcmp(name, "MPI_UNSIGNED_LONG") == 0, "name of MPI_UNSIGNED_LONG '%s'", name);
        MPI_Datatype dt = MPI_FLOAT;
        CHECK_CLASS(MPI_Type_commit(&dt), MPI_SUCCESS);
        CHECK_CLASS(MPI_Type_free(&dt), MPI_ERR_TYPE);
        dt = MPI_DOUBLE_INT;
        CHECK_CLASS(MPI_Type_free(&dt), MPI_ERR_TYPE);
        int ints[4];
        MPI_Aint addrs[4];
        MPI_Datatype types[4];
        CHECK_CLASS(MPI_Type_get_contents(MPI_INT, 4, 4, 4, ints, addrs, types), MPI_ERR_TYPE);
    }

    /* ---- Contiguous ---- */
    {
        MPI_Datatype c5, c0;
        MPI_Type_contiguous(5, MPI_INT, &c5);
        SHAPE(c5, 20, 0, 20, 0, 20);
        ENVELOPE(c5, 1, 0, 1, MPI_COMBINER_CONTIGUOUS);
        MPI_Type_contiguous(0, MPI_INT, &c0);
        SHAPE(c0, 0, 0, 0, 0, 0);
        MPI_Type_commit(&c5);
        int src[10], after[10];
        unsigned char expected[40];
        for (int i = 0; i < 10; i++)
            src[i] = after[i] = 100 + i;
        ints_to_bytes(src, 10, expected);
        round_trip("contiguous", c5, 2, src, sizeof src, expected, 40, (unsigned char *)after, __LINE__);
        MPI_Type_free(&c5);
        CHECK(c5 == MPI_DATATYPE_NULL, "free sets MPI_DATATYPE_NULL");
        MPI_Type_free(&c0);
    }

    /* ---- Vector, hvector ---- */
    {
        MPI_Datatype v, vn, hv, hvd;
        MPI_Type_vector(3, 2, 4, MPI_INT, &v); /* ints 0 1, 4 5, 8 9 */
        SHAPE(v, 24, 0, 40, 0, 40);
        ENVELOPE(v, 3, 0, 1, MPI_COMBINER_VECTOR);
        MPI_Type_vector(2, 1, -2, MPI_INT, &vn);
        SHAPE(vn, 8, -8, 12, -8, 12);
        MPI_Type_create_hvector(2, 1, 12, MPI_DOUBLE, &hv);
        SHAPE(hv, 16, 0, 20, 0, 20);
        ENVELOPE(hv, 2, 1, 1, MPI_COMBINER_HVECTOR);
        MPI_Type_hvector(2, 3, 40, MPI_INT, &hvd);
        SHAPE(hvd, 24, 0, 52, 0, 52);
        ENVELOPE(hvd, 2, 1, 1, MPI_COMBINER_HVECTOR);
        MPI_Type_commit(&v);
        /* Two elements: the second starts at the extent (10 ints). */
        int src[20], after[20], picked[12], k = 0;
        for (int i = 0; i < 20; i++) {
            src[i] = i * 11;
            after[i] = 0;
        }
        for (int e = 0; e < 2; e++)
            for (int b = 0; b < 3; b++)
                for (int j = 0; j < 2; j++) {
                    int idx = e * 10 + b * 4 + j;
                    picked[k++] = src[idx];
                    after[idx] = src[idx];
                }
        unsigned char expected[48];
        ints_to_bytes(picked, 12, expected);
        round_trip("vector", v, 2, src, sizeof src, expected, 48, (unsigned char *)after, __LINE__);

        int ints[3];
        MPI_Aint addrs[1];
        MPI_Datatype types[1];
        MPI_Type_get_contents(v, 3, 0, 1, ints, addrs, types);
        CHECK(ints[0] == 3 && ints[1] == 2 && ints[2] == 4 && types[0] == MPI_INT, "vector contents %d %d %d",
              ints[0], ints[1], ints[2]);
        MPI_Type_get_contents(hv, 2, 1, 1, ints, addrs, types);
        CHECK(ints[0] == 2 && ints[1] == 1 && addrs[0] == 12 && types[0] == MPI_DOUBLE, "hvector contents");
        MPI_Type_free(&v);
        MPI_Type_free(&vn);
        MPI_Type_free(&hv);
        MPI_Type_free(&hvd);
    }

    /* ---- Indexed family ---- */
    {
        MPI_Datatype ix, ib, hx, hxd, hb;
        int bl[3] = {1, 2, 0}, d[3] = {5, 0, 2};
        MPI_Type_indexed(3, bl, d, MPI_INT, &ix);
        SHAPE(ix, 12, 0, 24, 0, 24);
        ENVELOPE(ix, 7, 0, 1, MPI_COMBINER_INDEXED);
        int d2[2] = {3, 1};
        MPI_Type_create_indexed_block(2, 2, d2, MPI_SHORT, &ib);
        SHAPE(ib, 8, 2, 8, 2, 8);
        ENVELOPE(ib, 4, 0, 1, MPI_COMBINER_INDEXED_BLOCK);
        int hbl[2] = {1, 1};
        MPI_Aint hd[2] = {0, 9};
        MPI_Type_create_hindexed(2, hbl, hd, MPI_DOUBLE, &hx);
        SHAPE(hx, 16, 0, 17, 0, 17);
        ENVELOPE(hx, 3, 2, 1, MPI_COMBINER_HINDEXED);
        MPI_Type_hindexed(2, hbl, hd, MPI_DOUBLE, &hxd);
        SHAPE(hxd, 16, 0, 17, 0, 17);
        MPI_Aint hbd[3] = {16, 0, 40};
        MPI_Type_create_hindexed_block(3, 2, hbd, MPI_INT, &hb);
        SHAPE(hb, 24, 0, 48, 0, 48);
        ENVELOPE(hb, 2, 3, 1, MPI_COMBINER_HINDEXED_BLOCK);

        MPI_Type_commit(&ix);
        int src[6], after[6] = {0};
        for (int i = 0; i < 6; i++)
            src[i] = -1 - i;
        int picked[3] = {src[5], src[0], src[1]};
        after[5] = src[5];
        after[0] = src[0];
        after[1] = src[1];
        unsigned char expected[12];
        ints_to_bytes(picked, 3, expected);
        round_trip("indexed", ix, 1, src, sizeof src, expected, 12, (unsigned char *)after, __LINE__);

        int ints[7];
        MPI_Aint addrs[3];
        MPI_Datatype types[1];
        MPI_Type_get_contents(ix, 7, 0, 1, ints, addrs, types);
        CHECK(ints[0] == 3 && ints[1] == 1 && ints[2] == 2 && ints[3] == 0 && ints[4] == 5 && ints[5] == 0 &&
                  ints[6] == 2,
              "indexed contents");
        MPI_Type_get_contents(hb, 2, 3, 1, ints, addrs, types);
        CHECK(ints[0] == 3 && ints[1] == 2 && addrs[0] == 16 && addrs[2] == 40, "hindexed_block contents");
        MPI_Type_commit(&hb);
        int hsrc[12], hafter[12] = {0};
        for (int i = 0; i < 12; i++)
            hsrc[i] = i * i;
        int hpicked[6] = {hsrc[4], hsrc[5], hsrc[0], hsrc[1], hsrc[10], hsrc[11]};
        for (int i = 0; i < 12; i++)
            if (i == 4 || i == 5 || i == 0 || i == 1 || i == 10 || i == 11)
                hafter[i] = hsrc[i];
        unsigned char hexpected[24];
        ints_to_bytes(hpicked, 6, hexpected);
        round_trip("hindexed_block", hb, 1, hsrc, sizeof hsrc, hexpected, 24, (unsigned char *)hafter, __LINE__);
        MPI_Type_free(&ix);
        MPI_Type_free(&ib);
        MPI_Type_free(&hx);
        MPI_Type_free(&hxd);
        MPI_Type_free(&hb);
    }

    /* ---- Struct: padding, markers, deprecated form ---- */
    {
        struct rec {
            int i;
            double d;
            char c;
        } recs[2];
        MPI_Datatype st, dc, m, mm, old_st;
        int bl[3] = {1, 1, 1};
        MPI_Aint disp[3] = {offsetof(struct rec, i), offsetof(struct rec, d), offsetof(struct rec, c)};
        MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR};
        MPI_Type_create_struct(3, bl, disp, types, &st);
        SHAPE(st, 13, 0, (MPI_Aint)sizeof(struct rec), 0, 17);
        ENVELOPE(st, 4, 3, 3, MPI_COMBINER_STRUCT);
        MPI_Type_struct(3, bl, disp, types, &old_st);
        SHAPE(old_st, 13, 0, 24, 0, 17);
        MPI_Type_commit(&st);
        memset(recs, 0x5a, sizeof recs);
        recs[0].i = 7;
        recs[0].d = 1.5;
        recs[0].c = 'x';
        recs[1].i = -9;
        recs[1].d = -2.25;
        recs[1].c = 'y';
        unsigned char expected[26], after[sizeof recs];
        memset(after, 0, sizeof after);
        for (int e = 0; e < 2; e++) {
            memcpy(expected + e * 13, &recs[e].i, 4);
            memcpy(expected + e * 13 + 4, &recs[e].d, 8);
            memcpy(expected + e * 13 + 12, &recs[e].c, 1);
            memcpy(after + e * sizeof(struct rec) + offsetof(struct rec, i), &recs[e].i, 4);
            memcpy(after + e * sizeof(struct rec) + offsetof(struct rec, d), &recs[e].d, 8);
            memcpy(after + e * sizeof(struct rec) + offsetof(struct rec, c), &recs[e].c, 1);
        }
        round_trip("struct", st, 2, recs, sizeof recs, expected, 26, after, __LINE__);

        int ints[4];
        MPI_Aint addrs[3];
        MPI_Datatype ctypes[3];
        MPI_Type_get_contents(st, 4, 3, 3, ints, addrs, ctypes);
        CHECK(ints[0] == 3 && ints[1] == 1 && addrs[1] == 8 && addrs[2] == 16 && ctypes[0] == MPI_INT &&
                  ctypes[1] == MPI_DOUBLE && ctypes[2] == MPI_CHAR,
              "struct contents");

        /* struct { double; char } pads to 16; char at 4 + double at 8. */
        int bl2[2] = {1, 1};
        MPI_Aint d2[2] = {0, 8};
        MPI_Datatype t2[2] = {MPI_DOUBLE, MPI_CHAR};
        MPI_Type_create_struct(2, bl2, d2, t2, &dc);
        SHAPE(dc, 9, 0, 16, 0, 9);
        MPI_Type_free(&dc);
        d2[0] = 4;
        t2[0] = MPI_CHAR;
        t2[1] = MPI_DOUBLE;
        MPI_Type_create_struct(2, bl2, d2, t2, &dc);
        SHAPE(dc, 9, 4, 16, 4, 12);
        MPI_Type_free(&dc);

        /* MPI_LB and MPI_UB set the bounds; copies repeat them. */
        MPI_Aint d3[3] = {-4, 0, 20};
        MPI_Datatype t3[3] = {MPI_LB, MPI_INT, MPI_UB};
        MPI_Type_create_struct(3, bl, d3, t3, &m);
        SHAPE(m, 4, -4, 24, 0, 4);
        MPI_Type_contiguous(2, m, &mm);
        SHAPE(mm, 8, -4, 48, 0, 28);
        MPI_Type_free(&m);
        MPI_Type_free(&mm);
        MPI_Type_free(&st);
        MPI_Type_free(&old_st);
    }

    /* ---- Resized ---- */
    {
        MPI_Datatype r, r3, c2;
        MPI_Type_create_resized(MPI_INT, -2, 10, &r);
        SHAPE(r, 4, -2, 10, 0, 4);
        ENVELOPE(r, 0, 2, 1, MPI_COMBINER_RESIZED);
        MPI_Aint addrs[2];
        int ints[1];
        MPI_Datatype types[1];
        MPI_Type_get_contents(r, 0, 2, 1, ints, addrs, types);
        CHECK(addrs[0] == -2 && addrs[1] == 10 && types[0] == MPI_INT, "resized contents");
        MPI_Type_create_resized(MPI_INT, 0, 3, &r3);
        MPI_Type_contiguous(2, r3, &c2);
        SHAPE(c2, 8, 0, 6, 0, 7);
        MPI_Type_free(&r);
        MPI_Type_free(&c2);
        /* A resized type strides by its new extent: 3 ints, 2 apart. */
        MPI_Datatype r8;
        MPI_Type_create_resized(MPI_INT, 0, 8, &r8);
        MPI_Type_commit(&r8);
        int src[6] = {1, 2, 3, 4, 5, 6}, after[6] = {1, 0, 3, 0, 5, 0}, picked[3] = {1, 3, 5};
        unsigned char expected[12];
        ints_to_bytes(picked, 3, expected);
        round_trip("resized", r8, 3, src, sizeof src, expected, 12, (unsigned char *)after, __LINE__);
        MPI_Type_free(&r8);
        MPI_Type_free(&r3);
    }

    /* ---- Subarray (C and Fortran order) ---- */
    {
        MPI_Datatype sc, sf;
        int sizes[2] = {4, 5}, sub[2] = {2, 3}, starts[2] = {1, 1};
        MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, MPI_INT, &sc);
        SHAPE(sc, 24, 0, 80, 24, 32);
        ENVELOPE(sc, 8, 0, 1, MPI_COMBINER_SUBARRAY);
        MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_FORTRAN, MPI_INT, &sf);
        SHAPE(sf, 24, 0, 80, 20, 40);
        MPI_Type_commit(&sc);
        MPI_Type_commit(&sf);
        int a[20], after[20] = {0}, picked[6], k = 0;
        for (int i = 0; i < 20; i++)
            a[i] = 1000 + i;
        for (int r = 1; r < 3; r++) /* C: rows 1-2 of 5 columns, columns 1-3 */
            for (int c = 1; c < 4; c++) {
                picked[k++] = a[r * 5 + c];
                after[r * 5 + c] = a[r * 5 + c];
            }
        unsigned char expected[24];
        ints_to_bytes(picked, 6, expected);
        round_trip("subarray C", sc, 1, a, sizeof a, expected, 24, (unsigned char *)after, __LINE__);
        k = 0;
        memset(after, 0, sizeof after);
        for (int c = 1; c < 4; c++) /* Fortran: columns of 4, index 0 fastest */
            for (int r = 1; r < 3; r++) {
                picked[k++] = a[c * 4 + r];
                after[c * 4 + r] = a[c * 4 + r];
            }
        ints_to_bytes(picked, 6, expected);
        round_trip("subarray Fortran", sf, 1, a, sizeof a, expected, 24, (unsigned char *)after, __LINE__);
        int ints[8];
        MPI_Aint addrs[1];
        MPI_Datatype types[1];
        MPI_Type_get_contents(sf, 8, 0, 1, ints, addrs, types);
        CHECK(ints[0] == 2 && ints[1] == 4 && ints[2] == 5 && ints[3] == 2 && ints[5] == 1 &&
                  ints[7] == MPI_ORDER_FORTRAN,
              "subarray contents");
        MPI_Type_free(&sc);
        MPI_Type_free(&sf);
    }

    /* ---- Darray ---- */
    {
        MPI_Datatype da;
        int gs[2] = {4, 4}, ds[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC},
            dargs[2] = {MPI_DISTRIBUTE_DFLT_DARG, 1}, ps[2] = {2, 2};
        /* Rank 3 of a 2x2 grid: rows 2-3, columns 1 and 3. */
        MPI_Type_create_darray(4, 3, 2, gs, ds, dargs, ps, MPI_ORDER_C, MPI_INT, &da);
        SHAPE(da, 16, 0, 64, 36, 28);
        ENVELOPE(da, 12, 0, 1, MPI_COMBINER_DARRAY);
        MPI_Type_commit(&da);
        int a[16], after[16] = {0}, picked[4], k = 0;
        for (int i = 0; i < 16; i++)
            a[i] = 50 - i;
        for (int r = 2; r < 4; r++)
            for (int c = 1; c < 4; c += 2) {
                picked[k++] = a[r * 4 + c];
                after[r * 4 + c] = a[r * 4 + c];
            }
        unsigned char expected[16];
        ints_to_bytes(picked, 4, expected);
        round_trip("darray", da, 1, a, sizeof a, expected, 16, (unsigned char *)after, __LINE__);
        MPI_Type_free(&da);
    }

    /* ---- Dup, names, a freed part stays alive ---- */
    {
        MPI_Datatype base, v, d;
        char name[MPI_MAX_OBJECT_NAME];
        int len;
        MPI_Type_contiguous(2, MPI_INT, &base);
        MPI_Type_commit(&base);
        MPI_Type_dup(base, &d);
        ENVELOPE(d, 0, 0, 1, MPI_COMBINER_DUP);
        SHAPE(d, 8, 0, 8, 0, 8);
        MPI_Type_get_name(d, name, &len);
        CHECK(len == 0 && name[0] == 0, "a new type has an empty name, got '%s'", name);
        MPI_Type_set_name(d, "pair of ints");
        MPI_Type_get_name(d, name, &len);
        CHECK(strcmp(name, "pair of ints") == 0 && len == 12, "name '%s' %d", name, len);
        /* A dup of a committed type is committed: usable at once. */
        int x[2] = {3, 4}, pos = 0;
        char buf[8];
        CHECK_CLASS(MPI_Pack(x, 1, d, buf, sizeof buf, &pos, MPI_COMM_WORLD), MPI_SUCCESS);
        MPI_Type_free(&d);

        MPI_Type_vector(2, 1, 3, base, &v);
        MPI_Datatype got[1];
        int ints[3];
        MPI_Aint addrs[1];
        MPI_Type_get_contents(v, 3, 0, 1, ints, addrs, got);
        CHECK(got[0] == base, "get_contents returns the live handle of a part");
        MPI_Type_free(&got[0]); /* each returned derived handle is freed once */
        MPI_Datatype freed = base;
        MPI_Type_free(&base);
        SHAPE(v, 16, 0, 32, 0, 32);
        MPI_Type_commit(&v);
        int src[10], after[10] = {0}, picked[4] = {0, 1, 6, 7};
        for (int i = 0; i < 10; i++)
            src[i] = i;
        after[0] = 0;
        after[1] = 1;
        after[6] = 6;
        after[7] = 7;
        unsigned char expected[16];
        ints_to_bytes(picked, 4, expected);
        round_trip("vector of a freed type", v, 1, src, sizeof src, expected, 16, (unsigned char *)after,
                   __LINE__);
        CHECK_CLASS(MPI_Type_commit(&freed), MPI_ERR_TYPE);
        MPI_Type_get_contents(v, 3, 0, 1, ints, addrs, got);
        SHAPE(got[0], 8, 0, 8, 0, 8);
        MPI_Type_free(&got[0]);
        MPI_Type_free(&v);

        MPI_Type_set_name(MPI_INT, "my int");
        MPI_Type_get_name(MPI_INT, name, &len);
        CHECK(strcmp(name, "my int") == 0, "renamed predefined type '%s'", name);
        MPI_Type_set_name(MPI_INT, "MPI_INT");
    }

    /* ---- Large-count constructors and queries ---- */
    {
        MPI_Datatype c, s;
        MPI_Type_vector_c(3, 2, 4, MPI_INT, &c);
        SHAPE(c, 24, 0, 40, 0, 40);
        MPI_Count ni, na, nl, nd;
        int comb;
        MPI_Type_get_envelope_c(c, &ni, &na, &nl, &nd, &comb);
        CHECK(ni == 0 && na == 0 && nl == 3 && nd == 1 && comb == MPI_COMBINER_VECTOR, "envelope_c %ld %ld %ld %ld",
              (long)ni, (long)na, (long)nl, (long)nd);
        int ints[1];
        MPI_Aint addrs[1];
        MPI_Count large[3];
        MPI_Datatype types[1];
        MPI_Type_get_contents_c(c, 0, 0, 3, 1, ints, addrs, large, types);
        CHECK(large[0] == 3 && large[1] == 2 && large[2] == 4 && types[0] == MPI_INT, "contents_c");
        int n1, n2, n3;
        CHECK(MPI_Type_get_envelope(c, &n1, &n2, &n3, &comb) != MPI_SUCCESS, "get_envelope of a large-count type");
        MPI_Count sizes[2] = {4, 5}, sub[2] = {2, 3}, st[2] = {1, 1};
        MPI_Type_create_subarray_c(2, sizes, sub, st, MPI_ORDER_C, MPI_INT, &s);
        SHAPE(s, 24, 0, 80, 24, 32);
        MPI_Type_commit(&s);
        MPI_Count psize = -1, pos = 0;
        MPI_Pack_size_c(2, s, MPI_COMM_WORLD, &psize);
        CHECK(psize == 48, "pack_size_c %ld", (long)psize);
        int a[40], back[40] = {0};
        char buf[48];
        for (int i = 0; i < 40; i++)
            a[i] = i;
        MPI_Pack_c(a, 2, s, buf, 48, &pos, MPI_COMM_WORLD);
        CHECK(pos == 48, "pack_c position %ld", (long)pos);
        pos = 0;
        MPI_Unpack_c(buf, 48, &pos, back, 2, s, MPI_COMM_WORLD);
        CHECK(pos == 48 && back[6] == 6 && back[13] == 13 && back[26] == 26 && back[5] == 0, "unpack_c");
        MPI_Type_free(&c);
        MPI_Type_free(&s);
        MPI_Datatype r;
        MPI_Type_create_resized_c(MPI_INT, 0, 16, &r);
        SHAPE(r, 4, 0, 16, 0, 4);
        MPI_Type_free(&r);
    }

    /* ---- The other large-count constructors: same layouts, counts
     * recorded as large counts ---- */
    {
        MPI_Datatype t;
        MPI_Count ni, na, nl, nd;
        int comb;
        MPI_Count lens[3] = {1, 2, 0}, disps[3] = {5, 0, 2}, bdisps[2] = {16, 0};
#define ENVELOPE_C(t, ei, ea, el, ed, ec)                                                       \
    do {                                                                                        \
        MPI_Type_get_envelope_c(t, &ni, &na, &nl, &nd, &comb);                                  \
        CHECK(ni == ei && na == ea && nl == el && nd == ed && comb == ec,                       \
              "envelope_c %ld %ld %ld %ld %d", (long)ni, (long)na, (long)nl, (long)nd, comb); \
    } while (0)
        MPI_Type_contiguous_c(5, MPI_INT, &t);
        SHAPE(t, 20, 0, 20, 0, 20);
        ENVELOPE_C(t, 0, 0, 1, 1, MPI_COMBINER_CONTIGUOUS);
        MPI_Type_free(&t);
        MPI_Type_create_hvector_c(2, 1, 12, MPI_DOUBLE, &t);
        SHAPE(t, 16, 0, 20, 0, 20);
        ENVELOPE_C(t, 0, 0, 3, 1, MPI_COMBINER_HVECTOR);
        MPI_Type_free(&t);
        MPI_Type_indexed_c(3, lens, disps, MPI_INT, &t);
        SHAPE(t, 12, 0, 24, 0, 24);
        ENVELOPE_C(t, 0, 0, 7, 1, MPI_COMBINER_INDEXED);
        MPI_Type_free(&t);
        MPI_Type_create_hindexed_c(3, lens, disps, MPI_INT, &t); /* bytes 5 and 0 */
        SHAPE(t, 12, 0, 9, 0, 9);
        ENVELOPE_C(t, 0, 0, 7, 1, MPI_COMBINER_HINDEXED);
        MPI_Type_free(&t);
        MPI_Type_create_indexed_block_c(2, 2, bdisps, MPI_SHORT, &t);
        SHAPE(t, 8, 0, 36, 0, 36);
        ENVELOPE_C(t, 0, 0, 4, 1, MPI_COMBINER_INDEXED_BLOCK);
        MPI_Type_free(&t);
        MPI_Type_create_hindexed_block_c(2, 2, bdisps, MPI_SHORT, &t);
        SHAPE(t, 8, 0, 20, 0, 20);
        ENVELOPE_C(t, 0, 0, 4, 1, MPI_COMBINER_HINDEXED_BLOCK);
        MPI_Type_free(&t);
        MPI_Count sbl[2] = {1, 1}, sd[2] = {0, 8};
        MPI_Datatype st[2] = {MPI_DOUBLE, MPI_CHAR};
        MPI_Type_create_struct_c(2, sbl, sd, st, &t);
        SHAPE(t, 9, 0, 16, 0, 9);
        ENVELOPE_C(t, 0, 0, 5, 2, MPI_COMBINER_STRUCT);
        MPI_Type_free(&t);
        MPI_Count gs[1] = {10};
        int ds[1] = {MPI_DISTRIBUTE_CYCLIC}, dargs[1] = {2}, ps[1] = {3};
        MPI_Type_create_darray_c(3, 1, 1, gs, ds, dargs, ps, MPI_ORDER_C, MPI_INT, &t); /* ints 2,3,8,9 */
        SHAPE(t, 16, 0, 40, 8, 32);
        ENVELOPE_C(t, 7, 0, 1, 1, MPI_COMBINER_DARRAY);
        MPI_Type_free(&t);
        MPI_Type_create_resized_c(MPI_INT, 0, 16, &t);
        ENVELOPE_C(t, 0, 0, 2, 1, MPI_COMBINER_RESIZED);
        MPI_Type_free(&t);
    }

    /* ---- Several types into one pack buffer ---- */
    {
        char buf[64];
        int pos = 0, i1 = 42, i2 = 0;
        double d1 = 6.5, d2 = 0;
        short s1[3] = {1, 2, 3}, s2[3] = {0};
        MPI_Pack(&i1, 1, MPI_INT, buf, sizeof buf, &pos, MPI_COMM_WORLD);
        MPI_Pack(&d1, 1, MPI_DOUBLE, buf, sizeof buf, &pos, MPI_COMM_WORLD);
        MPI_Pack(s1, 3, MPI_SHORT, buf, sizeof buf, &pos, MPI_COMM_WORLD);
        CHECK(pos == 18, "position after three packs %d", pos);
        int end = pos;
        pos = 0;
        MPI_Unpack(buf, end, &pos, &i2, 1, MPI_INT, MPI_COMM_WORLD);
        MPI_Unpack(buf, end, &pos, &d2, 1, MPI_DOUBLE, MPI_COMM_WORLD);
        MPI_Unpack(buf, end, &pos, s2, 3, MPI_SHORT, MPI_COMM_WORLD);
        CHECK(pos == 18 && i2 == 42 && d2 == 6.5 && s2[2] == 3, "unpacked %d %g %d", i2, d2, s2[2]);
        CHECK_CLASS(MPI_Unpack(buf, end, &pos, &i2, 1, MPI_INT, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
        pos = 60;
        CHECK_CLASS(MPI_Pack(&d1, 1, MPI_DOUBLE, buf, sizeof buf, &pos, MPI_COMM_WORLD), MPI_ERR_TRUNCATE);
    }

    /* ---- Addresses: a struct of absolute addresses at MPI_BOTTOM ---- */
    {
        int i = 77;
        double d = 0.25;
        MPI_Aint ai, ad, a2;
        MPI_Get_address(&i, &ai);
        MPI_Get_address(&d, &ad);
        MPI_Address(&d, &a2);
        CHECK(ad == a2 && ai == (MPI_Aint)(intptr_t)&i, "addresses");
        CHECK(MPI_Aint_diff(ad, ai) == (MPI_Aint)((char *)&d - (char *)&i), "Aint_diff");
        CHECK(MPI_Aint_add(ai, 8) == ai + 8, "Aint_add");
        int bl[2] = {1, 1};
        MPI_Aint disp[2] = {ai, ad};
        MPI_Datatype types[2] = {MPI_INT, MPI_DOUBLE}, abs_t;
        MPI_Type_create_struct(2, bl, disp, types, &abs_t);
        MPI_Type_commit(&abs_t);
        char buf[12];
        int pos = 0;
        MPI_Pack(MPI_BOTTOM, 1, abs_t, buf, sizeof buf, &pos, MPI_COMM_WORLD);
        int gi;
        double gd;
        memcpy(&gi, buf, 4);
        memcpy(&gd, buf + 4, 8);
        CHECK(pos == 12 && gi == 77 && gd == 0.25, "packed from MPI_BOTTOM: %d %g", gi, gd);
        MPI_Type_free(&abs_t);
    }

    /* ---- Get_count / Get_elements on statuses ---- */
    {
        MPI_Status st;
        int n;
        MPI_Count nc;
        MPI_Datatype dc;
        memset(&st, 0, sizeof st);
        MPI_Status_set_elements(&st, MPI_INT, 3);
        MPI_Get_count(&st, MPI_INT, &n);
        CHECK(n == 3, "count %d", n);
        MPI_Get_elements(&st, MPI_INT, &n);
        CHECK(n == 3, "elements %d", n);
        MPI_Get_count(&st, MPI_BYTE, &n);
        CHECK(n == 12, "bytes %d", n);
        MPI_Get_count(&st, MPI_DOUBLE, &n);
        CHECK(n == MPI_UNDEFINED, "12 bytes of doubles: %d", n);
        MPI_Get_elements(&st, MPI_SHORT, &n);
        CHECK(n == 6, "shorts %d", n);
        MPI_Status_set_elements(&st, MPI_BYTE, 6);
        MPI_Get_elements(&st, MPI_INT, &n);
        CHECK(n == MPI_UNDEFINED, "6 bytes of ints: %d", n);
        /* A pair type is two basic elements. */
        MPI_Status_set_elements(&st, MPI_DOUBLE_INT, 2);
        MPI_Get_count(&st, MPI_BYTE, &n);
        CHECK(n == 12, "one DOUBLE_INT in bytes: %d", n);
        MPI_Get_count(&st, MPI_DOUBLE_INT, &n);
        CHECK(n == 1, "DOUBLE_INT count %d", n);
        MPI_Get_elements(&st, MPI_DOUBLE_INT, &n);
        CHECK(n == 2, "DOUBLE_INT elements %d", n);
        MPI_Status_set_elements(&st, MPI_BYTE, 8);
        MPI_Get_elements(&st, MPI_DOUBLE_INT, &n);
        CHECK(n == 1, "the double of a DOUBLE_INT: %d", n);
        MPI_Get_count(&st, MPI_DOUBLE_INT, &n);
        CHECK(n == MPI_UNDEFINED, "partial DOUBLE_INT count %d", n);
        /* struct { double; char }: elements count basic values. */
        int bl[2] = {1, 1};
        MPI_Aint d[2] = {0, 8};
        MPI_Datatype t[2] = {MPI_DOUBLE, MPI_CHAR};
        MPI_Type_create_struct(2, bl, d, t, &dc);
        MPI_Type_commit(&dc);
        MPI_Status_set_elements(&st, MPI_BYTE, 17);
        MPI_Get_elements(&st, dc, &n);
        CHECK(n == 3, "17 bytes of struct: %d elements", n);
        MPI_Get_count(&st, dc, &n);
        CHECK(n == MPI_UNDEFINED, "17 bytes of struct: count %d", n);
        MPI_Status_set_elements(&st, MPI_BYTE, 18);
        MPI_Get_count(&st, dc, &n);
        CHECK(n == 2, "18 bytes of struct: count %d", n);
        MPI_Get_elements_x(&st, dc, &nc);
        CHECK(nc == 4, "elements_x %ld", (long)nc);
        MPI_Get_elements_c(&st, dc, &nc);
        CHECK(nc == 4, "elements_c %ld", (long)nc);
        MPI_Get_count_c(&st, dc, &nc);
        CHECK(nc == 2, "count_c %ld", (long)nc);
        MPI_Status_set_elements(&st, MPI_BYTE, 10);
        MPI_Get_elements(&st, dc, &n);
        CHECK(n == MPI_UNDEFINED, "10 bytes end inside a double: %d", n);
        MPI_Status_set_elements_x(&st, MPI_INT, (MPI_Count)1 << 33);
        MPI_Get_elements_x(&st, MPI_INT, &nc);
        CHECK(nc == (MPI_Count)1 << 33, "large element count %ld", (long)nc);
        MPI_Get_count(&st, MPI_INT, &n);
        CHECK(n == MPI_UNDEFINED, "a count beyond int is MPI_UNDEFINED: %d", n);
        MPI_Get_count_c(&st, MPI_BYTE, &nc);
        CHECK(nc == (MPI_Count)1 << 35, "large byte count %ld", (long)nc);
        /* Zero-size types: 0 bytes are 0 elements. */
        MPI_Datatype c0;
        MPI_Type_contiguous(0, MPI_INT, &c0);
        MPI_Type_commit(&c0);
        MPI_Status_set_elements(&st, MPI_BYTE, 0);
        MPI_Get_count(&st, c0, &n);
        CHECK(n == 0, "zero-size count %d", n);
        MPI_Type_free(&c0);
        MPI_Type_free(&dc);
    }

    /* ---- Match size, external32 ---- */
    {
        MPI_Datatype t;
        MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &t);
        CHECK(t == MPI_REAL8, "match real 8");
        MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 4, &t);
        CHECK(t == MPI_INTEGER4, "match integer 4");
        MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 16, &t);
        CHECK(t == MPI_COMPLEX16, "match complex 16");
        CHECK_CLASS(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 3, &t), MPI_ERR_ARG);

        /* Fortran 90 parameterized types: the smallest that holds the digits
         * (type_f90 checks their envelopes and contents). */
        int tsize = 0;
        CHECK(MPI_Type_create_f90_integer(5, &t) == MPI_SUCCESS, "f90 integer 5 digits");
        MPI_Type_size(t, &tsize);
        CHECK(tsize == 4, "f90 integer size %d", tsize);
        MPI_Type_create_f90_integer(12, &t);
        MPI_Type_size(t, &tsize);
        CHECK(tsize == 8, "f90 integer 12 digits: size %d", tsize);
        MPI_Type_create_f90_real(15, MPI_UNDEFINED, &t);
        MPI_Type_size(t, &tsize);
        CHECK(tsize == 8, "f90 real precision 15: size %d", tsize);
        MPI_Type_create_f90_real(MPI_UNDEFINED, 30, &t);
        MPI_Type_size(t, &tsize);
        CHECK(tsize == 4, "f90 real range 30: size %d", tsize);
        MPI_Type_create_f90_complex(6, 37, &t);
        MPI_Type_size(t, &tsize);
        CHECK(tsize == 8, "f90 complex (6, 37): size %d", tsize);
        CHECK_CLASS(MPI_Type_create_f90_integer(40, &t), MPI_ERR_ARG);
        CHECK_CLASS(MPI_Type_create_f90_real(MPI_UNDEFINED, MPI_UNDEFINED, &t), MPI_ERR_ARG);
        CHECK_CLASS(MPI_Type_create_f90_real(40, 10, &t), MPI_ERR_ARG);
        MPI_Type_create_f90_real(15, 300, &t);
        double dv[2] = {1.5, -2.25}, dback[2] = {0, 0};
        MPI_Sendrecv(dv, 2, t, 0, 71, dback, 2, MPI_DOUBLE, 0, 71, MPI_COMM_SELF, MPI_STATUS_IGNORE);
        CHECK(dback[0] == 1.5 && dback[1] == -2.25, "an f90 real type carries doubles");

        /* Data representations serve MPI-IO, which oxmpi lacks: refused
         * with a clear class after MPI's own checks. */
        CHECK_CLASS(MPI_Register_datarep("external32", NULL, NULL, NULL, NULL), MPI_ERR_DUP_DATAREP);
        CHECK_CLASS(MPI_Register_datarep(NULL, NULL, NULL, NULL, NULL), MPI_ERR_ARG);
        CHECK_CLASS(MPI_Register_datarep("mine", NULL, NULL, NULL, NULL), MPI_ERR_ARG); /* no extent function */

        int v[3] = {0x01020304, -2, 7}, back[3] = {0};
        unsigned char buf[16];
        MPI_Aint size = -1, pos = 0;
        MPI_Pack_external_size("external32", 3, MPI_INT, &size);
        CHECK(size == 12, "external32 size of 3 ints %ld", (long)size);
        MPI_Pack_external("external32", v, 3, MPI_INT, buf, sizeof buf, &pos);
        CHECK(pos == 12 && buf[0] == 1 && buf[3] == 4 && big_endian_int(buf + 4) == -2 &&
                  big_endian_int(buf + 8) == 7,
              "external32 ints are big-endian");
        pos = 0;
        MPI_Unpack_external("external32", buf, 12, &pos, back, 3, MPI_INT);
        CHECK(pos == 12 && back[0] == v[0] && back[1] == -2 && back[2] == 7, "external32 round trip");
        double one = 1.0;
        pos = 0;
        MPI_Pack_external("external32", &one, 1, MPI_DOUBLE, buf, sizeof buf, &pos);
        CHECK(pos == 8 && buf[0] == 0x3f && buf[1] == 0xf0 && buf[7] == 0, "external32 double");
        MPI_Pack_external_size("external32", 2, MPI_LONG, &size);
        CHECK(size == 8, "external32 longs are 4 bytes: %ld", (long)size);
        CHECK_CLASS(MPI_Pack_external_size("no such rep", 1, MPI_INT, &size), MPI_ERR_UNSUPPORTED_DATAREP);

        /* A vector of shorts in external32, with the _c calls. */
        MPI_Datatype sv_t;
        short sv[6] = {0x0102, 0, 0x0304, 0, -1, 0}, sback[6] = {0};
        MPI_Count csize = -1, cpos = 0;
        MPI_Type_vector(3, 1, 2, MPI_SHORT, &sv_t);
        MPI_Type_commit(&sv_t);
        MPI_Pack_external_size_c("external32", 1, sv_t, &csize);
        CHECK(csize == 6, "external32 size of the vector %ld", (long)csize);
        MPI_Pack_external_c("external32", sv, 1, sv_t, buf, sizeof buf, &cpos);
        CHECK(cpos == 6 && buf[0] == 1 && buf[1] == 2 && buf[2] == 3 && buf[3] == 4 && buf[4] == 0xff &&
                  buf[5] == 0xff,
              "external32 vector bytes");
        cpos = 0;
        MPI_Unpack_external_c("external32", buf, 6, &cpos, sback, 1, sv_t);
        CHECK(cpos == 6 && sback[0] == 0x0102 && sback[2] == 0x0304 && sback[4] == -1 && sback[1] == 0,
              "external32 vector round trip");
        MPI_Type_free(&sv_t);
    }

    /* ---- Bad input ---- */
    {
        MPI_Datatype t, u;
        int bl[2] = {1, -1}, d[2] = {0, 4}, sz;
        MPI_Aint ad[2] = {0, 8};
        MPI_Datatype types[2] = {MPI_INT, MPI_DATATYPE_NULL};
        CHECK_CLASS(MPI_Type_contiguous(-1, MPI_INT, &t), MPI_ERR_COUNT);
        CHECK_CLASS(MPI_Type_contiguous(1, MPI_DATATYPE_NULL, &t), MPI_ERR_TYPE);
        CHECK_CLASS(MPI_Type_contiguous(1, MPI_INT, NULL), MPI_ERR_ARG);
        CHECK_CLASS(MPI_Type_vector(2, -1, 1, MPI_INT, &t), MPI_ERR_COUNT);
        CHECK_CLASS(MPI_Type_indexed(2, bl, d, MPI_INT, &t), MPI_ERR_COUNT);
        CHECK_CLASS(MPI_Type_indexed(2, NULL, d, MPI_INT, &t), MPI_ERR_ARG);
        bl[1] = 1;
        CHECK_CLASS(MPI_Type_create_struct(2, bl, ad, types, &t), MPI_ERR_TYPE);
        CHECK_CLASS(MPI_Type_create_resized(MPI_DATATYPE_NULL, 0, 4, &t), MPI_ERR_TYPE);
        int sizes[2] = {4, 5}, sub[2] = {5, 3}, starts[2] = {0, 0};
        CHECK_CLASS(MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG);
        sub[0] = 2;
        starts[0] = 3;
        CHECK_CLASS(MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG);
        starts[0] = 0;
        sizes[1] = 0;
        CHECK_CLASS(MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG);
        sizes[1] = 5;
        CHECK_CLASS(MPI_Type_create_subarray(0, sizes, sub, starts, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG);
        CHECK_CLASS(MPI_Type_create_subarray(2, sizes, sub, starts, 99, MPI_INT, &t), MPI_ERR_ARG);
        int gs[1] = {8}, ds[1] = {MPI_DISTRIBUTE_BLOCK}, da[1] = {2}, ps[1] = {2};
        CHECK_CLASS(MPI_Type_create_darray(2, 0, 1, gs, ds, da, ps, MPI_ORDER_C, MPI_INT, &t), MPI_ERR_ARG);
        CHECK_CLASS(MPI_Type_size(MPI_DATATYPE_NULL, &sz), MPI_ERR_TYPE);
        CHECK_CLASS(MPI_Type_size(MPI_INT, NULL), MPI_ERR_ARG);
        CHECK_CLASS(MPI_Type_get_extent(MPI_INT, NULL, ad), MPI_ERR_ARG);
        MPI_Datatype nul = MPI_DATATYPE_NULL;
        CHECK_CLASS(MPI_Type_commit(&nul), MPI_ERR_TYPE);
        CHECK_CLASS(MPI_Type_free(&nul), MPI_ERR_TYPE);
        CHECK_CLASS(MPI_Type_dup(MPI_DATATYPE_NULL, &t), MPI_ERR_TYPE);
        CHECK_CLASS(MPI_Type_get_name(MPI_DATATYPE_NULL, (char[MPI_MAX_OBJECT_NAME]){0}, &sz), MPI_ERR_TYPE);
        CHECK_CLASS(MPI_Type_set_name(MPI_INT, NULL), MPI_ERR_ARG);

        /* Uncommitted types cannot be packed; freed handles are invalid. */
        MPI_Type_contiguous(2, MPI_INT, &u);
        int in[2] = {1, 2}, pos = 0;
        char buf[16];
        CHECK_CLASS(MPI_Pack(in, 1, u, buf, sizeof buf, &pos, MPI_COMM_WORLD), MPI_ERR_TYPE);
        CHECK_CLASS(MPI_Type_size(u, &sz), MPI_SUCCESS);
        MPI_Datatype stale = u;
        MPI_Type_free(&u);
        CHECK_CLASS(MPI_Type_size(stale, &sz), MPI_ERR_TYPE);
        CHECK_CLASS(MPI_Type_free(&stale), MPI_ERR_TYPE);

        pos = 0;
        CHECK_CLASS(MPI_Pack(in, -1, MPI_INT, buf, sizeof buf, &pos, MPI_COMM_WORLD), MPI_ERR_COUNT);
        CHECK_CLASS(MPI_Pack(in, 1, MPI_INT, buf, sizeof buf, &pos, MPI_COMM_NULL), MPI_ERR_COMM);
        CHECK_CLASS(MPI_Pack(in, 1, MPI_INT, buf, sizeof buf, NULL, MPI_COMM_WORLD), MPI_ERR_ARG);
        CHECK_CLASS(MPI_Pack_size(-1, MPI_INT, MPI_COMM_WORLD, &sz), MPI_ERR_COUNT);

        MPI_Status st;
        CHECK_CLASS(MPI_Status_set_elements(&st, MPI_INT, -1), MPI_ERR_COUNT);
        CHECK_CLASS(MPI_Get_count(MPI_STATUS_IGNORE, MPI_INT, &sz), MPI_ERR_ARG);
        CHECK_CLASS(MPI_Get_elements(&st, MPI_DATATYPE_NULL, &sz), MPI_ERR_TYPE);

        MPI_Datatype v;
        int ints[3];
        MPI_Aint addrs[1];
        MPI_Datatype got[1];
        MPI_Type_vector(2, 1, 3, MPI_INT, &v);
        CHECK(MPI_Type_get_contents(v, 2, 0, 1, ints, addrs, got) != MPI_SUCCESS, "contents into short arrays");
        MPI_Type_free(&v);
    }

    MPI_Finalize();
    mt_report(rank, mt_errors);
    return mt_errors != 0;
}
