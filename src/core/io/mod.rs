//! MPI-IO over POSIX files (MPI 4.1 chapter 14).
//!
//! A file is an entry of the runtime's file table ([`File`]): what may
//! change (the view, the individual pointer, atomicity, hints, the error
//! handler, a pending split collective) lives there, under the runtime
//! lock; what does not ([`OpenFile`]: the descriptor, the path, the access
//! mode, the file's own communicator, the shared pointer) is shared behind
//! an `Arc`, so reads and writes run with no lock held.
//!
//! Decisions:
//! - Opening is collective over a duplicate of the communicator (the
//!   file's own context, so its internal messages never meet the
//!   program's). Rank 0 opens first (it alone creates, and honours
//!   `MPI_MODE_EXCL`), the others then open the existing file; every
//!   member learns every other's outcome, so all fail when one does, each
//!   with the class of the first failure.
//! - Files belong to the epoch that opened them; the finalize that ends
//!   the epoch closes those left open (rank 0 removes their shared-pointer
//!   sidecars and `MPI_MODE_DELETE_ON_CLOSE` files).
//! - Data moves with `pread`/`pwrite`, one call per contiguous stretch of
//!   the file (no data sieving, no two-phase collective buffering yet):
//!   collective calls do independent access, then a barrier, so data one
//!   member wrote collectively is visible to all when the call returns.
//! - `MPI_MODE_APPEND` puts both pointers at the end of the file at open;
//!   writes use plain offsets (never `O_APPEND`, which would make
//!   `pwrite` ignore them).
//! - Atomic mode holds an exclusive `flock` of the data file around each
//!   access, which orders accesses of different processes.
//! - Nonblocking and split-collective calls do the access at once; their
//!   requests are complete from the start.
//! - The shared file pointer: see [`shared_pointer`].
pub mod access;
pub mod amode;
mod shared_pointer;
mod sys;
pub mod two_phase;
pub mod view;

use std::fs::OpenOptions;
use std::os::raw::c_int;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::core::collective::algorithms::{allgather, barrier};
use crate::core::collective::channel::Channel;
use crate::core::comm_constructors;
use crate::core::epoch::Epoch;
use crate::core::error::{MpiError, MpiResult};
use crate::core::info::InfoObject;
use crate::core::runtime::{self, Runtime};
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::*;
use shared_pointer::SharedPointer;
use view::View;

/// What does not change while a file is open.
pub struct OpenFile {
    pub fd: std::fs::File,
    pub path: PathBuf,
    pub amode: c_int,
    /// The file's own duplicate of the communicator it was opened on.
    pub comm: MPI_Comm,
    pub channel: Channel,
    /// `None` when no sidecar could be made (shared-pointer calls fail).
    pub shared: Option<SharedPointer>,
    /// Per member, its place among the members on its node (0: the first).
    pub node_indexes: Vec<u32>,
}

/// A pending split collective (`*_begin` done, `*_end` not yet).
#[derive(Clone, Copy)]
pub struct Split {
    pub status: MPI_Status,
    pub read: bool,
}

/// An open file: an entry of the runtime's file table.
pub struct File {
    pub open: Arc<OpenFile>,
    pub view: Arc<View>,
    /// The individual file pointer, in etypes of the view.
    pub position: u64,
    pub atomic: bool,
    pub hints: InfoObject,
    pub errhandler: MPI_Errhandler,
    pub epoch: Epoch,
    pub split: Option<Split>,
}

/// The default `cb_buffer_size`: 16 MiB, as ROMIO's.
pub const CB_BUFFER_SIZE: u64 = 16 << 20;
const CB_BUFFER_SIZE_TEXT: &str = "16777216";

/// The hints every file reports, with their defaults (the program's
/// values replace them; other keys the program gives are kept as given),
/// besides `cb_nodes`, the number of aggregators of collective buffering.
/// `cb_config_list` `*:N` makes the first N members of each node
/// aggregators (`*:*` every member; other forms of ROMIO's list are taken
/// as the default, one per node); `cb_nodes` sets how many instead, taken
/// over the nodes in turn. `romio_cb_read`/`romio_cb_write` `disable` turn
/// collective buffering off; an aggregator holds at most `cb_buffer_size`
/// bytes of its domain at a time.
const DEFAULT_HINTS: [(&str, &str); 4] = [
    ("cb_buffer_size", CB_BUFFER_SIZE_TEXT),
    ("cb_config_list", "*:1"),
    ("romio_cb_read", "automatic"),
    ("romio_cb_write", "automatic"),
];

