//! The PMI-2 wire format, as MPICH's PMI-2 client, Hydra 4.0.2 and Slurm
//! speak it: after a PMI-1 `init` line asking for version 2 (see
//! [`super::wire`]), every message is a 6-character decimal length, then
//! that many bytes of `cmd=<name>;key=value;...;`. A `;` inside a value is
//! doubled; a field is split on its first `=`.
//!
//! Messages are [`PmiMessage`]s, the type PMI-1 uses, so client and server
//! handle both versions with one message type and differ only in framing.
//!
//! Invariants:
//! - a message [`encode`]s to bytes that [`FrameBuffer`] and [`parse_body`]
//!   turn back into an equal message, however the bytes are cut;
//! - no frame whose body is longer than the buffer's limit is handed out
//!   (its bytes are skipped, the length being known, and the stream stays
//!   in step); a length prefix that is not a number cannot be stepped over,
//!   so the buffer reports it once and takes nothing more: the caller should
//!   drop the connection.
//!
//! The length is read as C's `atoi` reads it, spaces before or after the
//! digits allowed: Hydra writes it right-aligned (`%6u`), MPICH's client
//! left-aligned. MPICH 4.0.2's client also counts and sends six bytes more
//! than its body (whatever its buffer held after it): a server reads such
//! bodies with [`parse_body_lenient`], which keeps the fields before an
//! unterminated or malformed tail.

use std::io::{self, Read};

use super::wire::{PmiMessage, WireError};

/// The characters of the length prefix.
pub const LENGTH_DIGITS: usize = 6;

/// The longest body accepted or produced (MPICH's `PMII_MAX_COMMAND_LEN`).
pub const MAX_BODY_LEN: usize = 64 * 1024;

/// The message as PMI-2 bytes: length prefix and body.
///
/// Fails when the command is empty or holds `;`, `=` or NUL, a key is
/// empty or holds `;`, `=` or NUL, a value holds NUL, or the body would be
/// longer than [`MAX_BODY_LEN`].
pub fn encode(msg: &PmiMessage) -> Result<Vec<u8>, WireError> {
    if msg.cmd.is_empty() {
        return Err(WireError::EmptyCmd);
    }
    check("command", &msg.cmd, &[';', '=', '\0'])?;
    let mut body = format!("cmd={};", msg.cmd);
    for (key, value) in &msg.fields {
        if key.is_empty() {
            return Err(WireError::EmptyKey(format!("={value}")));
        }
        check("key", key, &[';', '=', '\0'])?;
        check("value", value, &['\0'])?;
        body.push_str(key);
        body.push('=');
        body.push_str(&value.replace(';', ";;"));
        body.push(';');
    }
    if body.len() > MAX_BODY_LEN {
        return Err(WireError::FrameTooLong {
            len: body.len(),
            limit: MAX_BODY_LEN,
        });
    }
    let mut bytes = format!("{:>width$}", body.len(), width = LENGTH_DIGITS).into_bytes();
    bytes.extend_from_slice(body.as_bytes());
    Ok(bytes)
}

fn check(part: &'static str, text: &str, forbidden: &[char]) -> Result<(), WireError> {
    match text.chars().find(|c| forbidden.contains(c)) {
        Some(bad) => Err(WireError::Unencodable {
            part,
            text: text.to_string(),
            bad,
        }),
        None => Ok(()),
    }
}

/// Parses a body (what follows the length prefix): every field, the first
/// one `cmd=<name>`, must end with `;`.
pub fn parse_body(body: &[u8]) -> Result<PmiMessage, WireError> {
    let (msg, tail) = parse_fields(body)?;
    match tail {
        None => Ok(msg),
        Some(err) => Err(err),
    }
}

/// Parses a body as a server should: the `cmd` field must be well formed,
/// and what follows the last good field, if it is not a field, is left
/// out (MPICH 4.0.2's client sends six bytes after its body).
pub fn parse_body_lenient(body: &[u8]) -> Result<PmiMessage, WireError> {
    let (msg, tail) = parse_fields(body)?;
    if let Some(err) = tail {
        log::debug!("PMI-2 message {msg}: tail left out ({err})");
    }
    Ok(msg)
}

