//! The PMI-1 server's protocol logic: given a rank and the message it sent,
//! decide what to answer (and to whom), with no sockets involved, so that
//! every command is unit-tested on its own.
//!
//! Invariants: every request but `abort` and `barrier_in` gets exactly one
//! answer (a `barrier_in` gets its `barrier_out` when the last of the job's
//! ranks has entered, and then every rank gets one); unknown commands are
//! answered with `rc=-1` and the server keeps going; a request that would
//! break the protocol's state (a rank entering the same barrier twice) is
//! reported, never silently dropped.

use oxmpi::bootstrap::pmi::client::{FAILURE_NOTICE, FAILURE_SUBSCRIBE};
use oxmpi::bootstrap::pmi::wire::PmiMessage;

use crate::kvs::Kvs;
use crate::name_service::NameService;

/// Limits announced in `cmd=maxes` (Hydra 4.0.2's values).
const KVSNAME_MAX: usize = 256;
const KEYLEN_MAX: usize = 64;
const VALLEN_MAX: usize = 1024;

/// What the connection layer must do after a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Send this message to this rank.
    Reply(usize, PmiMessage),
    /// Close this rank's connection once its pending answers are sent.
    Close(usize),
    /// The rank asked to abort the job with this exit code.
    Abort {
        /// The rank that called abort.
        rank: usize,
        /// The exit code it asked for.
        code: i32,
    },
    /// The rank broke the protocol; the text says how.
    ProtocolError {
        /// The offending rank.
        rank: usize,
        /// What it did.
        problem: String,
    },
}

/// The server state of one job: its KVS, published names and barrier.
#[derive(Debug)]
pub struct PmiServer {
    size: usize,
    kvs: Kvs,
    names: NameService,
    in_barrier: Vec<bool>,
    /// Ranks that sent `init` (they use PMI, so they must `finalize`).
    initialized: Vec<bool>,
    finalized: Vec<bool>,
    /// Ranks that asked for failure notices (oxmpi's extension, see
    /// [`PmiServer::rank_failed`]).
    notified: Vec<bool>,
}

impl PmiServer {
    /// A server for `size` ranks using `kvs` as the job's key-value space.
    pub fn new(size: usize, kvs: Kvs) -> PmiServer {
        PmiServer {
            size,
            kvs,
            names: NameService::default(),
            in_barrier: vec![false; size],
            initialized: vec![false; size],
            finalized: vec![false; size],
            notified: vec![false; size],
        }
    }

    /// Ranks currently waiting in a barrier.
    pub fn barrier_waiters(&self) -> usize {
        self.in_barrier.iter().filter(|&&b| b).count()
    }

    /// Whether `rank` has entered the current barrier.
    pub fn is_in_barrier(&self, rank: usize) -> bool {
        self.in_barrier.get(rank).copied().unwrap_or(false)
    }

    /// Whether `rank` has sent `finalize`.
    pub fn has_finalized(&self, rank: usize) -> bool {
        self.finalized.get(rank).copied().unwrap_or(false)
    }

    /// Whether `rank` has sent `init` but not `finalize`: it uses PMI and
    /// has not said goodbye (an MPI program that ends now has not finalized).
    pub fn is_unfinished(&self, rank: usize) -> bool {
        self.initialized.get(rank).copied().unwrap_or(false) && !self.has_finalized(rank)
    }

