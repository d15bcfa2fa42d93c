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
    /// A barrier that a process which has already ended did not enter can
    /// never complete (barriers are per process group): end the job rather
    /// than hang.
    pub(super) fn check_barrier(&mut self) {
        if self.ending.is_some() || self.server.barrier_waiters() == 0 {
            return;
        }
        let gone = self
            .ranks
            .iter()
            .enumerate()
            .find(|(rank, r)| {
                r.ended.is_some() && !r.abandoned && self.server.is_awaited_in_barrier(*rank)
            })
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

    /// Rank `rank` failed (`ending` says how): the job ends, or under
    /// `-disable-auto-cleanup` goes on, with the failure's line printed
    /// once and every other rank that asked told (see
    /// `PmiServer::rank_failed`); the first such failure decides the exit
    /// status unless something ends the job.
    pub(super) fn rank_lost(&mut self, rank: usize, ending: Ending) {
        if self.spec.auto_cleanup || self.ending.is_some() {
            self.end(ending);
            return;
        }
        if std::mem::replace(&mut self.ranks[rank].lost, true) {
            return;
        }
        if let Some(line) = ending.message() {
            say!("{line}; the job goes on (-disable-auto-cleanup)");
        }
        let notices = self.server.rank_failed(rank);
        self.apply(notices);
        if self.survived.is_none() {
            self.survived = Some(ending);
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
            say!("{line}");
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

    /// mpiexec's exit status: the first ending's, else the first failure
    /// the job went on after, else 0.
    fn exit_status(&self) -> i32 {
        self.ending
            .as_ref()
            .or(self.survived.as_ref())
            .map_or(0, Ending::exit_code)
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

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::os::unix::net::UnixStream;
    use std::time::{Duration, Instant};

    use oxmpi::bootstrap::pmi::wire::PmiMessage;

    use super::first_signal;
    use crate::connection::PmiConnection;
    use crate::job::testing::{connect_proxy, job, two_host_job};
    use crate::job::Job;
    use crate::outcome::{Ending, Termination};
    use crate::proxy_wire::FromProxy;

    /// The line mpiexec printed about the job's ending.
    fn printed(job: &Job) -> String {
        let ending = job.ending.as_ref().expect("the job is ending");
        ending.message().expect("a line on stderr")
    }

    /// Local ranks 0, 1 and 2.
    fn local_job() -> Job {
        job(&[("node-a", true, 3)])
    }

    #[test]
    fn success_when_every_rank_exits_with_0() {
        let mut job = local_job();
        for rank in 0..3 {
            job.rank_ended(rank, Termination::Exited(0));
        }
        job.check_barrier();
        job.check_deadlines();
        assert_eq!(job.ending, None);
        assert_eq!(job.exit_status(), 0);
        assert_eq!(job.kill_at, None, "a successful job was brought down");
    }

    #[test]
    fn first_failing_rank_decides() {
        let mut job = local_job();
        job.rank_ended(0, Termination::Exited(0));
        job.rank_ended(2, Termination::Exited(3));
        assert!(job.kill_at.is_some(), "the other ranks were not signalled");
        // The others die of the SIGTERM, or fail in turn: consequences.
        job.rank_ended(1, Termination::Signaled(libc::SIGTERM));
        assert_eq!(printed(&job), "mpiexec: rank 2 exited with code 3");
        assert_eq!(job.exit_status(), 3);
    }

    #[test]
    fn without_auto_cleanup_a_failed_rank_is_reported_and_the_job_goes_on() {
        use std::io::{BufRead, BufReader};
        let mut job = local_job();
        job.spec.auto_cleanup = false;
        // Rank 0 asked for failure notices; rank 1 did not.
        let (ours, theirs) = UnixStream::pair().unwrap();
        job.ranks[0].connection = Some(PmiConnection::new(ours).unwrap());
        let mut rank0 = BufReader::new(theirs);
        rank0
            .get_mut()
            .write_all(b"cmd=oxmpi_failure_notices\n")
            .unwrap();
        crate::job::testing::wait_readable(job.ranks[0].connection.as_ref().unwrap().fd());
        job.read_rank(0);
        let mut line = String::new();
        rank0.read_line(&mut line).unwrap();
        assert_eq!(line, "cmd=oxmpi_failure_notices_result rc=0\n");
        job.rank_ended(2, Termination::Signaled(libc::SIGKILL));
        assert_eq!(job.ending, None, "the job ended");
        assert_eq!(job.kill_at, None, "the other ranks were signalled");
        line.clear();
        rank0.read_line(&mut line).unwrap();
        assert_eq!(line, "cmd=oxmpi_proc_failed rank=2\n");
        // Reported once; a later failure does not change the status.
        job.rank_lost(2, Ending::NotFinalized { who: job.who(2) });
        job.rank_ended(1, Termination::Exited(5));
        job.rank_ended(0, Termination::Exited(0));
        assert_eq!(job.exit_status(), 128 + libc::SIGKILL);
        // Something that ends the job still does (an abort, say).
        let mut job = local_job();
        job.spec.auto_cleanup = false;
        job.rank_ended(1, Termination::Exited(5));
        job.apply(vec![crate::pmi_server::Action::Abort { rank: 0, code: 7 }]);
        assert!(job.kill_at.is_some());
        assert_eq!(job.exit_status(), 7);
    }

    #[test]
    fn killed_rank_gives_128_plus_its_signal() {
        let mut job = local_job();
        job.rank_ended(1, Termination::Signaled(libc::SIGSEGV));
        job.rank_ended(0, Termination::Exited(1));
        assert_eq!(
            printed(&job),
            "mpiexec: rank 1 killed by signal 11 (SIGSEGV)"
        );
        assert_eq!(job.exit_status(), 139);
        for (signal, status) in [(libc::SIGTERM, 143), (libc::SIGKILL, 137)] {
            let mut job = local_job();
            job.rank_ended(2, Termination::Signaled(signal));
            assert_eq!(job.exit_status(), status);
        }
    }

    #[test]
    fn remote_rank_reported_by_its_proxy_is_named_with_pid_and_host() {
        let mut job = two_host_job();
        let mut proxy = connect_proxy(&mut job, 0);
        proxy.send(&FromProxy::Started { rank: 2, pid: 4321 }.line());
        proxy.send(
            &FromProxy::Exited {
                rank: 2,
                status: 4 << 8,
            }
            .line(),
        );
        job.read_control(0);
        assert_eq!(job.ending, None, "judged before its PMI connection closed");
        job.judge_reported();
        assert_eq!(
            printed(&job),
            "mpiexec: rank 2 (pid 4321 on node-b) exited with code 4"
        );
        assert_eq!(job.exit_status(), 4);
        // The ranks still running there get SIGTERM through the proxy.
        assert_eq!(proxy.receive(), format!("signal {}", libc::SIGTERM));
    }

    #[test]
    fn abort_code_decides_even_when_the_rank_then_exits() {
        let mut job = local_job();
        let abort = PmiMessage::parse("cmd=abort exitcode=7").unwrap();
        let actions = job.server.handle(1, &abort);
        job.apply(actions);
        assert_eq!(printed(&job), "mpiexec: rank 1 aborted the job with code 7");
        job.rank_ended(1, Termination::Exited(7));
        job.rank_ended(0, Termination::Signaled(libc::SIGTERM));
        assert_eq!(job.exit_status(), 7);
    }

    #[test]
    fn abort_sent_before_a_remote_rank_died_counts_first() {
        let mut job = two_host_job();
        let (ours, mut theirs) = UnixStream::pair().unwrap();
        job.ranks[1].connection = Some(PmiConnection::new(ours).unwrap());
        theirs.write_all(b"cmd=abort exitcode=9\n").unwrap();
        drop(theirs);
        job.ranks[1].reported = Some((Termination::Exited(1), Instant::now()));
        job.judge_reported();
        assert_eq!(printed(&job), "mpiexec: rank 1 aborted the job with code 9");
        assert_eq!(job.ranks[1].ended, Some(Termination::Exited(1)));
        assert_eq!(job.exit_status(), 9);
    }

    #[test]
    fn abort_with_code_0_exits_with_0() {
        let mut job = local_job();
        let abort = PmiMessage::parse("cmd=abort exitcode=0").unwrap();
        let actions = job.server.handle(0, &abort);
        job.apply(actions);
        assert!(job.ending.is_some() && job.kill_at.is_some());
        job.rank_ended(1, Termination::Signaled(libc::SIGTERM));
        assert_eq!(job.exit_status(), 0);
    }

    #[test]
    fn failure_before_an_abort_wins() {
        let mut job = local_job();
        job.rank_ended(0, Termination::Exited(2));
        let abort = PmiMessage::parse("cmd=abort exitcode=7").unwrap();
        let actions = job.server.handle(1, &abort);
        job.apply(actions);
        assert_eq!(printed(&job), "mpiexec: rank 0 exited with code 2");
        assert_eq!(job.exit_status(), 2);
    }

    #[test]
    fn timeout_gives_124() {
        let mut job = local_job();
        job.timeout = Some((Instant::now() + Duration::from_secs(3600), 3600));
        job.check_deadlines();
        assert_eq!(job.ending, None, "timed out an hour early");
        job.timeout = Some((Instant::now(), 5));
        job.check_deadlines();
        assert_eq!(printed(&job), "mpiexec: job timed out after 5 seconds");
        job.rank_ended(0, Termination::Signaled(libc::SIGTERM));
        job.rank_ended(1, Termination::Exited(1));
        assert_eq!(job.exit_status(), 124);
    }

    #[test]
    fn timeout_after_another_ending_changes_nothing() {
        let mut job = local_job();
        job.rank_ended(2, Termination::Exited(5));
        job.timeout = Some((Instant::now(), 5));
        job.check_deadlines();
        assert_eq!(job.exit_status(), 5);
    }

    #[test]
    fn lost_host_gives_255() {
        let mut job = two_host_job();
        job.proxies[0].launcher_ended = Some((Termination::Exited(255), Instant::now()));
        job.check_hosts();
        assert_eq!(
            printed(&job),
            "mpiexec: lost host node-b: its launcher `ssh node-b` exited with code 255 \
             before its proxy connected back"
        );
        assert!(job.proxies[0].lost);
        let given_up = Some(Termination::Signaled(libc::SIGKILL));
        assert_eq!(
            (job.ranks[1].ended, job.ranks[2].ended),
            (given_up, given_up)
        );
        job.rank_ended(0, Termination::Signaled(libc::SIGTERM));
        assert_eq!(job.exit_status(), 255);
    }

    #[test]
    fn start_failure_reported_by_a_proxy() {
        for (not_found, status) in [(true, 127), (false, 126)] {
            let mut job = two_host_job();
            let mut proxy = connect_proxy(&mut job, 0);
            let reason = "No such file or directory (os error 2)".to_string();
            proxy.send(
                &FromProxy::Failed {
                    rank: 2,
                    not_found,
                    reason,
                }
                .line(),
            );
            job.read_control(0);
            assert_eq!(
                printed(&job),
                "mpiexec: cannot start rank 2 on node-b: No such file or directory (os error 2)"
            );
            assert_eq!(job.ranks[2].ended, Some(Termination::Exited(status)));
            assert_eq!(job.exit_status(), status);
        }
    }

    #[test]
    fn protocol_error_gives_1() {
        let mut job = local_job();
        let (ours, mut theirs) = UnixStream::pair().unwrap();
        job.ranks[0].connection = Some(PmiConnection::new(ours).unwrap());
        theirs.write_all(b"hello\n").unwrap();
        job.read_rank(0);
        assert_eq!(
            printed(&job),
            "mpiexec: rank 0 broke the PMI protocol: PMI line does not start with `cmd=`: \"hello\""
        );
        assert_eq!(job.exit_status(), 1);
    }

    #[test]
    fn rank_gone_from_a_barrier_others_wait_in_gives_1() {
        let mut job = local_job();
        let barrier_in = PmiMessage::parse("cmd=barrier_in").unwrap();
        for rank in [0, 1] {
            assert!(job.server.handle(rank, &barrier_in).is_empty());
        }
        // A rank that ended inside the barrier is not what blocks it.
        job.rank_ended(0, Termination::Exited(0));
        job.check_barrier();
        assert_eq!(job.ending, None);
        job.rank_ended(2, Termination::Exited(0));
        assert_eq!(job.ending, None);
        job.check_barrier();
        assert_eq!(
            printed(&job),
            "mpiexec: rank 2 exited with code 0 while other ranks wait for it in a PMI barrier"
        );
        assert_eq!(job.exit_status(), 1);
    }

    #[test]
    fn interrupt_is_forwarded_and_gives_128_plus_the_signal() {
        let mut job = two_host_job();
        let mut proxy = connect_proxy(&mut job, 0);
        job.interrupted(libc::SIGINT);
        assert_eq!(
            job.ending,
            Some(Ending::Interrupted {
                signal: libc::SIGINT
            })
        );
        assert_eq!(job.ending.as_ref().unwrap().message(), None);
        assert_eq!(proxy.receive(), format!("signal {}", libc::SIGINT));
        assert!(job.kill_at.is_some());
        // A second one does not wait for the grace period.
        job.interrupted(libc::SIGTERM);
        assert_eq!(proxy.receive(), format!("signal {}", libc::SIGKILL));
        assert_eq!(job.kill_at, None);
        assert!(job.abandon_at.is_some());
        assert_eq!(job.exit_status(), 130);
    }

    #[test]
    fn proxies_get_sigkill_after_the_grace_then_are_cut_off() {
        let mut job = two_host_job();
        let mut proxy = connect_proxy(&mut job, 0);
        job.rank_ended(0, Termination::Exited(1));
        assert_eq!(proxy.receive(), format!("signal {}", libc::SIGTERM));
        job.kill_at = Some(Instant::now());
        job.check_deadlines();
        assert_eq!(proxy.receive(), format!("signal {}", libc::SIGKILL));
        assert_eq!(job.kill_at, None);
        job.ranks[2].reported = Some((Termination::Exited(0), Instant::now()));
        job.abandon_at = Some(Instant::now());
        job.check_deadlines();
        assert!(job.proxies[0].lost);
        assert_eq!(proxy.receive(), "", "the connection was not closed");
        // Rank 1 is given up; rank 2's reported end stands.
        assert_eq!(
            job.ranks[1].ended,
            Some(Termination::Signaled(libc::SIGKILL))
        );
        assert_eq!(job.ranks[2].ended, Some(Termination::Exited(0)));
        assert_eq!(job.exit_status(), 1);
    }

    #[test]
    fn first_signal_and_grace() {
        assert_eq!(
            first_signal(&Ending::Interrupted {
                signal: libc::SIGHUP
            }),
            (libc::SIGHUP, Duration::from_secs(2))
        );
        let timed_out = Ending::TimedOut { seconds: 1 };
        assert_eq!(
            first_signal(&timed_out),
            (libc::SIGTERM, Duration::from_millis(500))
        );
        let aborted = Ending::Aborted {
            who: crate::outcome::Who::world(0),
            code: 3,
        };
        assert_eq!(first_signal(&aborted).0, libc::SIGTERM);
    }
}
