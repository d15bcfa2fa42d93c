//! One-sided communication through the C ABI: argument conversion only;
//! the semantics are in `core::rma`.
use std::os::raw::{c_char, c_int, c_void};

use crate::abi::args::{object_name, out, write_str};
use crate::abi::count::CountOut;
use crate::abi::p2p::message_buffer;
use crate::core::comm_constructors::group_of;
use crate::core::datatype;
use crate::core::errhandler::ErrhandlerFunction;
use crate::core::error::{MpiError, MpiResult};
use crate::core::group::Group;
use crate::core::op::BuiltinOp;
use crate::core::rma::origin::{self, Buffers, RmaOp, TargetSpec};
use crate::core::rma::{create, sync};
use crate::core::runtime;
use crate::mpi_abi::callbacks::*;
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::*;

// ---- Creation ----

fn size_arg(size: MPI_Aint) -> MpiResult<usize> {
    usize::try_from(size)
        .map_err(|_| MpiError::new(MPI_ERR_SIZE, format!("window size {size} is negative")))
}

fn disp_unit_arg(disp_unit: MPI_Aint) -> MpiResult<usize> {
    usize::try_from(disp_unit)
        .ok()
        .filter(|&d| d > 0)
        .ok_or_else(|| {
            MpiError::new(
                MPI_ERR_DISP,
                format!("displacement unit {disp_unit} is not positive"),
            )
        })
}

/// Checks a creating call's handles before its values (MPICH's order):
/// the communicator (`MPI_ERR_COMM`), then the info (`MPI_ERR_INFO`);
/// returns the info's pairs.
fn creation_handles(comm: MPI_Comm, info: MPI_Info) -> MpiResult<Vec<(String, String)>> {
    runtime::lock().comms().get(comm)?;
    info_pairs(info)
}

/// The info argument's pairs (checked: `MPI_ERR_INFO`).
fn info_pairs(info: MPI_Info) -> MpiResult<Vec<(String, String)>> {
    if info == MPI_INFO_NULL {
        return Ok(Vec::new());
    }
    let rt = runtime::lock();
    Ok(crate::abi::info::lookup(&rt, info)?.entries().to_vec())
}

pub unsafe fn win_create(
    base: *mut c_void,
    size: MPI_Aint,
    disp_unit: MPI_Aint,
    info: MPI_Info,
    comm: MPI_Comm,
    win: &mut MPI_Win,
) -> MpiResult {
    let hints = creation_handles(comm, info)?;
    let (size, disp_unit) = (size_arg(size)?, disp_unit_arg(disp_unit)?);
    if base.is_null() && size > 0 {
        return Err(MpiError::new(
            MPI_ERR_BASE,
            "the window's base is NULL but its size is not 0",
        ));
    }
    *win = create::create(base as usize, size, disp_unit, &hints, comm)?;
    Ok(())
}

/// `MPI_Win_allocate` and `MPI_Win_allocate_shared`.
unsafe fn allocate_with(
    shared: bool,
    size: MPI_Aint,
    disp_unit: MPI_Aint,
    info: MPI_Info,
    comm: MPI_Comm,
    baseptr: *mut c_void,
    win: &mut MPI_Win,
) -> MpiResult {
    // SAFETY: MPI defines `baseptr` as the address of a `void *` the call
    // writes: NULL (rejected by `out`) or valid for that write.
    let slot = unsafe { out(baseptr.cast::<*mut c_void>(), "baseptr") }?;
    let hints = creation_handles(comm, info)?;
    let (size, disp_unit) = (size_arg(size)?, disp_unit_arg(disp_unit)?);
    let (handle, base) = if shared {
        create::allocate_shared(size, disp_unit, &hints, comm)?
    } else {
        create::allocate(size, disp_unit, &hints, comm)?
    };
    *slot = base as *mut c_void;
    *win = handle;
    Ok(())
}

pub unsafe fn win_allocate(
    size: MPI_Aint,
    disp_unit: MPI_Aint,
    info: MPI_Info,
    comm: MPI_Comm,
    baseptr: *mut c_void,
    win: &mut MPI_Win,
) -> MpiResult {
    // SAFETY: MPI_Win_allocate's arguments, passed on unchanged.
    unsafe { allocate_with(false, size, disp_unit, info, comm, baseptr, win) }
}

