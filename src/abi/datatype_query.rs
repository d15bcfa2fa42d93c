//! Datatype queries through the C ABI: size, extents, envelope and
//! contents, addresses, and what a status says in elements of a type
//! (`MPI_Get_count`, `MPI_Get_elements`, `MPI_Status_set_elements`).
//!
//! `int` outputs follow MPI: a value that does not fit is `MPI_UNDEFINED`.
#![allow(clippy::missing_safety_doc)] // each function's contract is its MPI function's.

use std::os::raw::{c_int, c_void};

use crate::abi::args::out;
use crate::abi::count;
use crate::abi::count::CountOut;
use crate::core::datatype::{self, registry, Combiner, Datatype};
use crate::core::error::{MpiError, MpiResult};
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::*;

/// A count for an output of either width: `MPI_UNDEFINED` when there is
/// none or it does not fit.
fn or_undefined<T: CountOut>(v: Option<usize>) -> T {
    v.and_then(T::fit).unwrap_or(T::from(MPI_UNDEFINED))
}

/// `MPI_Type_size`, `MPI_Type_size_x` and `MPI_Type_size_c`.
pub unsafe fn size<T: CountOut>(dt: MPI_Datatype, size: &mut T) -> MpiResult {
    *size = or_undefined(Some(datatype::lookup(dt)?.size()));
    Ok(())
}

/// `MPI_Type_get_extent`, `_x` and `_c` (`MPI_Aint` is `MPI_Count`'s type).
pub unsafe fn get_extent(
    dt: MPI_Datatype,
    lb: *mut MPI_Count,
    extent: *mut MPI_Count,
) -> MpiResult {
    // SAFETY: each output is NULL (rejected by `out`) or valid for one write
    // during this call, and MPI forbids aliasing two output arguments, so the
    // two `&mut` are disjoint.
    let (lb, extent) = unsafe { (out(lb, "lb")?, out(extent, "extent")?) };
    let t = datatype::lookup(dt)?;
    (*lb, *extent) = (t.lb() as MPI_Count, t.extent() as MPI_Count);
    Ok(())
}

/// `MPI_Type_get_true_extent`, `_x` and `_c`.
pub unsafe fn get_true_extent(
    dt: MPI_Datatype,
    true_lb: *mut MPI_Count,
    true_extent: *mut MPI_Count,
) -> MpiResult {
    // SAFETY: each output is NULL (rejected by `out`) or valid for one write
    // during this call, and MPI forbids aliasing two output arguments, so the
    // two `&mut` are disjoint.
    let (lb, extent) = unsafe { (out(true_lb, "true_lb")?, out(true_extent, "true_extent")?) };
    let t = datatype::lookup(dt)?;
    (*lb, *extent) = (t.true_lb() as MPI_Count, t.true_extent() as MPI_Count);
    Ok(())
}

/// Deprecated `MPI_Type_extent`.
pub unsafe fn extent(dt: MPI_Datatype, extent: &mut MPI_Aint) -> MpiResult {
    *extent = datatype::lookup(dt)?.extent() as MPI_Aint;
    Ok(())
}

/// Deprecated `MPI_Type_lb`.
pub unsafe fn lb(dt: MPI_Datatype, displacement: &mut MPI_Aint) -> MpiResult {
    *displacement = datatype::lookup(dt)?.lb() as MPI_Aint;
    Ok(())
}

/// Deprecated `MPI_Type_ub`.
pub unsafe fn ub(dt: MPI_Datatype, displacement: &mut MPI_Aint) -> MpiResult {
    *displacement = datatype::lookup(dt)?.ub() as MPI_Aint;
    Ok(())
}

/// A datatype's envelope: how many arguments of each kind its constructor
/// took, and which constructor (`MPI_Type_get_envelope(_c)`).
fn envelope(dt: MPI_Datatype) -> MpiResult<([usize; 4], c_int)> {
    let t = datatype::lookup(dt)?;
    let c = t.contents();
    let counts = [
        c.integers.len(),
        c.addresses.len(),
        c.large_counts.len(),
        c.types.len(),
    ];
    Ok((counts, c.combiner.mpi_value()))
}

