//! Process failures, as the launcher reports them.
//!
//! By default a rank that fails ends the whole job (mpiexec, like Hydra,
//! brings every rank down within a second). Under `mpiexec
//! -disable-auto-cleanup` the job goes on: mpiexec sets
//! `OXMPI_FAILURE_NOTICES=1`, each rank asks its PMI server for failure
//! notices at bootstrap, and the server sends `cmd=oxmpi_proc_failed
//! rank=R` to every rank still running when rank R ends badly (killed,
//! non-zero exit, exit without finalize).
//!
//! A rank reads the notices whenever a blocking call is about to sleep
//! (nothing is read on the fast path: a call that gets what it waits for
//! never looks) and then fails the operations that wait on a failed process
//! with `MPIX_ERR_PROC_FAILED` (`p2p::engine::failure`); blocking probes
//! look too. The error goes to the communicator's error handler: the
//! default one ends the job with a message, `MPI_ERRORS_RETURN` returns it.
//!
//! What a program may do afterwards: communicate with the processes that
//! are alive (point-to-point, and collectives on communicators without the
//! failed process), receive what the failed process sent before it failed,
//! and finalize. Collectives on a communicator that includes the failed
//! process fail, at every member that waits on it, with the same error
//! (some members may complete one that the failed process had already
//! served). `MPIX_Comm_failure_ack`/`_get_acked` record and report the
//! failures known (`abi::ulfm`); there is no `MPIX_Comm_revoke`, `shrink`
//! or `agree` (they refuse with `MPI_ERR_UNSUPPORTED_OPERATION`), and
//! creating a communicator that involves a failed process is not reported
//! (it may wait).
use std::collections::HashMap;
use std::sync::Arc;

use super::comm::Comms;
use super::p2p::engine::failure::{ContextGroups, Group};
use crate::transport::ProcessId;

/// The group behind every context id of the live communicators, and
/// whether the context carries collectives.
pub struct CommGroups(HashMap<u64, (Arc<[ProcessId]>, bool)>);

impl CommGroups {
    pub fn of(comms: &Comms) -> CommGroups {
        CommGroups(
            comms
                .all()
                .flat_map(|c| {
                    let p2p = c.context_id;
                    c.context_groups()
                        .into_iter()
                        .map(move |(id, group)| (id, (group, id != p2p)))
                })
                .collect(),
        )
    }
}

impl ContextGroups for CommGroups {
    fn group(&self, context_id: u64) -> Option<Group<'_>> {
        self.0.get(&context_id).map(|(members, collective)| Group {
            members,
            collective: *collective,
        })
    }
}
