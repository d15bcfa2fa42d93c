//! MPI semantics: handle tables, the instance and its epochs, communicators,
//! error handlers, error codes, info objects. No C types beyond handles; the
//! abi layer converts arguments before calling in here.
pub mod abort;
pub mod attributes;
pub mod collective;
pub mod comm;
pub mod comm_constructors;
pub mod context_numbers;
pub mod datatype;
pub mod epoch;
pub mod errhandler;
pub mod error;
pub mod error_codes;
pub mod failures;
#[cfg(test)]
mod fuzz;
pub mod group;
pub mod handles;
pub mod info;
pub mod intercomm;
pub mod io;
pub mod locks;
pub mod matching;
pub mod node_segment;
pub mod op;
pub mod p2p;
pub mod ports;
pub mod process;
pub mod progress;
pub mod pset;
pub mod rma;
pub mod runtime;
pub mod session;
pub mod spawn;
pub mod tool;
pub mod topology;
