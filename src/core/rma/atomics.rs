//! Hardware atomics for the accumulates of a window whose program says
//! they are single elements of predefined types: the window info key
//! `acc_single_intrinsic=true` (Open MPI's name for the promise; given at
//! creation, the same at every rank). Such a window applies every
//! accumulate, get-accumulate, fetch-and-op and compare-and-swap on an
//! element of 1, 2, 4 or 8 bytes, aligned to its size, with atomic
//! instructions on the element itself (`lock xadd`, `xchg`, `lock
//! cmpxchg`...), whichever process applies it, instead of holding the
//! memory's lock word. Elements of other sizes (`long double`, the pair
//! types of 16 bytes, complex doubles) and unaligned ones keep the lock
//! word. Each location and type always takes the same path, so
//! accumulates stay atomic per element with respect to each other, as MPI
//! requires of accumulates with the same predefined type.
//!
//! Why not always: an accumulate on many elements then costs an atomic
//! instruction per element instead of one lock and the vectorized kernel
//! (MPICH's `rma/rma_contig` took 75 s instead of 30 s here), and an
//! uncontended lock word costs about what one atomic instruction does. The
//! promise of single elements is where atomics pay: many processes
//! updating different elements of one window at once never wait for each
//! other.
use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, AtomicU8, Ordering};

use super::memory::Span;
use crate::core::datatype::BasicKind;
use crate::core::op::{kernels, BuiltinOp};

/// Whether elements of `kind` at every span take the atomic path: a size
/// atomic instructions have, every span a whole number of aligned
/// elements.
fn eligible(spans: &[Span], kind: BasicKind) -> bool {
    let size = kind.size();
    matches!(size, 1 | 2 | 4 | 8)
        && spans
            .iter()
            .all(|&(address, len)| address % size == 0 && len % size == 0)
}

/// Integer kinds whose sum and bitwise operations are the machine's
/// wrapping ones on little-endian words.
fn machine_integer(kind: BasicKind) -> bool {
    use BasicKind::*;
    matches!(
        kind,
        Int8 | Int16 | Int32 | Int64 | Uint8 | Uint16 | Uint32 | Uint64 | Aint | Offset | Count
    )
}

/// One element's atomic update at `address` (`size` bytes): the old value
/// is returned, the new one is `op` applied to `input` and the old one.
///
/// # Safety
/// `address` is aligned to `size` and holds an element of window memory
/// (mapped, writable) that is only ever accessed atomically while the
/// window lives.
unsafe fn update(address: usize, size: usize, kind: BasicKind, op: BuiltinOp, input: u64) -> u64 {
    macro_rules! with_atomic {
        ($atomic:ty, $word:ty) => {{
            // SAFETY: aligned and live (the caller's contract).
            let a = unsafe { &*(address as *const $atomic) };
            let input = input as $word;
            let integer = machine_integer(kind);
            match op {
                BuiltinOp::NoOp => a.load(Ordering::Acquire) as u64,
                BuiltinOp::Replace => a.swap(input, Ordering::AcqRel) as u64,
                BuiltinOp::Sum if integer => a.fetch_add(input, Ordering::AcqRel) as u64,
                BuiltinOp::Band if integer || kind == BasicKind::Byte => {
                    a.fetch_and(input, Ordering::AcqRel) as u64
                }
                BuiltinOp::Bor if integer || kind == BasicKind::Byte => {
                    a.fetch_or(input, Ordering::AcqRel) as u64
                }
                BuiltinOp::Bxor if integer || kind == BasicKind::Byte => {
                    a.fetch_xor(input, Ordering::AcqRel) as u64
                }
                _ => {
                    // Any other operation: the kernel on the element, then
                    // a compare-and-swap, again while another changed it.
                    let input_bytes = input.to_le_bytes();
                    let mut current = a.load(Ordering::Acquire);
                    loop {
                        let mut new = (current as u64).to_le_bytes();
                        kernels::apply(op, kind, &input_bytes[..size], &mut new[..size]);
                        let new = u64::from_le_bytes(new) as $word;
                        match a.compare_exchange_weak(
                            current,
                            new,
                            Ordering::AcqRel,
                            Ordering::Acquire,
                        ) {
                            Ok(old) => break old as u64,
                            Err(now) => current = now,
                        }
                    }
                }
            }
        }};
    }
    match size {
        1 => with_atomic!(AtomicU8, u8),
        2 => with_atomic!(AtomicU16, u16),
        4 => with_atomic!(AtomicU32, u32),
        _ => with_atomic!(AtomicU64, u64),
    }
}

