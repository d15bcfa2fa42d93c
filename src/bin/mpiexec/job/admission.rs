//! Admission of TCP connections: accepting them on the listeners, reading
//! their first line (see `handshake.rs`), and handing those that carry the
//! job secret to the PMI server (a remote rank) or to the proxy code (a
//! proxy).
//!
//! Invariant: a TCP connection is served only after its first line carried
//! the job secret: `cmd=initack pmiid=<rank> secret=<s>` from a remote
//! rank, or `cmd=proxy id=<host> secret=<s>` from a proxy; anything else
//! (another command, a wrong or missing secret, no complete line before the
//! peer closes, the line limit or the handshake timeout) is dropped before
//! it can reach the PMI server. A rank is admitted only if it runs on a
//! remote host, has not ended and has no connection yet; a proxy only if
//! its host has one that is neither connected nor lost. At most
//! [`MAX_PENDING`] connections wait to authenticate at once.

use std::io;
use std::net::SocketAddr;
use std::os::fd::OwnedFd;
use std::time::Instant;

use oxmpi::bootstrap::pmi::wire::PmiMessage;

use crate::connection::{LineConnection, PmiConnection};
use crate::proxy_wire::{ToProxy, MAX_CONTROL_LINE};

use super::handshake::{check_first_line, Claim, FirstLine, Pending};
use super::Job;

/// Unauthenticated connections kept at once (the oldest is dropped).
const MAX_PENDING: usize = 64;

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
                    self.pending
                        .push(Pending::new(stream, peer, Instant::now()));
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
            match self.pending[index].read_first_line(now) {
                FirstLine::Complete(end) => {
                    let p = self.pending.remove(index);
                    self.admit(p, end);
                }
                FirstLine::Missing => {
                    let p = self.pending.remove(index);
                    log::debug!(
                        "dropped a connection from {} that sent no first line",
                        p.peer
                    );
                }
                FirstLine::Waiting => index += 1,
            }
        }
    }

    /// Handles the first line (ending at `end`) of an accepted connection.
    fn admit(&mut self, pending: Pending, end: usize) {
        let peer = pending.peer;
        let line = String::from_utf8_lossy(&pending.bytes[..end]).into_owned();
        let rest = pending.bytes[end + 1..].to_vec();
        let claim = match check_first_line(&line, &self.spec.secret) {
            Ok(claim) => claim,
            Err(refusal) => {
                match refusal.stderr_line(peer) {
                    // A wrong or missing secret from something that speaks
                    // our protocol is worth a line: a rank refused here
                    // fails to start.
                    Some(line) => eprintln!("{line}"),
                    None => log::debug!("dropped a connection from {peer}: {refusal}"),
                }
                return;
            }
        };
        let socket = OwnedFd::from(pending.stream);
        match claim {
            Claim::Proxy { id } => self.admit_proxy(id, socket, &rest, peer),
            Claim::Rank { rank, initack } => self.admit_rank(rank, socket, &rest, &initack, peer),
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
