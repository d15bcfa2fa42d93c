//! Intercommunicators: two disjoint groups; point-to-point ranks name the
//! remote group. Every process of both groups agrees on one context
//! number: each group agrees on its largest free number, the two leaders
//! exchange theirs, and the larger is sent to every member. An
//! intercommunicator reserves four context ids: `cid` for point-to-point,
//! `cid + 1` between the leaders, `cid + 2` inside the local group and
//! `cid + 3` for the merged communicator's agreement.
//!
//! Intercommunicators made from intercommunicators (`MPI_Comm_dup`,
//! `MPI_Comm_split`, `MPI_Comm_create`) agree over both groups of the
//! parent (its collective context) on the new context and on who is in
//! which new group.
use std::os::raw::c_int;
use std::sync::Arc;

use super::collective::algorithms::{allgather, allreduce_max_u64, allreduce_max_u64_tagged};
use super::collective::channel::{Channel, COLLECTIVE_TAG};
use super::collective::inter::InterChannels;
use super::collective::sequence;
use super::comm::{Communicator, ProcessId};
use super::comm_constructors::group_of;
use super::context_numbers::{exhausted, pre_context_number, EXHAUSTED};
use super::epoch::Epoch;
use super::error::{MpiError, MpiResult};
use super::runtime;
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::{MPI_Comm, MPI_Errhandler, MPI_Group};

/// Context ids an intercommunicator takes.
pub const INTERCOMM_CONTEXTS: u64 = 4;

