//! Shared-memory segments, the memory that rings and doorbells live in:
//! anonymous ones (`memfd_create`), which peers take from their owner by
//! file descriptor (`pidfd_getfd`), or named POSIX ones (`shm_open`).
//!
//! An anonymous segment has no name anywhere: nobody can open it without
//! ptrace rights over its owner (under Yama `ptrace_scope=1`, the job's
//! processes only: see `single_copy::allow_peers_to_read`), and when every
//! process that maps it ends, however it ends (killed with SIGKILL, its
//! launcher too), it is gone: nothing is left in /dev/shm. Its owner keeps
//! the one descriptor, which peers copy; a peer's copy is closed once
//! mapped. Its address, what a business card publishes, is
//! `fd:<pid>:<fd>`; [`Segment::attach`] checks that the descriptor it got
//! is one of oxmpi's memfds (a recycled pid could name another process).
//!
//! A named segment is the fallback where anonymous ones cannot be shared
//! (an old kernel, `ptrace_scope` 2 or 3, `OXMPI_SHM_SEGMENTS=named`). Its
//! descriptor is closed as soon as the memory is mapped. Dropping it unmaps
//! it but never removes its name; whoever owns the name (the creator, or
//! mpiexec after a killed job through [`cleanup_prefix`]) unlinks it. Names
//! are chosen by the caller (`/oxmpi-...`, keyed by job and epoch), created
//! with `O_EXCL` and mode 0600, so a planted file makes the creation fail.

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};

use memmap2::{MmapOptions, MmapRaw};
use thiserror::Error;

/// Where Linux keeps POSIX shared-memory objects (`shm_open` names map to
/// files in this directory).
const SHM_DIR: &str = "/dev/shm";

/// Longest name accepted, leading slash included (`NAME_MAX` plus the slash).
const MAX_NAME_LEN: usize = 255;

/// Why a segment could not be created, opened or unlinked.
#[derive(Debug, Error)]
pub enum SegmentError {
    /// The name is not a valid POSIX shared-memory name.
    #[error("shm segment {name:?}: invalid name: {reason}")]
    InvalidName { name: String, reason: &'static str },
    /// A zero-length segment was asked for, or the one found has size 0
    /// (its creator may not have sized it yet).
    #[error("shm segment {name:?}: size is 0")]
    Empty { name: String },
    /// A system call failed.
    #[error("shm segment {name:?}: {op} failed: {source}")]
    Os {
        name: String,
        op: &'static str,
        #[source]
        source: io::Error,
    },
}

impl SegmentError {
    fn os(name: &str, op: &'static str, source: io::Error) -> Self {
        SegmentError::Os {
            name: name.to_owned(),
            op,
            source,
        }
    }
}

/// The name every anonymous segment of oxmpi's carries (seen in
/// `/proc/<pid>/fd` as `/memfd:oxmpi-segment`).
const MEMFD_NAME: &std::ffi::CStr = c"oxmpi-segment";

/// What backs a segment.
#[derive(Debug)]
enum Backing {
    Named {
        name: String,
        unlinked: AtomicBool,
    },
    /// A memfd: the owner keeps its descriptor for peers to copy; a peer
    /// keeps none.
    Anonymous {
        address: String,
        _owned: Option<OwnedFd>,
    },
}

/// A shared-memory segment mapped read-write into this process.
///
/// The mapping starts on a page boundary (so at least 64-byte aligned) and
/// is zero-filled when freshly created.
#[derive(Debug)]
pub struct Segment {
    backing: Backing,
    map: MmapRaw,
}

impl Segment {
    /// Creates the segment `name` with `len` bytes and maps it. Fails if the
    /// name already exists (`O_EXCL`); the object is readable and writable by
    /// its owner only (mode 0600). If sizing or mapping fails, the name is
    /// removed again, so a failed create leaves nothing behind.
    pub fn create(name: &str, len: usize) -> Result<Segment, SegmentError> {
        let c_name = check_name(name)?;
        if len == 0 {
            return Err(SegmentError::Empty {
                name: name.to_owned(),
            });
        }
        let file = shm_open(name, &c_name, libc::O_CREAT | libc::O_EXCL | libc::O_RDWR)?;
        let mapped = file
            .set_len(len as u64)
            .map_err(|e| SegmentError::os(name, "ftruncate", e))
            .and_then(|()| {
                MmapOptions::new()
                    .len(len)
                    .map_raw(&file)
                    .map_err(|e| SegmentError::os(name, "mmap", e))
            });
        drop(file);
        match mapped {
            Ok(map) => Ok(Segment {
                backing: Backing::Named {
                    name: name.to_owned(),
                    unlinked: AtomicBool::new(false),
                },
                map,
            }),
            Err(e) => {
                // Best effort: the create failed, so nobody else owns the name.
                let _ = unlink_name(name);
                Err(e)
            }
        }
    }

