//! Fuzz target (proptest) of datatype construction and pack/unpack:
//! random type trees (contiguous, vector, hvector, indexed, hindexed,
//! struct, resized, dup over predefined types, nested up to three deep,
//! with negative strides and displacements, empty blocks and overlaps)
//! are built, their blocks, size and bounds compared with a model written
//! from the standard's definitions (the typemap of each constructor), and
//! `count` elements packed and unpacked in random pieces (`round_trip`:
//! the stream is the blocks' bytes in typemap order, and unpacking writes
//! exactly those bytes back).
use std::sync::Arc;

use proptest::prelude::*;

use super::constructors;
use super::tests::{blocks, round_trip, t};
use super::{Combiner, Datatype};
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::MPI_Datatype;

#[derive(Debug, Clone)]
enum Tree {
    Prim(MPI_Datatype),
    Contiguous(usize, Box<Tree>),
    Vector(usize, usize, isize, Box<Tree>),
    Hvector(usize, usize, isize, Box<Tree>),
    Indexed(Vec<(usize, isize)>, Box<Tree>),
    Hindexed(Vec<(usize, isize)>, Box<Tree>),
    Struct(Vec<(usize, isize, Tree)>),
    Resized(Box<Tree>, isize, isize),
    Dup(Box<Tree>),
}

fn tree() -> impl Strategy<Value = Tree> {
    let leaf = prop_oneof![
        Just(Tree::Prim(MPI_BYTE)),
        Just(Tree::Prim(MPI_SHORT)),
        Just(Tree::Prim(MPI_INT)),
        Just(Tree::Prim(MPI_DOUBLE)),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        let boxed = inner.clone().prop_map(Box::new);
        prop_oneof![
            (0usize..4, boxed.clone()).prop_map(|(c, t)| Tree::Contiguous(c, t)),
            (0usize..4, 0usize..3, -3isize..4, boxed.clone())
                .prop_map(|(c, b, s, t)| Tree::Vector(c, b, s, t)),
            (0usize..4, 0usize..3, -24isize..32, boxed.clone())
                .prop_map(|(c, b, s, t)| Tree::Hvector(c, b, s, t)),
            (
                prop::collection::vec((0usize..3, -3isize..5), 0..4),
                boxed.clone()
            )
                .prop_map(|(b, t)| Tree::Indexed(b, t)),
            (
                prop::collection::vec((0usize..3, -16isize..24), 0..4),
                boxed.clone()
            )
                .prop_map(|(b, t)| Tree::Hindexed(b, t)),
            prop::collection::vec((0usize..3, -16isize..24, inner), 1..4).prop_map(Tree::Struct),
            (boxed.clone(), -8isize..8, 0isize..24).prop_map(|(t, lb, e)| Tree::Resized(t, lb, e)),
            boxed.prop_map(Tree::Dup),
        ]
    })
}

/// A type as the standard defines it: its typemap as byte blocks of one
/// element, in order, and its bounds.
#[derive(Debug, Clone)]
struct Model {
    blocks: Vec<(isize, usize)>,
    lb: isize,
    ub: isize,
}

impl Model {
    fn extent(&self) -> isize {
        self.ub - self.lb
    }
}

/// Builds a model from placements: `n` copies of `old` at `disp`,
/// `disp + extent`, ... for each `(disp, n, old)`. Copies count towards the
/// bounds; with none at all the bounds are 0.
fn placed(placements: &[(isize, usize, &Model)]) -> Model {
    let mut m = Model {
        blocks: Vec::new(),
        lb: isize::MAX,
        ub: isize::MIN,
    };
    for &(disp, n, old) in placements {
        for i in 0..n as isize {
            let at = disp + i * old.extent();
            m.blocks
                .extend(old.blocks.iter().map(|&(d, l)| (at + d, l)));
            m.lb = m.lb.min(at + old.lb);
            m.ub = m.ub.max(at + old.ub);
        }
    }
    if m.lb > m.ub {
        (m.lb, m.ub) = (0, 0);
    }
    m
}

