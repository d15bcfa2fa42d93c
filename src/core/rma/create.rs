//! Creating and freeing windows. Every flavor starts the same way: the
//! window gets a private communicator (a dup), the ranks exchange their
//! sizes and displacement units, and the window joins the runtime's table
//! with `MPI_ERRORS_ARE_FATAL` as its error handler (MPI's default for
//! windows).
//!
//! Memory: `MPI_Win_create` exposes the program's memory;
//! `MPI_Win_allocate` gives each rank a private page-aligned segment;
//! `MPI_Win_allocate_shared` one segment for the node (rank 0 creates it,
//! the others map it), every rank's part placed right after the previous
//! rank's (contiguous, as MPI's default asks), or each on a page boundary
//! when the info key `alloc_shared_noncontig` is `true`.
use std::os::raw::c_int;

use super::memory::Exposed;
use super::origin::OriginState;
use super::progress::keep_serving;
use super::target::TargetState;
use super::window::invalid_window;
use super::window::{
    Access, DirectTarget, Peer, PredefinedValues, SingleCopyTarget, Window, HINT_DEFAULTS,
};
use crate::config::TransportChoice;
use crate::core::collective::algorithms;
use crate::core::collective::channel::Channel;
use crate::core::comm_constructors;
use crate::core::error::{MpiError, MpiResult};
use crate::core::node_segment::{exchange_addresses, new_segment, shared_by_all};
use crate::core::progress::block_on;
use crate::core::runtime;
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::{MPI_Comm, MPI_Win};
use crate::transport::shm::lock_word::{LockWord, LOCK_WORD_BYTES};
use crate::transport::shm::segment::{anonymous_supported, Segment};
use crate::transport::shm::single_copy;

const PAGE: usize = 4096;

/// The window being made: its private communicator and channel.
struct Making {
    comm: MPI_Comm,
    ch: Channel,
}

/// Checks the creating communicator (an intracommunicator) and dups it.
fn begin(comm: MPI_Comm) -> MpiResult<Making> {
    if runtime::lock().comms().get(comm)?.is_inter() {
        return Err(MpiError::new(
            MPI_ERR_COMM,
            "windows are created on intracommunicators",
        ));
    }
    let comm = comm_constructors::dup(comm)?;
    let ch = Channel::lookup(comm)?;
    Ok(Making { comm, ch })
}

/// Every rank's size and displacement unit.
fn exchange(m: &Making, size: usize, disp_unit: usize) -> MpiResult<Vec<Peer>> {
    let mine: Vec<u8> = [size as u64, disp_unit as u64]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let all = algorithms::allgather(&m.ch, &mine)?;
    Ok(all
        .chunks_exact(16)
        .map(|c| Peer {
            size: u64::from_le_bytes(c[..8].try_into().expect("8 bytes")) as usize,
            disp_unit: u64::from_le_bytes(c[8..].try_into().expect("8 bytes")) as usize,
        })
        .collect())
}

/// What a new window holds besides its communicator.
struct Parts {
    flavor: c_int,
    exposed: Exposed,
    peers: Vec<Peer>,
    segment: Option<Segment>,
    shared_offsets: Vec<usize>,
    direct: Vec<Option<DirectTarget>>,
    single_copy: Vec<Option<SingleCopyTarget>>,
    peer_segments: Vec<Segment>,
    base: usize,
    size: usize,
    disp_unit: usize,
    hints: Vec<(String, String)>,
}

/// The hints in effect: the defaults, with the program's values for the
/// keys a window knows (others are ignored, as hints may be).
pub fn hints_from(given: &[(String, String)], shared: bool) -> Vec<(String, String)> {
    let mut hints: Vec<(String, String)> = HINT_DEFAULTS
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    if shared {
        hints.push(("alloc_shared_noncontig".into(), "false".into()));
    }
    for (key, value) in given {
        if let Some(slot) = hints.iter_mut().find(|(k, _)| k == key) {
            slot.1 = value.clone();
        }
    }
    hints
}

