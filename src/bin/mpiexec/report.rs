//! mpiexec's own lines, on stderr (`say!`) and stdout (`say_out!`),
//! written so that a closed stream never stops mpiexec: with `mpiexec ... |
//! head -1` the ranks die of SIGPIPE and mpiexec must still report, kill
//! the others, reap them and remove their segments. A line that cannot be
//! written is dropped (`println!` would panic instead).

/// A line on stderr, dropped if stderr is closed.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// Text on stdout, dropped if stdout is closed.
macro_rules! say_out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stdout(), $($arg)*);
    }};
}
