//! Single-copy transfers between processes with `process_vm_readv`: the
//! receiver of a large message copies it straight out of the sender's
//! buffer, once, instead of twice through shared cells.
//!
//! Whether the kernel allows it depends on the pair: reading another process
//! needs ptrace-attach rights over it. Same-user processes have them, except
//! under Yama `ptrace_scope=1` (common on desktops), which only lets a process
//! trace its descendants, so sibling ranks get `EPERM`. A rank lifts that for
//! its launcher's descendants only (the job's ranks of the node) by calling
//! [`allow_peers_to_read`] at init; [`probe`] then tells, per peer,
//! whether single copy works, and the transport falls back to the pipelined
//! copy through cells when it does not.

use std::io;

/// What the kernel's Yama module needs before this process's peers may read
/// its memory with `process_vm_readv` (which asks for ptrace rights).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadRights {
    /// No Yama, or `ptrace_scope=0`: processes of the same user may, as
    /// always; nothing to do.
    Classic,
    /// `ptrace_scope=1`: only a declared tracer (and its descendants) may:
    /// declare `tracer`, the process that started this node's ranks, so
    /// only the job's own processes gain the right.
    DeclareTracer(libc::pid_t),
    /// `ptrace_scope` 2 or 3: no peer may; single copy is refused by
    /// [`probe`] and messages take the rings.
    Refused,
}

/// The Yama setting (`/proc/sys/kernel/yama/ptrace_scope`), if Yama is there.
pub fn yama_ptrace_scope() -> Option<u32> {
    std::fs::read_to_string("/proc/sys/kernel/yama/ptrace_scope")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// What to do for `ptrace_scope` (`None`: no Yama) when the ranks of this
/// node descend from `launcher`.
pub fn read_rights(ptrace_scope: Option<u32>, launcher: libc::pid_t) -> ReadRights {
    match ptrace_scope {
        None | Some(0) => ReadRights::Classic,
        Some(1) => ReadRights::DeclareTracer(launcher),
        Some(_) => ReadRights::Refused,
    }
}

/// Lets this node's other ranks of the job read this process's memory, and
/// nobody else beyond what the system allows anyway: under Yama
/// `ptrace_scope=1`, declares `launcher` (the process that started the
/// node's ranks: oxmpi's mpiexec or its proxy; by default this process's
/// parent, which is Hydra's proxy under Hydra) as the tracer with
/// `PR_SET_PTRACER`, which admits it and its descendants only; with no Yama
/// or `ptrace_scope=0` it does nothing (same-user processes may read, as
/// always); under 2 or 3 nothing helps and [`probe`] will say no.
pub fn allow_peers_to_read(launcher: Option<libc::pid_t>) -> io::Result<ReadRights> {
    // SAFETY: getppid has no preconditions and cannot fail.
    let launcher = launcher.unwrap_or_else(|| unsafe { libc::getppid() });
    let rights = read_rights(yama_ptrace_scope(), launcher);
    if let ReadRights::DeclareTracer(tracer) = rights {
        // SAFETY: prctl with PR_SET_PTRACER takes integer arguments only.
        let rc = unsafe { libc::prctl(libc::PR_SET_PTRACER, tracer as libc::c_ulong, 0, 0, 0) };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(rights)
}

/// Whether this process may read `pid`'s memory with `process_vm_readv`.
///
/// Reads one byte at address 0 of `pid`: the kernel checks the permission
/// before touching the remote address, and address 0 is never mapped, so
/// `EFAULT` means "allowed" while `EPERM` (or `ESRCH`, no such process) means
/// no. The peer needs no cooperation beyond [`allow_peers_to_read`].
pub fn probe(pid: libc::pid_t) -> bool {
    let mut byte = [0u8; 1];
    match read_once(pid, 0, &mut byte) {
        Ok(_) => true,
        Err(err) => err.raw_os_error() == Some(libc::EFAULT),
    }
}

/// Copies `local.len()` bytes from address `remote_addr` of process `pid`
/// into `local`, looping over partial reads. Returns the number of bytes
/// copied: all of them, or fewer only if the remote range runs into memory
/// that is not mapped or not readable. Errors (`EPERM`, `ESRCH`, `EFAULT` at
/// the very first byte, ...) are returned as they come.
pub fn read_remote(pid: libc::pid_t, remote_addr: usize, local: &mut [u8]) -> io::Result<usize> {
    let mut done = 0;
    while done < local.len() {
        match read_once(pid, remote_addr + done, &mut local[done..]) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            // Part of the range was read, then the remote mapping ended.
            Err(err) if done > 0 && err.raw_os_error() == Some(libc::EFAULT) => break,
            Err(err) => return Err(err),
        }
    }
    Ok(done)
}

/// Copies `local` to address `remote_addr` of process `pid` with
/// `process_vm_writev`, looping over partial writes. Returns the number of
/// bytes copied (fewer than all only if the remote range runs into memory
/// that is not mapped or not writable); errors as [`read_remote`].
pub fn write_remote(pid: libc::pid_t, remote_addr: usize, local: &[u8]) -> io::Result<usize> {
    let mut done = 0;
    while done < local.len() {
        let rest = &local[done..];
        let local_iov = libc::iovec {
            iov_base: rest.as_ptr() as *mut libc::c_void,
            iov_len: rest.len(),
        };
        let remote_iov = libc::iovec {
            iov_base: (remote_addr + done) as *mut libc::c_void,
            iov_len: rest.len(),
        };
        // SAFETY: the local iovec describes `rest`, only read by the kernel;
        // the remote one is checked by the kernel against the remote
        // process's mappings (EFAULT if not mapped writable).
        let n = unsafe { libc::process_vm_writev(pid, &local_iov, 1, &remote_iov, 1, 0) };
        if n < 0 {
            let err = io::Error::last_os_error();
            match err.raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::EFAULT) if done > 0 => break,
                _ => return Err(err),
            }
        }
        if n == 0 {
            break;
        }
        done += n as usize;
    }
    Ok(done)
}

