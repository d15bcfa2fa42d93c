//! The PMI server's protocol logic: given a rank and the message it sent,
//! decide what to answer (and to whom), with no sockets involved, so that
//! every command is unit-tested on its own.
//!
//! A process speaks PMI-1 or PMI-2, as its `init` line asked (recorded per
//! process; the connection switches its framing when it sends the PMI-2
//! `response_to_init`, see `connection.rs`). PMI-2's commands are in the
//! submodule `v2`; both versions share the KVS, the barrier (PMI-2's
//! `kvs-fence`), the name service and abort.
//!
//! Processes are named by their global id (see `groups.rs`); what a process
//! is told (its rank, size, appnum, KVS, barrier) is relative to its process
//! group: the original world or the children of one spawn.
//!
//! Invariants: every request but `abort`, `barrier_in` and a `spawn` segment
//! that is not the last gets exactly one answer (a `barrier_in` gets its
//! `barrier_out` when the last of its group's ranks has entered, and then
//! every rank of the group gets one; a complete spawn is answered by the job
//! once it started the children or gave up, see [`Action::Spawn`]); a `put`
//! or `get` names any group's KVS of the job, or its own by default; unknown
//! commands are
//! answered with `rc=-1` and the server keeps going; a request that would
//! break the protocol's state (a rank entering the same barrier twice) is
//! reported, never silently dropped.

use oxmpi::bootstrap::pmi::client::{FAILURE_NOTICE, FAILURE_SUBSCRIBE};
use oxmpi::bootstrap::pmi::wire::PmiMessage;

use crate::groups::{Place, ProcessGroups};
use crate::kvs::Kvs;
use crate::name_service::NameService;
use crate::spawn_request::{wire_reason, SpawnCommand, SpawnSegments};

mod v2;

/// Limits announced in `cmd=maxes` (Hydra 4.0.2's values).
const KVSNAME_MAX: usize = 256;
const KEYLEN_MAX: usize = 64;
const VALLEN_MAX: usize = 1024;

/// What the connection layer must do after a request. Processes are named
/// by global id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Send this message to this process.
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
    /// The process asked to spawn these commands (all its segments came):
    /// the job starts them as one new group (see
    /// [`PmiServer::add_group`]) and answers `spawn_result`.
    Spawn {
        /// The process that asked.
        requester: usize,
        /// The commands, in order.
        commands: Vec<SpawnCommand>,
    },
}

/// The server state of one job: its process groups (each with its KVS
/// and barrier), published names and spawns being received. Per-process
/// vectors are indexed by global id and grow with each new group.
#[derive(Debug)]
pub struct PmiServer {
    groups: ProcessGroups,
    names: NameService,
    /// The answer to `get_universe_size` (`None`: -1, unknown/infinite).
    universe: Option<usize>,
    /// Processes that sent `init` (they use PMI, so they must `finalize`).
    initialized: Vec<bool>,
    finalized: Vec<bool>,
    /// Processes that asked for failure notices (oxmpi's extension, see
    /// [`PmiServer::rank_failed`]).
    notified: Vec<bool>,
    spawns: SpawnSegments,
    /// The PMI version of each process (1 until it asks for 2).
    versions: Vec<u8>,
    /// The node of each process of the first world (PMI-2 node
    /// attributes); later processes run on the launcher's host.
    node_of: Vec<usize>,
    /// PMI-2 node attributes, by node.
    node_attributes: std::collections::HashMap<(usize, String), String>,
    /// PMI-2 `info-getnodeattr` requests with `wait=TRUE` for an attribute
    /// not put yet: (process, node, key).
    attribute_waiters: Vec<(usize, usize, String)>,
}

/// The node of processes `PmiServer::node_of` does not place.
const LAUNCHER_HOST: usize = usize::MAX;

impl PmiServer {
    /// A server for a world of `size` ranks using `kvs` as its key-value
    /// space; `universe` is what `get_universe_size` answers (`None`: -1).
    pub fn new(size: usize, kvs: Kvs, universe: Option<usize>) -> PmiServer {
        PmiServer {
            groups: ProcessGroups::new(size, kvs),
            names: NameService::default(),
            universe,
            initialized: vec![false; size],
            finalized: vec![false; size],
            notified: vec![false; size],
            spawns: SpawnSegments::default(),
            versions: vec![1; size],
            node_of: Vec::new(),
            node_attributes: std::collections::HashMap::new(),
            attribute_waiters: Vec::new(),
        }
    }

