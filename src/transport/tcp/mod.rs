//! The TCP transport: frames between processes that share no memory (other
//! hosts, or any peer with `OXMPI_TRANSPORT=tcp`). One connection per pair
//! of processes, made lazily on the first frame to a peer; every socket is
//! nonblocking and one epoll set reports which ones are ready.
//!
//! Wire format, per connection:
//! 1. The connecting side sends a hello (`handshake`: magic `OXMPITCP`,
//!    protocol version, sender and intended receiver ranks, epoch, hash of
//!    the job id, job secret; 104 bytes). The accepting side checks it and
//!    only then answers with its own hello, which the connecting side
//!    checks in turn. The secret travels unencrypted: it keeps strays and
//!    other jobs out, not an eavesdropper on the network.
//! 2. Then frames, both ways: a u32 length (little-endian, at most
//!    [`MAX_FRAME`]) followed by that many bytes.
//!
//! Invariants:
//! - No byte of a connection reaches `poll`'s `deliver` before its hello
//!   has been checked; a connection with a wrong hello (garbage, another
//!   job or epoch, a wrong secret, a hello cut short or never finished
//!   within the handshake timeout) is closed and logged at debug level
//!   only.
//! - At most one established connection per peer, so frames to a peer
//!   arrive in the order they were sent. When two processes connect to
//!   each other at once, the connection made by the lower rank wins: the
//!   lower rank refuses the other one's hello, and the higher rank drops
//!   its own attempt when the lower rank's hello arrives. A side writes
//!   frames only on a connection whose hello it accepted (the accepting
//!   side) or whose answer it checked (the connecting side), so the
//!   connection that loses carries none.
//! - A hello of another epoch is refused and its sender retries with a
//!   growing delay (at most 200 ms), so frames of a newer epoch wait in the
//!   sender until the receiver has entered that epoch, never dropped.
//! - Bounded memory: a peer's unsent bytes grow past [`SEND_BOUND`] by at
//!   most one frame (then `try_send` refuses), and received bytes are
//!   buffered only up to one frame beyond a read chunk. A large transfer
//!   to one peer therefore never holds up small frames to others; large
//!   messages are receiver-driven above this layer (RTS/CTS, then pieces
//!   of at most [`MAX_FRAME`] bytes).
//! - Nothing blocks: connects, reads and writes are nonblocking; a process
//!   with nothing to do sleeps in [`TcpTransport::wait`] or on the fd from
//!   `as_raw_fd` (readable when a socket is ready).
//! - Dropping the transport (or [`TcpTransport::renew`] for connections)
//!   closes every socket it opened.
//!
//! Parts: [`address`] (which address to listen on), `listener`,
//! `connection` (one socket and its buffers), `handshake` (the hello),
//! `framing` (length-prefixed frames over a byte stream), `poller` (epoll),
//! `table` (connections by token), `events` (what happens when a socket
//! is ready).

pub mod address;
mod connection;
mod events;
mod framing;
#[cfg(test)]
mod fuzz;
mod handshake;
mod listener;
mod peers;
mod poller;
mod table;

#[cfg(test)]
mod tests;

use peers::PeerTable;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::os::fd::{AsRawFd, RawFd};
use std::time::{Duration, Instant};

use super::{EpochTag, ProcessId, Sink, Transport};
use connection::Stage;
use handshake::Credentials;
use listener::Listener;
use poller::{Poller, READABLE};
use table::{ConnectionTable, Token, LISTENER};

pub use address::listen_address;
pub use handshake::SECRET_MAX;

/// The largest frame one `try_send` carries.
pub const MAX_FRAME: usize = 256 * 1024;
/// Unsent bytes to one peer beyond which `try_send` refuses new frames.
/// Only the kernel's socket buffer drains while the process computes, so a
/// larger bound would only let the bytes go cold in the cache before the
/// kernel copies them.
pub const SEND_BOUND: usize = 1024 * 1024;
/// How long an accepted connection may take to send its hello.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// Accepted connections still owing their hello, at most.
const MAX_HANDSHAKES: usize = 1024;
/// Bytes read from one connection per poll (fairness among peers).
const READ_BUDGET: usize = 1 << 20;
const ACCEPTS_PER_POLL: usize = 64;
const EVENTS_PER_POLL: usize = 64;
/// Delays between failed connection attempts to one peer.
const FIRST_RETRY: Duration = Duration::from_millis(1);
const LAST_RETRY: Duration = Duration::from_millis(200);

