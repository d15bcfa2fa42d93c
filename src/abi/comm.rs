//! Communicator queries through the C ABI: rank, size, names. (Creation and
//! freeing come with the point-to-point and sessions work.)
use std::os::raw::{c_char, c_int};

use crate::abi::args::{in_str, out, write_str};
use crate::abi::constants::*;
use crate::abi::types::*;
use crate::core::error::{MpiError, MpiResult};
use crate::core::runtime;

pub unsafe fn rank(comm: MPI_Comm, rank: *mut c_int) -> MpiResult {
    let rank = unsafe { out(rank, "rank") }?;
    *rank = runtime::lock().comms.get(comm)?.rank as c_int;
    Ok(())
}

pub unsafe fn size(comm: MPI_Comm, size: *mut c_int) -> MpiResult {
    let size = unsafe { out(size, "size") }?;
    *size = runtime::lock().comms.get(comm)?.size() as c_int;
    Ok(())
}

pub unsafe fn set_name(comm: MPI_Comm, name: *const c_char) -> MpiResult {
    let name = unsafe { in_str(name, "comm_name") }?;
    if name.len() >= MPI_MAX_OBJECT_NAME as usize {
        return Err(MpiError::new(
            MPI_ERR_ARG,
            format!("name of {} bytes (at most {})", name.len(), MPI_MAX_OBJECT_NAME - 1),
        ));
    }
    runtime::lock().comms.get_mut(comm)?.name = name;
    Ok(())
}

pub unsafe fn get_name(comm: MPI_Comm, name: *mut c_char, resultlen: *mut c_int) -> MpiResult {
    let resultlen = unsafe { out(resultlen, "resultlen") }?;
    let rt = runtime::lock();
    let n = unsafe { write_str(name, MPI_MAX_OBJECT_NAME as usize, &rt.comms.get(comm)?.name, "comm_name") }?;
    *resultlen = n as c_int;
    Ok(())
}
