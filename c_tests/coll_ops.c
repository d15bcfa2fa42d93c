/* Every predefined reduction operation on every predefined datatype, the
 * whole matrix: where MPI 4.1 (section 6.9.2) defines the operation on the
 * type, MPI_Allreduce and MPI_Reduce_local must match a serial
 * computation; where it does not, both must fail with MPI_ERR_OP.
 * MINLOC/MAXLOC run on every pair type with ties (the lower index wins).
 * Also: MPI_REPLACE/MPI_NO_OP and MPI_OP_NULL in a collective, a predefined
 * operation on a mixed struct type (MPI_ERR_OP) and on a derived type
 * of one basic type (works). */
#include <complex.h>
#include <stdbool.h>
#include <stdint.h>
#include "mpitest.h"

static int rank, size;

/* QUAD: binary128 (MPI_REAL16), floating point without the logical ops. */
enum { C_INT, MULTI, FLOATING, QUAD, COMPLEX, LOGICAL, BYTE, PAIR };

static const struct {
    MPI_Op op;
    const char *name;
} ops[] = {
    {MPI_MAX, "MPI_MAX"},   {MPI_MIN, "MPI_MIN"},   {MPI_SUM, "MPI_SUM"},       {MPI_PROD, "MPI_PROD"},
    {MPI_LAND, "MPI_LAND"}, {MPI_LOR, "MPI_LOR"},   {MPI_LXOR, "MPI_LXOR"},     {MPI_BAND, "MPI_BAND"},
    {MPI_BOR, "MPI_BOR"},   {MPI_BXOR, "MPI_BXOR"}, {MPI_MINLOC, "MPI_MINLOC"}, {MPI_MAXLOC, "MPI_MAXLOC"},
};
#define NOPS ((int)(sizeof(ops) / sizeof(ops[0])))

/* MPI 4.1's table, and as MPICH the logical ops on MPI_AINT/OFFSET/COUNT
 * and on the real floating-point types. */
static int defined(MPI_Op op, int cat) {
    int floating = cat == FLOATING || cat == QUAD;
    if (op == MPI_MAX || op == MPI_MIN) return cat == C_INT || cat == MULTI || floating;
    if (op == MPI_SUM || op == MPI_PROD) return cat == C_INT || cat == MULTI || floating || cat == COMPLEX;
    if (op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR)
        return cat == C_INT || cat == MULTI || cat == LOGICAL || cat == FLOATING;
    if (op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR) return cat == C_INT || cat == MULTI || cat == BYTE;
    return cat == PAIR;
}

/* Inputs small enough that no serial result overflows the narrowest type
 * (PROD: at most four factors of 2 across 16 ranks). */
static long long igen(MPI_Op op, int is_signed, int r, int i) {
    if (op == MPI_SUM) return (r + 2 * i) % 5 - (is_signed ? 2 : 0);
    if (op == MPI_PROD) return (r + i) % 5 == 0 ? 2 : ((r + i) % 3 == 0 && is_signed ? -1 : 1);
    if (op == MPI_MAX || op == MPI_MIN) return (r * 7 + i * 5) % 11 - (is_signed ? 5 : 0);
    if (op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR) return (r + i) % (i + 2) ? (r % 3) + 1 : 0;
    return ((r * 37) ^ (i * 11) ^ (i == 0 ? 0x40 : 0x15)) & 0x7f;
}

static double fgen(MPI_Op op, int r, int i) {
    if (op == MPI_SUM) return (r - i % 3) * 0.5;
    if (op == MPI_PROD) {
        static const double f[4] = {2.0, 0.5, -1.0, 1.0};
        return f[(r + i) % 4];
    }
    return ((r * 7 + i * 5) % 11 - 5) * 0.25;
}

#define N 6

/* Runs `op` on `dt` with MPI_Allreduce over `size` ranks and with
 * MPI_Reduce_local on ranks 1 (in) and 0 (inout); compares with `exp_all`
 * and `exp_two`, or expects MPI_ERR_OP. */
