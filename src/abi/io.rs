//! MPI-IO through the C ABI: the `MPI_File_*` calls. Here file handles
//! (MPICH's `MPI_File` is a pointer) become table handles and back, strings,
//! info objects, buffers and statuses are read and written; the semantics
//! are in `core::io`.
//!
//! An `MPI_File` carries the runtime's int handle (kind `0x4`, MPICH's
//! file kind) as its address, so `MPI_File_c2f` is the handle itself and
//! `MPI_FILE_NULL` (the null pointer) is handle 0.
use std::os::raw::{c_char, c_int, c_void};

use crate::abi::args::{in_str, out, write_str};
use crate::abi::status::{write_status, StatusOut};
use crate::core::datatype;
use crate::core::errhandler::{Action, ErrhandlerFunction};
use crate::core::error::{MpiError, MpiResult};
use crate::core::info::InfoObject;
use crate::core::io::access::{self, Memory, Position};
use crate::core::io::view::{Datarep, View};
use crate::core::io::{self as core_io};
use crate::core::runtime;
use crate::mpi_abi::callbacks::MPI_File_errhandler_function;
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::*;

/// The table handle of a C file handle.
pub fn handle(fh: MPI_File) -> c_int {
    fh as usize as u32 as c_int
}

/// The C file handle of a table handle.
pub fn to_c(h: c_int) -> MPI_File {
    std::ptr::without_provenance_mut(h as u32 as usize)
}

pub unsafe fn c2f(file: MPI_File) -> MPI_Fint {
    handle(file)
}

pub unsafe fn f2c(file: MPI_Fint) -> MPI_File {
    to_c(file)
}

/// The keys of an info argument (none for `MPI_INFO_NULL`).
fn info_arg(info: MPI_Info) -> MpiResult<InfoObject> {
    if info == MPI_INFO_NULL {
        return Ok(InfoObject::new());
    }
    Ok(crate::abi::info::lookup(&runtime::lock(), info)?.clone())
}

pub unsafe fn open(
    comm: MPI_Comm,
    filename: *const c_char,
    amode: c_int,
    info: MPI_Info,
    fh: &mut MPI_File,
) -> MpiResult {
    *fh = std::ptr::null_mut();
    // SAFETY: MPI_File_open's `filename` is NULL (rejected) or a C string.
    let name = unsafe { in_str(filename, "filename") }?;
    let info = info_arg(info)?;
    *fh = to_c(core_io::open(comm, &name, amode, info)?);
    Ok(())
}

pub unsafe fn close(fh: &mut MPI_File) -> MpiResult {
    core_io::close(handle(*fh))?;
    *fh = std::ptr::null_mut();
    Ok(())
}

pub unsafe fn delete(filename: *const c_char, info: MPI_Info) -> MpiResult {
    // SAFETY: MPI_File_delete's `filename` is NULL (rejected) or a C string.
    let name = unsafe { in_str(filename, "filename") }?;
    info_arg(info)?;
    core_io::delete(&name)
}

pub unsafe fn set_size(fh: MPI_File, size: MPI_Offset) -> MpiResult {
    core_io::set_size(handle(fh), size, false)
}

pub unsafe fn preallocate(fh: MPI_File, size: MPI_Offset) -> MpiResult {
    core_io::set_size(handle(fh), size, true)
}

pub unsafe fn get_size(fh: MPI_File, size: &mut MPI_Offset) -> MpiResult {
    *size = core_io::size(handle(fh))? as MPI_Offset;
    Ok(())
}

pub unsafe fn get_amode(fh: MPI_File, amode: &mut c_int) -> MpiResult {
    *amode = core_io::with(handle(fh), |f| f.open.amode)?;
    Ok(())
}

pub unsafe fn get_group(fh: MPI_File, group: &mut MPI_Group) -> MpiResult {
    let g = core_io::group(handle(fh))?;
    *group = runtime::lock().groups_mut().insert(g);
    Ok(())
}

pub unsafe fn get_info(fh: MPI_File, info_used: &mut MPI_Info) -> MpiResult {
    let hints = core_io::with(handle(fh), |f| f.hints.clone())?;
    *info_used = runtime::lock().infos_mut().insert(hints);
    Ok(())
}

pub unsafe fn set_info(fh: MPI_File, info: MPI_Info) -> MpiResult {
    core_io::set_info(handle(fh), info_arg(info)?)
}

