//! Making datatypes: the predefined ones from the builtin table, and every
//! derived-type constructor, all expressed as "copies of old types at
//! displacements" fed to one [`Layout`] accumulator.
//!
//! Bounds follow MPICH 4, which programs compare against: `lb`/`ub` are the
//! lowest/highest bound of the copies; an `MPI_LB`/`MPI_UB` entry of a
//! struct overrides its side (only directly: a marker inside a part is an
//! ordinary bound); a struct with no marker has its extent rounded up to
//! the alignment of its most aligned basic type. Subarray and darray types
//! have lb 0 and the whole array as extent. Arguments arrive checked and
//! converted by the abi layer; what can still fail here is overflow.
use std::os::raw::c_int;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use super::builtin::{self, BoundMarker, PrimId};
use super::signature::{Signature, SignatureBuilder};
use super::typemap::{Run, Typemap, TypemapBuilder};
use super::{Combiner, Contents, Datatype};
use crate::core::error::{MpiError, MpiResult};
use crate::mpi_abi::constants::*;

/// Array storage order of subarray and darray types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    C,
    Fortran,
}

/// One dimension's distribution in a darray.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Distribution {
    /// Blocks of the given size (`None`: the default, ceil(gsize/psize)).
    Block(Option<usize>),
    /// Round-robin blocks of the given size (`None`: 1).
    Cyclic(Option<usize>),
    None,
}

impl Distribution {
    /// From `MPI_DISTRIBUTE_*` and its `darg` (`MPI_DISTRIBUTE_DFLT_DARG`
    /// or a positive block size); `None` for anything else.
    pub fn from_mpi(distrib: c_int, darg: c_int) -> Option<Distribution> {
        let block = match darg {
            MPI_DISTRIBUTE_DFLT_DARG => None,
            d if d >= 1 => Some(d as usize),
            _ => return None,
        };
        match distrib {
            MPI_DISTRIBUTE_NONE => Some(Distribution::None),
            MPI_DISTRIBUTE_CYCLIC => Some(Distribution::Cyclic(block)),
            MPI_DISTRIBUTE_BLOCK => Some(Distribution::Block(block)),
            _ => None,
        }
    }
}

fn too_large() -> MpiError {
    MpiError::new(
        MPI_ERR_ARG,
        "the datatype's size or extent does not fit in an address-sized integer",
    )
}

fn to_isize(v: i128) -> MpiResult<isize> {
    isize::try_from(v).map_err(|_| too_large())
}

/// Bounds of some copies, kept wide so overflow is caught once at the end.
#[derive(Clone, Copy, Default)]
struct Span {
    lo: Option<i128>,
    hi: Option<i128>,
}

impl Span {
    fn add(&mut self, lo: i128, hi: i128) {
        self.lo = Some(self.lo.map_or(lo, |l| l.min(lo)));
        self.hi = Some(self.hi.map_or(hi, |h| h.max(hi)));
    }
}

/// Accumulates copies of old types into a new type's layout.
struct Layout {
    map: TypemapBuilder,
    sig: SignatureBuilder,
    size: usize,
    bounds: Span,
    data: Span,
    explicit_lb: Option<i128>,
    explicit_ub: Option<i128>,
    align: usize,
}

impl Layout {
    fn new() -> Layout {
        Layout {
            map: TypemapBuilder::default(),
            sig: SignatureBuilder::default(),
            size: 0,
            bounds: Span::default(),
            data: Span::default(),
            explicit_lb: None,
            explicit_ub: None,
            align: 1,
        }
    }

