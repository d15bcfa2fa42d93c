//! The transports of one epoch and the choice among them per peer: this
//! process through `self`, peers on this node through `shm`, the others
//! through `tcp` (`OXMPI_TRANSPORT=tcp` forces tcp for every peer). A peer's route
//! is found lazily from its business card for this epoch; until the card
//! is published (the peer has not entered the epoch yet) frames to it wait,
//! and the card is looked up again with a growing delay. The progress
//! engine talks only to this type.
use std::time::{Duration, Instant};

use super::loopback::Loopback;
use super::shm::inbox::ShmTransport;
use super::tcp::TcpTransport;
use super::{EpochTag, ProcessId, Sink, Transport};
use crate::bootstrap::card::Card;

/// What happened to a frame handed to [`Endpoints::try_send`].
#[derive(Debug, PartialEq, Eq)]
pub enum SendOutcome {
    Sent,
    /// No room now, or the peer is not reachable yet in this epoch (its
    /// card is not published): try again after progress.
    NotNow,
    /// The peer can never be reached (no transport to it).
    Unreachable(String),
}

enum Route {
    Shm,
    Tcp,
    /// Card not found yet; look again at `next_try`.
    Unknown {
        next_try: Instant,
        delay: Duration,
    },
    Unreachable(String),
}

const FIRST_RETRY: Duration = Duration::from_micros(50);
const LAST_RETRY: Duration = Duration::from_millis(20);
/// Failed TCP connection attempts (growing delays, about ten seconds in
/// all) after which a peer counts as unreachable.
const TCP_GIVE_UP: u32 = 60;

pub struct Endpoints {
    me: ProcessId,
    epoch: EpochTag,
    node: String,
    /// The processes the launcher placed on this node, sorted (`None`:
    /// not known; the node identities alone decide).
    node_peers: Option<Vec<ProcessId>>,
    loopback: Loopback,
    shm: Option<ShmTransport>,
    tcp: Option<TcpTransport>,
    /// Use tcp even for peers on this node.
    tcp_everywhere: bool,
    /// Each peer's route, indexed by its process id (ranks are dense, so a
    /// vector beats hashing on the fast path); `None` until first used.
    routes: Vec<Option<Route>>,
    /// Polls since the TCP transport was last polled while it had no
    /// connection (its listener is then looked at only now and then).
    idle_tcp_polls: u32,
    /// Polls between two looks at an idle TCP transport (see
    /// [`Endpoints::set_single_node`]).
    idle_tcp_every: u32,
    /// Peers routed through tcp in this epoch.
    tcp_routes: usize,
    /// Peers whose card is still looked for.
    unknown_routes: usize,
}

/// With no TCP connection, the listener is polled once every this many
/// polls: an incoming connection (a peer on another node making first
/// contact, at every epoch) waits a little, while the shared-memory fast
/// path makes no system call.
const IDLE_TCP_POLL_EVERY: u32 = 64;
/// The same when every process of the job runs on this node, where no
/// connection is expected (a peer that forces TCP while this process does
/// not): a wait for shared memory then makes no system call at all, where
/// 64 meant an `epoll_wait` every few microseconds of spinning.
const IDLE_TCP_POLL_EVERY_ONE_NODE: u32 = 4096;

impl Endpoints {
    /// Endpoints with only `self` (a singleton, or no shared memory).
    pub fn new(me: ProcessId, epoch: EpochTag) -> Endpoints {
        Endpoints {
            me,
            epoch,
            node: String::new(),
            node_peers: None,
            loopback: Loopback::new(me),
            shm: None,
            tcp: None,
            tcp_everywhere: false,
            routes: Vec::new(),
            idle_tcp_polls: 0,
            idle_tcp_every: IDLE_TCP_POLL_EVERY,
            tcp_routes: 0,
            unknown_routes: 0,
        }
    }

    /// Endpoints that reach this node's processes through `shm` (if given)
    /// and the others through `tcp` (if given; every peer if
    /// `tcp_everywhere`).
    pub fn with_transports(
        me: ProcessId,
        epoch: EpochTag,
        node: String,
        shm: Option<ShmTransport>,
        tcp: Option<TcpTransport>,
        tcp_everywhere: bool,
    ) -> Endpoints {
        Endpoints {
            node,
            shm,
            tcp,
            tcp_everywhere,
            ..Endpoints::new(me, epoch)
        }
    }

    /// Whether every process of the job runs on this node (an idle TCP
    /// transport is then looked at only rarely).
    pub fn set_single_node(&mut self, single: bool) {
        self.idle_tcp_every = if single {
            IDLE_TCP_POLL_EVERY_ONE_NODE
        } else {
            IDLE_TCP_POLL_EVERY
        };
    }