/// How this process stands with one peer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Link {
    /// No connection; the next `try_send` connects (not before `retry_at`).
    Idle { retry_at: Option<Instant> },
    /// Our connection attempt, not yet through its handshake.
    Connecting(Token),
    /// The established connection (ours or the peer's).
    Up(Token),
}

struct Peer {
    /// Where the peer listens (from its business card), once known.
    addr: Option<SocketAddr>,
    link: Link,
    /// Failed attempts since the last established connection.
    failures: u32,
}

impl Peer {
    fn new(addr: Option<SocketAddr>) -> Peer {
        Peer {
            addr,
            link: Link::Idle { retry_at: None },
            failures: 0,
        }
    }
}

pub struct TcpTransport {
    me: ProcessId,
    credentials: Credentials,
    listener: Listener,
    local_addr: SocketAddr,
    poller: Poller,
    events: Vec<libc::epoll_event>,
    /// Entries of `events` filled by `wait` and not yet acted on (the next
    /// `poll` uses them instead of asking epoll again).
    waited: usize,
    peers: PeerTable,
    connections: ConnectionTable,
    /// Accepted connections in `Stage::AwaitingHello`.
    handshakes: usize,
    handshake_timeout: Duration,
    /// Polls since epoll last looked at every socket (see `poll_directly`).
    direct_polls: u32,
}

impl TcpTransport {
    /// Listens on an ephemeral port of `bind` for the peers of process
    /// `me` in `epoch` of job `job_id`, whose secret is `secret` (at most
    /// [`SECRET_MAX`] bytes).
    pub fn new(
        me: ProcessId,
        epoch: EpochTag,
        job_id: &str,
        secret: &str,
        bind: IpAddr,
    ) -> io::Result<TcpTransport> {
        let credentials = Credentials::new(job_id, epoch, secret)?;
        let listener = Listener::bind(bind)?;
        let local_addr = listener.local_addr()?;
        let poller = Poller::new()?;
        poller.add(listener.as_raw_fd(), LISTENER, READABLE)?;
        log::debug!("tcp {me}: epoch {epoch}: listening on {local_addr}");
        Ok(TcpTransport {
            me,
            credentials,
            listener,
            local_addr,
            poller,
            events: poller::event_buffer(EVENTS_PER_POLL),
            waited: 0,
            peers: PeerTable::default(),
            connections: ConnectionTable::default(),
            handshakes: 0,
            handshake_timeout: HANDSHAKE_TIMEOUT,
            direct_polls: 0,
        })
    }

