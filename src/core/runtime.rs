//! The process-wide runtime: every MPI object and the instance state behind
//! one lock. One lock gives `MPI_THREAD_MULTIPLE` honestly; it is split only
//! where a benchmark shows it matters. Error handlers and user callbacks are
//! never called with the lock held.
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::thread::ThreadId;

use once_cell::sync::Lazy;

use super::attributes::Keyvals;
use super::comm::{Comms, Communicator};
use super::errhandler::Errhandlers;
use super::error::{MpiError, MpiResult};
use super::group::Group;
use super::handles::{HandleTable, ObjectKind};
use super::info::InfoObject;
use super::instance::{Instance, Process};
use super::p2p::engine::Engine;
use super::session::Session;
use crate::bootstrap::card::{card_key, Card};
use crate::config::TransportChoice;
use crate::mpi_abi::constants::*;
use crate::transport::endpoints::Endpoints;
use crate::transport::shm::inbox::{inbox_name, ShmTransport};
use crate::transport::tcp::TcpTransport;
use crate::transport::ProcessId;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorldModel {
    NotInitialized,
    Initialized,
    Finalized,
}

pub struct Runtime {
    pub process: Option<Process>,
    pub instance: Option<Instance>,
    /// Epochs started so far; the current one is this number.
    pub epochs_started: u64,
    pub world: WorldModel,
    /// Thread level provided to the world model.
    pub thread_level: i32,
    pub main_thread: Option<ThreadId>,
    pub comms: Comms,
    pub infos: HandleTable<InfoObject>,
    pub errhandlers: Errhandlers,
    /// Point-to-point matching and requests (process-level).
    pub p2p: Engine,
    /// The lowest context number this process has not used in this epoch.
    pub next_context_number: u64,
    pub sessions: HandleTable<Session>,
    pub groups: HandleTable<Group>,
    /// How often each (string tag, members) pair made a communicator in
    /// this epoch (`MPI_Comm_create_from_group`).
    pub creation_counts: HashMap<(String, Vec<ProcessId>), u64>,
    pub keyvals: Keyvals,
    /// With `MPIR_CVAR_FINALIZE_ATEXIT`, the transports of the last epoch,
    /// kept for the next one (and torn down at exit).
    retained_endpoints: Option<Endpoints>,
}

/// Context ids: the epoch in the high bits, so ids never repeat across
/// epochs, and a per-epoch number below. Each communicator takes two: an
/// even one for point-to-point and the next for its collectives.
pub const CONTEXT_EPOCH_SHIFT: u32 = 40;
/// The context ids of the world model's communicators in every epoch.
pub const WORLD_CONTEXT: u64 = 2;
pub const SELF_CONTEXT: u64 = 4;
/// Context numbers below this are reserved for predefined communicators.
pub const FIRST_DYNAMIC_CONTEXT: u64 = 16;

pub fn context_id(epoch: u64, number: u64) -> u64 {
    (epoch << CONTEXT_EPOCH_SHIFT) | number
}

pub fn epoch_of_context(context_id: u64) -> u64 {
    context_id >> CONTEXT_EPOCH_SHIFT
}

static RUNTIME: Lazy<Mutex<Runtime>> = Lazy::new(|| {
    crate::config::get();
    Mutex::new(Runtime {
        process: None,
        instance: None,
        epochs_started: 0,
        world: WorldModel::NotInitialized,
        thread_level: MPI_THREAD_SINGLE,
        main_thread: None,
        comms: Comms::default(),
        infos: HandleTable::new(ObjectKind::Info),
        errhandlers: Errhandlers::default(),
        p2p: Engine::default(),
        next_context_number: FIRST_DYNAMIC_CONTEXT,
        sessions: HandleTable::new(ObjectKind::Session),
        groups: HandleTable::new(ObjectKind::Group),
        creation_counts: HashMap::new(),
        keyvals: Keyvals::default(),
        retained_endpoints: None,
    })
});

/// The runtime, locked.
pub type RuntimeGuard = MutexGuard<'static, Runtime>;

