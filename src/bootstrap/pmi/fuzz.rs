//! Fuzz targets (proptest) of the PMI wire formats and client: arbitrary
//! lines, PMI-2 bodies and byte streams never panic, what parses renders
//! back to itself, a byte stream splits into the same lines (or PMI-2
//! messages) however it is cut, and the client's handshake, PMI-1 or PMI-2,
//! survives any server answers. `make check` runs
//! each with proptest's default case count; `make fuzz` with many more
//! (`PROPTEST_CASES`). Failures found are kept in proptest-regressions/.
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;

use proptest::prelude::*;

use super::client::PmiClient;
use super::wire::{LineBuffer, PmiMessage};
use super::wire2::{self, FrameBuffer};
use crate::config::PmiChoice;

/// Text that the wire format can carry as a value.
fn value() -> impl Strategy<Value = String> {
    "[A-Za-z0-9_./:,;=+-]{0,24}"
}

fn message() -> impl Strategy<Value = PmiMessage> {
    (
        "[a-z_]{1,16}",
        prop::collection::vec(("[A-Za-z0-9_]{1,12}", value()), 0..8),
    )
        .prop_map(|(cmd, fields)| PmiMessage { cmd, fields })
}

/// Lines as a server or a confused peer might send them: mostly
/// well-formed, some not at all.
fn line() -> impl Strategy<Value = String> {
    prop_oneof![
        message().prop_map(|m| m.to_string()),
        "[ -~]{0,60}",
        "cmd=[a-z_]{0,8}( [a-z]{0,4}(=[ -~]{0,6})?){0,4}",
    ]
}

/// The lines `LineBuffer` gives for `bytes` fed in pieces cut at `cuts`.
fn lines_of(bytes: &[u8], cuts: &[usize], limit: usize) -> Vec<String> {
    let mut buffer = LineBuffer::with_limit(limit);
    let mut out = Vec::new();
    let mut start = 0;
    let mut ends: Vec<usize> = cuts.iter().map(|&c| c % (bytes.len() + 1)).collect();
    ends.sort_unstable();
    ends.push(bytes.len());
    for end in ends {
        buffer.feed(&bytes[start..end.max(start)]);
        start = end.max(start);
        while let Some(line) = buffer.next_line() {
            out.push(match line {
                Ok(l) => l,
                Err(e) => format!("error: {e}"),
            });
        }
    }
    out
}

/// The answers a good server gives to the handshake, one of them replaced
/// (or cut short, or with a failure notice in front).
fn handshake_answers() -> impl Strategy<Value = Vec<String>> {
    let good: Vec<String> = [
        "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0",
        "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024",
        "cmd=appnum appnum=0",
        "cmd=my_kvsname kvsname=kvs_1",
        "cmd=universe_size size=2",
    ]
    .map(String::from)
    .to_vec();
    (0usize..6, line(), any::<bool>()).prop_map(move |(at, replacement, notice)| {
        let mut answers = good.clone();
        if at < answers.len() {
            answers[at] = if notice {
                format!("cmd=oxmpi_proc_failed rank=1\n{}", answers[at])
            } else {
                replacement
            };
        }
        answers
    })
}

/// Messages PMI-2 can carry: values with `;`, `=`, spaces and newlines.
fn message_v2() -> impl Strategy<Value = PmiMessage> {
    (
        "[a-z-]{1,16}",
        prop::collection::vec(("[A-Za-z0-9_-]{1,12}", "[ -~\n]{0,24}"), 0..8),
    )
        .prop_map(|(cmd, fields)| PmiMessage { cmd, fields })
}

/// What `FrameBuffer` hands out for `bytes` fed in pieces cut at `cuts`.
fn frames_of(bytes: &[u8], cuts: &[usize], limit: usize) -> Vec<Result<Vec<u8>, String>> {
    let mut buffer = FrameBuffer::with_limit(limit);
    let mut out = Vec::new();
    let mut start = 0;
    let mut ends: Vec<usize> = cuts.iter().map(|&c| c % (bytes.len() + 1)).collect();
    ends.sort_unstable();
    ends.push(bytes.len());
    for end in ends {
        buffer.feed(&bytes[start..end.max(start)]);
        start = end.max(start);
        while let Some(frame) = buffer.next_frame() {
            out.push(frame.map_err(|e| e.to_string()));
        }
    }
    out
}

/// A PMI-2 server's answers to the client's handshake: the init line, then
/// PMI-2 messages, any of them possibly replaced by junk.
fn handshake_answers_v2() -> impl Strategy<Value = Vec<Vec<u8>>> {
    let good: Vec<Vec<u8>> = vec![
        b"cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0\n".to_vec(),
        b"    96cmd=fullinit-response;pmi-version=2;pmi-subversion=0;rank=0;size=2;appnum=0;debugged=FALSE;rc=0;".to_vec(),
        b"    36cmd=job-getid-response;jobid=j;rc=0;".to_vec(),
        b"    46cmd=info-getjobattr-response;found=FALSE;rc=0;".to_vec(),
    ];
    (
        0usize..5,
        prop_oneof![
            prop::collection::vec(any::<u8>(), 0..40),
            message_v2().prop_map(|m| wire2::encode(&m).unwrap_or_default()),
            "[ 0-9]{6}cmd=[a-z;=-]{0,20}".prop_map(String::into_bytes),
        ],
    )
        .prop_map(move |(at, junk)| {
            let mut answers = good.clone();
            if at < answers.len() {
                answers[at] = junk;
            }
            answers
        })
}

