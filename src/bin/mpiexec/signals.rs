//! The signals mpiexec reacts to (SIGCHLD, SIGINT, SIGTERM, SIGHUP), turned
//! into bytes on a self-pipe so that the single poll loop sees them next to
//! the ranks' PMI sockets; plus signal names for messages.
//!
//! A forwarded signal that mpiexec was started with ignored (`nohup`'s
//! SIGHUP, SIGINT for a script's background job) stays ignored, by mpiexec
//! and by the ranks, which inherit the disposition.
//!
//! Invariant: the handler does nothing but one `write(2)` of the signal
//! number to the nonblocking pipe (async-signal-safe, errno preserved), so a
//! signal is never lost between two polls: the pipe stays readable until the
//! loop drains it. A full pipe drops the byte, which is harmless because the
//! pipe is then already readable.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicI32, Ordering};

/// The signals forwarded to the ranks when mpiexec receives them.
pub const FORWARDED: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// Write end of the self-pipe, read by the handler (-1 before install).
static PIPE_WRITE_FD: AtomicI32 = AtomicI32::new(-1);

extern "C" fn note_signal(signal: libc::c_int) {
    let fd = PIPE_WRITE_FD.load(Ordering::Relaxed);
    if fd < 0 {
        return;
    }
    let byte = signal as u8;
    // SAFETY: errno location is valid for the current thread; write(2) is
    // async-signal-safe and `byte` outlives the call. errno is restored so
    // the interrupted code does not see the handler's errno.
    unsafe {
        let errno = libc::__errno_location();
        let saved = *errno;
        libc::write(fd, (&byte as *const u8).cast(), 1);
        *errno = saved;
    }
}

/// The self-pipe with handlers installed for SIGCHLD and [`FORWARDED`].
pub struct SignalPipe {
    read_end: OwnedFd,
    _write_end: OwnedFd,
}

impl SignalPipe {
    /// Creates the pipe and installs the handlers. Call once, before
    /// starting any rank.
    pub fn install() -> io::Result<SignalPipe> {
        let (read_end, write_end) = nonblocking_pipe()?;
        PIPE_WRITE_FD.store(write_end.as_raw_fd(), Ordering::Relaxed);
        for signal in [libc::SIGCHLD].into_iter().chain(FORWARDED) {
            if signal != libc::SIGCHLD && is_ignored(signal)? {
                log::debug!("{} is ignored: not forwarding it", signal_name(signal));
                continue;
            }
            let flags = if signal == libc::SIGCHLD {
                libc::SA_RESTART | libc::SA_NOCLDSTOP
            } else {
                libc::SA_RESTART
            };
            // SAFETY: a zeroed sigaction is a valid starting value; the
            // handler is an `extern "C" fn(c_int)` that only calls write(2).
            let rc = unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = note_signal as *const () as libc::sighandler_t;
                action.sa_flags = flags;
                libc::sigemptyset(&mut action.sa_mask);
                libc::sigaction(signal, &action, std::ptr::null_mut())
            };
            if rc != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(SignalPipe {
            read_end,
            _write_end: write_end,
        })
    }

    /// The pipe without any handler: it is never written to, and the
    /// process's signal dispositions are left alone. For tests of code that
    /// polls a [`SignalPipe`].
    #[cfg(test)]
    pub fn unhooked() -> io::Result<SignalPipe> {
        let (read_end, write_end) = nonblocking_pipe()?;
        Ok(SignalPipe {
            read_end,
            _write_end: write_end,
        })
    }

    /// The descriptor to poll for readability.
    pub fn fd(&self) -> RawFd {
        self.read_end.as_raw_fd()
    }

    /// The signals noted since the last call, in arrival order.
    pub fn drain(&self) -> Vec<libc::c_int> {
        let mut signals = Vec::new();
        let mut chunk = [0u8; 64];
        loop {
            // SAFETY: reading into a local buffer of the given length.
            let n = unsafe { libc::read(self.fd(), chunk.as_mut_ptr().cast(), chunk.len()) };
            if n <= 0 {
                if n < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return signals;
            }
            signals.extend(chunk[..n as usize].iter().map(|&b| libc::c_int::from(b)));
        }
    }
}

/// A nonblocking pipe, both ends close-on-exec: (read end, write end).
fn nonblocking_pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: pipe2 succeeded, so both descriptors are open and ours.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Whether `signal`'s disposition is SIG_IGN.
fn is_ignored(signal: libc::c_int) -> io::Result<bool> {
    // SAFETY: a zeroed sigaction is valid for sigaction(2) to overwrite;
    // a null new action only queries the current one.
    let current = unsafe {
        let mut current: libc::sigaction = std::mem::zeroed();
        if libc::sigaction(signal, std::ptr::null(), &mut current) != 0 {
            return Err(io::Error::last_os_error());
        }
        current
    };
    Ok(current.sa_sigaction == libc::SIG_IGN)
}

/// The conventional name of a signal, e.g. `SIGSEGV`, or `SIGRTMIN+3`, or
/// `signal 99` for a number Linux does not define.
pub fn signal_name(signal: libc::c_int) -> String {
    let name = match signal {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGSTKFLT => "SIGSTKFLT",
        libc::SIGCHLD => "SIGCHLD",
        libc::SIGCONT => "SIGCONT",
        libc::SIGSTOP => "SIGSTOP",
        libc::SIGTSTP => "SIGTSTP",
        libc::SIGTTIN => "SIGTTIN",
        libc::SIGTTOU => "SIGTTOU",
        libc::SIGURG => "SIGURG",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        libc::SIGVTALRM => "SIGVTALRM",
        libc::SIGPROF => "SIGPROF",
        libc::SIGWINCH => "SIGWINCH",
        libc::SIGIO => "SIGIO",
        libc::SIGPWR => "SIGPWR",
        libc::SIGSYS => "SIGSYS",
        _ => {
            let (min, max) = (libc::SIGRTMIN(), libc::SIGRTMAX());
            return if signal == min {
                "SIGRTMIN".to_string()
            } else if signal > min && signal <= max {
                format!("SIGRTMIN+{}", signal - min)
            } else {
                format!("signal {signal}")
            };
        }
    };
    name.to_string()
}

/// Sends `signal` to every process of group `pgid`; a group that is already
/// gone is not an error.
pub fn signal_group(pgid: libc::pid_t, signal: libc::c_int) {
    if pgid <= 1 {
        return;
    }
    // SAFETY: kill(2) with a negative pid addresses process group `pgid`,
    // which mpiexec created for the ranks (pgid > 1 checked above).
    if unsafe { libc::kill(-pgid, signal) } != 0 {
        log::debug!(
            "kill(-{pgid}, {}): {}",
            signal_name(signal),
            io::Error::last_os_error()
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_common_signals() {
        assert_eq!(signal_name(libc::SIGSEGV), "SIGSEGV");
        assert_eq!(signal_name(libc::SIGKILL), "SIGKILL");
        assert_eq!(signal_name(libc::SIGTERM), "SIGTERM");
        assert_eq!(signal_name(libc::SIGABRT), "SIGABRT");
        assert_eq!(signal_name(libc::SIGRTMIN()), "SIGRTMIN");
        assert_eq!(signal_name(libc::SIGRTMIN() + 2), "SIGRTMIN+2");
        assert_eq!(signal_name(200), "signal 200");
    }
}
