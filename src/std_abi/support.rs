//! The standard-ABI entry points' helpers that need the layers above the
//! vocabulary (the runtime, oxmpi's own entry points): the panic guard,
//! array lengths that depend on an object, and conversions after the call
//! that depend on the object queried. The generated code reaches them and
//! the pure conversions of `mpi_abi::standard::convert` (re-exported here)
//! under one name.
use std::os::raw::{c_int, c_void};

use crate::mpi_abi::constants as c;
pub use crate::mpi_abi::standard::convert::*;
use crate::mpi_abi::standard::types as s;
use crate::mpi_abi::standard::values::IntGroup;
use crate::mpi_abi::types as m;

/// Runs a standard-ABI entry point's body; a panic (caught here only if
/// the conversions themselves fail, oxmpi's entry points contain their
/// own) becomes `MPI_ERR_INTERN`.
pub fn guard(f: impl FnOnce() -> c_int) -> c_int {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
        .unwrap_or_else(|_| code_out(c::MPI_ERR_INTERN))
}

/// The number of processes an `MPI_Alltoallw` exchanges with (the
/// length of its datatype arrays): the group's size, the remote group's
/// for an intercommunicator; 0 for an invalid communicator (which the
/// call then reports).
pub fn peers(comm: s::MPI_Comm) -> usize {
    let comm: m::MPI_Comm = comm_in(comm);
    let rt = crate::core::runtime::lock();
    rt.comms().get(comm).map_or(0, |c| c.peers().len())
}

/// The length of a neighborhood `alltoallw`'s datatype arrays: the
/// topology's out-degree (`sending`) or in-degree at this process; 0 for a
/// communicator without a topology (which the call then reports).
pub fn neighbor_degree(comm: s::MPI_Comm, sending: bool) -> usize {
    use crate::abi::entry_points as e;
    let comm: m::MPI_Comm = comm_in(comm);
    let mut topo = c::MPI_UNDEFINED;
    // SAFETY: oxmpi's entry point with a local output (so are the calls below).
    if unsafe { e::PMPI_Topo_test(comm, &mut topo) } != c::MPI_SUCCESS {
        return 0;
    }
    let mut n: c_int = 0;
    let rc = match topo {
        c::MPI_CART => {
            let mut ndims = 0;
            // SAFETY: as above.
            let rc = unsafe { e::PMPI_Cartdim_get(comm, &mut ndims) };
            n = 2 * ndims;
            rc
        }
        c::MPI_GRAPH => {
            let mut rank = 0;
            // SAFETY: as above.
            unsafe { e::PMPI_Comm_rank(comm, &mut rank) };
            // SAFETY: as above.
            unsafe { e::PMPI_Graph_neighbors_count(comm, rank, &mut n) }
        }
        c::MPI_DIST_GRAPH => {
            let (mut indegree, mut outdegree, mut weighted) = (0, 0, 0);
            // SAFETY: as above.
            let rc = unsafe {
                e::PMPI_Dist_graph_neighbors_count(
                    comm,
                    &mut indegree,
                    &mut outdegree,
                    &mut weighted,
                )
            };
            n = if sending { outdegree } else { indegree };
            rc
        }
        _ => return 0,
    };
    if rc == c::MPI_SUCCESS {
        n.max(0) as usize
    } else {
        0
    }
}

/// `MPI_Comm_spawn_multiple`'s error code count: the sum of `maxprocs`.
///
/// # Safety
/// `maxprocs` is NULL or holds `count` ints.
pub unsafe fn sum_of(count: c_int, maxprocs: *const c_int) -> usize {
    if maxprocs.is_null() || count <= 0 {
        return 0;
    }
    // SAFETY: MPI's contract: `count` entries.
    let all = unsafe { std::slice::from_raw_parts(maxprocs, count as usize) };
    all.iter().map(|&n| n.max(0) as usize).sum()
}

/// The standard values of the window flavors and models, which
/// `MPI_Win_get_attr` points the program at.
static FLAVORS: [c_int; 4] = [311, 312, 313, 314];
static MODELS: [c_int; 2] = [321, 322];

/// After `MPI_Win_get_attr`: the `MPI_WIN_CREATE_FLAVOR` and
/// `MPI_WIN_MODEL` attributes point to oxmpi's value; point them to the
/// standard's instead.
///
/// # Safety
/// `attribute_val` and `flag` are the program's arguments of the call
/// (NULL or valid).
pub unsafe fn win_attr_out(keyval: c_int, attribute_val: *mut c_void, flag: *mut c_int) {
    if attribute_val.is_null() || flag.is_null() {
        return;
    }
    // SAFETY: the function's contract: `flag` is valid.
    if unsafe { *flag } == 0 {
        return;
    }
    let (group, table): (IntGroup, &'static [c_int]) = match keyval {
        c::MPI_WIN_CREATE_FLAVOR => (IntGroup::Flavor, &FLAVORS),
        c::MPI_WIN_MODEL => (IntGroup::Model, &MODELS),
        _ => return,
    };
    let slot = attribute_val.cast::<*const c_int>();
    // SAFETY: the call stored a pointer to oxmpi's int in the program's
    // `void *` slot (the function's contract).
    let ours = unsafe { **slot };
    let std = int_out(group, ours);
    if let Some(p) = table.iter().find(|&&v| v == std) {
        // SAFETY: as above; the slot is valid for writes.
        unsafe { *slot = p };
    }
}