    /// Handles one request from `rank`.
    pub fn handle(&mut self, rank: usize, request: &PmiMessage) -> Vec<Action> {
        let reply = |msg: PmiMessage| vec![Action::Reply(rank, msg)];
        match request.cmd.as_str() {
            "init" => {
                if let Some(i) = self.initialized.get_mut(rank) {
                    *i = true;
                }
                reply(self.init(request))
            }
            "initack" => self.initack(rank, request),
            "get_maxes" => reply(
                PmiMessage::new("maxes")
                    .with("kvsname_max", KVSNAME_MAX)
                    .with("keylen_max", KEYLEN_MAX)
                    .with("vallen_max", VALLEN_MAX),
            ),
            "get_appnum" => reply(PmiMessage::new("appnum").with("appnum", 0)),
            "get_my_kvsname" => {
                reply(PmiMessage::new("my_kvsname").with("kvsname", self.kvs.name()))
            }
            "get_universe_size" => reply(PmiMessage::new("universe_size").with("size", self.size)),
            "put" => reply(self.put(request)),
            "get" => reply(self.get(request)),
            "barrier_in" => self.barrier_in(rank),
            "finalize" => {
                if let Some(f) = self.finalized.get_mut(rank) {
                    *f = true;
                }
                vec![
                    Action::Reply(rank, PmiMessage::new("finalize_ack")),
                    Action::Close(rank),
                ]
            }
            "abort" => {
                let code = request
                    .get("exitcode")
                    .and_then(|c| c.trim().parse::<i32>().ok())
                    .unwrap_or(1);
                vec![Action::Abort { rank, code }]
            }
            FAILURE_SUBSCRIBE => {
                if let Some(n) = self.notified.get_mut(rank) {
                    *n = true;
                }
                reply(PmiMessage::new(format!("{FAILURE_SUBSCRIBE}_result")).with("rc", 0))
            }
            "publish_name" => reply(self.publish(request)),
            "unpublish_name" => reply(self.unpublish(request)),
            "lookup_name" => reply(self.lookup(request)),
            "spawn" => reply(
                PmiMessage::new("spawn_result")
                    .with("rc", -1)
                    .with("msg", "spawn_is_not_supported_by_oxmpi_mpiexec"),
            ),
            other => {
                log::warn!("rank {rank} sent unknown PMI command {other:?}");
                reply(
                    PmiMessage::new(format!("{other}_result"))
                        .with("rc", -1)
                        .with("msg", "unknown_command"),
                )
            }
        }
    }

    /// `rank` failed (the job goes on, `-disable-auto-cleanup`): every
    /// other rank that asked for failure notices and has not finalized is
    /// told, with a line it reads whenever it comes (oxmpi's extension of
    /// PMI-1: `cmd=oxmpi_proc_failed rank=R`). Ranks that did not ask (an
    /// MPICH program) are told nothing: an unasked line would break their
    /// protocol.
    pub fn rank_failed(&mut self, rank: usize) -> Vec<Action> {
        (0..self.size)
            .filter(|&r| r != rank && self.notified[r] && !self.finalized[r])
            .map(|r| Action::Reply(r, PmiMessage::new(FAILURE_NOTICE).with("rank", rank)))
            .collect()
    }

    /// Accepts PMI 1.1 and 1.2 and answers with the version sent.
    fn init(&self, request: &PmiMessage) -> PmiMessage {
        let version = request.get("pmi_version");
        let subversion = request.get("pmi_subversion");
        let answer = |v: &str, s: &str, rc: i32| {
            PmiMessage::new("response_to_init")
                .with("pmi_version", v)
                .with("pmi_subversion", s)
                .with("rc", rc)
        };
        match (version, subversion) {
            (Some("1"), Some(s @ ("1" | "2"))) => answer("1", s, 0),
            _ => {
                log::warn!("refusing PMI version {version:?}.{subversion:?}");
                answer("1", "1", -1)
            }
        }
    }

    /// The `PMI_PORT`-style handshake, answered on the socket the rank
    /// already owns: the rank is the one of the connection.
    fn initack(&self, rank: usize, request: &PmiMessage) -> Vec<Action> {
        if let Some(id) = request.get("pmiid") {
            if id.parse::<usize>().ok() != Some(rank) {
                log::warn!("rank {rank} sent initack with pmiid={id}; using rank {rank}");
            }
        }
        [
            PmiMessage::new("initack"),
            PmiMessage::new("set").with("size", self.size),
            PmiMessage::new("set").with("rank", rank),
            PmiMessage::new("set").with("debug", 0),
        ]
        .into_iter()
        .map(|m| Action::Reply(rank, m))
        .collect()
    }

    /// Checks `kvsname=` of a put or get; `Err` is the answer to send.
    fn check_kvsname(&self, request: &PmiMessage, answer: &str) -> Result<(), PmiMessage> {
        match request.get("kvsname") {
            Some(name) if name != self.kvs.name() => Err(PmiMessage::new(answer)
                .with("rc", -1)
                .with("msg", format!("unknown_kvsname_{name}"))),
            _ => Ok(()),
        }
    }

