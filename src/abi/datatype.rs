//! Datatype constructors and lifecycle through the C ABI: every
//! `MPI_Type_create_*` (with the deprecated and `_c` forms; subarray and
//! darray are in `datatype_arrays`), dup, commit, free, names,
//! `MPI_Type_match_size`. Arguments are checked and converted here;
//! layouts are computed in `core::datatype`.
//!
//! The `int` and `_c` forms of a constructor are one function, told which
//! form was called ([`Width`], `+width` in the function table); [`Args`]
//! records the arguments as `MPI_Type_get_contents` returns them: `int`
//! counts as integers and `MPI_Aint`s as addresses, or, for a `_c` call,
//! both as large counts.
#![allow(clippy::missing_safety_doc)] // each function's contract is its MPI function's.

use std::os::raw::{c_char, c_int};
use std::sync::Arc;

use crate::abi::args::{array, object_name, out, write_str};
use crate::abi::attributes;
use crate::abi::count::{Counts, Width};
use crate::core::datatype::constructors;
use crate::core::datatype::{self, builtin, registry, Combiner, Contents, Datatype};
use crate::core::error::{MpiError, MpiResult};
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::*;

/// A constructor's arguments, in the order `MPI_Type_get_contents` gives.
pub(crate) struct Args {
    large: bool,
    contents: Contents,
}