/// `MPI_Type_get_envelope`: a type made with large counts needs the `_c`
/// form.
pub unsafe fn get_envelope(
    dt: MPI_Datatype,
    num_integers: &mut c_int,
    num_addresses: &mut c_int,
    num_datatypes: &mut c_int,
    combiner: &mut c_int,
) -> MpiResult {
    let ([ni, na, nl, nd], comb) = envelope(dt)?;
    if nl > 0 {
        return Err(MpiError::new(
            MPI_ERR_TYPE,
            "the datatype was made with large counts: use MPI_Type_get_envelope_c",
        ));
    }
    (*num_integers, *num_addresses, *num_datatypes) = (ni as c_int, na as c_int, nd as c_int);
    *combiner = comb;
    Ok(())
}

/// `MPI_Type_get_envelope_c`.
pub unsafe fn get_envelope_c(
    dt: MPI_Datatype,
    num_integers: &mut MPI_Count,
    num_addresses: &mut MPI_Count,
    num_large_counts: &mut MPI_Count,
    num_datatypes: &mut MPI_Count,
    combiner: &mut c_int,
) -> MpiResult {
    let ([ni, na, nl, nd], comb) = envelope(dt)?;
    *num_integers = ni as MPI_Count;
    *num_addresses = na as MPI_Count;
    *num_large_counts = nl as MPI_Count;
    *num_datatypes = nd as MPI_Count;
    *combiner = comb;
    Ok(())
}

/// Copies `src` into the C array `dst` of capacity `max`.
///
/// # Safety
/// `dst` must be NULL or valid for `max` writes.
unsafe fn fill<T: Copy>(dst: *mut T, max: usize, src: &[T], name: &str) -> MpiResult {
    if src.len() > max {
        return Err(MpiError::new(
            MPI_ERR_ARG,
            format!(
                "{name} has room for {max} values, the datatype has {}",
                src.len()
            ),
        ));
    }
    if src.is_empty() {
        return Ok(());
    }
    if dst.is_null() {
        return Err(MpiError::new(
            MPI_ERR_ARG,
            format!("argument '{name}' is NULL"),
        ));
    }
    // SAFETY: `dst` is not NULL (checked above) and has room for `max`
    // values (this function's contract), `max >= src.len()`; `src` is
    // oxmpi's own memory, so the two do not overlap.
    unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst, src.len()) };
    Ok(())
}

fn derived(dt: MPI_Datatype) -> MpiResult<std::sync::Arc<Datatype>> {
    let t = datatype::lookup(dt)?;
    if t.combiner() == Combiner::Named {
        return Err(MpiError::new(
            MPI_ERR_TYPE,
            "a predefined datatype has no contents (its combiner is MPI_COMBINER_NAMED)",
        ));
    }
    Ok(t)
}

/// Handles for the datatype arguments: the same handles while they are
/// live (each to be freed once more by the caller if derived), new ones
/// for types freed since.
fn type_handles(t: &Datatype) -> Vec<MPI_Datatype> {
    t.contents()
        .types
        .iter()
        .map(|(h, ty)| registry::handle_for(*h, ty))
        .collect()
}

fn max_of(n: i64, name: &str) -> MpiResult<usize> {
    usize::try_from(n).map_err(|_| MpiError::new(MPI_ERR_ARG, format!("{name} is negative ({n})")))
}

/// The arrays `MPI_Type_get_contents(_c)` fill, with their capacities; the
/// large counts only in the `_c` form.
struct ContentArrays {
    integers: (*mut c_int, i64),
    addresses: (*mut MPI_Aint, i64),
    large_counts: Option<(*mut MPI_Count, i64)>,
    datatypes: (*mut MPI_Datatype, i64),
}

