//! Communicator queries through the C ABI: rank, size, names. (Creation and
//! freeing come with the point-to-point and sessions work.)
use std::os::raw::{c_char, c_int};

use crate::abi::args::{in_str, object_name, out, write_str};
use crate::core::error::{MpiError, MpiResult};
use crate::core::runtime;
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::*;
use crate::mpi_abi::types::{MPI_Errhandler, MPI_Group, MPI_Info, MPI_Request};

pub unsafe fn rank(comm: MPI_Comm, rank: &mut c_int) -> MpiResult {
    *rank = runtime::lock().comms().get(comm)?.rank as c_int;
    Ok(())
}

pub unsafe fn size(comm: MPI_Comm, size: &mut c_int) -> MpiResult {
    *size = runtime::lock().comms().get(comm)?.size() as c_int;
    Ok(())
}

pub unsafe fn set_name(comm: MPI_Comm, name: *const c_char) -> MpiResult {
    // SAFETY: `name` is MPI_Comm_set_name's string: NULL (rejected) or
    // NUL-terminated, read only during this call.
    let name = unsafe { object_name(name, "comm_name") }?;
    runtime::lock().comms_mut().get_mut(comm)?.name = name;
    Ok(())
}

pub unsafe fn get_name(comm: MPI_Comm, name: *mut c_char, resultlen: &mut c_int) -> MpiResult {
    let rt = runtime::lock();
    // SAFETY: MPI_Comm_get_name's contract: `name` has room for
    // MPI_MAX_OBJECT_NAME characters, the capacity given; `write_str` rejects
    // NULL.
    let n = unsafe {
        write_str(
            name,
            MPI_MAX_OBJECT_NAME as usize,
            &rt.comms().get(comm)?.name,
            "comm_name",
        )
    }?;
    *resultlen = n as c_int;
    Ok(())
}

/// `MPI_Comm_dup`; on an error (a copy callback failed) `*newcomm` is
/// `MPI_COMM_NULL`, as in MPICH.
pub unsafe fn dup(comm: MPI_Comm, newcomm: &mut MPI_Comm) -> MpiResult {
    *newcomm = MPI_COMM_NULL;
    let created = crate::core::comm_constructors::dup(comm)?;
    crate::abi::attributes::copy_all(comm, created)?;
    *newcomm = created;
    Ok(())
}

pub unsafe fn split(comm: MPI_Comm, color: c_int, key: c_int, newcomm: &mut MPI_Comm) -> MpiResult {
    if color < 0 && color != MPI_UNDEFINED {
        return Err(MpiError::new(
            MPI_ERR_ARG,
            format!("color {color} is negative (and not MPI_UNDEFINED)"),
        ));
    }
    *newcomm = crate::core::comm_constructors::split(comm, color, key)?;
    Ok(())
}

/// `MPI_Comm_free`: operations already started on the communicator still
/// complete.
pub unsafe fn free(comm: &mut MPI_Comm) -> MpiResult {
    if *comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF {
        return Err(MpiError::new(
            MPI_ERR_COMM,
            "a predefined communicator cannot be freed",
        ));
    }
    crate::abi::attributes::delete_all(*comm)?;
    runtime::lock().free_comm(*comm)?;
    *comm = MPI_COMM_NULL;
    Ok(())
}

pub unsafe fn compare(comm1: MPI_Comm, comm2: MPI_Comm, result: &mut c_int) -> MpiResult {
    let rt = runtime::lock();
    let a = rt.comms().get(comm1)?;
    let b = rt.comms().get(comm2)?;
    *result = if comm1 == comm2 {
        MPI_IDENT
    } else if a.members == b.members {
        MPI_CONGRUENT
    } else {
        let mut x = a.members.to_vec();
        let mut y = b.members.to_vec();
        x.sort_unstable();
        y.sort_unstable();
        if x == y {
            MPI_SIMILAR
        } else {
            MPI_UNEQUAL
        }
    };
    Ok(())
}

