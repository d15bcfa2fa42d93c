//! A communicator's board in shared memory: where the members of a
//! communicator that all live on one node meet for their small blocking
//! collectives (`core::collective::node`), instead of passing messages.
//!
//! Layout (one segment per communicator, every part on lines of its own):
//! - a doorbell (line 0) on which members that waited long sleep, rung by
//!   whoever completes what they wait for;
//! - the arrival counter (line 1): every barrier or allreduce is one
//!   *round*; each member adds one when it arrives, so round `k` (counted
//!   from 0, the same at every member since members call collectives in the
//!   same order) is complete once the counter reaches `(k + 1) * members`.
//!   The counter only grows, so a member that is slow to look still sees
//!   its round complete after others went on to the next;
//! - [`BCAST_SLOTS`] broadcast slots, each a header line (`seq`: the
//!   number, plus one, of the broadcast last published in it; `done`: how
//!   many readers finished with it, over all its uses; `len`: the bytes
//!   the root sent, with [`ELSEWHERE`] set when they are larger than a
//!   slot and travel another way; a broadcast of up to 40 bytes follows
//!   in the same line, so a reader fetches one line) and [`BCAST_SLOT`]
//!   bytes of data for larger ones. Broadcast `b` uses slot
//!   `b % BCAST_SLOTS`; its root waits until the readers of the slot's
//!   previous use are done (`done >= (b / BCAST_SLOTS) * (members - 1)`),
//!   so a root runs up to [`BCAST_SLOTS`] broadcasts ahead of its slowest
//!   reader and never waits for a reader otherwise;
//! - for communicators of at most [`MAX_REDUCE_MEMBERS`], two banks of one
//!   contribution per member (a length line and [`SLOT`] bytes): round `k`
//!   writes bank `k % 2`. A member writes its contribution of round `k`
//!   after it saw round `k - 1` complete, that is after every member
//!   arrived at `k - 1`, which each did after it finished reading round
//!   `k - 2`, the last use of the bank.
//!
//! Memory order: data is written before the release that publishes it
//! (the arrival's add, the slot's `seq`, the reader's `done`) and read
//! after the acquire that sees it. A freshly made segment is zero, which is
//! this layout's initial state.
use std::sync::atomic::{AtomicU64, Ordering};

use super::doorbell::{Doorbell, DOORBELL_BYTES};
use super::segment::Segment;

/// Bytes of one contribution to an allreduce.
pub const SLOT: usize = 4096;
/// Bytes of one broadcast slot.
pub const BCAST_SLOT: usize = 2048;
/// Broadcasts a root may run ahead of its slowest reader: many, since a
/// reader that is not running (more ranks than cores) then finds a batch
/// of broadcasts waiting when it runs, instead of its root waiting for it
/// every few calls. The slots' pages are touched only as they are used.
pub const BCAST_SLOTS: usize = 128;
/// The largest communicator whose members reduce on the board.
pub const MAX_REDUCE_MEMBERS: usize = 64;
/// In a broadcast header's `len`: the data is larger than a slot and
/// travels another way (the stage, or messages); the low bits still give
/// its length.
pub const ELSEWHERE: u64 = 1 << 63;

const LINE: usize = 64;
/// Bytes of a broadcast carried in its header line, after the header.
const BCAST_INLINE: usize = LINE - std::mem::size_of::<BcastHeader>();
const ARRIVALS: usize = DOORBELL_BYTES;
const BCAST_HEADERS: usize = ARRIVALS + LINE;
const BCAST_DATA: usize = BCAST_HEADERS + BCAST_SLOTS * LINE;
const BANKS: usize = BCAST_DATA + BCAST_SLOTS * BCAST_SLOT;
/// One member's contribution: its length line, then its bytes.
const CONTRIBUTION: usize = LINE + SLOT;

#[repr(C)]
struct BcastHeader {
    seq: AtomicU64,
    done: AtomicU64,
    len: AtomicU64,
}

/// A communicator's board, mapped in this process.
pub struct NodeBoard {
    segment: Segment,
    members: usize,
    rank: usize,
}

// SAFETY: the board reaches shared memory only through atomics and through
// byte copies the protocol above keeps from racing (see each method); the
// segment stays mapped as long as the board lives.
unsafe impl Send for NodeBoard {}
// SAFETY: as above.
unsafe impl Sync for NodeBoard {}

