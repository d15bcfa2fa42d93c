//! A single-producer single-consumer ring of fixed-size cells in shared
//! memory: the shm fast path, with no syscall, lock or allocation per message.
//!
//! The ring does not own its memory; it lives in any 64-byte aligned region
//! of [`RingLayout::bytes`] bytes (usually part of a [`Segment`]). Layout:
//!
//! ```text
//! offset 8    layout tag: AtomicU64 (magic + sizes; written by init)
//! offset 64   head: AtomicU64 (cells popped so far; written by the consumer)
//! offset 128  n_cells cells of cell_size bytes, each:
//!             stamp: AtomicU64 | payload (cell_size - 8 bytes)
//! ```
//!
//! Messages are numbered from 0 forever (a u64 does not wrap); message `i`
//! lives in cell `i % n_cells`. The producer counts what it pushed (`tail`,
//! its own), the consumer what it popped (`head`, shared); the ring is full
//! when `tail - head == n_cells`.
//!
//! A cell's stamp is `kind << 32 | lap << 31 | len`, where `lap` is 1 for
//! messages `0..n_cells`, 0 for the next `n_cells`, and so on alternating.
//! The producer fills the payload, then publishes the cell by storing its
//! stamp with Release; the consumer loads the stamp of the cell at `head`
//! with Acquire, and the lap bit of message `head` means it is there: the
//! cell holds either message `head - n_cells` (the other lap bit, or the
//! zeroed stamp of `init` in the first lap) or message `head`, as message
//! `head + n_cells` cannot be pushed before `head` is popped. So a waiting
//! consumer reads only the one line where the next message lands, a small
//! message costs the consumer one cache-line transfer, and the consumer
//! never writes a cell (a store to a line the producer holds would stall
//! its next locked instruction for a cross-core round trip). The consumer
//! hands cells back by storing `head` with Release; the producer loads
//! `head` with Acquire before reusing a cell: when its cached copy says the
//! ring is full, and ahead of that, right after a push that leaves the
//! ring half full by that copy (off the path of the next message).
//!
//! [`Segment`]: super::segment::Segment

use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};

use thiserror::Error;

#[cfg(not(target_has_atomic = "64"))]
compile_error!("the shm ring needs lock-free 64-bit atomics");

/// Cache line size assumed for the layout (x86-64 and most aarch64).
pub const CACHE_LINE: usize = 64;

/// Bytes before the first cell: the tag line and the head line.
pub const RING_HEADER_BYTES: usize = 2 * CACHE_LINE;

/// Bytes at the start of each cell before its payload (the stamp).
pub const CELL_HEADER_BYTES: usize = 8;

const TAG_OFFSET: usize = 8;

/// The lap bit of a stamp, and the length bits below it.
const LAP_BIT: u64 = 1 << 31;
const LEN_MASK: u64 = LAP_BIT - 1;
const HEAD_OFFSET: usize = CACHE_LINE;

/// High half of the layout tag: "OXRG".
const TAG_MAGIC: u64 = 0x4f58_5247;
/// The most cache lines a cell may have (the layout tag holds the count in
/// 24 bits).
const CELL_LINES_MAX: usize = (1 << 24) - 1;

/// Why a ring cannot be laid out or attached.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RingError {
    /// The requested layout breaks a rule (power of two, sizes).
    #[error("invalid ring layout ({n_cells} cells of {cell_size} bytes): {reason}")]
    BadLayout {
        n_cells: usize,
        cell_size: usize,
        reason: &'static str,
    },
    /// The region does not start on a 64-byte boundary.
    #[error("ring region at {0:#x} is not 64-byte aligned")]
    Misaligned(usize),
    /// The region holds no initialized ring (its layout tag is zero).
    #[error("ring not initialized yet")]
    NotInitialized,
    /// The region was initialized with another layout, or holds garbage.
    #[error("ring layout tag {found:#x} does not match the expected {expected:#x}")]
    LayoutMismatch { expected: u64, found: u64 },
}

