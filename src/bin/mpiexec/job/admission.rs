//! Admission of TCP connections: accepting them on the listeners, reading
//! their first line, and handing those that carry the job secret to the
//! PMI server (a remote rank) or to the proxy code (a proxy).
//!
//! Invariant: a TCP connection is served only after its first line carried
//! the job secret: `cmd=initack pmiid=<rank> secret=<s>` from a remote
//! rank, or `cmd=proxy id=<host> secret=<s>` from a proxy; anything else
//! (another command, a wrong or missing secret, no complete line before the
//! peer closes, the line limit or the handshake timeout) is dropped before
//! it can reach the PMI server. At most [`MAX_PENDING`] connections wait
//! to authenticate at once.

use std::io::{self, Read};
use std::net::{SocketAddr, TcpStream};
use std::os::fd::OwnedFd;
use std::time::{Duration, Instant};

use oxmpi::bootstrap::pmi::wire::{PmiMessage, MAX_LINE_LEN};

use crate::connection::{LineConnection, PmiConnection};
use crate::proxy_wire::{ToProxy, MAX_CONTROL_LINE};

use super::Job;

/// How long an accepted connection has to authenticate.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// Unauthenticated connections kept at once (the oldest is dropped).
const MAX_PENDING: usize = 64;

/// An accepted TCP connection that has not authenticated yet.
pub(super) struct Pending {
    pub(super) stream: TcpStream,
    bytes: Vec<u8>,
    deadline: Instant,
    peer: SocketAddr,
}

impl Job {
    /// Accepts every waiting connection on listener `i`.
    pub(super) fn accept(&mut self, i: usize) {
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
    pub(super) fn service_pending(&mut self) {
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
}
