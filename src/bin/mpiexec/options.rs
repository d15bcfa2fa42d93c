//! mpiexec's command line: what to run, how many copies, with which
//! environment, where and for how long.
//!
//! Invariant: parsing is pure. It looks at the arguments and the value of
//! `MPIEXEC_TIMEOUT` only, starts nothing and touches no file, so every usage
//! error is found before any process exists. Everything after the program
//! name belongs to the program.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::net::IpAddr;
use std::path::PathBuf;

use crate::hosts::{self, HostEntry};

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invocation {
    /// Start a job.
    Run(Box<LaunchOptions>),
    /// Print the usage text.
    Help,
    /// Print the version.
    Version,
}

/// Which of mpiexec's own environment variables the ranks inherit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnvInheritance {
    /// All of them (the default, `-genvall`).
    All,
    /// None (`-genvnone`): the ranks see only `-env`/`-genv` and PMI variables.
    None,
    /// Only the listed names (`-genvlist A,B`).
    Only(Vec<OsString>),
}

/// Where the host list comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostSource {
    /// `-hosts h1,h2:4`.
    List(Vec<HostEntry>),
    /// `-f hostfile` (read when the job starts).
    File(PathBuf),
}

/// How ranks on other hosts are started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LauncherKind {
    /// `ssh -x host ...` (the default).
    Ssh,
    /// `rsh host ...`.
    Rsh,
    /// Every rank on this host, whatever the host list says.
    Fork,
}

/// What PMI `get_universe_size` answers (`-usize`, Hydra's option).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UniverseSize {
    /// `-usize N`: N (at least 1).
    Fixed(usize),
    /// `-usize SYSTEM`: the CPUs of the job's hosts.
    System,
    /// `-usize INFINITE` (and the default): -1, no limit known.
    Infinite,
}

/// A parsed request to start a job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchOptions {
    /// Number of ranks (`-n`/`-np`), at least 1. When not given: the slots
    /// of one pass over the host list, or 1 without one.
    pub nprocs: Option<usize>,
    /// The hosts (`-hosts`, `-f`); this host only when `None`.
    pub hosts: Option<HostSource>,
    /// Ranks per host per pass (`-ppn`), overriding slot counts.
    pub ppn: Option<usize>,
    /// `-launcher`.
    pub launcher: LauncherKind,
    /// `-launcher-exec`: the command (split at spaces) used instead of
    /// ssh/rsh; run as `CMD host mpiexec --proxy`.
    pub launcher_exec: Option<Vec<OsString>>,
    /// `-pmi-addr`: the address remote hosts reach mpiexec on.
    pub pmi_addr: Option<IpAddr>,
    /// `-iface`: take that address from this interface.
    pub iface: Option<String>,
    /// `-hostname-env NAME`: set NAME to each rank's host name.
    pub hostname_env: Vec<OsString>,
    /// Variables set for every rank (`-env` and `-genv`), in command-line order.
    pub env: Vec<(OsString, OsString)>,
    /// How the ranks inherit mpiexec's environment.
    pub inherit: EnvInheritance,
    /// Working directory of the ranks (`-wdir`); mpiexec's own when `None`.
    pub wdir: Option<PathBuf>,
    /// Seconds before the job is killed (`-timeout`, else `MPIEXEC_TIMEOUT`);
    /// `None` (or 0 on the command line) means no limit.
    pub timeout_secs: Option<u64>,
    /// Whether a failed rank ends the job (default; `-disable-auto-cleanup`
    /// turns it off, `-enable-auto-cleanup` on again, as with Hydra).
    pub auto_cleanup: bool,
    /// `-usize`: the universe size PMI clients are told.
    pub universe: UniverseSize,
    /// The program, as given (searched in `PATH` when it holds no `/`).
    pub program: OsString,
    /// The program's arguments.
    pub args: Vec<OsString>,
}

/// A command line mpiexec cannot run; the text says what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn usage_error(text: impl Into<String>) -> UsageError {
    UsageError(text.into())
}

/// The usage text printed by `-h`/`--help`.
pub const USAGE: &str = "\
usage: mpiexec [options] [--] program [args...]

Starts copies of program (the ranks), on this host or on the hosts given,
and serves them PMI-1.

