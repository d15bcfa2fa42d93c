//! Synchronization: fences, locks and flushes (passive target), and
//! post/start/complete/wait (general active target). Misuse the standard
//! calls erroneous and MPICH detects (an operation or unlock without the
//! epoch, a lock of a rank already locked, a complete without a start, a
//! wait without a post) is `MPI_ERR_RMA_SYNC`.
use std::os::raw::c_int;

use super::target;
use super::window::invalid_window;
use super::window::Access;
use super::wire::{Header, Kind, REQUEST_TAG};
use super::Window;
use crate::core::collective::algorithms;
use crate::core::collective::channel::Channel;
use crate::core::error::{MpiError, MpiResult};
use crate::core::matching::Pattern;
use crate::core::p2p::user_buffer::UserBuffer;
use crate::core::progress::block_on;
use crate::core::runtime::{self, Runtime};
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::MPI_Win;

fn sync_error(what: impl Into<String>) -> MpiError {
    MpiError::new(MPI_ERR_RMA_SYNC, what)
}

/// Runs `f` on the window, with the engine and transports.
fn with<T>(
    rt: &mut Runtime,
    win: MPI_Win,
    f: impl FnOnce(
        &mut Window,
        &mut crate::core::p2p::engine::Engine,
        &mut crate::core::p2p::engine::Endpoints,
    ) -> MpiResult<T>,
) -> MpiResult<T> {
    let (windows, engine, ep) = rt.windows_engine_endpoints()?;
    let w = windows.get_mut(win).ok_or_else(|| invalid_window(win))?;
    f(w, engine, ep)
}

/// Writes out the window's batched puts (see `origin::write_out`): every
/// synchronization call begins with it.
pub fn write_out_puts(win: MPI_Win) -> MpiResult {
    let mut rt = runtime::lock();
    with(&mut rt, win, super::origin::write_out)
}

/// Waits until `done` holds for the window (progress serves it meanwhile).
fn wait_until(win: MPI_Win, mut done: impl FnMut(&mut Window) -> bool) -> MpiResult {
    block_on(|rt| {
        let w = rt.window_mut(win)?;
        Ok(done(w).then_some(()))
    })
}

/// Sends `kind` to each of `targets`, each with a reply posted for its
/// acknowledgement (none for notices), and waits for the acknowledgements.
fn notify(
    win: MPI_Win,
    kind: Kind,
    exclusive: bool,
    targets: &[usize],
    acknowledged: bool,
) -> MpiResult {
    {
        let mut rt = runtime::lock();
        with(&mut rt, win, |w, engine, ep| {
            for &t in targets {
                let mut header = Header::control(kind, 0);
                header.exclusive = exclusive;
                if acknowledged {
                    header.reply_tag = w.origin.reply_tag();
                    let pattern = Pattern {
                        context_id: w.context_id,
                        source: t as c_int,
                        tag: header.reply_tag,
                    };
                    let receive = engine.irecv(ep, UserBuffer::packed(Vec::new()), pattern);
                    w.origin.expect(receive, t, None);
                }
                target::send(w, engine, ep, t, REQUEST_TAG, header.encode(0));
            }
            Ok(())
        })?;
    }
    wait_until(win, |w| {
        targets.iter().all(|&t| !w.origin.has_pending(Some(t)))
    })
}

/// The window's collective channel (for fences and `MPI_Win_free`).
pub fn channel(win: MPI_Win) -> MpiResult<Channel> {
    let comm = runtime::lock().window(win)?.comm;
    Channel::lookup(comm)
}

/// `MPI_Win_fence`.
pub fn fence(win: MPI_Win, assert: c_int) -> MpiResult {
    let (ch, me) = {
        let rt = runtime::lock();
        let w = rt.window(win)?;
        if matches!(
            w.access,
            Access::Locks(_) | Access::LockAll { .. } | Access::Started(_)
        ) {
            return Err(sync_error(
                "MPI_Win_fence inside a lock or start epoch of the same window",
            ));
        }
        (w.comm, w.rank)
    };
    let ch = Channel::lookup(ch)?;
    write_out_puts(win)?;
    if assert & MPI_MODE_NOPRECEDE == 0 {
        // Our operations' replies are in; then each rank learns how many
        // operations target it and waits until it applied them all.
        wait_until(win, |w| !w.origin.has_pending(None))?;
        let sent: Vec<u8> = {
            let rt = runtime::lock();
            let w = rt.window(win)?;
            w.origin.sent.iter().flat_map(|n| n.to_le_bytes()).collect()
        };
        let all = algorithms::allgather(&ch, &sent)?;
        let p = ch.size();
        let expected: u64 = (0..p)
            .map(|r| {
                let at = (r * p + me) * 8;
                u64::from_le_bytes(all[at..at + 8].try_into().expect("8 bytes"))
            })
            .sum();
        wait_until(win, |w| {
            w.target.applied >= expected && !w.target.is_receiving()
        })?;
    }
    algorithms::barrier(&ch)?;
    let mut rt = runtime::lock();
    let w = rt.window_mut(win)?;
    w.access = if assert & MPI_MODE_NOSUCCEED != 0 {
        Access::None
    } else {
        Access::Fence
    };
    Ok(())
}

