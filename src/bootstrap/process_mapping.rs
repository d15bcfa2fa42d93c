//! `PMI_process_mapping`: which ranks share a node. The value is
//! `(vector,(first_node,node_count,ranks_per_node),...)`: blocks of
//! consecutive ranks, `ranks_per_node` on each of `node_count` nodes
//! starting at `first_node`. Ranks past the described blocks wrap around
//! the nodes again (Hydra's round-robin for oversubscription).
use crate::bootstrap::ProcessId;

/// Parses the triples of a mapping; `None` if it is not a vector mapping.
pub fn parse(value: &str) -> Option<Vec<(u32, u32, u32)>> {
    let body = value.trim().strip_prefix("(vector")?.strip_suffix(')')?;
    let mut triples = Vec::new();
    for part in body.split('(').skip(1) {
        let inner = part.trim_end_matches([')', ',', ' ']);
        let nums: Vec<u32> = inner
            .split(',')
            .map(|s| s.trim().parse().ok())
            .collect::<Option<_>>()?;
        if nums.len() != 3 {
            return None;
        }
        triples.push((nums[0], nums[1], nums[2]));
    }
    (!triples.is_empty()).then_some(triples)
}

/// The node index of every rank of a job of `size` ranks. Stops as soon
/// as every rank has its node, whatever counts the mapping claims (a
/// triple of four billion nodes costs no more than the job's ranks).
pub fn node_of_each_rank(triples: &[(u32, u32, u32)], size: u32) -> Vec<u32> {
    let size = size as usize;
    let mut nodes = Vec::with_capacity(size.min(1 << 20));
    while nodes.len() < size {
        let before = nodes.len();
        'triples: for &(first, count, per_node) in triples {
            for node in (0..count).map_while(|i| first.checked_add(i)) {
                for _ in 0..per_node {
                    if nodes.len() == size {
                        break 'triples;
                    }
                    nodes.push(node);
                }
            }
        }
        if nodes.len() == before {
            break; // a mapping of zero ranks: give up (caller falls back)
        }
    }
    nodes
}

/// The ranks on the same node as `rank`.
pub fn ranks_sharing_node(
    triples: &[(u32, u32, u32)],
    size: u32,
    rank: ProcessId,
) -> Option<Vec<ProcessId>> {
    let nodes = node_of_each_rank(triples, size);
    let mine = *nodes.get(rank as usize)?;
    Some(
        (0..nodes.len() as u32)
            .filter(|&r| nodes[r as usize] == mine)
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_node_and_blocks() {
        let t = parse("(vector,(0,1,4))").unwrap();
        assert_eq!(ranks_sharing_node(&t, 4, 2).unwrap(), vec![0, 1, 2, 3]);
        let t = parse("(vector,(0,2,2))").unwrap();
        assert_eq!(node_of_each_rank(&t, 4), vec![0, 0, 1, 1]);
        assert_eq!(ranks_sharing_node(&t, 4, 3).unwrap(), vec![2, 3]);
        let t = parse("(vector,(0,2,1))").unwrap();
        assert_eq!(
            node_of_each_rank(&t, 5),
            vec![0, 1, 0, 1, 0],
            "wraps around"
        );
        assert!(parse("garbage").is_none());
        assert!(parse("(vector,(0,1))").is_none());
    }
}
