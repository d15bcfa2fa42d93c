//! The socket on which a process accepts connections from its peers:
//! nonblocking, on an ephemeral port of the chosen address.
use std::io;
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::os::fd::{AsRawFd, RawFd};

pub struct Listener {
    socket: TcpListener,
}

impl Listener {
    pub fn bind(ip: IpAddr) -> io::Result<Listener> {
        let socket = TcpListener::bind(SocketAddr::new(ip, 0))?;
        socket.set_nonblocking(true)?;
        Ok(Listener { socket })
    }

    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.socket.local_addr()
    }

    /// The next waiting connection, nonblocking with `TCP_NODELAY`; `None`
    /// when no more wait.
    pub fn accept(&self) -> io::Result<Option<(TcpStream, SocketAddr)>> {
        loop {
            match self.socket.accept() {
                Ok((stream, remote)) => {
                    stream.set_nonblocking(true)?;
                    stream.set_nodelay(true)?;
                    return Ok(Some((stream, remote)));
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(None),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

impl AsRawFd for Listener {
    fn as_raw_fd(&self) -> RawFd {
        self.socket.as_raw_fd()
    }
}
