//! The world model's entry points (`MPI_Init`, `MPI_Finalize`, ...) and the
//! environment queries that work in any state.
use std::os::raw::{c_char, c_int};
use std::sync::OnceLock;
use std::time::Instant;

use crate::abi::args::write_str;
use crate::core::abort;
use crate::core::error::{MpiError, MpiResult};
use crate::core::runtime::{self, Runtime, WorldModel};
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::*;

/// `MPI_Init(argc, argv)`.
pub unsafe fn init(_argc: *mut c_int, _argv: *mut *mut *mut c_char) -> MpiResult {
    init_world(MPI_THREAD_SINGLE).map(|_| ())
}

/// `MPI_Init_thread`: every level up to `MPI_THREAD_MULTIPLE` is provided
/// as asked (the runtime is safe for concurrent calls).
pub unsafe fn init_thread(
    _argc: *mut c_int,
    _argv: *mut *mut *mut c_char,
    required: c_int,
    provided: &mut c_int,
) -> MpiResult {
    if !(MPI_THREAD_SINGLE..=MPI_THREAD_MULTIPLE).contains(&required) {
        return Err(MpiError::new(
            MPI_ERR_ARG,
            format!("required thread level {required} is not an MPI_THREAD_* value"),
        ));
    }
    *provided = init_world(required)?;
    Ok(())
}

fn init_world(required: c_int) -> MpiResult<c_int> {
    let provided = Runtime::init_world(runtime::lock(), required)?;
    wtime_origin();
    // A spawned world connects to its parents (see `core::spawn`).
    crate::core::spawn::connect_to_parent()?;
    Ok(provided)
}

/// `MPI_Finalize`.
/// `MPI_Finalize`. First, as if `MPI_COMM_SELF` were freed, its
/// attributes are deleted (the last set first), then `MPI_COMM_WORLD`'s:
/// libraries hook their cleanup on these delete callbacks, which may still
/// use MPI. An error of a callback is returned after finalizing.
pub unsafe fn finalize() -> MpiResult {
    let mut callbacks = Ok(());
    if runtime::lock().world_state() == WorldModel::Initialized {
        for comm in [MPI_COMM_SELF, MPI_COMM_WORLD] {
            if let Err(e) = crate::abi::attributes::delete_all(comm) {
                callbacks = callbacks.and(Err(e));
            }
        }
    }
    Runtime::finalize_world(runtime::lock())?;
    callbacks
}

pub unsafe fn initialized(flag: &mut c_int) -> MpiResult {
    *flag = (runtime::lock().world_state() != WorldModel::NotInitialized) as c_int;
    Ok(())
}

pub unsafe fn finalized(flag: &mut c_int) -> MpiResult {
    *flag = (runtime::lock().world_state() == WorldModel::Finalized) as c_int;
    Ok(())
}

pub unsafe fn query_thread(provided: &mut c_int) -> MpiResult {
    *provided = runtime::lock().world_thread_level();
    Ok(())
}

pub unsafe fn is_thread_main(flag: &mut c_int) -> MpiResult {
    let rt = runtime::lock();
    if rt.world_state() != WorldModel::Initialized {
        return Err(MpiError::new(
            MPI_ERR_OTHER,
            "MPI_Is_thread_main needs the world model initialized",
        ));
    }
    *flag = rt.is_main_thread() as c_int;
    Ok(())
}

/// `MPI_Abort`: ends the whole job with `errorcode` (oxmpi does not abort
/// a subset of processes).
pub unsafe fn abort(comm: MPI_Comm, errorcode: c_int) -> MpiResult {
    let comm_name = match comm {
        MPI_COMM_WORLD => "MPI_COMM_WORLD".to_string(),
        MPI_COMM_SELF => "MPI_COMM_SELF".to_string(),
        c => format!("{:#x}", c as u32),
    };
    abort::abort_job(
        errorcode,
        &format!(
            "oxmpi: {}: MPI_Abort({comm_name}, {errorcode}) called",
            abort::who()
        ),
    )
}

/// `MPI_Get_processor_name`: the host name the launcher gave
/// (`OXMPI_HOSTNAME`, as mpiexec's `-hostname-env OXMPI_HOSTNAME` sets it
/// per host), else the system's.
pub unsafe fn get_processor_name(name: *mut c_char, resultlen: &mut c_int) -> MpiResult {
    let host = crate::config::get()
        .hostname
        .clone()
        .unwrap_or_else(crate::bootstrap::node::hostname);
    // SAFETY: MPI_Get_processor_name's contract: `name` has room for
    // MPI_MAX_PROCESSOR_NAME characters, the capacity given; `write_str`
    // rejects NULL.
    let n = unsafe { write_str(name, MPI_MAX_PROCESSOR_NAME as usize, &host, "name") }?;
    *resultlen = n as c_int;
    Ok(())
}

pub unsafe fn get_version(version: &mut c_int, subversion: &mut c_int) -> MpiResult {
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    Ok(())
}

/// The text of `MPI_Get_library_version`.
pub fn library_version() -> String {
    format!(
        "oxmpi {} (MPI {}.{}, MPICH ABI: libmpi.so.12, compatible with MPICH {})",
        env!("CARGO_PKG_VERSION"),
        MPI_VERSION,
        MPI_SUBVERSION,
        MPICH_VERSION
    )
}

pub unsafe fn get_library_version(version: *mut c_char, resultlen: &mut c_int) -> MpiResult {
    // SAFETY: MPI_Get_library_version's contract: `version` has room for
    // MPI_MAX_LIBRARY_VERSION_STRING characters, the capacity given;
    // `write_str` rejects NULL.
    let n = unsafe {
        write_str(
            version,
            MPI_MAX_LIBRARY_VERSION_STRING as usize,
            &library_version(),
            "version",
        )
    }?;
    *resultlen = n as c_int;
    Ok(())
}

fn wtime_origin() -> Instant {
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    *ORIGIN.get_or_init(Instant::now)
}

/// `MPI_Wtime`: seconds on a monotonic clock (not synchronized across
/// processes: `MPI_WTIME_IS_GLOBAL` is false).
pub unsafe fn wtime() -> f64 {
    wtime_origin().elapsed().as_secs_f64()
}

pub unsafe fn wtick() -> f64 {
    1e-9
}
