//! The shared-memory transport of one epoch: this process's *inbox* (a
//! segment holding one ring per process of the node, indexed by the
//! sender's local index, plus a doorbell) and producers on the inboxes of
//! the peers it has contacted.
//!
//! Invariants: an inbox belongs to one (job, epoch, rank), so a peer in
//! another epoch can never write into it; each ring has exactly one
//! producer (the sender whose local index it carries) and one consumer
//! (the owner); the owner unlinks its inbox when the epoch ends (or it
//! exits), and mpiexec removes what a killed job left.
use super::doorbell::{Doorbell, DOORBELL_BYTES};
use super::ring::{self, Consumer, Producer, RingLayout};
use super::segment::{Segment, SegmentError};
use crate::transport::{ProcessId, Sink, Transport};
use thiserror::Error;

/// Ring geometry: 4096 lines (256 KiB) per sender, for records of up to
/// 257 lines (a 16 KiB frame and its header). Small messages take one
/// line each, one after the other.
const LINES: usize = 4096;
const RECORD_LINES: usize = 257;
/// Header line, then the doorbell line, then the rings.
const RINGS_OFFSET: usize = 64 + DOORBELL_BYTES;

/// A ring record's kind is the sender's rank; this bit says the payload is a
/// bundle of entries (`u32` length, frame, padding to 8 bytes).
const BUNDLE: u32 = 1 << 31;
const RECORD_HEADER: usize = 4;

/// The bytes a frame of `len` bytes takes in a bundle.
fn record_len(len: usize) -> usize {
    (RECORD_HEADER + len).next_multiple_of(8)
}

fn layout() -> RingLayout {
    RingLayout::new(LINES, RECORD_LINES).expect("valid ring geometry")
}

/// The prefix of every segment name of a job, without the leading `/`
/// (for cleaning up after it). The core names each inbox from it, keyed
/// by epoch and rank (`core::epoch::Epoch::segment_name`).
pub fn job_prefix(job: &str) -> String {
    format!("oxmpi-{job}-")
}

fn inbox_bytes(slots: usize) -> usize {
    RINGS_OFFSET + slots * layout().bytes()
}

#[derive(Debug, Error)]
pub enum InboxError {
    #[error(transparent)]
    Segment(#[from] SegmentError),
    #[error("shm inbox {name}: {why}")]
    Layout { name: String, why: String },
}

fn layout_error(name: &str, why: impl ToString) -> InboxError {
    InboxError::Layout {
        name: name.to_string(),
        why: why.to_string(),
    }
}

struct Outbound {
    /// Keeps the peer's inbox mapped while we write into it.
    segment: Segment,
    producer: Producer,
    doorbell: Doorbell,
}

pub struct ShmTransport {
    inbox: Segment,
    consumers: Vec<Consumer>,
    /// The consumer a poll starts with (see `poll_into`).
    first_ring: usize,
    doorbell: Doorbell,
    local_index: usize,
    /// This process's rank, written into every record it sends (for replies).
    rank: ProcessId,
    /// Producers on the peers' inboxes, indexed by process id.
    peers: Vec<Option<Outbound>>,
}

/// What an inbox lives in (see `segment`).
#[derive(Debug, Clone, Copy)]
pub enum InboxBacking<'a> {
    /// An anonymous segment: no name, nothing left behind, ever.
    Anonymous,
    /// A named segment (where anonymous ones cannot be shared).
    Named(&'a str),
}

impl ShmTransport {
    /// Creates this process's inbox with one ring per local process.
    pub fn create(
        backing: InboxBacking<'_>,
        rank: ProcessId,
        local_index: usize,
        local_count: usize,
    ) -> Result<ShmTransport, InboxError> {
        let slots = local_count.max(local_index + 1);
        let inbox = match backing {
            InboxBacking::Anonymous => Segment::create_anonymous(inbox_bytes(slots))?,
            InboxBacking::Named(name) => Segment::create(name, inbox_bytes(slots))?,
        };
        let name = inbox.address().to_owned();
        let name = name.as_str();
        let base = inbox.as_ptr();
        // SAFETY: the fresh segment is zero-filled, mapped, 64-byte aligned
        // (page aligned) and large enough for the doorbell and every ring;
        // this process is the only consumer of each ring.
        let (doorbell, consumers) = unsafe {
            Doorbell::init(base.add(64));
            let doorbell = Doorbell::attach(base.add(64));
            let mut consumers = Vec::with_capacity(slots);
            for slot in 0..slots {
                let region = base.add(RINGS_OFFSET + slot * layout().bytes());
                ring::init(region, layout()).map_err(|e| layout_error(name, e))?;
                // Our own slot stays empty: frames to oneself take the
                // loopback, so polls skip it.
                if slot != local_index {
                    consumers.push(
                        Consumer::attach(region, layout()).map_err(|e| layout_error(name, e))?,
                    );
                }
            }
            (doorbell, consumers)
        };
        Ok(ShmTransport {
            inbox,
            consumers,
            first_ring: 0,
            doorbell,
            local_index,
            rank,
            peers: Vec::new(),
        })
    }