/// An error of the operating system as an MPI error of the right class.
pub fn io_error(what: &str, e: &std::io::Error) -> MpiError {
    use std::io::ErrorKind::*;
    let class = match e.kind() {
        NotFound => MPI_ERR_NO_SUCH_FILE,
        PermissionDenied => MPI_ERR_ACCESS,
        AlreadyExists => MPI_ERR_FILE_EXISTS,
        ReadOnlyFilesystem => MPI_ERR_READ_ONLY,
        StorageFull => MPI_ERR_NO_SPACE,
        QuotaExceeded => MPI_ERR_QUOTA,
        IsADirectory | NotADirectory | InvalidFilename => MPI_ERR_BAD_FILE,
        _ => MPI_ERR_IO,
    };
    MpiError::new(class, format!("{what}: {e}"))
}

/// A file name without a ROMIO file-system prefix (`ufs:name`).
fn strip_prefix(name: &str) -> &str {
    const PREFIXES: [&str; 9] = [
        "ufs:", "nfs:", "testfs:", "pvfs2:", "lustre:", "gpfs:", "xfs:", "panfs:", "daos:",
    ];
    PREFIXES
        .iter()
        .find_map(|p| name.strip_prefix(p))
        .unwrap_or(name)
}

fn open_descriptor(path: &Path, amode: c_int, first: bool) -> std::io::Result<std::fs::File> {
    let mut o = OpenOptions::new();
    o.read(amode::may_read(amode))
        .write(amode::may_write(amode));
    if first && amode & MPI_MODE_EXCL != 0 {
        o.create_new(true);
    } else if first && amode & MPI_MODE_CREATE != 0 {
        o.create(true);
    }
    let fd = o.open(path)?;
    if fd.metadata()?.is_dir() {
        return Err(std::io::Error::from(std::io::ErrorKind::IsADirectory));
    }
    Ok(fd)
}

/// Every member's pair of numbers, in rank order.
pub(crate) fn gather_pairs(ch: &Channel, a: u64, b: u64) -> MpiResult<Vec<(u64, u64)>> {
    let mut msg = a.to_le_bytes().to_vec();
    msg.extend_from_slice(&b.to_le_bytes());
    let all = allgather(ch, &msg)?;
    let word = |at: usize| u64::from_le_bytes(all[at..at + 8].try_into().expect("8 bytes"));
    Ok((0..ch.size())
        .map(|r| (word(r * 16), word(r * 16 + 8)))
        .collect())
}

/// Every member's outcome (class, or 0) with a value each; the first
/// failure, as this member's error.
pub(crate) fn agree(ch: &Channel, mine: &MpiResult, value: u64, step: &str) -> MpiResult<Vec<u64>> {
    let code = match mine {
        Ok(()) => 0,
        Err(e) => e.class,
    };
    let all = gather_pairs(ch, code as i64 as u64, value)?;
    let word = |r: usize, i: usize| if i == 0 { all[r].0 } else { all[r].1 };
    if let Err(e) = mine {
        return Err(e.clone());
    }
    if let Some(r) = (0..ch.size()).find(|&r| word(r, 0) != 0) {
        return Err(MpiError::new(
            word(r, 0) as i64 as c_int,
            format!("{step}: process {r} of the communicator failed"),
        ));
    }
    Ok((0..ch.size()).map(|r| word(r, 1)).collect())
}

