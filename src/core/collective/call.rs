//! One collective call in flight: its communicator's [`Channel`] and the
//! tag of this call, with the asynchronous sends and receives the
//! algorithms are written with.
//!
//! Tags: every collective call on a communicator takes the next number of
//! that communicator's sequence ([`super::sequence`]); its messages carry
//! a negative tag made from the number. Members call collectives in the
//! same order, so they agree on each call's tag, and calls in flight at the
//! same time (nonblocking ones, or a blocking one while nonblocking ones
//! run) never take each other's messages. A persistent collective request
//! takes its number when it is initialized and keeps it (`super::plan`).
//!
//! Buffers: a posted operation ([`Posted`]) borrows its buffer until it is
//! completed ([`Call::complete`]), so the buffer outlives the engine's use
//! of it. Dropping a posted operation that was never completed (an error
//! path) cancels it if it can and otherwise waits for it, never leaving the
//! engine with a dangling buffer.
//!
//! Mismatched calls: a member that receives more than its block (the
//! members' counts or datatypes disagree: an erroneous program), or less
//! where it asked for an exact fill ([`Call::post_recv_exact`]), keeps
//! what fits and, in a call run with [`Call::run`], goes on with its part
//! of the algorithm, returning `MPI_ERR_TRUNCATE` at the end; stopping at
//! once would leave the members that wait for what it forwards hanging.
use std::future::Future;
use std::marker::PhantomData;
use std::os::raw::c_int;
use std::sync::{Arc, Mutex};
use std::task::Poll;

use super::channel::Channel;
use super::sequence;
use crate::core::error::{MpiError, MpiResult};
use crate::core::p2p::engine::invalid_request;
use crate::core::progress::block_on;
use crate::core::runtime::{self, Runtime};
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::{MPI_Comm, MPI_Request, MPI_Status};

pub struct Call {
    pub ch: Channel,
    pub tag: c_int,
    /// Set by [`Call::run`]: where the first truncated receive is kept
    /// until the algorithm ends, instead of ending it.
    truncated: Option<Arc<Mutex<Option<MpiError>>>>,
}

/// A send or receive started for a call; completed by [`Call::complete`].
#[must_use = "a posted operation must be completed"]
pub struct Posted<'a> {
    id: MPI_Request,
    /// A receive that must fill its buffer exactly (see
    /// [`Call::post_recv_exact`]).
    exact: Option<usize>,
    _buffer: PhantomData<&'a mut [u8]>,
}

impl Call {
    /// Starts a collective call on `ch` with the next tag of its sequence.
    pub fn start(ch: Channel) -> Call {
        let tag = sequence::next_tag(ch.context_id);
        Call {
            ch,
            tag,
            truncated: None,
        }
    }

    /// The future of `algorithm` run on this call, which finishes its part
    /// even after a truncated receive and then returns that error (see the
    /// module documentation); any other error ends it at once.
    pub fn run<T, Fut>(
        mut self,
        algorithm: impl FnOnce(Call) -> Fut,
    ) -> impl Future<Output = MpiResult<T>> + Send + 'static
    where
        Fut: Future<Output = MpiResult<T>> + Send + 'static,
        T: Send + 'static,
    {
        let truncated = Arc::new(Mutex::new(None));
        self.truncated = Some(truncated.clone());
        let work = algorithm(self);
        async move {
            let value = work.await?;
            let kept = truncated.lock().unwrap_or_else(|e| e.into_inner()).take();
            kept.map_or(Ok(value), Err)
        }
    }

    /// A call with a fixed tag: oxmpi's internal agreements, which run one
    /// at a time and outside the sequence, and the calls of a persistent
    /// collective request, whose tag was taken at its initialization
    /// (`super::plan`).
    pub fn with_tag(ch: Channel, tag: c_int) -> Call {
        Call {
            ch,
            tag,
            truncated: None,
        }
    }

    /// The channel of an intracommunicator handle (`MPI_ERR_COMM` if
    /// invalid); no sequence number is taken yet. The blocking collectives
    /// of an intercommunicator run in [`super::inter`]; the rest (the
    /// nonblocking and persistent ones, and scans, which MPI defines on
    /// intracommunicators only) are refused here.
    pub fn channel(comm: MPI_Comm) -> MpiResult<Channel> {
        let rt = runtime::lock();
        let c = rt.comms().get(comm)?;
        if c.is_inter() {
            return Err(MpiError::new(
                MPI_ERR_UNSUPPORTED_OPERATION,
                "this collective is not available on intercommunicators in oxmpi \
                 (nonblocking and persistent collectives on intercommunicators are not \
                 implemented yet)",
            ));
        }
        Ok(Channel::of(c))
    }

    pub fn rank(&self) -> usize {
        self.ch.rank
    }

    pub fn size(&self) -> usize {
        self.ch.size()
    }