/// The message, and the error that ended parsing before the end of the
/// body (`None`: the whole body was fields). An error in the `cmd` field
/// is returned as `Err`.
fn parse_fields(body: &[u8]) -> Result<(PmiMessage, Option<WireError>), WireError> {
    let mut fields = Vec::new();
    let mut at = 0;
    while at < body.len() {
        match next_field(body, &mut at) {
            Ok(field) => fields.push(field),
            Err(e) if fields.is_empty() => return Err(e),
            Err(e) => {
                let mut fields = fields.into_iter();
                let cmd = fields.next().map(|(_, v)| v).unwrap_or_default();
                return Ok((
                    PmiMessage {
                        cmd,
                        fields: fields.collect(),
                    },
                    Some(e),
                ));
            }
        }
        if fields.len() == 1 {
            let (key, value) = &fields[0];
            if key != "cmd" {
                return Err(WireError::MissingCmd(format!("{key}={value}")));
            }
            if value.is_empty() {
                return Err(WireError::EmptyCmd);
            }
        }
    }
    let mut fields = fields.into_iter();
    let cmd = fields.next().ok_or(WireError::EmptyLine)?.1;
    Ok((
        PmiMessage {
            cmd,
            fields: fields.collect(),
        },
        None,
    ))
}

/// The field starting at `*at`, which is moved past its `;`.
fn next_field(body: &[u8], at: &mut usize) -> Result<(String, String), WireError> {
    let rest = &body[*at..];
    let shown = || String::from_utf8_lossy(&rest[..rest.len().min(40)]).into_owned();
    let Some(eq) = rest.iter().position(|&b| b == b'=' || b == b';') else {
        return Err(WireError::Unterminated(shown()));
    };
    if rest[eq] == b';' {
        return Err(WireError::FieldWithoutEquals(
            String::from_utf8_lossy(&rest[..eq]).into_owned(),
        ));
    }
    if eq == 0 {
        return Err(WireError::EmptyKey(shown()));
    }
    let key = std::str::from_utf8(&rest[..eq]).map_err(|_| WireError::NotUtf8)?;
    let mut value = Vec::new();
    let mut i = eq + 1;
    loop {
        match rest.get(i) {
            None => return Err(WireError::Unterminated(shown())),
            Some(b';') if rest.get(i + 1) == Some(&b';') => {
                value.push(b';');
                i += 2;
            }
            Some(b';') => break,
            Some(b'\0') => return Err(WireError::EmbeddedControl),
            Some(&b) => {
                value.push(b);
                i += 1;
            }
        }
    }
    *at += i + 1;
    let value = String::from_utf8(value).map_err(|_| WireError::NotUtf8)?;
    Ok((key.to_string(), value))
}

/// Reads the length prefix (`atoi`-like: spaces around the digits).
fn parse_length(prefix: &[u8]) -> Result<usize, WireError> {
    let text = std::str::from_utf8(prefix).map_err(|_| WireError::NotUtf8)?;
    let digits = text.trim_matches(' ');
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(WireError::BadLength(text.to_string()));
    }
    digits
        .parse()
        .map_err(|_| WireError::BadLength(text.to_string()))
}

/// Incremental splitter of a PMI-2 byte stream into message bodies: feed
/// it whatever a read returned, take complete bodies out.
#[derive(Debug)]
pub struct FrameBuffer {
    pending: Vec<u8>,
    limit: usize,
    /// Bytes of an over-long body still to be dropped.
    skipping: usize,
    /// A length prefix was not a number: the stream cannot be followed.
    broken: bool,
}

impl Default for FrameBuffer {
    fn default() -> Self {
        FrameBuffer::new()
    }
}

impl FrameBuffer {
    /// A buffer accepting bodies of up to [`MAX_BODY_LEN`] bytes.
    pub fn new() -> Self {
        FrameBuffer::with_limit(MAX_BODY_LEN)
    }

    /// A buffer accepting bodies of up to `limit` bytes.
    pub fn with_limit(limit: usize) -> Self {
        FrameBuffer {
            pending: Vec::new(),
            limit,
            skipping: 0,
            broken: false,
        }
    }

    /// Appends bytes received from the stream.
    pub fn feed(&mut self, bytes: &[u8]) {
        if self.broken {
            return;
        }
        let skipped = self.skipping.min(bytes.len());
        self.skipping -= skipped;
        self.pending.extend_from_slice(&bytes[skipped..]);
    }

    /// Does one `read` from `reader` into the buffer and returns what it
    /// returned (`Ok(0)`: end of stream).
    pub fn fill_from(&mut self, reader: &mut impl Read) -> io::Result<usize> {
        let mut chunk = [0u8; 4096];
        let n = reader.read(&mut chunk)?;
        self.feed(&chunk[..n]);
        Ok(n)
    }

    /// Whether bytes of an unfinished message are buffered.
    pub fn has_partial_frame(&self) -> bool {
        !self.pending.is_empty() || self.skipping > 0
    }