/// Parts in one call at most (the kernel's `UIO_MAXIOV`).
const MAX_PARTS: usize = 1024;

/// Copies several parts from process `pid` (each `local` from
/// `remote_addr`) with as few `process_vm_readv` calls as the kernel takes
/// parts (a call costs about as much as copying 16 KiB here, whatever its
/// size). Returns how many leading parts were copied whole; the caller
/// copies the others one by one with [`read_remote`], which also reports
/// why they fail.
pub fn read_remote_parts(pid: libc::pid_t, parts: &mut [(usize, &mut [u8])]) -> usize {
    let parts: Vec<Part> = parts
        .iter_mut()
        .map(|(remote, local)| (local.as_mut_ptr(), local.len(), *remote))
        .collect();
    // SAFETY: each local range is one of the `&mut` slices, writable and
    // borrowed for the call.
    unsafe { transfer_parts(pid, &parts, libc::process_vm_readv) }
}

/// As [`read_remote_parts`], writing each `local` to `remote_addr` of
/// process `pid` with `process_vm_writev`.
pub fn write_remote_parts(pid: libc::pid_t, parts: &[(usize, &[u8])]) -> usize {
    let parts: Vec<Part> = parts
        .iter()
        .map(|(remote, local)| (local.as_ptr().cast_mut(), local.len(), *remote))
        .collect();
    // SAFETY: each local range is one of the borrowed slices, which
    // `process_vm_writev` only reads.
    unsafe { transfer_parts(pid, &parts, libc::process_vm_writev) }
}

/// A part of a batched transfer: local address and length, remote address.
type Part = (*mut u8, usize, usize);

/// `process_vm_readv` or `process_vm_writev`.
type VmCall = unsafe extern "C" fn(
    libc::pid_t,
    *const libc::iovec,
    libc::c_ulong,
    *const libc::iovec,
    libc::c_ulong,
    libc::c_ulong,
) -> libc::ssize_t;

/// Moves `parts` with `call`, [`MAX_PARTS`] per call; returns how many
/// leading parts moved whole.
///
/// # Safety
/// Each local range must stay valid, for writes when `call` reads from
/// the remote process, while this runs.
unsafe fn transfer_parts(pid: libc::pid_t, parts: &[Part], call: VmCall) -> usize {
    let mut whole = 0;
    for batch in parts.chunks(MAX_PARTS) {
        let iovecs = |addr: &dyn Fn(&Part) -> *mut u8| -> Vec<libc::iovec> {
            batch
                .iter()
                .map(|p| libc::iovec {
                    iov_base: addr(p).cast(),
                    iov_len: p.1,
                })
                .collect()
        };
        let local = iovecs(&|p| p.0);
        let remote = iovecs(&|p| p.2 as *mut u8);
        // SAFETY: the local iovecs follow the caller's contract; the remote
        // ones are checked by the kernel against the remote process's
        // mappings (EFAULT where not mapped as needed).
        let n = unsafe {
            call(
                pid,
                local.as_ptr(),
                local.len() as libc::c_ulong,
                remote.as_ptr(),
                remote.len() as libc::c_ulong,
                0,
            )
        };
        let done = whole_parts(n, batch.iter().map(|p| p.1));
        whole += done;
        if done < batch.len() {
            break;
        }
    }
    whole
}

