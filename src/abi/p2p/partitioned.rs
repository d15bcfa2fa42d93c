//! Partitioned communication through the C ABI (`MPI_Psend_init`,
//! `MPI_Precv_init`, `MPI_Pready`, `_range`, `_list`, `MPI_Parrived`): the
//! arguments are checked here, the engine does the rest (see
//! `core::p2p::partitioned`). Started by `MPI_Start`/`MPI_Startall`,
//! completed by the usual waits and tests, freed by `MPI_Request_free`.
use std::os::raw::{c_int, c_void};

use super::message_buffer;
use crate::abi::args::array;
use crate::core::error::{MpiError, MpiResult};
use crate::core::p2p::partitioned::{Peer, Spec};
use crate::core::runtime::{self, Runtime};
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::*;

/// The other side of an init call (`None` for `MPI_PROC_NULL`), checked
/// against the communicator.
fn peer(rt: &Runtime, comm: MPI_Comm, rank: c_int, role: &str) -> MpiResult<Option<Peer>> {
    let c = rt.comms().get(comm)?;
    if rank == MPI_PROC_NULL {
        return Ok(None);
    }
    if rank == MPI_ANY_SOURCE {
        return Err(MpiError::new(
            MPI_ERR_RANK,
            "a partitioned receive names its source (MPI_ANY_SOURCE is not allowed)",
        ));
    }
    let process = c
        .peer(rank)
        .map_err(|e| MpiError::new(e.class, format!("{role}: {e}")))?;
    // The collective context: for an intercommunicator, both groups, the
    // group whose first member has the lower job rank first.
    let (own_rank, peer_rank) = match c.both_groups() {
        None => (c.rank, rank as usize),
        Some((_, local_first)) => {
            let remote = c.peers().len();
            if local_first {
                (c.rank, c.size() + rank as usize)
            } else {
                (remote + c.rank, rank as usize)
            }
        }
    };
    Ok(Some(Peer {
        process,
        context_id: c.context_id + 1,
        own_rank: own_rank as c_int,
        peer_rank: peer_rank as c_int,
        program_rank: rank,
    }))
}

/// The buffer and shape of an init call.
///
/// # Safety
/// `buf` must hold `partitions * count` elements of `datatype` while the
/// request exists (MPI's contract for partitioned buffers).
unsafe fn spec(
    buf: *const c_void,
    partitions: c_int,
    count: MPI_Count,
    datatype: MPI_Datatype,
    peer: Option<Peer>,
    tag: c_int,
) -> MpiResult<Spec> {
    let partitions = usize::try_from(partitions)
        .map_err(|_| MpiError::new(MPI_ERR_ARG, format!("partitions {partitions} is negative")))?;
    let count = usize::try_from(count)
        .map_err(|_| MpiError::new(MPI_ERR_COUNT, format!("count {count} is negative")))?;
    let total = partitions.checked_mul(count).ok_or_else(|| {
        MpiError::new(
            MPI_ERR_COUNT,
            format!("{partitions} partitions of {count} elements"),
        )
    })?;
    // The datatype is checked even for an empty buffer (which
    // `message_buffer` lets name MPI_DATATYPE_NULL, for plain messages).
    crate::core::datatype::lookup_for_message(datatype)?;
    // SAFETY: this function's contract.
    let buf = unsafe { message_buffer(buf, total, datatype) }?;
    Ok(Spec {
        buf,
        partitions,
        count,
        peer,
        tag,
    })
}

pub unsafe fn psend_init(
    buf: *const c_void,
    partitions: c_int,
    count: MPI_Count,
    datatype: MPI_Datatype,
    dest: c_int,
    tag: c_int,
    comm: MPI_Comm,
    info: MPI_Info,
    request: &mut MPI_Request,
) -> MpiResult {
    let mut rt = runtime::lock();
    crate::abi::info::check_ignored(&rt, info)?;
    let peer = peer(&rt, comm, dest, "dest")?;
    // SAFETY: MPI_Psend_init's contract: `buf` holds the partitions while
    // the request exists.
    let spec = unsafe { spec(buf, partitions, count, datatype, peer, tag) }?;
    let (engine, endpoints) = rt.engine_and_endpoints()?;
    *request = engine.psend_init(endpoints, spec)?;
    Ok(())
}

pub unsafe fn precv_init(
    buf: *mut c_void,
    partitions: c_int,
    count: MPI_Count,
    datatype: MPI_Datatype,
    source: c_int,
    tag: c_int,
    comm: MPI_Comm,
    info: MPI_Info,
    request: &mut MPI_Request,
) -> MpiResult {
    let mut rt = runtime::lock();
    crate::abi::info::check_ignored(&rt, info)?;
    let peer = peer(&rt, comm, source, "source")?;
    // SAFETY: MPI_Precv_init's contract: `buf` has room for the partitions
    // while the request exists and is not touched while a round is active.
    let spec = unsafe { spec(buf, partitions, count, datatype, peer, tag) }?;
    let (engine, endpoints) = rt.engine_and_endpoints()?;
    *request = engine.precv_init(endpoints, spec);
    Ok(())
}

fn partition_index(partition: c_int) -> MpiResult<usize> {
    usize::try_from(partition)
        .map_err(|_| MpiError::new(MPI_ERR_ARG, format!("partition {partition} is negative")))
}

/// Marks partitions ready, in order.
fn ready(request: MPI_Request, partitions: impl Iterator<Item = c_int>) -> MpiResult {
    let mut rt = runtime::lock();
    let (engine, endpoints) = rt.engine_and_endpoints()?;
    // The request is checked even when the list is empty.
    engine.check_pready(request)?;
    for p in partitions {
        engine.pready(endpoints, request, partition_index(p)?)?;
    }
    Ok(())
}

pub unsafe fn pready(partition: c_int, request: MPI_Request) -> MpiResult {
    ready(request, std::iter::once(partition))
}

pub unsafe fn pready_range(low: c_int, high: c_int, request: MPI_Request) -> MpiResult {
    if low > high {
        return Err(MpiError::new(
            MPI_ERR_ARG,
            format!("partition range {low}..={high} is empty"),
        ));
    }
    ready(request, low..=high)
}

pub unsafe fn pready_list(
    length: c_int,
    partitions: *mut c_int,
    request: MPI_Request,
) -> MpiResult {
    let n = usize::try_from(length)
        .map_err(|_| MpiError::new(MPI_ERR_ARG, format!("length {length} is negative")))?;
    // SAFETY: MPI_Pready_list's contract: `array_of_partitions` holds
    // `length` ints.
    let list = unsafe { array(partitions.cast_const(), n, "array_of_partitions") }?;
    ready(request, list.iter().copied())
}

/// `MPI_Parrived`: moves what can move first, so a program that polls
/// partitions sees them arrive.
pub unsafe fn parrived(request: MPI_Request, partition: c_int, flag: &mut c_int) -> MpiResult {
    let index = partition_index(partition)?;
    let mut rt = runtime::lock();
    rt.progress();
    *flag = rt.engine().parrived(request, index)? as c_int;
    Ok(())
}