proptest! {
    #[test]
    fn fuzz_pmi2_wire_messages_encode_and_parse_back(
        m in message_v2(),
        cuts in prop::collection::vec(any::<usize>(), 0..6),
    ) {
        let bytes = wire2::encode(&m).expect("a message of carriable text encodes");
        let frames = frames_of(&bytes, &cuts, wire2::MAX_BODY_LEN);
        prop_assert_eq!(frames.len(), 1);
        let body = frames[0].clone().expect("one whole frame");
        prop_assert_eq!(wire2::parse_body(&body).expect("parses"), m);
    }

    #[test]
    fn fuzz_pmi2_wire_any_body_parses_or_fails_cleanly(
        body in prop::collection::vec(prop_oneof![Just(b';'), Just(b'='), any::<u8>(), Just(b'a')], 0..80),
    ) {
        if let Ok(m) = wire2::parse_body(&body) {
            let bytes = wire2::encode(&m).expect("what parsed encodes");
            prop_assert_eq!(wire2::parse_body(&bytes[wire2::LENGTH_DIGITS..]).ok(), Some(m));
        }
        if let Ok(m) = wire2::parse_body_lenient(&body) {
            prop_assert!(!m.cmd.is_empty());
        }
    }

    #[test]
    fn fuzz_pmi2_wire_frames_do_not_depend_on_how_the_stream_is_cut(
        bytes in prop::collection::vec(prop_oneof![Just(b' '), Just(b'1'), Just(b'0'), any::<u8>()], 0..300),
        cuts in prop::collection::vec(any::<usize>(), 0..6),
        limit in 1usize..64,
    ) {
        let whole = frames_of(&bytes, &[], limit);
        prop_assert_eq!(frames_of(&bytes, &cuts, limit), whole.clone());
        for frame in whole.iter().flatten() {
            prop_assert!(frame.len() <= limit, "frame of {} bytes past the limit {}", frame.len(), limit);
        }
    }

    #[test]
    fn fuzz_pmi2_client_handshake_survives_any_server(answers in handshake_answers_v2()) {
        let (ours, theirs) = UnixStream::pair().expect("socket pair");
        let server = std::thread::spawn(move || {
            let mut socket = theirs;
            let mut byte = [0u8; 1];
            for answer in answers {
                // Wait for a request (its first byte is enough), then answer.
                if std::io::Read::read(&mut socket, &mut byte).unwrap_or(0) == 0 {
                    return;
                }
                if socket.write_all(&answer).is_err() {
                    return;
                }
            }
        });
        let client = PmiClient::connect_for_test_with(File::from(OwnedFd::from(ours)), PmiChoice::V2);
        drop(client);
        server.join().expect("server thread");
    }

    #[test]
    fn fuzz_pmi_wire_any_line_parses_or_fails_cleanly(text in "\\PC{0,80}") {
        if let Ok(m) = PmiMessage::parse(&text) {
            if let Ok(rendered) = m.render() {
                prop_assert_eq!(PmiMessage::parse(&rendered).ok(), Some(m));
            }
        }
    }

    #[test]
    fn fuzz_pmi_wire_messages_render_and_parse_back(m in message()) {
        let line = m.render().expect("a message of carriable text renders");
        prop_assert!(line.ends_with('\n'));
        prop_assert_eq!(PmiMessage::parse(&line).expect("parses"), m);
    }

    #[test]
    fn fuzz_pmi_wire_lines_do_not_depend_on_how_the_stream_is_cut(
        bytes in prop::collection::vec(prop_oneof![Just(b'\n'), any::<u8>(), Just(b'a')], 0..300),
        cuts in prop::collection::vec(any::<usize>(), 0..6),
        limit in 1usize..64,
    ) {
        let whole = lines_of(&bytes, &[], limit);
        prop_assert_eq!(lines_of(&bytes, &cuts, limit), whole.clone());
        for line in whole.iter().filter(|l| !l.starts_with("error: ")) {
            prop_assert!(line.len() < limit, "line of {} bytes past the limit {}", line.len(), limit);
        }
    }

    #[test]
    fn fuzz_pmi_client_handshake_survives_any_server(
        answers in prop_oneof![prop::collection::vec(line(), 0..8), handshake_answers()],
    ) {
        let (ours, theirs) = UnixStream::pair().expect("socket pair");
        let server = std::thread::spawn(move || {
            let mut reader = BufReader::new(theirs);
            for answer in answers {
                let mut request = String::new();
                if reader.read_line(&mut request).unwrap_or(0) == 0 {
                    return;
                }
                if writeln!(reader.get_mut(), "{answer}").is_err() {
                    return;
                }
            }
            // Then the server goes away.
        });
        // Whatever came back, the handshake ends with a client or an error.
        let client = PmiClient::connect_for_test(File::from(OwnedFd::from(ours)));
        if let Ok(mut c) = client {
            let _ = c.poll_failures();
        }
        server.join().expect("server thread");
    }
}