    /// Where this process's TCP transport listens (for its card).
    pub fn tcp_address(&self) -> Option<String> {
        self.tcp.as_ref().map(|t| t.local_addr().to_string())
    }

    /// Bytes handed to the TCP transport that the kernel has not taken yet.
    pub fn pending_output(&self) -> usize {
        self.tcp.as_ref().map_or(0, |t| t.pending_output())
    }

    pub fn me(&self) -> ProcessId {
        self.me
    }

    pub fn epoch(&self) -> EpochTag {
        self.epoch
    }

    /// An fd that polls readable when the TCP transport has a socket ready
    /// (its epoll set), for sleeping until a frame comes.
    pub fn tcp_ready_fd(&self) -> Option<std::os::fd::RawFd> {
        use std::os::fd::AsRawFd;
        self.tcp.as_ref().map(|t| t.as_raw_fd())
    }

    pub fn shm(&mut self) -> Option<&mut ShmTransport> {
        self.shm.as_mut()
    }

    /// The largest frame that can go to `dest` in one piece: the route's
    /// limit, or the smallest of all while the route is not known yet.
    pub fn max_frame(&self, dest: ProcessId) -> usize {
        if dest == self.me {
            return self.loopback.max_frame();
        }
        let shm = self.shm.as_ref().map(|s| s.max_frame());
        let tcp = self.tcp.as_ref().map(|t| t.max_frame());
        match self.route(dest) {
            Some(Route::Shm) => shm.unwrap_or(usize::MAX),
            Some(Route::Tcp) => tcp.unwrap_or(usize::MAX),
            _ => shm
                .into_iter()
                .chain(tcp)
                .min()
                .unwrap_or(self.loopback.max_frame()),
        }
    }

    /// A frame to `dest` straight into its shared-memory ring when that is
    /// its route (`None` otherwise: use [`Endpoints::try_send`]); false
    /// when the ring is full or the frame does not fit a cell.
    #[inline(always)]
    pub fn try_send_shm(
        &mut self,
        dest: ProcessId,
        len: usize,
        fill: impl FnMut(&mut [u8]),
    ) -> Option<bool> {
        if !matches!(self.route(dest), Some(Route::Shm)) {
            return None;
        }
        Some(self.shm.as_mut()?.push_to(dest, len, fill))
    }

    pub fn try_send(
        &mut self,
        dest: ProcessId,
        len: usize,
        fill: &mut dyn FnMut(&mut [u8]),
    ) -> SendOutcome {
        self.send_through(dest, &mut |t: &mut dyn Transport| {
            t.try_send(dest, len, fill)
        })
    }

    /// As [`Endpoints::try_send`] for a frame of two parts (see
    /// [`Transport::try_send_parts`]).
    pub fn try_send_parts(&mut self, dest: ProcessId, head: &[u8], body: &[u8]) -> SendOutcome {
        self.send_through(dest, &mut |t: &mut dyn Transport| {
            t.try_send_parts(dest, head, body)
        })
    }

    /// Hands as many of `frames` to `dest` as its transport takes now (see
    /// [`Transport::try_send_batch`]); 0 also when the peer is not
    /// reachable yet or at all (`try_send` then says which).
    pub fn try_send_batch(&mut self, dest: ProcessId, frames: &[&[u8]]) -> usize {
        if dest == self.me {
            return self.loopback.try_send_batch(dest, frames);
        }
        let shm = matches!(self.route(dest), Some(Route::Shm));
        let tcp = matches!(self.route(dest), Some(Route::Tcp));
        match (self.shm.as_mut(), self.tcp.as_mut()) {
            (Some(t), _) if shm => t.try_send_batch(dest, frames),
            (_, Some(t)) if tcp => t.try_send_batch(dest, frames),
            _ => 0,
        }
    }

    /// Hands a frame to `dest`'s transport with `send`.
    fn send_through(
        &mut self,
        dest: ProcessId,
        send: &mut dyn FnMut(&mut dyn Transport) -> bool,
    ) -> SendOutcome {
        if dest == self.me {
            return match send(&mut self.loopback) {
                true => SendOutcome::Sent,
                false => SendOutcome::NotNow,
            };
        }
        if self.route(dest).is_none() {
            self.set_route(
                dest,
                Route::Unknown {
                    next_try: Instant::now(),
                    delay: FIRST_RETRY,
                },
            );
        }
        match &self.routes[dest as usize] {
            Some(Route::Shm) => match self.shm.as_mut().map(|shm| send(shm)) {
                Some(true) => SendOutcome::Sent,
                _ => SendOutcome::NotNow,
            },
            Some(Route::Tcp) => {
                let Some(tcp) = self.tcp.as_mut() else {
                    return SendOutcome::Unreachable("no TCP transport".into());
                };
                if send(tcp) {
                    return SendOutcome::Sent;
                }
                if tcp.connect_failures(dest) > TCP_GIVE_UP {
                    return SendOutcome::Unreachable(format!(
                        "cannot connect to process {dest} over TCP"
                    ));
                }
                SendOutcome::NotNow
            }
            Some(Route::Unknown { .. }) => SendOutcome::NotNow,
            Some(Route::Unreachable(why)) => SendOutcome::Unreachable(why.clone()),
            None => unreachable!("route set above"),
        }
    }

