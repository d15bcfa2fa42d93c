//! The address a process listens on: the IPv4 address of the interface
//! named by `OXMPI_IFACE` (or that value itself when it is an address), by
//! default the first interface that is up and not loopback, else
//! 127.0.0.1 (a machine without a network still runs jobs on itself).
use std::ffi::CStr;
use std::io;
use std::net::{IpAddr, Ipv4Addr};

/// One IPv4 address of one interface.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Interface {
    pub name: String,
    pub address: Ipv4Addr,
    pub up: bool,
    pub loopback: bool,
}

/// The IPv4 addresses of this machine's interfaces, in getifaddrs order.
pub fn interfaces() -> io::Result<Vec<Interface>> {
    let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs writes a list head into `list`, freed below.
    if unsafe { libc::getifaddrs(&mut list) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let mut found = Vec::new();
    let mut entry = list;
    while !entry.is_null() {
        // SAFETY: `entry` is a node of the list getifaddrs returned, which
        // stays valid until freeifaddrs; `ifa_name` is a C string and
        // `ifa_addr`, when not null and of family AF_INET, a sockaddr_in.
        unsafe {
            let ifa = &*entry;
            let addr = ifa.ifa_addr;
            if !addr.is_null() && i32::from((*addr).sa_family) == libc::AF_INET {
                let sin = &*(addr as *const libc::sockaddr_in);
                let flags = ifa.ifa_flags as libc::c_int;
                found.push(Interface {
                    name: CStr::from_ptr(ifa.ifa_name).to_string_lossy().into_owned(),
                    address: Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr)),
                    up: flags & libc::IFF_UP != 0,
                    loopback: flags & libc::IFF_LOOPBACK != 0,
                });
            }
            entry = ifa.ifa_next;
        }
    }
    // SAFETY: `list` came from getifaddrs and is freed once; no reference
    // into it survives (names were copied).
    unsafe { libc::freeifaddrs(list) };
    Ok(found)
}

/// Chooses among `interfaces` for the `OXMPI_IFACE` value `iface`.
pub fn choose(iface: Option<&str>, interfaces: &[Interface]) -> io::Result<IpAddr> {
    match iface.map(str::trim).filter(|v| !v.is_empty() && *v != AUTO) {
        Some(value) => {
            if let Ok(ip) = value.parse::<IpAddr>() {
                return Ok(ip);
            }
            interfaces
                .iter()
                .find(|i| i.name == value)
                .map(|i| IpAddr::V4(i.address))
                .ok_or_else(|| {
                    io::Error::new(
                        io::ErrorKind::NotFound,
                        format!(
                            "OXMPI_IFACE={value}: no interface of that name has an IPv4 address"
                        ),
                    )
                })
        }
        None => Ok(interfaces
            .iter()
            .find(|i| i.up && !i.loopback)
            .map_or(IpAddr::V4(Ipv4Addr::LOCALHOST), |i| IpAddr::V4(i.address))),
    }
}

/// The `OXMPI_IFACE` value for the default choice even where the world is
/// on one node (mpiexec sets it for jobs across hosts: a spawned group or a
/// world on one host may still talk to processes on other hosts).
pub const AUTO: &str = "auto";

/// The address to listen on, given the value of `OXMPI_IFACE` (an
/// interface name or an address; `None`, empty or [`AUTO`] for the
/// default).
pub fn listen_address(iface: Option<&str>) -> io::Result<IpAddr> {
    let chosen = choose(iface, &interfaces()?)?;
    log::debug!("tcp: listening address {chosen} (OXMPI_IFACE={iface:?})");
    Ok(chosen)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iface(name: &str, address: [u8; 4], up: bool, loopback: bool) -> Interface {
        Interface {
            name: name.into(),
            address: address.into(),
            up,
            loopback,
        }
    }

    #[test]
    fn the_default_skips_loopback_and_interfaces_that_are_down() {
        let list = [
            iface("lo", [127, 0, 0, 1], true, true),
            iface("eth0", [10, 0, 0, 5], false, false),
            iface("eth1", [192, 168, 1, 9], true, false),
        ];
        assert_eq!(choose(None, &list).unwrap(), IpAddr::from([192, 168, 1, 9]));
        assert_eq!(
            choose(Some(""), &list).unwrap(),
            IpAddr::from([192, 168, 1, 9])
        );
        assert_eq!(
            choose(Some(AUTO), &list).unwrap(),
            IpAddr::from([192, 168, 1, 9])
        );
        assert_eq!(
            choose(None, &list[..2]).unwrap(),
            IpAddr::from([127, 0, 0, 1])
        );
        assert_eq!(choose(None, &[]).unwrap(), IpAddr::from([127, 0, 0, 1]));
    }

    #[test]
    fn oxmpi_iface_names_an_interface_or_an_address() {
        let list = [
            iface("lo", [127, 0, 0, 1], true, true),
            iface("eth0", [10, 0, 0, 5], false, false),
        ];
        assert_eq!(
            choose(Some("eth0"), &list).unwrap(),
            IpAddr::from([10, 0, 0, 5])
        );
        assert_eq!(
            choose(Some("10.1.2.3"), &list).unwrap(),
            IpAddr::from([10, 1, 2, 3])
        );
        let err = choose(Some("wlan9"), &list).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
        assert!(err.to_string().contains("wlan9"), "{err}");
    }

    #[test]
    fn this_machine_has_a_loopback_interface() {
        let list = interfaces().unwrap();
        assert!(
            list.iter().any(|i| i.loopback && i.address.is_loopback()),
            "{list:?}"
        );
        assert_eq!(
            listen_address(Some("lo")).unwrap(),
            IpAddr::from([127, 0, 0, 1])
        );
        assert!(listen_address(None).unwrap().is_ipv4());
    }
}
