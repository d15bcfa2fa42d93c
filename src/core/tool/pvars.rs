//! Performance variables: counters the engines keep with relaxed atomics,
//! read by MPI_T. Their writers all run under the runtime lock (the engine
//! and the epochs live behind it), so an update is a plain load and store
//! (`transport::counters::add`), no locked instruction on the message path. All are continuous (they
//! run from the start of the process, across epochs, and cannot be
//! stopped) and bound to no object. A counter's handle counts from its own
//! baseline, so resetting or writing one handle leaves the others alone;
//! the queue length and its high-water mark are read-only.
use std::sync::atomic::{AtomicU64, Ordering};

use crate::mpi_abi::constants::*;
use crate::transport::counters;

/// A level with its high-water mark (the unexpected queue's length).
pub struct Gauge {
    level: AtomicU64,
    high: AtomicU64,
}

impl Gauge {
    pub const fn new() -> Gauge {
        Gauge {
            level: AtomicU64::new(0),
            high: AtomicU64::new(0),
        }
    }

    /// One more (writers serialized, see the module documentation).
    #[inline]
    pub fn rise(&self) {
        let level = self.level.load(Ordering::Relaxed) + 1;
        self.level.store(level, Ordering::Relaxed);
        if level > self.high.load(Ordering::Relaxed) {
            self.high.store(level, Ordering::Relaxed);
        }
    }

    /// `n` fewer (writers serialized).
    #[inline]
    pub fn fall(&self, n: u64) {
        if n > 0 {
            let level = self.level.load(Ordering::Relaxed);
            self.level.store(level.saturating_sub(n), Ordering::Relaxed);
        }
    }

    pub fn level(&self) -> u64 {
        self.level.load(Ordering::Relaxed)
    }

    pub fn high(&self) -> u64 {
        self.high.load(Ordering::Relaxed)
    }
}

impl Default for Gauge {
    fn default() -> Gauge {
        Gauge::new()
    }
}

/// Messages in the unexpected queue (see `core::matching`).
pub static UNEXPECTED_MESSAGES: Gauge = Gauge::new();
/// Sends that went as a rendezvous (a request-to-send first).
pub static RENDEZVOUS_SENDS: AtomicU64 = AtomicU64::new(0);
/// Blocking collective calls that met on a communicator's node board
/// (see `core::collective::node`).
pub static NODE_BOARD_CALLS: AtomicU64 = AtomicU64::new(0);
/// Puts and gets on `MPI_Win_create` memory of this node's ranks done by
/// single copy (see `rma::window::SingleCopyTarget`).
pub static RMA_SINGLE_COPY_OPS: AtomicU64 = AtomicU64::new(0);
/// Accumulates (of every kind) this process applied with hardware atomics
/// (windows created with `acc_single_intrinsic=true`).
pub static RMA_HARDWARE_ATOMICS: AtomicU64 = AtomicU64::new(0);
/// Epochs this process started (see `core::epoch`).
pub static EPOCHS_STARTED: AtomicU64 = AtomicU64::new(0);

/// Adds one to `counter` (writers serialized, see the module
/// documentation).
#[inline]
pub fn count(counter: &AtomicU64) {
    counters::add(counter, 1);
}

/// One performance variable (type `MPI_UNSIGNED_LONG_LONG`).
pub struct Pvar {
    pub name: &'static str,
    pub desc: &'static str,
    /// `MPI_T_PVAR_CLASS_*`.
    pub class: i32,
    pub verbosity: i32,
    /// Whether handles may not be reset or written (a level and its
    /// high-water mark); counters may.
    pub readonly: bool,
    /// The value since the process began.
    pub read: fn() -> u64,
}

