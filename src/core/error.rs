//! MPI errors inside oxmpi: an error class plus a specific message. The abi
//! boundary turns one into an error code (see `error_codes`) and hands it to
//! the error handler of the object the failing call was about.
use std::os::raw::c_int;

use crate::mpi_abi::constants::*;

/// An MPI error: its class (`MPI_ERR_*`) and what exactly went wrong.
///
/// One pointer wide (the parts live in a box, read through `Deref`), so
/// that an `MpiResult` of a small value comes back in registers: every call
/// on the message path returns one, and an error is the rare case.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{} ({}): {}", class_text(self.class), class_name(self.class), self.detail)]
pub struct MpiError(Box<ErrorParts>);

/// What an [`MpiError`] holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ErrorParts {
    pub class: c_int,
    pub detail: String,
    /// A code to report as it is instead of a new one (a user-defined
    /// code or class a program's callback returned: the caller gets it
    /// back, with the string the program gave it, as in MPICH).
    pub code: Option<c_int>,
}

impl std::ops::Deref for MpiError {
    type Target = ErrorParts;
    fn deref(&self) -> &ErrorParts {
        &self.0
    }
}

pub type MpiResult<T = ()> = Result<T, MpiError>;

impl MpiError {
    #[cold]
    pub fn new(class: c_int, detail: impl Into<String>) -> Self {
        MpiError(Box::new(ErrorParts {
            class,
            detail: detail.into(),
            code: None,
        }))
    }

    /// An error reported as `code` itself, of class `class`.
    #[cold]
    pub fn with_code(code: c_int, class: c_int, detail: impl Into<String>) -> Self {
        MpiError(Box::new(ErrorParts {
            class,
            detail: detail.into(),
            code: Some(code),
        }))
    }
}

/// Shorthand: `Err(mpi_err!(MPI_ERR_ARG, "count {} is negative", count))`.
#[macro_export]
macro_rules! mpi_err {
    ($class:expr, $($fmt:tt)+) => {
        $crate::core::error::MpiError::new($class, format!($($fmt)+))
    };
}

/// The constant's name of a predefined error class, e.g. `MPI_ERR_COMM`.
pub fn class_name(class: c_int) -> &'static str {
    CLASS_TABLE
        .iter()
        .find(|(c, _, _)| *c == class)
        .map(|(_, name, _)| *name)
        .unwrap_or("user-defined class")
}

/// The general meaning of a predefined error class.
pub fn class_text(class: c_int) -> &'static str {
    CLASS_TABLE
        .iter()
        .find(|(c, _, _)| *c == class)
        .map(|(_, _, text)| *text)
        .unwrap_or("User-defined error")
}

/// Whether `class` is one of the predefined classes.
pub fn is_predefined_class(class: c_int) -> bool {
    CLASS_TABLE.iter().any(|(c, _, _)| *c == class)
}