/// `MPI_File_open`: returns the new file's handle.
pub fn open(comm: MPI_Comm, name: &str, amode: c_int, info: InfoObject) -> MpiResult<c_int> {
    let (epoch, errhandler) = {
        let rt = runtime::lock();
        let c = rt.comms().get(comm)?;
        if c.is_inter() {
            return Err(MpiError::new(
                MPI_ERR_COMM,
                "a file is opened on an intracommunicator",
            ));
        }
        let epoch = rt
            .current_epoch()
            .ok_or_else(|| MpiError::new(MPI_ERR_OTHER, "MPI is not initialized"))?;
        (epoch, rt.default_file_errhandler())
    };
    amode::check(amode)?;
    let own = comm_constructors::dup(comm)?;
    match open_on(own, name, amode) {
        Ok(open) => {
            let mut hints = InfoObject::new();
            for (k, v) in DEFAULT_HINTS {
                hints.set(k, v)?;
            }
            hints.set("cb_nodes", &open.channel.size().to_string())?;
            for (k, v) in info.entries() {
                hints.set(k, v)?;
            }
            let position = if amode & MPI_MODE_APPEND != 0 {
                open.fd.metadata().map(|m| m.len()).unwrap_or(0)
            } else {
                0
            };
            let view = Arc::new(View::default_view());
            let mut rt = runtime::lock();
            rt.errhandlers_mut().retain(errhandler)?;
            Ok(rt.files_mut().insert(File {
                open: Arc::new(open),
                view,
                position,
                atomic: false,
                hints,
                errhandler,
                epoch,
                split: None,
            }))
        }
        Err(e) => {
            let _ = runtime::lock().free_comm(own);
            Err(e)
        }
    }
}

fn open_on(own: MPI_Comm, name: &str, amode: c_int) -> MpiResult<OpenFile> {
    let ch = Channel::lookup(own)?;
    let path = PathBuf::from(strip_prefix(name));
    let what = format!("cannot open \"{name}\"");
    // Rank 0 opens (and creates) first, and makes the sidecar.
    let mut first = None;
    let mut in_temp = 0u64;
    let mine: MpiResult = if ch.rank == 0 {
        match open_descriptor(&path, amode, true) {
            Ok(fd) => {
                let initial = if amode & MPI_MODE_APPEND != 0 {
                    fd.metadata().map(|m| m.len()).unwrap_or(0)
                } else {
                    0
                };
                let pid = std::process::id() as u64;
                let made = [false, true].into_iter().find_map(|temp| {
                    let p = shared_pointer::sidecar_path(&path, pid, ch.context_id, temp);
                    SharedPointer::create(&p, initial).ok().map(|s| (s, temp))
                });
                in_temp = match &made {
                    Some((_, false)) => 0,
                    Some((_, true)) => 1,
                    None => 2,
                };
                first = Some((fd, made.map(|(s, _)| s)));
                Ok(())
            }
            Err(e) => Err(io_error(&what, &e)),
        }
    } else {
        Ok(())
    };
    let values = agree(
        &ch,
        &mine,
        (std::process::id() as u64) | (in_temp << 40),
        &what,
    )?;
    let (pid0, where0) = (values[0] & ((1 << 40) - 1), values[0] >> 40);
    let (fd, shared) = match first {
        Some(f) => (Ok(f.0), f.1),
        None => {
            let shared = (where0 < 2)
                .then(|| {
                    let p = shared_pointer::sidecar_path(&path, pid0, ch.context_id, where0 == 1);
                    SharedPointer::open(&p).ok()
                })
                .flatten();
            (
                open_descriptor(&path, amode, false).map_err(|e| io_error(&what, &e)),
                shared,
            )
        }
    };
    let outcome = fd.as_ref().map(|_| ()).map_err(|e| e.clone());
    // With the outcome, each member's place among the members on its node
    // (for choosing aggregators, see `two_phase::aggregator_ranks`).
    let on_node: Vec<_> = match runtime::lock().process() {
        Ok(p) => p
            .psets
            .members("mpix://SHARED")
            .map(|m| m.to_vec())
            .unwrap_or_default(),
        Err(_) => Vec::new(),
    };
    let node_index = ch.members[..ch.rank]
        .iter()
        .filter(|m| on_node.contains(m))
        .count() as u64;
    let node_indexes = match agree(&ch, &outcome, node_index, &what) {
        Ok(values) => values.into_iter().map(|v| v as u32).collect(),
        Err(e) => {
            if ch.rank == 0 {
                if let Some(s) = &shared {
                    let _ = std::fs::remove_file(&s.path);
                }
            }
            return Err(e);
        }
    };
    Ok(OpenFile {
        fd: fd?,
        path,
        amode,
        comm: own,
        channel: ch,
        shared,
        node_indexes,
    })
}

