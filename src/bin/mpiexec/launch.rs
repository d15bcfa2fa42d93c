//! Starting processes: a local rank (fork/exec with its PMI socket, its
//! environment, its process group and its death tie to mpiexec), a
//! remote host's launcher command (`ssh host mpiexec --proxy`, or the
//! `-launcher-exec` command), and, inside a proxy, the proxy's ranks.
//!
//! Invariants: a rank inherits at most one extra descriptor, the child end
//! of its own PMI socketpair (every other descriptor is close-on-exec); the
//! ranks one process starts share one process group, whose id is the first
//! one's pid, so one `kill(-pgid)` reaches them all; every rank and every
//! launcher has `PR_SET_PDEATHSIG(SIGKILL)`, so none outlives a killed
//! mpiexec (or proxy); a launcher runs in a process group of its own, so
//! signals meant for the ranks (or typed at the terminal) do not reach it:
//! remote ranks are signalled through their proxy.

use std::ffi::{OsStr, OsString};
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::environment::{job_variables, PmiAccess, RankVariables};
use crate::hosts::Placement;
use crate::program::ResolvedProgram;

/// How remote hosts are reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteLaunch {
    /// The command before the host name: `ssh -x`, `rsh`, or the words of
    /// `-launcher-exec`.
    pub command: Vec<OsString>,
    /// Whether the remote side runs the command through a shell (ssh,
    /// rsh), so that the proxy's path must be quoted.
    pub shell_quoting: bool,
    /// Path of this mpiexec binary, which must exist at the same path on
    /// every host (it runs there as the proxy).
    pub proxy_path: PathBuf,
    /// The address each node reaches mpiexec on (`None` for local nodes).
    pub addresses: Vec<Option<IpAddr>>,
}

/// Everything that is the same for all ranks of a job.
#[derive(Debug, Clone)]
pub struct JobSpec {
    /// The program to execute.
    pub program: ResolvedProgram,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// The ranks' working directory.
    pub workdir: PathBuf,
    /// The environment shared by all ranks (job variables are added per rank).
    pub env: Vec<(OsString, OsString)>,
    /// The job's unique id (`OXMPI_JOBID`).
    pub jobid: String,
    /// The job's secret (`OXMPI_JOB_SECRET`).
    pub secret: String,
    /// Where each rank runs.
    pub placement: Placement,
    /// Variables set to the name of each rank's host (`-hostname-env`).
    pub hostname_env: Vec<OsString>,
    /// How to start ranks on other hosts (`None`: every rank is local).
    pub remote: Option<RemoteLaunch>,
    /// Whether a failed rank ends the job (`-disable-auto-cleanup`: no).
    pub auto_cleanup: bool,
    /// What PMI `get_universe_size` answers (`-usize`); `None`: -1
    /// (unknown, as Hydra answers by default and for `INFINITE`).
    pub universe_size: Option<usize>,
}

impl JobSpec {
    /// Number of ranks.
    pub fn size(&self) -> usize {
        self.placement.size()
    }

    /// Rank `rank`'s own variables: the host name variables, then the job
    /// variables (which win).
    pub fn rank_variables(&self, rank: usize, pmi: PmiAccess) -> Vec<(OsString, OsString)> {
        let (local_id, local_count) = self.placement.local_position(rank);
        let host = &self.placement.host_of_rank[rank];
        let mut vars: Vec<(OsString, OsString)> = self
            .hostname_env
            .iter()
            .map(|name| (name.clone(), OsString::from(host)))
            .collect();
        vars.extend(job_variables(&RankVariables {
            rank,
            size: self.size(),
            local_id,
            local_count,
            jobid: &self.jobid,
            secret: &self.secret,
            pmi,
        }));
        vars
    }
}

/// Where a process's stdin comes from.
#[derive(Debug)]
pub enum RankStdin {
    /// The parent's own stdin.
    Inherit,
    /// /dev/null.
    Null,
    /// This pipe end.
    Pipe(OwnedFd),
}

impl RankStdin {
    fn stdio(self) -> Stdio {
        match self {
            RankStdin::Inherit => Stdio::inherit(),
            RankStdin::Null => Stdio::null(),
            RankStdin::Pipe(fd) => Stdio::from(fd),
        }
    }
}

