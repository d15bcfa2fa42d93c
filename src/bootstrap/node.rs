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

/// This node's identity: the host name (or `OXMPI_HOSTNAME`) and the boot
/// id, so two machines with one name, or one machine across reboots, differ.
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
    format!("{host}:{boot}")
}
