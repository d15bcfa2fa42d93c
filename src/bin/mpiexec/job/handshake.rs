//! The handshake of a TCP connection to mpiexec's PMI listener: the
//! accepted connection waiting for its first line, and what that line
//! claims once checked against the job secret.
//!
//! Invariant: a first line is complete only with its newline, within
//! [`MAX_LINE_LEN`] bytes, newline included; one that cannot be complete
//! (the peer closed first, the limit is passed, [`HANDSHAKE_TIMEOUT`] is
//! over) is missing. A line is accepted only if it is `cmd=initack` or
//! `cmd=proxy` with the job secret (checked first, in time independent of
//! the secret's bytes) and a numeric id.

use std::io::{self, Read};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use oxmpi::bootstrap::pmi::wire::{PmiMessage, MAX_LINE_LEN};

/// How long an accepted connection has to authenticate.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// An accepted TCP connection that has not authenticated yet.
pub(super) struct Pending {
    pub(super) stream: TcpStream,
    /// What it sent so far.
    pub(super) bytes: Vec<u8>,
    /// When it must have sent its first line.
    pub(super) deadline: Instant,
    pub(super) peer: SocketAddr,
}

/// Where the first line of a pending connection stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FirstLine {
    /// It is complete; its newline is at this offset.
    Complete(usize),
    /// None will come: the peer closed (or the connection broke) first,
    /// the line is too long, or the handshake time is over.
    Missing,
    /// Not complete yet.
    Waiting,
}

impl Pending {
    /// The connection `stream` from `peer`, accepted at `now`.
    pub(super) fn new(stream: TcpStream, peer: SocketAddr, now: Instant) -> Pending {
        Pending {
            stream,
            bytes: Vec::new(),
            deadline: now + HANDSHAKE_TIMEOUT,
            peer,
        }
    }

    /// Reads what the peer sent (up to the first newline, or past the line
    /// limit) and tells where the first line stands at `now`.
    pub(super) fn read_first_line(&mut self, now: Instant) -> FirstLine {
        let mut closed = false;
        let mut chunk = [0u8; 1024];
        while !self.bytes.contains(&b'\n') && self.bytes.len() <= MAX_LINE_LEN {
            match self.stream.read(&mut chunk) {
                Ok(0) => {
                    closed = true;
                    break;
                }
                Ok(n) => self.bytes.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(_) => {
                    closed = true;
                    break;
                }
            }
        }
        let line_end = self.bytes.iter().position(|&b| b == b'\n');
        match line_end {
            Some(end) if end < MAX_LINE_LEN => FirstLine::Complete(end),
            _ if closed || self.bytes.len() > MAX_LINE_LEN || now >= self.deadline => {
                FirstLine::Missing
            }
            _ => FirstLine::Waiting,
        }
    }
}

/// Who a first line carrying the job secret says it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Claim {
    /// Remote rank `rank`; its `initack` is answered by the PMI server.
    Rank { rank: usize, initack: PmiMessage },
    /// The proxy of remote host `id` (an index into the job's proxies).
    Proxy { id: usize },
}

/// Why a first line is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Refusal {
    /// It is not a PMI line.
    NotPmi,
    /// It is a PMI command other than `initack` and `proxy`.
    Command(String),
    /// An `initack` (`what` is "rank") or a `proxy` ("proxy") claiming to
    /// be `claimed` ("?" if it did not say), without the right secret or
    /// without a usable id.
    Credentials {
        what: &'static str,
        claimed: String,
        why: String,
    },
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::NotPmi => write!(f, "first line is not PMI"),
            Refusal::Command(cmd) => write!(f, "it began with cmd={cmd}"),
            Refusal::Credentials { what, claimed, why } => write!(f, "({what} {claimed}): {why}"),
        }
    }
}

impl Refusal {
    /// The line printed on stderr for a connection from `peer` refused
    /// this way; none for a peer that does not speak our protocol.
    pub(super) fn stderr_line(&self, peer: SocketAddr) -> Option<String> {
        match self {
            Refusal::Credentials { what, claimed, why } => Some(format!(
                "mpiexec: refused a PMI connection from {peer} ({what} {claimed}): {why}"
            )),
            Refusal::NotPmi | Refusal::Command(_) => None,
        }
    }
}

/// Checks the first line of a connection (without its newline) against
/// the job's `secret`; the secret is checked before the id.
pub(super) fn check_first_line(line: &str, secret: &str) -> Result<Claim, Refusal> {
    let Ok(msg) = PmiMessage::parse(line) else {
        return Err(Refusal::NotPmi);
    };
    let (what, id_key) = match msg.cmd.as_str() {
        "initack" => ("rank", "pmiid"),
        "proxy" => ("proxy", "id"),
        _ => return Err(Refusal::Command(msg.cmd)),
    };
    let id = msg.get(id_key).and_then(|v| v.parse::<usize>().ok());
    let claimed = msg.get(id_key).unwrap_or("?").to_string();
    let refuse = |why: String| Refusal::Credentials {
        what,
        claimed: claimed.clone(),
        why,
    };
    let Some(given) = msg.get("secret") else {
        return Err(refuse("it sent no job secret".to_string()));
    };
    if !crate::net::secret_matches(secret, given) {
        return Err(refuse("wrong job secret".to_string()));
    }
    let Some(id) = id else {
        return Err(refuse(format!("missing or bad {id_key}")));
    };
    Ok(if what == "proxy" {
        Claim::Proxy { id }
    } else {
        Claim::Rank {
            rank: id,
            initack: msg,
        }
    })
}