/// Installs the window; returns its handle.
fn finish(m: Making, parts: Parts) -> MpiResult<MPI_Win> {
    let win = {
        let mut rt = runtime::lock();
        let (members, rank, context_id, epoch) = {
            let c = rt.comms().get(m.comm)?;
            (c.members.clone(), c.rank, c.context_id, c.epoch)
        };
        rt.errhandlers_mut().retain(MPI_ERRORS_ARE_FATAL)?;
        let size = members.len();
        rt.windows_mut().insert(Window {
            comm: m.comm,
            members,
            rank,
            context_id,
            epoch,
            flavor: parts.flavor,
            exposed: parts.exposed,
            peers: parts.peers,
            segment: parts.segment,
            shared_offsets: parts.shared_offsets,
            direct: parts.direct,
            single_copy: parts.single_copy,
            peer_segments: parts.peer_segments,
            name: String::new(),
            errhandler: MPI_ERRORS_ARE_FATAL,
            follows_world_errhandler: true,
            attributes: Default::default(),
            atomics: parts
                .hints
                .iter()
                .any(|(k, v)| k == "acc_single_intrinsic" && v == "true"),
            hints: parts.hints,
            predefined: Box::new(PredefinedValues {
                base: parts.base,
                size: parts.size as _,
                disp_unit: parts.disp_unit as c_int,
                flavor: parts.flavor,
                model: MPI_WIN_UNIFIED,
            }),
            access: Access::None,
            origin: OriginState::new(size),
            target: TargetState::new(size),
            serving: None,
        })
    };
    let serving = keep_serving()?;
    if let Some(w) = runtime::lock().windows_mut().get_mut(win) {
        w.serving = Some(serving);
    }
    Ok(win)
}

/// Where the `MPI_Win_create` memory of this node's ranks is, for the
/// ones whose memory this process may reach by single copy (collective:
/// every rank gives its process id and base address). None where the
/// rank is on another node, exposes nothing, or the kernel refuses
/// (`single_copy::probe`), and for every rank when single copy is off
/// (`OXMPI_SHM_SINGLE_COPY=0`) or shared memory is (`OXMPI_TRANSPORT=tcp`):
/// their puts and gets are then messages.
fn single_copy_targets(
    m: &Making,
    base: usize,
    peers: &[Peer],
) -> MpiResult<Vec<Option<SingleCopyTarget>>> {
    let mine: Vec<u8> = [u64::from(std::process::id()), base as u64]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let all = algorithms::allgather(&m.ch, &mine)?;
    let mut targets = vec![None; peers.len()];
    let config = crate::config::get();
    if !crate::config::shm_single_copy() || config.transport == TransportChoice::Tcp {
        return Ok(targets);
    }
    let node = runtime::lock().process()?.psets.members("mpix://SHARED")?;
    for (r, record) in all.chunks_exact(16).enumerate() {
        let pid = u64::from_le_bytes(record[..8].try_into().expect("8 bytes")) as libc::pid_t;
        let base = u64::from_le_bytes(record[8..].try_into().expect("8 bytes")) as usize;
        if peers[r].size == 0 || !node.contains(&m.ch.members[r]) {
            continue;
        }
        if r != m.ch.rank && !single_copy::probe(pid) {
            log::debug!("rank {r}'s window memory is reached by messages: no single copy to it");
            continue;
        }
        targets[r] = Some(SingleCopyTarget {
            pid,
            base,
            own: r == m.ch.rank,
        });
    }
    Ok(targets)
}

/// `MPI_Win_create`: exposes `size` bytes at `base`.
pub fn create(
    base: usize,
    size: usize,
    disp_unit: usize,
    hints: &[(String, String)],
    comm: MPI_Comm,
) -> MpiResult<MPI_Win> {
    let m = begin(comm)?;
    let peers = exchange(&m, size, disp_unit)?;
    let single_copy = single_copy_targets(&m, base, &peers)?;
    finish(
        m,
        Parts {
            flavor: MPI_WIN_FLAVOR_CREATE,
            exposed: Exposed::Fixed { base, size },
            direct: vec![None; peers.len()],
            single_copy,
            peers,
            segment: None,
            shared_offsets: Vec::new(),
            peer_segments: Vec::new(),
            base,
            size,
            disp_unit,
            hints: hints_from(hints, false),
        },
    )
}