pub unsafe fn win_allocate_shared(
    size: MPI_Aint,
    disp_unit: MPI_Aint,
    info: MPI_Info,
    comm: MPI_Comm,
    baseptr: *mut c_void,
    win: &mut MPI_Win,
) -> MpiResult {
    // SAFETY: MPI_Win_allocate_shared's arguments, passed on unchanged.
    unsafe { allocate_with(true, size, disp_unit, info, comm, baseptr, win) }
}

pub unsafe fn win_create_dynamic(info: MPI_Info, comm: MPI_Comm, win: &mut MPI_Win) -> MpiResult {
    *win = create::create_dynamic(&creation_handles(comm, info)?, comm)?;
    Ok(())
}

pub unsafe fn win_attach(win: MPI_Win, base: *mut c_void, size: MPI_Aint) -> MpiResult {
    let size = size_arg(size)?;
    if base.is_null() && size > 0 {
        return Err(MpiError::new(MPI_ERR_BASE, "attaching NULL"));
    }
    create::attach(win, base as usize, size)
}

pub unsafe fn win_detach(win: MPI_Win, base: *const c_void) -> MpiResult {
    create::detach(win, base as usize)
}

pub unsafe fn win_free(win: *mut MPI_Win) -> MpiResult {
    // SAFETY: `win` is MPI_Win_free's in-out handle: NULL (rejected by
    // `out`) or valid for reads and writes during this call.
    let win = unsafe { out(win, "win") }?;
    create::check_free(*win)?;
    crate::abi::attributes::delete_attributes::<crate::abi::attributes::WinStore>(*win)?;
    create::free(*win)?;
    *win = MPI_WIN_NULL;
    Ok(())
}

pub unsafe fn win_shared_query<D: CountOut>(
    win: MPI_Win,
    rank: c_int,
    size: *mut MPI_Aint,
    disp_unit: *mut D,
    baseptr: *mut c_void,
) -> MpiResult {
    // SAFETY: the three outputs are NULL (rejected by `out`) or valid for one
    // write each during this call; MPI forbids aliasing output arguments.
    let (size, disp_unit, slot) = unsafe {
        (
            out(size, "size")?,
            out(disp_unit, "disp_unit")?,
            out(baseptr.cast::<*mut c_void>(), "baseptr")?,
        )
    };
    let (bytes, unit, base) = create::shared_query(win, rank)?;
    *size = bytes as MPI_Aint;
    *disp_unit = D::fit(unit).ok_or_else(|| {
        MpiError::new(
            MPI_ERR_DISP,
            format!("displacement unit {unit} does not fit an int"),
        )
    })?;
    *slot = base as *mut c_void;
    Ok(())
}

// ---- Communication ----

/// The target of an operation (its datatype committed).
fn target(
    rank: c_int,
    disp: MPI_Aint,
    count: usize,
    datatype: MPI_Datatype,
) -> MpiResult<TargetSpec> {
    Ok(TargetSpec {
        rank,
        disp,
        count,
        datatype: datatype::lookup_committed(datatype)?,
    })
}

/// A predefined operation allowed in accumulates (user operations are
/// not: `MPI_ERR_OP`).
fn accumulate_op(op: MPI_Op) -> MpiResult<BuiltinOp> {
    BuiltinOp::from_handle(op).ok_or_else(|| {
        MpiError::new(
            MPI_ERR_OP,
            format!(
                "{:#010x} is not a predefined operation (accumulates take only those)",
                op as u32
            ),
        )
    })
}

fn write_request(request: *mut MPI_Request, id: MPI_Request) -> MpiResult {
    // SAFETY: `request` is the call's output argument: NULL (rejected by
    // `out`) or valid for one write during this call.
    *unsafe { out(request, "request") }? = id;
    Ok(())
}

#[allow(clippy::too_many_arguments)]
unsafe fn put_or_rput(
    origin_addr: *const c_void,
    origin_count: usize,
    origin_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: usize,
    target_datatype: MPI_Datatype,
    win: MPI_Win,
    request: Option<*mut MPI_Request>,
) -> MpiResult {
    // SAFETY: the origin buffer holds `origin_count` elements (MPI's
    // contract); its data is packed before the call returns.
    let origin = unsafe { message_buffer(origin_addr, origin_count, origin_datatype) }?;
    let t = target(target_rank, target_disp, target_count, target_datatype)?;
    let buffers = Buffers {
        origin: Some(origin),
        ..Default::default()
    };
    let id = origin::issue(win, RmaOp::Put, buffers, t, request.is_some())?;
    request.map_or(Ok(()), |r| write_request(r, id))
}

