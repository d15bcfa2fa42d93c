//! Admission of TCP connections: accepting them on the listeners, reading
//! their first line (see `handshake.rs`), and handing those that carry the
//! job secret to the PMI server (a remote rank) or to the proxy code (a
//! proxy).
//!
//! Invariant: a TCP connection is served only after its first line carried
//! the job secret: `cmd=initack pmiid=<rank> secret=<s>` from a remote
//! rank, or `cmd=proxy id=<host> secret=<s>` from a proxy; anything else
//! (another command, a wrong or missing secret, no complete line before the
//! peer closes, the line limit or the handshake timeout) is dropped before
//! it can reach the PMI server. A rank is admitted only if it runs on a
//! remote host, has not ended and has no connection yet; a proxy only if
//! its host has one that is neither connected nor lost. At most
//! [`MAX_PENDING`] connections wait to authenticate at once.

use std::io;
use std::net::SocketAddr;
use std::os::fd::OwnedFd;
use std::time::Instant;

use oxmpi::bootstrap::pmi::wire::PmiMessage;

use crate::connection::{LineConnection, PmiConnection};
use crate::proxy_wire::{ToProxy, MAX_CONTROL_LINE};

use super::handshake::{check_first_line, Claim, FirstLine, Pending};
use super::Job;

/// Unauthenticated connections kept at once (the oldest is dropped).
const MAX_PENDING: usize = 64;

impl Job {
    /// Accepts every waiting connection on listener `i`.
    pub(super) fn accept(&mut self, i: usize) {
        loop {
            match self.listeners[i].1.accept() {
                Ok((stream, peer)) => {
                    log::debug!("connection from {peer}");
                    if stream.set_nonblocking(true).is_err() {
                        continue;
                    }
                    let _ = stream.set_nodelay(true);
                    if self.pending.len() >= MAX_PENDING {
                        let dropped = self.pending.remove(0);
                        log::warn!(
                            "too many unauthenticated connections: dropped {}",
                            dropped.peer
                        );
                    }
                    self.pending
                        .push(Pending::new(stream, peer, Instant::now()));
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    if e.kind() != io::ErrorKind::WouldBlock {
                        log::debug!("accept: {e}");
                    }
                    return;
                }
            }
        }
    }

    /// Reads what unauthenticated connections sent; admits those whose
    /// first line carries the secret, drops the rest.
    pub(super) fn service_pending(&mut self) {
        let now = Instant::now();
        let mut index = 0;
        while index < self.pending.len() {
            match self.pending[index].read_first_line(now) {
                FirstLine::Complete(end) => {
                    let p = self.pending.remove(index);
                    self.admit(p, end);
                }
                FirstLine::Missing => {
                    let p = self.pending.remove(index);
                    log::debug!(
                        "dropped a connection from {} that sent no first line",
                        p.peer
                    );
                }
                FirstLine::Waiting => index += 1,
            }
        }
    }

    /// Handles the first line (ending at `end`) of an accepted connection.
    fn admit(&mut self, pending: Pending, end: usize) {
        let peer = pending.peer;
        let line = String::from_utf8_lossy(&pending.bytes[..end]).into_owned();
        let rest = pending.bytes[end + 1..].to_vec();
        let claim = match check_first_line(&line, &self.spec.secret) {
            Ok(claim) => claim,
            Err(refusal) => {
                match refusal.stderr_line(peer) {
                    // A wrong or missing secret from something that speaks
                    // our protocol is worth a line: a rank refused here
                    // fails to start.
                    Some(line) => say!("{line}"),
                    None => log::debug!("dropped a connection from {peer}: {refusal}"),
                }
                return;
            }
        };
        let socket = OwnedFd::from(pending.stream);
        match claim {
            Claim::Proxy { id } => self.admit_proxy(id, socket, &rest, peer),
            Claim::Rank { rank, initack } => self.admit_rank(rank, socket, &rest, &initack, peer),
        }
    }

    fn admit_rank(
        &mut self,
        rank: usize,
        socket: OwnedFd,
        rest: &[u8],
        initack: &PmiMessage,
        peer: SocketAddr,
    ) {
        let acceptable = self
            .ranks
            .get(rank)
            .is_some_and(|r| r.remote && r.ended.is_none() && r.connection.is_none());
        if !acceptable {
            log::warn!("refused a PMI connection from {peer} for rank {rank}: not a running remote rank without a connection");
            return;
        }
        match PmiConnection::with_input(socket, rest) {
            Ok(connection) => {
                log::debug!("rank {rank} connected from {peer}");
                self.ranks[rank].connection = Some(connection);
                let actions = self.server.handle(rank, initack);
                self.apply(actions);
                // Lines that came with the first one.
                self.read_rank(rank);
            }
            Err(e) => log::warn!("rank {rank}'s connection from {peer}: {e}"),
        }
    }

