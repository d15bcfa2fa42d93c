//! The predefined operations on packed values of one basic kind:
//! `inout[i] = input[i] op inout[i]`, element by element, on byte slices in
//! the packed (native, little-endian) form. Which kinds each operation is
//! defined for follows MPI 4.1 §6.9.2, by kind:
//!
//! | operations      | kinds                                                          |
//! |-----------------|----------------------------------------------------------------|
//! | MAX, MIN        | integers, `MPI_AINT`/`OFFSET`/`COUNT`, floating point          |
//! | SUM, PROD       | the same, and complex                                          |
//! | LAND, LOR, LXOR | integers, C `bool`, Fortran `LOGICAL`, and as MPICH also       |
//! |                 | `MPI_AINT`/`OFFSET`/`COUNT` and the real floating-point types  |
//! |                 | but binary128 (result 1 or 0 in the operands' type)            |
//! | BAND, BOR, BXOR | integers, `MPI_AINT`/`OFFSET`/`COUNT`, `MPI_BYTE`              |
//! | MINLOC, MAXLOC  | the pair types                                                 |
//! | REPLACE, NO_OP  | every kind (RMA accumulates)                                   |
//!
//! Integers are the C, Fortran and fixed-size ones, and `MPI_CHAR` (which
//! MPICH accepts too).
//!
//! The kinds do not tell `MPI_INT` from `MPI_INTEGER`, so the logical
//! operations are accepted on Fortran integers too. `MPI_REAL16` and
//! `MPI_COMPLEX32` (binary128) are computed in software (see
//! [`super::extended`]). Not supported: anything on `MPI_WCHAR` and
//! `MPI_PACKED`.
use std::cmp::Ordering;

use super::extended::{self, X87Op, X87_BYTES};
use super::BuiltinOp::{self, *};
use crate::core::datatype::BasicKind::{self, *};

/// Whether `op` is defined on values of `kind`.
pub fn supports(op: BuiltinOp, kind: BasicKind) -> bool {
    let integer = matches!(
        kind,
        Int8 | Int16 | Int32 | Int64 | Uint8 | Uint16 | Uint32 | Uint64 | Char
    );
    let address = matches!(kind, Aint | Offset | Count);
    let float = matches!(kind, Float16 | Float32 | Float64 | LongDouble | Float128);
    let complex = matches!(
        kind,
        ComplexFloat | ComplexDouble | ComplexLongDouble | ComplexFloat128
    );
    let arithmetic_ok = match kind {
        LongDouble | ComplexLongDouble => extended::x87_available(),
        _ => true,
    };
    match op {
        Max | Min => integer || address || float,
        Sum | Prod => (integer || address || float || complex) && arithmetic_ok,
        Land | Lor | Lxor => {
            integer
                || address
                || matches!(
                    kind,
                    Bool | Logical | Float16 | Float32 | Float64 | LongDouble
                )
        }
        Band | Bor | Bxor => integer || address || kind == Byte,
        Minloc | Maxloc => kind.pair_parts().is_some(),
        Replace | NoOp => true,
    }
}

/// Applies `op` to `input` and `inout`, which hold the same number of
/// packed `kind` values. `op` must support `kind` ([`supports`]).
pub fn apply(op: BuiltinOp, kind: BasicKind, input: &[u8], inout: &mut [u8]) {
    debug_assert_eq!(input.len(), inout.len());
    debug_assert!(supports(op, kind), "{op:?} on {kind:?}");
    match op {
        Replace => return inout.copy_from_slice(input),
        NoOp => return,
        Minloc | Maxloc => return locate(op == Maxloc, kind, input, inout),
        _ => {}
    }
    match kind {
        Int8 | Char => integer_i8(op, input, inout),
        Int16 => integer_i16(op, input, inout),
        Int32 | Logical => integer_i32(op, input, inout),
        Int64 | Aint | Offset | Count => integer_i64(op, input, inout),
        Uint8 | Bool | Byte => integer_u8(op, input, inout),
        Uint16 => integer_u16(op, input, inout),
        Uint32 => integer_u32(op, input, inout),
        Uint64 => integer_u64(op, input, inout),
        Float32 => float_f32(op, input, inout),
        Float64 => float_f64(op, input, inout),
        Float16 => half(op, input, inout),
        LongDouble => long_double(op, input, inout),
        Float128 => quad(op, input, inout),
        ComplexFloat => complex_f32(op, input, inout),
        ComplexDouble => complex_f64(op, input, inout),
        ComplexLongDouble => complex_long_double(op, input, inout),
        ComplexFloat128 => complex_quad(op, input, inout),
        _ => unreachable!("{op:?} is not defined on {kind:?}"),
    }
}

