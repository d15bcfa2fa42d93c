//! Fuzz target (proptest) of `PMI_process_mapping`, which the library
//! takes from whatever launcher started it: any string parses or is
//! refused, any triples give every rank one node in bounded time (counts
//! of billions and sums that overflow included), and a mapping agrees
//! with a plain expansion of its triples.
use proptest::prelude::*;

use super::process_mapping::{node_of_each_rank, parse, ranks_sharing_node};

/// Ranks' nodes by expanding the triples over and over, one rank at a
/// time (the definition).
fn expanded(triples: &[(u32, u32, u32)], size: u32) -> Vec<u32> {
    let per_pass: u64 = triples
        .iter()
        .map(|&(_, c, p)| u64::from(c) * u64::from(p))
        .sum();
    if per_pass == 0 {
        return Vec::new();
    }
    let mut nodes = Vec::new();
    while nodes.len() < size as usize {
        for &(first, count, per_node) in triples {
            for i in 0..count {
                for _ in 0..per_node {
                    if nodes.len() < size as usize {
                        nodes.push(first + i);
                    }
                }
            }
        }
    }
    nodes
}

proptest! {
    #[test]
    fn fuzz_process_mapping_any_string(text in "\\(?(vector)?[(), 0-9]{0,40}\\)?", size in 0u32..40, rank in 0u32..40) {
        if let Some(triples) = parse(&text) {
            let nodes = node_of_each_rank(&triples, size);
            prop_assert!(nodes.len() <= size as usize);
            if let Some(sharing) = ranks_sharing_node(&triples, size, rank) {
                prop_assert!(sharing.contains(&rank));
            }
        }
    }

    #[test]
    fn fuzz_process_mapping_huge_counts_cost_nothing(
        first in any::<u32>(),
        count in any::<u32>(),
        per_node in any::<u32>(),
        size in 0u32..100,
    ) {
        let nodes = node_of_each_rank(&[(first, count, per_node)], size);
        if count > 0 && per_node > 0 && size > 0 {
            prop_assert_eq!(nodes.len(), size as usize);
            prop_assert_eq!(nodes[0], first);
        }
    }

    #[test]
    fn fuzz_process_mapping_matches_its_expansion(
        triples in prop::collection::vec((0u32..6, 0u32..4, 0u32..4), 1..4),
        size in 0u32..30,
    ) {
        let text = format!(
            "(vector,{})",
            triples.iter().map(|(a, b, c)| format!("({a},{b},{c})")).collect::<Vec<_>>().join(",")
        );
        prop_assert_eq!(parse(&text), Some(triples.clone()));
        prop_assert_eq!(node_of_each_rank(&triples, size), expanded(&triples, size));
    }
}
