//! Shared-memory segments the processes of one node make together: one
//! creates a segment, the others map it through its address (see
//! `transport::shm::segment`). One-sided windows (`MPI_Win_allocate`,
//! `MPI_Win_allocate_shared`) and the node collectives of a communicator
//! (`collective::node`) get their memory here.
//!
//! A segment is anonymous where peers can map those (nothing is ever left
//! in /dev/shm), else named, and its name is unlinked as soon as every
//! member mapped it. Every member learns whether every other one mapped
//! it, so all of them go on with the segment or all without it.
use std::sync::atomic::{AtomicU64, Ordering};

use crate::core::collective::algorithms;
use crate::core::collective::channel::Channel;
use crate::core::error::{MpiError, MpiResult};
use crate::mpi_abi::constants::MPI_ERR_NO_MEM;
use crate::transport::shm::segment::{anonymous_supported, Segment};

const PAGE: usize = 4096;

static SEGMENTS: AtomicU64 = AtomicU64::new(0);

/// A named segment's name, unique in the job and the process's life.
fn segment_name() -> String {
    format!(
        "/oxmpi-node-{}-{}",
        std::process::id(),
        SEGMENTS.fetch_add(1, Ordering::Relaxed)
    )
}

/// The error of memory that could not be had.
pub fn no_memory(len: usize, e: impl std::fmt::Display) -> MpiError {
    MpiError::new(
        MPI_ERR_NO_MEM,
        format!("cannot get {len} bytes of shared memory: {e}"),
    )
}

/// A zeroed segment of `len` bytes (at least one page), anonymous where
/// peers can map those, else named (the caller unlinks the name once the
/// peers mapped it).
pub fn new_segment(len: usize) -> MpiResult<Segment> {
    let len = len.max(1).div_ceil(PAGE) * PAGE;
    if anonymous_supported() {
        Segment::create_anonymous(len).map_err(|e| no_memory(len, e))
    } else {
        Segment::create(&segment_name(), len).map_err(|e| no_memory(len, e))
    }
}

/// Every member's segment address (`None` where a member has none), by an
/// allgather of fixed-size records over `ch`.
pub fn exchange_addresses(ch: &Channel, mine: Option<&str>) -> MpiResult<Vec<Option<String>>> {
    const RECORD: usize = 256;
    let mut record = vec![0u8; RECORD];
    if let Some(address) = mine.filter(|a| a.len() + 2 <= RECORD) {
        record[0] = 1;
        record[1] = address.len() as u8;
        record[2..2 + address.len()].copy_from_slice(address.as_bytes());
    }
    let all = algorithms::allgather(ch, &record)?;
    Ok(all
        .chunks_exact(RECORD)
        .map(|r| {
            (r[0] == 1).then(|| String::from_utf8_lossy(&r[2..2 + r[1] as usize]).into_owned())
        })
        .collect())
}

/// One segment of `len` bytes for all members of `ch` (every one on this
/// node), created by member 0 and mapped by the others; collective. The
/// outer error is a failure to communicate; the inner one, the same at
/// every member, says the segment could not be had everywhere (`what`
/// names the caller in the log).
pub fn shared_by_all(ch: &Channel, len: usize, what: &str) -> MpiResult<MpiResult<Segment>> {
    let mut created = None;
    if ch.rank == 0 {
        match new_segment(len) {
            Ok(segment) => created = Some(segment),
            Err(e) => log::error!("{what}: {e}"),
        }
    }
    let addresses = exchange_addresses(ch, created.as_ref().map(Segment::address))?;
    let Some(first) = addresses[0].clone() else {
        return Ok(Err(no_memory(
            len,
            "the node's segment could not be created",
        )));
    };
    let segment = match created {
        Some(s) => Ok(s),
        None => Segment::attach(&first).map_err(|e| no_memory(len, e)),
    };
    let verdicts = algorithms::allgather(ch, &[u8::from(segment.is_ok())])?;
    if ch.rank == 0 {
        if let Ok(s) = &segment {
            let _ = s.unlink();
        }
    }
    Ok(match segment {
        Ok(s) if verdicts.iter().all(|&v| v == 1) => Ok(s),
        Err(e) => Err(e),
        Ok(_) => Err(no_memory(
            len,
            "another process could not map the node's segment",
        )),
    })
}
