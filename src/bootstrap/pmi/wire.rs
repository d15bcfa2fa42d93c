//! The PMI-1 "simple" wire format: one message per line, `cmd=<name>` then
//! space-separated `key=value` fields, ended by `\n`, as MPICH's simple PMI
//! client and Hydra speak it (see docs/reference/pmi-wire.md).
//!
//! Shared by the library's PMI client and by mpiexec's PMI server, so both
//! sides agree on one grammar. The invariants this module keeps:
//! - a [`PmiMessage`] that renders is one line that parses back to an equal
//!   message (keys hold no `=`, nothing holds a space, newline or NUL);
//! - no line longer than [`MAX_LINE_LEN`] bytes, its newline included, is
//!   produced by [`PmiMessage::render`] or accepted by [`PmiMessage::parse`]
//!   and [`LineBuffer`].
//!
//! A value may contain `=`: a field is split on its first `=` only.

use std::fmt;
use std::io::{self, Read};

use thiserror::Error;

/// Longest PMI-1 line, newline included (MPICH's `PMIU_MAXLINE`).
pub const MAX_LINE_LEN: usize = 1024;

/// Why a line is not a PMI-1 message, or a message cannot become a line.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum WireError {
    /// The line holds nothing but spaces.
    #[error("empty PMI line")]
    EmptyLine,
    /// The first field is not `cmd=<name>`.
    #[error("PMI line does not start with `cmd=`: {0:?}")]
    MissingCmd(String),
    /// `cmd=` with nothing after it.
    #[error("PMI line has an empty command name")]
    EmptyCmd,
    /// A field that is not `key=value`.
    #[error("PMI field without `=`: {0:?}")]
    FieldWithoutEquals(String),
    /// A field of the form `=value`.
    #[error("PMI field with an empty key: {0:?}")]
    EmptyKey(String),
    /// The line (newline included) is longer than the limit.
    #[error("PMI line longer than {limit} bytes")]
    LineTooLong {
        /// The limit that was exceeded, newline included.
        limit: usize,
    },
    /// The line is not UTF-8 (PMI lines are ASCII in practice).
    #[error("PMI line is not valid UTF-8")]
    NotUtf8,
    /// A newline or NUL inside a line handed to [`PmiMessage::parse`].
    #[error("PMI line holds a newline or NUL byte inside it")]
    EmbeddedControl,
    /// Text the wire cannot carry: a space, newline or NUL anywhere, or `=`
    /// in a key.
    #[error("PMI {part} {text:?} holds {bad:?}, which the wire format cannot carry")]
    Unencodable {
        /// Which part of the message: "command", "key" or "value".
        part: &'static str,
        /// The offending text.
        text: String,
        /// The character that cannot be carried.
        bad: char,
    },
    /// A PMI-2 message whose 6-character length prefix is not a decimal
    /// number.
    #[error("PMI-2 length prefix {0:?} is not a number")]
    BadLength(String),
    /// A PMI-2 message longer than the limit.
    #[error("PMI-2 message of {len} bytes, longer than {limit}")]
    FrameTooLong {
        /// The length announced (or that the message would have).
        len: usize,
        /// The limit.
        limit: usize,
    },
    /// A PMI-2 field not ended by `;`, or a message that ends inside its
    /// first field.
    #[error("PMI-2 field not ended by `;`: {0:?}")]
    Unterminated(String),
    /// A required field is absent from a message.
    #[error("PMI message `{cmd}` lacks the field `{key}`")]
    MissingField {
        /// The message's command.
        cmd: String,
        /// The absent key.
        key: String,
    },
}

/// One PMI-1 message: a command and its fields, in wire order.
///
/// Duplicate keys are kept as sent; [`PmiMessage::get`] answers the first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PmiMessage {
    /// The value of the leading `cmd=` field, e.g. `put` or `get_result`.
    pub cmd: String,
    /// The remaining `key=value` fields, in order.
    pub fields: Vec<(String, String)>,
}

