//! What the job's unit tests share: a [`Job`] built without starting
//! anything, on a placement of local and remote hosts, and the proxies of
//! its remote hosts.
//!
//! Invariant: nothing here has a pid, a process group or a launcher's pid,
//! so whatever a test makes the job do, it signals and reaps no process.

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::RawFd;
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use crate::connection::LineConnection;
use crate::hosts::{Node, Placement};
use crate::launch::JobSpec;
use crate::program::ResolvedProgram;
use crate::proxy_wire::MAX_CONTROL_LINE;
use crate::signals::SignalPipe;

use super::{Job, Proxy};

/// The job secret of every test job.
pub(super) const SECRET: &str = "00112233445566778899aabbccddeeff";

/// A job on `hosts`, each `(name, local, rank count)`; ranks are numbered
/// host after host. No rank is started and no listener is open.
pub(super) fn job(hosts: &[(&str, bool, usize)]) -> Job {
    let mut nodes = Vec::new();
    let mut node_of_rank = Vec::new();
    let mut host_of_rank = Vec::new();
    for (index, &(name, local, count)) in hosts.iter().enumerate() {
        let first = node_of_rank.len();
        nodes.push(Node {
            name: name.to_string(),
            local,
            ranks: (first..first + count).collect(),
        });
        node_of_rank.extend(std::iter::repeat_n(index, count));
        host_of_rank.extend(std::iter::repeat_n(name.to_string(), count));
    }
    let spec = JobSpec {
        program: ResolvedProgram {
            path: "/bin/true".into(),
            given: OsString::from("true"),
        },
        args: Vec::new(),
        workdir: "/".into(),
        env: Vec::new(),
        jobid: "4242-test".to_string(),
        secret: SECRET.to_string(),
        placement: Placement {
            nodes,
            node_of_rank,
            host_of_rank,
        },
        hostname_env: Vec::new(),
        remote: None,
        auto_cleanup: true,
        universe_size: None,
    };
    let signals = SignalPipe::unhooked().expect("a pipe for the test job");
    Job::new(spec, Vec::new(), signals, None)
}

/// Local rank 0 on node-a; ranks 1 and 2 on node-b, whose proxy (not
/// connected yet) is proxy 0.
pub(super) fn two_host_job() -> Job {
    let mut job = job(&[("node-a", true, 1), ("node-b", false, 2)]);
    add_proxy(&mut job, 1);
    job
}

/// Adds the proxy of remote node `node`, as it is once its launcher was
/// started (but without the launcher's pid) and before it connects back;
/// returns its id.
pub(super) fn add_proxy(job: &mut Job, node: usize) -> usize {
    let host = job.spec.placement.nodes[node].name.clone();
    job.proxies.push(Proxy {
        node,
        command: format!("ssh {host}"),
        host,
        server: "127.0.0.1:7000".parse().expect("an address"),
        launcher: None,
        launcher_ended: None,
        control: None,
        connected: false,
        control_closed: None,
        started_at: Instant::now(),
        lost: false,
    });
    job.proxies.len() - 1
}

/// Waits until `fd` is readable, for at most 100 ms.
pub(super) fn wait_readable(fd: RawFd) {
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: `pfd` is one valid pollfd, exclusively borrowed for the
    // duration of the call.
    unsafe { libc::poll(&mut pfd, 1, 100) };
}

/// The far end of a proxy's control connection, as the proxy sees it.
pub(super) struct ProxyEnd(BufReader<UnixStream>);

impl ProxyEnd {
    /// Sends `line` (and its newline) to mpiexec.
    pub(super) fn send(&mut self, line: &str) {
        let mut socket = self.0.get_ref();
        socket.write_all(format!("{line}\n").as_bytes()).unwrap();
    }

    /// The next line from mpiexec (empty at end of file).
    pub(super) fn receive(&mut self) -> String {
        let mut line = String::new();
        self.0.read_line(&mut line).unwrap();
        line.trim_end_matches('\n').to_string()
    }
}

/// Connects proxy `id` over a socketpair, as if it had been admitted after
/// reading its job; returns the proxy's end.
pub(super) fn connect_proxy(job: &mut Job, id: usize) -> ProxyEnd {
    let (ours, theirs) = UnixStream::pair().unwrap();
    theirs
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let control = LineConnection::new(ours.into(), &[], MAX_CONTROL_LINE).unwrap();
    job.proxies[id].control = Some(control);
    job.proxies[id].connected = true;
    ProxyEnd(BufReader::new(theirs))
}
