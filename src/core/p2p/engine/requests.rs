//! The request API and request completion in the engine: a request
//! completes (`complete_send`, `fail_request`, or a receive's last byte),
//! then `settle` does what its kind needs after; the program looks at it
//! (`state`, `is_complete`), takes its outcome (`take`: test and wait),
//! cancels or frees it. Also the requests complete from the start.
//!
//! Invariant: the engine removes a request only through `remove_request`
//! or `drop_request`, which first disown a frame of it still queued (see
//! `outgoing`).

use super::Engine;
use crate::core::error::{MpiError, MpiResult};
use crate::core::handles::{handle_at, ObjectKind};
use crate::core::p2p::generalized::Generalized;
use crate::core::p2p::request::{cancelled_status, empty_status, Operation, Request, Template};
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::{MPI_Request, MPI_Status};

/// The handle of the engine's one pre-completed send request, which every
/// `MPI_Isend` (or `MPI_Irsend`) that left at once returns (as MPICH's
/// builtin complete requests): the call made no request of its own, so
/// its wait only clears the handle. It is the first request of the table,
/// made with the engine, and stays forever: taking its outcome (an empty
/// send status), freeing or cancelling it leaves it in place. Only a
/// request the program alone holds may be this one (no internal part,
/// no persistent request).
pub const COMPLETED_SEND: MPI_Request = handle_at(ObjectKind::Request, 0);

impl Engine {
    pub(super) fn fail_request(&mut self, id: MPI_Request, why: String) {
        log::debug!("request {id:#x} fails: {why}");
        if let Some(r) = self.requests.get_mut(id) {
            r.fail(MpiError::new(MPI_ERR_OTHER, why));
            self.settle(id);
        }
    }

    pub(super) fn complete_send(&mut self, id: MPI_Request) {
        if let Some(r) = self.requests.get_mut(id) {
            r.finish(MPI_Status::default());
            self.settle(id);
        }
    }

    /// After request `id` completed in the engine: a buffered send gives
    /// its space back and goes, a part of an `MPI_Isendrecv` tells its
    /// request, a request whose handle was freed goes.
    pub(in crate::core::p2p) fn settle(&mut self, id: MPI_Request) {
        let Some(req) = self.requests.get(id) else {
            return;
        };
        if !req.complete {
            return;
        }
        if let Some(offset) = req.bsend_offset {
            if let Some(buffer) = &mut self.attached {
                buffer.release(offset);
            }
            self.drop_request(id);
        } else if req.parent != MPI_REQUEST_NULL {
            let parent = req.parent;
            if self
                .requests
                .get(parent)
                .is_some_and(|p| p.partitioned.is_some())
            {
                self.settle_partitioned(parent, id);
            } else {
                self.settle_sendrecv(parent);
            }
        } else if req.freed {
            self.drop_request(id);
        }
    }

    /// Removes a request from the table (see [`Engine::disown_frames`]).
    pub(in crate::core::p2p) fn remove_request(&mut self, id: MPI_Request) -> Option<Request> {
        if id == COMPLETED_SEND {
            return None;
        }
        self.disown_frames(id);
        self.requests.remove(id)
    }

    /// As [`Engine::remove_request`] when the request itself is not needed
    /// (it is dropped where it lies).
    fn drop_request(&mut self, id: MPI_Request) {
        if id == COMPLETED_SEND {
            return;
        }
        self.disown_frames(id);
        self.requests.discard(id);
    }

    /// The status of a completed request, removing it (the handle becomes
    /// `MPI_REQUEST_NULL`; a persistent request becomes inactive instead);
    /// `None` while it is still in flight.
    pub fn take_completed(&mut self, id: MPI_Request) -> MpiResult<Option<MPI_Status>> {
        if !self.is_complete(id)? {
            return Ok(None);
        }
        Ok(Some(self.take(id)?.status))
    }

    /// Where a request the program named is (checking the handle).
    pub fn state(&self, id: MPI_Request) -> MpiResult<RequestState> {
        let req = self.user_request(id)?;
        Ok(if req.is_inactive() {
            RequestState::Inactive
        } else if req.complete {
            RequestState::Complete
        } else {
            RequestState::Pending
        })
    }

