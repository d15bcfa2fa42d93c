//! Sessions and process sets through the C ABI: `MPI_Session_*` and
//! `MPI_Group_from_session_pset`.
use std::os::raw::{c_char, c_int};

use crate::abi::args::{in_str, write_str};
use crate::abi::boundary;
use crate::core::errhandler::ErrhandlerFunction;
use crate::core::error::{MpiError, MpiResult};
use crate::core::group::Group;
use crate::core::info::InfoObject;
use crate::core::runtime::{self, Runtime};
use crate::core::session::{parse_thread_level, thread_level_name, Session};
use crate::mpi_abi::callbacks::*;
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::*;

fn invalid(h: MPI_Session) -> MpiError {
    if h == MPI_SESSION_NULL {
        MpiError::new(
            MPI_ERR_SESSION,
            "MPI_SESSION_NULL is not a valid session here",
        )
    } else {
        MpiError::new(
            MPI_ERR_SESSION,
            format!(
                "handle {:#010x} is not a valid (or a finalized) session",
                h as u32
            ),
        )
    }
}

pub fn lookup(rt: &Runtime, h: MPI_Session) -> MpiResult<&Session> {
    rt.sessions().get(h).ok_or_else(|| invalid(h))
}

/// `MPI_Session_init`: local. Starts an epoch when none is open.
pub unsafe fn init(
    info: MPI_Info,
    errhandler: MPI_Errhandler,
    session: &mut MPI_Session,
) -> MpiResult {
    let mut rt = runtime::lock();
    let requested = if info == MPI_INFO_NULL {
        None
    } else {
        crate::abi::info::lookup(&rt, info)?
            .get("thread_level")?
            .map(|v| {
                parse_thread_level(v).ok_or_else(|| {
                    MpiError::new(
                        MPI_ERR_INFO_VALUE,
                        format!("thread_level '{v}' is not an MPI_THREAD_* name"),
                    )
                })
            })
            .transpose()?
    };
    let mut session_info = if info == MPI_INFO_NULL {
        InfoObject::new()
    } else {
        crate::abi::info::lookup(&rt, info)?.clone()
    };
    rt.errhandlers().check(errhandler)?;
    // Without a request a session is thread-safe, as in MPICH (libraries
    // open their sessions from any thread; the runtime supports
    // MPI_THREAD_MULTIPLE at no cost to single-threaded use).
    let thread_level = requested.unwrap_or(MPI_THREAD_MULTIPLE);
    session_info.set("thread_level", thread_level_name(thread_level))?;
    let (epoch, new_epoch) = rt.enter_instance()?;
    if new_epoch {
        // Under Hydra a card becomes visible only at a PMI barrier: there,
        // every process must start its epochs together (README).
        if let Err(e) = rt.make_cards_visible() {
            runtime::leave_instance(rt);
            return Err(e);
        }
    }
    match rt.add_session(Session {
        errhandler,
        info: session_info,
        thread_level,
        epoch,
    }) {
        Ok(h) => {
            *session = h;
            Ok(())
        }
        Err(e) => {
            runtime::leave_instance(rt);
            Err(e)
        }
    }
}

pub unsafe fn finalize(session: &mut MPI_Session) -> MpiResult {
    let mut rt = runtime::lock();
    rt.free_session(*session).ok_or_else(|| invalid(*session))?;
    *session = MPI_SESSION_NULL;
    runtime::leave_instance(rt);
    Ok(())
}

pub unsafe fn get_info(session: MPI_Session, info_used: &mut MPI_Info) -> MpiResult {
    let mut rt = runtime::lock();
    let info = lookup(&rt, session)?.info.clone();
    *info_used = rt.infos_mut().insert(info);
    Ok(())
}

