//! Communicators: an ordered group of processes, this process's rank in it,
//! a context id that separates its traffic from every other live
//! communicator's, an error handler, a name and info hints.
//!
//! `MPI_COMM_WORLD` and `MPI_COMM_SELF` are predefined handles that exist
//! while the world model is initialized; user communicators live in a handle
//! table.
use std::os::raw::c_int;
use std::sync::Arc;

use super::attributes::Attributes;
use super::epoch::Epoch;
use super::error::{MpiError, MpiResult};
use super::handles::{HandleTable, ObjectKind};
use super::info::InfoObject;
use super::topology::Topology;
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::*;

pub use crate::bootstrap::ProcessId;

pub struct Communicator {
    /// Members, in communicator rank order.
    pub members: Arc<[ProcessId]>,
    /// This process's rank among `members`.
    pub rank: usize,
    /// Unique among live communicators of this process, across epochs.
    pub context_id: u64,
    /// The epoch this communicator belongs to.
    pub epoch: Epoch,
    pub errhandler: MPI_Errhandler,
    pub name: String,
    pub info: InfoObject,
    /// The remote group of an intercommunicator (`None`: intracommunicator).
    pub remote: Option<Arc<[ProcessId]>>,
    /// Cached attributes.
    pub attributes: Attributes,
    /// The process topology (`MPI_Cart_create` and friends); `None` for a
    /// communicator without one. Shared, never changed: a dup shares it.
    pub topology: Option<Arc<Topology>>,
    /// The failed processes of this communicator the program acknowledged
    /// (`MPIX_Comm_failure_ack`), in rank order.
    pub acked_failures: Vec<ProcessId>,
    /// No error handler was ever set on this communicator or on the ones
    /// it was made from (`MPI_COMM_WORLD`'s line): its errors go to
    /// `MPI_COMM_WORLD`'s handler of the moment, as in MPICH (whose
    /// communicators keep no handler of their own until one is set), so a
    /// program that duplicates `MPI_COMM_WORLD` and then sets
    /// `MPI_ERRORS_RETURN` on it gets errors returned on the duplicate too.
    pub follows_world_errhandler: bool,
    /// The intercommunicator to the parents of this spawned process
    /// (`MPI_Comm_get_parent` returns it until it is freed).
    pub spawn_parent: bool,
    /// Where its members meet on this node for small blocking collectives
    /// (`collective::node`); made at the first such call.
    pub node: crate::core::collective::node::NodeLink,
}

impl Communicator {
    /// A new intracommunicator of `members` (this process at `rank`) with
    /// context `number` of `epoch`: no name, info or attributes yet.
    pub fn new(
        members: Arc<[ProcessId]>,
        rank: usize,
        epoch: Epoch,
        number: u64,
        errhandler: MPI_Errhandler,
    ) -> Communicator {
        Communicator {
            members,
            rank,
            context_id: epoch.context_id(number),
            epoch,
            errhandler,
            name: String::new(),
            info: InfoObject::new(),
            remote: None,
            attributes: Default::default(),
            topology: None,
            acked_failures: Vec::new(),
            follows_world_errhandler: false,
            spawn_parent: false,
            node: Default::default(),
        }
    }

    /// The size of the local group.
    pub fn size(&self) -> usize {
        self.members.len()
    }

    pub fn is_inter(&self) -> bool {
        self.remote.is_some()
    }

    /// The processes point-to-point ranks name: the remote group of an
    /// intercommunicator, the group itself otherwise.
    pub fn peers(&self) -> &Arc<[ProcessId]> {
        self.remote.as_ref().unwrap_or(&self.members)
    }

    /// An intercommunicator's two groups as one, the group whose first
    /// member has the lower job rank first (the group of its collective
    /// context `context_id + 1`), and whether the local group comes
    /// first; `None` for an intracommunicator.
    pub fn both_groups(&self) -> Option<(Arc<[ProcessId]>, bool)> {
        let remote = self.remote.as_ref()?;
        let local_first = self.members[0] < remote[0];
        let (first, second) = if local_first {
            (&self.members, remote)
        } else {
            (remote, &self.members)
        };
        Some((
            first.iter().chain(second.iter()).copied().collect(),
            local_first,
        ))
    }

    /// Every context id this communicator uses, with the group whose ranks
    /// its messages name: point-to-point on `context_id` (the remote group
    /// of an intercommunicator), collectives on `context_id + 1` (both
    /// groups of an intercommunicator, see [`Communicator::both_groups`])
    /// and, for an intercommunicator, steps inside the local group on
    /// `context_id + 2`.
    pub fn context_groups(&self) -> Vec<(u64, Arc<[ProcessId]>)> {
        match self.both_groups() {
            None => vec![
                (self.context_id, self.members.clone()),
                (self.context_id + 1, self.members.clone()),
            ],
            Some((both, _)) => vec![
                (self.context_id, self.peers().clone()),
                (self.context_id + 1, both),
                (self.context_id + 2, self.members.clone()),
            ],
        }
    }

    /// The process behind a destination/source rank (checked).
    #[inline]
    pub fn peer(&self, rank: c_int) -> MpiResult<ProcessId> {
        match usize::try_from(rank).ok().and_then(|r| self.peers().get(r)) {
            Some(&p) => Ok(p),
            None => Err(self.check_rank(rank).expect_err("rank out of range")),
        }
    }