impl PmiMessage {
    /// A message with command `cmd` and no fields yet.
    pub fn new(cmd: impl Into<String>) -> Self {
        PmiMessage {
            cmd: cmd.into(),
            fields: Vec::new(),
        }
    }

    /// This message with one more field appended (builder style).
    pub fn with(mut self, key: impl Into<String>, value: impl fmt::Display) -> Self {
        self.push(key, value);
        self
    }

    /// Appends one field.
    pub fn push(&mut self, key: impl Into<String>, value: impl fmt::Display) {
        self.fields.push((key.into(), value.to_string()));
    }

    /// Whether this message's command is `cmd`.
    pub fn is(&self, cmd: &str) -> bool {
        self.cmd == cmd
    }

    /// The value of the first field named `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The value of the first field named `key`, or [`WireError::MissingField`].
    pub fn require(&self, key: &str) -> Result<&str, WireError> {
        self.get(key).ok_or_else(|| WireError::MissingField {
            cmd: self.cmd.clone(),
            key: key.to_string(),
        })
    }

    /// Parses one line, with or without its final `\n`.
    ///
    /// Runs of spaces between fields are accepted; the first field must be
    /// `cmd=<name>`.
    pub fn parse(line: &str) -> Result<Self, WireError> {
        let body = line.strip_suffix('\n').unwrap_or(line);
        if body.len() + 1 > MAX_LINE_LEN {
            return Err(WireError::LineTooLong {
                limit: MAX_LINE_LEN,
            });
        }
        if body.contains(['\n', '\0']) {
            return Err(WireError::EmbeddedControl);
        }
        let mut tokens = body.split(' ').filter(|t| !t.is_empty());
        let first = tokens.next().ok_or(WireError::EmptyLine)?;
        let cmd = match first.split_once('=') {
            Some(("cmd", "")) => return Err(WireError::EmptyCmd),
            Some(("cmd", name)) => name.to_string(),
            _ => return Err(WireError::MissingCmd(first.to_string())),
        };
        let fields = tokens
            .map(|token| match token.split_once('=') {
                None => Err(WireError::FieldWithoutEquals(token.to_string())),
                Some(("", _)) => Err(WireError::EmptyKey(token.to_string())),
                Some((k, v)) => Ok((k.to_string(), v.to_string())),
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(PmiMessage { cmd, fields })
    }

    /// The message as one wire line, ending in `\n`.
    ///
    /// Fails if some text cannot be carried or the line would exceed
    /// [`MAX_LINE_LEN`].
    pub fn render(&self) -> Result<String, WireError> {
        check_text("command", &self.cmd, false)?;
        if self.cmd.is_empty() {
            return Err(WireError::EmptyCmd);
        }
        for (k, v) in &self.fields {
            if k.is_empty() {
                return Err(WireError::EmptyKey(format!("={v}")));
            }
            check_text("key", k, true)?;
            check_text("value", v, false)?;
        }
        let line = format!("{self}\n");
        if line.len() > MAX_LINE_LEN {
            return Err(WireError::LineTooLong {
                limit: MAX_LINE_LEN,
            });
        }
        Ok(line)
    }
}

impl PmiMessage {
    /// The message in PMI-1's multi-line form (`mcmd=<cmd>`, one
    /// `key=value` per line, `endcmd`), which `spawn` uses: values may
    /// hold spaces and `=`, not newlines; each line fits [`MAX_LINE_LEN`].
    pub fn render_multiline(&self) -> Result<String, WireError> {
        check_text("command", &self.cmd, false)?;
        let mut text = format!("mcmd={}\n", self.cmd);
        for (k, v) in &self.fields {
            if k.is_empty() {
                return Err(WireError::EmptyKey(format!("={v}")));
            }
            check_text("key", k, true)?;
            if let Some(bad) = v.chars().find(|&c| c == '\n' || c == '\0') {
                return Err(WireError::Unencodable {
                    part: "value",
                    text: v.clone(),
                    bad,
                });
            }
            if k.len() + v.len() + 2 > MAX_LINE_LEN {
                return Err(WireError::LineTooLong {
                    limit: MAX_LINE_LEN,
                });
            }
            text.push_str(&format!("{k}={v}\n"));
        }
        text.push_str("endcmd\n");
        Ok(text)
    }
}

/// Shows the message as its wire line without the newline, unchecked (for
/// logs).
impl fmt::Display for PmiMessage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "cmd={}", self.cmd)?;
        for (k, v) in &self.fields {
            write!(f, " {k}={v}")?;
        }
        Ok(())
    }
}

