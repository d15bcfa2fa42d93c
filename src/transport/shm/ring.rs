//! A single-producer single-consumer ring of variable-length records in
//! shared memory: the shm fast path, with no syscall, lock or allocation
//! per message.
//!
//! The ring does not own its memory; it lives in any 64-byte aligned region
//! of [`RingLayout::bytes`] bytes (usually part of a [`Segment`]). Layout:
//!
//! ```text
//! offset 8    layout tag: AtomicU64 (magic + sizes; written by init)
//! offset 64   head: AtomicU64 (lines consumed so far; written by the consumer)
//! offset 128  `lines` cache lines of records, then `spill` more lines
//! ```
//!
//! A record is a stamp (`AtomicU64`) and its payload, and takes the whole
//! cache lines it touches: an 8-byte message with its frame header takes
//! one line, the largest one [`RingLayout::new`]'s `record_lines`. Records
//! follow each other line after line, so a stream of small messages fills
//! consecutive lines of a few pages (which the caches' prefetchers and
//! the TLB like) rather than one line in each of many large fixed cells.
//!
//! Positions count lines from 0 forever (a u64 does not wrap); position
//! `p` lies at line `p % lines`. A record starting near the end runs on
//! into the spill lines past the last one instead of wrapping, so a payload
//! is always contiguous; the spill lines hold nothing else, and a record
//! spills only once every earlier record using them has been consumed (it
//! needs the lines up to its end, one lap on, to be free). The producer
//! counts the lines it filled (`tail`, its own), the consumer the lines it
//! consumed (`head`, shared); a record of `k` lines needs `k + 1` free
//! lines, the extra one for the next stamp (below).
//!
//! A stamp is `kind << 32 | VALID | len`. A line may hold anything from
//! an earlier lap (a payload's bytes too), so a stamp is trusted only where
//! the producer cleared it: before it publishes a record, it stores 0 in
//! the stamp of the line after it, where the next record will start. The
//! producer fills the payload, clears the next stamp, then publishes the
//! record by storing its stamp with Release; the consumer loads the stamp
//! at `head` with Acquire, and `VALID` there means a record (anything else
//! is the cleared word: nothing yet). So a waiting consumer reads only the
//! one line where the next message lands, a small message costs the
//! consumer one cache-line transfer, and the consumer never writes a
//! record's line (a store to a line the producer holds would stall its next
//! locked instruction for a cross-core round trip). The consumer hands
//! lines back by storing `head` with Release; the producer loads `head`
//! with Acquire before reusing a line: when its cached copy says the ring
//! is too full, and ahead of that, right after a push that crosses half
//! full by that copy (off the path of the next message).
//!
//! [`Segment`]: super::segment::Segment

use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};

use thiserror::Error;

#[cfg(not(target_has_atomic = "64"))]
compile_error!("the shm ring needs lock-free 64-bit atomics");

/// Cache line size assumed for the layout (x86-64 and most aarch64).
pub const CACHE_LINE: usize = 64;

/// Bytes before the first line: the tag line and the head line.
pub const RING_HEADER_BYTES: usize = 2 * CACHE_LINE;

/// Bytes at the start of each record before its payload (the stamp).
pub const RECORD_HEADER_BYTES: usize = 8;

const TAG_OFFSET: usize = 8;

/// The bit every published stamp has, and the length bits below it.
const VALID: u64 = 1 << 31;
const LEN_MASK: u64 = VALID - 1;
const HEAD_OFFSET: usize = CACHE_LINE;

/// High half of the layout tag: "OXRL".
const TAG_MAGIC: u64 = 0x4f58_524c;
/// The most lines a record may take (the layout tag holds it in 24 bits).
const RECORD_LINES_MAX: usize = (1 << 24) - 1;

/// The lines a record with a payload of `len` bytes takes.
#[inline(always)]
fn record_lines(len: usize) -> usize {
    (RECORD_HEADER_BYTES + len).div_ceil(CACHE_LINE)
}