    fn put(&mut self, request: &PmiMessage) -> PmiMessage {
        if let Err(answer) = self.check_kvsname(request, "put_result") {
            return answer;
        }
        match (request.get("key"), request.get("value")) {
            (Some(key), Some(value)) if !key.is_empty() => {
                self.kvs.put(key, value);
                PmiMessage::new("put_result")
                    .with("rc", 0)
                    .with("msg", "success")
            }
            (key, _) => PmiMessage::new("put_result").with("rc", -1).with(
                "msg",
                if key.is_none_or(str::is_empty) {
                    "missing_key"
                } else {
                    "missing_value"
                },
            ),
        }
    }

    fn get(&self, request: &PmiMessage) -> PmiMessage {
        if let Err(answer) = self.check_kvsname(request, "get_result") {
            return answer.with("value", "unknown");
        }
        let key = request.get("key").unwrap_or("");
        match self.kvs.get(key) {
            Some(value) => PmiMessage::new("get_result")
                .with("rc", 0)
                .with("msg", "success")
                .with("value", value),
            None => PmiMessage::new("get_result")
                .with("rc", -1)
                .with("msg", format!("key_{key}_not_found"))
                .with("value", "unknown"),
        }
    }

    fn barrier_in(&mut self, rank: usize) -> Vec<Action> {
        match self.in_barrier.get_mut(rank) {
            None => {
                return vec![Action::ProtocolError {
                    rank,
                    problem: format!("barrier_in from unknown rank {rank}"),
                }]
            }
            Some(true) => {
                return vec![Action::ProtocolError {
                    rank,
                    problem: "sent barrier_in twice in one barrier".to_string(),
                }]
            }
            Some(entered) => *entered = true,
        }
        if self.barrier_waiters() < self.size {
            return Vec::new();
        }
        self.in_barrier.iter_mut().for_each(|b| *b = false);
        (0..self.size)
            .map(|r| Action::Reply(r, PmiMessage::new("barrier_out")))
            .collect()
    }

    fn publish(&mut self, request: &PmiMessage) -> PmiMessage {
        let answer = PmiMessage::new("publish_result");
        let (Some(service), Some(port)) = (request.get("service"), request.get("port")) else {
            return answer.with("rc", 1).with("msg", "missing_service_or_port");
        };
        if self.names.publish(service, port) {
            answer.with("rc", 0).with("msg", "success")
        } else {
            answer
                .with("rc", 1)
                .with("msg", format!("service_{service}_already_published"))
        }
    }

    fn unpublish(&mut self, request: &PmiMessage) -> PmiMessage {
        let answer = PmiMessage::new("unpublish_result");
        let service = request.get("service").unwrap_or("");
        if self.names.unpublish(service) {
            answer.with("rc", 0).with("msg", "success")
        } else {
            answer
                .with("rc", 1)
                .with("msg", format!("service_{service}_not_found"))
        }
    }