#[allow(clippy::too_many_arguments)]
unsafe fn get_or_rget(
    origin_addr: *mut c_void,
    origin_count: usize,
    origin_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: usize,
    target_datatype: MPI_Datatype,
    win: MPI_Win,
    request: Option<*mut MPI_Request>,
) -> MpiResult {
    // SAFETY: the origin buffer has room for `origin_count` elements until
    // the operation completes (MPI's contract for MPI_Get).
    let result = unsafe { message_buffer(origin_addr, origin_count, origin_datatype) }?;
    let t = target(target_rank, target_disp, target_count, target_datatype)?;
    let buffers = Buffers {
        result: Some(result),
        ..Default::default()
    };
    let id = origin::issue(win, RmaOp::Get, buffers, t, request.is_some())?;
    request.map_or(Ok(()), |r| write_request(r, id))
}

#[allow(clippy::too_many_arguments)]
unsafe fn accumulate_with(
    origin_addr: *const c_void,
    origin_count: usize,
    origin_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: usize,
    target_datatype: MPI_Datatype,
    op: MPI_Op,
    win: MPI_Win,
    request: Option<*mut MPI_Request>,
) -> MpiResult {
    let op = accumulate_op(op)?;
    // SAFETY: as in `put_or_rput`: packed before the call returns.
    let origin = unsafe { message_buffer(origin_addr, origin_count, origin_datatype) }?;
    let t = target(target_rank, target_disp, target_count, target_datatype)?;
    let buffers = Buffers {
        origin: Some(origin),
        ..Default::default()
    };
    let id = origin::issue(win, RmaOp::Accumulate(op), buffers, t, request.is_some())?;
    request.map_or(Ok(()), |r| write_request(r, id))
}

#[allow(clippy::too_many_arguments)]
unsafe fn get_accumulate_with(
    origin_addr: *const c_void,
    origin_count: usize,
    origin_datatype: MPI_Datatype,
    result_addr: *mut c_void,
    result_count: usize,
    result_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: usize,
    target_datatype: MPI_Datatype,
    op: MPI_Op,
    win: MPI_Win,
    request: Option<*mut MPI_Request>,
) -> MpiResult {
    let op = accumulate_op(op)?;
    let origin = if op == BuiltinOp::NoOp {
        None
    } else {
        // SAFETY: as in `put_or_rput`: packed before the call returns.
        Some(unsafe { message_buffer(origin_addr, origin_count, origin_datatype) }?)
    };
    // SAFETY: the result buffer has room for `result_count` elements until
    // the operation completes (MPI's contract).
    let result = unsafe { message_buffer(result_addr, result_count, result_datatype) }?;
    let t = target(target_rank, target_disp, target_count, target_datatype)?;
    let buffers = Buffers {
        origin,
        result: Some(result),
        ..Default::default()
    };
    let id = origin::issue(win, RmaOp::GetAccumulate(op), buffers, t, request.is_some())?;
    request.map_or(Ok(()), |r| write_request(r, id))
}

/// Each operation's two entry points, `MPI_X` and its request form
/// `MPI_RX`, from the one implementation that takes an optional request.
macro_rules! with_request_form {
    ($plain:ident, $with_request:ident, $implementation:ident($($arg:ident: $ty:ty),* $(,)?)) => {
        #[allow(clippy::too_many_arguments)]
        pub unsafe fn $plain($($arg: $ty),*) -> MpiResult {
            // SAFETY: the call's arguments, passed on unchanged.
            unsafe { $implementation($($arg),*, None) }
        }

        #[allow(clippy::too_many_arguments)]
        pub unsafe fn $with_request($($arg: $ty),*, request: *mut MPI_Request) -> MpiResult {
            // SAFETY: the call's arguments, passed on unchanged; `request`
            // is its output argument.
            unsafe { $implementation($($arg),*, Some(request)) }
        }
    };
}

with_request_form!(put, rput, put_or_rput(
    origin_addr: *const c_void,
    origin_count: usize,
    origin_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: usize,
    target_datatype: MPI_Datatype,
    win: MPI_Win,
));

with_request_form!(get, rget, get_or_rget(
    origin_addr: *mut c_void,
    origin_count: usize,
    origin_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: usize,
    target_datatype: MPI_Datatype,
    win: MPI_Win,
));

with_request_form!(accumulate, raccumulate, accumulate_with(
    origin_addr: *const c_void,
    origin_count: usize,
    origin_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: usize,
    target_datatype: MPI_Datatype,
    op: MPI_Op,
    win: MPI_Win,
));

