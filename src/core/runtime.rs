//! The process-wide runtime: the process, its epochs, the world model, the
//! MPI objects (communicators, sessions, groups, info, error handlers,
//! attribute keys) and the point-to-point engine, behind the `RUNTIME`
//! lock (see `locks` for the other process-wide locks and their order).
//!
//! Fields are private: each concern has its own accessors
//! ([`Runtime::comms`], [`Runtime::engine`], [`Runtime::errhandlers`],
//! [`Runtime::keyvals`], ...), and an operation that spans two concerns is
//! a method here, so the invariants between them hold in one place: a
//! communicator or session holds a reference on its error handler
//! ([`Runtime::add_comm`], [`Runtime::free_comm`],
//! [`Runtime::set_comm_errhandler`], and the session twins), the world
//! model's communicators exist exactly while it is initialized, and an
//! epoch's objects go when it ends ([`leave_instance`]).
//!
//! One lock gives `MPI_THREAD_MULTIPLE` honestly, and the point-to-point
//! fast path takes no other. Error handlers and user callbacks are never
//! called with it held.
use std::os::raw::c_int;
use std::sync::LazyLock;
use std::thread::ThreadId;

use super::attributes::Keyvals;
use super::comm::{Comms, Communicator};
use super::context_numbers::{self, ContextNumbers, SELF_CONTEXT, WORLD_CONTEXT};
use super::epoch::{Epoch, Epochs};
use super::errhandler::Errhandlers;
use super::error::{MpiError, MpiResult};
use super::group::Group;
use super::handles::{HandleTable, ObjectKind};
use super::info::InfoObject;
use super::locks::{Level, OrderedGuard, OrderedMutex};
use super::p2p::engine::Engine;
use super::process::Process;
use super::rma::Window;
use super::session::Session;
use crate::bootstrap::card::Card;
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::*;
use crate::transport::endpoints::Endpoints;

/// Where the world model (`MPI_Init` ... `MPI_Finalize`) is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorldModel {
    NotInitialized,
    Initialized,
    Finalized,
}

/// The world model's state and what `MPI_Init_thread` settled.
struct World {
    state: WorldModel,
    /// The thread level provided.
    thread_level: c_int,
    /// The thread that initialized it.
    main_thread: Option<ThreadId>,
}

pub struct Runtime {
    process: Option<Process>,
    epochs: Epochs,
    world: World,
    comms: Comms,
    sessions: HandleTable<Session>,
    groups: HandleTable<Group>,
    infos: HandleTable<InfoObject>,
    errhandlers: Errhandlers,
    keyvals: Keyvals,
    /// RMA windows (see `core::rma`).
    windows: HandleTable<Window>,
    /// Open files (MPI-IO), each of the epoch that opened it.
    files: HandleTable<crate::core::io::File>,
    /// The handler set on `MPI_FILE_NULL`: files opened later start with
    /// it (`MPI_ERRORS_RETURN` unless the program sets another).
    file_errhandler: MPI_Errhandler,
    /// Registered data representations (`MPI_Register_datarep`).
    datareps: Vec<std::sync::Arc<crate::core::io::view::UserDatarep>>,
    /// Point-to-point matching and requests (process-level: a message of
    /// a newer epoch may arrive before this process enters it).
    engine: Engine,
}

static RUNTIME: LazyLock<OrderedMutex<Runtime>> = LazyLock::new(|| {
    crate::config::get();
    OrderedMutex::new(
        Level::Runtime,
        Runtime {
            process: None,
            epochs: Epochs::default(),
            world: World {
                state: WorldModel::NotInitialized,
                thread_level: MPI_THREAD_SINGLE,
                main_thread: None,
            },
            comms: Comms::default(),
            sessions: HandleTable::new(ObjectKind::Session),
            groups: HandleTable::new(ObjectKind::Group),
            infos: HandleTable::new(ObjectKind::Info),
            errhandlers: Errhandlers::default(),
            keyvals: Keyvals::default(),
            windows: HandleTable::new(ObjectKind::Win),
            files: HandleTable::new(ObjectKind::File),
            file_errhandler: MPI_ERRORS_RETURN,
            datareps: Vec::new(),
            engine: Engine::default(),
        },
    )
});