    /// Maps the existing segment `name`, whole (its size comes from `fstat`).
    ///
    /// The creator must have finished [`Segment::create`] before anyone opens
    /// the segment (publish the name only after it returns); a segment still
    /// of size 0 gives [`SegmentError::Empty`].
    pub fn open(name: &str) -> Result<Segment, SegmentError> {
        let c_name = check_name(name)?;
        let file = shm_open(name, &c_name, libc::O_RDWR)?;
        let map = map_whole(name, &file)?;
        Ok(Segment {
            backing: Backing::Named {
                name: name.to_owned(),
                unlinked: AtomicBool::new(false),
            },
            map,
        })
    }

    /// Creates an anonymous segment of `len` bytes (zero-filled) and maps
    /// it; its [`Segment::address`] lets peers map it too.
    pub fn create_anonymous(len: usize) -> Result<Segment, SegmentError> {
        let what = "anonymous segment";
        if len == 0 {
            return Err(SegmentError::Empty {
                name: what.to_owned(),
            });
        }
        // SAFETY: a valid NUL-terminated name and flags; no memory is passed.
        let fd = unsafe { libc::memfd_create(MEMFD_NAME.as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(SegmentError::os(
                what,
                "memfd_create",
                io::Error::last_os_error(),
            ));
        }
        // SAFETY: `fd` was just returned by memfd_create and nothing else owns it.
        let owned = unsafe { OwnedFd::from_raw_fd(fd) };
        let file = File::from(owned);
        file.set_len(len as u64)
            .map_err(|e| SegmentError::os(what, "ftruncate", e))?;
        let map = MmapOptions::new()
            .len(len)
            .map_raw(&file)
            .map_err(|e| SegmentError::os(what, "mmap", e))?;
        let address = format!("fd:{}:{}", std::process::id(), file.as_raw_fd());
        Ok(Segment {
            backing: Backing::Anonymous {
                address,
                _owned: Some(OwnedFd::from(file)),
            },
            map,
        })
    }

    /// Maps the segment at `address`: a name (see [`Segment::open`]) or an
    /// anonymous segment's `fd:<pid>:<fd>`, whose descriptor is copied from
    /// process `pid` (`pidfd_getfd`, which needs ptrace rights over it) and
    /// closed once the memory is mapped.
    pub fn attach(address: &str) -> Result<Segment, SegmentError> {
        let Some(rest) = address.strip_prefix("fd:") else {
            return Segment::open(address);
        };
        let invalid = || SegmentError::InvalidName {
            name: address.to_owned(),
            reason: "an anonymous segment's address is fd:<pid>:<fd>",
        };
        let (pid, fd) = rest.split_once(':').ok_or_else(invalid)?;
        let pid: libc::pid_t = pid.parse().map_err(|_| invalid())?;
        let fd: libc::c_int = fd.parse().map_err(|_| invalid())?;
        let file = File::from(fd_of_process(address, pid, fd)?);
        // A recycled pid could name another process: take only one of
        // oxmpi's memfds.
        let link = std::fs::read_link(format!("/proc/self/fd/{}", file.as_raw_fd()))
            .map_err(|e| SegmentError::os(address, "readlink", e))?;
        let expected = format!("/memfd:{}", MEMFD_NAME.to_string_lossy());
        if !link.to_string_lossy().starts_with(&expected) {
            return Err(SegmentError::os(
                address,
                "pidfd_getfd",
                io::Error::other(format!("{} is not an oxmpi segment", link.display())),
            ));
        }
        let map = map_whole(address, &file)?;
        Ok(Segment {
            backing: Backing::Anonymous {
                address: address.to_owned(),
                _owned: None,
            },
            map,
        })
    }

    /// Removes the segment's name; the memory stays mapped until every
    /// process has dropped its mapping. Idempotent: a second call, or a name
    /// already removed by someone else, is not an error. Only the first call
    /// on this `Segment` reaches the system, so it never removes a newer
    /// segment that reused the name.
    /// An anonymous segment has no name: nothing to do.
    pub fn unlink(&self) -> Result<(), SegmentError> {
        match &self.backing {
            Backing::Named { name, unlinked } => {
                if unlinked.swap(true, Ordering::AcqRel) {
                    return Ok(());
                }
                unlink_name(name)
            }
            Backing::Anonymous { .. } => Ok(()),
        }
    }

    /// Where peers find the segment: its name, or an anonymous segment's
    /// `fd:<pid>:<fd>` (see [`Segment::attach`]).
    pub fn address(&self) -> &str {
        match &self.backing {
            Backing::Named { name, .. } => name,
            Backing::Anonymous { address, .. } => address,
        }
    }

    /// Start of the mapping (page aligned). Valid while `self` lives.
    pub fn as_ptr(&self) -> *mut u8 {
        self.map.as_mut_ptr()
    }

    /// Length of the mapping in bytes.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// Always false: an empty segment cannot be created or opened.
    pub fn is_empty(&self) -> bool {
        self.map.len() == 0
    }
}

/// Removes the shared-memory object `name`. A name that does not exist is
/// not an error.
pub fn unlink_name(name: &str) -> Result<(), SegmentError> {
    let c_name = check_name(name)?;
    // SAFETY: `c_name` is a valid NUL-terminated string that outlives the call.
    if unsafe { libc::shm_unlink(c_name.as_ptr()) } == 0 {
        return Ok(());
    }
    let err = io::Error::last_os_error();
    if err.raw_os_error() == Some(libc::ENOENT) {
        Ok(())
    } else {
        Err(SegmentError::os(name, "shm_unlink", err))
    }
}

/// Unlinks every shared-memory object whose name starts with `prefix` (given
/// with or without its leading `/`, e.g. `/oxmpi-4711-`) and returns how many
/// were removed. Meant for mpiexec, to remove what a killed job left behind.
/// An empty prefix is refused, so this can never wipe all of /dev/shm.
pub fn cleanup_prefix(prefix: &str) -> Result<usize, SegmentError> {
    let bare = prefix.strip_prefix('/').unwrap_or(prefix);
    if bare.is_empty() || bare.contains('/') {
        return Err(SegmentError::InvalidName {
            name: prefix.to_owned(),
            reason: "a cleanup prefix must be non-empty and hold no '/' after the first",
        });
    }
    let entries = std::fs::read_dir(SHM_DIR).map_err(|e| SegmentError::os(prefix, "readdir", e))?;
    let mut removed = 0;
    for entry in entries {
        let entry = entry.map_err(|e| SegmentError::os(prefix, "readdir", e))?;
        let Some(file_name) = entry.file_name().to_str().map(str::to_owned) else {
            continue; // Not UTF-8: not one of ours.
        };
        if file_name.starts_with(bare) {
            unlink_name(&format!("/{file_name}"))?;
            removed += 1;
        }
    }
    Ok(removed)
}

/// Checks the POSIX rules for a portable shared-memory name: one leading
/// slash, no other slash, no NUL, at most `MAX_NAME_LEN` bytes.
fn check_name(name: &str) -> Result<CString, SegmentError> {
    let invalid = |reason| SegmentError::InvalidName {
        name: name.to_owned(),
        reason,
    };
    let Some(rest) = name.strip_prefix('/') else {
        return Err(invalid("must start with '/'"));
    };
    if rest.is_empty() {
        return Err(invalid("empty after the leading '/'"));
    }
    if rest.contains('/') {
        return Err(invalid("must hold no '/' after the first"));
    }
    if name.len() > MAX_NAME_LEN {
        return Err(invalid("longer than 255 bytes"));
    }
    CString::new(name).map_err(|_| invalid("contains a NUL byte"))
}

/// Maps the whole of `file` (its size from `fstat`); `what` names it in
/// errors.
fn map_whole(what: &str, file: &File) -> Result<MmapRaw, SegmentError> {
    let len = file
        .metadata()
        .map_err(|e| SegmentError::os(what, "fstat", e))?
        .len();
    if len == 0 {
        return Err(SegmentError::Empty {
            name: what.to_owned(),
        });
    }
    let len = usize::try_from(len)
        .map_err(|_| SegmentError::os(what, "fstat", io::Error::from_raw_os_error(libc::EFBIG)))?;
    MmapOptions::new()
        .len(len)
        .map_raw(file)
        .map_err(|e| SegmentError::os(what, "mmap", e))
}

/// A copy of descriptor `fd` of process `pid` (`pidfd_open`, then
/// `pidfd_getfd`, close-on-exec).
fn fd_of_process(what: &str, pid: libc::pid_t, fd: libc::c_int) -> Result<OwnedFd, SegmentError> {
    // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor.
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    if pidfd < 0 {
        return Err(SegmentError::os(
            what,
            "pidfd_open",
            io::Error::last_os_error(),
        ));
    }
    // SAFETY: `pidfd` was just returned by pidfd_open and nothing else owns it.
    let pidfd = unsafe { OwnedFd::from_raw_fd(pidfd as libc::c_int) };
    // SAFETY: pidfd_getfd takes descriptors and flags and returns a new
    // descriptor (close-on-exec by the kernel's definition).
    let copy = unsafe { libc::syscall(libc::SYS_pidfd_getfd, pidfd.as_raw_fd(), fd, 0) };
    if copy < 0 {
        return Err(SegmentError::os(
            what,
            "pidfd_getfd",
            io::Error::last_os_error(),
        ));
    }
    // SAFETY: `copy` is a new descriptor of this process that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(copy as libc::c_int) })
}

/// Whether anonymous segments can be shared with this process's peers
/// here: the kernel has `memfd_create`, `pidfd_open` and `pidfd_getfd`
/// (Linux 5.6), and Yama does not forbid peers ptrace rights
/// (`ptrace_scope` 2 or 3).
/// Found out once per process.
pub fn anonymous_supported() -> bool {
    static SUPPORTED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *SUPPORTED.get_or_init(|| {
        if super::single_copy::yama_ptrace_scope().is_some_and(|scope| scope >= 2) {
            return false;
        }
        let Ok(probe) = Segment::create_anonymous(4096) else {
            return false;
        };
        // Taking a descriptor of oneself needs no rights: it tests the calls.
        let works = Segment::attach(probe.address()).is_ok();
        log::debug!("anonymous shared-memory segments: {works}");
        works
    })
}

/// `shm_open` with mode 0600 and `O_CLOEXEC`, as an owned file.
fn shm_open(name: &str, c_name: &CString, flags: libc::c_int) -> Result<File, SegmentError> {
    // SAFETY: `c_name` is a valid NUL-terminated string; shm_open has no
    // other memory-safety preconditions.
    let fd = unsafe { libc::shm_open(c_name.as_ptr(), flags | libc::O_CLOEXEC, 0o600) };
    if fd < 0 {
        return Err(SegmentError::os(
            name,
            "shm_open",
            io::Error::last_os_error(),
        ));
    }
    // SAFETY: `fd` was just returned by shm_open, is open, and nothing else
    // owns it.
    Ok(File::from(unsafe { OwnedFd::from_raw_fd(fd) }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A name unique to this process and test, so parallel tests and
    /// concurrent runs never collide.
    fn test_name(tag: &str) -> String {
        format!("/oxmpi-test-{}-segment-{tag}", std::process::id())
    }

    fn shm_path(name: &str) -> std::path::PathBuf {
        std::path::Path::new(SHM_DIR).join(&name[1..])
    }

    #[test]
    fn create_open_share_memory_and_unlink() {
        let name = test_name("share");
        let created = Segment::create(&name, 10_000).expect("create");
        assert_eq!(created.len(), 10_000);
        assert_eq!(
            created.as_ptr() as usize % 4096,
            0,
            "mapping is page aligned"
        );
        let opened = Segment::open(&name).expect("open");
        assert_eq!(opened.len(), 10_000, "open takes its size from fstat");
        // SAFETY: both mappings are 10_000 bytes long and alive.
        unsafe {
            assert_eq!(*opened.as_ptr().add(9_999), 0, "fresh segment is zeroed");
            *created.as_ptr().add(9_999) = 42;
            assert_eq!(*opened.as_ptr().add(9_999), 42, "both map the same memory");
        }
        assert!(shm_path(&name).exists());
        created.unlink().expect("unlink");
        assert!(!shm_path(&name).exists(), "unlink removes the name");
        created.unlink().expect("second unlink is a no-op");
        opened
            .unlink()
            .expect("unlink of an already removed name is fine");
        unlink_name(&name).expect("unlink_name of a missing name is fine");
        // SAFETY: the mapping outlives the name.
        unsafe { assert_eq!(*opened.as_ptr().add(9_999), 42) };
    }

    #[test]
    fn create_is_exclusive_and_drop_does_not_unlink() {
        let name = test_name("excl");
        let first = Segment::create(&name, 4096).expect("create");
        let err = Segment::create(&name, 4096).expect_err("second create must fail");
        let text = err.to_string();
        assert!(text.contains(&name) && text.contains("shm_open"), "{text}");
        drop(first);
        assert!(shm_path(&name).exists(), "drop only unmaps");
        unlink_name(&name).unwrap();
    }

    #[test]
    fn open_missing_and_bad_names_fail_with_the_name() {
        let name = test_name("missing");
        let err = Segment::open(&name).expect_err("nothing to open");
        assert!(err.to_string().contains(&name), "{err}");
        for bad in ["no-slash", "/", "/a/b", "/nul\0byte"] {
            assert!(
                matches!(
                    Segment::create(bad, 64),
                    Err(SegmentError::InvalidName { .. })
                ),
                "{bad:?} accepted"
            );
        }
        assert!(matches!(
            Segment::create(&test_name("zero"), 0),
            Err(SegmentError::Empty { .. })
        ));
        assert!(!shm_path(&test_name("zero")).exists());
    }

    #[test]
    fn anonymous_segments_have_no_name_and_are_shared_by_descriptor() {
        let owner = Segment::create_anonymous(10_000).expect("memfd");
        let address = owner.address().to_owned();
        assert!(address.starts_with(&format!("fd:{}:", std::process::id())));
        // A memfd: a file of no directory (not in /dev/shm).
        let fd = address.rsplit(':').next().unwrap();
        let link = std::fs::read_link(format!("/proc/self/fd/{fd}")).unwrap();
        assert!(
            link.to_string_lossy().starts_with("/memfd:oxmpi-segment"),
            "{}",
            link.display()
        );
        let peer = Segment::attach(&address).expect("pidfd_getfd of oneself");
        assert_eq!(peer.len(), 10_000);
        // SAFETY: both mappings are 10_000 bytes long and alive.
        unsafe {
            assert_eq!(*peer.as_ptr().add(9_999), 0, "zero-filled");
            *owner.as_ptr().add(9_999) = 7;
            assert_eq!(*peer.as_ptr().add(9_999), 7, "one memory");
        }
        owner.unlink().expect("nothing to unlink");
        assert!(anonymous_supported());
    }

    #[test]
    fn attach_refuses_what_is_not_an_oxmpi_segment() {
        // A descriptor of this process that is not one of our memfds.
        let file = File::open("/proc/self/status").unwrap();
        let address = format!("fd:{}:{}", std::process::id(), file.as_raw_fd());
        let err = Segment::attach(&address).unwrap_err().to_string();
        assert!(err.contains("not an oxmpi segment"), "{err}");
        for bad in ["fd:", "fd:12", "fd:x:3", "fd:1:y"] {
            assert!(
                matches!(Segment::attach(bad), Err(SegmentError::InvalidName { .. })),
                "{bad}"
            );
        }
        // No such process (above the kernel's pid limit).
        assert!(Segment::attach("fd:2147483647:3").is_err());
    }

    #[test]
    fn cleanup_prefix_removes_only_matching_names() {
        let prefix = format!("/oxmpi-test-{}-cleanup-", std::process::id());
        let ours: Vec<Segment> = (0..3)
            .map(|i| Segment::create(&format!("{prefix}{i}"), 64).unwrap())
            .collect();
        let other = test_name("cleanup_survivor");
        let _survivor = Segment::create(&other, 64).unwrap();
        assert_eq!(cleanup_prefix(&prefix).unwrap(), 3);
        for s in &ours {
            assert!(!shm_path(s.address()).exists());
        }
        assert!(shm_path(&other).exists(), "a non-matching name survives");
        assert_eq!(cleanup_prefix(&prefix[1..]).unwrap(), 0, "slash optional");
        assert!(cleanup_prefix("/").is_err() && cleanup_prefix("").is_err());
        unlink_name(&other).unwrap();
    }
}
