//! The library's PMIx client: the job as the PMIx server describes it,
//! the exchange of business cards through PMIx's key-value store, and
//! MPI's name service through the server's data store (`PMIx_Publish`,
//! `PMIx_Lookup`, `PMIx_Unpublish`; Open MPI 4.1's server has one, Slurm
//! 22.05's answers "not supported").
//!
//! Re-initialization: PMIx is initialized once, at the process's first
//! initialization, and finalized at process exit (`Runtime::end_process`),
//! like the PMI wire connection: its server connection and progress thread (5 descriptors
//! and 1 thread with PMIx 4.2) belong to the process, not to an epoch, and
//! do not grow with epochs. `PMIx_Init` again after `PMIx_Finalize` does
//! work with Slurm 22.05 and Open MPI 4.1, and would leave nothing between
//! epochs, but it was tried and dropped: 1000 session cycles took 3-5
//! times as long, and with a `PMIx_Fence` per epoch Open MPI's server hung
//! after some tens of cycles. [`PmixClient::ensure_initialized`] keeps
//! the per-epoch form one call away.
//! Every epoch publishes its card under its own key (`oxmpi.e<N>.r<R>`,
//! see `core::epoch`), `PMIx_Put` then `PMIx_Commit`; a peer's card is read
//! with `PMIx_Get`, which asks the peer's server (PMIx's "direct modex")
//! and answers once the key is committed (Slurm) or "not found" for now
//! (Open MPI 4.1: progress asks again), so peers are found lazily, on
//! first contact, with no job-wide fence, not even in `MPI_Init` or
//! `MPI_Session_init` (unlike under Hydra). A card that is not found at once
//! is asked for again with `PMIX_GET_REFRESH_CACHE`, in case a server
//! answers from the peer's data of an earlier epoch, without the new key
//! (Slurm 22.05's and Open MPI 4.1's never did in the tests: they wait for
//! the key).
use std::sync::atomic::{AtomicBool, Ordering};

use super::ffi::{self, CallError, Directive, Got, Proc, RANK_WILDCARD};
use crate::bootstrap::pmi::client::{JobPlacement, PmiError};
use crate::bootstrap::rank_list;

// PMIx keys and directives (pmix_common.h).
const JOB_SIZE: &str = "pmix.job.size";
const UNIV_SIZE: &str = "pmix.univ.size";
const APPNUM: &str = "pmix.appnum";
const LOCAL_RANK: &str = "pmix.lrank";
const LOCAL_SIZE: &str = "pmix.local.size";
const LOCAL_PEERS: &str = "pmix.lpeers";
const PSET_NAMES: &str = "pmix.pset.nms";
const PSET_NAME: &str = "pmix.pset.nm";
const PSET_MEMBERS: &str = "pmix.pset.mems";
const COLLECT_DATA: &str = "pmix.collect";
const IMMEDIATE: &str = "pmix.immediate";
const REFRESH_CACHE: &str = "pmix.get.refresh";

/// Whether PMIx is initialized (and not finalized): `MPI_Abort` then asks
/// the PMIx server to end the job.
static LIVE: AtomicBool = AtomicBool::new(false);

pub struct PmixClient {
    pub placement: JobPlacement,
    /// This process's index among the job's processes on its node, and
    /// their number (`PMIX_LOCAL_RANK`, `PMIX_LOCAL_SIZE`).
    pub local: Option<(u32, u32)>,
    /// The job's ranks on this node (`PMIX_LOCAL_PEERS`), this one
    /// included.
    pub node_ranks: Option<Vec<u32>>,
    /// Whether PMIx is initialized now (not between epochs).
    initialized: bool,
}

fn failed(what: &str, e: CallError) -> PmiError {
    PmiError::Protocol(format!("PMIx {what}: {e}"))
}

impl PmixClient {
    /// Loads the PMIx library and connects to the local PMIx server (the
    /// environment names it: `PMIX_SERVER_URI*`).
    pub fn connect() -> Result<PmixClient, PmiError> {
        ffi::available().map_err(|why| {
            PmiError::Environment(format!(
                "the launcher speaks PMIx, but the PMIx library cannot be used: {why} (install libpmix2, or name the library in OXMPI_PMIX_LIBRARY)"
            ))
        })?;
        let me = ffi::init().map_err(|e| failed("PMIx_Init", e))?;
        LIVE.store(true, Ordering::SeqCst);
        let nspace = me.nspace();
        let job = Proc::new(&nspace, RANK_WILDCARD);
        let size = job_number(&job, JOB_SIZE)?
            .ok_or_else(|| PmiError::Protocol(format!("the PMIx server does not say {JOB_SIZE}")))?
            as u32;
        let appnum = job_number(&me, APPNUM)?.unwrap_or(0) as i32;
        let universe_size = job_number(&job, UNIV_SIZE)?.map_or(-1, |n| n as i32);
        let local_rank = job_number(&me, LOCAL_RANK)?;
        let local_size = job_number(&job, LOCAL_SIZE)?;
        let node_ranks = match immediate(&job, LOCAL_PEERS)? {
            Some(Got::Text(list)) => match rank_list::parse(&list, size) {
                Ok(ranks) if ranks.contains(&me.rank) => Some(ranks),
                Ok(_) | Err(_) => {
                    log::warn!(
                        "ignoring {LOCAL_PEERS}={list}: not ranks of this job holding this one"
                    );
                    None
                }
            },
            _ => None,
        };
        let local = match (local_rank, local_size) {
            (Some(r), Some(n)) if r < n => Some((r as u32, n as u32)),
            _ => None,
        };
        let client = PmixClient {
            placement: JobPlacement {
                rank: me.rank,
                size,
                appnum,
                universe_size,
                kvsname: nspace,
                vallen_max: 1 << 16,
            },
            local,
            node_ranks,
            initialized: true,
        };
        log::debug!(
            "PMIx connected: {:?}, local {:?}, node ranks {:?}",
            client.placement,
            client.local,
            client.node_ranks
        );
        Ok(client)
    }