pub unsafe fn create_from_group(
    group: MPI_Group,
    stringtag: *const c_char,
    info: MPI_Info,
    errhandler: MPI_Errhandler,
    newcomm: &mut MPI_Comm,
) -> MpiResult {
    // SAFETY: `stringtag` is NULL (rejected by `in_str`) or a NUL-terminated
    // string (MPI's contract), read only during this call.
    let tag = unsafe { in_str(stringtag, "stringtag") }?;
    if tag.len() >= MPI_MAX_STRINGTAG_LEN as usize {
        return Err(MpiError::new(
            MPI_ERR_ARG,
            format!(
                "string tag of {} bytes (at most {})",
                tag.len(),
                MPI_MAX_STRINGTAG_LEN - 1
            ),
        ));
    }
    {
        let rt = runtime::lock();
        if info != MPI_INFO_NULL {
            crate::abi::info::lookup(&rt, info)?;
        }
        // Checked before an empty group's early MPI_COMM_NULL.
        rt.errhandlers().check(errhandler)?;
    }
    *newcomm = crate::core::comm_constructors::create_from_group(group, &tag, errhandler)?;
    Ok(())
}

pub unsafe fn test_inter(comm: MPI_Comm, flag: &mut c_int) -> MpiResult {
    *flag = runtime::lock().comms().get(comm)?.is_inter() as c_int;
    Ok(())
}

pub unsafe fn create(comm: MPI_Comm, group: MPI_Group, newcomm: &mut MPI_Comm) -> MpiResult {
    *newcomm = crate::core::comm_constructors::create(comm, group)?;
    Ok(())
}

pub unsafe fn create_group(
    comm: MPI_Comm,
    group: MPI_Group,
    tag: c_int,
    newcomm: &mut MPI_Comm,
) -> MpiResult {
    if tag < 0 {
        return Err(MpiError::new(MPI_ERR_TAG, format!("tag {tag} is negative")));
    }
    *newcomm = crate::core::comm_constructors::create_group(comm, group, tag)?;
    Ok(())
}

/// The value of `mpi_hw_resource_type` that names a node's shared memory.
const SHARED_MEMORY_RESOURCE: &str = "mpi_shared_memory";

/// `MPI_Comm_split_type`: `MPI_COMM_TYPE_SHARED` (and the MPICH extension
/// `MPIX_COMM_TYPE_NEIGHBORHOOD`) split by node; `MPI_UNDEFINED` gives
/// `MPI_COMM_NULL`. Hardware types, as MPI 4.1 and MPICH: oxmpi knows
/// one resource, the node's shared memory, so `MPI_COMM_TYPE_HW_GUIDED`
/// splits by node when the info's `mpi_hw_resource_type` is
/// `mpi_shared_memory` and gives `MPI_COMM_NULL` for any other resource,
/// or without the key; `MPI_COMM_TYPE_HW_UNGUIDED` gives the node's
/// communicator when it is a strict subset of `comm` (and sets
/// `mpi_hw_resource_type` in `info`), else `MPI_COMM_NULL`. Every member
/// passes the same split type and resource, so all take the same path.
pub unsafe fn split_type(
    comm: MPI_Comm,
    split_type: c_int,
    key: c_int,
    info: MPI_Info,
    newcomm: &mut MPI_Comm,
) -> MpiResult {
    let resource = {
        let rt = runtime::lock();
        rt.comms().get(comm)?;
        if info == MPI_INFO_NULL {
            None
        } else {
            crate::abi::info::lookup(&rt, info)?
                .get("mpi_hw_resource_type")?
                .map(str::to_string)
        }
    };
    *newcomm = match split_type {
        MPI_UNDEFINED => crate::core::comm_constructors::split(comm, MPI_UNDEFINED, key)?,
        MPI_COMM_TYPE_SHARED | MPIX_COMM_TYPE_NEIGHBORHOOD => {
            crate::core::comm_constructors::split_shared(comm, key)?
        }
        MPI_COMM_TYPE_HW_GUIDED => {
            if resource.as_deref() == Some(SHARED_MEMORY_RESOURCE) {
                crate::core::comm_constructors::split_shared(comm, key)?
            } else {
                MPI_COMM_NULL
            }
        }
        MPI_COMM_TYPE_HW_UNGUIDED => {
            let node = crate::core::comm_constructors::split_shared(comm, key)?;
            let mut rt = runtime::lock();
            if rt.comms().get(node)?.size() < rt.comms().get(comm)?.size() {
                if info != MPI_INFO_NULL {
                    crate::abi::info::lookup_mut(&mut rt, info)?
                        .set("mpi_hw_resource_type", SHARED_MEMORY_RESOURCE)?;
                }
                node
            } else {
                rt.free_comm(node)?;
                MPI_COMM_NULL
            }
        }
        other => {
            return Err(MpiError::new(
                MPI_ERR_ARG,
                format!("split type {other} is not known"),
            ))
        }
    };
    Ok(())
}

