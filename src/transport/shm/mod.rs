//! The shared-memory transport between processes of one node, and the
//! building blocks it stands on:
//! - [`segment`]: named POSIX shared-memory segments (create, open, unlink);
//! - [`ring`]: single-producer single-consumer rings of fixed-size cells
//!   living in a segment, with no syscall, lock or allocation per message;
//! - [`doorbell`]: a futex word on which a receiver sleeps and a sender wakes
//!   it, across processes;
//! - [`single_copy`]: `process_vm_readv` for large messages copied once;
//! - [`lock_word`]: a lock in shared memory, across processes (one-sided
//!   accumulates on a node's windows);
//! - [`node_board`]: where a communicator's members on one node meet for
//!   small blocking collectives;
//! - [`node_stage`]: where they put the data of their larger ones.

pub mod doorbell;
pub mod inbox;
pub mod lock_word;
pub mod node_board;
pub mod node_stage;
pub mod ring;
pub mod segment;
pub mod single_copy;

#[cfg(test)]
pub(crate) mod test_fork;
