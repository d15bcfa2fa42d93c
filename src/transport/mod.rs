//! Transports move frames between endpoints: `self` (a process talking to
//! itself), `shm` (processes on one node, through shared memory) and `tcp`
//! (everything else), behind one small trait so that the core never asks
//! which transport carries a message. One progress engine polls them all.
//! A transport knows nothing of MPI matching: it delivers frames in order per
//! peer and reports what arrived.

pub mod counters;
pub mod endpoints;
pub mod loopback;
pub mod shm;
pub mod tcp;

pub use crate::bootstrap::ProcessId;

/// The epoch a set of transports serves, as the core hands it down
/// (`core::epoch::Epoch::tag`). Transports only compare tags (a TCP hello
/// of another epoch is refused), put them on the wire and print them: what
/// an epoch is, how epochs are numbered and ordered, is the core's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EpochTag(u64);

impl EpochTag {
    pub const fn new(value: u64) -> EpochTag {
        EpochTag(value)
    }

    /// The 8 bytes that carry the tag on the wire.
    pub fn to_le_bytes(self) -> [u8; 8] {
        self.0.to_le_bytes()
    }

    pub fn from_le_bytes(bytes: [u8; 8]) -> EpochTag {
        EpochTag(u64::from_le_bytes(bytes))
    }
}

impl std::fmt::Display for EpochTag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// How many leading bytes of a frame [`Sink::place`] looks at: the length
/// of the engine's frame header (`core::p2p::frame` checks at compile time
/// that its header is this long; the transport never reads inside it).
pub const PLACE_HEAD: usize = 48;

/// Where arriving frames go. Every transport hands whole frames to
/// `deliver`; a transport that reads from a byte stream (tcp) may first ask
/// `place` whether the rest of a large frame can be read straight into its
/// final destination (a posted receive buffer), saving a copy.
pub trait Sink {
    fn deliver(&mut self, from: ProcessId, frame: &[u8]);

    /// For a frame of `len` bytes from `from` that starts with `head`
    /// ([`PLACE_HEAD`] bytes): the memory where its other `len -
    /// PLACE_HEAD` bytes belong, or `None` to have it delivered whole.
    fn place(&mut self, _from: ProcessId, _head: &[u8], _len: usize) -> Option<Placement> {
        None
    }

    /// Every byte of a placed frame (`body_len` after its head) has been
    /// written to its placement.
    fn placed(&mut self, _from: ProcessId, _head: &[u8], _body_len: usize) {}

    /// Whether the sink has what a waiting call waits for: a transport may
    /// then stop handing it frames in this poll (the rest wait for the
    /// next), so that the call returns without first looking for more.
    #[inline]
    fn satisfied(&self) -> bool {
        false
    }
}

/// Any closure taking whole frames is a sink that places nothing.
impl<F: FnMut(ProcessId, &[u8])> Sink for F {
    fn deliver(&mut self, from: ProcessId, frame: &[u8]) {
        self(from, frame)
    }
}

/// Memory a frame's body is written to directly (see [`Sink::place`]).
#[derive(Debug)]
pub struct Placement {
    ptr: std::ptr::NonNull<u8>,
    len: usize,
}

impl Placement {
    /// # Safety
    /// `ptr` must be valid for writes of `len` bytes, and nothing else may
    /// read or write that memory, until the sink's `placed` is called for
    /// the frame or the transport that asked is dropped.
    pub unsafe fn new(ptr: std::ptr::NonNull<u8>, len: usize) -> Placement {
        Placement { ptr, len }
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The memory, to be written.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: `new`'s contract: valid for writes and not aliased while
        // the placement lives.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

// SAFETY: a placement is exclusive access to its memory (`new`'s contract),
// like a `&mut [u8]`, which is Send.
unsafe impl Send for Placement {}

/// What one transport does: carry whole frames to peers in order, and
/// report the frames that arrived.
pub trait Transport {
    /// The largest frame (header included) one `try_send` can carry.
    fn max_frame(&self) -> usize;

    /// Hands a frame of `len` bytes to `dest`; `fill` writes the frame in
    /// place (zero-copy into shared memory where possible). Returns false,
    /// without calling `fill`, when there is no room now (try again after
    /// progress).
    fn try_send(&mut self, dest: ProcessId, len: usize, fill: &mut dyn FnMut(&mut [u8])) -> bool;

    /// Hands a frame made of `head` then `body` to `dest`, as `try_send`
    /// does; a stream transport writes `body` from where it lies (the
    /// user's buffer) instead of copying it first.
    fn try_send_parts(&mut self, dest: ProcessId, head: &[u8], body: &[u8]) -> bool {
        self.try_send(dest, head.len() + body.len(), &mut |frame: &mut [u8]| {
            frame[..head.len()].copy_from_slice(head);
            frame[head.len()..].copy_from_slice(body);
        })
    }

    /// Hands as many of `frames` (in order) to `dest` as it can now;
    /// returns how many. Shared memory packs several small frames into one
    /// ring record, so a burst of small messages is not limited by the
    /// number of cells.
    fn try_send_batch(&mut self, dest: ProcessId, frames: &[&[u8]]) -> usize {
        frames
            .iter()
            .take_while(|f| {
                self.try_send(dest, f.len(), &mut |out: &mut [u8]| out.copy_from_slice(f))
            })
            .count()
    }

    /// Delivers the frames that arrived, in order per sender; returns how
    /// many.
    fn poll(&mut self, sink: &mut dyn Sink) -> usize;
}