    /// `count` groups at `disp + k * stride`, each of `blocklen`
    /// consecutive elements of `old`.
    fn add(
        &mut self,
        disp: isize,
        count: usize,
        stride: isize,
        blocklen: usize,
        old: &Datatype,
    ) -> MpiResult {
        if count == 0 || blocklen == 0 {
            return Ok(());
        }
        let (disp, stride, ext) = (disp as i128, stride as i128, old.extent() as i128);
        let inner = (blocklen as i128 - 1) * ext;
        let outer = (count as i128 - 1) * stride;
        let spread = |lo: isize, hi: isize| {
            (
                disp + lo as i128 + inner.min(0) + outer.min(0),
                disp + hi as i128 + inner.max(0) + outer.max(0),
            )
        };
        match old.marker() {
            Some(BoundMarker::Lb) => {
                let (lo, _) = spread(0, 0);
                self.explicit_lb = Some(self.explicit_lb.map_or(lo, |l| l.min(lo)));
                return Ok(());
            }
            Some(BoundMarker::Ub) => {
                let (_, hi) = spread(0, 0);
                self.explicit_ub = Some(self.explicit_ub.map_or(hi, |h| h.max(hi)));
                return Ok(());
            }
            None => {}
        }
        let (lo, hi) = spread(old.lb(), old.ub());
        self.bounds.add(lo, hi);
        let elements = count.checked_mul(blocklen).ok_or_else(too_large)?;
        if old.size() > 0 {
            let (lo, hi) = spread(old.true_lb(), old.true_ub());
            self.data.add(lo, hi);
            let bytes = elements.checked_mul(old.size()).ok_or_else(too_large)?;
            self.size = self.size.checked_add(bytes).ok_or_else(too_large)?;
            isize::try_from(self.size).map_err(|_| too_large())?;
            let unit = if blocklen == 1 {
                old.typemap().clone()
            } else {
                let mut b = TypemapBuilder::default();
                b.push_copies(0, blocklen, old.extent(), old.typemap());
                Arc::new(b.finish())
            };
            self.map
                .push_copies(to_isize(disp)?, count, to_isize(stride)?, &unit);
            self.sig.push(elements, old.signature());
        }
        self.align = self.align.max(old.align());
        Ok(())
    }

    /// The finished type. `pad`: round the extent up to the alignment when
    /// no marker set a bound (struct). `bounds`: explicit lb and ub.
    fn finish(
        self,
        combiner: Combiner,
        pad: bool,
        bounds: Option<(isize, isize)>,
    ) -> MpiResult<Datatype> {
        let (lb, ub) = match bounds {
            Some((lb, ub)) => (lb as i128, ub as i128),
            None => {
                // A side no entry bounds is 0 (as in MPICH): a type of only
                // an LB marker at 10 has ub 0 and extent -10.
                let lb = self.explicit_lb.or(self.bounds.lo).unwrap_or(0);
                let mut ub = self.explicit_ub.or(self.bounds.hi).unwrap_or(0);
                if pad && self.explicit_lb.is_none() && self.explicit_ub.is_none() {
                    let rem = (ub - lb).rem_euclid(self.align as i128);
                    if rem != 0 {
                        ub += self.align as i128 - rem;
                    }
                }
                (lb, ub)
            }
        };
        let typemap = Arc::new(self.map.finish());
        let signature = self.sig.finish();
        debug_assert_eq!(typemap.size(), self.size);
        debug_assert_eq!(signature.bytes(), self.size);
        Ok(Datatype::assemble(
            self.size,
            (to_isize(lb)?, to_isize(ub)?),
            (
                to_isize(self.data.lo.unwrap_or(0))?,
                to_isize(self.data.hi.unwrap_or(0))?,
            ),
            self.align,
            typemap,
            signature,
            Contents::new(combiner),
        ))
    }
}

impl Datatype {
    fn assemble(
        size: usize,
        (lb, ub): (isize, isize),
        (true_lb, true_ub): (isize, isize),
        align: usize,
        typemap: Arc<Typemap>,
        signature: Signature,
        contents: Contents,
    ) -> Datatype {
        let contiguous = size == 0
            || (typemap.single_block() == Some((true_lb, size)) && ub - lb == size as isize);
        Datatype {
            size,
            lb,
            ub,
            true_lb,
            true_ub,
            align,
            contiguous,
            marker: None,
            predefined: None,
            typemap,
            signature,
            contents,
            committed: AtomicBool::new(false),
        }
    }

    /// The predefined type of a builtin-table row (committed).
    pub(crate) fn predefined(id: PrimId) -> Datatype {
        let b = builtin::by_id(id);
        let mut map = TypemapBuilder::default();
        for &(offset, len) in b.blocks {
            map.push_run(Run::block(offset as isize, len));
        }
        let size = b.size();
        let true_ub = b.blocks.last().map_or(0, |&(o, l)| (o + l) as isize);
        let mut t = Datatype::assemble(
            size,
            (0, b.extent as isize),
            (0, true_ub),
            b.align,
            Arc::new(map.finish()),
            Signature::of_builtin(id),
            Contents::new(Combiner::Named),
        );
        t.marker = b.marker();
        t.predefined = Some(id);
        t.commit();
        t
    }

