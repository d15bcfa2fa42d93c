//! Datatype constructors and lifecycle through the C ABI: every
//! `MPI_Type_create_*` (with the deprecated and `_c` forms; subarray and
//! darray are in `datatype_arrays`), dup, commit, free, names,
//! `MPI_Type_match_size`. Arguments are checked and converted here;
//! layouts are computed in `core::datatype`.
//!
//! The `int` and `_c` forms of a constructor share one implementation
//! over `i64` arguments; [`Args`] records them as `MPI_Type_get_contents`
//! returns them: `int` counts as integers and `MPI_Aint`s as addresses, or,
//! for a `_c` call, both as large counts.
#![allow(clippy::missing_safety_doc)] // each function's contract is its MPI function's.

use std::os::raw::{c_char, c_int};
use std::sync::Arc;

use crate::abi::args::{in_str, out, write_str};
use crate::abi::constants::*;
use crate::abi::types::*;
use crate::core::datatype::constructors;
use crate::core::datatype::{self, builtin, registry, Combiner, Contents, Datatype};
use crate::core::error::{MpiError, MpiResult};

/// An input array of `n` elements (`NULL` is fine when `n` is 0).
///
/// # Safety
/// `p` must be NULL or point at `n` readable elements.
pub(crate) unsafe fn array<'a, T>(p: *const T, n: usize, name: &str) -> MpiResult<&'a [T]> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(MpiError::new(
            MPI_ERR_ARG,
            format!("argument '{name}' is NULL"),
        ));
    }
    // SAFETY: non-NULL, and MPI's contract gives `n` elements.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// An input array of `int`s or `MPI_Count`s, widened.
///
/// # Safety
/// As [`array`].
pub(crate) unsafe fn wide<T: Copy + Into<i64>>(
    p: *const T,
    n: usize,
    name: &str,
) -> MpiResult<Vec<i64>> {
    Ok(unsafe { array(p, n, name) }?
        .iter()
        .map(|&v| v.into())
        .collect())
}

/// A count argument (`int` or `MPI_Count`): non-negative.
pub(crate) fn large_count(n: MPI_Count, name: &str) -> MpiResult<usize> {
    usize::try_from(n)
        .map_err(|_| MpiError::new(MPI_ERR_COUNT, format!("{name} is negative ({n})")))
}

/// Every entry of an array of counts, non-negative.
fn counts(v: &[i64], name: &str) -> MpiResult<Vec<usize>> {
    v.iter()
        .enumerate()
        .map(|(i, &n)| large_count(n, &format!("{name}[{i}]")))
        .collect()
}

/// A constructor's arguments, in the order `MPI_Type_get_contents` gives.
pub(crate) struct Args {
    large: bool,
    contents: Contents,
}

impl Args {
    pub(crate) fn new(combiner: Combiner, large: bool) -> Args {
        Args {
            large,
            contents: Contents::new(combiner),
        }
    }

    /// An argument that is an `int` in both forms (ndims, order...).
    pub(crate) fn int(mut self, v: i64) -> Args {
        self.contents.integers.push(v as c_int);
        self
    }

    pub(crate) fn ints(self, vs: &[i64]) -> Args {
        vs.iter().fold(self, |a, &v| a.int(v))
    }

    /// A count: an `int`, or a large count in a `_c` call.
    pub(crate) fn count(mut self, v: i64) -> Args {
        if self.large {
            self.contents.large_counts.push(v);
        } else {
            self.contents.integers.push(v as c_int);
        }
        self
    }

    pub(crate) fn counts(self, vs: &[i64]) -> Args {
        vs.iter().fold(self, |a, &v| a.count(v))
    }

    /// An address-sized argument: an `MPI_Aint`, or a large count.
    pub(crate) fn address(mut self, v: i64) -> Args {
        if self.large {
            self.contents.large_counts.push(v);
        } else {
            self.contents.addresses.push(v as isize);
        }
        self
    }

