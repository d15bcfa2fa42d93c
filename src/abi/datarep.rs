//! `MPI_Register_datarep`: oxmpi's MPI-IO has the predefined data
//! representations (`native`, `internal`, `external32`) and no user ones
//! yet. So a registration is refused with `MPI_ERR_UNSUPPORTED_OPERATION` and a
//! message that says why, after the checks MPI defines: a NULL or too
//! long name is `MPI_ERR_ARG`, and a predefined representation's name
//! (`native`, `internal`, `external32`) `MPI_ERR_DUP_DATAREP`.
use std::os::raw::{c_char, c_void};

use crate::abi::args::in_str;
use crate::core::error::{MpiError, MpiResult};
use crate::mpi_abi::callbacks::MPI_Datarep_extent_function;
use crate::mpi_abi::constants::*;

/// Both forms (`_c` too: `F` is the conversion function type of the form).
pub unsafe fn register_datarep<F>(
    datarep: *const c_char,
    _read_conversion_fn: F,
    _write_conversion_fn: F,
    _dtype_file_extent_fn: MPI_Datarep_extent_function,
    _extra_state: *mut c_void,
) -> MpiResult {
    // SAFETY: MPI_Register_datarep's `datarep` is NULL (rejected) or a
    // NUL-terminated string.
    let name = unsafe { in_str(datarep, "datarep") }?;
    if name.is_empty() || name.len() >= MPI_MAX_DATAREP_STRING as usize {
        return Err(MpiError::new(
            MPI_ERR_ARG,
            format!(
                "a data representation name has 1 to {} characters",
                MPI_MAX_DATAREP_STRING - 1
            ),
        ));
    }
    if ["native", "internal", "external32"].contains(&name.as_str()) {
        return Err(MpiError::new(
            MPI_ERR_DUP_DATAREP,
            format!("\"{name}\" is a predefined data representation"),
        ));
    }
    Err(MpiError::new(
        MPI_ERR_UNSUPPORTED_OPERATION,
        format!(
            "data representation \"{name}\" cannot be registered: oxmpi's MPI-IO has only \
             native, internal and external32"
        ),
    ))
}
