//! Where one element's bytes lie in memory, in the order they appear in the
//! packed stream.
//!
//! A typemap is a list of pieces. A [`Run`] is a strided sequence of equal
//! blocks (a vector, the rows of a subarray: one entry, not one per block).
//! A `Repeat` is `count` copies of a smaller typemap at a stride; it is used
//! only when copying the pieces out would make a long list (see
//! [`INLINE_LIMIT`]), so small types stay flat and large regular ones stay
//! small. The builder merges as it goes: blocks that continue each other in
//! memory become one block, equal blocks at a constant stride one run.
//! Invariants: every run has `len > 0` and `count > 0`, `count == 1` implies
//! `stride == 0`, and no piece holds zero bytes.
use std::sync::Arc;

/// `count` blocks of `len` bytes at `disp`, `disp + stride`, ...
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    pub disp: isize,
    pub len: usize,
    pub count: usize,
    pub stride: isize,
}

impl Run {
    pub fn block(disp: isize, len: usize) -> Run {
        Run {
            disp,
            len,
            count: 1,
            stride: 0,
        }
    }

    fn last_disp(&self) -> isize {
        self.disp + (self.count as isize - 1) * self.stride
    }

    /// The canonical form: equal adjacent blocks are one block.
    fn normalized(mut self) -> Run {
        if self.count > 1 && self.stride == self.len as isize {
            self.len *= self.count;
            self.count = 1;
        }
        if self.count == 1 {
            self.stride = 0;
        }
        self
    }
}

#[derive(Clone, Debug)]
pub enum Piece {
    Run(Run),
    /// `count` copies of `map` at `disp`, `disp + stride`, ...
    Repeat {
        disp: isize,
        count: usize,
        stride: isize,
        map: Arc<Typemap>,
    },
}

impl Piece {
    /// Packed bytes of the whole piece.
    pub fn bytes(&self) -> usize {
        match self {
            Piece::Run(r) => r.len * r.count,
            Piece::Repeat { count, map, .. } => count * map.size,
        }
    }

    fn shifted(&self, by: isize) -> Piece {
        match self {
            Piece::Run(r) => Piece::Run(Run {
                disp: r.disp + by,
                ..*r
            }),
            Piece::Repeat {
                disp,
                count,
                stride,
                map,
            } => Piece::Repeat {
                disp: disp + by,
                count: *count,
                stride: *stride,
                map: map.clone(),
            },
        }
    }
}

/// Copies of a typemap are spelled out piece by piece when that gives at
/// most this many pieces; beyond it they become one `Repeat`.
pub const INLINE_LIMIT: usize = 64;

/// The pieces of one element, with the packed offset where each starts.
#[derive(Clone, Debug, Default)]
pub struct Typemap {
    pieces: Vec<Piece>,
    starts: Vec<usize>,
    size: usize,
}

impl Typemap {
    pub fn pieces(&self) -> &[Piece] {
        &self.pieces
    }

    /// Packed bytes of one element.
    pub fn size(&self) -> usize {
        self.size
    }

    /// The single block of one element, if it is one.
    pub fn single_block(&self) -> Option<(isize, usize)> {
        match self.pieces.as_slice() {
            [Piece::Run(r)] if r.count == 1 => Some((r.disp, r.len)),
            _ => None,
        }
    }

    /// Calls `f(displacement, length)` for the memory pieces holding packed
    /// bytes `[from, to)` of one element placed at `base` (`to <= size`).
    pub fn walk<F: FnMut(isize, usize)>(&self, base: isize, from: usize, to: usize, f: &mut F) {
        if from >= to {
            return;
        }
        let mut pos = from;
        let mut i = self.starts.partition_point(|&s| s <= from) - 1;
        while pos < to {
            let rel = pos - self.starts[i];
            match &self.pieces[i] {
                Piece::Run(r) => {
                    let mut block = rel / r.len;
                    let mut within = rel % r.len;
                    while pos < to && block < r.count {
                        let take = (r.len - within).min(to - pos);
                        f(
                            base + r.disp + block as isize * r.stride + within as isize,
                            take,
                        );
                        pos += take;
                        within = 0;
                        block += 1;
                    }
                }
                Piece::Repeat {
                    disp,
                    count,
                    stride,
                    map,
                } => {
                    let mut copy = rel / map.size;
                    let mut within = rel % map.size;
                    while pos < to && copy < *count {
                        let until = map.size.min(within + (to - pos));
                        map.walk(base + disp + copy as isize * stride, within, until, f);
                        pos += until - within;
                        within = 0;
                        copy += 1;
                    }
                }
            }
            i += 1;
        }
    }

