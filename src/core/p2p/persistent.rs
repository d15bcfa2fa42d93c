//! Persistent requests (`MPI_Send_init`, `MPI_Recv_init`...): the request
//! keeps its operation as a [`Template`], and `MPI_Start` launches it again
//! on the same handle. Between a completion (taken by a wait or test) and
//! the next start the request is inactive: completion calls treat it like
//! `MPI_REQUEST_NULL` but leave the handle as it is.
//!
//! A persistent collective's template makes a new call of it at each
//! start; the collective executor runs it on the request (see
//! `core::collective::plan`), and its completion makes the request
//! inactive like any other.
//!
//! Reusing the handle is safe because no frame names a request after its
//! operation completed: a send completes on its last frame or
//! acknowledgement, a receive on its last data.
use super::engine::{Endpoints, Engine};
use super::request::{
    empty_status, proc_null_status, CollectiveCalls, Operation, Persistent, Request, Template,
};
use crate::core::error::{MpiError, MpiResult};
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::{MPI_Request, MPI_Status};

impl Engine {
    /// A persistent request for `template`, inactive until `start`.
    pub fn persistent(&mut self, template: Template) -> MPI_Request {
        let mut req = Request::new(Operation::Done);
        req.complete = true;
        req.status = empty_status();
        req.persistent = Some(Box::new(Persistent {
            template,
            active: false,
        }));
        self.requests.insert(req)
    }

    /// Checks that `id` is a persistent request `MPI_Start` may start.
    pub fn check_startable(&self, id: MPI_Request) -> MpiResult {
        let req = self.user_request(id)?;
        match &req.persistent {
            None => Err(MpiError::new(
                MPI_ERR_REQUEST,
                format!("request {:#010x} is not a persistent request", id as u32),
            )),
            Some(p) if p.active => Err(MpiError::new(
                MPI_ERR_REQUEST,
                format!("persistent request {:#010x} is active already", id as u32),
            )),
            Some(_) => Ok(()),
        }
    }

    /// `MPI_Start`: launches a persistent request's operation again. A
    /// persistent collective is only made pending here: its calls come
    /// back, for the caller to make the next one and hand it to the
    /// collective executor (`executor::restart`) without the runtime lock.
    pub fn start(
        &mut self,
        ep: &mut Endpoints,
        id: MPI_Request,
    ) -> MpiResult<Option<CollectiveCalls>> {
        self.check_startable(id)?;
        let req = self.requests.get_mut(id).expect("checked");
        let p = req.persistent.as_mut().expect("checked");
        p.active = true;
        match p.template.clone() {
            Template::Collective(calls) => {
                req.op = Operation::Collective;
                req.complete = false;
                req.status = empty_status();
                req.error = None;
                return Ok(Some(calls));
            }
            Template::ProcNull => req.finish(proc_null_status()),
            Template::Partitioned => self.start_partitioned(ep, id),
            Template::Recv { buf, pattern } => self.launch_recv(ep, id, buf, pattern),
            Template::Send {
                args,
                buffered: false,
            } => self.launch_send(ep, id, args),
            Template::Send {
                args,
                buffered: true,
            } => match self.bsend(ep, args) {
                Ok(()) => {
                    if let Some(req) = self.requests.get_mut(id) {
                        req.finish(MPI_Status::default());
                    }
                }
                Err(e) => {
                    if let Some(p) = self
                        .requests
                        .get_mut(id)
                        .and_then(|r| r.persistent.as_mut())
                    {
                        p.active = false;
                    }
                    return Err(e);
                }
            },
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::super::engine::testing::*;
    use super::super::engine::RequestState;
    use super::*;

    #[test]
    fn persistent_requests_restart_on_the_same_handle_and_go_inactive() {
        let (mut e, mut ep) = engine();
        let mut out = [0u8; 16];
        let mut inbox = [0u8; 16];
        let send = e.persistent(Template::Send {
            args: send_args(&out, ME, 4),
            buffered: false,
        });
        let recv = e.persistent(Template::Recv {
            buf: recv_buf(&mut inbox),
            pattern: pattern(Some(4)),
        });
        for round in 0..3u8 {
            assert_eq!(e.state(send).unwrap(), RequestState::Inactive);
            out.fill(round);
            e.start(&mut ep, recv).unwrap();
            e.start(&mut ep, send).unwrap();
            assert_eq!(
                e.start(&mut ep, send).err().expect("active").class,
                MPI_ERR_REQUEST,
                "active already"
            );
            settle_down(&mut e, &mut ep);
            for id in [send, recv] {
                assert_eq!(e.state(id).unwrap(), RequestState::Complete);
                assert!(e.take(id).unwrap().persists);
            }
            assert_eq!(inbox, [round; 16]);
            let again = e.take(recv).unwrap();
            assert_eq!(
                again.status.MPI_SOURCE, MPI_ANY_SOURCE,
                "an inactive request gives an empty status"
            );
        }
        assert_eq!(
            e.cancel(send).unwrap_err().class,
            MPI_ERR_REQUEST,
            "inactive"
        );
        e.free(send).unwrap();
        e.free(recv).unwrap();
        assert!(e.request_count() == 0);
    }

    #[test]
    fn cancel_withdraws_a_queued_activations_frame() {
        let (mut e, mut ep) = engine();
        let data = [1u8; 8];
        let send = e.persistent(Template::Send {
            args: send_args(&data, UNREACHABLE, 4),
            buffered: false,
        });
        e.start(&mut ep, send).unwrap();
        assert!(
            !e.is_complete(send).unwrap(),
            "a queued eager send completes when its frame leaves"
        );
        e.cancel(send).unwrap();
        assert!(e.take(send).unwrap().status.cancelled());
        assert!(!e.has_outgoing(), "its frame was withdrawn");
        e.start(&mut ep, send).unwrap();
        e.cancel(send).unwrap();
        assert!(e.take(send).unwrap().status.cancelled());
        e.start(&mut ep, send).unwrap();
        e.free(send).unwrap();
        assert!(e.has_outgoing(), "a freed activation's message still goes");
    }

    #[test]
    fn only_inactive_persistent_requests_start() {
        let (mut e, mut ep) = engine();
        let plain = e.completed_null();
        assert_eq!(
            e.start(&mut ep, plain).err().expect("not persistent").class,
            MPI_ERR_REQUEST
        );
        let null = e.persistent(Template::ProcNull);
        e.start(&mut ep, null).unwrap();
        let taken = e.take(null).unwrap();
        assert_eq!(
            (taken.status.MPI_SOURCE, taken.persists),
            (MPI_PROC_NULL, true)
        );
    }
}
