//! `MPI_Register_datarep`: a data representation for MPI-IO views,
//! with the program's conversion and extent functions. MPI's checks come
//! first: a NULL or too long name is `MPI_ERR_ARG`, a predefined or
//! already registered name `MPI_ERR_DUP_DATAREP`.
//!
//! Under a registered representation, the extent function gives each
//! predefined type's size in the file (asked once per type when a view is
//! set and per access, and by `MPI_File_get_type_extent`); views lie in the
//! file by those sizes (`core::datatype::representation`). The write
//! conversion fills the file's bytes of an access (its elements packed in
//! the file's representation) from the program's buffer, the read
//! conversion the buffer from them, each called once per access with
//! position 0 (a short read at the end of the file converts the whole
//! elements it got). `MPI_CONVERSION_FN_NULL` moves the data as it is,
//! which needs file extents equal to the native sizes (else
//! `MPI_ERR_CONVERSION`).
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
        #[cfg(not(feature = "standard-abi"))]
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
        // The standard ABI's functions take its pointer-sized datatype
        // handle and return its error codes; they were stored with oxmpi's
        // types, which differ only in the handle's width, and are called
        // through the standard's.
        #[cfg(feature = "standard-abi")]
        {
            use crate::mpi_abi::standard::{convert as cv, types as s};
            type StdInt = unsafe extern "C" fn(
                *mut c_void,
                s::MPI_Datatype,
                c_int,
                *mut c_void,
                MPI_Offset,
                *mut c_void,
            ) -> c_int;
            type StdLarge = unsafe extern "C" fn(
                *mut c_void,
                s::MPI_Datatype,
                MPI_Count,
                *mut c_void,
                MPI_Offset,
                *mut c_void,
            ) -> c_int;
            let handle = cv::datatype_out(datatype);
            let rc = match self {
                Conversion::Int(Some(f)) => {
                    // SAFETY: the program's function (non-null), whose
                    // type differs from the stored one only in the handle.
                    let f: StdInt = unsafe { std::mem::transmute(f) };
                    // SAFETY: as in the MPICH-ABI build (caller's contract).
                    unsafe { f(userbuf, handle, count as c_int, filebuf, 0, extra_state) }
                }
                Conversion::Large(Some(f)) => {
                    // SAFETY: as above.
                    let f: StdLarge = unsafe { std::mem::transmute(f) };
                    // SAFETY: as above.
                    unsafe { f(userbuf, handle, count as MPI_Count, filebuf, 0, extra_state) }
                }
                _ => return None,
            };
            Some(cv::code_in(rc))
        }
    }
}

/// Calls the program's extent function on `datatype` (in the standard-ABI
/// library through the standard's type, as [`Conversion::call`] does).
fn call_extent(
    f: unsafe extern "C" fn(MPI_Datatype, *mut MPI_Aint, *mut c_void) -> c_int,
    datatype: MPI_Datatype,
    extent: &mut MPI_Aint,
    extra_state: *mut c_void,
) -> c_int {
    #[cfg(not(feature = "standard-abi"))]
    {
        // SAFETY: the program's extent function, given a live local to write.
        unsafe { f(datatype, extent, extra_state) }
    }
    #[cfg(feature = "standard-abi")]
    {
        use crate::mpi_abi::standard::{convert as cv, types as s};
        type StdExtent = unsafe extern "C" fn(s::MPI_Datatype, *mut MPI_Aint, *mut c_void) -> c_int;
        // SAFETY: the program's function, whose type differs from the
        // stored one only in the handle's width.
        let f: StdExtent = unsafe { std::mem::transmute(f) };
        // SAFETY: as above, with the standard handle.
        cv::code_in(unsafe { f(cv::datatype_out(datatype), extent, extra_state) })
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
        extent_of: file_extent,
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
    let rc = call_extent(f, datatype, &mut extent, cb.extra_state);
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
