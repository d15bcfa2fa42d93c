//! Datatype layouts against hand-computed ones (values checked against
//! MPICH 4.0.2 where MPICH is the reference), and pack/unpack round trips
//! split at random points of the stream.
use std::sync::Arc;

use super::constructors::{self, Distribution, Order};
use super::*;

pub(super) fn t(h: MPI_Datatype) -> Arc<Datatype> {
    lookup(h).unwrap()
}

/// Memory blocks of `count` elements, adjacent ones merged.
pub(super) fn blocks(dt: &Datatype, count: usize) -> Vec<(isize, usize)> {
    let mut out: Vec<(isize, usize)> = Vec::new();
    dt.for_each_block(count, 0, usize::MAX, |d, l| match out.last_mut() {
        Some((ld, ll)) if *ld + *ll as isize == d => *ll += l,
        _ => out.push((d, l)),
    });
    out
}

/// (size, lb, extent, true_lb, true_extent)
fn shape(dt: &Datatype) -> (usize, isize, isize, isize, isize) {
    (
        dt.size(),
        dt.lb(),
        dt.extent(),
        dt.true_lb(),
        dt.true_extent(),
    )
}

/// A small deterministic generator (xorshift64*).
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n.max(1)
    }
}

/// Packs `count` elements in random pieces, checks the stream against the
/// blocks, unpacks it in other random pieces into a clean buffer and
/// checks that exactly the data bytes came back.
pub(super) fn round_trip(dt: &Datatype, count: usize, seed: u64) {
    let (lo, hi) = dt.data_span(count);
    let pad = 64isize;
    let len = (hi - lo + 2 * pad) as usize;
    let origin = (pad - lo) as usize; // buf = &memory[origin]
    let src: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
    let total = dt.size() * count;
    let mut expected = Vec::with_capacity(total);
    for (d, l) in blocks(dt, count) {
        let at = (origin as isize + d) as usize;
        expected.extend_from_slice(&src[at..at + l]);
    }
    assert_eq!(expected.len(), total);

    let mut rng = Rng(seed | 1);
    let mut stream = vec![0u8; total];
    let mut at = 0;
    while at < total {
        let n = 1 + rng.below((total - at).min(37));
        // SAFETY: `src` holds every byte the elements touch.
        let done =
            unsafe { dt.pack_range(src.as_ptr().add(origin), count, at, &mut stream[at..at + n]) };
        assert_eq!(done, n);
        at += n;
    }
    assert_eq!(stream, expected, "packed stream of {dt:?} x{count}");
    // Asking past the end gives what is left.
    let mut tail = vec![0u8; 10];
    // SAFETY: as above.
    let got = unsafe {
        dt.pack_range(
            src.as_ptr().add(origin),
            count,
            total.saturating_sub(3),
            &mut tail,
        )
    };
    assert_eq!(got, total.min(3));

    let mut dst = vec![0u8; len];
    let mut at = 0;
    while at < total {
        let n = 1 + rng.below((total - at).min(53));
        // SAFETY: `dst` holds every byte the elements touch.
        let done = unsafe {
            dt.unpack_range(dst.as_mut_ptr().add(origin), count, at, &stream[at..at + n])
        };
        assert_eq!(done, n);
        at += n;
    }
    let mut mask = vec![false; len];
    for (d, l) in blocks(dt, count) {
        let at = (origin as isize + d) as usize;
        mask[at..at + l].fill(true);
    }
    for i in 0..len {
        assert_eq!(
            dst[i],
            if mask[i] { src[i] } else { 0 },
            "byte {i} after unpack of {dt:?}"
        );
    }
}

