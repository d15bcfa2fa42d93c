//! The library's PMI client: talks to oxmpi's mpiexec or MPICH's Hydra
//! over the inherited `PMI_FD` socket, or over TCP with `PMI_PORT`/`PMI_ID`.
//! Requests are synchronous: one message out, the matching answer back.
//!
//! It speaks PMI-1 (one line per message, `super::wire`) or PMI-2
//! (length-prefixed messages, `super::wire2`; its requests are in
//! `super::client2`), as `OXMPI_PMI` says (`config::PmiChoice`: PMI-1
//! unless told). Both start with the same PMI-1 `init` line; the version the
//! server accepts decides the framing from then on. Callers see one
//! interface: every method below does the same under either version, or
//! says it cannot (`spawn` under PMI-2).
//!
//! One extension of oxmpi's mpiexec: a process that asked for them
//! ([`PmiClient::subscribe_failures`], under `mpiexec
//! -disable-auto-cleanup`) may find `cmd=oxmpi_proc_failed rank=R` lines
//! among the answers, sent by the server when rank R ended badly. They are
//! set aside wherever they come ([`PmiClient::take_failures`]), and
//! [`PmiClient::poll_failures`] reads any that wait without blocking.
//!
//! The connection belongs to the process, not to an epoch: it is opened at
//! the first initialization and reused by every later one (an inherited
//! `PMI_FD` cannot be reopened once the server closed it).
use std::fs::File;
use std::io::{self, Write};
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicI32, AtomicU8, Ordering};

use thiserror::Error;

use super::wire::{LineBuffer, PmiMessage, WireError};
use super::wire2::{self, FrameBuffer};
use crate::config::PmiChoice;

#[derive(Debug, Error)]
pub enum PmiError {
    #[error("PMI connection: {0}")]
    Io(#[from] io::Error),
    #[error("PMI message: {0}")]
    Wire(#[from] WireError),
    #[error("PMI server closed the connection")]
    Closed,
    #[error("PMI protocol: {0}")]
    Protocol(String),
    #[error("PMI environment: {0}")]
    Environment(String),
}

/// What the launcher told this process about its job.
#[derive(Debug, Clone)]
pub struct JobPlacement {
    pub rank: u32,
    pub size: u32,
    pub appnum: i32,
    /// How many processes the job may have (`MPI_UNIVERSE_SIZE`); negative
    /// when the launcher does not say.
    pub universe_size: i32,
    pub kvsname: String,
    /// The server's limits (`get_maxes`).
    pub vallen_max: usize,
}

pub struct PmiClient {
    stream: File,
    reader: Reader,
    pub placement: JobPlacement,
    /// Whether `finalize` was sent (the server then closes the connection).
    pub(super) finalized: bool,
    /// Ranks the server reported failed, not taken yet.
    failures: Vec<u32>,
}

/// How messages come in: PMI-1 lines until the server accepted PMI-2,
/// length-prefixed messages after.
enum Reader {
    Lines(LineBuffer),
    Frames(FrameBuffer),
}

impl Reader {
    fn next_message(&mut self) -> Option<Result<PmiMessage, WireError>> {
        match self {
            Reader::Lines(lines) => lines.next_message(),
            Reader::Frames(frames) => frames.next_message(),
        }
    }

    fn fill_from(&mut self, stream: &mut File) -> io::Result<usize> {
        match self {
            Reader::Lines(lines) => lines.fill_from(stream),
            Reader::Frames(frames) => frames.fill_from(stream),
        }
    }
}

/// The PMI version of the connection whose descriptor is `ABORT_FD`
/// (1 or 2), for framing `abort`.
static ABORT_VERSION: AtomicU8 = AtomicU8::new(1);

/// One command of a PMI `spawn` (`MPI_Comm_spawn_multiple` has several).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpawnCommand {
    pub command: String,
    pub args: Vec<String>,
    pub maxprocs: u32,
    /// Info keys and values for the launcher (`host`, `wdir`, `path`).
    pub info: Vec<(String, String)>,
}

/// A spawn's answer as a result: `rc=0`, or the launcher's reason (its
/// field `reason`, words joined by `_` on the wire).
pub(super) fn spawn_outcome(answer: &PmiMessage, reason: &str) -> Result<(), PmiError> {
    match answer.get("rc") {
        Some("0") => Ok(()),
        _ => Err(PmiError::Protocol(
            answer
                .get(reason)
                .map_or_else(|| format!("{answer}"), |m| m.replace('_', " ")),
        )),
    }
}

/// Two commands of a spawn, for the PMI-1 and PMI-2 clients' tests.
#[cfg(test)]
pub(super) fn test_spawn_commands() -> [SpawnCommand; 2] {
    [
        SpawnCommand {
            command: "./a".into(),
            args: vec!["x y".into()],
            maxprocs: 2,
            info: vec![("wdir".into(), "/tmp".into())],
        },
        SpawnCommand {
            command: "./b".into(),
            args: vec![],
            maxprocs: 1,
            info: vec![],
        },
    ]
}

/// The server's notice that a rank failed (see the module's doc).
pub const FAILURE_NOTICE: &str = "oxmpi_proc_failed";
/// The request that asks for failure notices.
pub const FAILURE_SUBSCRIBE: &str = "oxmpi_failure_notices";

/// The connection's descriptor, for sending `abort` without taking any lock
/// another thread may hold (and without a second descriptor, so a process
/// has exactly the descriptors it had before its first initialization).
static ABORT_FD: AtomicI32 = AtomicI32::new(-1);

fn env_number(name: &str) -> Result<Option<i64>, PmiError> {
    match std::env::var(name) {
        Ok(v) => v
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| PmiError::Environment(format!("{name}={v} is not a number"))),
        Err(_) => Ok(None),
    }
}

