//! Info objects through the C ABI, and `MPI_INFO_ENV` (read-only, built on
//! first use from the process's command line and environment).
use std::os::raw::{c_char, c_int};
use std::sync::LazyLock;

use crate::abi::args::{in_str, write_str};
use crate::core::error::{MpiError, MpiResult};
use crate::core::info::InfoObject;
use crate::core::runtime::{self, Runtime};
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::*;

static INFO_ENV: LazyLock<InfoObject> = LazyLock::new(|| {
    let args: Vec<String> = std::env::args().collect();
    let mut pairs = Vec::new();
    if let Some(cmd) = args.first() {
        pairs.push(("command".to_string(), cmd.clone()));
    }
    if args.len() > 1 {
        pairs.push(("argv".to_string(), args[1..].join(" ")));
    }
    if let Ok(size) = std::env::var("PMI_SIZE") {
        pairs.push(("maxprocs".to_string(), size));
    }
    if let Ok(dir) = std::env::current_dir() {
        pairs.push(("wdir".to_string(), dir.display().to_string()));
    }
    pairs.push(("host".to_string(), crate::bootstrap::node::hostname()));
    pairs.push(("arch".to_string(), std::env::consts::ARCH.to_string()));
    pairs.retain(|(_, v)| !v.is_empty());
    InfoObject::from_pairs(pairs)
});

fn invalid(h: MPI_Info) -> MpiError {
    if h == MPI_INFO_NULL {
        MpiError::new(
            MPI_ERR_INFO,
            "MPI_INFO_NULL is not a valid info object here",
        )
    } else {
        MpiError::new(
            MPI_ERR_INFO,
            format!(
                "handle {:#010x} is not a valid (or a freed) info object",
                h as u32
            ),
        )
    }
}

/// Reads an info object (predefined or user) inside the runtime lock.
pub fn lookup(rt: &Runtime, h: MPI_Info) -> MpiResult<&InfoObject> {
    if h == MPI_INFO_ENV {
        return Ok(&INFO_ENV);
    }
    rt.infos().get(h).ok_or_else(|| invalid(h))
}

/// An info argument oxmpi takes no hint from: it must still be a valid
/// handle or `MPI_INFO_NULL` (`MPI_ERR_INFO`).
pub fn check_ignored(rt: &Runtime, h: MPI_Info) -> MpiResult {
    if h != MPI_INFO_NULL {
        lookup(rt, h)?;
    }
    Ok(())
}

pub fn lookup_mut(rt: &mut Runtime, h: MPI_Info) -> MpiResult<&mut InfoObject> {
    if h == MPI_INFO_ENV {
        return Err(MpiError::new(MPI_ERR_INFO, "MPI_INFO_ENV is read-only"));
    }
    rt.infos_mut().get_mut(h).ok_or_else(|| invalid(h))
}

pub unsafe fn create(info: &mut MPI_Info) -> MpiResult {
    *info = runtime::lock().infos_mut().insert(InfoObject::new());
    Ok(())
}

/// `MPI_Info_create_env` (MPI 4): a new info object with what
/// `MPI_INFO_ENV` holds; `argc`/`argv` (both may be 0/NULL), when given,
/// name the command and its arguments instead of the process's own.
pub unsafe fn create_env(argc: c_int, argv: *mut *mut c_char, info: &mut MPI_Info) -> MpiResult {
    let mut created = INFO_ENV.clone();
    if argc > 0 && !argv.is_null() {
        let mut words = Vec::new();
        for i in 0..argc as usize {
            // SAFETY: `argv` holds `argc` pointers (MPI's contract, as for
            // main's arguments); each is NULL (rejected) or NUL-terminated.
            let word = unsafe { in_str(*argv.add(i), "argv") }?;
            words.push(word);
        }
        if let Some(command) = words.first() {
            created.set("command", command)?;
        }
        if words.len() > 1 {
            created.set("argv", &words[1..].join(" "))?;
        } else {
            let _ = created.delete("argv");
        }
    }
    *info = runtime::lock().infos_mut().insert(created);
    Ok(())
}

pub unsafe fn set(info: MPI_Info, key: *const c_char, value: *const c_char) -> MpiResult {
    // SAFETY: `key` and `value` are MPI_Info_set's strings: NULL (rejected
    // by `in_str`) or NUL-terminated (MPI's contract), read only here.
    let (key, value) = unsafe { (in_str(key, "key")?, in_str(value, "value")?) };
    lookup_mut(&mut runtime::lock(), info)?.set(&key, &value)
}

pub unsafe fn delete(info: MPI_Info, key: *const c_char) -> MpiResult {
    // SAFETY: `key` is MPI_Info_delete's string: NULL (rejected by `in_str`) or
    // NUL-terminated (MPI's contract), read only during this call.
    let key = unsafe { in_str(key, "key") }?;
    lookup_mut(&mut runtime::lock(), info)?.delete(&key)
}

