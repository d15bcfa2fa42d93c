//! `MPI_Dims_create`: a balanced grid of `nnodes` processes. The free
//! dimensions (zeros) get the factorization of what the fixed ones leave
//! whose largest and smallest factors are closest; among those, the one
//! whose smallest factor is largest, then its second smallest, and so on
//! (MPICH's choice, which its test suite checks value by value). Free
//! dimensions are filled in non-increasing order.
use std::os::raw::c_int;

use crate::core::error::{MpiError, MpiResult};
use crate::mpi_abi::constants::*;

/// Fills the zero entries of `dims` so that the product of all is `nnodes`.
pub fn dims_create(nnodes: c_int, dims: &mut [c_int]) -> MpiResult {
    if nnodes < 0 || (nnodes == 0 && !dims.is_empty()) {
        return Err(MpiError::new(
            MPI_ERR_ARG,
            format!("nnodes {nnodes} is not a positive number of processes"),
        ));
    }
    if let Some(d) = dims.iter().find(|&&d| d < 0) {
        return Err(MpiError::new(
            MPI_ERR_DIMS,
            format!("dims has a negative entry ({d})"),
        ));
    }
    let nnodes = nnodes as u64;
    let fixed: u64 = dims
        .iter()
        .filter(|&&d| d > 0)
        .fold(1u64, |p, &d| p.saturating_mul(d as u64));
    let free = dims.iter().filter(|&&d| d == 0).count();
    if free == 0 {
        if dims.is_empty() || fixed == nnodes {
            return Ok(());
        }
        return Err(not_divisible(nnodes, fixed));
    }
    if nnodes % fixed != 0 {
        return Err(not_divisible(nnodes, fixed));
    }
    let factors = balanced_factors(nnodes / fixed, free);
    for (d, f) in dims.iter_mut().filter(|d| **d == 0).zip(factors) {
        *d = f as c_int;
    }
    Ok(())
}

fn not_divisible(nnodes: u64, fixed: u64) -> MpiError {
    MpiError::new(
        MPI_ERR_DIMS,
        format!("the fixed dimensions (product {fixed}) do not divide nnodes {nnodes}"),
    )
}

/// The factorization of `n` into `k` factors described in the module
/// documentation, largest first.
pub fn balanced_factors(n: u64, k: usize) -> Vec<u64> {
    let divisors: Vec<u64> = (1..=n)
        .take_while(|d| d * d <= n)
        .filter(|d| n % d == 0)
        .fold(Vec::new(), |mut v, d| {
            v.push(d);
            if d * d != n {
                v.push(n / d);
            }
            v
        });
    let mut divisors = divisors;
    divisors.sort_unstable();
    let mut search = Search {
        divisors: &divisors,
        best: None,
        current: Vec::with_capacity(k),
    };
    search.run(n, k, n);
    search.best.expect("1 x ... x n always factors n")
}

struct Search<'a> {
    divisors: &'a [u64],
    best: Option<Vec<u64>>,
    current: Vec<u64>,
}

impl Search<'_> {
    /// Extends `current` (non-increasing) with `k` factors of `rest`, each
    /// at most `max`.
    fn run(&mut self, rest: u64, k: usize, max: u64) {
        if k == 1 {
            if rest <= max {
                self.current.push(rest);
                self.offer();
                self.current.pop();
            }
            return;
        }
        // The factors to come are at most `d`, so `d^k >= rest`: start at
        // the smallest such divisor and go up, the balanced choices first.
        // (d^k overflows u128 for many dimensions: then it is large.)
        let divisors = self.divisors;
        let from = divisors.partition_point(|&d| {
            (d as u128)
                .checked_pow(k as u32)
                .is_some_and(|p| p < rest as u128)
        });
        for &d in &divisors[from..] {
            if d > max {
                break;
            }
            if rest % d != 0 {
                continue;
            }
            if let Some(best) = &self.best {
                // The smallest factor to come is at most the (k-1)-th root
                // of what `d` leaves, so the spread is at least this, which
                // only grows with `d`.
                let first = self.current.first().copied().unwrap_or(d);
                if first.saturating_sub(root(rest / d, k - 1)) > spread(best) {
                    break;
                }
            }
            self.current.push(d);
            self.run(rest / d, k - 1, d);
            self.current.pop();
        }
    }

    fn offer(&mut self) {
        let better = match &self.best {
            None => true,
            Some(best) => better(&self.current, best),
        };
        if better {
            self.best = Some(self.current.clone());
        }
    }
}

