//! Sessions (MPI 4 chapter 11): a handle on the instance with its own error
//! handler, info and thread level. `MPI_Session_init` is local: it starts an
//! epoch if none is open (creating this epoch's transports and publishing
//! the card), otherwise joins the open one. The finalize of the last
//! session (and the world model) ends the epoch.
use std::os::raw::c_int;

use super::epoch::Epoch;
use super::info::InfoObject;
use crate::mpi_abi::types::MPI_Errhandler;

pub struct Session {
    pub errhandler: MPI_Errhandler,
    pub info: InfoObject,
    pub thread_level: c_int,
    /// The epoch it belongs to.
    pub epoch: Epoch,
}

/// The `thread_level` info value for a level.
pub fn thread_level_name(level: c_int) -> &'static str {
    match level {
        0 => "MPI_THREAD_SINGLE",
        1 => "MPI_THREAD_FUNNELED",
        2 => "MPI_THREAD_SERIALIZED",
        _ => "MPI_THREAD_MULTIPLE",
    }
}

/// A requested `thread_level` info value, if it names one.
pub fn parse_thread_level(value: &str) -> Option<c_int> {
    match value.trim().to_ascii_uppercase().as_str() {
        "MPI_THREAD_SINGLE" => Some(0),
        "MPI_THREAD_FUNNELED" => Some(1),
        "MPI_THREAD_SERIALIZED" => Some(2),
        "MPI_THREAD_MULTIPLE" => Some(3),
        _ => None,
    }
}