/// A process to start, tied to the starting process.
pub struct TiedProcess<'a> {
    /// Executable path.
    pub program: &'a Path,
    /// `argv[0]`.
    pub argv0: &'a OsStr,
    /// Arguments.
    pub args: &'a [OsString],
    /// Its whole environment.
    pub env: Vec<(OsString, OsString)>,
    /// Working directory.
    pub workdir: &'a Path,
    /// Process group to join; `None` starts a new one led by the process.
    pub pgid: Option<libc::pid_t>,
    /// Its stdin.
    pub stdin: RankStdin,
    /// A descriptor to pass on (its close-on-exec flag is cleared).
    pub keep_fd: Option<RawFd>,
}

/// Starts `p` with `PR_SET_PDEATHSIG(SIGKILL)` towards the caller, and
/// returns its pid (the caller reaps it with `waitpid`). The process also
/// gets `OXMPI_LAUNCHER_PID`, the caller's pid: the ranks of a node are its
/// descendants, and a rank names it as the one process (with its
/// descendants) that may read its memory under Yama `ptrace_scope=1`.
pub fn spawn_tied(p: TiedProcess<'_>) -> io::Result<libc::pid_t> {
    let mut command = Command::new(p.program);
    command
        .arg0(p.argv0)
        .args(p.args)
        .env_clear()
        .envs(p.env.iter().map(|(k, v)| (k, v)))
        .env("OXMPI_LAUNCHER_PID", std::process::id().to_string())
        .current_dir(p.workdir)
        .process_group(p.pgid.unwrap_or(0))
        .stdin(p.stdin.stdio())
        .stdout(Stdio::inherit())
        .stderr(Stdio::inherit());
    tie_to_parent(&mut command, p.keep_fd);
    let child = command.spawn()?;
    // The pid is all the caller keeps: it reaps with waitpid(-1) itself.
    Ok(child.id() as libc::pid_t)
}

/// Makes `command`'s child die with this process (and fail to start if
/// this process is already gone), keeping `keep_fd` open across exec.
fn tie_to_parent(command: &mut Command, keep_fd: Option<RawFd>) {
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    let hook = move || -> io::Result<()> {
        // SAFETY: prctl, getppid and fcntl are async-signal-safe system
        // calls; the closure runs in the forked child before exec, touches
        // no lock and allocates nothing.
        unsafe {
            if libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            ) != 0
            {
                return Err(io::Error::last_os_error());
            }
            // The parent may have died before the prctl: then no signal comes.
            if libc::getppid() != parent {
                return Err(io::Error::from_raw_os_error(libc::ESRCH));
            }
            if let Some(fd) = keep_fd {
                let flags = libc::fcntl(fd, libc::F_GETFD);
                if flags < 0 || libc::fcntl(fd, libc::F_SETFD, flags & !libc::FD_CLOEXEC) < 0 {
                    return Err(io::Error::last_os_error());
                }
            }
        }
        Ok(())
    };
    // SAFETY: the hook only makes async-signal-safe system calls (see above).
    unsafe {
        command.pre_exec(hook);
    }
}

/// A local rank that was started: its pid and the server end of its PMI
/// socket.
#[derive(Debug)]
pub struct StartedRank {
    /// The rank's process id.
    pub pid: libc::pid_t,
    /// The server end of the rank's PMI socketpair.
    pub pmi: UnixStream,
}

/// What a local process runs: the program, its arguments and where.
#[derive(Debug, Clone, Copy)]
pub struct LocalProgram<'a> {
    /// The program.
    pub program: &'a ResolvedProgram,
    /// Its arguments.
    pub args: &'a [OsString],
    /// Its working directory.
    pub workdir: &'a Path,
}

/// Starts rank `rank` of `spec` on this host. `pgid` is the job's process
/// group, or `None` for the first local rank, which creates the group.
pub fn start_rank(
    spec: &JobSpec,
    rank: usize,
    pgid: Option<libc::pid_t>,
    stdin: RankStdin,
) -> io::Result<StartedRank> {
    let run = LocalProgram {
        program: &spec.program,
        args: &spec.args,
        workdir: &spec.workdir,
    };
    let started = start_with_pmi_socket(run, &spec.env, pgid, stdin, |fd| {
        spec.rank_variables(rank, PmiAccess::Fd(fd))
    })?;
    log::debug!("started rank {rank} as pid {}", started.pid);
    Ok(started)
}

