//! Knobs: every `OXMPI_*` (and honoured `MPIR_CVAR_*`) environment variable
//! the library reads is read here, once, and logged at debug level (the job
//! secret redacted). README.md lists them. The launcher interface that is
//! not oxmpi's own (`PMI_FD`, `PMI_PORT`, `PMI_RANK`, `MPI_LOCALRANKID`...,
//! set by any PMI-1 launcher) is read where it is spoken, in `bootstrap` and
//! `core::process`; `OXMPI_CC` is read by the `mpicc` script.
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::LazyLock;

#[derive(Debug, Clone)]
pub struct Config {
    /// `MPIR_CVAR_FINALIZE_ATEXIT` / `OXMPI_FINALIZE_ATEXIT`: keep transports
    /// and the PMI connection past the last finalize; tear down at exit.
    pub finalize_atexit: bool,
    /// `OXMPI_LOG`: env_logger filter for oxmpi's diagnostics (stderr).
    pub log_filter: Option<String>,
    /// `OXMPI_HOSTNAME`: the host name used for this node's identity
    /// (tests use it to make ranks of one machine look like several hosts).
    pub hostname: Option<String>,
    /// `OXMPI_SHM_SINGLE_COPY` (default 1): large shared-memory messages
    /// are copied once with `process_vm_readv` where the kernel allows, and
    /// so are puts and gets on `MPI_Win_create` memory of the node's ranks;
    /// 0 forces the pipelined copy through the rings (and RMA messages).
    pub shm_single_copy: bool,
    /// `OXMPI_SHM_SEGMENTS`: `auto` (default: anonymous segments, which
    /// leave nothing behind, where the kernel lets peers share them) or
    /// `named` (named POSIX segments in /dev/shm, as before). True for
    /// `named`.
    pub shm_named_segments: bool,
    /// `OXMPI_SHM_SHARED_COPY`: `auto` (default: when this node's ranks fit
    /// on its cores), `1` or `0`: whether the sender of a large single-copy
    /// message writes half of it into the receiver while the receiver
    /// reads the other half. `None` is `auto`.
    pub shm_shared_copy: Option<bool>,
    /// `OXMPI_INITIAL_ERRHANDLER` (`fatal`, `return` or `abort`; set by
    /// `mpiexec -initial-errhandler`): the handler for errors outside any
    /// object while the world model is not active.
    pub initial_errhandler: i32,
    /// `OXMPI_TRANSPORT`: `auto` (default: shm on a node, tcp between
    /// nodes), `tcp` (everywhere) or `shm` (refuse jobs that span nodes).
    pub transport: TransportChoice,
    /// `OXMPI_IFACE`: the interface (or address) the TCP transport listens
    /// on; default: the first interface that is up and not loopback.
    pub iface: Option<String>,
    /// `OXMPI_SPIN_POLLS`: polls a blocking call makes before it starts
    /// yielding the CPU; default: long when this node's ranks fit on its
    /// cores, short when they oversubscribe them (see `core::progress`).
    pub spin_polls: Option<u32>,
    /// `OXMPI_OWN_CORE`: `auto` (default: when this node's ranks are no
    /// more than the CPUs the process may use), `1` or `0`: whether each
    /// rank counts as having a core of its own, which sets how waits spin
    /// and which algorithms some collectives use (see `core::progress`).
    pub own_core: Option<bool>,
    /// `OXMPI_NODE_COLLECTIVES` (default 1): blocking barriers,
    /// broadcasts, allreduces and all-to-alls on communicators whose
    /// members all live on this node meet in shared memory instead of
    /// passing messages (see `core::collective::node`). Must be the same
    /// at every process.
    pub node_collectives: bool,
    /// `OXMPI_JOBID` (set by oxmpi's mpiexec): names the job in shared
    /// memory segment names; its presence says the launcher is oxmpi's.
    pub job_id: Option<String>,
    /// `OXMPI_PSETS` (set by `mpiexec -pset`): extra process sets,
    /// `name=ranks;name=ranks`.
    pub psets: Option<String>,
    /// `OXMPI_JOB_SECRET` (set by oxmpi's mpiexec): authenticates this
    /// process's PMI and TCP connections.
    pub job_secret: Option<JobSecret>,
    /// `OXMPI_LAUNCHER_PID` (set by oxmpi's mpiexec and its proxies): the
    /// process that started this rank, whose descendants are this node's
    /// ranks of the job.
    pub launcher_pid: Option<i32>,
    /// `OXMPI_UNEXPECTED_LIMIT` (bytes, `K`, `M` or `G` suffix; default
    /// 64M): the unexpected eager data a process may have to hold, shared
    /// among its peers (see `core::p2p::flow_control`).
    pub unexpected_limit: u64,
    /// `OXMPI_FAILURE_NOTICES` (set by `mpiexec -disable-auto-cleanup`):
    /// ask the launcher to tell this process when a rank fails, and fail
    /// the operations that wait on it (see `core::failures`).
    pub failure_notices: bool,
    /// `OXMPI_PMI`: the PMI version the library speaks to its launcher:
    /// `1` (the default), `2`, `auto` or `pmix` (see [`PmiChoice`] and
    /// `bootstrap::pmi::launcher`).
    pub pmi: PmiChoice,
    /// `OXMPI_PMIX_LIBRARY`: the PMIx client library to load under a PMIx
    /// launcher (default `libpmix.so.2`, from the loader's path).
    pub pmix_library: Option<String>,
    /// `OXMPI_CC`: read by the `mpicc` script, not by the library; kept
    /// only to show it as a control variable (MPI_T).
    pub cc: Option<String>,
    /// `OXMPI_QMPI_TOOL_LIST` (or MPICH's `MPIR_CVAR_QMPI_TOOL_LIST`, or
    /// `QMPI_TOOL_LIST`): the QMPI tools to chain, names separated by `:`
    /// (read by `abi::qmpi`).
    pub qmpi_tool_list: Option<String>,
}

