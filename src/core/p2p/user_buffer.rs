//! A user's message buffer: an address, a count and a datatype. Moving
//! bytes in and out of it goes through the datatype's streaming pack and
//! unpack, so a message can be copied in pieces at any offset.
//!
//! The abi layer creates a `UserBuffer` from the C arguments with
//! [`UserBuffer::new`], whose contract (the memory stays valid and is not
//! otherwise touched until the operation completes) is MPI's own. A buffer
//! made by [`UserBuffer::packed`] owns its bytes instead (a packed copy
//! that oxmpi sends from), so it lives exactly as long as the operation.
use std::os::raw::{c_int, c_void};
use std::sync::Arc;

use crate::core::datatype::{self, TypeRef};
use crate::mpi_abi::constants::{MPI_BYTE, MPI_ERR_TRUNCATE, MPI_ERR_TYPE, MPI_SUCCESS};
use crate::transport::Placement;

#[derive(Clone)]
pub struct UserBuffer {
    addr: usize,
    count: usize,
    /// Bytes of data (`count` times the type's size), and where they start
    /// when they form one block: worked out once, as every copy asks.
    bytes: usize,
    block_start: Option<usize>,
    datatype: TypeRef,
    /// The bytes behind `addr` when oxmpi owns them (only ever read).
    owned: Option<Arc<[u8]>>,
}

/// `MPI_BYTE`, the datatype of packed data.
pub fn byte_type() -> TypeRef {
    datatype::lookup_for_message(MPI_BYTE).expect("MPI_BYTE is predefined")
}

impl UserBuffer {
    /// # Safety
    /// `buf` with `count` elements of `datatype` must be valid memory (for
    /// writes too, if it receives) until the operation using it completes.
    pub unsafe fn new(
        buf: *const c_void,
        count: usize,
        datatype: impl Into<TypeRef>,
    ) -> UserBuffer {
        let datatype = datatype.into();
        let addr = buf as usize;
        UserBuffer {
            addr,
            count,
            bytes: count * datatype.size(),
            block_start: datatype
                .is_contiguous()
                .then(|| (addr as isize).wrapping_add(datatype.true_lb()) as usize),
            datatype,
            owned: None,
        }
    }

    /// A buffer that owns `bytes` (a message packed by oxmpi). Send-only:
    /// nothing is ever unpacked into it.
    pub fn packed(bytes: Vec<u8>) -> UserBuffer {
        let bytes: Arc<[u8]> = bytes.into();
        // SAFETY: the buffer owns the bytes it points to.
        let buf = unsafe { UserBuffer::new(bytes.as_ptr().cast(), bytes.len(), byte_type()) };
        UserBuffer {
            owned: Some(bytes),
            ..buf
        }
    }

    /// Elements `[first, first + count)` of this buffer as a buffer of its
    /// own (consecutive elements lie one extent apart, as MPI lays them
    /// out): a partition of a partitioned send or receive.
    ///
    /// # Panics
    /// If the elements are not all within this buffer.
    pub fn elements(&self, first: usize, count: usize) -> UserBuffer {
        assert!(
            first
                .checked_add(count)
                .is_some_and(|end| end <= self.count),
            "elements beyond the buffer"
        );
        let offset = (first as isize).wrapping_mul(self.datatype.extent());
        let addr = (self.addr as isize).wrapping_add(offset) as usize;
        // SAFETY: the elements lie within this buffer's (checked above), so
        // the memory is valid for as long and in the same ways (`new`'s
        // contract, or owned bytes, which the clone of `owned` keeps).
        let part = unsafe { UserBuffer::new(addr as *const c_void, count, self.datatype.clone()) };
        UserBuffer {
            owned: self.owned.clone(),
            ..part
        }
    }

    /// The address the buffer starts at (its first element's).
    pub fn address(&self) -> usize {
        self.addr
    }

