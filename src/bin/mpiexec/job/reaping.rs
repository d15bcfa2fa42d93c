//! Learning how ranks ended: local ranks and launchers are reaped with
//! `waitpid` (mpiexec is a subreaper, so orphaned descendants of the ranks
//! are reaped here too), remote ranks are judged from their proxy's report.
//!
//! Invariant: a rank's last PMI messages are read before its death is
//! judged, so an `abort` followed by `exit` counts as the abort (a reported
//! remote end waits up to [`REPORT_GRACE`] for the rank's PMI connection to
//! close); a rank that did not exit with 0 ends the job (or, under
//! `-disable-auto-cleanup`, is reported to the others, see `rank_lost`).

use std::io;
use std::time::{Duration, Instant};

use crate::outcome::{Ending, Termination};

use super::{Job, REPORT_GRACE};

impl Job {
    /// Reaps every process that has ended (local ranks, launchers and
    /// adopted descendants).
    pub(super) fn reap(&mut self) {
        loop {
            let mut status: libc::c_int = 0;
            // SAFETY: waitpid writes the status into our local variable.
            let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
            if pid <= 0 {
                break;
            }
            let how = Termination::from_wait_status(status);
            if let Some(id) = self.proxy_of_pid.remove(&pid) {
                log::debug!(
                    "host {}: launcher (pid {pid}) ended: {how:?}",
                    self.proxies[id].host
                );
                let proxy = &mut self.proxies[id];
                proxy.launcher = None;
                proxy.launcher_ended = Some((how, Instant::now()));
                // What the proxy reported before it went comes first.
                self.read_control(id);
                continue;
            }
            let Some(&rank) = self.rank_of_pid.get(&pid) else {
                log::debug!("reaped descendant pid {pid}");
                continue;
            };
            // What it sent before dying (an abort, say) comes first.
            self.read_rank(rank);
            self.ranks[rank].connection = None;
            self.rank_ended(rank, how);
        }
        if self.all_ended_at.is_none() && self.ranks.iter().all(|r| r.ended.is_some()) {
            self.all_ended_at = Some(Instant::now());
        }
    }

    /// Judges the reported ends of remote ranks whose PMI connection has
    /// closed (or that waited long enough for it).
    pub(super) fn judge_reported(&mut self) {
        let now = Instant::now();
        for rank in 0..self.ranks.len() {
            let r = &self.ranks[rank];
            let Some((how, at)) = r.reported else {
                continue;
            };
            if r.ended.is_some() {
                continue;
            }
            if r.connection.is_some() {
                self.read_rank(rank);
            }
            if self.ranks[rank].connection.is_some() && now < at + REPORT_GRACE {
                continue;
            }
            self.ranks[rank].connection = None;
            self.rank_ended(rank, how);
        }
    }

    /// Records how `rank` ended; a failure ends the job.
    pub(super) fn rank_ended(&mut self, rank: usize, how: Termination) {
        self.ranks[rank].ended = Some(how);
        log::debug!("{} ended: {how:?}", self.who(rank));
        self.server.process_ended(rank);
        if self.ranks[rank].abandoned {
            // Killed with its failed spawn: the spawn's answer said so.
            self.ranks[rank].connection = None;
            return;
        }
        // What it wrote before it ended (its `finalize`) is still to read.
        self.read_rank(rank);
        if rank == 0 {
            if let Some(f) = &mut self.stdin {
                f.close();
            }
        }
        if !how.is_success() {
            let who = self.who(rank);
            self.rank_lost(rank, Ending::RankFailed { who, how });
        }
        self.check_finalized(rank);
    }

    /// A rank that has ended successfully and closed its PMI connection
    /// without `finalize` (both have happened, in either order: a remote
    /// rank's end comes from its proxy) ends the job.
    pub(super) fn check_finalized(&mut self, rank: usize) {
        let r = &self.ranks[rank];
        let ended_well = r.ended.is_some_and(|how| how.is_success());
        if ended_well && r.connection.is_none() && self.server.is_unfinished(rank) {
            let who = self.who(rank);
            self.rank_lost(rank, Ending::NotFinalized { who });
        }
    }
}

/// Makes orphaned descendants of the ranks mpiexec's children, so that they
/// are reaped (and killed with a failed job) rather than left to init.
pub fn become_subreaper() {
    // SAFETY: prctl with PR_SET_CHILD_SUBREAPER only sets a process flag.
    if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } != 0 {
        log::debug!("PR_SET_CHILD_SUBREAPER: {}", io::Error::last_os_error());
    }
}

/// Reaps ended children and adopted descendants, waiting up to `patience`
/// for more to end (never for ones that keep running).
pub fn reap_leftovers(patience: Duration) {
    let give_up = Instant::now() + patience;
    loop {
        let mut status: libc::c_int = 0;
        // SAFETY: waitpid writes the status into our local variable.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if pid > 0 {
            log::debug!("reaped leftover pid {pid}");
            continue;
        }
        if pid < 0 || Instant::now() >= give_up {
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}