/// `MPI_Win_create_dynamic`: no memory until `MPI_Win_attach`.
pub fn create_dynamic(hints: &[(String, String)], comm: MPI_Comm) -> MpiResult<MPI_Win> {
    let m = begin(comm)?;
    let peers = exchange(&m, 0, 1)?;
    finish(
        m,
        Parts {
            flavor: MPI_WIN_FLAVOR_DYNAMIC,
            exposed: Exposed::Dynamic {
                regions: Vec::new(),
            },
            direct: vec![None; peers.len()],
            single_copy: vec![None; peers.len()],
            peers,
            segment: None,
            shared_offsets: Vec::new(),
            peer_segments: Vec::new(),
            base: 0,
            size: 0,
            disp_unit: 1,
            hints: hints_from(hints, false),
        },
    )
}

/// Where the lock of a rank's accumulates is, from the start of its
/// memory of `size` bytes: the next line past it.
fn lock_offset(size: usize) -> usize {
    size.next_multiple_of(LOCK_WORD_BYTES)
}

/// Rank memory at `base`, its accumulates' lock `lock_at` bytes further.
///
/// # Safety
/// `base + lock_at` must be a line of mapped shared memory used only as
/// that lock, mapped while the window exists.
unsafe fn direct_target(base: usize, lock_at: usize) -> DirectTarget {
    DirectTarget {
        base,
        // SAFETY: forwarded caller contract.
        lock: unsafe { LockWord::at((base + lock_at) as *mut u8) },
    }
}

/// `MPI_Win_allocate`: `size` bytes of new memory; returns the window
/// and the memory's address.
pub fn allocate(
    size: usize,
    disp_unit: usize,
    hints: &[(String, String)],
    comm: MPI_Comm,
) -> MpiResult<(MPI_Win, usize)> {
    let m = begin(comm)?;
    let peers = exchange(&m, size, disp_unit)?;
    // The memory, then the lock of its accumulates on a line of its own.
    let segment = new_segment(lock_offset(size) + LOCK_WORD_BYTES)?;
    let base = segment.as_ptr() as usize;
    // The ranks of this node map each other's segments (anonymous ones:
    // a name would have to outlive the exchange), so that small puts and
    // gets between them are loads and stores, and accumulates are done in
    // place.
    let mut direct = vec![None; peers.len()];
    // SAFETY: the segment has the lock's line past the memory, and it
    // stays mapped while the window does (the window owns it).
    direct[m.ch.rank] = Some(unsafe { direct_target(base, lock_offset(size)) });
    let mut peer_segments = Vec::new();
    if anonymous_supported() {
        let addresses = exchange_addresses(&m.ch, Some(segment.address()))?;
        let node = runtime::lock().process()?.psets.members("mpix://SHARED")?;
        for (r, address) in addresses.iter().enumerate() {
            let Some(address) = address else { continue };
            if r == m.ch.rank || peers[r].size == 0 || !node.contains(&m.ch.members[r]) {
                continue;
            }
            match Segment::attach(address) {
                Ok(seg) => {
                    let base = seg.as_ptr() as usize;
                    // SAFETY: rank r's segment was made as this one was,
                    // its lock's line past its memory; it stays mapped
                    // while the window does (in `peer_segments`).
                    direct[r] = Some(unsafe { direct_target(base, lock_offset(peers[r].size)) });
                    peer_segments.push(seg);
                }
                Err(e) => log::debug!("rank {r}'s window memory is reached by messages: {e}"),
            }
        }
    } else {
        // Nobody else maps it: the name can go at once.
        let _ = segment.unlink();
    }
    let win = finish(
        m,
        Parts {
            flavor: MPI_WIN_FLAVOR_ALLOCATE,
            exposed: Exposed::Fixed { base, size },
            peers,
            segment: Some(segment),
            shared_offsets: Vec::new(),
            single_copy: vec![None; direct.len()],
            direct,
            peer_segments,
            base,
            size,
            disp_unit,
            hints: hints_from(hints, false),
        },
    )?;
    Ok((win, base))
}

