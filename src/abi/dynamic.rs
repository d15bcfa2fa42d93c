//! Dynamic process management through the C ABI (MPI 4.1 chapter 11):
//! ports (`MPI_Open_port`, `MPI_Close_port`), connections between groups
//! of one job (`MPI_Comm_accept`, `MPI_Comm_connect`, `MPI_Comm_join`; see
//! `core::ports`), the name service (`MPI_Publish_name`,
//! `MPI_Lookup_name`, `MPI_Unpublish_name`: the launcher's, over PMI, or a
//! table of this process for a singleton), `MPI_Comm_disconnect` and
//! `MPI_Comm_get_parent`.
//!
//! Starting processes (`MPI_Comm_spawn`, `_multiple`) and
//! `MPI_Comm_get_parent`: the arguments are read here, at the root only;
//! how it works is in `core::spawn`.
use std::collections::HashMap;
use std::os::raw::{c_char, c_int};
use std::sync::{LazyLock, Mutex};

use crate::abi::args::{in_str, write_str};
use crate::bootstrap::pmi::client::SpawnCommand;
use crate::core::error::{MpiError, MpiResult};
use crate::core::runtime;
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::*;

/// Checks `root` against `comm`'s size (`MPI_ERR_ROOT`).
fn check_root(root: c_int, comm: MPI_Comm) -> MpiResult {
    let size = runtime::lock().comms().get(comm)?.size();
    if root < 0 || root as usize >= size {
        return Err(MpiError::new(
            MPI_ERR_ROOT,
            format!("root {root} is not a rank of the communicator (size {size})"),
        ));
    }
    Ok(())
}

/// The port name argument (significant at the root only: elsewhere it may
/// be anything, even NULL).
///
/// # Safety
/// `p` must be NULL or a NUL-terminated string.
unsafe fn port_arg(p: *const c_char) -> MpiResult<String> {
    if p.is_null() {
        return Ok(String::new());
    }
    // SAFETY: non-NULL, NUL-terminated (this function's contract).
    unsafe { in_str(p, "port_name") }
}

pub unsafe fn open_port(info: MPI_Info, port_name: *mut c_char) -> MpiResult {
    crate::abi::info::check_ignored(&runtime::lock(), info)?;
    let name = crate::core::ports::open()?;
    // SAFETY: MPI_Open_port's `port_name` has room for MPI_MAX_PORT_NAME
    // characters (MPI's contract).
    unsafe { write_str(port_name, MPI_MAX_PORT_NAME as usize, &name, "port_name") }?;
    Ok(())
}

pub unsafe fn close_port(port_name: *const c_char) -> MpiResult {
    // SAFETY: MPI_Close_port's `port_name` is NULL (rejected) or a string.
    let name = unsafe { in_str(port_name, "port_name") }?;
    crate::core::ports::close(&name)
}

pub unsafe fn comm_accept(
    port_name: *const c_char,
    info: MPI_Info,
    root: c_int,
    comm: MPI_Comm,
    newcomm: &mut MPI_Comm,
) -> MpiResult {
    crate::abi::info::check_ignored(&runtime::lock(), info)?;
    check_root(root, comm)?;
    // SAFETY: MPI_Comm_accept's `port_name`: NULL or a string.
    let name = unsafe { port_arg(port_name) }?;
    *newcomm = MPI_COMM_NULL;
    *newcomm = crate::core::ports::accept(&name, root, comm)?;
    Ok(())
}

pub unsafe fn comm_connect(
    port_name: *const c_char,
    info: MPI_Info,
    root: c_int,
    comm: MPI_Comm,
    newcomm: &mut MPI_Comm,
) -> MpiResult {
    crate::abi::info::check_ignored(&runtime::lock(), info)?;
    check_root(root, comm)?;
    // SAFETY: MPI_Comm_connect's `port_name`: NULL or a string.
    let name = unsafe { port_arg(port_name) }?;
    *newcomm = MPI_COMM_NULL;
    *newcomm = crate::core::ports::connect(&name, root, comm)?;
    Ok(())
}

