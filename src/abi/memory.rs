//! `MPI_Alloc_mem` and `MPI_Free_mem`: memory for messages and (later)
//! windows, from the C heap with a cache-line alignment (64 bytes, or the
//! MPI 4.1 hint `mpi_minimum_memory_alignment` when it asks for more and is
//! a power of two; other keys and values are ignored, as hints may be).
//! Both transports send from and receive into any memory, so no
//! registration is needed; the alignment keeps the shared-memory copies and
//! vector loops on whole cache lines.
//!
//! Every block handed out is remembered, so `MPI_Free_mem` of a pointer
//! that did not come from `MPI_Alloc_mem` (or was freed already) is
//! `MPI_ERR_BASE` instead of a corrupted heap. `MPI_Free_mem(NULL)` does
//! nothing.
use std::collections::HashSet;
use std::os::raw::c_void;
use std::sync::{LazyLock, Mutex};

use crate::abi::args::out;
use crate::core::error::{MpiError, MpiResult};
use crate::core::runtime;
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::*;

/// The alignment of every block unless a hint asks for more.
const DEFAULT_ALIGNMENT: usize = 64;
/// The largest alignment a hint may ask for (a huge page).
const MAX_ALIGNMENT: usize = 2 << 20;

/// The addresses of the blocks handed out and not freed yet.
static BLOCKS: LazyLock<Mutex<HashSet<usize>>> = LazyLock::new(Default::default);

fn blocks() -> std::sync::MutexGuard<'static, HashSet<usize>> {
    BLOCKS.lock().unwrap_or_else(|e| e.into_inner())
}

/// The alignment `info` asks for (see the module documentation).
fn alignment(info: MPI_Info) -> MpiResult<usize> {
    if info == MPI_INFO_NULL {
        return Ok(DEFAULT_ALIGNMENT);
    }
    let rt = runtime::lock();
    let hint = crate::abi::info::lookup(&rt, info)?
        .get("mpi_minimum_memory_alignment")?
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|a| a.is_power_of_two() && *a <= MAX_ALIGNMENT);
    Ok(hint.map_or(DEFAULT_ALIGNMENT, |a| a.max(DEFAULT_ALIGNMENT)))
}

/// `MPI_Alloc_mem`: `baseptr` is the address of a pointer, which receives
/// the block. A size of 0 gives a valid (unique) pointer too.
pub unsafe fn alloc_mem(size: MPI_Aint, info: MPI_Info, baseptr: *mut c_void) -> MpiResult {
    // SAFETY: MPI defines `baseptr` as the address of a `void *` the call
    // writes: NULL (rejected by `out`) or valid for that write.
    let slot = unsafe { out(baseptr.cast::<*mut c_void>(), "baseptr") }?;
    let size = usize::try_from(size)
        .map_err(|_| MpiError::new(MPI_ERR_SIZE, format!("size {size} is negative")))?;
    let align = alignment(info)?;
    let mut block: *mut c_void = std::ptr::null_mut();
    // SAFETY: posix_memalign writes the block's address to a local; the
    // alignment is a power of two and a multiple of the pointer size.
    let rc = unsafe { libc::posix_memalign(&mut block, align, size.max(1)) };
    if rc != 0 || block.is_null() {
        return Err(MpiError::new(
            MPI_ERR_NO_MEM,
            format!("cannot allocate {size} bytes"),
        ));
    }
    blocks().insert(block as usize);
    *slot = block;
    Ok(())
}

/// `MPI_Free_mem`.
pub unsafe fn free_mem(base: *mut c_void) -> MpiResult {
    if base.is_null() {
        return Ok(());
    }
    if !blocks().remove(&(base as usize)) {
        return Err(MpiError::new(
            MPI_ERR_BASE,
            format!("{base:p} is not memory from MPI_Alloc_mem (or was freed already)"),
        ));
    }
    // SAFETY: `base` came from posix_memalign in `alloc_mem` and was still
    // in BLOCKS, so it is live and freed exactly once here.
    unsafe { libc::free(base) };
    Ok(())
}
