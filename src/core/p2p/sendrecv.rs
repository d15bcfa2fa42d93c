//! `MPI_Isendrecv`: one request for a send and a receive. Its two parts
//! are internal requests that name it as their `parent`; when the second
//! part completes, the request completes with the receive's status (or
//! the first error of either part).
use super::engine::{Endpoints, Engine, SendArgs};
use super::request::{proc_null_status, Operation, Request};
use super::user_buffer::UserBuffer;
use crate::core::matching::Pattern;
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::MPI_Request;

impl Engine {
    /// `MPI_Isendrecv`: one request for a send and a receive (`None`: the
    /// part names `MPI_PROC_NULL`), complete when both are; its status is
    /// the receive's.
    pub fn isendrecv(
        &mut self,
        ep: &mut Endpoints,
        send: Option<SendArgs>,
        recv: Option<(UserBuffer, Pattern)>,
    ) -> MPI_Request {
        let parent = self.requests.insert(Request::new(Operation::Done));
        let mut part = |present: bool| {
            if !present {
                return MPI_REQUEST_NULL;
            }
            let mut r = Request::new(Operation::Done);
            r.parent = parent;
            self.requests.insert(r)
        };
        let (send_id, recv_id) = (part(send.is_some()), part(recv.is_some()));
        if let Some(req) = self.requests.get_mut(parent) {
            req.op = Operation::SendRecv {
                send: send_id,
                recv: recv_id,
            };
        }
        if let Some((buf, pattern)) = recv {
            self.launch_recv(ep, recv_id, buf, pattern);
        }
        if let Some(args) = send {
            self.launch_send(ep, send_id, args);
        }
        self.settle_sendrecv(parent);
        parent
    }

    /// Completes an `MPI_Isendrecv` request once both its parts have.
    pub(super) fn settle_sendrecv(&mut self, parent: MPI_Request) {
        let Some(Request {
            op: Operation::SendRecv { send, recv },
            complete: false,
            ..
        }) = self.requests.get(parent)
        else {
            return;
        };
        let (send, recv) = (*send, *recv);
        let part_done = |id: MPI_Request| {
            id == MPI_REQUEST_NULL || self.requests.get(id).is_none_or(|r| r.complete)
        };
        if !part_done(send) || !part_done(recv) {
            return;
        }
        let send_part = self.remove_request(send);
        let recv_part = self.remove_request(recv);
        let status = recv_part
            .as_ref()
            .map_or_else(proc_null_status, |r| r.status);
        let error = recv_part
            .and_then(|r| r.error)
            .or_else(|| send_part.and_then(|r| r.error));
        if let Some(req) = self.requests.get_mut(parent) {
            match error {
                Some(e) => req.fail(e),
                None => req.finish(status),
            }
        }
        self.settle(parent);
    }
}

#[cfg(test)]
mod tests {
    use super::super::engine::testing::*;
    use super::super::engine::RequestState;

    #[test]
    fn one_request_completes_when_both_parts_have() {
        let (mut e, mut ep) = engine();
        let out = [3u8; 10];
        let mut inbox = [0u8; 10];
        let r = e.isendrecv(
            &mut ep,
            Some(send_args(&out, ME, 6)),
            Some((recv_buf(&mut inbox), pattern(Some(6)))),
        );
        assert_eq!(e.request_count(), 3, "the request and its two parts");
        settle_down(&mut e, &mut ep);
        assert_eq!(e.state(r).unwrap(), RequestState::Complete);
        let taken = e.take(r).unwrap();
        assert_eq!(
            (
                taken.status.MPI_SOURCE,
                taken.status.MPI_TAG,
                taken.status.byte_count()
            ),
            (0, 6, 10)
        );
        assert_eq!(inbox, out);
        assert_eq!(e.request_count(), 0, "the parts went with it");
    }

    #[test]
    fn proc_null_parts_complete_at_once() {
        let (mut e, mut ep) = engine();
        let r = e.isendrecv(&mut ep, None, None);
        let taken = e.take(r).unwrap();
        assert_eq!(
            taken.status.MPI_SOURCE,
            crate::mpi_abi::constants::MPI_PROC_NULL
        );
    }
}