/// The job's secret; never printed.
#[derive(Clone)]
pub struct JobSecret(String);

impl JobSecret {
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for JobSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JobSecret(..)")
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransportChoice {
    Auto,
    Tcp,
    Shm,
}

fn transport_choice() -> TransportChoice {
    match std::env::var("OXMPI_TRANSPORT")
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
        .as_str()
    {
        "" | "auto" => TransportChoice::Auto,
        "tcp" => TransportChoice::Tcp,
        "shm" => TransportChoice::Shm,
        other => {
            eprintln!("oxmpi: ignoring OXMPI_TRANSPORT={other}: expected auto, tcp or shm");
            TransportChoice::Auto
        }
    }
}

/// Which PMI version the library asks its launcher for (`OXMPI_PMI`).
///
/// The default is PMI-1: every launcher oxmpi runs under speaks it (oxmpi's
/// mpiexec, Hydra, Slurm's `--mpi=pmi1`), and it is what MPICH programs use
/// by default. `auto` asks for PMI-2 and, when the server refuses it with
/// an `rc` other than 0, asks again for PMI-1 on the same connection; a
/// server that closes the connection instead of answering fails the
/// initialization (an inherited `PMI_FD` cannot be reopened), which is why
/// `auto` is not the default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PmiChoice {
    V1,
    V2,
    Auto,
    /// PMIx, whatever else the environment names.
    Pmix,
}

fn pmi_choice() -> PmiChoice {
    match std::env::var("OXMPI_PMI")
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase()
        .as_str()
    {
        "" | "1" => PmiChoice::V1,
        "2" => PmiChoice::V2,
        "auto" => PmiChoice::Auto,
        "pmix" => PmiChoice::Pmix,
        other => {
            eprintln!("oxmpi: ignoring OXMPI_PMI={other}: expected 1, 2, auto or pmix");
            PmiChoice::V1
        }
    }
}

