//! A running job: the ranks, their PMI connections and the single-threaded
//! poll loop that serves PMI, watches signals and reaps processes until the
//! job is over.
//!
//! Invariants:
//! - [`run`] returns only after every started rank has been reaped (and,
//!   when the job failed, after the rest of its process group was killed);
//! - the first [`Ending`] decides the message and the exit status; from then
//!   on every rank gets SIGTERM (or the forwarded signal), then SIGKILL after
//!   a short grace period;
//! - a rank's last PMI messages are read before its death is judged, so an
//!   `abort` followed by `exit` counts as the abort.

use std::collections::HashMap;
use std::io;
use std::time::{Duration, Instant};

use crate::connection::{Incoming, PmiConnection};
use crate::kvs::Kvs;
use crate::launch::{start_rank, JobSpec, RankStdin};
use crate::outcome::{Ending, Termination};
use crate::pmi_server::{Action, PmiServer};
use crate::signals::{signal_group, SignalPipe};
use crate::stdin_forward::StdinForwarder;

/// Time between SIGTERM and SIGKILL when the job is brought down.
const KILL_GRACE: Duration = Duration::from_millis(500);
/// Same, after mpiexec forwarded a SIGINT/SIGTERM/SIGHUP it received.
const INTERRUPT_GRACE: Duration = Duration::from_secs(2);
/// How often to check whether a backgrounded mpiexec came to the foreground.
const FOREGROUND_RECHECK: Duration = Duration::from_millis(250);
/// How long to wait for killed leftovers of a failed job to be reapable.
const LEFTOVER_REAP: Duration = Duration::from_millis(200);

/// One started rank.
struct Rank {
    pid: libc::pid_t,
    connection: Option<PmiConnection>,
    ended: Option<Termination>,
}

/// What a polled descriptor belongs to.
#[derive(Debug, Clone, Copy)]
enum Source {
    Signals,
    Rank(usize),
    Stdin,
    StdinPipe,
}

struct Job {
    spec: JobSpec,
    ranks: Vec<Rank>,
    rank_of_pid: HashMap<libc::pid_t, usize>,
    pgid: libc::pid_t,
    server: PmiServer,
    signals: SignalPipe,
    stdin: Option<StdinForwarder>,
    timeout: Option<(Instant, u64)>,
    ending: Option<Ending>,
    kill_at: Option<Instant>,
}

/// Runs the job described by `spec` to its end and returns mpiexec's exit
/// status.
pub fn run(spec: JobSpec, timeout_secs: Option<u64>) -> i32 {
    let signals = match SignalPipe::install() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("mpiexec: cannot set up signal handling: {e}");
            return 1;
        }
    };
    become_subreaper();
    let kvs = Kvs::for_single_node_job(format!("kvs_{}", spec.jobid.replace('-', "_")), spec.size);
    let mut job = Job {
        server: PmiServer::new(spec.size, kvs),
        ranks: Vec::with_capacity(spec.size),
        rank_of_pid: HashMap::new(),
        pgid: 0,
        signals,
        stdin: None,
        timeout: timeout_secs.map(|s| (Instant::now() + Duration::from_secs(s), s)),
        ending: None,
        kill_at: None,
        spec,
    };
    job.start_ranks();
    job.serve();
    job.finish()
}

/// Makes orphaned descendants of the ranks mpiexec's children, so that they
/// are reaped (and killed with a failed job) rather than left to init.
fn become_subreaper() {
    // SAFETY: prctl with PR_SET_CHILD_SUBREAPER only sets a process flag.
    if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } != 0 {
        log::debug!("PR_SET_CHILD_SUBREAPER: {}", io::Error::last_os_error());
    }
}

impl Job {
    fn start_ranks(&mut self) {
        let mut rank0_stdin = RankStdin::Inherit;
        match StdinForwarder::for_terminal() {
            Ok(Some((forwarder, read_end))) => {
                self.stdin = Some(forwarder);
                rank0_stdin = RankStdin::Pipe(read_end);
            }
            Ok(None) => {}
            Err(e) => log::warn!("cannot forward the terminal to rank 0: {e}"),
        }
        let mut rank0_stdin = Some(rank0_stdin);
        for rank in 0..self.spec.size {
            let stdin = rank0_stdin.take().unwrap_or(RankStdin::Null);
            let pgid = (rank > 0).then_some(self.pgid);
            let started = start_rank(&self.spec, rank, pgid, stdin).and_then(|started| {
                let connection = PmiConnection::new(started.pmi)?;
                Ok((started.pid, connection))
            });
            match started {
                Ok((pid, connection)) => {
                    if rank == 0 {
                        self.pgid = pid;
                    }
                    self.rank_of_pid.insert(pid, rank);
                    self.ranks.push(Rank {
                        pid,
                        connection: Some(connection),
                        ended: None,
                    });
                }
                Err(e) => {
                    let not_found = e.kind() == io::ErrorKind::NotFound;
                    self.end(Ending::StartFailed {
                        rank,
                        problem: e.to_string(),
                        not_found,
                    });
                    return;
                }
            }
        }
    }

