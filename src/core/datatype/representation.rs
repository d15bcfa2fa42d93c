//! A datatype's layout in another data representation (MPI-IO file views
//! under `external32` or a registered representation, MPI 4.1 section
//! 14.5).
//!
//! In a representation where a basic value takes another number of bytes
//! than in memory (`MPI_LONG` is 4 bytes in external32, 8 here), a derived
//! type's layout changes too. MPI's rule: constructors that count in
//! elements of their old type (contiguous, vector, indexed, indexed_block,
//! subarray, darray) scale with the old type's extent in the
//! representation; displacements given in bytes (hvector, hindexed,
//! hindexed_block, struct, resized) are taken as they are, since the
//! program computes them with `MPI_File_get_type_extent`. So the layout is
//! found by making the type again from its recorded arguments
//! ([`Contents`]), with every predefined type replaced by a block of its
//! size in the representation.
//!
//! The blocks keep the native alignment of the value they stand for, so a
//! struct's extent is rounded up the same way in both layouts, and a type
//! whose values all keep their size has the same layout in the
//! representation as in memory. `MPI_LB`/`MPI_UB` markers stay markers.
use std::os::raw::c_int;

use super::builtin::PrimId;
use super::constructors::{self, Distribution, Order};
use super::{Combiner, Contents, Datatype};
use crate::core::error::{MpiError, MpiResult};
use crate::mpi_abi::constants::*;

/// The size of one value of a predefined type in a representation.
pub type ValueSize<'a> = dyn FnMut(PrimId) -> MpiResult<usize> + 'a;

impl Datatype {
    /// Bytes of `count` elements in a representation.
    pub fn size_in(&self, count: usize, size_of: &mut ValueSize) -> MpiResult<usize> {
        let mut per = 0usize;
        let mut failed = None;
        self.signature().for_each_value(&mut |id, n| {
            if failed.is_none() {
                match size_of(id) {
                    Ok(s) => per += s * n,
                    Err(e) => failed = Some(e),
                }
            }
        });
        if let Some(e) = failed {
            return Err(e);
        }
        per.checked_mul(count)
            .ok_or_else(|| MpiError::new(MPI_ERR_ARG, "the data's size overflows"))
    }

    /// Whether every value of this type has its native size in a
    /// representation (then its layout there is the native one).
    pub fn keeps_sizes_in(&self, size_of: &mut ValueSize) -> MpiResult<bool> {
        let mut same = true;
        let mut failed = None;
        self.signature().for_each_value(&mut |id, _| {
            if same && failed.is_none() {
                match size_of(id) {
                    Ok(s) => same = s == super::builtin::by_id(id).size(),
                    Err(e) => failed = Some(e),
                }
            }
        });
        failed.map_or(Ok(same), Err)
    }

    /// This type as it lies in a representation (see the module docs).
    pub fn in_representation(&self, size_of: &mut ValueSize) -> MpiResult<Datatype> {
        let c = self.contents();
        let mut args = Reader::new(c);
        let old = |i: usize, size_of: &mut ValueSize| -> MpiResult<Datatype> {
            c.types[i].1.in_representation(size_of)
        };
        match c.combiner {
            _ if self.marker().is_some() => Ok(constructors::dup(self)),
            Combiner::Named | Combiner::F90Integer | Combiner::F90Real | Combiner::F90Complex => {
                let size = self.size_in(1, size_of)?;
                let byte = super::lookup(MPI_BYTE)?;
                let mut t = constructors::contiguous(size, &byte)?;
                t.align = self.align;
                Ok(t)
            }
            Combiner::Dup => old(0, size_of),
            Combiner::Contiguous => constructors::contiguous(args.count()?, &old(0, size_of)?),
            Combiner::Vector => {
                let (n, len, stride) = (args.count()?, args.count()?, args.signed_count()?);
                constructors::vector(n, len, stride, &old(0, size_of)?)
            }
            Combiner::Hvector => {
                let (n, len, stride) = (args.count()?, args.count()?, args.address()?);
                constructors::hvector(n, len, stride, &old(0, size_of)?)
            }
            Combiner::Indexed | Combiner::Hindexed => {
                let n = args.count()?;
                let lens = (0..n)
                    .map(|_| args.count())
                    .collect::<MpiResult<Vec<_>>>()?;
                let blocks = displaced(&mut args, c.combiner, lens)?;
                indexed(c.combiner, &blocks, &old(0, size_of)?)
            }
            Combiner::IndexedBlock | Combiner::HindexedBlock => {
                let (n, len) = (args.count()?, args.count()?);
                let blocks = displaced(&mut args, c.combiner, vec![len; n])?;
                indexed(c.combiner, &blocks, &old(0, size_of)?)
            }
            Combiner::Struct => {
                let n = args.count()?;
                let lens = (0..n)
                    .map(|_| args.count())
                    .collect::<MpiResult<Vec<_>>>()?;
                let disps = (0..n)
                    .map(|_| args.address())
                    .collect::<MpiResult<Vec<_>>>()?;
                let parts = (0..n)
                    .map(|i| old(i, size_of))
                    .collect::<MpiResult<Vec<_>>>()?;
                let entries: Vec<(usize, isize, &Datatype)> =
                    (0..n).map(|i| (lens[i], disps[i], &parts[i])).collect();
                constructors::structure(&entries)
            }
            Combiner::Resized => {
                let (lb, extent) = (args.address()?, args.address()?);
                constructors::resized(&old(0, size_of)?, lb, extent)
            }
            Combiner::Subarray => {
                let n = args.int()? as usize;
                let mut dims = || (0..n).map(|_| args.count()).collect::<MpiResult<Vec<_>>>();
                let (sizes, subsizes, starts) = (dims()?, dims()?, dims()?);
                let order = order(args.int()?)?;
                constructors::subarray(&sizes, &subsizes, &starts, order, &old(0, size_of)?)
            }
            Combiner::Darray => {
                let (_size, rank, n) = (args.int()?, args.int()? as usize, args.int()? as usize);
                let gsizes = (0..n)
                    .map(|_| args.count())
                    .collect::<MpiResult<Vec<_>>>()?;
                let ints =
                    |args: &mut Reader| (0..n).map(|_| args.int()).collect::<MpiResult<Vec<_>>>();
                let (distribs, dargs, psizes) =
                    (ints(&mut args)?, ints(&mut args)?, ints(&mut args)?);
                let order = order(args.int()?)?;
                let distribs = distribs
                    .iter()
                    .zip(&dargs)
                    .map(|(&d, &a)| Distribution::from_mpi(d, a).ok_or_else(bad_contents))
                    .collect::<MpiResult<Vec<_>>>()?;
                let psizes: Vec<usize> = psizes.iter().map(|&p| p as usize).collect();
                constructors::darray(rank, &gsizes, &distribs, &psizes, order, &old(0, size_of)?)
            }
        }
    }
}

