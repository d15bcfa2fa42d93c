//! The process: what it learned from its launcher (rank, size, placement,
//! the PMI connection, process sets). Set up once, at the first
//! initialization, and kept across epochs (see `epoch`); the PMI connection
//! says goodbye to the launcher at process exit, from the exit handler
//! registered here.
use super::error::{MpiError, MpiResult};
use super::pset::ProcessSets;
use crate::bootstrap::pmi::client::JobPlacement;
use crate::bootstrap::pmi::launcher::Launcher;
use crate::bootstrap::{node, ProcessId};
use crate::mpi_abi::constants::*;

/// What this process is in its job.
pub struct Process {
    pub pmi: Option<Launcher>,
    pub placement: JobPlacement,
    pub hostname: String,
    /// Names this job in shared-memory segment names.
    pub job_id: String,
    /// This node's identity (see `bootstrap::node::identity`).
    pub node: String,
    /// This process's index among the job's processes on its node, and
    /// their number.
    pub local_index: u32,
    pub local_count: u32,
    /// Whether the launcher is oxmpi's mpiexec, whose PMI puts are visible
    /// at once (Hydra 4.0.2 shows them only after a PMI barrier).
    pub puts_visible_at_once: bool,
    /// The process sets sessions offer.
    pub psets: ProcessSets,
    /// The processes the launcher placed on this node (`PMI_process_mapping`),
    /// this one included; `None` when the launcher did not say. The
    /// authority on which peers may share memory with this process.
    pub node_ranks: Option<Vec<ProcessId>>,
    /// The process id of this process's world's rank 0. Process ids are
    /// job-wide: the first world has 0..n, the processes a
    /// `MPI_Comm_spawn` started follow (oxmpi's mpiexec numbers them and
    /// says where their world starts in `OXMPI_WORLD_BASE`).
    pub world_base: ProcessId,
    /// The key-value space holding the job's business cards: the first
    /// world's (`OXMPI_JOB_KVS` in a spawned world), so that every process
    /// of the job finds every other's card under one name.
    pub card_kvs: String,
    /// The port of the `MPI_Comm_spawn` that started this process (its
    /// world connects to it in `MPI_Init`); `None` when not spawned.
    pub parent_port: Option<String>,
}

/// The PMI key under which a spawned world finds its parents' port.
pub const PARENT_PORT_KEY: &str = "oxmpi.parent_port";

