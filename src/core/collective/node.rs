//! Node collectives: blocking `MPI_Barrier`, `MPI_Bcast`, `MPI_Allreduce`
//! and `MPI_Alltoall` on an intracommunicator whose members all live on
//! this node meet on a board in shared memory
//! ([`NodeBoard`](crate::transport::shm::node_board)), and move their
//! larger data through a stage beside it
//! ([`NodeStage`](crate::transport::shm::node_stage)), instead of passing
//! messages through log(p) rounds.
//!
//! Why: each round of a message algorithm needs every member scheduled
//! again; when a node's ranks oversubscribe its cores (16 ranks on 2
//! cores), that is a context switch per member and round. On the board a
//! barrier is one atomic add per member and a look at one counter; a
//! broadcast of up to [`BCAST_SLOT`] (2 KiB) is one copy in and one copy
//! out per reader, and its root does not wait for the readers (it runs up
//! to 128 broadcasts ahead); an allreduce of up to [`SLOT`] (4 KiB, on
//! communicators of up to 64 members) is one round in which every member
//! reduces all contributions itself, in rank order, so every member gets
//! the same result, for non-commutative operations too.
//!
//! Larger data goes through the stage, in pieces of up to a bank (2 MiB),
//! two banks used in turn so that a piece is written while the one before
//! is read:
//! - a broadcast (of three members or more: between two, one message is
//!   one copy): the root copies a piece in and arrives at the piece's
//!   round without waiting for it (it waits only before reusing a bank);
//!   readers meet the round and copy the piece out;
//! - an allreduce: pieces of a bank's `1 / (p + 1)`; each member copies its
//!   piece in, meets, reduces its own `1 / p` of the piece over every
//!   contribution in rank order into the piece's result, meets again, and
//!   copies the whole result out (a reduce-scatter and an allgather, each
//!   one copy, with two rounds per piece);
//! - an all-to-all whose `p * p` blocks fit a bank: each member copies its
//!   blocks in, meets, and copies its column out.
//!
//! Every call first settles on the board, the same way at every member,
//! how its data travels: the root's header word says how much it sends;
//! allreduce and all-to-all members say in a round how much they give. So
//! members that disagree on the amount (an erroneous program) all take the
//! same path and learn it (`MPI_ERR_TRUNCATE`), never hang. Data that the
//! stage does not take (no stage could be had; an allreduce element larger
//! than a piece, or members whose datatypes differ in size, which would
//! cut pieces differently; all-to-all blocks beyond a bank; an all-to-all
//! with members that give different amounts) goes as messages.
//!
//! When: `OXMPI_NODE_COLLECTIVES` (default on; must be the same at every
//! process) and not with `OXMPI_FAILURE_NOTICES` (a board does not see a
//! member die) or `OXMPI_TRANSPORT=tcp` (everything over TCP, as asked).
//! A communicator's board is made at its first eligible blocking call, by
//! every member (they call collectives in the same order), and goes with
//! the communicator; its stage likewise at its first call with more data
//! than the board takes. If a segment cannot be had at some member, none
//! uses it. Nonblocking and persistent forms keep the message algorithms.
//!
//! Writing rule (see `node_stage`): a member writes on the board or the
//! stage in round `r` only after it saw round `r - 1` complete
//! ([`Board::begin_round`]); every member but a broadcast's root also
//! waits for each round it arrives at.
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
use crate::transport::shm::node_board::{NodeBoard, BCAST_SLOT, ELSEWHERE, SLOT};
use crate::transport::shm::node_stage::{NodeStage, BANK};

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
    /// The board's rounds so far.
    rounds: AtomicU64,
    broadcasts: AtomicU64,
    /// Steps on the stage so far.
    steps: AtomicU64,
    /// The stage, made at the first call that needs it (`None`: it could
    /// not be had, at some member).
    stage: OnceLock<Option<NodeStage>>,
    /// The communicator's channel, on which the stage is made.
    ch: Channel,
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
/// The longest sleep on the doorbell (after `progress::Yielding`).
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
            steps: AtomicU64::new(0),
            stage: OnceLock::new(),
            ch: ch.clone(),
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

    /// The next round, in which this member is to write on the board or
    /// the stage: once it saw the round before complete (the module's
    /// writing rule; only a broadcast's root may not have seen it yet).
    fn begin_round(&self) -> MpiResult<u64> {
        let round = self.next_round();
        if round > 0 && !self.board.round_complete(round - 1) {
            self.wait(|| self.board.round_complete(round - 1))?;
        }
        Ok(round)
    }

    fn next_step(&self) -> u64 {
        self.steps.fetch_add(1, Ordering::Relaxed)
    }

    /// The communicator's stage, made now (collectively: every member
    /// reaches this in the same call) if this is the first call that
    /// needs it; `None` if it could not be had.
    fn stage(&self) -> MpiResult<Option<&NodeStage>> {
        if let Some(stage) = self.stage.get() {
            return Ok(stage.as_ref());
        }
        let made = match shared_by_all(&self.ch, NodeStage::bytes(), "node collectives")? {
            Ok(segment) => Some(NodeStage::new(segment)),
            Err(e) => {
                log::debug!("node collectives: no stage, messages instead: {e}");
                None
            }
        };
        Ok(self.stage.get_or_init(|| made).as_ref())
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
        let mut polls = 0u32;
        let mut yielding = progress::Yielding::default();
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
                polls = 0;
                yielding.reset();
                continue;
            }
            polls = polls.saturating_add(looks);
            if polls < spins || yielding.yield_now() {
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

/// `MPI_Bcast` of `buf` from `root` on a communicator's board: in a slot
/// when it fits one, else through the stage, else (no stage) as messages.
pub fn bcast(b: &Board, buf: &UserBuffer, root: usize) -> MpiResult<Route> {
    let board = &b.board;
    let n = buf.len();
    let k = b.broadcasts.fetch_add(1, Ordering::Relaxed);
    if board.rank() == root {
        if !board.bcast_slot_free(k) {
            b.wait(|| board.bcast_slot_free(k))?;
        }
        if n <= BCAST_SLOT {
            board.bcast_publish(k, n, |d| {
                buf.pack(0, d);
            });
            b.ring();
            return Ok(Route::Done);
        }
        board.bcast_publish_elsewhere(k, n);
        b.ring();
        return staged_bcast(b, buf, root, n);
    }
    if board.bcast_published(k).is_none() {
        b.wait(|| board.bcast_published(k).is_some())?;
    }
    let word = board.bcast_published(k).expect("published");
    let sent = (word & !ELSEWHERE) as usize;
    if word & ELSEWHERE != 0 {
        if board.bcast_done(k) {
            b.ring();
        }
        return staged_bcast(b, buf, root, sent);
    }
    let last = board.bcast_take(k, sent.min(n), |d| {
        buf.unpack(0, d);
    });
    if last {
        b.ring();
    }
    truncated_bcast(sent, n)?;
    Ok(Route::Done)
}

/// A reader's error when the root sent `sent` bytes and it expected `n`.
fn truncated_bcast(sent: usize, n: usize) -> MpiResult {
    if sent == n {
        return Ok(());
    }
    Err(MpiError::new(
        MPI_ERR_TRUNCATE,
        format!("MPI_Bcast: the root sent {sent} bytes, this member expected {n}"),
    ))
}

/// The `sent` bytes of a broadcast larger than a slot, through the stage
/// in pieces of a bank (one round each; the root does not wait for its
/// rounds), or as messages between two members or when there is no
/// stage.
fn staged_bcast(b: &Board, buf: &UserBuffer, root: usize, sent: usize) -> MpiResult<Route> {
    if b.members() == 2 {
        // Between two members a large message is one copy (the single-copy
        // path of the shared-memory transport); through the stage it is two.
        return Ok(Route::Messages);
    }
    let Some(stage) = b.stage()? else {
        return Ok(Route::Messages);
    };
    let n = buf.len();
    let root_here = b.board.rank() == root;
    for start in (0..sent).step_by(BANK) {
        let len = BANK.min(sent - start);
        let step = b.next_step();
        if root_here {
            let round = b.begin_round()?;
            stage.write(step, 0, len, |d| buf.pack(start, d));
            if b.board.arrive(round) {
                b.ring();
            }
        } else {
            b.meet(b.next_round())?;
            if start < n {
                stage.read(step, 0, len.min(n - start), |d| buf.unpack(start, d));
            }
        }
    }
    if !root_here {
        truncated_bcast(sent, n)?;
    }
    Ok(Route::Done)
}

/// Every member's amount (its length and unit), given in one round on
/// the board (written in its contribution, with its data when `fill` is
/// given and it fits a slot); the round is complete when this returns.
fn amounts(
    b: &Board,
    len: usize,
    unit: usize,
    fill: Option<&UserBuffer>,
) -> MpiResult<(u64, Vec<(usize, usize)>)> {
    let board = &b.board;
    let round = b.begin_round()?;
    board.contribute(round, len, unit, |d| {
        if let Some(data) = fill {
            data.pack(0, d);
        }
    });
    b.meet(round)?;
    let all = (0..board.members())
        .map(|m| {
            (
                board.contribution_len(round, m),
                board.contribution_unit(round, m),
            )
        })
        .collect();
    Ok((round, all))
}

/// `MPI_Allreduce` on a communicator's board, if its members reduce
/// there: every member's contribution when it fits a slot, else only its
/// length, and then the data through the stage (or as messages, without
/// one).
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
    let element = red.element_size();
    let (round, given) = amounts(b, n, element, Some(contribution))?;
    if let Some(m) = given.iter().position(|&(g, _)| g != n) {
        return Err(MpiError::new(
            MPI_ERR_TRUNCATE,
            format!(
                "MPI_Allreduce: member {m} gives {} bytes, this member {n}",
                given[m].0
            ),
        ));
    }
    if n > SLOT {
        // Pieces are cut in whole elements: members whose datatypes
        // differ in size (an erroneous program) would cut them, and count
        // rounds, differently, so they go as messages, all of them.
        if given.iter().any(|&(_, unit)| unit != element) {
            return Ok(Route::Messages);
        }
        return staged_allreduce(b, contribution, result, red);
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

/// An allreduce larger than a slot through the stage, piece by piece (see
/// the module documentation), or as messages when there is no stage or
/// an element is larger than a piece (the same at every member).
fn staged_allreduce(
    b: &Board,
    contribution: &UserBuffer,
    result: &UserBuffer,
    red: &Reduction,
) -> MpiResult<Route> {
    let element = red.element_size();
    let (p, me) = (b.members(), b.board.rank());
    // A piece: whole elements in a bank's 1 / (p + 1), one per member and
    // one for the result.
    let piece = NodeStage::part_bytes(p + 1) / element * element;
    if piece == 0 {
        return Ok(Route::Messages);
    }
    let Some(stage) = b.stage()? else {
        return Ok(Route::Messages);
    };
    let n = contribution.len();
    let reduced = p * piece;
    for start in (0..n).step_by(piece) {
        let len = piece.min(n - start);
        let step = b.next_step();
        let given = b.begin_round()?;
        stage.write(step, me * piece, len, |d| contribution.pack(start, d));
        b.meet(given)?;
        // This member's share of the piece's elements, in rank order:
        // acc = x[p-1], then acc = x[m] op acc down to m = 0.
        let elements = len / element;
        let lo = me * elements / p * element;
        let hi = (me + 1) * elements / p * element;
        if hi > lo {
            stage.write(step, reduced + lo, hi - lo, |acc| {
                stage.read(step, (p - 1) * piece + lo, hi - lo, |d| {
                    acc.copy_from_slice(d)
                });
                for m in (0..p - 1).rev() {
                    stage.read(step, m * piece + lo, hi - lo, |d| red.combine(d, acc));
                }
            });
        }
        b.meet(b.begin_round()?)?;
        stage.read(step, reduced, len, |d| result.unpack(start, d));
    }
    Ok(Route::Done)
}

/// `MPI_Alltoall` on a communicator's board: the members say in a round
/// how much each block holds; when every member gives the same and the
/// `p * p` blocks fit a bank, they go through the stage (`send` is `None`
/// for `MPI_IN_PLACE`: the blocks are in `recv`).
pub fn alltoall(b: &Board, send: Option<&UserBuffer>, recv: &UserBuffer) -> MpiResult<Route> {
    let (p, me) = (b.members(), b.board.rank());
    if !NodeBoard::reduces(p) {
        return Ok(Route::Messages);
    }
    let source = send.unwrap_or(recv);
    let (block, want) = (source.len() / p, recv.len() / p);
    let (_, given) = amounts(b, block, 1, None)?;
    if given.iter().any(|&(g, _)| g != block) || p * p * block > BANK {
        return Ok(Route::Messages);
    }
    if block > 0 {
        let Some(stage) = b.stage()? else {
            return Ok(Route::Messages);
        };
        let step = b.next_step();
        let round = b.begin_round()?;
        let row = p * block;
        stage.write(step, me * row, row, |d| source.pack(0, d));
        b.meet(round)?;
        for m in 0..p {
            stage.read(step, m * row + me * block, block.min(want), |d| {
                recv.unpack(m * want, d)
            });
        }
    }
    if want != block {
        return Err(MpiError::new(
            MPI_ERR_TRUNCATE,
            format!("MPI_Alltoall: blocks of {block} bytes sent, this member expects {want}"),
        ));
    }
    Ok(Route::Done)
}
