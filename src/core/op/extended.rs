//! Floating-point formats Rust has no stable type for: IEEE binary16
//! (`MPIX_C_FLOAT16`), x87 80-bit extended precision (`MPI_LONG_DOUBLE`,
//! stored in 16 bytes, the value in the first 10) and IEEE binary128
//! (`MPI_REAL16`). Values travel as little-endian bytes.
//!
//! - binary16 arithmetic is done in `f64`, where the sum or product of two
//!   binary16 values is exact, then rounded once to nearest-even, so the
//!   result is the correctly rounded one C's `_Float16` gives.
//! - x87 sums and products use the x87 unit itself (`fadd`/`fmul` in the
//!   default extended precision of the Linux x86_64 ABI), so they match C's
//!   `long double` bit for bit; comparisons are done on the encoding.
//! - binary128 values are compared (MAX, MIN) on their encoding, and added
//!   and multiplied in software with `rustc_apfloat` (the port of LLVM's
//!   APFloat that rustc uses to fold `f128` constants): correctly rounded
//!   to nearest-even, with IEEE infinities, NaNs, signed zeros and
//!   subnormals, so results match C's `__float128` bit for bit (except the
//!   sign and payload of a NaN made from non-NaN operands, which IEEE
//!   leaves open: x86 gives a negative quiet NaN, this a positive one).
use std::cmp::Ordering;

use rustc_apfloat::ieee::Quad;
use rustc_apfloat::Float;

// ---- binary16 ----

pub fn f16_to_f64(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exponent = ((h >> 10) & 0x1f) as i32;
    let fraction = (h & 0x3ff) as f64;
    match exponent {
        0 => sign * fraction * 2f64.powi(-24),
        31 if fraction == 0.0 => sign * f64::INFINITY,
        31 => f64::NAN,
        _ => sign * (1024.0 + fraction) * 2f64.powi(exponent - 25),
    }
}

/// Rounds to the nearest binary16 value (ties to even).
pub fn f64_to_f16(x: f64) -> u16 {
    let sign = ((x.to_bits() >> 48) & 0x8000) as u16;
    if x.is_nan() {
        return 0x7e00;
    }
    let a = x.abs();
    // Half-way between the largest finite value (65504) and 65536 rounds
    // to infinity (65504 has an odd significand).
    if a >= 65520.0 {
        return sign | 0x7c00;
    }
    if a < 2f64.powi(-14) {
        // Subnormal (or zero): units of 2^-24; 1024 units is the smallest
        // normal number, whose encoding is the same integer.
        return sign | (a * 2f64.powi(24)).round_ties_even() as u16;
    }
    let mut e = ((a.to_bits() >> 52) & 0x7ff) as i32 - 1023;
    let mut m = (a * 2f64.powi(10 - e)).round_ties_even() as u32;
    if m == 2048 {
        m = 1024;
        e += 1;
    }
    if e > 15 {
        return sign | 0x7c00;
    }
    sign | (((e + 15) as u16) << 10) | (m - 1024) as u16
}

// ---- x87 extended precision ----

/// Bytes of an x87 value (the rest of its 16-byte slot is padding).
pub const X87_BYTES: usize = 10;

/// Orders two x87 values by their encoding: `None` when one is a NaN.
pub fn x87_cmp(a: &[u8], b: &[u8]) -> Option<Ordering> {
    fn decode(v: &[u8]) -> (bool, u16, u64) {
        let mantissa = u64::from_le_bytes(v[..8].try_into().expect("8 bytes"));
        let se = u16::from_le_bytes(v[8..10].try_into().expect("2 bytes"));
        (se & 0x8000 != 0, se & 0x7fff, mantissa)
    }
    let (sa, ea, ma) = decode(a);
    let (sb, eb, mb) = decode(b);
    let is_nan = |e: u16, m: u64| e == 0x7fff && m << 1 != 0;
    if is_nan(ea, ma) || is_nan(eb, mb) {
        return None;
    }
    let zero = |e: u16, m: u64| e == 0 && m == 0;
    if zero(ea, ma) && zero(eb, mb) {
        return Some(Ordering::Equal);
    }
    let magnitude = (ea, ma).cmp(&(eb, mb));
    Some(match (sa, sb) {
        (false, false) => magnitude,
        (true, true) => magnitude.reverse(),
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
    })
}