impl NodeBoard {
    /// Whether `members` reduce on a board (their contributions fit).
    pub fn reduces(members: usize) -> bool {
        members <= MAX_REDUCE_MEMBERS
    }

    /// The bytes of the board of a communicator of `members`.
    pub fn bytes(members: usize) -> usize {
        let banks = if Self::reduces(members) {
            2 * members * CONTRIBUTION
        } else {
            0
        };
        BANKS + banks
    }

    /// The board in `segment` (zero when made, or in use by the other
    /// members), seen by member `rank` of `members`.
    ///
    /// # Panics
    /// If the segment is smaller than [`NodeBoard::bytes`] of `members`.
    pub fn new(segment: Segment, members: usize, rank: usize) -> NodeBoard {
        assert!(
            segment.len() >= Self::bytes(members),
            "node board too small"
        );
        assert!(rank < members);
        NodeBoard {
            segment,
            members,
            rank,
        }
    }

    pub fn members(&self) -> usize {
        self.members
    }

    /// This member's rank in the communicator.
    pub fn rank(&self) -> usize {
        self.rank
    }

    fn at(&self, offset: usize) -> *mut u8 {
        // SAFETY: every offset used is inside the segment (checked against
        // `bytes` in `new`).
        unsafe { self.segment.as_ptr().add(offset) }
    }

    fn word(&self, offset: usize) -> &AtomicU64 {
        // SAFETY: 8-byte aligned (offsets are multiples of a line in a
        // page-aligned mapping), inside the mapping, and only ever used as
        // an atomic by every process.
        unsafe { &*self.at(offset).cast::<AtomicU64>() }
    }

    /// The doorbell members sleep on.
    pub fn doorbell(&self) -> Doorbell {
        // SAFETY: line 0 of the mapping is the doorbell, aligned, mapped as
        // long as the board (callers keep the board alive while they use
        // the handle).
        unsafe { Doorbell::attach(self.at(0)) }
    }

    // ---- rounds ----

    /// Counts this member in; returns whether it completed round `round`
    /// (it was the last to arrive: it should ring the doorbell).
    pub fn arrive(&self, round: u64) -> bool {
        let after = self.word(ARRIVALS).fetch_add(1, Ordering::AcqRel) + 1;
        after == (round + 1) * self.members as u64
    }

    /// Whether every member arrived at round `round`.
    pub fn round_complete(&self, round: u64) -> bool {
        self.word(ARRIVALS).load(Ordering::Acquire) >= (round + 1) * self.members as u64
    }

    // ---- broadcasts ----

    fn header(&self, b: u64) -> &BcastHeader {
        let s = (b % BCAST_SLOTS as u64) as usize;
        // SAFETY: header `s` is a line inside the mapping, aligned, made
        // of atomics only.
        unsafe { &*self.at(BCAST_HEADERS + s * LINE).cast::<BcastHeader>() }
    }

    /// Where broadcast `b`'s `len` bytes go: up to [`BCAST_INLINE`] in
    /// its header line itself (one cache line for the reader to fetch
    /// instead of two), else in its slot.
    fn bcast_data(&self, b: u64, len: usize) -> *mut u8 {
        let s = (b % BCAST_SLOTS as u64) as usize;
        if len <= BCAST_INLINE {
            self.at(BCAST_HEADERS + s * LINE + std::mem::size_of::<BcastHeader>())
        } else {
            self.at(BCAST_DATA + s * BCAST_SLOT)
        }
    }

    /// Whether the slot of broadcast `b` is free for its root: the readers
    /// of its previous use are done.
    pub fn bcast_slot_free(&self, b: u64) -> bool {
        let uses = b / BCAST_SLOTS as u64;
        self.header(b).done.load(Ordering::Acquire) >= uses * (self.members as u64 - 1)
    }

    /// The root publishes broadcast `b`: `len` bytes (at most
    /// [`BCAST_SLOT`]) that `fill` writes into the slot. The caller saw
    /// [`NodeBoard::bcast_slot_free`].
    pub fn bcast_publish(&self, b: u64, len: usize, fill: impl FnOnce(&mut [u8])) {
        assert!(len <= BCAST_SLOT);
        // SAFETY: the slot's readers of its previous use are done (the
        // caller's check, an acquire) and no reader reads it before `seq`
        // below says it is published: nobody else touches these bytes now.
        fill(unsafe { std::slice::from_raw_parts_mut(self.bcast_data(b, len), len) });
        self.publish_word(b, len as u64);
    }

