//! Groups through the C ABI.
use std::os::raw::c_int;

use crate::abi::args::{array, out};
use crate::core::comm_constructors::group_of;
use crate::core::error::{MpiError, MpiResult};
use crate::core::group::Group;
use crate::core::runtime::{self, Runtime};
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::*;

/// A new group handle (`MPI_GROUP_EMPTY` for an empty group, as MPICH does).
pub(crate) fn insert(rt: &mut Runtime, g: Group) -> MPI_Group {
    if g.size() == 0 {
        return MPI_GROUP_EMPTY;
    }
    rt.groups_mut().insert(g)
}

/// `n` ints at `p` (`n` checked; NULL only when `n` is 0).
///
/// # Safety
/// `p` must hold `n` ints.
unsafe fn ints<'a>(p: *const c_int, n: usize, name: &str) -> MpiResult<&'a [c_int]> {
    // SAFETY: `p` holds `n` ints or is NULL (this function's contract), which
    // is `array`'s; the slice lives as long as the caller's array does.
    unsafe { array(p, n, name) }
}

pub unsafe fn size(group: MPI_Group, size: &mut c_int) -> MpiResult {
    *size = group_of(&runtime::lock(), group)?.size() as c_int;
    Ok(())
}

/// `MPI_UNDEFINED` when this process is not in the group.
pub unsafe fn rank(group: MPI_Group, rank: &mut c_int) -> MpiResult {
    let rt = runtime::lock();
    let g = group_of(&rt, group)?;
    let me = rt.job_rank()?;
    *rank = g.rank_of(me).map_or(MPI_UNDEFINED, |r| r as c_int);
    Ok(())
}

pub unsafe fn free(group: &mut MPI_Group) -> MpiResult {
    let mut rt = runtime::lock();
    if *group != MPI_GROUP_EMPTY {
        group_of(&rt, *group)?;
        rt.groups_mut().remove(*group);
    }
    *group = MPI_GROUP_NULL;
    Ok(())
}

pub unsafe fn compare(group1: MPI_Group, group2: MPI_Group, result: &mut c_int) -> MpiResult {
    let rt = runtime::lock();
    *result = group_of(&rt, group1)?.compare(&group_of(&rt, group2)?);
    Ok(())
}

pub unsafe fn translate_ranks(
    group1: MPI_Group,
    n: usize,
    ranks1: *const c_int,
    group2: MPI_Group,
    ranks2: *mut c_int,
) -> MpiResult {
    // SAFETY: MPI_Group_translate_ranks' `ranks1` holds `n` ints (MPI's
    // contract) and is only read during this call; MPI forbids aliasing it
    // with the output `ranks2`, so the writes below do not touch it.
    let input = unsafe { ints(ranks1, n, "ranks1") }?;
    if ranks2.is_null() && !input.is_empty() {
        return Err(MpiError::new(MPI_ERR_ARG, "argument 'ranks2' is NULL"));
    }
    let rt = runtime::lock();
    let (a, b) = (group_of(&rt, group1)?, group_of(&rt, group2)?);
    for (i, &r) in input.iter().enumerate() {
        let t = a.translate(r, &b)?;
        // SAFETY: `ranks2` is not NULL (checked above, as `input` is not
        // empty) and holds `n` ints (MPI's contract); `i < input.len() == n`.
        unsafe { *ranks2.add(i) = t };
    }
    Ok(())
}

fn binary(
    group1: MPI_Group,
    group2: MPI_Group,
    newgroup: &mut MPI_Group,
    op: fn(&Group, &Group) -> Group,
) -> MpiResult {
    let mut rt = runtime::lock();
    let g = op(&group_of(&rt, group1)?, &group_of(&rt, group2)?);
    *newgroup = insert(&mut rt, g);
    Ok(())
}

pub unsafe fn union(group1: MPI_Group, group2: MPI_Group, newgroup: *mut MPI_Group) -> MpiResult {
    // SAFETY: MPI_Group_union's `newgroup` is NULL (rejected by `out`) or valid
    // for writing one handle during this call (MPI's contract).
    let newgroup = unsafe { out(newgroup, "newgroup") }?;
    binary(group1, group2, newgroup, Group::union)
}