impl PmiClient {
    /// Connects as the environment says; `Ok(None)` for a singleton (no PMI
    /// variables set).
    pub fn from_env() -> Result<Option<PmiClient>, PmiError> {
        if let Some(fd) = env_number("PMI_FD")? {
            let rank = env_number("PMI_RANK")?.unwrap_or(0);
            let size = env_number("PMI_SIZE")?.unwrap_or(1);
            // SAFETY: PMI_FD names a socket the launcher left open for this
            // process; nothing else in the process owns it.
            let owned = unsafe { OwnedFd::from_raw_fd(fd as RawFd) };
            set_cloexec(&owned)?;
            let client = PmiClient::handshake(
                File::from(owned),
                None,
                rank as u32,
                size as u32,
                crate::config::get().pmi,
            )?;
            return Ok(Some(client));
        }
        if let Ok(port) = std::env::var("PMI_PORT") {
            let id = env_number("PMI_ID")?.unwrap_or(0);
            let stream = TcpStream::connect(port.trim())?;
            stream.set_nodelay(true)?;
            let file = File::from(OwnedFd::from(stream));
            return Ok(Some(PmiClient::handshake(
                file,
                Some(id),
                0,
                1,
                crate::config::get().pmi,
            )?));
        }
        Ok(None)
    }