#[test]
fn predefined_types_have_their_c_layout() {
    assert_eq!(shape(&t(MPI_INT)), (4, 0, 4, 0, 4));
    assert_eq!(shape(&t(MPI_DOUBLE_INT)), (12, 0, 16, 0, 12));
    assert_eq!(shape(&t(MPI_SHORT_INT)), (6, 0, 8, 0, 8));
    assert_eq!(shape(&t(MPI_LONG_DOUBLE_INT)), (20, 0, 32, 0, 20));
    assert_eq!(shape(&t(MPI_LB)), (0, 0, 0, 0, 0));
    assert_eq!(blocks(&t(MPI_SHORT_INT), 2), vec![(0, 2), (4, 6), (12, 4)]);
    assert!(t(MPI_DOUBLE).is_contiguous());
    assert!(!t(MPI_DOUBLE_INT).is_contiguous());
    assert_eq!(t(MPI_DOUBLE_INT).contiguous_span(1), Some((0, 12)));
    assert_eq!(t(MPI_DOUBLE_INT).basic_kind(), Some(BasicKind::DoubleInt));
    assert_eq!(t(MPI_INT).predefined_name(), Some("MPI_INT"));
    assert_eq!(
        t(MPI_LONG_LONG).predefined_name(),
        Some("MPI_LONG_LONG_INT")
    );
    assert!(t(MPI_INT).is_committed());
    assert_eq!(lookup(MPI_DATATYPE_NULL).unwrap_err().class, MPI_ERR_TYPE);
    assert_eq!(lookup(0x4c00_04ff).unwrap_err().class, MPI_ERR_TYPE);
    assert_eq!(lookup(MPI_COMM_WORLD).unwrap_err().class, MPI_ERR_TYPE);
}

#[test]
fn contiguous_of_a_basic_type_is_one_block() {
    let c = constructors::contiguous(5, &t(MPI_INT)).unwrap();
    assert_eq!(shape(&c), (20, 0, 20, 0, 20));
    assert!(c.is_contiguous());
    assert_eq!(blocks(&c, 3), vec![(0, 60)]);
    let empty = constructors::contiguous(0, &t(MPI_INT)).unwrap();
    assert_eq!(shape(&empty), (0, 0, 0, 0, 0));
    round_trip(&c, 3, 1);
}

#[test]
fn vector_layouts() {
    // vector(3, 2, 4, int): ints 0,1, 4,5, 8,9.
    let v = constructors::vector(3, 2, 4, &t(MPI_INT)).unwrap();
    assert_eq!(shape(&v), (24, 0, 40, 0, 40));
    assert_eq!(blocks(&v, 1), vec![(0, 8), (16, 8), (32, 8)]);
    assert!(!v.is_contiguous());
    // Two elements: the second starts at the extent, 40.
    assert_eq!(
        blocks(&v, 2),
        vec![(0, 8), (16, 8), (32, 16), (56, 8), (72, 8)]
    );
    assert_eq!(v.typemap().pieces().len(), 1, "a vector is one strided run");
    round_trip(&v, 3, 2);
    // Negative stride (MPICH: lb -8, extent 12).
    let n = constructors::vector(2, 1, -2, &t(MPI_INT)).unwrap();
    assert_eq!(shape(&n), (8, -8, 12, -8, 12));
    assert_eq!(blocks(&n, 1), vec![(0, 4), (-8, 4)]);
    round_trip(&n, 4, 3);
    // hvector(2, 1, 12 bytes, double): extent 20, no padding.
    let h = constructors::hvector(2, 1, 12, &t(MPI_DOUBLE)).unwrap();
    assert_eq!(shape(&h), (16, 0, 20, 0, 20));
    round_trip(&h, 5, 4);
    // Stride equal to the block: contiguous again.
    let c = constructors::vector(4, 2, 2, &t(MPI_SHORT)).unwrap();
    assert!(c.is_contiguous());
}

#[test]
fn indexed_layouts() {
    // indexed({1,2,0} at {5,0,2}, int): MPICH gives size 12, extent 24.
    let ix =
        constructors::indexed(Combiner::Indexed, &[(1, 5), (2, 0), (0, 2)], &t(MPI_INT)).unwrap();
    assert_eq!(shape(&ix), (12, 0, 24, 0, 24));
    assert_eq!(blocks(&ix, 1), vec![(20, 4), (0, 8)]);
    round_trip(&ix, 3, 5);
    // indexed_block(2, {3,1}, short): lb 2, extent 8.
    let ib =
        constructors::indexed(Combiner::IndexedBlock, &[(2, 3), (2, 1)], &t(MPI_SHORT)).unwrap();
    assert_eq!(shape(&ib), (8, 2, 8, 2, 8));
    assert_eq!(blocks(&ib, 1), vec![(6, 4), (2, 4)]);
    round_trip(&ib, 2, 6);
    // hindexed({1,1} at {0,9}, double): extent 17, no padding.
    let hx = constructors::hindexed(Combiner::Hindexed, &[(1, 0), (1, 9)], &t(MPI_DOUBLE)).unwrap();
    assert_eq!(shape(&hx), (16, 0, 17, 0, 17));
    round_trip(&hx, 3, 7);
}

