//! Forking helpers for the cross-process tests.

/// A forked child process, killed and reaped on drop if the test fails
/// before waiting for it (so no child outlives a failed test).
pub(crate) struct Child {
    pid: libc::pid_t,
    reaped: bool,
}

impl Child {
    /// Forks; the child runs `body` and `_exit`s with its result.
    ///
    /// `body` runs in a copy of a multi-threaded process: it must not
    /// allocate, lock or print (another thread may have held the
    /// allocator's lock at fork time).
    pub(crate) fn fork(body: impl FnOnce() -> i32) -> Child {
        // SAFETY: the child only runs `body` (async-signal-safe by the
        // contract above) and then `_exit`s, skipping destructors and
        // atexit handlers that belong to the parent.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed: {}", std::io::Error::last_os_error());
        if pid == 0 {
            let code = body();
            // SAFETY: ends the child without running the parent's cleanup.
            unsafe { libc::_exit(code) };
        }
        Child { pid, reaped: false }
    }

    pub(crate) fn pid(&self) -> libc::pid_t {
        self.pid
    }

    /// Waits for the child and returns its exit code (panics if it was
    /// killed by a signal).
    pub(crate) fn wait(mut self) -> i32 {
        let mut status = 0;
        // SAFETY: `pid` is our unreaped child; `status` is a valid pointer.
        let got = unsafe { libc::waitpid(self.pid, &mut status, 0) };
        self.reaped = true;
        assert_eq!(
            got,
            self.pid,
            "waitpid: {}",
            std::io::Error::last_os_error()
        );
        assert!(
            libc::WIFEXITED(status),
            "child died with status {status:#x}"
        );
        libc::WEXITSTATUS(status)
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if !self.reaped {
            // SAFETY: `pid` is our unreaped child, so the pid cannot have
            // been reused; kill and waitpid have no memory preconditions.
            unsafe {
                libc::kill(self.pid, libc::SIGKILL);
                libc::waitpid(self.pid, std::ptr::null_mut(), 0);
            }
        }
    }
}

/// A shared segment of at least `len` bytes for a cross-process test,
/// anonymous where possible, else named after `what` (and unlinked at
/// once: mapped, it stays until unmapped).
pub(crate) fn shared_segment(len: usize, what: &str) -> super::segment::Segment {
    use super::segment::Segment;
    let len = len.div_ceil(4096) * 4096;
    let segment = Segment::create_anonymous(len)
        .or_else(|_| Segment::create(&format!("/oxmpi-test-{what}-{}", std::process::id()), len))
        .expect("a shared segment");
    let _ = segment.unlink();
    segment
}

/// `segment` mapped again (as another process, forked later, sees it).
pub(crate) fn attach(segment: &super::segment::Segment) -> super::segment::Segment {
    super::segment::Segment::attach(segment.address()).expect("the segment maps again")
}

/// Yields until `ready`.
pub(crate) fn wait_until(ready: impl Fn() -> bool) {
    while !ready() {
        std::thread::yield_now();
    }
}
