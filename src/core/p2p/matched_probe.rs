//! Matched probes: `MPI_Improbe` takes a message out of the unexpected
//! queue into the request table, where its handle (an `MPI_Message`) keeps
//! it until `MPI_Imrecv` delivers it to a receive. Out of the queue, no
//! other receive can match it, whatever its size (a rendezvous message is
//! only its RTS until then).
use super::engine::{Endpoints, Engine};
use super::request::{receive_status, Operation, Probed, RecvOp, Request};
use super::user_buffer::UserBuffer;
use crate::core::error::{MpiError, MpiResult};
use crate::core::matching::Pattern;
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::{MPI_Message, MPI_Request, MPI_Status};

impl Engine {
    /// `MPI_Improbe`: takes the oldest unexpected message `pattern` accepts
    /// out of the matching queue (no receive can match it any more) and
    /// returns its `MPI_Message` handle and status.
    pub fn improbe(&mut self, pattern: &Pattern) -> Option<(MPI_Message, MPI_Status)> {
        let (env, incoming) = self.matcher.take_unexpected(pattern)?;
        let status = receive_status(env.source, env.tag, incoming.len, MPI_SUCCESS);
        let message = self
            .requests
            .insert(Request::new(Operation::Message(Box::new(Probed {
                env,
                incoming,
            }))));
        Some((message, status))
    }

    /// The context ids of the messages with `tag` that wait in the
    /// unexpected queue.
    pub fn unexpected_contexts(&self, tag: i32) -> Vec<u64> {
        self.matcher.unexpected_contexts(tag)
    }

    /// `MPI_Imrecv`: receives the message `MPI_Mprobe` took into `buf`.
    pub fn imrecv(
        &mut self,
        ep: &mut Endpoints,
        message: MPI_Message,
        buf: UserBuffer,
    ) -> MpiResult<MPI_Request> {
        if !matches!(
            self.requests.get(message).map(|r| &r.op),
            Some(Operation::Message(_))
        ) {
            return Err(MpiError::new(
                MPI_ERR_REQUEST,
                format!(
                    "handle {:#010x} is not a message from MPI_Mprobe or MPI_Improbe",
                    message as u32
                ),
            ));
        }
        let Some(Request {
            op: Operation::Message(probed),
            ..
        }) = self.remove_request(message)
        else {
            unreachable!("checked above");
        };
        let Probed { env, incoming } = *probed;
        let pattern = Pattern {
            context_id: env.context_id,
            source: env.source,
            tag: env.tag,
        };
        let id = self
            .requests
            .insert(Request::new(Operation::Recv(RecvOp::new(buf, pattern))));
        self.deliver(id, env, incoming, None);
        self.flush_replies(ep);
        Ok(id)
    }
}

#[cfg(test)]
mod tests {
    use super::super::engine::testing::*;
    use super::super::engine::RequestState;
    use super::*;

    #[test]
    fn a_probed_message_is_matched_only_by_its_mrecv() {
        let (mut e, mut ep) = engine();
        let first = [1u8; 4];
        let second = [2u8; 6];
        e.isend(&mut ep, send_args(&first, ME, 1));
        e.isend(&mut ep, send_args(&second, ME, 1));
        settle_down(&mut e, &mut ep);
        let (message, status) = e.improbe(&pattern(None)).expect("a message is there");
        assert_eq!(status.byte_count(), 4);
        let mut buf = [0u8; 8];
        let r = e.irecv(&mut ep, recv_buf(&mut buf), pattern(Some(1)));
        assert_eq!(e.state(r).unwrap(), RequestState::Complete);
        assert_eq!(
            e.take(r).unwrap().status.byte_count(),
            6,
            "the receive took the second message"
        );
        assert_eq!(
            e.state(message).unwrap_err().class,
            MPI_ERR_REQUEST,
            "a message is not a request"
        );
        let mut got = [0u8; 4];
        let m = e.imrecv(&mut ep, message, recv_buf(&mut got)).unwrap();
        assert_eq!(e.take(m).unwrap().status.byte_count(), 4);
        assert_eq!(got, first);
        let mut again = [0u8; 4];
        let err = e
            .imrecv(&mut ep, message, recv_buf(&mut again))
            .unwrap_err();
        assert_eq!(
            err.class, MPI_ERR_REQUEST,
            "the message was received already"
        );
        assert!(e.improbe(&pattern(None)).is_none());
    }
}