/// Checks that a passive-target epoch may start now.
fn may_open_epoch(w: &Window, what: &str) -> MpiResult {
    match w.access {
        Access::None | Access::Fence => Ok(()),
        _ => Err(sync_error(format!(
            "{what} while another access epoch of the window is open"
        ))),
    }
}

/// `MPI_Win_lock`.
pub fn lock(win: MPI_Win, lock_type: c_int, rank: c_int, assert: c_int) -> MpiResult {
    if lock_type != MPI_LOCK_EXCLUSIVE && lock_type != MPI_LOCK_SHARED {
        return Err(MpiError::new(
            MPI_ERR_LOCKTYPE,
            format!("{lock_type} is neither MPI_LOCK_EXCLUSIVE nor MPI_LOCK_SHARED"),
        ));
    }
    let t = {
        let rt = runtime::lock();
        let w = rt.window(win)?;
        let Some(t) = w.target_rank(rank)? else {
            return Ok(());
        };
        match &w.access {
            Access::Locks(locks) if locks.iter().any(|&(r, _)| r == t) => {
                return Err(sync_error(format!("rank {t} is locked already")))
            }
            Access::Locks(_) => {}
            _ => may_open_epoch(w, "MPI_Win_lock")?,
        }
        t
    };
    let checked = assert & MPI_MODE_NOCHECK == 0;
    if checked {
        notify(win, Kind::Lock, lock_type == MPI_LOCK_EXCLUSIVE, &[t], true)?;
    }
    let mut rt = runtime::lock();
    let w = rt.window_mut(win)?;
    match &mut w.access {
        Access::Locks(locks) => locks.push((t, checked)),
        access => *access = Access::Locks(vec![(t, checked)]),
    }
    Ok(())
}

/// `MPI_Win_unlock`.
pub fn unlock(win: MPI_Win, rank: c_int) -> MpiResult {
    let (t, checked) = {
        let rt = runtime::lock();
        let w = rt.window(win)?;
        let Some(t) = w.target_rank(rank)? else {
            return Ok(());
        };
        let held = match &w.access {
            Access::Locks(locks) => locks.iter().find(|&&(r, _)| r == t).copied(),
            _ => None,
        };
        held.ok_or_else(|| sync_error(format!("MPI_Win_unlock of rank {t}, which is not locked")))?
    };
    write_out_puts(win)?;
    let kind = if checked { Kind::Unlock } else { Kind::Flush };
    notify(win, kind, false, &[t], true)?;
    let mut rt = runtime::lock();
    let w = rt.window_mut(win)?;
    if let Access::Locks(locks) = &mut w.access {
        locks.retain(|&(r, _)| r != t);
        if locks.is_empty() {
            w.access = Access::None;
        }
    }
    Ok(())
}

/// `MPI_Win_lock_all`.
pub fn lock_all(win: MPI_Win, assert: c_int) -> MpiResult {
    let all: Vec<usize> = {
        let rt = runtime::lock();
        let w = rt.window(win)?;
        may_open_epoch(w, "MPI_Win_lock_all")?;
        (0..w.size()).collect()
    };
    let checked = assert & MPI_MODE_NOCHECK == 0;
    if checked {
        notify(win, Kind::Lock, false, &all, true)?;
    }
    let mut rt = runtime::lock();
    let w = rt.window_mut(win)?;
    w.access = Access::LockAll { checked };
    Ok(())
}

/// `MPI_Win_unlock_all`.
pub fn unlock_all(win: MPI_Win) -> MpiResult {
    let (all, checked) = {
        let rt = runtime::lock();
        let w = rt.window(win)?;
        let Access::LockAll { checked } = w.access else {
            return Err(sync_error("MPI_Win_unlock_all without MPI_Win_lock_all"));
        };
        ((0..w.size()).collect::<Vec<_>>(), checked)
    };
    write_out_puts(win)?;
    let kind = if checked { Kind::Unlock } else { Kind::Flush };
    notify(win, kind, false, &all, true)?;
    let mut rt = runtime::lock();
    let w = rt.window_mut(win)?;
    w.access = Access::None;
    Ok(())
}

/// The ranks a flush of `rank` (`None`: all) covers, checked to be in a
/// passive-target epoch.
fn flushed(win: MPI_Win, rank: Option<c_int>) -> MpiResult<Vec<usize>> {
    flushed_in(runtime::lock().window(win)?, rank)
}

/// [`flushed`] of a window at hand.
fn flushed_in(w: &Window, rank: Option<c_int>) -> MpiResult<Vec<usize>> {
    let locked = |t: usize| match &w.access {
        Access::Locks(locks) => locks.iter().any(|&(r, _)| r == t),
        _ => true,
    };
    if !matches!(w.access, Access::Locks(_) | Access::LockAll { .. }) {
        return Err(sync_error("a flush outside a passive-target epoch"));
    }
    match rank {
        None => Ok((0..w.size()).filter(|&t| locked(t)).collect()),
        Some(rank) => match w.target_rank(rank)? {
            None => Ok(Vec::new()),
            Some(t) if locked(t) => Ok(vec![t]),
            Some(t) => Err(sync_error(format!(
                "a flush of rank {t}, which is not locked"
            ))),
        },
    }
}

