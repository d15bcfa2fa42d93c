//! The system calls MPI-IO needs beyond `std` (whose `File::lock` is newer
//! than oxmpi's minimum Rust): whole-file `flock` locks, and
//! `posix_fallocate` for `MPI_File_preallocate`.
use std::fs::File;
use std::os::fd::AsRawFd;

fn check(rc: libc::c_int) -> std::io::Result<()> {
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Takes an exclusive lock of the whole file (waits for it), retrying when
/// a signal interrupts the wait.
pub fn lock(file: &File) -> std::io::Result<()> {
    loop {
        // SAFETY: `flock` on a descriptor this `File` owns and keeps open
        // for the call; it touches no memory of ours.
        let r = check(unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) });
        match r {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            other => return other,
        }
    }
}

/// Releases the lock [`lock`] took.
pub fn unlock(file: &File) -> std::io::Result<()> {
    // SAFETY: as in `lock`.
    check(unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_UN) })
}

/// Allocates blocks for bytes `[0, len)` (the file grows to `len` if
/// shorter). Where the file system cannot, the file is extended instead.
pub fn preallocate(file: &File, len: u64) -> std::io::Result<()> {
    // SAFETY: `posix_fallocate` on a descriptor this `File` owns; it
    // touches no memory of ours. It returns the error number itself.
    let rc = unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, len as libc::off_t) };
    match rc {
        0 => Ok(()),
        libc::EOPNOTSUPP | libc::EINVAL => {
            if file.metadata()?.len() < len {
                file.set_len(len)?;
            }
            Ok(())
        }
        e => Err(std::io::Error::from_raw_os_error(e)),
    }
}
