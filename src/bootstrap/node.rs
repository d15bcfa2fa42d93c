//! This node: its host name and its identity, which tells whether two
//! processes share a node (and so may share memory).

/// The host name (`gethostname`), or `localhost` when it cannot be read.
pub fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes into buf.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return "localhost".to_string();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// The IPC and pid namespaces of this process (`/proc/self/ns`), which
/// two processes must share to share memory and read each other's.
fn namespaces() -> String {
    let ns = |kind: &str| {
        std::fs::read_link(format!("/proc/self/ns/{kind}"))
            .ok()
            .and_then(|target| {
                let target = target.to_string_lossy().into_owned();
                let inode = target.split('[').nth(1)?.trim_end_matches(']').to_string();
                Some(inode)
            })
            .unwrap_or_default()
    };
    format!("{}.{}", ns("ipc"), ns("pid"))
}

/// This node's identity: the host name (or `OXMPI_HOSTNAME`), the boot id
/// and the IPC and pid namespaces, so two machines with one name, one
/// machine across reboots, or two containers of one machine, differ.
pub fn identity() -> String {
    let host = crate::config::get()
        .hostname
        .clone()
        .unwrap_or_else(hostname);
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap_or_default();
    let boot: String = boot
        .trim()
        .chars()
        .filter(|c| c.is_ascii_hexdigit())
        .take(12)
        .collect();
    let host: String = host
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{host}:{boot}:{}", namespaces())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_identity_names_host_boot_and_namespaces() {
        let id = identity();
        let parts: Vec<&str> = id.split(':').collect();
        assert_eq!(parts.len(), 3, "{id}");
        let ns: Vec<&str> = parts[2].split('.').collect();
        assert_eq!(ns.len(), 2, "{id}");
        assert!(
            ns.iter().all(|n| n.parse::<u64>().is_ok()),
            "namespace inodes: {id}"
        );
        assert_eq!(identity(), id, "stable within a process");
    }
}
