//! Data access: explicit offsets, the individual pointer and the shared
//! pointer, each independent or collective. The program's data is packed
//! into one buffer (converted to the view's representation: external32, or
//! a registered one through the program's functions), then
//! written with one `pwrite` per contiguous stretch of the file the view
//! maps it to; reads are the reverse, and stop at the end of the file
//! (the status then counts the bytes actually read).
use std::os::raw::c_int;
use std::os::unix::fs::FileExt;
use std::sync::Arc;

use super::view::{Datarep, View};
use super::{amode, get, get_mut, io_error, two_phase, OpenFile, Split};
use crate::core::collective::algorithms::barrier;
use crate::core::datatype::Datatype;
use crate::core::error::{MpiError, MpiResult};
use crate::core::p2p::user_buffer::UserBuffer;
use crate::core::runtime;
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::MPI_Status;

/// Where an access starts.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Position {
    /// An explicit offset, in etypes of the view.
    At(i64),
    Individual,
    Shared,
    /// The shared pointer, in rank order (`*_ordered`: collective).
    Ordered,
}

/// The program's buffer of an access.
pub struct Memory<'a> {
    pub buf: &'a UserBuffer,
    pub datatype: Arc<Datatype>,
    pub count: usize,
    /// The conversion of a registered data representation, when the view
    /// has one (the abi layer calls the program's functions).
    pub convert: Option<&'a dyn Converter>,
}

/// The conversion functions of a registered data representation, bound
/// to one access's buffer. Each answers false when the program gave none
/// (`MPI_CONVERSION_FN_NULL`: the data moves as it is).
pub trait Converter {
    /// Fills `file` with the file form of the buffer's `count` elements.
    fn to_file(&self, count: usize, file: &mut [u8]) -> MpiResult<bool>;
    /// Stores `count` elements from their file form `file` in the buffer.
    fn to_memory(&self, count: usize, file: &mut [u8]) -> MpiResult<bool>;
}

/// The shared pointer of a file (`MPI_ERR_IO` when it has none).
pub fn shared(open: &OpenFile) -> MpiResult<&super::SharedPointer> {
    open.shared.as_ref().ok_or_else(|| {
        MpiError::new(
            MPI_ERR_IO,
            "this file has no shared file pointer (its sidecar file could not be made)",
        )
    })
}

/// What an access works with, taken under the lock.
struct Target {
    open: Arc<OpenFile>,
    view: Arc<View>,
    position: u64,
    atomic: bool,
}

fn target(h: c_int, write: bool, at: Position) -> MpiResult<Target> {
    let rt = runtime::lock();
    let f = get(&rt, h)?;
    let amode = f.open.amode;
    if write && !amode::may_write(amode) {
        return Err(MpiError::new(
            MPI_ERR_READ_ONLY,
            "the file was opened with MPI_MODE_RDONLY",
        ));
    }
    if !write && !amode::may_read(amode) {
        return Err(MpiError::new(
            MPI_ERR_ACCESS,
            "the file was opened with MPI_MODE_WRONLY",
        ));
    }
    if amode & MPI_MODE_SEQUENTIAL != 0 && matches!(at, Position::At(_) | Position::Individual) {
        return Err(MpiError::new(
            MPI_ERR_UNSUPPORTED_OPERATION,
            "a file opened with MPI_MODE_SEQUENTIAL is accessed through the shared pointer only",
        ));
    }
    Ok(Target {
        open: f.open.clone(),
        view: f.view.clone(),
        position: f.position,
        atomic: f.atomic,
    })
}

/// The etypes of an access (`MPI_ERR_TYPE` when the data is not made of
/// whole etypes).
fn etypes(view: &View, bytes: u64) -> MpiResult<u64> {
    if bytes % view.etype_size() != 0 {
        return Err(MpiError::new(
            MPI_ERR_TYPE,
            format!(
                "the data ({bytes} bytes) is not a whole number of etypes ({} bytes each)",
                view.etype_size()
            ),
        ));
    }
    Ok(bytes / view.etype_size())
}

