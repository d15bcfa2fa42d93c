//! The receive lane: a blocking receive (`MPI_Recv`) without a request.
//!
//! A blocking receive is the latency-critical half of a ping-pong. Through
//! a request it costs a handle-table insert and remove, a posted-queue entry
//! and the request's status bookkeeping, on the path between the message's
//! arrival and the program's next send. The lane instead parks the receive
//! in the engine (one at a time): an eager message it accepts is copied
//! from the transport's cell straight into the receive buffer and the
//! status is kept in the lane.
//!
//! Matching order is kept: the lane is armed only when no unexpected
//! message matches it (else the receive takes the request path), and an
//! arriving frame goes first to the posted receives (which this thread
//! posted before), then to the lane. A message the lane does not take
//! itself (a rendezvous) goes to the unexpected queue as usual and turns
//! the lane into [`LaneOutcome::General`]: the caller then receives it
//! through a request, where it is the first match.
use super::engine::{Engine, Incoming, IncomingBody};
use super::request::receive_status;
use super::user_buffer::UserBuffer;
use crate::core::error::MpiError;
use crate::core::matching::{Envelope, Pattern};
use crate::mpi_abi::types::MPI_Status;
use crate::transport::endpoints::Endpoints;
use crate::transport::ProcessId;

/// A blocking receive parked in the engine.
pub(super) struct Lane {
    pattern: Pattern,
    buf: UserBuffer,
    state: LaneState,
}

enum LaneState {
    Waiting,
    Received(MPI_Status),
    /// A message the lane accepts went to the unexpected queue.
    Spilled,
    /// The process it waits on failed (see `engine::failure`).
    Failed(MpiError),
}

impl Lane {
    pub(super) fn is_waiting(&self) -> bool {
        matches!(self.state, LaneState::Waiting)
    }

    pub(super) fn pattern(&self) -> &Pattern {
        &self.pattern
    }

    /// Ends the wait with `error`.
    pub(super) fn fail(&mut self, error: MpiError) {
        self.state = LaneState::Failed(error);
    }
}

/// How [`Engine::arm_lane`] went.
pub enum LaneStart {
    /// An unexpected eager message was there: received, no wait.
    Received(MPI_Status),
    /// Parked: wait for [`Engine::lane_outcome`].
    Armed,
    /// Take the request path with this buffer (the lane is in use by
    /// another thread, or the first match is not an eager message).
    General(UserBuffer),
}

/// A finished lane.
pub enum LaneOutcome {
    Received(MPI_Status),
    /// Receive through a request (the message is the first unexpected
    /// match).
    General(UserBuffer),
    /// The receive failed (its source process failed).
    Failed(MpiError),
}

/// The status of an eager message of `len` bytes received into `buf`
/// (see [`UserBuffer::receive_outcome`]).
fn eager_status(env: &Envelope, len: usize, buf: &UserBuffer) -> MPI_Status {
    let (bytes, error) = buf.receive_outcome(len);
    receive_status(env.source, env.tag, bytes, error)
}

/// Copies an eager message into `buf` (as much as fits).
fn unpack_eager(buf: &UserBuffer, data: &[u8]) {
    let n = data.len().min(buf.len());
    buf.unpack(0, &data[..n]);
}

impl Engine {
    /// Starts a blocking receive of `pattern` into `buf` without a request.
    pub fn arm_lane(&mut self, ep: &mut Endpoints, buf: UserBuffer, pattern: Pattern) -> LaneStart {
        if self.lane.is_some() {
            return LaneStart::General(buf);
        }
        let eager_first = match self.matcher.peek(&pattern) {
            None => {
                self.lane = Some(Lane {
                    pattern,
                    buf,
                    state: LaneState::Waiting,
                });
                return LaneStart::Armed;
            }
            Some((_, m)) => matches!(m.body, IncomingBody::Eager { .. }),
        };
        if !eager_first {
            return LaneStart::General(buf);
        }
        let Some((
            env,
            Incoming {
                from,
                len,
                body: IncomingBody::Eager { data, sync_request },
            },
        )) = self.matcher.take_unexpected(&pattern)
        else {
            unreachable!("the first match was just seen to be eager");
        };
        unpack_eager(&buf, &data);
        if let Some(sender) = sync_request {
            self.acknowledge_sync(from, sender);
            self.flush_replies(ep);
        }
        LaneStart::Received(eager_status(&env, len, &buf))
    }

    /// The lane's outcome once it has one (the lane is then free again);
    /// `None` while it waits.
    #[inline]
    pub fn lane_outcome(&mut self) -> Option<LaneOutcome> {
        let lane = self.lane.as_ref()?;
        if matches!(lane.state, LaneState::Waiting) {
            return None;
        }
        let lane = self.lane.take()?;
        Some(match lane.state {
            LaneState::Received(status) => LaneOutcome::Received(status),
            LaneState::Failed(error) => LaneOutcome::Failed(error),
            LaneState::Spilled | LaneState::Waiting => LaneOutcome::General(lane.buf),
        })
    }

    /// Whether the lane holds a received message (its outcome is ready).
    #[inline(always)]
    pub(super) fn lane_received(&self) -> bool {
        matches!(
            self.lane,
            Some(Lane {
                state: LaneState::Received(_),
                ..
            })
        )
    }

    /// Gives up a waiting lane (its call failed); a message it received is
    /// lost with it, as with a failed wait.
    pub fn disarm_lane(&mut self) {
        self.lane = None;
    }