    fn lookup(&self, request: &PmiMessage) -> PmiMessage {
        let answer = PmiMessage::new("lookup_result");
        let service = request.get("service").unwrap_or("");
        match self.names.lookup(service) {
            Some(port) => answer
                .with("rc", 0)
                .with("msg", "success")
                .with("port", port),
            None => answer
                .with("rc", 1)
                .with("msg", format!("service_{service}_not_found")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(size: usize) -> PmiServer {
        PmiServer::new(size, Kvs::for_single_node_job("kvs_test", size))
    }

    fn ask(server: &mut PmiServer, rank: usize, line: &str) -> Vec<Action> {
        server.handle(rank, &PmiMessage::parse(line).unwrap())
    }

    /// The single answer to `line`, as a wire line without newline.
    fn answer(server: &mut PmiServer, rank: usize, line: &str) -> String {
        match ask(server, rank, line).as_slice() {
            [Action::Reply(to, msg)] => {
                assert_eq!(*to, rank);
                msg.to_string()
            }
            other => panic!("{line}: {other:?}"),
        }
    }

    #[test]
    fn failure_notices_go_to_the_ranks_that_asked_and_are_still_there() {
        let mut s = server(4);
        assert_eq!(
            answer(&mut s, 0, "cmd=oxmpi_failure_notices"),
            "cmd=oxmpi_failure_notices_result rc=0"
        );
        answer(&mut s, 1, "cmd=oxmpi_failure_notices");
        answer(&mut s, 3, "cmd=oxmpi_failure_notices");
        // Rank 1 finalized: it is gone from PMI.
        ask(&mut s, 1, "cmd=finalize");
        // Rank 2 never asked (an MPICH program, say); rank 3 is the one
        // that failed.
        let told: Vec<(usize, String)> = s
            .rank_failed(3)
            .into_iter()
            .map(|a| match a {
                Action::Reply(to, msg) => (to, msg.to_string()),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(told, vec![(0, "cmd=oxmpi_proc_failed rank=3".to_string())]);
    }

    #[test]
    fn init_accepts_1_1_and_1_2() {
        let mut s = server(2);
        assert_eq!(
            answer(&mut s, 0, "cmd=init pmi_version=1 pmi_subversion=1"),
            "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0"
        );
        assert_eq!(
            answer(&mut s, 1, "cmd=init pmi_version=1 pmi_subversion=2"),
            "cmd=response_to_init pmi_version=1 pmi_subversion=2 rc=0"
        );
        assert_eq!(
            answer(&mut s, 1, "cmd=init pmi_version=2 pmi_subversion=0"),
            "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=-1"
        );
    }

    #[test]
    fn job_queries() {
        let mut s = server(3);
        assert_eq!(
            answer(&mut s, 0, "cmd=get_maxes"),
            "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024"
        );
        assert_eq!(answer(&mut s, 0, "cmd=get_appnum"), "cmd=appnum appnum=0");
        assert_eq!(
            answer(&mut s, 2, "cmd=get_my_kvsname"),
            "cmd=my_kvsname kvsname=kvs_test"
        );
        assert_eq!(
            answer(&mut s, 1, "cmd=get_universe_size"),
            "cmd=universe_size size=3"
        );
        assert_eq!(
            answer(
                &mut s,
                1,
                "cmd=get kvsname=kvs_test key=PMI_process_mapping"
            ),
            "cmd=get_result rc=0 msg=success value=(vector,(0,1,3))"
        );
    }

    #[test]
    fn put_is_visible_at_once() {
        let mut s = server(2);
        assert_eq!(
            answer(&mut s, 1, "cmd=get kvsname=kvs_test key=card-0"),
            "cmd=get_result rc=-1 msg=key_card-0_not_found value=unknown"
        );
        assert_eq!(
            answer(&mut s, 0, "cmd=put kvsname=kvs_test key=card-0 value=a=b"),
            "cmd=put_result rc=0 msg=success"
        );
        assert_eq!(
            answer(&mut s, 1, "cmd=get kvsname=kvs_test key=card-0"),
            "cmd=get_result rc=0 msg=success value=a=b"
        );
    }

    #[test]
    fn bad_puts_and_gets() {
        let mut s = server(1);
        assert_eq!(
            answer(&mut s, 0, "cmd=put kvsname=other key=a value=b"),
            "cmd=put_result rc=-1 msg=unknown_kvsname_other"
        );
        assert_eq!(
            answer(&mut s, 0, "cmd=put kvsname=kvs_test value=b"),
            "cmd=put_result rc=-1 msg=missing_key"
        );
        assert_eq!(
            answer(&mut s, 0, "cmd=put kvsname=kvs_test key=a"),
            "cmd=put_result rc=-1 msg=missing_value"
        );
        assert_eq!(
            answer(&mut s, 0, "cmd=get kvsname=other key=a"),
            "cmd=get_result rc=-1 msg=unknown_kvsname_other value=unknown"
        );
        // kvsname may be left out.
        assert_eq!(
            answer(&mut s, 0, "cmd=put key=a value=1"),
            "cmd=put_result rc=0 msg=success"
        );
    }

    #[test]
    fn barrier_releases_everyone_when_the_last_rank_enters() {
        let mut s = server(3);
        assert!(ask(&mut s, 2, "cmd=barrier_in").is_empty());
        assert!(ask(&mut s, 0, "cmd=barrier_in").is_empty());
        assert_eq!(s.barrier_waiters(), 2);
        assert!(s.is_in_barrier(0) && !s.is_in_barrier(1));
        let out = ask(&mut s, 1, "cmd=barrier_in");
        let expected: Vec<_> = (0..3)
            .map(|r| Action::Reply(r, PmiMessage::new("barrier_out")))
            .collect();
        assert_eq!(out, expected);
        assert_eq!(s.barrier_waiters(), 0);
        // The next barrier starts afresh.
        assert!(ask(&mut s, 1, "cmd=barrier_in").is_empty());
        assert!(matches!(
            ask(&mut s, 1, "cmd=barrier_in").as_slice(),
            [Action::ProtocolError { rank: 1, .. }]
        ));
    }

    #[test]
    fn single_rank_barrier() {
        let mut s = server(1);
        assert_eq!(
            ask(&mut s, 0, "cmd=barrier_in"),
            vec![Action::Reply(0, PmiMessage::new("barrier_out"))]
        );
    }

    #[test]
    fn a_rank_is_unfinished_from_init_to_finalize() {
        let mut s = server(2);
        assert!(!s.is_unfinished(0), "a process that never spoke PMI");
        ask(&mut s, 0, "cmd=init pmi_version=1 pmi_subversion=1");
        assert!(s.is_unfinished(0));
        assert!(!s.is_unfinished(1));
        ask(&mut s, 0, "cmd=finalize");
        assert!(!s.is_unfinished(0));
    }

    #[test]
    fn finalize_acks_then_closes() {
        let mut s = server(2);
        assert!(!s.has_finalized(1));
        assert_eq!(
            ask(&mut s, 1, "cmd=finalize"),
            vec![
                Action::Reply(1, PmiMessage::new("finalize_ack")),
                Action::Close(1)
            ]
        );
        assert!(s.has_finalized(1));
    }

    #[test]
    fn abort_carries_the_exit_code() {
        let mut s = server(2);
        assert_eq!(
            ask(&mut s, 1, "cmd=abort exitcode=7"),
            vec![Action::Abort { rank: 1, code: 7 }]
        );
        assert_eq!(
            ask(&mut s, 0, "cmd=abort"),
            vec![Action::Abort { rank: 0, code: 1 }]
        );
    }

    #[test]
    fn name_publishing() {
        let mut s = server(2);
        assert_eq!(
            answer(&mut s, 0, "cmd=lookup_name service=svc"),
            "cmd=lookup_result rc=1 msg=service_svc_not_found"
        );
        assert_eq!(
            answer(&mut s, 0, "cmd=publish_name service=svc port=tcp://x:1"),
            "cmd=publish_result rc=0 msg=success"
        );
        assert_eq!(
            answer(&mut s, 1, "cmd=publish_name service=svc port=other"),
            "cmd=publish_result rc=1 msg=service_svc_already_published"
        );
        assert_eq!(
            answer(&mut s, 1, "cmd=lookup_name service=svc"),
            "cmd=lookup_result rc=0 msg=success port=tcp://x:1"
        );
        assert_eq!(
            answer(&mut s, 1, "cmd=unpublish_name service=svc"),
            "cmd=unpublish_result rc=0 msg=success"
        );
        assert_eq!(
            answer(&mut s, 1, "cmd=unpublish_name service=svc"),
            "cmd=unpublish_result rc=1 msg=service_svc_not_found"
        );
    }

    #[test]
    fn initack_handshake() {
        let mut s = server(4);
        let lines: Vec<String> = ask(&mut s, 2, "cmd=initack pmiid=2")
            .into_iter()
            .map(|a| match a {
                Action::Reply(2, m) => m.to_string(),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            lines,
            [
                "cmd=initack",
                "cmd=set size=4",
                "cmd=set rank=2",
                "cmd=set debug=0"
            ]
        );
    }

    #[test]
    fn unknown_commands_get_an_error_answer() {
        let mut s = server(1);
        assert_eq!(
            answer(&mut s, 0, "cmd=frobnicate x=1"),
            "cmd=frobnicate_result rc=-1 msg=unknown_command"
        );
        assert_eq!(
            answer(&mut s, 0, "cmd=spawn nprocs=2"),
            "cmd=spawn_result rc=-1 msg=spawn_is_not_supported_by_oxmpi_mpiexec"
        );
        // The server keeps going.
        assert_eq!(answer(&mut s, 0, "cmd=get_appnum"), "cmd=appnum appnum=0");
    }
}