    /// Where peers find this inbox (what the card publishes).
    pub fn inbox_address(&self) -> &str {
        self.inbox.address()
    }

    /// This process's doorbell (a waiter sleeps on it).
    pub fn doorbell(&self) -> Doorbell {
        self.doorbell
    }

    /// Hands the lines the last poll took back to their producers (see
    /// `Consumer::publish`).
    #[inline]
    pub fn publish(&mut self) {
        self.consumers.iter_mut().for_each(Consumer::publish);
    }

    /// [`Transport::poll`] for a sink known at compile time (the engine's
    /// progress: its frame handling is compiled into the ring loop, no
    /// call through a `dyn`).
    #[inline(always)]
    pub fn poll_into<S: Sink + ?Sized>(&mut self, sink: &mut S) -> usize {
        let mut n = 0;
        // Once a frame satisfies the sink (see `Sink::satisfied`), the poll
        // ends; a sink satisfied before it began is not held to one frame.
        // The next poll then starts at the ring after the one it ended in,
        // so that a sender who always has a frame waiting cannot keep the
        // others' rings from being read.
        let stop_when_satisfied = !sink.satisfied();
        let first = self.first_ring;
        let (before, from_first) = self.consumers.split_at_mut(first);
        for (i, consumer) in from_first.iter_mut().chain(before).enumerate() {
            // The lines the previous poll took go back to their producer
            // now (see `Consumer::publish`).
            consumer.publish();
            let mut done = false;
            consumer.drain(|cell| {
                if cell.kind & BUNDLE == 0 {
                    sink.deliver(cell.kind, cell.payload);
                    n += 1;
                } else {
                    n += deliver_bundle(sink, cell.kind & !BUNDLE, cell.payload);
                }
                done = stop_when_satisfied && sink.satisfied();
                !done
            });
            if done {
                self.first_ring = (first + i + 1) % self.consumers.len();
                break;
            }
        }
        n
    }

    /// Whether a frame waits in any ring (for the doorbell's re-check).
    #[inline]
    pub fn has_pending(&mut self) -> bool {
        self.consumers.iter_mut().any(|c| c.has_pending())
    }

    /// [`Transport::try_send`] with `fill` known at compile time (the
    /// engine's path for a small message: no call through a `dyn`); false
    /// also when a frame of `len` bytes does not fit a record.
    #[inline(always)]
    pub fn push_to(
        &mut self,
        dest: ProcessId,
        len: usize,
        mut fill: impl FnMut(&mut [u8]),
    ) -> bool {
        if len > layout().payload_capacity() {
            return false;
        }
        let Some(Some(peer)) = self.peers.get_mut(dest as usize) else {
            return false;
        };
        // The record's kind carries the sender's rank, for replies.
        let pushed = peer.producer.try_push(self.rank, len, |record| {
            fill(record);
            len
        });
        if pushed {
            peer.doorbell.ring();
        }
        pushed
    }

    /// Whether we write to `peer`'s inbox at `segment_name` already.
    pub fn is_connected_to(&self, peer: ProcessId, segment_name: &str) -> bool {
        self.peers
            .get(peer as usize)
            .and_then(Option::as_ref)
            .is_some_and(|o| o.segment.address() == segment_name)
    }

