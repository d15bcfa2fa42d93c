//! Cartesian topologies: a grid of `dims[0] x dims[1] x ...` processes,
//! periodic or not in each dimension, ranks in row-major order (the last
//! coordinate varies fastest), as MPI defines it.
use std::os::raw::c_int;

use crate::core::error::{MpiError, MpiResult};
use crate::mpi_abi::constants::*;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cart {
    pub dims: Vec<usize>,
    pub periods: Vec<bool>,
}

impl Cart {
    /// A grid from `MPI_Cart_create`'s (or `Cart_map`'s) arguments:
    /// `MPI_ERR_DIMS` for a negative dimension (MPICH accepts zero-sized
    /// ones only in an empty grid).
    pub fn new(dims: &[c_int], periods: &[c_int]) -> MpiResult<Cart> {
        if let Some((i, d)) = dims.iter().enumerate().find(|(_, &d)| d <= 0) {
            return Err(MpiError::new(
                MPI_ERR_DIMS,
                format!("dims[{i}] is {d}: every dimension must be at least 1"),
            ));
        }
        Ok(Cart {
            dims: dims.iter().map(|&d| d as usize).collect(),
            periods: periods.iter().map(|&p| p != 0).collect(),
        })
    }

    pub fn ndims(&self) -> usize {
        self.dims.len()
    }

    /// The number of processes in the grid (`None` if it overflows).
    pub fn size(&self) -> Option<usize> {
        self.dims.iter().try_fold(1usize, |p, &d| p.checked_mul(d))
    }

    /// The coordinates of `rank` (which must be in the grid).
    pub fn coords(&self, rank: usize) -> Vec<usize> {
        let mut coords = vec![0; self.ndims()];
        let mut r = rank;
        for (c, &d) in coords.iter_mut().zip(&self.dims).rev() {
            *c = r % d;
            r /= d;
        }
        coords
    }

    /// The rank at `coords`: a periodic dimension wraps, a coordinate out
    /// of a non-periodic dimension is `MPI_ERR_ARG`.
    pub fn rank(&self, coords: &[c_int]) -> MpiResult<usize> {
        let mut rank = 0usize;
        for (i, (&c, &d)) in coords.iter().zip(&self.dims).enumerate() {
            let c = i64::from(c);
            let d = d as i64;
            let c = if self.periods[i] {
                c.rem_euclid(d)
            } else if (0..d).contains(&c) {
                c
            } else {
                return Err(MpiError::new(
                    MPI_ERR_ARG,
                    format!("coords[{i}] is {c}, outside the non-periodic dimension of size {d}"),
                ));
            };
            rank = rank * d as usize + c as usize;
        }
        Ok(rank)
    }

    /// The rank `disp` steps from `rank` along `direction`: `None`
    /// (`MPI_PROC_NULL`) past the end of a non-periodic dimension.
    pub fn step(&self, rank: usize, direction: usize, disp: i64) -> Option<usize> {
        let mut coords = self.coords(rank);
        let d = self.dims[direction] as i64;
        let c = coords[direction] as i64 + disp;
        let c = if self.periods[direction] {
            c.rem_euclid(d)
        } else if (0..d).contains(&c) {
            c
        } else {
            return None;
        };
        coords[direction] = c as usize;
        Some(
            coords
                .iter()
                .zip(&self.dims)
                .fold(0, |r, (&c, &d)| r * d + c),
        )
    }

    /// `MPI_Cart_shift`: the source and destination of a shift by `disp`.
    pub fn shift(
        &self,
        rank: usize,
        direction: usize,
        disp: i64,
    ) -> (Option<usize>, Option<usize>) {
        (
            self.step(rank, direction, -disp),
            self.step(rank, direction, disp),
        )
    }

    /// The neighbours of `rank` for neighborhood collectives: for each
    /// dimension the -1 then the +1 neighbour (`None`: `MPI_PROC_NULL`).
    pub fn neighbors(&self, rank: usize) -> Vec<Option<usize>> {
        (0..self.ndims())
            .flat_map(|d| [self.step(rank, d, -1), self.step(rank, d, 1)])
            .collect()
    }