    /// Records the constructor's arguments (`MPI_Type_get_contents`).
    pub fn with_contents(mut self, contents: Contents) -> Datatype {
        debug_assert_eq!(contents.combiner, self.contents.combiner);
        self.contents = contents;
        self
    }
}

pub fn contiguous(count: usize, old: &Datatype) -> MpiResult<Datatype> {
    let mut l = Layout::new();
    l.add(0, 1, 0, count, old)?;
    l.finish(Combiner::Contiguous, false, None)
}

/// `MPI_Type_vector`: the stride counts elements of `old`.
pub fn vector(count: usize, blocklen: usize, stride: isize, old: &Datatype) -> MpiResult<Datatype> {
    let bytes = stride.checked_mul(old.extent()).ok_or_else(too_large)?;
    strided(Combiner::Vector, count, blocklen, bytes, old)
}

/// `MPI_Type_create_hvector`: the stride is in bytes.
pub fn hvector(
    count: usize,
    blocklen: usize,
    stride: isize,
    old: &Datatype,
) -> MpiResult<Datatype> {
    strided(Combiner::Hvector, count, blocklen, stride, old)
}

fn strided(
    combiner: Combiner,
    count: usize,
    blocklen: usize,
    stride: isize,
    old: &Datatype,
) -> MpiResult<Datatype> {
    let mut l = Layout::new();
    l.add(0, count, stride, blocklen, old)?;
    l.finish(combiner, false, None)
}

/// `MPI_Type_indexed` / `MPI_Type_create_indexed_block`: `(blocklength,
/// displacement in elements of old)` pairs.
pub fn indexed(
    combiner: Combiner,
    blocks: &[(usize, isize)],
    old: &Datatype,
) -> MpiResult<Datatype> {
    let ext = old.extent();
    let mut l = Layout::new();
    for &(len, disp) in blocks {
        l.add(disp.checked_mul(ext).ok_or_else(too_large)?, 1, 0, len, old)?;
    }
    l.finish(combiner, false, None)
}

/// `MPI_Type_create_hindexed` / `_hindexed_block`: displacements in bytes.
pub fn hindexed(
    combiner: Combiner,
    blocks: &[(usize, isize)],
    old: &Datatype,
) -> MpiResult<Datatype> {
    let mut l = Layout::new();
    for &(len, disp) in blocks {
        l.add(disp, 1, 0, len, old)?;
    }
    l.finish(combiner, false, None)
}

/// `MPI_Type_create_struct`: `(blocklength, displacement in bytes, type)`.
pub fn structure(entries: &[(usize, isize, &Datatype)]) -> MpiResult<Datatype> {
    let mut l = Layout::new();
    for &(len, disp, t) in entries {
        l.add(disp, 1, 0, len, t)?;
    }
    l.finish(Combiner::Struct, true, None)
}

pub fn resized(old: &Datatype, lb: isize, extent: isize) -> MpiResult<Datatype> {
    let ub = lb.checked_add(extent).ok_or_else(too_large)?;
    let mut l = Layout::new();
    l.add(0, 1, 0, 1, old)?;
    l.finish(Combiner::Resized, false, Some((lb, ub)))
}

/// The type `MPI_Type_create_f90_*` returns: `old` (the predefined
/// Fortran type chosen) under the F90 combiner with the asked parameters
/// (`[r]` or `[p, r]`), committed.
pub fn f90(old: &Datatype, combiner: Combiner, integers: Vec<c_int>) -> Datatype {
    let mut t = dup(old);
    t.contents = Contents {
        integers,
        ..Contents::new(combiner)
    };
    t.commit();
    t
}

pub fn dup(old: &Datatype) -> Datatype {
    let mut t = Datatype::assemble(
        old.size,
        (old.lb, old.ub),
        (old.true_lb, old.true_ub),
        old.align,
        old.typemap.clone(),
        old.signature.clone(),
        Contents::new(Combiner::Dup),
    );
    t.marker = old.marker;
    if old.is_committed() {
        t.commit();
    }
    t
}

