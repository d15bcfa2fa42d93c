//! Failed processes: operations that wait on a process the launcher
//! reported failed complete with `MPIX_ERR_PROC_FAILED` instead of waiting
//! forever (see `core::failures` for where the reports come from).
//!
//! [`Engine::fail_stranded`] sweeps what waits: posted receives whose
//! source is a failed process (and `MPI_ANY_SOURCE` receives on a
//! communicator that includes one), matched receives still waiting for a
//! failed sender's data, sends to a failed process that have not completed,
//! and the receive lane. Frames queued for a failed process are dropped.
//!
//! On a collective context whose group includes a failed process every
//! receive and unfinished send fails, whoever the peer: a collective
//! algorithm that gave up at one member (it waited on the failed process)
//! never sends what the others wait for next, so they must give up too
//! rather than hang; this way every surviving member's collective fails.
//! The runtime sweeps whenever a report comes and again before every sleep
//! of a blocking call while any process is known failed, so an operation
//! started after the report fails too. Messages a failed process sent
//! before it failed are still received: only what waits is failed.
//!
//! The engine knows messages by context id and rank; which process a rank
//! of a context is, the caller says through [`ContextGroups`].
use std::os::raw::c_int;

use super::Engine;
use crate::core::error::MpiError;
use crate::core::matching::{Pattern, ANY};
use crate::core::p2p::request::{Operation, RecvOp};
use crate::mpi_abi::constants::MPIX_ERR_PROC_FAILED;
use crate::mpi_abi::types::MPI_Request;
use crate::transport::ProcessId;

/// The processes behind the ranks of each context id in use.
pub trait ContextGroups {
    /// The group whose ranks messages on `context_id` name (`None` for a
    /// context this process does not know).
    fn group(&self, context_id: u64) -> Option<Group<'_>>;
}

/// A context's group.
#[derive(Clone, Copy)]
pub struct Group<'a> {
    pub members: &'a [ProcessId],
    /// The context carries collectives (see the module's doc).
    pub collective: bool,
}

impl Group<'_> {
    /// The first failed member, if any.
    fn failed_member(&self, failed: &[ProcessId]) -> Option<ProcessId> {
        failed.iter().copied().find(|p| self.members.contains(p))
    }
}

/// The error of an operation that waited on `process`.
pub fn proc_failed(process: ProcessId) -> MpiError {
    MpiError::new(
        MPIX_ERR_PROC_FAILED,
        format!("process {process} of the job (its rank in MPI_COMM_WORLD) has failed"),
    )
}

/// The failed process a receive of `pattern` waits on, if any.
fn stranded_by(
    failed: &[ProcessId],
    pattern: &Pattern,
    groups: &dyn ContextGroups,
) -> Option<ProcessId> {
    let group = groups.group(pattern.context_id)?;
    if pattern.source == ANY || group.collective {
        return group.failed_member(failed);
    }
    let process = *group.members.get(usize::try_from(pattern.source).ok()?)?;
    failed.contains(&process).then_some(process)
}

impl Engine {
    /// Records that `process` failed; true if it was not known yet.
    pub fn process_failed(&mut self, process: ProcessId) -> bool {
        if self.failed.contains(&process) {
            return false;
        }
        self.failed.push(process);
        true
    }

    /// Whether `process` is known failed.
    pub fn is_failed(&self, process: ProcessId) -> bool {
        self.failed.contains(&process)
    }

    /// The failed process a receive of `pattern` would wait on, if any.
    pub fn failed_source(
        &self,
        pattern: &Pattern,
        groups: &dyn ContextGroups,
    ) -> Option<ProcessId> {
        stranded_by(&self.failed, pattern, groups)
    }

    /// Whether any process is known failed.
    pub fn has_failures(&self) -> bool {
        !self.failed.is_empty()
    }