/// The shape of a ring: `n_cells` cells (a power of two) of `cell_size`
/// bytes (whole cache lines, so each cell starts a line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RingLayout {
    n_cells: usize,
    cell_size: usize,
}

impl RingLayout {
    /// Checks and builds a layout.
    pub fn new(n_cells: usize, cell_size: usize) -> Result<RingLayout, RingError> {
        let bad = |reason| RingError::BadLayout {
            n_cells,
            cell_size,
            reason,
        };
        if !n_cells.is_power_of_two() {
            return Err(bad("n_cells must be a power of two"));
        }
        if cell_size == 0 || cell_size % CACHE_LINE != 0 || cell_size / CACHE_LINE > CELL_LINES_MAX
        {
            return Err(bad(
                "cell_size must be a whole number of cache lines (at most 2^24)",
            ));
        }
        if cell_size - CELL_HEADER_BYTES > LEN_MASK as usize {
            return Err(bad("cell payload must fit a 31-bit length"));
        }
        n_cells
            .checked_mul(cell_size)
            .and_then(|b| b.checked_add(RING_HEADER_BYTES))
            .filter(|&b| b <= isize::MAX as usize)
            .ok_or_else(|| bad("ring size overflows"))?;
        Ok(RingLayout { n_cells, cell_size })
    }

    /// Number of cells.
    pub fn n_cells(&self) -> usize {
        self.n_cells
    }

    /// Size of one cell, header included.
    pub fn cell_size(&self) -> usize {
        self.cell_size
    }

    /// Largest payload one cell carries: `cell_size - CELL_HEADER_BYTES`.
    pub fn payload_capacity(&self) -> usize {
        self.cell_size - CELL_HEADER_BYTES
    }

    /// Size of the whole ring region, header included (a multiple of 64).
    pub fn bytes(&self) -> usize {
        RING_HEADER_BYTES + self.n_cells * self.cell_size
    }

    /// The value `init` stores so that `attach` can check both sides agree.
    fn tag(&self) -> u64 {
        (TAG_MAGIC << 32)
            | (u64::from(self.n_cells.trailing_zeros()) << 24)
            | (self.cell_size / CACHE_LINE) as u64
    }
}

/// Initializes a ring in `region`: zeroes its head and cell stamps and
/// stores its layout tag (last, with Release, so an `attach` that sees the
/// tag sees the zeroed words). Payloads are left as they are. Call once,
/// before any side attaches.
///
/// # Safety
/// `region` must point to at least `layout.bytes()` writable bytes that stay
/// mapped while the ring is used, and no producer or consumer may be
/// attached to it during the call.
pub unsafe fn init(region: *mut u8, layout: RingLayout) -> Result<(), RingError> {
    check_alignment(region)?;
    // SAFETY: the caller guarantees the header is writable and unused; the
    // offsets are 8-byte aligned inside the 64-byte aligned region.
    unsafe {
        counter(region, HEAD_OFFSET).store(0, Ordering::Relaxed);
        for i in 0..layout.n_cells {
            counter(region, RING_HEADER_BYTES + i * layout.cell_size).store(0, Ordering::Relaxed);
        }
        counter(region, TAG_OFFSET).store(layout.tag(), Ordering::Release);
    }
    Ok(())
}

/// Where one side of a ring lives: the shared head and the cells.
#[derive(Debug, Clone, Copy)]
struct Shared {
    head: NonNull<AtomicU64>,
    cells: NonNull<u8>,
    layout: RingLayout,
}

impl Shared {
    /// # Safety
    /// As for [`Producer::attach`].
    unsafe fn attach(region: *mut u8, layout: RingLayout) -> Result<Shared, RingError> {
        check_alignment(region)?;
        let region = NonNull::new(region).ok_or(RingError::Misaligned(0))?;
        // SAFETY: the caller guarantees the header is mapped.
        let found = unsafe { counter(region.as_ptr(), TAG_OFFSET) }.load(Ordering::Acquire);
        if found == 0 {
            return Err(RingError::NotInitialized);
        }
        if found != layout.tag() {
            return Err(RingError::LayoutMismatch {
                expected: layout.tag(),
                found,
            });
        }
        // SAFETY: all offsets lie inside the `layout.bytes()` region.
        unsafe {
            Ok(Shared {
                head: region.add(HEAD_OFFSET).cast(),
                cells: region.add(RING_HEADER_BYTES),
                layout,
            })
        }
    }

