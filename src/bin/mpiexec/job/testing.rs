//! What the job's unit tests share: a [`Job`] built without starting
//! anything, on a placement of local and remote hosts, and the proxies of
//! its remote hosts.
//!
//! Invariant: nothing here has a pid, a process group or a launcher's pid,
//! so whatever a test makes the job do, it signals and reaps no process.

use std::ffi::OsString;
use std::os::fd::RawFd;
use std::time::Instant;

use crate::hosts::{Node, Placement};
use crate::launch::JobSpec;
use crate::program::ResolvedProgram;
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
    };
    let signals = SignalPipe::unhooked().expect("a pipe for the test job");
    Job::new(spec, Vec::new(), signals, None)
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
