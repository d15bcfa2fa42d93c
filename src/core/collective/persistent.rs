//! Persistent collective requests (MPI 4.1 §6.13): `MPI_Bcast_init` and
//! the others make an inactive persistent request whose template makes the
//! calls of a [`Persistent`] plan; each `MPI_Start` makes the next call and
//! runs it on the request's handle in the [`executor`]; completion makes
//! the request inactive again, as for persistent point-to-point requests
//! (`core::p2p::persistent`).
use super::executor;
use super::plan::Persistent;
use crate::core::error::MpiResult;
use crate::core::p2p::request::{CollectiveCalls, Template};
use crate::core::runtime;
use crate::mpi_abi::types::MPI_Request;

/// An inactive persistent request for `plan`'s calls.
pub fn init(plan: impl Persistent) -> MPI_Request {
    let calls = plan.into_calls();
    runtime::lock()
        .engine()
        .persistent(Template::Collective(calls))
}

/// Makes and runs the next call of the persistent collective `request`,
/// which `Engine::start` has made pending (call without the runtime lock).
pub fn start(request: MPI_Request, calls: CollectiveCalls) -> MpiResult {
    executor::restart(request, calls())
}
