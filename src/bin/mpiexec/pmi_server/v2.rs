//! PMI-2's commands, for processes whose `init` asked for version 2: the
//! same job state as PMI-1's (the group's KVS, barrier, name service),
//! under PMI-2's names and fields (as MPICH's PMI-2 client and Hydra 4.0.2
//! use them), plus node attributes, and one extension of oxmpi's own: a
//! `kvs-put` may name another group's KVS in `jobid`, as a `kvs-get`
//! may (oxmpi's spawned processes put their cards into the job's first
//! KVS, where every process looks for cards).
//!
//! Invariants, beyond PMI-1's: every request gets exactly one answer,
//! except `abort`, `kvs-fence` (answered to the whole group when its last
//! process enters, as `barrier_in`) and `info-getnodeattr` with `wait=TRUE`
//! for an attribute not put yet (answered when a process of that node puts
//! it); a put is visible to every later get at once (PMI-2 promises it only
//! after the next fence: earlier is allowed); a `spawn` is answered by the
//! job once it started the children or gave up (see `Action::Spawn`), in
//! PMI-2's `spawn-response`.

use oxmpi::bootstrap::pmi::client::FAILURE_SUBSCRIBE;
use oxmpi::bootstrap::pmi::wire::PmiMessage;

use super::{spawn_failed, Action, PmiServer};
use crate::groups::Place;
use crate::kvs::PROCESS_MAPPING_KEY;
use crate::spawn_request::commands_v2;

impl PmiServer {
    /// Handles one PMI-2 request from process `id` (at `place`).
    pub(super) fn handle_v2(
        &mut self,
        id: usize,
        place: Place,
        request: &PmiMessage,
    ) -> Vec<Action> {
        let reply = |msg: PmiMessage| vec![Action::Reply(id, msg)];
        let response = PmiMessage::new(format!("{}-response", request.cmd));
        match request.cmd.as_str() {
            "fullinit" => reply(self.fullinit(id, place, request)),
            "job-getid" => reply(
                response
                    .with("jobid", self.groups.group(place.group).kvs.name())
                    .with("rc", 0),
            ),
            "kvs-put" => match (request.get("key"), request.get("value")) {
                (Some(key), value) if !key.is_empty() => {
                    // Hydra takes a put without `value` as an empty one.
                    let value = value.unwrap_or("");
                    // `jobid` (oxmpi's extension, which PMI-2's put lacks)
                    // names another group's KVS: a spawned process puts its
                    // card where the whole job looks for cards.
                    let group = match request.get("jobid") {
                        None => Some(place.group),
                        Some(name) => self.groups.with_kvs(name),
                    };
                    match group {
                        Some(group) => {
                            self.groups.group_mut(group).kvs.put(key, value);
                            reply(response.with("rc", 0))
                        }
                        None => reply(response.with("rc", -1).with(
                            "errmsg",
                            format!("unknown_jobid_{}", request.get("jobid").unwrap_or("")),
                        )),
                    }
                }
                _ => reply(response.with("rc", -1).with("errmsg", "missing_key")),
            },
            "kvs-get" => reply(self.kvs_get(place, request, response)),
            "kvs-fence" => self.barrier_in(id, place),
            "info-getjobattr" => reply(self.job_attribute(place, request, response)),
            "info-putnodeattr" => self.put_node_attribute(id, request, response),
            "info-getnodeattr" => self.get_node_attribute(id, request, response),
            "name-publish" => {
                let (Some(name), Some(port)) = (request.get("name"), request.get("port")) else {
                    return reply(
                        response
                            .with("rc", 1)
                            .with("errmsg", "missing_name_or_port"),
                    );
                };
                reply(if self.names.publish(name, port) {
                    response.with("rc", 0)
                } else {
                    response
                        .with("rc", 1)
                        .with("errmsg", format!("duplicate_service_{name}"))
                })
            }
            "name-unpublish" => {
                let name = request.get("name").unwrap_or("");
                reply(if self.names.unpublish(name) {
                    response.with("rc", 0)
                } else {
                    response
                        .with("rc", 1)
                        .with("errmsg", format!("service_{name}_not_found"))
                })
            }
            "name-lookup" => {
                let name = request.get("name").unwrap_or("");
                reply(match self.names.lookup(name) {
                    Some(port) => response
                        .with("port", port)
                        .with("found", "TRUE")
                        .with("rc", 0),
                    None => response.with("found", "FALSE").with("rc", 1),
                })
            }
            "abort" => {
                // PMI-2's abort has no exit code; oxmpi's client adds one.
                let code = request
                    .get("exitcode")
                    .and_then(|c| c.trim().parse::<i32>().ok())
                    .unwrap_or(1);
                vec![Action::Abort { rank: id, code }]
            }
            "finalize" => {
                if let Some(f) = self.finalized.get_mut(id) {
                    *f = true;
                }
                vec![Action::Reply(id, response.with("rc", 0)), Action::Close(id)]
            }
            "spawn" => match commands_v2(request) {
                Ok(commands) => vec![Action::Spawn {
                    requester: id,
                    commands,
                }],
                Err(reason) => {
                    log::debug!("process {id}: spawn refused: {reason}");
                    reply(spawn_failed(2, &reason))
                }
            },
            FAILURE_SUBSCRIBE => {
                if let Some(n) = self.notified.get_mut(id) {
                    *n = true;
                }
                reply(PmiMessage::new(format!("{FAILURE_SUBSCRIBE}_result")).with("rc", 0))
            }
            other => {
                log::warn!("process {id} sent unknown PMI-2 command {other:?}");
                reply(response.with("rc", -1).with("errmsg", "unknown_command"))
            }
        }
    }