pub unsafe fn intersection(
    group1: MPI_Group,
    group2: MPI_Group,
    newgroup: *mut MPI_Group,
) -> MpiResult {
    // SAFETY: MPI_Group_intersection's `newgroup` is NULL (rejected by `out`)
    // or valid for writing one handle during this call (MPI's contract).
    let newgroup = unsafe { out(newgroup, "newgroup") }?;
    binary(group1, group2, newgroup, Group::intersection)
}

pub unsafe fn difference(
    group1: MPI_Group,
    group2: MPI_Group,
    newgroup: *mut MPI_Group,
) -> MpiResult {
    // SAFETY: MPI_Group_difference's `newgroup` is NULL (rejected by `out`) or
    // valid for writing one handle during this call (MPI's contract).
    let newgroup = unsafe { out(newgroup, "newgroup") }?;
    binary(group1, group2, newgroup, Group::difference)
}

/// Makes a group from `group` with `derive` and stores it in `newgroup`:
/// the shape of incl, excl and their range forms.
fn derived(
    group: MPI_Group,
    newgroup: &mut MPI_Group,
    derive: impl FnOnce(&Group) -> MpiResult<Group>,
) -> MpiResult {
    let mut rt = runtime::lock();
    let g = derive(&group_of(&rt, group)?)?;
    *newgroup = insert(&mut rt, g);
    Ok(())
}

/// `MPI_Group_incl` (`INCLUDE`) and `MPI_Group_excl`: the `n` ranks at
/// `ranks`.
///
/// # Safety
/// `ranks` must hold `n` ints; `newgroup` is the caller's output.
pub unsafe fn by_list<const INCLUDE: bool>(
    group: MPI_Group,
    n: usize,
    ranks: *const c_int,
    newgroup: *mut MPI_Group,
) -> MpiResult {
    // SAFETY: `ranks` holds `n` ints and `newgroup` is NULL (rejected by
    // `out`) or valid for one write (this function's contract), both for
    // this call; MPI forbids aliasing the input with the output.
    let (ranks, newgroup) = unsafe { (ints(ranks, n, "ranks")?, out(newgroup, "newgroup")?) };
    select(group, newgroup, Ranks::List(ranks), INCLUDE)
}

/// `MPI_Group_range_incl` (`INCLUDE`) and `MPI_Group_range_excl`: the
/// `n` rank triplets at `r`.
///
/// # Safety
/// `r` must hold `n` triplets; `newgroup` is the caller's output.
pub unsafe fn by_ranges<const INCLUDE: bool>(
    group: MPI_Group,
    n: usize,
    r: *mut [c_int; 3],
    newgroup: *mut MPI_Group,
) -> MpiResult {
    // SAFETY: `r` holds `n` triplets and `newgroup` is NULL (rejected by
    // `out`) or valid for one write (this function's contract), both for
    // this call; MPI forbids aliasing the input with the output.
    let (r, newgroup) = unsafe {
        (
            array(r.cast_const(), n, "ranges")?,
            out(newgroup, "newgroup")?,
        )
    };
    select(group, newgroup, Ranks::Ranges(r), INCLUDE)
}

/// The ranks a derived group names: a list, or `(first, last, stride)`
/// triplets.
enum Ranks<'a> {
    List(&'a [c_int]),
    Ranges(&'a [[c_int; 3]]),
}

/// `MPI_Group_incl`, `excl`, `range_incl` and `range_excl`: the group of
/// `ranks` of `group` (`include`), or of the others.
fn select(group: MPI_Group, newgroup: &mut MPI_Group, ranks: Ranks, include: bool) -> MpiResult {
    derived(group, newgroup, |g| {
        let expanded;
        let list = match ranks {
            Ranks::List(list) => list,
            Ranks::Ranges(r) => {
                expanded = g.expand_ranges(r)?;
                &expanded[..]
            }
        };
        if include {
            g.incl(list)
        } else {
            g.excl(list)
        }
    })
}

/// `MPI_Comm_group`: the communicator's (local) group.
pub unsafe fn comm_group(comm: MPI_Comm, group: &mut MPI_Group) -> MpiResult {
    let mut rt = runtime::lock();
    let members = rt.comms().get(comm)?.members.clone();
    *group = insert(&mut rt, Group { members });
    Ok(())
}
