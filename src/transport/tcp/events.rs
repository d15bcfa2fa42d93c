//! What happens to connections as their sockets become ready: accepting,
//! connecting, the handshake and the simultaneous-connect rule, reading
//! frames, closing. Every path that ends a connection goes through
//! [`TcpTransport::close`], which puts its peer's link back to idle (with a
//! growing delay before the next attempt when an attempt of ours failed).
use std::fmt::Display;
use std::time::Instant;

use super::connection::{connect_nonblocking, Connection, Placing, Received, Stage, PLACE_PREFIX};
use super::framing::LEN_BYTES;
use super::handshake::{could_be_hello, Rejection, HELLO_LEN};
use super::poller::{BROKEN, READABLE, WRITABLE};
use super::table::Token;
use super::{
    Link, TcpTransport, ACCEPTS_PER_POLL, FIRST_RETRY, LAST_RETRY, MAX_FRAME, MAX_HANDSHAKES,
    READ_BUDGET,
};
use crate::transport::{ProcessId, Sink, PLACE_HEAD};

impl TcpTransport {
    pub(super) fn start_connect(&mut self, dest: ProcessId) {
        let Some(addr) = self.peers.get(dest).and_then(|p| p.addr) else {
            return;
        };
        let stream = match connect_nonblocking(addr) {
            Ok(stream) => stream,
            Err(e) => return self.attempt_failed(dest, format!("connect to {addr}: {e}")),
        };
        let token = self
            .connections
            .insert(Connection::outgoing(stream, addr, dest));
        let conn = self.connections.get_mut(token).expect("just inserted");
        if let Err(e) = conn.register(&self.poller, token) {
            self.connections.remove(token);
            return self.attempt_failed(dest, format!("epoll: {e}"));
        }
        if let Some(peer) = self.peers.get_mut(dest) {
            peer.link = Link::Connecting(token);
        }
        log::debug!("tcp {}: connecting to process {dest} at {addr}", self.me);
    }

    fn attempt_failed(&mut self, dest: ProcessId, why: impl Display) {
        let Some(peer) = self.peers.get_mut(dest) else {
            return;
        };
        peer.failures = peer.failures.saturating_add(1);
        let delay = (FIRST_RETRY * (1 << (peer.failures - 1).min(10))).min(LAST_RETRY);
        peer.link = Link::Idle {
            retry_at: Some(Instant::now() + delay),
        };
        log::debug!(
            "tcp {}: attempt {} to reach process {dest} failed ({why}); next in {delay:?}",
            self.me,
            peer.failures
        );
    }

    /// Closes a connection and updates its peer's link.
    pub(super) fn close(&mut self, token: Token, why: impl Display) {
        let me = self.me;
        let Some(conn) = self.connections.remove(token) else {
            return;
        };
        match conn.stage {
            Stage::AwaitingHello { .. } => {
                self.handshakes -= 1;
                log::debug!("tcp {me}: dropped a connection from {}: {why}", conn.remote);
            }
            Stage::Connecting { peer } | Stage::AwaitingAnswer { peer } => {
                if self.peers.get(peer).map(|p| p.link) == Some(Link::Connecting(token)) {
                    self.attempt_failed(peer, why);
                } else {
                    log::debug!("tcp {me}: closed an attempt to reach process {peer}: {why}");
                }
            }
            Stage::Established { peer } => {
                if let Some(p) = self.peers.get_mut(peer) {
                    if p.link == Link::Up(token) {
                        p.link = Link::Idle { retry_at: None };
                    }
                }
                let unsent = conn.output.pending();
                let partial = conn.input.buffered().len();
                if unsent + partial > 0 {
                    log::warn!(
                        "tcp {me}: connection with process {peer} lost ({why}) with {unsent} bytes \
                         unsent and {partial} bytes of an incomplete frame"
                    );
                } else {
                    log::debug!("tcp {me}: connection with process {peer} closed: {why}");
                }
            }
        }
    }

    /// Brings a connection's poller registration up to date.
    pub(super) fn refresh(&mut self, token: Token) {
        let Some(conn) = self.connections.get_mut(token) else {
            return;
        };
        if let Err(e) = conn.update_interest(&self.poller, token) {
            self.close(token, format!("epoll: {e}"));
        }
    }

    pub(super) fn accept_waiting(&mut self) {
        for _ in 0..ACCEPTS_PER_POLL {
            let (stream, remote) = match self.listener.accept() {
                Ok(Some(accepted)) => accepted,
                Ok(None) => return,
                Err(e) => {
                    log::debug!("tcp {}: accept: {e}", self.me);
                    return;
                }
            };
            if self.handshakes >= MAX_HANDSHAKES {
                log::debug!(
                    "tcp {}: {} handshakes under way; dropping a connection from {remote}",
                    self.me,
                    self.handshakes
                );
                continue;
            }
            let token = self
                .connections
                .insert(Connection::incoming(stream, remote));
            let conn = self.connections.get_mut(token).expect("just inserted");
            if let Err(e) = conn.register(&self.poller, token) {
                self.connections.remove(token);
                log::debug!("tcp {}: epoll: {e}", self.me);
                continue;
            }
            self.handshakes += 1;
        }
    }

