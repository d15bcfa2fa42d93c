//! File views: where a process's data lies in the file.
//!
//! A view is a displacement, an elementary type and a filetype; the file
//! holds the filetype tiled from the displacement on (copy `k` at
//! `disp + k * extent`), and the process sees only the filetype's data
//! bytes, in typemap order, as one stream. Offsets and pointers count
//! etypes of that stream. The filetype's blocks are taken once, when the
//! view is set, from the datatype engine ([`Datatype::for_each_block`]);
//! mapping a stream range to file ranges is then a binary search per
//! piece.
//!
//! Under a representation whose values have other sizes than in memory
//! (`external32`'s 4-byte `MPI_LONG`, a registered one's extents), the
//! stream holds the data in that representation, and the blocks, the
//! etype's size and the filetype's extent are those of the types'
//! layouts in it ([`Datatype::in_representation`]).
use std::sync::Arc;

use crate::core::datatype::builtin::{self, PrimId};
use crate::core::datatype::Datatype;
use crate::core::error::{MpiError, MpiResult};
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::{MPI_Aint, MPI_Datatype};

/// A data representation the program registered (`MPI_Register_datarep`):
/// its name, the abi layer's callbacks (opaque here), and how the abi
/// layer asks the program's extent function for a predefined type's
/// extent in the file.
pub struct UserDatarep {
    pub name: String,
    pub callbacks: Arc<dyn std::any::Any + Send + Sync>,
    pub extent_of: fn(&UserDatarep, MPI_Datatype) -> MpiResult<MPI_Aint>,
}

/// The data representations oxmpi has.
#[derive(Clone)]
pub enum Datarep {
    Native,
    /// Same as native in oxmpi (MPI lets `internal` be any format).
    Internal,
    External32,
    /// A registered one: the program's conversion functions turn the data
    /// into and from the file's bytes; its extent function gives each
    /// predefined type's size in the file.
    User(Arc<UserDatarep>),
}

impl Datarep {
    /// A predefined representation by name.
    pub fn predefined(name: &str) -> Option<Datarep> {
        match name {
            "native" => Some(Datarep::Native),
            "internal" => Some(Datarep::Internal),
            "external32" => Some(Datarep::External32),
            _ => None,
        }
    }

    /// `MPI_ERR_UNSUPPORTED_DATAREP` for a name that is none.
    pub fn unknown(name: &str) -> MpiError {
        MpiError::new(
            MPI_ERR_UNSUPPORTED_DATAREP,
            format!(
                "data representation \"{name}\" is not known (native, internal, external32 and \
                 registered ones are)"
            ),
        )
    }

    pub fn name(&self) -> &str {
        match self {
            Datarep::Native => "native",
            Datarep::Internal => "internal",
            Datarep::External32 => "external32",
            Datarep::User(u) => &u.name,
        }
    }

    pub fn is_external32(&self) -> bool {
        matches!(self, Datarep::External32)
    }

    /// Whether data lies in the file as in memory.
    pub fn is_native(&self) -> bool {
        matches!(self, Datarep::Native | Datarep::Internal)
    }

    /// The size of one value of each predefined type in this
    /// representation, as a function that asks a registered
    /// representation's extent function once per type.
    pub fn value_sizes(&self) -> impl FnMut(PrimId) -> MpiResult<usize> + '_ {
        let mut known: Vec<(PrimId, usize)> = Vec::new();
        move |id| {
            if let Some(&(_, s)) = known.iter().find(|(k, _)| *k == id) {
                return Ok(s);
            }
            let native = builtin::by_id(id);
            let s = match self {
                Datarep::Native | Datarep::Internal => native.size(),
                Datarep::External32 => crate::core::datatype::external32::value_size(id),
                Datarep::User(u) => {
                    let e = (u.extent_of)(u, native.handle)?;
                    usize::try_from(e).map_err(|_| {
                        MpiError::new(
                            MPI_ERR_CONVERSION,
                            format!(
                                "the extent function of \"{}\" gave {e} bytes for {}",
                                u.name, native.name
                            ),
                        )
                    })?
                }
            };
            known.push((id, s));
            Ok(s)
        }
    }

    /// `t` as it lies in a file of this representation (itself when no
    /// value changes size).
    pub fn layout(&self, t: &Arc<Datatype>) -> MpiResult<Arc<Datatype>> {
        let mut sizes = self.value_sizes();
        if self.is_native() || t.keeps_sizes_in(&mut sizes)? {
            return Ok(t.clone());
        }
        Ok(Arc::new(t.in_representation(&mut sizes)?))
    }

    /// The bytes of `count` elements of `t` in this representation.
    pub fn size_of(&self, t: &Datatype, count: usize) -> MpiResult<usize> {
        if self.is_native() {
            return Ok(t.size() * count);
        }
        t.size_in(count, &mut self.value_sizes())
    }
}