#[test]
fn struct_padding_follows_the_alignment() {
    let s = |entries: &[(usize, isize, MPI_Datatype)]| {
        let types: Vec<_> = entries.iter().map(|e| t(e.2)).collect();
        let e: Vec<_> = entries
            .iter()
            .zip(&types)
            .map(|(e, ty)| (e.0, e.1, &**ty))
            .collect();
        constructors::structure(&e).unwrap()
    };
    // struct { double; char; }: size 9, extent 16.
    let dc = s(&[(1, 0, MPI_DOUBLE), (1, 8, MPI_CHAR)]);
    assert_eq!(shape(&dc), (9, 0, 16, 0, 9));
    assert_eq!(blocks(&dc, 2), vec![(0, 9), (16, 9)]);
    round_trip(&dc, 4, 8);
    // struct { char at 4; double at 8 }: lb 4, extent 16.
    assert_eq!(
        shape(&s(&[(1, 4, MPI_CHAR), (1, 8, MPI_DOUBLE)])),
        (9, 4, 16, 4, 12)
    );
    // struct { double at -3; char at 8 }: padded from 12 to 16.
    assert_eq!(
        shape(&s(&[(1, -3, MPI_DOUBLE), (1, 8, MPI_CHAR)])),
        (9, -3, 16, -3, 12)
    );
    // Alignment of pair and complex types.
    assert_eq!(s(&[(1, 0, MPI_FLOAT_INT), (1, 8, MPI_CHAR)]).extent(), 12);
    assert_eq!(
        s(&[(1, 0, MPI_LONG_DOUBLE_INT), (1, 32, MPI_CHAR)]).extent(),
        48
    );
    assert_eq!(
        s(&[(1, 0, MPI_C_DOUBLE_COMPLEX), (1, 16, MPI_CHAR)]).extent(),
        24
    );
    // Markers: MPI_LB / MPI_UB set their side and stop the padding.
    let m = s(&[(1, -4, MPI_LB), (1, 0, MPI_INT), (1, 20, MPI_UB)]);
    assert_eq!(shape(&m), (4, -4, 24, 0, 4));
    assert_eq!(
        shape(&s(&[(1, 0, MPI_INT), (1, 6, MPI_UB)])),
        (4, 0, 6, 0, 4)
    );
    assert_eq!(
        shape(&s(&[(1, 0, MPI_INT), (1, 2, MPI_UB)])),
        (4, 0, 2, 0, 4)
    );
    assert_eq!(
        shape(&s(&[(1, 2, MPI_LB), (1, 4, MPI_INT)])),
        (4, 2, 6, 4, 4)
    );
    // Markers alone: a side no entry bounds is 0 (MPICH's
    // struct_no_real_types): { (LB,10) } has extent -10, { (UB,10) } 10.
    assert_eq!(shape(&s(&[(1, 10, MPI_LB)])), (0, 10, -10, 0, 0));
    assert_eq!(shape(&s(&[(1, 10, MPI_UB)])), (0, 0, 10, 0, 0));
    // Two copies of m: MPICH gives lb -4, extent 48, true extent 28.
    let mm = constructors::contiguous(2, &m).unwrap();
    assert_eq!(shape(&mm), (8, -4, 48, 0, 28));
    // A marker inside a part is an ordinary bound (MPICH 4).
    let tu6 = Arc::new(s(&[(1, 0, MPI_INT), (1, 6, MPI_UB)]));
    let e = constructors::structure(&[(1, 0, &*tu6), (1, 8, &*t(MPI_CHAR))]).unwrap();
    assert_eq!(shape(&e), (5, 0, 12, 0, 9));
    // Empty struct.
    assert_eq!(
        shape(&constructors::structure(&[]).unwrap()),
        (0, 0, 0, 0, 0)
    );
    // A mixed signature has no single kind.
    assert_eq!(dc.basic_kind(), None);
}