    fn head(&self) -> &AtomicU64 {
        // SAFETY: points into the mapped, initialized header (attach's
        // contract keeps it mapped while `self` lives).
        unsafe { self.head.as_ref() }
    }

    /// The stamp of the cell at `cell` (from [`Shared::cell`]).
    fn stamp<'a>(cell: *mut u8) -> &'a AtomicU64 {
        // SAFETY: a cell starts 64-byte aligned inside the mapped region,
        // which outlives the ring's ends (attach's contract).
        unsafe { AtomicU64::from_ptr(cell.cast()) }
    }

    /// The lap bit of message number `seq`'s stamp.
    #[inline]
    fn lap_bit(&self, seq: u64) -> u64 {
        // n_cells is a power of two: its bit in `seq` counts the laps.
        if seq & self.layout.n_cells as u64 == 0 {
            LAP_BIT
        } else {
            0
        }
    }

    /// The cell that message number `seq` uses.
    #[inline]
    fn cell(&self, seq: u64) -> *mut u8 {
        let index = (seq as usize) & (self.layout.n_cells - 1);
        // SAFETY: index < n_cells, so the cell lies inside the region.
        unsafe { self.cells.as_ptr().add(index * self.layout.cell_size) }
    }
}

/// The sending side of a ring. One per ring; `&mut self` everywhere keeps it
/// single-producer within a process.
#[derive(Debug)]
pub struct Producer {
    shared: Shared,
    /// Messages pushed so far.
    tail: u64,
    /// Last head we read; the true head is never behind it.
    head_cache: u64,
}

// SAFETY: a Producer is the only writer of its free cells, and holds no
// thread-bound state; moving it to another thread is fine. It is not Sync:
// all methods take `&mut self`.
unsafe impl Send for Producer {}

impl Producer {
    /// Attaches the producing side of the ring initialized in `region`.
    ///
    /// # Safety
    /// `region` must point to at least `layout.bytes()` bytes, initialized by
    /// [`init`], that stay mapped while the producer lives; at most one
    /// producer may be attached to a ring at a time, in any process.
    pub unsafe fn attach(region: *mut u8, layout: RingLayout) -> Result<Producer, RingError> {
        // SAFETY: forwarded caller contract.
        let shared = unsafe { Shared::attach(region, layout) }?;
        let head = shared.head().load(Ordering::Acquire);
        // Messages still in the ring (from an earlier producer) carry the
        // lap bit of their number: the first cell without it is the tail.
        let mut tail = head;
        while tail - head < layout.n_cells as u64
            && Shared::stamp(shared.cell(tail)).load(Ordering::Acquire) & LAP_BIT
                == shared.lap_bit(tail)
        {
            tail += 1;
        }
        Ok(Producer {
            tail,
            head_cache: head,
            shared,
        })
    }

    /// The ring's layout.
    pub fn layout(&self) -> RingLayout {
        self.shared.layout
    }

