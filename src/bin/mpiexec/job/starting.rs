//! Starting the job: the listeners remote ranks and proxies connect to,
//! and the local ranks (the remote ones are the proxies' business, see
//! `proxies.rs`).
//!
//! Invariant: the local ranks share one process group, led by the first
//! one started; if one cannot be started, none after it is, every rank not
//! started counts as ended, and the job ends with the reason.

use std::io;
use std::net::{IpAddr, TcpListener};

use crate::connection::PmiConnection;
use crate::launch::{start_rank, JobSpec, RankStdin};
use crate::outcome::{Ending, Termination};
use crate::stdin_forward::StdinForwarder;

use super::Job;

/// One listener per address handed to remote hosts (none for a local job).
pub(super) fn open_listeners(spec: &JobSpec) -> Result<Vec<(IpAddr, TcpListener)>, String> {
    let mut listeners: Vec<(IpAddr, TcpListener)> = Vec::new();
    let Some(remote) = &spec.remote else {
        return Ok(listeners);
    };
    for addr in remote.addresses.iter().flatten() {
        if listeners.iter().any(|(a, _)| a == addr) {
            continue;
        }
        let listener = TcpListener::bind((*addr, 0))
            .map_err(|e| format!("cannot listen for PMI connections on {addr}: {e}"))?;
        listener
            .set_nonblocking(true)
            .map_err(|e| format!("PMI listener: {e}"))?;
        log::debug!(
            "PMI listener on {}",
            listener.local_addr().map_err(|e| e.to_string())?
        );
        listeners.push((*addr, listener));
    }
    Ok(listeners)
}

impl Job {
    pub(super) fn start_ranks(&mut self) {
        let rank0_remote = self.ranks.first().is_some_and(|r| r.remote);
        let mut rank0_stdin = RankStdin::Inherit;
        if !rank0_remote {
            match StdinForwarder::for_terminal() {
                Ok(Some((forwarder, read_end))) => {
                    self.stdin = Some(forwarder);
                    rank0_stdin = RankStdin::Pipe(read_end);
                }
                Ok(None) => {}
                Err(e) => log::warn!("cannot forward the terminal to rank 0: {e}"),
            }
        }
        let mut rank0_stdin = Some(rank0_stdin);
        for rank in 0..self.spec.size() {
            if self.ranks[rank].remote {
                continue;
            }
            let stdin = if rank == 0 {
                rank0_stdin.take().unwrap_or(RankStdin::Null)
            } else {
                RankStdin::Null
            };
            let pgid = (self.pgid != 0).then_some(self.pgid);
            let started = start_rank(&self.spec, rank, pgid, stdin).and_then(|started| {
                let connection = PmiConnection::new(started.pmi)?;
                Ok((started.pid, connection))
            });
            match started {
                Ok((pid, connection)) => self.record_started(rank, pid, connection),
                Err(e) => {
                    let not_found = e.kind() == io::ErrorKind::NotFound;
                    self.give_up_unstarted();
                    self.end(Ending::StartFailed {
                        rank,
                        host: None,
                        problem: e.to_string(),
                        not_found,
                    });
                    return;
                }
            }
        }
        self.start_proxies();
    }

    /// Marks every rank that was not started as ended (the job is failing).
    /// Records that process `id` (a rank, or a spawned child's global id)
    /// runs as `pid`, reached through `connection`; the first process
    /// started leads the job's process group.
    pub(super) fn record_started(
        &mut self,
        id: usize,
        pid: libc::pid_t,
        connection: PmiConnection,
    ) {
        if self.pgid == 0 {
            self.pgid = pid;
        }
        self.rank_of_pid.insert(pid, id);
        let r = &mut self.ranks[id];
        r.pid = Some(pid);
        r.connection = Some(connection);
    }

    fn give_up_unstarted(&mut self) {
        for r in &mut self.ranks {
            if r.pid.is_none() && r.ended.is_none() {
                r.ended = Some(Termination::Signaled(libc::SIGKILL));
            }
        }
    }
}
