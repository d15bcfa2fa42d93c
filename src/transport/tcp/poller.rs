//! Readiness of the transport's sockets through one epoll instance
//! (level-triggered). A socket is registered with a token naming it; its
//! fd leaves the set when it is closed (the transport never duplicates
//! socket fds). The epoll fd itself is readable whenever a registered
//! socket is ready, so a waiter can sleep on it together with other fds.
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

/// Data to read, or the peer closed its side (read to find out).
pub const READABLE: u32 = (libc::EPOLLIN | libc::EPOLLRDHUP) as u32;
/// Room to write, or a nonblocking connect finished.
pub const WRITABLE: u32 = libc::EPOLLOUT as u32;
/// Reported whether asked for or not.
pub const BROKEN: u32 = (libc::EPOLLERR | libc::EPOLLHUP) as u32;

pub struct Poller {
    epoll: OwnedFd,
}

/// A ready socket: its token and what it is ready for.
#[derive(Clone, Copy, Debug)]
pub struct Ready {
    pub token: u64,
    pub flags: u32,
}

fn check(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// A timeout in whole milliseconds, rounded up so a short wait still waits.
fn millis(timeout: Duration) -> libc::c_int {
    let ms = timeout.as_nanos().div_ceil(1_000_000);
    ms.min(libc::c_int::MAX as u128) as libc::c_int
}

impl Poller {
    pub fn new() -> io::Result<Poller> {
        // SAFETY: epoll_create1 takes no pointers; a valid fd it returns is
        // owned by nobody else.
        let fd = check(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) })?;
        Ok(Poller {
            // SAFETY: `fd` was just returned by epoll_create1 (checked not
            // -1), is open, and nothing else owns or closes it.
            epoll: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    fn control(&self, op: libc::c_int, fd: RawFd, token: u64, interest: u32) -> io::Result<()> {
        let mut event = libc::epoll_event {
            events: interest,
            u64: token,
        };
        // SAFETY: `event` is a valid epoll_event for the call's duration;
        // epoll_ctl only reads it.
        check(unsafe { libc::epoll_ctl(self.epoll.as_raw_fd(), op, fd, &mut event) })?;
        Ok(())
    }

    pub fn add(&self, fd: RawFd, token: u64, interest: u32) -> io::Result<()> {
        self.control(libc::EPOLL_CTL_ADD, fd, token, interest)
    }

    pub fn modify(&self, fd: RawFd, token: u64, interest: u32) -> io::Result<()> {
        self.control(libc::EPOLL_CTL_MOD, fd, token, interest)
    }

    /// Collects ready sockets into `events` (its length is the most one
    /// call reports); returns how many. An interrupted wait reports none.
    pub fn wait(&self, events: &mut [libc::epoll_event], timeout: Duration) -> io::Result<usize> {
        let capacity = events.len().min(libc::c_int::MAX as usize) as libc::c_int;
        // SAFETY: `events` is valid for writes of `capacity` entries.
        let n = unsafe {
            libc::epoll_wait(
                self.epoll.as_raw_fd(),
                events.as_mut_ptr(),
                capacity,
                millis(timeout),
            )
        };
        match check(n) {
            Ok(n) => Ok(n as usize),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(0),
            Err(e) => Err(e),
        }
    }

    /// The `i`-th entry of what [`Poller::wait`] filled in.
    pub fn ready(events: &[libc::epoll_event], i: usize) -> Ready {
        let event = events[i];
        Ready {
            token: event.u64,
            flags: event.events,
        }
    }
}

impl AsRawFd for Poller {
    fn as_raw_fd(&self) -> RawFd {
        self.epoll.as_raw_fd()
    }
}

/// An empty event array of `n` entries for [`Poller::wait`].
pub fn event_buffer(n: usize) -> Vec<libc::epoll_event> {
    vec![libc::epoll_event { events: 0, u64: 0 }; n]
}
