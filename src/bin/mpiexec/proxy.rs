//! `mpiexec --proxy`: the part of a job that runs on a remote host, started
//! there by mpiexec through the launcher (`ssh host mpiexec --proxy`, or
//! `-launcher-exec CMD host mpiexec --proxy`).
//!
//! It reads one line on its stdin (`oxmpi-proxy server=ADDR:PORT id=N
//! secret=S`, written by mpiexec into the launcher's stdin, so the secret
//! never appears on a command line), connects back to mpiexec, proves the
//! secret, receives the job (see `proxy_wire.rs`), starts this host's ranks
//! and reports their pids and ends; later blocks of the same form bring
//! the children a spawn puts on this host, started and reported the same
//! way. Ranks talk PMI to mpiexec themselves.
//! Their stdout and stderr are the proxy's, so they travel back through the
//! launcher unchanged; rank 0, when it is here, also gets the rest of the
//! proxy's stdin.
//!
//! Invariants: no rank outlives the proxy (each has `PR_SET_PDEATHSIG`, and
//! the proxy kills their process group before it exits); when the
//! connection to mpiexec closes or breaks, the ranks get SIGKILL at once
//! (mpiexec is gone or gave up on this host); signals the proxy receives
//! (SIGINT, SIGTERM, SIGHUP) and `signal` lines from mpiexec go to every
//! rank; the proxy exits after its last rank was reaped and reported.

use std::collections::HashMap;
use std::ffi::OsString;
use std::io::{self, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::os::fd::AsRawFd;
use std::time::Duration;

use oxmpi::bootstrap::pmi::wire::{LineBuffer, PmiMessage};

use crate::job::{become_subreaper, reap_leftovers};
use crate::launch::{spawn_tied, RankStdin, TiedProcess};
use crate::proxy_wire::{FromProxy, JobReader, ProxyJob, ToProxy, MAX_CONTROL_LINE};
use crate::signals::{signal_group, SignalPipe};

/// Longest first line read from stdin.
const MAX_HEADER: usize = 4096;
/// How long connecting back to mpiexec may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// What the first stdin line says.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Header {
    server: String,
    id: usize,
    secret: String,
}

fn parse_header(line: &str) -> Result<Header, String> {
    let mut words = line.split_whitespace();
    if words.next() != Some("oxmpi-proxy") {
        return Err(
            "stdin does not start with an oxmpi-proxy line (this mode is for mpiexec's own use)"
                .into(),
        );
    }
    let (mut server, mut id, mut secret) = (None, None, None);
    for word in words {
        match word.split_once('=') {
            Some(("server", v)) => server = Some(v.to_string()),
            Some(("id", v)) => id = v.parse().ok(),
            Some(("secret", v)) => secret = Some(v.to_string()),
            _ => {}
        }
    }
    match (server, id, secret) {
        (Some(server), Some(id), Some(secret)) => Ok(Header { server, id, secret }),
        _ => Err(format!("incomplete oxmpi-proxy line '{line}'")),
    }
}

/// Reads the first line of stdin one byte at a time, so that nothing after
/// it is consumed (it belongs to rank 0).
fn read_header() -> Result<String, String> {
    // Not std's Stdin: it buffers, and would swallow rank 0's input.
    let mut line = Vec::new();
    let mut byte = 0u8;
    loop {
        // SAFETY: reads at most one byte into a local variable.
        let n = unsafe { libc::read(0, (&mut byte as *mut u8).cast(), 1) };
        match n {
            0 => return Err("stdin ended before the oxmpi-proxy line".into()),
            1 if byte == b'\n' => break,
            1 => line.push(byte),
            _ => {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(format!("reading stdin: {e}"));
            }
        }
        if line.len() > MAX_HEADER {
            return Err("oxmpi-proxy line too long".into());
        }
    }
    String::from_utf8(line).map_err(|_| "oxmpi-proxy line is not text".into())
}

/// Connects to mpiexec and authenticates.
fn connect(header: &Header) -> Result<TcpStream, String> {
    let addrs: Vec<SocketAddr> = header
        .server
        .to_socket_addrs()
        .map_err(|e| format!("bad server address '{}': {e}", header.server))?
        .collect();
    let mut last = None;
    for addr in addrs {
        match TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT) {
            Ok(stream) => {
                let _ = stream.set_nodelay(true);
                let hello = PmiMessage::new("proxy")
                    .with("id", header.id)
                    .with("secret", &header.secret);
                (&stream)
                    .write_all(hello.to_string().as_bytes())
                    .and_then(|()| (&stream).write_all(b"\n"))
                    .map_err(|e| format!("writing to mpiexec at {addr}: {e}"))?;
                return Ok(stream);
            }
            Err(e) => last = Some(format!("cannot connect to mpiexec at {addr}: {e}")),
        }
    }
    Err(last.unwrap_or_else(|| format!("no address for '{}'", header.server)))
}

