//! Frames on a byte stream: each frame is its length (u32, little-endian)
//! followed by its bytes. [`InBuffer`] reassembles frames from reads of any
//! size; [`OutBuffer`] holds the bytes not yet taken by the kernel. Both
//! reuse their memory, so a connection's steady state allocates nothing.
use std::io::{self, Read, Write};

use thiserror::Error;

/// The length prefix of a frame.
pub const LEN_BYTES: usize = 4;

/// The free space an input buffer offers to one read of frames.
pub const READ_CHUNK: usize = 64 * 1024;

#[derive(Debug, Error, PartialEq, Eq)]
#[error("a frame of {len} bytes exceeds the limit of {max}")]
pub struct FrameTooLong {
    pub len: usize,
    pub max: usize,
}

/// Bytes received and not consumed yet: `bytes[start..end]`.
#[derive(Default)]
pub struct InBuffer {
    bytes: Vec<u8>,
    start: usize,
    end: usize,
}

impl InBuffer {
    pub fn buffered(&self) -> &[u8] {
        &self.bytes[self.start..self.end]
    }

    /// Makes `want` bytes of free space after the buffered ones, moving
    /// those to the front or growing only when the tail is too short.
    fn make_room(&mut self, want: usize) {
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
        if self.bytes.len() - self.end >= want {
            return;
        }
        if self.start > 0 {
            self.bytes.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.bytes.len() - self.end < want {
            self.bytes.resize(self.end + want, 0);
        }
    }

    /// One read of at most `limit` bytes from `source`; returns what the
    /// read returned (0: end of stream).
    pub fn read_from(&mut self, source: &mut impl Read, limit: usize) -> io::Result<usize> {
        self.make_room(limit);
        let n = source.read(&mut self.bytes[self.end..self.end + limit])?;
        self.end += n;
        Ok(n)
    }

    /// How much one read of frames should ask for: a chunk, or the rest
    /// of the frame at the front if it is larger (bounded by `max_frame`,
    /// so a bad length cannot make the buffer grow past it).
    pub fn frame_read_limit(&self, max_frame: usize) -> usize {
        let buffered = self.buffered();
        if buffered.len() < LEN_BYTES {
            return READ_CHUNK;
        }
        let len = u32::from_le_bytes(buffered[..LEN_BYTES].try_into().expect("4 bytes")) as usize;
        let missing = (LEN_BYTES + len.min(max_frame)).saturating_sub(buffered.len());
        missing.max(READ_CHUNK)
    }

    /// Takes `n` bytes from the front (the caller checked they are there).
    pub fn take(&mut self, n: usize) -> &[u8] {
        assert!(n <= self.end - self.start, "taking more than buffered");
        let at = self.start;
        self.start += n;
        &self.bytes[at..at + n]
    }

    /// The next complete frame, if one is buffered.
    pub fn next_frame(&mut self, max_frame: usize) -> Result<Option<&[u8]>, FrameTooLong> {
        let buffered = self.buffered();
        if buffered.len() < LEN_BYTES {
            return Ok(None);
        }
        let len = u32::from_le_bytes(buffered[..LEN_BYTES].try_into().expect("4 bytes")) as usize;
        if len > max_frame {
            return Err(FrameTooLong {
                len,
                max: max_frame,
            });
        }
        if buffered.len() < LEN_BYTES + len {
            return Ok(None);
        }
        self.start += LEN_BYTES;
        Ok(Some(self.take(len)))
    }
}

/// Bytes accepted for sending and not yet written: `bytes[start..end]`.
#[derive(Default)]
pub struct OutBuffer {
    bytes: Vec<u8>,
    start: usize,
    end: usize,
}

impl OutBuffer {
    pub fn pending(&self) -> usize {
        self.end - self.start
    }

    /// `n` bytes of space at the end, now counted as pending.
    fn append(&mut self, n: usize) -> &mut [u8] {
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
        if self.bytes.len() - self.end < n {
            if self.start > 0 {
                self.bytes.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            }
            if self.bytes.len() - self.end < n {
                self.bytes.resize(self.end + n, 0);
            }
        }
        let at = self.end;
        self.end += n;
        &mut self.bytes[at..at + n]
    }

    pub fn push(&mut self, data: &[u8]) {
        self.append(data.len()).copy_from_slice(data);
    }