#[derive(Clone, Copy)]
pub enum X87Op {
    Add,
    Mul,
}

/// `a op b` in x87 extended precision (`None` on machines without x87).
pub fn x87_arith(op: X87Op, a: &[u8], b: &[u8]) -> Option<[u8; X87_BYTES]> {
    let a: [u8; X87_BYTES] = a[..X87_BYTES].try_into().expect("10 bytes");
    let b: [u8; X87_BYTES] = b[..X87_BYTES].try_into().expect("10 bytes");
    x87_arith_impl(op, &a, &b)
}

#[cfg(target_arch = "x86_64")]
fn x87_arith_impl(op: X87Op, a: &[u8; X87_BYTES], b: &[u8; X87_BYTES]) -> Option<[u8; X87_BYTES]> {
    let mut out = [0u8; X87_BYTES];
    // SAFETY: each instruction reads or writes exactly 10 bytes at a pointer
    // to a 10-byte array; the x87 stack is left as it was found (two loads,
    // two pops), as the ABI requires, and every x87 register it touches is
    // declared clobbered.
    unsafe {
        match op {
            X87Op::Add => std::arch::asm!(
                "fld tbyte ptr [{a}]",
                "fld tbyte ptr [{b}]",
                "faddp st(1), st",
                "fstp tbyte ptr [{out}]",
                a = in(reg) a.as_ptr(),
                b = in(reg) b.as_ptr(),
                out = in(reg) out.as_mut_ptr(),
                out("st(0)") _,
                out("st(1)") _,
                options(nostack),
            ),
            X87Op::Mul => std::arch::asm!(
                "fld tbyte ptr [{a}]",
                "fld tbyte ptr [{b}]",
                "fmulp st(1), st",
                "fstp tbyte ptr [{out}]",
                a = in(reg) a.as_ptr(),
                b = in(reg) b.as_ptr(),
                out = in(reg) out.as_mut_ptr(),
                out("st(0)") _,
                out("st(1)") _,
                options(nostack),
            ),
        }
    }
    Some(out)
}

#[cfg(not(target_arch = "x86_64"))]
fn x87_arith_impl(_: X87Op, _: &[u8; X87_BYTES], _: &[u8; X87_BYTES]) -> Option<[u8; X87_BYTES]> {
    None
}

/// Whether x87 arithmetic is available (SUM/PROD on `MPI_LONG_DOUBLE`).
pub fn x87_available() -> bool {
    cfg!(target_arch = "x86_64")
}

/// `-v` of an x87 value (the sign is the top bit of byte 9).
pub fn x87_neg(v: &[u8]) -> [u8; X87_BYTES] {
    let mut out: [u8; X87_BYTES] = v[..X87_BYTES].try_into().expect("10 bytes");
    out[9] ^= 0x80;
    out
}

// ---- binary128 ----

/// Orders two binary128 values by their encoding: `None` when one is a NaN.
pub fn f128_cmp(a: &[u8], b: &[u8]) -> Option<Ordering> {
    let a = u128::from_le_bytes(a[..16].try_into().expect("16 bytes"));
    let b = u128::from_le_bytes(b[..16].try_into().expect("16 bytes"));
    let magnitude_mask = !(1u128 << 127);
    let nan = |v: u128| v & magnitude_mask > 0x7fff << 112;
    if nan(a) || nan(b) {
        return None;
    }
    let (ma, mb) = (a & magnitude_mask, b & magnitude_mask);
    if ma == 0 && mb == 0 {
        return Some(Ordering::Equal);
    }
    Some(match (a >> 127 != 0, b >> 127 != 0) {
        (false, false) => ma.cmp(&mb),
        (true, true) => mb.cmp(&ma),
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
    })
}

/// A binary128 value from 16 little-endian bytes.
pub fn f128_load(v: &[u8]) -> u128 {
    u128::from_le_bytes(v[..16].try_into().expect("16 bytes"))
}

/// `a + b` in binary128 (bit patterns), rounded to nearest-even.
pub fn f128_add(a: u128, b: u128) -> u128 {
    (Quad::from_bits(a) + Quad::from_bits(b)).value.to_bits()
}

/// `a - b` in binary128 (bit patterns), rounded to nearest-even.
pub fn f128_sub(a: u128, b: u128) -> u128 {
    (Quad::from_bits(a) - Quad::from_bits(b)).value.to_bits()
}

