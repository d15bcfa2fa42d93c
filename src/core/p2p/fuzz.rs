//! Fuzz targets (proptest) of the frame header and of the engine's frame
//! handling: any bytes decode to a header or to nothing, headers round
//! trip, and any sequence of frames (right or wrong kinds, request ids
//! real or not, lengths and offsets past any buffer) delivered to an engine
//! with receives and sends in flight never panics and never writes outside
//! a receive buffer. Frames that would make the engine copy between
//! processes (single-copy offers, shared-copy requests: a pid and an
//! address) are left out: only the job's own processes can send frames.
use proptest::prelude::*;

use super::engine::testing::*;
use super::frame::{FrameHeader, FrameKind, HEADER_LEN};
use crate::core::matching::{Pattern, ANY};
use crate::mpi_abi::types::MPI_Request;
use crate::transport::Sink;

fn kind() -> impl Strategy<Value = FrameKind> {
    prop_oneof![
        Just(FrameKind::Eager),
        Just(FrameKind::RequestToSend),
        Just(FrameKind::ClearToSend),
        Just(FrameKind::Data),
        Just(FrameKind::Finished),
        Just(FrameKind::SyncAck),
        Just(FrameKind::ShareDone),
        Just(FrameKind::Credit),
    ]
}

fn header() -> impl Strategy<Value = FrameHeader> {
    (
        kind(),
        any::<u8>(),
        any::<i32>(),
        any::<i32>(),
        any::<u64>(),
        any::<u64>(),
        any::<u64>(),
        any::<u64>(),
    )
        .prop_map(
            |(kind, flags, tag, source, context_id, total_len, id_a, id_b)| FrameHeader {
                kind,
                flags,
                tag,
                source,
                context_id,
                total_len,
                id_a,
                id_b,
            },
        )
}

/// A frame aimed at the engine of the test: its context or another, small
/// tags and sources, request ids that are real (an index into the test's
/// requests) or not, lengths and offsets around the buffers' size.
#[derive(Debug, Clone)]
struct Aimed {
    kind: FrameKind,
    sync: bool,
    own_context: bool,
    tag: i32,
    source: i32,
    total_len: u64,
    id_a: Result<usize, u64>,
    id_b: Result<usize, u64>,
    payload: Vec<u8>,
    from_peer: bool,
}

fn aimed() -> impl Strategy<Value = Aimed> {
    let id = || prop_oneof![(0usize..8).prop_map(Ok), any::<u64>().prop_map(Err)];
    (
        kind(),
        any::<bool>(),
        any::<bool>(),
        -1i32..4,
        -1i32..3,
        prop_oneof![0u64..80, any::<u64>()],
        id(),
        id(),
        prop::collection::vec(any::<u8>(), 0..15),
        any::<bool>(),
    )
        .prop_map(
            |(kind, sync, own_context, tag, source, total_len, id_a, id_b, payload, from_peer)| {
                Aimed {
                    kind,
                    sync,
                    own_context,
                    tag,
                    source,
                    total_len,
                    id_a,
                    id_b,
                    payload,
                    from_peer,
                }
            },
        )
}

const GUARD: usize = 32;
const ROOM: usize = 16;

proptest! {
    #[test]
    fn fuzz_frame_header_any_bytes_decode_or_not(bytes in prop::collection::vec(any::<u8>(), 0..100)) {
        if let Some(h) = FrameHeader::decode(&bytes) {
            prop_assert!(bytes.len() >= HEADER_LEN);
            let mut again = [0u8; HEADER_LEN];
            h.encode(&mut again);
            prop_assert_eq!(FrameHeader::decode(&again), Some(h));
        } else {
            prop_assert!(bytes.len() < HEADER_LEN || !(1..=9).contains(&bytes[0]));
        }
    }

    #[test]
    fn fuzz_frame_header_round_trips(h in header()) {
        let mut bytes = [0u8; HEADER_LEN];
        h.encode(&mut bytes);
        prop_assert_eq!(FrameHeader::decode(&bytes), Some(h));
    }

    #[test]
    fn fuzz_engine_any_frames_stay_inside_the_buffers(frames in prop::collection::vec(aimed(), 0..40)) {
        let (mut engine, mut ep) = engine();
        // Four receives into guarded memory, a send to this process and
        // one to a peer that is never reachable, a synchronous one too.
        let mut memory = vec![0xA5u8; 4 * (ROOM + 2 * GUARD)];
        let mut ids: Vec<MPI_Request> = Vec::new();
        for (i, chunk) in memory.chunks_mut(ROOM + 2 * GUARD).enumerate() {
            let pattern = Pattern {
                context_id: CONTEXT,
                source: if i % 2 == 0 { ANY } else { 0 },
                tag: if i < 2 { ANY } else { i as i32 },
            };
            ids.push(engine.irecv(&mut ep, recv_buf(&mut chunk[GUARD..GUARD + ROOM]), pattern));
        }
        let data = [7u8; 40];
        ids.push(engine.isend(&mut ep, send_args(&data[..9], UNREACHABLE, 1)));
        let mut sync = send_args(&data[..3], UNREACHABLE, 2);
        sync.synchronous = true;
        ids.push(engine.isend(&mut ep, sync));
        for f in &frames {
            let id = |choice: &Result<usize, u64>| match *choice {
                Ok(i) => ids.get(i).map_or(u64::MAX, |&r| r as u32 as u64),
                Err(raw) => raw,
            };
            let header = FrameHeader {
                kind: f.kind,
                flags: u8::from(f.sync),
                tag: f.tag,
                source: f.source,
                context_id: if f.own_context { CONTEXT } else { CONTEXT + 1 },
                total_len: f.total_len,
                id_a: id(&f.id_a),
                id_b: id(&f.id_b),
            };
            let mut frame = vec![0u8; HEADER_LEN + f.payload.len()];
            header.encode(&mut frame);
            frame[HEADER_LEN..].copy_from_slice(&f.payload);
            Sink::deliver(&mut engine, if f.from_peer { UNREACHABLE } else { ME }, &frame);
            settle_down(&mut engine, &mut ep);
        }
        for chunk in memory.chunks(ROOM + 2 * GUARD) {
            prop_assert!(chunk[..GUARD].iter().all(|&b| b == 0xA5), "written before a buffer");
            prop_assert!(chunk[GUARD + ROOM..].iter().all(|&b| b == 0xA5), "written after a buffer");
        }
    }
}
