//! Fuzz targets (proptest) of the strings the core takes from outside:
//! process-set definitions (`OXMPI_PSETS`, `mpiexec -pset`) and rank lists,
//! and info objects driven by any sequence of set, get, delete and nth-key
//! with any keys and values, against a model.
use proptest::prelude::*;

use super::info::InfoObject;
use super::pset::{parse_rank_list, ProcessSets};
use crate::mpi_abi::constants::*;

/// A rank list as a model: ranks in order of first mention, or an error
/// for a bad part.
fn model_ranks(parts: &[(u32, Option<u32>)], size: u32) -> Option<Vec<u32>> {
    let mut ranks = Vec::new();
    for &(a, b) in parts {
        let b = b.unwrap_or(a);
        if a > b || b >= size {
            return None;
        }
        for r in a..=b {
            if !ranks.contains(&r) {
                ranks.push(r);
            }
        }
    }
    Some(ranks)
}

#[derive(Debug, Clone)]
enum InfoOp {
    Set(String, String),
    Get(String),
    Delete(String),
    Nth(i32),
}

fn info_key() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-c]{1,2}",
        "\\PC{0,8}",
        Just("k".repeat(MPI_MAX_INFO_KEY as usize)),
        Just("k".repeat(MPI_MAX_INFO_KEY as usize + 1)),
    ]
}

fn info_op() -> impl Strategy<Value = InfoOp> {
    prop_oneof![
        (
            info_key(),
            prop_oneof![
                "\\PC{0,12}",
                Just("v".repeat(MPI_MAX_INFO_VAL as usize + 1))
            ]
        )
            .prop_map(|(k, v)| InfoOp::Set(k, v)),
        info_key().prop_map(InfoOp::Get),
        info_key().prop_map(InfoOp::Delete),
        (-2i32..6).prop_map(InfoOp::Nth),
    ]
}

proptest! {
    #[test]
    fn fuzz_psets_rank_lists_match_the_model(
        parts in prop::collection::vec((0u32..12, prop::option::of(0u32..12)), 0..6),
        size in 0u32..12,
        spaces in any::<bool>(),
    ) {
        let sep = if spaces { " , " } else { "," };
        let text = parts
            .iter()
            .map(|&(a, b)| match b {
                Some(b) => format!("{a}-{b}"),
                None => a.to_string(),
            })
            .collect::<Vec<_>>()
            .join(sep);
        prop_assert_eq!(parse_rank_list(&text, size).ok(), model_ranks(&parts, size));
    }

    #[test]
    fn fuzz_psets_any_definition_parses_or_is_ignored(defs in "\\PC{0,60}", size in 1u32..9, rank in 0u32..9) {
        let rank = rank % size;
        let sets = ProcessSets::new(0..size, rank, None, Some(&defs));
        prop_assert!(sets.len() >= 3);
        prop_assert_eq!(&*sets.members("mpi://WORLD").expect("world"), &(0..size).collect::<Vec<_>>()[..]);
        prop_assert_eq!(&*sets.members("mpi://self").expect("self"), &[rank][..]);
        for n in 0..sets.len() as i32 {
            let name = sets.name(n).expect("in range").to_string();
            let members = sets.members(&name).expect("named");
            prop_assert!(members.iter().all(|&r| r < size));
        }
        prop_assert!(sets.name(sets.len() as i32).is_err());
    }

    #[test]
    fn fuzz_info_any_operations_match_the_model(ops in prop::collection::vec(info_op(), 0..30)) {
        let mut info = InfoObject::new();
        let mut model: Vec<(String, String)> = Vec::new();
        let key_ok = |k: &str| !k.is_empty() && k.len() <= MPI_MAX_INFO_KEY as usize;
        for op in ops {
            match op {
                InfoOp::Set(k, v) => {
                    let ok = key_ok(&k) && !v.is_empty() && v.len() <= MPI_MAX_INFO_VAL as usize;
                    prop_assert_eq!(info.set(&k, &v).is_ok(), ok);
                    if ok {
                        match model.iter_mut().find(|(mk, _)| *mk == k) {
                            Some(e) => e.1 = v,
                            None => model.push((k, v)),
                        }
                    }
                }
                InfoOp::Get(k) => {
                    let expected = key_ok(&k)
                        .then(|| model.iter().find(|(mk, _)| *mk == k).map(|(_, v)| v.as_str()));
                    prop_assert_eq!(info.get(&k).ok(), expected);
                }
                InfoOp::Delete(k) => {
                    let present = key_ok(&k) && model.iter().any(|(mk, _)| *mk == k);
                    prop_assert_eq!(info.delete(&k).is_ok(), present);
                    model.retain(|(mk, _)| *mk != k);
                }
                InfoOp::Nth(n) => {
                    let expected = usize::try_from(n).ok().and_then(|i| model.get(i)).map(|(k, _)| k.as_str());
                    prop_assert_eq!(info.nth_key(n).ok(), expected);
                }
            }
            prop_assert_eq!(info.nkeys() as usize, model.len());
        }
    }
}