pub static PVARS: [Pvar; 11] = [
    Pvar {
        name: "oxmpi_shm_messages_sent",
        desc: "messages this process sent through shared memory (to processes of its node; messages to itself count nowhere)",
        class: MPI_T_PVAR_CLASS_COUNTER,
        verbosity: MPI_T_VERBOSITY_USER_BASIC,
        readonly: false,
        read: || counters::SHM.messages(),
    },
    Pvar {
        name: "oxmpi_shm_bytes_sent",
        desc: "bytes of the messages this process sent through shared memory",
        class: MPI_T_PVAR_CLASS_COUNTER,
        verbosity: MPI_T_VERBOSITY_USER_BASIC,
        readonly: false,
        read: || counters::SHM.bytes(),
    },
    Pvar {
        name: "oxmpi_tcp_messages_sent",
        desc: "messages this process sent through TCP",
        class: MPI_T_PVAR_CLASS_COUNTER,
        verbosity: MPI_T_VERBOSITY_USER_BASIC,
        readonly: false,
        read: || counters::TCP.messages(),
    },
    Pvar {
        name: "oxmpi_tcp_bytes_sent",
        desc: "bytes of the messages this process sent through TCP",
        class: MPI_T_PVAR_CLASS_COUNTER,
        verbosity: MPI_T_VERBOSITY_USER_BASIC,
        readonly: false,
        read: || counters::TCP.bytes(),
    },
    Pvar {
        name: "oxmpi_unexpected_queue_length",
        desc: "messages that arrived before a matching receive was posted and wait in the unexpected queue",
        class: MPI_T_PVAR_CLASS_LEVEL,
        verbosity: MPI_T_VERBOSITY_USER_DETAIL,
        readonly: true,
        read: || UNEXPECTED_MESSAGES.level(),
    },
    Pvar {
        name: "oxmpi_unexpected_queue_highwater",
        desc: "the longest the unexpected queue has been since the process began",
        class: MPI_T_PVAR_CLASS_HIGHWATERMARK,
        verbosity: MPI_T_VERBOSITY_USER_DETAIL,
        readonly: true,
        read: || UNEXPECTED_MESSAGES.high(),
    },
    Pvar {
        name: "oxmpi_rendezvous_sends",
        desc: "sends that went by rendezvous (large messages, or small ones beyond the eager credit)",
        class: MPI_T_PVAR_CLASS_COUNTER,
        verbosity: MPI_T_VERBOSITY_TUNER_BASIC,
        readonly: false,
        read: || RENDEZVOUS_SENDS.load(Ordering::Relaxed),
    },
    Pvar {
        name: "oxmpi_node_board_calls",
        desc: "blocking barriers, broadcasts, allreduces and all-to-alls this process made on a communicator's board in shared memory (their larger data then goes through the board's stage, or as messages where the stage does not take it)",
        class: MPI_T_PVAR_CLASS_COUNTER,
        verbosity: MPI_T_VERBOSITY_TUNER_BASIC,
        readonly: false,
        read: || NODE_BOARD_CALLS.load(Ordering::Relaxed),
    },
    Pvar {
        name: "oxmpi_rma_single_copy_ops",
        desc: "MPI_Put and MPI_Get calls (and their request forms) on MPI_Win_create memory of a rank of this node that copied the data straight into or out of it (process_vm_writev/readv, or a plain copy on this rank's own memory) instead of sending a message",
        class: MPI_T_PVAR_CLASS_COUNTER,
        verbosity: MPI_T_VERBOSITY_TUNER_BASIC,
        readonly: false,
        read: || RMA_SINGLE_COPY_OPS.load(Ordering::Relaxed),
    },
    Pvar {
        name: "oxmpi_rma_hardware_atomics",
        desc: "accumulates, get-accumulates, fetch-and-ops and compare-and-swaps this process applied with atomic instructions on the elements (windows created with the info acc_single_intrinsic=true), not under the memory's lock",
        class: MPI_T_PVAR_CLASS_COUNTER,
        verbosity: MPI_T_VERBOSITY_TUNER_BASIC,
        readonly: false,
        read: || RMA_HARDWARE_ATOMICS.load(Ordering::Relaxed),
    },
    Pvar {
        name: "oxmpi_epochs_started",
        desc: "epochs this process started (an init with no instance live starts one)",
        class: MPI_T_PVAR_CLASS_COUNTER,
        verbosity: MPI_T_VERBOSITY_USER_BASIC,
        readonly: false,
        read: || EPOCHS_STARTED.load(Ordering::Relaxed),
    },
];

/// The index of the variable called `name` of class `class`.
pub fn index_of(name: &str, class: i32) -> Option<usize> {
    PVARS
        .iter()
        .position(|p| p.name == name && p.class == class)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_found_with_their_class() {
        for (i, p) in PVARS.iter().enumerate() {
            assert_eq!(index_of(p.name, p.class), Some(i), "{}", p.name);
            assert_eq!(
                PVARS.iter().filter(|q| q.name == p.name).count(),
                1,
                "{}",
                p.name
            );
        }
        assert_eq!(
            index_of("oxmpi_shm_messages_sent", MPI_T_PVAR_CLASS_LEVEL),
            None,
            "the class must match too"
        );
        assert_eq!(index_of("no_such_pvar", MPI_T_PVAR_CLASS_COUNTER), None);
    }

    #[test]
    fn a_gauge_keeps_its_high_water_mark() {
        let g = Gauge::new();
        g.rise();
        g.rise();
        g.rise();
        g.fall(2);
        g.rise();
        assert_eq!((g.level(), g.high()), (2, 3));
        g.fall(0);
        assert_eq!(g.level(), 2);
    }
}