    /// Acts on one ready connection; returns the frames delivered.
    pub(super) fn service(&mut self, token: Token, flags: u32, sink: &mut dyn Sink) -> usize {
        let Some(conn) = self.connections.get_mut(token) else {
            return 0;
        };
        if let Stage::Connecting { peer } = conn.stage {
            if flags & (WRITABLE | BROKEN) == 0 {
                return 0;
            }
            match conn.connect_done() {
                Ok(false) => return 0,
                Ok(true) => {
                    conn.output.push(&self.credentials.hello(self.me, peer));
                    conn.stage = Stage::AwaitingAnswer { peer };
                }
                Err(e) => {
                    let why = format!("connect to {}: {e}", conn.remote);
                    self.close(token, why);
                    return 0;
                }
            }
        }
        if flags & WRITABLE != 0 {
            conn.write_blocked = false;
        }
        if let Err(e) = conn.flush() {
            self.close(token, format!("write: {e}"));
            return 0;
        }
        let delivered = if flags & (READABLE | BROKEN) != 0 {
            self.receive(token, sink)
        } else {
            0
        };
        self.refresh(token);
        delivered
    }

    /// Reads what a connection has (within the read budget) and acts on
    /// it after each read; returns the frames delivered (or placed).
    fn receive(&mut self, token: Token, sink: &mut dyn Sink) -> usize {
        let mut delivered = 0;
        let mut total = 0;
        loop {
            let Some(conn) = self.connections.get_mut(token) else {
                return delivered;
            };
            // During the handshake, read no byte beyond the hello.
            let limit = match conn.stage {
                Stage::AwaitingHello { .. } | Stage::AwaitingAnswer { .. } => {
                    HELLO_LEN - conn.input.buffered().len()
                }
                Stage::Established { .. } if conn.placing.is_some() => usize::MAX,
                Stage::Established { .. }
                    if conn.streaming && conn.input.buffered().len() < PLACE_PREFIX =>
                {
                    PLACE_PREFIX - conn.input.buffered().len()
                }
                Stage::Established { .. } => conn.input.frame_read_limit(MAX_FRAME),
                Stage::Connecting { .. } => return delivered,
            };
            let placing = conn.placing.is_some();
            let got = match if placing {
                conn.receive_placed()
            } else {
                conn.receive(limit)
            } {
                Ok(Received::Bytes(n)) => n,
                Ok(Received::Nothing) => return delivered,
                Ok(Received::End) => {
                    self.close(token, "closed by the other side");
                    return delivered;
                }
                Err(e) => {
                    self.close(token, format!("read: {e}"));
                    return delivered;
                }
            };
            total += got;
            match self.advance(token, sink) {
                Ok(n) => delivered += n,
                Err(why) => {
                    self.close(token, why);
                    return delivered;
                }
            }
            if (!placing && got < limit) || total >= READ_BUDGET {
                return delivered;
            }
        }
    }

    /// Moves a connection on with the bytes it has: checks a complete
    /// hello, finishes a placed frame, places or delivers complete frames.
    fn advance(&mut self, token: Token, sink: &mut dyn Sink) -> Result<usize, String> {
        let me = self.me;
        let conn = self.connections.get_mut(token).expect("a live connection");
        let peer = match conn.stage {
            Stage::Connecting { .. } => return Ok(0),
            Stage::Established { peer } => peer,
            Stage::AwaitingHello { .. } | Stage::AwaitingAnswer { .. } => {
                if !could_be_hello(conn.input.buffered()) {
                    return Err(Rejection::BadMagic.to_string());
                }
                if conn.input.buffered().len() < HELLO_LEN {
                    return Ok(0);
                }
                let hello: [u8; HELLO_LEN] = conn
                    .input
                    .take(HELLO_LEN)
                    .try_into()
                    .expect("HELLO_LEN bytes");
                match conn.stage {
                    Stage::AwaitingAnswer { peer } => {
                        self.credentials
                            .check_answer(&hello, me, peer)
                            .map_err(|r| format!("refused answer: {r}"))?;
                        self.established(token, peer)?;
                        peer
                    }
                    _ => {
                        let from = self
                            .credentials
                            .check(&hello, me)
                            .map_err(|r| format!("refused hello: {r}"))?;
                        self.admit(token, from)?;
                        from
                    }
                }
            }
        };
        let conn = self.connections.get_mut(token).expect("a live connection");
        let mut delivered = 0;
        loop {
            if let Some(p) = &conn.placing {
                if p.filled < p.body.len() {
                    return Ok(delivered);
                }
                let done = conn.placing.take().expect("checked");
                sink.placed(peer, &done.head, done.body.len());
                conn.streaming = true;
                delivered += 1;
            }
            if !conn.front_declined {
                if let Some(mut placing) = offer_placement(conn, peer, sink)? {
                    // The body bytes already read go first; the rest is read
                    // straight into the placement.
                    let buffered = conn.input.buffered().len();
                    let n = buffered.min(placing.body.len());
                    placing.body.as_mut_slice()[..n].copy_from_slice(&conn.input.take(n)[..n]);
                    placing.filled = n;
                    conn.placing = Some(placing);
                    continue;
                }
            }
            match conn
                .input
                .next_frame(MAX_FRAME)
                .map_err(|e| e.to_string())?
            {
                Some(frame) => {
                    sink.deliver(peer, frame);
                    conn.front_declined = false;
                    conn.streaming = false;
                    delivered += 1;
                }
                None => return Ok(delivered),
            }
        }
    }