/// Where the access starts (in etypes) for `n` etypes at `at`; moves the
/// shared pointer past them for shared and ordered access.
fn start(t: &Target, at: Position, n: u64) -> MpiResult<u64> {
    match at {
        Position::At(o) => u64::try_from(o)
            .map_err(|_| MpiError::new(MPI_ERR_ARG, format!("offset {o} is negative"))),
        Position::Individual => Ok(t.position),
        Position::Shared => shared(&t.open)?.fetch_add(n),
        Position::Ordered => {
            let ch = &t.open.channel;
            // Every member's earlier shared-pointer accesses are done
            // before rank 0 reads where this one starts.
            barrier(ch)?;
            let base = if ch.rank == 0 {
                shared(&t.open)?.get()?
            } else {
                0
            };
            let all = super::gather_pairs(ch, n, base)?;
            let word = |r: usize, i: usize| if i == 0 { all[r].0 } else { all[r].1 };
            let base = word(0, 1);
            let before: u64 = (0..ch.rank).map(|r| word(r, 0)).sum();
            let total: u64 = (0..ch.size()).map(|r| word(r, 0)).sum();
            if ch.rank == 0 {
                shared(&t.open)?.set(base + total)?;
            }
            Ok(base + before)
        }
    }
}

/// A registered representation without the conversion function an
/// access needs moves the data as it is, which only works where the file
/// extents are the native sizes.
fn no_conversion(rep: &Datarep) -> MpiError {
    MpiError::new(
        MPI_ERR_CONVERSION,
        format!(
            "data representation \"{}\" has no conversion function for this access \
             (MPI_CONVERSION_FN_NULL) and its file extents are not the native sizes",
            rep.name()
        ),
    )
}

/// Fills `data` (the access's stream bytes) with the program's data in
/// the view's representation.
fn to_file(rep: &Datarep, mem: &Memory, data: &mut [u8]) -> MpiResult {
    match rep {
        Datarep::External32 => {
            let mut native = vec![0u8; mem.buf.len()];
            mem.buf.pack(0, &mut native);
            mem.datatype.native_to_external32(mem.count, &native, data);
        }
        Datarep::User(_) => {
            if let Some(c) = mem.convert {
                if c.to_file(mem.count, data)? {
                    return Ok(());
                }
            }
            if data.len() != mem.buf.len() {
                return Err(no_conversion(rep));
            }
            mem.buf.pack(0, data);
        }
        Datarep::Native | Datarep::Internal => {
            mem.buf.pack(0, data);
        }
    }
    Ok(())
}

/// Hands the first `got` stream bytes read (`data`) to the program,
/// converted from the view's representation; returns the bytes the
/// program's buffer received (whole values, or whole elements under a
/// registered representation).
fn to_memory(rep: &Datarep, mem: &Memory, data: &mut [u8], got: usize) -> MpiResult<usize> {
    match rep {
        Datarep::External32 => {
            let mut native = vec![0u8; mem.buf.len()];
            let (_, n) = mem
                .datatype
                .external32_to_native(mem.count, &data[..got], &mut native);
            mem.buf.unpack(0, &native[..n]);
            Ok(n)
        }
        Datarep::User(_) => {
            let per = rep.size_of(&mem.datatype, 1)?;
            let whole = got.checked_div(per).unwrap_or(mem.count);
            if let Some(c) = mem.convert {
                if c.to_memory(whole, &mut data[..whole * per])? {
                    return Ok(whole * mem.datatype.size());
                }
            }
            if per != mem.datatype.size() {
                return Err(no_conversion(rep));
            }
            mem.buf.unpack(0, &data[..got]);
            Ok(got)
        }
        Datarep::Native | Datarep::Internal => {
            mem.buf.unpack(0, &data[..got]);
            Ok(got)
        }
    }
}

fn with_lock<T>(t: &Target, f: impl FnOnce() -> MpiResult<T>) -> MpiResult<T> {
    if !t.atomic {
        return f();
    }
    super::sys::lock(&t.open.fd).map_err(|e| io_error("cannot lock the file (atomic mode)", &e))?;
    let r = f();
    let _ = super::sys::unlock(&t.open.fd);
    r
}

fn write_status(bytes: u64) -> MPI_Status {
    let mut status = crate::core::p2p::request::empty_status();
    status.set_byte_count(bytes as i64);
    status
}

