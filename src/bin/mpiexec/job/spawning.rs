//! Serving a PMI `spawn`: the children of all its commands start as one new
//! process group (see `groups.rs`), and the requester gets one
//! `spawn_result`. Where each child runs comes from its command's info key
//! `host` (or `hosts`, a list the children go round): mpiexec's host, or a
//! host of the job (by the name in the host list). Children of mpiexec's
//! host, and of hosts mpiexec starts itself (`-launcher fork`), are started
//! here; a remote host's children are sent to its proxy, which starts them
//! and reports on them like the host's ranks. The group's
//! `PMI_process_mapping` and each child's local ids and `-hostname-env`
//! variables follow the placement, so children share memory with the
//! processes of their host only.
//!
//! Invariants: everything a spawn needs (each program, working directory
//! and host) is checked before any child starts, so a bad request starts
//! nothing; a host is accepted only while its proxy is connected and a
//! process of the job still runs there; a new group's KVS holds the preput
//! keys before its first child starts; local children join the job's local
//! process group, inherit stdout and stderr, read stdin from /dev/null; if
//! a local child cannot be started, the ones started before it are killed
//! and abandoned (their end is not judged), the rest count as ended, and
//! the requester is told `rc=-1`; the job goes on. A remote child that its
//! proxy cannot start ends the job, as a remote rank does.

use std::ffi::OsString;
use std::path::PathBuf;

use crate::connection::PmiConnection;
use crate::environment::{job_variables, lookup, set, spawned_variables, PmiAccess, RankVariables};
use crate::hosts::LocalNames;
use crate::launch::{start_with_pmi_socket, LocalProgram, RankStdin};
use crate::outcome::Termination;
use crate::pmi_server::{spawn_failed, spawn_succeeded, Action};
use crate::program::{resolve, ResolvedProgram, DEFAULT_PATH};
use crate::proxy_wire::{ProxyJob, ProxyRank};
use crate::spawn_request::{settings, SpawnCommand};

use super::{Job, Rank};

/// Where a spawned child runs.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Site {
    /// Its node in the placement (`None`: mpiexec's host, outside it).
    node: Option<usize>,
    /// The proxy that starts it (`None`: mpiexec does).
    proxy: Option<usize>,
    /// The host name `-hostname-env` gives it (`None`: not set).
    host: Option<String>,
}

/// One command of a spawn, checked and ready to start.
struct Planned {
    program: ResolvedProgram,
    args: Vec<OsString>,
    workdir: PathBuf,
    /// Where each of its processes runs, in order.
    sites: Vec<Site>,
}

impl Job {
    /// Starts the children of `commands`, asked for by process
    /// `requester`, and answers it.
    pub(super) fn spawn(&mut self, requester: usize, commands: &[SpawnCommand]) {
        let version = self.server.version_of(requester);
        let answer = match self.plan(commands) {
            Err(reason) => {
                log_failure(requester, &reason);
                spawn_failed(version, &reason)
            }
            Ok(planned) => match self.start_group(commands, &planned) {
                Ok((count, jobid)) => spawn_succeeded(version, count, &jobid),
                Err(reason) => {
                    log_failure(requester, &reason);
                    spawn_failed(version, &reason)
                }
            },
        };
        self.apply(vec![Action::Reply(requester, answer)]);
    }

    /// Checks every command: its host, working directory and program.
    fn plan(&self, commands: &[SpawnCommand]) -> Result<Vec<Planned>, String> {
        if self.ending.is_some() {
            return Err("the job is ending".into());
        }
        let cwd = std::env::current_dir()
            .map_err(|e| format!("cannot determine mpiexec's directory: {e}"))?;
        let here = LocalNames {
            hostname: crate::hosts::this_hostname(),
            fork_everything: false,
        };
        commands
            .iter()
            .enumerate()
            .map(|(index, command)| {
                let what = |e: String| format!("command {index} ({}): {e}", command.execname);
                let settings = settings(&command.info).map_err(what)?;
                let hosts = settings
                    .hosts
                    .iter()
                    .map(|h| self.site_of(h, &here))
                    .collect::<Result<Vec<Site>, String>>()
                    .map_err(what)?;
                let sites = (0..command.nprocs)
                    .map(|i| {
                        hosts.get(i % hosts.len().max(1)).cloned().unwrap_or(Site {
                            node: self.local_node(),
                            proxy: None,
                            host: None,
                        })
                    })
                    .collect();
                let workdir = match &settings.wdir {
                    None => self.spec.workdir.clone(),
                    Some(dir) => {
                        let dir = cwd.join(dir);
                        if !dir.is_dir() {
                            return Err(what(format!(
                                "working directory '{}' does not exist",
                                dir.display()
                            )));
                        }
                        dir
                    }
                };
                let path_var = search_path(settings.path.as_deref(), &self.spec.env);
                let program = resolve(
                    command.execname.as_ref(),
                    &workdir,
                    path_var.as_deref().map(AsRef::as_ref),
                )
                .map_err(|e| what(e.to_string()))?;
                Ok(Planned {
                    program,
                    args: command.args.iter().map(OsString::from).collect(),
                    workdir,
                    sites,
                })
            })
            .collect()
    }

