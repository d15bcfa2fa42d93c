//! Collective calls on intracommunicators through the C ABI, blocking and
//! nonblocking, with `int` and large (`_c`) counts: the arguments are
//! checked and turned into user buffers here, the algorithms are in
//! `core::collective`.
//!
//! Each collective has one builder that checks the arguments the calling
//! member's role makes significant (a non-root's receive arguments are not
//! even read) and returns the algorithm as a future; the blocking form runs
//! it at once, the `I` form makes it a request. So both forms check the
//! same things, and a call with a bad argument fails before it takes a
//! collective sequence number, consistently on every member.
//!
//! `MPI_IN_PLACE` (the address -1) is accepted where MPI 4.1 allows it and
//! is `MPI_ERR_BUFFER` elsewhere. The parts: [`args`] (argument helpers),
//! [`rooted`] (bcast, gather, scatter), [`all`] (barrier, allgather,
//! alltoall), [`reduction`], and [`inter`], where the blocking calls on an
//! intercommunicator go.

pub mod all;
pub mod args;
pub mod inter;
pub mod neighbor;
pub mod reduction;
pub mod rooted;

pub use all::{
    allgather, allgatherv, alltoall, alltoallv, alltoallw, barrier, iallgather, iallgatherv,
    ialltoall, ialltoallv, ialltoallw, ibarrier,
};
pub use neighbor::{
    ineighbor_allgather, ineighbor_allgatherv, ineighbor_alltoall, ineighbor_alltoallv,
    ineighbor_alltoallw, neighbor_allgather, neighbor_allgatherv, neighbor_alltoall,
    neighbor_alltoallv, neighbor_alltoallw,
};
pub use reduction::{
    allreduce, exscan, iallreduce, iexscan, ireduce, ireduce_scatter, ireduce_scatter_block, iscan,
    reduce, reduce_scatter, reduce_scatter_block, scan,
};
pub use rooted::{
    bcast, gather, gatherv, ibcast, igather, igatherv, iscatter, iscatterv, scatter, scatterv,
};

/// The blocking and the nonblocking (`request`) form of a collective from
/// its builder expression.
macro_rules! blocking_and_nonblocking {
    ($blocking:ident, $nonblocking:ident ($($arg:ident: $ty:ty),*) => $build:expr) => {
                pub unsafe fn $blocking($($arg: $ty),*) -> MpiResult {
            // SAFETY: the arguments are this MPI call's, passed on unchanged,
            // so the builder gets MPI's contract: the buffers and arrays stay
            // valid until the call returns, and `block` runs the collective
            // to its end before that.
            crate::core::collective::executor::block(unsafe { $build }?)
        }

                pub unsafe fn $nonblocking($($arg: $ty,)* request: &mut MPI_Request) -> MpiResult {
            // SAFETY: the arguments are this MPI call's, passed on unchanged;
            // MPI's contract for a nonblocking collective keeps its buffers
            // valid and untouched by the program until the request completes,
            // and the builder reads the arrays before returning.
            *request = crate::core::collective::executor::start(unsafe { $build }?)?;
            Ok(())
        }
    };
    // A collective intercommunicators have too: the blocking form of an
    // intercommunicator's call goes to the builder of the same name in
    // `collective_inter` (the nonblocking forms are intracommunicator-only).
    ($blocking:ident, $nonblocking:ident ($($arg:ident: $ty:ty),*)
        => inter($comm:ident) $build:ident($($barg:expr),* $(,)?)) => {
                pub unsafe fn $blocking($($arg: $ty),*) -> MpiResult {
            if crate::abi::collective::inter::is_inter($comm)? {
                return crate::core::collective::executor::block(
                    // SAFETY: the MPI call's arguments, passed on unchanged:
                    // valid as MPI requires until the call returns, and
                    // `block` finishes the collective before that.
                    unsafe { crate::abi::collective::inter::$build($($barg),*) }?,
                );
            }
            // SAFETY: the same arguments, to the intracommunicator builder:
            // valid until the call returns, and `block` waits for the end.
            crate::core::collective::executor::block(unsafe { $build($($barg),*) }?)
        }

                pub unsafe fn $nonblocking($($arg: $ty,)* request: &mut MPI_Request) -> MpiResult {
            // SAFETY: the MPI call's arguments, passed on unchanged; MPI keeps
            // a nonblocking collective's buffers valid and untouched by the
            // program until the request completes, and the builder reads the
            // arrays before returning.
            *request = crate::core::collective::executor::start(unsafe { $build($($barg),*) }?)?;
            Ok(())
        }
    };
}
pub(crate) use blocking_and_nonblocking;
