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
//!
//! A rank's connection starts with PMI-1 lines; once it sends a successful
//! PMI-2 `response_to_init` (the rank asked for version 2), it reads and
//! writes PMI-2 messages (`wire2`) from the next byte on. The rank waits
//! for that answer before it sends its first PMI-2 message, so no byte is
//! read under the wrong framing; bytes already buffered after the `init`
//! line carry over.

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

use oxmpi::bootstrap::pmi::wire::{LineBuffer, PmiMessage, WireError};
use oxmpi::bootstrap::pmi::wire2::{self, FrameBuffer};

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

    /// Reads everything available now, unsplit (after `take_pending`).
    /// Returns the bytes and whether the peer closed its end.
    pub fn read_bytes(&mut self) -> (Vec<u8>, bool) {
        let mut bytes = Vec::new();
        let mut chunk = [0u8; 4096];
        let eof = loop {
            match (&self.stream).read(&mut chunk) {
                Ok(0) => break true,
                Ok(n) => bytes.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break false,
                Err(e) => {
                    log::debug!("socket read: {e}");
                    break true;
                }
            }
        };
        (bytes, eof)
    }

    /// The bytes read but not handed out as lines yet.
    pub fn take_pending(&mut self) -> Vec<u8> {
        self.input.take_pending()
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
    /// PMI-2 framing, once the rank's `init` asked for it.
    frames: Option<FrameBuffer>,
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
            frames: None,
        })
    }

    /// The descriptor to poll.
    pub fn fd(&self) -> RawFd {
        self.lines.fd()
    }

    /// Reads everything available now. Returns the requests received and
    /// whether the rank closed its end (or the connection broke).
    pub fn read_available(&mut self) -> (Vec<Incoming>, bool) {
        if let Some(frames) = self.frames.as_mut() {
            let (bytes, eof) = self.lines.read_bytes();
            frames.feed(&bytes);
            let mut incoming = Vec::new();
            while let Some(body) = frames.next_frame() {
                incoming.push(match body.and_then(|b| wire2::parse_body_lenient(&b)) {
                    Ok(msg) => Incoming::Request(msg),
                    Err(e) => Incoming::Malformed(e),
                });
            }
            if eof && frames.has_partial_frame() {
                log::debug!("peer closed its socket in the middle of a PMI-2 message");
            }
            return (incoming, eof);
        }
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
        if self.frames.is_some() {
            let bytes = wire2::encode(msg).unwrap_or_else(|e| {
                log::warn!("cannot send PMI-2 answer {msg}: {e}");
                wire2::encode(
                    &PmiMessage::new(msg.cmd.clone())
                        .with("rc", -1)
                        .with("errmsg", "answer_too_long"),
                )
                .unwrap_or_default()
            });
            self.lines.queue(&bytes);
            return;
        }
        let switch = msg.is("response_to_init")
            && msg.get("pmi_version") == Some("2")
            && msg.get("rc") == Some("0");
        let line = msg.render().unwrap_or_else(|e| {
            log::warn!("cannot send PMI answer {msg}: {e}");
            PmiMessage::new(msg.cmd.clone())
                .with("rc", -1)
                .with("msg", "answer_too_long_for_a_pmi_line")
                .render()
                .unwrap_or_else(|_| "cmd=error rc=-1\n".to_string())
        });
        self.lines.queue(line.as_bytes());
        if switch {
            let mut frames = FrameBuffer::new();
            frames.feed(&self.lines.take_pending());
            self.frames = Some(frames);
        }
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
    fn switches_to_pmi2_framing_after_a_pmi2_init_answer() {
        let (mut conn, mut client) = pair();
        client
            .write_all(b"cmd=init pmi_version=2 pmi_subversion=0\n    23cmd=fullinit;pmirank=0;")
            .unwrap();
        let (incoming, _) = conn.read_available();
        assert_eq!(
            requests(incoming),
            ["cmd=init pmi_version=2 pmi_subversion=0"]
        );
        conn.send(
            &PmiMessage::new("response_to_init")
                .with("pmi_version", 2)
                .with("pmi_subversion", 0)
                .with("rc", 0),
        );
        // The bytes after the init line were held back, and are PMI-2.
        client.write_all(b"20    cmd=kvs-fence;bid=kv").unwrap();
        let (incoming, eof) = conn.read_available();
        assert_eq!(
            requests(incoming),
            ["cmd=fullinit pmirank=0", "cmd=kvs-fence"]
        );
        assert!(!eof);
        conn.send(&PmiMessage::new("kvs-fence-response").with("rc", 0));
        client.write_all(b"   xyzcmd=x;").unwrap();
        let (incoming, _) = conn.read_available();
        assert_eq!(
            requests(incoming),
            ["malformed: PMI-2 length prefix \"   xyz\" is not a number"]
        );
        conn.flush().unwrap();
        drop(conn);
        let mut received = String::new();
        client.read_to_string(&mut received).unwrap();
        assert_eq!(
            received,
            "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n    28cmd=kvs-fence-response;rc=0;"
        );
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