    /// Counts a message of `bytes` bytes whose first frame just left for
    /// `dest` (see `transport::counters`); messages to oneself count
    /// nowhere.
    #[inline(always)]
    pub fn count_message(&self, dest: ProcessId, bytes: u64) {
        match self.route(dest) {
            Some(Route::Shm) => super::counters::SHM.add(bytes),
            Some(Route::Tcp) => super::counters::TCP.add(bytes),
            _ => {}
        }
    }

    /// Whether frames to `peer` go through shared memory (it runs on this
    /// node and can read this process's memory by process id).
    pub fn reaches_through_shm(&self, peer: ProcessId) -> bool {
        matches!(self.route(peer), Some(Route::Shm))
    }

    fn route(&self, peer: ProcessId) -> Option<&Route> {
        self.routes.get(peer as usize).and_then(Option::as_ref)
    }

    /// Sets a peer's route, keeping the counts of unknown and tcp routes.
    fn set_route(&mut self, peer: ProcessId, route: Route) {
        let counts = |r: &Route| match r {
            Route::Unknown { .. } => (1, 0),
            Route::Tcp => (0, 1),
            _ => (0, 0),
        };
        let (new_unknown, new_tcp) = counts(&route);
        let index = peer as usize;
        if self.routes.len() <= index {
            self.routes.resize_with(index + 1, || None);
        }
        if let Some(old) = self.routes[index].replace(route) {
            let (old_unknown, old_tcp) = counts(&old);
            self.unknown_routes -= old_unknown;
            self.tcp_routes -= old_tcp;
        }
        self.unknown_routes += new_unknown;
        self.tcp_routes += new_tcp;
    }

    /// Reuses these transports for a new epoch (`MPIR_CVAR_FINALIZE_ATEXIT`):
    /// the inbox and the mappings stay, but every peer is found again
    /// through its card for the new epoch, so no frame goes to a peer
    /// before it has entered the epoch.
    pub fn renew(&mut self, epoch: EpochTag) {
        self.epoch = epoch;
        self.routes.clear();
        self.tcp_routes = 0;
        self.unknown_routes = 0;
        if let Some(tcp) = &mut self.tcp {
            tcp.renew(epoch);
        }
    }

    /// Where peers find this process's inbox, if it has one.
    pub fn inbox_address(&self) -> Option<String> {
        self.shm.as_ref().map(|s| s.inbox_address().to_string())
    }

    /// Whether some peer's card is still looked for ([`Endpoints::wanted`]
    /// may then name peers).
    #[inline]
    pub fn looks_for_cards(&self) -> bool {
        self.unknown_routes > 0
    }

    /// Peers whose card should be looked up now.
    pub fn wanted(&self) -> Vec<ProcessId> {
        // The fast path once every peer is known: no clock reading.
        if self.unknown_routes == 0 {
            return Vec::new();
        }
        let now = Instant::now();
        self.routes
            .iter()
            .enumerate()
            .filter_map(|(p, r)| match r {
                Some(Route::Unknown { next_try, .. }) if *next_try <= now => Some(p as ProcessId),
                _ => None,
            })
            .collect()
    }

    /// The launcher's placement: the processes it put on this node (this
    /// one included), or `None` when it did not say. Only these are
    /// reached through shared memory.
    pub fn set_node_peers(&mut self, peers: Option<Vec<ProcessId>>) {
        self.node_peers = peers.map(|mut p| {
            p.sort_unstable();
            p
        });
    }