#[test]
fn resized_types() {
    let r = constructors::resized(&t(MPI_INT), -2, 10).unwrap();
    assert_eq!(shape(&r), (4, -2, 10, 0, 4));
    assert!(!r.is_contiguous());
    assert_eq!(r.contiguous_span(1), Some((0, 4)));
    assert_eq!(blocks(&r, 3), vec![(0, 4), (10, 4), (20, 4)]);
    round_trip(&r, 6, 9);
    // contiguous(2, resized(int, 0, 3)): overlapping copies, MPICH: extent
    // 6, true extent 7.
    let r3 = constructors::resized(&t(MPI_INT), 0, 3).unwrap();
    assert_eq!(
        shape(&constructors::contiguous(2, &r3).unwrap()),
        (8, 0, 6, 0, 7)
    );
    // Negative extent.
    let neg = constructors::resized(&t(MPI_INT), 4, -8).unwrap();
    assert_eq!(shape(&neg), (4, 4, -8, 0, 4));
    assert_eq!(blocks(&neg, 2), vec![(0, 4), (-8, 4)]);
    // A resized double keeps its alignment: struct pads to 8.
    let rd = Arc::new(constructors::resized(&t(MPI_DOUBLE), 0, 4).unwrap());
    let st = constructors::structure(&[(1, 0, &*rd), (1, 8, &*t(MPI_CHAR))]).unwrap();
    assert_eq!(st.extent(), 16);
}

#[test]
fn subarray_in_c_and_fortran_order() {
    // 4x5 ints, the 2x3 block at (1,1). C order: rows of 5.
    let c = constructors::subarray(&[4, 5], &[2, 3], &[1, 1], Order::C, &t(MPI_INT)).unwrap();
    assert_eq!(shape(&c), (24, 0, 80, 24, 32));
    assert_eq!(blocks(&c, 1), vec![(24, 12), (44, 12)]);
    round_trip(&c, 2, 10);
    // Fortran order: the first index varies fastest, columns of 4.
    let f = constructors::subarray(&[4, 5], &[2, 3], &[1, 1], Order::Fortran, &t(MPI_INT)).unwrap();
    assert_eq!(shape(&f), (24, 0, 80, 20, 40));
    assert_eq!(blocks(&f, 1), vec![(20, 8), (36, 8), (52, 8)]);
    round_trip(&f, 2, 11);
    // 3-D, C order: 3x4x5 doubles, 2x2x3 at (1,2,1).
    let d = constructors::subarray(&[3, 4, 5], &[2, 2, 3], &[1, 2, 1], Order::C, &t(MPI_DOUBLE))
        .unwrap();
    let mut want = Vec::new();
    for i in 1..3 {
        for j in 2..4 {
            want.push((((i * 4 + j) * 5 + 1) * 8, 24));
        }
    }
    assert_eq!(blocks(&d, 1), want);
    assert_eq!(d.extent(), 3 * 4 * 5 * 8);
    round_trip(&d, 1, 12);
    // Zero rows: no data, the whole array as extent.
    let z = constructors::subarray(&[4, 5], &[0, 3], &[1, 1], Order::C, &t(MPI_INT)).unwrap();
    assert_eq!(shape(&z), (0, 0, 80, 0, 0));
}

#[test]
fn darray_blocks_and_cycles() {
    // 8 ints over 2 processes, block: rank 1 owns 4..8.
    let b = constructors::darray(
        1,
        &[8],
        &[Distribution::Block(None)],
        &[2],
        Order::C,
        &t(MPI_INT),
    )
    .unwrap();
    assert_eq!(blocks(&b, 1), vec![(16, 16)]);
    assert_eq!(b.extent(), 32);
    // Cyclic(2) over 3 processes, 10 ints: rank 1 owns 2,3, 8,9.
    let c = constructors::darray(
        1,
        &[10],
        &[Distribution::Cyclic(Some(2))],
        &[3],
        Order::C,
        &t(MPI_INT),
    )
    .unwrap();
    assert_eq!(blocks(&c, 1), vec![(8, 8), (32, 8)]);
    // 2-D 4x4 on a 2x2 grid, block/block, C order: rank 3 = (1,1) owns
    // rows 2..4, columns 2..4.
    let bb = constructors::darray(
        3,
        &[4, 4],
        &[Distribution::Block(None), Distribution::Block(None)],
        &[2, 2],
        Order::C,
        &t(MPI_INT),
    )
    .unwrap();
    assert_eq!(blocks(&bb, 1), vec![(40, 8), (56, 8)]);
    assert_eq!(bb.extent(), 64);
    // Fortran order, rank 1 = grid (0,1): rows 0..2 (fastest), columns 2..4.
    let ff = constructors::darray(
        1,
        &[4, 4],
        &[Distribution::Block(None), Distribution::Block(None)],
        &[2, 2],
        Order::Fortran,
        &t(MPI_INT),
    )
    .unwrap();
    assert_eq!(blocks(&ff, 1), vec![(32, 8), (48, 8)]);
    round_trip(&ff, 1, 13);
}