    /// Where the first world's processes run: `nodes[rank]` is the index
    /// of rank's node (PMI-2 node attributes are shared per node).
    pub fn set_nodes(&mut self, nodes: Vec<usize>) {
        self.node_of = nodes;
    }

    fn node_of(&self, id: usize) -> usize {
        self.node_of.get(id).copied().unwrap_or(LAUNCHER_HOST)
    }

    /// The PMI version process `id` speaks.
    pub fn version_of(&self, id: usize) -> u8 {
        self.versions.get(id).copied().unwrap_or(1)
    }

    /// The job's process groups.
    pub fn groups(&self) -> &ProcessGroups {
        &self.groups
    }

    /// Adds the group of a spawn of `commands` (their processes numbered in
    /// order, `appnum` the command's index), with the preput keys in its
    /// KVS; returns its index. Its members get the next global ids.
    /// `nodes[i]` is the node process `i` of the group runs on (`None`:
    /// mpiexec's host outside the placement); its `PMI_process_mapping`
    /// says so.
    pub fn add_group(&mut self, commands: &[SpawnCommand], nodes: &[Option<usize>]) -> usize {
        let appnums: Vec<usize> = commands
            .iter()
            .enumerate()
            .flat_map(|(appnum, c)| std::iter::repeat_n(appnum, c.nprocs))
            .collect();
        let preput: Vec<(String, String)> = commands
            .iter()
            .flat_map(|c| c.preput.iter().cloned())
            .collect();
        // The group's nodes numbered in order of first appearance.
        let mut seen: Vec<Option<usize>> = Vec::new();
        let local: Vec<usize> = nodes
            .iter()
            .map(|n| {
                seen.iter().position(|s| s == n).unwrap_or_else(|| {
                    seen.push(*n);
                    seen.len() - 1
                })
            })
            .collect();
        let mapping = (local.len() == appnums.len()).then(|| crate::hosts::process_mapping(&local));
        let base = self.groups.processes();
        let group = self.groups.add(appnums, &preput, mapping);
        let total = self.groups.processes();
        self.node_of.resize(base, LAUNCHER_HOST);
        self.node_of.extend(
            (0..total - base).map(|i| nodes.get(i).copied().flatten().unwrap_or(LAUNCHER_HOST)),
        );
        for v in [
            &mut self.initialized,
            &mut self.finalized,
            &mut self.notified,
        ] {
            v.resize(total, false);
        }
        self.versions.resize(total, 1);
        group
    }

    /// Process `id` ended: what it sent of a spawn is dropped.
    pub fn process_ended(&mut self, id: usize) {
        self.spawns.forget(id);
        self.attribute_waiters
            .retain(|(waiter, _, _)| *waiter != id);
    }

    /// Processes currently waiting in a barrier, over every group.
    pub fn barrier_waiters(&self) -> usize {
        self.groups.iter().map(|g| g.barrier_waiters()).sum()
    }

    /// Whether process `id` has entered its group's current barrier.
    #[cfg(test)]
    pub fn is_in_barrier(&self, id: usize) -> bool {
        self.groups
            .locate(id)
            .is_some_and(|p| self.groups.group(p.group).in_barrier[p.rank])
    }