options:
  -n N, -np N        number of ranks (default: the slots of the host list,
                     or 1 without one)
  -env NAME VALUE    set NAME=VALUE for every rank (repeatable)
  -genv NAME VALUE   same as -env
  -genvall           ranks inherit mpiexec's whole environment (default)
  -genvnone          ranks inherit none of it (only -env/-genv and PMI variables)
  -genvlist A,B,...  ranks inherit only the listed variables
  -wdir DIR          working directory of the ranks
  -timeout SECONDS   kill the job after SECONDS (0: no limit); overrides
                     the MPIEXEC_TIMEOUT environment variable
  -pset NAME=RANKS   a process set for MPI sessions, e.g. -pset app://even=0,2,4
                     (ranks: a comma-separated list of ranks and ranges a-b)
  -initial-errhandler mpi_errors_are_fatal|mpi_errors_return|mpi_errors_abort
                     the error handler for errors outside any MPI object
  -disable-auto-cleanup
                     a rank that fails (killed, non-zero exit, exit without
                     finalize) does not end the job: the others go on, and
                     their operations that wait on it fail with
                     MPIX_ERR_PROC_FAILED (oxmpi ranks); mpiexec exits with
                     the first failure's status once every rank has ended
  -enable-auto-cleanup
                     the default: the first failure ends the job
  -usize N|SYSTEM|INFINITE
                     the universe size (MPI_UNIVERSE_SIZE): N, the CPUs of
                     the job's hosts (SYSTEM: this machine's available CPUs
                     without a host list, else the sum of the hosts' slots),
                     or unknown (INFINITE, the default, as with Hydra)
  -h, --help         print this help
  --version          print the version

hosts:
  -hosts H1,H2:4,... run ranks on these hosts; host:N gives a host N slots
                     (default 1); -host is the same
  -f FILE            read the hosts from FILE: one host[:slots] per line,
                     '#' starts a comment, blank lines are skipped
  -ppn N             N ranks per host, whatever the slot counts say
  -launcher ssh|rsh|fork
                     how ranks on other hosts start (default ssh; fork runs
                     every rank here, each host name still its own node)
  -launcher-exec CMD command used instead of ssh, split at spaces; a host's
                     ranks start with `CMD host /path/to/mpiexec --proxy`,
                     e.g. -launcher-exec \"ip netns exec\" for namespaces
  -pmi-addr ADDR     the address of this host that remote hosts connect to
                     (default: per host, the source address of the route to
                     it; a host name that does not resolve needs this)
  -iface IFACE       use the address of interface IFACE as -pmi-addr
  -hostname-env NAME set NAME to the rank's host name as given in the host
                     list, e.g. -hostname-env OXMPI_HOSTNAME

Ranks are placed in host-list order: each host gets its slots (or -ppn
ranks), then the list starts over while ranks remain. localhost and this
host's name run here, without the launcher. On every other host mpiexec
runs a proxy (this same mpiexec binary, which must exist at the same path
there) through the launcher; the proxy starts that host's ranks, and they
connect back over TCP (PMI_PORT, PMI_ID, authenticated with the per-job
OXMPI_JOB_SECRET). Their output comes back through the launcher unchanged.
The launcher must pass its stdin on and run until the proxy ends (ssh, rsh
and ip netns exec do): the proxy reads its first line there.

Options after the program name are the program's. Long options may also be
spelled with two dashes (--timeout 5).

Ranks inherit mpiexec's stdout and stderr; stdin goes to rank 0 only.
OXMPI_LOG=debug makes mpiexec log what it does on stderr.

exit status:
  0         every rank exited with code 0
  N         the first rank to fail exited with code N, or a rank called
            abort with code N (mod 256; a nonzero code that wraps to 0 gives 1)
  128+S     the first rank to fail was killed by signal S, or mpiexec was
            interrupted by signal S (SIGINT, SIGTERM, SIGHUP are forwarded)
  1         a rank broke the PMI protocol, or exited while the others waited
            for it in a PMI barrier
  2         bad usage (unknown option, bad number, missing program, bad
            host list, no address for the hosts to connect to, ...)
  124       the job timed out
  126       the program is not executable, or a rank could not be started
  127       the program was not found
  255       a host was lost: its launcher or proxy ended while ranks ran
            there, or its proxy never connected back
