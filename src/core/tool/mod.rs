//! The MPI tool information interface's contents (MPI 4.1 chapter 15):
//! the performance variables (cheap counters the engines keep).
pub mod pvars;
