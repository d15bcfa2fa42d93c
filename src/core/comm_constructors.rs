//! Making communicators from communicators: dup and split. The new context
//! id is agreed by the members alone: each proposes the lowest context
//! number it has free in this epoch (reserving it), the largest proposal
//! wins, and everyone moves its next free number past it. So two live
//! communicators of a process never share a context id, whichever epoch or
//! call made them.
//!
//! Creations can overlap in one process: nonblocking dups
//! (`MPI_Comm_idup`), and blocking creations from several threads of a
//! process that provides `MPI_THREAD_MULTIPLE`. Then a process may agree
//! on a number above its own proposal that it has meanwhile given to
//! another creation. So while any member may overlap creations (a
//! nonblocking dup in flight, or `MPI_THREAD_MULTIPLE` provided by the
//! world model or a session: each proposal carries that flag in its low
//! bit; numbers are even), the agreement checks: each member
//! claims the winning number if it is still free for it (at or above its
//! next free number, or its own proposal) and the members agree on whether
//! all could; if not, all move past it and agree again. Without the flag
//! the agreement is the single allgather it always was. (Intercommunicator
//! creation does not take part in the check: running one while an idup is
//! in flight on overlapping processes is not covered.)
use std::future::Future;
use std::os::raw::c_int;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use super::collective::algorithms::allgather;
use super::collective::call::Call;
use super::collective::channel::{Channel, COLLECTIVE_TAG};
use super::collective::executor::block;
use super::collective::gather::allgather_bytes;
use super::collective::inter::InterChannels;
use super::collective::layout::Blocks;
use super::comm::{Communicator, ProcessId};
use super::context_numbers::{exhausted, pre_context_number, EXHAUSTED};
use super::error::{MpiError, MpiResult};
use super::group::Group;
use super::intercomm::INTERCOMM_CONTEXTS;
use super::runtime;
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::{MPI_Comm, MPI_Errhandler, MPI_Group};

/// Nonblocking dups started in this process and not yet finished.
static IN_FLIGHT: AtomicUsize = AtomicUsize::new(0);

/// Counts a nonblocking dup as in flight while it lives.
struct InFlight;

