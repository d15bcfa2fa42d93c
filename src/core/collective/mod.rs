//! Collective operations built on point-to-point. Each communicator has a
//! second context id for its collectives, so they never match the
//! program's own messages; each collective call on it takes the next tag
//! of its sequence, so calls in flight together never match each other's.
//! Algorithms are `async fn`s over a [`call::Call`], driven to the end on
//! the caller's thread for a blocking call or by the collective worker for
//! a nonblocking or persistent one ([`executor`], [`persistent`]), each
//! call made from a [`plan::Plan`]; they take log(p) rounds where the
//! usual ones do.
pub mod algorithms;
pub mod alltoall;
pub mod barrier;
pub mod bcast;
pub mod buffer;
pub mod call;
pub mod channel;
pub mod executor;
pub mod gather;
pub mod inter;
pub mod layout;
pub mod neighbor;
pub mod node;
pub mod persistent;
pub mod plan;
pub mod reduce;
pub mod scan;
pub mod scatter;
pub mod sequence;
pub mod tree;
