//! Datatype constructors and lifecycle through the C ABI: every
//! `MPI_Type_create_*` (with the deprecated and `_c` forms; subarray and
//! darray are in `datatype_arrays`), dup, commit, free, names,
//! `MPI_Type_match_size`. Arguments are checked and converted here;
//! layouts are computed in `core::datatype`.
//!
//! The `int` and `_c` forms of a constructor are one function, generic
//! over the count type ([`CountArg`]), so both lines of the function table
//! name it; [`Args`] records the arguments as `MPI_Type_get_contents`
//! returns them: `int` counts as integers and `MPI_Aint`s as addresses, or,
//! for a `_c` call, both as large counts. (`MPI_Type_create_resized` and
//! its `_c` form keep two functions: their arguments have the same type,
//! `MPI_Aint` being `MPI_Count`'s, and only the recorded kind differs.)
#![allow(clippy::missing_safety_doc)] // each function's contract is its MPI function's.

use std::os::raw::{c_char, c_int};
use std::sync::Arc;

use crate::abi::args::{in_str, out, write_str};
use crate::abi::p2p::CountArg;
use crate::core::datatype::constructors;
use crate::core::datatype::{self, builtin, registry, Combiner, Contents, Datatype};
use crate::core::error::{MpiError, MpiResult};
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::*;

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

/// `MPI_Type_contiguous` and `_c`.
pub unsafe fn contiguous<C: CountArg>(
    n: C,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult {
    unsafe { make_contiguous(C::LARGE, n.into(), oldtype, newtype) }
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

/// `MPI_Type_vector` and `_c`.
pub unsafe fn vector<C: CountArg>(
    n: C,
    blocklength: C,
    stride: C,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult {
    let args = (n.into(), blocklength.into(), stride.into());
    unsafe { make_vector(C::LARGE, false, args, oldtype, newtype) }
}

/// `MPI_Type_create_hvector`, its `_c` form and the deprecated
/// `MPI_Type_hvector` (`MPI_Aint` is `MPI_Count`'s type).
pub unsafe fn create_hvector<C: CountArg>(
    n: C,
    blocklength: C,
    stride: MPI_Count,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult {
    let args = (n.into(), blocklength.into(), stride);
    unsafe { make_vector(C::LARGE, true, args, oldtype, newtype) }
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

/// `MPI_Type_indexed` and `MPI_Type_create_hindexed` (`bytes`), with
/// `int` or `MPI_Count` arguments.
///
/// # Safety
/// `blocklengths` and `displacements` hold `n` values; `newtype` is the
/// caller's output.
unsafe fn indexed_any<C: CountArg, D: CountArg>(
    n: C,
    blocklengths: *const C,
    displacements: *const D,
    bytes: bool,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult {
    let len = large_count(n.into(), "count")?;
    let lens = unsafe { wide(blocklengths, len, "array_of_blocklengths") }?;
    let disps = unsafe { wide(displacements, len, "array_of_displacements") }?;
    let kind = Indexed {
        large: C::LARGE,
        bytes,
        blocklength: None,
    };
    unsafe { kind.make(n.into(), lens, disps, oldtype, newtype) }
}

/// `MPI_Type_indexed` and `_c`.
pub unsafe fn indexed<C: CountArg>(
    n: C,
    blocklengths: *const C,
    displacements: *const C,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult {
    unsafe { indexed_any(n, blocklengths, displacements, false, oldtype, newtype) }
}

/// `MPI_Type_create_hindexed` and `_c` (`MPI_Aint` is `MPI_Count`'s type).
pub unsafe fn create_hindexed<C: CountArg>(
    n: C,
    blocklengths: *const C,
    displacements: *const MPI_Count,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult {
    unsafe { indexed_any(n, blocklengths, displacements, true, oldtype, newtype) }
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

/// The block-indexed constructors: `MPI_Type_create_indexed_block` and
/// `_hindexed_block` (`bytes`), with `int` or `MPI_Count` arguments.
///
/// # Safety
/// `displacements` holds `n` values; `newtype` is the caller's output.
unsafe fn indexed_block<C: CountArg, D: CountArg>(
    n: C,
    blocklength: C,
    displacements: *const D,
    bytes: bool,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult {
    let len = large_count(n.into(), "count")?;
    let disps = unsafe { wide(displacements, len, "array_of_displacements") }?;
    let kind = Indexed {
        large: C::LARGE,
        bytes,
        blocklength: Some(blocklength.into()),
    };
    unsafe { kind.make(n.into(), vec![], disps, oldtype, newtype) }
}

/// `MPI_Type_create_indexed_block` and `_c`.
pub unsafe fn create_indexed_block<C: CountArg>(
    n: C,
    blocklength: C,
    displacements: *const C,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult {
    unsafe { indexed_block(n, blocklength, displacements, false, oldtype, newtype) }
}

/// `MPI_Type_create_hindexed_block` and `_c` (`MPI_Aint` is `MPI_Count`'s
/// type).
pub unsafe fn create_hindexed_block<C: CountArg>(
    n: C,
    blocklength: C,
    displacements: *const MPI_Count,
    oldtype: MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult {
    unsafe { indexed_block(n, blocklength, displacements, true, oldtype, newtype) }
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

/// `MPI_Type_create_struct` and `_c` (`MPI_Aint` is `MPI_Count`'s type).
pub unsafe fn create_struct<C: CountArg>(
    n: C,
    blocklengths: *const C,
    displacements: *const MPI_Count,
    types: *const MPI_Datatype,
    newtype: *mut MPI_Datatype,
) -> MpiResult {
    let len = large_count(n.into(), "count")?;
    let lens = unsafe { wide(blocklengths, len, "array_of_blocklengths") }?;
    let disps = unsafe { wide(displacements, len, "array_of_displacements") }?;
    unsafe { make_struct(C::LARGE, n.into(), (lens, disps), types, newtype) }
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