    /// Where the children of host `name` (a spawn's info key) run: a node
    /// of the placement by its name in the host list, or mpiexec's host.
    fn site_of(&self, name: &str, here: &LocalNames) -> Result<Site, String> {
        let nodes = &self.spec.placement.nodes;
        let Some(node) = nodes.iter().position(|n| n.name.eq_ignore_ascii_case(name)) else {
            if here.is_local(name) {
                return Ok(Site {
                    node: self.local_node(),
                    proxy: None,
                    host: None,
                });
            }
            let names: Vec<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
            return Err(format!(
                "host '{name}' is not one of the job's hosts ({}); spawned processes run on \
                 those or on mpiexec's host",
                names.join(", ")
            ));
        };
        let host = Some(nodes[node].name.clone());
        if nodes[node].local {
            return Ok(Site {
                node: Some(node),
                proxy: None,
                host,
            });
        }
        let running = self.remote_on(node).into_iter().any(|r| {
            let r = &self.ranks[r];
            r.ended.is_none() && r.reported.is_none()
        });
        let proxy = self
            .proxies
            .iter()
            .position(|p| p.node == node && p.control.is_some() && !p.lost)
            .filter(|_| running)
            .ok_or_else(|| {
                format!(
                    "no process of the job runs on host '{name}' any more (its proxy is gone), \
                     so nothing can be started there"
                )
            })?;
        Ok(Site {
            node: Some(node),
            proxy: Some(proxy),
            host,
        })
    }

    /// The node of the placement that is mpiexec's host, if any.
    fn local_node(&self) -> Option<usize> {
        let here = LocalNames {
            hostname: crate::hosts::this_hostname(),
            fork_everything: false,
        };
        self.spec
            .placement
            .nodes
            .iter()
            .position(|n| n.local && here.is_local(&n.name))
    }