/// # Safety
/// Each array NULL or valid for its capacity in writes.
unsafe fn contents(dt: MPI_Datatype, arrays: ContentArrays) -> MpiResult {
    let t = derived(dt)?;
    let c = t.contents();
    if arrays.large_counts.is_none() && !c.large_counts.is_empty() {
        return Err(MpiError::new(
            MPI_ERR_TYPE,
            "the datatype was made with large counts: use MPI_Type_get_contents_c",
        ));
    }
    let max_d = max_of(arrays.datatypes.1, "max_datatypes")?;
    if c.types.len() > max_d {
        return Err(MpiError::new(
            MPI_ERR_ARG,
            format!(
                "max_datatypes is {max_d}, the datatype has {}",
                c.types.len()
            ),
        ));
    }
    let addrs: Vec<MPI_Aint> = c.addresses.iter().map(|&a| a as MPI_Aint).collect();
    let (integers, max_i) = arrays.integers;
    let (addresses, max_a) = arrays.addresses;
    // SAFETY: each array is NULL or valid for writing its capacity (this
    // function's contract), which is the `max` passed to `fill`; `fill` rejects
    // NULL and checks the length against it.
    unsafe {
        fill(
            integers,
            max_of(max_i, "max_integers")?,
            &c.integers,
            "array_of_integers",
        )?;
        fill(
            addresses,
            max_of(max_a, "max_addresses")?,
            &addrs,
            "array_of_addresses",
        )?;
        if let Some((large, max_l)) = arrays.large_counts {
            fill(
                large,
                max_of(max_l, "max_large_counts")?,
                &c.large_counts,
                "array_of_large_counts",
            )?;
        }
        fill(
            arrays.datatypes.0,
            max_d,
            &type_handles(&t),
            "array_of_datatypes",
        )
    }
}

/// `MPI_Type_get_contents`: a type made with large counts needs the `_c`
/// form.
pub unsafe fn get_contents(
    dt: MPI_Datatype,
    max_integers: c_int,
    max_addresses: c_int,
    max_datatypes: c_int,
    integers: *mut c_int,
    addresses: *mut MPI_Aint,
    datatypes: *mut MPI_Datatype,
) -> MpiResult {
    let arrays = ContentArrays {
        integers: (integers, max_integers.into()),
        addresses: (addresses, max_addresses.into()),
        large_counts: None,
        datatypes: (datatypes, max_datatypes.into()),
    };
    // SAFETY: MPI_Type_get_contents' contract: each array has room for the
    // `max_*` values given with it, which is `contents`' contract.
    unsafe { contents(dt, arrays) }
}

/// `MPI_Type_get_contents_c`.
pub unsafe fn get_contents_c(
    dt: MPI_Datatype,
    max_integers: MPI_Count,
    max_addresses: MPI_Count,
    max_large_counts: MPI_Count,
    max_datatypes: MPI_Count,
    integers: *mut c_int,
    addresses: *mut MPI_Aint,
    large_counts: *mut MPI_Count,
    datatypes: *mut MPI_Datatype,
) -> MpiResult {
    let arrays = ContentArrays {
        integers: (integers, max_integers),
        addresses: (addresses, max_addresses),
        large_counts: Some((large_counts, max_large_counts)),
        datatypes: (datatypes, max_datatypes),
    };
    // SAFETY: MPI_Type_get_contents_c's contract: each array has room for the
    // `max_*` values given with it, which is `contents`' contract.
    unsafe { contents(dt, arrays) }
}

pub unsafe fn get_address(location: *const c_void, address: &mut MPI_Aint) -> MpiResult {
    *address = location as MPI_Aint;
    Ok(())
}

/// Deprecated `MPI_Address` (non-const location).
pub unsafe fn address(location: *mut c_void, address: &mut MPI_Aint) -> MpiResult {
    // SAFETY: `get_address` only takes the address of `location`, never
    // dereferencing it.
    unsafe { get_address(location, address) }
}

pub unsafe fn aint_add(base: MPI_Aint, disp: MPI_Aint) -> MPI_Aint {
    base.wrapping_add(disp)
}

pub unsafe fn aint_diff(addr1: MPI_Aint, addr2: MPI_Aint) -> MPI_Aint {
    addr1.wrapping_sub(addr2)
}

