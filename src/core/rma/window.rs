//! The window object: what the creating call settled (members, memory,
//! every rank's size and displacement unit), the program's settings
//! (name, error handler, attributes, info), and the state of its origin
//! and target sides.
use std::os::raw::c_int;
use std::sync::Arc;

use super::memory::{self, Exposed, Span};
use super::origin::OriginState;
use super::target::TargetState;
use crate::core::attributes::Attributes;
use crate::core::epoch::Epoch;
use crate::core::error::{MpiError, MpiResult};
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::{MPI_Aint, MPI_Comm, MPI_Win};
use crate::transport::shm::lock_word::LockWord;
use crate::transport::shm::segment::Segment;
use crate::transport::shm::single_copy;
use crate::transport::ProcessId;

/// What each rank told the others at creation.
#[derive(Clone, Copy, Debug, Default)]
pub struct Peer {
    pub size: usize,
    pub disp_unit: usize,
}

/// A rank's window memory as this process maps it: where it starts, and
/// the lock every accumulate on it holds, whichever process applies it
/// (the origin itself in place, or the target for a message), so that
/// each is atomic per element with respect to all the others.
#[derive(Clone, Copy, Debug)]
pub struct DirectTarget {
    pub base: usize,
    pub lock: LockWord,
}

/// A rank's `MPI_Win_create` memory on this node, which this process
/// does not map: puts and gets copy straight into and out of it with
/// `process_vm_writev`/`process_vm_readv` (one copy, no message, no work
/// at the target), or with a plain copy when the rank is this process.
#[derive(Clone, Copy, Debug)]
pub struct SingleCopyTarget {
    pub pid: libc::pid_t,
    pub base: usize,
    /// The memory is this process's own.
    pub own: bool,
}

impl SingleCopyTarget {
    /// Writes `data` over `spans` (addresses in the target), the bytes in
    /// order; false if the kernel refused or copied part of it only.
    pub fn write(&self, spans: &[Span], data: &[u8]) -> bool {
        if self.own {
            memory::write(spans, data);
            return true;
        }
        let mut parts = Vec::with_capacity(spans.len());
        let mut at = 0;
        for &(address, len) in spans {
            let len = len.min(data.len() - at);
            parts.push((address, &data[at..at + len]));
            at += len;
        }
        single_copy::write_remote_parts(self.pid, &parts) == parts.len()
    }

    /// Reads `spans` into `out`, the bytes in order; false as for
    /// [`SingleCopyTarget::write`].
    pub fn read(&self, spans: &[Span], out: &mut [u8]) -> bool {
        if self.own {
            memory::read(spans, out);
            return true;
        }
        let mut parts: Vec<(usize, &mut [u8])> = Vec::with_capacity(spans.len());
        let mut rest = out;
        for &(address, len) in spans {
            let (part, after) = rest.split_at_mut(len.min(rest.len()));
            parts.push((address, part));
            rest = after;
        }
        let n = parts.len();
        single_copy::read_remote_parts(self.pid, &mut parts) == n
    }
}

/// The values the predefined attributes point at (boxed, so their
/// addresses stay put while the window lives).
#[derive(Debug)]
pub struct PredefinedValues {
    pub base: usize,
    pub size: MPI_Aint,
    pub disp_unit: c_int,
    pub flavor: c_int,
    pub model: c_int,
}

/// The access epoch this rank has open as an origin.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Access {
    #[default]
    None,
    /// Between fences (any fence not asserting `MPI_MODE_NOSUCCEED`).
    Fence,
    /// `MPI_Win_lock` on these ranks (exclusive or not).
    Locks(Vec<(usize, bool)>),
    /// `MPI_Win_lock_all`.
    LockAll { checked: bool },
    /// `MPI_Win_start` on these ranks.
    Started(Vec<usize>),
}