impl std::str::FromStr for PmiMessage {
    type Err = WireError;

    fn from_str(line: &str) -> Result<Self, WireError> {
        PmiMessage::parse(line)
    }
}

/// Rejects text holding a space, newline or NUL (and `=` when `is_key`).
fn check_text(part: &'static str, text: &str, is_key: bool) -> Result<(), WireError> {
    match text
        .chars()
        .find(|&c| c == ' ' || c == '\n' || c == '\0' || (is_key && c == '='))
    {
        Some(bad) => Err(WireError::Unencodable {
            part,
            text: text.to_string(),
            bad,
        }),
        None => Ok(()),
    }
}

/// Incremental line splitter for a byte stream (typically a nonblocking
/// socket): feed it whatever a read returned, take complete lines out.
///
/// Invariant: it never hands out a line longer than its limit. An over-long
/// line is reported once as [`WireError::LineTooLong`] and its bytes, up to
/// and including the next newline, are dropped, so the lines after it are
/// still read correctly and the buffer never holds more than one read beyond
/// the limit.
#[derive(Debug)]
pub struct LineBuffer {
    pending: Vec<u8>,
    limit: usize,
    discarding: bool,
}

impl Default for LineBuffer {
    fn default() -> Self {
        LineBuffer::new()
    }
}

impl LineBuffer {
    /// A buffer accepting lines of up to [`MAX_LINE_LEN`] bytes.
    pub fn new() -> Self {
        LineBuffer::with_limit(MAX_LINE_LEN)
    }

    /// A buffer accepting lines of up to `limit` bytes, newline included.
    pub fn with_limit(limit: usize) -> Self {
        LineBuffer {
            pending: Vec::new(),
            limit: limit.max(1),
            discarding: false,
        }
    }

    /// Appends bytes received from the stream.
    pub fn feed(&mut self, bytes: &[u8]) {
        self.pending.extend_from_slice(bytes);
    }

    /// Does one `read` from `reader` into the buffer and returns what it
    /// returned: `Ok(0)` is end of stream; `WouldBlock` and `Interrupted`
    /// come back as errors for the caller to handle.
    pub fn fill_from(&mut self, reader: &mut impl Read) -> io::Result<usize> {
        let mut chunk = [0u8; 4096];
        let n = reader.read(&mut chunk)?;
        self.feed(&chunk[..n]);
        Ok(n)
    }

    /// Takes the bytes received but not handed out as lines yet (what
    /// follows the last complete line), for a reader that switches to
    /// another framing (PMI-2 after its `init` line).
    pub fn take_pending(&mut self) -> Vec<u8> {
        if std::mem::take(&mut self.discarding) {
            self.pending.clear();
        }
        std::mem::take(&mut self.pending)
    }

    /// Whether bytes of an unfinished line are buffered (useful at end of
    /// stream, where they mean the peer stopped mid-line).
    pub fn has_partial_line(&self) -> bool {
        !self.pending.is_empty() && !self.discarding
    }

