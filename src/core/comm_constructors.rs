//! Making communicators from communicators: dup and split. The new context
//! id is agreed by the members alone: each proposes the lowest context
//! number it has free in this epoch (reserving it), the largest proposal
//! wins, and everyone moves its next free number past it. So two live
//! communicators of a process never share a context id, whichever epoch or
//! call made them. (Concurrent creations from several threads of one
//! process on overlapping communicators are not covered by this scheme.)
use std::os::raw::c_int;
use std::sync::Arc;

use super::collective::algorithms::{allgather, allreduce_max_u64};
use super::collective::channel::Channel;
use super::comm::{Communicator, ProcessId};
use super::error::MpiResult;
use super::info::InfoObject;
use super::runtime::{self, context_id};
use crate::abi::constants::*;
use crate::abi::types::MPI_Comm;

/// Agrees on a context number among the members of `ch`.
fn agree_context_number(ch: &Channel) -> MpiResult<u64> {
    let proposal = {
        let mut rt = runtime::lock();
        let n = rt.next_context_number;
        rt.next_context_number += 2;
        n
    };
    let number = allreduce_max_u64(ch, proposal)?;
    let mut rt = runtime::lock();
    rt.next_context_number = rt.next_context_number.max(number + 2);
    Ok(number)
}

/// Adds a communicator derived from `parent` with the given members.
fn install(parent: MPI_Comm, members: Arc<[ProcessId]>, rank: usize, number: u64) -> MpiResult<MPI_Comm> {
    let mut rt = runtime::lock();
    let p = rt.comms.get(parent)?;
    let epoch = p.epoch;
    let errhandler = p.errhandler;
    rt.errhandlers.retain(errhandler)?;
    Ok(rt.comms.insert(Communicator {
        members,
        rank,
        context_id: context_id(epoch, number),
        epoch,
        errhandler,
        name: String::new(),
        info: InfoObject::new(),
    }))
}

/// `MPI_Comm_dup`: same members and order, new context.
pub fn dup(comm: MPI_Comm) -> MpiResult<MPI_Comm> {
    let ch = Channel::lookup(comm)?;
    let number = agree_context_number(&ch)?;
    install(comm, ch.members.clone(), ch.rank, number)
}

/// `MPI_Comm_split`: members with the same color, ordered by key then by
/// rank in `comm`; `MPI_UNDEFINED` gives `MPI_COMM_NULL`.
pub fn split(comm: MPI_Comm, color: c_int, key: c_int) -> MpiResult<MPI_Comm> {
    let ch = Channel::lookup(comm)?;
    let mut mine = [0u8; 8];
    mine[..4].copy_from_slice(&color.to_le_bytes());
    mine[4..].copy_from_slice(&key.to_le_bytes());
    let all = allgather(&ch, &mine)?;
    let number = agree_context_number(&ch)?;
    if color == MPI_UNDEFINED {
        return Ok(MPI_COMM_NULL);
    }
    let mut chosen: Vec<(c_int, usize)> = all
        .chunks_exact(8)
        .enumerate()
        .filter_map(|(rank, c)| {
            let their_color = c_int::from_le_bytes(c[..4].try_into().expect("4 bytes"));
            let their_key = c_int::from_le_bytes(c[4..].try_into().expect("4 bytes"));
            (their_color == color).then_some((their_key, rank))
        })
        .collect();
    chosen.sort();
    let members: Arc<[ProcessId]> = chosen.iter().map(|&(_, r)| ch.members[r]).collect();
    let rank = chosen
        .iter()
        .position(|&(_, r)| r == ch.rank)
        .expect("this process has its own color");
    install(comm, members, rank, number)
}