/// The file behind a handle (`MPI_ERR_FILE` otherwise).
pub fn get(rt: &Runtime, h: c_int) -> MpiResult<&File> {
    rt.files().get(h).ok_or_else(|| invalid(h))
}

pub fn get_mut(rt: &mut Runtime, h: c_int) -> MpiResult<&mut File> {
    rt.files_mut().get_mut(h).ok_or_else(|| invalid(h))
}

fn invalid(h: c_int) -> MpiError {
    if h == 0 {
        MpiError::new(MPI_ERR_FILE, "MPI_FILE_NULL is not an open file")
    } else {
        MpiError::new(
            MPI_ERR_FILE,
            format!("handle {:#010x} is not an open file", h as u32),
        )
    }
}

/// The shared part of an open file.
pub fn open_file(h: c_int) -> MpiResult<Arc<OpenFile>> {
    Ok(get(&runtime::lock(), h)?.open.clone())
}

/// Removes what rank 0 leaves behind a file (its sidecar, the file itself
/// with `MPI_MODE_DELETE_ON_CLOSE`).
fn remove_leftovers(open: &OpenFile) {
    if open.channel.rank != 0 {
        return;
    }
    if let Some(s) = &open.shared {
        let _ = std::fs::remove_file(&s.path);
    }
    if open.amode & MPI_MODE_DELETE_ON_CLOSE != 0 {
        let _ = std::fs::remove_file(&open.path);
    }
}

/// `MPI_File_close` (collective).
pub fn close(h: c_int) -> MpiResult {
    let file = {
        let mut rt = runtime::lock();
        get(&rt, h)?;
        let file = rt.files_mut().remove(h).expect("checked");
        let _ = rt.errhandlers_mut().release(file.errhandler);
        file
    };
    let mut result = barrier(&file.open.channel);
    remove_leftovers(&file.open);
    if file.open.amode & MPI_MODE_DELETE_ON_CLOSE != 0 {
        // Gone for every member when the call returns.
        result = result.and(barrier(&file.open.channel));
    }
    let _ = runtime::lock().free_comm(file.open.comm);
    result
}

/// Files of an epoch that ends: closed without talking to the others.
pub fn drop_epoch_files(rt: &mut Runtime, epoch: Epoch) {
    let stale: Vec<c_int> = rt
        .files()
        .iter()
        .filter(|(_, f)| f.epoch == epoch)
        .map(|(h, _)| h)
        .collect();
    for h in stale {
        if let Some(f) = rt.files_mut().remove(h) {
            log::debug!(
                "file {} was not closed; closed at the end of its epoch",
                f.open.path.display()
            );
            let _ = rt.errhandlers_mut().release(f.errhandler);
            remove_leftovers(&f.open);
        }
    }
}

/// `MPI_File_delete`.
pub fn delete(name: &str) -> MpiResult {
    std::fs::remove_file(strip_prefix(name))
        .map_err(|e| io_error(&format!("cannot delete \"{name}\""), &e))
}

/// `MPI_File_set_size` (collective): every member truncates or extends
/// to the same size.
pub fn set_size(h: c_int, size: i64, preallocate: bool) -> MpiResult {
    let open = open_file(h)?;
    let size = u64::try_from(size)
        .map_err(|_| MpiError::new(MPI_ERR_ARG, format!("size {size} is negative")))?;
    if !amode::may_write(open.amode) {
        return Err(MpiError::new(
            MPI_ERR_ACCESS,
            "the file was opened read-only",
        ));
    }
    let mine = if open.channel.rank == 0 {
        if preallocate {
            sys::preallocate(&open.fd, size)
        } else {
            open.fd.set_len(size)
        }
        .map_err(|e| io_error("cannot change the file's size", &e))
    } else {
        Ok(())
    };
    agree(&open.channel, &mine, 0, "set_size")?;
    Ok(())
}

/// `MPI_File_get_size`.
pub fn size(h: c_int) -> MpiResult<u64> {
    let open = open_file(h)?;
    open.fd
        .metadata()
        .map(|m| m.len())
        .map_err(|e| io_error("cannot read the file's size", &e))
}

