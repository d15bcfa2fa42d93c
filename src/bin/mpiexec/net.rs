//! The network side of a multi-host job: the job secret, and the address
//! on which remote ranks and proxies reach mpiexec's PMI listener.
//!
//! Address choice, in order: `-pmi-addr ADDR`; the address of `-iface
//! IFACE`; otherwise, per remote host, the local address the kernel would
//! use to send to that host (its route's source address), so every host is
//! given an address it can reach. mpiexec listens on exactly the addresses
//! it hands out, never on the wildcard address.
//!
//! Invariant: the secret is 128 bits from the kernel's random source, fresh
//! per job, and compared in time independent of where it differs.

use std::ffi::CStr;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs, UdpSocket};

/// A fresh job secret: 32 hex digits.
pub fn new_secret() -> io::Result<String> {
    let mut bytes = [0u8; 16];
    let mut filled = 0;
    while filled < bytes.len() {
        // SAFETY: getrandom writes at most the given number of bytes into
        // the rest of our local buffer.
        let n = unsafe {
            libc::getrandom(bytes[filled..].as_mut_ptr().cast(), bytes.len() - filled, 0)
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        filled += n as usize;
    }
    Ok(crate::proxy_wire::hex(&bytes))
}

/// Whether `given` is the job's `secret`, comparing every byte.
pub fn secret_matches(secret: &str, given: &str) -> bool {
    let (a, b) = (secret.as_bytes(), given.as_bytes());
    let mut diff = u8::from(a.len() != b.len());
    for (i, byte) in a.iter().enumerate() {
        diff |= byte ^ b.get(i).copied().unwrap_or(0);
    }
    diff == 0 && !a.is_empty()
}

/// How the PMI address is chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AddressChoice {
    /// `-pmi-addr`: this address for every host.
    Fixed(IpAddr),
    /// `-iface`: the address of this interface for every host.
    Interface(String),
    /// Per host, the source address of the route to it.
    Route,
}

/// The address on which `host` reaches mpiexec.
pub fn address_for_host(host: &str, choice: &AddressChoice) -> Result<IpAddr, String> {
    match choice {
        AddressChoice::Fixed(addr) => Ok(*addr),
        AddressChoice::Interface(name) => interface_address(name),
        AddressChoice::Route => {
            let target = resolve(host).map_err(|e| {
                format!(
                    "cannot choose the address on which host '{host}' reaches mpiexec: \
                     '{host}' does not resolve ({e}); give one with -pmi-addr ADDR or -iface IFACE"
                )
            })?;
            route_source(target).map_err(|e| {
                format!(
                    "no route to host '{host}' ({target}): {e}; give the address with -pmi-addr ADDR"
                )
            })
        }
    }
}

/// The first address `host` resolves to.
fn resolve(host: &str) -> io::Result<IpAddr> {
    if let Ok(addr) = host.parse::<IpAddr>() {
        return Ok(addr);
    }
    (host, 0)
        .to_socket_addrs()?
        .map(|a| a.ip())
        .next()
        .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "no address"))
}

/// The local address the kernel picks to send to `target` (a connected UDP
/// socket sends nothing).
fn route_source(target: IpAddr) -> io::Result<IpAddr> {
    let any: IpAddr = match target {
        IpAddr::V4(_) => Ipv4Addr::UNSPECIFIED.into(),
        IpAddr::V6(_) => Ipv6Addr::UNSPECIFIED.into(),
    };
    let socket = UdpSocket::bind((any, 0))?;
    socket.connect((target, 9))?;
    Ok(socket.local_addr()?.ip())
}

/// The IPv4 address of interface `name` (its IPv6 one if it has none).
pub fn interface_address(name: &str) -> Result<IpAddr, String> {
    let mut found_v6 = None;
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `head` with a list we free below.
    if unsafe { libc::getifaddrs(&mut head) } != 0 {
        return Err(format!(
            "-iface {name}: cannot list interfaces: {}",
            io::Error::last_os_error()
        ));
    }
    let mut found = None;
    let mut cursor = head;
    while !cursor.is_null() {
        // SAFETY: `cursor` is a node of the list getifaddrs returned; its
        // name is a NUL-terminated string and its address, when not null,
        // points to a sockaddr of the family it states.
        unsafe {
            let entry = &*cursor;
            cursor = entry.ifa_next;
            if entry.ifa_addr.is_null()
                || CStr::from_ptr(entry.ifa_name).to_bytes() != name.as_bytes()
            {
                continue;
            }
            match i32::from((*entry.ifa_addr).sa_family) {
                libc::AF_INET => {
                    let sin = &*(entry.ifa_addr as *const libc::sockaddr_in);
                    found = Some(IpAddr::V4(Ipv4Addr::from(u32::from_be(
                        sin.sin_addr.s_addr,
                    ))));
                    break;
                }
                libc::AF_INET6 if found_v6.is_none() => {
                    let sin6 = &*(entry.ifa_addr as *const libc::sockaddr_in6);
                    found_v6 = Some(IpAddr::V6(Ipv6Addr::from(sin6.sin6_addr.s6_addr)));
                }
                _ => {}
            }
        }
    }
    // SAFETY: `head` came from getifaddrs and is freed once.
    unsafe { libc::freeifaddrs(head) };
    found
        .or(found_v6)
        .ok_or_else(|| format!("-iface {name}: no such interface with an IP address"))
}

/// `PMI_PORT`'s value for a listener at `addr`: `host:port`, with an IPv6
/// address in brackets.
pub fn pmi_port_value(addr: SocketAddr) -> String {
    match addr {
        SocketAddr::V4(a) => format!("{}:{}", a.ip(), a.port()),
        SocketAddr::V6(a) => format!("[{}]:{}", a.ip(), a.port()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets() {
        let a = new_secret().unwrap();
        let b = new_secret().unwrap();
        assert_eq!(a.len(), 32);
        assert_ne!(a, b);
        assert!(secret_matches(&a, &a.clone()));
        assert!(!secret_matches(&a, &b));
        assert!(!secret_matches(&a, &a[..31]));
        assert!(!secret_matches(&a, &format!("{a}0")));
        assert!(!secret_matches("", ""));
    }

    #[test]
    fn addresses() {
        let fixed = AddressChoice::Fixed("10.1.2.3".parse().unwrap());
        assert_eq!(
            address_for_host("anything", &fixed).unwrap().to_string(),
            "10.1.2.3"
        );
        let lo = address_for_host("127.0.0.1", &AddressChoice::Route).unwrap();
        assert!(lo.is_loopback());
        assert_eq!(
            address_for_host("x", &AddressChoice::Interface("lo".into())).unwrap(),
            IpAddr::V4(Ipv4Addr::LOCALHOST)
        );
        assert!(interface_address("no-such-iface0").is_err());
        assert!(
            address_for_host("no-such-host.invalid", &AddressChoice::Route)
                .unwrap_err()
                .contains("-pmi-addr")
        );
        assert_eq!(
            pmi_port_value("10.0.0.1:5000".parse().unwrap()),
            "10.0.0.1:5000"
        );
        assert_eq!(pmi_port_value("[::1]:7".parse().unwrap()), "[::1]:7");
    }
}