    /// `PMIx_Init` again after [`PmixClient::rest`]; it must name the
    /// same process.
    fn ensure_initialized(&mut self) -> Result<(), PmiError> {
        if self.initialized {
            return Ok(());
        }
        let me = ffi::init().map_err(|e| failed("PMIx_Init", e))?;
        LIVE.store(true, Ordering::SeqCst);
        self.initialized = true;
        if me.nspace() != self.placement.kvsname || me.rank != self.placement.rank {
            return Err(PmiError::Protocol(format!(
                "PMIx_Init again named another process: {} rank {}, not {} rank {}",
                me.nspace(),
                me.rank,
                self.placement.kvsname,
                self.placement.rank
            )));
        }
        log::debug!("PMIx initialized again");
        Ok(())
    }

    /// Publishes `key=value` for every process of the job (put and commit).
    pub fn put(&mut self, key: &str, value: &str) -> Result<(), PmiError> {
        self.ensure_initialized()?;
        ffi::put_text(key, value).map_err(|e| failed(&format!("PMIx_Put {key}"), e))?;
        ffi::commit().map_err(|e| failed("PMIx_Commit", e))
    }

    /// The value `rank` of this job published under `key`; `Ok(None)` when
    /// it has not (the server waits for a key of a peer that has not
    /// committed it yet, up to the launcher's timeout).
    pub fn get(&mut self, rank: u32, key: &str) -> Result<Option<String>, PmiError> {
        self.ensure_initialized()?;
        let who = Proc::new(&self.placement.kvsname, rank);
        let text = |got: Option<Got>| match got {
            Some(Got::Text(t)) => Some(t),
            _ => None,
        };
        let first = ffi::get(&who, key, &[]).map_err(|e| failed(&format!("PMIx_Get {key}"), e))?;
        if let Some(found) = text(first) {
            return Ok(Some(found));
        }
        log::debug!(
            "PMIx_Get {key} of rank {rank}: not found, asking again with the cache refreshed"
        );
        let again = ffi::get(&who, key, &[Directive::Flag(REFRESH_CACHE, true)])
            .map_err(|e| failed(&format!("PMIx_Get {key}"), e))?;
        Ok(text(again))
    }

    /// A job-level value (rank wildcard) under `key`, as text.
    pub fn get_job_text(&mut self, key: &str) -> Result<Option<String>, PmiError> {
        self.ensure_initialized()?;
        let job = Proc::new(&self.placement.kvsname, RANK_WILDCARD);
        Ok(match immediate(&job, key)? {
            Some(Got::Text(t)) => Some(t),
            _ => None,
        })
    }

    /// `PMIx_Fence` over the job, collecting the data committed so far.
    pub fn fence(&mut self) -> Result<(), PmiError> {
        self.ensure_initialized()?;
        ffi::fence(
            &self.placement.kvsname,
            &[Directive::Flag(COLLECT_DATA, true)],
        )
        .map_err(|e| failed("PMIx_Fence", e))
    }

    /// The process sets the launcher defines (`PMIX_PSET_NAMES`, members
    /// from `PMIX_PSET_MEMBERS`), as ranks of this job; empty when it
    /// defines none (Slurm 22.05 and Open MPI 4.1 define none).
    pub fn process_sets(&mut self) -> Vec<(String, Vec<u32>)> {
        if let Err(e) = self.ensure_initialized() {
            log::debug!("no process sets from PMIx: {e}");
            return Vec::new();
        }
        let job = Proc::new(&self.placement.kvsname, RANK_WILDCARD);
        let names = match immediate(&job, PSET_NAMES) {
            Ok(Some(Got::Texts(names))) => names,
            Ok(Some(Got::Text(list))) => split_names(&list),
            Ok(_) => return Vec::new(),
            Err(e) => {
                log::debug!("no process sets from PMIx: {e}");
                return Vec::new();
            }
        };
        let mut sets = Vec::new();
        for name in names {
            let members = ffi::get(
                &job,
                PSET_MEMBERS,
                &[
                    Directive::Flag(IMMEDIATE, true),
                    Directive::Text(PSET_NAME, name.clone()),
                ],
            );
            match members {
                Ok(Some(Got::Procs(procs))) => {
                    let ranks = ranks_in(&procs, &self.placement.kvsname, self.placement.size);
                    sets.push((name, ranks));
                }
                other => log::debug!("PMIx process set {name}: no members ({other:?})"),
            }
        }
        sets
    }