/// Why a ring cannot be laid out or attached.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum RingError {
    /// The requested layout breaks a rule (power of two, sizes).
    #[error("invalid ring layout ({lines} lines, records of up to {record_lines}): {reason}")]
    BadLayout {
        lines: usize,
        record_lines: usize,
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

/// The shape of a ring: `lines` cache lines (a power of two) for records
/// of up to `record_lines` lines each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RingLayout {
    lines: usize,
    record_lines: usize,
}

impl RingLayout {
    /// Checks and builds a layout: records of up to `record_lines` lines
    /// (stamp included) in a ring of `lines` lines, which must hold one
    /// such record and the next stamp.
    pub fn new(lines: usize, record_lines: usize) -> Result<RingLayout, RingError> {
        let bad = |reason| RingError::BadLayout {
            lines,
            record_lines,
            reason,
        };
        if !lines.is_power_of_two() {
            return Err(bad("lines must be a power of two"));
        }
        if record_lines == 0 || record_lines > RECORD_LINES_MAX {
            return Err(bad("a record takes 1 to 2^24 - 1 lines"));
        }
        if record_lines >= lines {
            return Err(bad(
                "the ring must hold the largest record and one more line",
            ));
        }
        if record_lines * CACHE_LINE - RECORD_HEADER_BYTES > LEN_MASK as usize {
            return Err(bad("a payload must fit a 31-bit length"));
        }
        (lines + record_lines - 1)
            .checked_mul(CACHE_LINE)
            .and_then(|b| b.checked_add(RING_HEADER_BYTES))
            .filter(|&b| b <= isize::MAX as usize)
            .ok_or_else(|| bad("ring size overflows"))?;
        Ok(RingLayout {
            lines,
            record_lines,
        })
    }

    /// Number of lines (spill lines not counted).
    pub fn lines(&self) -> usize {
        self.lines
    }

    /// Largest payload one record carries.
    pub fn payload_capacity(&self) -> usize {
        self.record_lines * CACHE_LINE - RECORD_HEADER_BYTES
    }

    /// Size of the whole ring region: header, lines and spill lines (a
    /// multiple of 64).
    pub fn bytes(&self) -> usize {
        RING_HEADER_BYTES + (self.lines + self.record_lines - 1) * CACHE_LINE
    }

    /// The value `init` stores so that `attach` can check both sides agree.
    fn tag(&self) -> u64 {
        (TAG_MAGIC << 32)
            | (u64::from(self.lines.trailing_zeros()) << 24)
            | self.record_lines as u64
    }
}

/// Initializes a ring in `region`: zeroes its head and the first word of
/// every line (so that no stale stamp is trusted, see the module docs) and
/// stores its layout tag (last, with Release, so an `attach` that sees the
/// tag sees the zeroed words). Call once, before any side attaches.
///
/// # Safety
/// `region` must point to at least `layout.bytes()` writable bytes that stay
/// mapped while the ring is used, and no producer or consumer may be
/// attached to it during the call.
pub unsafe fn init(region: *mut u8, layout: RingLayout) -> Result<(), RingError> {
    check_alignment(region)?;
    // SAFETY: the caller guarantees the region is writable and unused; the
    // offsets are 8-byte aligned inside the 64-byte aligned region.
    unsafe {
        counter(region, HEAD_OFFSET).store(0, Ordering::Relaxed);
        for i in 0..layout.lines + layout.record_lines - 1 {
            counter(region, RING_HEADER_BYTES + i * CACHE_LINE).store(0, Ordering::Relaxed);
        }
        counter(region, TAG_OFFSET).store(layout.tag(), Ordering::Release);
    }
    Ok(())
}

