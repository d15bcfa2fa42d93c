//! The collective constructors of communicators with a topology
//! (`MPI_Cart_create`, `Cart_sub`, `Graph_create`, `Dist_graph_create`
//! and its adjacent form) and the lookup of a communicator's topology.
//! Ranks are never reordered (see the module above): the new communicator
//! is a split of the old one keyed by the old rank.
//!
//! `MPI_Dist_graph_create` lets any member name any edge, so the members
//! exchange them: an allgather of how many bytes each sends to each, then
//! one message per pair that has edges to tell (on the channel's internal
//! collective tag, as communicator creation does). Each process's edges end
//! up ordered by the rank of the member that named them, then by that
//! member's order, at both ends of an edge: repeated edges between two
//! processes match in the same order on both sides.
use std::os::raw::c_int;
use std::sync::Arc;

use super::{Cart, DistGraph, Graph, Topology};
use crate::core::collective::algorithms::alltoallv_bytes;
use crate::core::collective::channel::Channel;
use crate::core::comm_constructors::split;
use crate::core::error::{MpiError, MpiResult};
use crate::core::runtime;
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::MPI_Comm;

/// The topology of `comm` (`None` if it has none).
pub fn topology_of(comm: MPI_Comm) -> MpiResult<Option<Arc<Topology>>> {
    Ok(runtime::lock().comms().get(comm)?.topology.clone())
}

/// The topology of `comm`, which must have one (`MPI_ERR_TOPOLOGY`).
pub fn topology(comm: MPI_Comm) -> MpiResult<Arc<Topology>> {
    topology_of(comm)?
        .ok_or_else(|| MpiError::new(MPI_ERR_TOPOLOGY, "the communicator has no process topology"))
}

/// The Cartesian topology of `comm` (`MPI_ERR_TOPOLOGY` otherwise).
pub fn cart(comm: MPI_Comm) -> MpiResult<Arc<Topology>> {
    let t = topology(comm)?;
    match *t {
        Topology::Cart(_) => Ok(t),
        _ => Err(wrong_kind("a Cartesian")),
    }
}

/// `MPI_ERR_TOPOLOGY` for a communicator with another topology.
pub fn wrong_kind(wanted: &str) -> MpiError {
    MpiError::new(
        MPI_ERR_TOPOLOGY,
        format!("the communicator does not have {wanted} topology"),
    )
}

/// The size and this process's rank of an intracommunicator
/// (`MPI_ERR_COMM` for an intercommunicator).
fn intra(comm: MPI_Comm) -> MpiResult<(usize, usize)> {
    let rt = runtime::lock();
    let c = rt.comms().get(comm)?;
    if c.is_inter() {
        return Err(MpiError::new(
            MPI_ERR_COMM,
            "a topology cannot be attached to an intercommunicator",
        ));
    }
    Ok((c.size(), c.rank))
}

/// The first `nodes` ranks of `comm` (in order) as a new communicator
/// with `topology`; `MPI_COMM_NULL` for the other members.
fn first_ranks_with(comm: MPI_Comm, nodes: usize, topology: Topology) -> MpiResult<MPI_Comm> {
    let (size, rank) = intra(comm)?;
    if nodes > size {
        return Err(MpiError::new(
            MPI_ERR_ARG,
            format!(
                "the topology has {nodes} nodes, more than the communicator's {size} processes"
            ),
        ));
    }
    let color = if rank < nodes { 0 } else { MPI_UNDEFINED };
    let created = split(comm, color, rank as c_int)?;
    attach(created, topology)
}

fn attach(comm: MPI_Comm, topology: Topology) -> MpiResult<MPI_Comm> {
    if comm != MPI_COMM_NULL {
        runtime::lock().comms_mut().get_mut(comm)?.topology = Some(Arc::new(topology));
    }
    Ok(comm)
}

/// `MPI_Cart_create`.
pub fn cart_create(comm: MPI_Comm, cart: Cart) -> MpiResult<MPI_Comm> {
    let nodes = cart
        .size()
        .ok_or_else(|| MpiError::new(MPI_ERR_DIMS, "the product of the dimensions overflows"))?;
    first_ranks_with(comm, nodes, Topology::Cart(cart))
}

