//! The frame header every transport carries in front of a message or a
//! protocol step. 48 bytes, little-endian, encoded field by field.
//!
//! A frame belongs to the context id it names: context ids are unique
//! across epochs, so the header carries a message's epoch through it.

/// What a frame is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum FrameKind {
    /// A whole message inline (`id_a`: sender's request when `SYNC`).
    Eager = 1,
    /// Ready to send a large message (`id_a`: sender's request,
    /// `total_len`: its size; payload: single-copy address if offered).
    RequestToSend = 2,
    /// Receiver matched an RTS and wants the data streamed
    /// (`id_a`: sender's request, `id_b`: receiver's request).
    ClearToSend = 3,
    /// A piece of a streamed message (`id_b`: receiver's request,
    /// `total_len`: the piece's offset in the message).
    Data = 4,
    /// Receiver copied the data itself (single copy); the send is done.
    Finished = 5,
    /// A synchronous-mode message was matched (`id_a`: sender's request).
    SyncAck = 6,
    /// Shared copy: the receiver copies bytes `[0, total_len)` of a single
    /// copy message itself and asks the sender to write the rest into the
    /// receiver's buffer (`id_a`: sender's request, `id_b`: receiver's
    /// request; payload: the receiver's pid and the address of byte 0).
    ShareCopy = 7,
    /// The sender wrote its share (`id_b`: receiver's request,
    /// `total_len`: the bytes written).
    ShareDone = 8,
    /// Eager credit given back (`id_a`: bytes, see `flow_control`).
    Credit = 9,
}

impl FrameKind {
    fn from_u8(v: u8) -> Option<FrameKind> {
        Some(match v {
            1 => FrameKind::Eager,
            2 => FrameKind::RequestToSend,
            3 => FrameKind::ClearToSend,
            4 => FrameKind::Data,
            5 => FrameKind::Finished,
            6 => FrameKind::SyncAck,
            7 => FrameKind::ShareCopy,
            8 => FrameKind::ShareDone,
            9 => FrameKind::Credit,
            _ => return None,
        })
    }
}

/// The sender asks for a `SyncAck` when the message is matched.
pub const FLAG_SYNC: u8 = 1;

pub const HEADER_LEN: usize = 48;
// A stream transport hands a sink this many leading bytes before placing the
// rest of a frame (`transport::Sink::place`).
const _: () = assert!(HEADER_LEN == crate::transport::PLACE_HEAD);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameHeader {
    pub kind: FrameKind,
    pub flags: u8,
    pub tag: i32,
    /// Sender's rank in the communicator.
    pub source: i32,
    pub context_id: u64,
    pub total_len: u64,
    pub id_a: u64,
    pub id_b: u64,
}

impl FrameHeader {
    pub fn control(kind: FrameKind, id_a: u64, id_b: u64) -> FrameHeader {
        FrameHeader {
            kind,
            flags: 0,
            tag: 0,
            source: 0,
            context_id: 0,
            total_len: 0,
            id_a,
            id_b,
        }
    }

    /// Writes the header into the first [`HEADER_LEN`] bytes of `out`.
    ///
    /// # Panics
    /// If `out` is shorter.
    #[inline]
    pub fn encode(&self, out: &mut [u8]) {
        // One bounds check; the field stores below have constant offsets.
        let out: &mut [u8; HEADER_LEN] = (&mut out[..HEADER_LEN]).try_into().expect("48 bytes");
        let word0 = u64::from(self.kind as u8)
            | u64::from(self.flags) << 8
            | u64::from(self.tag as u32) << 32;
        let word1 = u64::from(self.source as u32);
        for (i, word) in [
            word0,
            word1,
            self.context_id,
            self.total_len,
            self.id_a,
            self.id_b,
        ]
        .into_iter()
        .enumerate()
        {
            out[i * 8..i * 8 + 8].copy_from_slice(&word.to_le_bytes());
        }
    }

    #[inline]
    pub fn decode(bytes: &[u8]) -> Option<FrameHeader> {
        let bytes: &[u8; HEADER_LEN] = bytes.get(..HEADER_LEN)?.try_into().ok()?;
        let word =
            |i: usize| u64::from_le_bytes(bytes[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
        let word0 = word(0);
        Some(FrameHeader {
            kind: FrameKind::from_u8(word0 as u8)?,
            flags: (word0 >> 8) as u8,
            tag: (word0 >> 32) as u32 as i32,
            source: word(1) as u32 as i32,
            context_id: word(2),
            total_len: word(3),
            id_a: word(4),
            id_b: word(5),
        })
    }
}

/// The length of the message whose first frame `frame` is (eager data or
/// a request-to-send), `None` for the other frames (a piece of data, a
/// reply): the traffic counters count messages, not frames.
#[inline]
pub fn message_len(frame: &[u8]) -> Option<u64> {
    match frame.first() {
        Some(&kind) if kind == FrameKind::Eager as u8 || kind == FrameKind::RequestToSend as u8 => {
            FrameHeader::decode(frame).map(|h| h.total_len)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_round_trips() {
        let h = FrameHeader {
            kind: FrameKind::RequestToSend,
            flags: FLAG_SYNC,
            tag: -5,
            source: 12,
            context_id: u64::MAX - 3,
            total_len: 1 << 40,
            id_a: 7,
            id_b: 9,
        };
        let mut buf = [0u8; HEADER_LEN];
        h.encode(&mut buf);
        assert_eq!(FrameHeader::decode(&buf), Some(h));
        buf[0] = 99;
        assert_eq!(
            FrameHeader::decode(&buf),
            None,
            "unknown kinds are rejected"
        );
        assert_eq!(FrameHeader::decode(&buf[..10]), None);
    }

    #[test]
    fn only_first_frames_of_messages_have_a_message_length() {
        let mut buf = [0u8; HEADER_LEN];
        let mut h = FrameHeader::control(FrameKind::Data, 1, 2);
        h.total_len = 100;
        h.encode(&mut buf);
        assert_eq!(message_len(&buf), None);
        for kind in [FrameKind::Eager, FrameKind::RequestToSend] {
            h.kind = kind;
            h.encode(&mut buf);
            assert_eq!(message_len(&buf), Some(100));
        }
        assert_eq!(message_len(&[]), None);
    }
}