/// Locks the runtime. A panic while it was held (already reported as
/// MPI_ERR_INTERN) does not make it unusable.
pub fn lock() -> RuntimeGuard {
    RUNTIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// This epoch's TCP transport: listening on `OXMPI_IFACE` (else loopback
/// for a job on one node, else the first interface that is up), authenticated with the launcher's job secret
/// (`OXMPI_JOB_SECRET`; under another launcher, the KVS name).
fn open_tcp(
    me: ProcessId,
    epoch: u64,
    job_id: &str,
    kvsname: &str,
    single_node: bool,
) -> MpiResult<TcpTransport> {
    let config = crate::config::get();
    // A job on one node needs no network interface: loopback will do.
    let iface = config
        .iface
        .as_deref()
        .or(single_node.then_some("127.0.0.1"));
    let bind = crate::transport::tcp::listen_address(iface).map_err(|e| {
        MpiError::new(
            MPI_ERR_OTHER,
            format!("TCP listening address (OXMPI_IFACE): {e}"),
        )
    })?;
    let secret = std::env::var("OXMPI_JOB_SECRET")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| kvsname.to_string());
    let secret: String = secret
        .chars()
        .take(crate::transport::tcp::SECRET_MAX)
        .collect();
    TcpTransport::new(me, epoch, job_id, &secret, bind)
        .map_err(|e| MpiError::new(MPI_ERR_OTHER, format!("TCP transport on {bind}: {e}")))
}

/// A finalize: stops using the instance; when that ends the epoch, joins
/// the nonblocking-collective worker (which belongs to the epoch) after
/// letting go of the lock.
pub fn release_instance(mut rt: MutexGuard<'static, Runtime>) {
    rt.release_instance();
    let epoch_ended = rt.instance.is_none();
    drop(rt);
    if epoch_ended {
        super::collective::executor::quiesce();
    }
}

/// The lock, if no other thread holds it (for the exit handler).
pub fn try_lock() -> Option<MutexGuard<'static, Runtime>> {
    match RUNTIME.try_lock() {
        Ok(guard) => Some(guard),
        Err(std::sync::TryLockError::Poisoned(e)) => Some(e.into_inner()),
        Err(std::sync::TryLockError::WouldBlock) => None,
    }
}

impl Runtime {
    /// Process exit: ends any open epoch and finalizes PMI.
    pub fn end_process(&mut self) {
        if self.instance.is_some() {
            log::debug!("process exits with epoch {:?} open", self.current_epoch());
            self.drop_world_comms();
            self.instance = None;
        }
        self.retained_endpoints = None;
        if let Some(pmi) = self.process.as_mut().and_then(|p| p.pmi.as_mut()) {
            if let Err(e) = pmi.finalize() {
                log::debug!("PMI finalize at exit: {e}");
            }
        }
    }

    /// Starts using the instance: bootstraps the process on first use and
    /// opens a new epoch when no instance exists. Returns the epoch.
    pub fn acquire_instance(&mut self) -> MpiResult<u64> {
        if self.process.is_none() {
            self.process = Some(Process::bootstrap()?);
        }
        if self.instance.is_none() {
            let epoch = self.epochs_started + 1;
            let endpoints = self.open_endpoints(epoch)?;
            self.epochs_started = epoch;
            self.next_context_number = FIRST_DYNAMIC_CONTEXT;
            self.creation_counts.clear();
            log::debug!("epoch {epoch} begins");
            self.instance = Some(Instance {
                epoch,
                users: 0,
                endpoints,
            });
        }
        let instance = self.instance.as_mut().expect("just created");
        instance.users += 1;
        Ok(instance.epoch)
    }