/// Starts `run` on this host with its own PMI socketpair: its environment
/// is `env` plus `variables(fd)`, where fd is the child's end of the
/// socket (its `PMI_FD`). `pgid` is the process group to join (`None`:
/// a new one led by the process).
pub fn start_with_pmi_socket(
    run: LocalProgram<'_>,
    env: &[(OsString, OsString)],
    pgid: Option<libc::pid_t>,
    stdin: RankStdin,
    variables: impl FnOnce(RawFd) -> Vec<(OsString, OsString)>,
) -> io::Result<StartedRank> {
    // Both ends are close-on-exec; the child clears the flag on its end only.
    let (server_end, child_end) = UnixStream::pair()?;
    let child_fd = child_end.as_raw_fd();
    let mut env = env.to_vec();
    env.extend(variables(child_fd));
    let pid = spawn_tied(TiedProcess {
        program: &run.program.path,
        argv0: &run.program.given,
        args: run.args,
        env,
        workdir: run.workdir,
        pgid,
        stdin,
        keep_fd: Some(child_fd),
    })?;
    drop(child_end);
    Ok(StartedRank {
        pid,
        pmi: server_end,
    })
}

/// The command line that starts the proxy for host `host`.
pub fn launcher_command(remote: &RemoteLaunch, host: &str) -> Vec<OsString> {
    let mut argv = remote.command.clone();
    argv.push(host.into());
    let path = remote.proxy_path.as_os_str();
    argv.push(if remote.shell_quoting {
        shell_quote(path)
    } else {
        path.to_os_string()
    });
    argv.push("--proxy".into());
    argv
}

/// `text` quoted for a POSIX shell when it holds anything but plain
/// characters.
pub fn shell_quote(text: &OsStr) -> OsString {
    let plain = |b: &u8| b.is_ascii_alphanumeric() || b"/._-+,:@%=".contains(b);
    let bytes = text.as_bytes();
    if !bytes.is_empty() && bytes.iter().all(plain) {
        return text.to_os_string();
    }
    let mut quoted = Vec::with_capacity(bytes.len() + 2);
    quoted.push(b'\'');
    for &b in bytes {
        if b == b'\'' {
            quoted.extend_from_slice(b"'\\''");
        } else {
            quoted.push(b);
        }
    }
    quoted.push(b'\'');
    std::os::unix::ffi::OsStringExt::from_vec(quoted)
}

/// The first line a proxy reads on its stdin.
pub fn proxy_header(server: SocketAddr, id: usize, secret: &str) -> String {
    format!(
        "oxmpi-proxy server={} id={id} secret={secret}\n",
        crate::net::pmi_port_value(server)
    )
}

/// Starts the launcher `argv` (in a process group of its own, tied to
/// mpiexec) with `stdin` as its stdin and mpiexec's environment, stdout and
/// stderr.
pub fn start_launcher(argv: &[OsString], stdin: OwnedFd) -> io::Result<libc::pid_t> {
    let Some((program, args)) = argv.split_first() else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "empty launcher command",
        ));
    };
    let mut command = Command::new(program);
    command
        .args(args)
        .process_group(0)
        .stdin(Stdio::from(stdin))
        .stdout(Stdio::inherit())
        .stderr(Stdio::inherit());
    tie_to_parent(&mut command, None);
    let child = command.spawn()?;
    Ok(child.id() as libc::pid_t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(
            shell_quote(OsStr::new("/usr/bin/mpiexec")),
            "/usr/bin/mpiexec"
        );
        assert_eq!(shell_quote(OsStr::new("/a b/x")), "'/a b/x'");
        assert_eq!(shell_quote(OsStr::new("it's")), "'it'\\''s'");
        assert_eq!(shell_quote(OsStr::new("")), "''");
    }

    #[test]
    fn launcher_commands() {
        let remote = RemoteLaunch {
            command: vec!["ssh".into(), "-x".into()],
            shell_quoting: true,
            proxy_path: "/opt/my mpi/bin/mpiexec".into(),
            addresses: vec![],
        };
        assert_eq!(
            launcher_command(&remote, "node1"),
            ["ssh", "-x", "node1", "'/opt/my mpi/bin/mpiexec'", "--proxy"]
        );
        let netns = RemoteLaunch {
            command: vec!["ip".into(), "netns".into(), "exec".into()],
            shell_quoting: false,
            ..remote
        };
        assert_eq!(
            launcher_command(&netns, "ns1"),
            [
                "ip",
                "netns",
                "exec",
                "ns1",
                "/opt/my mpi/bin/mpiexec",
                "--proxy"
            ]
        );
        assert_eq!(
            proxy_header("10.0.0.1:99".parse().unwrap(), 2, "ab"),
            "oxmpi-proxy server=10.0.0.1:99 id=2 secret=ab\n"
        );
    }
}