    /// Fails every operation that waits on a failed process (see the
    /// module's doc); returns how many.
    pub fn fail_stranded(&mut self, groups: &dyn ContextGroups) -> usize {
        if self.failed.is_empty() {
            return 0;
        }
        let mut stranded: Vec<(MPI_Request, ProcessId)> = Vec::new();
        let failed = &self.failed;
        let posted = self
            .matcher
            .withdraw_posted(|pattern| stranded_by(failed, pattern, groups));
        stranded.extend(posted);
        for (id, request) in self.requests.iter() {
            if request.complete {
                continue;
            }
            let (peer, context_id) = match &request.op {
                Operation::Recv(RecvOp {
                    matched: Some(m),
                    pattern,
                    ..
                }) => (m.from, pattern.context_id),
                Operation::Send(send) => (send.dest, send.context_id),
                _ => continue,
            };
            let failed = if self.failed.contains(&peer) {
                Some(peer)
            } else {
                groups
                    .group(context_id)
                    .filter(|g| g.collective)
                    .and_then(|g| g.failed_member(&self.failed))
            };
            if let Some(process) = failed {
                if !stranded.iter().any(|&(s, _)| s == id) {
                    stranded.push((id, process));
                }
            }
        }
        for &process in &self.failed {
            if let Some(queue) = self.outbox.queue_mut(process) {
                queue.clear();
            }
        }
        let lane_failed = self.lane.as_ref().and_then(|lane| {
            lane.is_waiting()
                .then(|| stranded_by(&self.failed, lane.pattern(), groups))
                .flatten()
        });
        if let (Some(process), Some(lane)) = (lane_failed, self.lane.as_mut()) {
            lane.fail(proc_failed(process));
        }
        for &(id, process) in &stranded {
            self.fail_request_with(id, proc_failed(process));
        }
        let n = stranded.len() + usize::from(lane_failed.is_some());
        if n > 0 {
            log::debug!("{n} operations failed: they waited on failed processes");
        }
        n
    }

