//! A running job: the ranks, their PMI connections, the proxies of remote
//! hosts and the single-threaded poll loop that serves PMI, accepts and
//! authenticates TCP connections, watches signals and reaps processes until
//! the job is over.
//!
//! Local ranks are children of mpiexec with an inherited PMI socket. The
//! ranks of every other host are started by a proxy there (see
//! `proxy.rs`), itself started through the launcher; the proxy connects
//! back, receives the job, reports each rank's pid and end, and relays
//! signals. Remote ranks open their own PMI connection (`PMI_PORT`).
//!
//! This file holds the [`Job`] and its poll loop; the loop's work is done
//! in `starting.rs` (local ranks, listeners), `admission.rs` (accepting TCP
//! connections, admitting ranks and proxies) with `handshake.rs` (a
//! connection's first line and the job secret), `pmi.rs` (a rank's PMI
//! traffic), `spawning.rs` (starting the children of a PMI `spawn` as a
//! new process group), `proxies.rs` (remote hosts), `reaping.rs` (learning how ranks
//! ended) and `ending.rs` (bringing the job down, the exit status);
//! `testing.rs` builds jobs for their unit tests.
//!
//! Every process of the job, original rank or spawned child, is a [`Rank`]
//! indexed by its global id (see `groups.rs`): the world's ranks first,
//! then each spawn's children. A spawned child runs on mpiexec's host or on
//! a host of the job (info key `host`): there its host's proxy starts it,
//! and from then on everything below (reaping or reports, failures,
//! signals, the timeout, a lost host) treats it like a rank of that host.
//!
//! Invariants:
//! - [`run`] returns only after every started process has ended (reaped here,
//!   reported by its proxy, or given up with its lost host) and every
//!   launcher process has been reaped; when the job failed, the rest of the
//!   local process group is killed too;
//! - the first [`Ending`] decides the message and the exit status; from then
//!   on every rank gets SIGTERM (or the forwarded signal), then SIGKILL after
//!   a short grace period; remote ranks get them through their proxy, and a
//!   proxy that does not bring its ranks down in time is cut off (its
//!   launcher killed, its connection closed, which makes it kill them);
//! - a rank's last PMI messages are read before its death is judged, so an
//!   `abort` followed by `exit` counts as the abort (for a remote rank, its
//!   end waits up to [`REPORT_GRACE`] for its PMI connection to close);
//! - a TCP connection is served only after its first line carried the job
//!   secret: `cmd=initack pmiid=<rank> secret=<s>` from a remote rank, or
//!   `cmd=proxy id=<host> secret=<s>` from a proxy; anything else is
//!   dropped before it can reach the PMI server.

mod admission;
mod ending;
mod handshake;
mod pmi;
mod proxies;
mod reaping;
mod spawning;
mod starting;
#[cfg(test)]
mod testing;

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, TcpListener};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

use crate::connection::PmiConnection;
use crate::kvs::Kvs;
use crate::launch::JobSpec;
use crate::outcome::{Ending, Termination, Who};
use crate::pmi_server::PmiServer;
use crate::signals::SignalPipe;
use crate::stdin_forward::StdinForwarder;

use handshake::Pending;
use proxies::Proxy;
use starting::open_listeners;

pub use reaping::{become_subreaper, reap_leftovers};

/// How often to check whether a backgrounded mpiexec came to the foreground.
const FOREGROUND_RECHECK: Duration = Duration::from_millis(250);
/// How long a reported remote exit waits for the rank's PMI connection to
/// close (its last messages come first); also how long a launcher's exit
/// and its proxy's disconnection may be apart before the host is lost.
const REPORT_GRACE: Duration = Duration::from_secs(1);
/// Poll interval while something remote is waiting on a clock.
const REMOTE_TICK: Duration = Duration::from_millis(100);

/// One process of the job (a rank of the world or a spawned child).
struct Rank {
    /// Whether a proxy starts it (on another host).
    remote: bool,
    /// The node of the placement it runs on (`None`: a spawned child on
    /// mpiexec's host outside the placement).
    node: Option<usize>,
    /// Its pid (local, or as its proxy reported it).
    pid: Option<libc::pid_t>,
    connection: Option<PmiConnection>,
    ended: Option<Termination>,
    /// A remote rank's end as its proxy reported it, and when.
    reported: Option<(Termination, Instant)>,
    /// Its failure was reported and the job went on
    /// (`-disable-auto-cleanup`).
    lost: bool,
    /// A child of a spawn that failed to start all of its processes: it
    /// was killed, and its end is not judged.
    abandoned: bool,
}

