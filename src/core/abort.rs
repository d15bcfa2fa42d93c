//! Ending the job: `MPI_Abort`, `MPI_ERRORS_ARE_FATAL` and
//! `MPI_ERRORS_ABORT`. Prints at most one line, asks the launcher to kill
//! the job (PMI `abort`), then leaves at once with `_exit`. Never takes the
//! runtime lock, so it works from any state.
use std::io::Write;
use std::sync::atomic::{AtomicI64, Ordering};

static RANK: AtomicI64 = AtomicI64::new(-1);

/// Remembers this process's job rank for messages.
pub fn set_rank(rank: u32) {
    RANK.store(rank as i64, Ordering::Relaxed);
}

/// "rank 3" or "process 1234" before bootstrap.
pub fn who() -> String {
    match RANK.load(Ordering::Relaxed) {
        r if r >= 0 => format!("rank {r}"),
        _ => format!("process {}", std::process::id()),
    }
}

/// Ends the job with `code`, printing `message` (one line) if not empty.
pub fn abort_job(code: i32, message: &str) -> ! {
    if !message.is_empty() {
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "{message}");
        let _ = err.flush();
    }
    let _ = std::io::stdout().flush();
    if crate::bootstrap::pmi::launcher::send_abort(code, message) {
        // Give the launcher a moment to end the job itself, so it reports
        // the abort rather than this process's exit.
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    // SAFETY: _exit ends the process immediately; no Rust state is used
    // afterwards.
    unsafe { libc::_exit(code & 0xff) }
}