/// Runs a collective access: the access, then a barrier of the file's
/// members (also when the access failed here).
fn collectively(
    open: &OpenFile,
    collective: bool,
    f: impl FnOnce() -> MpiResult<MPI_Status>,
) -> MpiResult<MPI_Status> {
    let r = f();
    if collective {
        barrier(&open.channel)?;
    }
    r
}

/// An access ready to go: its target, where it starts and how many
/// etypes it moves, the file pieces, (for a write) the data as the file
/// gets it, and the bytes of the program's data in memory.
struct Prepared {
    t: Target,
    first: u64,
    pieces: Vec<super::view::Piece>,
    data: Vec<u8>,
    native: usize,
}

/// Everything an access does before touching the file.
fn prepare(h: c_int, at: Position, mem: &Memory, write: bool) -> MpiResult<Prepared> {
    let t = target(h, write, at)?;
    let bytes = t.view.datarep.size_of(&mem.datatype, mem.count)? as u64;
    let n = etypes(&t.view, bytes)?;
    let first = start(&t, at, n)?;
    let mut data = vec![0u8; bytes as usize];
    if write {
        to_file(&t.view.datarep, mem, &mut data)?;
    }
    let pieces = t.view.pieces(first * t.view.etype_size(), bytes)?;
    Ok(Prepared {
        t,
        first,
        pieces,
        data,
        native: mem.buf.len(),
    })
}

/// Whether a collective call on this file goes through collective
/// buffering, and how: the `romio_cb_read` / `romio_cb_write` hint
/// (`disable` turns it off), `cb_config_list` (`*:N`: N aggregators per
/// node, default 1) and `cb_nodes` (how many aggregators), and
/// `cb_buffer_size` (bytes an aggregator handles per round).
fn buffering(h: c_int, open: &OpenFile, key: &str) -> MpiResult<Option<two_phase::Buffering>> {
    if open.channel.size() < 2 {
        return Ok(None);
    }
    let rt = runtime::lock();
    let hints = &get(&rt, h)?.hints;
    if hints.get(key)? == Some("disable") {
        return Ok(None);
    }
    let number = |key: &str| -> MpiResult<Option<u64>> {
        Ok(hints
            .get(key)?
            .and_then(|v| v.trim().parse().ok())
            .filter(|&n| n > 0))
    };
    let per_node = match hints.get("cb_config_list")?.map(str::trim) {
        Some("*:*") => usize::MAX,
        Some(list) => list
            .strip_prefix("*:")
            .and_then(|n| n.trim().parse::<usize>().ok())
            .filter(|&n| n > 0)
            .unwrap_or(1),
        None => 1,
    };
    let cb_nodes = number("cb_nodes")?.map(|n| n as usize);
    Ok(Some(two_phase::Buffering {
        aggregators: two_phase::aggregator_ranks(&open.node_indexes, per_node, cb_nodes),
        window: number("cb_buffer_size")?.unwrap_or(super::CB_BUFFER_SIZE),
    }))
}

/// Prepares a collective access at every member; all fail when one does
/// (so none waits in the exchange for a member that gave up).
fn prepare_together(
    open: &OpenFile,
    h: c_int,
    at: Position,
    mem: &Memory,
    write: bool,
) -> MpiResult<Prepared> {
    let prepared = prepare(h, at, mem, write);
    let outcome = prepared.as_ref().map(|_| ()).map_err(|e| e.clone());
    let what = if write {
        "collective write"
    } else {
        "collective read"
    };
    super::agree(&open.channel, &outcome, 0, what)?;
    prepared
}

/// A write; returns its status.
pub fn write(h: c_int, at: Position, mem: &Memory, collective: bool) -> MpiResult<MPI_Status> {
    let open = super::open_file(h)?;
    if collective && at != Position::Ordered {
        if let Some(buffering) = buffering(h, &open, "romio_cb_write")? {
            let p = prepare_together(&open, h, at, mem, true)?;
            let r = two_phase::write(
                &open.channel,
                &open.fd,
                &p.pieces,
                &p.data,
                buffering,
                |f| with_lock(&p.t, f),
            );
            let r = r.and_then(|()| finish_write(h, at, &p));
            barrier(&open.channel)?;
            return r;
        }
    }
    let collective = collective || at == Position::Ordered;
    collectively(&open, collective, || {
        let p = prepare(h, at, mem, true)?;
        with_lock(&p.t, || {
            let mut done = 0usize;
            for &(offset, len) in &p.pieces {
                let len = len as usize;
                p.t.open
                    .fd
                    .write_all_at(&p.data[done..done + len], offset)
                    .map_err(|e| io_error("write failed", &e))?;
                done += len;
            }
            Ok(())
        })?;
        finish_write(h, at, &p)
    })
}