/// Receives the job, blocking; returns it and the bytes read past it, or
/// `None` if mpiexec closed the connection instead.
fn receive_job(stream: &TcpStream) -> Result<Option<(ProxyJob, LineBuffer)>, String> {
    let mut buffer = LineBuffer::with_limit(MAX_CONTROL_LINE);
    let mut reader = JobReader::default();
    loop {
        while let Some(line) = buffer.next_line() {
            let line = line.map_err(|e| format!("job from mpiexec: {e}"))?;
            if let Some(job) = reader.line(&line)? {
                return Ok(Some((job, buffer)));
            }
        }
        match buffer.fill_from(&mut &*stream) {
            Ok(0) => {
                // mpiexec gave up on this host (the job ended first).
                log::debug!("mpiexec closed the connection before sending the job");
                return Ok(None);
            }
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(format!("receiving the job: {e}")),
        }
    }
}

/// The proxy's ranks while they run.
struct Ranks {
    /// pid → rank, for the ranks not yet reaped.
    alive: HashMap<libc::pid_t, usize>,
    pgid: libc::pid_t,
}

impl Ranks {
    fn signal(&self, signal: libc::c_int) {
        signal_group(self.pgid, signal);
        for &pid in self.alive.keys() {
            // SAFETY: kill(2) on a child that has not been reaped, so its pid
            // cannot have been reused.
            unsafe {
                libc::kill(pid, signal);
            }
        }
    }
}

/// Runs the proxy; returns its exit status.
pub fn run() -> i32 {
    match serve() {
        Ok(code) => code,
        Err(e) => {
            say!("mpiexec --proxy: {e}");
            2
        }
    }
}

fn serve() -> Result<i32, String> {
    let header = parse_header(&read_header()?)?;
    let stream = connect(&header)?;
    let Some((job, mut buffer)) = receive_job(&stream)? else {
        return Ok(1);
    };
    log::debug!(
        "proxy {}: {} rank(s) of {}",
        header.id,
        job.ranks.len(),
        job.program.display()
    );
    let signals =
        SignalPipe::install().map_err(|e| format!("cannot set up signal handling: {e}"))?;
    become_subreaper();
    let mut control = Some(stream);
    let mut ranks = Ranks {
        alive: HashMap::new(),
        pgid: 0,
    };
    start_job(&job, &mut ranks, &mut control);
    // Lines that came with the job.
    let mut reader = JobReader::default();
    let mut pending = Vec::new();
    while let Some(line) = buffer.next_line() {
        pending.push(line.ok());
    }
    for line in pending {
        handle_control_line(line.as_deref(), &mut reader, &mut ranks, &mut control);
    }

    while !ranks.alive.is_empty() {
        let mut fds = vec![libc::pollfd {
            fd: signals.fd(),
            events: libc::POLLIN,
            revents: 0,
        }];
        if let Some(c) = &control {
            fds.push(libc::pollfd {
                fd: c.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            });
        }
        // SAFETY: `fds` is a valid, exclusively borrowed array of
        // `fds.len()` entries for the duration of the call.
        let n = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, 1000) };
        if n < 0 && io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            std::thread::sleep(Duration::from_millis(10));
        }
        if fds[0].revents != 0 {
            for signal in signals.drain() {
                if signal != libc::SIGCHLD {
                    log::debug!("proxy received signal {signal}: forwarding it");
                    ranks.signal(signal);
                }
            }
        }
        if fds.len() > 1 && fds[1].revents != 0 {
            for line in read_control(&mut control, &mut buffer, &ranks) {
                handle_control_line(line.as_deref(), &mut reader, &mut ranks, &mut control);
            }
        }
        reap(&mut ranks, &mut control);
    }
    // Whatever the ranks left behind goes with them.
    signal_group(ranks.pgid, libc::SIGKILL);
    reap_leftovers(Duration::from_millis(100));
    let prefix = oxmpi::transport::shm::inbox::job_prefix(&job.jobid);
    let _ = oxmpi::transport::shm::segment::cleanup_prefix(&prefix);
    Ok(if control.is_some() { 0 } else { 1 })
}

/// Sends `report`; if mpiexec is unreachable, the ranks are killed.
fn report_to(control: &mut Option<TcpStream>, report: &FromProxy, ranks: &Ranks) {
    let Some(stream) = control else {
        return;
    };
    let line = format!("{}\n", report.line());
    if let Err(e) = stream.write_all(line.as_bytes()) {
        log::debug!("proxy: cannot report to mpiexec: {e}");
        lost_mpiexec(control, ranks);
    }
}