/// `MPI_Comm_disconnect`: waits until the communicator's communication is
/// over at every member (a barrier: a member's sends have been received
/// once every member reached it, as far as a correct program goes), then
/// frees it.
pub unsafe fn comm_disconnect(comm: *mut MPI_Comm) -> MpiResult {
    // SAFETY: MPI_Comm_disconnect's `comm`: NULL (rejected) or valid.
    let comm = unsafe { crate::abi::args::out(comm, "comm") }?;
    if *comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF {
        return Err(MpiError::new(
            MPI_ERR_COMM,
            "MPI_COMM_WORLD and MPI_COMM_SELF cannot be disconnected",
        ));
    }
    // SAFETY: a barrier reads no memory.
    unsafe { crate::abi::collective::barrier(*comm) }?;
    // SAFETY: `comm` is the caller's handle, valid for writes.
    unsafe { crate::abi::comm::free(comm) }
}

pub unsafe fn comm_get_parent(parent: &mut MPI_Comm) -> MpiResult {
    *parent = crate::core::spawn::parent();
    Ok(())
}

/// `MPI_Comm_join`: the two processes tell each other who they are over
/// the socket (one line each: `oxmpi-join <job> <process>`), then connect
/// as two one-process groups.
pub unsafe fn comm_join(fd: c_int, intercomm: &mut MPI_Comm) -> MpiResult {
    *intercomm = MPI_COMM_NULL;
    let (job, me) = {
        let rt = runtime::lock();
        let p = rt.process()?;
        (p.job_id.clone(), p.id())
    };
    let hello = format!("oxmpi-join {job} {me}\n");
    write_all(fd, hello.as_bytes())?;
    let line = read_line(fd)?;
    let peer = line
        .strip_prefix("oxmpi-join ")
        .and_then(|rest| rest.rsplit_once(' '))
        .filter(|(their_job, _)| *their_job == job)
        .and_then(|(_, pid)| pid.parse::<u32>().ok())
        .ok_or_else(|| {
            MpiError::new(
                MPI_ERR_ARG,
                "the other end of the socket is not a process of this job calling MPI_Comm_join",
            )
        })?;
    let use_count = {
        let mut rt = runtime::lock();
        let pair = vec![me.min(peer), me.max(peer)];
        rt.contexts()?.1.count_creation("join".into(), pair)
    };
    *intercomm = crate::core::ports::join(peer, MPI_COMM_SELF, use_count)?;
    Ok(())
}

fn write_all(fd: c_int, mut bytes: &[u8]) -> MpiResult {
    while !bytes.is_empty() {
        // SAFETY: write(2) from a live slice of `bytes.len()` bytes.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(MpiError::new(
                MPI_ERR_OTHER,
                format!("writing to socket {fd}: {e}"),
            ));
        }
        bytes = &bytes[n as usize..];
    }
    Ok(())
}

/// One line (without its newline), read a byte at a time so nothing after
/// it is taken from the program's socket.
fn read_line(fd: c_int) -> MpiResult<String> {
    let mut line = Vec::new();
    loop {
        let mut b = 0u8;
        // SAFETY: read(2) of one byte into a live local.
        let n = unsafe { libc::read(fd, (&mut b as *mut u8).cast(), 1) };
        match n {
            1 if b == b'\n' => break,
            1 if line.len() < 512 => line.push(b),
            0 | 1 => {
                return Err(MpiError::new(
                    MPI_ERR_OTHER,
                    format!("socket {fd} closed before the other process said who it is"),
                ))
            }
            _ => {
                let e = std::io::Error::last_os_error();
                if e.kind() != std::io::ErrorKind::Interrupted {
                    return Err(MpiError::new(
                        MPI_ERR_OTHER,
                        format!("reading socket {fd}: {e}"),
                    ));
                }
            }
        }
    }
    Ok(String::from_utf8_lossy(&line).into_owned())
}

/// Names published by a process without a launcher (a singleton).
static LOCAL_NAMES: LazyLock<Mutex<HashMap<String, String>>> = LazyLock::new(Default::default);

fn local_names() -> std::sync::MutexGuard<'static, HashMap<String, String>> {
    LOCAL_NAMES.lock().unwrap_or_else(|e| e.into_inner())
}

fn pmi_error(e: impl std::fmt::Display) -> MpiError {
    MpiError::new(MPI_ERR_OTHER, format!("the launcher's name service: {e}"))
}

/// The service and port name arguments of the name service calls.
///
/// # Safety
/// Each must be NULL (rejected) or a NUL-terminated string.
unsafe fn service_and_port(
    service_name: *const c_char,
    port_name: *const c_char,
) -> MpiResult<(String, String)> {
    // SAFETY: this function's contract.
    unsafe {
        Ok((
            in_str(service_name, "service_name")?,
            in_str(port_name, "port_name")?,
        ))
    }
}