pub unsafe fn sync(fh: MPI_File) -> MpiResult {
    core_io::sync(handle(fh))
}

pub unsafe fn set_atomicity(fh: MPI_File, flag: c_int) -> MpiResult {
    core_io::set_atomicity(handle(fh), flag != 0)
}

pub unsafe fn get_atomicity(fh: MPI_File, flag: &mut c_int) -> MpiResult {
    *flag = core_io::with(handle(fh), |f| f.atomic as c_int)?;
    Ok(())
}

// ---- Error handlers ----

pub unsafe fn create_errhandler(
    function: MPI_File_errhandler_function,
    errhandler: *mut MPI_Errhandler,
) -> MpiResult {
    // SAFETY: the caller's output argument, passed on unchanged.
    unsafe {
        crate::abi::errors::create_errhandler(
            ErrhandlerFunction::File(function),
            function.is_none(),
            errhandler,
        )
    }
}

pub unsafe fn set_errhandler(file: MPI_File, errhandler: MPI_Errhandler) -> MpiResult {
    let mut rt = runtime::lock();
    match rt.errhandlers().action(errhandler)? {
        Action::Call(ErrhandlerFunction::File(_))
        | Action::Fatal
        | Action::Return
        | Action::Abort => {}
        Action::Call(_) => {
            return Err(MpiError::new(
                MPI_ERR_ARG,
                "the error handler was not created for files",
            ))
        }
    }
    rt.set_file_errhandler(handle(file), errhandler)
}

pub unsafe fn get_errhandler(file: MPI_File, errhandler: &mut MPI_Errhandler) -> MpiResult {
    *errhandler = runtime::lock().file_errhandler(handle(file))?;
    Ok(())
}

pub unsafe fn call_errhandler(fh: MPI_File, errorcode: c_int) -> MpiResult {
    crate::abi::boundary::call_errhandler_on_file(fh, errorcode)
}

// ---- Views ----

pub unsafe fn set_view(
    fh: MPI_File,
    disp: MPI_Offset,
    etype: MPI_Datatype,
    filetype: MPI_Datatype,
    datarep: *const c_char,
    info: MPI_Info,
) -> MpiResult {
    // SAFETY: MPI_File_set_view's `datarep` is NULL (rejected) or a C string.
    let rep = unsafe { in_str(datarep, "datarep") }?;
    let rep = core_io::datarep(&rep);
    let e = datatype::lookup_committed(etype);
    let f = datatype::lookup_committed(filetype);
    let info = info_arg(info);
    core_io::set_view(handle(fh), disp, |disp, writable| {
        info?;
        View::new(disp, e?, etype, f?, filetype, rep?, writable)
    })
}

pub unsafe fn get_view(
    fh: MPI_File,
    disp: &mut MPI_Offset,
    etype: &mut MPI_Datatype,
    filetype: &mut MPI_Datatype,
    datarep: *mut c_char,
) -> MpiResult {
    let view = core_io::with(handle(fh), |f| f.view.clone())?;
    // SAFETY: MPI asks for MPI_MAX_DATAREP_STRING bytes at `datarep`.
    unsafe {
        write_str(
            datarep,
            MPI_MAX_DATAREP_STRING as usize,
            view.datarep.name(),
            "datarep",
        )
    }?;
    *disp = view.disp as MPI_Offset;
    *etype = datatype::registry::handle_for(view.etype_handle, &view.etype);
    *filetype = datatype::registry::handle_for(view.filetype_handle, &view.filetype);
    Ok(())
}

pub unsafe fn get_type_extent(fh: MPI_File, dt: MPI_Datatype, extent: *mut MPI_Count) -> MpiResult {
    // SAFETY: the caller's output argument: NULL (rejected) or valid.
    let extent = unsafe { out(extent, "extent") }?;
    let rep = core_io::with(handle(fh), |f| f.view.datarep.clone())?;
    let t = datatype::lookup(dt)?;
    *extent = rep.layout(&t)?.extent() as MPI_Count;
    Ok(())
}

// ---- Data access ----