/// A fixed-size value read from and written to packed bytes.
trait Scalar: Copy + PartialOrd {
    const SIZE: usize;
    fn load(b: &[u8]) -> Self;
    fn store(self, b: &mut [u8]);
}

macro_rules! scalar {
    ($($t:ty),*) => {$(
        impl Scalar for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            #[inline]
            fn load(b: &[u8]) -> Self {
                <$t>::from_ne_bytes(b[..Self::SIZE].try_into().expect("one value"))
            }
            #[inline]
            fn store(self, b: &mut [u8]) {
                b[..Self::SIZE].copy_from_slice(&self.to_ne_bytes())
            }
        }
    )*};
}
scalar!(i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);

/// `inout[i] = f(input[i], inout[i])` over values of `T`.
#[inline]
fn each<T: Scalar>(input: &[u8], inout: &mut [u8], f: impl Fn(T, T) -> T) {
    for (a, b) in input
        .chunks_exact(T::SIZE)
        .zip(inout.chunks_exact_mut(T::SIZE))
    {
        f(T::load(a), T::load(b)).store(b);
    }
}

/// As MPICH: `max(a, b) = a > b ? a : b` (with a NaN, the inout value
/// unless the input is the larger one).
#[inline]
fn max<T: PartialOrd>(a: T, b: T) -> T {
    if a > b {
        a
    } else {
        b
    }
}

#[inline]
fn min<T: PartialOrd>(a: T, b: T) -> T {
    if a < b {
        a
    } else {
        b
    }
}

macro_rules! integer {
    ($name:ident, $t:ty) => {
        fn $name(op: BuiltinOp, input: &[u8], inout: &mut [u8]) {
            match op {
                Max => each::<$t>(input, inout, max),
                Min => each::<$t>(input, inout, min),
                Sum => each::<$t>(input, inout, <$t>::wrapping_add),
                Prod => each::<$t>(input, inout, <$t>::wrapping_mul),
                Land | Lor | Lxor => {
                    each::<$t>(input, inout, |a, b| logical(op, a != 0, b != 0) as $t)
                }
                Band => each::<$t>(input, inout, |a, b| a & b),
                Bor => each::<$t>(input, inout, |a, b| a | b),
                Bxor => each::<$t>(input, inout, |a, b| a ^ b),
                _ => unreachable!("{op:?} on an integer"),
            }
        }
    };
}
integer!(integer_i8, i8);
integer!(integer_i16, i16);
integer!(integer_i32, i32);
integer!(integer_i64, i64);
integer!(integer_u8, u8);
integer!(integer_u16, u16);
integer!(integer_u32, u32);
integer!(integer_u64, u64);

macro_rules! float {
    ($name:ident, $complex:ident, $t:ty) => {
        fn $name(op: BuiltinOp, input: &[u8], inout: &mut [u8]) {
            match op {
                Max => each::<$t>(input, inout, max),
                Min => each::<$t>(input, inout, min),
                Sum => each::<$t>(input, inout, |a, b| a + b),
                Prod => each::<$t>(input, inout, |a, b| a * b),
                Land | Lor | Lxor => each::<$t>(input, inout, |a, b| {
                    <$t>::from(u8::from(logical(op, a != 0.0, b != 0.0)))
                }),
                _ => unreachable!("{op:?} on a floating-point type"),
            }
        }

        /// Complex numbers: (real, imaginary) pairs.
        fn $complex(op: BuiltinOp, input: &[u8], inout: &mut [u8]) {
            const N: usize = std::mem::size_of::<$t>();
            for (a, b) in input.chunks_exact(2 * N).zip(inout.chunks_exact_mut(2 * N)) {
                let (ar, ai) = (<$t>::load(a), <$t>::load(&a[N..]));
                let (br, bi) = (<$t>::load(b), <$t>::load(&b[N..]));
                let (r, i) = match op {
                    Sum => (ar + br, ai + bi),
                    Prod => (ar * br - ai * bi, ar * bi + ai * br),
                    _ => unreachable!("{op:?} on a complex type"),
                };
                r.store(b);
                i.store(&mut b[N..]);
            }
        }
    };
}
float!(float_f32, complex_f32, f32);
float!(float_f64, complex_f64, f64);