/// Every rank's offset in the node's segment, and the segment's length.
fn shared_layout(peers: &[Peer], noncontig: bool) -> (Vec<usize>, usize) {
    let mut offsets = Vec::with_capacity(peers.len());
    let mut at: usize = 0;
    for p in peers {
        if noncontig {
            at = at.div_ceil(PAGE) * PAGE;
        }
        offsets.push(at);
        at += p.size;
    }
    (offsets, at)
}

/// `MPI_Win_allocate_shared`: returns the window and this rank's part of
/// the node's segment.
pub fn allocate_shared(
    size: usize,
    disp_unit: usize,
    hints: &[(String, String)],
    comm: MPI_Comm,
) -> MpiResult<(MPI_Win, usize)> {
    let m = begin(comm)?;
    {
        let rt = runtime::lock();
        let node = rt.process()?.psets.members("mpix://SHARED")?;
        if !m.ch.members.iter().all(|p| node.contains(p)) {
            drop(rt);
            let _ = free_comm(m.comm);
            return Err(MpiError::new(
                MPI_ERR_RMA_SHARED,
                "MPI_Win_allocate_shared needs every process of the communicator on this node",
            ));
        }
    }
    let peers = exchange(&m, size, disp_unit)?;
    let hints = hints_from(hints, true);
    let noncontig = hints
        .iter()
        .any(|(k, v)| k == "alloc_shared_noncontig" && v == "true");
    let (offsets, total) = shared_layout(&peers, noncontig);
    // Past every rank's memory, the lock of each rank's accumulates.
    let locks = lock_offset(total);
    let total = locks + peers.len() * LOCK_WORD_BYTES;
    let segment = match shared_by_all(&m.ch, total, "MPI_Win_allocate_shared")? {
        Ok(s) => s,
        Err(e) => {
            let _ = free_comm(m.comm);
            return Err(e);
        }
    };
    let base = segment.as_ptr() as usize + offsets[m.ch.rank];
    let direct: Vec<Option<DirectTarget>> = offsets
        .iter()
        .enumerate()
        .map(|(r, o)| {
            let start = segment.as_ptr() as usize;
            // SAFETY: the node's segment holds rank r's lock at
            // `locks + r` lines, and the window keeps it mapped.
            Some(unsafe { direct_target(start + o, locks + r * LOCK_WORD_BYTES - o) })
        })
        .collect();
    let win = finish(
        m,
        Parts {
            flavor: MPI_WIN_FLAVOR_SHARED,
            exposed: Exposed::Fixed { base, size },
            peers,
            segment: Some(segment),
            shared_offsets: offsets,
            single_copy: vec![None; direct.len()],
            direct,
            peer_segments: Vec::new(),
            base,
            size,
            disp_unit,
            hints,
        },
    )?;
    Ok((win, base))
}

fn free_comm(comm: MPI_Comm) -> MpiResult {
    runtime::lock().free_comm(comm).map(|_| ())
}

/// `MPI_Win_shared_query`: the size, displacement unit and address (in
/// this process) of `rank`'s memory (`MPI_PROC_NULL`: the first rank with
/// memory). Windows of other flavors share nothing: size 0, no address,
/// except this process's own memory.
pub fn shared_query(win: MPI_Win, rank: c_int) -> MpiResult<(usize, usize, usize)> {
    let rt = runtime::lock();
    let w = rt.window(win)?;
    let r = if rank == MPI_PROC_NULL {
        match w.peers.iter().position(|p| p.size > 0) {
            Some(r) => r,
            None => return Ok((0, w.peers.first().map_or(1, |p| p.disp_unit), 0)),
        }
    } else {
        w.target_rank(rank)?.expect("not MPI_PROC_NULL")
    };
    let peer = w.peers[r];
    if w.flavor == MPI_WIN_FLAVOR_SHARED {
        let segment = w.segment.as_ref().expect("a shared window has its segment");
        // A rank without memory has no address (as in MPICH).
        let base = match peer.size {
            0 => 0,
            _ => segment.as_ptr() as usize + w.shared_offsets[r],
        };
        return Ok((peer.size, peer.disp_unit, base));
    }
    if r == w.rank && w.flavor != MPI_WIN_FLAVOR_DYNAMIC {
        return Ok((peer.size, peer.disp_unit, w.predefined.base));
    }
    Ok((0, peer.disp_unit, 0))
}