/// The runtime, locked.
pub type RuntimeGuard = OrderedGuard<'static, Runtime>;

/// Locks the runtime. A panic while it was held (already reported as
/// MPI_ERR_INTERN) does not make it unusable.
#[inline]
pub fn lock() -> RuntimeGuard {
    RUNTIME.lock()
}

/// The lock, if no other thread holds it (for the exit handler).
pub fn try_lock() -> Option<RuntimeGuard> {
    RUNTIME.try_lock()
}

/// A finalize (of the world model or a session): stops using the instance;
/// when that was its last user, ends the epoch (see `epoch`), then, with
/// the lock let go, joins the nonblocking-collective worker (which belongs
/// to the epoch).
pub fn leave_instance(mut rt: RuntimeGuard) {
    let Some(epoch) = rt.epochs.leave() else {
        return;
    };
    // Eager messages complete at the sender when buffered: deliver what
    // still waits before the epoch's transports go.
    rt.drain_outgoing();
    rt.drop_epoch_objects(epoch);
    rt.epochs.close();
    drop(rt);
    super::collective::executor::quiesce();
}

impl Runtime {
    // ---- The process and its epochs ----

    /// This process's PMI connection (`None` for a singleton), for the
    /// launcher's services (the name service).
    pub fn pmi_mut(&mut self) -> MpiResult<Option<&mut crate::bootstrap::pmi::launcher::Launcher>> {
        let process = self
            .process
            .as_mut()
            .ok_or_else(|| MpiError::new(MPI_ERR_OTHER, "MPI is not initialized"))?;
        Ok(process.pmi.as_mut())
    }

    /// What this process learned from its launcher (after the first
    /// initialization).
    pub fn process(&self) -> MpiResult<&Process> {
        self.process
            .as_ref()
            .ok_or_else(|| MpiError::new(MPI_ERR_OTHER, "MPI is not initialized"))
    }

    /// This process's job-wide id (see `Process::id`).
    pub fn job_rank(&self) -> MpiResult<u32> {
        Ok(self.process()?.id())
    }

    /// The live epoch.
    pub fn current_epoch(&self) -> Option<Epoch> {
        self.epochs.current()
    }

    /// A new user of the instance: bootstraps the process on first use and
    /// starts an epoch when none is live. Returns the epoch and whether it
    /// has just started.
    pub fn enter_instance(&mut self) -> MpiResult<(Epoch, bool)> {
        if self.process.is_none() {
            let process = Process::bootstrap()?;
            if let Some(first) = process
                .parent_port
                .as_deref()
                .and_then(super::ports::epoch_of)
            {
                self.epochs.start_at(first);
            }
            self.process = Some(process);
        }
        let process = self.process.as_mut().expect("just bootstrapped");
        let new = self.epochs.current().is_none();
        let epoch = self.epochs.enter(process)?;
        if new {
            self.engine.start_epoch(process.placement.size);
        }
        Ok((epoch, new))
    }

    /// Process exit: ends any live epoch (its segments unlinked, sockets
    /// closed) and says PMI `finalize` to the launcher. Sessions may be
    /// left open at exit; the world model may not: a program that exits
    /// after `MPI_Init` without `MPI_Finalize` does not say `finalize`, so
    /// the launcher (ours, or Hydra) ends the job rather than let its peers
    /// wait for it.
    pub fn end_process(&mut self) {
        let world_open = self.world.state == WorldModel::Initialized;
        if self.epochs.current().is_some() {
            self.drop_world_comms();
        }
        self.epochs.abandon();
        if world_open {
            log::debug!("exit after MPI_Init without MPI_Finalize: no PMI finalize");
            return;
        }
        if let Some(pmi) = self.process.as_mut().and_then(|p| p.pmi.as_mut()) {
            if let Err(e) = pmi.finalize() {
                log::debug!("PMI finalize at exit: {e}");
            }
        }
    }