with_request_form!(get_accumulate, rget_accumulate, get_accumulate_with(
    origin_addr: *const c_void,
    origin_count: usize,
    origin_datatype: MPI_Datatype,
    result_addr: *mut c_void,
    result_count: usize,
    result_datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    target_count: usize,
    target_datatype: MPI_Datatype,
    op: MPI_Op,
    win: MPI_Win,
));

pub unsafe fn fetch_and_op(
    origin_addr: *const c_void,
    result_addr: *mut c_void,
    datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    op: MPI_Op,
    win: MPI_Win,
) -> MpiResult {
    // SAFETY: MPI_Fetch_and_op is MPI_Get_accumulate of one element.
    unsafe {
        get_accumulate_with(
            origin_addr,
            1,
            datatype,
            result_addr,
            1,
            datatype,
            target_rank,
            target_disp,
            1,
            datatype,
            op,
            win,
            None,
        )
    }
}

pub unsafe fn compare_and_swap(
    origin_addr: *const c_void,
    compare_addr: *const c_void,
    result_addr: *mut c_void,
    datatype: MPI_Datatype,
    target_rank: c_int,
    target_disp: MPI_Aint,
    win: MPI_Win,
) -> MpiResult {
    let dt = datatype::lookup(datatype)?;
    if !dt.is_predefined() {
        return Err(MpiError::new(
            MPI_ERR_TYPE,
            "MPI_Compare_and_swap takes a predefined datatype",
        ));
    }
    // SAFETY: one element each: the origin and compare values are packed
    // before the call returns; the result has room for one element until
    // the operation completes (MPI's contract).
    let (origin, compare, result) = unsafe {
        (
            message_buffer(origin_addr, 1, datatype)?,
            message_buffer(compare_addr, 1, datatype)?,
            message_buffer(result_addr, 1, datatype)?,
        )
    };
    let buffers = Buffers {
        origin: Some(origin),
        compare: Some(compare),
        result: Some(result),
    };
    let t = target(target_rank, target_disp, 1, datatype)?;
    origin::issue(win, RmaOp::CompareAndSwap, buffers, t, false).map(|_| ())
}

// ---- Synchronization ----

pub unsafe fn win_fence(assert: c_int, win: MPI_Win) -> MpiResult {
    sync::fence(win, assert)
}

pub unsafe fn win_lock(lock_type: c_int, rank: c_int, assert: c_int, win: MPI_Win) -> MpiResult {
    sync::lock(win, lock_type, rank, assert)
}

pub unsafe fn win_unlock(rank: c_int, win: MPI_Win) -> MpiResult {
    sync::unlock(win, rank)
}

pub unsafe fn win_lock_all(assert: c_int, win: MPI_Win) -> MpiResult {
    sync::lock_all(win, assert)
}

pub unsafe fn win_unlock_all(win: MPI_Win) -> MpiResult {
    sync::unlock_all(win)
}

pub unsafe fn win_flush(rank: c_int, win: MPI_Win) -> MpiResult {
    sync::flush(win, Some(rank))
}

pub unsafe fn win_flush_all(win: MPI_Win) -> MpiResult {
    sync::flush(win, None)
}

pub unsafe fn win_flush_local(rank: c_int, win: MPI_Win) -> MpiResult {
    sync::flush_local(win, Some(rank))
}

pub unsafe fn win_flush_local_all(win: MPI_Win) -> MpiResult {
    sync::flush_local(win, None)
}

/// The window ranks of a group's members (`MPI_ERR_GROUP` if one is not
/// in the window).
fn window_ranks(win: MPI_Win, group: MPI_Group) -> MpiResult<Vec<usize>> {
    let rt = runtime::lock();
    let g = group_of(&rt, group)?;
    let w = rt.window(win)?;
    g.members
        .iter()
        .map(|p| {
            w.members.iter().position(|m| m == p).ok_or_else(|| {
                MpiError::new(MPI_ERR_GROUP, "a member of the group is not in the window")
            })
        })
        .collect()
}

pub unsafe fn win_post(group: MPI_Group, assert: c_int, win: MPI_Win) -> MpiResult {
    sync::post(win, window_ranks(win, group)?, assert)
}

pub unsafe fn win_start(group: MPI_Group, assert: c_int, win: MPI_Win) -> MpiResult {
    sync::start(win, window_ranks(win, group)?, assert)
}