/// The element of `size` bytes at `bytes[at..]` as a word.
fn word(bytes: &[u8], at: usize, size: usize) -> u64 {
    let mut w = [0u8; 8];
    w[..size].copy_from_slice(&bytes[at..at + size]);
    u64::from_le_bytes(w)
}

/// `target = input op target` element by element with atomic
/// instructions, the old values to `old` when given; false (and nothing
/// done) where the elements do not take the atomic path (see the module
/// documentation): the caller then holds the lock word.
pub fn accumulate(
    spans: &[Span],
    kind: BasicKind,
    op: BuiltinOp,
    input: &[u8],
    mut old: Option<&mut [u8]>,
) -> bool {
    if !eligible(spans, kind) {
        return false;
    }
    let size = kind.size();
    let mut at = 0;
    for &(address, len) in spans {
        for offset in (0..len).step_by(size) {
            let value = if op == BuiltinOp::NoOp || at + size > input.len() {
                0
            } else {
                word(input, at, size)
            };
            let op = if op != BuiltinOp::NoOp && at + size > input.len() {
                BuiltinOp::NoOp
            } else {
                op
            };
            // SAFETY: `eligible` checked the alignment; the spans were
            // located inside the window's memory, which the window keeps
            // mapped, and on this window every access of such an element
            // by an accumulate is atomic.
            let previous = unsafe { update(address + offset, size, kind, op, value) };
            if let Some(old) = old.as_deref_mut() {
                old[at..at + size].copy_from_slice(&previous.to_le_bytes()[..size]);
            }
            at += size;
        }
    }
    crate::transport::counters::add(&crate::core::tool::pvars::RMA_HARDWARE_ATOMICS, 1);
    true
}