    /// Bytes `[offset, offset + len)` of the message as a buffer of bytes,
    /// when this buffer is one block that holds them.
    pub fn byte_range(&self, offset: usize, len: usize) -> Option<UserBuffer> {
        let (start, total) = self.contiguous_block()?;
        if offset.checked_add(len)? > total {
            return None;
        }
        // SAFETY: the bytes lie within this buffer's one block (checked
        // above): valid for as long and in the same ways as this buffer.
        let bytes = unsafe { UserBuffer::new((start + offset) as *const c_void, len, byte_type()) };
        Some(UserBuffer {
            owned: self.owned.clone(),
            ..bytes
        })
    }

    /// Bytes of data the buffer holds (its packed size).
    #[inline]
    pub fn len(&self) -> usize {
        self.bytes
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Packs bytes `[offset, offset + out.len())` of the message into `out`.
    #[inline]
    pub fn pack(&self, offset: usize, out: &mut [u8]) -> usize {
        if let Some((start, total)) = self.contiguous_block() {
            // One block: a plain copy (the common case, kept short).
            let n = out.len().min(total.saturating_sub(offset));
            if n == 0 {
                // The address may be NULL for an empty message.
                return 0;
            }
            // SAFETY: bytes [offset, offset + n) lie within the block,
            // readable per `new`'s contract (or owned); `out` is ours.
            unsafe { copy_bytes((start + offset) as *const u8, out.as_mut_ptr(), n) };
            return n;
        }
        // SAFETY: the memory is valid per `new`'s contract (or owned);
        // pack_range stays within the count elements of the datatype.
        unsafe {
            self.datatype
                .pack_range(self.addr as *const u8, self.count, offset, out)
        }
    }

    /// Unpacks `input` as bytes starting at `offset` of the message.
    #[inline]
    pub fn unpack(&self, offset: usize, input: &[u8]) -> usize {
        debug_assert!(
            self.owned.is_none(),
            "packed buffers are never received into"
        );
        if let Some((start, total)) = self.contiguous_block() {
            let n = input.len().min(total.saturating_sub(offset));
            if n == 0 {
                return 0;
            }
            // SAFETY: bytes [offset, offset + n) lie within the block,
            // writable per `new`'s contract and not aliased by `input`.
            unsafe { copy_bytes(input.as_ptr(), (start + offset) as *mut u8, n) };
            return n;
        }
        // SAFETY: as in `pack`; the caller never passes more than `len()`
        // bytes in total.
        unsafe {
            self.datatype
                .unpack_range(self.addr as *mut u8, self.count, offset, input)
        }
    }

    /// Runs `f` on the buffer's bytes when they form one block.
    pub fn with_contiguous_mut<R>(&self, f: impl FnOnce(&mut [u8]) -> R) -> Option<R> {
        debug_assert!(
            self.owned.is_none(),
            "packed buffers are never received into"
        );
        let (start, len) = self.contiguous_block()?;
        if len == 0 {
            return Some(f(&mut []));
        }
        // SAFETY: one block of `len` bytes of the user's buffer, valid for
        // writes per `new`'s contract, not aliased while the engine holds
        // the runtime lock.
        let bytes = unsafe { std::slice::from_raw_parts_mut(start as *mut u8, len) };
        Some(f(bytes))
    }

    /// The buffer's bytes when they form one block, to work on in place
    /// (a collective receives into them and sends from them).
    pub fn contiguous_mut(&mut self) -> Option<&mut [u8]> {
        debug_assert!(
            self.owned.is_none(),
            "packed buffers are never received into"
        );
        let (start, len) = self.contiguous_block()?;
        if len == 0 {
            return Some(&mut []);
        }
        // SAFETY: one block of `len` bytes of the user's buffer, valid for
        // reads and writes per `new`'s contract while its operation runs;
        // borrowed from `self` mutably, so this buffer hands out no other
        // view of it meanwhile.
        Some(unsafe { std::slice::from_raw_parts_mut(start as *mut u8, len) })
    }

    /// Bytes `[offset, offset + len)` of the message, when the buffer is
    /// one block that holds them (a send takes them from there).
    pub fn contiguous_bytes(&self, offset: usize, len: usize) -> Option<&[u8]> {
        let (start, total) = self.contiguous_block()?;
        if offset.checked_add(len)? > total {
            return None;
        }
        if len == 0 {
            return Some(&[]);
        }
        // SAFETY: the range lies within the buffer, readable per `new`'s
        // contract (or owned) while `self` lives; a send's buffer is not
        // written by MPI.
        Some(unsafe { std::slice::from_raw_parts((start + offset) as *const u8, len) })
    }

    /// Bytes `[offset, offset + len)` of the message as memory a transport
    /// writes into directly, when the buffer is one block that holds them.
    /// The engine touches that memory no more until the transport reports
    /// the bytes written (`Sink::placed`).
    pub fn placement(&self, offset: usize, len: usize) -> Option<Placement> {
        debug_assert!(
            self.owned.is_none(),
            "packed buffers are never received into"
        );
        let (start, total) = self.contiguous_block()?;
        if len == 0 || offset.checked_add(len)? > total {
            return None;
        }
        let ptr = std::ptr::NonNull::new((start + offset) as *mut u8)?;
        // SAFETY: `len` bytes at `offset` lie within the user's receive
        // buffer, valid for writes per `new`'s contract until the receive
        // completes, which waits for these bytes; the engine does not touch
        // them meanwhile.
        Some(unsafe { Placement::new(ptr, len) })
    }

    /// What receiving a message of `len` bytes into this buffer reports:
    /// the bytes kept, and `MPI_ERR_TRUNCATE` when the message does not
    /// fit; `MPI_ERR_TYPE` when the buffer is of several blocks and the
    /// message ends inside one of its basic elements (the type signatures
    /// cannot match; MPICH reports it as well, where a contiguous buffer
    /// takes the bytes as they come); else `MPI_SUCCESS`.
    #[inline]
    pub fn receive_outcome(&self, len: usize) -> (usize, c_int) {
        if len > self.bytes {
            (self.bytes, MPI_ERR_TRUNCATE)
        } else if self.block_start.is_none() && self.datatype.elements_in(len).is_none() {
            (len, MPI_ERR_TYPE)
        } else {
            (len, MPI_SUCCESS)
        }
    }

    /// Where the data lies when it is one block (for single-copy reads).
    #[inline]
    pub fn contiguous_block(&self) -> Option<(usize, usize)> {
        Some((self.block_start?, self.bytes))
    }
}

/// Copies `src` into `out` (of the same length) the way message bytes are
/// copied (see [`copy_bytes`]).
///
/// # Panics
/// If the lengths differ.
#[inline(always)]
pub fn copy_message(out: &mut [u8], src: &[u8]) {
    assert_eq!(out.len(), src.len(), "message copy of unequal lengths");
    // SAFETY: two valid slices of the same length; `out` is borrowed
    // mutably, so they do not overlap.
    unsafe { copy_bytes(src.as_ptr(), out.as_mut_ptr(), src.len()) }
}

/// Copies `n` bytes from `src` to `dst`: messages of up to 16 bytes with
/// two overlapping loads and stores in line (no call into `memcpy`, whose
/// dispatch costs more than such a copy), longer ones with `memcpy`.
///
/// # Safety
/// As `std::ptr::copy_nonoverlapping`.
#[inline(always)]
unsafe fn copy_bytes(src: *const u8, dst: *mut u8, n: usize) {
    // SAFETY: in every arm, the caller's contract covers [src, src + n)
    // and [dst, dst + n) and excludes their overlap; each access lies
    // inside them (the two words of a range overlap when n is below twice
    // their size, and n >= 8 or n >= 4 in those arms keeps `add` in range).
    unsafe {
        match n {
            8..=16 => {
                let a = src.cast::<u64>().read_unaligned();
                let b = src.add(n - 8).cast::<u64>().read_unaligned();
                dst.cast::<u64>().write_unaligned(a);
                dst.add(n - 8).cast::<u64>().write_unaligned(b);
            }
            4..=7 => {
                let a = src.cast::<u32>().read_unaligned();
                let b = src.add(n - 4).cast::<u32>().read_unaligned();
                dst.cast::<u32>().write_unaligned(a);
                dst.add(n - 4).cast::<u32>().write_unaligned(b);
            }
            _ => std::ptr::copy_nonoverlapping(src, dst, n),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mpi_abi::constants::MPI_INT;

    #[test]
    fn contiguous_buffers_pack_and_unpack_any_range_by_plain_copies() {
        let ints = datatype::lookup_for_message(MPI_INT).unwrap();
        assert!(matches!(ints, TypeRef::Predefined(_)));
        let data: Vec<i32> = (0..10).map(|i| i * 1000 + 7).collect();
        // SAFETY: `data` outlives the buffer.
        let src = unsafe { UserBuffer::new(data.as_ptr().cast(), data.len(), ints.clone()) };
        assert_eq!(src.len(), 40);
        let mut packed = [0u8; 48];
        // In two pieces at an odd offset; the second runs past the end.
        assert_eq!(src.pack(0, &mut packed[..13]), 13);
        assert_eq!(src.pack(13, &mut packed[13..]), 27);
        let bytes: Vec<u8> = data.iter().flat_map(|v| v.to_ne_bytes()).collect();
        assert_eq!(&packed[..40], &bytes[..]);

        let mut back = vec![0i32; 10];
        // SAFETY: `back` outlives the buffer.
        let dst = unsafe { UserBuffer::new(back.as_mut_ptr().cast(), back.len(), ints) };
        assert_eq!(dst.unpack(0, &packed[..6]), 6);
        assert_eq!(dst.unpack(6, &packed[6..48]), 34, "clipped at the end");
        assert_eq!(back, data);
    }

    #[test]
    fn a_receive_reports_truncation_and_partial_elements_of_scattered_buffers() {
        let ints = datatype::lookup_for_message(MPI_INT).unwrap();
        let mut memory = [0i32; 8];
        // SAFETY: `memory` outlives the buffers; nothing is written.
        let plain = unsafe { UserBuffer::new(memory.as_mut_ptr().cast(), 4, ints.clone()) };
        assert_eq!(plain.receive_outcome(16), (16, MPI_SUCCESS));
        assert_eq!(plain.receive_outcome(20), (16, MPI_ERR_TRUNCATE));
        assert_eq!(
            plain.receive_outcome(3),
            (3, MPI_SUCCESS),
            "contiguous: taken as it comes"
        );
        let every_other = crate::core::datatype::constructors::vector(4, 1, 2, &ints).unwrap();
        let every_other: TypeRef = Arc::new(every_other).into();
        // SAFETY: as above; one vector element spans 7 ints of the 8.
        let scattered = unsafe { UserBuffer::new(memory.as_mut_ptr().cast(), 1, every_other) };
        assert_eq!(scattered.receive_outcome(8), (8, MPI_SUCCESS));
        assert_eq!(scattered.receive_outcome(3), (3, MPI_ERR_TYPE));
        assert_eq!(scattered.receive_outcome(17), (16, MPI_ERR_TRUNCATE));
    }

    #[test]
    fn an_empty_message_may_have_a_null_address() {
        let ints = datatype::lookup_for_message(MPI_INT).unwrap();
        // SAFETY: zero elements: the address is never read or written.
        let empty = unsafe { UserBuffer::new(std::ptr::null(), 0, ints) };
        let mut out = [7u8; 4];
        assert_eq!(empty.pack(0, &mut out), 0);
        assert_eq!(empty.unpack(0, &out), 0);
        assert_eq!(out, [7; 4]);
    }

    #[test]
    fn small_and_large_copies_move_exactly_their_bytes() {
        for n in 0..=40usize {
            let src: Vec<u8> = (0..n as u8)
                .map(|b| b.wrapping_mul(7).wrapping_add(1))
                .collect();
            let mut dst = vec![0xEEu8; n + 2];
            // SAFETY: both ranges are in bounds and distinct.
            unsafe { copy_bytes(src.as_ptr(), dst[1..].as_mut_ptr(), n) };
            assert_eq!(dst[0], 0xEE, "{n}");
            assert_eq!(&dst[1..=n], &src[..], "{n}");
            assert_eq!(dst[n + 1], 0xEE, "{n}");
        }
    }
}