    /// Where peers reach this process (for its business card).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    pub fn me(&self) -> ProcessId {
        self.me
    }

    pub fn epoch(&self) -> EpochTag {
        self.credentials.epoch()
    }

    /// Records where `peer` listens; the connection is made on the first
    /// `try_send` to it. A connection the peer made to us is used as is.
    pub fn connect_peer(&mut self, peer: ProcessId, addr: SocketAddr) {
        debug_assert_ne!(peer, self.me, "frames to oneself go through `self`");
        match self.peers.get_or_add(peer) {
            Some(p) => p.addr = Some(addr),
            None => log::error!("tcp {}: process id {peer} is out of range", self.me),
        }
    }

    /// Whether frames to `peer` go out now (handshake done).
    pub fn is_connected(&self, peer: ProcessId) -> bool {
        self.peers
            .get(peer)
            .is_some_and(|p| matches!(p.link, Link::Up(_)))
    }

    /// Failed connection attempts to `peer` since the last success (the
    /// caller decides when a peer counts as unreachable).
    pub fn connect_failures(&self, peer: ProcessId) -> u32 {
        self.peers.get(peer).map_or(0, |p| p.failures)
    }

    /// Bytes accepted by `try_send` and not yet taken by the kernel, over
    /// all peers (finalize drains them before dropping the transport).
    pub fn pending_output(&self) -> usize {
        self.connections
            .iter()
            .map(|(_, c)| c.output.pending())
            .sum()
    }

    /// Whether any connection exists, established or still in its
    /// handshake (the transport then has traffic to look at).
    #[inline]
    pub fn has_connections(&self) -> bool {
        !self.connections.is_empty()
    }

    /// Established connections.
    pub fn connection_count(&self) -> usize {
        self.connections
            .iter()
            .filter(|(_, c)| matches!(c.stage, Stage::Established { .. }))
            .count()
    }

    /// How long an accepted connection may take to send its hello.
    pub fn set_handshake_timeout(&mut self, timeout: Duration) {
        self.handshake_timeout = timeout;
    }

    /// Sleeps until a socket is ready (something to read or accept, room
    /// for pending output, a connect finished) or `timeout` passes, capped
    /// at the next connection retry. Returns whether a socket is ready.
    pub fn wait(&mut self, timeout: Duration) -> io::Result<bool> {
        let now = Instant::now();
        let next_retry = self
            .peers
            .values()
            .filter_map(|p| match p.link {
                Link::Idle { retry_at: Some(at) } if at > now && p.addr.is_some() => Some(at - now),
                _ => None,
            })
            .min();
        let timeout = next_retry.map_or(timeout, |r| r.min(timeout));
        self.waited = self.poller.wait(&mut self.events, timeout)?;
        Ok(self.waited > 0)
    }

    /// Starts `epoch` on the same listener (`MPIR_CVAR_FINALIZE_ATEXIT`):
    /// every connection of the previous epoch is closed and peers are
    /// found again through their cards.
    pub fn renew(&mut self, epoch: EpochTag) {
        self.waited = 0;
        self.connections.clear();
        self.peers.clear();
        self.handshakes = 0;
        self.credentials = self.credentials.with_epoch(epoch);
        log::debug!("tcp {}: epoch {epoch} on {}", self.me, self.local_addr);
    }
}

/// Sleeps until `fd` (the transport's epoll set, from `as_raw_fd`) is
/// readable or `timeout` passes. Used without the transport itself (the
/// runtime lock is not held while sleeping); a closed fd just ends the
/// sleep.
pub fn wait_readable(fd: RawFd, timeout: Duration) {
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = libc::c_int::try_from(timeout.as_millis().max(1)).unwrap_or(libc::c_int::MAX);
    // SAFETY: one valid pollfd for the duration of the call.
    unsafe { libc::poll(&mut pfd, 1, ms) };
}

/// Connections read directly (without epoll) by a poll, at most.
const DIRECT_MAX: usize = 4;
/// Every this many polls, epoll looks at every socket (the listener's new
/// connections, above all). Rarely: an `epoll_wait` in the middle of a
/// spinning wait costs more than a direct read (the TCP ping-pong's
/// latency, side by side with plain TCP, was about 1.6% lower with 256
/// than with 16, in 20 paired runs), and a connection being accepted
/// waits at most a few hundred microseconds longer.
const EPOLL_EVERY: u32 = 256;

/// A frame body of this size or more is never copied into a connection's
/// output behind other bytes: it waits until it can be written directly.
const COPY_BODY_MAX: usize = 16 * 1024;

impl TcpTransport {
    /// The established connection to `dest` when it may take a frame of
    /// `len` bytes now: its pending output is at most `bound` after a
    /// flush. Starts connecting when there is no connection.
    fn room_for(&mut self, dest: ProcessId, len: usize, bound: usize) -> Option<Token> {
        assert!(
            len <= MAX_FRAME,
            "a frame of {len} bytes exceeds the TCP transport's limit of {MAX_FRAME}"
        );
        let peer = self.peers.get(dest)?;
        let token = match peer.link {
            Link::Up(token) => token,
            Link::Connecting(_) => return None,
            Link::Idle { retry_at } => {
                if retry_at.is_none_or(|at| Instant::now() >= at) {
                    self.start_connect(dest);
                }
                return None;
            }
        };
        let conn = self
            .connections
            .get_mut(token)
            .expect("an established link names a live connection");
        if conn.output.pending() > bound {
            if let Err(e) = conn.flush() {
                self.close(token, format!("write: {e}"));
                return None;
            }
            if conn.output.pending() > bound {
                self.refresh(token);
                return None;
            }
        }
        Some(token)
    }