/// The type and its model (`None` when the implementation refused it).
fn build(tree: &Tree) -> Option<(Arc<Datatype>, Model)> {
    Some(match tree {
        Tree::Prim(h) => {
            let dt = t(*h);
            let size = dt.size();
            let model = Model {
                blocks: vec![(0, size)],
                lb: 0,
                ub: size as isize,
            };
            (dt, model)
        }
        Tree::Contiguous(c, old) => {
            let (o, m) = build(old)?;
            let dt = constructors::contiguous(*c, &o).ok()?;
            (Arc::new(dt), placed(&[(0, *c, &m)]))
        }
        Tree::Vector(c, b, s, old) | Tree::Hvector(c, b, s, old) => {
            let (o, m) = build(old)?;
            let hv = matches!(tree, Tree::Hvector(..));
            let dt = if hv {
                constructors::hvector(*c, *b, *s, &o)
            } else {
                constructors::vector(*c, *b, *s, &o)
            }
            .ok()?;
            let stride = if hv { *s } else { *s * m.extent() };
            let p: Vec<_> = (0..*c as isize).map(|j| (j * stride, *b, &m)).collect();
            (Arc::new(dt), placed(&p))
        }
        Tree::Indexed(bl, old) | Tree::Hindexed(bl, old) => {
            let (o, m) = build(old)?;
            let h = matches!(tree, Tree::Hindexed(..));
            let dt = if h {
                constructors::hindexed(Combiner::Hindexed, bl, &o)
            } else {
                constructors::indexed(Combiner::Indexed, bl, &o)
            }
            .ok()?;
            let p: Vec<_> = bl
                .iter()
                .map(|&(len, d)| (if h { d } else { d * m.extent() }, len, &m))
                .collect();
            (Arc::new(dt), placed(&p))
        }
        Tree::Struct(entries) => {
            let built: Vec<(usize, isize, Arc<Datatype>, Model)> = entries
                .iter()
                .map(|(len, d, sub)| build(sub).map(|(dt, m)| (*len, *d, dt, m)))
                .collect::<Option<_>>()?;
            let args: Vec<(usize, isize, &Datatype)> =
                built.iter().map(|(l, d, dt, _)| (*l, *d, &**dt)).collect();
            let dt = constructors::structure(&args).ok()?;
            let p: Vec<_> = built.iter().map(|(l, d, _, m)| (*d, *l, m)).collect();
            let mut model = placed(&p);
            // The standard pads a struct's extent to its alignment: take
            // the implementation's upper bound when it is a padding of the
            // model's (checked here), so that enclosing types model on.
            let pad = dt.ub() - model.ub;
            if (0..dt.align().max(1) as isize).contains(&pad) && dt.lb() == model.lb {
                model.ub = dt.ub();
            }
            (Arc::new(dt), model)
        }
        Tree::Resized(old, lb, extent) => {
            let (o, m) = build(old)?;
            let dt = constructors::resized(&o, *lb, *extent).ok()?;
            let model = Model {
                blocks: m.blocks,
                lb: *lb,
                ub: lb + extent,
            };
            (Arc::new(dt), model)
        }
        Tree::Dup(old) => {
            let (o, m) = build(old)?;
            (Arc::new(constructors::dup(&o)), m)
        }
    })
}

/// `count` elements of the model as merged byte blocks.
fn model_blocks(m: &Model, count: usize) -> Vec<(isize, usize)> {
    let mut out: Vec<(isize, usize)> = Vec::new();
    for i in 0..count as isize {
        for &(d, l) in &m.blocks {
            if l == 0 {
                continue;
            }
            let d = d + i * m.extent();
            match out.last_mut() {
                Some((ld, ll)) if *ld + *ll as isize == d => *ll += l,
                _ => out.push((d, l)),
            }
        }
    }
    out
}

proptest! {
    #[test]
    fn fuzz_datatypes_match_the_model_and_round_trip(
        tree in tree(),
        count in 0usize..4,
        seed in any::<u64>(),
    ) {
        // Every generated tree is a valid type: none may be refused.
        let built = build(&tree);
        prop_assert!(built.is_some(), "refused {:?}", tree);
        let (dt, model) = built.expect("checked");
        dt.commit();
        let size: usize = model.blocks.iter().map(|&(_, l)| l).sum();
        prop_assert_eq!(dt.size(), size, "size of {:?}", tree);
        prop_assert_eq!((dt.lb(), dt.ub()), (model.lb, model.ub), "bounds of {:?}", tree);
        prop_assert_eq!(blocks(&dt, count), model_blocks(&model, count), "blocks of {:?} x{}", tree, count);
        round_trip(&dt, count, seed);
    }
}