    pub(in crate::core::p2p) fn user_request(&self, id: MPI_Request) -> MpiResult<&Request> {
        match self.requests.get(id) {
            Some(req) if req.is_user_request() => Ok(req),
            _ => Err(invalid_request(id)),
        }
    }

    /// Where a request the program named is, taking its outcome when it is
    /// complete ([`Engine::state`] and [`Engine::take`] with one look-up of
    /// the handle: the completion calls' path).
    pub fn poll_take(&mut self, id: MPI_Request) -> MpiResult<Polled> {
        if id == COMPLETED_SEND {
            return Ok(Polled::Done(Taken::completed_send()));
        }
        let req = match self.requests.get_mut(id) {
            Some(req) if req.is_user_request() => req,
            _ => return Err(invalid_request(id)),
        };
        // A plain operation, complete or not, is decided with this one
        // look-up (the message rate is decided on this path).
        if req.persistent.is_none() && req.generalized.is_none() && !req.queued_frame {
            if !req.complete {
                return Ok(Polled::Pending);
            }
            let error = req.error.take();
            let mut status = req.status;
            if let Some(e) = &error {
                status.MPI_ERROR = e.class;
            }
            self.requests.discard(id);
            return Ok(Polled::Done(Taken {
                status,
                error,
                persists: false,
                generalized: None,
            }));
        }
        Ok(if req.is_inactive() {
            Polled::Inactive
        } else if req.complete {
            Polled::Done(self.take(id)?)
        } else {
            Polled::Pending
        })
    }

    /// The outcome of a complete request: removes it, or makes a persistent
    /// one inactive. A generalized request's callbacks come with it, to be
    /// called without the lock ([`Taken::finish`]).
    pub fn take(&mut self, id: MPI_Request) -> MpiResult<Taken> {
        if id == COMPLETED_SEND {
            return Ok(Taken::completed_send());
        }
        let req = self
            .requests
            .get_mut(id)
            .ok_or_else(|| invalid_request(id))?;
        debug_assert!(req.complete, "take of a request in flight");
        if let Some(p) = &mut req.persistent {
            if !p.active {
                return Ok(Taken::inactive());
            }
            p.active = false;
        }
        let error = req.error.take();
        let mut status = req.status;
        if let Some(e) = &error {
            status.MPI_ERROR = e.class;
        }
        let persists = req.persistent.is_some();
        let generalized = req.generalized.take();
        if persists {
            self.disown_frames(id);
        } else if req.queued_frame {
            self.drop_request(id);
        } else {
            // Dropped in place: a request is large, moving it out costs.
            // (No frame of it waits in the outbox: nothing to disown.)
            self.requests.discard(id);
        }
        Ok(Taken {
            status,
            error,
            persists,
            generalized,
        })
    }

    /// `MPI_Cancel`: a receive that has not matched, or a send whose first
    /// frame has not left this process, completes as cancelled; anything
    /// else goes on (and reports not cancelled). Generalized requests are
    /// the caller's ([`Engine::generalized`]). A persistent collective
    /// cannot be cancelled (MPI 4.1 §6.13 makes it erroneous; MPICH
    /// asserts): `MPI_ERR_REQUEST`, and it goes on.
    pub fn cancel(&mut self, id: MPI_Request) -> MpiResult {
        let req = self.user_request(id)?;
        if req
            .persistent
            .as_ref()
            .is_some_and(|p| matches!(p.template, Template::Collective(_)))
        {
            return Err(MpiError::new(
                MPI_ERR_REQUEST,
                "a persistent collective request cannot be cancelled",
            ));
        }
        if req.partitioned.is_some() {
            return Err(MpiError::new(
                MPI_ERR_REQUEST,
                "a partitioned request cannot be cancelled",
            ));
        }
        if req.is_inactive() {
            return Err(MpiError::new(
                MPI_ERR_REQUEST,
                "a persistent request that is not active cannot be cancelled",
            ));
        }
        let unmatched_receive = matches!(&req.op, Operation::Recv(recv) if recv.matched.is_none());
        let queued_send = req.queued_frame;
        if unmatched_receive && self.matcher.cancel(id) {
            if let Some(req) = self.requests.get_mut(id) {
                req.finish(cancelled_status());
            }
            self.settle(id);
        } else if queued_send && self.withdraw_frame(id) {
            // A send whose first frame is still queued has not completed
            // (see `send_eager`).
            if let Some(req) = self.requests.get_mut(id) {
                req.finish(cancelled_status());
                self.settle(id);
            }
        }
        Ok(())
    }