#[test]
fn nested_types_pack_in_typemap_order() {
    // vector(2, 1, 3) of struct { int; short at 6 } (extent 8).
    let st = constructors::structure(&[(1, 0, &*t(MPI_INT)), (1, 6, &*t(MPI_SHORT))]).unwrap();
    assert_eq!(shape(&st), (6, 0, 8, 0, 8));
    let v = constructors::vector(2, 2, 3, &st).unwrap();
    assert_eq!(shape(&v), (24, 0, 40, 0, 40));
    assert_eq!(
        blocks(&v, 1),
        vec![(0, 4), (6, 6), (14, 2), (24, 4), (30, 6), (38, 2)]
    );
    round_trip(&v, 3, 14);
    // indexed of that vector, then a struct mixing it with doubles.
    let ix = Arc::new(constructors::indexed(Combiner::Indexed, &[(1, 2), (2, 0)], &v).unwrap());
    let mixed = constructors::structure(&[(2, 0, &*t(MPI_DOUBLE)), (1, 16, &*ix)]).unwrap();
    round_trip(&mixed, 2, 15);
    assert_eq!(mixed.size(), 16 + 72);
    // Large irregular repetitions stay small and still pack correctly.
    let big = constructors::contiguous(10_000, &st).unwrap();
    assert!(big.typemap().pieces().len() <= 2, "repeat, not 20000 runs");
    assert_eq!(big.elements_in(6 * 10_000), Some(20_000));
    round_trip(&big, 2, 16);
    let huge = constructors::vector(1 << 40, 1, 2, &t(MPI_INT)).unwrap();
    assert_eq!(huge.size(), 4 << 40);
}

#[test]
fn packing_from_the_middle_of_a_stream() {
    let v = constructors::vector(3, 2, 4, &t(MPI_INT)).unwrap();
    let src: Vec<i32> = (0..40).collect();
    let mut out = [0u8; 12];
    // SAFETY: `src` covers two elements (80 bytes).
    let n = unsafe { v.pack_range(src.as_ptr().cast(), 2, 20, &mut out) };
    assert_eq!(n, 12);
    let ints: Vec<i32> = out
        .chunks(4)
        .map(|c| i32::from_ne_bytes(c.try_into().unwrap()))
        .collect();
    // Stream: 0 1 4 5 8 9 | 10 11 14 15 18 19 -> bytes 20.. are 9, 10, 11.
    assert_eq!(ints, vec![9, 10, 11]);
}

#[test]
fn get_elements_on_partial_data() {
    let dc = constructors::structure(&[(1, 0, &*t(MPI_DOUBLE)), (1, 8, &*t(MPI_CHAR))]).unwrap();
    assert_eq!(dc.elements_in(0), Some(0));
    assert_eq!(dc.elements_in(8), Some(1));
    assert_eq!(dc.elements_in(9), Some(2));
    assert_eq!(dc.elements_in(17), Some(3));
    assert_eq!(dc.elements_in(18), Some(4));
    assert_eq!(dc.elements_in(10), None, "ends inside a double");
    assert_eq!(dc.count_in(18), Some(2));
    assert_eq!(dc.count_in(17), None);
    assert_eq!(dc.bytes_for_elements(3), Some(17));
    assert_eq!(t(MPI_INT).elements_in(6), None);
    assert_eq!(t(MPI_DOUBLE_INT).elements_in(8), Some(1));
    assert_eq!(t(MPI_DOUBLE_INT).elements_in(12), Some(2));
    assert_eq!(t(MPI_DOUBLE_INT).bytes_for_elements(1), Some(8));
    let empty = constructors::contiguous(0, &t(MPI_INT)).unwrap();
    assert_eq!(empty.elements_in(0), Some(0));
    assert_eq!(empty.elements_in(4), None);
    assert_eq!(empty.count_in(0), Some(0));
    let v = constructors::vector(2, 3, 5, &t(MPI_SHORT)).unwrap();
    assert_eq!(v.elements_in(10), Some(5));
    assert_eq!(v.basic_kind(), Some(BasicKind::Int16));
}