    /// Appends a frame of `len` bytes written in place by `fill`.
    pub fn push_frame(&mut self, len: usize, fill: &mut dyn FnMut(&mut [u8])) {
        let len32 = u32::try_from(len).expect("frame length fits the u32 prefix");
        let space = self.append(LEN_BYTES + len);
        space[..LEN_BYTES].copy_from_slice(&len32.to_le_bytes());
        fill(&mut space[LEN_BYTES..]);
    }

    /// Writes pending bytes until they are all gone (true) or the sink
    /// takes no more for now (false).
    pub fn write_to(&mut self, sink: &mut impl Write) -> io::Result<bool> {
        while self.start < self.end {
            let asked = self.end - self.start;
            match sink.write(&self.bytes[self.start..self.end]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    self.start += n;
                    if n < asked {
                        // The socket buffer is full: wait for writability
                        // rather than paying for a write that fails.
                        return Ok(false);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        self.start = 0;
        self.end = 0;
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader handing out its bytes a few at a time.
    struct Trickle<'a> {
        data: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.step.min(buf.len()).min(self.data.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    /// A writer taking at most `room` bytes, then would-block.
    struct Narrow {
        taken: Vec<u8>,
        room: usize,
    }

    impl Write for Narrow {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.room == 0 {
                return Err(io::ErrorKind::WouldBlock.into());
            }
            let n = buf.len().min(self.room);
            self.room -= n;
            self.taken.extend_from_slice(&buf[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn frames_of(sizes: &[usize]) -> (Vec<Vec<u8>>, Vec<u8>) {
        let frames: Vec<Vec<u8>> = sizes
            .iter()
            .enumerate()
            .map(|(i, &n)| (0..n).map(|j| (i * 31 + j) as u8).collect())
            .collect();
        let mut out = OutBuffer::default();
        for f in &frames {
            out.push_frame(f.len(), &mut |b: &mut [u8]| b.copy_from_slice(f));
        }
        let mut sink = Narrow {
            taken: Vec::new(),
            room: usize::MAX,
        };
        assert!(out.write_to(&mut sink).unwrap());
        (frames, sink.taken)
    }

    #[test]
    fn frames_survive_reads_of_any_size() {
        let (frames, wire) = frames_of(&[0, 1, 7, 70_000, 3, 200_000, 5]);
        for step in [1, 3, 4096, 1 << 20] {
            let mut source = Trickle { data: &wire, step };
            let mut input = InBuffer::default();
            let mut got = Vec::new();
            while got.len() < frames.len() {
                let limit = input.frame_read_limit(1 << 20);
                assert!(
                    input.read_from(&mut source, limit).unwrap() > 0,
                    "step {step}"
                );
                while let Some(f) = input.next_frame(1 << 20).unwrap() {
                    got.push(f.to_vec());
                }
            }
            assert_eq!(got, frames, "step {step}");
            assert!(input.buffered().is_empty());
        }
    }

    #[test]
    fn an_oversized_length_is_an_error() {
        let (_, wire) = frames_of(&[100]);
        let mut input = InBuffer::default();
        input.read_from(&mut &wire[..], 1000).unwrap();
        assert_eq!(
            input.next_frame(99).map(|f| f.map(<[u8]>::len)),
            Err(FrameTooLong { len: 100, max: 99 })
        );
        // The read limit stays bounded by the frame limit, whatever the
        // length claims.
        let mut huge = InBuffer::default();
        huge.read_from(&mut &u32::MAX.to_le_bytes()[..], 4).unwrap();
        assert!(huge.frame_read_limit(1000) <= READ_CHUNK);
    }

    #[test]
    fn output_waits_for_a_full_sink_and_keeps_order() {
        let mut out = OutBuffer::default();
        out.push(b"hello");
        out.push_frame(3, &mut |b: &mut [u8]| b.copy_from_slice(b"abc"));
        let mut sink = Narrow {
            taken: Vec::new(),
            room: 6,
        };
        assert!(!out.write_to(&mut sink).unwrap());
        assert_eq!(out.pending(), 5 + 4 + 3 - 6);
        out.push(b"!");
        sink.room = 100;
        assert!(out.write_to(&mut sink).unwrap());
        assert_eq!(out.pending(), 0);
        assert_eq!(sink.taken, b"hello\x03\0\0\0abc!");
    }
}