fn half(op: BuiltinOp, input: &[u8], inout: &mut [u8]) {
    each::<u16>(input, inout, |a, b| {
        let (x, y) = (extended::f16_to_f64(a), extended::f16_to_f64(b));
        match op {
            Max if x > y => a,
            Max => b,
            Min if x < y => a,
            Min => b,
            Sum => extended::f64_to_f16(x + y),
            Prod => extended::f64_to_f16(x * y),
            Land | Lor | Lxor => {
                extended::f64_to_f16(f64::from(u8::from(logical(op, x != 0.0, y != 0.0))))
            }
            _ => unreachable!("{op:?} on MPIX_C_FLOAT16"),
        }
    })
}

/// `a op b` for x87 values (an x87 unit exists: [`supports`] checked).
fn x87(op: X87Op, a: &[u8], b: &[u8]) -> [u8; X87_BYTES] {
    extended::x87_arith(op, a, b).expect("x87 arithmetic is available")
}

/// A logical operation on two truth values.
fn logical(op: BuiltinOp, a: bool, b: bool) -> bool {
    match op {
        Land => a && b,
        Lor => a || b,
        Lxor => a != b,
        _ => unreachable!("{op:?} is not logical"),
    }
}

/// Whether an x87 80-bit value is nonzero: zero has a zero exponent and
/// significand (either sign); everything else (denormals, NaNs) is not.
fn x87_nonzero(v: &[u8]) -> bool {
    v[..8].iter().any(|&b| b != 0) || (u16::from_le_bytes([v[8], v[9]]) & 0x7fff) != 0
}

/// 1.0 and 0.0 as x87 80-bit values (little-endian).
const X87_ONE: [u8; X87_BYTES] = [0, 0, 0, 0, 0, 0, 0, 0x80, 0xff, 0x3f];
const X87_ZERO: [u8; X87_BYTES] = [0; X87_BYTES];

/// `MPI_LONG_DOUBLE`: 16-byte slots, the value in the first 10 bytes (the
/// padding of `inout` is kept).
fn long_double(op: BuiltinOp, input: &[u8], inout: &mut [u8]) {
    for (a, b) in input.chunks_exact(16).zip(inout.chunks_exact_mut(16)) {
        let result = match op {
            Land | Lor | Lxor => {
                if logical(op, x87_nonzero(a), x87_nonzero(b)) {
                    X87_ONE
                } else {
                    X87_ZERO
                }
            }
            Max if extended::x87_cmp(a, b) == Some(Ordering::Greater) => {
                a[..X87_BYTES].try_into().expect("10 bytes")
            }
            Min if extended::x87_cmp(a, b) == Some(Ordering::Less) => {
                a[..X87_BYTES].try_into().expect("10 bytes")
            }
            Max | Min => continue,
            Sum => x87(X87Op::Add, a, b),
            Prod => x87(X87Op::Mul, a, b),
            _ => unreachable!("{op:?} on MPI_LONG_DOUBLE"),
        };
        b[..X87_BYTES].copy_from_slice(&result);
    }
}

/// `MPI_C_LONG_DOUBLE_COMPLEX`: two 16-byte x87 slots.
fn complex_long_double(op: BuiltinOp, input: &[u8], inout: &mut [u8]) {
    for (a, b) in input.chunks_exact(32).zip(inout.chunks_exact_mut(32)) {
        let (ar, ai) = (&a[..16], &a[16..]);
        let (br, bi) = (&b[..16], &b[16..]);
        let (r, i) = match op {
            Sum => (x87(X87Op::Add, ar, br), x87(X87Op::Add, ai, bi)),
            Prod => {
                let real = x87(
                    X87Op::Add,
                    &x87(X87Op::Mul, ar, br),
                    &extended::x87_neg(&x87(X87Op::Mul, ai, bi)),
                );
                let imaginary = x87(
                    X87Op::Add,
                    &x87(X87Op::Mul, ar, bi),
                    &x87(X87Op::Mul, ai, br),
                );
                (real, imaginary)
            }
            _ => unreachable!("{op:?} on a long double complex"),
        };
        b[..X87_BYTES].copy_from_slice(&r);
        b[16..16 + X87_BYTES].copy_from_slice(&i);
    }
}

