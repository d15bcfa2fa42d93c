//! QMPI: MPICH's interface for chaining tools (profilers, tracers,
//! checkers) in front of the library, several at once, which PMPI cannot
//! do (it has one `MPI_x` symbol for one tool).
//!
//! The tools are named, in order, by `OXMPI_QMPI_TOOL_LIST` (or MPICH's
//! `MPIR_CVAR_QMPI_TOOL_LIST`, or its alias `QMPI_TOOL_LIST`): names
//! separated by `:`, each one tool instance, numbered from 1 (the library
//! itself is tool 0); a name may come more than once. A tool (usually from
//! a constructor, before `main`) calls `QMPI_Register_tool_name` with its
//! name and an init function; that function is called once per instance
//! with the instance's id when the process makes its first MPI call, and
//! registers there the functions the tool intercepts
//! (`QMPI_Register_function`, by the numbers of `enum
//! QMPI_Functions_enum`, MPICH's order: src/abi/qmpi_functions.txt) and
//! its storage. From then on `MPI_x` calls the first instance that
//! registered `x`, with a context and its id; the tool calls on down the
//! chain through `QMPI_Get_function` (the next instance that registered
//! `x`, else the library's own `QMPI_x`, with id 0).
//!
//! Decisions:
//! - With no tool list, or none of the list's names registered, MPI calls
//!   go straight to the library (one load and a test per call); as in
//!   MPICH, registering a name is accepted (`MPI_SUCCESS`) when no list is
//!   set, and fails (`MPI_ERR_OTHER`) when the list does not name it.
//! - The tools are set up once per process, at its first MPI call, and
//!   stay for its whole life: a re-initialized MPI (a later session or
//!   world) runs under the same tools. Registrations after that first call
//!   are stored but do not change which tool is called first.
//! - `MPI_Pcontrol` is not interceptable: its variable arguments cannot be
//!   passed on (it has no `QMPI_` form; `QMPI_Get_function` reports
//!   `MPI_ERR_ARG` for it). The `MPI_File_*` functions have no QMPI number
//!   in MPICH either.
//! - `QMPI_Get_calling_address` gives, as MPICH does, a `malloc`ed string:
//!   the address (`0x...`) the program called the MPI function from.
use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_void};
use std::ptr;
use std::sync::atomic::{AtomicPtr, AtomicU8, Ordering};
use std::sync::{Mutex, OnceLock};

use crate::abi::entry_points::{qmpi_own_function, QMPI_FUNCTIONS};
use crate::mpi_abi::constants::{MPI_ERR_ARG, MPI_ERR_OTHER, MPI_SUCCESS};
use crate::mpi_abi::types::QMPI_Context;

/// A function pointer as QMPI stores them (`void (*)(void)`).
pub type ToolFunction = unsafe extern "C" fn();
type InitFunction = unsafe extern "C" fn(c_int);

/// Where the process is: tools not looked at yet, being set up, none,
/// or set up.
const UNSET: u8 = 0;
const STARTING: u8 = 1;
const OFF: u8 = 2;
const ON: u8 = 3;
static STATE: AtomicU8 = AtomicU8::new(UNSET);

/// The tool instances the list names, and what they registered.
struct Tools {
    /// Instance `i` (from 1) is `names[i - 1]`.
    names: Vec<String>,
    /// Init functions by instance (index 0 unused).
    inits: Mutex<Vec<Option<InitFunction>>>,
    /// Storage by instance; entry 0, the library's, stays NULL. A context
    /// points at this array.
    storage: Box<[AtomicPtr<c_void>]>,
    /// Registered functions: entry `tool * QMPI_FUNCTIONS + number`.
    functions: Box<[AtomicPtr<()>]>,
    /// For each number, the first instance that intercepts it (0: none),
    /// fixed at the first MPI call.
    first: OnceLock<Box<[c_int]>>,
}

