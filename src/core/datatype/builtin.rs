//! The predefined datatypes: every builtin handle of the MPICH ABI (and the
//! five pair types, which MPICH encodes as DIRECT handles) with its name,
//! the kind of value it holds, and its C layout on x86_64 (size, extent,
//! alignment and the memory blocks of one element). The table is the one
//! source of these facts; `Datatype`s for the predefined handles are built
//! from it once, and signatures refer to its rows by index (`PrimId`).
use std::os::raw::c_int;
use std::sync::LazyLock;

use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::MPI_Datatype;

/// What one basic element holds: the key for reductions and conversions.
/// Pair kinds (`DoubleInt`...) are the MINLOC/MAXLOC value-index types; they
/// count as two basic elements (see [`BasicKind::element_sizes`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BasicKind {
    Int8,
    Int16,
    Int32,
    Int64,
    Uint8,
    Uint16,
    Uint32,
    Uint64,
    Float16,
    Float32,
    Float64,
    /// x87 80-bit extended precision, stored in 16 bytes.
    LongDouble,
    /// IEEE binary128 (Fortran `REAL*16` with gfortran).
    Float128,
    ComplexFloat,
    ComplexDouble,
    ComplexLongDouble,
    ComplexFloat128,
    /// C `_Bool` / C++ `bool` (one byte).
    Bool,
    /// Fortran `LOGICAL` (four bytes).
    Logical,
    /// C `char` and Fortran `CHARACTER`: characters, not integers.
    Char,
    Byte,
    Packed,
    Wchar,
    Aint,
    Offset,
    Count,
    FloatInt,
    DoubleInt,
    LongInt,
    ShortInt,
    LongDoubleInt,
    TwoInt,
    TwoReal,
    TwoDoublePrecision,
    TwoInteger,
}

impl BasicKind {
    /// Every kind, in declaration order: [`BasicKind::index`] is the
    /// position here (how a kind travels in an RMA request).
    pub const ALL: [BasicKind; 35] = {
        use BasicKind::*;
        [
            Int8,
            Int16,
            Int32,
            Int64,
            Uint8,
            Uint16,
            Uint32,
            Uint64,
            Float16,
            Float32,
            Float64,
            LongDouble,
            Float128,
            ComplexFloat,
            ComplexDouble,
            ComplexLongDouble,
            ComplexFloat128,
            Bool,
            Logical,
            Char,
            Byte,
            Packed,
            Wchar,
            Aint,
            Offset,
            Count,
            FloatInt,
            DoubleInt,
            LongInt,
            ShortInt,
            LongDoubleInt,
            TwoInt,
            TwoReal,
            TwoDoublePrecision,
            TwoInteger,
        ]
    };

    /// The kind's position in [`BasicKind::ALL`].
    pub fn index(self) -> u8 {
        self as u8
    }

    /// The kind at `index` of [`BasicKind::ALL`].
    pub fn from_index(index: u8) -> Option<BasicKind> {
        Self::ALL.get(usize::from(index)).copied()
    }

    /// Bytes of one value in the packed stream (a pair: both parts).
    pub fn size(self) -> usize {
        self.element_sizes().iter().sum()
    }

    /// The packed sizes of the basic elements one value consists of: one
    /// for plain kinds (a complex number is one element), two for pairs.
    pub fn element_sizes(self) -> &'static [usize] {
        use BasicKind::*;
        match self {
            Int8 | Uint8 | Bool | Char | Byte | Packed => &[1],
            Int16 | Uint16 | Float16 => &[2],
            Int32 | Uint32 | Float32 | Logical | Wchar => &[4],
            Int64 | Uint64 | Float64 | ComplexFloat | Aint | Offset | Count => &[8],
            LongDouble | Float128 | ComplexDouble => &[16],
            ComplexLongDouble | ComplexFloat128 => &[32],
            FloatInt | TwoInt | TwoReal | TwoInteger => &[4, 4],
            DoubleInt | LongInt => &[8, 4],
            ShortInt => &[2, 4],
            LongDoubleInt => &[16, 4],
            TwoDoublePrecision => &[8, 8],
        }
    }

    /// The two value kinds of a pair kind, or `None` for a plain kind.
    pub fn pair_parts(self) -> Option<(BasicKind, BasicKind)> {
        use BasicKind::*;
        match self {
            FloatInt => Some((Float32, Int32)),
            DoubleInt => Some((Float64, Int32)),
            LongInt => Some((Int64, Int32)),
            ShortInt => Some((Int16, Int32)),
            LongDoubleInt => Some((LongDouble, Int32)),
            TwoInt | TwoInteger => Some((Int32, Int32)),
            TwoReal => Some((Float32, Float32)),
            TwoDoublePrecision => Some((Float64, Float64)),
            _ => None,
        }
    }
}

