//! Control variables: one per knob (`OXMPI_*`, and MPICH's
//! `MPIR_CVAR_FINALIZE_ATEXIT` and `MPIR_CVAR_QMPI_TOOL_LIST`), reading the
//! value in effect. Knobs are read once from the environment (see
//! `config`), so most are constant; the ones whose change takes effect at once are writable
//! (`MPI_T_SCOPE_LOCAL`: each process its own): `OXMPI_SHM_SINGLE_COPY`
//! (decided per message by its sender) and `OXMPI_SPIN_POLLS` (read by
//! every wait).
use crate::config::{self, TransportChoice};
use crate::core::error::{MpiError, MpiResult};
use crate::mpi_abi::constants::*;

use super::enums;

/// The C type of a variable's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CvarType {
    /// `MPI_INT` (also the type of enumerated variables).
    Int,
    /// `MPI_UNSIGNED`.
    Unsigned,
    /// `MPI_UNSIGNED_LONG_LONG`.
    UnsignedLongLong,
    /// `MPI_CHAR`: a NUL-terminated string.
    Char,
}

/// A variable's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CvarValue {
    Int(i32),
    Unsigned(u32),
    UnsignedLongLong(u64),
    Text(String),
}

impl CvarValue {
    /// The elements a buffer for this value holds (`count` of
    /// `MPI_T_cvar_handle_alloc`): one number, or the string and its NUL.
    pub fn count(&self) -> usize {
        match self {
            CvarValue::Text(s) => s.len() + 1,
            _ => 1,
        }
    }
}

/// One control variable.
pub struct Cvar {
    pub name: &'static str,
    pub desc: &'static str,
    pub verbosity: i32,
    pub datatype: CvarType,
    /// Index in [`enums::ENUMS`] of an enumerated variable.
    pub enumeration: Option<usize>,
    /// `MPI_T_SCOPE_CONSTANT`, or `MPI_T_SCOPE_LOCAL` for a writable one.
    pub scope: i32,
    pub read: fn() -> CvarValue,
    /// Sets the value (writable variables only); the value has the
    /// variable's type.
    pub write: Option<fn(&CvarValue) -> MpiResult>,
}

fn flag(on: bool) -> CvarValue {
    CvarValue::Int(on as i32)
}

/// A knob that is `0`, `1` or `auto` (`None`), as its enumeration numbers
/// them: 0, 1, 2.
fn auto_flag(choice: Option<bool>) -> CvarValue {
    CvarValue::Int(match choice {
        Some(false) => 0,
        Some(true) => 1,
        None => 2,
    })
}

fn text(s: Option<&str>) -> CvarValue {
    CvarValue::Text(s.unwrap_or_default().to_string())
}

fn write_single_copy(value: &CvarValue) -> MpiResult {
    match value {
        CvarValue::Int(v) => {
            config::set_shm_single_copy(*v);
            Ok(())
        }
        _ => Err(wrong_type()),
    }
}

fn write_spin_polls(value: &CvarValue) -> MpiResult {
    match value {
        CvarValue::Unsigned(v) => {
            crate::core::progress::set_spin_polls(*v);
            Ok(())
        }
        _ => Err(wrong_type()),
    }
}

fn wrong_type() -> MpiError {
    MpiError::new(MPI_T_ERR_INVALID, "value of the wrong type")
}

const CONSTANT: i32 = MPI_T_SCOPE_CONSTANT;

/// The QMPI tool list under one of its two names (both read the same
/// value).
const fn qmpi_tool_list(name: &'static str, desc: &'static str) -> Cvar {
    Cvar {
        name,
        desc,
        verbosity: MPI_T_VERBOSITY_USER_BASIC,
        datatype: CvarType::Char,
        enumeration: None,
        scope: CONSTANT,
        read: || text(config::get().qmpi_tool_list.as_deref()),
        write: None,
    }
}

