//! Collective calls on intracommunicators through the C ABI, blocking,
//! nonblocking and persistent (MPI 4 `_init`), with `int` and large (`_c`)
//! counts: the arguments are checked and turned into user buffers here,
//! the algorithms are in `core::collective`.
//!
//! Each collective has one builder that checks the arguments the calling
//! member's role makes significant (a non-root's receive arguments are not
//! even read) and returns the call as a [`Plan`] (the checked arguments and
//! the algorithm); the blocking form makes the call at once, the `I` form
//! makes it a request, the `_init` form a persistent request that makes it
//! again at each `MPI_Start` ([`blocking_and_nonblocking`] writes the three
//! from the builder). So every form checks the same things, and a call with
//! a bad argument fails before it takes a collective sequence number,
//! consistently on every member.
//!
//! [`Plan`]: crate::core::collective::plan::Plan
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
    allgather, allgather_init, allgatherv, allgatherv_init, alltoall, alltoall_init, alltoallv,
    alltoallv_init, alltoallw, alltoallw_init, barrier, barrier_init, iallgather, iallgatherv,
    ialltoall, ialltoallv, ialltoallw, ibarrier,
};
pub use neighbor::{
    ineighbor_allgather, ineighbor_allgatherv, ineighbor_alltoall, ineighbor_alltoallv,
    ineighbor_alltoallw, neighbor_allgather, neighbor_allgather_init, neighbor_allgatherv,
    neighbor_allgatherv_init, neighbor_alltoall, neighbor_alltoall_init, neighbor_alltoallv,
    neighbor_alltoallv_init, neighbor_alltoallw, neighbor_alltoallw_init,
};
pub use reduction::{
    allreduce, allreduce_init, exscan, exscan_init, iallreduce, iexscan, ireduce, ireduce_scatter,
    ireduce_scatter_block, iscan, reduce, reduce_init, reduce_scatter, reduce_scatter_block,
    reduce_scatter_block_init, reduce_scatter_init, scan, scan_init,
};
pub use rooted::{
    bcast, bcast_init, gather, gather_init, gatherv, gatherv_init, ibcast, igather, igatherv,
    iscatter, iscatterv, scatter, scatter_init, scatterv, scatterv_init,
};