    /// `MPI_Request_free`: the operation goes on; the handle is gone (an
    /// active persistent collective too, as in MPICH: its call runs to its
    /// end, and its buffers must stay until then). A
    /// complete generalized request is returned: its free function is due.
    pub fn free_request(&mut self, id: MPI_Request) -> MpiResult<Option<Generalized>> {
        let req = self.user_request(id)?;
        if req.partitioned.is_some() {
            self.free_partitioned(id);
            return Ok(None);
        }
        if req.is_inactive() || req.complete {
            return Ok(self
                .remove_request(id)
                .and_then(|r| r.generalized.map(|g| *g)));
        }
        if let Some(req) = self.requests.get_mut(id) {
            req.freed = true;
        }
        Ok(None)
    }

    /// `MPI_Request_free` for requests without callbacks.
    pub fn free(&mut self, id: MPI_Request) -> MpiResult {
        self.free_request(id).map(|_| ())
    }

    /// How many requests the table holds besides [`COMPLETED_SEND`].
    pub fn request_count(&self) -> usize {
        self.requests.len() - 1
    }

    /// Whether a request is complete (without removing it).
    pub fn is_complete(&self, id: MPI_Request) -> MpiResult<bool> {
        Ok(self
            .requests
            .get(id)
            .ok_or_else(|| invalid_request(id))?
            .complete)
    }

    /// A request that is complete from the start (`MPI_PROC_NULL`).
    pub fn completed_null(&mut self) -> MPI_Request {
        self.requests.insert(Request::completed_null())
    }

    /// A request that is complete from the start with `status` (a
    /// buffered send).
    pub fn completed(&mut self, status: MPI_Status) -> MPI_Request {
        let mut req = Request::new(Operation::Done);
        req.finish(status);
        self.requests.insert(req)
    }
}

/// Where a request is, as completion calls see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestState {
    /// A persistent request not started (it counts as `MPI_REQUEST_NULL`).
    Inactive,
    Pending,
    Complete,
}

/// A completed request's outcome, taken out of the table.
/// What [`Engine::poll_take`] found behind a handle.
pub enum Polled {
    /// An inactive persistent request.
    Inactive,
    Pending,
    /// Complete: its outcome, taken out of the table.
    Done(Taken),
}

pub struct Taken {
    pub status: MPI_Status,
    pub error: Option<MpiError>,
    /// The handle stays valid (a persistent request, now inactive).
    pub persists: bool,
    /// A generalized request's callbacks: query and free are still due.
    pub generalized: Option<Box<Generalized>>,
}

impl Taken {
    /// The outcome of [`COMPLETED_SEND`]: an empty send status.
    pub fn completed_send() -> Taken {
        Taken {
            status: MPI_Status::default(),
            error: None,
            persists: false,
            generalized: None,
        }
    }

    /// An inactive persistent request: an empty status at once.
    fn inactive() -> Taken {
        Taken {
            status: empty_status(),
            error: None,
            persists: true,
            generalized: None,
        }
    }

    /// The final status and error, after a generalized request's query
    /// and free functions. Call without the runtime lock held.
    pub fn finish(self) -> (MPI_Status, Option<MpiError>) {
        match self.generalized {
            None => (self.status, self.error),
            Some(g) => {
                let (status, error) = g.query();
                let free_error = g.free();
                (status, error.or(free_error))
            }
        }
    }
}

