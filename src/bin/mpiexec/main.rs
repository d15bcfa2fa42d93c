//! `mpiexec`: oxmpi's launcher. Starts N copies of a program on this host,
//! serves them the PMI-1 "simple" protocol over inherited socketpairs,
//! passes their output through unchanged and turns the way they end into
//! one exit status (see `mpiexec --help` for the codes).
//!
//! Invariant: every problem with the command line or the program is found
//! before any process starts, and is reported as one `mpiexec: ...` line;
//! once ranks run, mpiexec exits only after reaping all of them.

mod connection;
mod environment;
mod job;
mod kvs;
mod launch;
mod name_service;
mod options;
mod outcome;
mod pmi_server;
mod program;
mod signals;
mod stdin_forward;

use std::ffi::OsString;
use std::io::Write;
use std::time::{SystemTime, UNIX_EPOCH};

use launch::JobSpec;
use options::{Invocation, LaunchOptions, USAGE};

fn main() {
    init_logging();
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let env_timeout = std::env::var_os("MPIEXEC_TIMEOUT");
    let code = match options::parse(&args, env_timeout.as_deref()) {
        Ok(Invocation::Help) => {
            print!("{USAGE}");
            0
        }
        Ok(Invocation::Version) => {
            println!("mpiexec (oxmpi) {}", env!("CARGO_PKG_VERSION"));
            0
        }
        Ok(Invocation::Run(launch)) => run(launch),
        Err(e) => {
            eprintln!("mpiexec: {e}");
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
            eprintln!("mpiexec: cannot determine the current directory: {e}");
            return 1;
        }
    };
    let workdir = match &launch.wdir {
        Some(dir) => {
            let dir = cwd.join(dir);
            if !dir.is_dir() {
                eprintln!(
                    "mpiexec: working directory '{}' does not exist",
                    dir.display()
                );
                return 2;
            }
            dir
        }
        None => cwd,
    };
    let env = environment::common_environment(&launch.inherit, std::env::vars_os(), &launch.env);
    let program =
        match program::resolve(&launch.program, &workdir, environment::lookup(&env, "PATH")) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("mpiexec: {e}");
                return e.exit_code();
            }
        };
    let spec = JobSpec {
        program,
        args: launch.args,
        size: launch.nprocs,
        workdir,
        env,
        jobid: new_job_id(),
    };
    log::debug!(
        "job {}: {} rank(s) of {}",
        spec.jobid,
        spec.size,
        spec.program.path.display()
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
