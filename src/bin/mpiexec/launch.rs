//! Starting one rank process: fork/exec with its PMI socket, its
//! environment, its process group and its death tie to mpiexec.
//!
//! Invariants: a rank inherits exactly one extra descriptor, the child end
//! of its own socketpair (every other descriptor mpiexec holds is
//! close-on-exec); all ranks share one process group whose id is rank 0's
//! pid, so one `kill(-pgid)` reaches the whole job; and every rank has
//! `PR_SET_PDEATHSIG(SIGKILL)`, so none outlives a killed mpiexec.

use std::ffi::OsString;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use crate::environment::job_variables;
use crate::program::ResolvedProgram;

/// Everything that is the same for all ranks of a job.
#[derive(Debug, Clone)]
pub struct JobSpec {
    /// The program to execute.
    pub program: ResolvedProgram,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Number of ranks.
    pub size: usize,
    /// The ranks' working directory.
    pub workdir: PathBuf,
    /// The environment shared by all ranks (job variables are added per rank).
    pub env: Vec<(OsString, OsString)>,
    /// The job's unique id (`OXMPI_JOBID`).
    pub jobid: String,
}

/// Where a rank's stdin comes from.
#[derive(Debug)]
pub enum RankStdin {
    /// mpiexec's own stdin.
    Inherit,
    /// /dev/null.
    Null,
    /// This pipe end (terminal forwarding).
    Pipe(OwnedFd),
}

/// A rank that was started: its pid and the server end of its PMI socket.
#[derive(Debug)]
pub struct StartedRank {
    /// The rank's process id.
    pub pid: libc::pid_t,
    /// The server end of the rank's PMI socketpair.
    pub pmi: UnixStream,
}

/// Starts rank `rank` of `spec`. `pgid` is the job's process group (rank
/// 0's pid), or `None` for rank 0, which creates the group.
pub fn start_rank(
    spec: &JobSpec,
    rank: usize,
    pgid: Option<libc::pid_t>,
    stdin: RankStdin,
) -> io::Result<StartedRank> {
    // Both ends are close-on-exec; the child clears the flag on its end only.
    let (server_end, child_end) = UnixStream::pair()?;
    let child_fd = child_end.as_raw_fd();

    let mut command = Command::new(&spec.program.path);
    command
        .arg0(&spec.program.given)
        .args(&spec.args)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .envs(job_variables(rank, spec.size, child_fd, &spec.jobid))
        .current_dir(&spec.workdir)
        .process_group(pgid.unwrap_or(0))
        .stdin(match stdin {
            RankStdin::Inherit => Stdio::inherit(),
            RankStdin::Null => Stdio::null(),
            RankStdin::Pipe(fd) => Stdio::from(fd),
        })
        .stdout(Stdio::inherit())
        .stderr(Stdio::inherit());

    // SAFETY: getpid has no preconditions.
    let mpiexec_pid = unsafe { libc::getpid() };
    let tie_to_mpiexec = move || -> io::Result<()> {
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
            // mpiexec may have died before the prctl: then no signal comes.
            if libc::getppid() != mpiexec_pid {
                return Err(io::Error::from_raw_os_error(libc::ESRCH));
            }
            let flags = libc::fcntl(child_fd, libc::F_GETFD);
            if flags < 0 || libc::fcntl(child_fd, libc::F_SETFD, flags & !libc::FD_CLOEXEC) < 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    };
    // SAFETY: the hook only makes async-signal-safe system calls (see above).
    unsafe {
        command.pre_exec(tie_to_mpiexec);
    }

    let child = command.spawn()?;
    drop(child_end);
    // The pid is all mpiexec keeps: it reaps with waitpid(-1) itself.
    let pid = child.id() as libc::pid_t;
    log::debug!("started rank {rank} as pid {pid}");
    Ok(StartedRank {
        pid,
        pmi: server_end,
    })
}