/// How many leading parts of the given lengths a transfer of `n` bytes
/// (a `process_vm_*v` result; negative for an error) covered whole.
fn whole_parts(n: isize, lens: impl Iterator<Item = usize>) -> usize {
    let Ok(mut left) = usize::try_from(n) else {
        return 0;
    };
    let mut whole = 0;
    for len in lens {
        if left < len {
            break;
        }
        left -= len;
        whole += 1;
    }
    whole
}

/// One `process_vm_readv` call with a single iovec on each side.
fn read_once(pid: libc::pid_t, remote_addr: usize, local: &mut [u8]) -> io::Result<usize> {
    let local_iov = libc::iovec {
        iov_base: local.as_mut_ptr().cast(),
        iov_len: local.len(),
    };
    let remote_iov = libc::iovec {
        iov_base: remote_addr as *mut libc::c_void,
        iov_len: local.len(),
    };
    // SAFETY: the local iovec describes `local`, writable for its length;
    // the remote one is only read by the kernel, which checks it against the
    // remote process's mappings and fails with EFAULT if it is not mapped.
    let n = unsafe { libc::process_vm_readv(pid, &local_iov, 1, &remote_iov, 1, 0) };
    if n < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(n as usize)
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn yama_decides_who_may_read() {
        assert_eq!(read_rights(None, 42), ReadRights::Classic);
        assert_eq!(read_rights(Some(0), 42), ReadRights::Classic);
        assert_eq!(read_rights(Some(1), 42), ReadRights::DeclareTracer(42));
        assert_eq!(read_rights(Some(2), 42), ReadRights::Refused);
        assert_eq!(read_rights(Some(3), 42), ReadRights::Refused);
    }

    use super::*;
    use crate::transport::shm::test_fork::Child;
    use std::os::fd::{FromRawFd, OwnedFd};

    /// A pipe, as (read end, write end).
    fn pipe() -> (OwnedFd, OwnedFd) {
        let mut fds = [0; 2];
        // SAFETY: `fds` is a valid two-int array.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        // SAFETY: both fds were just created and are owned by nobody else.
        unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) }
    }

    fn write_byte(fd: &OwnedFd, byte: u8) -> bool {
        use std::os::fd::AsRawFd;
        // SAFETY: writes one byte from a live local.
        unsafe { libc::write(fd.as_raw_fd(), (&byte as *const u8).cast(), 1) == 1 }
    }

    fn read_byte(fd: &OwnedFd) -> Option<u8> {
        use std::os::fd::AsRawFd;
        let mut byte = 0u8;
        // SAFETY: reads one byte into a live local.
        let n = unsafe { libc::read(fd.as_raw_fd(), (&mut byte as *mut u8).cast(), 1) };
        (n == 1).then_some(byte)
    }

    #[test]
    fn reads_own_memory_and_stops_at_an_unreadable_page() {
        let source: Vec<u8> = (0..100_000u32).map(|i| (i * 31) as u8).collect();
        let mut copy = vec![0u8; source.len()];
        // SAFETY: getpid has no preconditions.
        let me = unsafe { libc::getpid() };
        assert!(probe(me), "a process may always read itself");
        let n = read_remote(me, source.as_ptr() as usize, &mut copy).unwrap();
        assert_eq!(n, source.len());
        assert_eq!(copy, source);

        // Two pages, the second unreadable: a read across them is partial.
        // (mprotect, not munmap: another test thread could map something
        // into an unmapped hole before our mapping's drop unmaps it.)
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
        let map = memmap2::MmapMut::map_anon(2 * page).unwrap();
        let base = map.as_ptr() as usize;
        let second = (base + page) as *mut libc::c_void;
        // SAFETY: the second page of our own mapping, never touched by us.
        let rc = unsafe { libc::mprotect(second, page, libc::PROT_NONE) };
        assert_eq!(rc, 0);
        let mut buf = vec![0u8; 2 * page];
        assert_eq!(read_remote(me, base, &mut buf).unwrap(), page);
        let err = read_remote(me, base + page, &mut buf).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::EFAULT));
        drop(map);
    }

    #[test]
    fn parts_are_copied_in_one_call_and_counted_whole() {
        let source: Vec<u8> = (0..300_000u32).map(|i| (i * 7) as u8).collect();
        let base = source.as_ptr() as usize;
        let me = std::process::id() as libc::pid_t;
        let (mut a, mut b, mut c) = (vec![0u8; 1000], vec![0u8; 70_000], vec![0u8; 5]);
        let mut parts: Vec<(usize, &mut [u8])> = vec![
            (base + 10, &mut a[..]),
            (base + 200_000, &mut b[..]),
            (base, &mut c[..]),
        ];
        assert_eq!(read_remote_parts(me, &mut parts), 3);
        assert_eq!(a, source[10..1010]);
        assert_eq!(b, source[200_000..270_000]);
        assert_eq!(c, source[..5]);

        // Writing: the parts land where they are told.
        let mut target = vec![0u8; 2000];
        let at = target.as_mut_ptr() as usize;
        let written = write_remote_parts(
            me,
            &[(at + 100, &source[..50]), (at + 1000, &source[7..17])],
        );
        assert_eq!(written, 2);
        assert_eq!(target[100..150], source[..50]);
        assert_eq!(target[1000..1010], source[7..17]);
        assert!(target[..100]
            .iter()
            .chain(&target[150..1000])
            .all(|&x| x == 0));

        // A part from unmapped memory ends the count there.
        let mut d = [0u8; 16];
        let mut bad: Vec<(usize, &mut [u8])> = vec![(base, &mut a[..]), (8, &mut d[..])];
        assert_eq!(read_remote_parts(me, &mut bad), 1);
        assert_eq!(whole_parts(-1, [4usize].into_iter()), 0);
        assert_eq!(whole_parts(10, [4usize, 6, 1].into_iter()), 2);
        assert_eq!(whole_parts(9, [4usize, 6].into_iter()), 1);
    }

    #[test]
    fn probe_fails_for_a_missing_process() {
        // Above the kernel's PID_MAX_LIMIT (4194304): never a live process.
        assert!(!probe(i32::MAX));
        let mut buf = [0u8; 8];
        assert_eq!(
            read_remote(i32::MAX, 0x1000, &mut buf)
                .unwrap_err()
                .raw_os_error(),
            Some(libc::ESRCH)
        );
    }

    #[test]
    fn parent_reads_a_child_that_allowed_it() {
        const LEN: usize = 1 << 20;
        let mut buffer: Vec<u8> = vec![0xaa; LEN];
        let addr = buffer.as_mut_ptr() as usize;
        let (ready_rx, ready_tx) = pipe();
        let (done_rx, done_tx) = pipe();
        let child = Child::fork(|| {
            // The parent (the default) is this child's launcher.
            let allowed = allow_peers_to_read(None).is_ok();
            // Our copy of the buffer gets its own pattern, so the parent can
            // tell it read us and not itself.
            for (i, b) in buffer.iter_mut().enumerate() {
                *b = (i % 251) as u8;
            }
            if !write_byte(&ready_tx, u8::from(allowed)) {
                return 2;
            }
            read_byte(&done_rx); // Stay alive until the parent has read.
            0
        });
        drop(ready_tx);
        let allowed = read_byte(&ready_rx).expect("child never reported");
        assert_eq!(allowed, 1, "allow_peers_to_read failed in the child");
        if !probe(child.pid()) {
            eprintln!(
                "note: process_vm_readv is forbidden on this system (Yama \
                 ptrace_scope >= 2?): single-copy test skipped"
            );
        } else {
            let mut copy = vec![0u8; LEN];
            let n = read_remote(child.pid(), addr, &mut copy).unwrap();
            assert_eq!(n, LEN);
            assert!(
                copy.iter().enumerate().all(|(i, &b)| b == (i % 251) as u8),
                "read data is not the child's"
            );
            assert!(
                buffer.iter().all(|&b| b == 0xaa),
                "our copy must be untouched"
            );
        }
        write_byte(&done_tx, 1);
        assert_eq!(child.wait(), 0);
    }
}