    fn fullinit(&self, id: usize, place: Place, request: &PmiMessage) -> PmiMessage {
        if let Some(given) = request.get("pmirank") {
            if given.trim().parse::<usize>().ok() != Some(place.rank) {
                log::warn!(
                    "process {id} sent fullinit with pmirank={given}; using rank {}",
                    place.rank
                );
            }
        }
        let group = self.groups.group(place.group);
        let mut answer = PmiMessage::new("fullinit-response")
            .with("pmi-version", 2)
            .with("pmi-subversion", 0)
            .with("rank", place.rank)
            .with("size", group.size())
            .with("appnum", group.appnums[place.rank]);
        if place.group > 0 {
            // A spawned world: its parents' job (the first world's).
            answer.push("spawner-jobid", self.groups.group(0).kvs.name());
        }
        answer
            .with("debugged", "FALSE")
            .with("pmiverbose", "FALSE")
            .with("rc", 0)
    }

    fn kvs_get(&self, place: Place, request: &PmiMessage, response: PmiMessage) -> PmiMessage {
        let group = match request.get("jobid") {
            None => Some(place.group),
            Some(name) => self.groups.with_kvs(name),
        };
        let Some(group) = group else {
            let name = request.get("jobid").unwrap_or("");
            return response
                .with("rc", -1)
                .with("errmsg", format!("unknown_jobid_{name}"));
        };
        let key = request.get("key").unwrap_or("");
        found(response, self.groups.group(group).kvs.get(key), "value")
    }

    /// `PMI_process_mapping` and `universeSize`, else the group's KVS (as
    /// Hydra does).
    fn job_attribute(
        &self,
        place: Place,
        request: &PmiMessage,
        response: PmiMessage,
    ) -> PmiMessage {
        let kvs = &self.groups.group(place.group).kvs;
        let universe = self.universe.map(|n| n.to_string());
        let value = match request.get("key").unwrap_or("") {
            "universeSize" => universe.as_deref(),
            "PMI_process_mapping" => kvs.get(PROCESS_MAPPING_KEY),
            other => kvs.get(other),
        };
        found(response, value, "value")
    }

