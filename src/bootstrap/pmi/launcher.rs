//! The process's link to its launcher, whichever interface it speaks: the
//! PMI-1/PMI-2 wire (`client`: oxmpi's mpiexec, Hydra, Slurm's pmi2
//! plugin) or PMIx (`pmix`: Slurm's pmix plugin, Open MPI's launchers).
//! Callers see one interface; what an interface cannot do is an error that
//! says so.
//!
//! Which one, when the environment names several ([`choose`]):
//! `OXMPI_PMI=pmix` takes PMIx; otherwise the PMI wire when `PMI_FD` or
//! `PMI_PORT` is set (then `OXMPI_PMI` says which version), else PMIx when
//! a PMIx server is named (`PMIX_SERVER_URI*`, `PMIX_NAMESPACE`,
//! `PMIX_RANK`), else a singleton. The wire goes first because it is set
//! per process by the launcher that started this one, while PMIx variables
//! may be left over from an outer job (oxmpi's mpiexec run inside an
//! `srun --mpi=pmix` step).
use super::client::{JobPlacement, PmiClient, PmiError, SpawnCommand};
use super::pmix::client::PmixClient;
use crate::bootstrap::{process_mapping, ProcessId};
use crate::config::PmiChoice;

pub enum Launcher {
    Wire(PmiClient),
    Pmix(Box<PmixClient>),
}

/// The interface the environment and `OXMPI_PMI` choose.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interface {
    Wire,
    Pmix,
    Singleton,
}

/// The precedence of the module's doc: `wire` says whether `PMI_FD` or
/// `PMI_PORT` is set, `pmix` whether a PMIx server is named.
pub fn choose(choice: PmiChoice, wire: bool, pmix: bool) -> Interface {
    match choice {
        PmiChoice::Pmix => Interface::Pmix,
        _ if wire => Interface::Wire,
        _ if pmix => Interface::Pmix,
        _ => Interface::Singleton,
    }
}

/// Whether the environment names a PMIx server.
fn pmix_in_environment() -> bool {
    std::env::vars_os().any(|(name, _)| {
        let name = name.to_string_lossy();
        name.starts_with("PMIX_SERVER_URI") || name == "PMIX_NAMESPACE" || name == "PMIX_RANK"
    })
}

impl Launcher {
    /// Connects as the environment says; `Ok(None)` for a singleton.
    pub fn from_env() -> Result<Option<Launcher>, PmiError> {
        let choice = crate::config::get().pmi;
        let wire = std::env::var_os("PMI_FD").is_some() || std::env::var_os("PMI_PORT").is_some();
        let pmix = pmix_in_environment();
        match choose(choice, wire, pmix) {
            Interface::Wire => Ok(PmiClient::from_env()?.map(Launcher::Wire)),
            Interface::Pmix if !pmix => Err(PmiError::Environment(
                "OXMPI_PMI=pmix, but no PMIx server is named in the environment (PMIX_SERVER_URI*, PMIX_NAMESPACE): start the program with srun --mpi=pmix or Open MPI's mpirun".into(),
            )),
            Interface::Pmix => Ok(Some(Launcher::Pmix(Box::new(PmixClient::connect()?)))),
            Interface::Singleton => Ok(None),
        }
    }

    pub fn placement(&self) -> &JobPlacement {
        match self {
            Launcher::Wire(c) => &c.placement,
            Launcher::Pmix(c) => &c.placement,
        }
    }