    /// A PMI barrier when the launcher shows puts only after one (Hydra):
    /// the world model's MPI_Init is collective, so it may wait there.
    /// Not under oxmpi's mpiexec, nor under PMIx (a get waits for the key).
    pub fn make_cards_visible(&mut self) -> MpiResult {
        let Some(process) = self.process.as_mut() else {
            return Ok(());
        };
        if process.puts_visible_at_once {
            return Ok(());
        }
        if let Some(pmi) = process.pmi.as_mut().filter(|p| !p.shows_puts_at_commit()) {
            pmi.barrier()
                .map_err(|e| MpiError::new(MPI_ERR_OTHER, format!("PMI barrier: {e}")))?;
        }
        Ok(())
    }

    /// The live epoch's context numbers.
    /// This process's proposal for a new communicator's context: its next
    /// `count` free numbers (reserved), or [`context_numbers::EXHAUSTED`]
    /// when it keeps as many communicators alive as it may.
    pub fn propose_context(&mut self, count: u64) -> MpiResult<u64> {
        if self.comms.user_count() >= context_numbers::MAX_LIVE_COMMUNICATORS {
            return Ok(context_numbers::EXHAUSTED);
        }
        Ok(self.contexts()?.1.reserve(count))
    }

    pub fn contexts(&mut self) -> MpiResult<(Epoch, &mut ContextNumbers)> {
        let (epoch, instance) = self.epochs.live().ok_or_else(not_initialized)?;
        Ok((epoch, &mut instance.contexts))
    }