    /// Writes one message in place into the next free cell and publishes it.
    ///
    /// `fill` receives the cell's whole payload area
    /// ([`RingLayout::payload_capacity`] bytes, holding stale data) and
    /// returns how many bytes it wrote. Returns false, without calling
    /// `fill`, when the ring is full.
    ///
    /// # Panics
    /// If `fill` returns more than the payload capacity (a caller bug).
    #[inline(always)]
    pub fn try_push(&mut self, kind: u32, fill: impl FnOnce(&mut [u8]) -> usize) -> bool {
        let n_cells = self.shared.layout.n_cells as u64;
        if self.tail - self.head_cache == n_cells {
            self.head_cache = self.shared.head().load(Ordering::Acquire);
            if self.tail - self.head_cache == n_cells {
                return false;
            }
        }
        let cell = self.shared.cell(self.tail);
        let capacity = self.shared.layout.payload_capacity();
        // SAFETY: the cell is outside [head, tail), so it is ours alone until
        // we publish it; the Acquire load of head that proved it free orders
        // the consumer's last reads of it before our writes.
        let payload =
            unsafe { std::slice::from_raw_parts_mut(cell.add(CELL_HEADER_BYTES), capacity) };
        let len = fill(payload);
        assert!(
            len <= capacity,
            "ring push of {len} bytes exceeds the cell payload capacity {capacity}"
        );
        let stamp = (u64::from(kind) << 32) | self.shared.lap_bit(self.tail) | len as u64;
        Shared::stamp(cell).store(stamp, Ordering::Release);
        self.tail += 1;
        // Half full by our copy of the head: read the consumer's now, after
        // the message is out, rather than when the ring looks full, where
        // the read (a cache miss) would hold up the next message. Once per
        // half lap at most, so a streaming producer does not pull the
        // head's line over at every message.
        if self.tail - self.head_cache == n_cells / 2 {
            self.head_cache = self.shared.head().load(Ordering::Acquire);
        }
        true
    }

    /// How many cells are free right now (reads the consumer's head).
    pub fn free_cells(&mut self) -> usize {
        self.head_cache = self.shared.head().load(Ordering::Acquire);
        self.shared.layout.n_cells - (self.tail - self.head_cache) as usize
    }
}

/// One received cell, read in place: valid until the consumer pops it.
#[derive(Debug, Clone, Copy)]
pub struct CellRef<'a> {
    /// The `kind` the producer gave.
    pub kind: u32,
    /// The payload the producer wrote.
    pub payload: &'a [u8],
}

/// The receiving side of a ring. One per ring.
#[derive(Debug)]
pub struct Consumer {
    shared: Shared,
    /// Messages released so far (the shared head lags behind until
    /// [`Consumer::publish`]).
    head: u64,
    /// The value of the shared head (only we write it).
    published: u64,
    /// The cell of message `head` and the lap bit its stamp carries once
    /// it is there: a poll is one load and one compare.
    next: *mut u8,
    next_lap: u64,
}

// SAFETY: as for Producer: sole reader of its full cells, sole writer of
// head; `next` points into the same mapped region.
unsafe impl Send for Consumer {}

impl Consumer {
    /// Attaches the consuming side of the ring initialized in `region`.
    ///
    /// # Safety
    /// As for [`Producer::attach`], with at most one consumer per ring.
    pub unsafe fn attach(region: *mut u8, layout: RingLayout) -> Result<Consumer, RingError> {
        // SAFETY: forwarded caller contract.
        let shared = unsafe { Shared::attach(region, layout) }?;
        let head = shared.head().load(Ordering::Relaxed);
        Ok(Consumer {
            next: shared.cell(head),
            next_lap: shared.lap_bit(head),
            head,
            published: head,
            shared,
        })
    }

    /// The ring's layout.
    pub fn layout(&self) -> RingLayout {
        self.shared.layout
    }

