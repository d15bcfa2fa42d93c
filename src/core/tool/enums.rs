//! The enumerations of enumerated control variables (`MPI_T_enum`): each
//! names the values an `MPI_INT` variable may take. An `MPI_T_enum` handle
//! is the address of its entry in [`ENUMS`].

/// One enumeration: its name and its items (name, value).
#[derive(Debug)]
pub struct Enumeration {
    pub name: &'static str,
    pub items: &'static [(&'static str, i32)],
}

impl Enumeration {
    /// The name of `value`, if it is an item.
    pub fn name_of(&self, value: i32) -> Option<&'static str> {
        self.items
            .iter()
            .find(|(_, v)| *v == value)
            .map(|(n, _)| *n)
    }
}

/// `OXMPI_TRANSPORT`.
pub const TRANSPORT: usize = 0;
/// `OXMPI_SHM_SEGMENTS`.
pub const SHM_SEGMENTS: usize = 1;
/// `OXMPI_SHM_SHARED_COPY`.
pub const SHM_SHARED_COPY: usize = 2;
/// `OXMPI_INITIAL_ERRHANDLER`.
pub const INITIAL_ERRHANDLER: usize = 3;
/// `OXMPI_OWN_CORE`.
pub const OWN_CORE: usize = 4;

pub static ENUMS: [Enumeration; 5] = [
    Enumeration {
        name: "oxmpi_transport",
        items: &[("auto", 0), ("tcp", 1), ("shm", 2)],
    },
    Enumeration {
        name: "oxmpi_shm_segments",
        items: &[("auto", 0), ("named", 1)],
    },
    Enumeration {
        name: "oxmpi_shm_shared_copy",
        items: &[("0", 0), ("1", 1), ("auto", 2)],
    },
    Enumeration {
        name: "oxmpi_initial_errhandler",
        items: &[("fatal", 0), ("return", 1), ("abort", 2)],
    },
    Enumeration {
        name: "oxmpi_own_core",
        items: &[("0", 0), ("1", 1), ("auto", 2)],
    },
];

/// The index of the enumeration at `address` (an `MPI_T_enum` handle).
pub fn index_at(address: *const Enumeration) -> Option<usize> {
    ENUMS.iter().position(|e| std::ptr::eq(e, address))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_are_the_entries_and_nothing_else() {
        for (i, e) in ENUMS.iter().enumerate() {
            assert_eq!(index_at(e), Some(i));
            let mut names: Vec<_> = e.items.iter().map(|(n, _)| n).collect();
            names.dedup();
            assert_eq!(names.len(), e.items.len(), "{}: items unique", e.name);
        }
        assert_eq!(index_at(std::ptr::null()), None);
        assert_eq!(index_at(0x31415926 as *const Enumeration), None);
        assert_eq!(ENUMS[TRANSPORT].name_of(1), Some("tcp"));
        assert_eq!(ENUMS[TRANSPORT].name_of(7), None);
    }
}
