//! Why a job ends early, the one line mpiexec prints about it and the exit
//! status it returns.
//!
//! Invariant: only the first reason counts (later deaths are consequences of
//! bringing the job down), it is reported in at most one stderr line, and
//! its exit status is not 0 (unless a rank aborted asking for code 0).

use crate::signals::signal_name;

/// How a rank process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Termination {
    /// `exit(code)`.
    Exited(i32),
    /// Killed by a signal.
    Signaled(i32),
}

impl Termination {
    /// Decodes a `waitpid` status.
    pub fn from_wait_status(status: libc::c_int) -> Termination {
        if libc::WIFSIGNALED(status) {
            Termination::Signaled(libc::WTERMSIG(status))
        } else {
            Termination::Exited(libc::WEXITSTATUS(status))
        }
    }

    /// Whether this is `exit(0)`.
    pub fn is_success(self) -> bool {
        self == Termination::Exited(0)
    }

    /// The exit status a shell would show for it.
    pub fn exit_code(self) -> i32 {
        match self {
            Termination::Exited(code) => code,
            Termination::Signaled(signal) => 128 + signal,
        }
    }
}

/// A rank as messages name it: `rank 3 (pid 1234)`, or with its host when
/// it runs on another one: `rank 3 (pid 1234 on node2)`; a spawned process
/// by its rank in its group: `rank 0 of spawned group 1 (pid 1234)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Who {
    /// The rank, in its group.
    pub rank: usize,
    /// Its process group (0: the job's original world; g: the children
    /// of the g-th spawn).
    pub group: usize,
    /// Its process id (on its host), when known.
    pub pid: Option<i32>,
    /// Its host, for a rank that is not on mpiexec's host.
    pub host: Option<String>,
}

impl Who {
    /// A rank on this host.
    #[cfg(test)]
    pub fn local(rank: usize, pid: i32) -> Who {
        Who {
            rank,
            group: 0,
            pid: Some(pid),
            host: None,
        }
    }

    /// Rank `rank` of the original world, pid unknown.
    #[cfg(test)]
    pub fn world(rank: usize) -> Who {
        Who {
            rank,
            group: 0,
            pid: None,
            host: None,
        }
    }

    /// Its name without pid or host: `rank 3`, `rank 0 of spawned group 1`.
    pub fn name(&self) -> String {
        match self.group {
            0 => format!("rank {}", self.rank),
            g => format!("rank {} of spawned group {g}", self.rank),
        }
    }
}

impl std::fmt::Display for Who {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name())?;
        match (self.pid, &self.host) {
            (Some(pid), None) => write!(f, " (pid {pid})"),
            (Some(pid), Some(host)) => write!(f, " (pid {pid} on {host})"),
            (None, Some(host)) => write!(f, " (on {host})"),
            (None, None) => Ok(()),
        }
    }
}

/// The first reason the job is being brought down.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// A rank exited with a nonzero code or was killed by a signal.
    RankFailed {
        /// The rank.
        who: Who,
        /// How it ended.
        how: Termination,
    },
    /// A rank sent `cmd=abort exitcode=<code>`.
    Aborted {
        /// The rank (its pid and host are not printed).
        who: Who,
        /// The code it asked for.
        code: i32,
    },
    /// The `-timeout`/`MPIEXEC_TIMEOUT` limit passed.
    TimedOut {
        /// The limit.
        seconds: u64,
    },
    /// mpiexec received a signal and forwarded it to the ranks.
    Interrupted {
        /// The signal.
        signal: i32,
    },
    /// A rank sent something that is not PMI-1 or broke its rules.
    ProtocolError {
        /// The rank.
        who: Who,
        /// What it did.
        problem: String,
    },
    /// A rank that had initialized PMI ended without `finalize` (an MPI
    /// program that exited without `MPI_Finalize`): its peers may wait for
    /// it forever, so the job ends, as under Hydra.
    NotFinalized {
        /// The rank.
        who: Who,
    },
    /// A rank ended (successfully) while others wait for it in a barrier.
    LeftBarrier {
        /// The rank that is gone.
        who: Who,
        /// How it ended.
        how: Termination,
    },
    /// A rank could not be started.
    StartFailed {
        /// The rank.
        rank: usize,
        /// Its host, when it is not mpiexec's.
        host: Option<String>,
        /// The system's reason.
        problem: String,
        /// Whether the program vanished (exit 127) rather than failed (126).
        not_found: bool,
    },
    /// A remote host is gone, or never came up: its launcher or proxy
    /// ended while ranks ran there, or the proxy did not connect back.
    HostLost {
        /// The host.
        host: String,
        /// What happened, including the ranks concerned.
        problem: String,
    },
}