    /// The oldest unreleased message, if any, read in place. Peeking again
    /// without [`Consumer::pop`] returns the same cell.
    #[inline]
    pub fn peek(&mut self) -> Option<CellRef<'_>> {
        let stamp = Shared::stamp(self.next).load(Ordering::Acquire);
        if stamp & LAP_BIT != self.next_lap {
            return None;
        }
        let kind = (stamp >> 32) as u32;
        // A length beyond the capacity can only come from a corrupt peer;
        // clamp it so we never read outside the cell.
        let len = ((stamp & LEN_MASK) as usize).min(self.shared.layout.payload_capacity());
        // SAFETY: this lap's stamp, loaded with Acquire, was published by
        // the producer's Release store after it wrote the payload, and the
        // cell stays ours until `pop`; the payload lies inside the cell.
        let payload = unsafe { std::slice::from_raw_parts(self.next.add(CELL_HEADER_BYTES), len) };
        Some(CellRef { kind, payload })
    }

    /// Releases the oldest message's cell to the producer. Returns false
    /// (and does nothing) when the ring is empty.
    #[inline]
    pub fn pop(&mut self) -> bool {
        if !self.has_pending() {
            return false;
        }
        self.release();
        self.publish();
        true
    }

    /// Takes the cell [`Consumer::peek`] just returned off the ring; the
    /// producer may reuse it once [`Consumer::publish`] has run.
    #[inline]
    fn release(&mut self) {
        self.head += 1;
        self.next = self.shared.cell(self.head);
        self.next_lap = self.shared.lap_bit(self.head);
    }

    /// Hands the released cells back to the producer (one store of the
    /// shared head, if it moved).
    ///
    /// Why not at each release: the producer reads the head only when its
    /// copy says the ring is full, and the first store after such a read
    /// must take the line back from the producer's core. Made right after
    /// a message is taken, that store would stall the consumer's next
    /// locked instruction on the way to its answer; made at the start of
    /// the next poll, it costs the consumer nothing it was waiting for.
    #[inline]
    pub fn publish(&mut self) {
        if self.published != self.head {
            self.published = self.head;
            self.shared.head().store(self.head, Ordering::Release);
        }
    }

    /// Hands each waiting message to `f` in order, taking its cell off the
    /// ring after it returns (see [`Consumer::publish`]), until the ring is
    /// empty or `f` returns false (the messages after it stay for the next
    /// drain, unlooked at).
    #[inline]
    pub fn drain(&mut self, mut f: impl FnMut(CellRef<'_>) -> bool) {
        while let Some(cell) = self.peek() {
            let more = f(cell);
            self.release();
            if !more {
                return;
            }
        }
    }

    /// True when a message is waiting (one load of the next cell's stamp).
    /// A cheap check for a doorbell's re-check.
    #[inline]
    pub fn has_pending(&mut self) -> bool {
        Shared::stamp(self.next).load(Ordering::Acquire) & LAP_BIT == self.next_lap
    }
}

fn check_alignment(region: *mut u8) -> Result<(), RingError> {
    if region.is_null() || region as usize % CACHE_LINE != 0 {
        return Err(RingError::Misaligned(region as usize));
    }
    Ok(())
}