/// `MPI_REAL16` (binary128).
fn quad(op: BuiltinOp, input: &[u8], inout: &mut [u8]) {
    for (a, b) in input.chunks_exact(16).zip(inout.chunks_exact_mut(16)) {
        let (x, y) = (extended::f128_load(a), extended::f128_load(b));
        let result = match op {
            Max if extended::f128_cmp(a, b) == Some(Ordering::Greater) => x,
            Min if extended::f128_cmp(a, b) == Some(Ordering::Less) => x,
            Max | Min => continue,
            Sum => extended::f128_add(x, y),
            Prod => extended::f128_mul(x, y),
            _ => unreachable!("{op:?} on MPI_REAL16"),
        };
        b.copy_from_slice(&result.to_le_bytes());
    }
}

/// `MPI_COMPLEX32`: (real, imaginary) binary128 pairs; the product is
/// `(ar*br - ai*bi) + (ar*bi + ai*br)i`, each step rounded, as for the
/// other complex types.
fn complex_quad(op: BuiltinOp, input: &[u8], inout: &mut [u8]) {
    use extended::{f128_add as add, f128_load as load, f128_mul as mul, f128_sub as sub};
    for (a, b) in input.chunks_exact(32).zip(inout.chunks_exact_mut(32)) {
        let (ar, ai) = (load(a), load(&a[16..]));
        let (br, bi) = (load(b), load(&b[16..]));
        let (r, i) = match op {
            Sum => (add(ar, br), add(ai, bi)),
            Prod => (sub(mul(ar, br), mul(ai, bi)), add(mul(ar, bi), mul(ai, br))),
            _ => unreachable!("{op:?} on MPI_COMPLEX32"),
        };
        b[..16].copy_from_slice(&r.to_le_bytes());
        b[16..].copy_from_slice(&i.to_le_bytes());
    }
}

/// Compares two packed values of a basic kind.
fn compare(kind: BasicKind, a: &[u8], b: &[u8]) -> Option<Ordering> {
    match kind {
        Int16 => i16::load(a).partial_cmp(&i16::load(b)),
        Int32 => i32::load(a).partial_cmp(&i32::load(b)),
        Int64 => i64::load(a).partial_cmp(&i64::load(b)),
        Float32 => f32::load(a).partial_cmp(&f32::load(b)),
        Float64 => f64::load(a).partial_cmp(&f64::load(b)),
        LongDouble => extended::x87_cmp(a, b),
        _ => unreachable!("{kind:?} is not the part of a pair type"),
    }
}