pub struct Window {
    /// The private communicator (a dup of the creating one).
    pub comm: MPI_Comm,
    pub members: Arc<[ProcessId]>,
    pub rank: usize,
    /// The context of the window's messages (the private communicator's
    /// point-to-point context).
    pub context_id: u64,
    pub epoch: Epoch,
    pub flavor: c_int,
    pub exposed: Exposed,
    pub peers: Vec<Peer>,
    /// The shared segment of `MPI_Win_allocate_shared` (every rank's
    /// memory, at `shared_offsets`), or the private one of
    /// `MPI_Win_allocate`.
    pub segment: Option<Segment>,
    pub shared_offsets: Vec<usize>,
    /// Each rank's memory as this process maps it, for the ranks whose
    /// memory it maps (a shared window's node, the node's
    /// `MPI_Win_allocate` segments, its own): small puts and gets to them
    /// are loads and stores, accumulates are done in place under the
    /// memory's lock, no message (see `super::origin`).
    pub direct: Vec<Option<DirectTarget>>,
    /// For `MPI_Win_create`: the memory of this node's ranks (this one's
    /// too) that puts and gets reach by single copy, where the kernel
    /// allows it (see [`SingleCopyTarget`]).
    pub single_copy: Vec<Option<SingleCopyTarget>>,
    /// The other ranks' segments this process maps (for `direct`).
    pub peer_segments: Vec<Segment>,
    pub name: String,
    pub errhandler: c_int,
    /// No error handler was ever set on this window: its errors go to
    /// `MPI_COMM_WORLD`'s handler of the moment while the world model is
    /// active, as in MPICH (whose windows keep no handler until one is
    /// set), so a program that sets `MPI_ERRORS_RETURN` on
    /// `MPI_COMM_WORLD` gets a window's errors returned too. Otherwise
    /// (and for `MPI_Win_get_errhandler`) `errhandler`, MPI's default
    /// `MPI_ERRORS_ARE_FATAL`.
    pub follows_world_errhandler: bool,
    pub attributes: Attributes,
    /// The info hints in effect (key, value).
    pub hints: Vec<(String, String)>,
    /// `acc_single_intrinsic=true` at creation: accumulates on elements
    /// atomic instructions can update use them (see `super::atomics`).
    pub atomics: bool,
    pub predefined: Box<PredefinedValues>,
    pub access: Access,
    pub origin: OriginState,
    pub target: TargetState,
    /// The window's share of the background progress (see
    /// `super::progress`), given back when the window goes.
    pub serving: Option<super::progress::Serving>,
}

/// The info keys a window reports, with their defaults.
pub const HINT_DEFAULTS: [(&str, &str); 6] = [
    ("no_locks", "false"),
    ("acc_single_intrinsic", "false"),
    ("accumulate_ordering", "rar,raw,war,waw"),
    ("accumulate_ops", "same_op_no_op"),
    ("same_size", "false"),
    ("same_disp_unit", "false"),
];

impl Window {
    pub fn size(&self) -> usize {
        self.members.len()
    }

    /// Checks a target rank (`MPI_ERR_RANK`); `None` for `MPI_PROC_NULL`.
    pub fn target_rank(&self, rank: c_int) -> MpiResult<Option<usize>> {
        if rank == MPI_PROC_NULL {
            return Ok(None);
        }
        usize::try_from(rank)
            .ok()
            .filter(|&r| r < self.size())
            .map(Some)
            .ok_or_else(|| {
                MpiError::new(
                    MPI_ERR_RANK,
                    format!(
                        "rank {rank} is not in the window's group of {}",
                        self.size()
                    ),
                )
            })
    }

    /// Whether this rank may access `target` now (an access epoch that
    /// covers it is open).
    pub fn may_access(&self, target: usize) -> bool {
        match &self.access {
            Access::None => false,
            Access::Fence | Access::LockAll { .. } => true,
            Access::Locks(locks) => locks.iter().any(|&(r, _)| r == target),
            Access::Started(group) => group.contains(&target),
        }
    }

    /// The error of an operation outside an access epoch.
    pub fn sync_error(&self, what: &str, target: usize) -> MpiError {
        MpiError::new(
            MPI_ERR_RMA_SYNC,
            format!("{what} to rank {target} outside an access epoch to it (no fence, lock or start covers it)"),
        )
    }

    /// The lock of this rank's accumulates, where other processes may
    /// apply them in place (see [`DirectTarget`]).
    pub fn accumulate_lock(&self) -> Option<LockWord> {
        self.direct[self.rank].map(|d| d.lock)
    }

    /// The value of a hint in effect.
    pub fn hint(&self, key: &str) -> Option<&str> {
        self.hints
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// The error of a handle that names no live window.
pub fn invalid_window(win: MPI_Win) -> MpiError {
    MpiError::new(
        MPI_ERR_WIN,
        format!("{:#010x} is not a valid window", win as u32),
    )
}