";

/// Parses the arguments after `argv[0]`; `env_timeout` is the value of
/// `MPIEXEC_TIMEOUT`, if set.
pub fn parse(args: &[OsString], env_timeout: Option<&OsStr>) -> Result<Invocation, UsageError> {
    let mut nprocs = None;
    let mut hosts = None;
    let mut ppn = None;
    let mut launcher = None;
    let mut launcher_exec = None;
    let mut pmi_addr = None;
    let mut iface = None;
    let mut hostname_env = Vec::new();
    let mut env = Vec::new();
    let mut psets: Vec<String> = Vec::new();
    let mut inherit = EnvInheritance::All;
    let mut wdir = None;
    let mut timeout_arg = None;
    let mut auto_cleanup = true;
    let mut universe = None;
    let mut rest = args.iter();

    let program = loop {
        let Some(arg) = rest.next() else {
            return Err(usage_error("missing program to run"));
        };
        if arg == "--" {
            match rest.next() {
                Some(program) => break program.clone(),
                None => return Err(usage_error("missing program to run after `--`")),
            }
        }
        let text = arg.to_string_lossy();
        let Some(name) = option_name(&text) else {
            break arg.clone();
        };
        match name {
            "n" | "np" => {
                let value = option_value(&mut rest, &text)?;
                nprocs = Some(parse_nprocs(&text, value)?);
            }
            "env" | "genv" => {
                let var = option_value(&mut rest, &text)?;
                let value = rest
                    .next()
                    .ok_or_else(|| usage_error(format!("{text} needs a name and a value")))?;
                check_var_name(&text, var)?;
                env.push((var.clone(), value.clone()));
            }
            "genvall" | "envall" => inherit = EnvInheritance::All,
            "genvnone" | "envnone" => inherit = EnvInheritance::None,
            "genvlist" | "envlist" => {
                let list = option_value(&mut rest, &text)?;
                let names = list
                    .to_string_lossy()
                    .split(',')
                    .filter(|n| !n.is_empty())
                    .map(OsString::from)
                    .collect();
                inherit = EnvInheritance::Only(names);
            }
            "wdir" => {
                let dir = option_value(&mut rest, &text)?;
                if dir.is_empty() {
                    return Err(usage_error(format!("{text} needs a directory")));
                }
                wdir = Some(PathBuf::from(dir));
            }
            "timeout" => {
                let value = option_value(&mut rest, &text)?;
                timeout_arg = Some(parse_seconds(&text, value)?);
            }
            "pset" => {
                // Process sets for MPI sessions, passed to the ranks as
                // OXMPI_PSETS ("name=ranks;name=ranks").
                let def = option_value(&mut rest, &text)?
                    .to_string_lossy()
                    .into_owned();
                let Some((name, ranks)) = def.split_once('=') else {
                    return Err(usage_error(format!(
                        "{text} wants NAME=RANKLIST, got '{def}'"
                    )));
                };
                if name.is_empty() || name.contains(';') || ranks.contains(';') || ranks.is_empty()
                {
                    return Err(usage_error(format!("{text}: invalid process set '{def}'")));
                }
                psets.push(def);
            }
            "initial-errhandler" => {
                let value = option_value(&mut rest, &text)?
                    .to_string_lossy()
                    .to_ascii_lowercase();
                let name = value.trim_start_matches("mpi_errors_");
                if !matches!(name, "are_fatal" | "fatal" | "return" | "abort") {
                    return Err(usage_error(format!(
                        "{text}: '{value}' is not mpi_errors_are_fatal, mpi_errors_return or mpi_errors_abort"
                    )));
                }
                env.push(("OXMPI_INITIAL_ERRHANDLER".into(), name.into()));
            }
            "hosts" | "host" => {
                let value = option_value(&mut rest, &text)?.to_string_lossy();
                let list = hosts::parse_list(&value).map_err(|e| usage_error(e.0))?;
                hosts = Some(HostSource::List(list));
            }
            "f" | "hostfile" | "machinefile" => {
                let file = option_value(&mut rest, &text)?;
                if file.is_empty() {
                    return Err(usage_error(format!("{text} needs a file name")));
                }
                hosts = Some(HostSource::File(PathBuf::from(file)));
            }
            "ppn" => {
                let value = option_value(&mut rest, &text)?;
                ppn = Some(parse_count(&text, value, "ranks per host")?);
            }
            "launcher" | "bootstrap" => {
                let value = option_value(&mut rest, &text)?.to_string_lossy();
                launcher = Some(match value.as_ref() {
                    "ssh" => LauncherKind::Ssh,
                    "rsh" => LauncherKind::Rsh,
                    "fork" => LauncherKind::Fork,
                    other => {
                        return Err(usage_error(format!(
                            "{text}: unknown launcher '{other}' (ssh, rsh or fork)"
                        )))
                    }
                });
            }
            "launcher-exec" | "bootstrap-exec" => {
                let value = option_value(&mut rest, &text)?.to_string_lossy();
                let words: Vec<OsString> = value.split_whitespace().map(OsString::from).collect();
                if words.is_empty() {
                    return Err(usage_error(format!("{text} needs a command")));
                }
                launcher_exec = Some(words);
            }
            "pmi-addr" => {
                let value = option_value(&mut rest, &text)?.to_string_lossy();
                let addr = value
                    .trim_start_matches('[')
                    .trim_end_matches(']')
                    .parse::<IpAddr>()
                    .map_err(|_| usage_error(format!("{text}: '{value}' is not an IP address")))?;
                if addr.is_unspecified() {
                    return Err(usage_error(format!(
                        "{text}: give the address remote hosts connect to, not {addr}"
                    )));
                }
                pmi_addr = Some(addr);
            }
            "iface" => {
                let value = option_value(&mut rest, &text)?.to_string_lossy();
                if value.is_empty() {
                    return Err(usage_error(format!("{text} needs an interface name")));
                }
                iface = Some(value.into_owned());
            }
            "hostname-env" => {
                let name = option_value(&mut rest, &text)?;
                check_var_name(&text, name)?;
                if crate::environment::is_reserved(name) {
                    return Err(usage_error(format!(
                        "{text}: mpiexec sets {} itself",
                        name.to_string_lossy()
                    )));
                }
                hostname_env.push(name.clone());
            }
            "usize" => {
                let value = option_value(&mut rest, &text)?;
                if universe.is_some() {
                    return Err(usage_error(format!("{text}: universe size already set")));
                }
                universe = Some(match value.to_str() {
                    Some("SYSTEM") => UniverseSize::System,
                    Some("INFINITE") => UniverseSize::Infinite,
                    _ => UniverseSize::Fixed(parse_count(&text, value, "processes")?),
                });
            }
            "disable-auto-cleanup" => auto_cleanup = false,
            "enable-auto-cleanup" => auto_cleanup = true,
            "h" | "help" => return Ok(Invocation::Help),
            "version" => return Ok(Invocation::Version),
            _ => return Err(usage_error(format!("unknown option {text}"))),
        }
    };

    if !psets.is_empty() {
        env.push(("OXMPI_PSETS".into(), psets.join(";").into()));
    }
    if !auto_cleanup {
        // The ranks ask for failure notices (see oxmpi::core::failures).
        env.push(("OXMPI_FAILURE_NOTICES".into(), "1".into()));
    }
    let timeout_secs = match (timeout_arg, env_timeout) {
        (Some(secs), _) => secs,
        (None, Some(value)) => parse_seconds("MPIEXEC_TIMEOUT", value)?,
        (None, None) => 0,
    };
    if pmi_addr.is_some() && iface.is_some() {
        return Err(usage_error("give -pmi-addr or -iface, not both"));
    }
    let launcher = launcher.unwrap_or(LauncherKind::Ssh);
    if launcher == LauncherKind::Fork && launcher_exec.is_some() {
        return Err(usage_error("-launcher-exec has no use with -launcher fork"));
    }
    Ok(Invocation::Run(Box::new(LaunchOptions {
        nprocs,
        hosts,
        ppn,
        launcher,
        launcher_exec,
        pmi_addr,
        iface,
        hostname_env,
        env,
        inherit,
        wdir,
        timeout_secs: (timeout_secs > 0).then_some(timeout_secs),
        auto_cleanup,
        universe: universe.unwrap_or(UniverseSize::Infinite),
        program,
        args: rest.cloned().collect(),
    })))
}