/// The blocks of an indexed type: displacements in elements (indexed,
/// indexed_block) or bytes (the `h` forms).
fn displaced(
    args: &mut Reader,
    combiner: Combiner,
    lens: Vec<usize>,
) -> MpiResult<Vec<(usize, isize)>> {
    let bytes = matches!(combiner, Combiner::Hindexed | Combiner::HindexedBlock);
    lens.into_iter()
        .map(|len| {
            let d = if bytes {
                args.address()?
            } else {
                args.signed_count()?
            };
            Ok((len, d))
        })
        .collect()
}

fn indexed(combiner: Combiner, blocks: &[(usize, isize)], old: &Datatype) -> MpiResult<Datatype> {
    match combiner {
        Combiner::Hindexed | Combiner::HindexedBlock => {
            constructors::hindexed(combiner, blocks, old)
        }
        _ => constructors::indexed(combiner, blocks, old),
    }
}

fn order(v: c_int) -> MpiResult<Order> {
    match v {
        MPI_ORDER_C => Ok(Order::C),
        MPI_ORDER_FORTRAN => Ok(Order::Fortran),
        _ => Err(bad_contents()),
    }
}

fn bad_contents() -> MpiError {
    MpiError::new(
        MPI_ERR_INTERN,
        "a datatype's recorded arguments do not match its constructor",
    )
}

/// Reads a constructor's recorded arguments in the order the abi layer
/// recorded them: counts are `int`s, or large counts when the type came
/// from a `_c` call; byte displacements `MPI_Aint`s, or large counts.
struct Reader<'a> {
    c: &'a Contents,
    large: bool,
    integers: usize,
    addresses: usize,
    large_counts: usize,
}