fn flag(name: &str) -> Option<bool> {
    let v = std::env::var(name).ok()?;
    match v.trim().to_ascii_lowercase().as_str() {
        "1" | "yes" | "true" | "on" => Some(true),
        "0" | "no" | "false" | "off" | "" => Some(false),
        _ => {
            eprintln!("oxmpi: ignoring {name}={v}: expected 0 or 1");
            None
        }
    }
}

/// The default of `OXMPI_UNEXPECTED_LIMIT`.
pub const DEFAULT_UNEXPECTED_LIMIT: u64 = 64 * 1024 * 1024;

/// A size in bytes: a number with an optional `K`, `M` or `G` (powers of
/// 1024).
fn parse_size(v: &str) -> Option<u64> {
    let v = v.trim();
    let (digits, shift) = match v.char_indices().last()? {
        (i, 'k' | 'K') => (&v[..i], 10),
        (i, 'm' | 'M') => (&v[..i], 20),
        (i, 'g' | 'G') => (&v[..i], 30),
        _ => (v, 0),
    };
    digits.trim().parse::<u64>().ok()?.checked_mul(1 << shift)
}

fn initial_errhandler() -> i32 {
    use crate::mpi_abi::constants::*;
    let Ok(v) = std::env::var("OXMPI_INITIAL_ERRHANDLER") else {
        return MPI_ERRORS_ARE_FATAL;
    };
    match v
        .trim()
        .to_ascii_lowercase()
        .trim_start_matches("mpi_errors_")
    {
        "return" => MPI_ERRORS_RETURN,
        "abort" => MPI_ERRORS_ABORT,
        "are_fatal" | "fatal" | "" => MPI_ERRORS_ARE_FATAL,
        _ => {
            eprintln!(
                "oxmpi: ignoring OXMPI_INITIAL_ERRHANDLER={v}: expected fatal, return or abort"
            );
            MPI_ERRORS_ARE_FATAL
        }
    }
}

impl Config {
    fn from_env() -> Config {
        Config {
            finalize_atexit: flag("OXMPI_FINALIZE_ATEXIT")
                .or_else(|| flag("MPIR_CVAR_FINALIZE_ATEXIT"))
                .unwrap_or(false),
            log_filter: std::env::var("OXMPI_LOG").ok(),
            hostname: std::env::var("OXMPI_HOSTNAME")
                .ok()
                .filter(|h| !h.is_empty()),
            shm_single_copy: flag("OXMPI_SHM_SINGLE_COPY").unwrap_or(true),
            shm_named_segments: match std::env::var("OXMPI_SHM_SEGMENTS")
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase()
                .as_str()
            {
                "" | "auto" | "anonymous" => false,
                "named" => true,
                other => {
                    eprintln!("oxmpi: ignoring OXMPI_SHM_SEGMENTS={other}: expected auto or named");
                    false
                }
            },
            shm_shared_copy: match std::env::var("OXMPI_SHM_SHARED_COPY").as_deref() {
                Ok("auto") | Err(_) => None,
                Ok(_) => flag("OXMPI_SHM_SHARED_COPY"),
            },
            initial_errhandler: initial_errhandler(),
            transport: transport_choice(),
            iface: std::env::var("OXMPI_IFACE").ok().filter(|v| !v.is_empty()),
            spin_polls: std::env::var("OXMPI_SPIN_POLLS").ok().and_then(|v| {
                match v.trim().parse() {
                    Ok(n) => Some(n),
                    Err(_) => {
                        eprintln!("oxmpi: ignoring OXMPI_SPIN_POLLS={v}: expected a number");
                        None
                    }
                }
            }),
            own_core: match std::env::var("OXMPI_OWN_CORE").as_deref() {
                Ok("auto") | Err(_) => None,
                Ok(_) => flag("OXMPI_OWN_CORE"),
            },
            node_collectives: flag("OXMPI_NODE_COLLECTIVES").unwrap_or(true),
            job_id: std::env::var("OXMPI_JOBID").ok(),
            psets: std::env::var("OXMPI_PSETS").ok(),
            job_secret: std::env::var("OXMPI_JOB_SECRET")
                .ok()
                .filter(|s| !s.is_empty())
                .map(JobSecret),
            launcher_pid: std::env::var("OXMPI_LAUNCHER_PID")
                .ok()
                .and_then(|v| v.trim().parse().ok())
                .filter(|&pid: &i32| pid > 0),
            failure_notices: flag("OXMPI_FAILURE_NOTICES").unwrap_or(false),
            pmi: pmi_choice(),
            pmix_library: std::env::var("OXMPI_PMIX_LIBRARY")
                .ok()
                .filter(|v| !v.is_empty()),
            cc: std::env::var("OXMPI_CC").ok(),
            qmpi_tool_list: [
                "OXMPI_QMPI_TOOL_LIST",
                "MPIR_CVAR_QMPI_TOOL_LIST",
                "QMPI_TOOL_LIST",
            ]
            .iter()
            .find_map(|var| std::env::var(var).ok()),
            unexpected_limit: std::env::var("OXMPI_UNEXPECTED_LIMIT").ok().map_or(
                DEFAULT_UNEXPECTED_LIMIT,
                |v| match parse_size(&v) {
                    Some(n) => n,
                    None => {
                        eprintln!(
                            "oxmpi: ignoring OXMPI_UNEXPECTED_LIMIT={v}: expected bytes, with K, M or G"
                        );
                        DEFAULT_UNEXPECTED_LIMIT
                    }
                },
            ),
        }
    }
}