    /// An arriving eager message no posted receive took: true if the lane
    /// took it (copied into its buffer, its synchronous sender told).
    #[inline]
    pub(super) fn offer_to_lane(
        &mut self,
        from: ProcessId,
        env: &Envelope,
        sync_request: Option<u64>,
        payload: &[u8],
    ) -> bool {
        let Some(lane) = &mut self.lane else {
            return false;
        };
        if !matches!(lane.state, LaneState::Waiting) || !lane.pattern.accepts(env) {
            return false;
        }
        unpack_eager(&lane.buf, payload);
        lane.state = LaneState::Received(eager_status(env, payload.len(), &lane.buf));
        if let Some(sender) = sync_request {
            self.acknowledge_sync(from, sender);
        }
        self.eager_delivered(from, payload.len());
        true
    }

    /// A message goes to the unexpected queue: a waiting lane that accepts
    /// it must receive it through a request.
    pub(super) fn spill_lane(&mut self, env: &Envelope) {
        if let Some(lane) = &mut self.lane {
            if matches!(lane.state, LaneState::Waiting) && lane.pattern.accepts(env) {
                lane.state = LaneState::Spilled;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::p2p::engine::testing::*;
    use crate::core::p2p::frame::{FrameHeader, FrameKind, HEADER_LEN};
    use crate::mpi_abi::constants::MPI_ERR_TRUNCATE;
    use crate::transport::Sink;

    fn received(outcome: Option<LaneOutcome>) -> MPI_Status {
        match outcome {
            Some(LaneOutcome::Received(status)) => status,
            Some(LaneOutcome::General(_)) => panic!("lane spilled"),
            Some(LaneOutcome::Failed(e)) => panic!("lane failed: {e:?}"),
            None => panic!("lane still waiting"),
        }
    }

    #[test]
    fn an_armed_lane_receives_an_eager_message_without_a_request() {
        let (mut engine, mut ep) = engine();
        let mut out = [0u8; 16];
        let start = engine.arm_lane(&mut ep, recv_buf(&mut out), pattern(Some(4)));
        assert!(matches!(start, LaneStart::Armed));
        assert!(engine.lane_outcome().is_none());
        let requests_before = engine.requests.len();
        engine.isend(&mut ep, send_args(b"lane!", 0, 4));
        settle_down(&mut engine, &mut ep);
        let status = received(engine.lane_outcome());
        assert_eq!(status.byte_count(), 5);
        assert_eq!(status.MPI_TAG, 4);
        assert_eq!(&out[..5], b"lane!");
        // Only the send's request was made (and it is done).
        assert_eq!(engine.requests.len(), requests_before + 1);
        assert!(engine.lane.is_none(), "the outcome frees the lane");
    }

    #[test]
    fn a_posted_receive_matches_before_the_lane_and_an_unexpected_one_is_taken_at_once() {
        let (mut engine, mut ep) = engine();
        let mut first = [0u8; 8];
        let id = engine.irecv(&mut ep, recv_buf(&mut first), pattern(None));
        let mut second = [0u8; 8];
        let start = engine.arm_lane(&mut ep, recv_buf(&mut second), pattern(None));
        assert!(matches!(start, LaneStart::Armed));
        engine.isend(&mut ep, send_args(b"one", 0, 1));
        engine.isend(&mut ep, send_args(b"two", 0, 2));
        engine.isend(&mut ep, send_args(b"three", 0, 3));
        settle_down(&mut engine, &mut ep);
        assert!(engine.is_complete(id).unwrap());
        assert_eq!(&first[..3], b"one");
        assert_eq!(received(engine.lane_outcome()).MPI_TAG, 2);
        assert_eq!(&second[..3], b"two");
        // The third is unexpected now: a new lane takes it at once.
        let mut third = [0u8; 8];
        match engine.arm_lane(&mut ep, recv_buf(&mut third), pattern(None)) {
            LaneStart::Received(status) => assert_eq!(status.MPI_TAG, 3),
            _ => panic!("the unexpected message was not received at once"),
        }
        assert_eq!(&third[..5], b"three");
    }

    #[test]
    fn a_too_long_message_is_truncated_and_a_rendezvous_spills_to_the_request_path() {
        let (mut engine, mut ep) = engine();
        let mut small = [0u8; 2];
        engine.arm_lane(&mut ep, recv_buf(&mut small), pattern(Some(1)));
        engine.isend(&mut ep, send_args(b"abcdef", 0, 1));
        settle_down(&mut engine, &mut ep);
        let status = received(engine.lane_outcome());
        assert_eq!(status.MPI_ERROR, MPI_ERR_TRUNCATE);
        assert_eq!(status.byte_count(), 2);
        assert_eq!(&small, b"ab");

        // A rendezvous request (sent to oneself, messages always go eagerly,
        // so the frame is made here) goes to the unexpected queue.
        let mut out = [0u8; 8];
        let start = engine.arm_lane(&mut ep, recv_buf(&mut out), pattern(Some(9)));
        assert!(matches!(start, LaneStart::Armed));
        let mut frame = vec![0u8; HEADER_LEN];
        FrameHeader {
            kind: FrameKind::RequestToSend,
            flags: 0,
            tag: 9,
            source: 0,
            context_id: CONTEXT,
            total_len: 1 << 20,
            id_a: 77,
            id_b: 0,
        }
        .encode(&mut frame);
        Sink::deliver(&mut engine, ME, &frame);
        let Some(LaneOutcome::General(buf)) = engine.lane_outcome() else {
            panic!("a rendezvous must take the request path");
        };
        assert_eq!(buf.len(), 8, "the lane hands its buffer back");
        assert!(engine.iprobe(&pattern(Some(9))).is_some());
    }
}
