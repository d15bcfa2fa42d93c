//! Fuzz targets (proptest) of the TCP wire: frames survive any cutting of
//! the byte stream, a stream of garbage never panics the reader and a
//! length past the limit is refused before anything is buffered for it,
//! and the hello accepts nothing but a real hello of this job and epoch
//! (any byte changed is refused, or names another sender).
use std::io::{self, Read};

use proptest::prelude::*;

use super::framing::{InBuffer, OutBuffer, LEN_BYTES};
use super::handshake::{Credentials, HELLO_LEN};
use crate::transport::EpochTag;

/// A reader that returns `data` in pieces of the given sizes (then the
/// rest).
struct Pieces {
    data: Vec<u8>,
    at: usize,
    sizes: Vec<usize>,
}

impl Read for Pieces {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let want = self.sizes.pop().unwrap_or(usize::MAX).max(1);
        let n = want.min(out.len()).min(self.data.len() - self.at);
        out[..n].copy_from_slice(&self.data[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// Every frame an input buffer finds in `stream` read in `sizes` pieces,
/// or the error it stops at.
fn frames_of(stream: Vec<u8>, sizes: Vec<usize>, max: usize) -> Result<Vec<Vec<u8>>, usize> {
    let mut input = InBuffer::default();
    let mut reader = Pieces {
        data: stream,
        at: 0,
        sizes,
    };
    let mut frames = Vec::new();
    loop {
        loop {
            match input.next_frame(max) {
                Ok(Some(frame)) => frames.push(frame.to_vec()),
                Ok(None) => break,
                Err(e) => return Err(e.len),
            }
        }
        let limit = input.frame_read_limit(max);
        if input.read_from(&mut reader, limit).expect("reading memory") == 0 {
            return Ok(frames);
        }
    }
}

proptest! {
    #[test]
    fn fuzz_tcp_framing_frames_survive_any_cutting(
        frames in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..300), 0..12),
        sizes in prop::collection::vec(1usize..400, 0..40),
    ) {
        let mut out = OutBuffer::default();
        for f in &frames {
            out.push_frame(f.len(), &mut |space: &mut [u8]| space.copy_from_slice(f));
        }
        let mut stream = Vec::new();
        prop_assert!(out.write_to(&mut stream).expect("writing to memory"));
        prop_assert_eq!(frames_of(stream, sizes, 300), Ok(frames));
    }

    #[test]
    fn fuzz_tcp_framing_garbage_never_panics(
        stream in prop::collection::vec(any::<u8>(), 0..600),
        sizes in prop::collection::vec(1usize..200, 0..20),
        max in 0usize..256,
    ) {
        match frames_of(stream.clone(), sizes, max) {
            Ok(frames) => {
                let used: usize = frames.iter().map(|f| LEN_BYTES + f.len()).sum();
                prop_assert!(used <= stream.len());
                prop_assert!(frames.iter().all(|f| f.len() <= max));
            }
            Err(len) => prop_assert!(len > max),
        }
    }

    #[test]
    fn fuzz_tcp_handshake_accepts_only_real_hellos(
        bytes in prop::collection::vec(any::<u8>(), HELLO_LEN),
        flip_at in 0usize..HELLO_LEN,
        flip in 1u8..=255,
        secret in "[ -~]{0,64}",
    ) {
        let me = 3;
        let creds = Credentials::new("1234-5678", EpochTag::new(7), &secret).expect("a secret that fits");
        let check = |hello: &[u8; HELLO_LEN]| match creds.check(hello, me) {
            // Whatever is accepted is exactly the hello of its sender.
            Ok(from) => hello == &creds.hello(from, me),
            Err(_) => true,
        };
        let random: [u8; HELLO_LEN] = bytes.try_into().expect("HELLO_LEN bytes");
        prop_assert!(check(&random));
        let mut real = creds.hello(5, me);
        prop_assert_eq!(creds.check(&real, me).ok(), Some(5));
        real[flip_at] ^= flip;
        prop_assert!(check(&real));
        // Another job, epoch or secret is refused.
        let other = Credentials::new("1234-5679", EpochTag::new(7), &secret).expect("fits");
        prop_assert!(creds.check(&other.hello(5, me), me).is_err());
        prop_assert!(creds.check(&creds.with_epoch(EpochTag::new(8)).hello(5, me), me).is_err());
        let longer = format!("{secret}x");
        if let Ok(c) = Credentials::new("1234-5678", EpochTag::new(7), &longer) {
            prop_assert!(creds.check(&c.hello(5, me), me).is_err());
        }
    }
}
