//! Packed data as the algorithms see it: one byte buffer made of blocks
//! (a member's part each, in some order), and the moves between a user
//! buffer and packed bytes. Collectives pack what they send before the
//! first message and unpack what they received after the last one, so
//! `MPI_IN_PLACE` (the same memory as input and output) needs no care in
//! the algorithms.
use std::ops::Range;

use super::buffer::Buffer;

use crate::core::p2p::user_buffer::UserBuffer;

/// Consecutive blocks of a byte buffer: block `i` is
/// `offsets[i]..offsets[i + 1]`.
#[derive(Clone, Debug)]
pub struct Blocks {
    offsets: Vec<usize>,
}

impl Blocks {
    pub fn from_sizes(sizes: impl IntoIterator<Item = usize>) -> Blocks {
        let mut offsets = vec![0];
        let mut end = 0;
        for s in sizes {
            end += s;
            offsets.push(end);
        }
        Blocks { offsets }
    }

    /// `n` blocks of `size` bytes.
    pub fn equal(n: usize, size: usize) -> Blocks {
        Blocks::from_sizes(std::iter::repeat_n(size, n))
    }

    /// `count` elements of `element` bytes split into `n` blocks of whole
    /// elements, the first `count % n` one element larger.
    pub fn balanced(n: usize, count: usize, element: usize) -> Blocks {
        Blocks::from_sizes((0..n).map(|i| (count / n + usize::from(i < count % n)) * element))
    }

    pub fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn total(&self) -> usize {
        *self.offsets.last().expect("offsets start with 0")
    }

    pub fn size(&self, i: usize) -> usize {
        self.offsets[i + 1] - self.offsets[i]
    }

    pub fn range(&self, i: usize) -> Range<usize> {
        self.offsets[i]..self.offsets[i + 1]
    }

    /// Blocks `first..end` as one byte range.
    pub fn span(&self, first: usize, end: usize) -> Range<usize> {
        self.offsets[first]..self.offsets[end]
    }

    /// The same blocks in another order: block `j` of the result is block
    /// `order(j)` of this one.
    pub fn permuted(&self, order: impl Fn(usize) -> usize) -> Blocks {
        Blocks::from_sizes((0..self.len()).map(|j| self.size(order(j))))
    }
}

/// A range to read and a disjoint range to write in one buffer.
pub fn read_write(data: &mut [u8], read: Range<usize>, write: Range<usize>) -> (&[u8], &mut [u8]) {
    debug_assert!(
        read.end <= write.start || write.end <= read.start || read.is_empty() || write.is_empty()
    );
    if read.is_empty() {
        return (&[], &mut data[write]);
    }
    if write.is_empty() {
        return (&data[read], &mut []);
    }
    if read.start < write.start {
        let (low, high) = data.split_at_mut(write.start);
        (&low[read], &mut high[..write.end - write.start])
    } else {
        let (low, high) = data.split_at_mut(read.start);
        (&high[..read.end - read.start], &mut low[write])
    }
}

/// The whole packed content of a user buffer.
pub fn pack(buf: &UserBuffer) -> Buffer {
    let mut out = Buffer::with_capacity(buf.len());
    pack_into(buf, 0, buf.len(), &mut out);
    out
}

/// `len` packed bytes of a user buffer from `offset` on, appended to `out`.
pub fn pack_into(buf: &UserBuffer, offset: usize, len: usize, out: &mut Vec<u8>) {
    let start = out.len();
    if let Some((address, total)) = buf.contiguous_block() {
        // One block: copy it straight in (no zeroing first).
        let available = len.min(total.saturating_sub(offset));
        if available > 0 {
            // SAFETY: a user buffer's data is valid for reads while its
            // operation runs (`UserBuffer::new`'s contract), and
            // `offset + available` stays within its one block of `total`
            // bytes.
            let bytes =
                unsafe { std::slice::from_raw_parts((address + offset) as *const u8, available) };
            out.extend_from_slice(bytes);
        }
        out.resize(start + len, 0);
        return;
    }
    out.resize(start + len, 0);
    buf.pack(offset, &mut out[start..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_and_disjoint_ranges() {
        let b = Blocks::balanced(3, 7, 4);
        assert_eq!((b.size(0), b.size(1), b.size(2), b.total()), (12, 8, 8, 28));
        assert_eq!(b.span(1, 3), 12..28);
        let p = b.permuted(|j| (j + 1) % 3);
        assert_eq!((p.size(0), p.size(2)), (8, 12));
        let mut data: Vec<u8> = (0..10).collect();
        let (r, w) = read_write(&mut data, 6..8, 1..3);
        w.copy_from_slice(r);
        assert_eq!(&data[..4], &[0, 6, 7, 3]);
        let (r, w) = read_write(&mut data, 0..2, 8..10);
        w.copy_from_slice(r);
        assert_eq!(&data[8..], &[0, 6]);
    }
}
