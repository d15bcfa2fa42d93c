//! The panic boundary and error-handler dispatch around every entry point.
//!
//! Every generated `MPI_x`/`PMPI_x` calls [`run`] (or [`run_value`]): the
//! implementation runs inside `catch_unwind`, so no Rust panic reaches C (a
//! panic becomes `MPI_ERR_INTERN`); an error becomes an error code and goes
//! to the error handler of the object the call was about ([`Scope`]).
//! Handlers run without the runtime lock held.
use std::os::raw::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::core::abort;
use crate::core::errhandler::{Action, ErrhandlerFunction};
use crate::core::error::{MpiError, MpiResult};
use crate::core::error_codes;
use crate::core::runtime::{self, Runtime};
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::*;

/// The object whose error handler an error goes to.
#[derive(Clone, Copy)]
pub enum Scope {
    /// Not tied to an object (see [`default_handler`]).
    Default,
    Comm(MPI_Comm),
    Win(MPI_Win),
    File(MPI_File),
    Session(MPI_Session),
    /// An error handler given as an argument (`MPI_Session_init`).
    Handler(MPI_Errhandler),
}

impl Scope {
    /// The scope of the communicator at `p` (`MPI_Comm_free(&comm)`), read
    /// now, before the call that may free it; the default scope for NULL.
    ///
    /// # Safety
    /// `p` must be NULL or valid for reads.
    pub unsafe fn comm_at(p: *const MPI_Comm) -> Scope {
        // SAFETY: the caller's contract: NULL (`as_ref` gives `None`) or
        // valid for reads.
        unsafe { p.as_ref() }.map_or(Scope::Default, |&c| Scope::Comm(c))
    }

    /// As [`Scope::comm_at`] for a session (`MPI_Session_finalize`).
    ///
    /// # Safety
    /// `p` must be NULL or valid for reads.
    pub unsafe fn session_at(p: *const MPI_Session) -> Scope {
        // SAFETY: as in `comm_at`.
        unsafe { p.as_ref() }.map_or(Scope::Default, |&h| Scope::Session(h))
    }

    /// As [`Scope::comm_at`] for a file (`MPI_File_close`).
    ///
    /// # Safety
    /// `p` must be NULL or valid for reads.
    pub unsafe fn file_at(p: *const MPI_File) -> Scope {
        // SAFETY: as in `comm_at`.
        unsafe { p.as_ref() }.map_or(Scope::Default, |&f| Scope::File(f))
    }

    /// As [`Scope::comm_at`] for a window (`MPI_Win_free`).
    ///
    /// # Safety
    /// `p` must be NULL or valid for reads.
    pub unsafe fn win_at(p: *const MPI_Win) -> Scope {
        // SAFETY: as in `comm_at`.
        unsafe { p.as_ref() }.map_or(Scope::Default, |&w| Scope::Win(w))
    }
}

/// A scope with pointer arguments already read. A file's errors go to
/// its handler, and those of `MPI_FILE_NULL` (or of a handle that names
/// no open file) to the handler set on `MPI_FILE_NULL`.
#[derive(Clone, Copy)]
enum Target {
    Default,
    Comm(MPI_Comm),
    Win(MPI_Win),
    /// A file's table handle (0 for `MPI_FILE_NULL`).
    File(c_int),
    Session(MPI_Session),
    Handler(MPI_Errhandler),
}

impl Scope {
    fn target(self) -> Target {
        match self {
            Scope::Default => Target::Default,
            Scope::Comm(c) => Target::Comm(c),
            Scope::Session(h) => Target::Session(h),
            Scope::Handler(h) => Target::Handler(h),
            Scope::Win(w) => Target::Win(w),
            Scope::File(f) => Target::File(crate::abi::io::handle(f)),
        }
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_string()
    }
}

/// Runs an implementation that returns an MPI result; returns the C code.
#[inline(always)]
pub fn run(scope: Scope, call: &'static str, f: impl FnOnce() -> MpiResult) -> c_int {
    let target = scope.target();
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => MPI_SUCCESS,
        Ok(Err(error)) => raise(target, call, error),
        Err(payload) => raise(target, call, panic_error(payload)),
    }
}

/// The error a panic caught at the boundary becomes.
#[cold]
#[inline(never)]
fn panic_error(payload: Box<dyn std::any::Any + Send>) -> MpiError {
    MpiError::new(
        MPI_ERR_INTERN,
        format!("internal error: {}", panic_message(&*payload)),
    )
}

/// Runs an implementation that returns a plain value (`MPI_Wtime`,
/// `MPI_Comm_c2f`...): a panic is reported and gives the default value.
pub fn run_value<T: Default>(call: &'static str, f: impl FnOnce() -> T) -> T {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(v) => v,
        Err(payload) => {
            raise(Target::Default, call, panic_error(payload));
            T::default()
        }
    }
}

fn not_implemented_error() -> MpiError {
    MpiError::new(
        MPI_ERR_UNSUPPORTED_OPERATION,
        "not implemented in oxmpi yet",
    )
}

