//! Ending the job: the first reason it ends, bringing the ranks down
//! (SIGTERM or the forwarded signal, SIGKILL after a grace period, proxies
//! cut off when they do not follow), the deadlines involved, and
//! mpiexec's exit status.
//!
//! Invariant: the first [`Ending`] decides the message and the exit status
//! (see `outcome.rs`); later reasons are consequences and are only logged.
//! Without one, mpiexec exits with 0.

use std::time::{Duration, Instant};

use crate::outcome::{Ending, Termination};
use crate::proxy_wire::ToProxy;
use crate::signals::signal_group;

use super::{reap_leftovers, Job};

/// Time between SIGTERM and SIGKILL when the job is brought down.
const KILL_GRACE: Duration = Duration::from_millis(500);
/// Same, after mpiexec forwarded a SIGINT/SIGTERM/SIGHUP it received.
const INTERRUPT_GRACE: Duration = Duration::from_secs(2);
/// How long to wait for killed leftovers of a failed job to be reapable.
const LEFTOVER_REAP: Duration = Duration::from_millis(200);
/// After SIGKILL went to the proxies: how long before they are cut off.
const ABANDON_GRACE: Duration = Duration::from_secs(1);
/// After the last rank ended: how long launchers may take to exit.
const LAUNCHER_EXIT_GRACE: Duration = Duration::from_secs(10);

impl Job {
    /// A barrier that a rank which has already ended did not enter can
    /// never complete: end the job rather than hang.
    pub(super) fn check_barrier(&mut self) {
        if self.ending.is_some() || self.server.barrier_waiters() == 0 {
            return;
        }
        let gone = self
            .ranks
            .iter()
            .enumerate()
            .find(|(rank, r)| r.ended.is_some() && !self.server.is_in_barrier(*rank))
            .map(|(rank, r)| (rank, r.ended.unwrap_or(Termination::Exited(0))));
        if let Some((rank, how)) = gone {
            let who = self.who(rank);
            self.end(Ending::LeftBarrier { who, how });
        }
    }

    pub(super) fn check_deadlines(&mut self) {
        let now = Instant::now();
        if let Some((at, seconds)) = self.timeout {
            if self.ending.is_none() && now >= at {
                self.end(Ending::TimedOut { seconds });
            }
        }
        if let Some(at) = self.kill_at {
            if now >= at {
                log::debug!("grace period over: SIGKILL to the job");
                self.signal_job(libc::SIGKILL);
                self.kill_at = None;
            }
        }
        if let Some(at) = self.abandon_at {
            if now >= at {
                self.abandon_at = None;
                for id in 0..self.proxies.len() {
                    if self.proxies[id].launcher.is_some() || self.proxies[id].control.is_some() {
                        log::debug!("host {}: cut off", self.proxies[id].host);
                        self.cut_off(id);
                    }
                }
            }
        }
        if let Some(at) = self.all_ended_at {
            if now >= at + LAUNCHER_EXIT_GRACE {
                for id in 0..self.proxies.len() {
                    if self.proxies[id].launcher.is_some() {
                        log::debug!(
                            "host {}: launcher still running: killed",
                            self.proxies[id].host
                        );
                        self.cut_off(id);
                    }
                }
            }
        }
    }

    /// mpiexec received `signal`: forward it, or escalate to SIGKILL when
    /// the job is already ending.
    pub(super) fn interrupted(&mut self, signal: libc::c_int) {
        log::debug!("received signal {signal}");
        if self.ending.is_none() {
            self.end(Ending::Interrupted { signal });
        } else {
            self.signal_job(libc::SIGKILL);
            self.kill_at = None;
        }
    }

    /// Records the first reason the job ends, prints its line and starts
    /// bringing the ranks down. Later reasons are only logged.
    pub(super) fn end(&mut self, ending: Ending) {
        if self.ending.is_some() {
            log::debug!("job already ending; also: {ending:?}");
            return;
        }
        if let Some(line) = ending.message() {
            eprintln!("{line}");
        }
        let (signal, grace) = first_signal(&ending);
        self.ending = Some(ending);
        if let Some(f) = &mut self.stdin {
            f.close();
        }
        self.signal_job(signal);
        self.kill_at = Some(Instant::now() + grace);
    }

    /// Sends `signal` to the job's process group, to every local rank not
    /// yet reaped (in case one left the group), and through every proxy to
    /// its ranks. SIGKILL also starts the countdown to cutting proxies off.
    fn signal_job(&mut self, signal: libc::c_int) {
        signal_group(self.pgid, signal);
        for r in self.ranks.iter().filter(|r| r.ended.is_none() && !r.remote) {
            if let Some(pid) = r.pid {
                // SAFETY: kill(2) on a child that has not been reaped, so its
                // pid cannot have been reused.
                unsafe {
                    libc::kill(pid, signal);
                }
            }
        }
        for id in 0..self.proxies.len() {
            let p = &self.proxies[id];
            if p.lost {
                continue;
            }
            if p.control.is_some() {
                self.send_control(id, ToProxy::Signal(signal));
            } else if let (false, Some(pid)) = (p.connected, p.launcher) {
                // Not connected yet: the launcher is all there is.
                // SAFETY: kill(2) on a child that has not been reaped.
                unsafe {
                    libc::kill(pid, signal);
                }
            }
        }
        if signal == libc::SIGKILL && !self.proxies.is_empty() && self.abandon_at.is_none() {
            self.abandon_at = Some(Instant::now() + ABANDON_GRACE);
        }
    }

    /// After the last rank: clean up leftovers and compute the exit status.
    pub(super) fn finish(self) -> i32 {
        match &self.ending {
            Some(_) => {
                // Descendants still in the job's group die with it.
                signal_group(self.pgid, libc::SIGKILL);
                reap_leftovers(LEFTOVER_REAP);
            }
            None => reap_leftovers(Duration::ZERO),
        }
        self.exit_status()
    }

    /// mpiexec's exit status: the first ending's, 0 if nothing ended the
    /// job early.
    fn exit_status(&self) -> i32 {
        self.ending.as_ref().map_or(0, Ending::exit_code)
    }
}

/// The signal that starts bringing the ranks down for `ending`, and how
/// long they have before SIGKILL: a signal mpiexec received is forwarded,
/// with a longer grace; any other ending sends SIGTERM.
fn first_signal(ending: &Ending) -> (libc::c_int, Duration) {
    match ending {
        Ending::Interrupted { signal } => (*signal, INTERRUPT_GRACE),
        _ => (libc::SIGTERM, KILL_GRACE),
    }
}
