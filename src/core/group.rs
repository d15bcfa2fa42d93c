//! Groups: ordered sets of processes (job ranks). Groups are process-level
//! objects; the set algebra here follows MPI's ordering rules (union keeps
//! the first group's order then appends the second's new members; the
//! others keep the first group's order).
use std::os::raw::c_int;
use std::sync::Arc;

use super::error::{MpiError, MpiResult};
use crate::mpi_abi::constants::*;
use crate::transport::ProcessId;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    pub members: Arc<[ProcessId]>,
}

impl Group {
    pub fn new(members: impl Into<Arc<[ProcessId]>>) -> Group {
        Group {
            members: members.into(),
        }
    }

    pub fn empty() -> Group {
        Group::new(Vec::new())
    }

    pub fn size(&self) -> usize {
        self.members.len()
    }

    /// The rank of `process` in the group.
    pub fn rank_of(&self, process: ProcessId) -> Option<usize> {
        self.members.iter().position(|&p| p == process)
    }

    fn contains(&self, process: ProcessId) -> bool {
        self.members.contains(&process)
    }

    pub fn union(&self, other: &Group) -> Group {
        let mut members = self.members.to_vec();
        members.extend(other.members.iter().filter(|p| !self.contains(**p)));
        Group::new(members)
    }

    pub fn intersection(&self, other: &Group) -> Group {
        Group::new(
            self.members
                .iter()
                .copied()
                .filter(|p| other.contains(*p))
                .collect::<Vec<_>>(),
        )
    }

    pub fn difference(&self, other: &Group) -> Group {
        Group::new(
            self.members
                .iter()
                .copied()
                .filter(|p| !other.contains(*p))
                .collect::<Vec<_>>(),
        )
    }

    fn check_distinct_ranks(&self, ranks: &[c_int]) -> MpiResult {
        let mut seen = vec![false; self.size()];
        for &r in ranks {
            if r < 0 || r as usize >= self.size() {
                return Err(MpiError::new(
                    MPI_ERR_RANK,
                    format!("rank {r} is not in the group (size {})", self.size()),
                ));
            }
            if std::mem::replace(&mut seen[r as usize], true) {
                return Err(MpiError::new(
                    MPI_ERR_RANK,
                    format!("rank {r} appears twice"),
                ));
            }
        }
        Ok(())
    }

    pub fn incl(&self, ranks: &[c_int]) -> MpiResult<Group> {
        self.check_distinct_ranks(ranks)?;
        Ok(Group::new(
            ranks
                .iter()
                .map(|&r| self.members[r as usize])
                .collect::<Vec<_>>(),
        ))
    }

    pub fn excl(&self, ranks: &[c_int]) -> MpiResult<Group> {
        self.check_distinct_ranks(ranks)?;
        Ok(Group::new(
            self.members
                .iter()
                .enumerate()
                .filter(|(i, _)| !ranks.contains(&(*i as c_int)))
                .map(|(_, &p)| p)
                .collect::<Vec<_>>(),
        ))
    }

    /// Expands (first, last, stride) triplets into ranks, checking them.
    pub fn expand_ranges(&self, ranges: &[[c_int; 3]]) -> MpiResult<Vec<c_int>> {
        let mut ranks = Vec::new();
        for &[first, last, stride] in ranges {
            if stride == 0 {
                return Err(MpiError::new(MPI_ERR_ARG, "a range has stride 0"));
            }
            for r in [first, last] {
                if r < 0 || r as usize >= self.size() {
                    return Err(MpiError::new(
                        MPI_ERR_RANK,
                        format!("range bound {r} is not in the group (size {})", self.size()),
                    ));
                }
            }
            if (stride > 0 && first > last) || (stride < 0 && first < last) {
                continue; // an empty range
            }
            let mut r = first as i64;
            while (stride > 0 && r <= last as i64) || (stride < 0 && r >= last as i64) {
                ranks.push(r as c_int);
                r += stride as i64;
            }
        }
        self.check_distinct_ranks(&ranks)?;
        Ok(ranks)
    }

    /// `MPI_Group_compare`.
    pub fn compare(&self, other: &Group) -> c_int {
        if self.members == other.members {
            return MPI_IDENT;
        }
        let mut a = self.members.to_vec();
        let mut b = other.members.to_vec();
        a.sort_unstable();
        b.sort_unstable();
        if a == b {
            MPI_SIMILAR
        } else {
            MPI_UNEQUAL
        }
    }

    /// `MPI_Group_translate_ranks` for one rank.
    pub fn translate(&self, rank: c_int, other: &Group) -> MpiResult<c_int> {
        if rank == MPI_PROC_NULL {
            return Ok(MPI_PROC_NULL);
        }
        if rank < 0 || rank as usize >= self.size() {
            return Err(MpiError::new(
                MPI_ERR_RANK,
                format!("rank {rank} is not in the group (size {})", self.size()),
            ));
        }
        Ok(other
            .rank_of(self.members[rank as usize])
            .map_or(MPI_UNDEFINED, |r| r as c_int))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(v: &[u32]) -> Group {
        Group::new(v.to_vec())
    }

    #[test]
    fn set_algebra_keeps_mpi_order() {
        let a = g(&[5, 1, 3]);
        let b = g(&[3, 7, 5]);
        assert_eq!(a.union(&b), g(&[5, 1, 3, 7]));
        assert_eq!(a.intersection(&b), g(&[5, 3]));
        assert_eq!(a.difference(&b), g(&[1]));
        assert_eq!(a.compare(&g(&[5, 1, 3])), MPI_IDENT);
        assert_eq!(a.compare(&g(&[1, 3, 5])), MPI_SIMILAR);
        assert_eq!(a.compare(&b), MPI_UNEQUAL);
    }

    #[test]
    fn incl_excl_ranges_and_translation() {
        let a = g(&[10, 11, 12, 13, 14, 15]);
        assert_eq!(a.incl(&[4, 0]).unwrap(), g(&[14, 10]));
        assert_eq!(a.excl(&[0, 5]).unwrap(), g(&[11, 12, 13, 14]));
        assert_eq!(a.incl(&[1, 1]).unwrap_err().class, MPI_ERR_RANK);
        assert_eq!(a.incl(&[6]).unwrap_err().class, MPI_ERR_RANK);
        assert_eq!(
            a.expand_ranges(&[[0, 4, 2], [5, 3, -2]]).unwrap(),
            vec![0, 2, 4, 5, 3]
        );
        assert_eq!(
            a.expand_ranges(&[[0, 2, 0]]).unwrap_err().class,
            MPI_ERR_ARG
        );
        let b = g(&[13, 10]);
        assert_eq!(a.translate(3, &b).unwrap(), 0);
        assert_eq!(a.translate(1, &b).unwrap(), MPI_UNDEFINED);
        assert_eq!(a.translate(MPI_PROC_NULL, &b).unwrap(), MPI_PROC_NULL);
    }
}