/// `MPI_Compare_and_swap` with one atomic compare-and-swap: writes `new`
/// if the element holds `compare`; the old value goes to `old`. False
/// (nothing done) where the element does not take the atomic path.
pub fn compare_and_swap(spans: &[Span], new: &[u8], compare: &[u8], old: &mut [u8]) -> bool {
    let [(address, len)] = spans else {
        return false;
    };
    let size = *len;
    if !matches!(size, 1 | 2 | 4 | 8) || address % size != 0 {
        return false;
    }
    let (new, compare) = (word(new, 0, size), word(compare, 0, size));
    macro_rules! cas {
        ($atomic:ty, $word:ty) => {{
            // SAFETY: aligned (checked above) and inside the window's
            // memory, which every accumulate of this window accesses
            // atomically.
            let a = unsafe { &*(*address as *const $atomic) };
            match a.compare_exchange(
                compare as $word,
                new as $word,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(v) | Err(v) => v as u64,
            }
        }};
    }
    let previous = match size {
        1 => cas!(AtomicU8, u8),
        2 => cas!(AtomicU16, u16),
        4 => cas!(AtomicU32, u32),
        _ => cas!(AtomicU64, u64),
    };
    old[..size].copy_from_slice(&previous.to_le_bytes()[..size]);
    crate::transport::counters::add(&crate::core::tool::pvars::RMA_HARDWARE_ATOMICS, 1);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes<T: Copy>(v: &[T]) -> Vec<u8> {
        let n = std::mem::size_of_val(v);
        // SAFETY: plain values read as their bytes.
        unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), n) }.to_vec()
    }

    #[test]
    fn atomic_accumulates_match_the_kernels() {
        let mut memory = [5i32, -3, 7, 100];
        let base = memory.as_mut_ptr() as usize;
        let spans = [(base, 8), (base + 12, 4)];
        let mut old = vec![0u8; 12];
        assert!(accumulate(
            &spans,
            BasicKind::Int32,
            BuiltinOp::Sum,
            &bytes(&[1i32, 2, 3]),
            Some(&mut old)
        ));
        assert_eq!(memory, [6, -1, 7, 103]);
        assert_eq!(old, bytes(&[5i32, -3, 100]));
        for (op, input, want) in [
            (BuiltinOp::Max, [4i32, 9, 0], [6, 9, 7, 103]),
            (BuiltinOp::Prod, [2, 2, 2], [12, 18, 7, 206]),
            (BuiltinOp::Bxor, [1, 1, 1], [13, 19, 7, 207]),
            (BuiltinOp::Replace, [-1, -2, -3], [-1, -2, 7, -3]),
        ] {
            assert!(accumulate(
                &spans,
                BasicKind::Int32,
                op,
                &bytes(&input),
                None
            ));
            assert_eq!(memory, want, "{op:?}");
        }
        // A fetch with MPI_NO_OP changes nothing.
        let mut got = vec![0u8; 12];
        assert!(accumulate(
            &spans,
            BasicKind::Int32,
            BuiltinOp::NoOp,
            &[],
            Some(&mut got)
        ));
        assert_eq!(got, bytes(&[-1i32, -2, -3]));

        let mut doubles = [1.5f64, -2.0];
        let spans = [(doubles.as_mut_ptr() as usize, 16)];
        assert!(accumulate(
            &spans,
            BasicKind::Float64,
            BuiltinOp::Sum,
            &bytes(&[0.25f64, 4.0]),
            None
        ));
        assert_eq!(doubles, [1.75, 2.0]);
        assert!(accumulate(
            &spans,
            BasicKind::Float64,
            BuiltinOp::Min,
            &bytes(&[0.5f64, 3.0]),
            None
        ));
        assert_eq!(doubles, [0.5, 2.0]);
    }

    #[test]
    fn other_elements_keep_the_lock_word() {
        let mut memory = [0u8; 40];
        let base = memory.as_mut_ptr() as usize;
        let aligned = base + (8 - base % 8) % 8;
        // Unaligned, or not a whole element, or of 16 bytes.
        assert!(!accumulate(
            &[(aligned + 2, 4)],
            BasicKind::Int32,
            BuiltinOp::Sum,
            &[0; 4],
            None
        ));
        assert!(!accumulate(
            &[(aligned, 6)],
            BasicKind::Int32,
            BuiltinOp::Sum,
            &[0; 6],
            None
        ));
        assert!(!accumulate(
            &[(aligned, 16)],
            BasicKind::LongDouble,
            BuiltinOp::Sum,
            &[0; 16],
            None
        ));
        assert_eq!(memory, [0u8; 40]);
    }

    #[test]
    fn compare_and_swap_writes_only_on_a_match() {
        let mut cell = [7u64];
        let spans = [(cell.as_mut_ptr() as usize, 8)];
        let mut old = [0u8; 8];
        assert!(compare_and_swap(
            &spans,
            &9u64.to_le_bytes(),
            &1u64.to_le_bytes(),
            &mut old
        ));
        assert_eq!((cell[0], u64::from_le_bytes(old)), (7, 7));
        assert!(compare_and_swap(
            &spans,
            &9u64.to_le_bytes(),
            &7u64.to_le_bytes(),
            &mut old
        ));
        assert_eq!((cell[0], u64::from_le_bytes(old)), (9, 7));
    }

    #[test]
    fn concurrent_fetch_and_adds_lose_nothing() {
        let counter = std::sync::Arc::new(AtomicU64::new(0));
        let address = counter.as_ptr() as usize;
        let threads: Vec<_> = (0..4)
            .map(|_| {
                std::thread::spawn(move || {
                    for _ in 0..10_000 {
                        let spans = [(address, 8)];
                        let one = 1u64.to_le_bytes();
                        assert!(accumulate(
                            &spans,
                            BasicKind::Uint64,
                            BuiltinOp::Sum,
                            &one,
                            None
                        ));
                        let mut old = [0u8; 8];
                        accumulate(
                            &spans,
                            BasicKind::Float64,
                            BuiltinOp::NoOp,
                            &[],
                            Some(&mut old),
                        );
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(counter.load(Ordering::SeqCst), 40_000);
    }
}