/// One access of `count` elements of `dt` at `buf`.
///
/// # Safety
/// `buf` holds (or has room for) `count` elements of `dt`.
unsafe fn run(
    fh: MPI_File,
    at: Position,
    buf: *const c_void,
    count: usize,
    dt: MPI_Datatype,
    write: bool,
    collective: bool,
) -> MpiResult<MPI_Status> {
    let h = handle(fh);
    let rep = core_io::with(h, |f| f.view.datarep.clone())?;
    let buf_ptr = buf;
    // SAFETY: forwarded from the caller; the access completes before
    // this function returns.
    let buf = unsafe { crate::abi::p2p::message_buffer(buf, count, dt) }?;
    let datatype = if count == 0 && dt == MPI_DATATYPE_NULL {
        datatype::lookup(MPI_BYTE)?
    } else {
        datatype::lookup(dt)?
    };
    let bound = match &rep {
        Datarep::User(u) => Some(crate::abi::datarep::Bound {
            rep: u,
            userbuf: buf_ptr.cast_mut(),
            datatype: dt,
        }),
        _ => None,
    };
    let mem = Memory {
        buf: &buf,
        datatype,
        count,
        convert: bound.as_ref().map(|b| b as &dyn access::Converter),
    };
    if write {
        access::write(h, at, &mem, collective)
    } else {
        access::read(h, at, &mem, collective)
    }
}

/// A blocking access with a status.
///
/// # Safety
/// As [`run`]; `status` is `MPI_STATUS_IGNORE`, NULL or valid.
#[allow(clippy::too_many_arguments)]
unsafe fn blocking(
    fh: MPI_File,
    at: Position,
    buf: *const c_void,
    count: usize,
    dt: MPI_Datatype,
    status: *mut MPI_Status,
    write: bool,
    collective: bool,
) -> MpiResult {
    // SAFETY: the caller's status argument.
    let out = unsafe { StatusOut::new(status) }?;
    // SAFETY: forwarded.
    let st = unsafe { run(fh, at, buf, count, dt, write, collective) }?;
    // SAFETY: checked by `StatusOut::new`.
    unsafe { write_status(out, &st) };
    Ok(())
}

/// A nonblocking access: done now, its request complete from the start.
///
/// # Safety
/// As [`run`]; `request` is NULL or valid.
#[allow(clippy::too_many_arguments)]
unsafe fn nonblocking(
    fh: MPI_File,
    at: Position,
    buf: *const c_void,
    count: usize,
    dt: MPI_Datatype,
    request: *mut MPI_Request,
    write: bool,
    collective: bool,
) -> MpiResult {
    // SAFETY: the caller's output argument.
    let request = unsafe { out(request, "request") }?;
    // SAFETY: forwarded.
    let st = unsafe { run(fh, at, buf, count, dt, write, collective) }?;
    *request = runtime::lock().engine().completed(st);
    Ok(())
}

/// A split collective's begin.
///
/// # Safety
/// As [`run`].
unsafe fn begin(
    fh: MPI_File,
    at: Position,
    buf: *const c_void,
    count: usize,
    dt: MPI_Datatype,
    write: bool,
) -> MpiResult {
    // SAFETY: forwarded.
    access::begin(handle(fh), !write, || unsafe {
        run(fh, at, buf, count, dt, write, true)
    })
}

/// A split collective's end.
///
/// # Safety
/// `status` is `MPI_STATUS_IGNORE`, NULL or valid.
unsafe fn end(fh: MPI_File, status: *mut MPI_Status, write: bool) -> MpiResult {
    // SAFETY: the caller's status argument.
    let out = unsafe { StatusOut::new(status) }?;
    let st = access::end(handle(fh), !write)?;
    // SAFETY: checked by `StatusOut::new`.
    unsafe { write_status(out, &st) };
    Ok(())
}

/// Entry points of one kind (`$helper`: blocking with a status, or
/// nonblocking with a request), each an access at `$at`, optionally with
/// an explicit offset among its parameters.
macro_rules! access_calls {
    ($helper:ident, $out:ident: $out_type:ty;
     $($name:ident($($p:ident: $pt:ty),*) => $at:expr, $write:expr, $coll:expr;)*) => {$(
        pub unsafe fn $name(
            fh: MPI_File,
            $($p: $pt,)*
            buf: *const c_void,
            count: usize,
            datatype: MPI_Datatype,
            $out: $out_type,
        ) -> MpiResult {
            // SAFETY: the caller's arguments, as MPI requires them.
            unsafe { $helper(fh, $at, buf, count, datatype, $out, $write, $coll) }
        }
    )*};
}