#define CHECK_RESULT(T, EQ)                                                                                  \
    do {                                                                                                     \
        if (!valid) {                                                                                        \
            CHECK_CLASS(MPI_Allreduce(in, out, N, dt, ops[o].op, MPI_COMM_WORLD), MPI_ERR_OP);               \
            CHECK_CLASS(MPI_Reduce_local(loc_in, loc_inout, N, dt, ops[o].op), MPI_ERR_OP);                  \
            break;                                                                                           \
        }                                                                                                    \
        CHECK(MPI_Allreduce(in, out, N, dt, ops[o].op, MPI_COMM_WORLD) == MPI_SUCCESS, "%s %s", ops[o].name, \
              tname);                                                                                        \
        CHECK(MPI_Reduce_local(loc_in, loc_inout, N, dt, ops[o].op) == MPI_SUCCESS, "local %s %s",          \
              ops[o].name, tname);                                                                           \
        for (int i = 0; i < N; i++) {                                                                        \
            if (!(EQ(out[i], exp_all[i]))) {                                                                 \
                CHECK(0, "allreduce %s on %s: element %d wrong", ops[o].name, tname, i);                     \
                break;                                                                                       \
            }                                                                                                \
            if (!(EQ(loc_inout[i], exp_two[i]))) {                                                           \
                CHECK(0, "reduce_local %s on %s: element %d wrong", ops[o].name, tname, i);                  \
                break;                                                                                       \
            }                                                                                                \
        }                                                                                                    \
    } while (0)

#define EQUAL(a, b) ((a) == (b))

#define COMBINE_INT(op, x, y)                                                                      \
    ((op) == MPI_MAX    ? ((x) > (y) ? (x) : (y))                                                  \
     : (op) == MPI_MIN  ? ((x) < (y) ? (x) : (y))                                                  \
     : (op) == MPI_SUM  ? (x) + (y)                                                                \
     : (op) == MPI_PROD ? (x) * (y)                                                                \
     : (op) == MPI_LAND ? ((x) && (y))                                                             \
     : (op) == MPI_LOR  ? ((x) || (y))                                                             \
     : (op) == MPI_LXOR ? (!(x) != !(y))                                                           \
     : (op) == MPI_BAND ? ((x) & (y))                                                              \
     : (op) == MPI_BOR  ? ((x) | (y))                                                              \
                        : ((x) ^ (y)))

#define DEFINE_INT_TEST(fname, T)                                                                    \
    static void fname(MPI_Datatype dt, const char *tname, int cat, int is_signed) {                  \
        for (int o = 0; o < NOPS; o++) {                                                             \
            MPI_Op op = ops[o].op;                                                                   \
            int valid = defined(op, cat);                                                            \
            T in[N], out[N], exp_all[N], exp_two[N], loc_in[N], loc_inout[N];                        \
            for (int i = 0; i < N; i++) {                                                            \
                in[i] = (T)igen(op, is_signed, rank, i);                                             \
                loc_in[i] = (T)igen(op, is_signed, 1, i);                                            \
                loc_inout[i] = (T)igen(op, is_signed, 0, i);                                         \
                exp_two[i] = (T)COMBINE_INT(op, loc_in[i], loc_inout[i]);                            \
                exp_all[i] = (T)igen(op, is_signed, 0, i);                                           \
                for (int r = 1; r < size; r++) {                                                     \
                    T v = (T)igen(op, is_signed, r, i);                                              \
                    exp_all[i] = (T)COMBINE_INT(op, v, exp_all[i]);                                  \
                }                                                                                    \
            }                                                                                        \
            CHECK_RESULT(T, EQUAL);                                                                  \
        }                                                                                            \
    }