    /// Checks a destination/source rank (not `MPI_PROC_NULL` or wildcards)
    /// against the group point-to-point ranks name.
    pub fn check_rank(&self, rank: c_int) -> MpiResult {
        let n = self.peers().len();
        if rank < 0 || rank as usize >= n {
            return Err(MpiError::new(
                MPI_ERR_RANK,
                format!("rank {rank} is not in this communicator (size {n})"),
            ));
        }
        Ok(())
    }
}

/// The communicators of the process: the world model's two predefined
/// ones while it is initialized, and the user communicators.
#[derive(Default)]
pub struct Comms {
    world: Option<Communicator>,
    self_comm: Option<Communicator>,
    user: Option<HandleTable<Communicator>>,
}

fn invalid(h: MPI_Comm) -> MpiError {
    match h {
        MPI_COMM_NULL => MpiError::new(
            MPI_ERR_COMM,
            "MPI_COMM_NULL is not a valid communicator here",
        ),
        MPI_COMM_WORLD | MPI_COMM_SELF => MpiError::new(
            MPI_ERR_COMM,
            format!(
                "{} used outside the world model (call MPI_Init first, not after MPI_Finalize)",
                if h == MPI_COMM_WORLD {
                    "MPI_COMM_WORLD"
                } else {
                    "MPI_COMM_SELF"
                }
            ),
        ),
        _ => MpiError::new(
            MPI_ERR_COMM,
            format!(
                "handle {:#010x} is not a valid (or a freed) communicator",
                h as u32
            ),
        ),
    }
}

impl Comms {
    /// The user communicators alive.
    pub fn user_count(&self) -> usize {
        self.user.as_ref().map_or(0, HandleTable::len)
    }

    fn table(&mut self) -> &mut HandleTable<Communicator> {
        self.user
            .get_or_insert_with(|| HandleTable::new(ObjectKind::Comm))
    }

    pub fn get(&self, h: MPI_Comm) -> MpiResult<&Communicator> {
        self.find(h).ok_or_else(|| invalid(h))
    }

    /// The communicator behind `h`, if it names one.
    #[inline]
    pub fn find(&self, h: MPI_Comm) -> Option<&Communicator> {
        match h {
            MPI_COMM_WORLD => self.world.as_ref(),
            MPI_COMM_SELF => self.self_comm.as_ref(),
            _ => self.user.as_ref().and_then(|t| t.get(h)),
        }
    }

    pub fn get_mut(&mut self, h: MPI_Comm) -> MpiResult<&mut Communicator> {
        let found = match h {
            MPI_COMM_WORLD => self.world.as_mut(),
            MPI_COMM_SELF => self.self_comm.as_mut(),
            _ => self.user.as_mut().and_then(|t| t.get_mut(h)),
        };
        found.ok_or_else(|| invalid(h))
    }

    /// Adds a user communicator (through `Runtime::add_comm`, which takes
    /// its error handler reference).
    pub(in crate::core) fn insert(&mut self, comm: Communicator) -> MPI_Comm {
        self.table().insert(comm)
    }

    /// Removes a user communicator (through `Runtime::free_comm`).
    pub(in crate::core) fn remove(&mut self, h: MPI_Comm) -> MpiResult<Communicator> {
        if h == MPI_COMM_WORLD || h == MPI_COMM_SELF {
            return Err(MpiError::new(
                MPI_ERR_COMM,
                "a predefined communicator cannot be freed",
            ));
        }
        self.table().remove(h).ok_or_else(|| invalid(h))
    }

    /// The handles of the live user communicators.
    pub fn user_handles(&self) -> Vec<MPI_Comm> {
        self.user
            .as_ref()
            .map_or(Vec::new(), |t| t.iter().map(|(h, _)| h).collect())
    }

    /// The intercommunicator to this spawned process's parents, while it
    /// lives.
    pub fn spawn_parent(&self) -> Option<MPI_Comm> {
        self.user
            .as_ref()?
            .iter()
            .find(|(_, c)| c.spawn_parent)
            .map(|(h, _)| h)
    }

    /// Every live communicator: the predefined ones, then the user's.
    pub fn all(&self) -> impl Iterator<Item = &Communicator> {
        self.world
            .iter()
            .chain(self.self_comm.iter())
            .chain(self.user.iter().flat_map(|t| t.iter().map(|(_, c)| c)))
    }

    /// `MPI_COMM_WORLD` and `MPI_COMM_SELF` while the world model is
    /// initialized.
    pub fn predefined(&self) -> Option<(&Communicator, &Communicator)> {
        Some((self.world.as_ref()?, self.self_comm.as_ref()?))
    }

    /// Installs `MPI_COMM_WORLD` and `MPI_COMM_SELF` (`MPI_Init`).
    pub fn set_predefined(&mut self, world: Communicator, self_comm: Communicator) {
        self.world = Some(world);
        self.self_comm = Some(self_comm);
    }

    /// Removes `MPI_COMM_WORLD` and `MPI_COMM_SELF` (`MPI_Finalize`).
    pub fn take_predefined(&mut self) -> impl Iterator<Item = Communicator> {
        [self.world.take(), self.self_comm.take()]
            .into_iter()
            .flatten()
    }
}