pub unsafe fn publish_name(
    service_name: *const c_char,
    info: MPI_Info,
    port_name: *const c_char,
) -> MpiResult {
    crate::abi::info::check_ignored(&runtime::lock(), info)?;
    // SAFETY: MPI_Publish_name's strings: NULL (rejected) or NUL-terminated.
    let (service, port) = unsafe { service_and_port(service_name, port_name) }?;
    let mut rt = runtime::lock();
    let published = match rt.pmi_mut()? {
        Some(pmi) => pmi.publish_name(&service, &port).map_err(pmi_error)?,
        None => {
            let mut names = local_names();
            !names.contains_key(&service) && names.insert(service.clone(), port).is_none()
        }
    };
    if !published {
        return Err(MpiError::new(
            MPI_ERR_SERVICE,
            format!("service \"{service}\" is published already"),
        ));
    }
    Ok(())
}

pub unsafe fn unpublish_name(
    service_name: *const c_char,
    info: MPI_Info,
    port_name: *const c_char,
) -> MpiResult {
    crate::abi::info::check_ignored(&runtime::lock(), info)?;
    // SAFETY: MPI_Unpublish_name's strings: NULL (rejected) or terminated.
    let (service, _port) = unsafe { service_and_port(service_name, port_name) }?;
    let mut rt = runtime::lock();
    let removed = match rt.pmi_mut()? {
        Some(pmi) => pmi.unpublish_name(&service).map_err(pmi_error)?,
        None => local_names().remove(&service).is_some(),
    };
    if !removed {
        return Err(MpiError::new(
            MPI_ERR_SERVICE,
            format!("service \"{service}\" is not published"),
        ));
    }
    Ok(())
}

pub unsafe fn lookup_name(
    service_name: *const c_char,
    info: MPI_Info,
    port_name: *mut c_char,
) -> MpiResult {
    crate::abi::info::check_ignored(&runtime::lock(), info)?;
    // SAFETY: MPI_Lookup_name's `service_name`: NULL (rejected) or a string.
    let service = unsafe { in_str(service_name, "service_name") }?;
    let found = {
        let mut rt = runtime::lock();
        match rt.pmi_mut()? {
            Some(pmi) => pmi.lookup_name(&service).map_err(pmi_error)?,
            None => local_names().get(&service).cloned(),
        }
    };
    let port = found.ok_or_else(|| {
        MpiError::new(
            MPI_ERR_NAME,
            format!("no port is published for service \"{service}\""),
        )
    })?;
    // SAFETY: MPI_Lookup_name's `port_name` has room for MPI_MAX_PORT_NAME
    // characters (MPI's contract).
    unsafe { write_str(port_name, MPI_MAX_PORT_NAME as usize, &port, "port_name") }?;
    Ok(())
}

/// One command's `argv`: `MPI_ARGV_NULL` (NULL) or a NULL-terminated
/// array of strings.
///
/// # Safety
/// `argv` must be NULL or a NULL-terminated array of NUL-terminated
/// strings.
unsafe fn argv_arg(argv: *const *mut c_char) -> MpiResult<Vec<String>> {
    let mut args = Vec::new();
    if argv.is_null() {
        return Ok(args);
    }
    for i in 0.. {
        // SAFETY: the array is NULL-terminated (contract), and `i` stops
        // at its terminator.
        let arg = unsafe { *argv.add(i) };
        if arg.is_null() {
            break;
        }
        // SAFETY: a non-NULL entry is a NUL-terminated string (contract).
        args.push(unsafe { in_str(arg, "argv") }?);
    }
    Ok(args)
}

/// The keys of a spawn's info for the launcher (`host`, `wdir`, `path`
/// mean something to oxmpi's mpiexec; it ignores the others).
fn spawn_info(info: MPI_Info) -> MpiResult<Vec<(String, String)>> {
    if info == MPI_INFO_NULL {
        return Ok(Vec::new());
    }
    let rt = runtime::lock();
    Ok(crate::abi::info::lookup(&rt, info)?.entries().to_vec())
}

/// One command of a spawn, read at the root.
///
/// # Safety
/// `command` and `argv` as [`comm_spawn`] takes them.
unsafe fn spawn_command(
    command: *const c_char,
    argv: *const *mut c_char,
    maxprocs: c_int,
    info: MPI_Info,
) -> MpiResult<SpawnCommand> {
    let info = spawn_info(info)?;
    // SAFETY: the caller's contract.
    let command = unsafe { in_str(command, "command") }?;
    if command.trim().is_empty() {
        return Err(MpiError::new(MPI_ERR_SPAWN, "the command is empty"));
    }
    if maxprocs < 1 {
        return Err(MpiError::new(
            MPI_ERR_ARG,
            format!("maxprocs is {maxprocs}: at least one process must be started"),
        ));
    }
    Ok(SpawnCommand {
        command,
        // SAFETY: the caller's contract.
        args: unsafe { argv_arg(argv) }?,
        maxprocs: maxprocs as u32,
        info,
    })
}