    /// The poll loop: runs until every started rank has been reaped.
    fn serve(&mut self) {
        while self.ranks.iter().any(|r| r.ended.is_none()) {
            let (mut pollfds, sources, recheck) = self.poll_set();
            let timeout_ms = self.poll_timeout_ms(recheck);
            // SAFETY: `pollfds` is a valid, exclusively borrowed array of
            // `pollfds.len()` entries for the duration of the call.
            let n = unsafe {
                libc::poll(
                    pollfds.as_mut_ptr(),
                    pollfds.len() as libc::nfds_t,
                    timeout_ms,
                )
            };
            if n < 0 {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    log::error!("poll: {e}");
                    std::thread::sleep(Duration::from_millis(10));
                }
            }
            for (pfd, source) in pollfds.iter().zip(sources) {
                if n > 0 && pfd.revents != 0 {
                    self.on_ready(source, pfd.revents);
                }
            }
            self.reap();
            self.check_barrier();
            self.check_deadlines();
        }
    }

    fn poll_set(&self) -> (Vec<libc::pollfd>, Vec<Source>, bool) {
        let pollfd = |fd, events| libc::pollfd {
            fd,
            events,
            revents: 0,
        };
        let mut fds = vec![pollfd(self.signals.fd(), libc::POLLIN)];
        let mut sources = vec![Source::Signals];
        for (rank, r) in self.ranks.iter().enumerate() {
            if let Some(c) = &r.connection {
                let mut events = libc::POLLIN;
                if c.wants_write() {
                    events |= libc::POLLOUT;
                }
                fds.push(pollfd(c.fd(), events));
                sources.push(Source::Rank(rank));
            }
        }
        let mut recheck = false;
        if let Some(forwarder) = &self.stdin {
            let interest = forwarder.interest();
            if interest.read_stdin {
                fds.push(pollfd(0, libc::POLLIN));
                sources.push(Source::Stdin);
            }
            if let Some(fd) = interest.write_pipe {
                fds.push(pollfd(fd, libc::POLLOUT));
                sources.push(Source::StdinPipe);
            }
            recheck = interest.recheck_soon;
        }
        (fds, sources, recheck)
    }

    fn poll_timeout_ms(&self, recheck: bool) -> libc::c_int {
        let now = Instant::now();
        let timeout_at = match (self.ending.is_none(), self.timeout) {
            (true, Some((at, _))) => Some(at),
            _ => None,
        };
        let recheck_at = recheck.then(|| now + FOREGROUND_RECHECK);
        match [timeout_at, self.kill_at, recheck_at]
            .into_iter()
            .flatten()
            .min()
        {
            None => -1,
            Some(at) => {
                let wait = at.saturating_duration_since(now);
                // Round up so the loop does not wake just before the deadline.
                (wait.as_millis() + 1).min(libc::c_int::MAX as u128) as libc::c_int
            }
        }
    }

    fn on_ready(&mut self, source: Source, revents: libc::c_short) {
        match source {
            Source::Signals => {
                for signal in self.signals.drain() {
                    if signal != libc::SIGCHLD {
                        self.interrupted(signal);
                    }
                }
            }
            Source::Rank(rank) => {
                if revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0 {
                    self.read_rank(rank);
                }
                if revents & libc::POLLOUT != 0 {
                    self.flush_rank(rank);
                }
            }
            Source::Stdin => {
                if let Some(f) = &mut self.stdin {
                    f.on_stdin_ready();
                }
            }
            Source::StdinPipe => {
                if let Some(f) = &mut self.stdin {
                    f.on_pipe_writable();
                }
            }
        }
    }

    /// Reads and handles everything rank `rank` has sent.
    fn read_rank(&mut self, rank: usize) {
        let Some(connection) = self.ranks[rank].connection.as_mut() else {
            return;
        };
        let (incoming, eof) = connection.read_available();
        for item in incoming {
            match item {
                Incoming::Request(request) => {
                    log::debug!("rank {rank}: {request}");
                    let actions = self.server.handle(rank, &request);
                    self.apply(actions);
                }
                Incoming::Malformed(e) => self.apply(vec![Action::ProtocolError {
                    rank,
                    problem: e.to_string(),
                }]),
            }
        }
        if eof && self.ranks[rank].connection.is_some() {
            if !self.server.has_finalized(rank) {
                log::debug!("rank {rank} closed its PMI connection");
            }
            self.ranks[rank].connection = None;
        }
    }

    fn flush_rank(&mut self, rank: usize) {
        let Some(connection) = self.ranks[rank].connection.as_mut() else {
            return;
        };
        if let Err(e) = connection.flush() {
            log::debug!("rank {rank}: PMI write failed: {e}");
            self.ranks[rank].connection = None;
        } else if connection.is_done() {
            self.ranks[rank].connection = None;
        }
    }

    fn apply(&mut self, actions: Vec<Action>) {
        for action in actions {
            match action {
                Action::Reply(to, message) => {
                    if let Some(c) = self.ranks.get_mut(to).and_then(|r| r.connection.as_mut()) {
                        c.send(&message);
                        self.flush_rank(to);
                    }
                }
                Action::Close(rank) => {
                    if let Some(c) = self.ranks[rank].connection.as_mut() {
                        c.close_when_flushed();
                        self.flush_rank(rank);
                    }
                }
                Action::Abort { rank, code } => self.end(Ending::Aborted { rank, code }),
                Action::ProtocolError { rank, problem } => {
                    let pid = self.ranks[rank].pid;
                    self.end(Ending::ProtocolError { rank, pid, problem });
                }
            }
        }
    }

    /// Reaps every process that has ended (ranks and adopted descendants).
    fn reap(&mut self) {
        loop {
            let mut status: libc::c_int = 0;
            // SAFETY: waitpid writes the status into our local variable.
            let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
            if pid <= 0 {
                return;
            }
            let Some(&rank) = self.rank_of_pid.get(&pid) else {
                log::debug!("reaped descendant pid {pid}");
                continue;
            };
            // What it sent before dying (an abort, say) comes first.
            self.read_rank(rank);
            self.ranks[rank].connection = None;
            let how = Termination::from_wait_status(status);
            self.ranks[rank].ended = Some(how);
            log::debug!("rank {rank} (pid {pid}) ended: {how:?}");
            if rank == 0 {
                if let Some(f) = &mut self.stdin {
                    f.close();
                }
            }
            if !how.is_success() {
                self.end(Ending::RankFailed { rank, pid, how });
            }
        }
    }

    /// A barrier that a rank which has already ended did not enter can
    /// never complete: end the job rather than hang.
    fn check_barrier(&mut self) {
        if self.ending.is_some() || self.server.barrier_waiters() == 0 {
            return;
        }
        let gone = self
            .ranks
            .iter()
            .enumerate()
            .find(|(rank, r)| r.ended.is_some() && !self.server.is_in_barrier(*rank));
        if let Some((rank, r)) = gone {
            let (pid, how) = (r.pid, r.ended.unwrap_or(Termination::Exited(0)));
            self.end(Ending::LeftBarrier { rank, pid, how });
        }
    }

    fn check_deadlines(&mut self) {
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
    }

    /// mpiexec received `signal`: forward it, or escalate to SIGKILL when
    /// the job is already ending.
    fn interrupted(&mut self, signal: libc::c_int) {
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
    fn end(&mut self, ending: Ending) {
        if self.ending.is_some() {
            log::debug!("job already ending; also: {ending:?}");
            return;
        }
        if let Some(line) = ending.message() {
            eprintln!("{line}");
        }
        let (signal, grace) = match ending {
            Ending::Interrupted { signal } => (signal, INTERRUPT_GRACE),
            _ => (libc::SIGTERM, KILL_GRACE),
        };
        self.ending = Some(ending);
        if let Some(f) = &mut self.stdin {
            f.close();
        }
        self.signal_job(signal);
        self.kill_at = Some(Instant::now() + grace);
    }

    /// Sends `signal` to the job's process group and to every rank not yet
    /// reaped (in case one left the group).
    fn signal_job(&self, signal: libc::c_int) {
        signal_group(self.pgid, signal);
        for r in self.ranks.iter().filter(|r| r.ended.is_none()) {
            // SAFETY: kill(2) on a child that has not been reaped, so its pid
            // cannot have been reused.
            unsafe {
                libc::kill(r.pid, signal);
            }
        }
    }

    /// After the last rank: clean up leftovers and compute the exit status.
    fn finish(mut self) -> i32 {
        match &self.ending {
            Some(_) => {
                // Descendants still in the job's group die with it.
                signal_group(self.pgid, libc::SIGKILL);
                self.reap_leftovers(LEFTOVER_REAP);
            }
            None => self.reap_leftovers(Duration::ZERO),
        }
        self.ending.as_ref().map_or(0, Ending::exit_code)
    }

    /// Reaps adopted descendants that have ended, waiting up to `patience`
    /// for more to end (never for ones that keep running).
    fn reap_leftovers(&mut self, patience: Duration) {
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
}
