//! The control protocol between mpiexec and the proxy it starts on each
//! remote host (through ssh, rsh or the `-launcher-exec` command).
//!
//! The proxy connects to mpiexec's PMI listener and authenticates with one
//! PMI-1 line, `cmd=proxy id=<host index> secret=<job secret>`. From then
//! on both sides exchange lines of space-separated words whose first word
//! is the verb; any text that may hold arbitrary bytes (paths, arguments,
//! environment) travels hex-encoded, so a line never holds a space or a
//! newline of its own and needs no quoting.
//!
//! mpiexec to proxy: the job ([`ProxyJob`], a block of lines ended by
//! `start`), then `signal <n>` whenever the ranks must get a signal, and
//! a block of the same form for each spawn that puts children on this host
//! (their `rank` is their job-wide index).
//! Proxy to mpiexec: `started <rank> <pid>`, `failed <rank> <not-found 0|1>
//! <hex reason>` (could not start it), `exited <rank> <wait status>`.
//! The proxy closes the connection after its last rank ended; a proxy that
//! sees the connection close kills its ranks.
//!
//! Invariant: [`ProxyJob::lines`] and [`JobReader`] round-trip any job,
//! whatever bytes its strings hold.

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::PathBuf;

/// Longest control line accepted (a job's environment can be large).
pub const MAX_CONTROL_LINE: usize = 16 << 20;

/// One rank a proxy starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxyRank {
    /// The rank.
    pub rank: usize,
    /// Its own variables (PMI and job variables), applied last.
    pub env: Vec<(OsString, OsString)>,
    /// Whether it gets the proxy's stdin (rank 0); otherwise /dev/null.
    pub stdin: bool,
}

/// What a proxy must start.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProxyJob {
    /// The job id (for cleaning up shared memory it leaves behind).
    pub jobid: String,
    /// Absolute path of the program.
    pub program: PathBuf,
    /// `argv[0]` as written on mpiexec's command line.
    pub argv0: OsString,
    /// The program's arguments.
    pub args: Vec<OsString>,
    /// Working directory.
    pub workdir: PathBuf,
    /// Environment shared by the ranks.
    pub env: Vec<(OsString, OsString)>,
    /// The ranks to start on this host.
    pub ranks: Vec<ProxyRank>,
}

/// A message from a proxy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FromProxy {
    /// The rank runs with this pid.
    Started {
        /// The rank.
        rank: usize,
        /// Its pid on the remote host.
        pid: i32,
    },
    /// The rank could not be started.
    Failed {
        /// The rank.
        rank: usize,
        /// The program or directory does not exist there.
        not_found: bool,
        /// The system's reason.
        reason: String,
    },
    /// The rank ended with this `waitpid` status.
    Exited {
        /// The rank.
        rank: usize,
        /// Raw wait status.
        status: i32,
    },
}

/// A message to a proxy once its job started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToProxy {
    /// Send this signal to every rank (and the ranks' process group).
    Signal(i32),
}

/// Hex encoding of arbitrary bytes (lowercase, two digits per byte).
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut text = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        text.push(DIGITS[(b >> 4) as usize] as char);
        text.push(DIGITS[(b & 15) as usize] as char);
    }
    text
}

/// Decodes [`hex`]; `None` for anything else. `-` stands for no bytes.
pub fn unhex(text: &str) -> Option<Vec<u8>> {
    if text == "-" {
        return Some(Vec::new());
    }
    if text.len() % 2 != 0 {
        return None;
    }
    let digit = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    text.as_bytes()
        .chunks(2)
        .map(|pair| Some(digit(pair[0])? << 4 | digit(pair[1])?))
        .collect()
}

fn word(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        "-".to_string()
    } else {
        hex(bytes)
    }
}

fn os(text: &str) -> Result<OsString, String> {
    unhex(text)
        .map(OsString::from_vec)
        .ok_or_else(|| format!("bad hex field '{text}'"))
}

impl ProxyJob {
    /// The job as control lines (each without its newline), `start` last.
    pub fn lines(&self) -> Vec<String> {
        let mut lines = vec![
            format!("jobid {}", word(self.jobid.as_bytes())),
            format!("program {}", word(self.program.as_os_str().as_bytes())),
            format!("argv0 {}", word(self.argv0.as_bytes())),
            format!("wdir {}", word(self.workdir.as_os_str().as_bytes())),
        ];
        lines.extend(
            self.args
                .iter()
                .map(|a| format!("arg {}", word(a.as_bytes()))),
        );
        lines.extend(
            self.env
                .iter()
                .map(|(k, v)| format!("env {} {}", word(k.as_bytes()), word(v.as_bytes()))),
        );
        for rank in &self.ranks {
            lines.push(format!("rank {} {}", rank.rank, u8::from(rank.stdin)));
            lines.extend(
                rank.env
                    .iter()
                    .map(|(k, v)| format!("renv {} {}", word(k.as_bytes()), word(v.as_bytes()))),
            );
        }
        lines.push("start".to_string());
        lines
    }
}

/// Collects a [`ProxyJob`] from its lines.
#[derive(Debug, Default)]
pub struct JobReader {
    job: ProxyJob,
}