/// The connection to mpiexec is gone: nobody is left to serve the ranks.
fn lost_mpiexec(control: &mut Option<TcpStream>, ranks: &Ranks) {
    *control = None;
    ranks.signal(libc::SIGKILL);
}

/// Reads what mpiexec sent; returns the lines (`None`: unreadable).
fn read_control(
    control: &mut Option<TcpStream>,
    buffer: &mut LineBuffer,
    ranks: &Ranks,
) -> Vec<Option<String>> {
    let mut lines = Vec::new();
    let Some(stream) = control.as_ref() else {
        return lines;
    };
    match buffer.fill_from(&mut &*stream) {
        Ok(0) => {
            log::debug!("proxy: mpiexec closed the connection");
            lost_mpiexec(control, ranks);
        }
        Ok(_) => {
            while let Some(line) = buffer.next_line() {
                lines.push(line.ok());
            }
        }
        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
        Err(e) => {
            log::debug!("proxy: reading from mpiexec: {e}");
            lost_mpiexec(control, ranks);
        }
    }
    lines
}

/// One line from mpiexec after the job: a signal for the ranks, or a line
/// of more processes to start (a spawn's children on this host), which
/// start when their block is complete.
fn handle_control_line(
    line: Option<&str>,
    reader: &mut JobReader,
    ranks: &mut Ranks,
    control: &mut Option<TcpStream>,
) {
    let Some(line) = line else {
        log::warn!("proxy: unreadable control line");
        return;
    };
    if let Ok(ToProxy::Signal(signal)) = ToProxy::parse(line) {
        ranks.signal(signal);
        return;
    }
    match reader.line(line) {
        Ok(Some(job)) => {
            log::debug!(
                "proxy: {} more process(es) of {}",
                job.ranks.len(),
                job.program.display()
            );
            start_job(&job, ranks, control);
        }
        Ok(None) => {}
        Err(e) => log::warn!("proxy: {e}"),
    }
}

/// Starts the processes of `job` and reports each one's pid (or why it
/// could not start).
fn start_job(job: &ProxyJob, ranks: &mut Ranks, control: &mut Option<TcpStream>) {
    for rank in &job.ranks {
        let mut env = job.env.clone();
        for (name, value) in &rank.env {
            match env.iter_mut().find(|(k, _)| k == name) {
                Some(entry) => entry.1 = value.clone(),
                None => env.push((name.clone(), value.clone())),
            }
        }
        let started = spawn_tied(TiedProcess {
            program: &job.program,
            argv0: &job.argv0,
            args: &job.args,
            env,
            workdir: &job.workdir,
            pgid: (ranks.pgid != 0).then_some(ranks.pgid),
            stdin: if rank.stdin {
                RankStdin::Inherit
            } else {
                RankStdin::Null
            },
            keep_fd: None,
        });
        let report = match started {
            Ok(pid) => {
                if ranks.pgid == 0 {
                    ranks.pgid = pid;
                }
                ranks.alive.insert(pid, rank.rank);
                FromProxy::Started {
                    rank: rank.rank,
                    pid,
                }
            }
            Err(e) => FromProxy::Failed {
                rank: rank.rank,
                not_found: e.kind() == io::ErrorKind::NotFound,
                reason: e.to_string(),
            },
        };
        report_to(control, &report, ranks);
    }
}

/// Reaps ended ranks (and adopted descendants) and reports the ranks.
fn reap(ranks: &mut Ranks, control: &mut Option<TcpStream>) {
    loop {
        let mut status: libc::c_int = 0;
        // SAFETY: waitpid writes the status into our local variable.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if pid <= 0 {
            return;
        }
        if let Some(rank) = ranks.alive.remove(&pid) {
            report_to(control, &FromProxy::Exited { rank, status }, ranks);
        }
    }
}

/// Whether argv (after argv\[0\]) asks for proxy mode.
pub fn requested(args: &[OsString]) -> bool {
    args.len() == 1 && args[0] == "--proxy"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers() {
        assert_eq!(
            parse_header("oxmpi-proxy server=10.0.0.1:5 id=3 secret=abc").unwrap(),
            Header {
                server: "10.0.0.1:5".into(),
                id: 3,
                secret: "abc".into()
            }
        );
        assert!(parse_header("hello").is_err());
        assert!(parse_header("oxmpi-proxy server=x id=1").is_err());
        assert!(parse_header("oxmpi-proxy server=x id=z secret=s").is_err());
    }
}