/// One file view.
pub struct View {
    pub disp: u64,
    pub etype: Arc<Datatype>,
    pub filetype: Arc<Datatype>,
    /// The handles the program gave (returned by `MPI_File_get_view`).
    pub etype_handle: MPI_Datatype,
    pub filetype_handle: MPI_Datatype,
    pub datarep: Datarep,
    /// The etype's bytes in the file's representation.
    etype_size: u64,
    /// The filetype's data bytes and extent in the file's representation.
    tile: u64,
    extent: i64,
    /// The data blocks of one filetype in the file (displacement from the
    /// copy's start, length), in stream order, adjacent ones merged.
    blocks: Vec<(i64, u64)>,
    /// Stream bytes before each block.
    before: Vec<u64>,
}

/// MPI's rule for the types of a view (MPI 4.1 section 14.3): their
/// displacements are non-negative and monotonically non-decreasing, and,
/// where the file may be written, their blocks do not overlap. Breaking
/// it is `MPI_ERR_IO`, as in ROMIO.
fn check_layout(t: &Datatype, what: &str, writable: bool) -> MpiResult {
    let mut problem = None;
    let mut last: Option<(isize, isize)> = None;
    t.for_each_block(1, 0, t.size(), |d, len| {
        if problem.is_some() {
            return;
        }
        let end = d + len as isize;
        problem = if d < 0 {
            Some("a negative displacement")
        } else {
            match last {
                Some((pd, _)) if d < pd => Some("decreasing displacements"),
                Some((_, pe)) if writable && d < pe => Some("overlapping blocks"),
                _ => None,
            }
        };
        last = Some((d, end.max(last.map_or(end, |l| l.1))));
    });
    match problem {
        Some(p) => Err(MpiError::new(
            MPI_ERR_IO,
            format!("the {what} of a file view has {p}"),
        )),
        None => Ok(()),
    }
}

/// A stretch of the file: offset and length in bytes.
pub type Piece = (u64, u64);

impl View {
    /// A view; `MPI_ERR_ARG` when the filetype is not made of etypes,
    /// `MPI_ERR_IO` when a type's layout does not fit a view (see
    /// [`check_layout`]; `writable`: the file may be written).
    pub fn new(
        disp: u64,
        etype: Arc<Datatype>,
        etype_handle: MPI_Datatype,
        filetype: Arc<Datatype>,
        filetype_handle: MPI_Datatype,
        datarep: Datarep,
        writable: bool,
    ) -> MpiResult<View> {
        let (file_etype, file_filetype) = (datarep.layout(&etype)?, datarep.layout(&filetype)?);
        check_layout(&file_etype, "etype", writable)?;
        check_layout(&file_filetype, "filetype", writable)?;
        if etype.size() == 0 {
            return Err(MpiError::new(MPI_ERR_ARG, "the etype has no data"));
        }
        if filetype.size() == 0 {
            return Err(MpiError::new(MPI_ERR_ARG, "the filetype has no data"));
        }
        if filetype.size() % etype.size() != 0 {
            return Err(MpiError::new(
                MPI_ERR_ARG,
                format!(
                    "the filetype ({} bytes of data) is not made of etypes ({} bytes)",
                    filetype.size(),
                    etype.size()
                ),
            ));
        }
        let mut blocks: Vec<(i64, u64)> = Vec::new();
        file_filetype.for_each_block(1, 0, file_filetype.size(), |d, len| {
            let (d, len) = (d as i64, len as u64);
            match blocks.last_mut() {
                Some((pd, pl)) if *pd + *pl as i64 == d => *pl += len,
                _ if len > 0 => blocks.push((d, len)),
                _ => {}
            }
        });
        let mut before = Vec::with_capacity(blocks.len());
        let mut sum = 0;
        for &(_, len) in &blocks {
            before.push(sum);
            sum += len;
        }
        Ok(View {
            disp,
            etype,
            filetype,
            etype_handle,
            filetype_handle,
            datarep,
            etype_size: file_etype.size() as u64,
            tile: file_filetype.size() as u64,
            extent: file_filetype.extent() as i64,
            blocks,
            before,
        })
    }