    fn handshake(
        stream: File,
        pmi_id: Option<i64>,
        rank: u32,
        size: u32,
        choice: PmiChoice,
    ) -> Result<PmiClient, PmiError> {
        ABORT_VERSION.store(1, Ordering::SeqCst);
        ABORT_FD.store(stream.as_raw_fd(), Ordering::SeqCst);
        let mut client = PmiClient {
            stream,
            reader: Reader::Lines(LineBuffer::new()),
            placement: JobPlacement {
                rank,
                size,
                appnum: 0,
                universe_size: size as i32,
                kvsname: String::new(),
                vallen_max: 1024,
            },
            finalized: false,
            failures: Vec::new(),
        };
        if let Some(id) = pmi_id {
            let mut initack = PmiMessage::new("initack").with("pmiid", id);
            // oxmpi's mpiexec accepts a TCP connection only with the job's
            // secret; other servers (Hydra) do not set it.
            if let Some(secret) = &crate::config::get().job_secret {
                initack.push("secret", secret.expose());
            }
            client.send(&initack)?;
            client.expect("initack")?;
            for _ in 0..3 {
                let set = client.expect("set")?;
                if let Some(v) = set.get("size") {
                    client.placement.size = parse_field("size", v)?;
                }
                if let Some(v) = set.get("rank") {
                    client.placement.rank = parse_field("rank", v)?;
                }
            }
        }
        if choice != PmiChoice::V1 {
            let init = client.request(
                PmiMessage::new("init")
                    .with("pmi_version", 2)
                    .with("pmi_subversion", 0),
                "response_to_init",
            )?;
            if init.get("rc") == Some("0") && init.get("pmi_version") == Some("2") {
                client.switch_to_frames();
                client.init_v2()?;
                log::debug!("PMI-2 connected: {:?}", client.placement);
                return Ok(client);
            }
            if choice == PmiChoice::V2 {
                return Err(PmiError::Protocol(format!(
                    "the launcher refused PMI-2 (OXMPI_PMI=2): {init}"
                )));
            }
            log::debug!("the launcher refused PMI-2 ({init}); asking for PMI-1");
        }
        let init = client.request(
            PmiMessage::new("init")
                .with("pmi_version", 1)
                .with("pmi_subversion", 1),
            "response_to_init",
        )?;
        if init.get("rc") != Some("0") {
            return Err(PmiError::Protocol(format!(
                "server refused PMI 1.1: {init:?}"
            )));
        }
        let maxes = client.request(PmiMessage::new("get_maxes"), "maxes")?;
        if let Some(v) = maxes.get("vallen_max") {
            client.placement.vallen_max = parse_field("vallen_max", v)?;
        }
        let appnum = client.request(PmiMessage::new("get_appnum"), "appnum")?;
        client.placement.appnum = parse_field("appnum", appnum.require("appnum")?)?;
        let kvs = client.request(PmiMessage::new("get_my_kvsname"), "my_kvsname")?;
        client.placement.kvsname = kvs.require("kvsname")?.to_string();
        let universe = client.request(PmiMessage::new("get_universe_size"), "universe_size")?;
        // -1 (Hydra's and mpiexec's default): not known.
        client.placement.universe_size = parse_field("size", universe.require("size")?)?;
        log::debug!("PMI connected: {:?}", client.placement);
        Ok(client)
    }

    /// The handshake over `stream` as rank 0 of 2 (for tests: no
    /// environment, and the abort descriptor left alone).
    #[cfg(test)]
    pub(super) fn connect_for_test(stream: File) -> Result<PmiClient, PmiError> {
        PmiClient::connect_for_test_with(stream, PmiChoice::V1)
    }

    /// Same, asking for the PMI version `choice` says.
    #[cfg(test)]
    pub(super) fn connect_for_test_with(
        stream: File,
        choice: PmiChoice,
    ) -> Result<PmiClient, PmiError> {
        let client = PmiClient::handshake(stream, None, 0, 2, choice);
        ABORT_FD.store(-1, Ordering::SeqCst);
        client
    }

    /// Whether the connection speaks PMI-2.
    pub fn is_pmi2(&self) -> bool {
        matches!(self.reader, Reader::Frames(_))
    }

    /// From now on messages are PMI-2's, both ways.
    fn switch_to_frames(&mut self) {
        if let Reader::Lines(lines) = &mut self.reader {
            let mut frames = FrameBuffer::new();
            frames.feed(&lines.take_pending());
            self.reader = Reader::Frames(frames);
        }
        if ABORT_FD.load(Ordering::SeqCst) == self.stream.as_raw_fd() {
            ABORT_VERSION.store(2, Ordering::SeqCst);
        }
    }