/// The blocking and the nonblocking (`request`) form of a collective from
/// its builder expression, and with a third name its persistent form
/// (`MPI_x_init`: `info` and `request` arguments), which needs a builder
/// that returns a [`Plan`](crate::core::collective::plan::Plan); any
/// [`Collective`](crate::core::collective::plan::Collective) (an algorithm
/// future too) gives the other two.
macro_rules! blocking_and_nonblocking {
    ($blocking:ident, $nonblocking:ident, $persistent:ident ($($arg:ident: $ty:ty),*)
        => $($build:tt)*) => {
        $crate::abi::collective::blocking_and_nonblocking!(
            $blocking, $nonblocking ($($arg: $ty),*) => $($build)*
        );
        $crate::abi::collective::blocking_and_nonblocking!(
            @persistent $persistent ($($arg: $ty),*) => $($build)*
        );
    };
    (@persistent $persistent:ident ($($arg:ident: $ty:ty),*)
        => inter($comm:ident) $build:ident($($barg:expr),* $(,)?)) => {
        pub unsafe fn $persistent(
            $($arg: $ty,)*
            info: $crate::mpi_abi::types::MPI_Info,
            request: &mut $crate::mpi_abi::types::MPI_Request,
        ) -> MpiResult {
            $crate::abi::info::check_ignored(&$crate::core::runtime::lock(), info)?;
            *request = if $crate::abi::collective::inter::is_inter($comm)? {
                // SAFETY: the arguments are this MPI call's, passed on
                // unchanged; MPI keeps a persistent collective's buffers valid
                // until the request is freed and untouched while a call of it
                // is active, and the builder reads the arrays before returning.
                let plan = unsafe { $crate::abi::collective::inter::$build($($barg),*) }?;
                $crate::core::collective::persistent::init(plan)
            } else {
                // SAFETY: as above, for the intracommunicator builder.
                let plan = unsafe { $build($($barg),*) }?;
                $crate::core::collective::persistent::init(plan)
            };
            Ok(())
        }
    };
    (@persistent $persistent:ident ($($arg:ident: $ty:ty),*) => $build:expr) => {
        pub unsafe fn $persistent(
            $($arg: $ty,)*
            info: $crate::mpi_abi::types::MPI_Info,
            request: &mut $crate::mpi_abi::types::MPI_Request,
        ) -> MpiResult {
            $crate::abi::info::check_ignored(&$crate::core::runtime::lock(), info)?;
            // SAFETY: the arguments are this MPI call's, passed on unchanged;
            // MPI's contract for a persistent collective keeps its buffers
            // valid until the request is freed and untouched by the program
            // while a call of it is active, and the builder reads the arrays
            // before returning (the plan keeps copies).
            let plan = unsafe { $build }?;
            *request = $crate::core::collective::persistent::init(plan);
            Ok(())
        }
    };
    ($blocking:ident, $nonblocking:ident ($($arg:ident: $ty:ty),*) => $build:expr) => {
        pub unsafe fn $blocking($($arg: $ty),*) -> MpiResult {
            // SAFETY: the arguments are this MPI call's, passed on unchanged,
            // so the builder gets MPI's contract: the buffers and arrays stay
            // valid until the call returns, and `block` runs the collective
            // to its end before that.
            let call = $crate::core::collective::plan::Collective::once(unsafe { $build }?);
            $crate::core::collective::executor::block(call)
        }

        pub unsafe fn $nonblocking($($arg: $ty,)* request: &mut MPI_Request) -> MpiResult {
            // SAFETY: the arguments are this MPI call's, passed on unchanged;
            // MPI's contract for a nonblocking collective keeps its buffers
            // valid and untouched by the program until the request completes,
            // and the builder reads the arrays before returning.
            let call = $crate::core::collective::plan::Collective::once(unsafe { $build }?);
            *request = $crate::core::collective::executor::start(call)?;
            Ok(())
        }
    };
    // A collective intercommunicators have too: the blocking and the
    // nonblocking form of an intercommunicator's call go to the builder of
    // the same name in `collective::inter`.
    ($blocking:ident, $nonblocking:ident ($($arg:ident: $ty:ty),*)
        => inter($comm:ident) $build:ident($($barg:expr),* $(,)?)) => {
        pub unsafe fn $blocking($($arg: $ty),*) -> MpiResult {
            if $crate::abi::collective::inter::is_inter($comm)? {
                return $crate::core::collective::executor::block(
                    $crate::core::collective::plan::Collective::once(
                        // SAFETY: the MPI call's arguments, passed on
                        // unchanged: valid as MPI requires until the call
                        // returns, and `block` finishes the collective first.
                        unsafe { $crate::abi::collective::inter::$build($($barg),*) }?,
                    ),
                );
            }
            // SAFETY: the same arguments, to the intracommunicator builder:
            // valid until the call returns, and `block` waits for the end.
            let plan = unsafe { $build($($barg),*) }?;
            let call = $crate::core::collective::plan::Collective::once(plan);
            $crate::core::collective::executor::block(call)
        }

        pub unsafe fn $nonblocking($($arg: $ty,)* request: &mut MPI_Request) -> MpiResult {
            if $crate::abi::collective::inter::is_inter($comm)? {
                // SAFETY: the MPI call's arguments, passed on unchanged: MPI
                // keeps a nonblocking collective's buffers valid and untouched
                // until the request completes; the builder reads the arrays
                // before returning.
                let plan = unsafe { $crate::abi::collective::inter::$build($($barg),*) }?;
                let call = $crate::core::collective::plan::Collective::once(plan);
                *request = $crate::core::collective::executor::start(call)?;
                return Ok(());
            }
            // SAFETY: the MPI call's arguments, passed on unchanged; MPI keeps
            // a nonblocking collective's buffers valid and untouched by the
            // program until the request completes, and the builder reads the
            // arrays before returning.
            let plan = unsafe { $build($($barg),*) }?;
            let call = $crate::core::collective::plan::Collective::once(plan);
            *request = $crate::core::collective::executor::start(call)?;
            Ok(())
        }
    };
}
pub(crate) use blocking_and_nonblocking;
