//! MPI semantics: handle tables, the instance and its epochs, communicators,
//! error handlers, error codes, info objects. No C types beyond handles; the
//! abi layer converts arguments before calling in here.
pub mod abort;
pub mod comm;
pub mod errhandler;
pub mod error;
pub mod error_codes;
pub mod handles;
pub mod info;
pub mod instance;
pub mod runtime;