pub static CVARS: [Cvar; 24] = [
    Cvar {
        name: "MPIR_CVAR_FINALIZE_ATEXIT",
        desc: "1: transports and the PMI connection outlive the last finalize, are reused by the next epoch and torn down at exit (MPICH's name; same as OXMPI_FINALIZE_ATEXIT)",
        verbosity: MPI_T_VERBOSITY_USER_BASIC,
        datatype: CvarType::Int,
        enumeration: None,
        scope: CONSTANT,
        read: || flag(config::get().finalize_atexit),
        write: None,
    },
    Cvar {
        name: "OXMPI_FINALIZE_ATEXIT",
        desc: "1: transports and the PMI connection outlive the last finalize, are reused by the next epoch and torn down at exit",
        verbosity: MPI_T_VERBOSITY_USER_BASIC,
        datatype: CvarType::Int,
        enumeration: None,
        scope: CONSTANT,
        read: || flag(config::get().finalize_atexit),
        write: None,
    },
    Cvar {
        name: "OXMPI_LOG",
        desc: "env_logger filter of oxmpi's diagnostics on stderr (empty: silent)",
        verbosity: MPI_T_VERBOSITY_USER_DETAIL,
        datatype: CvarType::Char,
        enumeration: None,
        scope: CONSTANT,
        read: || text(config::get().log_filter.as_deref()),
        write: None,
    },
    Cvar {
        name: "OXMPI_HOSTNAME",
        desc: "host name of this node's identity (the system's unless OXMPI_HOSTNAME sets one)",
        verbosity: MPI_T_VERBOSITY_USER_DETAIL,
        datatype: CvarType::Char,
        enumeration: None,
        scope: CONSTANT,
        read: || {
            CvarValue::Text(
                config::get()
                    .hostname
                    .clone()
                    .unwrap_or_else(crate::bootstrap::node::hostname),
            )
        },
        write: None,
    },
    Cvar {
        name: "OXMPI_SHM_SINGLE_COPY",
        desc: "nonzero: shared-memory messages of 64 KiB and more are copied once (process_vm_readv) where the kernel allows, and so are puts and gets on MPI_Win_create memory of the node's ranks (process_vm_writev/readv); 0: messages through the rings. Writable: takes effect at the next message sent, and for windows at the next MPI_Win_create",
        verbosity: MPI_T_VERBOSITY_TUNER_BASIC,
        datatype: CvarType::Int,
        enumeration: None,
        scope: MPI_T_SCOPE_LOCAL,
        read: || CvarValue::Int(config::shm_single_copy_value()),
        write: Some(write_single_copy),
    },
    Cvar {
        name: "OXMPI_SHM_SEGMENTS",
        desc: "auto: anonymous shared-memory inboxes where the kernel can share them; named: named segments in /dev/shm",
        verbosity: MPI_T_VERBOSITY_TUNER_DETAIL,
        datatype: CvarType::Int,
        enumeration: Some(enums::SHM_SEGMENTS),
        scope: CONSTANT,
        read: || CvarValue::Int(config::get().shm_named_segments as i32),
        write: None,
    },
    Cvar {
        name: "OXMPI_SHM_SHARED_COPY",
        desc: "auto (when this node's ranks fit on its cores), 1 or 0: whether sender and receiver share the copy of a large single-copy message",
        verbosity: MPI_T_VERBOSITY_TUNER_DETAIL,
        datatype: CvarType::Int,
        enumeration: Some(enums::SHM_SHARED_COPY),
        scope: CONSTANT,
        read: || auto_flag(config::get().shm_shared_copy),
        write: None,
    },
    Cvar {
        name: "OXMPI_INITIAL_ERRHANDLER",
        desc: "the handler of errors outside any object while the world model is not active: fatal, return or abort",
        verbosity: MPI_T_VERBOSITY_USER_BASIC,
        datatype: CvarType::Int,
        enumeration: Some(enums::INITIAL_ERRHANDLER),
        scope: CONSTANT,
        read: || {
            CvarValue::Int(match config::get().initial_errhandler {
                MPI_ERRORS_RETURN => 1,
                MPI_ERRORS_ABORT => 2,
                _ => 0,
            })
        },
        write: None,
    },
    Cvar {
        name: "OXMPI_TRANSPORT",
        desc: "auto: shared memory within a node, TCP between nodes; tcp: TCP for every peer; shm: no TCP",
        verbosity: MPI_T_VERBOSITY_USER_BASIC,
        datatype: CvarType::Int,
        enumeration: Some(enums::TRANSPORT),
        scope: CONSTANT,
        read: || {
            CvarValue::Int(match config::get().transport {
                TransportChoice::Auto => 0,
                TransportChoice::Tcp => 1,
                TransportChoice::Shm => 2,
            })
        },
        write: None,
    },
    Cvar {
        name: "OXMPI_IFACE",
        desc: "interface or address the TCP transport listens on (empty: loopback for a job on one node, else the first interface that is up)",
        verbosity: MPI_T_VERBOSITY_USER_DETAIL,
        datatype: CvarType::Char,
        enumeration: None,
        scope: CONSTANT,
        read: || text(config::get().iface.as_deref()),
        write: None,
    },
    Cvar {
        name: "OXMPI_SPIN_POLLS",
        desc: "polls a blocking call makes before it starts yielding the CPU (default: 32768 when each rank has a core of its own, 0 otherwise: see OXMPI_OWN_CORE). Writable: takes effect at the next wait",
        verbosity: MPI_T_VERBOSITY_TUNER_BASIC,
        datatype: CvarType::Unsigned,
        enumeration: None,
        scope: MPI_T_SCOPE_LOCAL,
        read: || CvarValue::Unsigned(crate::core::progress::spin_polls()),
        write: Some(write_spin_polls),
    },
    Cvar {
        name: "OXMPI_OWN_CORE",
        desc: "auto (when this node's ranks are no more than the CPUs a process may use), 1 or 0: whether each rank counts as having a core of its own, which sets how long waits spin and some collectives' algorithms",
        verbosity: MPI_T_VERBOSITY_TUNER_DETAIL,
        datatype: CvarType::Int,
        enumeration: Some(enums::OWN_CORE),
        scope: CONSTANT,
        read: || auto_flag(config::get().own_core),
        write: None,
    },
    Cvar {
        name: "OXMPI_NODE_COLLECTIVES",
        desc: "1 (default) or 0: blocking barriers, broadcasts, allreduces and all-to-alls on communicators whose members all live on one node meet in shared memory (a board, and a stage for larger data) instead of passing messages; must be the same at every process",
        verbosity: MPI_T_VERBOSITY_TUNER_BASIC,
        datatype: CvarType::Int,
        enumeration: None,
        scope: CONSTANT,
        read: || flag(config::get().node_collectives),
        write: None,
    },
    Cvar {
        name: "OXMPI_UNEXPECTED_LIMIT",
        desc: "bytes of unexpected eager data a process may have to hold, shared among the job's processes; beyond it small messages go as rendezvous",
        verbosity: MPI_T_VERBOSITY_TUNER_BASIC,
        datatype: CvarType::UnsignedLongLong,
        enumeration: None,
        scope: CONSTANT,
        read: || CvarValue::UnsignedLongLong(config::get().unexpected_limit),
        write: None,
    },
    Cvar {
        name: "OXMPI_JOBID",
        desc: "the job's id, set by oxmpi's mpiexec (empty under another launcher)",
        verbosity: MPI_T_VERBOSITY_MPIDEV_BASIC,
        datatype: CvarType::Char,
        enumeration: None,
        scope: CONSTANT,
        read: || text(config::get().job_id.as_deref()),
        write: None,
    },
    Cvar {
        name: "OXMPI_PSETS",
        desc: "extra process sets, name=ranks;name=ranks (set by mpiexec -pset)",
        verbosity: MPI_T_VERBOSITY_USER_DETAIL,
        datatype: CvarType::Char,
        enumeration: None,
        scope: CONSTANT,
        read: || text(config::get().psets.as_deref()),
        write: None,
    },
    Cvar {
        name: "OXMPI_JOB_SECRET",
        desc: "the secret authenticating PMI and TCP connections, set by mpiexec; never shown: reads (hidden) when set, empty otherwise",
        verbosity: MPI_T_VERBOSITY_MPIDEV_BASIC,
        datatype: CvarType::Char,
        enumeration: None,
        scope: CONSTANT,
        read: || text(config::get().job_secret.as_ref().map(|_| "(hidden)")),
        write: None,
    },
    Cvar {
        name: "OXMPI_LAUNCHER_PID",
        desc: "the process that started this rank, the one tracer it admits under Yama ptrace_scope=1 (default: the parent process)",
        verbosity: MPI_T_VERBOSITY_MPIDEV_BASIC,
        datatype: CvarType::Int,
        enumeration: None,
        scope: CONSTANT,
        read: || {
            CvarValue::Int(
                config::get()
                    .launcher_pid
                    .unwrap_or_else(|| std::os::unix::process::parent_id() as i32),
            )
        },
        write: None,
    },
    Cvar {
        name: "OXMPI_FAILURE_NOTICES",
        desc: "1 (set by mpiexec -disable-auto-cleanup): the launcher reports failed ranks, and operations waiting on them fail",
        verbosity: MPI_T_VERBOSITY_USER_DETAIL,
        datatype: CvarType::Int,
        enumeration: None,
        scope: CONSTANT,
        read: || flag(config::get().failure_notices),
        write: None,
    },
    Cvar {
        name: "OXMPI_PMI",
        desc: "the PMI version spoken to the launcher: 1 (default), 2, auto (2, else 1 when the launcher refuses 2), or pmix (PMIx, chosen anyway when only a PMIx server is in the environment)",
        verbosity: MPI_T_VERBOSITY_USER_DETAIL,
        datatype: CvarType::Char,
        enumeration: None,
        scope: CONSTANT,
        read: || {
            text(Some(match config::get().pmi {
                config::PmiChoice::V1 => "1",
                config::PmiChoice::V2 => "2",
                config::PmiChoice::Auto => "auto",
                config::PmiChoice::Pmix => "pmix",
            }))
        },
        write: None,
    },
    Cvar {
        name: "OXMPI_PMIX_LIBRARY",
        desc: "the PMIx client library loaded under a PMIx launcher (srun --mpi=pmix, Open MPI's mpirun)",
        verbosity: MPI_T_VERBOSITY_USER_DETAIL,
        datatype: CvarType::Char,
        enumeration: None,
        scope: CONSTANT,
        read: || {
            text(Some(
                config::get()
                    .pmix_library
                    .as_deref()
                    .unwrap_or(crate::bootstrap::pmi::pmix::DEFAULT_LIBRARY),
            ))
        },
        write: None,
    },
    Cvar {
        name: "OXMPI_CC",
        desc: "the C compiler mpicc runs (read by mpicc, not the library; shown as the environment gave it)",
        verbosity: MPI_T_VERBOSITY_USER_DETAIL,
        datatype: CvarType::Char,
        enumeration: None,
        scope: CONSTANT,
        read: || text(config::get().cc.as_deref()),
        write: None,
    },
    qmpi_tool_list(
        "OXMPI_QMPI_TOOL_LIST",
        "the QMPI tools chained in front of the library, in order, separated by ':'",
    ),
    qmpi_tool_list(
        "MPIR_CVAR_QMPI_TOOL_LIST",
        "MPICH's name of OXMPI_QMPI_TOOL_LIST: the QMPI tools chained, separated by ':'",
    ),
];