    /// The interface's name, for messages.
    pub fn interface(&self) -> &'static str {
        match self {
            Launcher::Wire(c) if c.is_pmi2() => "PMI-2",
            Launcher::Wire(_) => "PMI-1",
            Launcher::Pmix(_) => "PMIx",
        }
    }

    /// Whether this process speaks PMI-2.
    pub fn is_pmi2(&self) -> bool {
        matches!(self, Launcher::Wire(c) if c.is_pmi2())
    }

    /// Publishes `key=value` in the key-value space `kvsname` (PMIx: this
    /// job's, whatever `kvsname` says).
    pub fn put_in(&mut self, kvsname: &str, key: &str, value: &str) -> Result<(), PmiError> {
        match self {
            Launcher::Wire(c) => c.put_in(kvsname, key, value),
            Launcher::Pmix(c) => c.put(key, value),
        }
    }

    /// What process `owner` published under `key` in `kvsname`; `Ok(None)`
    /// when it is not (yet) there.
    pub fn get_published(
        &mut self,
        kvsname: &str,
        owner: ProcessId,
        key: &str,
    ) -> Result<Option<String>, PmiError> {
        match self {
            Launcher::Wire(c) => c.get_from(kvsname, key),
            Launcher::Pmix(c) => c.get(owner, key),
        }
    }

    /// A key of this process's key-value space put before it started (PMI
    /// `preput`; PMIx: a job-level value).
    pub fn get(&mut self, key: &str) -> Result<Option<String>, PmiError> {
        match self {
            Launcher::Wire(c) => c.get(key),
            Launcher::Pmix(c) => c.get_job_text(key),
        }
    }

    /// Whether a put is visible to peers without a barrier (PMIx: once
    /// committed, a peer's `PMIx_Get` finds it or waits for it).
    pub fn shows_puts_at_commit(&self) -> bool {
        matches!(self, Launcher::Pmix(_))
    }

    /// The job-wide barrier that also makes every card published so far
    /// visible (PMIx: a fence collecting the data).
    pub fn barrier(&mut self) -> Result<(), PmiError> {
        match self {
            Launcher::Wire(c) => c.barrier(),
            Launcher::Pmix(c) => c.fence(),
        }
    }

    /// The ranks of this world on this process's node, this one included;
    /// `None` when the launcher does not say.
    pub fn node_ranks(&mut self) -> Option<Vec<u32>> {
        match self {
            Launcher::Wire(c) => {
                let (size, rank) = (c.placement.size, c.placement.rank);
                c.process_mapping()
                    .ok()
                    .flatten()
                    .and_then(|v| process_mapping::parse(&v))
                    .and_then(|t| process_mapping::ranks_sharing_node(&t, size, rank))
            }
            Launcher::Pmix(c) => c.node_ranks.clone(),
        }
    }

    /// This process's index among the job's processes on its node and
    /// their number, when the launcher says (PMIx).
    pub fn local_slot(&self) -> Option<(u32, u32)> {
        match self {
            Launcher::Wire(_) => None,
            Launcher::Pmix(c) => c.local,
        }
    }

    /// The process sets the launcher defines, as ranks of this world.
    pub fn process_sets(&mut self) -> Vec<(String, Vec<u32>)> {
        match self {
            Launcher::Wire(_) => Vec::new(),
            Launcher::Pmix(c) => c.process_sets(),
        }
    }

    pub fn subscribe_failures(&mut self) -> Result<(), PmiError> {
        match self {
            Launcher::Wire(c) => c.subscribe_failures(),
            Launcher::Pmix(_) => Err(unsupported("failure notices (OXMPI_FAILURE_NOTICES)")),
        }
    }

    /// Failure notices come only from oxmpi's mpiexec (see `client`).
    pub fn poll_failures(&mut self) -> Result<Vec<u32>, PmiError> {
        match self {
            Launcher::Wire(c) => c.poll_failures(),
            Launcher::Pmix(_) => Ok(Vec::new()),
        }
    }

    pub fn spawn(
        &mut self,
        commands: &[SpawnCommand],
        preput: &[(String, String)],
    ) -> Result<(), PmiError> {
        match self {
            Launcher::Wire(c) => c.spawn(commands, preput),
            Launcher::Pmix(_) => Err(unsupported("starting processes")),
        }
    }

    pub fn publish_name(&mut self, service: &str, port: &str) -> Result<bool, PmiError> {
        match self {
            Launcher::Wire(c) => c.publish_name(service, port),
            Launcher::Pmix(c) => c.publish_name(service, port),
        }
    }

    pub fn unpublish_name(&mut self, service: &str) -> Result<bool, PmiError> {
        match self {
            Launcher::Wire(c) => c.unpublish_name(service),
            Launcher::Pmix(c) => c.unpublish_name(service),
        }
    }

    pub fn lookup_name(&mut self, service: &str) -> Result<Option<String>, PmiError> {
        match self {
            Launcher::Wire(c) => c.lookup_name(service),
            Launcher::Pmix(c) => c.lookup_name(service),
        }
    }

    /// Tells the launcher this process is done with it.
    pub fn finalize(&mut self) -> Result<(), PmiError> {
        match self {
            Launcher::Wire(c) => c.finalize(),
            Launcher::Pmix(c) => c.rest(),
        }
    }
}

fn unsupported(what: &str) -> PmiError {
    PmiError::Protocol(format!(
        "{what} is not supported under PMIx yet (run under oxmpi's mpiexec)"
    ))
}

/// Asks the launcher to end the whole job with `code` (PMIx, else the PMI
/// wire). Returns whether the request was sent.
pub fn send_abort(code: i32, message: &str) -> bool {
    super::pmix::client::send_abort(code, message) || super::client::send_abort(code, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wire_goes_before_pmix_unless_pmix_is_asked_for() {
        use Interface::*;
        for choice in [PmiChoice::V1, PmiChoice::V2, PmiChoice::Auto] {
            assert_eq!(choose(choice, true, true), Wire, "{choice:?}");
            assert_eq!(choose(choice, true, false), Wire);
            assert_eq!(choose(choice, false, true), Pmix);
            assert_eq!(choose(choice, false, false), Singleton);
        }
        assert_eq!(choose(PmiChoice::Pmix, true, true), Pmix);
        assert_eq!(choose(PmiChoice::Pmix, true, false), Pmix);
        assert_eq!(choose(PmiChoice::Pmix, false, false), Pmix);
    }
}