macro_rules! begin_calls {
    ($($name:ident: $at:expr, $write:expr;)*) => {$(
        pub unsafe fn $name(
            fh: MPI_File,
            buf: *const c_void,
            count: usize,
            datatype: MPI_Datatype,
        ) -> MpiResult {
            // SAFETY: the caller's arguments, as MPI requires them.
            unsafe { begin(fh, $at, buf, count, datatype, $write) }
        }
    )*};
}

macro_rules! end_calls {
    ($($name:ident: $write:expr;)*) => {$(
        pub unsafe fn $name(fh: MPI_File, _buf: *const c_void, status: *mut MPI_Status) -> MpiResult {
            // SAFETY: the caller's status argument.
            unsafe { end(fh, status, $write) }
        }
    )*};
}

access_calls! {
    blocking, status: *mut MPI_Status;
    read() => Position::Individual, false, false;
    write() => Position::Individual, true, false;
    read_all() => Position::Individual, false, true;
    write_all() => Position::Individual, true, true;
    read_shared() => Position::Shared, false, false;
    write_shared() => Position::Shared, true, false;
    read_ordered() => Position::Ordered, false, true;
    write_ordered() => Position::Ordered, true, true;
    read_at(offset: MPI_Offset) => Position::At(offset), false, false;
    write_at(offset: MPI_Offset) => Position::At(offset), true, false;
    read_at_all(offset: MPI_Offset) => Position::At(offset), false, true;
    write_at_all(offset: MPI_Offset) => Position::At(offset), true, true;
}

access_calls! {
    nonblocking, request: *mut MPI_Request;
    iread() => Position::Individual, false, false;
    iwrite() => Position::Individual, true, false;
    iread_all() => Position::Individual, false, true;
    iwrite_all() => Position::Individual, true, true;
    iread_shared() => Position::Shared, false, false;
    iwrite_shared() => Position::Shared, true, false;
    iread_at(offset: MPI_Offset) => Position::At(offset), false, false;
    iwrite_at(offset: MPI_Offset) => Position::At(offset), true, false;
    iread_at_all(offset: MPI_Offset) => Position::At(offset), false, true;
    iwrite_at_all(offset: MPI_Offset) => Position::At(offset), true, true;
}

begin_calls! {
    read_all_begin: Position::Individual, false;
    write_all_begin: Position::Individual, true;
    read_ordered_begin: Position::Ordered, false;
    write_ordered_begin: Position::Ordered, true;
}

end_calls! {
    read_all_end: false;
    write_all_end: true;
    read_at_all_end: false;
    write_at_all_end: true;
    read_ordered_end: false;
    write_ordered_end: true;
}

pub unsafe fn read_at_all_begin(
    fh: MPI_File,
    offset: MPI_Offset,
    buf: *const c_void,
    count: usize,
    datatype: MPI_Datatype,
) -> MpiResult {
    // SAFETY: the caller's arguments, as MPI requires them.
    unsafe { begin(fh, Position::At(offset), buf, count, datatype, false) }
}

pub unsafe fn write_at_all_begin(
    fh: MPI_File,
    offset: MPI_Offset,
    buf: *const c_void,
    count: usize,
    datatype: MPI_Datatype,
) -> MpiResult {
    // SAFETY: the caller's arguments, as MPI requires them.
    unsafe { begin(fh, Position::At(offset), buf, count, datatype, true) }
}

// ---- Pointers ----

pub unsafe fn seek(fh: MPI_File, offset: MPI_Offset, whence: c_int) -> MpiResult {
    access::seek(handle(fh), offset, whence)
}

pub unsafe fn seek_shared(fh: MPI_File, offset: MPI_Offset, whence: c_int) -> MpiResult {
    access::seek_shared(handle(fh), offset, whence)
}

pub unsafe fn get_position(fh: MPI_File, offset: &mut MPI_Offset) -> MpiResult {
    *offset = access::position(handle(fh))? as MPI_Offset;
    Ok(())
}

pub unsafe fn get_position_shared(fh: MPI_File, offset: &mut MPI_Offset) -> MpiResult {
    *offset = access::position_shared(handle(fh))? as MPI_Offset;
    Ok(())
}

pub unsafe fn get_byte_offset(
    fh: MPI_File,
    offset: MPI_Offset,
    disp: &mut MPI_Offset,
) -> MpiResult {
    *disp = access::byte_offset(handle(fh), offset)? as MPI_Offset;
    Ok(())
}