/// Where one side of a ring lives: the shared head and the lines.
#[derive(Debug, Clone, Copy)]
struct Shared {
    head: NonNull<AtomicU64>,
    lines: NonNull<u8>,
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
                lines: region.add(RING_HEADER_BYTES),
                layout,
            })
        }
    }

    fn head(&self) -> &AtomicU64 {
        // SAFETY: points into the mapped, initialized header (attach's
        // contract keeps it mapped while `self` lives).
        unsafe { self.head.as_ref() }
    }

    /// The stamp of the record at `line` (from [`Shared::line`]).
    fn stamp<'a>(line: *mut u8) -> &'a AtomicU64 {
        // SAFETY: a line starts 64-byte aligned inside the mapped region,
        // which outlives the ring's ends (attach's contract).
        unsafe { AtomicU64::from_ptr(line.cast()) }
    }

    /// The line where position `pos` lies; a record starting there may run
    /// `record_lines - 1` lines past it into the spill lines.
    #[inline]
    fn line(&self, pos: u64) -> *mut u8 {
        let index = (pos as usize) & (self.layout.lines - 1);
        // SAFETY: index < lines, so the line, and the largest record from
        // it (spill lines included), lie inside the region.
        unsafe { self.lines.as_ptr().add(index * CACHE_LINE) }
    }

    /// The payload length a stamp announces, clamped to the capacity (a
    /// larger one can only come from a corrupt peer: never read past the
    /// record's lines).
    #[inline]
    fn len_of(&self, stamp: u64) -> usize {
        ((stamp & LEN_MASK) as usize).min(self.layout.payload_capacity())
    }
}

/// The sending side of a ring. One per ring; `&mut self` everywhere keeps it
/// single-producer within a process.
#[derive(Debug)]
pub struct Producer {
    shared: Shared,
    /// Lines filled so far.
    tail: u64,
    /// Last head we read; the true head is never behind it.
    head_cache: u64,
}

// SAFETY: a Producer is the only writer of its free lines, and holds no
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
        // Records still in the ring (from an earlier producer) follow each
        // other from the head up to the cleared stamp after the last one.
        let mut tail = head;
        loop {
            let stamp = Shared::stamp(shared.line(tail)).load(Ordering::Acquire);
            if stamp & VALID == 0 {
                break;
            }
            let next = tail + record_lines(shared.len_of(stamp)) as u64;
            if next - head >= layout.lines as u64 {
                break;
            }
            tail = next;
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

    /// Writes one record of at most `max_len` payload bytes in place and
    /// publishes it.
    ///
    /// `fill` receives the payload area (`max_len` bytes, holding stale
    /// data) and returns how many bytes it wrote. Returns false, without
    /// calling `fill`, when the ring has no room for `max_len` bytes now.
    ///
    /// # Panics
    /// If `max_len` exceeds the payload capacity or `fill` returns more
    /// than `max_len` (caller bugs).
    #[inline(always)]
    pub fn try_push(
        &mut self,
        kind: u32,
        max_len: usize,
        fill: impl FnOnce(&mut [u8]) -> usize,
    ) -> bool {
        let capacity = self.shared.layout.payload_capacity();
        assert!(
            max_len <= capacity,
            "ring push of {max_len} bytes exceeds the record payload capacity {capacity}"
        );
        let lines = self.shared.layout.lines as u64;
        // The record's lines and the next stamp's.
        let needed = record_lines(max_len) as u64 + 1;
        if self.tail + needed - self.head_cache > lines {
            self.head_cache = self.shared.head().load(Ordering::Acquire);
            if self.tail + needed - self.head_cache > lines {
                return false;
            }
        }
        let record = self.shared.line(self.tail);
        // SAFETY: the record's lines, from `tail` on, and the next one are
        // outside [head, head + lines) of the consumer's unread records, so
        // they are ours alone until we publish; the Acquire load of head
        // that proved them free orders the consumer's last reads of them
        // before our writes. A record spilling past the last line uses the
        // spill lines, which no unconsumed record holds (module docs).
        let payload =
            unsafe { std::slice::from_raw_parts_mut(record.add(RECORD_HEADER_BYTES), max_len) };
        let len = fill(payload);
        assert!(
            len <= max_len,
            "ring push of {len} bytes exceeds the {max_len} bytes asked for"
        );
        let next = self.tail + record_lines(len) as u64;
        Shared::stamp(self.shared.line(next)).store(0, Ordering::Relaxed);
        let stamp = (u64::from(kind) << 32) | VALID | len as u64;
        Shared::stamp(record).store(stamp, Ordering::Release);
        let half = lines / 2;
        let was_below_half = self.tail - self.head_cache < half;
        self.tail = next;
        // Half full by our copy of the head: read the consumer's now, after
        // the message is out, rather than when the ring looks full, where
        // the read (a cache miss) would hold up the next message. Once per
        // half lap at most, so a streaming producer does not pull the
        // head's line over at every message.
        if was_below_half && self.tail - self.head_cache >= half {
            self.head_cache = self.shared.head().load(Ordering::Acquire);
        }
        true
    }

    /// How many lines are free right now (reads the consumer's head).
    pub fn free_lines(&mut self) -> usize {
        self.head_cache = self.shared.head().load(Ordering::Acquire);
        self.shared.layout.lines - (self.tail - self.head_cache) as usize
    }
}

