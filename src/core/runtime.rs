//! The process-wide runtime: every MPI object and the instance state behind
//! one lock. One lock gives `MPI_THREAD_MULTIPLE` honestly; it is split only
//! where a benchmark shows it matters. Error handlers and user callbacks are
//! never called with the lock held.
use std::sync::{Mutex, MutexGuard};
use std::thread::ThreadId;

use once_cell::sync::Lazy;

use super::comm::{Communicator, Comms};
use super::errhandler::Errhandlers;
use super::error::{MpiError, MpiResult};
use super::handles::{HandleTable, ObjectKind};
use super::info::InfoObject;
use super::instance::{Instance, Process};
use crate::abi::constants::*;

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
    /// Context ids handed out in this process (unique across epochs).
    next_context_id: u64,
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
        next_context_id: 0,
    })
});

/// Locks the runtime. A panic while it was held (already reported as
/// MPI_ERR_INTERN) does not make it unusable.
pub fn lock() -> MutexGuard<'static, Runtime> {
    RUNTIME.lock().unwrap_or_else(|e| e.into_inner())
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
        let instance = match &mut self.instance {
            Some(instance) => instance,
            None => {
                self.epochs_started += 1;
                log::debug!("epoch {} begins", self.epochs_started);
                self.instance.insert(Instance {
                    epoch: self.epochs_started,
                    users: 0,
                })
            }
        };
        instance.users += 1;
        Ok(instance.epoch)
    }

    /// Stops using the instance; the last user ends the epoch.
    pub fn release_instance(&mut self) {
        let Some(instance) = &mut self.instance else {
            return;
        };
        instance.users -= 1;
        if instance.users == 0 {
            log::debug!("epoch {} ends", instance.epoch);
            self.instance = None;
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

    /// A context id never used before in this process.
    pub fn fresh_context_id(&mut self) -> u64 {
        self.next_context_id += 1;
        self.next_context_id
    }

    pub fn world_is_active(&self) -> bool {
        self.world == WorldModel::Initialized
    }

    /// Sets up MPI_COMM_WORLD and MPI_COMM_SELF for the world model.
    pub fn create_world_comms(&mut self, epoch: u64) -> MpiResult {
        let placement = self.process()?.placement.clone();
        let world = Communicator {
            members: (0..placement.size).collect(),
            rank: placement.rank as usize,
            context_id: self.fresh_context_id(),
            epoch,
            errhandler: MPI_ERRORS_ARE_FATAL,
            name: "MPI_COMM_WORLD".into(),
            info: InfoObject::new(),
        };
        let self_comm = Communicator {
            members: vec![placement.rank].into(),
            rank: 0,
            context_id: self.fresh_context_id(),
            epoch,
            errhandler: MPI_ERRORS_ARE_FATAL,
            name: "MPI_COMM_SELF".into(),
            info: InfoObject::new(),
        };
        self.comms.world = Some(world);
        self.comms.self_comm = Some(self_comm);
        Ok(())
    }

    /// Removes MPI_COMM_WORLD and MPI_COMM_SELF, releasing their handlers.
    pub fn drop_world_comms(&mut self) {
        for comm in [self.comms.world.take(), self.comms.self_comm.take()].into_iter().flatten() {
            let _ = self.errhandlers.release(comm.errhandler);
        }
    }
}