impl Ending {
    /// The line to print on stderr (without newline), if any.
    pub fn message(&self) -> Option<String> {
        Some(match self {
            Ending::RankFailed { who, how } | Ending::LeftBarrier { who, how } => {
                let what = match how {
                    Termination::Exited(code) => format!("exited with code {code}"),
                    Termination::Signaled(signal) => {
                        format!("killed by signal {signal} ({})", signal_name(*signal))
                    }
                };
                let suffix = if matches!(self, Ending::LeftBarrier { .. }) {
                    " while other ranks wait for it in a PMI barrier"
                } else {
                    ""
                };
                format!("mpiexec: {who} {what}{suffix}")
            }
            Ending::Aborted { who, code } => {
                format!("mpiexec: {} aborted the job with code {code}", who.name())
            }
            Ending::NotFinalized { who } => {
                format!("mpiexec: {who} exited without finalizing MPI")
            }
            Ending::TimedOut { seconds } => {
                format!("mpiexec: job timed out after {seconds} seconds")
            }
            Ending::Interrupted { .. } => return None,
            Ending::ProtocolError { who, problem } => {
                format!("mpiexec: {who} broke the PMI protocol: {problem}")
            }
            Ending::StartFailed {
                rank,
                host,
                problem,
                ..
            } => match host {
                None => format!("mpiexec: cannot start rank {rank}: {problem}"),
                Some(host) => format!("mpiexec: cannot start rank {rank} on {host}: {problem}"),
            },
            Ending::HostLost { host, problem } => {
                format!("mpiexec: lost host {host}: {problem}")
            }
        })
    }

    /// mpiexec's exit status for this ending (0 only for an abort with code 0).
    pub fn exit_code(&self) -> i32 {
        match self {
            Ending::RankFailed { how, .. } => how.exit_code(),
            Ending::Aborted { code, .. } => abort_exit_code(*code),
            Ending::TimedOut { .. } => 124,
            Ending::Interrupted { signal } => 128 + signal,
            Ending::ProtocolError { .. }
            | Ending::LeftBarrier { .. }
            | Ending::NotFinalized { .. } => 1,
            Ending::StartFailed { not_found, .. } => {
                if *not_found {
                    127
                } else {
                    126
                }
            }
            Ending::HostLost { .. } => 255,
        }
    }
}

