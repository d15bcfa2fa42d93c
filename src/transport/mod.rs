//! Transports move frames between endpoints: `self` (a process talking to
//! itself), `shm` (processes on one node, through shared memory) and `tcp`
//! (everything else), behind one small trait so that the core never asks
//! which transport carries a message. One progress engine polls them all.
//! A transport knows nothing of MPI matching: it delivers frames in order per
//! peer and reports what arrived.

pub mod endpoints;
pub mod loopback;
pub mod shm;
pub mod tcp;

/// A process of the job, by its rank in the launcher's job.
pub type ProcessId = u32;

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

    /// Delivers the frames that arrived, in order per sender; returns how
    /// many.
    fn poll(&mut self, deliver: &mut dyn FnMut(ProcessId, &[u8])) -> usize;
}
