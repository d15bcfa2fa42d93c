//! The messages of one-sided communication. Every RMA operation, lock
//! request and synchronization notice an origin sends a target is one
//! point-to-point message on the window's private context, tag
//! [`REQUEST_TAG`]: a header, the target blocks it touches, then the
//! origin's packed data. What comes back (the data of a get, a lock grant,
//! an unlock or flush acknowledgement) goes to a tag the origin chose and
//! already posted a receive on ([`reply_tag`]), straight into the origin's
//! buffer.
//!
//! A large put to one contiguous block of the target sends its data in a
//! second message, on [`DATA_TAG`], straight from the origin's buffer: the
//! target receives it into the window memory (see `super::target`).
//!
//! Layout (little-endian): kind `u8`, flags `u8` (bit 0: exclusive lock;
//! bit 1: the data follows on [`DATA_TAG`]),
//! element kind `u8` (an index of `BasicKind::ALL`, 255 for none), a zero
//! byte, reply tag `i32`, operation handle `i32`, block count `u32`,
//! displacement `i64`; then per block its offset from the displacement
//! (`i64`) and length (`u64`); then the data.
use std::os::raw::c_int;

use thiserror::Error;

use crate::core::datatype::BasicKind;

/// The tag of requests to a target.
pub const REQUEST_TAG: c_int = 0;

/// The tag of a put's data sent apart from its request.
pub const DATA_TAG: c_int = 0x7fff_0000;

/// Bytes from which a put to (or a get from) one contiguous target block
/// moves its data without packing: the put's data follows its request
/// from the origin's buffer into the window, the get's reply leaves
/// from the window memory.
pub const DIRECT_MIN: usize = 16 * 1024;

/// The tag a reply with sequence number `sequence` comes back on (never
/// [`REQUEST_TAG`]; the numbers wrap long after any reply is answered).
pub fn reply_tag(sequence: u32) -> c_int {
    1 + (sequence & 0x3fff_ffff) as c_int
}

/// What a message asks of its target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    Put = 1,
    Get,
    Accumulate,
    /// `MPI_Get_accumulate` and `MPI_Fetch_and_op`: the old data comes back.
    GetAccumulate,
    /// The data is the new value then the compare value.
    CompareAndSwap,
    Lock,
    Unlock,
    /// Acknowledged once every earlier operation of the origin is applied.
    Flush,
    /// PSCW: the origin's access epoch to this target ended (`MPI_Win_complete`).
    Complete,
    /// PSCW: the sender exposes its window to the receiver (`MPI_Win_post`).
    Post,
}

impl Kind {
    /// The kind of an encoded request (its first byte).
    pub fn of(bytes: &[u8]) -> Option<Kind> {
        bytes.first().copied().and_then(Kind::from_u8)
    }

    fn from_u8(v: u8) -> Option<Kind> {
        use Kind::*;
        [
            Put,
            Get,
            Accumulate,
            GetAccumulate,
            CompareAndSwap,
            Lock,
            Unlock,
            Flush,
            Complete,
            Post,
        ]
        .get(usize::from(v).wrapping_sub(1))
        .copied()
    }

    /// Whether the kind ends an epoch or asks for completion: applied only
    /// once the origin's earlier gets have left (see `super::target`).
    pub fn completes(self) -> bool {
        matches!(self, Kind::Unlock | Kind::Flush | Kind::Complete)
    }

    /// Whether the kind reads or writes window memory (counted for
    /// `MPI_Win_fence`).
    pub fn touches_memory(self) -> bool {
        matches!(
            self,
            Kind::Put | Kind::Get | Kind::Accumulate | Kind::GetAccumulate | Kind::CompareAndSwap
        )
    }
}

/// One request's header and target blocks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    pub kind: Kind,
    pub exclusive: bool,
    /// The data comes in its own message on [`DATA_TAG`].
    pub data_follows: bool,
    pub element: Option<BasicKind>,
    pub reply_tag: c_int,
    pub op: c_int,
    /// Bytes from the target's window base (an absolute address in a
    /// dynamic window).
    pub disp: i64,
    /// `(offset from disp, length)` of each target block, in data order.
    pub blocks: Vec<(i64, u64)>,
}

const FIXED: usize = 24;
const BLOCK: usize = 16;
const NO_ELEMENT: u8 = 255;

#[derive(Debug, Error, PartialEq, Eq)]
pub enum WireError {
    #[error("an RMA request of {0} bytes is shorter than its header")]
    Short(usize),
    #[error("unknown RMA request kind {0}")]
    Kind(u8),
    #[error("unknown basic kind {0} in an RMA request")]
    Element(u8),
}