/// Which bound an `MPI_LB` / `MPI_UB` marker sets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoundMarker {
    Lb,
    Ub,
}

/// Index of a row of [`BUILTINS`]; signatures are made of these.
pub type PrimId = u16;

/// One predefined datatype.
pub struct Builtin {
    pub handle: MPI_Datatype,
    pub name: &'static str,
    /// `None` for the `MPI_LB` / `MPI_UB` markers (no data).
    pub kind: Option<BasicKind>,
    pub extent: usize,
    pub align: usize,
    /// Memory blocks `(offset, length)` of one element, in stream order
    /// (one block, except `MPI_SHORT_INT`).
    pub blocks: &'static [(usize, usize)],
}

impl Builtin {
    pub fn size(&self) -> usize {
        self.blocks.iter().map(|b| b.1).sum()
    }

    pub fn marker(&self) -> Option<BoundMarker> {
        match self.handle {
            MPI_LB => Some(BoundMarker::Lb),
            MPI_UB => Some(BoundMarker::Ub),
            _ => None,
        }
    }
}

const fn row(
    handle: MPI_Datatype,
    name: &'static str,
    kind: BasicKind,
    size: usize,
    align: usize,
) -> Builtin {
    Builtin {
        handle,
        name,
        kind: Some(kind),
        extent: size,
        align,
        blocks: match size {
            1 => &[(0, 1)],
            2 => &[(0, 2)],
            4 => &[(0, 4)],
            8 => &[(0, 8)],
            16 => &[(0, 16)],
            _ => &[(0, 32)],
        },
    }
}