    /// Sets up an epoch's transports and publishes this process's card.
    fn open_endpoints(&mut self, epoch: u64) -> MpiResult<Endpoints> {
        let process = self
            .process
            .as_mut()
            .ok_or_else(|| MpiError::new(MPI_ERR_INTERN, "no process state"))?;
        let me = process.placement.rank;
        let Some(pmi) = process.pmi.as_mut() else {
            return Ok(Endpoints::new(me, epoch));
        };
        let choice = crate::config::get().transport;
        let (endpoints, name) = match self.retained_endpoints.take() {
            Some(mut endpoints) => {
                endpoints.renew(epoch);
                let name = endpoints.inbox_name().unwrap_or_default();
                (endpoints, name)
            }
            None => {
                let name = inbox_name(&process.job_id, epoch, me);
                let local_index = process.local_index as usize;
                let shm = if choice == TransportChoice::Tcp {
                    None
                } else {
                    Some(
                        ShmTransport::create(&name, me, local_index, process.local_count as usize)
                            .map_err(|e| {
                                MpiError::new(MPI_ERR_OTHER, format!("shared memory: {e}"))
                            })?,
                    )
                };
                let single_node = process
                    .psets
                    .members("mpix://SHARED")
                    .is_ok_and(|m| m.len() as u32 == process.placement.size);
                let tcp = if choice == TransportChoice::Shm {
                    None
                } else {
                    Some(open_tcp(
                        me,
                        epoch,
                        &process.job_id,
                        &process.placement.kvsname,
                        single_node,
                    )?)
                };
                let mut endpoints = Endpoints::with_transports(
                    me,
                    epoch,
                    process.node.clone(),
                    shm,
                    tcp,
                    choice == TransportChoice::Tcp,
                );
                endpoints.set_single_node(single_node);
                (
                    endpoints,
                    if choice == TransportChoice::Tcp {
                        String::new()
                    } else {
                        name
                    },
                )
            }
        };
        let card = Card {
            node: process.node.clone(),
            pid: std::process::id(),
            local_index: process.local_index,
            local_count: process.local_count,
            shm_segment: name,
            tcp: endpoints.tcp_address().unwrap_or_default(),
        };
        pmi.put(&card_key(epoch, me), &card.to_string())
            .map_err(|e| {
                MpiError::new(
                    MPI_ERR_OTHER,
                    format!("publishing this process's card: {e}"),
                )
            })?;
        Ok(endpoints)
    }

    /// A PMI barrier when the launcher shows puts only after one (Hydra):
    /// the world model's MPI_Init is collective, so it may wait there.
    pub fn make_cards_visible(&mut self) -> MpiResult {
        let Some(process) = self.process.as_mut() else {
            return Ok(());
        };
        if process.puts_visible_at_once {
            return Ok(());
        }
        if let Some(pmi) = process.pmi.as_mut() {
            pmi.barrier()
                .map_err(|e| MpiError::new(MPI_ERR_OTHER, format!("PMI barrier: {e}")))?;
        }
        Ok(())
    }

    /// Stops using the instance; the last user ends the epoch.
    pub fn release_instance(&mut self) {
        let Some(instance) = &mut self.instance else {
            return;
        };
        instance.users -= 1;
        if instance.users == 0 {
            // Eager messages complete at the sender when buffered: deliver
            // what still waits before the epoch's transports go.
            self.drain_outgoing();
            let Some(instance) = self.instance.take() else {
                return;
            };
            let epoch = instance.epoch;
            log::debug!("epoch {epoch} ends");
            if crate::config::get().finalize_atexit {
                self.retained_endpoints = Some(instance.endpoints);
            }
            let stale: Vec<_> = self
                .comms
                .user_handles()
                .into_iter()
                .filter(|&h| self.comms.get(h).is_ok_and(|c| c.epoch == epoch))
                .collect();
            if !stale.is_empty() {
                log::debug!(
                    "{} communicator(s) of epoch {epoch} were not freed; they are gone",
                    stale.len()
                );
            }
            for h in stale {
                if let Ok(c) = self.comms.remove(h) {
                    let _ = self.errhandlers.release(c.errhandler);
                }
            }
            let dropped = self.p2p.end_epoch(epoch);
            if dropped > 0 {
                log::warn!("{dropped} unreceived messages of epoch {epoch} dropped at its end");
            }
        }
    }

    /// Makes progress until no frame waits to leave and no buffered send is
    /// in flight (bounded: a peer that never takes them, a program error,
    /// is reported after a minute).
    fn drain_outgoing(&mut self) {
        let start = std::time::Instant::now();
        let mut warned = false;
        while self.p2p.has_outgoing()
            || self.p2p.buffered_sends_pending()
            || self
                .instance
                .as_ref()
                .is_some_and(|i| i.endpoints.pending_output() > 0)
        {
            self.progress();
            if !warned && start.elapsed() > std::time::Duration::from_secs(60) {
                log::warn!("messages still wait to be delivered at the end of the epoch");
                warned = true;
            }
            if start.elapsed() > std::time::Duration::from_secs(600) {
                break;
            }
            std::thread::yield_now();
        }
    }

    pub fn process(&self) -> MpiResult<&Process> {
        self.process
            .as_ref()
            .ok_or_else(|| MpiError::new(MPI_ERR_OTHER, "MPI is not initialized"))
    }

    pub fn current_epoch(&self) -> Option<u64> {
        self.instance.as_ref().map(|i| i.epoch)
    }