/// Moves the individual pointer past a write; its status.
fn finish_write(h: c_int, at: Position, p: &Prepared) -> MpiResult<MPI_Status> {
    if at == Position::Individual {
        get_mut(&mut runtime::lock(), h)?.position =
            p.first + p.data.len() as u64 / p.t.view.etype_size();
    }
    Ok(write_status(p.native as u64))
}

/// Reads `buf.len()` bytes at `offset`, fewer at the end of the file.
pub(super) fn read_fully(fd: &std::fs::File, buf: &mut [u8], offset: u64) -> MpiResult<usize> {
    let mut done = 0;
    while done < buf.len() {
        match fd.read_at(&mut buf[done..], offset + done as u64) {
            Ok(0) => break,
            Ok(k) => done += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io_error("read failed", &e)),
        }
    }
    Ok(done)
}

/// A read; returns its status (counting the bytes read).
pub fn read(h: c_int, at: Position, mem: &Memory, collective: bool) -> MpiResult<MPI_Status> {
    let open = super::open_file(h)?;
    if collective && at != Position::Ordered {
        if let Some(buffering) = buffering(h, &open, "romio_cb_read")? {
            let mut p = prepare_together(&open, h, at, mem, false)?;
            let t = &p.t;
            let r = two_phase::read(
                &open.channel,
                &open.fd,
                &p.pieces,
                &mut p.data,
                buffering,
                |f| with_lock(t, f),
            );
            let r = r.and_then(|()| {
                let size = open
                    .fd
                    .metadata()
                    .map_err(|e| io_error("cannot read the file's size", &e))?
                    .len();
                let got = present(&p.pieces, size);
                finish_read(h, at, mem, &mut p, got)
            });
            barrier(&open.channel)?;
            return r;
        }
    }
    let collective = collective || at == Position::Ordered;
    collectively(&open, collective, || {
        let mut p = prepare(h, at, mem, false)?;
        let (t, pieces, data) = (&p.t, &p.pieces, &mut p.data);
        let got = with_lock(t, || {
            let mut done = 0usize;
            for &(offset, len) in pieces {
                let len = len as usize;
                let k = read_fully(&t.open.fd, &mut data[done..done + len], offset)?;
                done += k;
                if k < len {
                    break;
                }
            }
            Ok(done)
        })?;
        finish_read(h, at, mem, &mut p, got)
    })
}

/// The bytes of `pieces` (in stream order) before the first one that
/// the end of a file of `size` bytes cuts.
fn present(pieces: &[super::view::Piece], size: u64) -> usize {
    let mut got = 0;
    for &(offset, len) in pieces {
        let there = size.saturating_sub(offset).min(len);
        got += there;
        if there < len {
            break;
        }
    }
    got as usize
}

/// Hands the `got` bytes read to the program, moves the individual
/// pointer; the status.
fn finish_read(
    h: c_int,
    at: Position,
    mem: &Memory,
    p: &mut Prepared,
    got: usize,
) -> MpiResult<MPI_Status> {
    let delivered = to_memory(&p.t.view.datarep, mem, &mut p.data, got)?;
    if at == Position::Individual {
        get_mut(&mut runtime::lock(), h)?.position = p.first + got as u64 / p.t.view.etype_size();
    }
    Ok(write_status(delivered as u64))
}

/// The view's end of file, in etypes.
fn end_of_file(open: &OpenFile, view: &View) -> MpiResult<u64> {
    let size = open
        .fd
        .metadata()
        .map_err(|e| io_error("cannot read the file's size", &e))?
        .len();
    Ok(view.stream_bytes_before(size) / view.etype_size())
}

