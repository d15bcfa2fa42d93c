//! The memory a window exposes at one rank, and the target side's reads
//! and writes of it. Every access is first located ([`Exposed::locate`]):
//! each block must lie inside memory the program exposed (the window's
//! `[base, base + size)`, or a region attached to a dynamic window), so a
//! wrong displacement from an origin is refused instead of writing
//! anywhere. The copies go through raw pointers (the memory is the
//! program's, and other processes may map it too), never through Rust
//! references to it.
use crate::core::datatype::BasicKind;
use crate::core::op::{kernels, BuiltinOp};
use crate::core::p2p::user_buffer::{byte_type, UserBuffer};

/// What a rank exposes.
#[derive(Debug, Clone)]
pub enum Exposed {
    /// `MPI_Win_create`, `MPI_Win_allocate`, `MPI_Win_allocate_shared`:
    /// `size` bytes at address `base`.
    Fixed { base: usize, size: usize },
    /// `MPI_Win_create_dynamic`: the attached regions `(address, size)`;
    /// displacements are addresses.
    Dynamic { regions: Vec<(usize, usize)> },
}

/// A located access: the address and length of each block.
pub type Spans = Vec<(usize, usize)>;

/// One block of a located access: its address and length.
pub type Span = (usize, usize);

impl Exposed {
    /// The address of each block of an access at `disp` (bytes from the
    /// base, or an address in a dynamic window), checked to lie in exposed
    /// memory; `Err` says which block does not.
    pub fn locate(&self, disp: i64, blocks: &[(i64, u64)]) -> Result<Spans, String> {
        let mut spans = Vec::with_capacity(blocks.len());
        for &(offset, len) in blocks {
            let len = usize::try_from(len).map_err(|_| format!("a block of {len} bytes"))?;
            let start = disp.checked_add(offset).ok_or("displacement overflows")?;
            let address = match self {
                Exposed::Fixed { base, size } => {
                    let start = usize::try_from(start)
                        .ok()
                        .filter(|s| s.checked_add(len).is_some_and(|end| end <= *size))
                        .ok_or_else(|| {
                            format!(
                                "bytes [{start}, {start}+{len}) are outside the window's {size} bytes"
                            )
                        })?;
                    base + start
                }
                Exposed::Dynamic { regions } => {
                    let start = start as u64 as usize;
                    if !attached(regions, start, len) {
                        return Err(format!(
                            "bytes [{start:#x}, +{len}) are not in memory attached to the window"
                        ));
                    }
                    start
                }
            };
            spans.push((address, len));
        }
        Ok(spans)
    }
}

/// Whether every byte of `[start, start + len)` is in an attached region
/// (an access may span adjacent regions).
fn attached(regions: &[(usize, usize)], start: usize, len: usize) -> bool {
    let Some(end) = start.checked_add(len) else {
        return false;
    };
    let mut at = start;
    while at < end {
        match regions
            .iter()
            .find(|&&(base, size)| at >= base && at < base + size)
        {
            Some(&(base, size)) => at = base + size,
            None => return false,
        }
    }
    true
}

/// The span's memory as a message buffer, to send from or receive into
/// without a copy of ours (a large get's reply, a large put's data).
pub fn span_buffer(span: (usize, usize)) -> UserBuffer {
    // SAFETY: `locate` checked the span lies in memory the program exposed
    // in this window. The operation using the buffer completes before the
    // window can go: the origin waits for it before its flush, unlock,
    // complete or fence returns, and MPI_Win_free synchronizes all ranks
    // after those; MPI keeps the window memory valid until MPI_Win_free.
    unsafe { UserBuffer::new(span.0 as *const std::ffi::c_void, span.1, byte_type()) }
}

/// Copies `data` into the spans, in order (`data` holds their total).
pub fn write(spans: &[Span], data: &[u8]) {
    let mut at = 0;
    for &(address, len) in spans {
        let len = len.min(data.len() - at);
        // SAFETY: `locate` checked the span lies in memory the program
        // exposed in this window, which stays valid while the window does
        // (MPI's rule for the memory of a window); `data` is our own buffer
        // and holds `len` more bytes from `at`.
        unsafe {
            std::ptr::copy_nonoverlapping(data.as_ptr().add(at), address as *mut u8, len);
        }
        at += len;
    }
}