    /// Our attempt to reach `peer` got its answer: the connection is up.
    fn established(&mut self, token: Token, peer: ProcessId) -> Result<(), String> {
        let entry = self.peers.get_mut(peer).expect("an attempt has its peer");
        if entry.link != Link::Connecting(token) {
            return Err(format!("attempt to reach process {peer} superseded"));
        }
        entry.link = Link::Up(token);
        entry.failures = 0;
        let conn = self.connections.get_mut(token).expect("a live connection");
        conn.stage = Stage::Established { peer };
        log::debug!("tcp {}: connected to process {peer}", self.me);
        Ok(())
    }

    /// An accepted connection said hello as process `from`: keep it and
    /// answer, unless the simultaneous-connect rule keeps another one.
    fn admit(&mut self, token: Token, from: ProcessId) -> Result<(), String> {
        let me = self.me;
        if from == me {
            return Err("hello from this very process".into());
        }
        let Some(peer) = self.peers.get_or_add(from) else {
            return Err(format!("process id {from} is out of range"));
        };
        match peer.link {
            Link::Up(_) => return Err(format!("process {from} is connected already")),
            Link::Connecting(_) if me < from => {
                return Err(format!(
                    "simultaneous connect with process {from}: this process's connection wins"
                ))
            }
            _ => {}
        }
        let previous = std::mem::replace(&mut peer.link, Link::Up(token));
        peer.failures = 0;
        self.handshakes -= 1;
        let conn = self.connections.get_mut(token).expect("a live connection");
        conn.stage = Stage::Established { peer: from };
        conn.output.push(&self.credentials.hello(me, from));
        let remote = conn.remote;
        let flushed = conn.flush();
        if let Link::Connecting(ours) = previous {
            self.close(
                ours,
                format!("simultaneous connect: process {from}'s connection wins"),
            );
        }
        flushed.map_err(|e| format!("write: {e}"))?;
        log::debug!("tcp {me}: accepted process {from} from {remote}");
        Ok(())
    }

    /// Closes accepted connections that have not said hello in time.
    pub(super) fn expire_handshakes(&mut self) {
        let now = Instant::now();
        let timeout = self.handshake_timeout;
        let expired: Vec<Token> = self
            .connections
            .iter()
            .filter(|(_, c)| {
                matches!(c.stage, Stage::AwaitingHello { since } if now - since >= timeout)
            })
            .map(|(t, _)| t)
            .collect();
        for token in expired {
            self.close(token, format!("no hello within {timeout:?}"));
        }
    }
}

/// Frames smaller than this are always delivered whole (placing them would
/// save little and cost a read).
const PLACE_MIN: usize = 16 * 1024;

/// Asks the sink to place the frame at the front of `conn`'s input when it
/// is large, incomplete and its head has arrived; takes its prefix and
/// head out of the input if placed. Remembers a refusal for that frame.
fn offer_placement(
    conn: &mut Connection,
    peer: ProcessId,
    sink: &mut dyn Sink,
) -> Result<Option<Placing>, String> {
    let buffered = conn.input.buffered();
    if buffered.len() < PLACE_PREFIX {
        return Ok(None);
    }
    let len = u32::from_le_bytes(buffered[..LEN_BYTES].try_into().expect("4 bytes")) as usize;
    if len > MAX_FRAME {
        return Err(format!(
            "a frame of {len} bytes exceeds the limit of {MAX_FRAME}"
        ));
    }
    if len < PLACE_MIN || buffered.len() >= LEN_BYTES + len {
        return Ok(None);
    }
    let head: [u8; PLACE_HEAD] = buffered[LEN_BYTES..PLACE_PREFIX]
        .try_into()
        .expect("PLACE_HEAD bytes");
    match sink.place(peer, &head, len) {
        Some(body) if body.len() == len - PLACE_HEAD => {
            conn.input.take(PLACE_PREFIX);
            Ok(Some(Placing {
                head,
                body,
                filled: 0,
            }))
        }
        Some(body) => Err(format!(
            "the sink placed {} bytes of a frame body of {}",
            body.len(),
            len - PLACE_HEAD
        )),
        None => {
            conn.front_declined = true;
            Ok(None)
        }
    }
}
