//! `MPI_T_event_*` and `MPI_T_source_*`: oxmpi defines no event types and
//! no event sources, so there is no valid index, registration or instance:
//! each call checks that MPI_T is initialized and answers for an index
//! (`MPI_T_ERR_INVALID_INDEX`), a name (`MPI_T_ERR_INVALID_NAME`) or a
//! handle (`MPI_T_ERR_INVALID_HANDLE`) that does not exist.
use std::os::raw::{c_char, c_int, c_void};

use super::{check_initialized, name_arg, unknown_name};
use crate::core::error::{MpiError, MpiResult};
use crate::mpi_abi::callbacks::*;
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::*;

fn no_event(index: c_int) -> MpiResult {
    check_initialized()?;
    Err(MpiError::new(
        MPI_T_ERR_INVALID_INDEX,
        format!("no event type {index}: oxmpi has none"),
    ))
}

fn no_source(index: c_int) -> MpiResult {
    check_initialized()?;
    Err(MpiError::new(
        MPI_T_ERR_INVALID_INDEX,
        format!("no event source {index}: oxmpi has none"),
    ))
}

/// A registration or an event instance: none can exist.
fn no_handle(what: &str) -> MpiResult {
    check_initialized()?;
    Err(MpiError::new(
        MPI_T_ERR_INVALID_HANDLE,
        format!("no such {what}: oxmpi has no events"),
    ))
}

pub unsafe fn get_index(name: *const c_char, _event_index: *mut c_int) -> MpiResult {
    check_initialized()?;
    // SAFETY: MPI_T_event_get_index's name: NULL or NUL-terminated.
    let name = unsafe { name_arg(name) }?;
    Err(unknown_name("event type", &name))
}

pub unsafe fn get_info(
    event_index: c_int,
    _name: *mut c_char,
    _name_len: *mut c_int,
    _verbosity: *mut c_int,
    _array_of_datatypes: *mut MPI_Datatype,
    _array_of_displacements: *mut MPI_Aint,
    _num_elements: *mut c_int,
    _enumtype: *mut MPI_T_enum,
    _info: *mut MPI_Info,
    _desc: *mut c_char,
    _desc_len: *mut c_int,
    _bind: *mut c_int,
) -> MpiResult {
    no_event(event_index)
}

pub unsafe fn handle_alloc(
    event_index: c_int,
    _obj_handle: *mut c_void,
    _info: MPI_Info,
    _event_registration: *mut MPI_T_event_registration,
) -> MpiResult {
    no_event(event_index)
}

pub unsafe fn handle_free(
    _event_registration: MPI_T_event_registration,
    _user_data: *mut c_void,
    _free_cb_function: MPI_T_event_free_cb_function,
) -> MpiResult {
    no_handle("event registration")
}

pub unsafe fn handle_get_info(
    _event_registration: MPI_T_event_registration,
    _info_used: *mut MPI_Info,
) -> MpiResult {
    no_handle("event registration")
}

pub unsafe fn handle_set_info(
    _event_registration: MPI_T_event_registration,
    _info: MPI_Info,
) -> MpiResult {
    no_handle("event registration")
}

pub unsafe fn register_callback(
    _event_registration: MPI_T_event_registration,
    _cb_safety: MPI_T_cb_safety,
    _info: MPI_Info,
    _user_data: *mut c_void,
    _event_cb_function: MPI_T_event_cb_function,
) -> MpiResult {
    no_handle("event registration")
}

pub unsafe fn callback_get_info(
    _event_registration: MPI_T_event_registration,
    _cb_safety: MPI_T_cb_safety,
    _info_used: *mut MPI_Info,
) -> MpiResult {
    no_handle("event registration")
}

pub unsafe fn callback_set_info(
    _event_registration: MPI_T_event_registration,
    _cb_safety: MPI_T_cb_safety,
    _info: MPI_Info,
) -> MpiResult {
    no_handle("event registration")
}

pub unsafe fn set_dropped_handler(
    _event_registration: MPI_T_event_registration,
    _dropped_cb_function: MPI_T_event_dropped_cb_function,
) -> MpiResult {
    no_handle("event registration")
}

pub unsafe fn read(
    _event_instance: MPI_T_event_instance,
    _element_index: c_int,
    _buffer: *mut c_void,
) -> MpiResult {
    no_handle("event instance")
}

pub unsafe fn copy(_event_instance: MPI_T_event_instance, _buffer: *mut c_void) -> MpiResult {
    no_handle("event instance")
}

pub unsafe fn get_timestamp(
    _event_instance: MPI_T_event_instance,
    _event_timestamp: *mut MPI_Count,
) -> MpiResult {
    no_handle("event instance")
}

pub unsafe fn get_source(
    _event_instance: MPI_T_event_instance,
    _source_index: *mut c_int,
) -> MpiResult {
    no_handle("event instance")
}

pub unsafe fn source_get_info(
    source_index: c_int,
    _name: *mut c_char,
    _name_len: *mut c_int,
    _desc: *mut c_char,
    _desc_len: *mut c_int,
    _ordering: *mut MPI_T_source_order,
    _ticks_per_second: *mut MPI_Count,
    _max_ticks: *mut MPI_Count,
    _info: *mut MPI_Info,
) -> MpiResult {
    no_source(source_index)
}

pub unsafe fn source_get_timestamp(source_index: c_int, _timestamp: *mut MPI_Count) -> MpiResult {
    no_source(source_index)
}
