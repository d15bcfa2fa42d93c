//! Serving a PMI `spawn`: the children of all its commands start on
//! mpiexec's host as one new process group (see `groups.rs`), and the
//! requester gets one `spawn_result`.
//!
//! Invariants: everything a spawn needs (each program, working directory
//! and host) is checked before any child starts, so a bad request starts
//! nothing; a new group's KVS holds the preput keys before its first child
//! starts; children join the job's local process group, inherit stdout and
//! stderr, read stdin from /dev/null and count as local processes of the
//! job from then on. If a child cannot be started, the ones started before
//! it are killed and abandoned (their end is not judged), the rest count
//! as ended, and the requester is told `rc=-1`; the job goes on.

use std::ffi::OsString;
use std::path::PathBuf;

use crate::connection::PmiConnection;
use crate::environment::{job_variables, lookup, spawned_variables, PmiAccess, RankVariables};
use crate::hosts::LocalNames;
use crate::launch::{start_with_pmi_socket, LocalProgram, RankStdin};
use crate::outcome::Termination;
use crate::pmi_server::{spawn_failed, spawn_succeeded, Action};
use crate::program::{resolve, ResolvedProgram, DEFAULT_PATH};
use crate::spawn_request::{settings, SpawnCommand};

use super::{Job, Rank};

/// One command of a spawn, checked and ready to start.
struct Planned {
    program: ResolvedProgram,
    args: Vec<OsString>,
    workdir: PathBuf,
    nprocs: usize,
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
                let settings = settings(&command.info, |h| here.is_local(h)).map_err(what)?;
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
                    nprocs: command.nprocs,
                })
            })
            .collect()
    }

    /// Adds the group of `commands` and starts its children as `planned`;
    /// returns how many started and the name of their KVS (their job id),
    /// or why not all of them did.
    fn start_group(
        &mut self,
        commands: &[SpawnCommand],
        planned: &[Planned],
    ) -> Result<(usize, String), String> {
        let group = self.server.add_group(commands);
        let (base, size) = {
            let g = self.server.groups().group(group);
            (g.base, g.size())
        };
        let job_kvs = self.server.groups().group(0).kvs.name().to_string();
        self.ranks.extend((0..size).map(|_| Rank::new(false)));
        let runs = planned
            .iter()
            .flat_map(|p| std::iter::repeat_n(p, p.nprocs));
        for (rank, p) in runs.enumerate() {
            let id = base + rank;
            let run = LocalProgram {
                program: &p.program,
                args: &p.args,
                workdir: &p.workdir,
            };
            let pgid = (self.pgid != 0).then_some(self.pgid);
            let variables = |fd| {
                let mut vars = job_variables(&RankVariables {
                    rank,
                    size,
                    local_id: rank,
                    local_count: size,
                    jobid: &self.spec.jobid,
                    secret: &self.spec.secret,
                    pmi: PmiAccess::Fd(fd),
                });
                vars.extend(spawned_variables(base, &job_kvs));
                vars
            };
            let started =
                start_with_pmi_socket(run, &self.spec.env, pgid, RankStdin::Null, variables)
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