/// `MPI_Cart_sub`: one communicator per combination of the dropped
/// coordinates, ranked as in `comm`. When no dimension is kept the result
/// is a zero-dimensional grid, which (as in MPICH, whose test suite checks
/// it) only the first member gets, the others `MPI_COMM_NULL`.
pub fn cart_sub(comm: MPI_Comm, remain: &[bool]) -> MpiResult<MPI_Comm> {
    let t = cart(comm)?;
    let Topology::Cart(c) = &*t else {
        unreachable!("checked by `cart`")
    };
    if remain.len() != c.ndims() {
        return Err(MpiError::new(
            MPI_ERR_ARG,
            "remain_dims has the wrong length",
        ));
    }
    if !remain.iter().any(|&keep| keep) {
        return cart_create(comm, c.sub(remain));
    }
    let (_, rank) = intra(comm)?;
    let coords = c.coords(rank);
    let color = coords
        .iter()
        .zip(&c.dims)
        .zip(remain)
        .filter(|(_, &keep)| !keep)
        .fold(0usize, |color, ((&x, &d), _)| color * d + x);
    let created = split(comm, color as c_int, rank as c_int)?;
    attach(created, Topology::Cart(c.sub(remain)))
}

/// `MPI_Graph_create`.
pub fn graph_create(comm: MPI_Comm, graph: Graph) -> MpiResult<MPI_Comm> {
    first_ranks_with(comm, graph.nnodes(), Topology::Graph(graph))
}

/// Checks that every rank of `ranks` is one of `size`.
fn check_ranks(ranks: &[usize], size: usize, name: &str) -> MpiResult {
    match ranks.iter().find(|&&r| r >= size) {
        Some(r) => Err(MpiError::new(
            MPI_ERR_RANK,
            format!("{name} names rank {r}, not in the communicator (size {size})"),
        )),
        None => Ok(()),
    }
}

/// `MPI_Dist_graph_create_adjacent`.
pub fn dist_graph_create_adjacent(comm: MPI_Comm, graph: DistGraph) -> MpiResult<MPI_Comm> {
    let (size, _) = intra(comm)?;
    check_ranks(&graph.sources, size, "sources")?;
    check_ranks(&graph.destinations, size, "destinations")?;
    first_ranks_with(comm, size, Topology::DistGraph(graph))
}

/// One edge `source -> destination` named in `MPI_Dist_graph_create`.
#[derive(Clone, Copy, Debug)]
pub struct Edge {
    pub source: usize,
    pub destination: usize,
    pub weight: c_int,
}

/// What one member tells another about an edge: 12 bytes.
const RECORD: usize = 12;
const OUTGOING: i32 = 0;
const INCOMING: i32 = 1;

/// `MPI_Dist_graph_create`: `edges` are the edges this process names;
/// `weighted` is false for `MPI_UNWEIGHTED`.
pub fn dist_graph_create(comm: MPI_Comm, edges: &[Edge], weighted: bool) -> MpiResult<MPI_Comm> {
    let (size, _) = intra(comm)?;
    for e in edges {
        check_ranks(&[e.source, e.destination], size, "the edges")?;
    }
    let ch = Channel::lookup(comm)?;
    let mut outgoing: Vec<Vec<u8>> = vec![Vec::new(); size];
    for e in edges {
        let mut tell = |to: usize, kind: i32, other: usize| {
            let out = &mut outgoing[to];
            out.extend_from_slice(&kind.to_le_bytes());
            out.extend_from_slice(&(other as i32).to_le_bytes());
            out.extend_from_slice(&e.weight.to_le_bytes());
        };
        tell(e.source, OUTGOING, e.destination);
        tell(e.destination, INCOMING, e.source);
    }
    let incoming = alltoallv_bytes(&ch, outgoing)?;
    let mut graph = DistGraph::default();
    let (mut source_weights, mut destination_weights) = (Vec::new(), Vec::new());
    for record in incoming.iter().flat_map(|bytes| bytes.chunks_exact(RECORD)) {
        let field = |i: usize| i32::from_le_bytes(record[i * 4..i * 4 + 4].try_into().expect("4"));
        let (kind, other, weight) = (field(0), field(1) as usize, field(2));
        if kind == OUTGOING {
            graph.destinations.push(other);
            destination_weights.push(weight);
        } else {
            graph.sources.push(other);
            source_weights.push(weight);
        }
    }
    if weighted {
        graph.source_weights = Some(source_weights);
        graph.destination_weights = Some(destination_weights);
    }
    first_ranks_with(comm, size, Topology::DistGraph(graph))
}