/// `a * b` in binary128 (bit patterns), rounded to nearest-even.
pub fn f128_mul(a: u128, b: u128) -> u128 {
    (Quad::from_bits(a) * Quad::from_bits(b)).value.to_bits()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An x87 value from an f64 (exact: f64 fits in the x87 format).
    fn x87(v: f64) -> [u8; 16] {
        let mut out = [0u8; 16];
        if v == 0.0 {
            out[9] = if v.is_sign_negative() { 0x80 } else { 0 };
            return out;
        }
        let bits = v.to_bits();
        let sign = (bits >> 63) as u16;
        let e = ((bits >> 52) & 0x7ff) as i32 - 1023;
        let mantissa = ((bits & ((1 << 52) - 1)) | (1 << 52)) << 11;
        out[..8].copy_from_slice(&mantissa.to_le_bytes());
        out[8..10].copy_from_slice(&((sign << 15) | (e + 16383) as u16).to_le_bytes());
        out
    }

    #[test]
    fn f16_round_trips_and_rounds_to_nearest_even() {
        for h in 0u16..=0xffff {
            let v = f16_to_f64(h);
            if v.is_nan() {
                continue;
            }
            assert_eq!(f64_to_f16(v), h, "{h:#06x} ({v})");
        }
        assert_eq!(f64_to_f16(1.0 + 2f64.powi(-11)), 0x3c00, "tie goes to even");
        assert_eq!(
            f64_to_f16(1.0 + 3.0 * 2f64.powi(-11)),
            0x3c02,
            "tie goes to even"
        );
        assert_eq!(f64_to_f16(65519.0), 0x7bff);
        assert_eq!(f64_to_f16(65520.0), 0x7c00);
        assert_eq!(f64_to_f16(2f64.powi(-25)), 0, "half the smallest subnormal");
        assert_eq!(
            f64_to_f16(2f64.powi(-14) - 2f64.powi(-25)),
            0x0400,
            "rounds up to the smallest normal"
        );
    }

    #[test]
    fn x87_arithmetic_and_order() {
        if !x87_available() {
            return;
        }
        let sum = x87_arith(X87Op::Add, &x87(1.5), &x87(2.25)).unwrap();
        assert_eq!(&sum[..], &x87(3.75)[..10]);
        let product = x87_arith(X87Op::Mul, &x87(-3.0), &x87(0.5)).unwrap();
        assert_eq!(&product[..], &x87(-1.5)[..10]);
        let difference = x87_arith(X87Op::Add, &x87(1.0), &x87_neg(&x87(4.0))).unwrap();
        assert_eq!(&difference[..], &x87(-3.0)[..10]);
        // 1 + 2^-60 is exact in x87 (64-bit significand) but not in f64.
        let tiny = x87_arith(X87Op::Add, &x87(1.0), &x87(2f64.powi(-60))).unwrap();
        assert_ne!(&tiny[..], &x87(1.0)[..10]);
        let values = [-1e300, -2.0, -0.0, 0.0, 1e-310, 3.0, 1e300];
        for (i, &a) in values.iter().enumerate() {
            for (j, &b) in values.iter().enumerate() {
                let expected = a.partial_cmp(&b);
                assert_eq!(x87_cmp(&x87(a), &x87(b)), expected, "{a} vs {b} ({i}, {j})");
            }
        }
    }

    #[test]
    fn f128_order() {
        let f = |v: f64| -> [u8; 16] {
            // binary128 from an f64: same sign, rebiased exponent, mantissa
            // shifted up (normal values only).
            let bits = v.to_bits() as u128;
            if v == 0.0 {
                return ((bits >> 63) << 127).to_le_bytes();
            }
            let e = ((bits >> 52) & 0x7ff) as i128 - 1023 + 16383;
            let m = (bits & ((1 << 52) - 1)) << 60;
            (((bits >> 63) << 127) | ((e as u128) << 112) | m).to_le_bytes()
        };
        let values = [-5.0, -1.0, -0.0, 0.0, 0.5, 7.0];
        for &a in &values {
            for &b in &values {
                assert_eq!(f128_cmp(&f(a), &f(b)), a.partial_cmp(&b), "{a} vs {b}");
            }
        }
        let nan = (0x7fffu128 << 112 | 1).to_le_bytes();
        assert_eq!(f128_cmp(&nan, &f(1.0)), None);
    }
}