/// One received record, read in place: valid until the consumer pops it.
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
    /// Lines released so far (the shared head lags behind until
    /// [`Consumer::publish`]).
    head: u64,
    /// The value of the shared head (only we write it).
    published: u64,
    /// The line at `head`, where the next record's stamp lands: a poll is
    /// one load and one test.
    next: *mut u8,
}

// SAFETY: as for Producer: sole reader of its filled lines, sole writer of
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
            next: shared.line(head),
            head,
            published: head,
            shared,
        })
    }

    /// The ring's layout.
    pub fn layout(&self) -> RingLayout {
        self.shared.layout
    }

    /// The oldest unreleased record, if any, read in place. Peeking again
    /// without [`Consumer::pop`] returns the same record.
    #[inline]
    pub fn peek(&mut self) -> Option<CellRef<'_>> {
        let stamp = Shared::stamp(self.next).load(Ordering::Acquire);
        if stamp & VALID == 0 {
            return None;
        }
        let kind = (stamp >> 32) as u32;
        let len = self.shared.len_of(stamp);
        // SAFETY: this stamp, loaded with Acquire, was published by the
        // producer's Release store after it wrote the payload, and the lines
        // stay ours until we release them; the payload lies inside the
        // record's lines (spill lines included).
        let payload =
            unsafe { std::slice::from_raw_parts(self.next.add(RECORD_HEADER_BYTES), len) };
        Some(CellRef { kind, payload })
    }

    /// Releases the oldest record's lines to the producer. Returns false
    /// (and does nothing) when the ring is empty.
    #[inline]
    pub fn pop(&mut self) -> bool {
        let Some(len) = self.peek().map(|r| r.payload.len()) else {
            return false;
        };
        self.release(len);
        self.publish();
        true
    }

    /// Takes the record [`Consumer::peek`] just returned (of `len` payload
    /// bytes) off the ring; the producer may reuse its lines once
    /// [`Consumer::publish`] has run.
    #[inline]
    fn release(&mut self, len: usize) {
        self.head += record_lines(len) as u64;
        self.next = self.shared.line(self.head);
    }

    /// Hands the released lines back to the producer (one store of the
    /// shared head, if it moved).
    ///
    /// Why not at each release: the producer reads the head only when its
    /// copy says the ring is too full, and the first store after such a
    /// read must take the line back from the producer's core. Made right
    /// after a message is taken, that store would stall the consumer's next
    /// locked instruction on the way to its answer; made at the start of
    /// the next poll, it costs the consumer nothing it was waiting for.
    #[inline]
    pub fn publish(&mut self) {
        if self.published != self.head {
            self.published = self.head;
            self.shared.head().store(self.head, Ordering::Release);
        }
    }

    /// Hands each waiting record to `f` in order, taking it off the ring
    /// after it returns (see [`Consumer::publish`]), until the ring is
    /// empty or `f` returns false (the records after it stay for the next
    /// drain, unlooked at).
    #[inline]
    pub fn drain(&mut self, mut f: impl FnMut(CellRef<'_>) -> bool) {
        while let Some(cell) = self.peek() {
            let len = cell.payload.len();
            let more = f(cell);
            self.release(len);
            if !more {
                return;
            }
        }
    }

    /// True when a record is waiting (one load of the next stamp). A cheap
    /// check for a doorbell's re-check.
    #[inline]
    pub fn has_pending(&mut self) -> bool {
        Shared::stamp(self.next).load(Ordering::Acquire) & VALID != 0
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

    /// A 64-byte aligned heap region standing in for shared memory, filled
    /// with `fill` (stale bytes that look like published stamps when 0xff).
    struct Region {
        ptr: *mut u8,
        layout: Layout,
    }

    impl Region {
        fn new(bytes: usize) -> Region {
            Region::filled(bytes, 0)
        }

        fn filled(bytes: usize, fill: u8) -> Region {
            let layout = Layout::from_size_align(bytes, CACHE_LINE).unwrap();
            // SAFETY: the layout has a non-zero size.
            let ptr = unsafe { alloc_zeroed(layout) };
            assert!(!ptr.is_null());
            // SAFETY: `ptr` holds `bytes` writable bytes.
            unsafe { ptr.write_bytes(fill, bytes) };
            Region { ptr, layout }
        }
    }

    impl Drop for Region {
        fn drop(&mut self) {
            // SAFETY: allocated in `filled` with this layout.
            unsafe { dealloc(self.ptr, self.layout) };
        }
    }

    /// A region with an initialized ring and both ends attached.
    fn ring(lines: usize, record_lines: usize) -> (Region, Producer, Consumer) {
        ring_in(Region::new, lines, record_lines)
    }

    fn ring_in(
        region: impl FnOnce(usize) -> Region,
        lines: usize,
        record_lines: usize,
    ) -> (Region, Producer, Consumer) {
        let layout = RingLayout::new(lines, record_lines).unwrap();
        let region = region(layout.bytes());
        // SAFETY: the region is layout.bytes() long, aligned, and outlives
        // the ends in every test (it is returned first and dropped last).
        unsafe {
            init(region.ptr, layout).unwrap();
            let producer = Producer::attach(region.ptr, layout).unwrap();
            let consumer = Consumer::attach(region.ptr, layout).unwrap();
            (region, producer, consumer)
        }
    }

    /// Deterministic payload length of message `seq`: varies with seq,
    /// from 8 bytes up to the capacity.
    fn len_of(seq: u64, capacity: usize) -> usize {
        8 + (seq as usize * 7) % (capacity - 7)
    }

    /// Deterministic payload for message `seq`.
    fn payload_of(seq: u64, capacity: usize, out: &mut [u8]) -> usize {
        let len = len_of(seq, capacity);
        out[..8].copy_from_slice(&seq.to_le_bytes());
        for (i, b) in out[8..len].iter_mut().enumerate() {
            *b = (seq as u8).wrapping_add(i as u8);
        }
        len
    }

    /// Pushes message `seq` (kind and payload from `payload_of`).
    fn push(producer: &mut Producer, seq: u64) -> bool {
        let capacity = producer.layout().payload_capacity();
        producer.try_push(seq as u32, len_of(seq, capacity), |p| {
            payload_of(seq, capacity, p)
        })
    }

    fn check_payload(seq: u64, capacity: usize, cell: CellRef<'_>) {
        let mut expected = vec![0; capacity];
        let len = payload_of(seq, capacity, &mut expected);
        assert_eq!(cell.kind, seq as u32, "kind of message {seq}");
        assert_eq!(cell.payload, &expected[..len], "payload of message {seq}");
    }

    #[test]
    fn layout_rules() {
        let layout = RingLayout::new(8, 2).unwrap();
        assert_eq!(layout.bytes(), 128 + (8 + 1) * 64, "one spill line");
        assert_eq!(layout.payload_capacity(), 120);
        assert_eq!(RingLayout::new(8, 1).unwrap().payload_capacity(), 56);
        assert!(RingLayout::new(6, 2).is_err(), "lines: a power of two");
        assert!(RingLayout::new(8, 0).is_err());
        assert!(RingLayout::new(8, 8).is_err(), "no room for the next stamp");
        assert!(RingLayout::new(0, 1).is_err());
        assert!(RingLayout::new(1 << 62, 1 << 10).is_err());
        assert_eq!(record_lines(0), 1);
        assert_eq!(record_lines(56), 1);
        assert_eq!(record_lines(57), 2);
    }

    #[test]
    fn attach_checks_alignment_init_and_layout() {
        let layout = RingLayout::new(4, 1).unwrap();
        let region = Region::new(layout.bytes() + 4 * CACHE_LINE);
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
            for (lines, record) in [(8, 1), (4, 2), (4, 3), (8, 2)] {
                let other = RingLayout::new(lines, record).unwrap();
                assert!(
                    matches!(
                        Producer::attach(region.ptr, other),
                        Err(RingError::LayoutMismatch { .. })
                    ),
                    "{lines} lines of records up to {record} attached to 4 of 1"
                );
            }
        }
    }

    /// Records of every length from one line to the largest, over many
    /// laps, in a ring whose lines are full of stale bytes that look like
    /// published stamps: only cleared and published stamps are trusted,
    /// and records spill past the last line whole.
    #[test]
    fn records_of_every_length_over_many_laps_among_stale_bytes() {
        let (_region, mut producer, mut consumer) = ring_in(|b| Region::filled(b, 0xff), 32, 5);
        let capacity = producer.layout().payload_capacity();
        let mut next_pop = 0u64;
        for seq in 0..2000u64 {
            while !push(&mut producer, seq) {
                let cell = consumer.peek().expect("a full ring has a record");
                check_payload(next_pop, capacity, cell);
                assert!(consumer.pop());
                next_pop += 1;
            }
            if seq % 5 == 4 {
                while let Some(cell) = consumer.peek() {
                    check_payload(next_pop, capacity, cell);
                    assert!(consumer.pop());
                    next_pop += 1;
                }
            }
        }
        while let Some(cell) = consumer.peek() {
            check_payload(next_pop, capacity, cell);
            assert!(consumer.pop());
            next_pop += 1;
        }
        assert_eq!(next_pop, 2000);
        assert_eq!(producer.free_lines(), 32);
    }

    #[test]
    fn small_records_take_one_line_each() {
        let (_region, mut producer, mut consumer) = ring(16, 2);
        // 15 one-line records and the next stamp's line fill 16 lines.
        for i in 0..15 {
            assert!(producer.try_push(i, 8, |p| {
                p[..8].copy_from_slice(&u64::from(i).to_le_bytes());
                8
            }));
        }
        assert_eq!(producer.free_lines(), 1);
        assert!(
            !producer.try_push(99, 0, |_| 0),
            "no line for the next stamp"
        );
        for i in 0..15u32 {
            let cell = consumer.peek().unwrap();
            assert_eq!(
                (cell.kind, cell.payload),
                (i, &u64::from(i).to_le_bytes()[..])
            );
            assert!(consumer.pop());
        }
        assert!(consumer.peek().is_none());
    }

    #[test]
    fn a_push_asking_for_more_than_it_writes_takes_only_what_it_wrote() {
        let (_region, mut producer, mut consumer) = ring(8, 4);
        assert!(producer.try_push(1, 200, |p| {
            p[..3].copy_from_slice(b"abc");
            3
        }));
        assert_eq!(producer.free_lines(), 7, "one line used");
        assert!(producer.try_push(2, 0, |_| 0));
        assert_eq!(consumer.peek().unwrap().payload, b"abc");
        assert!(consumer.pop());
        assert_eq!(consumer.peek().unwrap().kind, 2);
    }

    #[test]
    fn drained_records_go_back_to_the_producer_when_published() {
        let (_region, mut producer, mut consumer) = ring(8, 1);
        let capacity = producer.layout().payload_capacity();
        for seq in 0..7u64 {
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
        assert_eq!(seen, [0, 1, 2, 3, 4, 5, 6]);
        assert!(consumer.peek().is_none());
        // Taken, but not handed back yet: the ring still looks full.
        assert_eq!(producer.free_lines(), 1);
        assert!(!push(&mut producer, 7));
        consumer.publish();
        assert_eq!(producer.free_lines(), 8);
        // The next lap carries on where the drain left off.
        for seq in 7..14u64 {
            assert!(push(&mut producer, seq));
        }
        for seq in 7..14u64 {
            check_payload(seq, capacity, consumer.peek().expect("pushed"));
            assert!(consumer.pop());
        }
    }

    #[test]
    fn a_producer_attached_later_continues_after_the_messages_in_the_ring() {
        let (region, mut first, mut consumer) = ring(8, 2);
        let capacity = first.layout().payload_capacity();
        // Over a lap, so that stale stamps of the previous lap are there;
        // the last messages stay in the ring.
        let mut popped = 0u64;
        for seq in 0..12u64 {
            while !push(&mut first, seq) {
                assert!(consumer.pop());
                popped += 1;
            }
        }
        // A second producer for the ring (the first one is not used again).
        // SAFETY: the region outlives `second` (returned first by `ring`,
        // dropped last).
        let mut second = unsafe { Producer::attach(region.ptr, consumer.layout()) }.unwrap();
        let mut seq = 12u64;
        while push(&mut second, seq) {
            seq += 1;
        }
        for expected in popped..seq {
            check_payload(expected, capacity, consumer.peek().expect("in order"));
            assert!(consumer.pop());
        }
        assert!(consumer.peek().is_none());
    }

    #[test]
    fn full_ring_refuses_without_calling_fill() {
        let (_region, mut producer, mut consumer) = ring(8, 1);
        for i in 0..7 {
            assert!(producer.try_push(i, 0, |_| 0), "line {i} of 8 is free");
        }
        let mut called = false;
        assert!(
            !producer.try_push(99, 0, |_| {
                called = true;
                0
            }),
            "a full ring refuses"
        );
        assert!(!called, "fill is not called when full");
        assert_eq!(consumer.peek().unwrap().kind, 0);
        assert_eq!(consumer.peek().unwrap().kind, 0, "peek does not advance");
        assert!(consumer.pop());
        assert!(producer.try_push(7, 3, |p| {
            p[..3].copy_from_slice(b"abc");
            3
        }));
        for i in 1..=7 {
            let cell = consumer.peek().unwrap();
            assert_eq!(cell.kind, i);
            assert_eq!(cell.payload, if i == 7 { &b"abc"[..] } else { &[] });
            consumer.pop();
        }
        assert!(consumer.peek().is_none());
    }

    #[test]
    #[should_panic(expected = "exceeds the 10 bytes asked for")]
    fn overlong_fill_panics() {
        let (_region, mut producer, _consumer) = ring(4, 1);
        producer.try_push(0, 10, |_| 11);
    }

    #[test]
    #[should_panic(expected = "exceeds the record payload capacity")]
    fn overlong_request_panics() {
        let (_region, mut producer, _consumer) = ring(4, 1);
        producer.try_push(0, 57, |_| 0);
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
    fn two_threads(count: u64, lines: usize, record_lines: usize, check: bool) -> f64 {
        let (region, mut producer, mut consumer) = ring(lines, record_lines);
        let capacity = producer.layout().payload_capacity();
        let start = Instant::now();
        let sender = std::thread::spawn(move || {
            for seq in 0..count {
                let max = if check { len_of(seq, capacity) } else { 8 };
                while !producer.try_push(seq as u32, max, |p| {
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
        two_threads(1_000_000, 128, 4, true);
    }

    /// Ring throughput for 8-byte payloads between two threads. Run with
    /// `cargo test --release --lib ring_throughput -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn ring_throughput() {
        for (lines, record_lines) in [(64, 1), (256, 1), (4096, 257)] {
            let rate = two_threads(20_000_000, lines, record_lines, false);
            println!(
                "ring of {lines} lines, records up to {record_lines}, 8-byte payloads, 2 threads: {:.1} M msgs/s",
                rate / 1e6
            );
        }
    }

    #[test]
    fn cross_process_fork() {
        const COUNT: u64 = 100_000;
        let layout = RingLayout::new(64, 4).unwrap();
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