    /// The root publishes broadcast `b` as the word that its `len` bytes
    /// travel another way (they are larger than a slot). The caller saw [`NodeBoard::bcast_slot_free`].
    pub fn bcast_publish_elsewhere(&self, b: u64, len: usize) {
        self.publish_word(b, len as u64 | ELSEWHERE);
    }

    fn publish_word(&self, b: u64, word: u64) {
        let h = self.header(b);
        h.len.store(word, Ordering::Relaxed);
        h.seq.store(b + 1, Ordering::Release);
    }

    /// The header word (`len`, maybe with [`ELSEWHERE`]) of broadcast `b`
    /// once its root published it.
    pub fn bcast_published(&self, b: u64) -> Option<u64> {
        let h = self.header(b);
        (h.seq.load(Ordering::Acquire) == b + 1).then(|| h.len.load(Ordering::Relaxed))
    }

    /// A reader takes `len` bytes (at most the slot's) of broadcast `b`,
    /// published, with `take`, then says it is done with the slot; returns
    /// whether it was the last reader (it should ring the doorbell, for a
    /// root that may wait for the slot).
    pub fn bcast_take(&self, b: u64, len: usize, take: impl FnOnce(&[u8])) -> bool {
        let len = len.min(BCAST_SLOT);
        // SAFETY: the root published the slot (seen through `seq`, an
        // acquire, by `bcast_published`) and does not write it again until
        // this reader's `done` below.
        take(unsafe { std::slice::from_raw_parts(self.bcast_data(b, len), len) });
        self.bcast_done(b)
    }

    /// A reader is done with broadcast `b`'s slot (after reading it, or
    /// after learning that the data travels as messages); returns whether
    /// it was the last reader.
    pub fn bcast_done(&self, b: u64) -> bool {
        let readers = self.members as u64 - 1;
        let uses = b / BCAST_SLOTS as u64 + 1;
        self.header(b).done.fetch_add(1, Ordering::AcqRel) + 1 == uses * readers
    }

    // ---- contributions ----

    fn contribution_at(&self, round: u64, member: usize) -> usize {
        assert!(Self::reduces(self.members) && member < self.members);
        let bank = (round % 2) as usize;
        BANKS + (bank * self.members + member) * CONTRIBUTION
    }

    /// Writes this member's contribution to round `round`: its length,
    /// the size of its data's unit (an element, for a reduction; any
    /// number the caller wants compared), and, when it fits the slot, its
    /// bytes from `fill`. Call before [`NodeBoard::arrive`] at that round,
    /// after seeing the round before complete.
    pub fn contribute(&self, round: u64, len: usize, unit: usize, fill: impl FnOnce(&mut [u8])) {
        let at = self.contribution_at(round, self.rank);
        self.word(at).store(len as u64, Ordering::Relaxed);
        self.word(at + 8).store(unit as u64, Ordering::Relaxed);
        if len <= SLOT {
            // SAFETY: this member's own contribution of this bank, which
            // nobody reads now (see the module's protocol): the last
            // readers of the bank finished before the previous round
            // completed, which the caller saw.
            fill(unsafe { std::slice::from_raw_parts_mut(self.at(at + LINE), len) });
        }
    }

    /// The length `member` gave in round `round` (complete).
    pub fn contribution_len(&self, round: u64, member: usize) -> usize {
        self.word(self.contribution_at(round, member))
            .load(Ordering::Relaxed) as usize
    }

    /// The unit `member` gave in round `round` (complete).
    pub fn contribution_unit(&self, round: u64, member: usize) -> usize {
        self.word(self.contribution_at(round, member) + 8)
            .load(Ordering::Relaxed) as usize
    }

