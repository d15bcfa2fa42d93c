//! Counts, in one place: the one check a count gets ([`checked`]), the two
//! forms of every count-taking call (`int` in the classic form, `MPI_Count`
//! in its large `_c` twin: [`CountArg`], [`CountOut`], [`Width`]), and the
//! arrays of counts and displacements of the `v`/`w` collectives and the
//! datatype constructors ([`Counts`], [`Displs`]).
//!
//! The function table's kinds (build.rs) turn a `count` argument into a
//! checked `usize`, a `*const count` into [`Counts`] and a `*const displ`
//! into [`Displs`], so one implementation serves both forms of a call.
use std::os::raw::c_int;

use crate::abi::args::array;
use crate::core::error::{MpiError, MpiResult};
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::*;

/// A count argument (`int` or `MPI_Count`, or an entry of an array):
/// non-negative, as a `usize`; `MPI_ERR_COUNT` names the argument.
#[inline(always)]
pub fn checked(n: impl Into<i64>, name: &str) -> MpiResult<usize> {
    let n: i64 = n.into();
    usize::try_from(n).map_err(|_| negative(name, n))
}

#[cold]
#[inline(never)]
fn negative(name: &str, n: i64) -> MpiError {
    MpiError::new(MPI_ERR_COUNT, format!("{name} is negative ({n})"))
}

/// Which form of a count-taking call was made: the classic one (`int`
/// counts) or its large twin (`MPI_Count`). Datatype constructors record
/// it for `MPI_Type_get_contents`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Width {
    Int,
    Large,
}

/// A count value of either form: `int` or `MPI_Count`. `MPI_Aint` is the
/// same Rust type as `MPI_Count`, so a value of that type counts as large.
pub trait CountArg: Copy + Into<i64> {
    const WIDTH: Width;
}
impl CountArg for c_int {
    const WIDTH: Width = Width::Int;
}
impl CountArg for MPI_Count {
    const WIDTH: Width = Width::Large;
}

/// An output count of either width: `int` in the classic calls, `MPI_Count`
/// in the `_c` ones. Only an `int` can be too small; each call decides what
/// that means (`MPI_UNDEFINED`, an error class...).
pub trait CountOut: CountArg + From<c_int> {
    /// `v` in this type, `None` when it does not fit.
    fn fit(v: usize) -> Option<Self>;
}
impl CountOut for c_int {
    fn fit(v: usize) -> Option<c_int> {
        c_int::try_from(v).ok()
    }
}
impl CountOut for MPI_Count {
    fn fit(v: usize) -> Option<MPI_Count> {
        Some(v as MPI_Count)
    }
}

/// An array of counts, `int` or `MPI_Count`.
#[derive(Clone, Copy)]
pub enum Counts {
    Int(*const c_int),
    Large(*const MPI_Count),
}

impl Counts {
    /// Its `n` entries, each checked.
    ///
    /// # Safety
    /// The array must be NULL or hold `n` entries.
    pub unsafe fn read(self, n: usize, name: &str) -> MpiResult<Vec<usize>> {
        // SAFETY: the array is NULL or holds `n` entries (this function's
        // contract, passed on unchanged).
        let raw = unsafe { self.read_raw(n, name) }?;
        raw.iter()
            .enumerate()
            .map(|(i, &c)| checked(c, &format!("{name}[{i}]")))
            .collect()
    }

    /// Its `n` entries as they are, widened (for arrays whose entries are
    /// not all counts, such as an indexed type's displacements).
    ///
    /// # Safety
    /// As [`Counts::read`].
    pub unsafe fn read_raw(self, n: usize, name: &str) -> MpiResult<Vec<i64>> {
        Ok(match self {
            // SAFETY: `p` is NULL or holds `n` `int`s (this function's
            // contract), as `array` asks; the slice is copied out at once.
            Counts::Int(p) => unsafe { array(p, n, name) }?
                .iter()
                .map(|&c| i64::from(c))
                .collect(),
            // SAFETY: `p` is NULL or holds `n` `MPI_Count`s (this
            // function's contract); the slice is copied out at once.
            Counts::Large(p) => unsafe { array(p, n, name) }?.to_vec(),
        })
    }

    /// The form of the call that gave the array.
    pub fn width(self) -> Width {
        match self {
            Counts::Int(_) => Width::Int,
            Counts::Large(_) => Width::Large,
        }
    }
}

impl From<*const c_int> for Counts {
    fn from(p: *const c_int) -> Counts {
        Counts::Int(p)
    }
}

impl From<*const MPI_Count> for Counts {
    fn from(p: *const MPI_Count) -> Counts {
        Counts::Large(p)
    }
}

/// An array of displacements, `int` or `MPI_Aint`.
#[derive(Clone, Copy)]
pub enum Displs {
    Int(*const c_int),
    Aint(*const MPI_Aint),
}

impl Displs {
    /// # Safety
    /// The array must be NULL or hold `n` entries.
    pub unsafe fn read(self, n: usize, name: &str) -> MpiResult<Vec<isize>> {
        Ok(match self {
            // SAFETY: `p` is NULL or holds `n` `int`s (this function's
            // contract), as `array` asks; the slice is copied out at once.
            Displs::Int(p) => unsafe { array(p, n, name) }?
                .iter()
                .map(|&d| d as isize)
                .collect(),
            // SAFETY: `p` is NULL or holds `n` `MPI_Aint`s (this function's
            // contract); the slice is copied out at once.
            Displs::Aint(p) => unsafe { array(p, n, name) }?
                .iter()
                .map(|&d| d as isize)
                .collect(),
        })
    }
}

impl From<*const c_int> for Displs {
    fn from(p: *const c_int) -> Displs {
        Displs::Int(p)
    }
}

impl From<*const MPI_Aint> for Displs {
    fn from(p: *const MPI_Aint) -> Displs {
        Displs::Aint(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_negative_count_is_err_count_and_named() {
        assert_eq!(checked(5i32, "count").unwrap(), 5);
        assert_eq!(checked(1i64 << 40, "count").unwrap(), 1 << 40);
        let e = checked(-3i32, "recvcount").unwrap_err();
        assert_eq!(e.class, MPI_ERR_COUNT);
        assert!(e.to_string().contains("recvcount is negative (-3)"), "{e}");
    }

    #[test]
    fn arrays_of_either_width_read_alike() {
        let ints: [c_int; 3] = [1, 0, 7];
        let large: [MPI_Count; 3] = [1, 0, 7];
        // SAFETY: `ints` is a live local array of 3 entries.
        let a = unsafe { Counts::from(ints.as_ptr()).read(3, "counts") }.unwrap();
        // SAFETY: `large` is a live local array of 3 entries.
        let b = unsafe { Counts::from(large.as_ptr()).read(3, "counts") }.unwrap();
        assert_eq!(a, vec![1, 0, 7]);
        assert_eq!(a, b);
        assert_eq!(Counts::from(ints.as_ptr()).width(), Width::Int);
        let bad: [c_int; 2] = [1, -1];
        // SAFETY: `bad` is a live local array of 2 entries.
        let e = unsafe { Counts::from(bad.as_ptr()).read(2, "counts") }.unwrap_err();
        assert!(e.to_string().contains("counts[1]"), "{e}");
        let displs: [c_int; 2] = [-4, 8];
        assert_eq!(
            // SAFETY: `displs` is a live local array of 2 entries.
            unsafe { Displs::from(displs.as_ptr()).read(2, "displs") }.unwrap(),
            vec![-4, 8]
        );
    }
}
