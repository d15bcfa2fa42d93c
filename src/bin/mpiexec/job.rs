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
//! Invariants:
//! - [`run`] returns only after every started rank has ended (reaped here,
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

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

use oxmpi::bootstrap::pmi::wire::{PmiMessage, MAX_LINE_LEN};

use crate::connection::{Incoming, LineConnection, PmiConnection};
use crate::environment::PmiAccess;
use crate::kvs::Kvs;
use crate::launch::{
    launcher_command, proxy_header, start_launcher, start_rank, JobSpec, RankStdin,
};
use crate::outcome::{Ending, Termination, Who};
use crate::pmi_server::{Action, PmiServer};
use crate::proxy_wire::{FromProxy, ProxyJob, ProxyRank, ToProxy, MAX_CONTROL_LINE};
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
/// How long a reported remote exit waits for the rank's PMI connection to
/// close (its last messages come first); also how long a launcher's exit
/// and its proxy's disconnection may be apart before the host is lost.
const REPORT_GRACE: Duration = Duration::from_secs(1);
/// How long a proxy has to connect back once its launcher started.
const PROXY_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// How long an accepted connection has to authenticate.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// Unauthenticated connections kept at once (the oldest is dropped).
const MAX_PENDING: usize = 64;
/// After SIGKILL went to the proxies: how long before they are cut off.
const ABANDON_GRACE: Duration = Duration::from_secs(1);
/// After the last rank ended: how long launchers may take to exit.
const LAUNCHER_EXIT_GRACE: Duration = Duration::from_secs(10);
/// Poll interval while something remote is waiting on a clock.
const REMOTE_TICK: Duration = Duration::from_millis(100);

/// One rank of the job.
struct Rank {
    /// Whether a proxy starts it (on another host).
    remote: bool,
    /// Its pid (local, or as its proxy reported it).
    pid: Option<libc::pid_t>,
    connection: Option<PmiConnection>,
    ended: Option<Termination>,
    /// A remote rank's end as its proxy reported it, and when.
    reported: Option<(Termination, Instant)>,
}

/// The proxy of one remote host.
struct Proxy {
    /// Its node in the placement.
    node: usize,
    host: String,
    /// The listener address it and its ranks were given.
    server: SocketAddr,
    /// The launcher command, for messages.
    command: String,
    launcher: Option<libc::pid_t>,
    launcher_ended: Option<(Termination, Instant)>,
    control: Option<LineConnection>,
    connected: bool,
    control_closed: Option<Instant>,
    started_at: Instant,
    /// Lost (or cut off): its remaining ranks were given up.
    lost: bool,
}

/// An accepted TCP connection that has not authenticated yet.
struct Pending {
    stream: TcpStream,
    bytes: Vec<u8>,
    deadline: Instant,
    peer: SocketAddr,
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

struct Job {
    spec: JobSpec,
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
            eprintln!("mpiexec: {e}");
            return 2;
        }
    };
    let signals = match SignalPipe::install() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("mpiexec: cannot set up signal handling: {e}");
            return 1;
        }
    };
    become_subreaper();
    let kvs = Kvs::for_job(
        format!("kvs_{}", spec.jobid.replace('-', "_")),
        spec.placement.process_mapping(),
    );
    let ranks = (0..spec.size())
        .map(|rank| Rank {
            remote: !spec.placement.nodes[spec.placement.node_of_rank[rank]].local,
            pid: None,
            connection: None,
            ended: None,
            reported: None,
        })
        .collect();
    let mut job = Job {
        server: PmiServer::new(spec.size(), kvs),
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
        kill_at: None,
        abandon_at: None,
        all_ended_at: None,
        spec,
    };
    job.start_ranks();
    job.serve();
    job.finish()
}

/// One listener per address handed to remote hosts (none for a local job).
fn open_listeners(spec: &JobSpec) -> Result<Vec<(IpAddr, TcpListener)>, String> {
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

/// Makes orphaned descendants of the ranks mpiexec's children, so that they
/// are reaped (and killed with a failed job) rather than left to init.
pub fn become_subreaper() {
    // SAFETY: prctl with PR_SET_CHILD_SUBREAPER only sets a process flag.
    if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } != 0 {
        log::debug!("PR_SET_CHILD_SUBREAPER: {}", io::Error::last_os_error());
    }
}

/// A pipe, both ends close-on-exec: (read end, write end).
fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: pipe2 succeeded, so both descriptors are open and ours.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

impl Job {
    fn node_of(&self, rank: usize) -> usize {
        self.spec.placement.node_of_rank[rank]
    }

