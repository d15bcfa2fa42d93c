//! Access modes (`MPI_MODE_*`) of `MPI_File_open`, checked as MPI 4.1
//! section 14.2.1 asks: exactly one of `RDONLY`, `WRONLY`, `RDWR`;
//! `RDONLY` with `CREATE` or `EXCL` and `RDWR` with `SEQUENTIAL` are
//! `MPI_ERR_AMODE`, as is a bit MPI does not define.
use std::os::raw::c_int;

use crate::core::error::{MpiError, MpiResult};
use crate::mpi_abi::constants::*;

/// Every bit an access mode may have.
const KNOWN: c_int = MPI_MODE_CREATE
    | MPI_MODE_RDONLY
    | MPI_MODE_WRONLY
    | MPI_MODE_RDWR
    | MPI_MODE_DELETE_ON_CLOSE
    | MPI_MODE_UNIQUE_OPEN
    | MPI_MODE_EXCL
    | MPI_MODE_APPEND
    | MPI_MODE_SEQUENTIAL;

fn bad(why: &str) -> MpiError {
    MpiError::new(MPI_ERR_AMODE, format!("invalid access mode: {why}"))
}

/// Checks an access mode (`MPI_ERR_AMODE` with the reason).
pub fn check(amode: c_int) -> MpiResult {
    if amode & !KNOWN != 0 {
        return Err(bad(&format!(
            "bits {:#x} are no MPI_MODE_* constant",
            amode & !KNOWN
        )));
    }
    let has = |bit: c_int| amode & bit != 0;
    let ways = [MPI_MODE_RDONLY, MPI_MODE_WRONLY, MPI_MODE_RDWR]
        .iter()
        .filter(|&&b| has(b))
        .count();
    if ways != 1 {
        return Err(bad(
            "exactly one of MPI_MODE_RDONLY, MPI_MODE_WRONLY and MPI_MODE_RDWR is required",
        ));
    }
    if has(MPI_MODE_RDONLY) && (has(MPI_MODE_CREATE) || has(MPI_MODE_EXCL)) {
        return Err(bad(
            "MPI_MODE_RDONLY cannot go with MPI_MODE_CREATE or MPI_MODE_EXCL",
        ));
    }
    if has(MPI_MODE_RDWR) && has(MPI_MODE_SEQUENTIAL) {
        return Err(bad("MPI_MODE_RDWR cannot go with MPI_MODE_SEQUENTIAL"));
    }
    Ok(())
}

/// Whether the mode lets the program read.
pub fn may_read(amode: c_int) -> bool {
    amode & (MPI_MODE_RDONLY | MPI_MODE_RDWR) != 0
}

/// Whether the mode lets the program write.
pub fn may_write(amode: c_int) -> bool {
    amode & (MPI_MODE_WRONLY | MPI_MODE_RDWR) != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(amode: c_int) -> Option<c_int> {
        check(amode).err().map(|e| e.class)
    }

    #[test]
    fn io_amode_needs_exactly_one_access_way() {
        assert_eq!(class(MPI_MODE_RDONLY), None);
        assert_eq!(class(MPI_MODE_WRONLY | MPI_MODE_CREATE), None);
        assert_eq!(
            class(MPI_MODE_RDWR | MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_DELETE_ON_CLOSE),
            None
        );
        assert_eq!(class(0), Some(MPI_ERR_AMODE));
        assert_eq!(class(MPI_MODE_CREATE), Some(MPI_ERR_AMODE));
        assert_eq!(class(MPI_MODE_RDONLY | MPI_MODE_RDWR), Some(MPI_ERR_AMODE));
        assert_eq!(class(MPI_MODE_WRONLY | MPI_MODE_RDWR), Some(MPI_ERR_AMODE));
    }

    #[test]
    fn io_amode_rejects_forbidden_combinations_and_unknown_bits() {
        assert_eq!(
            class(MPI_MODE_RDONLY | MPI_MODE_CREATE),
            Some(MPI_ERR_AMODE)
        );
        assert_eq!(class(MPI_MODE_RDONLY | MPI_MODE_EXCL), Some(MPI_ERR_AMODE));
        assert_eq!(
            class(MPI_MODE_RDWR | MPI_MODE_SEQUENTIAL),
            Some(MPI_ERR_AMODE)
        );
        assert_eq!(class(MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL), None);
        assert_eq!(class(MPI_MODE_RDONLY | 0x10000), Some(MPI_ERR_AMODE));
        assert!(may_read(MPI_MODE_RDWR) && may_write(MPI_MODE_RDWR));
        assert!(!may_write(MPI_MODE_RDONLY) && !may_read(MPI_MODE_WRONLY));
    }
}