/// Every predefined datatype. Aliases (`MPI_LONG_LONG`, `MPI_C_COMPLEX`)
/// share a handle and appear once, under the name MPICH reports.
pub static BUILTINS: &[Builtin] = &{
    use BasicKind::*;
    [
        Builtin {
            handle: MPI_LB,
            name: "MPI_LB",
            kind: None,
            extent: 0,
            align: 1,
            blocks: &[],
        },
        Builtin {
            handle: MPI_UB,
            name: "MPI_UB",
            kind: None,
            extent: 0,
            align: 1,
            blocks: &[],
        },
        row(MPI_CHAR, "MPI_CHAR", Char, 1, 1),
        row(MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", Uint8, 1, 1),
        row(MPI_BYTE, "MPI_BYTE", Byte, 1, 1),
        row(MPI_PACKED, "MPI_PACKED", Packed, 1, 1),
        row(MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", Int8, 1, 1),
        row(MPI_CHARACTER, "MPI_CHARACTER", Char, 1, 1),
        row(MPI_INTEGER1, "MPI_INTEGER1", Int8, 1, 1),
        row(MPI_CXX_BOOL, "MPI_CXX_BOOL", Bool, 1, 1),
        row(MPI_INT8_T, "MPI_INT8_T", Int8, 1, 1),
        row(MPI_UINT8_T, "MPI_UINT8_T", Uint8, 1, 1),
        row(MPI_C_BOOL, "MPI_C_BOOL", Bool, 1, 1),
        row(MPI_SHORT, "MPI_SHORT", Int16, 2, 2),
        row(MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT", Uint16, 2, 2),
        row(MPI_INTEGER2, "MPI_INTEGER2", Int16, 2, 2),
        row(MPI_INT16_T, "MPI_INT16_T", Int16, 2, 2),
        row(MPI_UINT16_T, "MPI_UINT16_T", Uint16, 2, 2),
        row(MPIX_C_FLOAT16, "MPIX_C_FLOAT16", Float16, 2, 2),
        row(MPI_INT, "MPI_INT", Int32, 4, 4),
        row(MPI_UNSIGNED, "MPI_UNSIGNED", Uint32, 4, 4),
        row(MPI_FLOAT, "MPI_FLOAT", Float32, 4, 4),
        row(MPI_WCHAR, "MPI_WCHAR", Wchar, 4, 4),
        row(MPI_INTEGER, "MPI_INTEGER", Int32, 4, 4),
        row(MPI_REAL, "MPI_REAL", Float32, 4, 4),
        row(MPI_LOGICAL, "MPI_LOGICAL", Logical, 4, 4),
        row(MPI_REAL4, "MPI_REAL4", Float32, 4, 4),
        row(MPI_INTEGER4, "MPI_INTEGER4", Int32, 4, 4),
        row(MPI_INT32_T, "MPI_INT32_T", Int32, 4, 4),
        row(MPI_UINT32_T, "MPI_UINT32_T", Uint32, 4, 4),
        row(MPI_LONG, "MPI_LONG", Int64, 8, 8),
        row(MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", Uint64, 8, 8),
        row(MPI_LONG_LONG_INT, "MPI_LONG_LONG_INT", Int64, 8, 8),
        row(MPI_DOUBLE, "MPI_DOUBLE", Float64, 8, 8),
        row(MPI_2INT, "MPI_2INT", TwoInt, 8, 4),
        row(
            MPI_UNSIGNED_LONG_LONG,
            "MPI_UNSIGNED_LONG_LONG",
            Uint64,
            8,
            8,
        ),
        row(MPI_COMPLEX, "MPI_COMPLEX", ComplexFloat, 8, 4),
        row(MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION", Float64, 8, 8),
        row(MPI_2INTEGER, "MPI_2INTEGER", TwoInteger, 8, 4),
        row(MPI_2REAL, "MPI_2REAL", TwoReal, 8, 4),
        row(MPI_COMPLEX8, "MPI_COMPLEX8", ComplexFloat, 8, 4),
        row(MPI_REAL8, "MPI_REAL8", Float64, 8, 8),
        row(MPI_INTEGER8, "MPI_INTEGER8", Int64, 8, 8),
        row(
            MPI_CXX_FLOAT_COMPLEX,
            "MPI_CXX_FLOAT_COMPLEX",
            ComplexFloat,
            8,
            4,
        ),
        row(MPI_INT64_T, "MPI_INT64_T", Int64, 8, 8),
        row(MPI_UINT64_T, "MPI_UINT64_T", Uint64, 8, 8),
        row(MPI_C_FLOAT_COMPLEX, "MPI_C_COMPLEX", ComplexFloat, 8, 4),
        row(MPI_AINT, "MPI_AINT", Aint, 8, 8),
        row(MPI_OFFSET, "MPI_OFFSET", Offset, 8, 8),
        row(MPI_COUNT, "MPI_COUNT", Count, 8, 8),
        row(MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", LongDouble, 16, 16),
        row(
            MPI_DOUBLE_COMPLEX,
            "MPI_DOUBLE_COMPLEX",
            ComplexDouble,
            16,
            8,
        ),
        row(
            MPI_2DOUBLE_PRECISION,
            "MPI_2DOUBLE_PRECISION",
            TwoDoublePrecision,
            16,
            8,
        ),
        row(MPI_COMPLEX16, "MPI_COMPLEX16", ComplexDouble, 16, 8),
        row(MPI_REAL16, "MPI_REAL16", Float128, 16, 16),
        row(
            MPI_CXX_DOUBLE_COMPLEX,
            "MPI_CXX_DOUBLE_COMPLEX",
            ComplexDouble,
            16,
            8,
        ),
        row(
            MPI_C_DOUBLE_COMPLEX,
            "MPI_C_DOUBLE_COMPLEX",
            ComplexDouble,
            16,
            8,
        ),
        row(MPI_COMPLEX32, "MPI_COMPLEX32", ComplexFloat128, 32, 16),
        row(
            MPI_CXX_LONG_DOUBLE_COMPLEX,
            "MPI_CXX_LONG_DOUBLE_COMPLEX",
            ComplexLongDouble,
            32,
            16,
        ),
        row(
            MPI_C_LONG_DOUBLE_COMPLEX,
            "MPI_C_LONG_DOUBLE_COMPLEX",
            ComplexLongDouble,
            32,
            16,
        ),
        // The C pair types: `struct { T value; int index; }`.
        Builtin {
            handle: MPI_FLOAT_INT,
            name: "MPI_FLOAT_INT",
            kind: Some(FloatInt),
            extent: 8,
            align: 4,
            blocks: &[(0, 8)],
        },
        Builtin {
            handle: MPI_DOUBLE_INT,
            name: "MPI_DOUBLE_INT",
            kind: Some(DoubleInt),
            extent: 16,
            align: 8,
            blocks: &[(0, 12)],
        },
        Builtin {
            handle: MPI_LONG_INT,
            name: "MPI_LONG_INT",
            kind: Some(LongInt),
            extent: 16,
            align: 8,
            blocks: &[(0, 12)],
        },
        Builtin {
            handle: MPI_SHORT_INT,
            name: "MPI_SHORT_INT",
            kind: Some(ShortInt),
            extent: 8,
            align: 4,
            blocks: &[(0, 2), (4, 4)],
        },
        Builtin {
            handle: MPI_LONG_DOUBLE_INT,
            name: "MPI_LONG_DOUBLE_INT",
            kind: Some(LongDoubleInt),
            extent: 32,
            align: 16,
            blocks: &[(0, 20)],
        },
    ]
};

/// The pair types are DIRECT handles `0x8c00000N`, N = 0..=4; user
/// datatypes must not take these indexes.
pub const PAIR_HANDLE_COUNT: usize = 5;

/// Row ids by the low byte of a builtin handle (`0x4c00SSII`, II unique),
/// and the pair types after them by their DIRECT index; `NONE` elsewhere.
static BY_INDEX: LazyLock<[PrimId; 256 + PAIR_HANDLE_COUNT]> = LazyLock::new(|| {
    let mut table = [NONE; 256 + PAIR_HANDLE_COUNT];
    for (id, b) in BUILTINS.iter().enumerate() {
        table[slot(b.handle).expect("every row is a builtin or a pair handle")] = id as PrimId;
    }
    table
});
const NONE: PrimId = PrimId::MAX;

#[inline]
fn slot(handle: MPI_Datatype) -> Option<usize> {
    let h = handle as u32;
    if h & 0xffff_0000 == 0x4c00_0000 {
        return Some((h & 0xff) as usize);
    }
    let pair = h.wrapping_sub(MPI_FLOAT_INT as u32) as usize;
    (pair < PAIR_HANDLE_COUNT).then_some(256 + pair)
}

/// The row of a predefined handle (constant time: this is on the path of
/// every send and receive).
#[inline]
pub fn find(handle: MPI_Datatype) -> Option<(PrimId, &'static Builtin)> {
    let id = BY_INDEX[slot(handle)?];
    let b = BUILTINS.get(id as usize)?;
    (b.handle == handle).then_some((id, b))
}

pub fn by_id(id: PrimId) -> &'static Builtin {
    &BUILTINS[id as usize]
}

/// `MPI_Type_match_size`: the Fortran-sized type of a class and size, as
/// MPICH answers (`MPI_REAL8`, `MPI_INTEGER4`, `MPI_COMPLEX16`...).
pub fn match_size(typeclass: c_int, size: usize) -> Option<MPI_Datatype> {
    let table: &[(usize, MPI_Datatype)] = match typeclass {
        MPI_TYPECLASS_REAL => &[(4, MPI_REAL4), (8, MPI_REAL8), (16, MPI_REAL16)],
        MPI_TYPECLASS_INTEGER => &[
            (1, MPI_INTEGER1),
            (2, MPI_INTEGER2),
            (4, MPI_INTEGER4),
            (8, MPI_INTEGER8),
        ],
        MPI_TYPECLASS_COMPLEX => &[(8, MPI_COMPLEX8), (16, MPI_COMPLEX16), (32, MPI_COMPLEX32)],
        _ => return None,
    };
    table.iter().find(|(s, _)| *s == size).map(|(_, h)| *h)
}

/// The Fortran types `MPI_Type_create_f90_*` choose from, with the
/// decimal precision and exponent range each has (as Fortran's
/// `precision()` and `range()` report them): the first that has at least
/// the asked precision `p` and range `r` is the answer (`MPI_UNDEFINED`
/// asks nothing of that one), as `selected_int_kind` and
/// `selected_real_kind` choose.
const F90_INTEGERS: &[(c_int, MPI_Datatype)] = &[
    (2, MPI_INTEGER1),
    (4, MPI_INTEGER2),
    (9, MPI_INTEGER4),
    (18, MPI_INTEGER8),
];
/// (precision, range, real type, complex type).
const F90_REALS: &[(c_int, c_int, MPI_Datatype, MPI_Datatype)] = &[
    (6, 37, MPI_REAL4, MPI_COMPLEX8),
    (15, 307, MPI_REAL8, MPI_COMPLEX16),
    (33, 4931, MPI_REAL16, MPI_COMPLEX32),
];

/// `MPI_Type_create_f90_integer`: the smallest integer type with at least
/// `r` decimal digits.
pub fn f90_integer(r: c_int) -> Option<MPI_Datatype> {
    F90_INTEGERS
        .iter()
        .find(|(range, _)| r <= *range)
        .map(|(_, h)| *h)
}

/// `MPI_Type_create_f90_real` (`complex` false) or `_complex`: the
/// smallest type with precision `p` and range `r` (either may be
/// `MPI_UNDEFINED`, not both).
pub fn f90_real(p: c_int, r: c_int, complex: bool) -> Option<MPI_Datatype> {
    if p == MPI_UNDEFINED && r == MPI_UNDEFINED {
        return None;
    }
    let fits = |asked: c_int, has: c_int| asked == MPI_UNDEFINED || asked <= has;
    F90_REALS
        .iter()
        .find(|(precision, range, _, _)| fits(p, *precision) && fits(r, *range))
        .map(|(_, _, real, cplx)| if complex { *cplx } else { *real })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_comes_back_from_its_index() {
        for (i, kind) in BasicKind::ALL.iter().enumerate() {
            assert_eq!(usize::from(kind.index()), i, "{kind:?} is out of order");
            assert_eq!(BasicKind::from_index(kind.index()), Some(*kind));
        }
        assert_eq!(BasicKind::from_index(BasicKind::ALL.len() as u8), None);
    }

    #[test]
    fn f90_types_are_the_smallest_that_hold_the_asked_digits() {
        assert_eq!(f90_integer(1), Some(MPI_INTEGER1));
        assert_eq!(f90_integer(5), Some(MPI_INTEGER4));
        assert_eq!(f90_integer(18), Some(MPI_INTEGER8));
        assert_eq!(f90_integer(19), None);
        assert_eq!(f90_real(6, 37, false), Some(MPI_REAL4));
        assert_eq!(f90_real(7, MPI_UNDEFINED, false), Some(MPI_REAL8));
        assert_eq!(f90_real(MPI_UNDEFINED, 400, true), Some(MPI_COMPLEX32));
        assert_eq!(f90_real(6, 38, true), Some(MPI_COMPLEX16));
        assert_eq!(f90_real(34, 10, false), None);
        assert_eq!(f90_real(MPI_UNDEFINED, MPI_UNDEFINED, false), None);
    }

    #[test]
    fn every_builtin_handle_encodes_its_size() {
        for b in BUILTINS {
            if crate::core::handles::is_builtin(b.handle) {
                assert_eq!(
                    ((b.handle as u32 >> 8) & 0xff) as usize,
                    b.size(),
                    "{}",
                    b.name
                );
            }
            assert!(
                b.extent >= b.size() && b.extent % b.align == 0,
                "{}",
                b.name
            );
            if let Some(kind) = b.kind {
                assert_eq!(kind.size(), b.size(), "{}", b.name);
            }
        }
        let mut handles: Vec<_> = BUILTINS.iter().map(|b| b.handle).collect();
        handles.sort();
        handles.dedup();
        assert_eq!(handles.len(), BUILTINS.len(), "a handle appears twice");
    }

    #[test]
    fn pair_types_have_their_c_struct_layout() {
        let (_, d) = find(MPI_DOUBLE_INT).unwrap();
        assert_eq!((d.size(), d.extent, d.align), (12, 16, 8));
        let (_, s) = find(MPI_SHORT_INT).unwrap();
        assert_eq!((s.size(), s.extent), (6, 8));
        let (_, l) = find(MPI_LONG_DOUBLE_INT).unwrap();
        assert_eq!((l.size(), l.extent), (20, 32));
        assert_eq!(BasicKind::ShortInt.element_sizes(), &[2, 4]);
        for (i, h) in [
            MPI_FLOAT_INT,
            MPI_DOUBLE_INT,
            MPI_LONG_INT,
            MPI_SHORT_INT,
            MPI_LONG_DOUBLE_INT,
        ]
        .into_iter()
        .enumerate()
        {
            assert_eq!(h as u32 & 0x03ff_ffff, i as u32);
            assert!(i < PAIR_HANDLE_COUNT);
        }
    }

    #[test]
    fn match_size_gives_fortran_sized_types() {
        assert_eq!(match_size(MPI_TYPECLASS_REAL, 8), Some(MPI_REAL8));
        assert_eq!(match_size(MPI_TYPECLASS_INTEGER, 3), None);
        assert_eq!(match_size(99, 4), None);
    }
}