    /// Whether others of process `id`'s group wait for it in a barrier it
    /// has not entered.
    pub fn is_awaited_in_barrier(&self, id: usize) -> bool {
        self.groups.locate(id).is_some_and(|p| {
            let group = self.groups.group(p.group);
            !group.in_barrier[p.rank] && group.barrier_waiters() > 0
        })
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

    /// Handles one request from process `rank` (a global id).
    pub fn handle(&mut self, rank: usize, request: &PmiMessage) -> Vec<Action> {
        let reply = |msg: PmiMessage| vec![Action::Reply(rank, msg)];
        let Some(place) = self.groups.locate(rank) else {
            return vec![Action::ProtocolError {
                rank,
                problem: format!("PMI request from unknown process {rank}"),
            }];
        };
        if self.version_of(rank) == 2 && request.cmd != "init" {
            return self.handle_v2(rank, place, request);
        }
        let group = self.groups.group(place.group);
        match request.cmd.as_str() {
            "init" => {
                if let Some(i) = self.initialized.get_mut(rank) {
                    *i = true;
                }
                let answer = self.init(request);
                let version = if answer.get("pmi_version") == Some("2") {
                    2
                } else {
                    1
                };
                if let Some(v) = self.versions.get_mut(rank) {
                    *v = version;
                }
                reply(answer)
            }
            "initack" => self.initack(rank, place, request),
            "get_maxes" => reply(
                PmiMessage::new("maxes")
                    .with("kvsname_max", KVSNAME_MAX)
                    .with("keylen_max", KEYLEN_MAX)
                    .with("vallen_max", VALLEN_MAX),
            ),
            "get_appnum" => {
                reply(PmiMessage::new("appnum").with("appnum", group.appnums[place.rank]))
            }
            "get_my_kvsname" => {
                reply(PmiMessage::new("my_kvsname").with("kvsname", group.kvs.name()))
            }
            "get_universe_size" => reply(
                PmiMessage::new("universe_size").with(
                    "size",
                    self.universe
                        .map_or(-1, |n| i64::try_from(n).unwrap_or(i64::MAX)),
                ),
            ),
            "put" => reply(self.put(place, request)),
            "get" => reply(self.get(place, request)),
            "barrier_in" => self.barrier_in(rank, place),
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
            "spawn" => match self.spawns.add(rank, request) {
                None => Vec::new(),
                Some(Ok(commands)) => vec![Action::Spawn {
                    requester: rank,
                    commands,
                }],
                Some(Err(reason)) => {
                    log::debug!("process {rank}: spawn refused: {reason}");
                    reply(spawn_failed(1, &reason))
                }
            },
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

    /// Process `id` failed (the job goes on, `-disable-auto-cleanup`):
    /// every other process of its group that asked for failure notices and
    /// has not finalized is told, with a line it reads whenever it comes
    /// (oxmpi's extension of PMI-1: `cmd=oxmpi_proc_failed rank=R`, R the
    /// rank in the group). Processes that did not ask (an MPICH program)
    /// are told nothing: an unasked line would break their protocol.
    pub fn rank_failed(&mut self, id: usize) -> Vec<Action> {
        let Some(place) = self.groups.locate(id) else {
            return Vec::new();
        };
        let group = self.groups.group(place.group);
        (group.base..group.base + group.size())
            .filter(|&r| r != id && self.notified[r] && !self.finalized[r])
            .map(|r| Action::Reply(r, PmiMessage::new(FAILURE_NOTICE).with("rank", place.rank)))
            .collect()
    }

    /// Accepts PMI 1.1, 1.2 and 2.0 and answers with the version sent.
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
            (Some("2"), Some("0")) => answer("2", "0", 0),
            _ => {
                log::warn!("refusing PMI version {version:?}.{subversion:?}");
                answer("1", "1", -1)
            }
        }
    }

    /// The `PMI_PORT`-style handshake, answered on the socket the process
    /// already owns: the rank is the one of the connection, in its group.
    fn initack(&self, id: usize, place: Place, request: &PmiMessage) -> Vec<Action> {
        let rank = place.rank;
        if let Some(given) = request.get("pmiid") {
            if given.parse::<usize>().ok() != Some(rank) {
                log::warn!("process {id} sent initack with pmiid={given}; using rank {rank}");
            }
        }
        [
            PmiMessage::new("initack"),
            PmiMessage::new("set").with("size", self.groups.group(place.group).size()),
            PmiMessage::new("set").with("rank", rank),
            PmiMessage::new("set").with("debug", 0),
        ]
        .into_iter()
        .map(|m| Action::Reply(id, m))
        .collect()
    }

    /// The group whose KVS a put or get from `place` uses: the one its
    /// `kvsname=` names (any group's of the job), else its own; `Err` is
    /// the answer to send.
    fn kvs_group(
        &self,
        place: Place,
        request: &PmiMessage,
        answer: &str,
    ) -> Result<usize, PmiMessage> {
        match request.get("kvsname") {
            None => Ok(place.group),
            Some(name) => self.groups.with_kvs(name).ok_or_else(|| {
                PmiMessage::new(answer)
                    .with("rc", -1)
                    .with("msg", format!("unknown_kvsname_{name}"))
            }),
        }
    }

    fn kvs(&self, group: usize) -> &Kvs {
        &self.groups.group(group).kvs
    }

    fn put(&mut self, place: Place, request: &PmiMessage) -> PmiMessage {
        let group = match self.kvs_group(place, request, "put_result") {
            Ok(g) => g,
            Err(answer) => return answer,
        };
        match (request.get("key"), request.get("value")) {
            (Some(key), Some(value)) if !key.is_empty() => {
                self.groups.group_mut(group).kvs.put(key, value);
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

    fn get(&self, place: Place, request: &PmiMessage) -> PmiMessage {
        let group = match self.kvs_group(place, request, "get_result") {
            Ok(g) => g,
            Err(answer) => return answer.with("value", "unknown"),
        };
        let key = request.get("key").unwrap_or("");
        match self.kvs(group).get(key) {
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

    /// Process `id` (at `place`) enters its group's barrier.
    fn barrier_in(&mut self, id: usize, place: Place) -> Vec<Action> {
        let group = self.groups.group_mut(place.group);
        if std::mem::replace(&mut group.in_barrier[place.rank], true) {
            return vec![Action::ProtocolError {
                rank: id,
                problem: "sent barrier_in twice in one barrier".to_string(),
            }];
        }
        if group.barrier_waiters() < group.size() {
            return Vec::new();
        }
        group.in_barrier.iter_mut().for_each(|b| *b = false);
        let members = group.base..group.base + group.size();
        members
            .map(|r| {
                let out = if self.version_of(r) == 2 {
                    PmiMessage::new("kvs-fence-response").with("rc", 0)
                } else {
                    PmiMessage::new("barrier_out")
                };
                Action::Reply(r, out)
            })
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

/// The answer to a spawn that starts nothing, for `reason`, in the PMI
/// `version` the requester speaks.
pub fn spawn_failed(version: u8, reason: &str) -> PmiMessage {
    if version == 2 {
        return PmiMessage::new("spawn-response")
            .with("rc", -1)
            .with("errmsg", wire_reason(reason));
    }
    PmiMessage::new("spawn_result")
        .with("rc", -1)
        .with("msg", wire_reason(reason))
}

/// The answer to a spawn whose `count` processes all started, in the PMI
/// `version` the requester speaks (PMI-2 also names the children's job,
/// `jobid`).
pub fn spawn_succeeded(version: u8, count: usize, jobid: &str) -> PmiMessage {
    let errcodes = vec!["0"; count].join(",");
    if version == 2 {
        return PmiMessage::new("spawn-response")
            .with("rc", 0)
            .with("jobid", jobid)
            .with("nerrs", 0)
            .with("errcodes", errcodes);
    }
    PmiMessage::new("spawn_result")
        .with("rc", 0)
        .with("errcodes", errcodes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server(size: usize) -> PmiServer {
        PmiServer::new(size, Kvs::for_single_node_job("kvs_test", size), None)
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
    fn init_accepts_1_1_1_2_and_2_0() {
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
            answer(&mut s, 1, "cmd=init pmi_version=3 pmi_subversion=0"),
            "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=-1"
        );
        assert_eq!(s.version_of(1), 1);
        assert_eq!(
            answer(&mut s, 1, "cmd=init pmi_version=2 pmi_subversion=0"),
            "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0"
        );
        assert_eq!(s.version_of(1), 2);
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
        // Unknown (no -usize, or INFINITE): -1, as Hydra answers.
        assert_eq!(
            answer(&mut s, 1, "cmd=get_universe_size"),
            "cmd=universe_size size=-1"
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
        // The server keeps going.
        assert_eq!(answer(&mut s, 0, "cmd=get_appnum"), "cmd=appnum appnum=0");
    }

    /// A server for a world of 2 with a spawned group of 3 (global ids
    /// 2, 3, 4): two copies of `a` (appnum 0), one of `b` (appnum 1), with
    /// the preput key `port`.
    fn server_with_group() -> PmiServer {
        let mut s = server(2);
        let command = |nprocs, exec: &str| SpawnCommand {
            nprocs,
            execname: exec.into(),
            args: Vec::new(),
            preput: vec![("port".into(), "tag#0$".into())],
            info: Vec::new(),
        };
        assert_eq!(
            s.add_group(&[command(2, "a"), command(1, "b")], &[None; 3]),
            1
        );
        s
    }

    #[test]
    fn spawn_segments_are_answered_once_by_the_job() {
        let mut s = server(2);
        let segment = |k: usize| {
            format!(
                "cmd=spawn nprocs={k} execname=prog{k} totspawns=2 spawnssofar={k} argcnt=1 arg1=x"
            )
        };
        assert!(ask(&mut s, 1, &segment(1)).is_empty());
        match ask(&mut s, 1, &segment(2)).as_slice() {
            [Action::Spawn {
                requester: 1,
                commands,
            }] => {
                let shape: Vec<_> = commands
                    .iter()
                    .map(|c| (c.nprocs, c.execname.as_str(), c.args.clone()))
                    .collect();
                assert_eq!(
                    shape,
                    [
                        (1, "prog1", vec!["x".to_string()]),
                        (2, "prog2", vec!["x".to_string()])
                    ]
                );
            }
            other => panic!("{other:?}"),
        }
        // A malformed spawn is refused by the server itself.
        assert_eq!(
            answer(&mut s, 0, "cmd=spawn nprocs=0 execname=x"),
            "cmd=spawn_result rc=-1 msg=command_1:_nprocs_is_0,_not_at_least_1"
        );
        // A process that ended leaves no half spawn behind.
        assert!(ask(
            &mut s,
            0,
            "cmd=spawn nprocs=1 execname=x totspawns=2 spawnssofar=1"
        )
        .is_empty());
        s.process_ended(0);
        assert!(matches!(
            ask(&mut s, 0, "cmd=spawn nprocs=1 execname=x").as_slice(),
            [Action::Spawn { requester: 0, .. }]
        ));
        assert_eq!(
            spawn_succeeded(1, 3, "kvs_1").to_string(),
            "cmd=spawn_result rc=0 errcodes=0,0,0"
        );
        assert_eq!(
            spawn_succeeded(2, 2, "kvs_1").to_string(),
            "cmd=spawn-response rc=0 jobid=kvs_1 nerrs=0 errcodes=0,0"
        );
        assert_eq!(
            spawn_failed(2, "no such program").to_string(),
            "cmd=spawn-response rc=-1 errmsg=no_such_program"
        );
    }

    #[test]
    fn a_spawned_group_is_told_its_own_rank_size_appnum_and_kvs() {
        let mut s = server_with_group();
        let lines: Vec<String> = ask(&mut s, 3, "cmd=initack pmiid=1")
            .into_iter()
            .map(|a| match a {
                Action::Reply(3, m) => m.to_string(),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            lines,
            [
                "cmd=initack",
                "cmd=set size=3",
                "cmd=set rank=1",
                "cmd=set debug=0"
            ]
        );
        assert_eq!(answer(&mut s, 3, "cmd=get_appnum"), "cmd=appnum appnum=0");
        assert_eq!(answer(&mut s, 4, "cmd=get_appnum"), "cmd=appnum appnum=1");
        assert_eq!(answer(&mut s, 1, "cmd=get_appnum"), "cmd=appnum appnum=0");
        assert_eq!(
            answer(&mut s, 2, "cmd=get_my_kvsname"),
            "cmd=my_kvsname kvsname=kvs_test_1"
        );
        assert_eq!(
            answer(&mut s, 1, "cmd=get_my_kvsname"),
            "cmd=my_kvsname kvsname=kvs_test"
        );
        // The preput key and the group's mapping, in its own KVS.
        assert_eq!(
            answer(&mut s, 4, "cmd=get key=port"),
            "cmd=get_result rc=0 msg=success value=tag#0$"
        );
        assert_eq!(
            answer(
                &mut s,
                2,
                "cmd=get kvsname=kvs_test_1 key=PMI_process_mapping"
            ),
            "cmd=get_result rc=0 msg=success value=(vector,(0,1,3))"
        );
        assert_eq!(
            answer(&mut s, 0, "cmd=get key=port"),
            "cmd=get_result rc=-1 msg=key_port_not_found value=unknown"
        );
    }

    #[test]
    fn put_and_get_reach_any_group_kvs_named() {
        let mut s = server_with_group();
        assert_eq!(
            answer(&mut s, 0, "cmd=put kvsname=kvs_test key=card-0 value=c0"),
            "cmd=put_result rc=0 msg=success"
        );
        // A child reads (and writes) the world's KVS by its name.
        assert_eq!(
            answer(&mut s, 3, "cmd=get kvsname=kvs_test key=card-0"),
            "cmd=get_result rc=0 msg=success value=c0"
        );
        assert_eq!(
            answer(&mut s, 3, "cmd=put kvsname=kvs_test key=card-3 value=c3"),
            "cmd=put_result rc=0 msg=success"
        );
        assert_eq!(
            answer(&mut s, 1, "cmd=get key=card-3"),
            "cmd=get_result rc=0 msg=success value=c3"
        );
        // Its own KVS by default, and the world reads it by name.
        answer(&mut s, 2, "cmd=put key=mine value=1");
        assert_eq!(
            answer(&mut s, 0, "cmd=get kvsname=kvs_test_1 key=mine"),
            "cmd=get_result rc=0 msg=success value=1"
        );
        assert_eq!(
            answer(&mut s, 0, "cmd=get key=mine"),
            "cmd=get_result rc=-1 msg=key_mine_not_found value=unknown"
        );
        assert_eq!(
            answer(&mut s, 4, "cmd=get kvsname=kvs_test_2 key=mine"),
            "cmd=get_result rc=-1 msg=unknown_kvsname_kvs_test_2 value=unknown"
        );
        assert_eq!(
            answer(&mut s, 4, "cmd=put kvsname=kvs_other key=a value=b"),
            "cmd=put_result rc=-1 msg=unknown_kvsname_kvs_other"
        );
    }

    #[test]
    fn each_group_has_its_own_barrier() {
        let mut s = server_with_group();
        assert!(ask(&mut s, 2, "cmd=barrier_in").is_empty());
        assert!(ask(&mut s, 0, "cmd=barrier_in").is_empty());
        assert!(s.is_awaited_in_barrier(3) && s.is_awaited_in_barrier(1));
        assert!(!s.is_awaited_in_barrier(2) && !s.is_awaited_in_barrier(0));
        // The world's barrier completes without the children.
        assert_eq!(
            ask(&mut s, 1, "cmd=barrier_in"),
            vec![
                Action::Reply(0, PmiMessage::new("barrier_out")),
                Action::Reply(1, PmiMessage::new("barrier_out"))
            ]
        );
        assert_eq!(s.barrier_waiters(), 1);
        assert!(!s.is_awaited_in_barrier(1) && s.is_awaited_in_barrier(4));
        assert!(ask(&mut s, 4, "cmd=barrier_in").is_empty());
        let out = ask(&mut s, 3, "cmd=barrier_in");
        let expected: Vec<_> = (2..5)
            .map(|r| Action::Reply(r, PmiMessage::new("barrier_out")))
            .collect();
        assert_eq!(out, expected);
        assert_eq!(s.barrier_waiters(), 0);
        assert!(matches!(
            ask(&mut s, 5, "cmd=barrier_in").as_slice(),
            [Action::ProtocolError { rank: 5, .. }]
        ));
    }

    #[test]
    fn failure_notices_stay_in_the_group_with_its_ranks() {
        let mut s = server_with_group();
        for id in [0, 2, 4] {
            answer(&mut s, id, "cmd=oxmpi_failure_notices");
        }
        assert_eq!(
            s.rank_failed(3),
            vec![
                Action::Reply(2, PmiMessage::new(FAILURE_NOTICE).with("rank", 1)),
                Action::Reply(4, PmiMessage::new(FAILURE_NOTICE).with("rank", 1)),
            ]
        );
        assert_eq!(
            s.rank_failed(1),
            vec![Action::Reply(
                0,
                PmiMessage::new(FAILURE_NOTICE).with("rank", 1)
            )]
        );
    }

    #[test]
    fn universe_size_answers() {
        let mut s = PmiServer::new(2, Kvs::for_single_node_job("kvs_test", 2), Some(8));
        assert_eq!(
            answer(&mut s, 0, "cmd=get_universe_size"),
            "cmd=universe_size size=8"
        );
        let mut s = server(2);
        assert_eq!(
            answer(&mut s, 1, "cmd=get_universe_size"),
            "cmd=universe_size size=-1"
        );
    }
}