/// The body of every exported function oxmpi does not implement yet.
pub fn not_implemented(scope: Scope, call: &'static str) -> c_int {
    raise(scope.target(), call, not_implemented_error())
}

/// As [`not_implemented`], for functions that return a value, not a code.
pub fn not_implemented_value<T: Default>(call: &'static str) -> T {
    raise(Target::Default, call, not_implemented_error());
    T::default()
}

/// Runs an MPI_T implementation: errors become their class as the return
/// code; MPI_T never calls error handlers. A panic gives `MPI_T_ERR_INVALID`.
pub fn run_tool(call: &'static str, f: impl FnOnce() -> MpiResult) -> c_int {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => MPI_SUCCESS,
        Ok(Err(e)) => {
            log::debug!("{call}: {e}");
            e.class
        }
        Err(payload) => {
            log::error!("{call}: internal error: {}", panic_message(&*payload));
            MPI_T_ERR_INVALID
        }
    }
}

/// MPI_T functions never call error handlers; they return a code.
pub fn tool_not_implemented(call: &'static str) -> c_int {
    log::debug!("{call}: not implemented");
    MPI_T_ERR_NOT_SUPPORTED
}

/// The handler for errors not tied to an object: `MPI_COMM_SELF`'s if the
/// program set one there (MPI 4), else `MPI_COMM_WORLD`'s (what MPICH does,
/// and what older programs expect), while the world model is active;
/// otherwise the initial error handler (`MPI_ERRORS_ARE_FATAL` unless
/// `OXMPI_INITIAL_ERRHANDLER` or `mpiexec -initial-errhandler` says else).
fn default_handler(rt: &Runtime) -> (MPI_Errhandler, c_int) {
    if let Some((world, self_comm)) = rt.comms().predefined() {
        if self_comm.errhandler != MPI_ERRORS_ARE_FATAL {
            return (self_comm.errhandler, MPI_COMM_SELF);
        }
        return (world.errhandler, MPI_COMM_WORLD);
    }
    (crate::config::get().initial_errhandler, MPI_COMM_NULL)
}

/// The handler an object's errors go to: `MPI_COMM_WORLD`'s of the
/// moment while the world model is active and the object `follows` it
/// (no handler was ever set on it: MPICH's rule), else its own.
fn followed(rt: &Runtime, follows: bool, own: MPI_Errhandler) -> MPI_Errhandler {
    match rt.comms().predefined() {
        Some((world, _)) if follows => world.errhandler,
        _ => own,
    }
}

/// The handler a window's errors go to (see `Window::follows_world_errhandler`).
fn window_handler(rt: &Runtime, w: &crate::core::rma::Window) -> MPI_Errhandler {
    followed(rt, w.follows_world_errhandler, w.errhandler)
}

/// Reports `error` raised in `call` and returns its code (unless the
/// handler ends the job).
#[cold]
#[inline(never)]
fn raise(target: Target, call: &'static str, error: MpiError) -> c_int {
    let mut code = error_codes::record(call, &error);
    log::debug!("{call}: {error}");
    let (action, mut object) = {
        let rt = runtime::lock();
        let handler_and_object = match target {
            Target::Comm(c) => rt.comms().get(c).ok().map(|comm| {
                // A communicator whose handler was never set follows
                // MPI_COMM_WORLD's (as in MPICH; see `Communicator`).
                (
                    followed(&rt, comm.follows_world_errhandler, comm.errhandler),
                    c,
                )
            }),
            Target::Session(h) => rt.sessions().get(h).map(|s| (s.errhandler, h)),
            Target::Win(w) => rt.windows().get(w).map(|win| (window_handler(&rt, win), w)),
            Target::File(h) => Some(match rt.files().get(h) {
                Some(f) => (f.errhandler, h),
                None => (rt.default_file_errhandler(), 0),
            }),
            Target::Handler(h) => rt
                .errhandlers()
                .check(h)
                .ok()
                .map(|_| (h, MPI_SESSION_NULL)),
            Target::Default => None,
        };
        let (handler, object) = handler_and_object.unwrap_or_else(|| default_handler(&rt));
        (
            rt.errhandlers().action(handler).unwrap_or(Action::Fatal),
            object,
        )
    };
    invoke(action, &mut object, &mut code);
    code
}