    /// Makes progress until no frame waits to leave and no buffered send is
    /// in flight (bounded: a peer that never takes them, a program error,
    /// is reported after a minute).
    fn drain_outgoing(&mut self) {
        let start = std::time::Instant::now();
        let mut warned = false;
        loop {
            let transports_busy = self
                .epochs
                .live()
                .is_some_and(|(_, i)| i.endpoints.pending_output() > 0);
            if !(self.engine.has_outgoing()
                || self.engine.buffered_sends_pending()
                || transports_busy)
            {
                break;
            }
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

    /// The end of `epoch`: its communicators (not freed by the program) and
    /// its unreceived messages and posted receives go.
    fn drop_epoch_objects(&mut self, epoch: Epoch) {
        crate::core::io::drop_epoch_files(self, epoch);
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
            let _ = self.free_comm(h);
        }
        let windows: Vec<_> = self
            .windows
            .iter()
            .filter(|(_, w)| w.epoch == epoch)
            .map(|(h, _)| h)
            .collect();
        if !windows.is_empty() {
            log::debug!(
                "{} window(s) of epoch {epoch} were not freed; they are gone",
                windows.len()
            );
        }
        for h in windows {
            if let Some(w) = self.windows.remove(h) {
                let _ = self.errhandlers.release(w.errhandler);
            }
        }
        let dropped = self.engine.end_epoch(epoch);
        if dropped > 0 {
            log::warn!("{dropped} unreceived messages of epoch {epoch} dropped at its end");
        }
    }

    // ---- Progress ----

    /// Moves point-to-point traffic along (arrivals, waiting sends), and
    /// looks up the cards of peers not reached yet in this epoch.
    #[inline]
    pub fn progress(&mut self) -> bool {
        let Some((epoch, instance)) = self.epochs.live() else {
            return false;
        };
        let mut moved = self.engine.progress(&mut instance.endpoints);
        if !self.windows.is_empty() {
            moved |= super::rma::progress::serve_all(
                &mut self.windows,
                &mut self.engine,
                &mut instance.endpoints,
            );
        }
        if !instance.endpoints.looks_for_cards() {
            return moved;
        }
        let wanted = instance.endpoints.wanted();
        if !wanted.is_empty() {
            if let Some(process) = self.process.as_mut() {
                let Some(pmi) = process.pmi.as_mut() else {
                    return moved;
                };
                for peer in wanted {
                    let card =
                        match pmi.get_published(&process.card_kvs, peer, &epoch.card_key(peer)) {
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
    /// also an idle TCP listener; then the launcher's failure notices.
    pub fn progress_before_sleep(&mut self) -> bool {
        if let Some((_, instance)) = self.epochs.live() {
            instance.endpoints.poll_idle_tcp_next();
        }
        // Frames first: what a failed process sent before it failed is
        // received, not failed.
        let moved = self.progress();
        self.check_failures();
        moved
    }

    /// Reads the launcher's failure notices, and fails the operations that
    /// wait on a failed process (see `core::failures`).
    fn check_failures(&mut self) {
        if !crate::config::get().failure_notices {
            return;
        }
        let Some(pmi) = self.process.as_mut().and_then(|p| p.pmi.as_mut()) else {
            return;
        };
        match pmi.poll_failures() {
            Ok(ranks) => {
                for rank in ranks {
                    if self.engine.process_failed(rank) {
                        log::debug!("the launcher reports process {rank} failed");
                    }
                }
            }
            Err(e) => log::debug!("reading failure notices: {e}"),
        }
        if self.engine.has_failures() {
            let groups = crate::core::failures::CommGroups::of(&self.comms);
            self.engine.fail_stranded(&groups);
        }
    }

    /// `Err(MPIX_ERR_PROC_FAILED)` when a receive of `pattern` could only
    /// be served by a failed process (a blocking probe gives up then).
    pub fn check_source_alive(&self, pattern: &crate::core::matching::Pattern) -> MpiResult {
        if !self.engine.has_failures() {
            return Ok(());
        }
        let groups = crate::core::failures::CommGroups::of(&self.comms);
        match self.engine.failed_source(pattern, &groups) {
            Some(process) => Err(crate::core::p2p::engine::failure::proc_failed(process)),
            None => Ok(()),
        }
    }

    /// This epoch's shared-memory doorbell, for sleeping until a frame comes.
    pub fn doorbell(&mut self) -> Option<crate::transport::shm::doorbell::Doorbell> {
        self.epochs.live()?.1.endpoints.shm().map(|s| s.doorbell())
    }

    /// This epoch's TCP readiness fd (see `Endpoints::tcp_ready_fd`).
    pub fn tcp_ready_fd(&mut self) -> Option<std::os::fd::RawFd> {
        self.epochs.live()?.1.endpoints.tcp_ready_fd()
    }

    /// Looks at this epoch's shared-memory rings up to `times` times;
    /// true as soon as a frame waits in one (see
    /// [`Endpoints::watch_shm`]).
    #[inline]
    pub fn watch_rings(&mut self, times: u32) -> bool {
        self.epochs
            .live()
            .is_some_and(|(_, i)| i.endpoints.watch_shm(times))
    }

    /// Whether a frame waits in this epoch's shared-memory inbox.
    pub fn has_pending_arrivals(&mut self) -> bool {
        self.epochs
            .live()
            .and_then(|(_, i)| i.endpoints.shm())
            .is_some_and(|s| s.has_pending())
    }

    // ---- Point-to-point ----

    /// The point-to-point engine (matching, requests).
    #[inline]
    pub fn engine(&mut self) -> &mut Engine {
        &mut self.engine
    }

    /// The engine and the live epoch's transports, for starting an
    /// operation.
    pub fn engine_and_endpoints(&mut self) -> MpiResult<(&mut Engine, &mut Endpoints)> {
        self.active().ok_or_else(not_initialized)
    }

    /// The windows, the engine and the live epoch's transports, for an RMA
    /// operation.
    pub fn windows_engine_endpoints(
        &mut self,
    ) -> MpiResult<(&mut HandleTable<Window>, &mut Engine, &mut Endpoints)> {
        let (_, instance) = self.epochs.live().ok_or_else(not_initialized)?;
        Ok((&mut self.windows, &mut self.engine, &mut instance.endpoints))
    }

    /// A live window (`MPI_ERR_WIN` if the handle names none).
    pub fn window(&self, win: MPI_Win) -> MpiResult<&Window> {
        self.windows
            .get(win)
            .ok_or_else(|| super::rma::window::invalid_window(win))
    }

    /// [`Runtime::window`], to change it.
    pub fn window_mut(&mut self, win: MPI_Win) -> MpiResult<&mut Window> {
        self.windows
            .get_mut(win)
            .ok_or_else(|| super::rma::window::invalid_window(win))
    }

    pub fn windows(&self) -> &HandleTable<Window> {
        &self.windows
    }

    pub fn windows_mut(&mut self) -> &mut HandleTable<Window> {
        &mut self.windows
    }

    /// [`Runtime::engine_and_endpoints`], `None` while no epoch is live.
    #[inline]
    pub fn active(&mut self) -> Option<(&mut Engine, &mut Endpoints)> {
        let (_, instance) = self.epochs.live()?;
        Some((&mut self.engine, &mut instance.endpoints))
    }

    // ---- The world model ----

    pub fn world_state(&self) -> WorldModel {
        self.world.state
    }

    /// `MPI_Init_thread`: enters the instance, creates `MPI_COMM_WORLD` and
    /// `MPI_COMM_SELF`; provides the level asked for.
    pub fn init_world(mut rt: RuntimeGuard, required: c_int) -> MpiResult<c_int> {
        match rt.world.state {
            WorldModel::Initialized => {
                return Err(MpiError::new(MPI_ERR_OTHER, "MPI_Init called twice"))
            }
            WorldModel::Finalized => return Err(MpiError::new(
                MPI_ERR_OTHER,
                "the world model cannot be initialized again after MPI_Finalize (use MPI_Session_init)",
            )),
            WorldModel::NotInitialized => {}
        }
        let (epoch, _) = rt.enter_instance()?;
        if let Err(e) = rt
            .make_cards_visible()
            .and_then(|_| rt.create_world_comms(epoch))
        {
            leave_instance(rt);
            return Err(e);
        }
        rt.world = World {
            state: WorldModel::Initialized,
            thread_level: required,
            main_thread: Some(std::thread::current().id()),
        };
        Ok(required)
    }

    /// `MPI_Finalize`: the world model's communicators go, and its use of
    /// the instance ends.
    pub fn finalize_world(mut rt: RuntimeGuard) -> MpiResult {
        if rt.world.state != WorldModel::Initialized {
            return Err(MpiError::new(
                MPI_ERR_OTHER,
                "MPI_Finalize called without MPI_Init",
            ));
        }
        rt.drop_world_comms();
        rt.world.state = WorldModel::Finalized;
        leave_instance(rt);
        Ok(())
    }

    /// The thread level the world model provides (`MPI_THREAD_SINGLE`
    /// while it is not initialized).
    pub fn world_thread_level(&self) -> c_int {
        match self.world.state {
            WorldModel::Initialized => self.world.thread_level,
            _ => MPI_THREAD_SINGLE,
        }
    }

    /// Whether threads of this process may call MPI at once: the world
    /// model or a live session provides `MPI_THREAD_MULTIPLE`.
    pub fn may_run_threads(&self) -> bool {
        self.world_thread_level() == MPI_THREAD_MULTIPLE
            || self
                .sessions
                .iter()
                .any(|(_, s)| s.thread_level == MPI_THREAD_MULTIPLE)
    }

    /// Whether the calling thread initialized the world model.
    pub fn is_main_thread(&self) -> bool {
        self.world.main_thread == Some(std::thread::current().id())
    }

    /// Sets up MPI_COMM_WORLD and MPI_COMM_SELF for the world model.
    fn create_world_comms(&mut self, epoch: Epoch) -> MpiResult {
        let process = self.process()?;
        let (world_ids, me) = (process.world(), process.id());
        let world = Communicator {
            name: "MPI_COMM_WORLD".into(),
            follows_world_errhandler: true,
            ..Communicator::new(
                world_ids.clone().collect(),
                (me - world_ids.start) as usize,
                epoch,
                WORLD_CONTEXT,
                MPI_ERRORS_ARE_FATAL,
            )
        };
        let self_comm = Communicator {
            name: "MPI_COMM_SELF".into(),
            follows_world_errhandler: true,
            ..Communicator::new(
                vec![me].into(),
                0,
                epoch,
                SELF_CONTEXT,
                MPI_ERRORS_ARE_FATAL,
            )
        };
        self.comms.set_predefined(world, self_comm);
        Ok(())
    }

    /// Removes MPI_COMM_WORLD and MPI_COMM_SELF, releasing their handlers.
    fn drop_world_comms(&mut self) {
        for comm in self.comms.take_predefined() {
            let _ = self.errhandlers.release(comm.errhandler);
        }
    }

    // ---- Communicators ----

    pub fn comms(&self) -> &Comms {
        &self.comms
    }

    pub fn comms_mut(&mut self) -> &mut Comms {
        &mut self.comms
    }

    /// Adds a communicator; it holds a reference on its error handler.
    pub fn add_comm(&mut self, comm: Communicator) -> MpiResult<MPI_Comm> {
        self.errhandlers.retain(comm.errhandler)?;
        Ok(self.comms.insert(comm))
    }

    /// Adds a communicator whose reference on its error handler the caller
    /// took already (a creation that must not depend on the parent living).
    pub fn add_comm_holding_errhandler(&mut self, comm: Communicator) -> MPI_Comm {
        self.comms.insert(comm)
    }

    /// Removes a user communicator, releasing its error handler; returns it
    /// (its attributes, for their delete callbacks).
    pub fn free_comm(&mut self, h: MPI_Comm) -> MpiResult<Communicator> {
        let comm = self.comms.remove(h)?;
        self.errhandlers.release(comm.errhandler)?;
        Ok(comm)
    }

    /// `MPI_Comm_set_errhandler`.
    pub fn set_comm_errhandler(&mut self, comm: MPI_Comm, errhandler: MPI_Errhandler) -> MpiResult {
        self.comms.get(comm)?;
        self.errhandlers.retain(errhandler)?;
        let c = self.comms.get_mut(comm)?;
        c.follows_world_errhandler = false;
        let old = std::mem::replace(&mut c.errhandler, errhandler);
        self.errhandlers.release(old)
    }

    /// `MPI_Comm_get_errhandler`: the handler, with a reference for the
    /// caller (who frees it with `MPI_Errhandler_free`).
    pub fn comm_errhandler(&mut self, comm: MPI_Comm) -> MpiResult<MPI_Errhandler> {
        let h = self.comms.get(comm)?.errhandler;
        self.errhandlers.retain(h)?;
        Ok(h)
    }

    // ---- Files ----

    pub fn files(&self) -> &HandleTable<crate::core::io::File> {
        &self.files
    }

    pub fn files_mut(&mut self) -> &mut HandleTable<crate::core::io::File> {
        &mut self.files
    }

    pub fn datareps(&self) -> &[std::sync::Arc<crate::core::io::view::UserDatarep>] {
        &self.datareps
    }

    pub fn datareps_mut(&mut self) -> &mut Vec<std::sync::Arc<crate::core::io::view::UserDatarep>> {
        &mut self.datareps
    }

    /// The handler new files start with (the one set on `MPI_FILE_NULL`).
    pub fn default_file_errhandler(&self) -> MPI_Errhandler {
        self.file_errhandler
    }

    /// `MPI_File_set_errhandler`: on a file, or on `MPI_FILE_NULL` (handle
    /// 0) for files opened later.
    pub fn set_file_errhandler(&mut self, file: c_int, errhandler: MPI_Errhandler) -> MpiResult {
        if file != 0 {
            crate::core::io::get(self, file)?;
        }
        self.errhandlers.retain(errhandler)?;
        let slot = if file == 0 {
            &mut self.file_errhandler
        } else {
            &mut crate::core::io::get_mut(self, file)?.errhandler
        };
        let old = std::mem::replace(slot, errhandler);
        self.errhandlers.release(old)
    }

    /// `MPI_File_get_errhandler`: the handler, with a reference for the
    /// caller.
    pub fn file_errhandler(&mut self, file: c_int) -> MpiResult<MPI_Errhandler> {
        let h = if file == 0 {
            self.file_errhandler
        } else {
            crate::core::io::get(self, file)?.errhandler
        };
        self.errhandlers.retain(h)?;
        Ok(h)
    }

    // ---- Sessions ----

    pub fn sessions(&self) -> &HandleTable<Session> {
        &self.sessions
    }

    /// Adds a session; it holds a reference on its error handler.
    pub fn add_session(&mut self, session: Session) -> MpiResult<MPI_Session> {
        self.errhandlers.retain(session.errhandler)?;
        Ok(self.sessions.insert(session))
    }

    /// Removes a session, releasing its error handler.
    pub fn free_session(&mut self, h: MPI_Session) -> Option<Session> {
        let session = self.sessions.remove(h)?;
        let _ = self.errhandlers.release(session.errhandler);
        Some(session)
    }

    /// `MPI_Session_set_errhandler`.
    pub fn set_session_errhandler(
        &mut self,
        session: MPI_Session,
        errhandler: MPI_Errhandler,
        invalid: impl FnOnce() -> MpiError,
    ) -> MpiResult {
        if self.sessions.get(session).is_none() {
            return Err(invalid());
        }
        self.errhandlers.retain(errhandler)?;
        let s = self.sessions.get_mut(session).expect("checked above");
        let old = std::mem::replace(&mut s.errhandler, errhandler);
        self.errhandlers.release(old)
    }

    /// `MPI_Session_get_errhandler`: the handler, with a reference for the
    /// caller.
    pub fn session_errhandler(
        &mut self,
        session: MPI_Session,
        invalid: impl FnOnce() -> MpiError,
    ) -> MpiResult<MPI_Errhandler> {
        let h = self.sessions.get(session).ok_or_else(invalid)?.errhandler;
        self.errhandlers.retain(h)?;
        Ok(h)
    }

    // ---- Groups, info, error handlers, attribute keys ----

    pub fn groups(&self) -> &HandleTable<Group> {
        &self.groups
    }

    pub fn groups_mut(&mut self) -> &mut HandleTable<Group> {
        &mut self.groups
    }

    pub fn infos(&self) -> &HandleTable<InfoObject> {
        &self.infos
    }

    pub fn infos_mut(&mut self) -> &mut HandleTable<InfoObject> {
        &mut self.infos
    }

    pub fn errhandlers(&self) -> &Errhandlers {
        &self.errhandlers
    }

    pub fn errhandlers_mut(&mut self) -> &mut Errhandlers {
        &mut self.errhandlers
    }

    pub fn keyvals(&self) -> &Keyvals {
        &self.keyvals
    }

    pub fn keyvals_mut(&mut self) -> &mut Keyvals {
        &mut self.keyvals
    }
}

fn not_initialized() -> MpiError {
    MpiError::new(
        MPI_ERR_OTHER,
        "MPI is not initialized (no session or world model is open)",
    )
}
