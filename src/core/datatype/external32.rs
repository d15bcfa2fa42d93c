//! The "external32" data representation (`MPI_Pack_external`): every value
//! big-endian, with the sizes of the MPI standard's table (`MPI_LONG` and
//! `MPI_UNSIGNED_LONG` 4 bytes, `MPI_WCHAR` 2, `long double` as IEEE
//! binary128), so a packed buffer means the same on any machine.
//!
//! Packing goes native-packed first (the streaming pack), then converts
//! value by value along the signature; unpacking the other way round.
use super::builtin::{self, PrimId};
use super::Datatype;
use crate::core::error::MpiResult;
use crate::mpi_abi::constants::*;

/// How one native field becomes its external form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Field {
    /// Same size, byte order reversed (a 1-byte field is copied).
    Swap(usize),
    /// An integer narrowed on the way out, widened back on the way in.
    Narrow {
        native: usize,
        external: usize,
        signed: bool,
    },
    /// x87 80-bit extended (16 bytes native) to IEEE binary128.
    X87,
}

impl Field {
    fn native(self) -> usize {
        match self {
            Field::Swap(n) => n,
            Field::Narrow { native, .. } => native,
            Field::X87 => 16,
        }
    }

    fn external(self) -> usize {
        match self {
            Field::Swap(n) => n,
            Field::Narrow { external, .. } => external,
            Field::X87 => 16,
        }
    }
}

const LONG: Field = Field::Narrow {
    native: 8,
    external: 4,
    signed: true,
};

/// The fields of one value of a predefined type, in packed order.
fn fields(id: PrimId) -> &'static [Field] {
    use Field::*;
    let b = builtin::by_id(id);
    match b.handle {
        MPI_LB | MPI_UB => &[],
        MPI_WCHAR => &[Narrow {
            native: 4,
            external: 2,
            signed: false,
        }],
        MPI_LONG => &[LONG],
        MPI_UNSIGNED_LONG => &[Narrow {
            native: 8,
            external: 4,
            signed: false,
        }],
        MPI_LONG_INT => &[LONG, Swap(4)],
        MPI_LONG_DOUBLE => &[X87],
        MPI_C_LONG_DOUBLE_COMPLEX | MPI_CXX_LONG_DOUBLE_COMPLEX => &[X87, X87],
        MPI_LONG_DOUBLE_INT => &[X87, Swap(4)],
        MPI_FLOAT_INT | MPI_2INT | MPI_2INTEGER | MPI_2REAL => &[Swap(4), Swap(4)],
        MPI_DOUBLE_INT => &[Swap(8), Swap(4)],
        MPI_SHORT_INT => &[Swap(2), Swap(4)],
        MPI_2DOUBLE_PRECISION => &[Swap(8), Swap(8)],
        _ => {
            // Plain values: complex numbers are two reals, the rest one.
            use super::BasicKind::*;
            match b.kind {
                Some(ComplexFloat) => &[Swap(4), Swap(4)],
                Some(ComplexDouble) => &[Swap(8), Swap(8)],
                Some(ComplexFloat128) => &[Swap(16), Swap(16)],
                _ => match b.size() {
                    1 => &[Swap(1)],
                    2 => &[Swap(2)],
                    4 => &[Swap(4)],
                    8 => &[Swap(8)],
                    _ => &[Swap(16)],
                },
            }
        }
    }
}

impl Datatype {
    /// Bytes of `count` elements in external32.
    pub fn external32_size(&self, count: usize) -> MpiResult<usize> {
        self.size_in(count, &mut |id| Ok(value_size(id)))
    }

    /// Packs `count` elements at `buf` in external32 into `out`, which
    /// must hold [`Datatype::external32_size`] bytes; returns that size.
    ///
    /// # Safety
    /// As [`Datatype::pack_range`].
    pub unsafe fn pack_external32(&self, buf: *const u8, count: usize, out: &mut [u8]) -> usize {
        let mut native = vec![0u8; self.size() * count];
        // SAFETY: forwarded from the caller.
        unsafe { self.pack_range(buf, count, 0, &mut native) };
        self.native_to_external32(count, &native, out)
    }

    /// Converts the packed native form of `count` elements (`native`,
    /// [`Datatype::size`] times `count` bytes) to external32 in `out`
    /// ([`Datatype::external32_size`] bytes); returns that size.
    pub fn native_to_external32(&self, count: usize, native: &[u8], out: &mut [u8]) -> usize {
        let (mut from, mut to) = (0, 0);
        for _ in 0..count {
            self.signature().for_each_value(&mut |id, n| {
                for _ in 0..n {
                    for &f in fields(id) {
                        encode(
                            f,
                            &native[from..from + f.native()],
                            &mut out[to..to + f.external()],
                        );
                        from += f.native();
                        to += f.external();
                    }
                }
            });
        }
        to
    }

    /// Unpacks `count` elements from external32 `input` (at least
    /// [`Datatype::external32_size`] bytes) into `buf`; returns the bytes
    /// read.
    ///
    /// # Safety
    /// As [`Datatype::unpack_range`].
    pub unsafe fn unpack_external32(&self, buf: *mut u8, count: usize, input: &[u8]) -> usize {
        let mut native = vec![0u8; self.size() * count];
        let (from, _) = self.external32_to_native(count, input, &mut native);
        // SAFETY: forwarded from the caller.
        unsafe { self.unpack_range(buf, count, 0, &native) };
        from
    }