    /// The grid of the dimensions `remain` keeps (`MPI_Cart_sub`).
    pub fn sub(&self, remain: &[bool]) -> Cart {
        let keep = |v: &[usize]| -> Vec<usize> {
            v.iter()
                .zip(remain)
                .filter(|(_, &k)| k)
                .map(|(&x, _)| x)
                .collect()
        };
        Cart {
            dims: keep(&self.dims),
            periods: self
                .periods
                .iter()
                .zip(remain)
                .filter(|(_, &k)| k)
                .map(|(&p, _)| p)
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid() -> Cart {
        // 2 x 3 x 4, periodic in the middle dimension only.
        Cart::new(&[2, 3, 4], &[0, 1, 0]).unwrap()
    }

    #[test]
    fn coords_and_rank_are_row_major_inverses() {
        let g = grid();
        assert_eq!(g.size(), Some(24));
        assert_eq!(g.coords(0), [0, 0, 0]);
        assert_eq!(g.coords(5), [0, 1, 1]);
        assert_eq!(g.coords(23), [1, 2, 3]);
        for r in 0..24 {
            let c: Vec<c_int> = g.coords(r).iter().map(|&c| c as c_int).collect();
            assert_eq!(g.rank(&c).unwrap(), r);
        }
        // The periodic dimension wraps, the others do not.
        assert_eq!(g.rank(&[1, -1, 3]).unwrap(), 23);
        assert_eq!(g.rank(&[0, 4, 0]).unwrap(), 4);
        assert_eq!(g.rank(&[2, 0, 0]).unwrap_err().class, MPI_ERR_ARG);
    }

    #[test]
    fn shifts_wrap_only_in_periodic_dimensions() {
        let g = grid();
        // Rank 4 is (0, 1, 0).
        assert_eq!(g.shift(4, 0, 1), (None, Some(16)));
        assert_eq!(g.shift(4, 1, 1), (Some(0), Some(8)));
        assert_eq!(g.shift(4, 1, 2), (Some(8), Some(0)));
        assert_eq!(g.shift(4, 2, -1), (Some(5), None));
        assert_eq!(
            g.neighbors(4),
            [None, Some(16), Some(0), Some(8), None, Some(5)]
        );
    }

    #[test]
    fn periodic_dimensions_of_size_one_and_two() {
        let g = Cart::new(&[1, 2], &[1, 1]).unwrap();
        assert_eq!(g.neighbors(0), [Some(0), Some(0), Some(1), Some(1)]);
        assert_eq!(g.neighbors(1), [Some(1), Some(1), Some(0), Some(0)]);
    }

    #[test]
    fn shifts_by_zero_and_past_whole_dimensions() {
        let g = grid();
        // Rank 17 is (1, 1, 1).
        assert_eq!(g.shift(17, 2, 0), (Some(17), Some(17)));
        // Periodic: a shift by a multiple of the size comes back.
        assert_eq!(g.shift(17, 1, 3), (Some(17), Some(17)));
        assert_eq!(g.shift(17, 1, -7), (Some(21), Some(13)));
        // Not periodic: past either end is MPI_PROC_NULL.
        assert_eq!(g.shift(17, 0, -1), (None, Some(5)));
        assert_eq!(g.shift(17, 2, 2), (None, Some(19)));
        assert_eq!(g.shift(17, 2, -1), (Some(18), Some(16)));
        assert_eq!(g.shift(17, 2, -4), (None, None));
        assert_eq!(g.shift(17, 2, i64::from(c_int::MIN)), (None, None));
    }

    #[test]
    fn sub_of_every_and_of_no_dimension() {
        let g = grid();
        assert_eq!(g.sub(&[true, true, true]), g);
        let none = g.sub(&[false, false, false]);
        assert_eq!(none.ndims(), 0);
        assert_eq!(none.size(), Some(1));
        assert!(none.coords(0).is_empty());
        let middle = g.sub(&[false, true, false]);
        assert_eq!(
            (middle.dims.as_slice(), middle.periods.as_slice()),
            (&[3][..], &[true][..])
        );
        // A member's rank in its sub-grid is its coordinates there.
        assert_eq!(middle.rank(&[2]).unwrap(), 2);
    }

    #[test]
    fn sub_keeps_the_chosen_dimensions() {
        let s = grid().sub(&[true, false, true]);
        assert_eq!(s.dims, [2, 4]);
        assert_eq!(s.periods, [false, false]);
        assert_eq!(Cart::new(&[2, 0], &[0, 0]).unwrap_err().class, MPI_ERR_DIMS);
    }
}