    pub fn post_send<'a>(&self, dest: usize, data: &'a [u8]) -> MpiResult<Posted<'a>> {
        let id = self.ch.isend(dest, self.tag, data)?;
        Ok(Posted {
            id,
            exact: None,
            _buffer: PhantomData,
        })
    }

    pub fn post_recv<'a>(&self, source: usize, buf: &'a mut [u8]) -> MpiResult<Posted<'a>> {
        let id = self.ch.irecv(source, self.tag, buf)?;
        Ok(Posted {
            id,
            exact: None,
            _buffer: PhantomData,
        })
    }

    /// As [`Call::post_recv`], for a message that must fill `buf`: a
    /// shorter one is a mismatch of the members' counts or datatypes,
    /// reported (and kept, in a call run with [`Call::run`]) as a
    /// truncation is.
    pub fn post_recv_exact<'a>(&self, source: usize, buf: &'a mut [u8]) -> MpiResult<Posted<'a>> {
        let len = buf.len();
        let mut posted = self.post_recv(source, buf)?;
        posted.exact = Some(len);
        Ok(posted)
    }

    /// Whether a mismatch was kept for the end of this call (see
    /// [`Call::run`]): algorithms that forward what they received then
    /// forward an empty message instead, so every member downstream sees
    /// the mismatch too.
    pub fn has_kept_mismatch(&self) -> bool {
        self.truncated
            .as_ref()
            .is_some_and(|kept| kept.lock().unwrap_or_else(|e| e.into_inner()).is_some())
    }

    /// Waits for all of `posted`; the first failure (a truncated receive,
    /// a transport error) is the result, once every one has finished. In a
    /// call run with [`Call::run`] a truncated receive is kept for the end
    /// instead.
    pub async fn complete(&self, mut posted: Vec<Posted<'_>>) -> MpiResult {
        let mut first_error: Option<MpiError> = None;
        std::future::poll_fn(|_| {
            let mut rt = runtime::lock();
            for p in posted.iter_mut().filter(|p| p.id != MPI_REQUEST_NULL) {
                match take_if_complete(&mut rt, p.id, p.exact) {
                    Ok(None) => continue,
                    Ok(Some(result)) => {
                        if let Err(e) = result {
                            first_error.get_or_insert(e);
                        }
                    }
                    Err(e) => {
                        first_error.get_or_insert(e);
                    }
                }
                p.id = MPI_REQUEST_NULL;
            }
            if posted.iter().all(|p| p.id == MPI_REQUEST_NULL) {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
        .await;
        match (first_error, &self.truncated) {
            (Some(e), Some(kept)) if e.class == MPI_ERR_TRUNCATE => {
                kept.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .get_or_insert(e);
                Ok(())
            }
            (first, _) => first.map_or(Ok(()), Err),
        }
    }

    pub async fn send(&self, dest: usize, data: &[u8]) -> MpiResult {
        let s = self.post_send(dest, data)?;
        self.complete(vec![s]).await
    }

    pub async fn recv(&self, source: usize, buf: &mut [u8]) -> MpiResult {
        let r = self.post_recv(source, buf)?;
        self.complete(vec![r]).await
    }

    /// Sends `data` to `dest` while receiving into `buf` from `source`.
    pub async fn exchange(
        &self,
        dest: usize,
        data: &[u8],
        source: usize,
        buf: &mut [u8],
    ) -> MpiResult {
        let r = self.post_recv(source, buf)?;
        let s = self.post_send(dest, data)?;
        self.complete(vec![r, s]).await
    }
}

/// The outcome of a request if it has finished (removing it).
fn take_if_complete(
    rt: &mut Runtime,
    id: MPI_Request,
    exact: Option<usize>,
) -> MpiResult<Option<MpiResult>> {
    let req = rt
        .engine()
        .requests
        .get_mut(id)
        .ok_or_else(|| invalid_request(id))?;
    if !req.complete {
        return Ok(None);
    }
    let error = req.error.take();
    let status = rt
        .engine()
        .take_completed(id)?
        .expect("the request is complete");
    Ok(Some(match error {
        Some(e) => Err(e),
        None => status_result(&status, exact),
    }))
}

/// A finished receive's status as a result: collectives receive whole
/// blocks, so a message larger than its block (or, for a receive that must
/// fill its buffer, `exact`, a smaller one) means the members' type
/// signatures do not match.
fn status_result(status: &MPI_Status, exact: Option<usize>) -> MpiResult {
    match status.MPI_ERROR {
        MPI_SUCCESS => match exact {
            Some(len) if (status.byte_count() as usize) < len => Err(MpiError::new(
                MPI_ERR_TRUNCATE,
                format!(
                    "rank {} sent {} bytes where this collective call expects {len}: \
                     the members' counts and datatypes do not match",
                    status.MPI_SOURCE,
                    status.byte_count()
                ),
            )),
            _ => Ok(()),
        },
        MPI_ERR_TRUNCATE => Err(MpiError::new(
            MPI_ERR_TRUNCATE,
            format!(
                "rank {} sent more data than this collective call expects from it ({} bytes kept): \
                 the members' counts and datatypes do not match",
                status.MPI_SOURCE,
                status.byte_count()
            ),
        )),
        class => Err(MpiError::new(
            class,
            "a transfer of the collective call failed",
        )),
    }
}

impl Drop for Posted<'_> {
    fn drop(&mut self) {
        if self.id == MPI_REQUEST_NULL {
            return;
        }
        let id = self.id;
        // A receive that has not matched yet can be cancelled; anything
        // else is waited for, so the buffer is not released under it.
        let _ = runtime::lock().engine().cancel(id);
        let _ = block_on(|rt| take_if_complete(rt, id, None));
    }
}
