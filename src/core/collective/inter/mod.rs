//! Collectives on intercommunicators (MPI 4.1 §6.2.2): each group's data
//! goes to the other group. A call uses two channels of the
//! intercommunicator's reserved context ids, both with one tag taken from
//! the sequence of `cid + 1` (every member of both groups makes every
//! collective call, in the same order, so they agree on it):
//!
//! - `local`, on `cid + 2`: the local group, for the steps inside a group
//!   (a reduction or gather towards the local leader, rank 0; a broadcast
//!   or scatter from it);
//! - `both`, on `cid + 1`: both groups, the one whose first member has the
//!   lower job rank first, for the steps between the groups.
//!
//! Neither context carries the program's own messages (those use `cid`),
//! and the sequence tags are below the fixed tag oxmpi's own agreements
//! (`MPI_Intercomm_merge`) use on these contexts, so nothing else matches
//! a collective's messages.
pub mod exchange;
pub mod rooted;

use std::future::Future;
use std::os::raw::c_int;

use super::call::Call;
use super::channel::Channel;
use super::plan::{Collective, Persistent};
use super::sequence;
use crate::core::error::MpiResult;
use crate::core::runtime;
use crate::mpi_abi::types::MPI_Comm;

/// The channels of an intercommunicator, before a call takes its tag.
#[derive(Clone)]
pub struct InterChannels {
    local: Channel,
    both: Channel,
    remote_base: usize,
    remote_size: usize,
}

impl InterChannels {
    /// The channels of `comm` if it is an intercommunicator (`None` for an
    /// intracommunicator; `MPI_ERR_COMM` for a bad handle).
    pub fn lookup(comm: MPI_Comm) -> MpiResult<Option<InterChannels>> {
        let rt = runtime::lock();
        let c = rt.comms().get(comm)?;
        let (Some(remote), Some((members, local_first))) = (c.remote.clone(), c.both_groups())
        else {
            return Ok(None);
        };
        let (local_base, remote_base) = if local_first {
            (0, c.size())
        } else {
            (remote.len(), 0)
        };
        Ok(Some(InterChannels {
            local: Channel {
                members: c.members.clone(),
                rank: c.rank,
                context_id: c.context_id + 2,
            },
            both: Channel {
                members,
                rank: local_base + c.rank,
                context_id: c.context_id + 1,
            },
            remote_base,
            remote_size: remote.len(),
        }))
    }

    pub fn local_size(&self) -> usize {
        self.local.size()
    }

    pub fn rank(&self) -> usize {
        self.local.rank
    }

    pub fn remote_size(&self) -> usize {
        self.remote_size
    }

    /// Both groups as one channel (the collective context).
    pub fn both(&self) -> &Channel {
        &self.both
    }

    /// Where the remote group starts among [`InterChannels::both`]'s
    /// members (the local group starts at the other end).
    pub fn remote_base(&self) -> usize {
        self.remote_base
    }
}

/// One collective call on an intercommunicator.
pub struct Inter {
    /// The local group.
    pub local: Call,
    /// Both groups (see [`Inter::remote`] for the remote ranks in it).
    pub both: Call,
    remote_base: usize,
    remote_size: usize,
}

impl Inter {
    /// Starts a call with the next tag of the intercommunicator's sequence.
    pub fn start(chs: InterChannels) -> Inter {
        let tag = sequence::next_tag(chs.both.context_id);
        Inter::with_tag(chs, tag)
    }

    /// A call with `tag` (a persistent collective's, taken at its
    /// initialization: see [`InterPlan`]).
    pub fn with_tag(chs: InterChannels, tag: c_int) -> Inter {
        Inter {
            local: Call::with_tag(chs.local, tag),
            both: Call::with_tag(chs.both, tag),
            remote_base: chs.remote_base,
            remote_size: chs.remote_size,
        }
    }

    /// The rank in `both` of rank `r` of the remote group.
    pub fn remote(&self, r: usize) -> usize {
        self.remote_base + r
    }

    pub fn remote_size(&self) -> usize {
        self.remote_size
    }

    /// This process's rank in the local group.
    pub fn rank(&self) -> usize {
        self.local.rank()
    }

    pub fn local_size(&self) -> usize {
        self.local.size()
    }

    /// Whether this process is its group's leader (local rank 0), which
    /// talks to the other group.
    pub fn is_leader(&self) -> bool {
        self.rank() == 0
    }
}

/// A process's part in a rooted collective on an intercommunicator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// The root (`MPI_ROOT`).
    Root,
    /// The root's group, not the root (`MPI_PROC_NULL`): takes no part.
    Idle,
    /// The other group; the root is this rank of the remote group.
    Leaf(usize),
}

/// An intercommunicator collective prepared but not made: the channels,
/// the checked arguments and the algorithm, as [`super::plan::Plan`] is
/// for an intracommunicator, so the blocking, nonblocking and persistent
/// forms come from one builder. A call made once takes the next tag of
/// the intercommunicator's sequence when it is made; a persistent one
/// takes its tag at initialization and keeps it (see `super::plan`).
pub struct InterPlan<S, A> {
    chs: InterChannels,
    args: S,
    algorithm: A,
}

impl<S, A, Fut> InterPlan<S, A>
where
    S: Clone + Send + Sync + 'static,
    A: Fn(Inter, S) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = MpiResult> + Send + 'static,
{
    pub fn new(chs: InterChannels, args: S, algorithm: A) -> Self {
        InterPlan {
            chs,
            args,
            algorithm,
        }
    }
}

impl<S, A, Fut> Collective for InterPlan<S, A>
where
    S: Clone + Send + Sync + 'static,
    A: Fn(Inter, S) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = MpiResult> + Send + 'static,
{
    fn once(self) -> impl Future<Output = MpiResult> + Send + 'static {
        (self.algorithm)(Inter::start(self.chs), self.args)
    }
}

impl<S, A, Fut> Persistent for InterPlan<S, A>
where
    S: Clone + Send + Sync + 'static,
    A: Fn(Inter, S) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = MpiResult> + Send + 'static,
{
    fn reserve_tag(&self) -> c_int {
        sequence::next_tag(self.chs.both.context_id)
    }

    fn again(&self, tag: c_int) -> impl Future<Output = MpiResult> + Send + 'static {
        (self.algorithm)(Inter::with_tag(self.chs.clone(), tag), self.args.clone())
    }
}