    /// Adds the group of `commands` and starts its children as `planned`;
    /// returns how many started and the name of their KVS (their job id),
    /// or why not all of them did.
    fn start_group(
        &mut self,
        commands: &[SpawnCommand],
        planned: &[Planned],
    ) -> Result<(usize, String), String> {
        let runs: Vec<(&Planned, &Site)> = planned
            .iter()
            .flat_map(|p| p.sites.iter().map(move |site| (p, site)))
            .collect();
        let nodes: Vec<Option<usize>> = runs.iter().map(|(_, site)| site.node).collect();
        let group = self.server.add_group(commands, &nodes);
        let (base, size) = {
            let g = self.server.groups().group(group);
            (g.base, g.size())
        };
        let job_kvs = self.server.groups().group(0).kvs.name().to_string();
        self.ranks.extend(
            runs.iter()
                .map(|(_, site)| Rank::new(site.proxy.is_some(), site.node)),
        );
        // Each child's index among the group's children of its site.
        let same_site = |a: &Site, b: &Site| a.node == b.node && a.proxy == b.proxy;
        let local_position = |rank: usize| {
            let site = runs[rank].1;
            let id = runs[..rank]
                .iter()
                .filter(|(_, s)| same_site(s, site))
                .count();
            let count = runs.iter().filter(|(_, s)| same_site(s, site)).count();
            (id, count)
        };
        let mut remote_jobs: Vec<(usize, ProxyJob)> = Vec::new();
        for (rank, (p, site)) in runs.iter().enumerate() {
            let id = base + rank;
            let (local_id, local_count) = local_position(rank);
            let variables = |pmi: PmiAccess| {
                let mut vars: Vec<(OsString, OsString)> = match &site.host {
                    Some(host) => self
                        .spec
                        .hostname_env
                        .iter()
                        .map(|name| (name.clone(), OsString::from(host)))
                        .collect(),
                    None => Vec::new(),
                };
                let remote = matches!(pmi, PmiAccess::Port(_));
                vars.extend(job_variables(&RankVariables {
                    rank,
                    size,
                    local_id,
                    local_count,
                    jobid: &self.spec.jobid,
                    secret: &self.spec.secret,
                    pmi,
                }));
                if remote {
                    // The PMI server knows the child by its global id.
                    set(&mut vars, "PMI_ID".as_ref(), id.to_string().as_ref());
                }
                vars.extend(spawned_variables(base, &job_kvs));
                vars
            };
            if let Some(proxy) = site.proxy {
                let port = crate::net::pmi_port_value(self.proxies[proxy].server);
                let env = variables(PmiAccess::Port(port));
                // One job per host and command.
                let same = |j: &ProxyJob| {
                    j.program == p.program.path && j.args == p.args && j.workdir == p.workdir
                };
                let at = match remote_jobs.iter().position(|(x, j)| *x == proxy && same(j)) {
                    Some(at) => at,
                    None => {
                        remote_jobs.push((
                            proxy,
                            ProxyJob {
                                jobid: self.spec.jobid.clone(),
                                program: p.program.path.clone(),
                                argv0: p.program.given.clone(),
                                args: p.args.clone(),
                                workdir: p.workdir.clone(),
                                env: self.spec.env.clone(),
                                ranks: Vec::new(),
                            },
                        ));
                        remote_jobs.len() - 1
                    }
                };
                let job = &mut remote_jobs[at].1;
                job.ranks.push(ProxyRank {
                    rank: id,
                    env,
                    stdin: false,
                });
                continue;
            }
            let run = LocalProgram {
                program: &p.program,
                args: &p.args,
                workdir: &p.workdir,
            };
            let pgid = (self.pgid != 0).then_some(self.pgid);
            let started = start_with_pmi_socket(run, &self.spec.env, pgid, RankStdin::Null, |fd| {
                variables(PmiAccess::Fd(fd))
            })
            .and_then(|started| Ok((started.pid, PmiConnection::new(started.pmi)?)));
            match started {
                Ok((pid, connection)) => {
                    log::debug!("started rank {rank} of spawned group {group} as pid {pid}");
                    self.record_started(id, pid, connection);
                }
                Err(e) => {
                    self.abandon_group(base, size);
                    return Err(format!(
                        "cannot start rank {rank} of the spawned group ({}): {e}",
                        p.program.path.display()
                    ));
                }
            }
        }
        for (proxy, job) in remote_jobs {
            log::debug!(
                "spawned group {group}: {} process(es) to host {}",
                job.ranks.len(),
                self.proxies[proxy].host
            );
            if !self.send_job(proxy, &job) {
                self.abandon_group(base, size);
                return Err(format!(
                    "the proxy of host {} went away before the spawned processes could be sent",
                    self.proxies[proxy].host
                ));
            }
        }
        log::debug!(
            "spawned group {group}: {size} process(es), global ids {base}..{}",
            base + size
        );
        let jobid = self.server.groups().group(group).kvs.name().to_string();
        Ok((size, jobid))
    }

    /// Gives up the group of global ids `base..base + size`: the started
    /// children are killed, and their ends (like the never started ones')
    /// are not judged.
    fn abandon_group(&mut self, base: usize, size: usize) {
        for r in &mut self.ranks[base..base + size] {
            r.abandoned = true;
            r.connection = None;
            if r.remote {
                // Not sent to its proxy yet (the group is given up before
                // any remote child is sent).
                r.ended = Some(Termination::Signaled(libc::SIGKILL));
                continue;
            }
            match r.pid {
                // SAFETY: kill(2) on a child that has not been reaped (it
                // was just started), so its pid cannot have been reused.
                Some(pid) => unsafe {
                    libc::kill(pid, libc::SIGKILL);
                },
                None => r.ended = Some(Termination::Signaled(libc::SIGKILL)),
            }
        }
    }
}

