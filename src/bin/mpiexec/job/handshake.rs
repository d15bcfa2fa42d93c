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

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::net::{Shutdown, TcpListener, TcpStream};
    use std::os::fd::AsRawFd;
    use std::time::{Duration, Instant};

    use oxmpi::bootstrap::pmi::wire::{PmiMessage, MAX_LINE_LEN};

    use super::{check_first_line, Claim, FirstLine, Pending, Refusal};
    use crate::job::testing::{wait_readable, SECRET};

    /// A connection accepted from a fresh listener at `at`, and the peer's
    /// end.
    fn accepted(at: Instant) -> (Pending, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (stream, peer) = listener.accept().unwrap();
        stream.set_nonblocking(true).unwrap();
        (Pending::new(stream, peer, at), client)
    }

    /// Where the first line of `pending` stands once the bytes sent so far
    /// have arrived.
    fn once_arrived(pending: &mut Pending, sent: usize) -> FirstLine {
        for _ in 0..100 {
            let state = pending.read_first_line(Instant::now());
            if state != FirstLine::Waiting || pending.bytes.len() >= sent {
                return state;
            }
            wait_readable(pending.stream.as_raw_fd());
        }
        panic!("the bytes sent never arrived");
    }

    /// Sends `bytes` on a new connection and returns where its first line
    /// stands once they arrived, the connection and the peer's end.
    fn after_sending(bytes: &[u8]) -> (FirstLine, Pending, TcpStream) {
        let (mut pending, mut client) = accepted(Instant::now());
        client.write_all(bytes).unwrap();
        let state = once_arrived(&mut pending, bytes.len().min(MAX_LINE_LEN + 1));
        (state, pending, client)
    }

    #[test]
    fn a_line_is_complete_with_its_newline_within_the_limit() {
        let mut longest = vec![b'a'; MAX_LINE_LEN - 1];
        longest.push(b'\n');
        let (state, ..) = after_sending(&longest);
        assert_eq!(state, FirstLine::Complete(MAX_LINE_LEN - 1));
        let mut too_long = vec![b'a'; MAX_LINE_LEN];
        too_long.push(b'\n');
        let (state, ..) = after_sending(&too_long);
        assert_eq!(state, FirstLine::Missing);
        // No waiting for a newline past the limit, nor for the peer.
        let (state, ..) = after_sending(&vec![b'a'; MAX_LINE_LEN + 1]);
        assert_eq!(state, FirstLine::Missing);
    }

    #[test]
    fn bytes_after_the_first_line_are_kept() {
        let (state, pending, _client) = after_sending(b"cmd=a\ncmd=b\n");
        assert_eq!(state, FirstLine::Complete(5));
        assert_eq!(pending.bytes, b"cmd=a\ncmd=b\n");
    }

    #[test]
    fn a_truncated_line_waits_until_the_peer_closes() {
        let line = format!("cmd=initack pmiid=1 secret={SECRET}");
        let (state, mut pending, client) = after_sending(line.as_bytes());
        assert_eq!(state, FirstLine::Waiting);
        assert_eq!(pending.bytes, line.as_bytes());
        client.shutdown(Shutdown::Write).unwrap();
        assert_eq!(once_arrived(&mut pending, usize::MAX), FirstLine::Missing);
    }

    #[test]
    fn nothing_is_missing_at_close_or_at_the_deadline() {
        let (mut pending, client) = accepted(Instant::now());
        assert_eq!(pending.read_first_line(Instant::now()), FirstLine::Waiting);
        client.shutdown(Shutdown::Write).unwrap();
        assert_eq!(once_arrived(&mut pending, usize::MAX), FirstLine::Missing);

        let at = Instant::now();
        let (mut pending, _client) = accepted(at);
        assert_eq!(pending.deadline, at + Duration::from_secs(10));
        let before = pending.deadline - Duration::from_millis(1);
        assert_eq!(pending.read_first_line(before), FirstLine::Waiting);
        assert_eq!(
            pending.read_first_line(pending.deadline),
            FirstLine::Missing
        );
    }

    #[test]
    fn a_complete_line_counts_even_after_close_or_deadline() {
        let (_, mut pending, client) = after_sending(b"cmd=a\n");
        client.shutdown(Shutdown::Write).unwrap();
        let late = pending.deadline + Duration::from_secs(1);
        assert_eq!(pending.read_first_line(late), FirstLine::Complete(5));
    }

    #[test]
    fn first_line_checks() {
        let parse = |line: &str| PmiMessage::parse(line).unwrap();
        let rank = format!("cmd=initack pmiid=3 secret={SECRET}");
        assert_eq!(
            check_first_line(&rank, SECRET),
            Ok(Claim::Rank {
                rank: 3,
                initack: parse(&rank)
            })
        );
        let reordered = format!("cmd=initack secret={SECRET} pmiid=3");
        assert!(matches!(
            check_first_line(&reordered, SECRET),
            Ok(Claim::Rank { rank: 3, .. })
        ));
        assert_eq!(
            check_first_line(&format!("cmd=proxy id=1 secret={SECRET}"), SECRET),
            Ok(Claim::Proxy { id: 1 })
        );
        let refused = |line: &str| check_first_line(line, SECRET).unwrap_err();
        let credentials = |what, claimed: &str, why: &str| Refusal::Credentials {
            what,
            claimed: claimed.to_string(),
            why: why.to_string(),
        };
        assert_eq!(refused("hello"), Refusal::NotPmi);
        assert_eq!(refused(""), Refusal::NotPmi);
        assert_eq!(refused("cmd=initack pmiid"), Refusal::NotPmi);
        assert_eq!(
            refused(&format!("cmd=put key=a value=b secret={SECRET}")),
            Refusal::Command("put".to_string())
        );
        assert_eq!(
            refused("cmd=initack pmiid=3 secret=0123"),
            credentials("rank", "3", "wrong job secret")
        );
        assert_eq!(
            refused("cmd=initack pmiid=3"),
            credentials("rank", "3", "it sent no job secret")
        );
        // The secret is checked first: a stranger learns nothing more.
        assert_eq!(
            refused("cmd=initack pmiid=x secret=0123"),
            credentials("rank", "x", "wrong job secret")
        );
        assert_eq!(
            refused(&format!("cmd=initack pmiid=-1 secret={SECRET}")),
            credentials("rank", "-1", "missing or bad pmiid")
        );
        assert_eq!(
            refused(&format!("cmd=proxy secret={SECRET}")),
            credentials("proxy", "?", "missing or bad id")
        );
        // An empty secret is a wrong one, even for a job without one.
        assert_eq!(
            refused("cmd=initack pmiid=3 secret="),
            credentials("rank", "3", "wrong job secret")
        );
        assert_eq!(
            check_first_line("cmd=initack pmiid=3 secret=", ""),
            Err(credentials("rank", "3", "wrong job secret"))
        );
    }

    #[test]
    fn refusal_lines() {
        let peer = "10.0.0.9:4000".parse().unwrap();
        let wrong = check_first_line("cmd=initack pmiid=3 secret=0123", SECRET).unwrap_err();
        assert_eq!(
            wrong.stderr_line(peer).unwrap(),
            "mpiexec: refused a PMI connection from 10.0.0.9:4000 (rank 3): wrong job secret"
        );
        let anonymous =
            check_first_line(&format!("cmd=proxy secret={SECRET}"), SECRET).unwrap_err();
        assert_eq!(
            anonymous.stderr_line(peer).unwrap(),
            "mpiexec: refused a PMI connection from 10.0.0.9:4000 (proxy ?): missing or bad id"
        );
        // Strangers are only logged.
        assert_eq!(Refusal::NotPmi.stderr_line(peer), None);
        assert_eq!(Refusal::NotPmi.to_string(), "first line is not PMI");
        let other = Refusal::Command("get".to_string());
        assert_eq!(other.stderr_line(peer), None);
        assert_eq!(other.to_string(), "it began with cmd=get");
    }
}
