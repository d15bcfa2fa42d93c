//! Streaming pack and unpack: the packed form of `count` elements is one
//! byte stream (the elements' data in typemap order, no gaps); any range
//! of it can be produced or consumed on its own, so a large message moves
//! in pieces without ever being packed whole. A contiguous type is one
//! memcpy per call whatever the count.
//!
//! This is the one place in core that touches user memory through raw
//! pointers; callers promise the buffer is valid for the elements.
use super::Datatype;

impl Datatype {
    /// Calls `f(displacement from buf, length)` for the memory blocks that
    /// hold packed bytes `[offset, offset + len)` of `count` elements, in
    /// stream order (the range is clipped to the stream). Lets a transport
    /// build an iovec for a single-copy transfer.
    pub fn for_each_block(
        &self,
        count: usize,
        offset: usize,
        len: usize,
        mut f: impl FnMut(isize, usize),
    ) {
        let total = count.saturating_mul(self.size());
        let end = offset.saturating_add(len).min(total);
        if offset >= end {
            return;
        }
        if self.is_contiguous() {
            return f(self.true_lb() + offset as isize, end - offset);
        }
        let size = self.size();
        let extent = self.extent();
        let mut element = offset / size;
        let mut within = offset % size;
        let mut pos = offset;
        while pos < end {
            let until = size.min(within + (end - pos));
            self.typemap()
                .walk(element as isize * extent, within, until, &mut f);
            pos += until - within;
            within = 0;
            element += 1;
        }
    }

    /// Copies packed bytes `[stream_offset, stream_offset + out.len())` of
    /// `count` elements at `buf` into `out`; returns the bytes copied
    /// (fewer when the stream ends first).
    ///
    /// # Safety
    /// `buf` must be valid for reads of the data of `count` elements of
    /// this type (see [`Datatype::data_span`]).
    pub unsafe fn pack_range(
        &self,
        buf: *const u8,
        count: usize,
        stream_offset: usize,
        out: &mut [u8],
    ) -> usize {
        let mut done = 0;
        self.for_each_block(count, stream_offset, out.len(), |disp, len| {
            // SAFETY: the block lies within the elements' data (caller's
            // contract), and `out` has `len` bytes left: the walk is
            // clipped to `out.len()` bytes in total.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    buf.wrapping_offset(disp),
                    out.as_mut_ptr().add(done),
                    len,
                );
            }
            done += len;
        });
        done
    }

    /// Copies `input`, taken as packed bytes from `stream_offset` on, into
    /// `count` elements at `buf`; returns the bytes consumed (fewer when
    /// the stream ends first).
    ///
    /// # Safety
    /// `buf` must be valid for writes of the data of `count` elements of
    /// this type, and must not overlap `input`.
    pub unsafe fn unpack_range(
        &self,
        buf: *mut u8,
        count: usize,
        stream_offset: usize,
        input: &[u8],
    ) -> usize {
        let mut done = 0;
        self.for_each_block(count, stream_offset, input.len(), |disp, len| {
            // SAFETY: as in `pack_range`, with the roles swapped.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    input.as_ptr().add(done),
                    buf.wrapping_offset(disp),
                    len,
                );
            }
            done += len;
        });
        done
    }
}
