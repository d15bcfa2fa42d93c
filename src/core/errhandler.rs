//! Error handlers: the three predefined ones and user functions attached to
//! communicators, windows, files and sessions. A user handler stays alive
//! while any object uses it, even after `MPI_Errhandler_free`.
use std::os::raw::c_int;

use super::error::{MpiError, MpiResult};
use super::handles::{is_builtin, HandleTable, ObjectKind};
use crate::mpi_abi::callbacks::*;
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::*;

/// Which object kind a user handler was created for.
#[derive(Clone, Copy)]
pub enum ErrhandlerFunction {
    Comm(MPI_Comm_errhandler_function),
    Win(MPI_Win_errhandler_function),
    File(MPI_File_errhandler_function),
    Session(MPI_Session_errhandler_function),
}

pub struct Errhandler {
    pub function: ErrhandlerFunction,
    /// The user's handles (from create and get) plus the objects using it.
    refs: usize,
}

/// What to do with an error, resolved from a handle.
#[derive(Clone, Copy)]
pub enum Action {
    Fatal,
    Return,
    Abort,
    Call(ErrhandlerFunction),
}

pub struct Errhandlers {
    table: HandleTable<Errhandler>,
}

impl Default for Errhandlers {
    fn default() -> Self {
        Errhandlers {
            table: HandleTable::new(ObjectKind::Errhandler),
        }
    }
}

impl Errhandlers {
    pub fn create(&mut self, function: ErrhandlerFunction) -> MPI_Errhandler {
        self.table.insert(Errhandler { function, refs: 1 })
    }

    /// Checks a handle names a live error handler (predefined or user).
    pub fn check(&self, h: MPI_Errhandler) -> MpiResult {
        self.action(h).map(|_| ())
    }

    pub fn action(&self, h: MPI_Errhandler) -> MpiResult<Action> {
        match h {
            MPI_ERRORS_ARE_FATAL => Ok(Action::Fatal),
            MPI_ERRORS_RETURN => Ok(Action::Return),
            MPI_ERRORS_ABORT => Ok(Action::Abort),
            _ => self
                .table
                .get(h)
                .map(|e| Action::Call(e.function))
                .ok_or_else(|| invalid(h)),
        }
    }

    /// A new reference (an object starts using it, or `get_errhandler`).
    pub fn retain(&mut self, h: MPI_Errhandler) -> MpiResult {
        if is_builtin(h) {
            return self.check(h);
        }
        let e = self.table.get_mut(h).ok_or_else(|| invalid(h))?;
        e.refs += 1;
        Ok(())
    }

    /// Drops a reference; the handler goes when none is left.
    pub fn release(&mut self, h: MPI_Errhandler) -> MpiResult {
        if is_builtin(h) {
            return self.check(h);
        }
        let e = self.table.get_mut(h).ok_or_else(|| invalid(h))?;
        e.refs -= 1;
        if e.refs == 0 {
            self.table.remove(h);
        }
        Ok(())
    }
}

fn invalid(h: MPI_Errhandler) -> MpiError {
    if h == MPI_ERRHANDLER_NULL {
        MpiError::new(MPI_ERR_ARG, "MPI_ERRHANDLER_NULL is not an error handler")
    } else {
        MpiError::new(
            MPI_ERR_ARG,
            format!("invalid error handler handle {:#x}", h as u32),
        )
    }
}

/// The value a session or communicator error handler starts with.
pub const DEFAULT_ERRHANDLER: c_int = MPI_ERRORS_ARE_FATAL;
