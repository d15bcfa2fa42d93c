//! Starting processes (`MPI_Comm_spawn`, `MPI_Comm_spawn_multiple`), and
//! a spawned world's side: its intercommunicator to its parents.
//!
//! How: the root of the spawning group opens a port (`ports`), asks the
//! launcher over PMI to start the processes as a new world of the job,
//! with the port's name in that world's key-value space
//! ([`PARENT_PORT_KEY`]), then answers on the port as `MPI_Comm_accept`
//! does. The new world's `MPI_Init` reads the name and connects
//! ([`connect_to_parent`]); both groups then hold the intercommunicator.
//!
//! What makes processes of several worlds one job, and where it lives:
//! - process ids are job-wide: oxmpi's mpiexec numbers a spawned world
//!   after every earlier one and says where it starts
//!   (`OXMPI_WORLD_BASE`, `Process::world_base`);
//! - every world's business cards are in the first world's key-value space
//!   (`OXMPI_JOB_KVS`, `Process::card_kvs`), so any process finds any
//!   other's;
//! - a spawned process's epochs continue its parents' numbering
//!   (`Epochs::start_at`, from the epoch in the port's name): peers talk
//!   only within one epoch;
//! - processes of different worlds talk over TCP: shared-memory inboxes
//!   serve the node-mates the launcher placed with a world
//!   (`Process::node_ranks`), so spawning needs the TCP transport (it is
//!   refused under `OXMPI_TRANSPORT=shm`).
//!
//! A spawned process must initialize the world model (`MPI_Init`), where
//! the connection to its parents is made; until it does, the parents'
//! `MPI_Comm_spawn` waits. Under another launcher (Hydra, Slurm) spawning
//! fails with `MPI_ERR_SPAWN`: they can start processes, but not number
//! them into the job.
use std::os::raw::c_int;

use super::error::{MpiError, MpiResult};
use super::intercomm::create_with;
use super::ports;
pub use super::process::PARENT_PORT_KEY;
use super::runtime;
use crate::bootstrap::pmi::client::SpawnCommand;
use crate::config::TransportChoice;
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::MPI_Comm;

/// `MPI_Comm_spawn(_multiple)`: the root reads the commands with
/// `commands` (their arguments are significant there only; an error in
/// them, or the launcher's refusal, fails the call at every member with
/// the root's error class). Returns the intercommunicator to the new
/// processes.
pub fn spawn(
    commands: impl FnOnce() -> MpiResult<Vec<SpawnCommand>>,
    root: c_int,
    comm: MPI_Comm,
) -> MpiResult<MPI_Comm> {
    create_with(comm, root, |mine| {
        let commands = commands()?;
        let port = ports::open()?;
        let exchanged = start(&commands, &port).and_then(|()| ports::answer(&port, mine));
        let _ = ports::close(&port);
        exchanged
    })
}

/// Asks the launcher to start `commands`, telling them `port`.
fn start(commands: &[SpawnCommand], port: &str) -> MpiResult {
    let refuse = |why: String| Err(MpiError::new(MPI_ERR_SPAWN, why));
    if crate::config::get().transport == TransportChoice::Shm {
        return refuse(
            "spawned processes reach their parents over TCP, which OXMPI_TRANSPORT=shm turns off"
                .into(),
        );
    }
    let mut rt = runtime::lock();
    let oxmpi_launcher = rt.process()?.puts_visible_at_once;
    let Some(pmi) = rt.pmi_mut()? else {
        return refuse("this process runs without a launcher (a singleton): nothing can start processes for it; run it under oxmpi's mpiexec".into());
    };
    if !oxmpi_launcher {
        return refuse(
            "only oxmpi's mpiexec can add processes to an oxmpi job (this launcher is another)"
                .into(),
        );
    }
    let preput = [(PARENT_PORT_KEY.to_string(), port.to_string())];
    pmi.spawn(commands, &preput)
        .or_else(|e| refuse(format!("the launcher could not start the processes: {e}")))
}

/// A spawned process's `MPI_Init`: connects its world to its parents'
/// spawn; the intercommunicator is `MPI_Comm_get_parent`'s from then on.
/// Nothing to do for a process that was not spawned.
pub fn connect_to_parent() -> MpiResult {
    let Some(port) = runtime::lock().process()?.parent_port.clone() else {
        return Ok(());
    };
    let parent = ports::connect(&port, 0, MPI_COMM_WORLD)?;
    let mut rt = runtime::lock();
    let c = rt.comms_mut().get_mut(parent)?;
    c.spawn_parent = true;
    // Its name, as MPI says.
    c.name = "MPI_COMM_PARENT".into();
    Ok(())
}

/// `MPI_Comm_get_parent`: the intercommunicator to the parents while it
/// lives, else `MPI_COMM_NULL`.
pub fn parent() -> MPI_Comm {
    runtime::lock()
        .comms()
        .spawn_parent()
        .unwrap_or(MPI_COMM_NULL)
}
