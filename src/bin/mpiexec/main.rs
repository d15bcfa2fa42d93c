//! `mpiexec`: oxmpi's launcher. Starts N copies of a program on this host
//! and on the hosts given (through ssh, rsh or any `-launcher-exec`
//! command, by way of a proxy per remote host: `mpiexec --proxy`), serves
//! them the PMI-1 "simple" protocol (over inherited socketpairs locally,
//! over authenticated TCP for remote ranks), passes their output through
//! unchanged and turns the way they end into one exit status (see
//! `mpiexec --help` for the codes).
//!
//! Invariant: every problem with the command line, the host list, the
//! address remote hosts connect to, or the program is found before any
//! process starts, and is reported as one `mpiexec: ...` line; once ranks
//! run, mpiexec exits only after all of them ended and every local process
//! it started was reaped.
#![warn(clippy::undocumented_unsafe_blocks)]

#[macro_use]
mod report;

mod connection;
mod environment;
#[cfg(test)]
mod fuzz;
mod groups;
mod hosts;
mod job;
mod kvs;
mod launch;
mod name_service;
mod net;
mod options;
mod outcome;
mod pmi_server;
mod program;
mod proxy;
mod proxy_wire;
mod signals;
mod spawn_request;
mod stdin_forward;

use std::ffi::OsString;
use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

use hosts::{HostEntry, LocalNames};
use launch::{JobSpec, RemoteLaunch};
use net::AddressChoice;
use options::{HostSource, Invocation, LaunchOptions, LauncherKind, UniverseSize, USAGE};

fn main() {
    init_logging();
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    if proxy::requested(&args) {
        std::process::exit(proxy::run());
    }
    let env_timeout = std::env::var_os("MPIEXEC_TIMEOUT");
    let code = match options::parse(&args, env_timeout.as_deref()) {
        Ok(Invocation::Help) => {
            say_out!("{USAGE}");
            0
        }
        Ok(Invocation::Version) => {
            say_out!("mpiexec (oxmpi) {}\n", env!("CARGO_PKG_VERSION"));
            0
        }
        Ok(Invocation::Run(launch)) => run(*launch),
        Err(e) => {
            say!("mpiexec: {e}");
            2
        }
    };
    let _ = std::io::stdout().flush();
    std::process::exit(code);
}

/// Checks the program and working directory, then runs the job.
fn run(launch: LaunchOptions) -> i32 {
    let cwd = match std::env::current_dir() {
        Ok(dir) => dir,
        Err(e) => {
            say!("mpiexec: cannot determine the current directory: {e}");
            return 1;
        }
    };
    let workdir = match &launch.wdir {
        Some(dir) => {
            let dir = cwd.join(dir);
            if !dir.is_dir() {
                say!(
                    "mpiexec: working directory '{}' does not exist",
                    dir.display()
                );
                return 2;
            }
            dir
        }
        None => cwd.clone(),
    };
    let mut env =
        environment::common_environment(&launch.inherit, std::env::vars_os(), &launch.env);
    let program =
        match program::resolve(&launch.program, &workdir, environment::lookup(&env, "PATH")) {
            Ok(p) => p,
            Err(e) => {
                say!("mpiexec: {e}");
                return e.exit_code();
            }
        };
    let (placement, universe_size) = match host_entries(&launch, &cwd).and_then(|entries| {
        let placement = place_ranks(&launch, entries.as_deref())?;
        let universe_size = match launch.universe {
            UniverseSize::Fixed(n) => Some(n),
            UniverseSize::Infinite => None,
            UniverseSize::System => Some(system_universe(entries.as_deref())),
        };
        Ok((placement, universe_size))
    }) {
        Ok(p) => p,
        Err(e) => {
            say!("mpiexec: {e}");
            return 2;
        }
    };
    let remote = if placement.all_local() {
        // Every rank runs on this machine: their TCP transports (used when
        // forced, or between simulated hosts) listen on loopback, so no
        // traffic is addressed to this machine's network interfaces.
        if environment::lookup(&env, "OXMPI_IFACE").is_none() {
            env.push(("OXMPI_IFACE".into(), "127.0.0.1".into()));
        }
        None
    } else {
        // A job across hosts: a world (or spawned group) all on one host
        // may still talk to processes on others, so no rank takes the
        // loopback shortcut of a one-node world.
        if environment::lookup(&env, "OXMPI_IFACE").is_none() {
            env.push(("OXMPI_IFACE".into(), "auto".into()));
        }
        match remote_launch(&launch, &placement) {
            Ok(r) => Some(r),
            Err(e) => {
                say!("mpiexec: {e}");
                return 2;
            }
        }
    };
    let secret = match net::new_secret() {
        Ok(s) => s,
        Err(e) => {
            say!("mpiexec: cannot make the job secret: {e}");
            return 1;
        }
    };
    let spec = JobSpec {
        program,
        args: launch.args,
        workdir,
        env,
        jobid: new_job_id(),
        secret,
        placement,
        hostname_env: launch.hostname_env,
        remote,
        auto_cleanup: launch.auto_cleanup,
        universe_size,
    };
    log::debug!(
        "job {}: {} rank(s) of {} on {} node(s), mapping {}",
        spec.jobid,
        spec.size(),
        spec.program.path.display(),
        spec.placement.nodes.len(),
        spec.placement.process_mapping()
    );
    let shm_prefix = oxmpi::transport::shm::inbox::job_prefix(&spec.jobid);
    let code = job::run(spec, launch.timeout_secs);
    // Ranks unlink their shared-memory inboxes when an epoch ends; remove
    // what a killed or crashed rank left behind.
    match oxmpi::transport::shm::segment::cleanup_prefix(&shm_prefix) {
        Ok(0) => {}
        Ok(n) => log::debug!("removed {n} leftover shared-memory segment(s)"),
        Err(e) => log::debug!("cleaning up shared memory: {e}"),
    }
    code
}