/// The hints of `info` for a new communicator (none for `MPI_INFO_NULL`).
/// The communicator hints oxmpi takes: MPI's assertions. Other keys are
/// ignored (not kept, so `MPI_Comm_get_info` does not return them), as in
/// MPICH.
const COMM_HINTS: [&str; 4] = [
    "mpi_assert_no_any_tag",
    "mpi_assert_no_any_source",
    "mpi_assert_exact_length",
    "mpi_assert_allow_overtaking",
];

/// The hints of `info` a communicator keeps (see [`COMM_HINTS`]).
fn info_hints(info: MPI_Info) -> MpiResult<crate::core::info::InfoObject> {
    let mut hints = crate::core::info::InfoObject::new();
    if info == MPI_INFO_NULL {
        return Ok(hints);
    }
    let rt = runtime::lock();
    for (k, v) in crate::abi::info::lookup(&rt, info)?.entries() {
        if COMM_HINTS.contains(&k.as_str()) {
            hints.set(k, v)?;
        }
    }
    Ok(hints)
}

pub unsafe fn dup_with_info(comm: MPI_Comm, info: MPI_Info, newcomm: &mut MPI_Comm) -> MpiResult {
    let hints = info_hints(info)?;
    // SAFETY: `dup` dereferences nothing but `newcomm`, a `&mut` (valid and
    // unaliased).
    unsafe { dup(comm, newcomm) }?;
    runtime::lock().comms_mut().get_mut(*newcomm)?.info = hints;
    Ok(())
}

/// `MPI_Comm_idup`: nonblocking. The call takes its place in `comm`'s
/// collective sequence and reserves this process's context proposal; the
/// agreement runs as a nonblocking collective, and its completion installs
/// the communicator and writes its handle to `*newcomm` (valid, as MPI
/// says, only once the request completes).
///
/// Attributes are copied at the call: the copy callbacks (user code) run
/// here, on the caller's thread and without the runtime lock, with the
/// values of that moment, which the standard allows; completion may happen
/// on the collective worker thread, where user code must not run. The
/// copies are attached to the new communicator at completion.
///
/// On an intercommunicator the members of both groups agree (see
/// `core::comm_constructors::start_idup`).
pub unsafe fn idup(comm: MPI_Comm, newcomm: *mut MPI_Comm, request: *mut MPI_Request) -> MpiResult {
    // SAFETY: MPI_Comm_idup's outputs, passed on unchanged: each is NULL
    // (rejected) or valid, `newcomm` until the request completes (MPI's
    // contract, which `start_idup` asks).
    unsafe { start_idup(comm, None, newcomm, request) }
}