    /// Maps `peer`'s inbox (at the address its card gives) and takes the
    /// producer side of our ring in it.
    pub fn connect(&mut self, peer: ProcessId, segment_name: &str) -> Result<(), InboxError> {
        let segment = Segment::attach(segment_name)?;
        let needed = RINGS_OFFSET + (self.local_index + 1) * layout().bytes();
        if segment.len() < needed {
            return Err(layout_error(
                segment_name,
                format!(
                    "{} bytes hold no ring for local index {}",
                    segment.len(),
                    self.local_index
                ),
            ));
        }
        let base = segment.as_ptr();
        // SAFETY: the segment is mapped for its whole length (checked above
        // to contain our ring); our local index makes us the ring's only
        // producer; the owner initialized it before publishing its card.
        let (producer, doorbell) = unsafe {
            let region = base.add(RINGS_OFFSET + self.local_index * layout().bytes());
            let producer =
                Producer::attach(region, layout()).map_err(|e| layout_error(segment_name, e))?;
            (producer, Doorbell::attach(base.add(64)))
        };
        let index = peer as usize;
        if self.peers.len() <= index {
            self.peers.resize_with(index + 1, || None);
        }
        self.peers[index] = Some(Outbound {
            segment,
            producer,
            doorbell,
        });
        Ok(())
    }
}

impl Transport for ShmTransport {
    fn max_frame(&self) -> usize {
        layout().payload_capacity()
    }

    fn try_send(&mut self, dest: ProcessId, len: usize, fill: &mut dyn FnMut(&mut [u8])) -> bool {
        self.push_to(dest, len, fill)
    }

    /// Packs frames into one ring record as bundle entries (length, frame, padding to 8
    /// bytes) when more than one fits; a single frame goes alone.
    fn try_send_batch(&mut self, dest: ProcessId, frames: &[&[u8]]) -> usize {
        let capacity = self.max_frame();
        let mut fits = 0;
        let mut bytes = 0;
        for f in frames {
            let record = record_len(f.len());
            if bytes + record > capacity {
                break;
            }
            bytes += record;
            fits += 1;
        }
        if fits < 2 {
            let Some(first) = frames.first() else {
                return 0;
            };
            let one = self.try_send(dest, first.len(), &mut |out: &mut [u8]| {
                out.copy_from_slice(first)
            });
            return one as usize;
        }
        let Some(Some(peer)) = self.peers.get_mut(dest as usize) else {
            return 0;
        };
        let pushed = peer.producer.try_push(self.rank | BUNDLE, bytes, |cell| {
            let mut at = 0;
            for f in &frames[..fits] {
                cell[at..at + RECORD_HEADER].copy_from_slice(&(f.len() as u32).to_le_bytes());
                cell[at + RECORD_HEADER..at + RECORD_HEADER + f.len()].copy_from_slice(f);
                at += record_len(f.len());
            }
            at
        });
        if !pushed {
            return 0;
        }
        peer.doorbell.ring();
        fits
    }