impl InFlight {
    fn new() -> InFlight {
        IN_FLIGHT.fetch_add(1, Ordering::AcqRel);
        InFlight
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        IN_FLIGHT.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Context numbers an intracommunicator takes (point-to-point and
/// collectives).
const INTRACOMM_CONTEXTS: u64 = 2;

/// This process's proposal: its next `count` free context numbers
/// (reserved; see `Runtime::propose_context`).
fn reserve_proposal(count: u64) -> MpiResult<u64> {
    runtime::lock().propose_context(count)
}

/// Every member's `value`, in rank order.
async fn allgather_u64(call: &Call, value: u64) -> MpiResult<Vec<u64>> {
    let p = call.size();
    let mut all = vec![0u8; 8 * p];
    all[call.rank() * 8..(call.rank() + 1) * 8].copy_from_slice(&value.to_le_bytes());
    allgather_bytes(call, &mut all, &Blocks::equal(p, 8)).await?;
    Ok(all
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect())
}

/// Agrees on a context number among the members of `call`, starting from
/// this process's reserved `proposal`; `in_flight` says a nonblocking
/// creation of this process may overlap the agreement (see the module
/// documentation). Every member takes the same rounds (each decision is
/// made from gathered values), so retries reuse the call's tag safely.
async fn agree(call: &Call, mut proposal: u64, in_flight: bool, count: u64) -> MpiResult<u64> {
    loop {
        let busy =
            in_flight || IN_FLIGHT.load(Ordering::Acquire) > 0 || runtime::lock().may_run_threads();
        let all = allgather_u64(call, proposal | u64::from(busy)).await?;
        let number = all.iter().map(|v| v & !1).max().unwrap_or(proposal);
        if number == EXHAUSTED {
            return Err(exhausted());
        }
        if all.iter().all(|v| v & 1 == 0) {
            runtime::lock().contexts()?.1.skip_past(number, count);
            return Ok(number);
        }
        // Claim `number` if it is still free here: nothing at or above the
        // next free number is taken, and our own proposal is ours alone.
        let free = runtime::lock().contexts()?.1.claim(number, proposal, count);
        let verdicts = allgather_u64(call, u64::from(!free)).await?;
        if verdicts.iter().all(|&v| v == 0) {
            return Ok(number);
        }
        // Someone had given it away: everyone moves past it and tries again.
        runtime::lock().contexts()?.1.skip_past(number, count);
        proposal = reserve_proposal(count)?;
    }
}

/// Agrees on a context number among the members of `ch` (blocking).
fn agree_context_number(ch: &Channel) -> MpiResult<u64> {
    let proposal = reserve_proposal(INTRACOMM_CONTEXTS)?;
    block(agree(
        &Call::with_tag(ch.clone(), COLLECTIVE_TAG),
        proposal,
        false,
        INTRACOMM_CONTEXTS,
    ))
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
        rt.errhandlers().check(errhandler)?;
        if rt.current_epoch().is_none() {
            return Err(MpiError::new(
                MPI_ERR_OTHER,
                "no session or world model is open",
            ));
        }
        let me = rt.job_rank()?;
        let rank = g.rank_of(me).ok_or_else(|| {
            MpiError::new(
                MPI_ERR_GROUP,
                "the calling process is not a member of the group",
            )
        })?;
        let (epoch, contexts) = rt.contexts()?;
        let count = contexts.count_creation(tag.to_string(), g.members.to_vec());
        (g.members.clone(), rank, epoch, count)
    };
    let ch = Channel {
        members: members.clone(),
        rank,
        context_id: epoch.context_id(pre_context_number(tag, &members, use_count)),
    };
    let number = agree_context_number(&ch)?;
    let mut rt = runtime::lock();
    if rt.current_epoch() != Some(epoch) {
        return Err(MpiError::new(
            MPI_ERR_OTHER,
            "the epoch ended during communicator creation",
        ));
    }
    rt.add_comm(Communicator::new(members, rank, epoch, number, errhandler))
}

/// A group handle's group (`MPI_GROUP_EMPTY` included).
pub fn group_of(rt: &runtime::Runtime, h: MPI_Group) -> MpiResult<Group> {
    if h == MPI_GROUP_EMPTY {
        return Ok(Group::empty());
    }
    rt.groups().get(h).cloned().ok_or_else(|| {
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
    let p = rt.comms().get(parent)?;
    let (epoch, errhandler, follows) = (p.epoch, p.errhandler, p.follows_world_errhandler);
    rt.add_comm(Communicator {
        follows_world_errhandler: follows,
        ..Communicator::new(members, rank, epoch, number, errhandler)
    })
}

/// `MPI_Comm_dup`: same members and order, new context (an
/// intercommunicator's dup is one too).
pub fn dup(comm: MPI_Comm) -> MpiResult<MPI_Comm> {
    if let Some(created) = super::intercomm::dup(comm)? {
        return Ok(created);
    }
    let ch = Channel::lookup(comm)?;
    let number = agree_context_number(&ch)?;
    let created = install(comm, ch.members.clone(), ch.rank, number)?;
    copy_topology(comm, created)?;
    Ok(created)
}

/// Gives `to` the topology of `from` (a dup's).
fn copy_topology(from: MPI_Comm, to: MPI_Comm) -> MpiResult {
    let mut rt = runtime::lock();
    let topology = rt.comms().get(from)?.topology.clone();
    rt.comms_mut().get_mut(to)?.topology = topology;
    Ok(())
}

/// `MPI_Comm_idup`'s start: takes the call's tag from `comm`'s collective
/// sequence and reserves this process's proposal now, in call order (so
/// the members agree on which call is which); the returned future agrees
/// on the context and installs the communicator, giving its handle. The
/// parent's epoch, error handler and topology are taken now, so freeing `comm`
/// before completion does not disturb the dup. An intercommunicator's
/// members of both groups agree over its collective context, and the dup
/// is an intercommunicator of the same groups.
pub fn start_idup(
    comm: MPI_Comm,
) -> MpiResult<impl Future<Output = MpiResult<MPI_Comm>> + Send + 'static> {
    let (ch, remote, count) = match InterChannels::lookup(comm)? {
        Some(chs) => {
            let rt = runtime::lock();
            let c = rt.comms().get(comm)?;
            let local = Channel {
                members: c.members.clone(),
                rank: c.rank,
                context_id: c.context_id,
            };
            // The agreement runs on both groups; the dup keeps the local
            // group (`local`) facing the remote one.
            let both = chs.both().clone();
            (both, Some((local, c.peers().clone())), INTERCOMM_CONTEXTS)
        }
        None => (Call::channel(comm)?, None, INTRACOMM_CONTEXTS),
    };
    let (epoch, errhandler, topology, follows) = {
        let mut rt = runtime::lock();
        let p = rt.comms().get(comm)?;
        let (epoch, errhandler, topology, follows) = (
            p.epoch,
            p.errhandler,
            p.topology.clone(),
            p.follows_world_errhandler,
        );
        // The new communicator's reference, taken now (see above).
        rt.errhandlers_mut().retain(errhandler)?;
        (epoch, errhandler, topology, follows)
    };
    let call = Call::start(ch);
    let proposal = match reserve_proposal(count) {
        Ok(proposal) => proposal,
        Err(e) => {
            let _ = runtime::lock().errhandlers_mut().release(errhandler);
            return Err(e);
        }
    };
    let in_flight = InFlight::new();
    Ok(async move {
        let agreed = agree(&call, proposal, true, count).await;
        let mut rt = runtime::lock();
        let number = match agreed {
            Ok(number) => number,
            Err(e) => {
                let _ = rt.errhandlers_mut().release(errhandler);
                return Err(e);
            }
        };
        let created = rt.add_comm_holding_errhandler(match remote {
            Some((local, remote)) => Communicator {
                remote: Some(remote),
                follows_world_errhandler: follows,
                ..Communicator::new(local.members, local.rank, epoch, number, errhandler)
            },
            None => Communicator {
                topology,
                follows_world_errhandler: follows,
                ..Communicator::new(
                    call.ch.members.clone(),
                    call.ch.rank,
                    epoch,
                    number,
                    errhandler,
                )
            },
        });
        drop(in_flight);
        Ok(created)
    })
}

/// `MPI_Comm_split`: members with the same color, ordered by key then by
/// rank in `comm`; `MPI_UNDEFINED` gives `MPI_COMM_NULL` (for an
/// intercommunicator see [`super::intercomm::split`]).
pub fn split(comm: MPI_Comm, color: c_int, key: c_int) -> MpiResult<MPI_Comm> {
    if let Some(created) = super::intercomm::split(comm, color, key)? {
        return Ok(created);
    }
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
/// `MPI_COMM_NULL` (for an intercommunicator see
/// [`super::intercomm::create_from`]).
pub fn create(comm: MPI_Comm, group: MPI_Group) -> MpiResult<MPI_Comm> {
    if let Some(created) = super::intercomm::create_from(comm, group)? {
        return Ok(created);
    }
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
        let c = rt.comms().get(comm)?;
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
    let creation = format!("create_group:{parent_context}:{tag}");
    let use_count = runtime::lock()
        .contexts()?
        .1
        .count_creation(creation.clone(), g.members.to_vec());
    let ch = Channel {
        members: g.members.clone(),
        rank,
        context_id: epoch.context_id(pre_context_number(&creation, &g.members, use_count)),
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