/// The standard's `MPI_PROC_NULL` and `MPI_ANY_SOURCE`, which
/// `MPI_Comm_get_attr` points the program at for `MPI_HOST` and `MPI_IO`.
static RANK_SENTINELS: [c_int; 2] = [-3, -1];

/// After `MPI_Comm_get_attr` (and `MPI_Attr_get`): `MPI_HOST` and
/// `MPI_IO` are ranks, which may be a sentinel in oxmpi's value; point
/// the program at the standard's.
///
/// # Safety
/// `attribute_val` and `flag` are the program's arguments of the call
/// (NULL or valid).
pub unsafe fn comm_attr_out(keyval: c_int, attribute_val: *mut c_void, flag: *mut c_int) {
    if attribute_val.is_null() || flag.is_null() || !matches!(keyval, c::MPI_HOST | c::MPI_IO) {
        return;
    }
    // SAFETY: the function's contract: `flag` is valid.
    if unsafe { *flag } == 0 {
        return;
    }
    let slot = attribute_val.cast::<*const c_int>();
    // SAFETY: the call stored a pointer to oxmpi's int in the program's
    // `void *` slot (the function's contract).
    let ours = unsafe { **slot };
    let std = int_out(IntGroup::Rank, ours);
    if let Some(p) = RANK_SENTINELS.iter().find(|&&v| v == std) {
        // SAFETY: as above; the slot is valid for writes.
        unsafe { *slot = p };
    }
}

/// After `MPI_Type_get_contents`: the subarray and darray combiners
/// report orders and distributions among their integers; translate them.
///
/// # Safety
/// `ints` is NULL or the program's array of `max` ints.
pub unsafe fn contents_out(
    datatype: m::MPI_Datatype,
    max: i64,
    ints: *mut c_int,
    width: crate::abi::count::Width,
) {
    if ints.is_null() || max <= 0 {
        return;
    }
    let (mut ni, mut na, mut nl, mut nd, mut combiner) = (0i64, 0i64, 0i64, 0i64, 0);
    // SAFETY: the out-arguments are locals.
    let rc = unsafe {
        crate::abi::entry_points::PMPI_Type_get_envelope_c(
            datatype,
            &mut ni,
            &mut na,
            &mut nl,
            &mut nd,
            &mut combiner,
        )
    };
    if rc != c::MPI_SUCCESS {
        return;
    }
    // SAFETY: the function's contract: `max` ints.
    let ints = unsafe { std::slice::from_raw_parts_mut(ints, max.min(ni) as usize) };
    let large = matches!(width, crate::abi::count::Width::Large);
    let at = if combiner == c::MPI_COMBINER_DARRAY {
        2
    } else {
        0
    };
    let Some(&ndims) = ints.get(at) else { return };
    let ndims = ndims.max(0) as usize;
    let mut fix = |at: usize, group: IntGroup| {
        if let Some(v) = ints.get_mut(at) {
            *v = int_out(group, *v);
        }
    };
    match combiner {
        c::MPI_COMBINER_SUBARRAY => {
            // [ndims, sizes, subsizes, starts, order]; large: [ndims, order].
            fix(if large { 1 } else { 1 + 3 * ndims }, IntGroup::Order);
        }
        c::MPI_COMBINER_DARRAY => {
            // [size, rank, ndims, gsizes, distribs, dargs, psizes, order];
            // large: gsizes are large counts.
            let distribs = if large { 3 } else { 3 + ndims };
            for i in 0..ndims {
                fix(distribs + i, IntGroup::Distrib);
                fix(distribs + ndims + i, IntGroup::Darg);
            }
            fix(distribs + 3 * ndims, IntGroup::Order);
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::handles::{handle_at, ObjectKind};
    use crate::mpi_abi::standard::values::PREDEFINED_LIMIT;

    #[test]
    fn oxmpi_handles_are_above_the_predefined_range() {
        for kind in [
            ObjectKind::Comm,
            ObjectKind::Datatype,
            ObjectKind::File,
            ObjectKind::Request,
        ] {
            let h = handle_at(kind, 0);
            assert!(h as u32 as usize >= PREDEFINED_LIMIT);
        }
        assert_eq!(
            object_out(handle_at(ObjectKind::Comm, 3)),
            handle_at(ObjectKind::Comm, 3) as u32 as usize
        );
        assert_eq!(object_out(c::MPI_COMM_WORLD), 0x101);
        assert_eq!(object_out(c::MPI_INT), 0x209);
    }

    #[test]
    fn dynamic_bit_matches_the_error_codes() {
        assert_eq!(DYNAMIC, crate::core::error_codes::DYNAMIC);
    }

    #[test]
    fn file_handles_match_the_io_layer() {
        let h = handle_at(ObjectKind::File, 2);
        let std = file_out(crate::abi::io::to_c(h));
        assert_eq!(std as usize, h as u32 as usize);
        assert_eq!(crate::abi::io::handle(file_in(std)), h);
    }
}