/// `MPI_Win_attach`.
pub fn attach(win: MPI_Win, base: usize, size: usize) -> MpiResult {
    let mut rt = runtime::lock();
    let w = rt.window_mut(win)?;
    match &mut w.exposed {
        Exposed::Dynamic { regions } => {
            if regions
                .iter()
                .any(|&(at, len)| base < at + len && at < base + size)
            {
                return Err(MpiError::new(
                    MPI_ERR_RMA_ATTACH,
                    format!("{base:#x} (+{size}) overlaps memory attached already"),
                ));
            }
            regions.push((base, size));
            Ok(())
        }
        Exposed::Fixed { .. } => Err(MpiError::new(
            MPI_ERR_RMA_FLAVOR,
            "MPI_Win_attach needs a window from MPI_Win_create_dynamic",
        )),
    }
}

/// `MPI_Win_detach`.
pub fn detach(win: MPI_Win, base: usize) -> MpiResult {
    let mut rt = runtime::lock();
    let w = rt.window_mut(win)?;
    match &mut w.exposed {
        Exposed::Dynamic { regions } => {
            let before = regions.len();
            regions.retain(|&(at, _)| at != base);
            if regions.len() == before {
                return Err(MpiError::new(
                    MPI_ERR_RMA_ATTACH,
                    format!("no memory at {base:#x} is attached to the window"),
                ));
            }
            Ok(())
        }
        Exposed::Fixed { .. } => Err(MpiError::new(
            MPI_ERR_RMA_FLAVOR,
            "MPI_Win_detach needs a window from MPI_Win_create_dynamic",
        )),
    }
}

/// Checks `MPI_Win_free` may run: no epoch open at this rank.
pub fn check_free(win: MPI_Win) -> MpiResult {
    let rt = runtime::lock();
    let w = rt.window(win)?;
    if matches!(
        w.access,
        Access::Locks(_) | Access::LockAll { .. } | Access::Started(_)
    ) || w.target.post_group.is_some()
    {
        return Err(MpiError::new(
            MPI_ERR_RMA_SYNC,
            "MPI_Win_free with an access or exposure epoch still open",
        ));
    }
    Ok(())
}

/// `MPI_Win_free` (after the attributes' delete callbacks): waits for
/// this rank's operations, then for every rank (a barrier: no operation
/// targets the memory any more), and frees the window.
pub fn free(win: MPI_Win) -> MpiResult {
    check_free(win)?;
    super::sync::write_out_puts(win)?;
    block_on(|rt| {
        let w = rt.window(win)?;
        Ok((!w.origin.has_pending(None) && !w.target.is_busy()).then_some(()))
    })?;
    let ch = super::sync::channel(win)?;
    algorithms::barrier(&ch)?;
    let mut rt = runtime::lock();
    let w = rt
        .windows_mut()
        .remove(win)
        .ok_or_else(|| invalid_window(win))?;
    rt.errhandlers_mut().release(w.errhandler)?;
    let comm = w.comm;
    drop(w);
    rt.free_comm(comm).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_memory_is_contiguous_unless_asked_otherwise() {
        let peers: Vec<Peer> = [100, 0, 28]
            .iter()
            .map(|&size| Peer { size, disp_unit: 1 })
            .collect();
        assert_eq!(shared_layout(&peers, false), (vec![0, 100, 100], 128));
        assert_eq!(shared_layout(&peers, true), (vec![0, 4096, 4096], 4124));
    }

    #[test]
    fn known_hints_take_the_programs_values() {
        let given = vec![
            ("no_locks".to_string(), "true".to_string()),
            ("unknown".to_string(), "x".to_string()),
        ];
        let hints = hints_from(&given, false);
        assert!(hints.contains(&("no_locks".into(), "true".into())));
        assert!(!hints.iter().any(|(k, _)| k == "unknown"));
        assert!(hints_from(&[], true)
            .iter()
            .any(|(k, v)| k == "alloc_shared_noncontig" && v == "false"));
    }
}
