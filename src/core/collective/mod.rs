//! Collective operations built on point-to-point. Each communicator has a
//! second context id for its collectives, so they never match the
//! program's own messages; the algorithms take log(p) rounds where the
//! usual ones do.
pub mod algorithms;
pub mod channel;