impl<'a> Reader<'a> {
    fn new(c: &'a Contents) -> Reader<'a> {
        Reader {
            c,
            large: !c.large_counts.is_empty(),
            integers: 0,
            addresses: 0,
            large_counts: 0,
        }
    }

    fn int(&mut self) -> MpiResult<c_int> {
        let v = *self
            .c
            .integers
            .get(self.integers)
            .ok_or_else(bad_contents)?;
        self.integers += 1;
        Ok(v)
    }

    fn large(&mut self) -> MpiResult<i64> {
        let v = *self
            .c
            .large_counts
            .get(self.large_counts)
            .ok_or_else(bad_contents)?;
        self.large_counts += 1;
        Ok(v)
    }

    fn signed_count(&mut self) -> MpiResult<isize> {
        if self.large {
            Ok(self.large()? as isize)
        } else {
            Ok(self.int()? as isize)
        }
    }

    fn count(&mut self) -> MpiResult<usize> {
        usize::try_from(self.signed_count()?).map_err(|_| bad_contents())
    }

    fn address(&mut self) -> MpiResult<isize> {
        if self.large {
            return Ok(self.large()? as isize);
        }
        let v = *self
            .c
            .addresses
            .get(self.addresses)
            .ok_or_else(bad_contents)?;
        self.addresses += 1;
        Ok(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::datatype::lookup;

    /// external32-like sizes: `MPI_LONG` 4 bytes, the rest native.
    fn sizes(id: PrimId) -> MpiResult<usize> {
        let b = crate::core::datatype::builtin::by_id(id);
        Ok(if b.handle == MPI_LONG { 4 } else { b.size() })
    }

    fn blocks(t: &Datatype) -> Vec<(isize, usize)> {
        let mut v = Vec::new();
        t.for_each_block(1, 0, t.size(), |d, l| v.push((d, l)));
        v
    }

    fn recorded(t: Datatype, c: Contents) -> Datatype {
        t.with_contents(c)
    }

    #[test]
    fn representation_scales_element_counts_and_keeps_bytes() {
        let long = lookup(MPI_LONG).unwrap();
        let mut c = Contents::new(Combiner::Vector);
        c.integers = vec![2, 1, 3];
        c.types.push((MPI_LONG, long.clone()));
        let vector = recorded(constructors::vector(2, 1, 3, &long).unwrap(), c);
        let v = vector.in_representation(&mut sizes).unwrap();
        assert_eq!(blocks(&v), vec![(0, 4), (12, 4)]);
        assert_eq!(v.extent(), 16);
        assert_eq!(vector.size_in(2, &mut sizes).unwrap(), 16);
        assert!(!vector.keeps_sizes_in(&mut sizes).unwrap());

        // An hvector's byte stride stays as given; the large-count form
        // reads its arguments from the large counts.
        let mut c = Contents::new(Combiner::Hvector);
        c.large_counts = vec![2, 1, 24];
        c.types.push((MPI_LONG, long.clone()));
        let hvector = recorded(constructors::hvector(2, 1, 24, &long).unwrap(), c);
        let h = hvector.in_representation(&mut sizes).unwrap();
        assert_eq!(blocks(&h), vec![(0, 4), (24, 4)]);

        // A struct of a long and an int at byte 4: 8 bytes, aligned as a
        // long natively is.
        let int = lookup(MPI_INT).unwrap();
        let mut c = Contents::new(Combiner::Struct);
        c.integers = vec![2, 1, 1];
        c.addresses = vec![0, 4];
        c.types = vec![(MPI_LONG, long.clone()), (MPI_INT, int.clone())];
        let s = recorded(
            constructors::structure(&[(1, 0, &long), (1, 4, &int)]).unwrap(),
            c,
        );
        let r = s.in_representation(&mut sizes).unwrap();
        assert_eq!((r.size(), r.extent()), (8, 8));

        // A resized type keeps its byte bounds.
        let mut c = Contents::new(Combiner::Resized);
        c.addresses = vec![0, 40];
        c.types.push((MPI_LONG, long.clone()));
        let resized = recorded(constructors::resized(&long, 0, 40).unwrap(), c);
        let r = resized.in_representation(&mut sizes).unwrap();
        assert_eq!((r.size(), r.extent()), (4, 40));
    }

    #[test]
    fn representation_of_subarray_and_indexed() {
        let long = lookup(MPI_LONG).unwrap();
        // The 2x2 corner at (1, 1) of a 3x4 array of longs.
        let mut c = Contents::new(Combiner::Subarray);
        c.integers = vec![2, 3, 4, 2, 2, 1, 1, MPI_ORDER_C];
        c.types.push((MPI_LONG, long.clone()));
        let sub = recorded(
            constructors::subarray(&[3, 4], &[2, 2], &[1, 1], Order::C, &long).unwrap(),
            c,
        );
        let r = sub.in_representation(&mut sizes).unwrap();
        assert_eq!(blocks(&r), vec![(20, 8), (36, 8)]);
        assert_eq!(r.extent(), 48);

        let mut c = Contents::new(Combiner::IndexedBlock);
        c.integers = vec![2, 2, 1, 5];
        c.types.push((MPI_LONG, long.clone()));
        let ib = recorded(
            constructors::indexed(Combiner::IndexedBlock, &[(2, 1), (2, 5)], &long).unwrap(),
            c,
        );
        let r = ib.in_representation(&mut sizes).unwrap();
        assert_eq!(blocks(&r), vec![(4, 8), (20, 8)]);

        // Where no value changes size, the layout is the native one.
        let int = lookup(MPI_INT).unwrap();
        let mut c = Contents::new(Combiner::Vector);
        c.integers = vec![3, 2, 5];
        c.types.push((MPI_INT, int.clone()));
        let v = recorded(constructors::vector(3, 2, 5, &int).unwrap(), c);
        assert!(v.keeps_sizes_in(&mut sizes).unwrap());
        let r = v.in_representation(&mut sizes).unwrap();
        assert_eq!(blocks(&r), blocks(&v));
        assert_eq!(r.extent(), v.extent());
    }
}
