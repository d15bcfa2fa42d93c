//! Process topologies: the virtual layout (a Cartesian grid, a graph or a
//! distributed graph) a communicator carries, and the neighbour lists
//! neighborhood collectives use. A topology is made once, at the
//! communicator's creation, and shared unchanged by its dups.
//!
//! oxmpi does not reorder: whatever `reorder` says, a process keeps its
//! rank of the old communicator in the new one (`MPI_Cart_map` and
//! `MPI_Graph_map` give a process its own rank, or `MPI_UNDEFINED` when the
//! topology has fewer nodes than its rank).
//!
//! The parts: [`cart`], [`graph`], [`dist_graph`] (the layouts and their
//! arithmetic), [`dims`] (`MPI_Dims_create`), [`create`] (the collective
//! constructors).
use std::os::raw::c_int;

use crate::mpi_abi::constants::*;

pub mod cart;
pub mod create;
pub mod dims;
pub mod dist_graph;
pub mod graph;

pub use cart::Cart;
pub use dist_graph::DistGraph;
pub use graph::Graph;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Topology {
    Cart(Cart),
    Graph(Graph),
    DistGraph(DistGraph),
}

/// A member's neighbours as neighborhood collectives use them: receive
/// block i comes from `sources[i]`, send block j goes to
/// `destinations[j]` (`None`: `MPI_PROC_NULL`, nothing moves).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Neighbors {
    pub sources: Vec<Option<usize>>,
    pub destinations: Vec<Option<usize>>,
    /// The order in which to post the receives. Sends leave in block
    /// order, and two messages between the same processes match in the
    /// order they were sent and posted, so this order decides which
    /// receive block a message lands in when a process is a neighbour
    /// twice.
    pub receive_order: Vec<usize>,
}

impl Topology {
    /// `MPI_Topo_test`'s answer.
    pub fn kind(&self) -> c_int {
        match self {
            Topology::Cart(_) => MPI_CART,
            Topology::Graph(_) => MPI_GRAPH,
            Topology::DistGraph(_) => MPI_DIST_GRAPH,
        }
    }

    /// The neighbours of `rank`.
    ///
    /// Cartesian: for each dimension the -1 then the +1 neighbour, both
    /// for sending and receiving. MPI has the block sent to the -1
    /// neighbour land in that neighbour's +1 block (and the reverse), which
    /// matters when they are the same process (a periodic dimension of
    /// size 1 or 2): the receive for block `2d + 1` is posted before the one
    /// for block `2d`, matching the sends of blocks `2d` then `2d + 1`.
    /// Graphs: the neighbour list both ways; distributed graphs: the
    /// sources and destinations, in order (repeated edges between two
    /// processes match in the order both sides list them).
    pub fn neighbors(&self, rank: usize) -> Neighbors {
        match self {
            Topology::Cart(c) => {
                let all = c.neighbors(rank);
                let receive_order = (0..all.len()).map(|i| i ^ 1).collect();
                Neighbors {
                    sources: all.clone(),
                    destinations: all,
                    receive_order,
                }
            }
            Topology::Graph(g) => {
                let all: Vec<Option<usize>> = g.neighbors(rank).iter().map(|&r| Some(r)).collect();
                Neighbors {
                    receive_order: (0..all.len()).collect(),
                    sources: all.clone(),
                    destinations: all,
                }
            }
            Topology::DistGraph(d) => Neighbors {
                receive_order: (0..d.sources.len()).collect(),
                sources: d.sources.iter().map(|&r| Some(r)).collect(),
                destinations: d.destinations.iter().map(|&r| Some(r)).collect(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cartesian_receives_swap_each_dimensions_pair() {
        let t = Topology::Cart(Cart::new(&[2, 1], &[1, 1]).unwrap());
        let n = t.neighbors(0);
        assert_eq!(n.sources, [Some(1), Some(1), Some(0), Some(0)]);
        assert_eq!(n.receive_order, [1, 0, 3, 2]);
        assert_eq!(t.kind(), MPI_CART);
    }

    #[test]
    fn graph_neighbours_go_both_ways() {
        let t = Topology::Graph(Graph::new(&[1, 2], &[1, 0]).unwrap());
        let n = t.neighbors(1);
        assert_eq!(n.sources, [Some(0)]);
        assert_eq!(n.destinations, [Some(0)]);
    }
}