    /// The next complete body, `None` when none is buffered yet, or an
    /// error for a bad length prefix (the buffer is then emptied: the
    /// stream cannot be followed further) or an over-long body (dropped).
    pub fn next_frame(&mut self) -> Option<Result<Vec<u8>, WireError>> {
        if self.pending.len() < LENGTH_DIGITS {
            return None;
        }
        let len = match parse_length(&self.pending[..LENGTH_DIGITS]) {
            Ok(len) => len,
            Err(e) => {
                self.pending.clear();
                self.broken = true;
                return Some(Err(e));
            }
        };
        if len > self.limit {
            let here = (self.pending.len() - LENGTH_DIGITS).min(len);
            self.skipping = len - here;
            self.pending.drain(..LENGTH_DIGITS + here);
            return Some(Err(WireError::FrameTooLong {
                len,
                limit: self.limit,
            }));
        }
        if self.pending.len() < LENGTH_DIGITS + len {
            return None;
        }
        let body = self.pending[LENGTH_DIGITS..LENGTH_DIGITS + len].to_vec();
        self.pending.drain(..LENGTH_DIGITS + len);
        Some(Ok(body))
    }

    /// The next complete message, parsed strictly ([`parse_body`]).
    pub fn next_message(&mut self) -> Option<Result<PmiMessage, WireError>> {
        self.next_frame()
            .map(|body| body.and_then(|b| parse_body(&b)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(bytes: &[u8]) -> String {
        String::from_utf8(bytes.to_vec()).unwrap()
    }

    #[test]
    fn encodes_with_a_right_aligned_length() {
        let m = PmiMessage::new("kvs-put")
            .with("key", "k")
            .with("value", "v");
        let bytes = encode(&m).unwrap();
        assert_eq!(text(&bytes), "    26cmd=kvs-put;key=k;value=v;");
        assert_eq!(
            text(&encode(&PmiMessage::new("kvs-fence")).unwrap()),
            "    14cmd=kvs-fence;"
        );
    }

    #[test]
    fn semicolons_in_values_are_doubled_and_come_back() {
        let m = PmiMessage::new("kvs-put")
            .with("key", "card")
            .with("value", "a;b;;c;")
            .with("empty", "")
            .with("last", ";");
        let bytes = encode(&m).unwrap();
        assert!(
            text(&bytes).ends_with("value=a;;b;;;;c;;;empty=;last=;;;"),
            "{}",
            text(&bytes)
        );
        assert_eq!(parse_body(&bytes[LENGTH_DIGITS..]).unwrap(), m);
        let mut buffer = FrameBuffer::new();
        buffer.feed(&bytes);
        assert_eq!(buffer.next_message().unwrap().unwrap(), m);
        assert!(buffer.next_frame().is_none());
    }

    #[test]
    fn values_may_hold_equals_signs() {
        let m = parse_body(b"cmd=kvs-get-response;found=TRUE;value=node=a=b;rc=0;").unwrap();
        assert_eq!(m.cmd, "kvs-get-response");
        assert_eq!(m.get("value"), Some("node=a=b"));
        assert_eq!(m.get("rc"), Some("0"));
    }

    #[test]
    fn lengths_are_read_like_atoi() {
        for prefix in ["    14", "14    ", "000014", " 14   "] {
            let mut buffer = FrameBuffer::new();
            buffer.feed(format!("{prefix}cmd=kvs-fence;").as_bytes());
            assert_eq!(
                buffer.next_message().unwrap().unwrap(),
                PmiMessage::new("kvs-fence")
            );
        }
        for bad in ["      ", "1 4   ", "-14   ", "abcdef", "0x0e  "] {
            let mut buffer = FrameBuffer::new();
            buffer.feed(format!("{bad}cmd=kvs-fence;").as_bytes());
            assert!(
                matches!(buffer.next_frame(), Some(Err(WireError::BadLength(_)))),
                "{bad:?}"
            );
            // The stream cannot be followed: nothing more is taken.
            assert!(buffer.next_frame().is_none());
            buffer.feed(b"    14cmd=kvs-fence;");
            assert!(buffer.next_frame().is_none());
            assert!(!buffer.has_partial_frame());
        }
    }

    #[test]
    fn a_frame_waits_for_all_its_bytes() {
        let bytes = encode(&PmiMessage::new("job-getid")).unwrap();
        let mut buffer = FrameBuffer::new();
        for (i, b) in bytes.iter().enumerate() {
            assert!(buffer.next_frame().is_none(), "complete after {i} bytes");
            buffer.feed(&[*b]);
        }
        assert_eq!(
            buffer.next_message().unwrap().unwrap(),
            PmiMessage::new("job-getid")
        );
        assert!(!buffer.has_partial_frame());
    }

    #[test]
    fn an_over_long_frame_is_skipped_and_the_next_one_read() {
        let mut buffer = FrameBuffer::with_limit(20);
        let long = encode(&PmiMessage::new("kvs-put").with("value", "x".repeat(40))).unwrap();
        let next = encode(&PmiMessage::new("kvs-fence")).unwrap();
        buffer.feed(&long[..10]);
        assert!(matches!(
            buffer.next_frame(),
            Some(Err(WireError::FrameTooLong { limit: 20, .. }))
        ));
        assert!(buffer.has_partial_frame());
        buffer.feed(&long[10..]);
        assert!(buffer.next_frame().is_none());
        buffer.feed(&next);
        assert_eq!(
            buffer.next_message().unwrap().unwrap(),
            PmiMessage::new("kvs-fence")
        );
    }

    #[test]
    fn malformed_bodies_are_rejected() {
        assert_eq!(parse_body(b""), Err(WireError::EmptyLine));
        assert!(matches!(
            parse_body(b"cmd=kvs-fence"),
            Err(WireError::Unterminated(_))
        ));
        assert!(matches!(
            parse_body(b"key=a;cmd=x;"),
            Err(WireError::MissingCmd(_))
        ));
        assert_eq!(parse_body(b"cmd=;"), Err(WireError::EmptyCmd));
        assert!(matches!(
            parse_body(b"cmd=kvs-put;key;"),
            Err(WireError::FieldWithoutEquals(k)) if k == "key"
        ));
        assert!(matches!(
            parse_body(b"cmd=kvs-put;=v;"),
            Err(WireError::EmptyKey(_))
        ));
        assert!(matches!(
            parse_body(b"cmd=kvs-put;key=a;value=b"),
            Err(WireError::Unterminated(_))
        ));
        assert_eq!(parse_body(b"cmd=x;v=\xff;"), Err(WireError::NotUtf8));
        assert_eq!(
            parse_body(b"cmd=x;v=a\0b;"),
            Err(WireError::EmbeddedControl)
        );
    }

    #[test]
    fn a_server_leaves_out_a_tail_that_is_not_a_field() {
        // MPICH 4.0.2's client: six bytes of its buffer after the body.
        let m = parse_body_lenient(b"cmd=kvs-fence;bid=kv").unwrap();
        assert_eq!(m, PmiMessage::new("kvs-fence"));
        let m = parse_body_lenient(b"cmd=kvs-get;key=k;1;key=").unwrap();
        assert_eq!(m, PmiMessage::new("kvs-get").with("key", "k"));
        let m = parse_body_lenient(b"cmd=kvs-get;key=k;\xff\0\x01;").unwrap();
        assert_eq!(m.get("key"), Some("k"));
        // The command itself must be sound.
        assert!(parse_body_lenient(b"cmd=kvs-fen").is_err());
        assert!(parse_body_lenient(b"junk;cmd=x;").is_err());
    }

    #[test]
    fn unencodable_messages_are_refused() {
        assert_eq!(encode(&PmiMessage::new("")), Err(WireError::EmptyCmd));
        assert!(encode(&PmiMessage::new("a;b")).is_err());
        assert!(encode(&PmiMessage::new("x").with("k;", "v")).is_err());
        assert!(encode(&PmiMessage::new("x").with("k=", "v")).is_err());
        assert!(encode(&PmiMessage::new("x").with("", "v")).is_err());
        assert!(encode(&PmiMessage::new("x").with("k", "a\0")).is_err());
        let long = PmiMessage::new("x").with("v", "y".repeat(MAX_BODY_LEN));
        assert!(matches!(encode(&long), Err(WireError::FrameTooLong { .. })));
        // Spaces and newlines, which PMI-1 cannot carry, are fine.
        let m = PmiMessage::new("x").with("v", "a b\nc");
        let bytes = encode(&m).unwrap();
        assert_eq!(parse_body(&bytes[LENGTH_DIGITS..]).unwrap(), m);
    }

    #[test]
    fn fills_from_a_reader() {
        let mut bytes = encode(&PmiMessage::new("a")).unwrap();
        bytes.extend(encode(&PmiMessage::new("b").with("k", "v")).unwrap());
        let mut src: &[u8] = &bytes;
        let mut buffer = FrameBuffer::new();
        while buffer.fill_from(&mut src).unwrap() > 0 {}
        assert_eq!(buffer.next_message().unwrap().unwrap().cmd, "a");
        assert_eq!(buffer.next_message().unwrap().unwrap().get("k"), Some("v"));
        assert!(buffer.next_message().is_none());
    }
}