    pub(super) fn send(&mut self, msg: &PmiMessage) -> Result<(), PmiError> {
        let bytes = match self.reader {
            Reader::Lines(_) => msg.render()?.into_bytes(),
            Reader::Frames(_) => wire2::encode(msg)?,
        };
        log::trace!("PMI -> {msg}");
        self.stream.write_all(&bytes)?;
        Ok(())
    }

    fn receive(&mut self) -> Result<PmiMessage, PmiError> {
        loop {
            if let Some(msg) = self.reader.next_message() {
                let msg = msg?;
                log::trace!("PMI <- {msg:?}");
                if self.set_aside(&msg)? {
                    continue;
                }
                return Ok(msg);
            }
            if self.reader.fill_from(&mut self.stream)? == 0 {
                return Err(PmiError::Closed);
            }
        }
    }

    /// Sets a failure notice aside; false for any other message.
    fn set_aside(&mut self, msg: &PmiMessage) -> Result<bool, PmiError> {
        if !msg.is(FAILURE_NOTICE) {
            return Ok(false);
        }
        let rank: u32 = parse_field("rank", msg.require("rank")?)?;
        if !self.failures.contains(&rank) {
            self.failures.push(rank);
        }
        Ok(true)
    }

    /// Asks the server for failure notices (oxmpi's mpiexec only: other
    /// servers do not know the request).
    pub fn subscribe_failures(&mut self) -> Result<(), PmiError> {
        let answer = self.request(
            PmiMessage::new(FAILURE_SUBSCRIBE),
            &format!("{FAILURE_SUBSCRIBE}_result"),
        )?;
        match answer.get("rc") {
            Some("0") => Ok(()),
            _ => Err(PmiError::Protocol(format!(
                "failure notices refused: {answer:?}"
            ))),
        }
    }

