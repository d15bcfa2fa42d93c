//! Node collectives: blocking `MPI_Barrier`, `MPI_Bcast` and
//! `MPI_Allreduce` on an intracommunicator whose members all live on this
//! node meet on a board in shared memory
//! ([`NodeBoard`](crate::transport::shm::node_board)) instead of passing
//! messages through log(p) rounds.
//!
//! Why: each round of a message algorithm needs every member scheduled
//! again; when a node's ranks oversubscribe its cores (16 ranks on 2
//! cores), that is a context switch per member and round. On the board a
//! barrier is one atomic add per member and a look at one counter; a
//! broadcast of up to [`BCAST_SLOT`] (2 KiB) is one copy in and one copy
//! out per reader, and its root does not wait for the readers (it runs up
//! to 128 broadcasts ahead); an allreduce of up to [`SLOT`] (4 KiB, on
//! communicators of up to 64 members) is one round in which every member reduces all
//! contributions itself, in rank order, so every member gets the same
//! result, for non-commutative operations too.
//!
//! Larger broadcasts and allreduces still go through the board's header
//! or round first (the root says the data travels as messages; the
//! members say how much they give), then through the message algorithms:
//! so members that disagree on the amount (an erroneous program) all take
//! the same path and learn it (`MPI_ERR_TRUNCATE`), never hang.
//!
//! When: `OXMPI_NODE_COLLECTIVES` (default on; must be the same at every
//! process) and not with `OXMPI_FAILURE_NOTICES` (a board does not see a
//! member die) or `OXMPI_TRANSPORT=tcp` (everything over TCP, as asked).
//! A communicator's board is made at its first eligible blocking call, by
//! every member (they call collectives in the same order), and goes with
//! the communicator; if the segment cannot be had at some member, none
//! uses it. Nonblocking and persistent forms keep the message algorithms.
//!
//! Waiting: a member polls (with a core of its own), then yields, moving
//! point-to-point traffic and nonblocking collectives along between looks;
//! after long it sleeps on the board's doorbell, rung by whoever completes
//! a round, publishes or frees a slot (other traffic is looked at at least
//! every millisecond meanwhile).
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use super::channel::Channel;
use super::executor::help;
use crate::config::TransportChoice;
use crate::core::error::{MpiError, MpiResult};
use crate::core::node_segment::shared_by_all;
use crate::core::op::reduction::Reduction;
use crate::core::p2p::user_buffer::UserBuffer;
use crate::core::tool::pvars;
use crate::core::{progress, runtime};
use crate::mpi_abi::constants::MPI_ERR_TRUNCATE;
use crate::mpi_abi::types::MPI_Comm;
use crate::transport::shm::node_board::{NodeBoard, BCAST_SLOT, BY_MESSAGES, SLOT};

/// A communicator's way to its board (shared by nothing else: a new
/// communicator starts without one).
#[derive(Clone, Default)]
pub struct NodeLink(Arc<LinkState>);

#[derive(Default)]
struct LinkState {
    /// Set at the first eligible call: the board, or `None` when the
    /// members are not all on this node or the board could not be made.
    board: OnceLock<Option<Arc<Board>>>,
    /// Held while the board is made.
    making: Mutex<()>,
}

/// A communicator's board and this member's count of the calls made on
/// it (members count alike: they call collectives in the same order).
pub struct Board {
    board: NodeBoard,
    /// Barriers and allreduces so far (the board's rounds).
    rounds: AtomicU64,
    broadcasts: AtomicU64,
}

/// How a call goes on after the board.
#[derive(Debug, PartialEq, Eq)]
pub enum Route {
    /// The board did the call.
    Done,
    /// The call is to be made with messages (no board, or too much data).
    Messages,
}

/// Looks this many times at the board between two progress calls, with a
/// core of one's own.
const LOOKS_WITH_OWN_CORE: u32 = 64;
/// Yields before sleeping on the board's doorbell.
const YIELDS: u32 = 512;
/// The longest sleep on the doorbell.
const SLEEP: Duration = Duration::from_millis(1);

fn enabled() -> bool {
    let config = crate::config::get();
    config.node_collectives && !config.failure_notices && config.transport != TransportChoice::Tcp
}

/// `comm`'s board, if it is an intracommunicator whose members meet on
/// one (made now if this is its first eligible call: collective, so call
/// it only from a blocking collective call on `comm`).
pub fn board(comm: MPI_Comm) -> MpiResult<Option<Arc<Board>>> {
    if !enabled() {
        return Ok(None);
    }
    let (link, ch) = {
        let rt = runtime::lock();
        let c = rt.comms().get(comm)?;
        if c.remote.is_some() || c.members.len() < 2 {
            return Ok(None);
        }
        if let Some(made) = c.node.0.board.get() {
            if made.is_some() {
                // Under the runtime lock, as the counters' writers are.
                pvars::count(&pvars::NODE_BOARD_CALLS);
            }
            return Ok(made.clone());
        }
        (c.node.clone(), Channel::of(c))
    };
    let _making = link.0.making.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(made) = link.0.board.get() {
        return Ok(made.clone());
    }
    let made = make_board(&ch)?;
    let _ = link.0.board.set(made.clone());
    if made.is_some() {
        let _rt = runtime::lock();
        pvars::count(&pvars::NODE_BOARD_CALLS);
    }
    Ok(made)
}