    fn put_node_attribute(
        &mut self,
        id: usize,
        request: &PmiMessage,
        response: PmiMessage,
    ) -> Vec<Action> {
        let Some(key) = request.get("key").filter(|k| !k.is_empty()) else {
            return vec![Action::Reply(
                id,
                response.with("rc", -1).with("errmsg", "missing_key"),
            )];
        };
        let value = request.get("value").unwrap_or("");
        let node = self.node_of(id);
        self.node_attributes
            .insert((node, key.to_string()), value.to_string());
        let mut actions = vec![Action::Reply(id, response.with("rc", 0))];
        let (served, waiting): (Vec<_>, Vec<_>) = std::mem::take(&mut self.attribute_waiters)
            .into_iter()
            .partition(|(_, n, k)| *n == node && k == key);
        self.attribute_waiters = waiting;
        actions.extend(served.into_iter().map(|(waiter, _, _)| {
            Action::Reply(
                waiter,
                found(
                    PmiMessage::new("info-getnodeattr-response"),
                    Some(value),
                    "value",
                ),
            )
        }));
        actions
    }

    fn get_node_attribute(
        &mut self,
        id: usize,
        request: &PmiMessage,
        response: PmiMessage,
    ) -> Vec<Action> {
        let key = request.get("key").unwrap_or("");
        let node = self.node_of(id);
        match self.node_attributes.get(&(node, key.to_string())) {
            Some(value) => vec![Action::Reply(id, found(response, Some(value), "value"))],
            None if request.get("wait") == Some("TRUE") => {
                self.attribute_waiters.push((id, node, key.to_string()));
                Vec::new()
            }
            None => vec![Action::Reply(id, found(response, None, "value"))],
        }
    }
}

/// `response` with `found=TRUE;<field>=<value>;rc=0` or `found=FALSE;rc=0`.
fn found(response: PmiMessage, value: Option<&str>, field: &str) -> PmiMessage {
    match value {
        Some(v) => response.with("found", "TRUE").with(field, v).with("rc", 0),
        None => response.with("found", "FALSE").with("rc", 0),
    }
}

#[cfg(test)]
mod tests {
    use super::super::PmiServer;
    use super::*;
    use crate::kvs::Kvs;

    /// A server of `size` ranks, every one past its PMI-2 `init`.
    fn server(size: usize) -> PmiServer {
        let mut s = PmiServer::new(size, Kvs::for_single_node_job("kvs_test", size), Some(8));
        for rank in 0..size {
            let init = PmiMessage::parse("cmd=init pmi_version=2 pmi_subversion=0").unwrap();
            match s.handle(rank, &init).as_slice() {
                [Action::Reply(_, m)] => assert_eq!(
                    m.to_string(),
                    "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0"
                ),
                other => panic!("{other:?}"),
            }
            assert_eq!(s.version_of(rank), 2);
        }
        s
    }

    fn msg(text: &str) -> PmiMessage {
        let mut parts = text.split(';').filter(|p| !p.is_empty());
        let mut m = PmiMessage::new(parts.next().unwrap());
        for p in parts {
            let (k, v) = p.split_once('=').unwrap();
            m.push(k, v);
        }
        m
    }

    fn ask(s: &mut PmiServer, id: usize, text: &str) -> Vec<Action> {
        s.handle(id, &msg(text))
    }

    /// The one answer to `text`, shown as `cmd;k=v;...`.
    fn answer(s: &mut PmiServer, id: usize, text: &str) -> String {
        match ask(s, id, text).as_slice() {
            [Action::Reply(to, m)] if *to == id => show(m),
            other => panic!("{text}: {other:?}"),
        }
    }

    fn show(m: &PmiMessage) -> String {
        let mut out = m.cmd.clone();
        for (k, v) in &m.fields {
            out.push_str(&format!(";{k}={v}"));
        }
        out
    }

    #[test]
    fn fullinit_and_job_getid() {
        let mut s = server(3);
        assert_eq!(
            answer(&mut s, 2, "fullinit;pmirank=2"),
            "fullinit-response;pmi-version=2;pmi-subversion=0;rank=2;size=3;appnum=0;debugged=FALSE;pmiverbose=FALSE;rc=0"
        );
        assert_eq!(
            answer(&mut s, 0, "job-getid"),
            "job-getid-response;jobid=kvs_test;rc=0"
        );
    }