impl Process {
    /// Connects to the launcher, or becomes a singleton when there is none.
    pub fn bootstrap() -> MpiResult<Process> {
        let mut pmi = Launcher::from_env()
            .map_err(|e| MpiError::new(MPI_ERR_OTHER, format!("cannot reach the launcher: {e}")))?;
        if let Some(client) = pmi
            .as_mut()
            .filter(|_| crate::config::get().failure_notices)
        {
            client.subscribe_failures().map_err(|e| {
                MpiError::new(MPI_ERR_OTHER, format!("asking for failure notices: {e}"))
            })?;
        }
        let placement = match &pmi {
            Some(client) => client.placement().clone(),
            None => JobPlacement {
                rank: 0,
                size: 1,
                appnum: 0,
                universe_size: 1,
                kvsname: format!("singleton-{}", std::process::id()),
                vallen_max: 1024,
            },
        };
        let world_base = match std::env::var("OXMPI_WORLD_BASE") {
            Ok(v) => v.trim().parse::<ProcessId>().map_err(|_| {
                MpiError::new(
                    MPI_ERR_OTHER,
                    format!("OXMPI_WORLD_BASE={v} is not a number"),
                )
            })?,
            Err(_) => 0,
        };
        let spawned = std::env::var("PMI_SPAWNED").is_ok_and(|v| v.trim() == "1");
        let parent_port = match pmi.as_mut().filter(|_| spawned) {
            Some(client) => client.get(PARENT_PORT_KEY).map_err(|e| {
                MpiError::new(MPI_ERR_OTHER, format!("reading the parent's port: {e}"))
            })?,
            None => None,
        };
        let card_kvs = std::env::var("OXMPI_JOB_KVS").unwrap_or_else(|_| placement.kvsname.clone());
        super::abort::set_rank(placement.rank);
        super::attributes::set_job_values(placement.universe_size, placement.appnum);
        register_exit_handler();
        let env_u32 = |name: &str| {
            std::env::var(name)
                .ok()
                .and_then(|v| v.trim().parse::<u32>().ok())
        };
        let oxmpi_job = crate::config::get().job_id.clone();
        let job_id: String = oxmpi_job
            .clone()
            .unwrap_or_else(|| placement.kvsname.clone())
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .take(80)
            .collect();
        let launcher_slot = pmi.as_ref().and_then(Launcher::local_slot);
        let local_index = env_u32("MPI_LOCALRANKID")
            .or(launcher_slot.map(|(index, _)| index))
            .unwrap_or(placement.rank);
        let local_count = env_u32("MPI_LOCALNRANKS")
            .or(launcher_slot.map(|(_, count)| count))
            .unwrap_or(placement.size)
            .max(local_index + 1);
        // Peers need ptrace rights over this process to read its memory
        // (single copy) and to take its anonymous inbox's descriptor.
        if crate::config::get().transport != crate::config::TransportChoice::Tcp {
            let launcher = crate::config::get().launcher_pid;
            match crate::transport::shm::single_copy::allow_peers_to_read(launcher) {
                Ok(rights) => log::debug!("memory readable by peers: {rights:?}"),
                Err(e) => log::debug!("single copy between processes unavailable: {e}"),
            }
        }
        let shared = match pmi.as_mut() {
            Some(client) => client
                .node_ranks()
                .map(|ranks| ranks.into_iter().map(|r| world_base + r).collect()),
            None => Some(vec![world_base + placement.rank]),
        };
        if crate::config::get().transport == crate::config::TransportChoice::Shm {
            if let Some(local) = &shared {
                if (local.len() as u32) < placement.size {
                    return Err(MpiError::new(
                        MPI_ERR_OTHER,
                        format!(
                            "OXMPI_TRANSPORT=shm, but the job spans several nodes ({} of its {} processes run on this one)",
                            local.len(),
                            placement.size
                        ),
                    ));
                }
            }
        }
        super::progress::set_local_processes(local_count as usize);
        let mut psets = ProcessSets::new(
            world_base..world_base + placement.size,
            world_base + placement.rank,
            shared.clone(),
            crate::config::get().psets.as_deref(),
        );
        if let Some(client) = pmi.as_mut() {
            for (name, ranks) in client.process_sets() {
                psets.add_launcher_set(&name, ranks.into_iter().map(|r| world_base + r).collect());
            }
        }
        Ok(Process {
            psets,
            node_ranks: shared,
            pmi,
            placement,
            hostname: node::hostname(),
            job_id,
            node: node::identity(),
            local_index,
            local_count,
            puts_visible_at_once: oxmpi_job.is_some(),
            world_base,
            card_kvs,
            parent_port,
        })
    }

    /// This process's job-wide id.
    pub fn id(&self) -> ProcessId {
        self.world_base + self.placement.rank
    }

    /// The process ids of this process's world (`MPI_COMM_WORLD`,
    /// `mpi://WORLD`), in rank order.
    pub fn world(&self) -> std::ops::Range<ProcessId> {
        self.world_base..self.world_base + self.placement.size
    }
}

/// Registers, once, the handler that runs at process exit: it ends an epoch
/// still open (the program called `exit` with sessions open) and says
/// goodbye to the launcher (Hydra reports a process that exits without PMI
/// `finalize` as a failure). Registered at the end of the first
/// initialization, so it runs before exit handlers registered earlier.
fn register_exit_handler() {
    static REGISTERED: std::sync::Once = std::sync::Once::new();
    REGISTERED.call_once(|| {
        // SAFETY: atexit with a function that has the required C signature.
        unsafe { libc::atexit(at_process_exit) };
    });
}

extern "C" fn at_process_exit() {
    let _ = std::panic::catch_unwind(|| {
        // Another thread may hold the lock while the process exits; then
        // the launcher sees a plain exit, which is all that can be done.
        let Some(mut rt) = super::runtime::try_lock() else {
            return;
        };
        rt.end_process();
    });
}
