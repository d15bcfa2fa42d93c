//! One TCP connection of the transport: the socket, the stage of its
//! handshake, and its input and output buffers. Sockets are nonblocking
//! with `TCP_NODELAY`; nothing here ever waits.
use std::io;
use std::net::{SocketAddr, TcpStream};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Instant;

use super::framing::{InBuffer, OutBuffer, LEN_BYTES};
use super::poller::{Poller, READABLE, WRITABLE};
use crate::transport::{Placement, ProcessId, PLACE_HEAD};

/// Where a connection stands. Frames flow only once `Established`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// Our nonblocking connect to `peer` is in progress.
    Connecting { peer: ProcessId },
    /// We sent our hello to `peer` and wait for its answer.
    AwaitingAnswer { peer: ProcessId },
    /// Accepted at `since`; the connecting side's hello has not arrived.
    AwaitingHello { since: Instant },
    /// Handshake done both ways: frames to and from `peer`.
    Established { peer: ProcessId },
}

pub struct Connection {
    pub stream: TcpStream,
    /// The other end, for log lines.
    pub remote: SocketAddr,
    pub stage: Stage,
    pub input: InBuffer,
    pub output: OutBuffer,
    /// The kernel took no more output; writing waits for writability.
    pub write_blocked: bool,
    /// What the poller watches for on this socket.
    interest: u32,
    /// The frame whose body is being read straight into its destination.
    pub placing: Option<Placing>,
    /// The sink declined to place the frame at the front of `input`: it
    /// is delivered whole once complete (and `place` not asked again).
    pub front_declined: bool,
    /// The last frame was placed: the next read asks only for a frame's
    /// prefix and head, so that a following data frame's body is placed
    /// too instead of landing in `input`.
    pub streaming: bool,
}

/// A frame being placed: its head (for `Sink::placed`) and how much of its
/// body has arrived.
pub struct Placing {
    pub head: [u8; PLACE_HEAD],
    pub body: Placement,
    pub filled: usize,
}

/// Parts of one vectored frame, at most.
const MAX_PARTS: usize = 4;

/// What a frame's first read should ask for after a placed frame.
pub const PLACE_PREFIX: usize = LEN_BYTES + PLACE_HEAD;

/// What a read brought.
pub enum Received {
    Bytes(usize),
    /// Nothing now.
    Nothing,
    /// The other side closed the connection.
    End,
}

fn sockaddr_bytes(addr: &SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
    // SAFETY: sockaddr_storage is plain old data for which all-zero bytes
    // are a valid (unspecified-family) value.
    let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
    let len = match addr {
        SocketAddr::V4(a) => {
            let sin = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: a.port().to_be(),
                sin_addr: libc::in_addr {
                    s_addr: u32::from_ne_bytes(a.ip().octets()),
                },
                sin_zero: [0; 8],
            };
            // SAFETY: sockaddr_storage is larger than and aligned for
            // sockaddr_in.
            unsafe { std::ptr::write((&mut storage as *mut libc::sockaddr_storage).cast(), sin) };
            std::mem::size_of::<libc::sockaddr_in>()
        }
        SocketAddr::V6(a) => {
            let sin6 = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: a.port().to_be(),
                sin6_flowinfo: a.flowinfo(),
                sin6_addr: libc::in6_addr {
                    s6_addr: a.ip().octets(),
                },
                sin6_scope_id: a.scope_id(),
            };
            // SAFETY: sockaddr_storage is larger than and aligned for
            // sockaddr_in6.
            unsafe { std::ptr::write((&mut storage as *mut libc::sockaddr_storage).cast(), sin6) };
            std::mem::size_of::<libc::sockaddr_in6>()
        }
    };
    (storage, len as libc::socklen_t)
}