#define COMBINE_FLOAT(op, x, y)                                                                    \
    ((op) == MPI_MAX    ? ((x) > (y) ? (x) : (y))                                                  \
     : (op) == MPI_MIN  ? ((x) < (y) ? (x) : (y))                                                  \
     : (op) == MPI_SUM  ? (x) + (y)                                                                \
     : (op) == MPI_LAND ? ((x) != 0 && (y) != 0)                                                   \
     : (op) == MPI_LOR  ? ((x) != 0 || (y) != 0)                                                   \
     : (op) == MPI_LXOR ? (((x) != 0) != ((y) != 0))                                               \
                        : (x) * (y))

#define DEFINE_FLOAT_TEST(fname, T)                                                                  \
    static void fname(MPI_Datatype dt, const char *tname, int cat) {                                 \
        for (int o = 0; o < NOPS; o++) {                                                             \
            MPI_Op op = ops[o].op;                                                                   \
            int valid = defined(op, cat);                                                            \
            T in[N], out[N], exp_all[N], exp_two[N], loc_in[N], loc_inout[N];                        \
            for (int i = 0; i < N; i++) {                                                            \
                in[i] = (T)fgen(op, rank, i);                                                        \
                loc_in[i] = (T)fgen(op, 1, i);                                                       \
                loc_inout[i] = (T)fgen(op, 0, i);                                                    \
                exp_two[i] = COMBINE_FLOAT(op, loc_in[i], loc_inout[i]);                             \
                exp_all[i] = (T)fgen(op, 0, i);                                                      \
                for (int r = 1; r < size; r++) {                                                     \
                    T v = (T)fgen(op, r, i);                                                         \
                    exp_all[i] = COMBINE_FLOAT(op, v, exp_all[i]);                                   \
                }                                                                                    \
            }                                                                                        \
            CHECK_RESULT(T, EQUAL);                                                                  \
        }                                                                                            \
    }

/* Complex values: small Gaussian integers, so every product is exact. */
#define DEFINE_COMPLEX_TEST(fname, T, R)                                                             \
    static void fname(MPI_Datatype dt, const char *tname) {                                          \
        static const int re[4] = {1, 0, 1, -1}, im[4] = {0, 1, 1, 0};                                \
        for (int o = 0; o < NOPS; o++) {                                                             \
            MPI_Op op = ops[o].op;                                                                   \
            int valid = defined(op, COMPLEX);                                                        \
            T in[N], out[N], exp_all[N], exp_two[N], loc_in[N], loc_inout[N];                        \
            for (int i = 0; i < N; i++) {                                                            \
                int k = (rank + i) % 4;                                                              \
                in[i] = (R)re[k] + (R)im[k] * I;                                                     \
                loc_in[i] = (R)re[(1 + i) % 4] + (R)im[(1 + i) % 4] * I;                             \
                loc_inout[i] = (R)re[i % 4] + (R)im[i % 4] * I;                                      \
                exp_two[i] = op == MPI_SUM ? loc_in[i] + loc_inout[i] : loc_in[i] * loc_inout[i];    \
                exp_all[i] = loc_inout[i];                                                           \
                for (int r = 1; r < size; r++) {                                                     \
                    T v = (R)re[(r + i) % 4] + (R)im[(r + i) % 4] * I;                               \
                    exp_all[i] = op == MPI_SUM ? v + exp_all[i] : v * exp_all[i];                    \
                }                                                                                    \
            }                                                                                        \
            CHECK_RESULT(T, EQUAL);                                                                  \
        }                                                                                            \
    }

/* Pairs: values with ties across ranks; the index is not the rank, so the
 * lowest index is not always rank 0's. */
