//! Rank 0's stdin when mpiexec's stdin is a terminal: the ranks run in their
//! own process group, which is a background group for the terminal, so rank
//! 0 cannot read the terminal itself (it would be stopped by SIGTTIN).
//! mpiexec reads the terminal instead and copies the bytes into a pipe that
//! is rank 0's stdin. When stdin is not a terminal (a file, a pipe,
//! /dev/null) a local rank 0 inherits it directly. When rank 0 runs on
//! another host, mpiexec copies its stdin (terminal or not) into the pipe
//! that is the stdin of that host's launcher, after the proxy's first line.
//!
//! Invariants: mpiexec reads the terminal only while it is in the
//! terminal's foreground group (so a backgrounded `mpiexec ... &` is never
//! stopped by a read it did not need), holds at most one read's worth of
//! bytes, never blocks on the pipe, and closes the pipe once stdin ends or
//! rank 0 is gone, so rank 0 sees end of file.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

const STDIN: RawFd = 0;

/// Copies mpiexec's terminal stdin to rank 0.
#[derive(Debug)]
pub struct StdinForwarder {
    to_rank: Option<OwnedFd>,
    buffer: Vec<u8>,
    stdin_open: bool,
    /// Whether stdin is a terminal (read it only in the foreground).
    terminal: bool,
}

/// What the forwarder wants the poll loop to watch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StdinInterest {
    /// Poll stdin for reading.
    pub read_stdin: bool,
    /// Poll this pipe end for writing.
    pub write_pipe: Option<RawFd>,
    /// mpiexec is in the background: poll again soon to see if it is not.
    pub recheck_soon: bool,
}

impl StdinForwarder {
    /// When stdin is a terminal: a forwarder and the pipe end to give rank 0
    /// as its stdin. `None` when stdin is not a terminal.
    pub fn for_terminal() -> io::Result<Option<(StdinForwarder, OwnedFd)>> {
        // SAFETY: isatty only inspects descriptor 0.
        if unsafe { libc::isatty(STDIN) } != 1 {
            return Ok(None);
        }
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: `fds` has room for the two descriptors pipe2 writes.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: pipe2 succeeded, so both descriptors are open and ours.
        let (read_end, write_end) =
            unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        let forwarder = StdinForwarder::to_pipe(write_end, Vec::new())?;
        Ok(Some((forwarder, read_end)))
    }

    /// A forwarder of stdin, whatever it is, into `pipe` (made
    /// nonblocking), after the bytes of `prefix`.
    pub fn to_pipe(pipe: OwnedFd, prefix: Vec<u8>) -> io::Result<StdinForwarder> {
        // SAFETY: fcntl on a descriptor we own.
        if unsafe { libc::fcntl(pipe.as_raw_fd(), libc::F_SETFL, libc::O_NONBLOCK) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(StdinForwarder {
            to_rank: Some(pipe),
            buffer: prefix,
            stdin_open: true,
            // SAFETY: isatty only inspects descriptor 0.
            terminal: unsafe { libc::isatty(STDIN) } == 1,
        })
    }

    /// What to poll next.
    pub fn interest(&self) -> StdinInterest {
        let Some(pipe) = &self.to_rank else {
            return StdinInterest::default();
        };
        if !self.buffer.is_empty() {
            return StdinInterest {
                write_pipe: Some(pipe.as_raw_fd()),
                ..StdinInterest::default()
            };
        }
        if !self.stdin_open {
            return StdinInterest::default();
        }
        let foreground = !self.terminal || in_foreground();
        StdinInterest {
            read_stdin: foreground,
            write_pipe: None,
            recheck_soon: !foreground,
        }
    }

    /// Stdin polled readable (or hung up): read one chunk.
    pub fn on_stdin_ready(&mut self) {
        if self.to_rank.is_none() || (self.terminal && !in_foreground()) {
            return;
        }
        let mut chunk = [0u8; 16384];
        // SAFETY: reading into a local buffer of the given length.
        let n = unsafe { libc::read(STDIN, chunk.as_mut_ptr().cast(), chunk.len()) };
        match n {
            n if n > 0 => {
                self.buffer.extend_from_slice(&chunk[..n as usize]);
                self.on_pipe_writable();
            }
            0 => self.end_of_stdin(),
            _ => {
                let e = io::Error::last_os_error();
                if !matches!(
                    e.kind(),
                    io::ErrorKind::Interrupted | io::ErrorKind::WouldBlock
                ) {
                    log::debug!("reading stdin: {e}");
                    self.end_of_stdin();
                }
            }
        }
    }

    /// The pipe to rank 0 polled writable: write what is buffered.
    pub fn on_pipe_writable(&mut self) {
        let Some(pipe) = &self.to_rank else {
            return;
        };
        while !self.buffer.is_empty() {
            // SAFETY: writing from our buffer, of its length, to our pipe end.
            let n = unsafe {
                libc::write(
                    pipe.as_raw_fd(),
                    self.buffer.as_ptr().cast(),
                    self.buffer.len(),
                )
            };
            if n > 0 {
                self.buffer.drain(..n as usize);
                continue;
            }
            let e = io::Error::last_os_error();
            match e.kind() {
                io::ErrorKind::Interrupted => continue,
                io::ErrorKind::WouldBlock => return,
                _ => {
                    // Rank 0 closed its stdin: nothing more to forward.
                    log::debug!("writing rank 0's stdin: {e}");
                    self.close();
                    return;
                }
            }
        }
        if !self.stdin_open {
            self.close();
        }
    }

    fn end_of_stdin(&mut self) {
        self.stdin_open = false;
        if self.buffer.is_empty() {
            self.close();
        }
    }

    /// Stops forwarding (rank 0 is gone, or the job is ending).
    pub fn close(&mut self) {
        self.to_rank = None;
        self.buffer.clear();
        self.stdin_open = false;
    }
}

/// Whether mpiexec is in the foreground process group of its terminal.
fn in_foreground() -> bool {
    // SAFETY: tcgetpgrp and getpgrp only query process state.
    unsafe { libc::tcgetpgrp(STDIN) == libc::getpgrp() }
}