fn tools() -> &'static Tools {
    static TOOLS: OnceLock<Tools> = OnceLock::new();
    TOOLS.get_or_init(|| {
        let names: Vec<String> = crate::config::get()
            .qmpi_tool_list
            .as_deref()
            .map(|list| {
                list.split(':')
                    .map(str::trim)
                    .filter(|n| !n.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        let instances = names.len() + 1;
        Tools {
            inits: Mutex::new(vec![None; instances]),
            storage: (0..instances)
                .map(|_| AtomicPtr::new(ptr::null_mut()))
                .collect(),
            functions: (0..instances * QMPI_FUNCTIONS)
                .map(|_| AtomicPtr::new(ptr::null_mut()))
                .collect(),
            first: OnceLock::new(),
            names,
        }
    })
}

impl Tools {
    fn is_instance(&self, tool_id: c_int) -> bool {
        tool_id >= 1 && tool_id as usize <= self.names.len()
    }

    fn function(&self, tool_id: c_int, number: usize) -> Option<ToolFunction> {
        let p = self.functions[tool_id as usize * QMPI_FUNCTIONS + number].load(Ordering::Acquire);
        // SAFETY: a non-NULL entry was stored from a `ToolFunction` by
        // `QMPI_Register_function`; function and data pointers have the
        // same size on the platforms oxmpi builds for.
        (!p.is_null()).then(|| unsafe { std::mem::transmute::<*mut (), ToolFunction>(p) })
    }

    /// The first instance after `after` that registered `number`.
    fn next_after(&self, after: c_int, number: usize) -> Option<(ToolFunction, c_int)> {
        let first = after.max(0) + 1;
        (first..=self.names.len() as c_int)
            .find_map(|id| self.function(id, number).map(|f| (f, id)))
    }

    /// Calls every instance's init function, then fixes who is called
    /// first for each number.
    fn start(&self) -> bool {
        let inits: Vec<(c_int, InitFunction)> = {
            let inits = self.inits.lock().unwrap_or_else(|e| e.into_inner());
            inits
                .iter()
                .enumerate()
                .filter_map(|(id, f)| f.map(|f| (id as c_int, f)))
                .collect()
        };
        if inits.is_empty() {
            return false;
        }
        for (id, init) in inits {
            // SAFETY: the tool registered `init` as its init function,
            // which QMPI calls with an instance id.
            unsafe { init(id) };
        }
        let first: Box<[c_int]> = (0..QMPI_FUNCTIONS)
            .map(|n| self.next_after(0, n).map_or(0, |(_, id)| id))
            .collect();
        let _ = self.first.set(first);
        true
    }
}

/// The tool to call for the function of QMPI number `number`, and its
/// id; `None` to run the library's own function. The first call of the
/// process sets the tools up.
#[inline(always)]
pub fn interceptor(number: usize) -> Option<(ToolFunction, c_int)> {
    match STATE.load(Ordering::Acquire) {
        OFF => None,
        ON => first_tool(number),
        _ => start_tools(number),
    }
}

fn first_tool(number: usize) -> Option<(ToolFunction, c_int)> {
    let tools = tools();
    let id = *tools.first.get()?.get(number)?;
    if id == 0 {
        return None;
    }
    tools.function(id, number).map(|f| (f, id))
}

#[cold]
#[inline(never)]
fn start_tools(number: usize) -> Option<(ToolFunction, c_int)> {
    // One thread sets up; MPI calls meanwhile (from the init functions
    // themselves, or from other threads) go to the library.
    if STATE
        .compare_exchange(UNSET, STARTING, Ordering::AcqRel, Ordering::Acquire)
        .is_err()
    {
        return None;
    }
    let on = tools().start();
    STATE.store(if on { ON } else { OFF }, Ordering::Release);
    if on {
        first_tool(number)
    } else {
        None
    }
}

/// The context a tool's function gets: the instances' storage.
pub fn context() -> QMPI_Context {
    QMPI_Context {
        storage_stack: tools().storage.as_ptr() as *mut *mut c_void,
    }
}

/// Runs a registration call, turning a panic into `MPI_ERR_OTHER` (these
/// are called from C, where no unwinding may go).
fn contained(call: &'static str, f: impl FnOnce() -> c_int) -> c_int {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(code) => code,
        Err(_) => {
            log::error!("{call}: internal error");
            MPI_ERR_OTHER
        }
    }
}

/// # Safety
/// `tool_name` must be NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn QMPI_Register_tool_name(
    tool_name: *const c_char,
    init_function_ptr: Option<InitFunction>,
) -> c_int {
    contained("QMPI_Register_tool_name", || {
        if tool_name.is_null() {
            return MPI_ERR_ARG;
        }
        // SAFETY: a non-NULL `tool_name` is NUL-terminated (contract).
        let name = unsafe { CStr::from_ptr(tool_name) }.to_string_lossy();
        let tools = tools();
        if tools.names.is_empty() {
            return MPI_SUCCESS;
        }
        let mut inits = tools.inits.lock().unwrap_or_else(|e| e.into_inner());
        let mut found = false;
        for (i, n) in tools.names.iter().enumerate() {
            if *n == name && inits[i + 1].is_none() {
                inits[i + 1] = init_function_ptr;
                found = true;
            }
        }
        if found {
            MPI_SUCCESS
        } else {
            log::warn!("QMPI: tool {name:?} is not in the tool list");
            MPI_ERR_OTHER
        }
    })
}

#[no_mangle]
pub extern "C" fn QMPI_Register_tool_storage(tool_id: c_int, tool_storage: *mut c_void) -> c_int {
    contained("QMPI_Register_tool_storage", || {
        let tools = tools();
        if !tools.is_instance(tool_id) {
            return MPI_ERR_ARG;
        }
        tools.storage[tool_id as usize].store(tool_storage, Ordering::Release);
        MPI_SUCCESS
    })
}