/// The host list of `-hosts`/`-f` (`None` without one).
fn host_entries(
    launch: &LaunchOptions,
    cwd: &std::path::Path,
) -> Result<Option<Vec<HostEntry>>, String> {
    Ok(match &launch.hosts {
        None => None,
        Some(HostSource::List(list)) => Some(list.clone()),
        Some(HostSource::File(path)) => {
            let full = cwd.join(path);
            let text = std::fs::read_to_string(&full)
                .map_err(|e| format!("cannot read host file '{}': {e}", path.display()))?;
            Some(hosts::parse_file(&path.display().to_string(), &text).map_err(|e| e.0)?)
        }
    })
}

/// `-usize SYSTEM`: the CPUs of the job's hosts, as Hydra counts them:
/// without a host list, this machine's available CPUs; with one, the sum
/// of its slots (1 for a host without a count).
fn system_universe(entries: Option<&[HostEntry]>) -> usize {
    match entries {
        Some(list) if !list.is_empty() => list.iter().map(|e| e.slots.unwrap_or(1)).sum(),
        _ => std::thread::available_parallelism().map_or(1, |n| n.get()),
    }
}

/// Where the ranks run, from `-n`, the host list `entries` and `-ppn`.
fn place_ranks(
    launch: &LaunchOptions,
    entries: Option<&[HostEntry]>,
) -> Result<hosts::Placement, String> {
    let names = LocalNames {
        hostname: hosts::this_hostname(),
        fork_everything: launch.launcher == LauncherKind::Fork,
    };
    hosts::place(entries, launch.nprocs, launch.ppn, &names).map_err(|e| e.0)
}

/// How the remote nodes of `placement` are reached.
fn remote_launch(
    launch: &LaunchOptions,
    placement: &hosts::Placement,
) -> Result<RemoteLaunch, String> {
    let (command, shell_quoting) = match (&launch.launcher_exec, launch.launcher) {
        (Some(words), _) => (words.clone(), false),
        (None, LauncherKind::Rsh) => (vec!["rsh".into()], true),
        (None, _) => (vec!["ssh".into(), "-x".into()], true),
    };
    let choice = match (&launch.pmi_addr, &launch.iface) {
        (Some(addr), _) => AddressChoice::Fixed(*addr),
        (None, Some(iface)) => AddressChoice::Interface(iface.clone()),
        (None, None) => AddressChoice::Route,
    };
    let addresses = placement
        .nodes
        .iter()
        .map(|node| {
            if node.local {
                Ok(None)
            } else {
                net::address_for_host(&node.name, &choice).map(Some)
            }
        })
        .collect::<Result<Vec<_>, String>>()?;
    let proxy_path = std::env::current_exe()
        .map_err(|e| format!("cannot find mpiexec's own path (for the remote proxies): {e}"))?;
    Ok(RemoteLaunch {
        command,
        shell_quoting,
        proxy_path,
        addresses,
    })
}

/// A job id unique on this host: mpiexec's pid and its start time.
fn new_job_id() -> String {
    let micros = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros())
        .unwrap_or(0);
    format!("{}-{:x}", std::process::id(), micros)
}

/// Logging on stderr, silent unless `OXMPI_LOG` is set (e.g. `debug`).
fn init_logging() {
    let mut builder = env_logger::Builder::new();
    builder.filter_level(log::LevelFilter::Off);
    if let Ok(filters) = std::env::var("OXMPI_LOG") {
        builder.parse_filters(&filters);
    }
    let pid = std::process::id();
    builder.format(move |out, record| {
        writeln!(
            out,
            "mpiexec[{pid}] {}: {}",
            record.level().as_str().to_lowercase(),
            record.args()
        )
    });
    builder.target(env_logger::Target::Stderr);
    let _ = builder.try_init();
}