/// Runs a spawn whose commands `read` reads at the root, and fills
/// `errcodes` (unless `MPI_ERRCODES_IGNORE`): `MPI_SUCCESS` for every
/// process started (every member learns their number from the new
/// intercommunicator), or, at the root when nothing was started, the
/// error's class for each process asked for.
///
/// # Safety
/// `errcodes` must be NULL or have room for one `int` per process started
/// (asked for, at the root).
unsafe fn run_spawn(
    read: impl FnOnce() -> MpiResult<Vec<SpawnCommand>>,
    root: c_int,
    comm: MPI_Comm,
    intercomm: &mut MPI_Comm,
    errcodes: *mut c_int,
) -> MpiResult {
    check_root(root, comm)?;
    let asked = std::cell::Cell::new(0usize);
    let result = crate::core::spawn::spawn(
        || {
            let commands = read()?;
            asked.set(commands.iter().map(|c| c.maxprocs as usize).sum());
            Ok(commands)
        },
        root,
        comm,
    );
    let (codes, code) = match &result {
        Ok(h) => (runtime::lock().comms().get(*h)?.peers().len(), MPI_SUCCESS),
        Err(e) => (asked.get(), e.class),
    };
    if !errcodes.is_null() {
        for i in 0..codes {
            // SAFETY: room for one int per process (this function's
            // contract).
            unsafe { *errcodes.add(i) = code };
        }
    }
    *intercomm = result?;
    Ok(())
}

#[allow(clippy::too_many_arguments)]
pub unsafe fn comm_spawn(
    command: *const c_char,
    argv: *mut *mut c_char,
    maxprocs: c_int,
    info: MPI_Info,
    root: c_int,
    comm: MPI_Comm,
    intercomm: &mut MPI_Comm,
    array_of_errcodes: *mut c_int,
) -> MpiResult {
    *intercomm = MPI_COMM_NULL;
    // SAFETY: MPI_Comm_spawn's arguments, significant (and read) at the
    // root only; `array_of_errcodes` has room for `maxprocs` ints.
    unsafe {
        run_spawn(
            || Ok(vec![spawn_command(command, argv, maxprocs, info)?]),
            root,
            comm,
            intercomm,
            array_of_errcodes,
        )
    }
}

#[allow(clippy::too_many_arguments)]
pub unsafe fn comm_spawn_multiple(
    count: c_int,
    array_of_commands: *mut *mut c_char,
    array_of_argv: *mut *mut *mut c_char,
    array_of_maxprocs: *const c_int,
    array_of_info: *const MPI_Info,
    root: c_int,
    comm: MPI_Comm,
    intercomm: &mut MPI_Comm,
    array_of_errcodes: *mut c_int,
) -> MpiResult {
    *intercomm = MPI_COMM_NULL;
    let read = || {
        if count < 1 {
            return Err(MpiError::new(
                MPI_ERR_ARG,
                format!("count is {count}: at least one command"),
            ));
        }
        if array_of_commands.is_null() || array_of_maxprocs.is_null() || array_of_info.is_null() {
            return Err(MpiError::new(
                MPI_ERR_ARG,
                "array_of_commands, array_of_maxprocs and array_of_info must not be NULL",
            ));
        }
        (0..count as usize)
            .map(|i| {
                // SAFETY: the arrays have `count` entries (MPI's contract);
                // `array_of_argv` is NULL (MPI_ARGVS_NULL) or has `count`
                // entries, each MPI_ARGV_NULL or a NULL-terminated array.
                unsafe {
                    let argv = if array_of_argv.is_null() {
                        std::ptr::null()
                    } else {
                        *array_of_argv.add(i)
                    };
                    spawn_command(
                        *array_of_commands.add(i),
                        argv,
                        *array_of_maxprocs.add(i),
                        *array_of_info.add(i),
                    )
                }
            })
            .collect()
    };
    // SAFETY: the arguments are read at the root only, as above;
    // `array_of_errcodes` has room for one int per process asked for.
    unsafe { run_spawn(read, root, comm, intercomm, array_of_errcodes) }
}