/// Carries out a handler's action for `code` raised on `object`.
fn invoke(action: Action, object: &mut c_int, code: &mut c_int) {
    match action {
        Action::Return => {}
        Action::Fatal | Action::Abort => {
            let text =
                error_codes::string_of(*code).unwrap_or_else(|| format!("error code {code}"));
            abort::abort_job(
                error_codes::class_of(*code).unwrap_or(MPI_ERR_OTHER).max(1),
                &format!("oxmpi: {}: {text}", abort::who()),
            )
        }
        #[cfg(feature = "standard-abi")]
        Action::Call(function) => standard_abi_handler(function, object, code),
        #[cfg(not(feature = "standard-abi"))]
        Action::Call(function) => match function {
            // SAFETY: the program's communicator handler, called as MPI
            // specifies with pointers to the caller's live locals (`&mut`,
            // so unaliased); no lock is held, so it may call MPI.
            ErrhandlerFunction::Comm(Some(f)) => unsafe { f(object, code) },
            // SAFETY: likewise the program's session handler: `object` and
            // `code` point at live, unaliased locals; no lock is held.
            ErrhandlerFunction::Session(Some(f)) => unsafe { f(object, code) },
            // SAFETY: likewise the program's window handler: `object` and
            // `code` point at live, unaliased locals; no lock is held.
            ErrhandlerFunction::Win(Some(f)) => unsafe { f(object, code) },
            ErrhandlerFunction::File(Some(f)) => {
                let mut file = crate::abi::io::to_c(*object);
                // SAFETY: likewise the program's file handler, given a
                // pointer to a live local `MPI_File`; no lock is held.
                unsafe { f(&mut file, code) };
                *object = crate::abi::io::handle(file);
            }
            _ => {}
        },
    }
}

/// The standard-ABI build's error handler call: the program's handler
/// takes a pointer to a standard (pointer-sized) handle and a standard
/// error code; it was stored with oxmpi's function type (same
/// representation), so it is called through the standard one here.
#[cfg(feature = "standard-abi")]
fn standard_abi_handler(function: ErrhandlerFunction, object: &mut c_int, code: &mut c_int) {
    use crate::mpi_abi::standard::convert as cv;
    use crate::mpi_abi::standard::values::HandleKind;
    type StdHandler = unsafe extern "C" fn(*mut usize, *mut c_int, ...);
    let (f, kind) = match function {
        ErrhandlerFunction::Comm(Some(f)) => (f as usize, HandleKind::Comm),
        ErrhandlerFunction::Session(Some(f)) => (f as usize, HandleKind::Session),
        ErrhandlerFunction::Win(Some(f)) => (f as usize, HandleKind::Win),
        ErrhandlerFunction::File(Some(f)) => (f as usize, HandleKind::File),
        _ => return,
    };
    // SAFETY: `f` is the program's handler function (non-null, from a
    // function pointer); the standard ABI's handler type differs from the
    // one it was stored as only in the handle's width.
    let f: StdHandler = unsafe { std::mem::transmute::<usize, StdHandler>(f) };
    let mut handle = cv::handle_out(kind, *object);
    let mut std_code = cv::code_out(*code);
    // SAFETY: the program's handler, called as MPI specifies with pointers
    // to live, unaliased locals; no lock is held, so it may call MPI.
    unsafe { f(&mut handle, &mut std_code) };
}

/// The body of the standard-ABI functions that are exported but not
/// converted yet: `MPI_ERR_UNSUPPORTED_OPERATION` through the default
/// error handler (oxmpi's code, for the caller to convert).
pub fn unsupported_in_standard_abi(call: &'static str) -> c_int {
    raise(
        Target::Default,
        call,
        MpiError::new(
            MPI_ERR_UNSUPPORTED_OPERATION,
            "not supported in oxmpi's standard ABI build yet",
        ),
    )
}

/// `MPI_ERR_ARG` for a NULL output argument of a hand-written entry point.
pub fn invalid_argument(call: &'static str) -> c_int {
    raise(
        Target::Default,
        call,
        MpiError::new(MPI_ERR_ARG, "an output argument is NULL"),
    )
}

/// `MPI_Comm_call_errhandler`: raises `code` on a communicator.
pub fn call_errhandler_on_comm(comm: MPI_Comm, code: c_int) -> MpiResult {
    let action = {
        let rt = runtime::lock();
        let c = rt.comms().get(comm)?;
        rt.errhandlers().action(c.errhandler)?
    };
    invoke(action, &mut { comm }, &mut { code });
    Ok(())
}

/// `MPI_Win_call_errhandler`: raises `code` on a window.
pub fn call_errhandler_on_win(win: MPI_Win, code: c_int) -> MpiResult {
    let action = {
        let rt = runtime::lock();
        let w = rt.window(win)?;
        rt.errhandlers().action(window_handler(&rt, w))?
    };
    invoke(action, &mut { win }, &mut { code });
    Ok(())
}

/// `MPI_Session_call_errhandler`: raises `code` on a session.
pub fn call_errhandler_on_session(session: MPI_Session, code: c_int) -> MpiResult {
    let action = {
        let rt = runtime::lock();
        let s = crate::abi::session::lookup(&rt, session)?;
        rt.errhandlers().action(s.errhandler)?
    };
    invoke(action, &mut { session }, &mut { code });
    Ok(())
}

/// `MPI_File_call_errhandler`: raises `code` on a file (or on
/// `MPI_FILE_NULL`, whose handler files opened later start with).
pub fn call_errhandler_on_file(file: MPI_File, code: c_int) -> MpiResult {
    let h = crate::abi::io::handle(file);
    let action = {
        let rt = runtime::lock();
        let errhandler = if h == 0 {
            rt.default_file_errhandler()
        } else {
            crate::core::io::get(&rt, h)?.errhandler
        };
        rt.errhandlers().action(errhandler)?
    };
    invoke(action, &mut { h }, &mut { code });
    Ok(())
}
