//! Array-shaped datatypes through the C ABI: `MPI_Type_create_subarray`
//! and `MPI_Type_create_darray` (and their `_c` forms). Shapes and
//! distributions are checked here (a subarray outside its array, a process
//! grid that does not match `size`: `MPI_ERR_ARG`); the layouts come from
//! `core::datatype::constructors`.
#![allow(clippy::missing_safety_doc)] // each function's contract is its MPI function's.

use std::os::raw::c_int;

use crate::abi::args::array;
use crate::abi::count::{Counts, Width};
use crate::abi::datatype::{create, typed, Args};
use crate::core::datatype::constructors::{self, Distribution, Order};
use crate::core::datatype::Combiner;
use crate::core::error::{MpiError, MpiResult};
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::*;

fn order_of(order: c_int) -> MpiResult<Order> {
    match order {
        MPI_ORDER_C => Ok(Order::C),
        MPI_ORDER_FORTRAN => Ok(Order::Fortran),
        _ => Err(MpiError::new(
            MPI_ERR_ARG,
            format!("order {order} is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN"),
        )),
    }
}

fn dims(ndims: c_int) -> MpiResult<usize> {
    if ndims < 1 {
        return Err(MpiError::new(
            MPI_ERR_ARG,
            format!("ndims must be positive (got {ndims})"),
        ));
    }
    Ok(ndims as usize)
}

/// Subarray: checks `size >= 1`, `0 <= subsize <= size` and `0 <= start
/// <= size - subsize` in every dimension.
fn make_subarray(
    width: Width,
    ndims: c_int,
    (sizes, subsizes, starts): (Vec<i64>, Vec<i64>, Vec<i64>),
    order: c_int,
    oldtype: MPI_Datatype,
    newtype: &mut MPI_Datatype,
) -> MpiResult {
    for i in 0..sizes.len() {
        let (size, sub, start) = (sizes[i], subsizes[i], starts[i]);
        if size < 1 {
            return Err(MpiError::new(
                MPI_ERR_ARG,
                format!("array_of_sizes[{i}] = {size} is not positive"),
            ));
        }
        if sub < 0 || sub > size {
            return Err(MpiError::new(
                MPI_ERR_ARG,
                format!("array_of_subsizes[{i}] = {sub} is outside 0..={size}"),
            ));
        }
        if start < 0 || start > size - sub {
            return Err(MpiError::new(
                MPI_ERR_ARG,
                format!("array_of_starts[{i}] = {start} puts the subarray outside 0..{size}"),
            ));
        }
    }
    let ord = order_of(order)?;
    let old = typed(oldtype)?;
    let unsigned = |v: &[i64]| v.iter().map(|&x| x as usize).collect::<Vec<_>>();
    let t = constructors::subarray(
        &unsigned(&sizes),
        &unsigned(&subsizes),
        &unsigned(&starts),
        ord,
        &old.1,
    );
    let args = Args::new(Combiner::Subarray, width)
        .int(ndims.into())
        .counts(&sizes)
        .counts(&subsizes)
        .counts(&starts)
        .int(order.into());
    create(newtype, t, args.datatype(old))
}

/// `MPI_Type_create_subarray` and `_c`.
pub unsafe fn create_subarray(
    width: Width,
    ndims: c_int,
    sizes: Counts,
    subsizes: Counts,
    starts: Counts,
    order: c_int,
    oldtype: MPI_Datatype,
    newtype: &mut MPI_Datatype,
) -> MpiResult {
    let n = dims(ndims)?;
    // SAFETY: MPI_Type_create_subarray's three arrays are NULL or hold `ndims`
    // entries (MPI's contract); `n` is `ndims`, checked positive, and each is
    // copied out here.
    let shape = unsafe {
        (
            sizes.read_raw(n, "array_of_sizes")?,
            subsizes.read_raw(n, "array_of_subsizes")?,
            starts.read_raw(n, "array_of_starts")?,
        )
    };
    make_subarray(width, ndims, shape, order, oldtype, newtype)
}

/// Darray arguments as C gives them (all arrays `ndims` long).
struct DarrayArgs {
    size: c_int,
    rank: c_int,
    gsizes: Vec<i64>,
    distribs: Vec<i64>,
    dargs: Vec<i64>,
    psizes: Vec<i64>,
}