pub unsafe fn get_num_psets(
    session: MPI_Session,
    info: MPI_Info,
    npset_names: &mut c_int,
) -> MpiResult {
    let rt = runtime::lock();
    lookup(&rt, session)?;
    // An info argument that asks nothing (reserved by MPI 4.1).
    crate::abi::info::check_ignored(&rt, info)?;
    *npset_names = rt.process()?.psets.len() as c_int;
    Ok(())
}

/// `*pset_len == 0` asks for the name's length (with its NUL); otherwise
/// the name is copied (truncated to `*pset_len - 1` characters) and
/// `*pset_len` is set to the full length.
pub unsafe fn get_nth_pset(
    session: MPI_Session,
    info: MPI_Info,
    n: c_int,
    pset_len: &mut c_int,
    pset_name: *mut c_char,
) -> MpiResult {
    if *pset_len < 0 {
        return Err(MpiError::new(
            MPI_ERR_ARG,
            format!("pset_len is negative ({})", *pset_len),
        ));
    }
    let rt = runtime::lock();
    lookup(&rt, session)?;
    // An info argument that asks nothing (reserved by MPI 4.1).
    crate::abi::info::check_ignored(&rt, info)?;
    let name = rt.process()?.psets.name(n)?;
    if *pset_len > 0 {
        // SAFETY: MPI_Session_get_nth_pset's contract: `pset_name` has room for
        // `*pset_len` characters (NUL included; positive here), the capacity
        // given; `write_str` rejects NULL.
        unsafe { write_str(pset_name, *pset_len as usize, name, "pset_name") }?;
    }
    *pset_len = name.len() as c_int + 1;
    Ok(())
}

pub unsafe fn get_pset_info(
    session: MPI_Session,
    pset_name: *const c_char,
    info: &mut MPI_Info,
) -> MpiResult {
    // SAFETY: `pset_name` is MPI_Session_get_pset_info's string: NULL (rejected
    // by `in_str`) or NUL-terminated, read only here.
    let name = unsafe { in_str(pset_name, "pset_name") }?;
    let mut rt = runtime::lock();
    lookup(&rt, session)?;
    let members = rt.process()?.psets.members(&name)?;
    let mut pset_info = InfoObject::new();
    pset_info.set("mpi_size", &members.len().to_string())?;
    *info = rt.infos_mut().insert(pset_info);
    Ok(())
}

pub unsafe fn group_from_session_pset(
    session: MPI_Session,
    pset_name: *const c_char,
    newgroup: &mut MPI_Group,
) -> MpiResult {
    // SAFETY: `pset_name` is MPI_Group_from_session_pset's string: NULL
    // (rejected by `in_str`) or NUL-terminated, read only here.
    let name = unsafe { in_str(pset_name, "pset_name") }?;
    let mut rt = runtime::lock();
    lookup(&rt, session)?;
    let members = rt.process()?.psets.members(&name)?;
    *newgroup = rt.groups_mut().insert(Group { members });
    Ok(())
}

pub unsafe fn create_errhandler(
    function: MPI_Session_errhandler_function,
    errhandler: *mut MPI_Errhandler,
) -> MpiResult {
    // SAFETY: MPI_Session_create_errhandler's `errhandler`, passed on
    // unchanged: NULL or valid for one write during the call, as
    // `create_errhandler` asks.
    unsafe {
        crate::abi::errors::create_errhandler(
            ErrhandlerFunction::Session(function),
            function.is_none(),
            errhandler,
        )
    }
}

pub unsafe fn set_errhandler(session: MPI_Session, errhandler: MPI_Errhandler) -> MpiResult {
    runtime::lock().set_session_errhandler(session, errhandler, || invalid(session))
}

pub unsafe fn get_errhandler(session: MPI_Session, errhandler: &mut MPI_Errhandler) -> MpiResult {
    *errhandler = runtime::lock().session_errhandler(session, || invalid(session))?;
    Ok(())
}

pub unsafe fn call_errhandler(session: MPI_Session, errorcode: c_int) -> MpiResult {
    boundary::call_errhandler_on_session(session, errorcode)
}