/// `MPI_File_sync` (collective).
pub fn sync(h: c_int) -> MpiResult {
    let open = open_file(h)?;
    let mine = if amode::may_write(open.amode) {
        open.fd.sync_all().map_err(|e| io_error("cannot sync", &e))
    } else {
        Ok(())
    };
    agree(&open.channel, &mine, 0, "sync")?;
    Ok(())
}

/// `MPI_File_set_atomicity` (collective).
pub fn set_atomicity(h: c_int, atomic: bool) -> MpiResult {
    let open = open_file(h)?;
    get_mut(&mut runtime::lock(), h)?.atomic = atomic;
    barrier(&open.channel)
}

/// `MPI_File_set_info` (collective): the keys are kept.
pub fn set_info(h: c_int, info: InfoObject) -> MpiResult {
    let open = open_file(h)?;
    {
        let mut rt = runtime::lock();
        let f = get_mut(&mut rt, h)?;
        for (k, v) in info.entries() {
            f.hints.set(k, v)?;
        }
    }
    barrier(&open.channel)
}

/// `MPI_File_set_view` (collective): resets both pointers.
pub fn set_view(h: c_int, disp: i64, view: impl FnOnce(u64, bool) -> MpiResult<View>) -> MpiResult {
    let open = open_file(h)?;
    let disp = if disp == MPI_DISPLACEMENT_CURRENT as i64 {
        if open.amode & MPI_MODE_SEQUENTIAL == 0 {
            return Err(MpiError::new(
                MPI_ERR_ARG,
                "MPI_DISPLACEMENT_CURRENT needs MPI_MODE_SEQUENTIAL",
            ));
        }
        let old = get(&runtime::lock(), h)?.view.clone();
        let at = access::shared(&open)?.get()?;
        old.byte_offset(at * old.etype_size())?
    } else {
        u64::try_from(disp).map_err(|_| {
            MpiError::new(MPI_ERR_ARG, format!("view displacement {disp} is negative"))
        })?
    };
    let view = view(disp, amode::may_write(open.amode));
    let view = agree(
        &open.channel,
        &view.as_ref().map(|_| ()).map_err(|e| e.clone()),
        0,
        "set_view",
    )
    .and(view)?;
    {
        let mut rt = runtime::lock();
        let f = get_mut(&mut rt, h)?;
        f.view = Arc::new(view);
        f.position = 0;
    }
    if open.channel.rank == 0 {
        if let Some(s) = &open.shared {
            s.set(0)?;
        }
    }
    barrier(&open.channel)
}

/// A copy of a file's table entry's queryable parts, under the lock.
pub fn with<T>(h: c_int, f: impl FnOnce(&File) -> T) -> MpiResult<T> {
    Ok(f(get(&runtime::lock(), h)?))
}

/// `MPI_File_get_group`: the members of the file's communicator.
pub fn group(h: c_int) -> MpiResult<crate::core::group::Group> {
    let open = open_file(h)?;
    Ok(crate::core::group::Group::new(open.channel.members.clone()))
}

/// `MPI_Register_datarep`: a new representation for views
/// (`MPI_ERR_DUP_DATAREP` for a name already taken). Registrations last as
/// long as the process.
pub fn register_datarep(rep: view::UserDatarep) -> MpiResult {
    let mut rt = runtime::lock();
    if view::Datarep::predefined(&rep.name).is_some()
        || rt.datareps().iter().any(|d| d.name == rep.name)
    {
        return Err(MpiError::new(
            MPI_ERR_DUP_DATAREP,
            format!("data representation \"{}\" exists already", rep.name),
        ));
    }
    rt.datareps_mut().push(Arc::new(rep));
    Ok(())
}

/// A data representation by name.
pub fn datarep(name: &str) -> MpiResult<view::Datarep> {
    if let Some(d) = view::Datarep::predefined(name) {
        return Ok(d);
    }
    let rt = runtime::lock();
    rt.datareps()
        .iter()
        .find(|d| d.name == name)
        .map(|d| view::Datarep::User(d.clone()))
        .ok_or_else(|| view::Datarep::unknown(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_default_cb_buffer_size_is_reported_as_used() {
        assert_eq!(CB_BUFFER_SIZE_TEXT.parse::<u64>(), Ok(CB_BUFFER_SIZE));
        assert!(DEFAULT_HINTS.contains(&("cb_buffer_size", CB_BUFFER_SIZE_TEXT)));
    }
}