    /// `member`'s contribution to round `round`, which is complete, given
    /// to `read` (the first `len` bytes, at most a slot).
    pub fn read_contribution<R>(
        &self,
        round: u64,
        member: usize,
        len: usize,
        read: impl FnOnce(&[u8]) -> R,
    ) -> R {
        let at = self.contribution_at(round, member);
        // SAFETY: the round is complete (seen through an acquire of the
        // arrivals), so `member` wrote these bytes before its arrival and
        // writes them again only after every member arrived at the next
        // round, after this read.
        read(unsafe { std::slice::from_raw_parts(self.at(at + LINE), len.min(SLOT)) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::shm::test_fork::{attach, shared_segment, wait_until as wait, Child};

    fn board_segment(members: usize) -> Segment {
        shared_segment(NodeBoard::bytes(members), &format!("board-{members}"))
    }

    #[test]
    fn a_round_completes_with_its_last_arrival_only() {
        let board = NodeBoard::new(board_segment(3), 3, 0);
        assert!(!board.arrive(0));
        assert!(!board.round_complete(0));
        assert!(!board.arrive(0));
        assert!(board.arrive(0), "the third arrival completes round 0");
        assert!(board.round_complete(0) && !board.round_complete(1));
        assert!(!board.arrive(1));
    }

    #[test]
    fn broadcast_slots_come_free_when_their_readers_are_done() {
        let board = NodeBoard::new(board_segment(3), 3, 0);
        for b in 0..BCAST_SLOTS as u64 {
            assert!(board.bcast_slot_free(b), "first use of slot {b}");
            board.bcast_publish(b, 3, |d| d.copy_from_slice(&[b as u8; 3]));
        }
        let next = BCAST_SLOTS as u64;
        assert!(
            !board.bcast_slot_free(next),
            "slot 0's readers are not done"
        );
        assert_eq!(board.bcast_published(0), Some(3));
        assert_eq!(board.bcast_published(next), None);
        assert!(!board.bcast_take(0, 3, |d| assert_eq!(d, [0, 0, 0])));
        assert!(!board.bcast_slot_free(next), "one of two readers is done");
        assert!(board.bcast_done(0), "the second reader is the last");
        assert!(board.bcast_slot_free(next));
        board.bcast_publish_elsewhere(next, 1 << 20);
        assert_eq!(board.bcast_published(next), Some((1 << 20) | ELSEWHERE));
    }

    /// Rounds of contributions between two processes: each round, each
    /// adds its round number and rank; both see the other's values of the
    /// same round, never a later or earlier one, over many rounds that
    /// reuse both banks.
    #[test]
    fn contributions_are_exchanged_across_processes_round_after_round() {
        const ROUNDS: u64 = 20_000;
        let segment = board_segment(2);
        let child_segment = attach(&segment);
        let run = |board: &NodeBoard, me: u64| -> bool {
            for round in 0..ROUNDS {
                if round > 0 {
                    wait(|| board.round_complete(round - 1));
                }
                let value = round * 2 + me;
                board.contribute(round, 8, 1, |d| d.copy_from_slice(&value.to_le_bytes()));
                board.arrive(round);
                wait(|| board.round_complete(round));
                let other = 1 - me as usize;
                let got = board.read_contribution(round, other, 8, |d| {
                    u64::from_le_bytes(d.try_into().expect("8 bytes"))
                });
                if got != round * 2 + other as u64
                    || board.contribution_len(round, other) != 8
                    || board.contribution_unit(round, other) != 1
                {
                    return false;
                }
            }
            true
        };
        let child = Child::fork(|| {
            let board = NodeBoard::new(child_segment, 2, 1);
            if run(&board, 1) {
                0
            } else {
                1
            }
        });
        let board = NodeBoard::new(segment, 2, 0);
        assert!(run(&board, 0), "the parent read a wrong value");
        assert_eq!(child.wait(), 0, "the child read a wrong value");
    }

    /// A root broadcasting many times to a reader in another process: the
    /// reader sees every broadcast, in order, with its data, though the
    /// root runs ahead by up to the slots.
    #[test]
    fn broadcasts_reach_a_reader_in_another_process_in_order() {
        const COUNT: u64 = 20_000;
        let segment = board_segment(2);
        let child_segment = attach(&segment);
        let child = Child::fork(|| {
            let board = NodeBoard::new(child_segment, 2, 1);
            for b in 0..COUNT {
                wait(|| board.bcast_published(b).is_some());
                if board.bcast_published(b) != Some(8) {
                    return 2;
                }
                let mut ok = false;
                board.bcast_take(b, 8, |d| ok = d == b.to_le_bytes());
                if !ok {
                    return 1;
                }
            }
            0
        });
        let board = NodeBoard::new(segment, 2, 0);
        for b in 0..COUNT {
            wait(|| board.bcast_slot_free(b));
            board.bcast_publish(b, 8, |d| d.copy_from_slice(&b.to_le_bytes()));
        }
        assert_eq!(child.wait(), 0, "the reader saw a wrong broadcast");
    }
}