    /// Moves point-to-point traffic along (arrivals, waiting sends).
    #[inline]
    pub fn progress(&mut self) -> bool {
        let Some(instance) = &mut self.instance else {
            return false;
        };
        let moved = self.p2p.progress(&mut instance.endpoints);
        if !instance.endpoints.looks_for_cards() {
            return moved;
        }
        let wanted = instance.endpoints.wanted();
        if !wanted.is_empty() {
            if let Some(pmi) = self.process.as_mut().and_then(|p| p.pmi.as_mut()) {
                for peer in wanted {
                    let card = match pmi.get(&card_key(instance.epoch, peer)) {
                        Ok(text) => text.and_then(|t| Card::parse(&t)),
                        Err(e) => {
                            log::warn!("looking up the card of process {peer}: {e}");
                            None
                        }
                    };
                    instance.endpoints.resolve(peer, card);
                }
            }
        }
        moved
    }

    /// The last progress before a sleep: every transport is looked at,
    /// also an idle TCP listener.
    pub fn progress_before_sleep(&mut self) -> bool {
        if let Some(instance) = &mut self.instance {
            instance.endpoints.poll_idle_tcp_next();
        }
        self.progress()
    }

    /// This epoch's shared-memory doorbell, for sleeping until a frame comes.
    pub fn doorbell(&mut self) -> Option<crate::transport::shm::doorbell::Doorbell> {
        self.instance
            .as_mut()?
            .endpoints
            .shm()
            .map(|s| s.doorbell())
    }

    /// This epoch's TCP readiness fd (see `Endpoints::tcp_ready_fd`).
    pub fn tcp_ready_fd(&self) -> Option<std::os::fd::RawFd> {
        self.instance.as_ref()?.endpoints.tcp_ready_fd()
    }

    /// Looks at this epoch's shared-memory rings up to `times` times;
    /// true as soon as a frame waits in one (see
    /// [`Endpoints::watch_shm`]).
    #[inline]
    pub fn watch_rings(&mut self, times: u32) -> bool {
        self.instance
            .as_mut()
            .is_some_and(|i| i.endpoints.watch_shm(times))
    }

    /// Whether a frame waits in this epoch's shared-memory inbox.
    pub fn has_pending_arrivals(&mut self) -> bool {
        self.instance
            .as_mut()
            .and_then(|i| i.endpoints.shm())
            .is_some_and(|s| s.has_pending())
    }

    /// The engine and the current epoch's transports, for starting an
    /// operation.
    pub fn engine_and_endpoints(&mut self) -> MpiResult<(&mut Engine, &mut Endpoints)> {
        self.active().ok_or_else(|| {
            MpiError::new(
                MPI_ERR_OTHER,
                "MPI is not initialized (no session or world model is open)",
            )
        })
    }

    /// [`Runtime::engine_and_endpoints`], `None` while no epoch is open.
    #[inline]
    pub fn active(&mut self) -> Option<(&mut Engine, &mut Endpoints)> {
        let instance = self.instance.as_mut()?;
        Some((&mut self.p2p, &mut instance.endpoints))
    }

    pub fn world_is_active(&self) -> bool {
        self.world == WorldModel::Initialized
    }

    /// Sets up MPI_COMM_WORLD and MPI_COMM_SELF for the world model.
    pub fn create_world_comms(&mut self, epoch: u64) -> MpiResult {
        let placement = self.process()?.placement.clone();
        let world = Communicator {
            name: "MPI_COMM_WORLD".into(),
            ..Communicator::new(
                (0..placement.size).collect(),
                placement.rank as usize,
                epoch,
                WORLD_CONTEXT,
                MPI_ERRORS_ARE_FATAL,
            )
        };
        let self_comm = Communicator {
            name: "MPI_COMM_SELF".into(),
            ..Communicator::new(
                vec![placement.rank].into(),
                0,
                epoch,
                SELF_CONTEXT,
                MPI_ERRORS_ARE_FATAL,
            )
        };
        self.comms.world = Some(world);
        self.comms.self_comm = Some(self_comm);
        Ok(())
    }

    /// Removes MPI_COMM_WORLD and MPI_COMM_SELF, releasing their handlers.
    pub fn drop_world_comms(&mut self) {
        for comm in [self.comms.world.take(), self.comms.self_comm.take()]
            .into_iter()
            .flatten()
        {
            let _ = self.errhandlers.release(comm.errhandler);
        }
    }
}