    /// With a few quiet established connections and nothing else going on,
    /// reads them directly: a read that finds nothing costs what an
    /// `epoll_wait` costs, and one that finds a frame saves the
    /// `epoll_wait` before it (the latency path). Every
    /// `EPOLL_EVERY`-th poll, and whenever a connection waits to write or
    /// a handshake is under way, epoll looks at everything. Returns `None`
    /// when this poll is epoll's.
    fn poll_directly(&mut self, sink: &mut dyn Sink) -> Option<usize> {
        self.direct_polls += 1;
        if self.waited > 0 || self.handshakes > 0 || self.direct_polls >= EPOLL_EVERY {
            self.direct_polls = 0;
            return None;
        }
        let mut tokens = [0 as Token; DIRECT_MAX];
        let mut n = 0;
        for (token, conn) in self.connections.iter() {
            let quiet = matches!(conn.stage, Stage::Established { .. })
                && !conn.write_blocked
                && conn.output.pending() == 0;
            if !quiet || n == DIRECT_MAX {
                self.direct_polls = 0;
                return None;
            }
            tokens[n] = token;
            n += 1;
        }
        if n == 0 {
            self.direct_polls = 0;
            return None;
        }
        Some(
            tokens[..n]
                .iter()
                .map(|&token| self.service(token, READABLE, sink))
                .sum(),
        )
    }

    /// After a frame was handed to connection `token`: closes it if the
    /// write failed (the frame is lost with the connection), else updates
    /// what the poller watches. The frame counts as sent either way.
    fn sent(&mut self, token: Token, written: io::Result<()>) -> bool {
        match written {
            Err(e) => self.close(token, format!("write: {e}")),
            Ok(()) => self.refresh(token),
        }
        true
    }
}

impl Transport for TcpTransport {
    fn max_frame(&self) -> usize {
        MAX_FRAME
    }

    fn try_send(&mut self, dest: ProcessId, len: usize, fill: &mut dyn FnMut(&mut [u8])) -> bool {
        let Some(token) = self.room_for(dest, len, SEND_BOUND) else {
            return false;
        };
        let conn = self
            .connections
            .get_mut(token)
            .expect("checked by room_for");
        conn.output.push_frame(len, fill);
        let written = conn.flush();
        self.sent(token, written)
    }

    /// Writes the frame with `writev` from where its parts lie when nothing
    /// waits before it (a data piece goes from the user's buffer to the
    /// kernel); only what the kernel does not take is copied. Frames with
    /// a large body wait while output is pending instead of being copied.
    fn try_send_parts(&mut self, dest: ProcessId, head: &[u8], body: &[u8]) -> bool {
        let len = head.len() + body.len();
        let bound = if body.len() >= COPY_BODY_MAX {
            0
        } else {
            SEND_BOUND
        };
        let Some(token) = self.room_for(dest, len, bound) else {
            return false;
        };
        let conn = self
            .connections
            .get_mut(token)
            .expect("checked by room_for");
        let prefix = (len as u32).to_le_bytes();
        let written = conn.send_vectored(&[&prefix, head, body]);
        self.sent(token, written)
    }

    fn poll(&mut self, sink: &mut dyn Sink) -> usize {
        if let Some(delivered) = self.poll_directly(sink) {
            return delivered;
        }
        let ready = match std::mem::take(&mut self.waited) {
            0 => match self.poller.wait(&mut self.events, Duration::ZERO) {
                Ok(n) => n,
                Err(e) => {
                    log::debug!("tcp {}: epoll_wait: {e}", self.me);
                    0
                }
            },
            waited => waited,
        };
        let mut delivered = 0;
        for i in 0..ready {
            let event = Poller::ready(&self.events, i);
            if event.token == LISTENER {
                self.accept_waiting();
            } else {
                delivered += self.service(event.token, event.flags, sink);
            }
        }
        if self.handshakes > 0 {
            self.expire_handshakes();
        }
        delivered
    }
}

impl AsRawFd for TcpTransport {
    /// An fd that polls readable whenever one of the transport's sockets
    /// is ready (the epoll set).
    fn as_raw_fd(&self) -> RawFd {
        self.poller.as_raw_fd()
    }
}