/// MINLOC / MAXLOC on (value, index) pairs: the larger (smaller) value
/// wins; on a tie, the lower index (MPI 4.1 §6.9.4).
fn locate(maximum: bool, kind: BasicKind, input: &[u8], inout: &mut [u8]) {
    let (value_kind, index_kind) = kind.pair_parts().expect("a pair type");
    let value_size = value_kind.size();
    let wanted = if maximum {
        Ordering::Greater
    } else {
        Ordering::Less
    };
    for (a, b) in input
        .chunks_exact(kind.size())
        .zip(inout.chunks_exact_mut(kind.size()))
    {
        let (a_value, a_index) = a.split_at(value_size);
        match compare(value_kind, a_value, &b[..value_size]) {
            Some(o) if o == wanted => b.copy_from_slice(a),
            Some(Ordering::Equal)
                if compare(index_kind, a_index, &b[value_size..]) == Some(Ordering::Less) =>
            {
                b[value_size..].copy_from_slice(a_index)
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes<T: Scalar>(v: &[T]) -> Vec<u8> {
        let mut out = vec![0u8; v.len() * T::SIZE];
        for (x, b) in v.iter().zip(out.chunks_exact_mut(T::SIZE)) {
            x.store(b);
        }
        out
    }

    fn values<T: Scalar>(b: &[u8]) -> Vec<T> {
        b.chunks_exact(T::SIZE).map(T::load).collect()
    }

    fn run<T: Scalar>(op: BuiltinOp, kind: BasicKind, a: &[T], b: &[T]) -> Vec<T> {
        let input = bytes(a);
        let mut inout = bytes(b);
        assert!(supports(op, kind), "{op:?} on {kind:?}");
        apply(op, kind, &input, &mut inout);
        values(&inout)
    }

    #[test]
    fn integer_operations() {
        let a = [3i32, -7, 0, 12];
        let b = [5i32, -9, 4, 0];
        assert_eq!(run(Max, Int32, &a, &b), [5, -7, 4, 12]);
        assert_eq!(run(Min, Int32, &a, &b), [3, -9, 0, 0]);
        assert_eq!(run(Sum, Int32, &a, &b), [8, -16, 4, 12]);
        assert_eq!(run(Prod, Int32, &a, &b), [15, 63, 0, 0]);
        assert_eq!(run(Land, Int32, &a, &b), [1, 1, 0, 0]);
        assert_eq!(run(Lor, Int32, &a, &b), [1, 1, 1, 1]);
        assert_eq!(run(Lxor, Int32, &a, &b), [0, 0, 1, 1]);
        assert_eq!(run(Band, Int32, &a, &b), [3 & 5, -7 & -9, 0, 0]);
        assert_eq!(run(Bxor, Uint8, &[0xf0u8], &[0x3cu8]), [0xcc]);
        assert_eq!(run(Sum, Uint8, &[200u8], &[100u8]), [44], "wraps");
        assert_eq!(
            run(Max, Uint64, &[u64::MAX], &[1u64]),
            [u64::MAX],
            "unsigned order"
        );
    }

    #[test]
    fn floating_and_complex_operations() {
        assert_eq!(
            run(Sum, Float64, &[1.5f64, 2.0], &[0.25f64, -2.0]),
            [1.75, 0.0]
        );
        assert_eq!(
            run(Max, Float32, &[1.5f32, -3.0], &[0.25f32, -2.0]),
            [1.5, -2.0]
        );
        // (1 + 2i)(3 + 4i) = -5 + 10i
        assert_eq!(
            run(Prod, ComplexDouble, &[1.0f64, 2.0], &[3.0f64, 4.0]),
            [-5.0, 10.0]
        );
        assert_eq!(
            run(Sum, ComplexFloat, &[1.0f32, 2.0], &[3.0f32, 4.0]),
            [4.0, 6.0]
        );
        let one = extended::f64_to_f16(1.0);
        let half = extended::f64_to_f16(0.5);
        assert_eq!(
            run(Sum, Float16, &[one], &[half]),
            [extended::f64_to_f16(1.5)]
        );
    }

    #[test]
    fn logical_operations_on_addresses_and_floating_point() {
        assert_eq!(run(Lor, Aint, &[0i64, 0, 5], &[0i64, -3, 0]), [0, 1, 1]);
        assert_eq!(run(Lxor, Count, &[7i64, 7], &[0i64, 1]), [1, 0]);
        assert_eq!(
            run(Land, Float64, &[0.5f64, 0.0, -2.0], &[3.0f64, 1.0, 0.0]),
            [1.0, 0.0, 0.0]
        );
        assert_eq!(
            run(Lxor, Float32, &[0.5f32, 0.0], &[0.0f32, 0.0]),
            [1.0, 0.0]
        );
        let (one, zero) = (extended::f64_to_f16(1.0), extended::f64_to_f16(0.0));
        assert_eq!(run(Lor, Float16, &[zero, zero], &[one, zero]), [one, zero]);
        // Long doubles: 16-byte slots, the value in the first 10 bytes, the
        // padding of inout kept. -0.0 is zero; a denormal is not.
        let slot = |v: [u8; X87_BYTES], pad: u8| {
            let mut s = [pad; 16];
            s[..X87_BYTES].copy_from_slice(&v);
            s
        };
        let mut neg_zero = X87_ZERO;
        neg_zero[9] = 0x80;
        let mut denormal = X87_ZERO;
        denormal[0] = 1;
        let input = [slot(X87_ONE, 0), slot(neg_zero, 0), slot(denormal, 0)].concat();
        let mut inout = [slot(X87_ONE, 9), slot(X87_ONE, 9), slot(neg_zero, 9)].concat();
        apply(Land, LongDouble, &input, &mut inout);
        assert_eq!(
            inout,
            [slot(X87_ONE, 9), slot(X87_ZERO, 9), slot(X87_ZERO, 9)].concat()
        );
    }

    #[test]
    fn operations_follow_the_standard_type_table() {
        assert!(!supports(Sum, Bool));
        assert!(supports(Land, Float64), "as MPICH");
        assert!(!supports(Land, ComplexDouble));
        assert!(!supports(Lor, Float128));
        assert!(!supports(Max, ComplexDouble));
        assert!(supports(Prod, ComplexDouble));
        assert!(!supports(Band, Float32));
        assert!(supports(Bor, Byte));
        assert!(!supports(Sum, Byte));
        assert!(supports(Land, Aint), "integer types in MPI 4.1");
        assert!(supports(Band, Count));
        assert!(!supports(Minloc, Int32));
        assert!(supports(Maxloc, DoubleInt));
        assert!(supports(Sum, Float128));
        assert!(supports(Prod, ComplexFloat128));
        assert!(supports(Max, Float128));
        assert!(!supports(Max, ComplexFloat128));
        assert!(!supports(Max, Wchar));
        assert!(supports(Replace, Wchar));
    }

    /// Expected binary128 bit patterns computed once with gcc's
    /// `__float128` on x86_64 (soft-fp `__addtf3`/`__multf3`, round to
    /// nearest-even): a C program doing the same operation on the same
    /// bits and printing the result's 128 bits in hex.
    #[test]
    fn binary128_sum_and_prod_match_gcc() {
        const ONE: u128 = 0x3fff_0000_0000_0000_0000_0000_0000_0000;
        const TWO: u128 = 0x4000_0000_0000_0000_0000_0000_0000_0000;
        const THREE: u128 = 0x4000_8000_0000_0000_0000_0000_0000_0000;
        const TENTH: u128 = 0x3ffb_9999_9999_9999_9999_9999_9999_999a; // 0.1Q
        const FIFTH: u128 = 0x3ffc_9999_9999_9999_9999_9999_9999_999a; // 0.2Q
        const THIRD: u128 = 0x3ffd_5555_5555_5555_5555_5555_5555_5555; // 1.0Q/3
        const ULP: u128 = (16383 - 112) << 112; // 2^-112, 1's last place
        const HALF_ULP: u128 = (16383 - 113) << 112;
        const MAX: u128 = 0x7ffe_ffff_ffff_ffff_ffff_ffff_ffff_ffff;
        const MIN_NORMAL: u128 = 1 << 112;
        const MIN_THIRD: u128 = 0x00005555_55555555_55555555_55555555;
        const HALF: u128 = 0x3ffe << 112;
        const INF: u128 = 0x7fff << 112;
        const NEG: u128 = 1 << 127;
        const ZERO: u128 = 0;
        let quad = |op, a: u128, b: u128| -> u128 {
            let mut inout = b.to_le_bytes();
            assert!(supports(op, Float128));
            apply(op, Float128, &a.to_le_bytes(), &mut inout);
            u128::from_le_bytes(inout)
        };
        let cases = [
            (Sum, TENTH, FIFTH, 0x3ffd3333_33333333_33333333_33333334),
            (Prod, TENTH, THREE, 0x3ffd3333_33333333_33333333_33333334),
            (Prod, THIRD, THIRD, 0x3ffbc71c_71c71c71_c71c71c7_1c71c71c),
            (Sum, THIRD, TENTH, 0x3ffdbbbb_bbbbbbbb_bbbbbbbb_bbbbbbbc),
            // Ties: 1 + 2^-113 rounds down to even 1, (1 + 2^-112) + 2^-113
            // up to even 1 + 2^-111.
            (Sum, ONE, HALF_ULP, ONE),
            (Sum, ONE + 1, HALF_ULP, ONE + 2),
            (Sum, ONE, ULP, ONE + 1),
            (Prod, MAX, TWO, INF),
            (Sum, MAX, MAX, INF),
            // Results below the normal range (subnormals).
            (Prod, MIN_NORMAL, HALF, 1 << 111),
            (Prod, MIN_NORMAL, THIRD, MIN_THIRD),
            (Sum, INF, ONE, INF),
            (Prod, NEG | INF, THREE, NEG | INF),
            (Sum, NEG | ZERO, NEG | ZERO, NEG | ZERO),
            (Sum, NEG | ZERO, ZERO, ZERO),
            (Prod, NEG | ZERO, THREE, NEG | ZERO),
            (Prod, NEG | ONE, NEG | ZERO, ZERO),
            (Sum, ONE, NEG | ONE, ZERO),
        ];
        for (op, a, b, expected) in cases {
            assert_eq!(quad(op, a, b), expected, "{op:?} {a:#034x} {b:#034x}");
            assert_eq!(quad(op, b, a), expected, "{op:?} {b:#034x} {a:#034x}");
        }
        let is_nan = |v: u128| v & !NEG > INF;
        // gcc gives 0xffff8000...0 (x86's default NaN); any NaN is right.
        assert!(is_nan(quad(Sum, INF, NEG | INF)));
        assert!(is_nan(quad(Prod, INF, ZERO)));
        let nan = INF | (1 << 111) | 5;
        assert!(is_nan(quad(Sum, nan, ONE)));
        assert!(is_nan(quad(Prod, ONE, nan)));
        // MAX and MIN still work, and keep inout on a NaN.
        assert_eq!(quad(Max, THIRD, TENTH), THIRD);
        assert_eq!(quad(Min, THIRD, TENTH), TENTH);
        assert_eq!(quad(Max, nan, ONE), ONE);

        // MPI_COMPLEX32: (1 + 2i)(3 + 4i) = -5 + 10i, and
        // (0.1 + i/3)(3 + 0.2i) = (0.1*3 - (1/3)*0.2) + (0.1*0.2 + (1/3)*3)i
        // with each step rounded, as gcc gives for the same expression.
        let complex = |op, a: [u128; 2], b: [u128; 2]| -> [u128; 2] {
            let bytes = |v: [u128; 2]| [v[0].to_le_bytes(), v[1].to_le_bytes()].concat();
            let mut inout = bytes(b);
            assert!(supports(op, ComplexFloat128));
            apply(op, ComplexFloat128, &bytes(a), &mut inout);
            [
                u128::from_le_bytes(inout[..16].try_into().unwrap()),
                u128::from_le_bytes(inout[16..].try_into().unwrap()),
            ]
        };
        const FOUR: u128 = 0x4001 << 112;
        const FIVE: u128 = 0x4001_4000 << 96;
        const TEN: u128 = 0x4002_4000 << 96;
        assert_eq!(complex(Prod, [ONE, TWO], [THREE, FOUR]), [NEG | FIVE, TEN]);
        assert_eq!(complex(Sum, [ONE, TWO], [THREE, NEG | TWO]), [FOUR, ZERO]);
        assert_eq!(
            complex(Prod, [TENTH, THIRD], [THREE, FIFTH]),
            [
                0x3ffc_dddd_dddd_dddd_dddd_dddd_dddd_dde0,
                0x3fff_051e_b851_eb85_1eb8_51eb_851e_b852
            ]
        );
        assert_eq!(
            complex(Sum, [NEG | ZERO, ZERO], [NEG | ZERO, NEG | ZERO]),
            [NEG | ZERO, ZERO]
        );
    }

    #[test]
    fn minloc_and_maxloc_take_the_lower_index_on_ties() {
        // MPI_2INT: (value, index)
        let a = [5i32, 3, 7, 1, 2, 9];
        let b = [5i32, 1, 4, 0, 8, 2];
        assert_eq!(run(Maxloc, TwoInt, &a, &b), [5, 1, 7, 1, 8, 2]);
        assert_eq!(run(Minloc, TwoInt, &a, &b), [5, 1, 4, 0, 2, 9]);
        // MPI_DOUBLE_INT packs 8 + 4 bytes.
        let mut input = Vec::new();
        input.extend_from_slice(&2.5f64.to_ne_bytes());
        input.extend_from_slice(&4i32.to_ne_bytes());
        let mut inout = Vec::new();
        inout.extend_from_slice(&2.5f64.to_ne_bytes());
        inout.extend_from_slice(&6i32.to_ne_bytes());
        apply(Minloc, DoubleInt, &input, &mut inout);
        assert_eq!(inout, input);
        // MPI_SHORT_INT packs 2 + 4 bytes.
        let mut input = Vec::new();
        input.extend_from_slice(&(-3i16).to_ne_bytes());
        input.extend_from_slice(&8i32.to_ne_bytes());
        let mut inout = Vec::new();
        inout.extend_from_slice(&1i16.to_ne_bytes());
        inout.extend_from_slice(&2i32.to_ne_bytes());
        let expected = inout.clone();
        apply(Maxloc, ShortInt, &input, &mut inout);
        assert_eq!(inout, expected);
        apply(Minloc, ShortInt, &input, &mut inout);
        assert_eq!(inout, input);
    }
}