/// Makes the board of the communicator of `ch` (collective), or finds it
/// cannot be had (the same verdict at every member).
fn make_board(ch: &Channel) -> MpiResult<Option<Arc<Board>>> {
    let on_node = {
        let rt = runtime::lock();
        let node = rt.process()?.psets.members("mpix://SHARED")?;
        ch.members.iter().all(|m| node.contains(m))
    };
    if !on_node {
        return Ok(None);
    }
    let p = ch.size();
    match shared_by_all(ch, NodeBoard::bytes(p), "node collectives")? {
        Ok(segment) => Ok(Some(Arc::new(Board {
            board: NodeBoard::new(segment, p, ch.rank),
            rounds: AtomicU64::new(0),
            broadcasts: AtomicU64::new(0),
        }))),
        Err(e) => {
            log::debug!("node collectives: no board, messages instead: {e}");
            Ok(None)
        }
    }
}

impl Board {
    /// The communicator's size.
    pub fn members(&self) -> usize {
        self.board.members()
    }

    fn next_round(&self) -> u64 {
        self.rounds.fetch_add(1, Ordering::Relaxed)
    }

    fn ring(&self) {
        self.board.doorbell().ring();
    }

    /// Waits until `ready`, moving other traffic along (see the module
    /// documentation).
    fn wait(&self, ready: impl Fn() -> bool) -> MpiResult {
        let own_core = progress::has_own_core();
        let (looks, spins) = if own_core {
            (LOOKS_WITH_OWN_CORE, progress::spin_polls())
        } else {
            (1, 0)
        };
        let (mut polls, mut yields) = (0u32, 0u32);
        loop {
            for _ in 0..looks {
                if ready() {
                    return Ok(());
                }
                std::hint::spin_loop();
            }
            let progressed = runtime::lock().progress();
            // (The guard is gone: `help` takes the lock itself.)
            if help() || progressed {
                (polls, yields) = (0, 0);
                continue;
            }
            polls = polls.saturating_add(looks);
            if polls < spins {
                continue;
            }
            if yields < YIELDS {
                yields += 1;
                std::thread::yield_now();
                continue;
            }
            let bell = self.board.doorbell();
            let ticket = bell.prepare_sleep();
            if ready() {
                return Ok(());
            }
            ticket.wait(SLEEP);
        }
    }

    /// One round: arrive, then wait until every member did.
    fn meet(&self, round: u64) -> MpiResult {
        if self.board.arrive(round) {
            self.ring();
            return Ok(());
        }
        self.wait(|| self.board.round_complete(round))
    }
}

/// `MPI_Barrier` on a communicator's board.
pub fn barrier(b: &Board) -> MpiResult {
    b.meet(b.next_round())
}

/// `MPI_Bcast` of `buf` from `root` on a communicator's board: the data
/// itself when it fits a slot, else only the word that it travels as
/// messages.
pub fn bcast(b: &Board, buf: &UserBuffer, root: usize) -> MpiResult<Route> {
    let board = &b.board;
    let n = buf.len();
    let k = b.broadcasts.fetch_add(1, Ordering::Relaxed);
    if board.rank() == root {
        if !board.bcast_slot_free(k) {
            b.wait(|| board.bcast_slot_free(k))?;
        }
        let in_slot = n <= BCAST_SLOT;
        if in_slot {
            board.bcast_publish(k, n, |d| {
                buf.pack(0, d);
            });
        } else {
            board.bcast_publish_by_messages(k, n);
        }
        b.ring();
        return Ok(if in_slot {
            Route::Done
        } else {
            Route::Messages
        });
    }
    if board.bcast_published(k).is_none() {
        b.wait(|| board.bcast_published(k).is_some())?;
    }
    let word = board.bcast_published(k).expect("published");
    if word & BY_MESSAGES != 0 {
        if board.bcast_done(k) {
            b.ring();
        }
        return Ok(Route::Messages);
    }
    let sent = word as usize;
    let last = board.bcast_take(k, sent.min(n), |d| {
        buf.unpack(0, d);
    });
    if last {
        b.ring();
    }
    if sent != n {
        return Err(MpiError::new(
            MPI_ERR_TRUNCATE,
            format!("MPI_Bcast: the root sent {sent} bytes, this member expected {n}"),
        ));
    }
    Ok(Route::Done)
}

/// `MPI_Allreduce` on a communicator's board, if its members reduce
/// there: every member's contribution when it fits a slot, else only its
/// length (the call then goes on as messages).
pub fn allreduce(
    b: &Board,
    contribution: &UserBuffer,
    result: &UserBuffer,
    red: &Reduction,
) -> MpiResult<Route> {
    let board = &b.board;
    let p = board.members();
    if !NodeBoard::reduces(p) {
        return Ok(Route::Messages);
    }
    let n = contribution.len();
    let round = b.next_round();
    board.contribute(round, n, |d| {
        contribution.pack(0, d);
    });
    b.meet(round)?;
    if let Some(m) = (0..p).find(|&m| board.contribution_len(round, m) != n) {
        return Err(MpiError::new(
            MPI_ERR_TRUNCATE,
            format!(
                "MPI_Allreduce: member {m} gives {} bytes, this member {n}",
                board.contribution_len(round, m)
            ),
        ));
    }
    if n > SLOT {
        return Ok(Route::Messages);
    }
    // In rank order: acc = x[p-1], then acc = x[m] op acc down to m = 0.
    let mut scratch = [0u8; SLOT];
    let acc = &mut scratch[..n];
    board.read_contribution(round, p - 1, n, |d| acc.copy_from_slice(d));
    for m in (0..p - 1).rev() {
        board.read_contribution(round, m, n, |d| red.combine(d, acc));
    }
    result.unpack(0, acc);
    Ok(Route::Done)
}