    /// How messages name `rank`.
    fn who(&self, rank: usize) -> Who {
        let r = &self.ranks[rank];
        Who {
            rank,
            pid: r.pid,
            host: r
                .remote
                .then(|| self.spec.placement.nodes[self.node_of(rank)].name.clone()),
        }
    }

    fn start_ranks(&mut self) {
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
                Ok((pid, connection)) => {
                    if self.pgid == 0 {
                        self.pgid = pid;
                    }
                    self.rank_of_pid.insert(pid, rank);
                    let r = &mut self.ranks[rank];
                    r.pid = Some(pid);
                    r.connection = Some(connection);
                }
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
    fn give_up_unstarted(&mut self) {
        for r in &mut self.ranks {
            if r.pid.is_none() && r.ended.is_none() {
                r.ended = Some(Termination::Signaled(libc::SIGKILL));
            }
        }
    }

    /// Starts one launcher per remote node.
    fn start_proxies(&mut self) {
        let Some(remote) = self.spec.remote.clone() else {
            return;
        };
        let nodes = self.spec.placement.nodes.clone();
        for (node_index, node) in nodes.iter().enumerate() {
            if node.local {
                continue;
            }
            let Some(addr) = remote.addresses.get(node_index).copied().flatten() else {
                continue;
            };
            let Some(port) = self
                .listeners
                .iter()
                .find(|(a, _)| *a == addr)
                .and_then(|(_, l)| l.local_addr().ok())
            else {
                continue;
            };
            let id = self.proxies.len();
            let argv = launcher_command(&remote, &node.name);
            let command = argv
                .iter()
                .map(|a| a.to_string_lossy())
                .collect::<Vec<_>>()
                .join(" ");
            log::debug!("host {}: starting `{command}`", node.name);
            let header = proxy_header(port, id, &self.spec.secret);
            let has_rank0 = node.ranks.first() == Some(&0);
            let started = pipe().and_then(|(read_end, write_end)| {
                if has_rank0 {
                    self.stdin = Some(StdinForwarder::to_pipe(write_end, header.into_bytes())?);
                } else {
                    // A line fits in the pipe: this write does not block.
                    std::fs::File::from(write_end).write_all(header.as_bytes())?;
                }
                start_launcher(&argv, read_end)
            });
            self.proxies.push(Proxy {
                node: node_index,
                host: node.name.clone(),
                server: port,
                command: remote
                    .command
                    .iter()
                    .map(|a| a.to_string_lossy())
                    .chain([node.name.as_str().into()])
                    .collect::<Vec<_>>()
                    .join(" "),
                launcher: None,
                launcher_ended: None,
                control: None,
                connected: false,
                control_closed: None,
                started_at: Instant::now(),
                lost: false,
            });
            match started {
                Ok(pid) => {
                    self.proxies[id].launcher = Some(pid);
                    self.proxy_of_pid.insert(pid, id);
                }
                Err(e) => {
                    let problem = format!("cannot run its launcher `{command}`: {e}");
                    self.lose_host(id, problem);
                    // The hosts after this one are never started.
                    let later: Vec<usize> = nodes[node_index + 1..]
                        .iter()
                        .filter(|n| !n.local)
                        .flat_map(|n| n.ranks.iter().copied())
                        .collect();
                    for rank in later {
                        self.ranks[rank].ended = Some(Termination::Signaled(libc::SIGKILL));
                    }
                    return;
                }
            }
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

    /// Accepts every waiting connection on listener `i`.
    fn accept(&mut self, i: usize) {
        loop {
            match self.listeners[i].1.accept() {
                Ok((stream, peer)) => {
                    log::debug!("connection from {peer}");
                    if stream.set_nonblocking(true).is_err() {
                        continue;
                    }
                    let _ = stream.set_nodelay(true);
                    if self.pending.len() >= MAX_PENDING {
                        let dropped = self.pending.remove(0);
                        log::warn!(
                            "too many unauthenticated connections: dropped {}",
                            dropped.peer
                        );
                    }
                    self.pending.push(Pending {
                        stream,
                        bytes: Vec::new(),
                        deadline: Instant::now() + HANDSHAKE_TIMEOUT,
                        peer,
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    if e.kind() != io::ErrorKind::WouldBlock {
                        log::debug!("accept: {e}");
                    }
                    return;
                }
            }
        }
    }

    /// Reads what unauthenticated connections sent; admits those whose
    /// first line carries the secret, drops the rest.
    fn service_pending(&mut self) {
        let now = Instant::now();
        let mut index = 0;
        while index < self.pending.len() {
            let p = &mut self.pending[index];
            let mut closed = false;
            let mut chunk = [0u8; 1024];
            while !p.bytes.contains(&b'\n') && p.bytes.len() <= MAX_LINE_LEN {
                match p.stream.read(&mut chunk) {
                    Ok(0) => {
                        closed = true;
                        break;
                    }
                    Ok(n) => p.bytes.extend_from_slice(&chunk[..n]),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(_) => {
                        closed = true;
                        break;
                    }
                }
            }
            let line_end = p.bytes.iter().position(|&b| b == b'\n');
            match line_end {
                Some(end) if end < MAX_LINE_LEN => {
                    let p = self.pending.remove(index);
                    self.admit(p, end);
                }
                _ if closed || p.bytes.len() > MAX_LINE_LEN || now >= p.deadline => {
                    let p = self.pending.remove(index);
                    log::debug!(
                        "dropped a connection from {} that sent no first line",
                        p.peer
                    );
                }
                _ => index += 1,
            }
        }
    }

    /// Handles the first line (ending at `end`) of an accepted connection.
    fn admit(&mut self, pending: Pending, end: usize) {
        let peer = pending.peer;
        let line = String::from_utf8_lossy(&pending.bytes[..end]).into_owned();
        let rest = pending.bytes[end + 1..].to_vec();
        let Ok(msg) = PmiMessage::parse(&line) else {
            log::debug!("dropped a connection from {peer}: first line is not PMI");
            return;
        };
        let (what, id_key) = match msg.cmd.as_str() {
            "initack" => ("rank", "pmiid"),
            "proxy" => ("proxy", "id"),
            _ => {
                log::debug!(
                    "dropped a connection from {peer}: it began with cmd={}",
                    msg.cmd
                );
                return;
            }
        };
        let id = msg.get(id_key).and_then(|v| v.parse::<usize>().ok());
        let claimed = msg.get(id_key).unwrap_or("?").to_string();
        let refuse = |why: &str| {
            // A wrong or missing secret from something that speaks our
            // protocol is worth a line: a rank refused here fails to start.
            eprintln!("mpiexec: refused a PMI connection from {peer} ({what} {claimed}): {why}");
        };
        let Some(given) = msg.get("secret") else {
            refuse("it sent no job secret");
            return;
        };
        if !crate::net::secret_matches(&self.spec.secret, given) {
            refuse("wrong job secret");
            return;
        }
        let Some(id) = id else {
            refuse(&format!("missing or bad {id_key}"));
            return;
        };
        let socket = OwnedFd::from(pending.stream);
        if what == "proxy" {
            self.admit_proxy(id, socket, &rest, peer);
        } else {
            self.admit_rank(id, socket, &rest, &msg, peer);
        }
    }

    fn admit_rank(
        &mut self,
        rank: usize,
        socket: OwnedFd,
        rest: &[u8],
        initack: &PmiMessage,
        peer: SocketAddr,
    ) {
        let acceptable = self
            .ranks
            .get(rank)
            .is_some_and(|r| r.remote && r.ended.is_none() && r.connection.is_none());
        if !acceptable {
            log::warn!("refused a PMI connection from {peer} for rank {rank}: not a running remote rank without a connection");
            return;
        }
        match PmiConnection::with_input(socket, rest) {
            Ok(connection) => {
                log::debug!("rank {rank} connected from {peer}");
                self.ranks[rank].connection = Some(connection);
                let actions = self.server.handle(rank, initack);
                self.apply(actions);
                // Lines that came with the first one.
                self.read_rank(rank);
            }
            Err(e) => log::warn!("rank {rank}'s connection from {peer}: {e}"),
        }
    }

    fn admit_proxy(&mut self, id: usize, socket: OwnedFd, rest: &[u8], peer: SocketAddr) {
        if self.proxies.get(id).is_none_or(|p| p.connected || p.lost) {
            log::warn!("refused a proxy connection from {peer} for host {id}");
            return;
        }
        let mut control = match LineConnection::new(socket, rest, MAX_CONTROL_LINE) {
            Ok(c) => c,
            Err(e) => {
                log::warn!("proxy connection from {peer}: {e}");
                return;
            }
        };
        let job = self.proxy_job(id);
        for line in job.lines() {
            control.queue(line.as_bytes());
            control.queue(b"\n");
        }
        log::debug!(
            "host {}: proxy connected from {peer}",
            self.proxies[id].host
        );
        let proxy = &mut self.proxies[id];
        proxy.connected = true;
        proxy.control = Some(control);
        // A signal sent while the proxy was connecting must still arrive.
        if self.ending.is_some() {
            self.send_control(id, ToProxy::Signal(libc::SIGKILL));
        }
        self.flush_control(id);
    }

    /// What proxy `id` starts.
    fn proxy_job(&self, id: usize) -> ProxyJob {
        let proxy = &self.proxies[id];
        let node = &self.spec.placement.nodes[proxy.node];
        let port = crate::net::pmi_port_value(proxy.server);
        ProxyJob {
            jobid: self.spec.jobid.clone(),
            program: self.spec.program.path.clone(),
            argv0: self.spec.program.given.clone(),
            args: self.spec.args.clone(),
            workdir: self.spec.workdir.clone(),
            env: self.spec.env.clone(),
            ranks: node
                .ranks
                .iter()
                .map(|&rank| ProxyRank {
                    rank,
                    env: self
                        .spec
                        .rank_variables(rank, PmiAccess::Port(port.clone())),
                    stdin: rank == 0,
                })
                .collect(),
        }
    }

    fn send_control(&mut self, id: usize, msg: ToProxy) {
        if let Some(c) = self.proxies[id].control.as_mut() {
            c.queue(msg.line().as_bytes());
            c.queue(b"\n");
        }
        self.flush_control(id);
    }

    fn flush_control(&mut self, id: usize) {
        let Some(c) = self.proxies[id].control.as_mut() else {
            return;
        };
        if let Err(e) = c.flush() {
            log::debug!("host {}: control write failed: {e}", self.proxies[id].host);
            self.control_closed(id);
        }
    }

    fn control_closed(&mut self, id: usize) {
        let proxy = &mut self.proxies[id];
        if proxy.control.take().is_some() {
            proxy.control_closed = Some(Instant::now());
        }
    }

    /// Reads and handles what proxy `id` reported.
    fn read_control(&mut self, id: usize) {
        let Some(control) = self.proxies[id].control.as_mut() else {
            return;
        };
        let (lines, eof) = control.read_lines();
        for line in lines {
            let report = line
                .map_err(|e| e.to_string())
                .and_then(|l| FromProxy::parse(&l));
            match report {
                Ok(report) => self.on_report(id, report),
                Err(problem) => {
                    let problem = format!("its proxy broke the protocol: {problem}");
                    self.lose_host(id, problem);
                    return;
                }
            }
        }
        if eof {
            log::debug!(
                "host {}: proxy closed its connection",
                self.proxies[id].host
            );
            self.control_closed(id);
        }
    }

    fn on_report(&mut self, id: usize, report: FromProxy) {
        let rank = match &report {
            FromProxy::Started { rank, .. }
            | FromProxy::Failed { rank, .. }
            | FromProxy::Exited { rank, .. } => *rank,
        };
        if rank >= self.ranks.len() || self.node_of(rank) != self.proxies[id].node {
            let problem = format!("its proxy reported on rank {rank}, which is not there");
            self.lose_host(id, problem);
            return;
        }
        log::debug!("host {}: {}", self.proxies[id].host, report.line());
        match report {
            FromProxy::Started { pid, .. } => self.ranks[rank].pid = Some(pid),
            FromProxy::Failed {
                not_found, reason, ..
            } => {
                let code = if not_found { 127 } else { 126 };
                self.ranks[rank].ended = Some(Termination::Exited(code));
                self.ranks[rank].connection = None;
                self.end(Ending::StartFailed {
                    rank,
                    host: Some(self.proxies[id].host.clone()),
                    problem: reason,
                    not_found,
                });
            }
            FromProxy::Exited { status, .. } => {
                if self.ranks[rank].ended.is_none() {
                    let how = Termination::from_wait_status(status);
                    self.ranks[rank].reported = Some((how, Instant::now()));
                }
            }
        }
    }

    /// Judges the reported ends of remote ranks whose PMI connection has
    /// closed (or that waited long enough for it).
    fn judge_reported(&mut self) {
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
    fn rank_ended(&mut self, rank: usize, how: Termination) {
        self.ranks[rank].ended = Some(how);
        log::debug!("{} ended: {how:?}", self.who(rank));
        if rank == 0 {
            if let Some(f) = &mut self.stdin {
                f.close();
            }
        }
        if !how.is_success() {
            self.end(Ending::RankFailed {
                who: self.who(rank),
                how,
            });
        }
    }

    /// Decides whether a remote host is lost: its launcher exited or its
    /// proxy disconnected with ranks still running there, or the proxy never
    /// connected.
    fn check_hosts(&mut self) {
        let now = Instant::now();
        for id in 0..self.proxies.len() {
            let p = &self.proxies[id];
            if p.lost {
                continue;
            }
            let running: Vec<usize> = self.spec.placement.nodes[p.node]
                .ranks
                .iter()
                .copied()
                .filter(|&r| self.ranks[r].ended.is_none() && self.ranks[r].reported.is_none())
                .collect();
            let launcher_text = |how: Termination| match how {
                Termination::Exited(code) => {
                    format!("its launcher `{}` exited with code {code}", p.command)
                }
                Termination::Signaled(signal) => format!(
                    "its launcher `{}` was killed by signal {signal} ({})",
                    p.command,
                    crate::signals::signal_name(signal)
                ),
            };
            let problem = if !p.connected {
                if let Some((how, _)) = p.launcher_ended {
                    Some(format!(
                        "{} before its proxy connected back",
                        launcher_text(how)
                    ))
                } else if now >= p.started_at + PROXY_CONNECT_TIMEOUT {
                    Some(format!(
                        "its proxy did not connect back to {} within {} seconds \
                         (can {} reach that address? see -pmi-addr)",
                        crate::net::pmi_port_value(p.server),
                        PROXY_CONNECT_TIMEOUT.as_secs(),
                        p.host
                    ))
                } else {
                    None
                }
            } else if running.is_empty() {
                None
            } else {
                let gone_for_long = |t: Option<Instant>| t.is_some_and(|t| now >= t + REPORT_GRACE);
                let launcher_at = p.launcher_ended.map(|(_, t)| t);
                let both = launcher_at.is_some() && p.control_closed.is_some();
                if both || gone_for_long(launcher_at) || gone_for_long(p.control_closed) {
                    let what = match p.launcher_ended {
                        Some((how, _)) => launcher_text(how),
                        None => "its proxy closed its connection".to_string(),
                    };
                    let list = running
                        .iter()
                        .map(|r| r.to_string())
                        .collect::<Vec<_>>()
                        .join(",");
                    let ranks = if running.len() == 1 { "rank" } else { "ranks" };
                    Some(format!("{what} while {ranks} {list} ran there"))
                } else {
                    None
                }
            };
            if let Some(problem) = problem {
                self.lose_host(id, problem);
            }
        }
    }

    /// Gives up host `id`: its remaining ranks count as ended, its proxy is
    /// cut off, and the job ends.
    fn lose_host(&mut self, id: usize, problem: String) {
        self.cut_off(id);
        let host = self.proxies[id].host.clone();
        self.end(Ending::HostLost { host, problem });
    }

    /// Closes proxy `id`'s connection (it then kills its ranks), kills its
    /// launcher, and marks its unfinished ranks as ended.
    fn cut_off(&mut self, id: usize) {
        let proxy = &mut self.proxies[id];
        proxy.lost = true;
        proxy.control = None;
        if let Some(pid) = proxy.launcher {
            // SAFETY: kill(2) on a child that has not been reaped, so its pid
            // cannot have been reused.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
        let node = proxy.node;
        for &rank in &self.spec.placement.nodes[node].ranks {
            let r = &mut self.ranks[rank];
            if r.ended.is_none() {
                r.ended = Some(
                    r.reported
                        .map_or(Termination::Signaled(libc::SIGKILL), |(how, _)| how),
                );
                r.connection = None;
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
                    let who = self.who(rank);
                    self.end(Ending::ProtocolError { who, problem });
                }
            }
        }
    }

    /// Reaps every process that has ended (local ranks, launchers and
    /// adopted descendants).
    fn reap(&mut self) {
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
            .find(|(rank, r)| r.ended.is_some() && !self.server.is_in_barrier(*rank))
            .map(|(rank, r)| (rank, r.ended.unwrap_or(Termination::Exited(0))));
        if let Some((rank, how)) = gone {
            let who = self.who(rank);
            self.end(Ending::LeftBarrier { who, how });
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
    fn finish(self) -> i32 {
        match &self.ending {
            Some(_) => {
                // Descendants still in the job's group die with it.
                signal_group(self.pgid, libc::SIGKILL);
                reap_leftovers(LEFTOVER_REAP);
            }
            None => reap_leftovers(Duration::ZERO),
        }
        self.ending.as_ref().map_or(0, Ending::exit_code)
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
