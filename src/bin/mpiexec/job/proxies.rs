//! The remote hosts: starting each one's launcher (which starts the proxy
//! there), the control connection to the proxy (the job it starts, the
//! signals it relays, its reports of the ranks' pids and ends), and giving
//! a host up when it is lost.
//!
//! Invariant: a host is lost when its launcher exits or its proxy
//! disconnects while ranks still run there (both, or one of them for
//! [`REPORT_GRACE`]), when its launcher cannot be run or exits before its
//! proxy connected, when the proxy does not connect within
//! [`PROXY_CONNECT_TIMEOUT`], or when it breaks the protocol; a lost
//! host's remaining ranks count as ended, its launcher is killed and its
//! connection closed (which makes the proxy kill its ranks).

use std::io::{self, Write};
use std::net::SocketAddr;
use std::os::fd::{FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

use crate::connection::LineConnection;
use crate::environment::PmiAccess;
use crate::launch::{launcher_command, proxy_header, start_launcher};
use crate::outcome::{Ending, Termination};
use crate::proxy_wire::{FromProxy, ProxyJob, ProxyRank, ToProxy};
use crate::stdin_forward::StdinForwarder;

use super::{Job, REPORT_GRACE};

/// How long a proxy has to connect back once its launcher started.
const PROXY_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

/// The proxy of one remote host.
pub(super) struct Proxy {
    /// Its node in the placement.
    pub(super) node: usize,
    pub(super) host: String,
    /// The listener address it and its ranks were given.
    pub(super) server: SocketAddr,
    /// The launcher command, for messages.
    pub(super) command: String,
    pub(super) launcher: Option<libc::pid_t>,
    pub(super) launcher_ended: Option<(Termination, Instant)>,
    pub(super) control: Option<LineConnection>,
    pub(super) connected: bool,
    pub(super) control_closed: Option<Instant>,
    pub(super) started_at: Instant,
    /// Lost (or cut off): its remaining ranks were given up.
    pub(super) lost: bool,
}

/// A pipe, both ends close-on-exec: (read end, write end).
fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: pipe2 succeeded, so both descriptors are open and ours.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

impl Proxy {
    /// Why this proxy's host is lost at `now`, `running` being the ranks
    /// still running there (neither ended nor reported); `None` while it
    /// is not. The problem names the launcher command, the PMI address
    /// and the ranks concerned.
    fn loss(&self, running: &[usize], now: Instant) -> Option<String> {
        let launcher_text = |how: Termination| match how {
            Termination::Exited(code) => {
                format!("its launcher `{}` exited with code {code}", self.command)
            }
            Termination::Signaled(signal) => format!(
                "its launcher `{}` was killed by signal {signal} ({})",
                self.command,
                crate::signals::signal_name(signal)
            ),
        };
        if !self.connected {
            if let Some((how, _)) = self.launcher_ended {
                Some(format!(
                    "{} before its proxy connected back",
                    launcher_text(how)
                ))
            } else if now >= self.started_at + PROXY_CONNECT_TIMEOUT {
                Some(format!(
                    "its proxy did not connect back to {} within {} seconds \
                     (can {} reach that address? see -pmi-addr)",
                    crate::net::pmi_port_value(self.server),
                    PROXY_CONNECT_TIMEOUT.as_secs(),
                    self.host
                ))
            } else {
                None
            }
        } else if running.is_empty() {
            None
        } else {
            let gone_for_long = |t: Option<Instant>| t.is_some_and(|t| now >= t + REPORT_GRACE);
            let launcher_at = self.launcher_ended.map(|(_, t)| t);
            let both = launcher_at.is_some() && self.control_closed.is_some();
            if both || gone_for_long(launcher_at) || gone_for_long(self.control_closed) {
                let what = match self.launcher_ended {
                    Some((how, _)) => launcher_text(how),
                    None => "its proxy closed its connection".to_string(),
                };
                let list = running
                    .iter()
                    .map(|r| r.to_string())
                    .collect::<Vec<_>>()
                    .join(",");
                let ranks = if running.len() == 1 { "rank" } else { "ranks" };
                Some(format!("{what} while {ranks} {list} ran there"))
            } else {
                None
            }
        }
    }
}

impl Job {
    /// Starts one launcher per remote node.
    pub(super) fn start_proxies(&mut self) {
        let Some(remote) = self.spec.remote.clone() else {
            return;
        };
        let nodes = self.spec.placement.nodes.clone();
        for (node_index, node) in nodes.iter().enumerate() {
            if node.local {
                continue;
            }
            let Some(addr) = remote.addresses.get(node_index).copied().flatten() else {
                continue;
            };
            let Some(port) = self
                .listeners
                .iter()
                .find(|(a, _)| *a == addr)
                .and_then(|(_, l)| l.local_addr().ok())
            else {
                continue;
            };
            let id = self.proxies.len();
            let argv = launcher_command(&remote, &node.name);
            let command = argv
                .iter()
                .map(|a| a.to_string_lossy())
                .collect::<Vec<_>>()
                .join(" ");
            log::debug!("host {}: starting `{command}`", node.name);
            let header = proxy_header(port, id, &self.spec.secret);
            let has_rank0 = node.ranks.first() == Some(&0);
            let started = pipe().and_then(|(read_end, write_end)| {
                if has_rank0 {
                    self.stdin = Some(StdinForwarder::to_pipe(write_end, header.into_bytes())?);
                } else {
                    // A line fits in the pipe: this write does not block.
                    std::fs::File::from(write_end).write_all(header.as_bytes())?;
                }
                start_launcher(&argv, read_end)
            });
            self.proxies.push(Proxy {
                node: node_index,
                host: node.name.clone(),
                server: port,
                command: remote
                    .command
                    .iter()
                    .map(|a| a.to_string_lossy())
                    .chain([node.name.as_str().into()])
                    .collect::<Vec<_>>()
                    .join(" "),
                launcher: None,
                launcher_ended: None,
                control: None,
                connected: false,
                control_closed: None,
                started_at: Instant::now(),
                lost: false,
            });
            match started {
                Ok(pid) => {
                    self.proxies[id].launcher = Some(pid);
                    self.proxy_of_pid.insert(pid, id);
                }
                Err(e) => {
                    let problem = format!("cannot run its launcher `{command}`: {e}");
                    self.lose_host(id, problem);
                    // The hosts after this one are never started.
                    let later: Vec<usize> = nodes[node_index + 1..]
                        .iter()
                        .filter(|n| !n.local)
                        .flat_map(|n| n.ranks.iter().copied())
                        .collect();
                    for rank in later {
                        self.ranks[rank].ended = Some(Termination::Signaled(libc::SIGKILL));
                    }
                    return;
                }
            }
        }
    }

    /// What proxy `id` starts.
    pub(super) fn proxy_job(&self, id: usize) -> ProxyJob {
        let proxy = &self.proxies[id];
        let node = &self.spec.placement.nodes[proxy.node];
        let port = crate::net::pmi_port_value(proxy.server);
        ProxyJob {
            jobid: self.spec.jobid.clone(),
            program: self.spec.program.path.clone(),
            argv0: self.spec.program.given.clone(),
            args: self.spec.args.clone(),
            workdir: self.spec.workdir.clone(),
            env: self.spec.env.clone(),
            ranks: node
                .ranks
                .iter()
                .map(|&rank| ProxyRank {
                    rank,
                    env: self
                        .spec
                        .rank_variables(rank, PmiAccess::Port(port.clone())),
                    stdin: rank == 0,
                })
                .collect(),
        }
    }

    /// Sends proxy `id` more processes to start (a spawn's children on
    /// its host); false when its connection is gone.
    pub(super) fn send_job(&mut self, id: usize, job: &ProxyJob) -> bool {
        let Some(c) = self.proxies[id].control.as_mut() else {
            return false;
        };
        for line in job.lines() {
            c.queue(line.as_bytes());
            c.queue(b"\n");
        }
        self.flush_control(id);
        self.proxies[id].control.is_some()
    }

    pub(super) fn send_control(&mut self, id: usize, msg: ToProxy) {
        if let Some(c) = self.proxies[id].control.as_mut() {
            c.queue(msg.line().as_bytes());
            c.queue(b"\n");
        }
        self.flush_control(id);
    }

    pub(super) fn flush_control(&mut self, id: usize) {
        let Some(c) = self.proxies[id].control.as_mut() else {
            return;
        };
        if let Err(e) = c.flush() {
            log::debug!("host {}: control write failed: {e}", self.proxies[id].host);
            self.control_closed(id);
        }
    }

    fn control_closed(&mut self, id: usize) {
        let proxy = &mut self.proxies[id];
        if proxy.control.take().is_some() {
            proxy.control_closed = Some(Instant::now());
        }
    }

    /// Reads and handles what proxy `id` reported.
    pub(super) fn read_control(&mut self, id: usize) {
        let Some(control) = self.proxies[id].control.as_mut() else {
            return;
        };
        let (lines, eof) = control.read_lines();
        for line in lines {
            let report = line
                .map_err(|e| e.to_string())
                .and_then(|l| FromProxy::parse(&l));
            match report {
                Ok(report) => self.on_report(id, report),
                Err(problem) => {
                    let problem = format!("its proxy broke the protocol: {problem}");
                    self.lose_host(id, problem);
                    return;
                }
            }
        }
        if eof {
            log::debug!(
                "host {}: proxy closed its connection",
                self.proxies[id].host
            );
            self.control_closed(id);
        }
    }

    fn on_report(&mut self, id: usize, report: FromProxy) {
        let rank = match &report {
            FromProxy::Started { rank, .. }
            | FromProxy::Failed { rank, .. }
            | FromProxy::Exited { rank, .. } => *rank,
        };
        let node = self.proxies[id].node;
        if self
            .ranks
            .get(rank)
            .is_none_or(|r| !r.remote || r.node != Some(node))
        {
            let problem = format!("its proxy reported on rank {rank}, which is not there");
            self.lose_host(id, problem);
            return;
        }
        log::debug!("host {}: {}", self.proxies[id].host, report.line());
        match report {
            FromProxy::Started { pid, .. } => self.ranks[rank].pid = Some(pid),
            FromProxy::Failed {
                not_found, reason, ..
            } => {
                let code = if not_found { 127 } else { 126 };
                self.ranks[rank].ended = Some(Termination::Exited(code));
                self.ranks[rank].connection = None;
                self.end(Ending::StartFailed {
                    rank,
                    host: Some(self.proxies[id].host.clone()),
                    problem: reason,
                    not_found,
                });
            }
            FromProxy::Exited { status, .. } => {
                if self.ranks[rank].ended.is_none() {
                    let how = Termination::from_wait_status(status);
                    self.ranks[rank].reported = Some((how, Instant::now()));
                }
            }
        }
    }

    /// Decides whether a remote host is lost: its launcher exited or its
    /// proxy disconnected with ranks still running there, or the proxy never
    /// connected.
    pub(super) fn check_hosts(&mut self) {
        let now = Instant::now();
        for id in 0..self.proxies.len() {
            let p = &self.proxies[id];
            if p.lost {
                continue;
            }
            let running: Vec<usize> = self
                .remote_on(p.node)
                .into_iter()
                .filter(|&r| self.ranks[r].ended.is_none() && self.ranks[r].reported.is_none())
                .collect();
            if let Some(problem) = p.loss(&running, now) {
                self.lose_host(id, problem);
            }
        }
    }

    /// Gives up host `id`: its remaining ranks count as ended, its proxy is
    /// cut off, and the job ends.
    fn lose_host(&mut self, id: usize, problem: String) {
        self.cut_off(id);
        let host = self.proxies[id].host.clone();
        self.end(Ending::HostLost { host, problem });
    }

    /// Closes proxy `id`'s connection (it then kills its ranks), kills its
    /// launcher, and marks its unfinished ranks as ended.
    pub(super) fn cut_off(&mut self, id: usize) {
        let proxy = &mut self.proxies[id];
        proxy.lost = true;
        proxy.control = None;
        if let Some(pid) = proxy.launcher {
            // SAFETY: kill(2) on a child that has not been reaped, so its pid
            // cannot have been reused.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
        let node = proxy.node;
        for rank in self.remote_on(node) {
            let r = &mut self.ranks[rank];
            if r.ended.is_none() {
                r.ended = Some(
                    r.reported
                        .map_or(Termination::Signaled(libc::SIGKILL), |(how, _)| how),
                );
                r.connection = None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::Proxy;
    use crate::job::testing::{connect_proxy, two_host_job};
    use crate::job::Job;
    use crate::outcome::{Ending, Termination};

    /// The proxy of node-b, its launcher started at `at`, not connected.
    fn proxy(at: Instant) -> Proxy {
        Proxy {
            node: 1,
            host: "node-b".to_string(),
            server: "10.0.0.1:5000".parse().unwrap(),
            command: "ssh -x node-b".to_string(),
            launcher: None,
            launcher_ended: None,
            control: None,
            connected: false,
            control_closed: None,
            started_at: at,
            lost: false,
        }
    }

    const SECOND: Duration = Duration::from_secs(1);

    #[test]
    fn host_is_lost_when_its_proxy_does_not_connect_back() {
        let at = Instant::now();
        let mut p = proxy(at);
        assert_eq!(p.loss(&[1, 2], at + 29 * SECOND), None);
        assert_eq!(
            p.loss(&[1, 2], at + 30 * SECOND).unwrap(),
            "its proxy did not connect back to 10.0.0.1:5000 within 30 seconds \
             (can node-b reach that address? see -pmi-addr)"
        );
        p.server = "[::1]:5000".parse().unwrap();
        assert!(p
            .loss(&[], at + 30 * SECOND)
            .unwrap()
            .contains("connect back to [::1]:5000 within"));
    }

    #[test]
    fn host_is_lost_at_once_when_its_launcher_ends_before_the_proxy_connects() {
        let at = Instant::now();
        let mut p = proxy(at);
        p.launcher_ended = Some((Termination::Exited(255), at));
        assert_eq!(
            p.loss(&[1, 2], at).unwrap(),
            "its launcher `ssh -x node-b` exited with code 255 before its proxy connected back"
        );
        p.launcher_ended = Some((Termination::Signaled(libc::SIGKILL), at));
        assert_eq!(
            p.loss(&[], at).unwrap(),
            "its launcher `ssh -x node-b` was killed by signal 9 (SIGKILL) \
             before its proxy connected back"
        );
    }

    #[test]
    fn connected_host_is_lost_when_launcher_or_proxy_go_while_ranks_run() {
        let at = Instant::now();
        let mut p = proxy(at);
        p.connected = true;
        assert_eq!(p.loss(&[2, 3], at + 3600 * SECOND), None);

        // The proxy's last reports may still be on their way for a while.
        p.launcher_ended = Some((Termination::Exited(0), at));
        assert_eq!(p.loss(&[2, 3], at), None);
        assert_eq!(
            p.loss(&[2, 3], at + SECOND).unwrap(),
            "its launcher `ssh -x node-b` exited with code 0 while ranks 2,3 ran there"
        );

        p.launcher_ended = None;
        p.control_closed = Some(at);
        assert_eq!(p.loss(&[3], at), None);
        assert_eq!(
            p.loss(&[3], at + SECOND).unwrap(),
            "its proxy closed its connection while rank 3 ran there"
        );

        // Both gone: no need to wait.
        p.launcher_ended = Some((Termination::Exited(1), at));
        assert_eq!(
            p.loss(&[3], at).unwrap(),
            "its launcher `ssh -x node-b` exited with code 1 while rank 3 ran there"
        );
        // Without ranks running there, nothing is lost.
        assert_eq!(p.loss(&[], at + SECOND), None);
    }

    fn lost_host_problem(job: &Job) -> &str {
        match &job.ending {
            Some(Ending::HostLost { host, problem }) if host == "node-b" => problem,
            other => panic!("node-b is not lost: {other:?}"),
        }
    }

    #[test]
    fn ranks_reported_or_ended_are_not_counted_as_running() {
        let mut job = two_host_job();
        let _proxy = connect_proxy(&mut job, 0);
        job.ranks[1].reported = Some((Termination::Exited(0), Instant::now()));
        let now = Instant::now();
        job.proxies[0].launcher_ended = Some((Termination::Exited(0), now));
        job.proxies[0].control_closed = Some(now);
        job.check_hosts();
        assert_eq!(
            lost_host_problem(&job),
            "its launcher `ssh node-b` exited with code 0 while rank 2 ran there"
        );

        let mut job = two_host_job();
        let _proxy = connect_proxy(&mut job, 0);
        job.ranks[1].reported = Some((Termination::Exited(0), Instant::now()));
        job.ranks[2].ended = Some(Termination::Exited(0));
        job.proxies[0].launcher_ended = Some((Termination::Exited(0), now));
        job.proxies[0].control_closed = Some(now);
        job.check_hosts();
        assert_eq!(job.ending, None);
        assert!(!job.proxies[0].lost);
    }

    #[test]
    fn host_is_lost_when_its_proxy_breaks_the_protocol() {
        let mut job = two_host_job();
        let mut proxy = connect_proxy(&mut job, 0);
        proxy.send("hello there");
        job.read_control(0);
        assert_eq!(
            lost_host_problem(&job),
            "its proxy broke the protocol: bad control line 'hello there'"
        );
        assert_eq!(proxy.receive(), "", "the connection was not closed");

        let mut job = two_host_job();
        let mut proxy = connect_proxy(&mut job, 0);
        proxy.send("started 0 99");
        job.read_control(0);
        assert_eq!(
            lost_host_problem(&job),
            "its proxy reported on rank 0, which is not there"
        );
        assert_eq!(job.ranks[0].pid, None);
    }
}