    /// `MPI_Publish_name` through the PMIx server's data store: whether
    /// `service` was published (false: something is published under it
    /// already; servers such as Open MPI 4.1's accept a second publish of
    /// a key, so the lookup comes first).
    pub fn publish_name(&mut self, service: &str, port: &str) -> Result<bool, PmiError> {
        self.ensure_initialized()?;
        if self.lookup_name(service)?.is_some() {
            return Ok(false);
        }
        match ffi::publish(service, port) {
            Ok(()) => Ok(true),
            Err(CallError::Failed(ffi::Status(ffi::ERR_DUPLICATE_KEY))) => Ok(false),
            Err(e) => Err(failed("PMIx_Publish", e)),
        }
    }

    /// `MPI_Unpublish_name`: whether `service` was published (looked up
    /// first: servers answer success for a key they do not hold).
    pub fn unpublish_name(&mut self, service: &str) -> Result<bool, PmiError> {
        if self.lookup_name(service)?.is_none() {
            return Ok(false);
        }
        match ffi::unpublish(service) {
            Ok(()) => Ok(true),
            Err(CallError::Failed(ffi::Status(ffi::ERR_NOT_FOUND))) => Ok(false),
            Err(e) => Err(failed("PMIx_Unpublish", e)),
        }
    }

    /// `MPI_Lookup_name`: the port published for `service`, if any (not
    /// waiting for one to be published).
    pub fn lookup_name(&mut self, service: &str) -> Result<Option<String>, PmiError> {
        self.ensure_initialized()?;
        ffi::lookup(service).map_err(|e| match e {
            CallError::Failed(ffi::Status(ffi::ERR_NOT_SUPPORTED)) => PmiError::Protocol(format!(
                "this PMIx server has no name service (PMIx_Lookup: {e}); Open MPI's mpirun \
                 and oxmpi's mpiexec have one"
            )),
            e => failed("PMIx_Lookup", e),
        })
    }

    /// `PMIx_Finalize` when initialized (at process exit; a later use
    /// would initialize again).
    pub fn rest(&mut self) -> Result<(), PmiError> {
        if !self.initialized {
            return Ok(());
        }
        self.initialized = false;
        LIVE.store(false, Ordering::SeqCst);
        ffi::finalize().map_err(|e| failed("PMIx_Finalize", e))
    }
}

/// A number the server holds for `who`, without asking other servers.
fn job_number(who: &Proc, key: &str) -> Result<Option<u64>, PmiError> {
    Ok(immediate(who, key)?.and_then(|got| got.number()))
}

/// `PMIx_Get` with `PMIX_IMMEDIATE`: job information the local server
/// has, never a wait for other servers.
fn immediate(who: &Proc, key: &str) -> Result<Option<Got>, PmiError> {
    match ffi::get(who, key, &[Directive::Flag(IMMEDIATE, true)]) {
        Ok(got) => Ok(got),
        // Unreachable data is absent data for job information.
        Err(CallError::Failed(status)) => {
            log::debug!("PMIx_Get {key}: {status}");
            Ok(None)
        }
        Err(e) => Err(failed(&format!("PMIx_Get {key}"), e)),
    }
}

/// A comma-separated list of process set names.
fn split_names(list: &str) -> Vec<String> {
    list.split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(str::to_string)
        .collect()
}

/// The ranks of namespace `nspace` (of a job of `size`) among `procs`, in
/// order, without repeats; other namespaces' processes are left out.
fn ranks_in(procs: &[(String, u32)], nspace: &str, size: u32) -> Vec<u32> {
    let mut ranks = Vec::new();
    for (ns, rank) in procs {
        if ns == nspace && *rank < size && !ranks.contains(rank) {
            ranks.push(*rank);
        } else if ns == nspace && *rank == RANK_WILDCARD {
            return (0..size).collect();
        }
    }
    ranks
}

/// Asks the PMIx server to end the job with `code`; false when PMIx is
/// not in use (or the request failed).
pub fn send_abort(code: i32, message: &str) -> bool {
    if !LIVE.load(Ordering::SeqCst) {
        return false;
    }
    ffi::abort(code, message).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn process_set_names_are_split_on_commas() {
        assert_eq!(
            split_names("mpi://WORLD, app1,,user:a "),
            ["mpi://WORLD", "app1", "user:a"]
        );
        assert!(split_names("").is_empty());
    }

    #[test]
    fn members_keep_this_jobs_ranks_in_order() {
        let procs = vec![
            ("job.1".to_string(), 3),
            ("other".to_string(), 0),
            ("job.1".to_string(), 1),
            ("job.1".to_string(), 3),
            ("job.1".to_string(), 9),
        ];
        assert_eq!(ranks_in(&procs, "job.1", 4), [3, 1]);
        let all = vec![("job.1".to_string(), RANK_WILDCARD)];
        assert_eq!(ranks_in(&all, "job.1", 3), [0, 1, 2]);
    }
}
