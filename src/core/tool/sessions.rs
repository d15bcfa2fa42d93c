//! Performance-variable sessions and their handles. A handle remembers
//! the counter value it counts from (its baseline): reading gives the
//! counter's value minus the baseline, a reset moves the baseline to the
//! current value, a write to where the handle reads the value written. So
//! handles (in one session or several) never disturb one another, and the
//! counters themselves are only ever added to. Ids (of sessions and
//! handles alike) are unique for the process's life, never 0.
use std::collections::BTreeMap;

use crate::core::error::{MpiError, MpiResult};
use crate::core::locks::{Level, OrderedGuard, OrderedMutex};
use crate::mpi_abi::constants::*;

use super::pvars::PVARS;

/// A handle's target: one handle, or every handle of the session
/// (`MPI_T_PVAR_ALL_HANDLES`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    One(u64),
    All,
}

struct Handle {
    pvar: usize,
    baseline: u64,
}

impl Handle {
    fn value(&self) -> u64 {
        (PVARS[self.pvar].read)().wrapping_sub(self.baseline)
    }
}

struct Sessions {
    last_id: u64,
    open: BTreeMap<u64, BTreeMap<u64, Handle>>,
}

/// Taken only by MPI_T calls, which hold no other lock (the variables'
/// values are atomics); a leaf of the lock order.
static SESSIONS: OrderedMutex<Sessions> = OrderedMutex::new(
    Level::ToolSessions,
    Sessions {
        last_id: 0,
        open: BTreeMap::new(),
    },
);

fn sessions() -> OrderedGuard<'static, Sessions> {
    SESSIONS.lock()
}

impl Sessions {
    fn next_id(&mut self) -> u64 {
        self.last_id += 1;
        self.last_id
    }

    fn session(&mut self, session: u64) -> MpiResult<&mut BTreeMap<u64, Handle>> {
        self.open
            .get_mut(&session)
            .ok_or_else(|| MpiError::new(MPI_T_ERR_INVALID_SESSION, "no such pvar session"))
    }
}

fn handle_of(handles: &mut BTreeMap<u64, Handle>, handle: u64) -> MpiResult<&mut Handle> {
    handles.get_mut(&handle).ok_or_else(|| {
        MpiError::new(
            MPI_T_ERR_INVALID_HANDLE,
            "no such pvar handle in this session",
        )
    })
}

fn one(target: Target) -> MpiResult<u64> {
    match target {
        Target::One(h) => Ok(h),
        Target::All => Err(MpiError::new(
            MPI_T_ERR_INVALID_HANDLE,
            "MPI_T_PVAR_ALL_HANDLES is not allowed here",
        )),
    }
}

fn no_write(pvar: usize) -> MpiError {
    MpiError::new(
        MPI_T_ERR_PVAR_NO_WRITE,
        format!("{} is read-only", PVARS[pvar].name),
    )
}

/// A new session; returns its id.
pub fn create() -> u64 {
    let mut s = sessions();
    let id = s.next_id();
    s.open.insert(id, BTreeMap::new());
    id
}

/// Frees a session and its handles.
pub fn free(session: u64) -> MpiResult {
    let mut s = sessions();
    s.session(session)?;
    s.open.remove(&session);
    Ok(())
}

/// Frees every session (the last `MPI_T_finalize`).
pub fn free_all() {
    sessions().open.clear();
}

/// A handle of variable `pvar` in `session`, counting from now.
pub fn alloc(session: u64, pvar: usize) -> MpiResult<u64> {
    let Some(var) = PVARS.get(pvar) else {
        return Err(MpiError::new(
            MPI_T_ERR_INVALID_INDEX,
            format!("no performance variable {pvar}"),
        ));
    };
    let mut s = sessions();
    s.session(session)?;
    let id = s.next_id();
    let baseline = if var.readonly { 0 } else { (var.read)() };
    s.session(session)?.insert(id, Handle { pvar, baseline });
    Ok(id)
}

pub fn free_handle(session: u64, handle: u64) -> MpiResult {
    let mut s = sessions();
    let handles = s.session(session)?;
    handle_of(handles, handle)?;
    handles.remove(&handle);
    Ok(())
}

/// `MPI_T_pvar_start`/`stop`: every variable is continuous, so one handle
/// cannot be started or stopped; for all handles there is nothing to do.
pub fn start_stop(session: u64, target: Target) -> MpiResult {
    let mut s = sessions();
    let handles = s.session(session)?;
    match target {
        Target::All => Ok(()),
        Target::One(h) => {
            let handle = handle_of(handles, h)?;
            Err(MpiError::new(
                MPI_T_ERR_PVAR_NO_STARTSTOP,
                format!("{} is continuous", PVARS[handle.pvar].name),
            ))
        }
    }
}

