//! MPI_T's string protocol (MPI 4.1 section 15.3.3), as MPICH implements
//! it: a NULL buffer or a zero length asks for the length the string needs
//! (NUL included); otherwise the string is copied, truncated to fit with
//! its NUL, and the length written (NUL included) is returned.

/// What to do with a string of `len` bytes for a buffer of `capacity`
/// bytes (`None`: the buffer is NULL).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fit {
    /// Write nothing; report this length (the string's, plus its NUL).
    LengthOnly(usize),
    /// Copy this many bytes and a NUL; report this plus one.
    Copy(usize),
}

impl Fit {
    pub fn new(len: usize, capacity: Option<usize>) -> Fit {
        match capacity {
            None | Some(0) => Fit::LengthOnly(len + 1),
            Some(capacity) => Fit::Copy(len.min(capacity - 1)),
        }
    }

    /// The length reported back to the caller.
    pub fn reported(self) -> usize {
        match self {
            Fit::LengthOnly(n) => n,
            Fit::Copy(n) => n + 1,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Fit;

    #[test]
    fn a_null_or_empty_buffer_gets_the_needed_length() {
        assert_eq!(Fit::new(5, None), Fit::LengthOnly(6));
        assert_eq!(Fit::new(5, Some(0)), Fit::LengthOnly(6));
        assert_eq!(Fit::new(0, None).reported(), 1);
    }

    #[test]
    fn a_short_buffer_truncates_with_room_for_the_nul() {
        assert_eq!(Fit::new(5, Some(3)), Fit::Copy(2));
        assert_eq!(Fit::new(5, Some(3)).reported(), 3);
        assert_eq!(Fit::new(5, Some(1)), Fit::Copy(0));
        assert_eq!(Fit::new(5, Some(6)), Fit::Copy(5));
        assert_eq!(Fit::new(5, Some(100)).reported(), 6);
    }
}
