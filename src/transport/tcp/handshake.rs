//! The hello both ends of a new connection exchange before any frame: a
//! fixed-size record naming the job, the epoch, the sender and the intended
//! receiver, and carrying the job's secret. The side that connects speaks
//! first; the side that accepts answers only after checking that hello, so
//! a stray connection never learns the secret.
//!
//! Layout (`HELLO_LEN` bytes, integers little-endian):
//!
//! | offset | bytes | field                                            |
//! |-------:|------:|--------------------------------------------------|
//! |      0 |     8 | magic `OXMPITCP`                                 |
//! |      8 |     4 | protocol version ([`VERSION`])                   |
//! |     12 |     4 | rank of the sender                               |
//! |     16 |     4 | rank the sender means to reach                   |
//! |     20 |     4 | length of the secret (at most [`SECRET_MAX`])    |
//! |     24 |     8 | epoch                                            |
//! |     32 |     8 | FNV-1a 64 hash of the job id                     |
//! |     40 |    64 | the secret, zero-padded                          |
use std::io;

use thiserror::Error;

use crate::transport::{EpochTag, ProcessId};

pub const MAGIC: [u8; 8] = *b"OXMPITCP";
pub const VERSION: u32 = 1;
/// The longest secret a hello carries.
pub const SECRET_MAX: usize = 64;
pub const HELLO_LEN: usize = 40 + SECRET_MAX;

/// Why a hello was refused (logged at debug level only).
#[derive(Debug, Error, PartialEq, Eq)]
pub enum Rejection {
    #[error("not an oxmpi hello (bad magic)")]
    BadMagic,
    #[error("protocol version {0}, expected {VERSION}")]
    Version(u32),
    #[error("hello of another job")]
    OtherJob,
    #[error("hello of epoch {theirs}, this process is in epoch {ours}")]
    OtherEpoch { theirs: EpochTag, ours: EpochTag },
    #[error("wrong job secret")]
    WrongSecret,
    #[error("hello meant for process {0}")]
    NotForMe(ProcessId),
    #[error("hello from process {got}, expected process {expected}")]
    UnexpectedSender { got: ProcessId, expected: ProcessId },
}

/// What identifies this process's job and epoch on the wire.
#[derive(Clone)]
pub struct Credentials {
    job: u64,
    epoch: EpochTag,
    secret_len: u32,
    secret: [u8; SECRET_MAX],
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the secret.
        f.debug_struct("Credentials")
            .field("job", &format_args!("{:#018x}", self.job))
            .field("epoch", &self.epoch)
            .finish_non_exhaustive()
    }
}

/// FNV-1a, 64 bits: the job id shortened to a fixed-size field. It only
/// tells jobs apart; the secret is what authenticates.
fn job_hash(job_id: &str) -> u64 {
    job_id.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Compares two equally long byte strings in time independent of where
/// they differ.
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    debug_assert_eq!(a.len(), b.len());
    let diff = a
        .iter()
        .zip(b)
        .fold(0u8, |acc, (x, y)| std::hint::black_box(acc | (x ^ y)));
    diff == 0
}

fn u32_at(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
}

/// Whether `prefix` (the first bytes received) can still begin a hello.
pub fn could_be_hello(prefix: &[u8]) -> bool {
    let n = prefix.len().min(MAGIC.len());
    prefix[..n] == MAGIC[..n]
}