const CLASS_TABLE: &[(c_int, &str, &str)] = &[
    (MPI_SUCCESS, "MPI_SUCCESS", "No MPI error"),
    (MPI_ERR_BUFFER, "MPI_ERR_BUFFER", "Invalid buffer pointer"),
    (MPI_ERR_COUNT, "MPI_ERR_COUNT", "Invalid count argument"),
    (MPI_ERR_TYPE, "MPI_ERR_TYPE", "Invalid datatype argument"),
    (MPI_ERR_TAG, "MPI_ERR_TAG", "Invalid tag argument"),
    (MPI_ERR_COMM, "MPI_ERR_COMM", "Invalid communicator"),
    (MPI_ERR_RANK, "MPI_ERR_RANK", "Invalid rank"),
    (MPI_ERR_ROOT, "MPI_ERR_ROOT", "Invalid root"),
    (MPI_ERR_GROUP, "MPI_ERR_GROUP", "Invalid group"),
    (MPI_ERR_OP, "MPI_ERR_OP", "Invalid operation"),
    (MPI_ERR_TOPOLOGY, "MPI_ERR_TOPOLOGY", "Invalid topology"),
    (MPI_ERR_DIMS, "MPI_ERR_DIMS", "Invalid dimension argument"),
    (MPI_ERR_ARG, "MPI_ERR_ARG", "Invalid argument"),
    (MPI_ERR_UNKNOWN, "MPI_ERR_UNKNOWN", "Unknown error"),
    (MPI_ERR_TRUNCATE, "MPI_ERR_TRUNCATE", "Message truncated"),
    (MPI_ERR_OTHER, "MPI_ERR_OTHER", "Other MPI error"),
    (MPI_ERR_INTERN, "MPI_ERR_INTERN", "Internal MPI error"),
    (
        MPI_ERR_IN_STATUS,
        "MPI_ERR_IN_STATUS",
        "See the MPI_ERROR field in MPI_Status",
    ),
    (MPI_ERR_PENDING, "MPI_ERR_PENDING", "Pending request"),
    (MPI_ERR_REQUEST, "MPI_ERR_REQUEST", "Invalid request"),
    (MPI_ERR_ACCESS, "MPI_ERR_ACCESS", "Permission denied"),
    (MPI_ERR_AMODE, "MPI_ERR_AMODE", "Invalid file access mode"),
    (MPI_ERR_BAD_FILE, "MPI_ERR_BAD_FILE", "Invalid file name"),
    (
        MPI_ERR_CONVERSION,
        "MPI_ERR_CONVERSION",
        "Data conversion error",
    ),
    (
        MPI_ERR_DUP_DATAREP,
        "MPI_ERR_DUP_DATAREP",
        "Data representation already defined",
    ),
    (MPI_ERR_FILE_EXISTS, "MPI_ERR_FILE_EXISTS", "File exists"),
    (MPI_ERR_FILE_IN_USE, "MPI_ERR_FILE_IN_USE", "File in use"),
    (MPI_ERR_FILE, "MPI_ERR_FILE", "Invalid file handle"),
    (MPI_ERR_INFO, "MPI_ERR_INFO", "Invalid info object"),
    (MPI_ERR_INFO_KEY, "MPI_ERR_INFO_KEY", "Invalid info key"),
    (
        MPI_ERR_INFO_VALUE,
        "MPI_ERR_INFO_VALUE",
        "Invalid info value",
    ),
    (
        MPI_ERR_INFO_NOKEY,
        "MPI_ERR_INFO_NOKEY",
        "Info key not defined",
    ),
    (MPI_ERR_IO, "MPI_ERR_IO", "I/O error"),
    (MPI_ERR_NAME, "MPI_ERR_NAME", "Invalid service name"),
    (MPI_ERR_NO_MEM, "MPI_ERR_NO_MEM", "Out of memory"),
    (
        MPI_ERR_NOT_SAME,
        "MPI_ERR_NOT_SAME",
        "Collective arguments differ between processes",
    ),
    (MPI_ERR_NO_SPACE, "MPI_ERR_NO_SPACE", "Not enough space"),
    (MPI_ERR_NO_SUCH_FILE, "MPI_ERR_NO_SUCH_FILE", "No such file"),
    (MPI_ERR_PORT, "MPI_ERR_PORT", "Invalid port"),
    (MPI_ERR_QUOTA, "MPI_ERR_QUOTA", "Quota exceeded"),
    (
        MPI_ERR_READ_ONLY,
        "MPI_ERR_READ_ONLY",
        "Read-only file or file system",
    ),
    (MPI_ERR_SERVICE, "MPI_ERR_SERVICE", "Invalid service"),
    (MPI_ERR_SPAWN, "MPI_ERR_SPAWN", "Error spawning processes"),
    (
        MPI_ERR_UNSUPPORTED_DATAREP,
        "MPI_ERR_UNSUPPORTED_DATAREP",
        "Unsupported data representation",
    ),
    (
        MPI_ERR_UNSUPPORTED_OPERATION,
        "MPI_ERR_UNSUPPORTED_OPERATION",
        "Unsupported operation",
    ),
    (MPI_ERR_WIN, "MPI_ERR_WIN", "Invalid window"),
    (MPI_ERR_BASE, "MPI_ERR_BASE", "Invalid base address"),
    (MPI_ERR_LOCKTYPE, "MPI_ERR_LOCKTYPE", "Invalid lock type"),
    (MPI_ERR_KEYVAL, "MPI_ERR_KEYVAL", "Invalid keyval"),
    (
        MPI_ERR_RMA_CONFLICT,
        "MPI_ERR_RMA_CONFLICT",
        "Conflicting RMA accesses",
    ),
    (
        MPI_ERR_RMA_SYNC,
        "MPI_ERR_RMA_SYNC",
        "Wrong RMA synchronization",
    ),
    (MPI_ERR_SIZE, "MPI_ERR_SIZE", "Invalid size"),
    (MPI_ERR_DISP, "MPI_ERR_DISP", "Invalid displacement"),
    (MPI_ERR_ASSERT, "MPI_ERR_ASSERT", "Invalid assert"),
    (
        MPI_ERR_RMA_RANGE,
        "MPI_ERR_RMA_RANGE",
        "RMA target out of range",
    ),
    (
        MPI_ERR_RMA_ATTACH,
        "MPI_ERR_RMA_ATTACH",
        "Memory cannot be attached",
    ),
    (
        MPI_ERR_RMA_SHARED,
        "MPI_ERR_RMA_SHARED",
        "Memory cannot be shared",
    ),
    (
        MPI_ERR_RMA_FLAVOR,
        "MPI_ERR_RMA_FLAVOR",
        "Wrong window flavor",
    ),
    (
        MPI_T_ERR_MEMORY,
        "MPI_T_ERR_MEMORY",
        "Out of memory (tool interface)",
    ),
    (
        MPI_T_ERR_NOT_INITIALIZED,
        "MPI_T_ERR_NOT_INITIALIZED",
        "Tool interface not initialized",
    ),
    (
        MPI_T_ERR_CANNOT_INIT,
        "MPI_T_ERR_CANNOT_INIT",
        "Tool interface cannot be initialized",
    ),
    (
        MPI_T_ERR_INVALID_INDEX,
        "MPI_T_ERR_INVALID_INDEX",
        "Invalid tool index",
    ),
    (
        MPI_T_ERR_INVALID_ITEM,
        "MPI_T_ERR_INVALID_ITEM",
        "Invalid tool item",
    ),
    (
        MPI_T_ERR_INVALID_HANDLE,
        "MPI_T_ERR_INVALID_HANDLE",
        "Invalid tool handle",
    ),
    (
        MPI_T_ERR_OUT_OF_HANDLES,
        "MPI_T_ERR_OUT_OF_HANDLES",
        "Out of tool handles",
    ),
    (
        MPI_T_ERR_OUT_OF_SESSIONS,
        "MPI_T_ERR_OUT_OF_SESSIONS",
        "Out of tool sessions",
    ),
    (
        MPI_T_ERR_INVALID_SESSION,
        "MPI_T_ERR_INVALID_SESSION",
        "Invalid tool session",
    ),
    (
        MPI_T_ERR_CVAR_SET_NOT_NOW,
        "MPI_T_ERR_CVAR_SET_NOT_NOW",
        "Control variable cannot be set now",
    ),
    (
        MPI_T_ERR_CVAR_SET_NEVER,
        "MPI_T_ERR_CVAR_SET_NEVER",
        "Control variable can never be set",
    ),
    (
        MPI_T_ERR_PVAR_NO_STARTSTOP,
        "MPI_T_ERR_PVAR_NO_STARTSTOP",
        "Performance variable cannot be started or stopped",
    ),
    (
        MPI_T_ERR_PVAR_NO_WRITE,
        "MPI_T_ERR_PVAR_NO_WRITE",
        "Performance variable cannot be written",
    ),
    (
        MPI_T_ERR_PVAR_NO_ATOMIC,
        "MPI_T_ERR_PVAR_NO_ATOMIC",
        "Performance variable cannot be accessed atomically",
    ),
    (
        MPI_T_ERR_INVALID_NAME,
        "MPI_T_ERR_INVALID_NAME",
        "Invalid tool variable name",
    ),
    (
        MPI_T_ERR_INVALID,
        "MPI_T_ERR_INVALID",
        "Invalid tool interface use",
    ),
    (MPI_ERR_SESSION, "MPI_ERR_SESSION", "Invalid session"),
    (
        MPI_ERR_PROC_ABORTED,
        "MPI_ERR_PROC_ABORTED",
        "Process aborted",
    ),
    (
        MPI_ERR_VALUE_TOO_LARGE,
        "MPI_ERR_VALUE_TOO_LARGE",
        "Value too large",
    ),
    (
        MPI_T_ERR_NOT_SUPPORTED,
        "MPI_T_ERR_NOT_SUPPORTED",
        "Not supported by the tool interface",
    ),
    (
        MPIX_ERR_PROC_FAILED,
        "MPIX_ERR_PROC_FAILED",
        "Process failed",
    ),
    (
        MPIX_ERR_PROC_FAILED_PENDING,
        "MPIX_ERR_PROC_FAILED_PENDING",
        "Process failed (pending operation)",
    ),
    (MPIX_ERR_REVOKED, "MPIX_ERR_REVOKED", "Communicator revoked"),
    (
        MPIX_ERR_EAGAIN,
        "MPIX_ERR_EAGAIN",
        "Resource temporarily unavailable",
    ),
    (MPIX_ERR_NOREQ, "MPIX_ERR_NOREQ", "No request available"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_predefined_class_below_the_last_has_a_name() {
        for class in 0..MPICH_ERR_LAST_CLASS {
            if class == 54 {
                continue; // no class 54 in MPICH's numbering
            }
            assert!(is_predefined_class(class), "class {class} missing");
        }
        assert_eq!(class_name(MPI_ERR_COMM), "MPI_ERR_COMM");
    }

    #[test]
    fn display_names_class_and_detail() {
        let e = MpiError::new(MPI_ERR_RANK, "rank 9 of 4");
        assert_eq!(e.to_string(), "Invalid rank (MPI_ERR_RANK): rank 9 of 4");
    }
}