    /// Converts `count` elements from external32 `input` to their packed
    /// native form in `native`; returns the external32 bytes read and the
    /// native bytes written. A short `input` (the end of a file) stops the
    /// conversion before the first value it does not hold whole.
    pub fn external32_to_native(
        &self,
        count: usize,
        input: &[u8],
        native: &mut [u8],
    ) -> (usize, usize) {
        let (mut from, mut to) = (0, 0);
        let mut short = false;
        for _ in 0..count {
            self.signature().for_each_value(&mut |id, n| {
                let fields = fields(id);
                let whole: usize = fields.iter().map(|f| f.external()).sum();
                for _ in 0..n {
                    if short || from + whole > input.len() {
                        short = true;
                        return;
                    }
                    for &f in fields {
                        decode(
                            f,
                            &input[from..from + f.external()],
                            &mut native[to..to + f.native()],
                        );
                        from += f.external();
                        to += f.native();
                    }
                }
            });
            if short {
                break;
            }
        }
        (from, to)
    }
}

/// Bytes of one value of a predefined type in external32.
pub fn value_size(id: PrimId) -> usize {
    fields(id).iter().map(|f| f.external()).sum()
}

fn encode(f: Field, native: &[u8], out: &mut [u8]) {
    match f {
        Field::Swap(_) => {
            for (o, n) in out.iter_mut().zip(native.iter().rev()) {
                *o = *n;
            }
        }
        // Little-endian native: the low `external` bytes, reversed.
        Field::Narrow { external, .. } => {
            for (o, n) in out.iter_mut().zip(native[..external].iter().rev()) {
                *o = *n;
            }
        }
        Field::X87 => out.copy_from_slice(&x87_to_binary128(native).to_be_bytes()),
    }
}

fn decode(f: Field, input: &[u8], native: &mut [u8]) {
    match f {
        Field::Swap(_) => {
            for (n, i) in native.iter_mut().zip(input.iter().rev()) {
                *n = *i;
            }
        }
        Field::Narrow {
            external, signed, ..
        } => {
            let negative = signed && input[0] & 0x80 != 0;
            native.fill(if negative { 0xff } else { 0 });
            for (n, i) in native[..external].iter_mut().zip(input.iter().rev()) {
                *n = *i;
            }
        }
        Field::X87 => {
            let bits = u128::from_be_bytes(input.try_into().expect("16 bytes"));
            native.fill(0);
            native[..10].copy_from_slice(&binary128_to_x87(bits));
        }
    }
}

const FRACTION_BITS: u32 = 112;
const EXPONENT_MAX: u16 = 0x7fff;

/// x87 extended (little-endian: 64-bit significand with an explicit
/// integer bit, then sign and 15-bit exponent) to binary128 bits. Both
/// have the same exponent bias, so only the significand moves.
fn x87_to_binary128(x: &[u8]) -> u128 {
    let significand = u64::from_le_bytes(x[..8].try_into().expect("8 bytes"));
    let sign_exp = u16::from_le_bytes([x[8], x[9]]);
    let sign = (sign_exp >> 15) as u128;
    let mut exp = sign_exp & EXPONENT_MAX;
    let integer_bit = significand >> 63 != 0;
    let mut fraction = ((significand & !(1 << 63)) as u128) << (FRACTION_BITS - 63);
    if exp == 0 && integer_bit {
        exp = 1; // a pseudo-denormal is the smallest normal exponent
    } else if exp != 0 && exp != EXPONENT_MAX && !integer_bit {
        exp = EXPONENT_MAX; // an unnormal is invalid: a NaN
        fraction = 1 << (FRACTION_BITS - 1);
    }
    (sign << 127) | ((exp as u128) << FRACTION_BITS) | fraction
}

fn binary128_to_x87(bits: u128) -> [u8; 10] {
    let sign = (bits >> 127) as u16;
    let exp = ((bits >> FRACTION_BITS) as u16) & EXPONENT_MAX;
    let fraction = bits & ((1u128 << FRACTION_BITS) - 1);
    let mut significand = (fraction >> (FRACTION_BITS - 63)) as u64;
    if exp != 0 {
        significand |= 1 << 63;
    }
    if exp == EXPONENT_MAX && fraction != 0 && significand << 1 == 0 {
        significand |= 1 << 62; // keep a NaN a NaN
    }
    let mut out = [0u8; 10];
    out[..8].copy_from_slice(&significand.to_le_bytes());
    out[8..].copy_from_slice(&((sign << 15) | exp).to_le_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn x87_one_and_minus_two_become_binary128() {
        // 1.0: significand 0x8000...0, exponent 16383.
        let mut one = [0u8; 16];
        one[7] = 0x80;
        one[8..10].copy_from_slice(&16383u16.to_le_bytes());
        assert_eq!(
            x87_to_binary128(&one),
            0x3fff_0000_0000_0000_0000_0000_0000_0000
        );
        let mut two = one;
        two[8..10].copy_from_slice(&(0x8000u16 | 16384).to_le_bytes());
        let b = x87_to_binary128(&two);
        assert_eq!(b, 0xc000_0000_0000_0000_0000_0000_0000_0000);
        assert_eq!(binary128_to_x87(b), two[..10]);
        // A fraction survives the round trip.
        let mut third = one;
        third[..8].copy_from_slice(&0xaaaa_aaaa_aaaa_aaabu64.to_le_bytes());
        assert_eq!(binary128_to_x87(x87_to_binary128(&third)), third[..10]);
    }

    #[test]
    fn narrowed_integers_keep_their_sign() {
        let mut out = [0u8; 4];
        encode(LONG, &(-2i64).to_le_bytes(), &mut out);
        assert_eq!(out, [0xff, 0xff, 0xff, 0xfe]);
        let mut back = [0u8; 8];
        decode(LONG, &out, &mut back);
        assert_eq!(i64::from_le_bytes(back), -2);
        encode(LONG, &0x0102_0304_0506_0708i64.to_le_bytes(), &mut out);
        assert_eq!(out, [5, 6, 7, 8], "MPICH keeps the low bytes too");
    }
}