/// Copies the spans, in order, into `out` (which holds their total).
pub fn read(spans: &[Span], out: &mut [u8]) {
    let mut at = 0;
    for &(address, len) in spans {
        let len = len.min(out.len() - at);
        // SAFETY: as in `write`: the span is exposed window memory, and
        // `out` has room for `len` more bytes from `at`.
        unsafe {
            std::ptr::copy_nonoverlapping(address as *const u8, out.as_mut_ptr().add(at), len);
        }
        at += len;
    }
}

/// The spans' bytes, in order.
pub fn read_all(spans: &[Span]) -> Vec<u8> {
    let mut out = vec![0u8; spans.iter().map(|s| s.1).sum()];
    read(spans, &mut out);
    out
}

/// Bytes of window memory an accumulate works on in a buffer on the
/// stack (more go through one on the heap).
const SCRATCH: usize = 256;

/// `target = input op target`, element by element of `kind`, over the
/// spans (each a whole number of elements); the old contents go to `old`
/// when given (it holds the spans' total). The caller makes it atomic: it
/// holds the lock of the memory's accumulates where other processes map
/// it (see `super::window::DirectTarget`), and the runtime lock.
pub fn accumulate(
    spans: &[Span],
    kind: BasicKind,
    op: BuiltinOp,
    input: &[u8],
    old: Option<&mut [u8]>,
) {
    let total: usize = spans.iter().map(|s| s.1).sum();
    let mut small = [0u8; SCRATCH];
    let mut large = Vec::new();
    let current = if total <= SCRATCH {
        &mut small[..total]
    } else {
        large.resize(total, 0);
        &mut large[..]
    };
    read(spans, current);
    if let Some(old) = old {
        old[..total].copy_from_slice(current);
    }
    if op != BuiltinOp::NoOp {
        let n = total.min(input.len());
        kernels::apply(op, kind, &input[..n], &mut current[..n]);
        write(spans, current);
    }
}

/// Writes `new` into the spans if they hold `compare`; the old contents
/// go to `old` (all three hold the spans' total).
pub fn compare_and_swap(spans: &[Span], new: &[u8], compare: &[u8], old: &mut [u8]) {
    read(spans, old);
    if old == compare {
        write(spans, new);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accesses_outside_the_window_are_refused() {
        let memory = [0u8; 64];
        let exposed = Exposed::Fixed {
            base: memory.as_ptr() as usize,
            size: 64,
        };
        assert!(exposed.locate(0, &[(0, 64)]).is_ok());
        assert!(exposed.locate(60, &[(0, 4)]).is_ok());
        assert!(exposed.locate(60, &[(0, 8)]).is_err());
        assert!(exposed.locate(8, &[(-16, 4)]).is_err());
        assert!(exposed.locate(i64::MAX, &[(1, 1)]).is_err());
    }

    #[test]
    fn dynamic_windows_take_addresses_in_attached_regions() {
        let region = [0u8; 32];
        let at = region.as_ptr() as usize;
        let exposed = Exposed::Dynamic {
            regions: vec![(at, 32)],
        };
        assert_eq!(
            exposed.locate(at as i64, &[(8, 8)]).unwrap(),
            vec![(at + 8, 8)]
        );
        assert!(exposed.locate(at as i64, &[(30, 4)]).is_err());
        let split = Exposed::Dynamic {
            regions: vec![(at + 16, 16), (at, 16)],
        };
        assert!(
            split.locate(at as i64, &[(8, 16)]).is_ok(),
            "adjacent regions"
        );
        assert!(split.locate(at as i64, &[(8, 32)]).is_err());
        assert!(Exposed::Dynamic { regions: vec![] }
            .locate(at as i64, &[(0, 1)])
            .is_err());
    }

    #[test]
    fn writes_reads_and_accumulates_follow_the_blocks() {
        let mut memory = [0i32; 8];
        let base = memory.as_mut_ptr() as usize;
        let exposed = Exposed::Fixed { base, size: 32 };
        // Elements 1 and 5.
        let spans = exposed.locate(4, &[(0, 4), (16, 4)]).unwrap();
        let data: Vec<u8> = [10i32, 50].iter().flat_map(|v| v.to_le_bytes()).collect();
        write(&spans, &data);
        let add: Vec<u8> = [1i32, 2].iter().flat_map(|v| v.to_le_bytes()).collect();
        let mut old = vec![0u8; 8];
        accumulate(
            &spans,
            BasicKind::Int32,
            BuiltinOp::Sum,
            &add,
            Some(&mut old),
        );
        assert_eq!(old, data);
        assert_eq!(
            read_all(&spans),
            [11i32, 52]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect::<Vec<u8>>()
        );
        assert_eq!(memory, [0, 11, 0, 0, 0, 52, 0, 0]);
    }
}