/// The option name of `arg` without its one or two leading dashes, or
/// `None` if `arg` is not an option (then it is the program).
fn option_name(arg: &str) -> Option<&str> {
    let name = arg.strip_prefix("--").or_else(|| arg.strip_prefix('-'))?;
    (!name.is_empty()).then_some(name)
}

fn option_value<'a>(
    rest: &mut std::slice::Iter<'a, OsString>,
    option: &str,
) -> Result<&'a OsString, UsageError> {
    rest.next()
        .ok_or_else(|| usage_error(format!("{option} needs a value")))
}

fn parse_count(option: &str, value: &OsStr, what: &str) -> Result<usize, UsageError> {
    let text = value.to_string_lossy();
    match text.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(usage_error(format!(
            "{option}: invalid number of {what} '{text}' (at least 1)"
        ))),
    }
}

fn parse_nprocs(option: &str, value: &OsStr) -> Result<usize, UsageError> {
    let text = value.to_string_lossy();
    match text.parse::<usize>() {
        Ok(0) => Err(usage_error(format!(
            "{option} 0: the number of processes must be at least 1"
        ))),
        Ok(n) => Ok(n),
        Err(_) => Err(usage_error(format!(
            "{option}: invalid number of processes '{text}'"
        ))),
    }
}

fn parse_seconds(what: &str, value: &OsStr) -> Result<u64, UsageError> {
    let text = value.to_string_lossy();
    text.trim().parse::<u64>().map_err(|_| {
        usage_error(format!(
            "{what}: invalid number of seconds '{text}' (a whole number, 0 for no limit)"
        ))
    })
}

