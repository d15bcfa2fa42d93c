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
use super::error::{MpiError, MpiResult};
use super::group::Group;
use super::info::InfoObject;
use super::runtime::{self, context_id};
use crate::abi::constants::*;
use crate::abi::types::{MPI_Comm, MPI_Errhandler, MPI_Group};

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

/// Context numbers with this bit set are *pre-contexts*: the channel on
/// which the members of a group agree on a new communicator's context id
/// before the communicator exists (`MPI_Comm_create_from_group`). Derived
/// from the string tag, the members and a per-(tag, members) count, so
/// concurrent creations from overlapping groups with different tags talk on
/// different contexts, and a tag used again starts a new agreement.
const PRE_CONTEXT_BIT: u64 = 1 << 39;

pub(crate) fn pre_context_number(tag: &str, members: &[ProcessId], use_count: u64) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    tag.hash(&mut h);
    members.hash(&mut h);
    use_count.hash(&mut h);
    PRE_CONTEXT_BIT | ((h.finish() & ((1 << 37) - 1)) << 1)
}

/// `MPI_Comm_create_from_group`: collective over the group's members only;
/// needs no parent communicator. `MPI_GROUP_EMPTY` gives `MPI_COMM_NULL`.
pub fn create_from_group(
    group: MPI_Group,
    tag: &str,
    errhandler: MPI_Errhandler,
) -> MpiResult<MPI_Comm> {
    let (members, rank, epoch, use_count) = {
        let mut rt = runtime::lock();
        let g = group_of(&rt, group)?;
        if g.size() == 0 {
            return Ok(MPI_COMM_NULL);
        }
        rt.errhandlers.check(errhandler)?;
        let epoch = rt
            .current_epoch()
            .ok_or_else(|| MpiError::new(MPI_ERR_OTHER, "no session or world model is open"))?;
        let me = rt.process()?.placement.rank;
        let rank = g.rank_of(me).ok_or_else(|| {
            MpiError::new(
                MPI_ERR_GROUP,
                "the calling process is not a member of the group",
            )
        })?;
        let count = rt
            .creation_counts
            .entry((tag.to_string(), g.members.to_vec()))
            .or_insert(0);
        *count += 1;
        (g.members.clone(), rank, epoch, *count)
    };
    let ch = Channel {
        members: members.clone(),
        rank,
        context_id: context_id(epoch, pre_context_number(tag, &members, use_count)),
    };
    let number = agree_context_number(&ch)?;
    let mut rt = runtime::lock();
    if rt.current_epoch() != Some(epoch) {
        return Err(MpiError::new(
            MPI_ERR_OTHER,
            "the epoch ended during communicator creation",
        ));
    }
    rt.errhandlers.retain(errhandler)?;
    Ok(rt.comms.insert(Communicator {
        members,
        rank,
        context_id: context_id(epoch, number),
        epoch,
        errhandler,
        name: String::new(),
        info: InfoObject::new(),
        remote: None,
        attributes: Default::default(),
    }))
}

/// A group handle's group (`MPI_GROUP_EMPTY` included).
pub fn group_of(rt: &runtime::Runtime, h: MPI_Group) -> MpiResult<Group> {
    if h == MPI_GROUP_EMPTY {
        return Ok(Group::empty());
    }
    rt.groups.get(h).cloned().ok_or_else(|| {
        if h == MPI_GROUP_NULL {
            MpiError::new(MPI_ERR_GROUP, "MPI_GROUP_NULL is not a valid group here")
        } else {
            MpiError::new(
                MPI_ERR_GROUP,
                format!(
                    "handle {:#010x} is not a valid (or a freed) group",
                    h as u32
                ),
            )
        }
    })
}

/// Adds a communicator derived from `parent` with the given members.
fn install(
    parent: MPI_Comm,
    members: Arc<[ProcessId]>,
    rank: usize,
    number: u64,
) -> MpiResult<MPI_Comm> {
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
        remote: None,
        attributes: Default::default(),
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

/// `MPI_Comm_create`: collective over `comm`; the members of `group` (a
/// subset of `comm`'s group) get the new communicator, the others
/// `MPI_COMM_NULL`.
pub fn create(comm: MPI_Comm, group: MPI_Group) -> MpiResult<MPI_Comm> {
    let ch = Channel::lookup(comm)?;
    let g = group_of(&runtime::lock(), group)?;
    if let Some(p) = g.members.iter().find(|p| !ch.members.contains(p)) {
        return Err(MpiError::new(
            MPI_ERR_GROUP,
            format!("process {p} of the group is not in the communicator"),
        ));
    }
    let number = agree_context_number(&ch)?;
    let me = ch.members[ch.rank];
    match g.rank_of(me) {
        Some(rank) => install(comm, g.members.clone(), rank, number),
        None => Ok(MPI_COMM_NULL),
    }
}

/// `MPI_Comm_create_group`: collective over the group's members only.
pub fn create_group(comm: MPI_Comm, group: MPI_Group, tag: c_int) -> MpiResult<MPI_Comm> {
    let (g, parent_context, epoch, me) = {
        let rt = runtime::lock();
        let c = rt.comms.get(comm)?;
        let me = c.members[c.rank];
        (group_of(&rt, group)?, c.context_id, c.epoch, me)
    };
    if g.size() == 0 {
        return Ok(MPI_COMM_NULL);
    }
    let rank = g.rank_of(me).ok_or_else(|| {
        MpiError::new(
            MPI_ERR_GROUP,
            "the calling process is not a member of the group",
        )
    })?;
    let use_count = {
        let mut rt = runtime::lock();
        let count = rt
            .creation_counts
            .entry((
                format!("create_group:{parent_context}:{tag}"),
                g.members.to_vec(),
            ))
            .or_insert(0);
        *count += 1;
        *count
    };
    let ch = Channel {
        members: g.members.clone(),
        rank,
        context_id: context_id(
            epoch,
            pre_context_number(
                &format!("create_group:{parent_context}:{tag}"),
                &g.members,
                use_count,
            ),
        ),
    };
    let number = agree_context_number(&ch)?;
    install(comm, g.members.clone(), rank, number)
}

/// `MPI_Comm_split_type` with `MPI_COMM_TYPE_SHARED`: one communicator per
/// node (its color is the lowest job rank on the node).
pub fn split_shared(comm: MPI_Comm, key: c_int) -> MpiResult<MPI_Comm> {
    let color = {
        let rt = runtime::lock();
        let shared = rt.process()?.psets.members("mpix://SHARED")?;
        shared.iter().copied().min().unwrap_or(0) as c_int
    };
    split(comm, color, key)
}
