//! The C types of the MPICH ABI: handle typedefs, `MPI_Status`, integer
//! typedefs. cbindgen turns these into the typedefs of `include/mpi.h`; their
//! sizes and layouts are those of Debian MPICH 4.0.2 (checked by the C test
//! `abi_constants`). Callback function types live in `callbacks.rs`.
#![allow(non_camel_case_types, non_snake_case)]

use std::os::raw::{c_int, c_long, c_void};

pub type MPI_Comm = c_int;
pub type MPI_Group = c_int;
pub type MPI_Datatype = c_int;
pub type MPI_Op = c_int;
pub type MPI_Errhandler = c_int;
pub type MPI_Info = c_int;
pub type MPI_Win = c_int;
pub type MPI_Request = c_int;
pub type MPI_Message = c_int;
pub type MPI_Session = c_int;
pub type MPIX_Grequest_class = c_int;

pub type MPI_Aint = c_long;
pub type MPI_Offset = c_long;
pub type MPI_Count = c_long;
pub type MPI_Fint = c_int;

/// ROMIO's file object, never defined: oxmpi's `MPI_File` carries a file
/// table handle as its address (see `abi::io`).
pub struct ADIOI_FileD {
    _opaque: [u8; 0],
}
pub type MPI_File = *mut ADIOI_FileD;

/// The MPI_T tool interface's opaque handle targets.
pub struct MPIR_T_enum_s {
    _opaque: [u8; 0],
}
pub struct MPIR_T_cvar_handle_s {
    _opaque: [u8; 0],
}
pub struct MPIR_T_pvar_handle_s {
    _opaque: [u8; 0],
}
pub struct MPIR_T_pvar_session_s {
    _opaque: [u8; 0],
}
pub struct MPIR_T_event_registration_s {
    _opaque: [u8; 0],
}
pub struct MPIR_T_event_instance_s {
    _opaque: [u8; 0],
}
pub type MPI_T_enum = *mut MPIR_T_enum_s;
pub type MPI_T_cvar_handle = *mut MPIR_T_cvar_handle_s;
pub type MPI_T_pvar_handle = *mut MPIR_T_pvar_handle_s;
pub type MPI_T_pvar_session = *mut MPIR_T_pvar_session_s;
pub type MPI_T_event_registration = *mut MPIR_T_event_registration_s;
pub type MPI_T_event_instance = *mut MPIR_T_event_instance_s;

/// `MPI_T_cb_safety` and `MPI_T_source_order` are C enums in MPICH's header;
/// an `int` has the same size and values.
pub type MPI_T_cb_safety = c_int;
pub type MPI_T_source_order = c_int;

/// `MPI_Status`, 20 bytes. The byte count is split over `count_lo` and the
/// upper 31 bits of `count_hi_and_cancelled`; bit 0 of the latter is the
/// cancelled flag (MPICH's encoding, so `MPI_Get_count` in either library
/// reads the same value).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MPI_Status {
    pub count_lo: c_int,
    pub count_hi_and_cancelled: c_int,
    pub MPI_SOURCE: c_int,
    pub MPI_TAG: c_int,
    pub MPI_ERROR: c_int,
}

/// The Fortran 2008 status: the same five integers.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct MPI_F08_status {
    pub count_lo: MPI_Fint,
    pub count_hi_and_cancelled: MPI_Fint,
    pub MPI_SOURCE: MPI_Fint,
    pub MPI_TAG: MPI_Fint,
    pub MPI_ERROR: MPI_Fint,
}

impl MPI_Status {
    /// The byte count stored in the status.
    pub fn byte_count(&self) -> MPI_Count {
        let hi = ((self.count_hi_and_cancelled as u32) >> 1) as i64;
        (hi << 32) | (self.count_lo as u32 as i64)
    }

    /// Stores a byte count, keeping the cancelled flag.
    pub fn set_byte_count(&mut self, count: MPI_Count) {
        let cancelled = self.count_hi_and_cancelled & 1;
        self.count_lo = count as u32 as c_int;
        self.count_hi_and_cancelled = ((((count as u64) >> 32) as u32) << 1) as c_int | cancelled;
    }

    pub fn cancelled(&self) -> bool {
        self.count_hi_and_cancelled & 1 != 0
    }

    pub fn set_cancelled(&mut self, cancelled: bool) {
        self.count_hi_and_cancelled = (self.count_hi_and_cancelled & !1) | cancelled as c_int;
    }
}

/// `QMPI_Context`: what a QMPI tool's function gets first (MPICH's
/// layout): the tools' storage, indexed by tool id (see `abi::qmpi`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct QMPI_Context {
    pub storage_stack: *mut *mut c_void,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_count_round_trips_large_values_and_keeps_cancelled() {
        let mut s = MPI_Status::default();
        s.set_cancelled(true);
        for count in [0i64, 1, 20, (1 << 31) + 5, (1 << 40) + 12345] {
            s.set_byte_count(count);
            assert_eq!(s.byte_count(), count);
            assert!(s.cancelled());
        }
        assert_eq!(std::mem::size_of::<MPI_Status>(), 20);
    }
}