    /// The view every file starts with: bytes from offset 0, native.
    pub fn default_view() -> View {
        let byte = crate::core::datatype::lookup(MPI_BYTE).expect("MPI_BYTE is predefined");
        View::new(
            0,
            byte.clone(),
            MPI_BYTE,
            byte,
            MPI_BYTE,
            Datarep::Native,
            false,
        )
        .expect("the byte view is valid")
    }

    /// The etype's bytes in the stream (in the file's representation).
    pub fn etype_size(&self) -> u64 {
        self.etype_size
    }

    fn tile_size(&self) -> u64 {
        self.tile
    }

    fn extent(&self) -> i64 {
        self.extent
    }

    /// The file ranges holding stream bytes `[start, start + len)`, in
    /// stream order, adjacent ones merged.
    pub fn pieces(&self, start: u64, len: u64) -> MpiResult<Vec<Piece>> {
        let mut out: Vec<Piece> = Vec::new();
        let tile = self.tile_size();
        let (mut at, end) = (start, start + len);
        while at < end {
            let (copy, within) = (at / tile, at % tile);
            let i = self.before.partition_point(|&b| b <= within) - 1;
            let into = within - self.before[i];
            let (bdisp, blen) = self.blocks[i];
            let n = (blen - into).min(end - at);
            let offset = self.disp as i64 + copy as i64 * self.extent() + bdisp + into as i64;
            let offset = u64::try_from(offset).map_err(|_| {
                MpiError::new(
                    MPI_ERR_ARG,
                    "the view puts data before the start of the file",
                )
            })?;
            match out.last_mut() {
                Some((o, l)) if *o + *l == offset => *l += n,
                _ => out.push((offset, n)),
            }
            at += n;
        }
        Ok(out)
    }

    /// The file offset of stream byte `at` (`MPI_File_get_byte_offset`).
    pub fn byte_offset(&self, at: u64) -> MpiResult<u64> {
        let (copy, within) = (at / self.tile_size(), at % self.tile_size());
        let i = self.before.partition_point(|&b| b <= within) - 1;
        let offset = self.disp as i64
            + copy as i64 * self.extent()
            + self.blocks[i].0
            + (within - self.before[i]) as i64;
        u64::try_from(offset)
            .map_err(|_| MpiError::new(MPI_ERR_ARG, "the offset lies before the file's start"))
    }

