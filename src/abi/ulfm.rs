//! The ULFM extensions MPICH exports (`MPIX_Comm_failure_ack`,
//! `MPIX_Comm_failure_get_acked`, `MPIX_Comm_revoke`, `MPIX_Comm_shrink`,
//! `MPIX_Comm_agree`), on the failure notices of `core::failures` (a job
//! run with `mpiexec -disable-auto-cleanup`).
//!
//! Acknowledging failures is implemented: `MPIX_Comm_failure_ack` records
//! the processes of the communicator known to have failed so far, and
//! `MPIX_Comm_failure_get_acked` returns them as a group (of the
//! communicator's group; of the remote group for an intercommunicator).
//!
//! Revoking, shrinking and agreeing are not: they need a fault-tolerant
//! agreement among the survivors that oxmpi does not have yet, and a
//! version that hangs or disagrees when a second process fails midway
//! would be worse than none. They return `MPI_ERR_UNSUPPORTED_OPERATION`,
//! deliberately, with a message that says so.
use std::os::raw::c_int;

use crate::core::error::{MpiError, MpiResult};
use crate::core::group::Group;
use crate::core::runtime;
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::*;

pub unsafe fn failure_ack(comm: MPI_Comm) -> MpiResult {
    let mut rt = runtime::lock();
    // Read the launcher's notices now, so what is acknowledged is what is
    // known at this call.
    rt.progress_before_sleep();
    let peers = rt.comms().get(comm)?.peers().clone();
    let failed: Vec<_> = {
        let engine = rt.engine();
        peers
            .iter()
            .copied()
            .filter(|&p| engine.is_failed(p))
            .collect()
    };
    rt.comms_mut().get_mut(comm)?.acked_failures = failed;
    Ok(())
}

pub unsafe fn failure_get_acked(comm: MPI_Comm, failed: &mut MPI_Group) -> MpiResult {
    let mut rt = runtime::lock();
    let members = rt.comms().get(comm)?.acked_failures.clone();
    *failed = if members.is_empty() {
        MPI_GROUP_EMPTY
    } else {
        rt.groups_mut().insert(Group {
            members: members.into(),
        })
    };
    Ok(())
}

fn unsupported(call: &str) -> MpiError {
    MpiError::new(
        MPI_ERR_UNSUPPORTED_OPERATION,
        format!(
            "{call} is not supported by oxmpi: it needs a fault-tolerant agreement among the \
             survivors, which oxmpi does not have (failure notices, MPIX_Comm_failure_ack and \
             MPIX_Comm_failure_get_acked work)"
        ),
    )
}

pub unsafe fn revoke(comm: MPI_Comm) -> MpiResult {
    runtime::lock().comms().get(comm)?;
    Err(unsupported("MPIX_Comm_revoke"))
}

pub unsafe fn shrink(comm: MPI_Comm, newcomm: &mut MPI_Comm) -> MpiResult {
    runtime::lock().comms().get(comm)?;
    *newcomm = MPI_COMM_NULL;
    Err(unsupported("MPIX_Comm_shrink"))
}

pub unsafe fn agree(comm: MPI_Comm, _flag: &mut c_int) -> MpiResult {
    runtime::lock().comms().get(comm)?;
    Err(unsupported("MPIX_Comm_agree"))
}