    fn poll(&mut self, sink: &mut dyn Sink) -> usize {
        self.poll_into(sink)
    }
}

/// Delivers the frames of a bundle record from process `from`; their number.
#[cold]
fn deliver_bundle<S: Sink + ?Sized>(sink: &mut S, from: ProcessId, mut rest: &[u8]) -> usize {
    let mut n = 0;
    while rest.len() >= RECORD_HEADER {
        let len = u32::from_le_bytes(rest[..RECORD_HEADER].try_into().expect("4 bytes")) as usize;
        let Some(frame) = rest.get(RECORD_HEADER..RECORD_HEADER + len) else {
            log::error!("malformed bundle from process {from} dropped");
            break;
        };
        sink.deliver(from, frame);
        n += 1;
        rest = &rest[record_len(len).min(rest.len())..];
    }
    n
}

impl Drop for ShmTransport {
    fn drop(&mut self) {
        if let Err(e) = self.inbox.unlink() {
            log::debug!("unlinking {}: {e}", self.inbox.address());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(tag: &str) -> String {
        format!("/oxmpi-test-{}-{tag}", std::process::id())
    }

    #[test]
    fn batches_pack_small_frames_into_records_and_arrive_in_order() {
        let (a, b) = (name("batch-a"), name("batch-b"));
        // Named inboxes here; the other tests use anonymous ones.
        let mut zero = ShmTransport::create(InboxBacking::Named(&a), 0, 0, 2).unwrap();
        let mut one = ShmTransport::create(InboxBacking::Named(&b), 1, 1, 2).unwrap();
        one.connect(0, &a).unwrap();
        let frames: Vec<Vec<u8>> = (0..200u32)
            .map(|i| {
                (0..(i as usize * 37) % 300)
                    .map(|j| (i + j as u32) as u8)
                    .collect()
            })
            .collect();
        // Without the receiver polling, a few records take them all.
        let (mut sent, mut records) = (0, 0);
        while sent < frames.len() {
            let batch: Vec<&[u8]> = frames[sent..].iter().map(|f| f.as_slice()).collect();
            match one.try_send_batch(0, &batch) {
                0 => break,
                n => sent += n,
            }
            records += 1;
        }
        assert!(sent > records * 4, "{sent} frames in {records} records");
        let mut got: Vec<(ProcessId, Vec<u8>)> = Vec::new();
        while got.len() < frames.len() {
            let batch: Vec<&[u8]> = frames[sent..].iter().map(|f| f.as_slice()).collect();
            sent += one.try_send_batch(0, &batch);
            zero.poll(&mut |from, f: &[u8]| got.push((from, f.to_vec())));
        }
        assert_eq!(sent, frames.len());
        assert!(got.iter().all(|(from, _)| *from == 1));
        let got: Vec<Vec<u8>> = got.into_iter().map(|(_, f)| f).collect();
        assert_eq!(got, frames);
        // A frame that fills a record alone still goes, alone.
        let big = vec![7u8; one.max_frame()];
        assert_eq!(one.try_send_batch(0, &[&big, b"x"]), 1);
        let mut after = Vec::new();
        zero.poll(&mut |_, f: &[u8]| after.push(f.to_vec()));
        assert_eq!(after, vec![big]);
    }

    /// A sink that is satisfied once it has seen a frame starting with `b'!'`.
    #[derive(Default)]
    struct Waiter {
        got: Vec<Vec<u8>>,
        satisfied: bool,
    }

    impl Sink for Waiter {
        fn deliver(&mut self, _from: ProcessId, frame: &[u8]) {
            self.satisfied |= frame.first() == Some(&b'!');
            self.got.push(frame.to_vec());
        }

        fn satisfied(&self) -> bool {
            self.satisfied
        }
    }

    /// Three processes' transports (anonymous inboxes), the last two
    /// connected to the first.
    fn receiver_and_two_senders() -> [ShmTransport; 3] {
        let mut all = [0, 1, 2]
            .map(|i| ShmTransport::create(InboxBacking::Anonymous, i as ProcessId, i, 3).unwrap());
        let address = all[0].inbox_address().to_owned();
        assert!(address.starts_with("fd:"), "{address}");
        for sender in &mut all[1..] {
            sender.connect(0, &address).unwrap();
        }
        all
    }

    #[test]
    fn a_poll_ends_at_the_frame_that_satisfies_the_sink() {
        let [mut zero, mut one, mut two] = receiver_and_two_senders();
        for frame in [&b"a"[..], b"!b", b"c"] {
            assert!(one.push_to(0, frame.len(), |cell| cell.copy_from_slice(frame)));
        }
        assert!(two.push_to(0, 1, |cell| cell.copy_from_slice(b"d")));
        let mut waiter = Waiter::default();
        assert_eq!(zero.poll_into(&mut waiter), 2);
        assert_eq!(waiter.got, [&b"a"[..], b"!b"]);
        // Already satisfied: the next poll takes everything, every ring
        // (starting with the ring after the one the last poll ended in).
        assert_eq!(zero.poll_into(&mut waiter), 2);
        assert_eq!(waiter.got, [&b"a"[..], b"!b", b"d", b"c"]);
    }

    #[test]
    fn polls_that_end_early_take_turns_between_the_rings() {
        let [mut zero, mut one, mut two] = receiver_and_two_senders();
        // Both senders always have a frame waiting; every frame satisfies
        // a fresh waiter (a blocking receive from any source).
        for _ in 0..4 {
            assert!(one.push_to(0, 2, |cell| cell.copy_from_slice(b"!1")));
            assert!(two.push_to(0, 2, |cell| cell.copy_from_slice(b"!2")));
        }
        let mut from = Vec::new();
        for _ in 0..6 {
            let mut waiter = Waiter::default();
            assert_eq!(zero.poll_into(&mut waiter), 1);
            from.push(waiter.got[0][1]);
        }
        assert_eq!(from, b"121212", "each ring gets its turn");
    }
}