pub fn invalid_request(id: MPI_Request) -> MpiError {
    MpiError::new(
        MPI_ERR_REQUEST,
        format!("handle {:#010x} is not an active request", id as u32),
    )
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::*;

    #[test]
    fn the_pre_completed_send_stays_through_every_use() {
        let (mut e, mut ep) = engine();
        let live = e.request_count();
        for _ in 0..3 {
            assert_eq!(e.state(COMPLETED_SEND).unwrap(), RequestState::Complete);
            let taken = e.take(COMPLETED_SEND).unwrap();
            assert!(!taken.persists, "its handle becomes MPI_REQUEST_NULL");
            assert!(taken.error.is_none());
            assert!(!taken.status.cancelled());
            e.cancel(COMPLETED_SEND).unwrap();
            assert!(e.free_request(COMPLETED_SEND).unwrap().is_none());
            assert!(e.start(&mut ep, COMPLETED_SEND).is_err(), "not persistent");
        }
        assert_eq!(e.request_count(), live, "still in the table");
        assert_eq!(e.state(COMPLETED_SEND).unwrap(), RequestState::Complete);
    }

    #[test]
    fn a_send_still_in_the_outbox_is_cancelled() {
        let (mut e, mut ep) = engine();
        let data = [1u8; 32];
        // Standard eager, queued (the peer cannot be reached yet): not
        // complete before its frame is handed to the transport.
        let standard = e.isend(&mut ep, send_args(&data, UNREACHABLE, 1));
        assert_eq!(e.state(standard).unwrap(), RequestState::Pending);
        // Synchronous: pending until cancelled.
        let mut args = send_args(&data, UNREACHABLE, 2);
        args.synchronous = true;
        let sync = e.isend(&mut ep, args);
        assert_eq!(e.state(sync).unwrap(), RequestState::Pending);
        assert!(e.has_outgoing());
        e.cancel(sync).unwrap();
        e.cancel(standard).unwrap();
        assert!(!e.has_outgoing(), "both frames were withdrawn");
        for id in [sync, standard] {
            assert_eq!(e.state(id).unwrap(), RequestState::Complete);
            assert!(e.take(id).unwrap().status.cancelled());
        }
    }

    #[test]
    fn a_send_that_left_is_not_cancelled() {
        let (mut e, mut ep) = engine();
        let data = [9u8; 4];
        let s = e.isend(&mut ep, send_args(&data, ME, 3));
        e.cancel(s).unwrap();
        assert!(!e.take(s).unwrap().status.cancelled());
        let mut buf = [0u8; 4];
        let r = e.irecv(&mut ep, recv_buf(&mut buf), pattern(Some(3)));
        settle_down(&mut e, &mut ep);
        assert_eq!(e.state(r).unwrap(), RequestState::Complete);
        assert_eq!(buf, data);
    }

    #[test]
    fn a_freed_send_leaves_its_frame_without_an_owner() {
        let (mut e, mut ep) = engine();
        let data = [5u8; 8];
        let s = e.isend(&mut ep, send_args(&data, UNREACHABLE, 1));
        e.free(s).unwrap();
        assert!(
            e.requests.get(s).is_some_and(|r| r.freed && !r.complete),
            "a freed send stays until its frame leaves"
        );
        assert!(e.has_outgoing(), "the message still goes");
        // A receive cancelled later is not confused with the old frame.
        let mut buf = [0u8; 8];
        let r = e.irecv(&mut ep, recv_buf(&mut buf), pattern(Some(1)));
        e.cancel(r).unwrap();
        assert!(e.take(r).unwrap().status.cancelled());
        assert!(e.has_outgoing());
    }

    #[test]
    fn an_unmatched_receive_is_cancelled_and_message_handles_are_not_requests() {
        let (mut e, mut ep) = engine();
        let mut buf = [0u8; 8];
        let r = e.irecv(&mut ep, recv_buf(&mut buf), pattern(None));
        assert_eq!(e.state(r).unwrap(), RequestState::Pending);
        e.cancel(r).unwrap();
        let taken = e.take(r).unwrap();
        assert!(taken.status.cancelled() && !taken.persists);
        assert_eq!(
            e.state(r).unwrap_err().class,
            MPI_ERR_REQUEST,
            "taken requests are gone"
        );
        assert_eq!(
            e.state(MPI_REQUEST_NULL).unwrap_err().class,
            MPI_ERR_REQUEST
        );
    }
}