/// The counter at `offset` in a ring header.
///
/// # Safety
/// `region + offset` must be mapped, 8-byte aligned, and stay mapped for the
/// returned lifetime.
unsafe fn counter<'a>(region: *mut u8, offset: usize) -> &'a AtomicU64 {
    // SAFETY: forwarded caller contract; AtomicU64 has the layout of u64.
    unsafe { AtomicU64::from_ptr(region.add(offset).cast()) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::shm::segment::Segment;
    use crate::transport::shm::test_fork::Child;
    use std::alloc::{alloc_zeroed, dealloc, Layout};
    use std::time::Instant;

    /// A zeroed, 64-byte aligned heap region standing in for shared memory.
    struct Region {
        ptr: *mut u8,
        layout: Layout,
    }

    impl Region {
        fn new(bytes: usize) -> Region {
            let layout = Layout::from_size_align(bytes, CACHE_LINE).unwrap();
            // SAFETY: the layout has a non-zero size.
            let ptr = unsafe { alloc_zeroed(layout) };
            assert!(!ptr.is_null());
            Region { ptr, layout }
        }
    }

    impl Drop for Region {
        fn drop(&mut self) {
            // SAFETY: allocated in `new` with this layout.
            unsafe { dealloc(self.ptr, self.layout) };
        }
    }

    /// A region with an initialized ring and both ends attached.
    fn ring(n_cells: usize, cell_size: usize) -> (Region, Producer, Consumer) {
        let layout = RingLayout::new(n_cells, cell_size).unwrap();
        let region = Region::new(layout.bytes());
        // SAFETY: the region is layout.bytes() long, aligned, and outlives
        // the ends in every test (it is returned first and dropped last).
        unsafe {
            init(region.ptr, layout).unwrap();
            let producer = Producer::attach(region.ptr, layout).unwrap();
            let consumer = Consumer::attach(region.ptr, layout).unwrap();
            (region, producer, consumer)
        }
    }

    /// Deterministic payload for message `seq`: its length varies with seq.
    fn payload_of(seq: u64, capacity: usize, out: &mut [u8]) -> usize {
        let len = 8 + (seq as usize * 7) % (capacity - 7);
        out[..8].copy_from_slice(&seq.to_le_bytes());
        for (i, b) in out[8..len].iter_mut().enumerate() {
            *b = (seq as u8).wrapping_add(i as u8);
        }
        len
    }

    /// Pushes message `seq` (kind and payload from `payload_of`).
    fn push(producer: &mut Producer, seq: u64) -> bool {
        let capacity = producer.layout().payload_capacity();
        producer.try_push(seq as u32, |p| payload_of(seq, capacity, p))
    }

    fn check_payload(seq: u64, capacity: usize, cell: CellRef<'_>) {
        let mut expected = vec![0; capacity];
        let len = payload_of(seq, capacity, &mut expected);
        assert_eq!(cell.kind, seq as u32, "kind of message {seq}");
        assert_eq!(cell.payload, &expected[..len], "payload of message {seq}");
    }

    #[test]
    fn layout_rules() {
        let layout = RingLayout::new(8, 128).unwrap();
        assert_eq!(layout.bytes(), 128 + 8 * 128);
        assert_eq!(layout.payload_capacity(), 120);
        assert!(RingLayout::new(6, 128).is_err());
        assert!(RingLayout::new(8, 32).is_err());
        assert!(RingLayout::new(8, 96).is_err());
        assert!(RingLayout::new(8, 0).is_err());
        // Any whole number of lines (the inbox staggers its cells so).
        let odd = RingLayout::new(8, 3 * 64).unwrap();
        assert_eq!(odd.bytes(), 128 + 8 * 192);
        assert_eq!(odd.payload_capacity(), 184);
        assert!(RingLayout::new(0, 64).is_err());
        assert!(RingLayout::new(1 << 62, 1 << 10).is_err());
    }

    #[test]
    fn attach_checks_alignment_init_and_layout() {
        let layout = RingLayout::new(4, 64).unwrap();
        let region = Region::new(layout.bytes() + CACHE_LINE);
        // SAFETY: the region is large enough for every call below.
        unsafe {
            assert_eq!(
                Consumer::attach(region.ptr, layout).unwrap_err(),
                RingError::NotInitialized
            );
            assert!(matches!(
                init(region.ptr.add(8), layout),
                Err(RingError::Misaligned(_))
            ));
            init(region.ptr, layout).unwrap();
            for (cells, size) in [(8, 64), (2, 128), (4, 128), (4, 192)] {
                let other = RingLayout::new(cells, size).unwrap();
                assert!(
                    matches!(
                        Producer::attach(region.ptr, other),
                        Err(RingError::LayoutMismatch { .. })
                    ),
                    "{cells} cells of {size} bytes attached to 4 of 64"
                );
            }
        }
    }

    #[test]
    fn cells_of_an_odd_number_of_lines_carry_messages_over_many_laps() {
        let (_region, mut producer, mut consumer) = ring(4, 3 * 64);
        let capacity = producer.layout().payload_capacity();
        for seq in 0..40u64 {
            assert!(push(&mut producer, seq));
            if seq % 3 == 2 {
                for back in (0..3).rev() {
                    check_payload(seq - back, capacity, consumer.peek().expect("pushed"));
                    assert!(consumer.pop());
                }
            }
        }
        check_payload(39, capacity, consumer.peek().expect("pushed"));
        assert!(consumer.pop() && consumer.peek().is_none());
    }

    #[test]
    fn fill_drain_and_wrap_around() {
        let (_region, mut producer, mut consumer) = ring(4, 64);
        let capacity = producer.layout().payload_capacity();
        assert!(consumer.peek().is_none() && !consumer.pop());
        let mut next_push = 0u64;
        let mut next_pop = 0u64;
        // Uneven batches so that the indices wrap at every position.
        for round in 0..50 {
            let batch = 1 + round % 4;
            for _ in 0..batch {
                let seq = next_push;
                assert!(push(&mut producer, seq));
                next_push += 1;
            }
            for _ in 0..batch {
                let cell = consumer.peek().expect("a pushed message is visible");
                check_payload(next_pop, capacity, cell);
                assert!(consumer.pop());
                next_pop += 1;
            }
            assert!(consumer.peek().is_none());
        }
        assert_eq!(producer.free_cells(), 4);
    }

    #[test]
    fn drained_cells_go_back_to_the_producer_when_published() {
        let (_region, mut producer, mut consumer) = ring(4, 64);
        let capacity = producer.layout().payload_capacity();
        for seq in 0..4u64 {
            assert!(push(&mut producer, seq));
        }
        let mut seen = Vec::new();
        consumer.drain(|cell| {
            seen.push(cell.kind);
            cell.kind != 1
        });
        assert_eq!(
            seen,
            [0, 1],
            "the drain stops after the message it is told to"
        );
        consumer.drain(|cell| {
            seen.push(cell.kind);
            true
        });
        assert_eq!(seen, [0, 1, 2, 3]);
        assert!(consumer.peek().is_none());
        // Taken, but not handed back yet: the ring still looks full.
        assert_eq!(producer.free_cells(), 0);
        assert!(!push(&mut producer, 4));
        consumer.publish();
        assert_eq!(producer.free_cells(), 4);
        // The next lap carries on where the drain left off.
        for seq in 4..8u64 {
            assert!(push(&mut producer, seq));
        }
        for seq in 4..8u64 {
            check_payload(seq, capacity, consumer.peek().expect("pushed"));
            assert!(consumer.pop());
        }
    }

    #[test]
    fn a_producer_attached_later_continues_after_the_messages_in_the_ring() {
        let (region, mut first, mut consumer) = ring(4, 64);
        let capacity = first.layout().payload_capacity();
        // Over a lap, so that stale stamps of the previous lap are there;
        // messages 4 and 5 stay in the ring.
        for seq in 0..6u64 {
            assert!(push(&mut first, seq));
            if seq < 4 {
                assert!(consumer.pop());
            }
        }
        // A second producer for the ring (the first one is not used again).
        // SAFETY: the region outlives `second` (returned first by `ring`,
        // dropped last).
        let mut second = unsafe { Producer::attach(region.ptr, consumer.layout()) }.unwrap();
        for seq in 6..8u64 {
            assert!(push(&mut second, seq));
        }
        assert!(!second.try_push(99, |_| 0), "four messages fill the ring");
        for seq in 4..8u64 {
            check_payload(seq, capacity, consumer.peek().expect("in order"));
            assert!(consumer.pop());
        }
        assert!(consumer.peek().is_none());
    }

    #[test]
    fn full_ring_refuses_until_popped() {
        let (_region, mut producer, mut consumer) = ring(8, 64);
        for i in 0..8 {
            assert!(producer.try_push(i, |_| 0), "cell {i} of 8 is free");
        }
        assert_eq!(producer.free_cells(), 0);
        let mut called = false;
        assert!(
            !producer.try_push(99, |_| {
                called = true;
                0
            }),
            "a full ring refuses"
        );
        assert!(!called, "fill is not called when full");
        assert_eq!(consumer.peek().unwrap().kind, 0);
        assert_eq!(consumer.peek().unwrap().kind, 0, "peek does not advance");
        assert!(consumer.pop());
        assert!(producer.try_push(8, |p| {
            p[..3].copy_from_slice(b"abc");
            3
        }));
        for i in 1..=8 {
            let cell = consumer.peek().unwrap();
            assert_eq!(cell.kind, i);
            assert_eq!(cell.payload, if i == 8 { &b"abc"[..] } else { &[] });
            consumer.pop();
        }
        assert!(consumer.peek().is_none());
    }

    #[test]
    #[should_panic(expected = "exceeds the cell payload capacity")]
    fn overlong_fill_panics() {
        let (_region, mut producer, _consumer) = ring(2, 64);
        producer.try_push(0, |_| 57);
    }

    /// Waits for the other side: spins when benchmarking, else yields (the
    /// tests share two cores with the build).
    fn back_off(spin: bool) {
        if spin {
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }

    /// Sends `count` sequenced messages from a thread to the calling thread;
    /// returns messages per second. `check` fills and verifies varied
    /// payloads (and yields while waiting) instead of 8-byte ones.
    fn two_threads(count: u64, n_cells: usize, cell_size: usize, check: bool) -> f64 {
        let (region, mut producer, mut consumer) = ring(n_cells, cell_size);
        let capacity = producer.layout().payload_capacity();
        let start = Instant::now();
        let sender = std::thread::spawn(move || {
            for seq in 0..count {
                while !producer.try_push(seq as u32, |p| {
                    if check {
                        payload_of(seq, capacity, p)
                    } else {
                        p[..8].copy_from_slice(&seq.to_le_bytes());
                        8
                    }
                }) {
                    back_off(!check);
                }
            }
        });
        for seq in 0..count {
            let cell = loop {
                if consumer.has_pending() {
                    break consumer.peek().unwrap();
                }
                back_off(!check);
            };
            if check {
                check_payload(seq, capacity, cell);
            } else {
                assert_eq!(cell.payload, &seq.to_le_bytes(), "message {seq}");
            }
            consumer.pop();
        }
        let elapsed = start.elapsed().as_secs_f64();
        sender.join().unwrap();
        assert!(consumer.peek().is_none());
        drop(region);
        count as f64 / elapsed
    }

    #[test]
    fn two_threads_pass_a_million_sequenced_messages() {
        two_threads(1_000_000, 64, 128, true);
    }

    /// Ring throughput for 8-byte payloads between two threads. Run with
    /// `cargo test --release --lib ring_throughput -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn ring_throughput() {
        for (n_cells, cell_size) in [(64, 64), (256, 64), (1024, 64), (256, 256)] {
            let rate = two_threads(20_000_000, n_cells, cell_size, false);
            println!(
                "ring {n_cells} x {cell_size} B, 8-byte payloads, 2 threads: {:.1} M msgs/s",
                rate / 1e6
            );
        }
    }

    #[test]
    fn cross_process_fork() {
        const COUNT: u64 = 100_000;
        let layout = RingLayout::new(32, 256).unwrap();
        let name = format!("/oxmpi-test-{}-ring-fork", std::process::id());
        let segment = Segment::create(&name, layout.bytes()).unwrap();
        // SAFETY: the segment is layout.bytes() long and page aligned.
        unsafe { init(segment.as_ptr(), layout).unwrap() };
        let capacity = layout.payload_capacity();
        let region = segment.as_ptr();
        let child = Child::fork(|| {
            // SAFETY: the mapping was inherited and stays until _exit; this
            // is the ring's only producer. Pushing neither allocates nor locks.
            let Ok(mut producer) = (unsafe { Producer::attach(region, layout) }) else {
                return 1;
            };
            for seq in 0..COUNT {
                while !push(&mut producer, seq) {
                    // SAFETY: sched_yield is async-signal-safe.
                    unsafe { libc::sched_yield() };
                }
            }
            0
        });
        // Both processes hold the mapping now: the name is no longer needed,
        // and removing it early leaves nothing behind if the test fails.
        segment.unlink().unwrap();
        // SAFETY: the segment outlives the consumer; this is its only consumer.
        let mut consumer = unsafe { Consumer::attach(segment.as_ptr(), layout) }.unwrap();
        for seq in 0..COUNT {
            while !consumer.has_pending() {
                std::thread::yield_now();
            }
            check_payload(seq, capacity, consumer.peek().unwrap());
            consumer.pop();
        }
        assert_eq!(child.wait(), 0, "child producer failed");
        assert!(consumer.peek().is_none());
    }
}