    /// How many stream bytes lie before file offset `file_size` (for
    /// `MPI_SEEK_END`: the view's end of file).
    pub fn stream_bytes_before(&self, file_size: u64) -> u64 {
        let extent = self.extent();
        if file_size <= self.disp || extent <= 0 {
            return 0;
        }
        let rel = (file_size - self.disp) as i64;
        let copies = rel / extent;
        let rest = rel - copies * extent;
        let partial: u64 = self
            .blocks
            .iter()
            .map(|&(d, l)| (rest - d).clamp(0, l as i64) as u64)
            .sum();
        copies as u64 * self.tile_size() + partial
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::datatype::{constructors, lookup, Combiner};

    fn int() -> Arc<Datatype> {
        lookup(MPI_INT).unwrap()
    }

    #[test]
    fn io_view_contiguous_maps_to_one_piece() {
        let v = View::new(100, int(), MPI_INT, int(), MPI_INT, Datarep::Native, true).unwrap();
        assert_eq!(v.pieces(8, 40).unwrap(), vec![(108, 40)]);
        assert_eq!(v.byte_offset(12).unwrap(), 112);
        assert_eq!(v.stream_bytes_before(150), 50);
        assert_eq!(v.stream_bytes_before(50), 0);
    }

    #[test]
    fn io_view_vector_filetype_tiles() {
        // 2 blocks of 1 int, stride 3 ints: data at 0 and 12, extent 16 bytes,
        // resized to 24 so copies do not touch.
        let vector = constructors::vector(2, 1, 3, &int()).unwrap();
        let resized = Arc::new(constructors::resized(&vector, 0, 24).unwrap());
        let v = View::new(4, int(), MPI_INT, resized, MPI_INT, Datarep::Native, true).unwrap();
        assert_eq!(
            v.pieces(0, 16).unwrap(),
            vec![(4, 4), (16, 4), (28, 4), (40, 4)]
        );
        assert_eq!(v.pieces(4, 8).unwrap(), vec![(16, 4), (28, 4)]);
        assert_eq!(v.byte_offset(8).unwrap(), 28);
        // File of 30 bytes: blocks at 4, 16 whole, 28..32 half: 4 + 4 + 2.
        assert_eq!(v.stream_bytes_before(30), 10);
    }

    #[test]
    fn io_view_external32_lays_longs_out_in_four_bytes() {
        // A vector of 2 longs, stride 3: in external32 (4-byte longs) the
        // blocks are at 0 and 12 and a copy spans 16 bytes.
        let long = lookup(MPI_LONG).unwrap();
        let mut c = crate::core::datatype::Contents::new(Combiner::Vector);
        c.integers = vec![2, 1, 3];
        c.types.push((MPI_LONG, long.clone()));
        let vector = Arc::new(
            constructors::vector(2, 1, 3, &long)
                .unwrap()
                .with_contents(c),
        );
        let ext = Datarep::External32;
        let v = View::new(8, long.clone(), MPI_LONG, vector.clone(), 0, ext, true).unwrap();
        assert_eq!(v.etype_size(), 4);
        assert_eq!(v.pieces(0, 16).unwrap(), vec![(8, 4), (20, 8), (36, 4)]);
        assert_eq!(v.byte_offset(12).unwrap(), 36);
        assert_eq!(Datarep::External32.size_of(&vector, 3).unwrap(), 24);
        // Natively the same filetype spans 32 bytes.
        let n = View::new(8, long, MPI_LONG, vector, 0, Datarep::Native, true).unwrap();
        assert_eq!(n.pieces(0, 16).unwrap(), vec![(8, 8), (32, 8)]);
    }

    #[test]
    fn io_view_rejects_filetypes_not_made_of_etypes() {
        let double = lookup(MPI_DOUBLE).unwrap();
        let three = Arc::new(constructors::contiguous(3, &int()).unwrap());
        assert!(View::new(
            0,
            double.clone(),
            MPI_DOUBLE,
            three,
            0,
            Datarep::Native,
            true
        )
        .is_err());
        // Overlapping blocks: refused where the file may be written only.
        let overlap =
            Arc::new(constructors::indexed(Combiner::Indexed, &[(3, 0), (1, 1)], &int()).unwrap());
        let class = |writable| {
            View::new(
                0,
                int(),
                MPI_INT,
                overlap.clone(),
                0,
                Datarep::Native,
                writable,
            )
            .err()
            .map(|e| e.class)
        };
        assert_eq!(class(true), Some(MPI_ERR_IO));
        assert_eq!(class(false), None);
        let backwards =
            Arc::new(constructors::indexed(Combiner::Indexed, &[(1, 3), (1, 0)], &int()).unwrap());
        assert!(View::new(0, int(), MPI_INT, backwards, 0, Datarep::Native, false).is_err());
        assert!(Datarep::predefined("external32").is_some_and(|d| d.is_external32()));
        assert!(Datarep::predefined("xdr").is_none());
    }
}