/// An abort code as an exit status: the low 8 bits (what `exit` would
/// keep), except that a nonzero code never becomes a success.
fn abort_exit_code(code: i32) -> i32 {
    match code & 0xff {
        0 if code != 0 => 1,
        low => low,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_failures() {
        let segv = Ending::RankFailed {
            who: Who::local(3, 1234),
            how: Termination::Signaled(libc::SIGSEGV),
        };
        assert_eq!(
            segv.message().unwrap(),
            "mpiexec: rank 3 (pid 1234) killed by signal 11 (SIGSEGV)"
        );
        assert_eq!(segv.exit_code(), 139);
        let exit3 = Ending::RankFailed {
            who: Who::local(1, 99),
            how: Termination::Exited(3),
        };
        assert_eq!(
            exit3.message().unwrap(),
            "mpiexec: rank 1 (pid 99) exited with code 3"
        );
        assert_eq!(exit3.exit_code(), 3);
    }

    #[test]
    fn a_rank_that_did_not_finalize() {
        let e = Ending::NotFinalized {
            who: Who::local(1, 77),
        };
        assert_eq!(
            e.message().unwrap(),
            "mpiexec: rank 1 (pid 77) exited without finalizing MPI"
        );
        assert_eq!(e.exit_code(), 1);
    }

    #[test]
    fn aborts() {
        let abort = Ending::Aborted {
            who: Who::world(2),
            code: 7,
        };
        assert_eq!(
            abort.message().unwrap(),
            "mpiexec: rank 2 aborted the job with code 7"
        );
        assert_eq!(abort.exit_code(), 7);
        assert_eq!(
            Ending::Aborted {
                who: Who::world(0),
                code: 256
            }
            .exit_code(),
            1
        );
        assert_eq!(
            Ending::Aborted {
                who: Who::world(0),
                code: 257
            }
            .exit_code(),
            1
        );
        assert_eq!(
            Ending::Aborted {
                who: Who::world(0),
                code: 300
            }
            .exit_code(),
            44
        );
        assert_eq!(
            Ending::Aborted {
                who: Who::world(0),
                code: -1
            }
            .exit_code(),
            255
        );
        assert_eq!(
            Ending::Aborted {
                who: Who::world(0),
                code: 0
            }
            .exit_code(),
            0
        );
    }

    #[test]
    fn job_level_endings() {
        let timeout = Ending::TimedOut { seconds: 5 };
        assert_eq!(
            timeout.message().unwrap(),
            "mpiexec: job timed out after 5 seconds"
        );
        assert_eq!(timeout.exit_code(), 124);
        let int = Ending::Interrupted {
            signal: libc::SIGINT,
        };
        assert_eq!(int.message(), None);
        assert_eq!(int.exit_code(), 130);
        let left = Ending::LeftBarrier {
            who: Who::local(1, 5),
            how: Termination::Exited(0),
        };
        assert_eq!(
            left.message().unwrap(),
            "mpiexec: rank 1 (pid 5) exited with code 0 while other ranks wait for it in a PMI barrier"
        );
        assert_eq!(left.exit_code(), 1);
        let start = Ending::StartFailed {
            rank: 0,
            host: None,
            problem: "Exec format error (os error 8)".into(),
            not_found: false,
        };
        assert_eq!(
            start.message().unwrap(),
            "mpiexec: cannot start rank 0: Exec format error (os error 8)"
        );
        assert_eq!(start.exit_code(), 126);
    }

    #[test]
    fn remote_ranks_and_hosts() {
        let remote = Who {
            rank: 2,
            group: 0,
            pid: Some(77),
            host: Some("node2".into()),
        };
        let failed = Ending::RankFailed {
            who: remote.clone(),
            how: Termination::Exited(4),
        };
        assert_eq!(
            failed.message().unwrap(),
            "mpiexec: rank 2 (pid 77 on node2) exited with code 4"
        );
        let unknown_pid = Who {
            pid: None,
            ..remote
        };
        assert_eq!(unknown_pid.to_string(), "rank 2 (on node2)");
        let start = Ending::StartFailed {
            rank: 3,
            host: Some("node2".into()),
            problem: "No such file or directory (os error 2)".into(),
            not_found: true,
        };
        assert_eq!(
            start.message().unwrap(),
            "mpiexec: cannot start rank 3 on node2: No such file or directory (os error 2)"
        );
        assert_eq!(start.exit_code(), 127);
        let lost = Ending::HostLost {
            host: "node2".into(),
            problem: "its launcher exited with code 255 while ranks 2,3 ran there".into(),
        };
        assert_eq!(
            lost.message().unwrap(),
            "mpiexec: lost host node2: its launcher exited with code 255 while ranks 2,3 ran there"
        );
        assert_eq!(lost.exit_code(), 255);
    }

    #[test]
    fn decodes_wait_status() {
        assert_eq!(
            Termination::from_wait_status(3 << 8),
            Termination::Exited(3)
        );
        assert_eq!(Termination::from_wait_status(0), Termination::Exited(0));
        assert!(Termination::from_wait_status(0).is_success());
        assert_eq!(
            Termination::from_wait_status(libc::SIGKILL),
            Termination::Signaled(libc::SIGKILL)
        );
    }
}