#define PAIR_EQ(a, b) ((a).v == (b).v && (a).k == (b).k)
#define DEFINE_PAIR_TEST(fname, VT, KT)                                                              \
    typedef struct {                                                                                 \
        VT v;                                                                                        \
        KT k;                                                                                        \
    } fname##_pair;                                                                                  \
    static fname##_pair fname##_gen(int r, int i) {                                                  \
        fname##_pair p;                                                                              \
        p.v = (VT)((r * 3 + i) % 4);                                                                 \
        p.k = (KT)((r * 5 + i) % 7 + 2 * r);                                                         \
        return p;                                                                                    \
    }                                                                                                \
    static fname##_pair fname##_combine(MPI_Op op, fname##_pair a, fname##_pair b) {                 \
        if (a.v == b.v) {                                                                            \
            b.k = a.k < b.k ? a.k : b.k;                                                             \
            return b;                                                                                \
        }                                                                                            \
        if (op == MPI_MAXLOC) return a.v > b.v ? a : b;                                              \
        return a.v < b.v ? a : b;                                                                    \
    }                                                                                                \
    static void fname(MPI_Datatype dt, const char *tname) {                                          \
        for (int o = 0; o < NOPS; o++) {                                                             \
            MPI_Op op = ops[o].op;                                                                   \
            int valid = defined(op, PAIR);                                                           \
            fname##_pair in[N], out[N], exp_all[N], exp_two[N], loc_in[N], loc_inout[N];             \
            memset(out, 0, sizeof(out));                                                             \
            for (int i = 0; i < N; i++) {                                                            \
                in[i] = fname##_gen(rank, i);                                                        \
                loc_in[i] = fname##_gen(1, i);                                                       \
                loc_inout[i] = fname##_gen(0, i);                                                    \
                exp_two[i] = valid ? fname##_combine(op, loc_in[i], loc_inout[i]) : loc_inout[i];    \
                exp_all[i] = fname##_gen(0, i);                                                      \
                for (int r = 1; r < size; r++)                                                       \
                    exp_all[i] = valid ? fname##_combine(op, fname##_gen(r, i), exp_all[i]) : exp_all[i]; \
            }                                                                                        \
            CHECK_RESULT(fname##_pair, PAIR_EQ);                                                     \
        }                                                                                            \
    }

DEFINE_INT_TEST(test_schar, signed char)
DEFINE_INT_TEST(test_uchar, unsigned char)
DEFINE_INT_TEST(test_short, short)
DEFINE_INT_TEST(test_ushort, unsigned short)
DEFINE_INT_TEST(test_int, int)
DEFINE_INT_TEST(test_uint, unsigned)
DEFINE_INT_TEST(test_long, long)
DEFINE_INT_TEST(test_ulong, unsigned long)
DEFINE_INT_TEST(test_llong, long long)
DEFINE_INT_TEST(test_ullong, unsigned long long)
DEFINE_INT_TEST(test_bool, bool)
DEFINE_FLOAT_TEST(test_float, float)
DEFINE_FLOAT_TEST(test_double, double)
DEFINE_FLOAT_TEST(test_ldouble, long double)
DEFINE_COMPLEX_TEST(test_fcomplex, float _Complex, float)
DEFINE_COMPLEX_TEST(test_dcomplex, double _Complex, double)
DEFINE_COMPLEX_TEST(test_ldcomplex, long double _Complex, long double)
DEFINE_PAIR_TEST(test_float_int, float, int)
DEFINE_PAIR_TEST(test_double_int, double, int)
DEFINE_PAIR_TEST(test_long_int, long, int)
DEFINE_PAIR_TEST(test_short_int, short, int)
DEFINE_PAIR_TEST(test_2int, int, int)
DEFINE_PAIR_TEST(test_ldouble_int, long double, int)
DEFINE_PAIR_TEST(test_2float, float, float)
DEFINE_PAIR_TEST(test_2double, double, double)
#ifdef __FLT16_MAX__
DEFINE_FLOAT_TEST(test_float16, _Float16)
#endif
#ifdef __SIZEOF_FLOAT128__
#define Q_NAN(a) ((a) != (a))
static int signbit_q(__float128 x) {
    unsigned char b[16];
    memcpy(b, &x, 16);
    return b[15] >> 7; /* little-endian: the sign is the top bit */
}
/* The same bits, or both NaN (a NaN made from non-NaN operands has no
 * required sign or payload: x86's __float128 makes a negative one). */
static int q_same(__float128 a, __float128 b) {
    return memcmp(&a, &b, 16) == 0 || (Q_NAN(a) && Q_NAN(b));
}
#endif

#ifdef __SIZEOF_FLOAT128__
/* MPI_REAL16 (binary128) in the whole matrix, with exact values. */
DEFINE_FLOAT_TEST(test_real16_matrix, __float128)

/* MPI_COMPLEX32: pairs of binary128 (C has no portable complex type for
 * it); the product is (ar*br - ai*bi) + (ar*bi + ai*br)i, each step
 * rounded, as the library computes it. */
typedef struct {
    __float128 re, im;
} quad_complex;
/* Equal values (the sign of a zero may depend on the order ranks combine). */
#define QC_EQUAL(a, b) ((a).re == (b).re && (a).im == (b).im)
static quad_complex qc_combine(MPI_Op op, quad_complex a, quad_complex b) {
    quad_complex c;
    if (op == MPI_SUM) {
        c.re = a.re + b.re;
        c.im = a.im + b.im;
    } else {
        c.re = a.re * b.re - a.im * b.im;
        c.im = a.re * b.im + a.im * b.re;
    }
    return c;
}
/* Small Gaussian integers, so every combination is exact. */
static quad_complex qc_gen(int r, int i) {
    static const int re[4] = {1, 0, 1, -1}, im[4] = {0, 1, 1, 0};
    quad_complex c = {re[(r + i) % 4], im[(r + i) % 4]};
    return c;
}
static void test_complex32_matrix(void) {
    MPI_Datatype dt = MPI_COMPLEX32;
    const char *tname = "MPI_COMPLEX32";
    for (int o = 0; o < NOPS; o++) {
        MPI_Op op = ops[o].op;
        int valid = defined(op, COMPLEX);
        quad_complex in[N], out[N], exp_all[N], exp_two[N], loc_in[N], loc_inout[N];
        memset(out, 0, sizeof(out));
        for (int i = 0; i < N; i++) {
            in[i] = qc_gen(rank, i);
            loc_in[i] = qc_gen(1, i);
            loc_inout[i] = qc_gen(0, i);
            exp_two[i] = valid ? qc_combine(op, loc_in[i], loc_inout[i]) : loc_inout[i];
            exp_all[i] = qc_gen(0, i);
            for (int r = 1; r < size; r++)
                exp_all[i] = valid ? qc_combine(op, qc_gen(r, i), exp_all[i]) : exp_all[i];
        }
        CHECK_RESULT(quad_complex, QC_EQUAL);
    }
}
#endif

/* MPI_REAL16 and MPI_COMPLEX32 SUM and PROD round as the C compiler's
 * __float128 does (to nearest-even), bit for bit, on inexact values, and
 * handle infinities, NaN and signed zeros: MPI_Reduce_local (one known
 * combination), and MPI_Allreduce where every rank but 0 gives the
 * identity (0 or -0 for SUM, 1 for PROD), so the result is known. */
static void test_real16(void) {
#ifdef __SIZEOF_FLOAT128__
    volatile __float128 one = 1, three = 3, ten = 10, zero = 0;
    __float128 tenth = one / ten, third = one / three, ulp = one, inf = __builtin_infq();
    for (int k = 0; k < 112; k++) ulp /= 2; /* 2^-112: 1's last place */
    enum { M = 12 };
    /* a[i] + b[i] and a[i] * b[i], each rounded once. */
    __float128 a[M] = {tenth, third, one, one + ulp, inf, inf, -zero, -zero, -zero, one, third, -inf};
    __float128 b[M] = {tenth * 2, tenth, ulp / 2, ulp / 2, one, -inf, -zero, zero, three, -one, third, three};
    for (int p = 0; p < 2; p++) {
        MPI_Op op = p ? MPI_PROD : MPI_SUM;
        __float128 inout[M], expected[M];
        for (int i = 0; i < M; i++) {
            inout[i] = b[i];
            expected[i] = p ? a[i] * b[i] : a[i] + b[i];
        }
        CHECK(MPI_Reduce_local(a, inout, M, MPI_REAL16, op) == MPI_SUCCESS, "real16 local %d", p);
        for (int i = 0; i < M; i++)
            CHECK(q_same(inout[i], expected[i]),
                  "real16 %s element %d", p ? "prod" : "sum", i);
        /* Allreduce: rank 0 gives a, the others the identity. */
        __float128 in[M], out[M];
        for (int i = 0; i < M; i++) in[i] = rank == 0 ? a[i] : (p ? one : -zero);
        CHECK(MPI_Allreduce(in, out, M, MPI_REAL16, op, MPI_COMM_WORLD) == MPI_SUCCESS, "real16 allreduce");
        for (int i = 0; i < M; i++)
            CHECK(q_same(out[i], a[i]), "real16 allreduce %s element %d",
                  p ? "prod" : "sum", i);
    }
    /* The rounding cases give what they should, whatever the compiler. */
    __float128 sums[M];
    memcpy(sums, b, sizeof(sums));
    MPI_Reduce_local(a, sums, M, MPI_REAL16, MPI_SUM);
    CHECK(sums[2] == one && sums[3] == one + 2 * ulp, "real16 ties to even");
    CHECK(Q_NAN(sums[5]) && sums[4] == inf, "real16 infinities");
    CHECK(signbit_q(sums[6]) && !signbit_q(sums[7]), "real16 signed zeros");

    /* COMPLEX32: (0.1 + i/3) op (3 + 0.1i), (1 + 2i) op (-1 + i),
     * (-0 - 0i) op (-0 + 0i), (inf + 0i) op (1 + 0i). */
    quad_complex ca[4] = {{tenth, third}, {one, 2 * one}, {-zero, -zero}, {inf, zero}};
    quad_complex cb[4] = {{three, tenth}, {-one, one}, {-zero, zero}, {one, zero}};
    for (int p = 0; p < 2; p++) {
        MPI_Op op = p ? MPI_PROD : MPI_SUM;
        quad_complex inout[4], expected[4];
        for (int i = 0; i < 4; i++) {
            inout[i] = cb[i];
            expected[i] = qc_combine(op, ca[i], cb[i]);
        }
        CHECK(MPI_Reduce_local(ca, inout, 4, MPI_COMPLEX32, op) == MPI_SUCCESS, "complex32 local %d", p);
        for (int i = 0; i < 4; i++)
            CHECK(q_same(inout[i].re, expected[i].re) && q_same(inout[i].im, expected[i].im),
                  "complex32 %s element %d", p ? "prod" : "sum", i);
    }
    CHECK_CLASS(MPI_Allreduce(ca, cb, 4, MPI_COMPLEX32, MPI_MAX, MPI_COMM_WORLD), MPI_ERR_OP);
#endif
}

/* Fortran LOGICAL: .true. is 1. */
static void test_logical(void) {
    int in[4] = {1, rank % 2, 0, rank == 0}, out[4];
    CHECK(MPI_Allreduce(in, out, 4, MPI_LOGICAL, MPI_LAND, MPI_COMM_WORLD) == MPI_SUCCESS, "logical land");
    CHECK(out[0] == 1 && out[1] == 0 && out[2] == 0 && out[3] == (size == 1), "logical land values");
    CHECK(MPI_Allreduce(in, out, 4, MPI_LOGICAL, MPI_LOR, MPI_COMM_WORLD) == MPI_SUCCESS, "logical lor");
    CHECK(out[0] == 1 && out[1] == (size > 1) && out[2] == 0 && out[3] == 1, "logical lor values");
    CHECK(MPI_Allreduce(in, out, 4, MPI_LOGICAL, MPI_LXOR, MPI_COMM_WORLD) == MPI_SUCCESS, "logical lxor");
    CHECK(out[0] == (size % 2) && out[1] == ((size / 2) % 2) && out[2] == 0 && out[3] == 1, "logical lxor values");
    for (int o = 0; o < NOPS; o++)
        if (!defined(ops[o].op, LOGICAL))
            CHECK_CLASS(MPI_Allreduce(in, out, 4, MPI_LOGICAL, ops[o].op, MPI_COMM_WORLD), MPI_ERR_OP);
}

/* Operations no collective may use, and types no predefined operation
 * covers. */
static void test_invalid(void) {
    int in[3] = {1, 2, 3}, out[3];
    CHECK_CLASS(MPI_Allreduce(in, out, 3, MPI_INT, MPI_REPLACE, MPI_COMM_WORLD), MPI_ERR_OP);
    CHECK_CLASS(MPI_Allreduce(in, out, 3, MPI_INT, MPI_NO_OP, MPI_COMM_WORLD), MPI_ERR_OP);
    CHECK_CLASS(MPI_Allreduce(in, out, 3, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD), MPI_ERR_OP);
    CHECK_CLASS(MPI_Reduce_local(in, out, 3, MPI_INT, MPI_OP_NULL), MPI_ERR_OP);
    CHECK_CLASS(MPI_Allreduce(in, out, 3, MPI_WCHAR, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_OP);
    /* struct { int; double } mixes basic types */
    struct {
        int a;
        double b;
    } s[2];
    int bl[2] = {1, 1};
    MPI_Aint disp[2] = {0, 8};
    MPI_Datatype tt[2] = {MPI_INT, MPI_DOUBLE}, mixed, vec;
    MPI_Type_create_struct(2, bl, disp, tt, &mixed);
    MPI_Type_commit(&mixed);
    CHECK_CLASS(MPI_Allreduce(s, s + 1, 1, mixed, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_OP);
    MPI_Type_free(&mixed);
    /* a vector of MPI_DOUBLE reduces like its doubles */
    double dv[6] = {rank, -1, rank * 2.0, -1, rank * 3.0, -1}, dr[6] = {-1, -1, -1, -1, -1, -1};
    MPI_Type_vector(3, 1, 2, MPI_DOUBLE, &vec);
    MPI_Type_commit(&vec);
    CHECK(MPI_Allreduce(dv, dr, 1, vec, MPI_MAX, MPI_COMM_WORLD) == MPI_SUCCESS, "vector of double max");
    CHECK(dr[0] == size - 1 && dr[1] == -1 && dr[2] == 2.0 * (size - 1) && dr[3] == -1 && dr[4] == 3.0 * (size - 1),
          "vector of double max values %g %g %g", dr[0], dr[2], dr[4]);
    CHECK_CLASS(MPI_Allreduce(dv, dr, 1, vec, MPI_BAND, MPI_COMM_WORLD), MPI_ERR_OP);
    MPI_Type_free(&vec);
}

int main(int argc, char **argv) {
    mt_init(&argc, &argv, &rank, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    test_schar(MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", C_INT, 1);
    test_uchar(MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", C_INT, 0);
    test_short(MPI_SHORT, "MPI_SHORT", C_INT, 1);
    test_ushort(MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT", C_INT, 0);
    test_int(MPI_INT, "MPI_INT", C_INT, 1);
    test_uint(MPI_UNSIGNED, "MPI_UNSIGNED", C_INT, 0);
    test_long(MPI_LONG, "MPI_LONG", C_INT, 1);
    test_ulong(MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", C_INT, 0);
    test_llong(MPI_LONG_LONG, "MPI_LONG_LONG", C_INT, 1);
    test_ullong(MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", C_INT, 0);
    test_schar(MPI_INT8_T, "MPI_INT8_T", C_INT, 1);
    test_uchar(MPI_UINT8_T, "MPI_UINT8_T", C_INT, 0);
    test_short(MPI_INT16_T, "MPI_INT16_T", C_INT, 1);
    test_ushort(MPI_UINT16_T, "MPI_UINT16_T", C_INT, 0);
    test_int(MPI_INT32_T, "MPI_INT32_T", C_INT, 1);
    test_uint(MPI_UINT32_T, "MPI_UINT32_T", C_INT, 0);
    test_llong(MPI_INT64_T, "MPI_INT64_T", C_INT, 1);
    test_ullong(MPI_UINT64_T, "MPI_UINT64_T", C_INT, 0);
    /* Fortran integers (logical operations are accepted on them too: the
     * types share their kinds with the C ones) */
    test_int(MPI_INTEGER, "MPI_INTEGER", C_INT, 1);
    test_schar(MPI_INTEGER1, "MPI_INTEGER1", C_INT, 1);
    test_short(MPI_INTEGER2, "MPI_INTEGER2", C_INT, 1);
    test_int(MPI_INTEGER4, "MPI_INTEGER4", C_INT, 1);
    test_llong(MPI_INTEGER8, "MPI_INTEGER8", C_INT, 1);
    /* multi-language types */
    test_long(MPI_AINT, "MPI_AINT", MULTI, 1);
    test_llong(MPI_OFFSET, "MPI_OFFSET", MULTI, 1);
    test_llong(MPI_COUNT, "MPI_COUNT", MULTI, 1);
    /* byte, logical */
    test_uchar(MPI_BYTE, "MPI_BYTE", BYTE, 0);
    test_bool(MPI_C_BOOL, "MPI_C_BOOL", LOGICAL, 0);
    test_bool(MPI_CXX_BOOL, "MPI_CXX_BOOL", LOGICAL, 0);
    test_logical();
    /* floating point */
    test_float(MPI_FLOAT, "MPI_FLOAT", FLOATING);
    test_double(MPI_DOUBLE, "MPI_DOUBLE", FLOATING);
    test_ldouble(MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", FLOATING);
    test_float(MPI_REAL, "MPI_REAL", FLOATING);
    test_float(MPI_REAL4, "MPI_REAL4", FLOATING);
    test_double(MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION", FLOATING);
    test_double(MPI_REAL8, "MPI_REAL8", FLOATING);
#ifdef __FLT16_MAX__
    test_float16(MPIX_C_FLOAT16, "MPIX_C_FLOAT16", FLOATING);
#endif
#ifdef __SIZEOF_FLOAT128__
    test_real16_matrix(MPI_REAL16, "MPI_REAL16", QUAD);
    test_complex32_matrix();
#endif
    test_real16();
    /* complex */
    test_fcomplex(MPI_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX");
    test_dcomplex(MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX");
    test_ldcomplex(MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX");
    test_fcomplex(MPI_COMPLEX, "MPI_COMPLEX");
    test_dcomplex(MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX");
    test_fcomplex(MPI_COMPLEX8, "MPI_COMPLEX8");
    test_dcomplex(MPI_COMPLEX16, "MPI_COMPLEX16");
    test_fcomplex(MPI_CXX_FLOAT_COMPLEX, "MPI_CXX_FLOAT_COMPLEX");
    test_dcomplex(MPI_CXX_DOUBLE_COMPLEX, "MPI_CXX_DOUBLE_COMPLEX");
    test_ldcomplex(MPI_CXX_LONG_DOUBLE_COMPLEX, "MPI_CXX_LONG_DOUBLE_COMPLEX");
    /* pairs */
    test_float_int(MPI_FLOAT_INT, "MPI_FLOAT_INT");
    test_double_int(MPI_DOUBLE_INT, "MPI_DOUBLE_INT");
    test_long_int(MPI_LONG_INT, "MPI_LONG_INT");
    test_short_int(MPI_SHORT_INT, "MPI_SHORT_INT");
    test_2int(MPI_2INT, "MPI_2INT");
    test_ldouble_int(MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT");
    test_2float(MPI_2REAL, "MPI_2REAL");
    test_2double(MPI_2DOUBLE_PRECISION, "MPI_2DOUBLE_PRECISION");
    test_2int(MPI_2INTEGER, "MPI_2INTEGER");
    test_invalid();

    int errs = 0;
    MPI_Allreduce(&mt_errors, &errs, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    mt_report(rank, errs);
    MPI_Finalize();
    return 0;
}