/// # Safety
/// `request` must be NULL or valid for writing a handle during the call;
/// `newcomm` NULL or valid for writing one until the request completes.
unsafe fn start_idup(
    comm: MPI_Comm,
    hints: Option<crate::core::info::InfoObject>,
    newcomm: *mut MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult {
    // SAFETY: `request` is NULL (rejected by `out`) or valid for writes during
    // this call (this function's contract), and MPI does not let it alias
    // `newcomm`.
    let request = unsafe { out(request, "request") }?;
    // SAFETY: `newcomm` is NULL (rejected by `out`) or valid for writes (this
    // function's contract); only checked here, written at completion.
    let _ = unsafe { out(newcomm, "newcomm") }?;
    let copies = crate::abi::attributes::prepare_copies(comm)?;
    let agreement = match crate::core::comm_constructors::start_idup(comm) {
        Ok(a) => a,
        Err(e) => {
            crate::abi::attributes::drop_copies(&mut runtime::lock(), copies);
            return Err(e);
        }
    };
    // The future must be Send; the pointer travels as an address.
    let address = newcomm as usize;
    let algorithm = async move {
        let created = match agreement.await {
            Ok(created) => created,
            Err(e) => {
                crate::abi::attributes::drop_copies(&mut runtime::lock(), copies);
                return Err(e);
            }
        };
        {
            let mut rt = runtime::lock();
            crate::abi::attributes::attach_copies(&mut rt, created, copies)?;
            if let Some(hints) = hints {
                rt.comms_mut().get_mut(created)?.info = hints;
            }
        }
        // SAFETY: `newcomm` was checked non-NULL at the call, and MPI
        // requires the program to keep it valid (and not to read it) until
        // the request completes, which is now.
        unsafe { *(address as *mut MPI_Comm) = created };
        Ok(())
    };
    *request = crate::core::collective::executor::start(algorithm)?;
    Ok(())
}

/// `MPI_Comm_idup_with_info`: as `MPI_Comm_idup`, with the new
/// communicator's info hints taken from `info` at the call (as
/// `MPI_Comm_dup_with_info`).
pub unsafe fn idup_with_info(
    comm: MPI_Comm,
    info: MPI_Info,
    newcomm: *mut MPI_Comm,
    request: *mut MPI_Request,
) -> MpiResult {
    let hints = info_hints(info)?;
    // SAFETY: MPI_Comm_idup_with_info's outputs, passed on unchanged: each is
    // NULL (rejected) or valid, `newcomm` until the request completes (MPI's
    // contract, which `start_idup` asks).
    unsafe { start_idup(comm, Some(hints), newcomm, request) }
}

pub unsafe fn set_info(comm: MPI_Comm, info: MPI_Info) -> MpiResult {
    runtime::lock().comms().get(comm)?;
    let hints = info_hints(info)?;
    let mut rt = runtime::lock();
    let c = rt.comms_mut().get_mut(comm)?;
    for (k, v) in hints.entries() {
        c.info.set(k, v)?;
    }
    Ok(())
}

pub unsafe fn get_info(comm: MPI_Comm, info_used: &mut MPI_Info) -> MpiResult {
    let mut rt = runtime::lock();
    let copy = rt.comms().get(comm)?.info.clone();
    *info_used = rt.infos_mut().insert(copy);
    Ok(())
}

pub unsafe fn remote_size(comm: MPI_Comm, size: &mut c_int) -> MpiResult {
    let rt = runtime::lock();
    let c = rt.comms().get(comm)?;
    let remote = c
        .remote
        .as_ref()
        .ok_or_else(|| MpiError::new(MPI_ERR_COMM, "not an intercommunicator"))?;
    *size = remote.len() as c_int;
    Ok(())
}

pub unsafe fn remote_group(comm: MPI_Comm, group: &mut MPI_Group) -> MpiResult {
    let mut rt = runtime::lock();
    let remote = rt
        .comms()
        .get(comm)?
        .remote
        .clone()
        .ok_or_else(|| MpiError::new(MPI_ERR_COMM, "not an intercommunicator"))?;
    *group = rt
        .groups_mut()
        .insert(crate::core::group::Group { members: remote });
    Ok(())
}

pub unsafe fn intercomm_create(
    local_comm: MPI_Comm,
    local_leader: c_int,
    peer_comm: MPI_Comm,
    remote_leader: c_int,
    tag: c_int,
    newintercomm: &mut MPI_Comm,
) -> MpiResult {
    if tag < 0 {
        return Err(MpiError::new(MPI_ERR_TAG, format!("tag {tag} is negative")));
    }
    *newintercomm =
        crate::core::intercomm::create(local_comm, local_leader, peer_comm, remote_leader, tag)?;
    Ok(())
}

pub unsafe fn intercomm_create_from_groups(
    local_group: MPI_Group,
    local_leader: c_int,
    remote_group: MPI_Group,
    remote_leader: c_int,
    stringtag: *const c_char,
    info: MPI_Info,
    errhandler: MPI_Errhandler,
    newintercomm: &mut MPI_Comm,
) -> MpiResult {
    // SAFETY: `stringtag` is NULL (rejected by `in_str`) or a NUL-terminated
    // string (MPI's contract), read only during this call.
    let tag = unsafe { in_str(stringtag, "stringtag") }?;
    if info != MPI_INFO_NULL {
        crate::abi::info::lookup(&runtime::lock(), info)?;
    }
    *newintercomm = crate::core::intercomm::create_from_groups(
        local_group,
        local_leader,
        remote_group,
        remote_leader,
        &tag,
        errhandler,
    )?;
    Ok(())
}

pub unsafe fn intercomm_merge(
    intercomm: MPI_Comm,
    high: c_int,
    newintracomm: &mut MPI_Comm,
) -> MpiResult {
    *newintracomm = crate::core::intercomm::merge(intercomm, high != 0)?;
    Ok(())
}