pub unsafe fn win_complete(win: MPI_Win) -> MpiResult {
    sync::complete(win)
}

pub unsafe fn win_wait(win: MPI_Win) -> MpiResult {
    sync::wait(win)
}

pub unsafe fn win_test(win: MPI_Win, flag: &mut c_int) -> MpiResult {
    *flag = c_int::from(sync::test(win)?);
    Ok(())
}

/// `MPI_Win_sync`: the window memory is one copy (unified model); a full
/// memory barrier orders this process's loads and stores around it.
pub unsafe fn win_sync(win: MPI_Win) -> MpiResult {
    runtime::lock().window(win)?;
    std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
    Ok(())
}

// ---- Names, groups, info, error handlers ----

pub unsafe fn win_set_name(win: MPI_Win, win_name: *const c_char) -> MpiResult {
    // SAFETY: `win_name` is MPI_Win_set_name's string: NULL (rejected) or
    // NUL-terminated, read only during this call.
    let name = unsafe { object_name(win_name, "win_name") }?;
    runtime::lock().window_mut(win)?.name = name;
    Ok(())
}

pub unsafe fn win_get_name(
    win: MPI_Win,
    win_name: *mut c_char,
    resultlen: &mut c_int,
) -> MpiResult {
    let rt = runtime::lock();
    let w = rt.window(win)?;
    // SAFETY: MPI_Win_get_name's contract: `win_name` has room for
    // MPI_MAX_OBJECT_NAME characters, the capacity given; `write_str`
    // rejects NULL.
    let n = unsafe { write_str(win_name, MPI_MAX_OBJECT_NAME as usize, &w.name, "win_name") }?;
    *resultlen = n as c_int;
    Ok(())
}

pub unsafe fn win_get_group(win: MPI_Win, group: &mut MPI_Group) -> MpiResult {
    let mut rt = runtime::lock();
    let members = rt.window(win)?.members.clone();
    *group = crate::abi::group::insert(&mut rt, Group { members });
    Ok(())
}

pub unsafe fn win_set_info(win: MPI_Win, info: MPI_Info) -> MpiResult {
    let given = info_pairs(info)?;
    let mut rt = runtime::lock();
    let w = rt.window_mut(win)?;
    for (key, value) in given {
        // How accumulates are made atomic is settled at creation.
        if key == "acc_single_intrinsic" {
            continue;
        }
        if let Some(slot) = w.hints.iter_mut().find(|(k, _)| *k == key) {
            slot.1 = value;
        }
    }
    Ok(())
}

pub unsafe fn win_get_info(win: MPI_Win, info_used: &mut MPI_Info) -> MpiResult {
    let mut rt = runtime::lock();
    let hints = rt.window(win)?.hints.clone();
    *info_used = rt
        .infos_mut()
        .insert(crate::core::info::InfoObject::from_pairs(hints));
    Ok(())
}

pub unsafe fn win_create_errhandler(
    function: MPI_Win_errhandler_function,
    errhandler: *mut MPI_Errhandler,
) -> MpiResult {
    // SAFETY: MPI_Win_create_errhandler's `errhandler`, passed on unchanged.
    unsafe {
        crate::abi::errors::create_errhandler(
            ErrhandlerFunction::Win(function),
            function.is_none(),
            errhandler,
        )
    }
}

pub unsafe fn win_set_errhandler(win: MPI_Win, errhandler: MPI_Errhandler) -> MpiResult {
    let mut rt = runtime::lock();
    // The handler first, then the window (the order bad_input.sh expects).
    rt.errhandlers().check(errhandler)?;
    rt.window(win)?;
    rt.errhandlers_mut().retain(errhandler)?;
    let w = rt.windows_mut().get_mut(win).expect("checked above");
    let old = std::mem::replace(&mut w.errhandler, errhandler);
    w.follows_world_errhandler = false;
    rt.errhandlers_mut().release(old)
}

pub unsafe fn win_get_errhandler(win: MPI_Win, errhandler: &mut MPI_Errhandler) -> MpiResult {
    let mut rt = runtime::lock();
    let h = rt.window(win)?.errhandler;
    // The program's handle is a reference of its own (MPI_Errhandler_free
    // drops it).
    rt.errhandlers_mut().retain(h)?;
    *errhandler = h;
    Ok(())
}

pub unsafe fn win_call_errhandler(win: MPI_Win, errorcode: c_int) -> MpiResult {
    crate::abi::boundary::call_errhandler_on_win(win, errorcode)
}
