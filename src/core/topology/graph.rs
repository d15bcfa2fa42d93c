//! Graph topologies (`MPI_Graph_create`): every member knows the whole
//! graph, as `index` (cumulative degrees) and `edges`, as MPI gives them.
use std::os::raw::c_int;

use crate::core::error::{MpiError, MpiResult};
use crate::mpi_abi::constants::*;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Graph {
    /// `index[i]`: the number of edges of nodes `0..=i`.
    pub index: Vec<usize>,
    pub edges: Vec<usize>,
}

impl Graph {
    /// A graph of `index.len()` nodes from `MPI_Graph_create`'s arrays:
    /// `index` must not decrease and every edge must name a node
    /// (`MPI_ERR_ARG`, as MPICH).
    pub fn new(index: &[c_int], edges: &[c_int]) -> MpiResult<Graph> {
        let mut previous = 0;
        for (i, &x) in index.iter().enumerate() {
            if x < previous {
                return Err(MpiError::new(
                    MPI_ERR_ARG,
                    format!("index[{i}] ({x}) is smaller than the entry before it ({previous})"),
                ));
            }
            previous = x;
        }
        let nnodes = index.len();
        let edges = edges
            .iter()
            .enumerate()
            .map(|(i, &e)| {
                usize::try_from(e)
                    .ok()
                    .filter(|&e| e < nnodes)
                    .ok_or_else(|| {
                        MpiError::new(
                            MPI_ERR_ARG,
                            format!("edges[{i}] ({e}) is not a node of the graph (0..{nnodes})"),
                        )
                    })
            })
            .collect::<MpiResult<Vec<_>>>()?;
        Ok(Graph {
            index: index.iter().map(|&x| x as usize).collect(),
            edges,
        })
    }

    pub fn nnodes(&self) -> usize {
        self.index.len()
    }

    /// The neighbours of `rank` (a node), in the order of `edges`.
    pub fn neighbors(&self, rank: usize) -> &[usize] {
        let start = if rank == 0 { 0 } else { self.index[rank - 1] };
        &self.edges[start..self.index[rank]]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neighbours_come_from_the_cumulative_index() {
        // 0 - 1, 0 - 2, 1 - 1 (a loop), node 3 alone.
        let g = Graph::new(&[2, 4, 5, 5], &[1, 2, 0, 1, 0]).unwrap();
        assert_eq!(g.nnodes(), 4);
        assert_eq!(g.neighbors(0), [1, 2]);
        assert_eq!(g.neighbors(1), [0, 1]);
        assert_eq!(g.neighbors(2), [0]);
        assert!(g.neighbors(3).is_empty());
    }

    #[test]
    fn bad_arrays_are_refused() {
        assert_eq!(Graph::new(&[2, 1], &[1, 0]).unwrap_err().class, MPI_ERR_ARG);
        assert_eq!(Graph::new(&[1, 2], &[1, 2]).unwrap_err().class, MPI_ERR_ARG);
    }
}
