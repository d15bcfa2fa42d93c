//! The byte-level point-to-point a collective algorithm uses: a
//! communicator's members and rank, its collective context id, and blocking
//! or nonblocking sends and receives of byte buffers on it.
use std::os::raw::c_int;
use std::sync::Arc;

use crate::core::comm::Communicator;
use crate::core::error::MpiResult;
use crate::core::matching::Pattern;
use crate::core::p2p::engine::{invalid_request, SendArgs};
use crate::core::p2p::user_buffer::{byte_type, UserBuffer};
use crate::core::progress::block_on;
use crate::core::runtime;
use crate::mpi_abi::constants::MPI_REQUEST_NULL;
use crate::mpi_abi::types::{MPI_Comm, MPI_Request, MPI_Status};
use crate::transport::ProcessId;

/// Tag of internal collective messages (never seen by `MPI_ANY_TAG`).
pub const COLLECTIVE_TAG: c_int = -2;

/// What an algorithm needs to know of its communicator.
#[derive(Clone)]
pub struct Channel {
    pub members: Arc<[ProcessId]>,
    pub rank: usize,
    pub context_id: u64,
}

impl Channel {
    pub fn of(comm: &Communicator) -> Channel {
        Channel {
            members: comm.members.clone(),
            rank: comm.rank,
            context_id: comm.context_id + 1,
        }
    }

    /// The channel of a communicator handle.
    pub fn lookup(comm: MPI_Comm) -> MpiResult<Channel> {
        Ok(Channel::of(runtime::lock().comms().get(comm)?))
    }

    pub fn size(&self) -> usize {
        self.members.len()
    }

    /// Starts sending `data`; it must stay alive and unchanged until the
    /// returned request completes. A message that leaves at once needs no
    /// request: `MPI_REQUEST_NULL` then stands for it (nothing to wait for).
    pub fn isend(&self, dest: usize, tag: c_int, data: &[u8]) -> MpiResult<MPI_Request> {
        let byte = byte_type();
        let mut rt = runtime::lock();
        let args = SendArgs {
            // SAFETY: the slice outlives the request: callers wait for it
            // before the slice goes (see the method's contract).
            buf: unsafe { UserBuffer::new(data.as_ptr().cast(), data.len(), byte) },
            dest: self.members[dest],
            context_id: self.context_id,
            source: self.rank as c_int,
            tag,
            synchronous: false,
        };
        let (engine, endpoints) = rt.engine_and_endpoints()?;
        if engine.send_now(endpoints, &args) {
            return Ok(MPI_REQUEST_NULL);
        }
        Ok(engine.isend(endpoints, args))
    }

    /// Starts receiving into `buf`; it must stay alive until the returned
    /// request completes.
    pub fn irecv(&self, source: usize, tag: c_int, buf: &mut [u8]) -> MpiResult<MPI_Request> {
        let byte = byte_type();
        let mut rt = runtime::lock();
        let pattern = Pattern {
            context_id: self.context_id,
            source: source as c_int,
            tag,
        };
        // SAFETY: as for `isend`.
        let buf = unsafe { UserBuffer::new(buf.as_mut_ptr().cast(), buf.len(), byte) };
        let (engine, endpoints) = rt.engine_and_endpoints()?;
        Ok(engine.irecv(endpoints, buf, pattern))
    }

    /// Starts receiving into `buf` from any member (the status names it).
    pub fn irecv_any(&self, tag: c_int, buf: &mut [u8]) -> MpiResult<MPI_Request> {
        let byte = byte_type();
        let mut rt = runtime::lock();
        let pattern = Pattern {
            context_id: self.context_id,
            source: crate::core::matching::ANY,
            tag,
        };
        // SAFETY: as for `isend`.
        let buf = unsafe { UserBuffer::new(buf.as_mut_ptr().cast(), buf.len(), byte) };
        let (engine, endpoints) = rt.engine_and_endpoints()?;
        Ok(engine.irecv(endpoints, buf, pattern))
    }

    /// Waits for requests of this channel.
    pub fn wait_all(&self, ids: &[MPI_Request]) -> MpiResult<Vec<MPI_Status>> {
        let mut statuses = Vec::with_capacity(ids.len());
        for &id in ids {
            if id == MPI_REQUEST_NULL {
                // A send that left at once (see `isend`).
                statuses.push(MPI_Status::default());
                continue;
            }
            let status = block_on(|rt| {
                let done = rt
                    .engine()
                    .requests
                    .get(id)
                    .ok_or_else(|| invalid_request(id))?
                    .complete;
                if !done {
                    return Ok(None);
                }
                let error = rt
                    .engine()
                    .requests
                    .get_mut(id)
                    .and_then(|r| r.error.take());
                match error {
                    Some(e) => Err(e),
                    None => rt.engine().take_completed(id),
                }
            })?;
            statuses.push(status);
        }
        Ok(statuses)
    }

    /// Sends `data` to `dest` and receives into `buf` from `source`.
    pub fn exchange(&self, dest: usize, data: &[u8], source: usize, buf: &mut [u8]) -> MpiResult {
        let r = self.irecv(source, COLLECTIVE_TAG, buf)?;
        let s = self.isend(dest, COLLECTIVE_TAG, data)?;
        self.wait_all(&[s, r]).map(|_| ())
    }
}
