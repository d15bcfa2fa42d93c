//! Finding the program to run before anything starts: a name with a `/` is a
//! path (relative to the ranks' working directory), any other name is
//! searched in `PATH`, as `execvp` would.
//!
//! Invariant: a [`ResolvedProgram`] is an absolute path to a regular file
//! that the caller may execute, checked once so that a typo fails with one
//! clear line and no rank is started.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// `PATH` used when the ranks' environment has none (as glibc's `execvp`).
pub const DEFAULT_PATH: &str = "/bin:/usr/bin";

/// The program's absolute path, and its name as given (for `argv[0]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedProgram {
    /// Absolute path of the executable.
    pub path: PathBuf,
    /// The name as written on the command line.
    pub given: OsString,
}

/// Why the program cannot be run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProgramError {
    /// No such file (or, for a bare name, none in `PATH`).
    NotFound(OsString),
    /// The file exists but is a directory or lacks execute permission.
    NotExecutable(OsString, &'static str),
}

impl ProgramError {
    /// mpiexec's exit code for this problem (shell convention).
    pub fn exit_code(&self) -> i32 {
        match self {
            ProgramError::NotFound(_) => 127,
            ProgramError::NotExecutable(..) => 126,
        }
    }
}

impl fmt::Display for ProgramError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProgramError::NotFound(name) => {
                write!(f, "program '{}' not found", name.to_string_lossy())
            }
            ProgramError::NotExecutable(name, why) => {
                write!(f, "program '{}' {why}", name.to_string_lossy())
            }
        }
    }
}

/// Resolves `program` for ranks that run in `workdir` with `PATH` set to
/// `path_var` (their environment's value, if any).
pub fn resolve(
    program: &OsStr,
    workdir: &Path,
    path_var: Option<&OsStr>,
) -> Result<ResolvedProgram, ProgramError> {
    let given = program.to_os_string();
    if program.as_bytes().contains(&b'/') {
        let path = workdir.join(program);
        return match check_executable(&path) {
            Ok(()) => Ok(ResolvedProgram { path, given }),
            Err(Some(why)) => Err(ProgramError::NotExecutable(given, why)),
            Err(None) => Err(ProgramError::NotFound(given)),
        };
    }
    if program.is_empty() {
        return Err(ProgramError::NotFound(given));
    }
    let search = path_var.unwrap_or(OsStr::new(DEFAULT_PATH));
    let mut first_refusal = None;
    for dir in std::env::split_paths(search) {
        // An empty PATH entry means the current directory.
        let dir = if dir.as_os_str().is_empty() {
            workdir.to_path_buf()
        } else {
            workdir.join(dir)
        };
        let path = dir.join(program);
        match check_executable(&path) {
            Ok(()) => return Ok(ResolvedProgram { path, given }),
            Err(Some(why)) => {
                first_refusal.get_or_insert(why);
            }
            Err(None) => {}
        }
    }
    Err(match first_refusal {
        Some(why) => ProgramError::NotExecutable(given, why),
        None => ProgramError::NotFound(given),
    })
}

/// `Ok` for an executable regular file; `Err(Some(why))` when the file
/// exists but cannot be run; `Err(None)` when it does not exist.
fn check_executable(path: &Path) -> Result<(), Option<&'static str>> {
    let metadata = std::fs::metadata(path).map_err(|_| None)?;
    if metadata.is_dir() {
        return Err(Some("is a directory"));
    }
    if !metadata.is_file() {
        return Err(Some("is not a regular file"));
    }
    let Ok(c_path) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return Err(None);
    };
    // SAFETY: access(2) reads the NUL-terminated path and nothing else.
    if unsafe { libc::access(c_path.as_ptr(), libc::X_OK) } != 0 {
        return Err(Some("is not executable"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    struct TempDir(PathBuf);

    impl TempDir {
        fn new(tag: &str) -> TempDir {
            let dir = std::env::temp_dir()
                .join(format!("mpiexec-program-test-{tag}-{}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            std::fs::create_dir_all(&dir).unwrap();
            TempDir(dir)
        }

        fn file(&self, name: &str, mode: u32) -> PathBuf {
            let path = self.0.join(name);
            std::fs::write(&path, "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
            path
        }
    }

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn finds_a_bare_name_in_path() {
        let dir = TempDir::new("path");
        let exe = dir.file("tool", 0o755);
        let path_var = format!("/nonexistent:{}", dir.0.display());
        let found = resolve(
            OsStr::new("tool"),
            Path::new("/"),
            Some(OsStr::new(&path_var)),
        );
        assert_eq!(
            found,
            Ok(ResolvedProgram {
                path: exe,
                given: "tool".into()
            })
        );
        let missing = resolve(
            OsStr::new("no-such-tool"),
            Path::new("/"),
            Some(OsStr::new(&path_var)),
        );
        assert_eq!(missing, Err(ProgramError::NotFound("no-such-tool".into())));
        assert_eq!(missing.unwrap_err().exit_code(), 127);
    }

    #[test]
    fn a_name_with_a_slash_is_relative_to_the_working_directory() {
        let dir = TempDir::new("slash");
        let exe = dir.file("prog", 0o755);
        let found = resolve(OsStr::new("./prog"), &dir.0, None).unwrap();
        assert_eq!(found.path, dir.0.join("./prog"));
        assert_eq!(
            found.path.canonicalize().unwrap(),
            exe.canonicalize().unwrap()
        );
        let absolute = resolve(exe.as_os_str(), Path::new("/"), None).unwrap();
        assert_eq!(absolute.path, exe);
        assert_eq!(
            resolve(OsStr::new("./nope"), &dir.0, None),
            Err(ProgramError::NotFound("./nope".into()))
        );
    }

    #[test]
    fn refuses_what_cannot_be_executed() {
        let dir = TempDir::new("noexec");
        dir.file("data", 0o644);
        let err = resolve(OsStr::new("./data"), &dir.0, None).unwrap_err();
        // root may execute nothing without an x bit either.
        assert_eq!(
            err,
            ProgramError::NotExecutable("./data".into(), "is not executable")
        );
        assert_eq!(err.exit_code(), 126);
        assert_eq!(err.to_string(), "program './data' is not executable");
        std::fs::create_dir(dir.0.join("sub")).unwrap();
        let err = resolve(OsStr::new("./sub"), &dir.0, None).unwrap_err();
        assert_eq!(err.to_string(), "program './sub' is a directory");
        assert!(matches!(
            resolve(OsStr::new(""), &dir.0, None),
            Err(ProgramError::NotFound(_))
        ));
    }
}