fn moved(from: u64, offset: i64) -> MpiResult<u64> {
    u64::try_from(from as i64 + offset).map_err(|_| {
        MpiError::new(
            MPI_ERR_ARG,
            format!("seeking by {offset} from {from} goes before the start of the view"),
        )
    })
}

fn sought(
    open: &OpenFile,
    view: &View,
    current: u64,
    offset: i64,
    whence: c_int,
) -> MpiResult<u64> {
    match whence {
        MPI_SEEK_SET => moved(0, offset),
        MPI_SEEK_CUR => moved(current, offset),
        MPI_SEEK_END => moved(end_of_file(open, view)?, offset),
        other => Err(MpiError::new(
            MPI_ERR_ARG,
            format!("whence {other} is not MPI_SEEK_SET, MPI_SEEK_CUR or MPI_SEEK_END"),
        )),
    }
}

/// `MPI_File_seek`.
pub fn seek(h: c_int, offset: i64, whence: c_int) -> MpiResult {
    let t = target_any(h)?;
    if t.open.amode & MPI_MODE_SEQUENTIAL != 0 {
        return Err(MpiError::new(
            MPI_ERR_UNSUPPORTED_OPERATION,
            "a file opened with MPI_MODE_SEQUENTIAL has no individual pointer",
        ));
    }
    let to = sought(&t.open, &t.view, t.position, offset, whence)?;
    get_mut(&mut runtime::lock(), h)?.position = to;
    Ok(())
}

fn target_any(h: c_int) -> MpiResult<Target> {
    let rt = runtime::lock();
    let f = get(&rt, h)?;
    Ok(Target {
        open: f.open.clone(),
        view: f.view.clone(),
        position: f.position,
        atomic: f.atomic,
    })
}

/// `MPI_File_seek_shared` (collective: every member passes the same
/// arguments; rank 0 moves the pointer, between two barriers).
pub fn seek_shared(h: c_int, offset: i64, whence: c_int) -> MpiResult {
    let t = target_any(h)?;
    let ptr = shared(&t.open)?;
    // Every member is done with the pointer's old value first.
    barrier(&t.open.channel)?;
    let r = if t.open.channel.rank == 0 {
        ptr.get()
            .and_then(|now| sought(&t.open, &t.view, now, offset, whence))
            .and_then(|to| ptr.set(to))
    } else {
        sought(&t.open, &t.view, 0, offset.max(0), whence).map(|_| ())
    };
    barrier(&t.open.channel)?;
    r
}

/// `MPI_File_get_position`.
pub fn position(h: c_int) -> MpiResult<u64> {
    Ok(get(&runtime::lock(), h)?.position)
}

/// `MPI_File_get_position_shared`.
pub fn position_shared(h: c_int) -> MpiResult<u64> {
    let open = super::open_file(h)?;
    shared(&open)?.get()
}

/// `MPI_File_get_byte_offset`: the file offset of etype `offset` of the
/// view.
pub fn byte_offset(h: c_int, offset: i64) -> MpiResult<u64> {
    let view = get(&runtime::lock(), h)?.view.clone();
    let offset = u64::try_from(offset)
        .map_err(|_| MpiError::new(MPI_ERR_ARG, format!("offset {offset} is negative")))?;
    view.byte_offset(offset * view.etype_size())
}

/// A split collective's `*_begin`: the access runs now; its status waits
/// for `*_end`.
pub fn begin(h: c_int, read: bool, access: impl FnOnce() -> MpiResult<MPI_Status>) -> MpiResult {
    if get(&runtime::lock(), h)?.split.is_some() {
        return Err(MpiError::new(
            MPI_ERR_OTHER,
            "a split collective is already active on this file",
        ));
    }
    let status = access()?;
    get_mut(&mut runtime::lock(), h)?.split = Some(Split { status, read });
    Ok(())
}

/// A split collective's `*_end`: the status of its `*_begin`.
pub fn end(h: c_int, read: bool) -> MpiResult<MPI_Status> {
    let mut rt = runtime::lock();
    let f = get_mut(&mut rt, h)?;
    match f.split {
        Some(s) if s.read == read => {
            f.split = None;
            Ok(s.status)
        }
        _ => Err(MpiError::new(
            MPI_ERR_OTHER,
            "no matching split collective was begun on this file",
        )),
    }
}