    /// Reads, without blocking, what the server has sent meanwhile (only
    /// failure notices can come unasked), then returns the failures not
    /// taken yet.
    pub fn poll_failures(&mut self) -> Result<Vec<u32>, PmiError> {
        let mut pollfd = libc::pollfd {
            fd: self.stream.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd, timeout 0: poll only fills `revents`.
        let ready = unsafe { libc::poll(&mut pollfd, 1, 0) };
        if ready > 0 && !self.finalized {
            if self.reader.fill_from(&mut self.stream)? == 0 {
                return Err(PmiError::Closed);
            }
            while let Some(msg) = self.reader.next_message() {
                let msg = msg?;
                if !self.set_aside(&msg)? {
                    return Err(PmiError::Protocol(format!("unasked message {msg:?}")));
                }
            }
        }
        Ok(self.take_failures())
    }

    /// The failures reported since the last call.
    pub fn take_failures(&mut self) -> Vec<u32> {
        std::mem::take(&mut self.failures)
    }

    pub(super) fn expect(&mut self, cmd: &str) -> Result<PmiMessage, PmiError> {
        let msg = self.receive()?;
        if !msg.is(cmd) {
            return Err(PmiError::Protocol(format!(
                "expected cmd={cmd}, got {msg:?}"
            )));
        }
        Ok(msg)
    }

    pub(super) fn request(
        &mut self,
        msg: PmiMessage,
        answer: &str,
    ) -> Result<PmiMessage, PmiError> {
        self.send(&msg)?;
        self.expect(answer)
    }

    /// Publishes `key=value` in this process's key-value space.
    pub fn put(&mut self, key: &str, value: &str) -> Result<(), PmiError> {
        let kvsname = self.placement.kvsname.clone();
        self.put_in(&kvsname, key, value)
    }

    /// Publishes `key=value` in the key-value space `kvsname` (another
    /// world's of the job, where the server allows it).
    pub fn put_in(&mut self, kvsname: &str, key: &str, value: &str) -> Result<(), PmiError> {
        if self.is_pmi2() {
            return self.put_v2(kvsname, key, value);
        }
        let answer = self.request(
            PmiMessage::new("put")
                .with("kvsname", kvsname)
                .with("key", key)
                .with("value", value),
            "put_result",
        )?;
        match answer.get("rc") {
            Some("0") => Ok(()),
            _ => Err(PmiError::Protocol(format!("put {key} refused: {answer:?}"))),
        }
    }

    /// Looks a key up in this process's key-value space; `Ok(None)` when
    /// it is not (yet) visible.
    pub fn get(&mut self, key: &str) -> Result<Option<String>, PmiError> {
        let kvsname = self.placement.kvsname.clone();
        self.get_from(&kvsname, key)
    }

    /// Looks a key up in the key-value space `kvsname`.
    pub fn get_from(&mut self, kvsname: &str, key: &str) -> Result<Option<String>, PmiError> {
        if self.is_pmi2() {
            return self.get_v2(kvsname, key);
        }
        let answer = self.request(
            PmiMessage::new("get")
                .with("kvsname", kvsname)
                .with("key", key),
            "get_result",
        )?;
        match answer.get("rc") {
            Some("0") => Ok(Some(answer.require("value")?.to_string())),
            _ => Ok(None),
        }
    }

    /// Asks the launcher to start the processes of `commands` as one new
    /// world, with `preput` in that world's key-value space before any of
    /// them starts (PMI-1 `spawn`: one `mcmd` block per command, one
    /// answer). `Err` carries the server's reason.
    pub fn spawn(
        &mut self,
        commands: &[SpawnCommand],
        preput: &[(String, String)],
    ) -> Result<(), PmiError> {
        if self.is_pmi2() {
            return self.spawn_v2(commands, preput);
        }
        let mut text = String::new();
        for (i, c) in commands.iter().enumerate() {
            let mut m = PmiMessage::new("spawn")
                .with("nprocs", c.maxprocs)
                .with("execname", &c.command)
                .with("totspawns", commands.len())
                .with("spawnssofar", i + 1);
            for (n, arg) in c.args.iter().enumerate() {
                m.push(format!("arg{}", n + 1), arg);
            }
            m.push("argcnt", c.args.len());
            m.push("preput_num", preput.len());
            for (n, (k, v)) in preput.iter().enumerate() {
                m.push(format!("preput_key_{n}"), k);
                m.push(format!("preput_val_{n}"), v);
            }
            m.push("info_num", c.info.len());
            for (n, (k, v)) in c.info.iter().enumerate() {
                m.push(format!("info_key_{n}"), k);
                m.push(format!("info_val_{n}"), v);
            }
            text.push_str(&m.render_multiline()?);
        }
        log::trace!("PMI -> {}", text.replace('\n', " "));
        self.stream.write_all(text.as_bytes())?;
        let answer = self.expect("spawn_result")?;
        spawn_outcome(&answer, "msg")
    }

    /// The launcher's name service (`MPI_Publish_name`): whether `service`
    /// was published (false: published already).
    pub fn publish_name(&mut self, service: &str, port: &str) -> Result<bool, PmiError> {
        if self.is_pmi2() {
            return self.publish_name_v2(service, port);
        }
        let answer = self.request(
            PmiMessage::new("publish_name")
                .with("service", service)
                .with("port", port),
            "publish_result",
        )?;
        Ok(answer.get("rc") == Some("0"))
    }

    /// `MPI_Unpublish_name`: whether `service` was published.
    pub fn unpublish_name(&mut self, service: &str) -> Result<bool, PmiError> {
        if self.is_pmi2() {
            return self.unpublish_name_v2(service);
        }
        let answer = self.request(
            PmiMessage::new("unpublish_name").with("service", service),
            "unpublish_result",
        )?;
        Ok(answer.get("rc") == Some("0"))
    }

    /// `MPI_Lookup_name`: the port published for `service`, if any.
    pub fn lookup_name(&mut self, service: &str) -> Result<Option<String>, PmiError> {
        if self.is_pmi2() {
            return self.lookup_name_v2(service);
        }
        let answer = self.request(
            PmiMessage::new("lookup_name").with("service", service),
            "lookup_result",
        )?;
        match answer.get("rc") {
            Some("0") => Ok(Some(answer.require("port")?.to_string())),
            _ => Ok(None),
        }
    }

    /// The job-wide barrier (also the point where Hydra 4.0.2 makes puts
    /// visible): PMI-1 `barrier_in`, PMI-2 `kvs-fence`.
    pub fn barrier(&mut self) -> Result<(), PmiError> {
        if self.is_pmi2() {
            return self.fence_v2();
        }
        self.request(PmiMessage::new("barrier_in"), "barrier_out")?;
        Ok(())
    }

    /// The job's `PMI_process_mapping` (a PMI-1 key, a PMI-2 job
    /// attribute), `None` when the launcher does not say.
    pub fn process_mapping(&mut self) -> Result<Option<String>, PmiError> {
        if self.is_pmi2() {
            return self.job_attribute("PMI_process_mapping");
        }
        self.get("PMI_process_mapping")
    }

    /// Tells the server this process is done with PMI.
    pub fn finalize(&mut self) -> Result<(), PmiError> {
        if self.finalized {
            return Ok(());
        }
        self.finalized = true;
        if self.is_pmi2() {
            self.request_v2(PmiMessage::new("finalize"), "finalize-response")?;
        } else {
            self.request(PmiMessage::new("finalize"), "finalize_ack")?;
        }
        ABORT_FD.store(-1, Ordering::SeqCst);
        Ok(())
    }
}

pub(super) fn parse_field<T: std::str::FromStr>(name: &str, value: &str) -> Result<T, PmiError> {
    value
        .parse()
        .map_err(|_| PmiError::Protocol(format!("{name}={value} is not a number")))
}

fn set_cloexec(fd: &OwnedFd) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: fcntl on a descriptor we own, with integer arguments only.
    let flags = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETFD) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above.
    if unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETFD, flags | libc::FD_CLOEXEC) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Asks the launcher to end the whole job with `code`. Returns whether the