    #[test]
    fn puts_are_visible_at_once_and_a_missing_key_is_not_found() {
        let mut s = server(2);
        assert_eq!(
            answer(&mut s, 1, "kvs-get;jobid=kvs_test;srcid=-1;key=card"),
            "kvs-get-response;found=FALSE;rc=0"
        );
        assert_eq!(
            answer(&mut s, 0, "kvs-put;key=card;value=a,b"),
            "kvs-put-response;rc=0"
        );
        assert_eq!(
            answer(&mut s, 1, "kvs-get;jobid=kvs_test;srcid=-1;key=card"),
            "kvs-get-response;found=TRUE;value=a,b;rc=0"
        );
        assert_eq!(
            answer(&mut s, 1, "kvs-get;jobid=nope;key=card"),
            "kvs-get-response;rc=-1;errmsg=unknown_jobid_nope"
        );
        assert_eq!(
            answer(&mut s, 1, "kvs-put;value=x"),
            "kvs-put-response;rc=-1;errmsg=missing_key"
        );
        // A put naming a KVS (oxmpi's extension) goes there, or fails.
        assert_eq!(
            answer(&mut s, 1, "kvs-put;key=other;value=y;jobid=kvs_test"),
            "kvs-put-response;rc=0"
        );
        assert_eq!(
            answer(&mut s, 0, "kvs-get;jobid=kvs_test;key=other"),
            "kvs-get-response;found=TRUE;value=y;rc=0"
        );
        assert_eq!(
            answer(&mut s, 1, "kvs-put;key=k;value=y;jobid=nope"),
            "kvs-put-response;rc=-1;errmsg=unknown_jobid_nope"
        );
    }