static CONFIG: LazyLock<Config> = LazyLock::new(|| {
    let config = Config::from_env();
    if let Some(filter) = &config.log_filter {
        let _ = env_logger::Builder::new()
            .parse_filters(filter)
            .format_timestamp_micros()
            .try_init();
    }
    log::debug!("oxmpi configuration: {config:?}");
    config
});

/// The process's configuration (read on first use).
pub fn get() -> &'static Config {
    &CONFIG
}

/// `OXMPI_SHM_SINGLE_COPY` as MPI_T last wrote it (`NOT_WRITTEN`: the
/// environment's value holds). The one knob changed at run time besides
/// `OXMPI_SPIN_POLLS` (see `core::progress`): a sender decides per message.
static SHM_SINGLE_COPY_WRITTEN: AtomicI32 = AtomicI32::new(NOT_WRITTEN);
const NOT_WRITTEN: i32 = i32::MIN;

/// Whether large shared-memory messages may be copied once (see
/// [`Config::shm_single_copy`]), as the environment or MPI_T set it.
#[inline]
pub fn shm_single_copy() -> bool {
    shm_single_copy_value() != 0
}

/// The value of `OXMPI_SHM_SINGLE_COPY` in effect: what MPI_T wrote
/// (nonzero is on), else the environment's (0 or 1).
pub fn shm_single_copy_value() -> i32 {
    match SHM_SINGLE_COPY_WRITTEN.load(Ordering::Relaxed) {
        NOT_WRITTEN => get().shm_single_copy as i32,
        written => written,
    }
}

/// MPI_T writes `OXMPI_SHM_SINGLE_COPY` (nonzero is on).
pub fn set_shm_single_copy(value: i32) {
    log::debug!("OXMPI_SHM_SINGLE_COPY set to {value} through MPI_T");
    // The sentinel itself reads as "on", as any other nonzero value.
    let value = if value == NOT_WRITTEN { 1 } else { value };
    SHM_SINGLE_COPY_WRITTEN.store(value, Ordering::Relaxed);
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes_take_binary_suffixes() {
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size(" 2k"), Some(2048));
        assert_eq!(parse_size("3M"), Some(3 << 20));
        assert_eq!(parse_size("1G "), Some(1 << 30));
        assert_eq!(parse_size("M"), None);
        assert_eq!(parse_size("-1"), None);
        assert_eq!(parse_size("1.5M"), None);
        assert_eq!(parse_size("99999999999G"), None);
        assert_eq!(parse_size(""), None);
    }
}