#[test]
fn registry_keeps_freed_parts_alive_and_rejects_bad_frees() {
    let base = registry::register(constructors::contiguous(2, &t(MPI_INT)).unwrap());
    let base_t = lookup(base).unwrap();
    assert!(!base_t.is_committed());
    assert_eq!(lookup_committed(base).unwrap_err().class, MPI_ERR_TYPE);
    base_t.commit();
    assert!(lookup_committed(base).is_ok());
    let v = constructors::vector(2, 1, 3, &base_t)
        .unwrap()
        .with_contents(Contents {
            combiner: Combiner::Vector,
            integers: vec![2, 1, 3],
            addresses: vec![],
            large_counts: vec![],
            types: vec![(base, base_t.clone())],
        });
    let vh = registry::register(v);
    drop(base_t);
    // While the handle lives, get_contents gives it back (one more ref).
    let got = lookup(vh).unwrap().contents().types[0].clone();
    assert_eq!(registry::handle_for(got.0, &got.1), base);
    registry::free(base).unwrap();
    assert!(lookup(base).is_ok(), "still referenced once");
    registry::free(base).unwrap();
    assert_eq!(lookup(base).unwrap_err().class, MPI_ERR_TYPE);
    assert_eq!(registry::free(base).unwrap_err().class, MPI_ERR_TYPE);
    // The vector still works, and its part gets a live handle again (the
    // freed index may be reused at once, as MPICH does).
    assert_eq!(lookup(vh).unwrap().size(), 16);
    let again = registry::handle_for(got.0, &got.1);
    assert_eq!(lookup(again).unwrap().size(), 8);
    registry::free(again).unwrap();
    registry::free(vh).unwrap();
    // Predefined types are not freed; pair handles are never handed out.
    assert_eq!(registry::free(MPI_INT).unwrap_err().class, MPI_ERR_TYPE);
    assert_eq!(
        registry::free(MPI_DOUBLE_INT).unwrap_err().class,
        MPI_ERR_TYPE
    );
    let h = registry::register(constructors::contiguous(1, &t(MPI_INT)).unwrap());
    assert!((h as u32 & 0x03ff_ffff) >= 5);
    registry::free(h).unwrap();
}

#[test]
fn names_default_to_the_predefined_ones() {
    assert_eq!(registry::name(MPI_DOUBLE_INT).unwrap(), "MPI_DOUBLE_INT");
    let h = registry::register(constructors::dup(&t(MPI_INT)));
    assert_eq!(registry::name(h).unwrap(), "");
    registry::set_name(h, "mine").unwrap();
    assert_eq!(registry::name(h).unwrap(), "mine");
    assert!(
        lookup(h).unwrap().is_committed(),
        "a dup of a committed type is committed"
    );
    registry::free(h).unwrap();
}

#[test]
fn external32_is_big_endian_with_standard_sizes() {
    let longs = [0x0102_0304_0506_0708i64, -2];
    let lt = t(MPI_LONG);
    assert_eq!(lt.external32_size(2).unwrap(), 8);
    let mut out = [0u8; 8];
    // SAFETY: two longs.
    let n = unsafe { lt.pack_external32(longs.as_ptr().cast(), 2, &mut out) };
    assert_eq!(n, 8);
    assert_eq!(out, [5, 6, 7, 8, 0xff, 0xff, 0xff, 0xfe]);
    let mut back = [0i64; 2];
    // SAFETY: room for two longs.
    unsafe { lt.unpack_external32(back.as_mut_ptr().cast(), 2, &out) };
    assert_eq!(back, [0x0506_0708, -2]);
    // A struct of double and int: 8 + 4 bytes, big-endian.
    #[repr(C)]
    struct DoubleInt(f64, i32);
    let di = t(MPI_DOUBLE_INT);
    let v = DoubleInt(1.0, 0x0a0b0c0d);
    let mut out = [0u8; 12];
    // SAFETY: a repr(C) (double, int) has the layout of MPI_DOUBLE_INT.
    unsafe { di.pack_external32((&v as *const DoubleInt).cast(), 1, &mut out) };
    assert_eq!(out, [0x3f, 0xf0, 0, 0, 0, 0, 0, 0, 0x0a, 0x0b, 0x0c, 0x0d]);
}