    /// Whether frames to `peer`, whose card is `card`, go through shared
    /// memory: shared memory is on, the launcher placed the peer on this
    /// node (when it says where processes run: it, not a host name, is the
    /// authority, so ranks of two network namespaces of one machine that
    /// the launcher treats as two hosts talk TCP), and the card's node
    /// identity (machine, boot, IPC and pid namespaces) is this process's,
    /// so the memory really can be shared.
    fn shares_memory_with(&self, peer: ProcessId, card: &Card) -> bool {
        if self.shm.is_none() || self.tcp_everywhere {
            return false;
        }
        let same_node = card.node == self.node;
        match &self.node_peers {
            None => same_node,
            Some(peers) => {
                let placed_here = peers.binary_search(&peer).is_ok();
                if placed_here && !same_node {
                    log::debug!(
                        "process {peer} is placed on this node but cannot share its memory \
                         (node {} here, {} there): TCP",
                        self.node,
                        card.node
                    );
                }
                placed_here && same_node
            }
        }
    }

    /// The result of looking up `peer`'s card for this epoch.
    pub fn resolve(&mut self, peer: ProcessId, card: Option<Card>) {
        let route = match card {
            None => match self.route(peer) {
                Some(Route::Unknown { delay, .. }) => {
                    let delay = (*delay * 2).min(LAST_RETRY);
                    Route::Unknown {
                        next_try: Instant::now() + delay,
                        delay,
                    }
                }
                _ => Route::Unknown {
                    next_try: Instant::now() + FIRST_RETRY,
                    delay: FIRST_RETRY,
                },
            },
            Some(card) if self.shares_memory_with(peer, &card) => {
                let shm = self.shm.as_mut().expect("checked");
                if shm.is_connected_to(peer, &card.shm_segment) {
                    // The peer kept its inbox across epochs (FINALIZE_ATEXIT).
                    self.set_route(peer, Route::Shm);
                    return;
                }
                match shm.connect(peer, &card.shm_segment) {
                    Ok(()) => {
                        log::debug!("epoch {}: process {peer} reached through shm", self.epoch);
                        Route::Shm
                    }
                    Err(e) => Route::Unreachable(format!("cannot map the inbox of process {peer}: {e}")),
                }
            }
            Some(card) => match (self.tcp.as_mut(), card.tcp.parse::<std::net::SocketAddr>()) {
                (Some(tcp), Ok(addr)) => {
                    tcp.connect_peer(peer, addr);
                    log::debug!("epoch {}: process {peer} reached through tcp at {addr}", self.epoch);
                    Route::Tcp
                }
                (None, _) => Route::Unreachable(format!(
                    "process {peer} runs on node {} and this one on {}, and TCP is off (OXMPI_TRANSPORT=shm)",
                    card.node, self.node
                )),
                (Some(_), Err(_)) => Route::Unreachable(format!(
                    "process {peer} on node {} publishes no TCP address",
                    card.node
                )),
            },
        };
        self.set_route(peer, route);
    }

    /// Looks at the shared-memory rings up to `times` times, with a spin
    /// hint (x86 PAUSE) after each look that finds nothing; true as soon as
    /// a frame waits in one. False at once without shared memory, and when
    /// some peer is reached through TCP (its frames would wait for the
    /// watch). The hint lets a virtual CPU that shares a physical core with
    /// the sender's (SMT siblings, as the hypervisor may place them) leave
    /// the core to the sender's work; measured on the 2-vCPU test machine,
    /// the median 8-byte latency of the ping-pong dropped ~7% with it.
    #[inline]
    pub fn watch_shm(&mut self, times: u32) -> bool {
        if self.tcp_routes > 0 || self.tcp.as_ref().is_some_and(|t| t.has_connections()) {
            return false;
        }
        let Some(shm) = &mut self.shm else {
            return false;
        };
        // Senders waiting for room get it before this process waits too.
        shm.publish();
        (0..times).any(|_| {
            let pending = shm.has_pending();
            if !pending {
                std::hint::spin_loop();
            }
            pending
        })
    }

    /// Makes the next poll look at an idle TCP transport too (before a
    /// sleep, so that a first connection from another node waits at most
    /// one sleep, besides the polls of `set_single_node`).
    pub fn poll_idle_tcp_next(&mut self) {
        self.idle_tcp_polls = self.idle_tcp_every;
    }

    /// Polls every transport; returns the number of frames delivered.
    #[inline]
    pub fn poll<S: Sink>(&mut self, sink: &mut S) -> usize {
        let mut n = 0;
        if let Some(shm) = &mut self.shm {
            n += shm.poll_into(sink);
        }
        if !self.loopback.is_empty() {
            n += self.loopback.poll(sink);
        }
        if let Some(tcp) = &mut self.tcp {
            let active = self.tcp_routes > 0 || tcp.has_connections();
            self.idle_tcp_polls += 1;
            if active || self.idle_tcp_polls >= self.idle_tcp_every {
                self.idle_tcp_polls = 0;
                n += tcp.poll(sink);
            }
        }
        n
    }
}