    /// Completes request `id` with `error`.
    pub(super) fn fail_request_with(&mut self, id: c_int, error: MpiError) {
        if let Some(r) = self.requests.get_mut(id) {
            r.queued_frame = false;
            r.fail(error);
            self.settle(id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::*;
    use crate::core::matching::Pattern;
    use crate::core::p2p::receive_lane::{LaneOutcome, LaneStart};
    use crate::mpi_abi::constants::MPI_SUCCESS;

    /// Context `CONTEXT` has ranks 0 (this process) and 1 (`UNREACHABLE`),
    /// for point-to-point; `CONTEXT + 1` the same for collectives.
    struct Two;
    impl ContextGroups for Two {
        fn group(&self, context_id: u64) -> Option<Group<'_>> {
            let members = &[ME, UNREACHABLE][..];
            match context_id {
                CONTEXT => Some(Group {
                    members,
                    collective: false,
                }),
                c if c == CONTEXT + 1 => Some(Group {
                    members,
                    collective: true,
                }),
                _ => None,
            }
        }
    }

    fn from(source: i32) -> Pattern {
        Pattern {
            context_id: CONTEXT,
            source,
            tag: ANY,
        }
    }

    fn error_class(engine: &Engine, id: MPI_Request) -> Option<c_int> {
        let r = engine.requests.get(id).expect("request");
        assert!(r.complete, "request {id:#x} still waits");
        r.error.as_ref().map(|e| e.class)
    }

    #[test]
    fn receives_and_sends_that_wait_on_a_failed_process_fail() {
        let (mut engine, mut ep) = engine();
        let mut a = [0u8; 4];
        let mut b = [0u8; 4];
        let mut c = [0u8; 4];
        let from_peer = engine.irecv(&mut ep, recv_buf(&mut a), from(1));
        let from_any = engine.irecv(&mut ep, recv_buf(&mut b), from(ANY));
        let from_me = engine.irecv(&mut ep, recv_buf(&mut c), from(0));
        // Its frame waits in the outbox: the peer is never reachable.
        let to_peer = engine.isend(&mut ep, send_args(b"data", UNREACHABLE, 5));
        assert_eq!(engine.fail_stranded(&Two), 0, "nothing failed yet");
        assert!(engine.process_failed(UNREACHABLE));
        assert!(!engine.process_failed(UNREACHABLE), "known already");
        assert_eq!(engine.fail_stranded(&Two), 3);
        assert_eq!(error_class(&engine, from_peer), Some(MPIX_ERR_PROC_FAILED));
        assert_eq!(error_class(&engine, from_any), Some(MPIX_ERR_PROC_FAILED));
        assert_eq!(error_class(&engine, to_peer), Some(MPIX_ERR_PROC_FAILED));
        assert!(
            !engine.has_outgoing(),
            "frames for a failed process are dropped"
        );
        // A receive from a live process still waits, and still works.
        assert!(!engine.requests.get(from_me).expect("request").complete);
        engine.isend(&mut ep, send_args(b"mine", ME, 1));
        settle_down(&mut engine, &mut ep);
        assert_eq!(error_class(&engine, from_me), None);
        assert_eq!(&c, b"mine");
        // Nothing is left to fail.
        assert_eq!(engine.fail_stranded(&Two), 0);
    }

    #[test]
    fn a_receive_posted_after_the_failure_fails_at_the_next_sweep() {
        let (mut engine, mut ep) = engine();
        engine.process_failed(UNREACHABLE);
        let mut a = [0u8; 4];
        let id = engine.irecv(&mut ep, recv_buf(&mut a), from(1));
        assert_eq!(engine.fail_stranded(&Two), 1);
        assert_eq!(error_class(&engine, id), Some(MPIX_ERR_PROC_FAILED));
        // A context the caller does not know is left alone.
        let mut b = [0u8; 4];
        let other = engine.irecv(
            &mut ep,
            recv_buf(&mut b),
            Pattern {
                context_id: CONTEXT + 8,
                source: 1,
                tag: ANY,
            },
        );
        assert_eq!(engine.fail_stranded(&Two), 0);
        assert!(!engine.requests.get(other).expect("request").complete);
    }

    #[test]
    fn on_a_collective_context_with_a_failed_member_everything_fails() {
        let (mut engine, mut ep) = engine();
        let mut a = [0u8; 4];
        let collective = Pattern {
            context_id: CONTEXT + 1,
            source: 0,
            tag: 3,
        };
        // A receive from this (live) process, and a send to it that waits
        // for its receiver (synchronous).
        let recv = engine.irecv(&mut ep, recv_buf(&mut a), collective);
        let mut args = send_args(b"sync", ME, 4);
        args.context_id = CONTEXT + 1;
        args.synchronous = true;
        let send = engine.isend(&mut ep, args);
        settle_down(&mut engine, &mut ep);
        assert!(!engine.requests.get(send).expect("request").complete);
        engine.process_failed(UNREACHABLE);
        assert_eq!(engine.fail_stranded(&Two), 2);
        assert_eq!(error_class(&engine, recv), Some(MPIX_ERR_PROC_FAILED));
        assert_eq!(error_class(&engine, send), Some(MPIX_ERR_PROC_FAILED));
    }

    #[test]
    fn a_waiting_lane_fails_and_a_received_one_does_not() {
        let (mut engine, mut ep) = engine();
        let mut a = [0u8; 4];
        assert!(matches!(
            engine.arm_lane(&mut ep, recv_buf(&mut a), from(1)),
            LaneStart::Armed
        ));
        engine.process_failed(UNREACHABLE);
        assert_eq!(engine.fail_stranded(&Two), 1);
        match engine.lane_outcome() {
            Some(LaneOutcome::Failed(e)) => assert_eq!(e.class, MPIX_ERR_PROC_FAILED),
            _ => panic!("the lane should have failed"),
        }
        // A lane on this process's own messages is not touched.
        let mut b = [0u8; 4];
        assert!(matches!(
            engine.arm_lane(&mut ep, recv_buf(&mut b), from(0)),
            LaneStart::Armed
        ));
        assert_eq!(engine.fail_stranded(&Two), 0);
        engine.isend(&mut ep, send_args(b"ok!!", ME, 1));
        settle_down(&mut engine, &mut ep);
        match engine.lane_outcome() {
            Some(LaneOutcome::Received(st)) => assert_eq!(st.MPI_ERROR, MPI_SUCCESS),
            _ => panic!("the lane should have received"),
        }
    }
}