fn encode(values: &[u64]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn decode(bytes: &[u8]) -> Vec<u64> {
    bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect()
}

/// Sends a variable-length list of numbers (its length first).
pub(crate) fn send_list(ch: &Channel, dest: usize, tag: c_int, values: &[u64]) -> MpiResult {
    let len = (values.len() as u64).to_le_bytes();
    let body = encode(values);
    let a = ch.isend(dest, tag, &len)?;
    let b = ch.isend(dest, tag, &body)?;
    ch.wait_all(&[a, b]).map(|_| ())
}

pub(crate) fn recv_list(ch: &Channel, source: usize, tag: c_int) -> MpiResult<Vec<u64>> {
    let mut len = [0u8; 8];
    let r = ch.irecv(source, tag, &mut len)?;
    ch.wait_all(&[r])?;
    let mut body = vec![0u8; u64::from_le_bytes(len) as usize * 8];
    let r = ch.irecv(source, tag, &mut body)?;
    ch.wait_all(&[r])?;
    Ok(decode(&body))
}

/// The leader sends `values` to every other member of `ch`; the others
/// receive them.
fn share_from_leader(ch: &Channel, leader: usize, values: &[u64]) -> MpiResult<Vec<u64>> {
    if ch.rank == leader {
        for r in (0..ch.size()).filter(|&r| r != leader) {
            send_list(ch, r, COLLECTIVE_TAG, values)?;
        }
        Ok(values.to_vec())
    } else {
        recv_list(ch, leader, COLLECTIVE_TAG)
    }
}

/// This process's proposal: its next free context number (reserved).
fn reserve_proposal() -> MpiResult<u64> {
    runtime::lock().propose_context(INTERCOMM_CONTEXTS)
}

/// Takes the agreed context `number` (every member fails alike when one
/// could create no more communicators).
fn settle(number: u64) -> MpiResult {
    if number == EXHAUSTED {
        return Err(exhausted());
    }
    runtime::lock()
        .contexts()?
        .1
        .skip_past(number, INTERCOMM_CONTEXTS);
    Ok(())
}

fn check_leader(leader: c_int, size: usize, what: &str) -> MpiResult {
    if leader < 0 || leader as usize >= size {
        return Err(MpiError::new(
            MPI_ERR_RANK,
            format!("{what} {leader} is not in 0..{size}"),
        ));
    }
    Ok(())
}

fn install(
    local: Arc<[ProcessId]>,
    rank: usize,
    remote: Arc<[ProcessId]>,
    epoch: Epoch,
    number: u64,
    errhandler: MPI_Errhandler,
) -> MpiResult<MPI_Comm> {
    runtime::lock().add_comm(Communicator {
        remote: Some(remote),
        ..Communicator::new(local, rank, epoch, number, errhandler)
    })
}

/// `MPI_Intercomm_create`: the leaders talk on `peer_comm` with `tag`.
pub fn create(
    local_comm: MPI_Comm,
    local_leader: c_int,
    peer_comm: MPI_Comm,
    remote_leader: c_int,
    tag: c_int,
) -> MpiResult<MPI_Comm> {
    create_with(local_comm, local_leader, |mine| {
        let (peer, me, other) = {
            let rt = runtime::lock();
            let p = rt.comms().get(peer_comm)?;
            p.check_rank(remote_leader)?;
            (
                Channel {
                    members: p.peers().clone(),
                    rank: p.rank,
                    context_id: p.context_id,
                },
                p.members[p.rank],
                p.peers()[remote_leader as usize],
            )
        };
        // The leader with the lower process id sends first (ranks cannot
        // decide: on an intercommunicator both leaders may be rank 0).
        if me < other {
            send_list(&peer, remote_leader as usize, tag, mine)?;
            recv_list(&peer, remote_leader as usize, tag)
        } else {
            let t = recv_list(&peer, remote_leader as usize, tag)?;
            send_list(&peer, remote_leader as usize, tag, mine)?;
            Ok(t)
        }
    })
}

/// The leader's word for "failed" in place of a context number (no
/// context number comes near it).
const FAILED: u64 = u64::MAX;

/// An intercommunicator between `local_comm` and a group whose leader the
/// local leader reaches through `exchange`: given this group's proposal
/// and members (`[proposal, members...]`), it returns the other group's,
/// in the same form (the other leader's `exchange` sends and receives
/// the same lists). `MPI_Intercomm_create` exchanges on a peer
/// communicator; `MPI_Comm_accept`/`connect` and `MPI_Comm_join` on a
/// port's context (`super::ports`).
pub fn create_with(
    local_comm: MPI_Comm,
    local_leader: c_int,
    exchange: impl FnOnce(&[u64]) -> MpiResult<Vec<u64>>,
) -> MpiResult<MPI_Comm> {
    let (local, epoch, errhandler, follows) = {
        let rt = runtime::lock();
        let c = rt.comms().get(local_comm)?;
        if c.is_inter() {
            return Err(MpiError::new(
                MPI_ERR_COMM,
                "the local communicator is an intercommunicator",
            ));
        }
        (
            Channel::of(c),
            c.epoch,
            c.errhandler,
            c.follows_world_errhandler,
        )
    };
    check_leader(local_leader, local.size(), "local_leader")?;
    let proposal = allreduce_max_u64(&local, reserve_proposal()?)?;
    let mut remote_members = Vec::new();
    let mut number = proposal;
    // The leader's exchange; a failure there reaches every member (an
    // empty list), so none waits for a number that never comes.
    let mut failure = None;
    if local.rank == local_leader as usize {
        let mut mine = vec![proposal];
        mine.extend(local.members.iter().map(|&p| p as u64));
        match exchange(&mine) {
            Ok(theirs) if !theirs.is_empty() => {
                number = number.max(theirs[0]);
                remote_members = theirs[1..].to_vec();
            }
            Ok(_) => {
                failure = Some(MpiError::new(MPI_ERR_INTERN, "an empty group list"));
            }
            Err(e) => failure = Some(e),
        }
    }
    // A failure goes to the members as `[FAILED, class]`, so that each
    // returns the leader's error class.
    let mut shared = match &failure {
        Some(e) => vec![FAILED, e.class as u64],
        None => vec![number],
    };
    shared.extend(remote_members.iter());
    let shared = share_from_leader(&local, local_leader as usize, &shared)?;
    if let Some(e) = failure {
        return Err(e);
    }
    let number = match shared[..] {
        [FAILED, class] => {
            return Err(MpiError::new(
                class as c_int,
                "the leader could not make the connection to the other group",
            ))
        }
        [number, ..] => number,
        [] => {
            return Err(MpiError::new(
                MPI_ERR_INTERN,
                "an empty list from the leader",
            ))
        }
    };
    settle(number)?;
    let remote: Arc<[ProcessId]> = shared[1..].iter().map(|&p| p as ProcessId).collect();
    if remote.iter().any(|p| local.members.contains(p)) {
        return Err(MpiError::new(
            MPI_ERR_COMM,
            "the two groups of an intercommunicator overlap",
        ));
    }
    let created = install(
        local.members.clone(),
        local.rank,
        remote,
        epoch,
        number,
        errhandler,
    )?;
    // Like its local communicator, it follows MPI_COMM_WORLD's handler
    // while none was set (see `Communicator::follows_world_errhandler`).
    runtime::lock()
        .comms_mut()
        .get_mut(created)?
        .follows_world_errhandler = follows;
    Ok(created)
}

/// `MPI_Intercomm_create_from_groups`: no parent communicator; the groups'
/// members and the string tag define where the agreement happens.
pub fn create_from_groups(
    local_group: MPI_Group,
    local_leader: c_int,
    remote_group: MPI_Group,
    remote_leader: c_int,
    tag: &str,
    errhandler: MPI_Errhandler,
) -> MpiResult<MPI_Comm> {
    let (local, remote, epoch, me, use_count) = {
        let mut rt = runtime::lock();
        let local = group_of(&rt, local_group)?;
        let remote = group_of(&rt, remote_group)?;
        rt.errhandlers().check(errhandler)?;
        if rt.current_epoch().is_none() {
            return Err(MpiError::new(
                MPI_ERR_OTHER,
                "no session or world model is open",
            ));
        }
        let me = rt.job_rank()?;
        let mut all = local.members.to_vec();
        all.extend(remote.members.iter());
        all.sort_unstable();
        let (epoch, contexts) = rt.contexts()?;
        let count = contexts.count_creation(format!("intercomm:{tag}"), all);
        (local, remote, epoch, me, count)
    };
    check_leader(local_leader, local.size(), "local_leader")?;
    check_leader(remote_leader, remote.size(), "remote_leader")?;
    if remote.members.iter().any(|p| local.members.contains(p)) {
        return Err(MpiError::new(
            MPI_ERR_GROUP,
            "the local and remote groups overlap",
        ));
    }
    let rank = local.rank_of(me).ok_or_else(|| {
        MpiError::new(
            MPI_ERR_GROUP,
            "the calling process is not in the local group",
        )
    })?;
    let local_ch = Channel {
        members: local.members.clone(),
        rank,
        context_id: epoch.context_id(pre_context_number(
            &format!("intercomm-local:{tag}"),
            &local.members,
            use_count,
        )),
    };
    let proposal = allreduce_max_u64(&local_ch, reserve_proposal()?)?;
    let mut number = proposal;
    if rank == local_leader as usize {
        let a = local.members[local_leader as usize];
        let b = remote.members[remote_leader as usize];
        let pair: Arc<[ProcessId]> = vec![a.min(b), a.max(b)].into();
        let mut all = local.members.to_vec();
        all.extend(remote.members.iter());
        all.sort_unstable();
        let leaders = Channel {
            members: pair,
            rank: usize::from(a > b),
            context_id: epoch.context_id(pre_context_number(
                &format!("intercomm-leaders:{tag}"),
                &all,
                use_count,
            )),
        };
        let mut theirs = [0u8; 8];
        leaders.exchange(
            1 - leaders.rank,
            &proposal.to_le_bytes(),
            1 - leaders.rank,
            &mut theirs,
        )?;
        number = number.max(u64::from_le_bytes(theirs));
    }
    let number = share_from_leader(&local_ch, local_leader as usize, &[number])?[0];
    settle(number)?;
    install(
        local.members.clone(),
        rank,
        remote.members.clone(),
        epoch,
        number,
        errhandler,
    )
}

/// Every process's entry of a gather, per group: the local group's and the
/// remote group's, each in its group's rank order.
type GroupEntries = (Vec<Vec<u8>>, Vec<Vec<u8>>);

/// What a new intercommunicator takes from its intercommunicator parent.
struct Parent {
    channels: InterChannels,
    local: Arc<[ProcessId]>,
    remote: Arc<[ProcessId]>,
    rank: usize,
    epoch: Epoch,
    errhandler: MPI_Errhandler,
}

impl Parent {
    /// `comm`'s facts if it is an intercommunicator (`None` if not).
    fn of(comm: MPI_Comm) -> MpiResult<Option<Parent>> {
        let Some(channels) = InterChannels::lookup(comm)? else {
            return Ok(None);
        };
        let rt = runtime::lock();
        let c = rt.comms().get(comm)?;
        Ok(Some(Parent {
            channels,
            local: c.members.clone(),
            remote: c.peers().clone(),
            rank: c.rank,
            epoch: c.epoch,
            errhandler: c.errhandler,
        }))
    }

    /// Agrees on the new context over both groups (everyone takes part).
    fn agree(&self) -> MpiResult<u64> {
        let number = allreduce_max_u64(self.channels.both(), reserve_proposal()?)?;
        settle(number)?;
        Ok(number)
    }

    /// Every process's `mine` (`n` bytes each), split into the local and
    /// the remote group's entries, each in its group's rank order.
    fn gather(&self, mine: &[u8]) -> MpiResult<GroupEntries> {
        let n = mine.len();
        let all = allgather(self.channels.both(), mine)?;
        let entries: Vec<Vec<u8>> = all.chunks_exact(n).map(<[u8]>::to_vec).collect();
        let remote_base = self.channels.remote_base();
        let local_base = if remote_base == 0 {
            self.remote.len()
        } else {
            0
        };
        Ok((
            entries[local_base..local_base + self.local.len()].to_vec(),
            entries[remote_base..remote_base + self.remote.len()].to_vec(),
        ))
    }

    /// Installs the intercommunicator of `local` (this process among
    /// them) and `remote`; `MPI_COMM_NULL` if either is empty.
    fn install(
        &self,
        local: Vec<ProcessId>,
        remote: Vec<ProcessId>,
        number: u64,
    ) -> MpiResult<MPI_Comm> {
        let me = self.local[self.rank];
        let Some(rank) = local.iter().position(|&p| p == me) else {
            return Ok(MPI_COMM_NULL);
        };
        if remote.is_empty() {
            return Ok(MPI_COMM_NULL);
        }
        install(
            local.into(),
            rank,
            remote.into(),
            self.epoch,
            number,
            self.errhandler,
        )
    }
}

/// `MPI_Comm_dup` of an intercommunicator; `None` if `comm` is not one.
pub fn dup(comm: MPI_Comm) -> MpiResult<Option<MPI_Comm>> {
    let Some(p) = Parent::of(comm)? else {
        return Ok(None);
    };
    let number = p.agree()?;
    p.install(p.local.to_vec(), p.remote.to_vec(), number)
        .map(Some)
}

/// `MPI_Comm_split` of an intercommunicator: in each group the members
/// with a color, ordered by key then by rank, face the other group's
/// members with the same color; `MPI_COMM_NULL` for `MPI_UNDEFINED` or
/// when no one of the other group has this color. `None` if `comm` is not
/// an intercommunicator.
pub fn split(comm: MPI_Comm, color: c_int, key: c_int) -> MpiResult<Option<MPI_Comm>> {
    let Some(p) = Parent::of(comm)? else {
        return Ok(None);
    };
    let mut mine = [0u8; 8];
    mine[..4].copy_from_slice(&color.to_le_bytes());
    mine[4..].copy_from_slice(&key.to_le_bytes());
    let (local, remote) = p.gather(&mine)?;
    let number = p.agree()?;
    if color == MPI_UNDEFINED {
        return Ok(Some(MPI_COMM_NULL));
    }
    let pick = |entries: &[Vec<u8>], members: &[ProcessId]| -> Vec<ProcessId> {
        let mut chosen: Vec<(c_int, usize)> = entries
            .iter()
            .enumerate()
            .filter_map(|(rank, e)| {
                let their_color = c_int::from_le_bytes(e[..4].try_into().expect("4 bytes"));
                let their_key = c_int::from_le_bytes(e[4..].try_into().expect("4 bytes"));
                (their_color == color).then_some((their_key, rank))
            })
            .collect();
        chosen.sort();
        chosen.iter().map(|&(_, r)| members[r]).collect()
    };
    p.install(pick(&local, &p.local), pick(&remote, &p.remote), number)
        .map(Some)
}

/// `MPI_Comm_create` of an intercommunicator: `group` (a subset of the
/// local group, the same at every local member) faces the group the other
/// side gave; `MPI_COMM_NULL` for processes outside `group` or when the
/// other side's group is empty. `None` if `comm` is not an
/// intercommunicator.
pub fn create_from(comm: MPI_Comm, group: MPI_Group) -> MpiResult<Option<MPI_Comm>> {
    let Some(p) = Parent::of(comm)? else {
        return Ok(None);
    };
    let g = group_of(&runtime::lock(), group)?;
    if let Some(q) = g.members.iter().find(|q| !p.local.contains(q)) {
        return Err(MpiError::new(
            MPI_ERR_GROUP,
            format!("process {q} of the group is not in the local group"),
        ));
    }
    let me = p.local[p.rank];
    let my_rank = g.rank_of(me).map_or(-1i64, |r| r as i64);
    let (local, remote) = p.gather(&my_rank.to_le_bytes())?;
    let number = p.agree()?;
    // Each side's new group, in the order of that side's group argument.
    let side = |entries: &[Vec<u8>], members: &[ProcessId]| -> Vec<ProcessId> {
        let mut chosen: Vec<(i64, ProcessId)> = entries
            .iter()
            .zip(members)
            .map(|(e, &q)| (i64::from_le_bytes(e[..8].try_into().expect("8 bytes")), q))
            .filter(|&(r, _)| r >= 0)
            .collect();
        chosen.sort();
        chosen.into_iter().map(|(_, q)| q).collect()
    };
    p.install(side(&local, &p.local), side(&remote, &p.remote), number)
        .map(Some)
}

/// `MPI_Intercomm_merge`: the group with `high` false comes first (on a
/// tie, the group whose leader has the lower job rank).
pub fn merge(intercomm: MPI_Comm, high: bool) -> MpiResult<MPI_Comm> {
    let (local, remote, rank, cid, epoch, errhandler) = {
        let rt = runtime::lock();
        let c = rt.comms().get(intercomm)?;
        let remote = c.remote.clone().ok_or_else(|| {
            MpiError::new(
                MPI_ERR_COMM,
                "MPI_Intercomm_merge needs an intercommunicator",
            )
        })?;
        (
            c.members.clone(),
            remote,
            c.rank,
            c.context_id,
            c.epoch,
            c.errhandler,
        )
    };
    let local_ch = Channel {
        members: local.clone(),
        rank,
        context_id: cid + 2,
    };
    let mut remote_high = 0u64;
    if rank == 0 {
        let a = local[0];
        let b = remote[0];
        let leaders = Channel {
            members: vec![a.min(b), a.max(b)].into(),
            rank: usize::from(a > b),
            context_id: cid + 1,
        };
        let mut theirs = [0u8; 8];
        leaders.exchange(
            1 - leaders.rank,
            &(high as u64).to_le_bytes(),
            1 - leaders.rank,
            &mut theirs,
        )?;
        remote_high = u64::from_le_bytes(theirs);
    }
    let remote_high = share_from_leader(&local_ch, 0, &[remote_high])?[0] != 0;
    let local_first = if high != remote_high {
        !high
    } else {
        local[0] < remote[0]
    };
    let merged: Arc<[ProcessId]> = if local_first {
        local.iter().chain(remote.iter()).copied().collect()
    } else {
        remote.iter().chain(local.iter()).copied().collect()
    };
    let my_rank = if local_first {
        rank
    } else {
        remote.len() + rank
    };
    let merged_ch = Channel {
        members: merged.clone(),
        rank: my_rank,
        context_id: cid + 3,
    };
    let proposal = runtime::lock().propose_context(2)?;
    // The merged order depends on each call's `high`: two merges in a row
    // number the members differently on this one context, so each takes a
    // tag of its own (every member merges in the same order).
    let tag = sequence::next_tag(cid + 3);
    let number = allreduce_max_u64_tagged(&merged_ch, tag, proposal)?;
    if number == EXHAUSTED {
        return Err(exhausted());
    }
    let mut rt = runtime::lock();
    rt.contexts()?.1.skip_past(number, 2);
    rt.add_comm(Communicator::new(
        merged, my_rank, epoch, number, errhandler,
    ))
}