/// request was sent (false for a singleton or after PMI finalize).
pub fn send_abort(code: i32, message: &str) -> bool {
    let fd = ABORT_FD.load(Ordering::SeqCst);
    if fd < 0 {
        return false;
    }
    let text: String = message
        .chars()
        .map(|c| if c.is_ascii_graphic() { c } else { '_' })
        .take(512)
        .collect();
    let encoded = if ABORT_VERSION.load(Ordering::SeqCst) == 2 {
        // PMI-2's abort carries no exit code: `exitcode` is oxmpi's
        // addition (other servers ignore it).
        let msg = PmiMessage::new("abort")
            .with("isworld", "TRUE")
            .with("msg", text)
            .with("exitcode", code);
        wire2::encode(&msg).ok()
    } else {
        let mut msg = PmiMessage::new("abort").with("exitcode", code);
        if !text.is_empty() {
            msg.push("error_msg", text);
        }
        msg.render().ok().map(String::into_bytes)
    };
    let Some(bytes) = encoded else {
        return false;
    };
    // SAFETY: write(2) from a valid buffer of `bytes.len()` bytes to the PMI
    // descriptor this module registered; a stale descriptor only fails.
    let written = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
    written == bytes.len() as isize
}

impl Drop for PmiClient {
    fn drop(&mut self) {
        let _ = ABORT_FD.compare_exchange(
            self.stream.as_raw_fd(),
            -1,
            Ordering::SeqCst,
            Ordering::SeqCst,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader};
    use std::os::unix::net::UnixStream;

    /// A client over one end of a socket pair, after the handshake, whose
    /// other end is returned as the server.
    fn connected() -> (PmiClient, BufReader<UnixStream>) {
        let (ours, theirs) = UnixStream::pair().expect("socket pair");
        let server = std::thread::spawn(move || {
            let mut reader = BufReader::new(theirs);
            for answer in [
                "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0",
                "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024",
                "cmd=appnum appnum=0",
                "cmd=my_kvsname kvsname=kvs_1",
                "cmd=universe_size size=2",
            ] {
                let mut line = String::new();
                reader.read_line(&mut line).expect("request");
                writeln!(reader.get_mut(), "{answer}").expect("answer");
            }
            reader
        });
        let client =
            PmiClient::connect_for_test(File::from(OwnedFd::from(ours))).expect("handshake");
        (client, server.join().expect("server thread"))
    }

    #[test]
    fn failure_notices_are_set_aside_wherever_they_come() {
        let (mut client, mut server) = connected();
        // Nothing sent: a poll returns at once with nothing.
        assert!(client.poll_failures().expect("poll").is_empty());
        // A notice before an answer: the answer still answers.
        writeln!(server.get_mut(), "cmd=oxmpi_proc_failed rank=3").unwrap();
        writeln!(server.get_mut(), "cmd=get_result rc=0 value=v").unwrap();
        assert_eq!(client.get("k").expect("get"), Some("v".to_string()));
        let mut request = String::new();
        server.read_line(&mut request).unwrap();
        assert!(request.starts_with("cmd=get "), "{request}");
        // A notice that comes unasked, twice for the same rank.
        writeln!(server.get_mut(), "cmd=oxmpi_proc_failed rank=1").unwrap();
        writeln!(server.get_mut(), "cmd=oxmpi_proc_failed rank=1").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert_eq!(client.poll_failures().expect("poll"), vec![3, 1]);
        assert!(client.poll_failures().expect("poll").is_empty());
        // Anything else unasked breaks the protocol.
        writeln!(server.get_mut(), "cmd=barrier_out").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(matches!(client.poll_failures(), Err(PmiError::Protocol(_))));
    }

    #[test]
    fn a_bad_notice_is_a_protocol_error() {
        let (mut client, mut server) = connected();
        writeln!(server.get_mut(), "cmd=oxmpi_proc_failed rank=x").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(client.poll_failures().is_err());
    }

    #[test]
    fn subscribing_asks_the_server() {
        let (mut client, mut server) = connected();
        let answer = std::thread::spawn(move || {
            let mut line = String::new();
            server.read_line(&mut line).unwrap();
            writeln!(server.get_mut(), "cmd=oxmpi_failure_notices_result rc=0").unwrap();
            line
        });
        client.subscribe_failures().expect("subscribed");
        assert_eq!(answer.join().unwrap(), "cmd=oxmpi_failure_notices\n");
    }

    #[test]
    fn spawn_sends_one_block_per_command_and_reads_one_answer() {
        let (mut client, mut server) = connected();
        let served = std::thread::spawn(move || {
            let mut lines = Vec::new();
            let mut blocks = 0;
            while blocks < 2 {
                let mut line = String::new();
                server.read_line(&mut line).unwrap();
                blocks += usize::from(line == "endcmd\n");
                lines.push(line.trim_end().to_string());
            }
            writeln!(server.get_mut(), "cmd=spawn_result rc=-1 msg=no_such_host").unwrap();
            lines
        });
        let commands = test_spawn_commands();
        let preput = [("oxmpi.parent_port".to_string(), "p:1".to_string())];
        let err = client.spawn(&commands, &preput).unwrap_err();
        assert_eq!(err.to_string(), "PMI protocol: no such host");
        let lines = served.join().unwrap();
        let first: Vec<&str> = lines.iter().map(String::as_str).take(14).collect();
        assert_eq!(
            first,
            [
                "mcmd=spawn",
                "nprocs=2",
                "execname=./a",
                "totspawns=2",
                "spawnssofar=1",
                "arg1=x y",
                "argcnt=1",
                "preput_num=1",
                "preput_key_0=oxmpi.parent_port",
                "preput_val_0=p:1",
                "info_num=1",
                "info_key_0=wdir",
                "info_val_0=/tmp",
                "endcmd"
            ]
        );
        assert!(lines[14..].contains(&"spawnssofar=2".to_string()));
        assert!(lines[14..].contains(&"argcnt=0".to_string()));
    }
}