impl DarrayArgs {
    /// Checks the grid and the distributions.
    fn distributions(&self) -> MpiResult<Vec<Distribution>> {
        let (size, rank) = (self.size, self.rank);
        if size < 1 {
            return Err(MpiError::new(
                MPI_ERR_ARG,
                format!("size must be positive (got {size})"),
            ));
        }
        if rank < 0 || rank >= size {
            return Err(MpiError::new(
                MPI_ERR_RANK,
                format!("rank {rank} is not in 0..{size}"),
            ));
        }
        let mut grid: i64 = 1;
        let mut out = Vec::with_capacity(self.gsizes.len());
        for i in 0..self.gsizes.len() {
            let (g, p, darg) = (self.gsizes[i], self.psizes[i], self.dargs[i]);
            if g < 1 || p < 1 {
                return Err(MpiError::new(
                    MPI_ERR_ARG,
                    format!("dimension {i}: gsize {g} and psize {p} must be positive"),
                ));
            }
            grid = grid.saturating_mul(p);
            let dist = Distribution::from_mpi(self.distribs[i] as c_int, darg as c_int)
                .ok_or_else(|| {
                    if darg != MPI_DISTRIBUTE_DFLT_DARG as i64 && darg < 1 {
                        let what = "is neither positive nor MPI_DISTRIBUTE_DFLT_DARG";
                        MpiError::new(MPI_ERR_ARG, format!("array_of_dargs[{i}] = {darg} {what}"))
                    } else {
                        let d = self.distribs[i];
                        MpiError::new(
                            MPI_ERR_ARG,
                            format!("array_of_distribs[{i}] = {d} is not a distribution"),
                        )
                    }
                })?;
            if let Distribution::Block(Some(b)) = dist {
                if (b as i64).saturating_mul(p) < g {
                    return Err(MpiError::new(
                        MPI_ERR_ARG,
                        format!("dimension {i}: {p} blocks of {b} do not cover {g} elements"),
                    ));
                }
            }
            out.push(dist);
        }
        if grid != size as i64 {
            return Err(MpiError::new(
                MPI_ERR_ARG,
                format!("the process grid has {grid} processes, size is {size}"),
            ));
        }
        Ok(out)
    }
}

fn make_darray(
    width: Width,
    a: DarrayArgs,
    order: c_int,
    oldtype: MPI_Datatype,
    newtype: &mut MPI_Datatype,
) -> MpiResult {
    let distribs = a.distributions()?;
    let ord = order_of(order)?;
    let old = typed(oldtype)?;
    let unsigned = |v: &[i64]| v.iter().map(|&x| x as usize).collect::<Vec<_>>();
    let t = constructors::darray(
        a.rank as usize,
        &unsigned(&a.gsizes),
        &distribs,
        &unsigned(&a.psizes),
        ord,
        &old.1,
    );
    let args = Args::new(Combiner::Darray, width)
        .ints(&[a.size.into(), a.rank.into(), a.gsizes.len() as i64])
        .counts(&a.gsizes)
        .ints(&a.distribs)
        .ints(&a.dargs)
        .ints(&a.psizes)
        .int(order.into());
    create(newtype, t, args.datatype(old))
}

/// `MPI_Type_create_darray` and `_c`.
pub unsafe fn create_darray(
    width: Width,
    size: c_int,
    rank: c_int,
    ndims: c_int,
    gsizes: Counts,
    distribs: *const c_int,
    dargs: *const c_int,
    psizes: *const c_int,
    order: c_int,
    oldtype: MPI_Datatype,
    newtype: &mut MPI_Datatype,
) -> MpiResult {
    let n = dims(ndims)?;
    let ints = |p: *const c_int, name: &str| -> MpiResult<Vec<i64>> {
        // SAFETY: MPI's contract: each array is NULL or holds `ndims`
        // values (`n`, checked positive); the slice is copied out at once.
        Ok(unsafe { array(p, n, name) }?
            .iter()
            .map(|&v| i64::from(v))
            .collect())
    };
    let a = DarrayArgs {
        size,
        rank,
        // SAFETY: `array_of_gsizes` is NULL or holds `ndims` (`n`) values
        // (MPI's contract); copied out here.
        gsizes: unsafe { gsizes.read_raw(n, "array_of_gsizes") }?,
        distribs: ints(distribs, "array_of_distribs")?,
        dargs: ints(dargs, "array_of_dargs")?,
        psizes: ints(psizes, "array_of_psizes")?,
    };
    make_darray(width, a, order, oldtype, newtype)
}