/// Starts a nonblocking connect to `addr` (close-on-exec, `TCP_NODELAY`);
/// it completes when the socket turns writable.
pub fn connect_nonblocking(addr: SocketAddr) -> io::Result<TcpStream> {
    let family = match addr {
        SocketAddr::V4(_) => libc::AF_INET,
        SocketAddr::V6(_) => libc::AF_INET6,
    };
    // SAFETY: socket takes no pointers.
    let fd = unsafe {
        libc::socket(
            family,
            libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            0,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a fresh socket that nothing else owns.
    let stream = TcpStream::from(unsafe { OwnedFd::from_raw_fd(fd) });
    let (storage, len) = sockaddr_bytes(&addr);
    // SAFETY: `storage` holds a valid sockaddr of `len` bytes for `fd`'s
    // family and outlives the call.
    let ret = unsafe {
        libc::connect(
            stream.as_raw_fd(),
            (&storage as *const libc::sockaddr_storage).cast(),
            len,
        )
    };
    if ret < 0 {
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINPROGRESS) {
            return Err(e);
        }
    }
    stream.set_nodelay(true)?;
    Ok(stream)
}

impl Connection {
    /// An outgoing connection whose connect was just started.
    pub fn outgoing(stream: TcpStream, remote: SocketAddr, peer: ProcessId) -> Connection {
        Connection::new(stream, remote, Stage::Connecting { peer })
    }

    /// An accepted connection (already nonblocking with `TCP_NODELAY`).
    pub fn incoming(stream: TcpStream, remote: SocketAddr) -> Connection {
        Connection::new(
            stream,
            remote,
            Stage::AwaitingHello {
                since: Instant::now(),
            },
        )
    }

    fn new(stream: TcpStream, remote: SocketAddr, stage: Stage) -> Connection {
        Connection {
            stream,
            remote,
            stage,
            input: InBuffer::default(),
            output: OutBuffer::default(),
            write_blocked: false,
            interest: 0,
            placing: None,
            front_declined: false,
            streaming: false,
        }
    }

    /// What the poller should watch for now: input always; writability
    /// while connecting or while output waits for room.
    fn wanted_interest(&self) -> u32 {
        let connecting = matches!(self.stage, Stage::Connecting { .. });
        if connecting || self.write_blocked {
            READABLE | WRITABLE
        } else {
            READABLE
        }
    }

    /// Registers the socket with `poller` under `token`.
    pub fn register(&mut self, poller: &Poller, token: u64) -> io::Result<()> {
        self.interest = self.wanted_interest();
        poller.add(self.stream.as_raw_fd(), token, self.interest)
    }

    /// Brings the registration up to date (a syscall only on change).
    pub fn update_interest(&mut self, poller: &Poller, token: u64) -> io::Result<()> {
        let wanted = self.wanted_interest();
        if wanted != self.interest {
            self.interest = wanted;
            poller.modify(self.stream.as_raw_fd(), token, wanted)?;
        }
        Ok(())
    }

    /// Whether the nonblocking connect has finished (error if it failed).
    pub fn connect_done(&self) -> io::Result<bool> {
        if let Some(e) = self.stream.take_error()? {
            return Err(e);
        }
        match self.stream.peer_addr() {
            Ok(_) => Ok(true),
            Err(e) if e.raw_os_error() == Some(libc::ENOTCONN) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Writes pending output unless the kernel is known to be full.
    pub fn flush(&mut self) -> io::Result<()> {
        if !self.write_blocked && self.output.pending() > 0 {
            let drained = self.output.write_to(&mut self.stream)?;
            self.write_blocked = !drained;
        }
        Ok(())
    }

    /// Sends a frame of `parts` (the length prefix first) with one
    /// `writev` when no output is pending, so the parts go from where they
    /// lie; what the kernel does not take is copied to the output buffer.
    /// With output pending, the frame is copied behind it.
    pub fn send_vectored(&mut self, parts: &[&[u8]]) -> io::Result<()> {
        if self.output.pending() > 0 || self.write_blocked {
            for part in parts {
                self.output.push(part);
            }
            return self.flush();
        }
        let total: usize = parts.iter().map(|p| p.len()).sum();
        let mut iov = [libc::iovec {
            iov_base: std::ptr::null_mut(),
            iov_len: 0,
        }; MAX_PARTS];
        assert!(parts.len() <= MAX_PARTS, "at most {MAX_PARTS} parts");
        for (slot, part) in iov.iter_mut().zip(parts) {
            slot.iov_base = part.as_ptr() as *mut libc::c_void;
            slot.iov_len = part.len();
        }
        let written = loop {
            // SAFETY: every iovec names a live slice of `parts` (only read
            // by writev) and the fd is this connection's open socket.
            let n = unsafe {
                libc::writev(
                    self.stream.as_raw_fd(),
                    iov.as_ptr(),
                    parts.len() as libc::c_int,
                )
            };
            if n >= 0 {
                break n as usize;
            }
            let e = io::Error::last_os_error();
            match e.kind() {
                io::ErrorKind::Interrupted => continue,
                io::ErrorKind::WouldBlock => break 0,
                _ => return Err(e),
            }
        };
        if written < total {
            let mut skip = written;
            for part in parts {
                if skip >= part.len() {
                    skip -= part.len();
                    continue;
                }
                self.output.push(&part[skip..]);
                skip = 0;
            }
            self.write_blocked = true;
        }
        Ok(())
    }

    /// One read straight into the body of the frame being placed.
    pub fn receive_placed(&mut self) -> io::Result<Received> {
        let placing = self.placing.as_mut().expect("a frame is being placed");
        let rest = &mut placing.body.as_mut_slice()[placing.filled..];
        loop {
            match io::Read::read(&mut self.stream, rest) {
                Ok(0) => return Ok(Received::End),
                Ok(n) => {
                    placing.filled += n;
                    return Ok(Received::Bytes(n));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Received::Nothing),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// One read of at most `limit` bytes into the input buffer.
    pub fn receive(&mut self, limit: usize) -> io::Result<Received> {
        loop {
            match self.input.read_from(&mut self.stream, limit) {
                Ok(0) => return Ok(Received::End),
                Ok(n) => return Ok(Received::Bytes(n)),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(Received::Nothing),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}
