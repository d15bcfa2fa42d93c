//! One rank's PMI connection as the server sees it: the nonblocking parent
//! end of the rank's socketpair, the bytes read but not yet split into lines,
//! and the answers not yet written.
//!
//! Invariants: the poll loop never blocks on a rank (reads and writes stop at
//! `EAGAIN`, unwritten answers wait in the outbox for `POLLOUT`); answers
//! leave in the order they were queued; a connection marked closing is
//! dropped only after its outbox is empty, so `finalize_ack` always reaches
//! the rank.

use std::io::{self, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;

use oxmpi::bootstrap::pmi::wire::{LineBuffer, PmiMessage, WireError};

/// Something a rank sent.
#[derive(Debug)]
pub enum Incoming {
    /// A well-formed request (a multi-line `mcmd=` block is folded into one
    /// message whose command is the `mcmd` value).
    Request(PmiMessage),
    /// A line that is not PMI-1.
    Malformed(WireError),
}

/// The server side of one rank's PMI socket.
#[derive(Debug)]
pub struct PmiConnection {
    stream: UnixStream,
    input: LineBuffer,
    outbox: Vec<u8>,
    closing: bool,
    /// A multi-line `mcmd=...` request being collected until `endcmd`.
    multiline: Option<PmiMessage>,
}

impl PmiConnection {
    /// Wraps the parent end of a rank's socketpair, making it nonblocking.
    pub fn new(stream: UnixStream) -> io::Result<PmiConnection> {
        stream.set_nonblocking(true)?;
        Ok(PmiConnection {
            stream,
            input: LineBuffer::new(),
            outbox: Vec::new(),
            closing: false,
            multiline: None,
        })
    }

    /// The descriptor to poll.
    pub fn fd(&self) -> RawFd {
        self.stream.as_raw_fd()
    }

    /// Reads everything available now. Returns the requests received and
    /// whether the rank closed its end (or the connection broke).
    pub fn read_available(&mut self) -> (Vec<Incoming>, bool) {
        let mut incoming = Vec::new();
        let eof = loop {
            match self.input.fill_from(&mut &self.stream) {
                Ok(0) => break true,
                Ok(_) => self.split_lines(&mut incoming),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break false,
                Err(e) => {
                    log::debug!("PMI socket read: {e}");
                    break true;
                }
            }
        };
        if eof && self.input.has_partial_line() {
            log::debug!("PMI peer closed its socket in the middle of a line");
        }
        (incoming, eof)
    }

    fn split_lines(&mut self, incoming: &mut Vec<Incoming>) {
        while let Some(line) = self.input.next_line() {
            let line = match line {
                Ok(line) => line,
                Err(e) => {
                    incoming.push(Incoming::Malformed(e));
                    continue;
                }
            };
            if let Some(block) = self.multiline.as_mut() {
                if line.trim() == "endcmd" {
                    incoming.extend(self.multiline.take().map(Incoming::Request));
                } else {
                    for (k, v) in line.split(' ').filter_map(|t| t.split_once('=')) {
                        block.push(k, v);
                    }
                }
                continue;
            }
            if let Some(cmd) = line.trim_start().strip_prefix("mcmd=") {
                self.multiline = Some(PmiMessage::new(cmd.trim()));
                continue;
            }
            incoming.push(match PmiMessage::parse(&line) {
                Ok(msg) => Incoming::Request(msg),
                Err(e) => Incoming::Malformed(e),
            });
        }
    }

    /// Queues an answer. One that cannot be encoded (a stored value too long
    /// for a line) is replaced by an `rc=-1` answer of the same command.
    pub fn send(&mut self, msg: &PmiMessage) {
        log::debug!("PMI answer: {msg}");
        let line = msg.render().unwrap_or_else(|e| {
            log::warn!("cannot send PMI answer {msg}: {e}");
            PmiMessage::new(msg.cmd.clone())
                .with("rc", -1)
                .with("msg", "answer_too_long_for_a_pmi_line")
                .render()
                .unwrap_or_else(|_| "cmd=error rc=-1\n".to_string())
        });
        self.outbox.extend_from_slice(line.as_bytes());
    }

    /// Marks the connection to be closed once its answers are written.
    pub fn close_when_flushed(&mut self) {
        self.closing = true;
    }

    /// Whether answers are waiting for the socket to become writable.
    pub fn wants_write(&self) -> bool {
        !self.outbox.is_empty()
    }

    /// Whether the connection is closing and has nothing left to write.
    pub fn is_done(&self) -> bool {
        self.closing && self.outbox.is_empty()
    }

    /// Writes as much of the outbox as the socket takes. An error means the
    /// rank is gone; the outbox is then dropped.
    pub fn flush(&mut self) -> io::Result<()> {
        while !self.outbox.is_empty() {
            match (&self.stream).write(&self.outbox) {
                Ok(0) => break,
                Ok(n) => {
                    self.outbox.drain(..n);
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) => {
                    self.outbox.clear();
                    return Err(e);
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn pair() -> (PmiConnection, UnixStream) {
        let (server, client) = UnixStream::pair().unwrap();
        (PmiConnection::new(server).unwrap(), client)
    }

    fn requests(incoming: Vec<Incoming>) -> Vec<String> {
        incoming
            .into_iter()
            .map(|i| match i {
                Incoming::Request(m) => m.to_string(),
                Incoming::Malformed(e) => format!("malformed: {e}"),
            })
            .collect()
    }

    #[test]
    fn reads_requests_and_sees_eof() {
        let (mut conn, mut client) = pair();
        let (incoming, eof) = conn.read_available();
        assert!(incoming.is_empty() && !eof);
        client
            .write_all(b"cmd=init pmi_version=1 pmi_subversion=1\ncmd=get_ma")
            .unwrap();
        let (incoming, eof) = conn.read_available();
        assert_eq!(
            requests(incoming),
            ["cmd=init pmi_version=1 pmi_subversion=1"]
        );
        assert!(!eof);
        client.write_all(b"xes\nnot pmi\n").unwrap();
        drop(client);
        let (incoming, eof) = conn.read_available();
        assert_eq!(
            requests(incoming),
            [
                "cmd=get_maxes",
                "malformed: PMI line does not start with `cmd=`: \"not\""
            ]
        );
        assert!(eof);
    }

    #[test]
    fn folds_multiline_commands() {
        let (mut conn, mut client) = pair();
        client
            .write_all(b"mcmd=spawn\nnprocs=2\nexecname=a.out\nendcmd\ncmd=get_appnum\n")
            .unwrap();
        let (incoming, _) = conn.read_available();
        assert_eq!(
            requests(incoming),
            ["cmd=spawn nprocs=2 execname=a.out", "cmd=get_appnum"]
        );
    }

    #[test]
    fn sends_in_order_and_closes_after_flush() {
        let (mut conn, mut client) = pair();
        conn.send(&PmiMessage::new("barrier_out"));
        conn.send(&PmiMessage::new("finalize_ack"));
        conn.close_when_flushed();
        assert!(conn.wants_write() && !conn.is_done());
        conn.flush().unwrap();
        assert!(conn.is_done());
        drop(conn);
        let mut received = String::new();
        client.read_to_string(&mut received).unwrap();
        assert_eq!(received, "cmd=barrier_out\ncmd=finalize_ack\n");
    }

    #[test]
    fn unencodable_answer_becomes_an_error_answer() {
        let (mut conn, mut client) = pair();
        conn.send(&PmiMessage::new("get_result").with("value", "x".repeat(2000)));
        conn.flush().unwrap();
        drop(conn);
        let mut received = String::new();
        client.read_to_string(&mut received).unwrap();
        assert_eq!(
            received,
            "cmd=get_result rc=-1 msg=answer_too_long_for_a_pmi_line\n"
        );
    }
}