pub fn read(session: u64, target: Target) -> MpiResult<u64> {
    let h = one(target)?;
    let mut s = sessions();
    Ok(handle_of(s.session(session)?, h)?.value())
}

/// Reads, then resets, a handle.
pub fn read_reset(session: u64, target: Target) -> MpiResult<u64> {
    let h = one(target)?;
    let mut s = sessions();
    let handle = handle_of(s.session(session)?, h)?;
    if PVARS[handle.pvar].readonly {
        return Err(no_write(handle.pvar));
    }
    let now = (PVARS[handle.pvar].read)();
    let value = now.wrapping_sub(handle.baseline);
    handle.baseline = now;
    Ok(value)
}

/// Resets a handle to zero, or every handle of the session that can be.
pub fn reset(session: u64, target: Target) -> MpiResult {
    let mut s = sessions();
    let handles = s.session(session)?;
    match target {
        Target::All => {
            for handle in handles.values_mut() {
                if !PVARS[handle.pvar].readonly {
                    handle.baseline = (PVARS[handle.pvar].read)();
                }
            }
            Ok(())
        }
        Target::One(h) => {
            let handle = handle_of(handles, h)?;
            if PVARS[handle.pvar].readonly {
                return Err(no_write(handle.pvar));
            }
            handle.baseline = (PVARS[handle.pvar].read)();
            Ok(())
        }
    }
}

/// Makes a handle read `value` from now on.
pub fn write(session: u64, target: Target, value: u64) -> MpiResult {
    let h = one(target)?;
    let mut s = sessions();
    let handle = handle_of(s.session(session)?, h)?;
    if PVARS[handle.pvar].readonly {
        return Err(no_write(handle.pvar));
    }
    handle.baseline = (PVARS[handle.pvar].read)().wrapping_sub(value);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::pvars;
    use super::*;

    fn class(r: MpiResult<impl std::fmt::Debug>) -> i32 {
        r.expect_err("an error").class
    }

    #[test]
    fn handles_count_from_their_own_baseline() {
        let epochs = pvars::index_of("oxmpi_epochs_started", MPI_T_PVAR_CLASS_COUNTER).unwrap();
        let session = create();
        let a = alloc(session, epochs).unwrap();
        let b = alloc(session, epochs).unwrap();
        // Other tests may start epochs meanwhile: only relations are sure.
        write(session, Target::One(a), 1000).unwrap();
        assert!(read(session, Target::One(a)).unwrap() >= 1000);
        assert!(read_reset(session, Target::One(a)).unwrap() >= 1000);
        assert!(read(session, Target::One(a)).unwrap() < 1000);
        assert!(read(session, Target::One(b)).unwrap() < 1000, "b untouched");
        reset(session, Target::All).unwrap();
        assert_eq!(class(read(session, Target::All)), MPI_T_ERR_INVALID_HANDLE);
        free_handle(session, a).unwrap();
        assert_eq!(
            class(read(session, Target::One(a))),
            MPI_T_ERR_INVALID_HANDLE
        );
        let other = create();
        assert_eq!(
            class(read(other, Target::One(b))),
            MPI_T_ERR_INVALID_HANDLE,
            "a handle belongs to its session"
        );
        free(session).unwrap();
        assert_eq!(
            class(read(session, Target::One(b))),
            MPI_T_ERR_INVALID_SESSION
        );
        assert_eq!(class(free(session)), MPI_T_ERR_INVALID_SESSION);
        free(other).unwrap();
    }

    #[test]
    fn read_only_variables_refuse_writes_and_continuous_ones_start_stop() {
        let level =
            pvars::index_of("oxmpi_unexpected_queue_length", MPI_T_PVAR_CLASS_LEVEL).unwrap();
        let session = create();
        let h = alloc(session, level).unwrap();
        assert_eq!(
            class(write(session, Target::One(h), 3)),
            MPI_T_ERR_PVAR_NO_WRITE
        );
        assert_eq!(
            class(reset(session, Target::One(h))),
            MPI_T_ERR_PVAR_NO_WRITE
        );
        assert_eq!(
            class(read_reset(session, Target::One(h))),
            MPI_T_ERR_PVAR_NO_WRITE
        );
        assert_eq!(
            class(start_stop(session, Target::One(h))),
            MPI_T_ERR_PVAR_NO_STARTSTOP
        );
        start_stop(session, Target::All).unwrap();
        assert_eq!(class(alloc(session, PVARS.len())), MPI_T_ERR_INVALID_INDEX);
        free(session).unwrap();
    }
}