    /// The next complete line without its `\n`, `None` when no complete
    /// line is buffered yet, or an error for an over-long or non-UTF-8 line
    /// (which is then dropped).
    pub fn next_line(&mut self) -> Option<Result<String, WireError>> {
        loop {
            let newline = self.pending.iter().position(|&b| b == b'\n');
            if self.discarding {
                match newline {
                    Some(i) => {
                        self.pending.drain(..=i);
                        self.discarding = false;
                        continue;
                    }
                    None => {
                        self.pending.clear();
                        return None;
                    }
                }
            }
            return match newline {
                Some(i) => {
                    let mut line: Vec<u8> = self.pending.drain(..=i).collect();
                    if line.len() > self.limit {
                        return Some(Err(WireError::LineTooLong { limit: self.limit }));
                    }
                    line.pop();
                    Some(String::from_utf8(line).map_err(|_| WireError::NotUtf8))
                }
                // Without its newline the line is already `limit` bytes or
                // more, so with it it would exceed the limit.
                None if self.pending.len() >= self.limit => {
                    self.pending.clear();
                    self.discarding = true;
                    Some(Err(WireError::LineTooLong { limit: self.limit }))
                }
                None => None,
            };
        }
    }

    /// The next complete line, parsed as a message.
    pub fn next_message(&mut self) -> Option<Result<PmiMessage, WireError>> {
        self.next_line()
            .map(|line| line.and_then(|l| PmiMessage::parse(&l)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_put() {
        let m = PmiMessage::parse("cmd=put kvsname=k key=a value=b\n").unwrap();
        assert_eq!(m.cmd, "put");
        assert!(m.is("put"));
        assert_eq!(m.get("kvsname"), Some("k"));
        assert_eq!(m.get("key"), Some("a"));
        assert_eq!(m.get("value"), Some("b"));
        assert_eq!(m.get("nope"), None);
        assert_eq!(m.fields.len(), 3);
    }

    #[test]
    fn value_may_contain_equals() {
        let m = PmiMessage::parse("cmd=put key=a value=x=y==z").unwrap();
        assert_eq!(m.get("value"), Some("x=y==z"));
        let line = m.render().unwrap();
        assert_eq!(line, "cmd=put key=a value=x=y==z\n");
    }

    #[test]
    fn empty_value_is_allowed() {
        let m = PmiMessage::parse("cmd=put key=a value=").unwrap();
        assert_eq!(m.get("value"), Some(""));
        assert_eq!(PmiMessage::parse(&m.render().unwrap()).unwrap(), m);
    }

    #[test]
    fn extra_spaces_are_tolerated() {
        let m = PmiMessage::parse("  cmd=barrier_in   a=1  ").unwrap();
        assert_eq!(m, PmiMessage::new("barrier_in").with("a", 1));
    }

    #[test]
    fn round_trips() {
        let messages = [
            PmiMessage::new("barrier_in"),
            PmiMessage::new("init")
                .with("pmi_version", 1)
                .with("pmi_subversion", 2),
            PmiMessage::new("get_result")
                .with("rc", 0)
                .with("msg", "success")
                .with("value", "(vector,(0,1,4))"),
            PmiMessage::new("put").with("key", "k").with("k", "dup"),
        ];
        for m in messages {
            let line = m.render().unwrap();
            assert!(line.ends_with('\n'));
            assert_eq!(line.matches('\n').count(), 1);
            assert_eq!(line.parse::<PmiMessage>().unwrap(), m);
        }
    }

    #[test]
    fn the_multi_line_form_carries_spaces_and_equals_signs() {
        let m = PmiMessage::new("spawn")
            .with("nprocs", 2)
            .with("arg1", "a b=c");
        assert_eq!(
            m.render_multiline().unwrap(),
            "mcmd=spawn\nnprocs=2\narg1=a b=c\nendcmd\n"
        );
        let bad = PmiMessage::new("spawn").with("arg1", "two\nlines");
        assert!(bad.render_multiline().is_err());
        let long = PmiMessage::new("spawn").with("arg1", "x".repeat(MAX_LINE_LEN));
        assert!(long.render_multiline().is_err());
    }

    #[test]
    fn renders_in_order() {
        let m = PmiMessage::new("maxes")
            .with("kvsname_max", 256)
            .with("keylen_max", 64)
            .with("vallen_max", 1024);
        assert_eq!(
            m.render().unwrap(),
            "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024\n"
        );
        assert_eq!(
            m.to_string(),
            "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024"
        );
    }

    #[test]
    fn first_duplicate_wins_on_lookup() {
        let m = PmiMessage::parse("cmd=x a=1 a=2").unwrap();
        assert_eq!(m.get("a"), Some("1"));
    }

    #[test]
    fn require_names_the_missing_field() {
        let m = PmiMessage::parse("cmd=get kvsname=k").unwrap();
        assert_eq!(m.require("kvsname"), Ok("k"));
        let err = m.require("key").unwrap_err();
        assert_eq!(
            err,
            WireError::MissingField {
                cmd: "get".into(),
                key: "key".into()
            }
        );
        assert_eq!(err.to_string(), "PMI message `get` lacks the field `key`");
    }

    #[test]
    fn malformed_lines_are_rejected() {
        assert_eq!(PmiMessage::parse(""), Err(WireError::EmptyLine));
        assert_eq!(PmiMessage::parse("   \n"), Err(WireError::EmptyLine));
        assert_eq!(
            PmiMessage::parse("put key=a"),
            Err(WireError::MissingCmd("put".into()))
        );
        assert_eq!(
            PmiMessage::parse("key=a cmd=put"),
            Err(WireError::MissingCmd("key=a".into()))
        );
        assert_eq!(PmiMessage::parse("cmd= key=a"), Err(WireError::EmptyCmd));
        assert_eq!(
            PmiMessage::parse("cmd=put key"),
            Err(WireError::FieldWithoutEquals("key".into()))
        );
        assert_eq!(
            PmiMessage::parse("cmd=put =v"),
            Err(WireError::EmptyKey("=v".into()))
        );
        assert_eq!(
            PmiMessage::parse("cmd=put\nkey=a"),
            Err(WireError::EmbeddedControl)
        );
        assert_eq!(
            PmiMessage::parse("cmd=put key=a\0"),
            Err(WireError::EmbeddedControl)
        );
    }

    #[test]
    fn unencodable_messages_do_not_render() {
        let bad_value = PmiMessage::new("put").with("value", "a b");
        assert!(matches!(
            bad_value.render(),
            Err(WireError::Unencodable {
                part: "value",
                bad: ' ',
                ..
            })
        ));
        let bad_key = PmiMessage::new("put").with("a=b", "c");
        assert!(matches!(
            bad_key.render(),
            Err(WireError::Unencodable {
                part: "key",
                bad: '=',
                ..
            })
        ));
        let newline = PmiMessage::new("put").with("k", "a\n");
        assert!(newline.render().is_err());
        assert_eq!(PmiMessage::new("").render(), Err(WireError::EmptyCmd));
        assert!(PmiMessage::new("put").with("", "v").render().is_err());
    }

    #[test]
    fn line_length_limit_counts_the_newline() {
        // "cmd=put value=" is 14 bytes; the newline makes 15.
        let fits = PmiMessage::new("put").with("value", "x".repeat(MAX_LINE_LEN - 15));
        let line = fits.render().unwrap();
        assert_eq!(line.len(), MAX_LINE_LEN);
        assert_eq!(PmiMessage::parse(&line).unwrap(), fits);

        let too_long = PmiMessage::new("put").with("value", "x".repeat(MAX_LINE_LEN - 14));
        let err = too_long.render().unwrap_err();
        assert_eq!(
            err,
            WireError::LineTooLong {
                limit: MAX_LINE_LEN
            }
        );
        assert_eq!(err.to_string(), "PMI line longer than 1024 bytes");
        assert!(PmiMessage::parse(&too_long.to_string()).is_err());
    }

    #[test]
    fn line_buffer_joins_partial_lines() {
        let mut buf = LineBuffer::new();
        buf.feed(b"cmd=put key=a");
        assert!(buf.next_line().is_none());
        assert!(buf.has_partial_line());
        buf.feed(b" value=b");
        assert!(buf.next_line().is_none());
        buf.feed(b"\n");
        let m = buf.next_message().unwrap().unwrap();
        assert_eq!(m.get("value"), Some("b"));
        assert!(buf.next_line().is_none());
        assert!(!buf.has_partial_line());
    }

    #[test]
    fn line_buffer_splits_several_lines_from_one_read() {
        let mut buf = LineBuffer::new();
        buf.feed(b"cmd=barrier_out\ncmd=get_result rc=0 value=v\ncmd=fin");
        assert_eq!(buf.next_line().unwrap().unwrap(), "cmd=barrier_out");
        let m = buf.next_message().unwrap().unwrap();
        assert_eq!(m.cmd, "get_result");
        assert!(buf.next_line().is_none());
        buf.feed(b"alize_ack\n");
        assert_eq!(buf.next_line().unwrap().unwrap(), "cmd=finalize_ack");
        assert!(buf.next_line().is_none());
    }

    #[test]
    fn line_buffer_rejects_an_over_long_line_and_recovers() {
        let mut buf = LineBuffer::with_limit(16);
        buf.feed(b"cmd=ok\n");
        buf.feed(&[b'x'; 20]);
        assert_eq!(buf.next_line().unwrap().unwrap(), "cmd=ok");
        assert_eq!(
            buf.next_line().unwrap(),
            Err(WireError::LineTooLong { limit: 16 })
        );
        // The rest of the long line is dropped up to its newline.
        buf.feed(&[b'y'; 30]);
        assert!(buf.next_line().is_none());
        assert!(!buf.has_partial_line());
        buf.feed(b"yyy\ncmd=next\n");
        assert_eq!(buf.next_line().unwrap().unwrap(), "cmd=next");
        assert!(buf.next_line().is_none());
    }

    #[test]
    fn line_buffer_limit_is_exact() {
        let mut buf = LineBuffer::with_limit(8);
        buf.feed(b"cmd=abc\n"); // 8 bytes with the newline: fits
        assert_eq!(buf.next_line().unwrap().unwrap(), "cmd=abc");
        buf.feed(b"cmd=abcd\n"); // 9 bytes: too long, in one read
        assert_eq!(
            buf.next_line().unwrap(),
            Err(WireError::LineTooLong { limit: 8 })
        );
        assert!(buf.next_line().is_none());
        buf.feed(b"cmd=abcd"); // 8 bytes and no newline yet: already too long
        assert!(buf.next_line().unwrap().is_err());
        buf.feed(b"\ncmd=z\n");
        assert_eq!(buf.next_line().unwrap().unwrap(), "cmd=z");
    }

    #[test]
    fn line_buffer_reports_non_utf8() {
        let mut buf = LineBuffer::new();
        buf.feed(b"cmd=\xff\ncmd=ok\n");
        assert_eq!(buf.next_line().unwrap(), Err(WireError::NotUtf8));
        assert_eq!(buf.next_line().unwrap().unwrap(), "cmd=ok");
    }

    #[test]
    fn line_buffer_fills_from_a_reader() {
        let mut buf = LineBuffer::new();
        let mut src: &[u8] = b"cmd=a\ncmd=b\n";
        assert_eq!(buf.fill_from(&mut src).unwrap(), 12);
        assert_eq!(buf.fill_from(&mut src).unwrap(), 0);
        assert_eq!(buf.next_message().unwrap().unwrap().cmd, "a");
        assert_eq!(buf.next_message().unwrap().unwrap().cmd, "b");
    }
}