impl Header {
    /// A request with no target blocks or data (locks, notices).
    pub fn control(kind: Kind, reply_tag: c_int) -> Header {
        Header {
            kind,
            exclusive: false,
            data_follows: false,
            element: None,
            reply_tag,
            op: 0,
            disp: 0,
            blocks: Vec::new(),
        }
    }

    /// Bytes of the header and blocks.
    pub fn encoded_len(&self) -> usize {
        FIXED + BLOCK * self.blocks.len()
    }

    /// The message: this header followed by room for `data_len` bytes of
    /// data (zeroed), which the caller fills at [`Header::encoded_len`].
    pub fn encode(&self, data_len: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.encoded_len() + data_len);
        out.push(self.kind as u8);
        out.push(u8::from(self.exclusive) | (u8::from(self.data_follows) << 1));
        out.push(self.element.map_or(NO_ELEMENT, BasicKind::index));
        out.push(0);
        out.extend_from_slice(&self.reply_tag.to_le_bytes());
        out.extend_from_slice(&self.op.to_le_bytes());
        out.extend_from_slice(&(self.blocks.len() as u32).to_le_bytes());
        out.extend_from_slice(&self.disp.to_le_bytes());
        for (offset, len) in &self.blocks {
            out.extend_from_slice(&offset.to_le_bytes());
            out.extend_from_slice(&len.to_le_bytes());
        }
        out.resize(out.len() + data_len, 0);
        out
    }

    /// The header of a message and its data.
    pub fn decode(bytes: &[u8]) -> Result<(Header, &[u8]), WireError> {
        if bytes.len() < FIXED {
            return Err(WireError::Short(bytes.len()));
        }
        let kind = Kind::from_u8(bytes[0]).ok_or(WireError::Kind(bytes[0]))?;
        let element = match bytes[2] {
            NO_ELEMENT => None,
            i => Some(BasicKind::from_index(i).ok_or(WireError::Element(i))?),
        };
        let word = |at: usize| i32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"));
        let long = |at: usize| i64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"));
        let count = word(12) as u32 as usize;
        let end = count
            .checked_mul(BLOCK)
            .and_then(|b| b.checked_add(FIXED))
            .filter(|&e| e <= bytes.len())
            .ok_or(WireError::Short(bytes.len()))?;
        let blocks = (0..count)
            .map(|i| {
                let at = FIXED + i * BLOCK;
                (long(at), long(at + 8) as u64)
            })
            .collect();
        Ok((
            Header {
                kind,
                exclusive: bytes[1] & 1 != 0,
                data_follows: bytes[1] & 2 != 0,
                element,
                reply_tag: word(4),
                op: word(8),
                disp: long(16),
                blocks,
            },
            &bytes[end..],
        ))
    }

    /// Bytes the blocks cover.
    pub fn block_bytes(&self) -> u64 {
        self.blocks.iter().map(|(_, len)| len).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_comes_back_as_it_was_sent() {
        let h = Header {
            kind: Kind::GetAccumulate,
            exclusive: true,
            data_follows: true,
            element: Some(BasicKind::Float64),
            reply_tag: reply_tag(77),
            op: 0x58000003,
            disp: -16,
            blocks: vec![(0, 8), (24, 16), (-8, 8)],
        };
        let mut msg = h.encode(4);
        let at = h.encoded_len();
        msg[at..].copy_from_slice(&[1, 2, 3, 4]);
        let (back, data) = Header::decode(&msg).unwrap();
        assert_eq!(back, h);
        assert_eq!(data, &[1, 2, 3, 4]);
        assert_eq!(back.block_bytes(), 32);
    }

    #[test]
    fn broken_requests_are_refused() {
        assert_eq!(Header::decode(&[1, 0, 255]), Err(WireError::Short(3)));
        let mut msg = Header::control(Kind::Lock, 5).encode(0);
        msg[0] = 99;
        assert_eq!(Header::decode(&msg), Err(WireError::Kind(99)));
        let mut msg = Header::control(Kind::Flush, 5).encode(0);
        msg[2] = 200;
        assert_eq!(Header::decode(&msg), Err(WireError::Element(200)));
        let mut msg = Header::control(Kind::Put, 5).encode(0);
        msg[12] = 3; // three blocks announced, none there
        assert_eq!(Header::decode(&msg), Err(WireError::Short(24)));
    }

    #[test]
    fn reply_tags_are_never_the_request_tag() {
        for seq in [0, 1, 0x3fff_ffff, 0x4000_0000, u32::MAX] {
            let tag = reply_tag(seq);
            assert!(tag > REQUEST_TAG, "sequence {seq} gave tag {tag}");
        }
    }
}