/// A status argument that must be a real status (not NULL, not
/// `MPI_STATUS_IGNORE`).
///
/// # Safety
/// `status` must be NULL, `MPI_STATUS_IGNORE` or valid for reads.
unsafe fn status_in<'a>(status: *const MPI_Status) -> MpiResult<&'a MPI_Status> {
    if status as usize == 1 {
        return Err(MpiError::new(
            MPI_ERR_ARG,
            "MPI_STATUS_IGNORE is not a status to read",
        ));
    }
    // SAFETY: MPI_STATUS_IGNORE was rejected above and `as_ref` rejects
    // NULL; otherwise `status` is the caller's, valid for reads for the
    // call (this function's contract) and not written while borrowed.
    unsafe { status.as_ref() }
        .ok_or_else(|| MpiError::new(MPI_ERR_ARG, "argument 'status' is NULL"))
}

/// The status's byte count in elements of `dt` (`None`: not a whole
/// number).
///
/// # Safety
/// As for `status_in`.
unsafe fn status_count(
    status: *const MPI_Status,
    dt: MPI_Datatype,
    per: fn(&Datatype, usize) -> Option<usize>,
) -> MpiResult<Option<usize>> {
    // SAFETY: `status` is NULL, MPI_STATUS_IGNORE or valid for reads (this
    // function's contract, `status_in`'s); the reference is dropped before
    // returning.
    let status = unsafe { status_in(status) }?;
    let t = datatype::lookup(dt)?;
    let bytes = usize::try_from(status.byte_count())
        .map_err(|_| MpiError::new(MPI_ERR_ARG, "the status holds a negative byte count"))?;
    Ok(per(&t, bytes))
}

/// `MPI_Get_count` and `MPI_Get_count_c`.
pub unsafe fn get_count<T: CountOut>(
    status: *const MPI_Status,
    dt: MPI_Datatype,
    n: &mut T,
) -> MpiResult {
    // SAFETY: MPI_Get_count's `status` is NULL, MPI_STATUS_IGNORE (both
    // rejected) or a status valid for reads during the call (MPI's contract).
    *n = or_undefined(unsafe { status_count(status, dt, Datatype::count_in) }?);
    Ok(())
}

/// `MPI_Get_elements`, `MPI_Get_elements_x` and `MPI_Get_elements_c`.
pub unsafe fn get_elements<T: CountOut>(
    status: *const MPI_Status,
    dt: MPI_Datatype,
    n: &mut T,
) -> MpiResult {
    // SAFETY: MPI_Get_elements' `status` is NULL, MPI_STATUS_IGNORE (both
    // rejected) or a status valid for reads during the call (MPI's contract).
    *n = or_undefined(unsafe { status_count(status, dt, Datatype::elements_in) }?);
    Ok(())
}

/// `MPI_Status_set_elements` and `_x`: the status then holds the bytes of
/// `count` basic elements of `dt`, so `MPI_Get_elements` with `dt` gives
/// `count`.
pub unsafe fn status_set_elements(
    status: *mut MPI_Status,
    dt: MPI_Datatype,
    elements: usize,
) -> MpiResult {
    // SAFETY: `status` is NULL, MPI_STATUS_IGNORE (both rejected) or the
    // caller's status, valid for reads and writes during the call (MPI's
    // contract); the shared reference is only a check and is dropped here.
    unsafe { status_in(status) }?;
    let t = datatype::lookup(dt)?;
    let bytes = t.bytes_for_elements(elements).ok_or_else(|| {
        MpiError::new(
            MPI_ERR_COUNT,
            format!("{elements} basic elements of this datatype have no byte count"),
        )
    })?;
    // SAFETY: `status_in` rejected NULL and MPI_STATUS_IGNORE, so `status`
    // is the caller's status, valid for writes (MPI's contract); no
    // reference to it is live.
    unsafe { (*status).set_byte_count(bytes as MPI_Count) };
    Ok(())
}

/// `MPI_Status_set_elements_x`: the count is an `MPI_Count`.
pub unsafe fn status_set_elements_x(
    status: *mut MPI_Status,
    dt: MPI_Datatype,
    n: MPI_Count,
) -> MpiResult {
    // SAFETY: MPI_Status_set_elements_x's `status`, passed on unchanged: NULL,
    // MPI_STATUS_IGNORE (both rejected) or valid for writes (MPI's contract).
    unsafe { status_set_elements(status, dt, count::checked(n, "count")?) }
}