    pub(crate) fn addresses(self, vs: &[i64]) -> Args {
        vs.iter().fold(self, |a, &v| a.address(v))
    }

    pub(crate) fn datatype(mut self, t: (MPI_Datatype, Arc<Datatype>)) -> Args {
        self.contents.types.push(t);
        self
    }
}

pub(crate) fn typed(h: MPI_Datatype) -> MpiResult<(MPI_Datatype, Arc<Datatype>)> {
    Ok((h, datatype::lookup(h)?))
}

/// Registers a new type with its recorded arguments and stores its handle.
///
/// # Safety
/// `newtype` must be NULL or valid for writes.
pub(crate) unsafe fn create(
    newtype: *mut MPI_Datatype,
    t: MpiResult<Datatype>,
    args: Args,
) -> MpiResult {
    let newtype = unsafe { out(newtype, "newtype") }?;
    *newtype = registry::register(t?.with_contents(args.contents));
    Ok(())
}

unsafe fn make_contiguous(
    large: bool,
    n: i64,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult {
    let len = large_count(n, "count")?;
    let old = typed(oldtype)?;
    let t = constructors::contiguous(len, &old.1);
    unsafe {
        create(
            newtype,
            t,
            Args::new(Combiner::Contiguous, large)
                .count(n)
                .datatype(old),
        )
    }
}

pub unsafe fn contiguous(n: c_int, oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> MpiResult {
    unsafe { make_contiguous(false, n.into(), oldtype, newtype) }
}

pub unsafe fn contiguous_c(
    n: MPI_Count,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult {
    unsafe { make_contiguous(true, n, oldtype, newtype) }
}

/// Vector (`bytes` false: stride in elements) and hvector.
unsafe fn make_vector(
    large: bool,
    bytes: bool,
    (n, blocklength, stride): (i64, i64, i64),
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult {
    let (len, block) = (
        large_count(n, "count")?,
        large_count(blocklength, "blocklength")?,
    );
    let old = typed(oldtype)?;
    let (t, args) = if bytes {
        let t = constructors::hvector(len, block, stride as isize, &old.1);
        (
            t,
            Args::new(Combiner::Hvector, large)
                .count(n)
                .count(blocklength)
                .address(stride),
        )
    } else {
        let t = constructors::vector(len, block, stride as isize, &old.1);
        (
            t,
            Args::new(Combiner::Vector, large).counts(&[n, blocklength, stride]),
        )
    };
    unsafe { create(newtype, t, args.datatype(old)) }
}

pub unsafe fn vector(
    n: c_int,
    blocklength: c_int,
    stride: c_int,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult {
    unsafe {
        make_vector(
            false,
            false,
            (n.into(), blocklength.into(), stride.into()),
            oldtype,
            newtype,
        )
    }
}

pub unsafe fn vector_c(
    n: MPI_Count,
    blocklength: MPI_Count,
    stride: MPI_Count,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult {
    unsafe { make_vector(true, false, (n, blocklength, stride), oldtype, newtype) }
}

/// `MPI_Type_create_hvector` and the deprecated `MPI_Type_hvector`.
pub unsafe fn create_hvector(
    n: c_int,
    blocklength: c_int,
    stride: MPI_Aint,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult {
    unsafe {
        make_vector(
            false,
            true,
            (n.into(), blocklength.into(), stride),
            oldtype,
            newtype,
        )
    }
}

pub unsafe fn create_hvector_c(
    n: MPI_Count,
    blocklength: MPI_Count,
    stride: MPI_Count,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult {
    unsafe { make_vector(true, true, (n, blocklength, stride), oldtype, newtype) }
}

/// The indexed family. `blocklength`: one length for every block (the
/// `_block` forms), else `lengths` gives each. `bytes`: displacements in
/// bytes (the `h` forms), else in extents of `oldtype`.
struct Indexed {
    large: bool,
    bytes: bool,
    blocklength: Option<i64>,
}

impl Indexed {
    fn combiner(&self) -> Combiner {
        match (self.bytes, self.blocklength.is_some()) {
            (false, false) => Combiner::Indexed,
            (true, false) => Combiner::Hindexed,
            (false, true) => Combiner::IndexedBlock,
            (true, true) => Combiner::HindexedBlock,
        }
    }

    unsafe fn make(
        self,
        n: i64,
        lengths: Vec<i64>,
        disps: Vec<i64>,
        oldtype: MPI_Datatype,
        newtype: *mut MPI_Datatype,
    ) -> MpiResult {
        let lens = match self.blocklength {
            Some(b) => vec![large_count(b, "blocklength")?; disps.len()],
            None => counts(&lengths, "array_of_blocklengths")?,
        };
        let blocks: Vec<(usize, isize)> = lens
            .into_iter()
            .zip(disps.iter().map(|&d| d as isize))
            .collect();
        let old = typed(oldtype)?;
        let combiner = self.combiner();
        let t = if self.bytes {
            constructors::hindexed(combiner, &blocks, &old.1)
        } else {
            constructors::indexed(combiner, &blocks, &old.1)
        };
        let mut args = Args::new(combiner, self.large).count(n);
        args = match self.blocklength {
            Some(b) => args.count(b),
            None => args.counts(&lengths),
        };
        args = if self.bytes {
            args.addresses(&disps)
        } else {
            args.counts(&disps)
        };
        unsafe { create(newtype, t, args.datatype(old)) }
    }
}

pub unsafe fn indexed(
    n: c_int,
    blocklengths: *const c_int,
    displacements: *const c_int,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult {
    let len = large_count(n.into(), "count")?;
    let lens = unsafe { wide(blocklengths, len, "array_of_blocklengths") }?;
    let disps = unsafe { wide(displacements, len, "array_of_displacements") }?;
    let kind = Indexed {
        large: false,
        bytes: false,
        blocklength: None,
    };
    unsafe { kind.make(n.into(), lens, disps, oldtype, newtype) }
}

pub unsafe fn indexed_c(
    n: MPI_Count,
    blocklengths: *const MPI_Count,
    displacements: *const MPI_Count,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult {
    let len = large_count(n, "count")?;
    let lens = unsafe { wide(blocklengths, len, "array_of_blocklengths") }?;
    let disps = unsafe { wide(displacements, len, "array_of_displacements") }?;
    let kind = Indexed {
        large: true,
        bytes: false,
        blocklength: None,
    };
    unsafe { kind.make(n, lens, disps, oldtype, newtype) }
}

pub unsafe fn create_hindexed(
    n: c_int,
    blocklengths: *const c_int,
    displacements: *const MPI_Aint,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult {
    let len = large_count(n.into(), "count")?;
    let lens = unsafe { wide(blocklengths, len, "array_of_blocklengths") }?;
    let disps = unsafe { wide(displacements, len, "array_of_displacements") }?;
    let kind = Indexed {
        large: false,
        bytes: true,
        blocklength: None,
    };
    unsafe { kind.make(n.into(), lens, disps, oldtype, newtype) }
}

/// The deprecated `MPI_Type_hindexed` (non-const arrays).
pub unsafe fn hindexed(
    n: c_int,
    blocklengths: *mut c_int,
    displacements: *mut MPI_Aint,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult {
    unsafe { create_hindexed(n, blocklengths, displacements, oldtype, newtype) }
}

pub unsafe fn create_hindexed_c(
    n: MPI_Count,
    blocklengths: *const MPI_Count,
    displacements: *const MPI_Count,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult {
    let len = large_count(n, "count")?;
    let lens = unsafe { wide(blocklengths, len, "array_of_blocklengths") }?;
    let disps = unsafe { wide(displacements, len, "array_of_displacements") }?;
    let kind = Indexed {
        large: true,
        bytes: true,
        blocklength: None,
    };
    unsafe { kind.make(n, lens, disps, oldtype, newtype) }
}

/// The four block-indexed constructors: `MPI_Type_create_indexed_block`
/// and `_hindexed_block`, with `int` or `MPI_Count` arguments.
///
/// # Safety
/// `displacements` holds `n` values; `newtype` is the caller's output.
unsafe fn indexed_block<D: Copy + Into<i64>>(
    n: MPI_Count,
    blocklength: MPI_Count,
    displacements: *const D,
    large: bool,
    bytes: bool,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult {
    let len = large_count(n, "count")?;
    let disps = unsafe { wide(displacements, len, "array_of_displacements") }?;
    let kind = Indexed {
        large,
        bytes,
        blocklength: Some(blocklength),
    };
    unsafe { kind.make(n, vec![], disps, oldtype, newtype) }
}

pub unsafe fn create_indexed_block(
    n: c_int,
    blocklength: c_int,
    displacements: *const c_int,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult {
    unsafe {
        indexed_block(
            n.into(),
            blocklength.into(),
            displacements,
            false,
            false,
            oldtype,
            newtype,
        )
    }
}

pub unsafe fn create_indexed_block_c(
    n: MPI_Count,
    blocklength: MPI_Count,
    displacements: *const MPI_Count,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult {
    unsafe { indexed_block(n, blocklength, displacements, true, false, oldtype, newtype) }
}

pub unsafe fn create_hindexed_block(
    n: c_int,
    blocklength: c_int,
    displacements: *const MPI_Aint,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult {
    unsafe {
        indexed_block(
            n.into(),
            blocklength.into(),
            displacements,
            false,
            true,
            oldtype,
            newtype,
        )
    }
}

pub unsafe fn create_hindexed_block_c(
    n: MPI_Count,
    blocklength: MPI_Count,
    displacements: *const MPI_Count,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult {
    unsafe { indexed_block(n, blocklength, displacements, true, true, oldtype, newtype) }
}

unsafe fn make_struct(
    large: bool,
    n: i64,
    (lengths, disps): (Vec<i64>, Vec<i64>),
    types: *const MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult {
    let handles = unsafe { array(types, disps.len(), "array_of_types") }?;
    let lens = counts(&lengths, "array_of_blocklengths")?;
    let parts = handles
        .iter()
        .map(|&h| typed(h))
        .collect::<MpiResult<Vec<_>>>()?;
    let entries: Vec<(usize, isize, &Datatype)> = lens
        .iter()
        .zip(&disps)
        .zip(&parts)
        .map(|((&l, &d), p)| (l, d as isize, &*p.1))
        .collect();
    let t = constructors::structure(&entries);
    let args = parts.iter().fold(
        Args::new(Combiner::Struct, large)
            .count(n)
            .counts(&lengths)
            .addresses(&disps),
        |a, p| a.datatype(p.clone()),
    );
    unsafe { create(newtype, t, args) }
}

pub unsafe fn create_struct(
    n: c_int,
    blocklengths: *const c_int,
    displacements: *const MPI_Aint,
    types: *const MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult {
    let len = large_count(n.into(), "count")?;
    let lens = unsafe { wide(blocklengths, len, "array_of_blocklengths") }?;
    let disps = unsafe { wide(displacements, len, "array_of_displacements") }?;
    unsafe { make_struct(false, n.into(), (lens, disps), types, newtype) }
}

/// The deprecated `MPI_Type_struct` (non-const arrays).
pub unsafe fn struct_(
    n: c_int,
    blocklengths: *mut c_int,
    displacements: *mut MPI_Aint,
    types: *mut MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult {
    unsafe { create_struct(n, blocklengths, displacements, types, newtype) }
}

pub unsafe fn create_struct_c(
    n: MPI_Count,
    blocklengths: *const MPI_Count,
    displacements: *const MPI_Count,
    types: *const MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult {
    let len = large_count(n, "count")?;
    let lens = unsafe { wide(blocklengths, len, "array_of_blocklengths") }?;
    let disps = unsafe { wide(displacements, len, "array_of_displacements") }?;
    unsafe { make_struct(true, n, (lens, disps), types, newtype) }
}

unsafe fn make_resized(
    large: bool,
    oldtype: MPI_Datatype,
    lb: i64,
    extent: i64,
    newtype: *mut MPI_Datatype,
) -> MpiResult {
    let old = typed(oldtype)?;
    let t = constructors::resized(&old.1, lb as isize, extent as isize);
    let args = Args::new(Combiner::Resized, large)
        .address(lb)
        .address(extent);
    unsafe { create(newtype, t, args.datatype(old)) }
}

pub unsafe fn create_resized(
    oldtype: MPI_Datatype,
    lb: MPI_Aint,
    extent: MPI_Aint,
    newtype: *mut MPI_Datatype,
) -> MpiResult {
    unsafe { make_resized(false, oldtype, lb, extent, newtype) }
}

pub unsafe fn create_resized_c(
    oldtype: MPI_Datatype,
    lb: MPI_Count,
    extent: MPI_Count,
    newtype: *mut MPI_Datatype,
) -> MpiResult {
    unsafe { make_resized(true, oldtype, lb, extent, newtype) }
}

/// `MPI_Type_dup`: the copy has the original's committed state.
pub unsafe fn dup(oldtype: MPI_Datatype, newtype: *mut MPI_Datatype) -> MpiResult {
    let old = typed(oldtype)?;
    let t = Ok(constructors::dup(&old.1));
    unsafe { create(newtype, t, Args::new(Combiner::Dup, false).datatype(old)) }
}

pub unsafe fn commit(dt: *mut MPI_Datatype) -> MpiResult {
    let dt = unsafe { out(dt, "datatype") }?;
    datatype::lookup(*dt)?.commit();
    Ok(())
}

/// `MPI_Type_free`: the handle becomes `MPI_DATATYPE_NULL`; the type lives
/// on while derived types or operations in flight use it.
pub unsafe fn free(dt: *mut MPI_Datatype) -> MpiResult {
    let dt = unsafe { out(dt, "datatype") }?;
    registry::free(*dt)?;
    *dt = MPI_DATATYPE_NULL;
    Ok(())
}

pub unsafe fn set_name(dt: MPI_Datatype, name: *const c_char) -> MpiResult {
    let name = unsafe { in_str(name, "type_name") }?;
    if name.len() >= MPI_MAX_OBJECT_NAME as usize {
        let most = MPI_MAX_OBJECT_NAME - 1;
        return Err(MpiError::new(
            MPI_ERR_ARG,
            format!("name of {} bytes (at most {most})", name.len()),
        ));
    }
    registry::set_name(dt, &name)
}

pub unsafe fn get_name(dt: MPI_Datatype, name: *mut c_char, resultlen: *mut c_int) -> MpiResult {
    let resultlen = unsafe { out(resultlen, "resultlen") }?;
    let text = registry::name(dt)?;
    let n = unsafe { write_str(name, MPI_MAX_OBJECT_NAME as usize, &text, "type_name") }?;
    *resultlen = n as c_int;
    Ok(())
}

pub unsafe fn match_size(typeclass: c_int, size: c_int, dt: *mut MPI_Datatype) -> MpiResult {
    let dt = unsafe { out(dt, "datatype") }?;
    let found = usize::try_from(size)
        .ok()
        .and_then(|s| builtin::match_size(typeclass, s));
    let missing = || {
        MpiError::new(
            MPI_ERR_ARG,
            format!("no predefined type of class {typeclass} has size {size}"),
        )
    };
    *dt = found.ok_or_else(missing)?;
    Ok(())
}
