//! `MPI_Register_datarep`: a data representation for MPI-IO views,
//! with the program's conversion and extent functions. MPI's checks come
//! first: a NULL or too long name is `MPI_ERR_ARG`, a predefined or
//! already registered name `MPI_ERR_DUP_DATAREP`.
//!
//! oxmpi lays the file out natively under a registered representation
//! (the extent function answers `MPI_File_get_type_extent` only): the
//! write conversion fills the file's bytes of an access from the
//! program's buffer, the read conversion the buffer from them, each
//! called once per access with position 0. `MPI_CONVERSION_FN_NULL`
//! moves the data as it is.
use std::os::raw::{c_char, c_int, c_void};
use std::sync::Arc;

use crate::abi::args::in_str;
use crate::core::error::{MpiError, MpiResult};
use crate::core::io::access::Converter;
use crate::core::io::view::UserDatarep;
use crate::mpi_abi::callbacks::*;
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::*;

/// A conversion function of either form.
#[derive(Clone, Copy)]
pub enum Conversion {
    Int(MPI_Datarep_conversion_function),
    Large(MPI_Datarep_conversion_function_c),
}

/// The two forms of conversion function `MPI_Register_datarep(_c)` takes.
pub trait ConversionFunction {
    fn conversion(self) -> Conversion;
}

impl ConversionFunction for MPI_Datarep_conversion_function {
    fn conversion(self) -> Conversion {
        Conversion::Int(self)
    }
}

impl ConversionFunction for MPI_Datarep_conversion_function_c {
    fn conversion(self) -> Conversion {
        Conversion::Large(self)
    }
}

/// What the program registered.
pub struct Callbacks {
    read: Conversion,
    write: Conversion,
    extent: MPI_Datarep_extent_function,
    extra_state: *mut c_void,
}

// SAFETY: the function pointers and `extra_state` are the program's,
// which MPI lets any thread use: oxmpi only passes them back to the
// program's functions.
unsafe impl Send for Callbacks {}
// SAFETY: as for `Send`; oxmpi never dereferences `extra_state`.
unsafe impl Sync for Callbacks {}

impl Conversion {
    /// Calls the function; `None` when there is none.
    ///
    /// # Safety
    /// `userbuf` holds `count` elements of `datatype` and `filebuf` their
    /// file form, as the function expects.
    unsafe fn call(
        self,
        userbuf: *mut c_void,
        datatype: MPI_Datatype,
        count: usize,
        filebuf: *mut c_void,
        extra_state: *mut c_void,
    ) -> Option<c_int> {
        match self {
            Conversion::Int(Some(f)) => {
                let count = count as c_int;
                // SAFETY: the program's function with the arguments MPI
                // defines (caller's contract); no lock is held.
                Some(unsafe { f(userbuf, datatype, count, filebuf, 0, extra_state) })
            }
            Conversion::Large(Some(f)) => {
                let count = count as MPI_Count;
                // SAFETY: as above.
                Some(unsafe { f(userbuf, datatype, count, filebuf, 0, extra_state) })
            }
            _ => None,
        }
    }
}

/// Both forms (`_c` too: `F` is the conversion function type of the form).
pub unsafe fn register_datarep<F: ConversionFunction>(
    datarep: *const c_char,
    read_conversion_fn: F,
    write_conversion_fn: F,
    dtype_file_extent_fn: MPI_Datarep_extent_function,
    extra_state: *mut c_void,
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
    if crate::core::io::view::Datarep::predefined(&name).is_some() {
        return Err(MpiError::new(
            MPI_ERR_DUP_DATAREP,
            format!("\"{name}\" is a predefined data representation"),
        ));
    }
    if dtype_file_extent_fn.is_none() {
        return Err(MpiError::new(
            MPI_ERR_ARG,
            "the extent function of a data representation is required",
        ));
    }
    crate::core::io::register_datarep(UserDatarep {
        name,
        callbacks: Arc::new(Callbacks {
            read: read_conversion_fn.conversion(),
            write: write_conversion_fn.conversion(),
            extent: dtype_file_extent_fn,
            extra_state,
        }),
    })
}

fn callbacks(rep: &UserDatarep) -> &Callbacks {
    rep.callbacks
        .downcast_ref::<Callbacks>()
        .expect("registered by register_datarep")
}

/// The file extent of `datatype` under a registered representation.
pub fn file_extent(rep: &UserDatarep, datatype: MPI_Datatype) -> MpiResult<MPI_Aint> {
    let cb = callbacks(rep);
    let mut extent: MPI_Aint = 0;
    let f = cb.extent.expect("checked at registration");
    // SAFETY: the program's extent function, given a live local to write.
    let rc = unsafe { f(datatype, &mut extent, cb.extra_state) };
    if rc != MPI_SUCCESS {
        return Err(MpiError::new(
            MPI_ERR_CONVERSION,
            format!("the extent function of \"{}\" returned {rc}", rep.name),
        ));
    }
    Ok(extent)
}

/// A registered representation's conversions bound to one access.
pub struct Bound<'a> {
    pub rep: &'a UserDatarep,
    pub userbuf: *mut c_void,
    pub datatype: MPI_Datatype,
}

impl Bound<'_> {
    fn convert(&self, f: Conversion, count: usize, file: &mut [u8], what: &str) -> MpiResult<bool> {
        let cb = callbacks(self.rep);
        // SAFETY: `userbuf` holds the access's elements (the C caller's
        // contract for the access) and `file` their file form.
        let rc = unsafe {
            f.call(
                self.userbuf,
                self.datatype,
                count,
                file.as_mut_ptr().cast(),
                cb.extra_state,
            )
        };
        match rc {
            None => Ok(false),
            Some(MPI_SUCCESS) => Ok(true),
            Some(rc) => Err(MpiError::new(
                MPI_ERR_CONVERSION,
                format!(
                    "the {what} conversion of \"{}\" returned {rc}",
                    self.rep.name
                ),
            )),
        }
    }
}

impl Converter for Bound<'_> {
    fn to_file(&self, count: usize, file: &mut [u8]) -> MpiResult<bool> {
        self.convert(callbacks(self.rep).write, count, file, "write")
    }

    fn to_memory(&self, count: usize, file: &mut [u8]) -> MpiResult<bool> {
        self.convert(callbacks(self.rep).read, count, file, "read")
    }
}