/// Dimensions reordered so index 0 varies slowest.
fn c_order<T: Copy>(v: &[T], order: Order) -> Vec<T> {
    match order {
        Order::C => v.to_vec(),
        Order::Fortran => v.iter().rev().copied().collect(),
    }
}

fn product(v: &[usize]) -> MpiResult<usize> {
    v.iter()
        .try_fold(1usize, |a, &b| a.checked_mul(b))
        .ok_or_else(too_large)
}

/// `MPI_Type_create_subarray` (sizes already checked: subsize <= size,
/// start + subsize <= size, at least one dimension).
pub fn subarray(
    sizes: &[usize],
    subsizes: &[usize],
    starts: &[usize],
    order: Order,
    old: &Datatype,
) -> MpiResult<Datatype> {
    let (sizes, subsizes, starts) = (
        c_order(sizes, order),
        c_order(subsizes, order),
        c_order(starts, order),
    );
    let n = sizes.len();
    let ext = old.extent();
    // Byte stride of each dimension.
    let mut strides = vec![ext; n];
    for i in (0..n.saturating_sub(1)).rev() {
        strides[i] = strides[i + 1]
            .checked_mul(isize::try_from(sizes[i + 1]).map_err(|_| too_large())?)
            .ok_or_else(too_large)?;
    }
    let mut t = contiguous(subsizes[n - 1], old)?;
    for i in (0..n - 1).rev() {
        t = hvector(subsizes[i], 1, strides[i], &t)?;
    }
    let mut origin: isize = 0;
    for i in 0..n {
        let offset = strides[i]
            .checked_mul(starts[i] as isize)
            .ok_or_else(too_large)?;
        origin = origin.checked_add(offset).ok_or_else(too_large)?;
    }
    let whole = ext
        .checked_mul(isize::try_from(product(&sizes)?).map_err(|_| too_large())?)
        .ok_or_else(too_large)?;
    let mut l = Layout::new();
    l.add(origin, 1, 0, 1, &t)?;
    l.finish(Combiner::Subarray, false, Some((0, whole)))
}

/// `MPI_Type_create_darray` (arguments already checked: `size` is the
/// product of `psizes`, `rank < size`, `psize == 1` where not distributed,
/// block sizes cover their dimension).
pub fn darray(
    rank: usize,
    gsizes: &[usize],
    distribs: &[Distribution],
    psizes: &[usize],
    order: Order,
    old: &Datatype,
) -> MpiResult<Datatype> {
    let n = gsizes.len();
    // Process coordinates: the grid is row-major whatever the order.
    let mut coords = vec![0; n];
    let mut r = rank;
    for i in (0..n).rev() {
        coords[i] = r % psizes[i];
        r /= psizes[i];
    }
    let (gsizes, distribs, psizes, coords) = (
        c_order(gsizes, order),
        c_order(distribs, order),
        c_order(psizes, order),
        c_order(&coords, order),
    );
    let mut t: Option<Datatype> = None;
    for i in (0..n).rev() {
        let inner = t.as_ref().unwrap_or(old);
        let blocks = darray_blocks(gsizes[i], distribs[i], psizes[i], coords[i]);
        let ext = inner.extent();
        let mut l = Layout::new();
        for (start, len) in blocks {
            l.add(
                (start as isize).checked_mul(ext).ok_or_else(too_large)?,
                1,
                0,
                len,
                inner,
            )?;
        }
        let whole = ext.checked_mul(gsizes[i] as isize).ok_or_else(too_large)?;
        t = Some(l.finish(Combiner::Darray, false, Some((0, whole)))?);
    }
    Ok(t.expect("a darray has at least one dimension"))
}

/// The `(first element, length)` blocks of one dimension this process owns.
fn darray_blocks(
    gsize: usize,
    distrib: Distribution,
    psize: usize,
    coord: usize,
) -> Vec<(usize, usize)> {
    match distrib {
        Distribution::None => vec![(0, gsize)],
        Distribution::Block(b) => {
            let b = b.unwrap_or(gsize.div_ceil(psize));
            let start = (b * coord).min(gsize);
            vec![(start, b.min(gsize - start))]
        }
        Distribution::Cyclic(b) => {
            let b = b.unwrap_or(1);
            let mut blocks = Vec::new();
            let mut start = b * coord;
            while start < gsize {
                blocks.push((start, b.min(gsize - start)));
                start += b * psize;
            }
            blocks
        }
    }
}