impl JobReader {
    /// Takes one line: `Ok(Some(job))` after `start`, `Ok(None)` while more
    /// lines are expected.
    pub fn line(&mut self, line: &str) -> Result<Option<ProxyJob>, String> {
        let words: Vec<&str> = line.split(' ').collect();
        let field = |i: usize| -> Result<&str, String> {
            words
                .get(i)
                .copied()
                .ok_or_else(|| format!("control line '{line}' is too short"))
        };
        match words[0] {
            "jobid" => {
                self.job.jobid = String::from_utf8_lossy(
                    &unhex(field(1)?).ok_or_else(|| format!("bad jobid in '{line}'"))?,
                )
                .into_owned();
            }
            "program" => self.job.program = PathBuf::from(os(field(1)?)?),
            "argv0" => self.job.argv0 = os(field(1)?)?,
            "wdir" => self.job.workdir = PathBuf::from(os(field(1)?)?),
            "arg" => self.job.args.push(os(field(1)?)?),
            "env" => self.job.env.push((os(field(1)?)?, os(field(2)?)?)),
            "rank" => {
                let rank = field(1)?
                    .parse()
                    .map_err(|_| format!("bad rank in '{line}'"))?;
                self.job.ranks.push(ProxyRank {
                    rank,
                    env: Vec::new(),
                    stdin: field(2)? == "1",
                });
            }
            "renv" => {
                let pair = (os(field(1)?)?, os(field(2)?)?);
                self.job
                    .ranks
                    .last_mut()
                    .ok_or_else(|| "renv before any rank".to_string())?
                    .env
                    .push(pair);
            }
            "start" => return Ok(Some(std::mem::take(&mut self.job))),
            other => return Err(format!("unknown control line '{other}'")),
        }
        Ok(None)
    }
}

impl ToProxy {
    /// The message as a control line (without newline).
    pub fn line(self) -> String {
        match self {
            ToProxy::Signal(signal) => format!("signal {signal}"),
        }
    }

    /// Parses a control line sent after `start`.
    pub fn parse(line: &str) -> Result<ToProxy, String> {
        match line.split_once(' ') {
            Some(("signal", n)) => n
                .trim()
                .parse()
                .map(ToProxy::Signal)
                .map_err(|_| format!("bad signal in '{line}'")),
            _ => Err(format!("unknown control line '{line}'")),
        }
    }
}

impl FromProxy {
    /// The message as a control line (without newline).
    pub fn line(&self) -> String {
        match self {
            FromProxy::Started { rank, pid } => format!("started {rank} {pid}"),
            FromProxy::Failed {
                rank,
                not_found,
                reason,
            } => format!(
                "failed {rank} {} {}",
                u8::from(*not_found),
                word(reason.as_bytes())
            ),
            FromProxy::Exited { rank, status } => format!("exited {rank} {status}"),
        }
    }

    /// Parses a line from a proxy.
    pub fn parse(line: &str) -> Result<FromProxy, String> {
        let words: Vec<&str> = line.split(' ').collect();
        let bad = || format!("bad control line '{line}'");
        let number = |i: usize| -> Result<i64, String> {
            words.get(i).and_then(|w| w.parse().ok()).ok_or_else(bad)
        };
        let rank = || -> Result<usize, String> { usize::try_from(number(1)?).map_err(|_| bad()) };
        match words[0] {
            "started" if words.len() == 3 => Ok(FromProxy::Started {
                rank: rank()?,
                pid: number(2)? as i32,
            }),
            "failed" if words.len() == 4 => Ok(FromProxy::Failed {
                rank: rank()?,
                not_found: words[2] == "1",
                reason: String::from_utf8_lossy(&unhex(words[3]).ok_or_else(bad)?).into_owned(),
            }),
            "exited" if words.len() == 3 => Ok(FromProxy::Exited {
                rank: rank()?,
                status: number(2)? as i32,
            }),
            _ => Err(bad()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trip() {
        assert_eq!(hex(b"a b\n\xff"), "6120620aff");
        assert_eq!(unhex("6120620aff").unwrap(), b"a b\n\xff");
        assert_eq!(unhex("-").unwrap(), b"");
        assert_eq!(unhex("abc"), None);
        assert_eq!(unhex("zz"), None);
    }

    #[test]
    fn job_round_trip() {
        let job = ProxyJob {
            jobid: "12-ab".into(),
            program: "/bin/my prog".into(),
            argv0: "./my prog".into(),
            args: vec!["-x".into(), "".into(), "two words\nand a line".into()],
            workdir: "/tmp".into(),
            env: vec![("A".into(), "1 2".into()), ("EMPTY".into(), "".into())],
            ranks: vec![
                ProxyRank {
                    rank: 2,
                    env: vec![("PMI_ID".into(), "2".into())],
                    stdin: false,
                },
                ProxyRank {
                    rank: 0,
                    env: vec![],
                    stdin: true,
                },
            ],
        };
        let lines = job.lines();
        assert!(lines.iter().all(|l| !l.contains('\n')));
        assert_eq!(lines.last().unwrap(), "start");
        let mut reader = JobReader::default();
        let mut result = None;
        for line in &lines {
            result = reader.line(line).unwrap();
        }
        assert_eq!(result, Some(job));
        assert!(JobReader::default().line("renv 41 42").is_err());
        assert!(JobReader::default().line("bogus").is_err());
        assert!(JobReader::default().line("arg").is_err());
    }

    #[test]
    fn messages_round_trip() {
        for msg in [
            FromProxy::Started { rank: 3, pid: 4567 },
            FromProxy::Failed {
                rank: 1,
                not_found: true,
                reason: "No such file or directory (os error 2)".into(),
            },
            FromProxy::Exited { rank: 0, status: 9 },
        ] {
            assert_eq!(FromProxy::parse(&msg.line()), Ok(msg));
        }
        assert!(FromProxy::parse("exited x 1").is_err());
        assert!(FromProxy::parse("started 1").is_err());
        assert_eq!(ToProxy::parse("signal 15"), Ok(ToProxy::Signal(15)));
        assert_eq!(ToProxy::Signal(2).line(), "signal 2");
        assert!(ToProxy::parse("signal x").is_err());
    }
}