impl Args {
    pub(crate) fn new(combiner: Combiner, width: Width) -> Args {
        Args {
            large: width == Width::Large,
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
pub(crate) fn create(newtype: &mut MPI_Datatype, t: MpiResult<Datatype>, args: Args) -> MpiResult {
    *newtype = registry::register(t?.with_contents(args.contents));
    Ok(())
}

/// `MPI_Type_contiguous` and `_c`.
pub unsafe fn contiguous(
    width: Width,
    n: usize,
    oldtype: MPI_Datatype,
    newtype: &mut MPI_Datatype,
) -> MpiResult {
    let old = typed(oldtype)?;
    let t = constructors::contiguous(n, &old.1);
    let args = Args::new(Combiner::Contiguous, width).count(n as i64);
    create(newtype, t, args.datatype(old))
}

/// `MPI_Type_vector` and `_c`: the stride in extents of `oldtype`.
pub unsafe fn vector(
    width: Width,
    n: usize,
    blocklength: usize,
    stride: i64,
    oldtype: MPI_Datatype,
    newtype: &mut MPI_Datatype,
) -> MpiResult {
    let old = typed(oldtype)?;
    let t = constructors::vector(n, blocklength, stride as isize, &old.1);
    let args = Args::new(Combiner::Vector, width).counts(&[n as i64, blocklength as i64, stride]);
    create(newtype, t, args.datatype(old))
}

/// `MPI_Type_create_hvector`, its `_c` form and the deprecated
/// `MPI_Type_hvector`: the stride in bytes.
pub unsafe fn create_hvector(
    width: Width,
    n: usize,
    blocklength: usize,
    stride: MPI_Aint,
    oldtype: MPI_Datatype,
    newtype: &mut MPI_Datatype,
) -> MpiResult {
    let old = typed(oldtype)?;
    let t = constructors::hvector(n, blocklength, stride as isize, &old.1);
    let args = Args::new(Combiner::Hvector, width)
        .count(n as i64)
        .count(blocklength as i64)
        .address(stride);
    create(newtype, t, args.datatype(old))
}

/// The displacements of an indexed family's blocks: in extents of the old
/// type (`int`, or `MPI_Count` in a `_c` call) or in bytes (`MPI_Aint`).
enum Displacements {
    Extents(Counts),
    Bytes(*const MPI_Aint),
}

/// The indexed family: `blocklength` is one length for every block (the
/// `_block` forms), else `lengths` gives each.
///
/// # Safety
/// The arrays hold `n` values (MPI's contract).
unsafe fn indexed_family(
    width: Width,
    n: usize,
    lengths: Result<usize, Counts>,
    displacements: Displacements,
    oldtype: MPI_Datatype,
    newtype: &mut MPI_Datatype,
) -> MpiResult {
    let (lens, raw_lengths) = match lengths {
        Ok(b) => (vec![b; n], Err(b)),
        // SAFETY: the blocklengths array is NULL or holds `n` entries (this
        // function's contract); both reads copy it out during this call.
        Err(counts) => unsafe {
            (
                counts.read(n, "array_of_blocklengths")?,
                Ok(counts.read_raw(n, "array_of_blocklengths")?),
            )
        },
    };
    let (disps, bytes) = match displacements {
        // SAFETY: the displacements array is NULL or holds `n` entries (this
        // function's contract); copied out here.
        Displacements::Extents(d) => (unsafe { d.read_raw(n, "array_of_displacements") }?, false),
        Displacements::Bytes(p) => (
            // SAFETY: the byte displacements are NULL or `n` `MPI_Aint`s
            // (this function's contract); copied out here.
            unsafe { array(p, n, "array_of_displacements") }?.to_vec(),
            true,
        ),
    };
    let combiner = match (bytes, raw_lengths.is_err()) {
        (false, false) => Combiner::Indexed,
        (true, false) => Combiner::Hindexed,
        (false, true) => Combiner::IndexedBlock,
        (true, true) => Combiner::HindexedBlock,
    };
    let blocks: Vec<(usize, isize)> = lens
        .iter()
        .copied()
        .zip(disps.iter().map(|&d| d as isize))
        .collect();
    let old = typed(oldtype)?;
    let t = if bytes {
        constructors::hindexed(combiner, &blocks, &old.1)
    } else {
        constructors::indexed(combiner, &blocks, &old.1)
    };
    let mut args = Args::new(combiner, width).count(n as i64);
    args = match &raw_lengths {
        Err(blocklength) => args.count(*blocklength as i64),
        Ok(raw) => args.counts(raw),
    };
    args = if bytes {
        args.addresses(&disps)
    } else {
        args.counts(&disps)
    };
    create(newtype, t, args.datatype(old))
}

/// `MPI_Type_indexed` and `_c`.
pub unsafe fn indexed(
    width: Width,
    n: usize,
    blocklengths: Counts,
    displacements: Counts,
    oldtype: MPI_Datatype,
    newtype: &mut MPI_Datatype,
) -> MpiResult {
    let displacements = Displacements::Extents(displacements);
    // SAFETY: the MPI call's arrays, passed on unchanged: NULL or holding `n`
    // entries each (MPI's contract, `indexed_family`'s), read only during this
    // call.
    unsafe { indexed_family(width, n, Err(blocklengths), displacements, oldtype, newtype) }
}

/// `MPI_Type_create_hindexed` and `_c`.
pub unsafe fn create_hindexed(
    width: Width,
    n: usize,
    blocklengths: Counts,
    displacements: *const MPI_Aint,
    oldtype: MPI_Datatype,
    newtype: &mut MPI_Datatype,
) -> MpiResult {
    let displacements = Displacements::Bytes(displacements);
    // SAFETY: the MPI call's arrays, passed on unchanged: NULL or holding `n`
    // entries each (MPI's contract, `indexed_family`'s), read only during this
    // call.
    unsafe { indexed_family(width, n, Err(blocklengths), displacements, oldtype, newtype) }
}

/// The deprecated `MPI_Type_hindexed` (non-const arrays).
pub unsafe fn hindexed(
    n: usize,
    blocklengths: *mut c_int,
    displacements: *mut MPI_Aint,
    oldtype: MPI_Datatype,
    newtype: &mut MPI_Datatype,
) -> MpiResult {
    let lengths = Counts::from(blocklengths.cast_const());
    let displacements = displacements.cast_const();
    // SAFETY: MPI_Type_hindexed's arrays hold `n` entries (MPI's contract) and
    // are only read; the casts to const change nothing else.
    unsafe { create_hindexed(Width::Int, n, lengths, displacements, oldtype, newtype) }
}

/// `MPI_Type_create_indexed_block` and `_c`.
pub unsafe fn create_indexed_block(
    width: Width,
    n: usize,
    blocklength: usize,
    displacements: Counts,
    oldtype: MPI_Datatype,
    newtype: &mut MPI_Datatype,
) -> MpiResult {
    let displacements = Displacements::Extents(displacements);
    // SAFETY: the displacements array is NULL or holds `n` entries (MPI's
    // contract, `indexed_family`'s), read only during this call.
    unsafe { indexed_family(width, n, Ok(blocklength), displacements, oldtype, newtype) }
}

/// `MPI_Type_create_hindexed_block` and `_c`.
pub unsafe fn create_hindexed_block(
    width: Width,
    n: usize,
    blocklength: usize,
    displacements: *const MPI_Aint,
    oldtype: MPI_Datatype,
    newtype: &mut MPI_Datatype,
) -> MpiResult {
    let displacements = Displacements::Bytes(displacements);
    // SAFETY: the displacements array is NULL or holds `n` entries (MPI's
    // contract, `indexed_family`'s), read only during this call.
    unsafe { indexed_family(width, n, Ok(blocklength), displacements, oldtype, newtype) }
}

/// `MPI_Type_create_struct` and `_c`.
pub unsafe fn create_struct(
    width: Width,
    n: usize,
    blocklengths: Counts,
    displacements: *const MPI_Aint,
    types: *const MPI_Datatype,
    newtype: &mut MPI_Datatype,
) -> MpiResult {
    // SAFETY: MPI_Type_create_struct's three arrays are NULL or hold `n`
    // entries each (MPI's contract); the program does not change them during
    // the call, and the slices are not kept past it.
    let (lengths, disps, handles, lens) = unsafe {
        (
            blocklengths.read_raw(n, "array_of_blocklengths")?,
            array(displacements, n, "array_of_displacements")?,
            array(types, n, "array_of_types")?,
            blocklengths.read(n, "array_of_blocklengths")?,
        )
    };
    let parts = handles
        .iter()
        .map(|&h| typed(h))
        .collect::<MpiResult<Vec<_>>>()?;
    let entries: Vec<(usize, isize, &Datatype)> = lens
        .iter()
        .zip(disps)
        .zip(&parts)
        .map(|((&l, &d), p)| (l, d as isize, &*p.1))
        .collect();
    let t = constructors::structure(&entries);
    let args = parts.iter().fold(
        Args::new(Combiner::Struct, width)
            .count(n as i64)
            .counts(&lengths)
            .addresses(disps),
        |a, p| a.datatype(p.clone()),
    );
    create(newtype, t, args)
}

/// The deprecated `MPI_Type_struct` (non-const arrays).
pub unsafe fn struct_(
    n: usize,
    blocklengths: *mut c_int,
    displacements: *mut MPI_Aint,
    types: *mut MPI_Datatype,
    newtype: &mut MPI_Datatype,
) -> MpiResult {
    let lengths = Counts::from(blocklengths.cast_const());
    // SAFETY: MPI_Type_struct's arrays hold `n` entries (MPI's contract) and
    // are only read; the casts to const change nothing else.
    unsafe {
        create_struct(
            Width::Int,
            n,
            lengths,
            displacements.cast_const(),
            types.cast_const(),
            newtype,
        )
    }
}

/// `MPI_Type_create_resized` and `_c`.
pub unsafe fn create_resized(
    width: Width,
    oldtype: MPI_Datatype,
    lb: MPI_Aint,
    extent: MPI_Aint,
    newtype: &mut MPI_Datatype,
) -> MpiResult {
    let old = typed(oldtype)?;
    let t = constructors::resized(&old.1, lb as isize, extent as isize);
    let args = Args::new(Combiner::Resized, width)
        .address(lb)
        .address(extent);
    create(newtype, t, args.datatype(old))
}

/// `MPI_Type_dup`: the copy has the original's committed state and the
/// attributes its keyvals' copy callbacks copy; if one fails, the copy is
/// freed again and the callback's error is the result.
/// `MPI_Type_dup`: the new type carries copies of the old one's attributes
/// (through their copy callbacks); when one fails, the new type is freed
/// and `newtype` is `MPI_DATATYPE_NULL`, as `MPI_Comm_dup` gives
/// `MPI_COMM_NULL`.
pub unsafe fn dup(oldtype: MPI_Datatype, newtype: &mut MPI_Datatype) -> MpiResult {
    *newtype = MPI_DATATYPE_NULL;
    let old = typed(oldtype)?;
    let t = Ok(constructors::dup(&old.1));
    let mut created = MPI_DATATYPE_NULL;
    create(
        &mut created,
        t,
        Args::new(Combiner::Dup, Width::Int).datatype(old),
    )?;
    if let Err(e) = attributes::copy_attributes::<attributes::DatatypeStore>(oldtype, created) {
        let _ = registry::free(created);
        return Err(e);
    }
    *newtype = created;
    Ok(())
}

pub unsafe fn commit(dt: *mut MPI_Datatype) -> MpiResult {
    // SAFETY: `dt` is MPI_Type_commit's `MPI_Datatype *`: NULL (rejected by
    // `out`) or valid for reads and writes during this call.
    let dt = unsafe { out(dt, "datatype") }?;
    datatype::lookup(*dt)?.commit();
    Ok(())
}

/// `MPI_Type_free`: the handle becomes `MPI_DATATYPE_NULL`; the type lives
/// on while derived types or operations in flight use it. Freeing the last
/// handle deletes the type's attributes first (the last set first); if a
/// delete callback fails, the handle stays valid and the error is the
/// result.
pub unsafe fn free(dt: *mut MPI_Datatype) -> MpiResult {
    // SAFETY: `dt` is MPI_Type_free's `MPI_Datatype *`: NULL (rejected by
    // `out`) or valid for reads and writes during this call.
    let dt = unsafe { out(dt, "datatype") }?;
    if registry::is_last_reference(*dt)? {
        attributes::delete_attributes::<attributes::DatatypeStore>(*dt)?;
    }
    registry::free(*dt)?;
    *dt = MPI_DATATYPE_NULL;
    Ok(())
}

pub unsafe fn set_name(dt: MPI_Datatype, name: *const c_char) -> MpiResult {
    // SAFETY: `name` is MPI_Type_set_name's string: NULL (rejected) or
    // NUL-terminated, read only during this call.
    let name = unsafe { object_name(name, "type_name") }?;
    registry::set_name(dt, &name)
}

pub unsafe fn get_name(dt: MPI_Datatype, name: *mut c_char, resultlen: &mut c_int) -> MpiResult {
    let text = registry::name(dt)?;
    // SAFETY: MPI_Type_get_name's contract: `name` has room for
    // MPI_MAX_OBJECT_NAME characters, the capacity given; `write_str` rejects
    // NULL.
    let n = unsafe { write_str(name, MPI_MAX_OBJECT_NAME as usize, &text, "type_name") }?;
    *resultlen = n as c_int;
    Ok(())
}

pub unsafe fn match_size(typeclass: c_int, size: c_int, dt: *mut MPI_Datatype) -> MpiResult {
    // SAFETY: `dt` is MPI_Type_match_size's output: NULL (rejected by `out`) or
    // valid for writing one handle during this call.
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

/// `MPI_Type_create_f90_integer`, `_real`, `_complex`: the predefined
/// Fortran type MPI parameterizes (`MPI_INTEGER4`, `MPI_REAL8`...), as
/// `selected_int_kind`/`selected_real_kind` choose it, under the combiner
/// `MPI_COMBINER_F90_*` with the asked parameters as its contents (as MPI
/// asks and MPICH does). Like a predefined type it is committed, the same
/// handle for the same parameters every time, and cannot be freed.
fn f90_result(
    found: Option<MPI_Datatype>,
    combiner: Combiner,
    params: Vec<c_int>,
    what: String,
) -> MpiResult<MPI_Datatype> {
    let base =
        found.ok_or_else(|| MpiError::new(MPI_ERR_ARG, format!("no Fortran type has {what}")))?;
    let old = datatype::lookup(base)?;
    let p = params.first().copied().unwrap_or(0);
    let r = params.last().copied().unwrap_or(0);
    Ok(registry::f90_type((combiner.mpi_value(), p, r), || {
        constructors::f90(&old, combiner, params)
    }))
}

pub unsafe fn create_f90_integer(r: c_int, newtype: &mut MPI_Datatype) -> MpiResult {
    let what = format!("a range of {r} digits");
    *newtype = f90_result(builtin::f90_integer(r), Combiner::F90Integer, vec![r], what)?;
    Ok(())
}

pub unsafe fn create_f90_real(p: c_int, r: c_int, newtype: &mut MPI_Datatype) -> MpiResult {
    let what = format!("precision {p} and range {r}");
    *newtype = f90_result(
        builtin::f90_real(p, r, false),
        Combiner::F90Real,
        vec![p, r],
        what,
    )?;
    Ok(())
}

pub unsafe fn create_f90_complex(p: c_int, r: c_int, newtype: &mut MPI_Datatype) -> MpiResult {
    let what = format!("precision {p} and range {r}");
    *newtype = f90_result(
        builtin::f90_real(p, r, true),
        Combiner::F90Complex,
        vec![p, r],
        what,
    )?;
    Ok(())
}