fn check_var_name(option: &str, name: &OsStr) -> Result<(), UsageError> {
    let text = name.to_string_lossy();
    if text.is_empty() || text.contains('=') {
        return Err(usage_error(format!(
            "{option}: invalid variable name '{text}'"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    fn run(list: &[&str]) -> LaunchOptions {
        match parse(&args(list), None) {
            Ok(Invocation::Run(options)) => *options,
            other => panic!("{list:?} parsed as {other:?}"),
        }
    }

    fn error(list: &[&str]) -> String {
        match parse(&args(list), None) {
            Err(e) => e.to_string(),
            other => panic!("{list:?} parsed as {other:?}"),
        }
    }

    #[test]
    fn minimal_command_line() {
        let o = run(&["./a.out"]);
        assert_eq!(o.nprocs, None);
        assert_eq!(o.hosts, None);
        assert_eq!(o.launcher, LauncherKind::Ssh);
        assert_eq!(o.program, "./a.out");
        assert!(o.args.is_empty());
        assert!(o.env.is_empty());
        assert_eq!(o.inherit, EnvInheritance::All);
        assert_eq!(o.wdir, None);
        assert_eq!(o.timeout_secs, None);
        assert!(o.auto_cleanup);
    }

    #[test]
    fn universe_size() {
        assert_eq!(run(&["p"]).universe, UniverseSize::Infinite);
        assert_eq!(run(&["-usize", "8", "p"]).universe, UniverseSize::Fixed(8));
        assert_eq!(
            run(&["--usize", "SYSTEM", "p"]).universe,
            UniverseSize::System
        );
        assert_eq!(
            run(&["-usize", "INFINITE", "p"]).universe,
            UniverseSize::Infinite
        );
        assert_eq!(
            error(&["-usize", "0", "p"]),
            "-usize: invalid number of processes '0' (at least 1)"
        );
        assert_eq!(
            error(&["-usize", "system", "p"]),
            "-usize: invalid number of processes 'system' (at least 1)"
        );
        assert_eq!(
            error(&["-usize", "2", "-usize", "3", "p"]),
            "-usize: universe size already set"
        );
    }

    #[test]
    fn auto_cleanup_can_be_turned_off_and_on() {
        let o = run(&["-disable-auto-cleanup", "p"]);
        assert!(!o.auto_cleanup);
        assert_eq!(
            o.env,
            vec![(OsString::from("OXMPI_FAILURE_NOTICES"), OsString::from("1"))]
        );
        let o = run(&["--disable-auto-cleanup", "-enable-auto-cleanup", "p"]);
        assert!(o.auto_cleanup);
        assert!(o.env.is_empty());
    }

    #[test]
    fn n_and_np() {
        assert_eq!(run(&["-n", "4", "prog"]).nprocs, Some(4));
        assert_eq!(run(&["-np", "3", "prog"]).nprocs, Some(3));
        assert_eq!(run(&["--np", "2", "prog"]).nprocs, Some(2));
        assert_eq!(run(&["-n", "2", "-n", "5", "prog"]).nprocs, Some(5));
    }

    #[test]
    fn options_after_the_program_belong_to_it() {
        let o = run(&["-n", "2", "prog", "-n", "7", "--", "-timeout", "x"]);
        assert_eq!(o.nprocs, Some(2));
        assert_eq!(o.program, "prog");
        assert_eq!(o.args, args(&["-n", "7", "--", "-timeout", "x"]));
    }

    #[test]
    fn double_dash_introduces_the_program() {
        let o = run(&["-n", "2", "--", "-weird-name", "a"]);
        assert_eq!(o.program, "-weird-name");
        assert_eq!(o.args, args(&["a"]));
        assert_eq!(
            error(&["-n", "2", "--"]),
            "missing program to run after `--`"
        );
    }

    #[test]
    fn environment_options() {
        let o = run(&[
            "-env",
            "A",
            "1",
            "-genv",
            "B",
            "x=y",
            "-genvnone",
            "-env",
            "C",
            "",
            "prog",
        ]);
        assert_eq!(
            o.env,
            vec![
                ("A".into(), "1".into()),
                ("B".into(), "x=y".into()),
                ("C".into(), "".into())
            ]
        );
        assert_eq!(o.inherit, EnvInheritance::None);
        assert_eq!(
            run(&["-genvnone", "-genvall", "p"]).inherit,
            EnvInheritance::All
        );
        assert_eq!(
            run(&["-genvlist", "PATH,HOME", "p"]).inherit,
            EnvInheritance::Only(vec!["PATH".into(), "HOME".into()])
        );
        assert_eq!(error(&["-env", "A"]), "-env needs a name and a value");
        assert_eq!(error(&["-genv"]), "-genv needs a value");
        assert_eq!(
            error(&["-env", "A=B", "1", "p"]),
            "-env: invalid variable name 'A=B'"
        );
    }

    #[test]
    fn working_directory() {
        assert_eq!(
            run(&["-wdir", "/tmp", "p"]).wdir,
            Some(PathBuf::from("/tmp"))
        );
        assert_eq!(error(&["-wdir"]), "-wdir needs a value");
        assert_eq!(error(&["-wdir", "", "p"]), "-wdir needs a directory");
    }

    #[test]
    fn timeout_from_option_or_environment() {
        assert_eq!(run(&["-timeout", "5", "p"]).timeout_secs, Some(5));
        assert_eq!(run(&["--timeout", "0", "p"]).timeout_secs, None);
        let from_env = |value: &str, list: &[&str]| parse(&args(list), Some(OsStr::new(value)));
        match from_env("7", &["p"]) {
            Ok(Invocation::Run(o)) => assert_eq!(o.timeout_secs, Some(7)),
            other => panic!("{other:?}"),
        }
        match from_env("7", &["-timeout", "3", "p"]) {
            Ok(Invocation::Run(o)) => assert_eq!(o.timeout_secs, Some(3)),
            other => panic!("{other:?}"),
        }
        match from_env("soon", &["p"]) {
            Err(e) => assert!(e
                .0
                .starts_with("MPIEXEC_TIMEOUT: invalid number of seconds 'soon'")),
            other => panic!("{other:?}"),
        }
        assert!(error(&["-timeout", "-1", "p"]).starts_with("-timeout: invalid number of seconds"));
        assert!(error(&["-timeout", "1.5", "p"]).starts_with("-timeout: invalid number of seconds"));
    }

    #[test]
    fn bad_process_counts() {
        assert_eq!(
            error(&["-n", "0", "p"]),
            "-n 0: the number of processes must be at least 1"
        );
        assert_eq!(
            error(&["-n", "x", "p"]),
            "-n: invalid number of processes 'x'"
        );
        assert_eq!(
            error(&["-n", "-2", "p"]),
            "-n: invalid number of processes '-2'"
        );
        assert_eq!(
            error(&["-np", "", "p"]),
            "-np: invalid number of processes ''"
        );
        assert_eq!(error(&["-n"]), "-n needs a value");
    }

    #[test]
    fn missing_program_and_unknown_options() {
        assert_eq!(error(&[]), "missing program to run");
        assert_eq!(error(&["-n", "2"]), "missing program to run");
        assert_eq!(error(&["-x", "p"]), "unknown option -x");
        assert_eq!(error(&["--frobnicate", "p"]), "unknown option --frobnicate");
        // A lone dash is not an option name: it is taken as the program.
        assert_eq!(run(&["-"]).program, "-");
    }

    #[test]
    fn host_options() {
        let o = run(&["-hosts", "a,b:4", "-ppn", "2", "p"]);
        assert_eq!(
            o.hosts,
            Some(HostSource::List(vec![
                HostEntry {
                    name: "a".into(),
                    slots: None
                },
                HostEntry {
                    name: "b".into(),
                    slots: Some(4)
                }
            ]))
        );
        assert_eq!(o.ppn, Some(2));
        assert_eq!(
            run(&["-f", "hosts.txt", "p"]).hosts,
            Some(HostSource::File("hosts.txt".into()))
        );
        assert_eq!(
            run(&["-launcher", "fork", "p"]).launcher,
            LauncherKind::Fork
        );
        assert_eq!(run(&["-launcher", "rsh", "p"]).launcher, LauncherKind::Rsh);
        let o = run(&["-launcher-exec", "ip netns  exec", "p"]);
        assert_eq!(
            o.launcher_exec,
            Some(vec!["ip".into(), "netns".into(), "exec".into()])
        );
        assert_eq!(
            run(&["-pmi-addr", "10.1.2.3", "p"]).pmi_addr,
            Some("10.1.2.3".parse().unwrap())
        );
        assert_eq!(
            run(&["-pmi-addr", "[::1]", "p"]).pmi_addr,
            Some("::1".parse().unwrap())
        );
        assert_eq!(run(&["-iface", "eth0", "p"]).iface, Some("eth0".into()));
        assert_eq!(
            run(&["-hostname-env", "OXMPI_HOSTNAME", "p"]).hostname_env,
            vec![OsString::from("OXMPI_HOSTNAME")]
        );
    }

    #[test]
    fn bad_host_options() {
        assert_eq!(
            error(&["-hosts", "a:0", "p"]),
            "-hosts: 'a:0': invalid slot count '0'"
        );
        assert_eq!(
            error(&["-ppn", "0", "p"]),
            "-ppn: invalid number of ranks per host '0' (at least 1)"
        );
        assert_eq!(
            error(&["-launcher", "pbs", "p"]),
            "-launcher: unknown launcher 'pbs' (ssh, rsh or fork)"
        );
        assert_eq!(
            error(&["-launcher-exec", " ", "p"]),
            "-launcher-exec needs a command"
        );
        assert_eq!(
            error(&["-pmi-addr", "host", "p"]),
            "-pmi-addr: 'host' is not an IP address"
        );
        assert!(error(&["-pmi-addr", "0.0.0.0", "p"]).contains("not 0.0.0.0"));
        assert_eq!(
            error(&["-pmi-addr", "10.0.0.1", "-iface", "lo", "p"]),
            "give -pmi-addr or -iface, not both"
        );
        assert_eq!(
            error(&["-launcher", "fork", "-launcher-exec", "x", "p"]),
            "-launcher-exec has no use with -launcher fork"
        );
        assert_eq!(
            error(&["-hostname-env", "PMI_RANK", "p"]),
            "-hostname-env: mpiexec sets PMI_RANK itself"
        );
        assert_eq!(error(&["-f", "", "p"]), "-f needs a file name");
    }

    #[test]
    fn help_and_version() {
        for help in ["-h", "--help", "-help"] {
            assert_eq!(parse(&args(&[help]), None), Ok(Invocation::Help));
        }
        assert_eq!(
            parse(&args(&["-n", "2", "-h", "p"]), None),
            Ok(Invocation::Help)
        );
        assert_eq!(parse(&args(&["--version"]), None), Ok(Invocation::Version));
        // After the program, -h is the program's.
        assert_eq!(run(&["p", "-h"]).args, args(&["-h"]));
    }
}
