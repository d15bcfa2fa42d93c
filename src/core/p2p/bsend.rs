//! The buffer of buffered-mode sends (`MPI_Buffer_attach`): the space a
//! `MPI_Bsend` packs its message into before sending it from there.
//!
//! Every message takes its packed size plus `MPI_BSEND_OVERHEAD` bytes, the
//! amount MPI tells programs to reserve per message (oxmpi keeps its
//! bookkeeping in Rust, but counts those bytes against the space so a
//! program sized for MPICH fits exactly as it would there). Space is taken
//! first-fit and given back when the message's send completes; regions
//! never overlap.
use std::collections::BTreeMap;
use std::os::raw::c_void;

use super::engine::{Endpoints, Engine, SendArgs};
use super::request::{Operation, Request};
use super::user_buffer::{byte_type, UserBuffer};
use crate::core::error::{MpiError, MpiResult};
use crate::mpi_abi::constants::*;

/// Bytes every buffered message costs beyond its data: the header's
/// `MPI_BSEND_OVERHEAD` of the library being built (MPICH's or the
/// standard ABI's).
pub const OVERHEAD: usize = crate::mpi_abi::standard::values::BSEND_OVERHEAD as usize;

pub struct AttachedBuffer {
    base: usize,
    size: usize,
    /// Regions in use: start offset -> end offset (data plus overhead).
    regions: BTreeMap<usize, usize>,
}

impl AttachedBuffer {
    /// The user's `size` bytes at address `base`.
    pub fn new(base: usize, size: usize) -> AttachedBuffer {
        AttachedBuffer {
            base,
            size,
            regions: BTreeMap::new(),
        }
    }

    pub fn base(&self) -> usize {
        self.base
    }

    pub fn size(&self) -> usize {
        self.size
    }

    /// Reserves room for a message of `len` bytes; returns the offset its
    /// data goes to, or `None` when no gap is large enough.
    pub fn reserve(&mut self, len: usize) -> Option<usize> {
        let need = len.checked_add(OVERHEAD)?;
        // The first gap (between regions, or after the last) that fits.
        let mut start = 0;
        for (&s, &e) in &self.regions {
            if s - start >= need {
                break;
            }
            start = e;
        }
        if start.checked_add(need)? > self.size {
            return None;
        }
        self.regions.insert(start, start + need);
        Some(start)
    }

    /// Gives back the region whose data starts at `offset`.
    pub fn release(&mut self, offset: usize) {
        let released = self.regions.remove(&offset);
        debug_assert!(
            released.is_some(),
            "released a region that was not reserved"
        );
    }

    /// Bytes not reserved (possibly in several gaps).
    pub fn free_bytes(&self) -> usize {
        self.size
            - self
                .regions
                .values()
                .zip(self.regions.keys())
                .map(|(e, s)| e - s)
                .sum::<usize>()
    }

    /// Whether messages still use the buffer.
    pub fn in_use(&self) -> bool {
        !self.regions.is_empty()
    }
}

impl Engine {
    /// `MPI_Buffer_attach`.
    pub fn attach_buffer(&mut self, base: usize, size: usize) -> MpiResult {
        if self.attached.is_some() {
            return Err(MpiError::new(
                MPI_ERR_BUFFER,
                "a buffer is attached already (MPI_Buffer_detach it first)",
            ));
        }
        self.attached = Some(AttachedBuffer::new(base, size));
        Ok(())
    }

    /// The attached buffer's address and size.
    pub fn attached_buffer(&self) -> Option<(usize, usize)> {
        self.attached.as_ref().map(|b| (b.base(), b.size()))
    }

    /// Whether buffered sends still use the attached buffer.
    pub fn buffered_sends_pending(&self) -> bool {
        self.attached.as_ref().is_some_and(|b| b.in_use())
    }

    /// `MPI_Buffer_detach` once no buffered send uses the buffer: its
    /// address and size (`None` when none is attached).
    pub fn detach_buffer(&mut self) -> Option<(usize, usize)> {
        debug_assert!(!self.buffered_sends_pending());
        self.attached.take().map(|b| (b.base(), b.size()))
    }