    #[test]
    fn fence_releases_the_group_in_each_process_s_version() {
        let mut s = server(3);
        // Rank 2 speaks PMI-1 after all.
        let init = PmiMessage::parse("cmd=init pmi_version=1 pmi_subversion=1").unwrap();
        s.handle(2, &init);
        assert!(ask(&mut s, 0, "kvs-fence").is_empty());
        assert!(s.handle(2, &PmiMessage::new("barrier_in")).is_empty());
        let out: Vec<(usize, String)> = ask(&mut s, 1, "kvs-fence")
            .into_iter()
            .map(|a| match a {
                Action::Reply(to, m) => (to, show(&m)),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            out,
            [
                (0, "kvs-fence-response;rc=0".to_string()),
                (1, "kvs-fence-response;rc=0".to_string()),
                (2, "barrier_out".to_string()),
            ]
        );
        // Twice in one fence breaks the protocol.
        assert!(ask(&mut s, 0, "kvs-fence").is_empty());
        assert!(matches!(
            ask(&mut s, 0, "kvs-fence").as_slice(),
            [Action::ProtocolError { rank: 0, .. }]
        ));
    }

    #[test]
    fn job_attributes() {
        let mut s = server(4);
        assert_eq!(
            answer(&mut s, 0, "info-getjobattr;key=PMI_process_mapping"),
            "info-getjobattr-response;found=TRUE;value=(vector,(0,1,4));rc=0"
        );
        assert_eq!(
            answer(&mut s, 0, "info-getjobattr;key=universeSize"),
            "info-getjobattr-response;found=TRUE;value=8;rc=0"
        );
        assert_eq!(
            answer(&mut s, 0, "info-getjobattr;key=nothing"),
            "info-getjobattr-response;found=FALSE;rc=0"
        );
        let mut unknown = PmiServer::new(1, Kvs::for_single_node_job("k", 1), None);
        unknown.handle(
            0,
            &PmiMessage::parse("cmd=init pmi_version=2 pmi_subversion=0").unwrap(),
        );
        assert_eq!(
            answer(&mut unknown, 0, "info-getjobattr;key=universeSize"),
            "info-getjobattr-response;found=FALSE;rc=0"
        );
    }

    #[test]
    fn node_attributes_are_per_node_and_a_waiter_is_answered_by_the_put() {
        let mut s = server(4);
        s.set_nodes(vec![0, 0, 1, 1]);
        assert_eq!(
            answer(&mut s, 1, "info-getnodeattr;key=a;wait=FALSE"),
            "info-getnodeattr-response;found=FALSE;rc=0"
        );
        assert!(ask(&mut s, 1, "info-getnodeattr;key=a;wait=TRUE").is_empty());
        assert!(ask(&mut s, 3, "info-getnodeattr;key=a;wait=TRUE").is_empty());
        // A put on the other node answers its waiter, not rank 1.
        let to: Vec<usize> = ask(&mut s, 2, "info-putnodeattr;key=a;value=two")
            .into_iter()
            .map(|a| match a {
                Action::Reply(to, _) => to,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(to, [2, 3]);
        assert_eq!(
            answer(&mut s, 3, "info-getnodeattr;key=a;wait=FALSE"),
            "info-getnodeattr-response;found=TRUE;value=two;rc=0"
        );
        let out = ask(&mut s, 0, "info-putnodeattr;key=a;value=one");
        let shown: Vec<(usize, String)> = out
            .into_iter()
            .map(|a| match a {
                Action::Reply(to, m) => (to, show(&m)),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            shown,
            [
                (0, "info-putnodeattr-response;rc=0".to_string()),
                (
                    1,
                    "info-getnodeattr-response;found=TRUE;value=one;rc=0".to_string()
                ),
            ]
        );
    }

    #[test]
    fn names_abort_finalize_spawn_and_unknown() {
        let mut s = server(2);
        assert_eq!(
            answer(&mut s, 0, "name-lookup;name=svc"),
            "name-lookup-response;found=FALSE;rc=1"
        );
        assert_eq!(
            answer(&mut s, 0, "name-publish;name=svc;port=p:1"),
            "name-publish-response;rc=0"
        );
        assert_eq!(
            answer(&mut s, 1, "name-publish;name=svc;port=q"),
            "name-publish-response;rc=1;errmsg=duplicate_service_svc"
        );
        assert_eq!(
            answer(&mut s, 1, "name-lookup;name=svc"),
            "name-lookup-response;port=p:1;found=TRUE;rc=0"
        );
        assert_eq!(
            answer(&mut s, 1, "name-unpublish;name=svc"),
            "name-unpublish-response;rc=0"
        );
        assert_eq!(
            ask(&mut s, 1, "abort;isworld=TRUE;msg=bad;exitcode=5"),
            vec![Action::Abort { rank: 1, code: 5 }]
        );
        assert_eq!(
            ask(&mut s, 0, "abort;isworld=TRUE"),
            vec![Action::Abort { rank: 0, code: 1 }]
        );
        assert!(answer(&mut s, 0, "spawn;ncmds=1").starts_with("spawn-response;rc=-1;errmsg="));
        // A well-formed spawn goes to the job, which answers it.
        match ask(
            &mut s,
            1,
            "spawn;ncmds=1;preputcount=0;subcmd=./child;maxprocs=2;argc=1;argv0=x",
        )
        .as_slice()
        {
            [Action::Spawn {
                requester: 1,
                commands,
            }] => {
                assert_eq!(commands.len(), 1);
                assert_eq!(
                    (commands[0].nprocs, commands[0].execname.as_str()),
                    (2, "./child")
                );
                assert_eq!(commands[0].args, ["x"]);
            }
            other => panic!("spawn: {other:?}"),
        }
        assert_eq!(
            answer(&mut s, 0, "frobnicate;x=1"),
            "frobnicate-response;rc=-1;errmsg=unknown_command"
        );
        assert_eq!(
            answer(&mut s, 0, "oxmpi_failure_notices"),
            "oxmpi_failure_notices_result;rc=0"
        );
        assert!(s.is_unfinished(1));
        let out = ask(&mut s, 1, "finalize");
        assert_eq!(
            out,
            vec![
                Action::Reply(1, PmiMessage::new("finalize-response").with("rc", 0)),
                Action::Close(1)
            ]
        );
        assert!(s.has_finalized(1));
    }
}