/// The search path of a spawned program: the `path` info directories
/// first, then the job's `PATH` (or the default one); `None` without
/// `path` and `PATH` (the default applies).
fn search_path(info_path: Option<&str>, env: &[(OsString, OsString)]) -> Option<OsString> {
    let job_path = lookup(env, "PATH");
    match (info_path, job_path) {
        (None, p) => p.map(OsString::from),
        (Some(dirs), None) => Some(format!("{dirs}:{DEFAULT_PATH}").into()),
        (Some(dirs), Some(p)) => {
            let mut joined = OsString::from(dirs);
            joined.push(":");
            joined.push(p);
            Some(joined)
        }
    }
}

/// Logs why a spawn from `requester` failed (its answer carries the
/// reason; the requester reports it).
fn log_failure(requester: usize, reason: &str) {
    log::debug!("process {requester}: spawn failed: {reason}");
}

#[cfg(test)]
mod tests {
    use crate::hosts::LocalNames;
    use crate::job::testing::{connect_proxy, two_host_job};
    use crate::outcome::Termination;
    use crate::proxy_wire::{JobReader, ProxyRank};
    use crate::spawn_request::SpawnCommand;

    fn var(rank: &ProxyRank, name: &str) -> Option<String> {
        rank.env
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.to_string_lossy().into_owned())
    }

    #[test]
    fn children_of_a_remote_host_go_to_its_proxy() {
        let mut job = two_host_job();
        let mut proxy = connect_proxy(&mut job, 0);
        let here = LocalNames {
            hostname: "node-a".into(),
            fork_everything: false,
        };
        let site = job.site_of("node-b", &here).unwrap();
        assert_eq!(
            (site.node, site.proxy, site.host.as_deref()),
            (Some(1), Some(0), Some("node-b"))
        );
        let site = job.site_of("NODE-A", &here).unwrap();
        assert_eq!((site.node, site.proxy), (Some(0), None));
        let err = job.site_of("node-c", &here).unwrap_err();
        assert!(
            err.contains("not one of the job's hosts (node-a, node-b)"),
            "{err}"
        );

        // Two children onto node-b: one block for its proxy, global ids 3
        // and 4, known to the PMI server by those ids.
        let command = SpawnCommand {
            nprocs: 2,
            execname: "/bin/true".into(),
            args: vec!["x".into()],
            preput: Vec::new(),
            info: vec![("host".into(), "node-b".into())],
        };
        let commands = [command];
        let planned = job.plan(&commands).unwrap();
        let (size, _) = job.start_group(&commands, &planned).unwrap();
        assert_eq!(size, 2);
        let mut reader = JobReader::default();
        let block = loop {
            let line = proxy.receive();
            assert!(!line.is_empty(), "the block ended early");
            if let Some(block) = reader.line(&line).unwrap() {
                break block;
            }
        };
        let ids: Vec<usize> = block.ranks.iter().map(|r| r.rank).collect();
        assert_eq!(ids, vec![3, 4]);
        assert_eq!(block.args, vec![std::ffi::OsString::from("x")]);
        let second = &block.ranks[1];
        assert_eq!(var(second, "PMI_ID").as_deref(), Some("4"));
        assert_eq!(var(second, "PMI_RANK").as_deref(), Some("1"));
        assert_eq!(var(second, "PMI_SIZE").as_deref(), Some("2"));
        assert_eq!(var(second, "MPI_LOCALRANKID").as_deref(), Some("1"));
        assert_eq!(var(second, "OXMPI_WORLD_BASE").as_deref(), Some("3"));
        assert!(var(second, "PMI_PORT").is_some());
        assert!(job.ranks[3].remote && job.ranks[4].node == Some(1));

        // The proxy reports on them like on the host's ranks.
        proxy.send("started 4 777");
        job.read_control(0);
        assert_eq!(job.ranks[4].pid, Some(777));
        assert_eq!(job.ending, None);

        // Once nothing of the job runs on node-b, it takes no children.
        for r in 1..5 {
            job.ranks[r].ended = Some(Termination::Exited(0));
        }
        let err = job.site_of("node-b", &here).unwrap_err();
        assert!(
            err.contains("no process of the job runs on host 'node-b'"),
            "{err}"
        );
    }
}