    /// A buffered-mode send: packs the message into the attached buffer
    /// and sends it from there; `MPI_ERR_BUFFER` when it does not fit.
    pub fn bsend(&mut self, ep: &mut Endpoints, args: SendArgs) -> MpiResult {
        let len = args.buf.len();
        let Some(buffer) = &mut self.attached else {
            return Err(MpiError::new(
                MPI_ERR_BUFFER,
                "buffered send without an attached buffer (MPI_Buffer_attach)",
            ));
        };
        let offset = match buffer.reserve(len) {
            Some(offset) => offset,
            None => {
                // Completed buffered sends give their space back.
                self.progress(ep);
                let buffer = self.attached.as_mut().expect("attached");
                buffer.reserve(len).ok_or_else(|| {
                    MpiError::new(
                        MPI_ERR_BUFFER,
                        format!(
                            "the attached buffer has no room for {len} bytes plus MPI_BSEND_OVERHEAD ({OVERHEAD}): \
                             {} of its {} bytes are free",
                            buffer.free_bytes(),
                            buffer.size()
                        ),
                    )
                })?
            }
        };
        let addr = self.attached.as_ref().expect("attached").base() + offset;
        if len > 0 {
            // SAFETY: [addr, addr + len) lies inside the attached buffer,
            // which the program lent MPI until MPI_Buffer_detach (it waits
            // for this send), and this region is reserved for this message.
            let region = unsafe { std::slice::from_raw_parts_mut(addr as *mut u8, len) };
            args.buf.pack(0, region);
        }
        let send_args = SendArgs {
            // SAFETY: as above: the region stays valid and untouched until
            // the send completes and gives it back.
            buf: unsafe { UserBuffer::new(addr as *const c_void, len, byte_type()) },
            ..args
        };
        let mut req = Request::new(Operation::Done);
        req.bsend_offset = Some(offset);
        let id = self.requests.insert(req);
        self.launch_send(ep, id, send_args);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_message_costs_its_size_plus_the_overhead() {
        let mut b = AttachedBuffer::new(0x1000, 2 * (100 + OVERHEAD));
        assert_eq!(b.reserve(100), Some(0));
        assert_eq!(b.reserve(100), Some(100 + OVERHEAD));
        assert_eq!(
            b.reserve(0),
            None,
            "even an empty message needs the overhead"
        );
        assert_eq!(b.free_bytes(), 0);
        let mut b = AttachedBuffer::new(0, OVERHEAD - 1);
        assert_eq!(b.reserve(0), None);
    }

    #[test]
    fn released_space_is_reused_first_fit() {
        let unit = 10 + OVERHEAD;
        let mut b = AttachedBuffer::new(0, 3 * unit);
        let a = b.reserve(10).unwrap();
        let m = b.reserve(10).unwrap();
        let c = b.reserve(10).unwrap();
        assert_eq!((a, m, c), (0, unit, 2 * unit));
        b.release(m);
        assert_eq!(b.reserve(11), None, "the gap is one unit");
        assert_eq!(b.reserve(10), Some(unit));
        b.release(a);
        b.release(unit);
        assert_eq!(b.reserve(10 + unit), Some(0), "adjacent gaps merge");
        assert!(b.in_use());
        b.release(0);
        b.release(c);
        assert!(!b.in_use());
        assert_eq!(b.free_bytes(), 3 * unit);
    }

    #[test]
    fn buffered_sends_use_the_attached_buffer() {
        use super::super::engine::testing::*;
        let (mut e, mut ep) = engine();
        let data = [7u8; 100];
        let err = e.bsend(&mut ep, send_args(&data, ME, 1)).unwrap_err();
        assert_eq!(err.class, MPI_ERR_BUFFER, "nothing attached");
        let mut space = vec![0u8; 100 + OVERHEAD];
        e.attach_buffer(space.as_mut_ptr() as usize, space.len())
            .unwrap();
        let err = e
            .attach_buffer(space.as_mut_ptr() as usize, space.len())
            .unwrap_err();
        assert_eq!(err.class, MPI_ERR_BUFFER, "attached twice");
        let big = [0u8; 101];
        let err = e.bsend(&mut ep, send_args(&big, ME, 1)).unwrap_err();
        assert_eq!(err.class, MPI_ERR_BUFFER, "too large for the buffer");
        e.bsend(&mut ep, send_args(&data, ME, 1)).unwrap();
        assert_eq!(
            &space[..100],
            &data[..],
            "the message was packed into the buffer"
        );
        // An eager send handed to the transport: the space is free again.
        assert!(!e.buffered_sends_pending());
        let mut got = [0u8; 100];
        let r = e.irecv(&mut ep, recv_buf(&mut got), pattern(Some(1)));
        settle_down(&mut e, &mut ep);
        assert!(e.take(r).is_ok());
        assert_eq!(got, data);
        assert_eq!(
            e.detach_buffer(),
            Some((space.as_ptr() as usize, space.len()))
        );
        assert_eq!(e.detach_buffer(), None);
        // A message whose frame waits in the outbox keeps its space.
        e.attach_buffer(space.as_mut_ptr() as usize, space.len())
            .unwrap();
        e.bsend(&mut ep, send_args(&data, UNREACHABLE, 1)).unwrap();
        assert!(e.buffered_sends_pending());
    }

    #[test]
    fn huge_requests_do_not_overflow() {
        let mut b = AttachedBuffer::new(0, 1000);
        assert_eq!(b.reserve(usize::MAX), None);
        assert_eq!(b.reserve(usize::MAX - OVERHEAD), None);
    }
}
