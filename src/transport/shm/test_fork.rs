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