impl Credentials {
    /// Fails (`InvalidInput`) when the secret is longer than [`SECRET_MAX`].
    pub fn new(job_id: &str, epoch: EpochTag, secret: &str) -> io::Result<Credentials> {
        if secret.len() > SECRET_MAX {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "the job secret has {} bytes; the TCP handshake carries at most {SECRET_MAX}",
                    secret.len()
                ),
            ));
        }
        let mut padded = [0u8; SECRET_MAX];
        padded[..secret.len()].copy_from_slice(secret.as_bytes());
        Ok(Credentials {
            job: job_hash(job_id),
            epoch,
            secret_len: secret.len() as u32,
            secret: padded,
        })
    }

    pub fn epoch(&self) -> EpochTag {
        self.epoch
    }

    /// The same job and secret in another epoch.
    pub fn with_epoch(&self, epoch: EpochTag) -> Credentials {
        Credentials {
            epoch,
            ..self.clone()
        }
    }

    /// The hello `from` sends to reach `to`.
    pub fn hello(&self, from: ProcessId, to: ProcessId) -> [u8; HELLO_LEN] {
        let mut h = [0u8; HELLO_LEN];
        h[0..8].copy_from_slice(&MAGIC);
        h[8..12].copy_from_slice(&VERSION.to_le_bytes());
        h[12..16].copy_from_slice(&from.to_le_bytes());
        h[16..20].copy_from_slice(&to.to_le_bytes());
        h[20..24].copy_from_slice(&self.secret_len.to_le_bytes());
        h[24..32].copy_from_slice(&self.epoch.to_le_bytes());
        h[32..40].copy_from_slice(&self.job.to_le_bytes());
        h[40..].copy_from_slice(&self.secret);
        h
    }

    /// Checks a hello received by `me`; returns its sender.
    pub fn check(&self, hello: &[u8; HELLO_LEN], me: ProcessId) -> Result<ProcessId, Rejection> {
        if hello[0..8] != MAGIC {
            return Err(Rejection::BadMagic);
        }
        let version = u32_at(hello, 8);
        if version != VERSION {
            return Err(Rejection::Version(version));
        }
        if u64_at(hello, 32) != self.job {
            return Err(Rejection::OtherJob);
        }
        // The secret before anything a stray could learn by probing.
        let len_ok = u32_at(hello, 20) == self.secret_len;
        if !(same_bytes(&hello[40..], &self.secret) & len_ok) {
            return Err(Rejection::WrongSecret);
        }
        let epoch = EpochTag::from_le_bytes(hello[24..32].try_into().expect("8 bytes"));
        if epoch != self.epoch {
            return Err(Rejection::OtherEpoch {
                theirs: epoch,
                ours: self.epoch,
            });
        }
        let to = u32_at(hello, 16);
        if to != me {
            return Err(Rejection::NotForMe(to));
        }
        Ok(u32_at(hello, 12))
    }

    /// Checks the answer to our hello: it must come from `peer`.
    pub fn check_answer(
        &self,
        hello: &[u8; HELLO_LEN],
        me: ProcessId,
        peer: ProcessId,
    ) -> Result<(), Rejection> {
        match self.check(hello, me)? {
            got if got == peer => Ok(()),
            got => Err(Rejection::UnexpectedSender {
                got,
                expected: peer,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn creds() -> Credentials {
        Credentials::new("job-7", EpochTag::new(3), "s3cret").unwrap()
    }

    #[test]
    fn a_hello_is_accepted_by_its_receiver_only() {
        let c = creds();
        let h = c.hello(1, 2);
        assert_eq!(c.check(&h, 2), Ok(1));
        assert_eq!(c.check(&h, 5), Err(Rejection::NotForMe(2)));
        assert_eq!(c.check_answer(&h, 2, 1), Ok(()));
        assert_eq!(
            c.check_answer(&h, 2, 4),
            Err(Rejection::UnexpectedSender {
                got: 1,
                expected: 4
            })
        );
    }

    #[test]
    fn every_wrong_field_is_refused() {
        let ours = creds();
        let check = |c: &Credentials| ours.check(&c.hello(1, 2), 2);
        let job = Credentials::new("job-8", EpochTag::new(3), "s3cret").unwrap();
        assert_eq!(check(&job), Err(Rejection::OtherJob));
        let epoch = Credentials::new("job-7", EpochTag::new(4), "s3cret").unwrap();
        assert_eq!(
            check(&epoch),
            Err(Rejection::OtherEpoch {
                theirs: EpochTag::new(4),
                ours: EpochTag::new(3)
            })
        );
        let secret = Credentials::new("job-7", EpochTag::new(3), "s3cres").unwrap();
        assert_eq!(check(&secret), Err(Rejection::WrongSecret));
        // A prefix of the secret, padded with zeros, is still wrong.
        let prefix = Credentials::new("job-7", EpochTag::new(3), "s3cre").unwrap();
        assert_eq!(check(&prefix), Err(Rejection::WrongSecret));

        let mut h = ours.hello(1, 2);
        h[0] = b'X';
        assert_eq!(ours.check(&h, 2), Err(Rejection::BadMagic));
        let mut h = ours.hello(1, 2);
        h[8] = 9;
        assert_eq!(ours.check(&h, 2), Err(Rejection::Version(9)));
    }

    #[test]
    fn magic_prefixes_and_long_secrets() {
        assert!(could_be_hello(b""));
        assert!(could_be_hello(b"OXM"));
        assert!(could_be_hello(b"OXMPITCP and more"));
        assert!(!could_be_hello(b"GET / HTTP/1.1"));
        assert!(Credentials::new("j", EpochTag::new(1), &"x".repeat(SECRET_MAX)).is_ok());
        let err = Credentials::new("j", EpochTag::new(1), &"x".repeat(SECRET_MAX + 1)).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidInput);
        assert!(!format!("{:?}", creds()).contains("s3cret"));
    }
}