    /// Number of memory blocks of one element (before merging across
    /// elements); for diagnostics and tests.
    pub fn block_count(&self) -> usize {
        self.pieces
            .iter()
            .map(|p| match p {
                Piece::Run(r) => r.count,
                Piece::Repeat { count, map, .. } => count * map.block_count(),
            })
            .sum()
    }
}

/// Builds a [`Typemap`] from pieces pushed in stream order, merging.
#[derive(Default)]
pub struct TypemapBuilder {
    pieces: Vec<Piece>,
}

impl TypemapBuilder {
    pub fn push_run(&mut self, run: Run) {
        if run.len == 0 || run.count == 0 {
            return;
        }
        let run = run.normalized();
        let Some(Piece::Run(last)) = self.pieces.last_mut() else {
            self.pieces.push(Piece::Run(run));
            return;
        };
        if run.count == 1 {
            let tail = last.last_disp();
            if tail + last.len as isize == run.disp {
                // The block continues the last block of `last`.
                if last.count == 1 {
                    last.len += run.len;
                } else {
                    let len = last.len;
                    last.count -= 1;
                    *last = last.normalized();
                    self.push_run(Run::block(tail, len + run.len));
                }
                return;
            }
            if run.len == last.len {
                if last.count == 1 {
                    last.count = 2;
                    last.stride = run.disp - last.disp;
                    return;
                }
                if run.disp == tail + last.stride {
                    last.count += 1;
                    return;
                }
            }
        } else if run.len == last.len {
            let continues = if last.count == 1 {
                run.disp - last.disp == run.stride
            } else {
                last.stride == run.stride && run.disp == last.last_disp() + last.stride
            };
            if continues {
                last.count += run.count;
                last.stride = run.stride;
                return;
            }
        }
        self.pieces.push(Piece::Run(run));
    }

    fn push_piece(&mut self, piece: Piece) {
        match piece {
            Piece::Run(r) => self.push_run(r),
            repeat => self.pieces.push(repeat),
        }
    }

    /// Appends `count` copies of `map` at `disp + k * stride`: one run when
    /// the copies form one, the copies' pieces when few, else a `Repeat`.
    pub fn push_copies(&mut self, disp: isize, count: usize, stride: isize, map: &Arc<Typemap>) {
        if count == 0 || map.size == 0 {
            return;
        }
        match map.pieces.as_slice() {
            [Piece::Run(r)] if r.count == 1 => {
                return self.push_run(Run {
                    disp: disp + r.disp,
                    len: r.len,
                    count,
                    stride,
                })
            }
            [Piece::Run(r)] if r.count as isize * r.stride == stride => {
                return self.push_run(Run {
                    disp: disp + r.disp,
                    len: r.len,
                    count: r.count * count,
                    stride: r.stride,
                })
            }
            _ => {}
        }
        if count.saturating_mul(map.pieces.len()) <= INLINE_LIMIT {
            for k in 0..count as isize {
                for p in &map.pieces {
                    self.push_piece(p.shifted(disp + k * stride));
                }
            }
        } else if count == 1 {
            // One copy of a long map: share it rather than copy it.
            self.pieces.push(Piece::Repeat {
                disp,
                count: 1,
                stride: 0,
                map: map.clone(),
            });
        } else {
            self.pieces.push(Piece::Repeat {
                disp,
                count,
                stride,
                map: map.clone(),
            });
        }
    }

