//! The server's connections: a rank's PMI connection (the nonblocking parent
//! end of a local rank's socketpair, or a remote rank's authenticated TCP
//! socket) and a proxy's control connection, each with the bytes read but
//! not yet split into lines and the answers not yet written.
//!
//! Invariants: the poll loop never blocks on a peer (reads and writes stop
//! at `EAGAIN`, unwritten answers wait in the outbox for `POLLOUT`); answers
//! leave in the order they were queued; a connection marked closing is
//! dropped only after its outbox is empty, so `finalize_ack` always reaches
//! the rank.

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

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

/// Makes `fd` nonblocking.
pub fn set_nonblocking(fd: RawFd) -> io::Result<()> {
    // SAFETY: fcntl with integer arguments on a descriptor the caller owns.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags < 0 || libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// A nonblocking line-oriented socket: lines in, bytes out.
#[derive(Debug)]
pub struct LineConnection {
    stream: File,
    input: LineBuffer,
    outbox: Vec<u8>,
    closing: bool,
}

impl LineConnection {
    /// Wraps a connected socket, making it nonblocking; `already_read` are
    /// bytes received before (they come first); lines may be up to `limit`
    /// bytes long.
    pub fn new(socket: OwnedFd, already_read: &[u8], limit: usize) -> io::Result<LineConnection> {
        set_nonblocking(socket.as_raw_fd())?;
        let mut input = LineBuffer::with_limit(limit);
        input.feed(already_read);
        Ok(LineConnection {
            stream: File::from(socket),
            input,
            outbox: Vec::new(),
            closing: false,
        })
    }

    /// The descriptor to poll.
    pub fn fd(&self) -> RawFd {
        self.stream.as_raw_fd()
    }

    /// Reads everything available now. Returns the complete lines and
    /// whether the peer closed its end (or the connection broke).
    pub fn read_lines(&mut self) -> (Vec<Result<String, WireError>>, bool) {
        let mut lines = Vec::new();
        self.take_lines(&mut lines);
        let eof = loop {
            match self.input.fill_from(&mut &self.stream) {
                Ok(0) => break true,
                Ok(_) => self.take_lines(&mut lines),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break false,
                Err(e) => {
                    log::debug!("socket read: {e}");
                    break true;
                }
            }
        };
        if eof && self.input.has_partial_line() {
            log::debug!("peer closed its socket in the middle of a line");
        }
        (lines, eof)
    }

    fn take_lines(&mut self, lines: &mut Vec<Result<String, WireError>>) {
        while let Some(line) = self.input.next_line() {
            lines.push(line);
        }
    }

    /// Queues bytes to send.
    pub fn queue(&mut self, bytes: &[u8]) {
        self.outbox.extend_from_slice(bytes);
    }

    /// Marks the connection to be closed once its outbox is written.
    pub fn close_when_flushed(&mut self) {
        self.closing = true;
    }

    /// Whether bytes are waiting for the socket to become writable.
    pub fn wants_write(&self) -> bool {
        !self.outbox.is_empty()
    }

    /// Whether the connection is closing and has nothing left to write.
    pub fn is_done(&self) -> bool {
        self.closing && self.outbox.is_empty()
    }

    /// Writes as much of the outbox as the socket takes. An error means the
    /// peer is gone; the outbox is then dropped.
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

/// The server side of one rank's PMI socket.
#[derive(Debug)]
pub struct PmiConnection {
    lines: LineConnection,
    /// A multi-line `mcmd=...` request being collected until `endcmd`.
    multiline: Option<PmiMessage>,
}

impl PmiConnection {
    /// Wraps the server end of a rank's socket, making it nonblocking.
    pub fn new(socket: impl Into<OwnedFd>) -> io::Result<PmiConnection> {
        PmiConnection::with_input(socket.into(), &[])
    }

    /// Same, with bytes already read from the socket.
    pub fn with_input(socket: OwnedFd, already_read: &[u8]) -> io::Result<PmiConnection> {
        Ok(PmiConnection {
            lines: LineConnection::new(
                socket,
                already_read,
                oxmpi::bootstrap::pmi::wire::MAX_LINE_LEN,
            )?,
            multiline: None,
        })
    }

    /// The descriptor to poll.
    pub fn fd(&self) -> RawFd {
        self.lines.fd()
    }

    /// Reads everything available now. Returns the requests received and
    /// whether the rank closed its end (or the connection broke).
    pub fn read_available(&mut self) -> (Vec<Incoming>, bool) {
        let (lines, eof) = self.lines.read_lines();
        let mut incoming = Vec::new();
        self.split_lines(lines, &mut incoming);
        (incoming, eof)
    }

    fn split_lines(&mut self, lines: Vec<Result<String, WireError>>, incoming: &mut Vec<Incoming>) {
        for line in lines {
            let line = match line {
                Ok(line) => line,
                Err(e) => {
                    incoming.push(Incoming::Malformed(e));
                    continue;
                }
            };
            if let Some(block) = self.multiline.as_mut() {
                // One `key=value` per line: the value is the rest of the
                // line, spaces and `=` included (a spawned program's
                // arguments, `argN=`, may hold both).
                if line.trim() == "endcmd" {
                    incoming.extend(self.multiline.take().map(Incoming::Request));
                } else if let Some((k, v)) = line.split_once('=') {
                    block.push(k.trim(), v);
                } else if !line.trim().is_empty() {
                    log::debug!("ignoring {line:?} in a multi-line PMI command");
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
        self.lines.queue(line.as_bytes());
    }

    /// Marks the connection to be closed once its answers are written.
    pub fn close_when_flushed(&mut self) {
        self.lines.close_when_flushed();
    }

    /// Whether answers are waiting for the socket to become writable.
    pub fn wants_write(&self) -> bool {
        self.lines.wants_write()
    }

    /// Whether the connection is closing and has nothing left to write.
    pub fn is_done(&self) -> bool {
        self.lines.is_done()
    }

    /// Writes as much of the outbox as the socket takes. An error means the
    /// rank is gone; the outbox is then dropped.
    pub fn flush(&mut self) -> io::Result<()> {
        self.lines.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;
    use std::os::unix::net::UnixStream;

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
    fn multiline_values_keep_spaces_and_equals_signs() {
        let (mut conn, mut client) = pair();
        client
            .write_all(b"mcmd=spawn\nnprocs=1\narg1=a b=c\narg2= x \nargcnt=2\nendcmd\n")
            .unwrap();
        let (incoming, _) = conn.read_available();
        let [Incoming::Request(msg)] = incoming.as_slice() else {
            panic!("{incoming:?}");
        };
        assert_eq!(msg.get("arg1"), Some("a b=c"));
        assert_eq!(msg.get("arg2"), Some(" x "));
        assert_eq!(msg.get("argcnt"), Some("2"));
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