/// The largest factor less the smallest (factors largest first).
fn spread(f: &[u64]) -> u64 {
    f[0] - f[f.len() - 1]
}

/// Whether factorization `a` is better than `b`: a smaller spread, then,
/// from the smallest factor up, the larger factor first.
fn better(a: &[u64], b: &[u64]) -> bool {
    if spread(a) != spread(b) {
        return spread(a) < spread(b);
    }
    a.iter()
        .rev()
        .zip(b.iter().rev())
        .find(|(x, y)| x != y)
        .is_some_and(|(x, y)| x > y)
}

/// The integer k-th root of `n`, rounded down.
fn root(n: u64, k: usize) -> u64 {
    let mut r = (n as f64).powf(1.0 / k as f64) as u64 + 1;
    while r > 0
        && (r as u128)
            .checked_pow(k as u32)
            .is_none_or(|p| p > n as u128)
    {
        r -= 1;
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    fn create(n: c_int, dims: &[c_int]) -> Vec<c_int> {
        let mut d = dims.to_vec();
        dims_create(n, &mut d).unwrap();
        d
    }

    #[test]
    fn balanced_grids() {
        assert_eq!(create(6, &[0, 0]), [3, 2]);
        assert_eq!(create(7, &[0, 0]), [7, 1]);
        assert_eq!(create(16, &[0, 0, 0]), [4, 2, 2]);
        assert_eq!(create(12, &[0, 3, 0]), [2, 3, 2]);
        assert_eq!(create(1, &[0, 0, 0]), [1, 1, 1]);
        assert_eq!(create(72, &[0, 0]), [9, 8]);
        assert_eq!(create(720, &[0, 0, 0]), [10, 9, 8]);
        // Ties in the spread go to the larger smallest factors (MPICH's
        // choice): 163 x 9 x 8 x 6 rather than 163 x 12 x 6 x 6.
        assert_eq!(create(70416, &[0, 0, 0, 0]), [163, 9, 8, 6]);
        assert_eq!(create(117936, &[0; 5]), [14, 13, 9, 9, 8]);
    }

    #[test]
    fn many_dimensions() {
        // Cases of MPICH's test suite (topo/dims5): with 10 and more free
        // dimensions d^k overflows 128 bits during the search.
        assert_eq!(create(221184, &[0; 10]), [4, 4, 4, 4, 4, 4, 3, 3, 3, 2]);
        assert_eq!(
            create(995328, &[0; 16]),
            [4, 3, 3, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2]
        );
        assert_eq!(
            create(884736, &[0; 17]),
            [4, 3, 3, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2]
        );
        assert_eq!(create(1, &[0; 20]), [1; 20]);
    }

    #[test]
    fn preset_dimensions_keep_their_places() {
        assert_eq!(create(24, &[0, 0, 2]), [4, 3, 2]);
        assert_eq!(create(30, &[0, 5, 0]), [3, 5, 2]);
        assert_eq!(create(8, &[2, 0, 2, 0]), [2, 2, 2, 1]);
        let mut d = [0, 0];
        assert_eq!(dims_create(-1, &mut d).unwrap_err().class, MPI_ERR_ARG);
        assert_eq!(dims_create(0, &mut d).unwrap_err().class, MPI_ERR_ARG);
    }

    #[test]
    fn fixed_dimensions_must_divide() {
        let mut d = [5, 0];
        assert_eq!(dims_create(12, &mut d).unwrap_err().class, MPI_ERR_DIMS);
        let mut d = [3, 4];
        assert!(dims_create(12, &mut d).is_ok());
        let mut d = [3, 5];
        assert_eq!(dims_create(12, &mut d).unwrap_err().class, MPI_ERR_DIMS);
        let mut d = [-1, 0];
        assert_eq!(dims_create(12, &mut d).unwrap_err().class, MPI_ERR_DIMS);
        assert!(dims_create(1, &mut []).is_ok());
    }
}