impl Rank {
    /// A process not started yet.
    fn new(remote: bool, node: Option<usize>) -> Rank {
        Rank {
            remote,
            node,
            pid: None,
            connection: None,
            ended: None,
            reported: None,
            lost: false,
            abandoned: false,
        }
    }
}

/// What a polled descriptor belongs to.
#[derive(Debug, Clone, Copy)]
enum Source {
    Signals,
    Rank(usize),
    Stdin,
    StdinPipe,
    Listener(usize),
    Pending,
    Control(usize),
}

/// A running job. Its methods live in this module's files, by concern.
struct Job {
    spec: JobSpec,
    /// Every process, by global id.
    ranks: Vec<Rank>,
    rank_of_pid: HashMap<libc::pid_t, usize>,
    proxy_of_pid: HashMap<libc::pid_t, usize>,
    pgid: libc::pid_t,
    server: PmiServer,
    signals: SignalPipe,
    stdin: Option<StdinForwarder>,
    listeners: Vec<(IpAddr, TcpListener)>,
    pending: Vec<Pending>,
    proxies: Vec<Proxy>,
    timeout: Option<(Instant, u64)>,
    ending: Option<Ending>,
    /// The first rank failure the job went on after
    /// (`-disable-auto-cleanup`): it decides the exit status if nothing
    /// ends the job.
    survived: Option<Ending>,
    kill_at: Option<Instant>,
    abandon_at: Option<Instant>,
    all_ended_at: Option<Instant>,
}

/// Runs the job described by `spec` to its end and returns mpiexec's exit
/// status.
pub fn run(spec: JobSpec, timeout_secs: Option<u64>) -> i32 {
    let listeners = match open_listeners(&spec) {
        Ok(l) => l,
        Err(e) => {
            say!("mpiexec: {e}");
            return 2;
        }
    };
    let signals = match SignalPipe::install() {
        Ok(s) => s,
        Err(e) => {
            say!("mpiexec: cannot set up signal handling: {e}");
            return 1;
        }
    };
    become_subreaper();
    let mut job = Job::new(spec, listeners, signals, timeout_secs);
    job.start_ranks();
    job.serve();
    job.finish()
}

impl Job {
    /// The job of `spec`, nothing started yet; `timeout_secs` counts from
    /// now.
    fn new(
        spec: JobSpec,
        listeners: Vec<(IpAddr, TcpListener)>,
        signals: SignalPipe,
        timeout_secs: Option<u64>,
    ) -> Job {
        let kvs = Kvs::for_job(
            format!("kvs_{}", spec.jobid.replace('-', "_")),
            spec.placement.process_mapping(),
        );
        let ranks = (0..spec.size())
            .map(|rank| {
                let node = spec.placement.node_of_rank[rank];
                Rank::new(!spec.placement.nodes[node].local, Some(node))
            })
            .collect();
        let mut server = PmiServer::new(spec.size(), kvs, spec.universe_size);
        server.set_nodes(spec.placement.node_of_rank.clone());
        Job {
            server,
            ranks,
            rank_of_pid: HashMap::new(),
            proxy_of_pid: HashMap::new(),
            pgid: 0,
            signals,
            stdin: None,
            listeners,
            pending: Vec::new(),
            proxies: Vec::new(),
            timeout: timeout_secs.map(|s| (Instant::now() + Duration::from_secs(s), s)),
            ending: None,
            survived: None,
            kill_at: None,
            abandon_at: None,
            all_ended_at: None,
            spec,
        }
    }

    /// The processes a proxy serves on `node`: the node's ranks and the
    /// children spawned there.
    fn remote_on(&self, node: usize) -> Vec<usize> {
        (0..self.ranks.len())
            .filter(|&r| self.ranks[r].remote && self.ranks[r].node == Some(node))
            .collect()
    }

    /// How messages name process `rank` (a global id): by its rank in its
    /// group.
    fn who(&self, rank: usize) -> Who {
        let r = &self.ranks[rank];
        let place = self.server.groups().locate(rank);
        Who {
            rank: place.map_or(rank, |p| p.rank),
            group: place.map_or(0, |p| p.group),
            pid: r.pid,
            host: r
                .node
                .filter(|_| r.remote)
                .map(|node| self.spec.placement.nodes[node].name.clone()),
        }
    }