/// `MPI_Info_get` (deprecated in MPI 4.0, still exported): copies at most
/// `valuelen` characters and a NUL.
pub unsafe fn get(
    info: MPI_Info,
    key: *const c_char,
    valuelen: c_int,
    value: *mut c_char,
    flag: &mut c_int,
) -> MpiResult {
    // SAFETY: `key` is MPI_Info_get's string: NULL (rejected by `in_str`) or
    // NUL-terminated (MPI's contract), read only during this call.
    let key = unsafe { in_str(key, "key") }?;
    if valuelen < 0 {
        return Err(MpiError::new(
            MPI_ERR_ARG,
            format!("valuelen is negative ({valuelen})"),
        ));
    }
    let rt = runtime::lock();
    match lookup(&rt, info)?.get(&key)? {
        Some(v) => {
            // SAFETY: MPI_Info_get's contract: `value` has room for `valuelen`
            // characters and a NUL (`valuelen` checked non-negative), the
            // capacity given; `write_str` rejects NULL.
            unsafe { write_str(value, valuelen as usize + 1, v, "value") }?;
            *flag = 1;
        }
        None => *flag = 0,
    }
    Ok(())
}

/// `MPI_Info_get_string`: `*buflen == 0` asks only for the length; the
/// length returned includes the NUL.
pub unsafe fn get_string(
    info: MPI_Info,
    key: *const c_char,
    buflen: &mut c_int,
    value: *mut c_char,
    flag: &mut c_int,
) -> MpiResult {
    // SAFETY: `key` is MPI_Info_get_string's string: NULL (rejected by
    // `in_str`) or NUL-terminated (MPI's contract), read only during this call.
    let key = unsafe { in_str(key, "key") }?;
    if *buflen < 0 {
        return Err(MpiError::new(
            MPI_ERR_ARG,
            format!("buflen is negative ({})", *buflen),
        ));
    }
    let rt = runtime::lock();
    match lookup(&rt, info)?.get(&key)? {
        Some(v) => {
            if *buflen > 0 {
                // SAFETY: MPI_Info_get_string's contract: `value` has room for
                // `*buflen` characters (NUL included; positive here), the
                // capacity given; `write_str` rejects NULL.
                unsafe { write_str(value, *buflen as usize, v, "value") }?;
            }
            *buflen = v.len() as c_int + 1;
            *flag = 1;
        }
        None => *flag = 0,
    }
    Ok(())
}

pub unsafe fn get_valuelen(
    info: MPI_Info,
    key: *const c_char,
    valuelen: &mut c_int,
    flag: &mut c_int,
) -> MpiResult {
    // SAFETY: `key` is MPI_Info_get_valuelen's string: NULL (rejected by
    // `in_str`) or NUL-terminated (MPI's contract), read only during this call.
    let key = unsafe { in_str(key, "key") }?;
    let rt = runtime::lock();
    match lookup(&rt, info)?.get(&key)? {
        Some(v) => {
            *valuelen = v.len() as c_int;
            *flag = 1;
        }
        None => *flag = 0,
    }
    Ok(())
}

pub unsafe fn get_nkeys(info: MPI_Info, nkeys: &mut c_int) -> MpiResult {
    *nkeys = lookup(&runtime::lock(), info)?.nkeys();
    Ok(())
}

pub unsafe fn get_nthkey(info: MPI_Info, n: c_int, key: *mut c_char) -> MpiResult {
    let rt = runtime::lock();
    let k = lookup(&rt, info)?.nth_key(n)?;
    // The program's `key` buffer holds MPI_MAX_INFO_KEY bytes (programs
    // declare `char key[MPI_MAX_INFO_KEY]`), NUL included: a key of the
    // longest length comes back cut by one character, as from MPICH.
    // SAFETY: `write_str` rejects NULL and writes at most that many bytes.
    unsafe {
        write_str(
            key,
            crate::mpi_abi::standard::values::MAX_INFO_KEY as usize,
            k,
            "key",
        )
    }?;
    Ok(())
}

pub unsafe fn dup(info: MPI_Info, newinfo: &mut MPI_Info) -> MpiResult {
    let mut rt = runtime::lock();
    let copy = lookup(&rt, info)?.clone();
    *newinfo = rt.infos_mut().insert(copy);
    Ok(())
}

pub unsafe fn free(info: &mut MPI_Info) -> MpiResult {
    if *info == MPI_INFO_ENV {
        return Err(MpiError::new(MPI_ERR_INFO, "MPI_INFO_ENV cannot be freed"));
    }
    runtime::lock()
        .infos_mut()
        .remove(*info)
        .ok_or_else(|| invalid(*info))?;
    *info = MPI_INFO_NULL;
    Ok(())
}