#[no_mangle]
pub extern "C" fn QMPI_Register_function(
    calling_tool_id: c_int,
    function_enum: c_int,
    function_ptr: Option<ToolFunction>,
) -> c_int {
    contained("QMPI_Register_function", || {
        let tools = tools();
        let Ok(number) = usize::try_from(function_enum) else {
            return MPI_ERR_ARG;
        };
        if !tools.is_instance(calling_tool_id) || number >= QMPI_FUNCTIONS {
            return MPI_ERR_ARG;
        }
        let p = function_ptr.map_or(ptr::null_mut(), |f| f as *mut ());
        tools.functions[calling_tool_id as usize * QMPI_FUNCTIONS + number]
            .store(p, Ordering::Release);
        MPI_SUCCESS
    })
}

/// # Safety
/// `function_ptr` and `next_tool_id` must be valid for writing.
#[no_mangle]
pub unsafe extern "C" fn QMPI_Get_function(
    calling_tool_id: c_int,
    function_enum: c_int,
    function_ptr: *mut Option<ToolFunction>,
    next_tool_id: *mut c_int,
) -> c_int {
    contained("QMPI_Get_function", || {
        let Ok(number) = usize::try_from(function_enum) else {
            return MPI_ERR_ARG;
        };
        if number >= QMPI_FUNCTIONS || function_ptr.is_null() || next_tool_id.is_null() {
            return MPI_ERR_ARG;
        }
        let (f, id) = match tools().next_after(calling_tool_id, number) {
            Some(next) => next,
            None => match qmpi_own_function(number) {
                Some(own) => (own, 0),
                None => return MPI_ERR_ARG,
            },
        };
        // SAFETY: both outputs are valid for writing (contract; checked
        // non-NULL above).
        unsafe {
            *function_ptr = Some(f);
            *next_tool_id = id;
        }
        MPI_SUCCESS
    })
}

/// # Safety
/// `storage` must be valid for writing.
#[no_mangle]
pub unsafe extern "C" fn QMPI_Get_tool_storage(
    context: QMPI_Context,
    tool_id: c_int,
    storage: *mut *mut c_void,
) -> c_int {
    contained("QMPI_Get_tool_storage", || {
        let _ = context;
        let tools = tools();
        if storage.is_null() || !(tool_id == 0 || tools.is_instance(tool_id)) {
            return MPI_ERR_ARG;
        }
        // SAFETY: valid for writing (contract; checked non-NULL above).
        unsafe { *storage = tools.storage[tool_id as usize].load(Ordering::Acquire) };
        MPI_SUCCESS
    })
}

/// # Safety
/// `address` must be valid for writing.
#[no_mangle]
pub unsafe extern "C" fn QMPI_Get_calling_address(
    context: QMPI_Context,
    address: *mut *mut c_void,
) -> c_int {
    contained("QMPI_Get_calling_address", || {
        let _ = context;
        if address.is_null() {
            return MPI_ERR_ARG;
        }
        let Some(text) = calling_address() else {
            return MPI_ERR_OTHER;
        };
        let bytes = format!("{text:#x}");
        // SAFETY: a fresh allocation of the string's length and its NUL,
        // written in full below; the tool frees it with free().
        unsafe {
            let out = libc::malloc(bytes.len() + 1).cast::<u8>();
            if out.is_null() {
                return MPI_ERR_OTHER;
            }
            ptr::copy_nonoverlapping(bytes.as_ptr(), out, bytes.len());
            *out.add(bytes.len()) = 0;
            *address = out.cast();
        }
        MPI_SUCCESS
    })
}

/// The return address in the frame that called an `MPI_` or `PMPI_` entry
/// point: where the program called MPI.
fn calling_address() -> Option<usize> {
    const FRAMES: usize = 32;
    let mut frames = [ptr::null_mut::<c_void>(); FRAMES];
    // SAFETY: `frames` has room for FRAMES entries.
    let n = unsafe { libc::backtrace(frames.as_mut_ptr(), FRAMES as c_int) }.max(0) as usize;
    let frames = &frames[..n];
    let mut entry = None;
    for (i, &pc) in frames.iter().enumerate() {
        // SAFETY: Dl_info is plain data (pointers), valid when zeroed.
        let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
        // SAFETY: `info` is valid for writing; dladdr reads no memory of
        // `pc`'s beyond looking it up.
        if unsafe { libc::dladdr(pc, &mut info) } == 0 || info.dli_sname.is_null() {
            continue;
        }
        // SAFETY: dladdr's symbol name is NUL-terminated and lives as long
        // as the object is loaded.
        let name = unsafe { CStr::from_ptr(info.dli_sname) }.to_bytes();
        if name.starts_with(b"MPI_") || name.starts_with(b"PMPI_") {
            entry = Some(i);
        }
    }
    frames.get(entry? + 1).map(|&pc| pc as usize)
}