    /// The poll loop: runs until every rank has ended and every launcher
    /// has been reaped.
    fn serve(&mut self) {
        while self.ranks.iter().any(|r| r.ended.is_none())
            || self.proxies.iter().any(|p| p.launcher.is_some())
        {
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
            self.service_pending();
            self.reap();
            self.judge_reported();
            self.check_hosts();
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
        for (i, (_, listener)) in self.listeners.iter().enumerate() {
            fds.push(pollfd(listener.as_raw_fd(), libc::POLLIN));
            sources.push(Source::Listener(i));
        }
        for p in &self.pending {
            fds.push(pollfd(p.stream.as_raw_fd(), libc::POLLIN));
            sources.push(Source::Pending);
        }
        for (i, proxy) in self.proxies.iter().enumerate() {
            if let Some(c) = &proxy.control {
                let mut events = libc::POLLIN;
                if c.wants_write() {
                    events |= libc::POLLOUT;
                }
                fds.push(pollfd(c.fd(), events));
                sources.push(Source::Control(i));
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

    /// Whether some remote state waits on a clock (handshakes, proxies
    /// connecting, reported exits, lost hosts, launchers exiting).
    fn remote_clock_running(&self) -> bool {
        let all_ended = self.all_ended_at.is_some();
        !self.pending.is_empty()
            || self.abandon_at.is_some()
            || self
                .ranks
                .iter()
                .any(|r| r.ended.is_none() && r.reported.is_some())
            || self.proxies.iter().any(|p| {
                (!p.lost
                    && (!p.connected || p.launcher_ended.is_some() || p.control_closed.is_some()))
                    || (all_ended && p.launcher.is_some())
            })
    }

    fn poll_timeout_ms(&self, recheck: bool) -> libc::c_int {
        let now = Instant::now();
        let timeout_at = match (self.ending.is_none(), self.timeout) {
            (true, Some((at, _))) => Some(at),
            _ => None,
        };
        let recheck_at = recheck.then(|| now + FOREGROUND_RECHECK);
        let remote_at = self.remote_clock_running().then(|| now + REMOTE_TICK);
        match [timeout_at, self.kill_at, recheck_at, remote_at]
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
            Source::Listener(i) => self.accept(i),
            // Pending connections are all serviced after each poll.
            Source::Pending => {}
            Source::Control(p) => {
                if revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0 {
                    self.read_control(p);
                }
                if revents & libc::POLLOUT != 0 {
                    self.flush_control(p);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::testing::{add_proxy, job};

    #[test]
    fn who_names_rank_pid_and_host() {
        let mut job = job(&[("node-a", true, 2), ("node-b", false, 2)]);
        job.ranks[1].pid = Some(77);
        job.ranks[2].pid = Some(88);
        assert_eq!(job.who(0).to_string(), "rank 0");
        assert_eq!(job.who(1).to_string(), "rank 1 (pid 77)");
        assert_eq!(job.who(2).to_string(), "rank 2 (pid 88 on node-b)");
        assert_eq!(job.who(3).to_string(), "rank 3 (on node-b)");
    }

    #[test]
    fn poll_waits_without_limit_when_no_clock_runs() {
        let job = job(&[("node-a", true, 2)]);
        assert_eq!(job.poll_timeout_ms(false), -1);
        // A backgrounded mpiexec looks again for the terminal soon.
        assert!((1..=251).contains(&job.poll_timeout_ms(true)));
    }

    #[test]
    fn poll_wakes_for_the_job_timeout_only_until_the_job_ends() {
        let mut job = job(&[("node-a", true, 1)]);
        job.timeout = Some((Instant::now() + Duration::from_secs(3600), 3600));
        let ms = job.poll_timeout_ms(false);
        assert!((3_000_000..=3_600_001).contains(&ms), "{ms}");
        job.ending = Some(crate::outcome::Ending::TimedOut { seconds: 1 });
        assert_eq!(job.poll_timeout_ms(false), -1);
    }

    #[test]
    fn poll_ticks_while_a_proxy_has_not_connected() {
        let mut job = job(&[("node-a", true, 1), ("node-b", false, 2)]);
        let id = add_proxy(&mut job, 1);
        assert!((1..=101).contains(&job.poll_timeout_ms(false)));
        job.proxies[id].connected = true;
        assert_eq!(job.poll_timeout_ms(false), -1);
        job.proxies[id].control_closed = Some(Instant::now());
        assert!((1..=101).contains(&job.poll_timeout_ms(false)));
        job.proxies[id].lost = true;
        assert_eq!(job.poll_timeout_ms(false), -1);
    }
}