/// The index of the variable called `name`.
pub fn index_of(name: &str) -> Option<usize> {
    CVARS.iter().position(|c| c.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_found() {
        for (i, c) in CVARS.iter().enumerate() {
            assert_eq!(index_of(c.name), Some(i), "{}", c.name);
        }
        assert_eq!(index_of("OXMPI_NO_SUCH_KNOB"), None);
        assert_eq!(index_of("oxmpi_transport"), None, "names are exact");
    }

    #[test]
    fn every_value_has_its_variable_s_type() {
        for c in &CVARS {
            let value = (c.read)();
            let matches = matches!(
                (c.datatype, &value),
                (CvarType::Int, CvarValue::Int(_))
                    | (CvarType::Unsigned, CvarValue::Unsigned(_))
                    | (CvarType::UnsignedLongLong, CvarValue::UnsignedLongLong(_))
                    | (CvarType::Char, CvarValue::Text(_))
            );
            assert!(matches, "{}: {value:?}", c.name);
            if let (Some(e), CvarValue::Int(v)) = (c.enumeration, &value) {
                assert!(enums::ENUMS[e].name_of(*v).is_some(), "{}", c.name);
            }
            assert_eq!(
                c.write.is_some(),
                c.scope == MPI_T_SCOPE_LOCAL,
                "{}: writable exactly when its scope says",
                c.name
            );
        }
    }

    #[test]
    fn every_knob_of_the_readme_has_a_variable() {
        let readme = include_str!("../../../README.md");
        let table = readme
            .split("## Knobs")
            .nth(1)
            .and_then(|s| s.split("\n## ").next())
            .expect("README has a knob table");
        for word in table.split('`') {
            if word.starts_with("OXMPI_")
                && word.chars().all(|c| c.is_ascii_uppercase() || c == '_')
            {
                assert!(index_of(word).is_some(), "{word} has no control variable");
            }
        }
    }
}