/// `MPI_Win_flush` (`rank`) and `MPI_Win_flush_all` (`None`): every
/// operation to them is complete at the target too.
/// Loads and stores to mapped memory (see `origin`) are complete already:
/// only targets that messages went to since their last flush are asked.
pub fn flush(win: MPI_Win, rank: Option<c_int>) -> MpiResult {
    write_out_puts(win)?;
    let targets = {
        let mut rt = runtime::lock();
        let w = rt.window_mut(win)?;
        let mut targets = flushed_in(w, rank)?;
        targets.retain(|&t| std::mem::take(&mut w.origin.unflushed[t]));
        targets
    };
    std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
    if targets.is_empty() {
        return Ok(());
    }
    notify(win, Kind::Flush, false, &targets, true)
}

/// `MPI_Win_flush_local` and `_all`: the origin's buffers may be reused
/// (data of puts and accumulates is copied out when they start; gets have
/// arrived).
pub fn flush_local(win: MPI_Win, rank: Option<c_int>) -> MpiResult {
    let targets = flushed(win, rank)?;
    write_out_puts(win)?;
    wait_until(win, |w| {
        targets.iter().all(|&t| !w.origin.has_pending(Some(t)))
    })
}

/// `MPI_Win_post`: exposes the window to `group` (window ranks).
pub fn post(win: MPI_Win, group: Vec<usize>, _assert: c_int) -> MpiResult {
    {
        let mut rt = runtime::lock();
        with(&mut rt, win, |w, engine, ep| {
            if w.target.post_group.is_some() {
                return Err(sync_error("MPI_Win_post while an exposure epoch is open"));
            }
            for &o in &group {
                target::send(
                    w,
                    engine,
                    ep,
                    o,
                    REQUEST_TAG,
                    Header::control(Kind::Post, 0).encode(0),
                );
            }
            w.target.post_group = Some(group);
            Ok(())
        })?;
    }
    Ok(())
}

/// `MPI_Win_start`: an access epoch to `group`, once each has posted
/// (at once with `MPI_MODE_NOCHECK`).
pub fn start(win: MPI_Win, group: Vec<usize>, assert: c_int) -> MpiResult {
    {
        let mut rt = runtime::lock();
        let w = rt.window_mut(win)?;
        may_open_epoch(w, "MPI_Win_start")?;
        w.access = Access::Started(group.clone());
    }
    if assert & MPI_MODE_NOCHECK == 0 {
        wait_until(win, |w| {
            if group.iter().all(|&t| w.target.posts[t] > 0) {
                for &t in &group {
                    w.target.posts[t] -= 1;
                }
                return true;
            }
            false
        })?;
    }
    Ok(())
}

/// `MPI_Win_complete`.
pub fn complete(win: MPI_Win) -> MpiResult {
    let group = {
        let rt = runtime::lock();
        let w = rt.window(win)?;
        let Access::Started(group) = &w.access else {
            return Err(sync_error("MPI_Win_complete without MPI_Win_start"));
        };
        group.clone()
    };
    write_out_puts(win)?;
    // The notice follows the operations, so the target counts it once
    // they are applied; the wait covers the replies of gets.
    notify(win, Kind::Complete, false, &group, false)?;
    wait_until(win, |w| {
        group.iter().all(|&t| !w.origin.has_pending(Some(t)))
    })?;
    let mut rt = runtime::lock();
    let w = rt.window_mut(win)?;
    w.access = Access::None;
    Ok(())
}

/// Ends the exposure epoch if every origin completed: `MPI_Win_test`.
fn try_end_exposure(w: &mut Window) -> MpiResult<bool> {
    let Some(group) = &w.target.post_group else {
        return Err(sync_error(
            "MPI_Win_wait or MPI_Win_test without MPI_Win_post",
        ));
    };
    if !group.iter().all(|&o| w.target.completes[o] > 0) {
        return Ok(false);
    }
    for &o in group {
        w.target.completes[o] -= 1;
    }
    w.target.post_group = None;
    Ok(true)
}

/// `MPI_Win_wait`.
pub fn wait(win: MPI_Win) -> MpiResult {
    {
        let rt = runtime::lock();
        let w = rt.window(win)?;
        if w.target.post_group.is_none() {
            return Err(sync_error("MPI_Win_wait without MPI_Win_post"));
        }
    }
    block_on(|rt| {
        let w = rt.window_mut(win)?;
        Ok(try_end_exposure(w)?.then_some(()))
    })
}

/// `MPI_Win_test`.
pub fn test(win: MPI_Win) -> MpiResult<bool> {
    let mut rt = runtime::lock();
    rt.progress();
    let w = rt.window_mut(win)?;
    try_end_exposure(w)
}