    pub fn finish(self) -> Typemap {
        let mut starts = Vec::with_capacity(self.pieces.len());
        let mut size = 0;
        for p in &self.pieces {
            starts.push(size);
            size += p.bytes();
        }
        Typemap {
            pieces: self.pieces,
            starts,
            size,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(pieces: &[Run]) -> Vec<Run> {
        let mut b = TypemapBuilder::default();
        for r in pieces {
            b.push_run(*r);
        }
        b.finish()
            .pieces
            .iter()
            .map(|p| match p {
                Piece::Run(r) => *r,
                Piece::Repeat { .. } => panic!("unexpected repeat"),
            })
            .collect()
    }

    fn blocks(map: &Typemap) -> Vec<(isize, usize)> {
        let mut out = Vec::new();
        map.walk(0, 0, map.size(), &mut |d, l| out.push((d, l)));
        out
    }

    #[test]
    fn adjacent_blocks_merge_into_one() {
        assert_eq!(
            runs(&[Run::block(0, 4), Run::block(4, 4), Run::block(8, 8)]),
            vec![Run::block(0, 16)]
        );
    }

    #[test]
    fn equal_blocks_at_a_stride_become_one_run() {
        let got = runs(&[Run::block(0, 4), Run::block(12, 4), Run::block(24, 4)]);
        assert_eq!(
            got,
            vec![Run {
                disp: 0,
                len: 4,
                count: 3,
                stride: 12
            }]
        );
        let got = runs(&[Run::block(24, 4), Run::block(12, 4), Run::block(0, 4)]);
        assert_eq!(
            got,
            vec![Run {
                disp: 24,
                len: 4,
                count: 3,
                stride: -12
            }]
        );
    }

    #[test]
    fn a_block_continuing_a_run_tail_is_split_off_and_merged() {
        let got = runs(&[Run::block(0, 4), Run::block(8, 4), Run::block(12, 4)]);
        assert_eq!(got, vec![Run::block(0, 4), Run::block(8, 8)]);
        let got = runs(&[
            Run {
                disp: 0,
                len: 4,
                count: 3,
                stride: 10,
            },
            Run::block(24, 2),
        ]);
        assert_eq!(
            got,
            vec![
                Run {
                    disp: 0,
                    len: 4,
                    count: 2,
                    stride: 10
                },
                Run::block(20, 6)
            ]
        );
    }

    #[test]
    fn runs_continuing_a_pattern_extend_it() {
        let v = Run {
            disp: 0,
            len: 4,
            count: 2,
            stride: 8,
        };
        assert_eq!(
            runs(&[v, Run { disp: 16, ..v }]),
            vec![Run {
                disp: 0,
                len: 4,
                count: 4,
                stride: 8
            }]
        );
        assert_eq!(
            runs(&[v, Run { disp: 20, ..v }]).len(),
            2,
            "a gap breaks the pattern"
        );
    }

    #[test]
    fn empty_blocks_vanish_and_starts_are_prefix_sums() {
        let mut b = TypemapBuilder::default();
        b.push_run(Run::block(0, 0));
        b.push_run(Run::block(100, 3));
        b.push_run(Run {
            disp: 0,
            len: 2,
            count: 5,
            stride: 10,
        });
        let map = b.finish();
        assert_eq!(map.starts, vec![0, 3]);
        assert_eq!(map.size(), 13);
    }

    #[test]
    fn many_copies_of_an_irregular_map_become_a_repeat() {
        let mut inner = TypemapBuilder::default();
        inner.push_run(Run::block(0, 4));
        inner.push_run(Run::block(8, 2));
        let inner = Arc::new(inner.finish());
        let mut few = TypemapBuilder::default();
        few.push_copies(0, 3, 16, &inner);
        let few = few.finish();
        assert!(few.pieces.iter().all(|p| matches!(p, Piece::Run(_))));
        let mut many = TypemapBuilder::default();
        many.push_copies(0, 1000, 16, &inner);
        let many = many.finish();
        assert_eq!(many.pieces.len(), 1);
        assert_eq!(many.size(), 6000);
        assert_eq!(
            blocks(&few),
            vec![(0, 4), (8, 2), (16, 4), (24, 2), (32, 4), (40, 2)]
        );
        let all = blocks(&many);
        assert_eq!(all.len(), 2000);
        assert_eq!(all[2], (16, 4));
        assert_eq!(all[1999], (999 * 16 + 8, 2));
        // A walk that starts and ends inside blocks of a repeat.
        let mut part = Vec::new();
        many.walk(100, 7, 15, &mut |d, l| part.push((d, l)));
        assert_eq!(part, vec![(100 + 16 + 1, 3), (100 + 24, 2), (100 + 32, 3)]);
    }

    #[test]
    fn copies_of_a_strided_run_continue_it_when_the_stride_allows() {
        let mut inner = TypemapBuilder::default();
        inner.push_run(Run {
            disp: 0,
            len: 4,
            count: 2,
            stride: 8,
        });
        let inner = Arc::new(inner.finish());
        let mut b = TypemapBuilder::default();
        b.push_copies(0, 3, 16, &inner);
        let map = b.finish();
        assert_eq!(map.pieces.len(), 1);
        assert_eq!(map.block_count(), 6);
    }
}
