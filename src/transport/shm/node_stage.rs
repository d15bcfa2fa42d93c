//! A communicator's stage in shared memory: where the members of a
//! communicator on one node put the data of their larger blocking
//! collectives (`core::collective::node`: broadcasts above a board slot,
//! allreduces above a contribution slot, small all-to-alls), so that it
//! is copied once in and once out instead of through log(p) message hops.
//!
//! Layout: two banks of [`BANK`] bytes. The collectives that use the stage
//! number their *steps* alike at every member (they call collectives in
//! the same order); step `s` uses bank `s % 2`. The stage has no flags of
//! its own: who may write or read which bytes of a bank when is settled by
//! the board's rounds (`node_board`), under one rule kept by every caller:
//! a member writes to a bank in round `r` only after it saw round `r - 1`
//! complete, and it finishes reading a bank before it arrives at any later
//! round. Then a bank's readers of step `s` are done before anybody writes
//! it for step `s + 2`, since step `s + 1` has a round in between.
//!
//! The stage is made at the first call that needs it, by every member, so
//! communicators that never move much data never have one; its pages are
//! touched only as far as calls use them.
use super::segment::Segment;

/// Bytes of one bank.
pub const BANK: usize = 2 << 20;

const LINE: usize = 64;

/// A communicator's stage, mapped in this process.
pub struct NodeStage {
    segment: Segment,
}

// SAFETY: the stage is reached only through the byte copies of the
// methods below, which the rounds of the board keep from racing (see the
// module's rule); the segment stays mapped as long as the stage lives.
unsafe impl Send for NodeStage {}
// SAFETY: as above.
unsafe impl Sync for NodeStage {}

impl NodeStage {
    /// The bytes of a stage.
    pub fn bytes() -> usize {
        2 * BANK
    }

    /// The stage in `segment` (made by one member, mapped by the others).
    ///
    /// # Panics
    /// If the segment is smaller than [`NodeStage::bytes`].
    pub fn new(segment: Segment) -> NodeStage {
        assert!(segment.len() >= Self::bytes(), "node stage too small");
        NodeStage { segment }
    }

    /// The bytes of one of `parts` equal parts of a bank, whole lines.
    pub fn part_bytes(parts: usize) -> usize {
        BANK / parts.max(1) / LINE * LINE
    }

    fn range(&self, step: u64, offset: usize, len: usize) -> *mut u8 {
        assert!(
            offset.checked_add(len).is_some_and(|end| end <= BANK),
            "outside a bank of the node stage"
        );
        let bank = (step % 2) as usize;
        // SAFETY: inside the mapping: the bank starts at `bank * BANK`, and
        // `offset + len` is within it (checked above).
        unsafe { self.segment.as_ptr().add(bank * BANK + offset) }
    }

    /// Gives `fill` bytes `[offset, offset + len)` of step `step`'s bank to
    /// write: bytes that this member alone writes in this round, nobody
    /// reads before the round completes, and whose readers of the bank's
    /// previous step are done (the module's rule).
    pub fn write<R>(
        &self,
        step: u64,
        offset: usize,
        len: usize,
        fill: impl FnOnce(&mut [u8]) -> R,
    ) -> R {
        let at = self.range(step, offset, len);
        // SAFETY: in bounds (`range`), and by the module's rule no other
        // process reads or writes these bytes until the round this write
        // belongs to completes.
        fill(unsafe { std::slice::from_raw_parts_mut(at, len) })
    }

    /// Gives `read` bytes `[offset, offset + len)` of step `step`'s bank,
    /// written in a round this member saw complete.
    pub fn read<R>(
        &self,
        step: u64,
        offset: usize,
        len: usize,
        read: impl FnOnce(&[u8]) -> R,
    ) -> R {
        let at = self.range(step, offset, len);
        // SAFETY: in bounds (`range`); their writer finished before the
        // round completed (its arrival is a release, the caller's look at
        // the round an acquire) and writes them again only after this
        // member arrives at a later round, after this read (the module's
        // rule).
        read(unsafe { std::slice::from_raw_parts(at, len) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::shm::node_board::NodeBoard;
    use crate::transport::shm::test_fork::{
        attach, shared_segment as shared, wait_until as wait, Child,
    };

    #[test]
    fn parts_are_whole_lines_and_fit_a_bank() {
        for parts in [1, 2, 3, 17, 65, 1000] {
            let part = NodeStage::part_bytes(parts);
            assert_eq!(part % LINE, 0);
            assert!(part * parts <= BANK && part * parts + parts * LINE > BANK);
        }
    }

    #[test]
    #[should_panic(expected = "outside a bank")]
    fn a_range_past_the_bank_is_refused() {
        let stage = NodeStage::new(shared(NodeStage::bytes(), "bounds"));
        stage.read(1, BANK - 8, 9, |_| ());
    }

    /// Two processes exchange a bank-sized block each step, with one round
    /// per step and the writes of step `s` made after round `s - 1`
    /// complete (the module's rule): each always reads the other's data of
    /// the same step, though a writer may be one step ahead of a reader.
    #[test]
    fn steps_alternate_banks_so_a_writer_one_step_ahead_clobbers_nothing() {
        const STEPS: u64 = 3000;
        let half = BANK / 2;
        let board_segment = shared(NodeBoard::bytes(2), "board");
        let stage_segment = shared(NodeStage::bytes(), "stage");
        let (child_board, child_stage) = (attach(&board_segment), attach(&stage_segment));
        let run = |board: &NodeBoard, stage: &NodeStage, me: usize| -> bool {
            for step in 0..STEPS {
                if step > 0 {
                    wait(|| board.round_complete(step - 1));
                }
                let value = (step as u8).wrapping_mul(3).wrapping_add(me as u8);
                // Both ends of the part, where a torn copy would show.
                stage.write(step, me * half, half, |d| {
                    d[0] = value;
                    d[half - 1] = value;
                });
                board.arrive(step);
                wait(|| board.round_complete(step));
                let other = 1 - me;
                let want = (step as u8).wrapping_mul(3).wrapping_add(other as u8);
                let ok = stage.read(step, other * half, half, |d| {
                    d[0] == want && d[half - 1] == want
                });
                if !ok {
                    return false;
                }
            }
            true
        };
        let child = Child::fork(|| {
            let board = NodeBoard::new(child_board, 2, 1);
            if run(&board, &NodeStage::new(child_stage), 1) {
                0
            } else {
                1
            }
        });
        let board = NodeBoard::new(board_segment, 2, 0);
        assert!(run(&board, &NodeStage::new(stage_segment), 0));
        assert_eq!(child.wait(), 0, "the child read another step's data");
    }
}
