//! The shared file pointer: an 8-byte counter (etypes, little endian) in
//! a hidden sidecar file next to the data file
//! (`.<name>.oxmpi-shfp-<pid of rank 0>-<context>`), which every member
//! opens; an update reads and writes it under an exclusive `flock` of
//! the sidecar, so it is atomic between processes, on any host that
//! shares the file system (as ROMIO does with `fcntl` locks). Rank 0
//! creates it at `MPI_File_open` and removes it at `MPI_File_close`.
//! Where the data file's directory is not writable the sidecar goes to
//! the temporary directory (`TMPDIR`), which then must be shared.
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use crate::core::error::{MpiError, MpiResult};
use crate::mpi_abi::constants::*;

pub struct SharedPointer {
    file: File,
    pub path: PathBuf,
}

/// The sidecar's path for a data file (`in_temp`: in the temporary
/// directory instead of the file's own).
pub fn sidecar_path(data: &Path, pid: u64, context: u64, in_temp: bool) -> PathBuf {
    let name = data
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let file = format!(".{name}.oxmpi-shfp-{pid}-{context:x}");
    if in_temp {
        return std::env::temp_dir().join(file);
    }
    match data.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.join(file),
        _ => PathBuf::from(file),
    }
}

fn io_error(what: &str, e: std::io::Error) -> MpiError {
    MpiError::new(MPI_ERR_IO, format!("shared file pointer: {what}: {e}"))
}

impl SharedPointer {
    /// Creates the sidecar with value `initial` (rank 0).
    pub fn create(path: &Path, initial: u64) -> std::io::Result<SharedPointer> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path)?;
        file.write_all_at(&initial.to_le_bytes(), 0)?;
        Ok(SharedPointer {
            file,
            path: path.to_path_buf(),
        })
    }

    /// Opens the sidecar rank 0 created.
    pub fn open(path: &Path) -> std::io::Result<SharedPointer> {
        let file = OpenOptions::new().read(true).write(true).open(path)?;
        Ok(SharedPointer {
            file,
            path: path.to_path_buf(),
        })
    }

    fn value(&self) -> MpiResult<u64> {
        let mut b = [0u8; 8];
        self.file
            .read_exact_at(&mut b, 0)
            .map_err(|e| io_error("read", e))?;
        Ok(u64::from_le_bytes(b))
    }

    fn store(&self, v: u64) -> MpiResult {
        self.file
            .write_all_at(&v.to_le_bytes(), 0)
            .map_err(|e| io_error("write", e))
    }

    fn locked<T>(&self, f: impl FnOnce() -> MpiResult<T>) -> MpiResult<T> {
        super::sys::lock(&self.file).map_err(|e| io_error("lock", e))?;
        let r = f();
        let _ = super::sys::unlock(&self.file);
        r
    }

    /// The pointer now.
    pub fn get(&self) -> MpiResult<u64> {
        self.locked(|| self.value())
    }

    /// Sets the pointer.
    pub fn set(&self, v: u64) -> MpiResult {
        self.locked(|| self.store(v))
    }

    /// Advances the pointer by `n`; returns where it was (atomically).
    pub fn fetch_add(&self, n: u64) -> MpiResult<u64> {
        self.locked(|| {
            let v = self.value()?;
            self.store(v + n)?;
            Ok(v)
        })
    }
}