    fn admit_proxy(&mut self, id: usize, socket: OwnedFd, rest: &[u8], peer: SocketAddr) {
        if self.proxies.get(id).is_none_or(|p| p.connected || p.lost) {
            log::warn!("refused a proxy connection from {peer} for host {id}");
            return;
        }
        let mut control = match LineConnection::new(socket, rest, MAX_CONTROL_LINE) {
            Ok(c) => c,
            Err(e) => {
                log::warn!("proxy connection from {peer}: {e}");
                return;
            }
        };
        let job = self.proxy_job(id);
        for line in job.lines() {
            control.queue(line.as_bytes());
            control.queue(b"\n");
        }
        log::debug!(
            "host {}: proxy connected from {peer}",
            self.proxies[id].host
        );
        let proxy = &mut self.proxies[id];
        proxy.connected = true;
        proxy.control = Some(control);
        // A signal sent while the proxy was connecting must still arrive.
        if self.ending.is_some() {
            self.send_control(id, ToProxy::Signal(libc::SIGKILL));
        }
        self.flush_control(id);
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;
    use std::io::{BufRead, BufReader, Read, Write};
    use std::net::{Shutdown, TcpListener, TcpStream};
    use std::os::fd::AsRawFd;
    use std::time::{Duration, Instant};

    use super::MAX_PENDING;
    use crate::job::testing::{two_host_job, wait_readable, SECRET};
    use crate::job::Job;
    use crate::outcome::{Ending, Termination};
    use crate::proxy_wire::JobReader;

    /// Local rank 0 on node-a; remote ranks 1 and 2 on node-b, whose proxy
    /// is proxy 0.
    fn listening_job() -> Job {
        let mut job = two_host_job();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        job.listeners.push(("127.0.0.1".parse().unwrap(), listener));
        job
    }

    /// Connects to the job's listener and has the job accept the
    /// connection; returns the peer's end.
    fn connect(job: &mut Job) -> TcpStream {
        let addr = job.listeners[0].1.local_addr().unwrap();
        let client = TcpStream::connect(addr).unwrap();
        client
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let me = client.local_addr().unwrap();
        for _ in 0..100 {
            job.accept(0);
            if job.pending.last().is_some_and(|p| p.peer == me) {
                return client;
            }
            wait_readable(job.listeners[0].1.as_raw_fd());
        }
        panic!("the job did not accept the connection from {me}");
    }

    /// Serves the pending connections until each was admitted or dropped.
    fn settle(job: &mut Job) {
        for _ in 0..100 {
            job.service_pending();
            let Some(p) = job.pending.first() else {
                return;
            };
            wait_readable(p.stream.as_raw_fd());
        }
        panic!("a connection was neither admitted nor dropped");
    }

    /// Connects, sends `bytes`, and lets the job serve them.
    fn present(job: &mut Job, bytes: &[u8]) -> TcpStream {
        let mut client = connect(job);
        client.write_all(bytes).unwrap();
        settle(job);
        client
    }

    /// Whether mpiexec closed its end of `client` without sending anything.
    fn closed_by_mpiexec(client: &TcpStream) -> bool {
        let mut byte = [0u8; 1];
        match (&*client).read(&mut byte) {
            Ok(0) => true,
            Err(e) => e.kind() == std::io::ErrorKind::ConnectionReset,
            Ok(_) => false,
        }
    }

    /// The next `count` lines mpiexec sent on `reader`.
    fn lines(reader: &mut impl BufRead, count: usize) -> Vec<String> {
        (0..count)
            .map(|_| {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                line.trim_end_matches('\n').to_string()
            })
            .collect()
    }

    fn initack(rank: usize, secret: &str) -> Vec<u8> {
        format!("cmd=initack pmiid={rank} secret={secret}\n").into_bytes()
    }

    #[test]
    fn rank_presenting_the_secret_is_admitted_and_answered() {
        let mut job = listening_job();
        let client = present(&mut job, &initack(1, SECRET));
        assert!(job.pending.is_empty());
        assert!(job.ranks[1].connection.is_some());
        assert!(job.ranks[2].connection.is_none());
        let mut reader = BufReader::new(&client);
        assert_eq!(
            lines(&mut reader, 4),
            [
                "cmd=initack",
                "cmd=set size=3",
                "cmd=set rank=1",
                "cmd=set debug=0"
            ]
        );
        assert_eq!(job.ending, None);
    }

    #[test]
    fn requests_sent_with_the_first_line_are_served() {
        let mut job = listening_job();
        let mut bytes = initack(2, SECRET);
        bytes.extend_from_slice(b"cmd=get_appnum\n");
        let client = present(&mut job, &bytes);
        let mut reader = BufReader::new(&client);
        assert_eq!(lines(&mut reader, 5)[4], "cmd=appnum appnum=0");
    }

    #[test]
    fn first_line_followed_by_a_close_is_still_admitted() {
        let mut job = listening_job();
        let client = connect(&mut job);
        (&client).write_all(&initack(1, SECRET)).unwrap();
        client.shutdown(Shutdown::Write).unwrap();
        settle(&mut job);
        // Answered, then let go at its end of file.
        let mut reader = BufReader::new(&client);
        assert_eq!(lines(&mut reader, 1), ["cmd=initack"]);
        for _ in 0..100 {
            let Some(connection) = &job.ranks[1].connection else {
                break;
            };
            wait_readable(connection.fd());
            job.read_rank(1);
        }
        assert!(job.ranks[1].connection.is_none());
        assert_eq!(job.ending, None);
    }

    #[test]
    fn wrong_or_missing_secret_is_refused() {
        let mut job = listening_job();
        let other = "ffeeddccbbaa99887766554433221100";
        let cases: Vec<Vec<u8>> = vec![
            initack(1, other),
            initack(1, &SECRET[..31]),
            initack(1, &format!("{SECRET}0")),
            initack(1, &SECRET.to_uppercase()),
            b"cmd=initack pmiid=1 secret=\n".to_vec(),
            b"cmd=initack pmiid=1\n".to_vec(),
            // The carriage return is part of the secret given.
            format!("cmd=initack pmiid=1 secret={SECRET}\r\n").into_bytes(),
            format!("cmd=proxy id=0 secret={other}\n").into_bytes(),
            b"cmd=proxy id=0\n".to_vec(),
        ];
        for bytes in cases {
            let client = present(&mut job, &bytes);
            let shown = String::from_utf8_lossy(&bytes).into_owned();
            assert!(closed_by_mpiexec(&client), "{shown:?} was not refused");
            assert!(job.pending.is_empty(), "{shown:?}");
            assert!(job.ranks[1].connection.is_none(), "{shown:?}");
            assert!(!job.proxies[0].connected, "{shown:?}");
        }
        assert_eq!(job.ending, None);
    }

    #[test]
    fn garbage_is_dropped() {
        let mut job = listening_job();
        let cases: Vec<Vec<u8>> = vec![
            b"hello\n".to_vec(),
            b"GET / HTTP/1.1\r\n".to_vec(),
            b"\n".to_vec(),
            b"\x00\xff\xfe\n".to_vec(),
            // PMI, and the secret, but not a command that opens a session.
            format!("cmd=init pmi_version=1 pmi_subversion=1 secret={SECRET}\n").into_bytes(),
        ];
        for bytes in cases {
            let client = present(&mut job, &bytes);
            let shown = String::from_utf8_lossy(&bytes).into_owned();
            assert!(closed_by_mpiexec(&client), "{shown:?} was not dropped");
            assert!(job.pending.is_empty(), "{shown:?}");
            assert!(job.ranks.iter().all(|r| r.connection.is_none()));
        }
    }

    #[test]
    fn truncated_line_waits_then_is_dropped_when_the_peer_closes() {
        let mut job = listening_job();
        let client = connect(&mut job);
        let line = initack(1, SECRET);
        (&client).write_all(&line[..line.len() - 1]).unwrap();
        // However long the wait for its bytes, the line stays incomplete.
        for _ in 0..3 {
            job.service_pending();
            assert_eq!(job.pending.len(), 1);
        }
        client.shutdown(Shutdown::Write).unwrap();
        settle(&mut job);
        assert!(closed_by_mpiexec(&client));
        assert!(job.ranks[1].connection.is_none());
    }

    #[test]
    fn silent_connection_is_dropped_at_close_or_deadline() {
        let mut job = listening_job();
        let client = connect(&mut job);
        job.service_pending();
        assert_eq!(job.pending.len(), 1, "dropped before its deadline");
        client.shutdown(Shutdown::Write).unwrap();
        settle(&mut job);
        assert!(closed_by_mpiexec(&client));

        let client = connect(&mut job);
        job.service_pending();
        assert_eq!(job.pending.len(), 1);
        job.pending[0].deadline = Instant::now();
        job.service_pending();
        assert!(job.pending.is_empty(), "kept past its deadline");
        assert!(closed_by_mpiexec(&client));
    }

    #[test]
    fn only_a_running_remote_rank_without_a_connection_is_admitted() {
        let mut job = listening_job();
        for rank in [0, 3, 99] {
            let client = present(&mut job, &initack(rank, SECRET));
            assert!(closed_by_mpiexec(&client), "rank {rank} was admitted");
        }
        assert!(job.ranks[0].connection.is_none());
        let client = present(
            &mut job,
            format!("cmd=initack pmiid=x secret={SECRET}\n").as_bytes(),
        );
        assert!(closed_by_mpiexec(&client));

        job.ranks[2].ended = Some(Termination::Exited(0));
        let client = present(&mut job, &initack(2, SECRET));
        assert!(closed_by_mpiexec(&client), "an ended rank was admitted");
        assert!(job.ranks[2].connection.is_none());

        let first = present(&mut job, &initack(1, SECRET));
        let second = present(&mut job, &initack(1, SECRET));
        assert!(closed_by_mpiexec(&second), "a rank was admitted twice");
        // The first connection still serves the rank.
        let mut reader = BufReader::new(&first);
        assert_eq!(lines(&mut reader, 4)[0], "cmd=initack");
        (&first).write_all(b"cmd=get_appnum\n").unwrap();
        wait_readable(job.ranks[1].connection.as_ref().unwrap().fd());
        job.read_rank(1);
        assert_eq!(lines(&mut reader, 1), ["cmd=appnum appnum=0"]);
    }

    #[test]
    fn proxy_presenting_the_secret_gets_its_job() {
        let mut job = listening_job();
        let client = present(
            &mut job,
            format!("cmd=proxy id=0 secret={SECRET}\n").as_bytes(),
        );
        assert!(job.proxies[0].connected);
        assert!(job.proxies[0].control.is_some());
        let mut reader = BufReader::new(&client);
        let mut jobs = JobReader::default();
        let received = loop {
            let line = lines(&mut reader, 1).remove(0);
            if let Some(received) = jobs.line(&line).unwrap() {
                break received;
            }
        };
        assert_eq!(received.jobid, "4242-test");
        let ranks: Vec<(usize, bool)> = received.ranks.iter().map(|r| (r.rank, r.stdin)).collect();
        assert_eq!(ranks, [(1, false), (2, false)]);
        let port = (OsString::from("PMI_PORT"), OsString::from("127.0.0.1:7000"));
        assert!(received.ranks[0].env.contains(&port));

        // One connection per proxy; none for a host without one.
        let again = present(
            &mut job,
            format!("cmd=proxy id=0 secret={SECRET}\n").as_bytes(),
        );
        assert!(closed_by_mpiexec(&again));
        let unknown = present(
            &mut job,
            format!("cmd=proxy id=1 secret={SECRET}\n").as_bytes(),
        );
        assert!(closed_by_mpiexec(&unknown));
    }

    #[test]
    fn proxy_connecting_while_the_job_ends_is_told_to_kill() {
        let mut job = listening_job();
        job.ending = Some(Ending::TimedOut { seconds: 1 });
        let client = present(
            &mut job,
            format!("cmd=proxy id=0 secret={SECRET}\n").as_bytes(),
        );
        let mut reader = BufReader::new(&client);
        let mut jobs = JobReader::default();
        while jobs
            .line(&lines(&mut reader, 1).remove(0))
            .unwrap()
            .is_none()
        {}
        assert_eq!(lines(&mut reader, 1), ["signal 9"]);
    }

    #[test]
    fn lost_proxy_is_not_admitted() {
        let mut job = listening_job();
        job.proxies[0].lost = true;
        let client = present(
            &mut job,
            format!("cmd=proxy id=0 secret={SECRET}\n").as_bytes(),
        );
        assert!(closed_by_mpiexec(&client));
        assert!(!job.proxies[0].connected);
    }

    #[test]
    fn oldest_unauthenticated_connection_makes_room() {
        let mut job = listening_job();
        let clients: Vec<TcpStream> = (0..MAX_PENDING).map(|_| connect(&mut job)).collect();
        assert_eq!(job.pending.len(), MAX_PENDING);
        let newest = connect(&mut job);
        assert_eq!(job.pending.len(), MAX_PENDING);
        assert!(closed_by_mpiexec(&clients[0]));
        assert_eq!(job.pending[0].peer, clients[1].local_addr().unwrap());
        assert_eq!(
            job.pending.last().unwrap().peer,
            newest.local_addr().unwrap()
        );
    }
}
