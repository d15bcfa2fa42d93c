//! Process topologies through the C ABI: `MPI_Dims_create`, the Cartesian
//! (`MPI_Cart_*`, `MPI_Cartdim_get`), graph (`MPI_Graph_*`,
//! `MPI_Graphdims_get`) and distributed graph (`MPI_Dist_graph_*`) calls
//! and `MPI_Topo_test`. The arrays are read and written here; the layouts
//! and the collective constructors are in `core::topology`.
//!
//! Error classes are MPICH's: a communicator without the topology a call
//! needs is `MPI_ERR_TOPOLOGY`; a negative length, a direction out of
//! range or an array too short for the answer is `MPI_ERR_ARG`; a rank
//! that is not a node is `MPI_ERR_RANK`; dimensions that cannot be a grid
//! are `MPI_ERR_DIMS`. `reorder` is accepted and ignored (a process keeps
//! its rank), so `MPI_Cart_map` and `MPI_Graph_map` place a process at its
//! own rank, or nowhere (`MPI_UNDEFINED`) when the topology has fewer nodes.
//! A constructor that fails leaves `MPI_COMM_NULL` in its output, as
//! MPICH does.
use std::os::raw::c_int;
use std::sync::Arc;

use crate::abi::args::{array, array_out};
use crate::core::error::{MpiError, MpiResult};
use crate::core::runtime;
use crate::core::topology::create::{self, Edge};
use crate::core::topology::{dims, Cart, DistGraph, Graph, Topology};
use crate::mpi_abi::constants::*;
use crate::mpi_abi::data_symbols::{is_unweighted, is_weights_empty};
use crate::mpi_abi::types::*;

/// A length argument (`ndims`, `maxdims`, `n`...): `MPI_ERR_ARG` when
/// negative.
fn length(n: c_int, name: &str) -> MpiResult<usize> {
    usize::try_from(n).map_err(|_| MpiError::new(MPI_ERR_ARG, format!("{name} is negative ({n})")))
}

/// The rank of this process in `comm` and the communicator's size.
fn rank_and_size(comm: MPI_Comm) -> MpiResult<(usize, usize)> {
    let rt = runtime::lock();
    let c = rt.comms().get(comm)?;
    Ok((c.rank, c.size()))
}

/// A rank argument of `comm` (`MPI_ERR_RANK` outside `0..size`).
fn rank_in(rank: c_int, size: usize, name: &str) -> MpiResult<usize> {
    usize::try_from(rank)
        .ok()
        .filter(|&r| r < size)
        .ok_or_else(|| MpiError::new(MPI_ERR_RANK, format!("{name} {rank} is not in 0..{size}")))
}

/// Ranks named in an array (`MPI_ERR_RANK` for a negative one; the
/// constructor checks them against the communicator's size).
fn ranks(values: &[c_int], name: &str) -> MpiResult<Vec<usize>> {
    values
        .iter()
        .enumerate()
        .map(|(i, &r)| {
            usize::try_from(r).map_err(|_| {
                MpiError::new(
                    MPI_ERR_RANK,
                    format!("{name}[{i}] is a negative rank ({r})"),
                )
            })
        })
        .collect()
}

/// A Cartesian layout from `ndims` entries of `dims` and `periods`.
///
/// # Safety
/// `dims` and `periods` must be NULL or hold `ndims` ints.
unsafe fn cart_arg(ndims: c_int, dims: *const c_int, periods: *const c_int) -> MpiResult<Cart> {
    let n = length(ndims, "ndims")?;
    // SAFETY: `dims` is NULL or holds `ndims` ints (this function's
    // contract); read only during this call.
    let dims = unsafe { array(dims, n, "dims") }?;
    // SAFETY: as for `dims`.
    let periods = unsafe { array(periods, n, "periods") }?;
    Cart::new(dims, periods)
}

/// The communicator's Cartesian layout (`MPI_ERR_TOPOLOGY` otherwise).
fn cart_of(comm: MPI_Comm) -> MpiResult<(Arc<Topology>, usize)> {
    let t = create::cart(comm)?;
    let (rank, _) = rank_and_size(comm)?;
    Ok((t, rank))
}

/// The Cartesian layout inside a topology `cart_of` returned.
fn as_cart(t: &Topology) -> &Cart {
    match t {
        Topology::Cart(c) => c,
        _ => unreachable!("checked by `create::cart`"),
    }
}

/// The communicator's graph layout (`MPI_ERR_TOPOLOGY` otherwise).
fn graph_of(comm: MPI_Comm) -> MpiResult<Arc<Topology>> {
    let t = create::topology(comm)?;
    match *t {
        Topology::Graph(_) => Ok(t),
        _ => Err(create::wrong_kind("a graph")),
    }
}

fn as_graph(t: &Topology) -> &Graph {
    match t {
        Topology::Graph(g) => g,
        _ => unreachable!("checked by `graph_of`"),
    }
}

/// The communicator's distributed graph (`MPI_ERR_TOPOLOGY` otherwise).
fn dist_graph_of(comm: MPI_Comm) -> MpiResult<Arc<Topology>> {
    let t = create::topology(comm)?;
    match *t {
        Topology::DistGraph(_) => Ok(t),
        _ => Err(create::wrong_kind("a distributed graph")),
    }
}

fn as_dist_graph(t: &Topology) -> &DistGraph {
    match t {
        Topology::DistGraph(d) => d,
        _ => unreachable!("checked by `dist_graph_of`"),
    }
}

/// Checks an info argument (`MPI_INFO_NULL` is fine); topology hints are
/// not used.
fn check_info(info: MPI_Info) -> MpiResult {
    if info != MPI_INFO_NULL {
        crate::abi::info::lookup(&runtime::lock(), info)?;
    }
    Ok(())
}

/// Writes `values` into the first entries of an output array of `max`.
///
/// # Safety
/// `p` must be NULL or hold `max` writable ints.
unsafe fn write_ints(p: *mut c_int, max: usize, values: &[c_int], name: &str) -> MpiResult {
    if values.len() > max {
        return Err(MpiError::new(
            MPI_ERR_ARG,
            format!(
                "{name} has room for {max} entries, {} are needed",
                values.len()
            ),
        ));
    }
    // SAFETY: `p` is NULL or holds `max >= values.len()` ints (this
    // function's contract); only the first `values.len()` are written.
    let out = unsafe { array_out(p, values.len(), name) }?;
    out.copy_from_slice(values);
    Ok(())
}

/// Ranks, counts or coordinates as C ints (each fits: a rank or a
/// dimension of a communicator).
fn ints(values: &[usize]) -> Vec<c_int> {
    values.iter().map(|&v| v as c_int).collect()
}

// ---- Dims_create ----

pub unsafe fn dims_create(nnodes: c_int, ndims: c_int, dims: *mut c_int) -> MpiResult {
    let n = length(ndims, "ndims")?;
    if nnodes < 0 {
        return Err(MpiError::new(
            MPI_ERR_ARG,
            format!("nnodes is negative ({nnodes})"),
        ));
    }
    // SAFETY: MPI_Dims_create's `dims` is an in/out array of `ndims` ints
    // (MPI's contract), NULL only when `ndims` is 0.
    let dims = unsafe { array_out(dims, n, "dims") }?;
    dims::dims_create(nnodes, dims)
}

// ---- Cartesian topologies ----

pub unsafe fn cart_create(
    comm_old: MPI_Comm,
    ndims: c_int,
    dims: *const c_int,
    periods: *const c_int,
    _reorder: c_int,
    comm_cart: &mut MPI_Comm,
) -> MpiResult {
    *comm_cart = MPI_COMM_NULL;
    // SAFETY: MPI_Cart_create's `dims` and `periods` hold `ndims` ints
    // (MPI's contract).
    let cart = unsafe { cart_arg(ndims, dims, periods) }?;
    *comm_cart = create::cart_create(comm_old, cart)?;
    Ok(())
}

pub unsafe fn cartdim_get(comm: MPI_Comm, ndims: &mut c_int) -> MpiResult {
    let t = create::cart(comm)?;
    *ndims = as_cart(&t).ndims() as c_int;
    Ok(())
}

pub unsafe fn cart_get(
    comm: MPI_Comm,
    maxdims: c_int,
    dims: *mut c_int,
    periods: *mut c_int,
    coords: *mut c_int,
) -> MpiResult {
    let max = length(maxdims, "maxdims")?;
    let (t, rank) = cart_of(comm)?;
    let c = as_cart(&t);
    let flags: Vec<c_int> = c.periods.iter().map(|&p| c_int::from(p)).collect();
    // SAFETY: MPI_Cart_get's arrays hold `maxdims` ints
    // (MPI's contract); `write_ints` writes at most that many.
    unsafe { write_ints(dims, max, &ints(&c.dims), "dims") }?;
    // SAFETY: see above.
    unsafe { write_ints(periods, max, &flags, "periods") }?;
    // SAFETY: see above.
    unsafe { write_ints(coords, max, &ints(&c.coords(rank)), "coords") }
}

pub unsafe fn cart_rank(comm: MPI_Comm, coords: *const c_int, rank: &mut c_int) -> MpiResult {
    let (t, _) = cart_of(comm)?;
    let c = as_cart(&t);
    // SAFETY: MPI_Cart_rank's `coords` holds one int per dimension (MPI's
    // contract); read only during this call.
    let coords = unsafe { array(coords, c.ndims(), "coords") }?;
    *rank = c.rank(coords)? as c_int;
    Ok(())
}

pub unsafe fn cart_coords(
    comm: MPI_Comm,
    rank: c_int,
    maxdims: c_int,
    coords: *mut c_int,
) -> MpiResult {
    let max = length(maxdims, "maxdims")?;
    let (t, _) = cart_of(comm)?;
    let c = as_cart(&t);
    let (_, size) = rank_and_size(comm)?;
    let rank = rank_in(rank, size, "rank")?;
    // SAFETY: MPI_Cart_coords' `coords` holds `maxdims` ints (MPI's
    // contract); `write_ints` writes at most that many.
    unsafe { write_ints(coords, max, &ints(&c.coords(rank)), "coords") }
}

pub unsafe fn cart_shift(
    comm: MPI_Comm,
    direction: c_int,
    disp: c_int,
    rank_source: &mut c_int,
    rank_dest: &mut c_int,
) -> MpiResult {
    let (t, rank) = cart_of(comm)?;
    let c = as_cart(&t);
    if c.ndims() == 0 {
        return Err(MpiError::new(
            MPI_ERR_TOPOLOGY,
            "the Cartesian topology has no dimension to shift along",
        ));
    }
    let direction = usize::try_from(direction)
        .ok()
        .filter(|&d| d < c.ndims())
        .ok_or_else(|| {
            MpiError::new(
                MPI_ERR_ARG,
                format!(
                    "direction {direction} is not a dimension (0..{})",
                    c.ndims()
                ),
            )
        })?;
    let (source, dest) = c.shift(rank, direction, i64::from(disp));
    let as_rank = |r: Option<usize>| r.map_or(MPI_PROC_NULL, |r| r as c_int);
    *rank_source = as_rank(source);
    *rank_dest = as_rank(dest);
    Ok(())
}

pub unsafe fn cart_sub(
    comm: MPI_Comm,
    remain_dims: *const c_int,
    newcomm: &mut MPI_Comm,
) -> MpiResult {
    *newcomm = MPI_COMM_NULL;
    let (t, _) = cart_of(comm)?;
    // SAFETY: MPI_Cart_sub's `remain_dims` holds one int per dimension
    // (MPI's contract); read only during this call.
    let remain = unsafe { array(remain_dims, as_cart(&t).ndims(), "remain_dims") }?;
    let remain: Vec<bool> = remain.iter().map(|&r| r != 0).collect();
    *newcomm = create::cart_sub(comm, &remain)?;
    Ok(())
}

pub unsafe fn cart_map(
    comm: MPI_Comm,
    ndims: c_int,
    dims: *const c_int,
    periods: *const c_int,
    newrank: &mut c_int,
) -> MpiResult {
    // SAFETY: MPI_Cart_map's `dims` and `periods` hold `ndims` ints (MPI's
    // contract).
    let cart = unsafe { cart_arg(ndims, dims, periods) }?;
    let (rank, size) = rank_and_size(comm)?;
    let nodes = cart.size().filter(|&n| n <= size).ok_or_else(|| {
        MpiError::new(
            MPI_ERR_DIMS,
            format!("the grid has more nodes than the communicator's {size} processes"),
        )
    })?;
    *newrank = if rank < nodes {
        rank as c_int
    } else {
        MPI_UNDEFINED
    };
    Ok(())
}

// ---- Graph topologies ----

/// A graph from `MPI_Graph_create`'s (or `Graph_map`'s) arrays.
///
/// # Safety
/// `index` must be NULL or hold `nnodes` ints, `edges` NULL or hold
/// `index[nnodes - 1]` ints.
unsafe fn graph_arg(nnodes: c_int, index: *const c_int, edges: *const c_int) -> MpiResult<Graph> {
    let n = length(nnodes, "nnodes")?;
    // SAFETY: `index` is NULL or holds `nnodes` ints (this function's
    // contract).
    let index = unsafe { array(index, n, "index") }?;
    let nedges = match index.last() {
        Some(&last) => length(last, "index[nnodes - 1]")?,
        None => 0,
    };
    // SAFETY: `edges` is NULL or holds `index[nnodes - 1]` ints (this
    // function's contract).
    let edges = unsafe { array(edges, nedges, "edges") }?;
    Graph::new(index, edges)
}

pub unsafe fn graph_create(
    comm_old: MPI_Comm,
    nnodes: c_int,
    index: *const c_int,
    edges: *const c_int,
    _reorder: c_int,
    comm_graph: &mut MPI_Comm,
) -> MpiResult {
    *comm_graph = MPI_COMM_NULL;
    // SAFETY: MPI_Graph_create's arrays are as `graph_arg` asks (MPI's
    // contract).
    let graph = unsafe { graph_arg(nnodes, index, edges) }?;
    *comm_graph = create::graph_create(comm_old, graph)?;
    Ok(())
}

pub unsafe fn graphdims_get(comm: MPI_Comm, nnodes: &mut c_int, nedges: &mut c_int) -> MpiResult {
    let t = graph_of(comm)?;
    let g = as_graph(&t);
    *nnodes = g.nnodes() as c_int;
    *nedges = g.edges.len() as c_int;
    Ok(())
}

pub unsafe fn graph_get(
    comm: MPI_Comm,
    maxindex: c_int,
    maxedges: c_int,
    index: *mut c_int,
    edges: *mut c_int,
) -> MpiResult {
    let (maxindex, maxedges) = (length(maxindex, "maxindex")?, length(maxedges, "maxedges")?);
    let t = graph_of(comm)?;
    let g = as_graph(&t);
    // SAFETY: MPI_Graph_get's `index` holds `maxindex` ints, `edges`
    // `maxedges` (MPI's contract); `write_ints` writes at most that many.
    unsafe { write_ints(index, maxindex, &ints(&g.index), "index") }?;
    // SAFETY: see above.
    unsafe { write_ints(edges, maxedges, &ints(&g.edges), "edges") }
}

/// A node of the communicator's graph (`MPI_ERR_RANK` otherwise).
fn node(g: &Graph, rank: c_int) -> MpiResult<usize> {
    rank_in(rank, g.nnodes(), "rank")
}

pub unsafe fn graph_neighbors_count(
    comm: MPI_Comm,
    rank: c_int,
    nneighbors: &mut c_int,
) -> MpiResult {
    let t = graph_of(comm)?;
    let g = as_graph(&t);
    *nneighbors = g.neighbors(node(g, rank)?).len() as c_int;
    Ok(())
}

pub unsafe fn graph_neighbors(
    comm: MPI_Comm,
    rank: c_int,
    maxneighbors: c_int,
    neighbors: *mut c_int,
) -> MpiResult {
    let max = length(maxneighbors, "maxneighbors")?;
    let t = graph_of(comm)?;
    let g = as_graph(&t);
    let all = g.neighbors(node(g, rank)?);
    // SAFETY: MPI_Graph_neighbors' `neighbors` holds `maxneighbors` ints
    // (MPI's contract); `write_ints` writes at most that many.
    unsafe { write_ints(neighbors, max, &ints(all), "neighbors") }
}

pub unsafe fn graph_map(
    comm: MPI_Comm,
    nnodes: c_int,
    index: *const c_int,
    edges: *const c_int,
    newrank: &mut c_int,
) -> MpiResult {
    // SAFETY: MPI_Graph_map's arrays are as `graph_arg` asks (MPI's
    // contract).
    let graph = unsafe { graph_arg(nnodes, index, edges) }?;
    let (rank, size) = rank_and_size(comm)?;
    if graph.nnodes() > size {
        return Err(MpiError::new(
            MPI_ERR_ARG,
            format!(
                "the graph has {} nodes, more than the communicator's {size} processes",
                graph.nnodes()
            ),
        ));
    }
    *newrank = if rank < graph.nnodes() {
        rank as c_int
    } else {
        MPI_UNDEFINED
    };
    Ok(())
}

// ---- Distributed graph topologies ----

/// `n` weights, `None` for `MPI_UNWEIGHTED`; `MPI_WEIGHTS_EMPTY` is an
/// empty array (of `n` = 0 entries).
///
/// # Safety
/// `p` must be a sentinel, NULL or hold `n` ints.
unsafe fn weights(p: *const c_int, n: usize, name: &str) -> MpiResult<Option<Vec<c_int>>> {
    if is_unweighted(p) {
        return Ok(None);
    }
    if is_weights_empty(p) {
        if n > 0 {
            return Err(MpiError::new(
                MPI_ERR_ARG,
                format!("{name} is MPI_WEIGHTS_EMPTY but {n} weights are needed"),
            ));
        }
        return Ok(Some(Vec::new()));
    }
    // SAFETY: not a sentinel, so NULL or `n` ints (this function's
    // contract).
    Ok(Some(unsafe { array(p, n, name) }?.to_vec()))
}

pub unsafe fn dist_graph_create_adjacent(
    comm_old: MPI_Comm,
    indegree: c_int,
    sources: *const c_int,
    sourceweights: *const c_int,
    outdegree: c_int,
    destinations: *const c_int,
    destweights: *const c_int,
    info: MPI_Info,
    _reorder: c_int,
    comm_dist_graph: &mut MPI_Comm,
) -> MpiResult {
    *comm_dist_graph = MPI_COMM_NULL;
    let (nin, nout) = (
        length(indegree, "indegree")?,
        length(outdegree, "outdegree")?,
    );
    check_info(info)?;
    // As MPICH: either both weight arrays are MPI_UNWEIGHTED or neither is
    // (where a side has edges); whether the graph is weighted is what the
    // sources' weights say.
    let (unweighted_in, unweighted_out) =
        (is_unweighted(sourceweights), is_unweighted(destweights));
    if (nin > 0 || nout > 0) && unweighted_in != unweighted_out {
        return Err(MpiError::new(
            MPI_ERR_TOPOLOGY,
            "only one of sourceweights and destweights is MPI_UNWEIGHTED",
        ));
    }
    // SAFETY: MPI_Dist_graph_create_adjacent's arrays hold `indegree`
    // (sources, sourceweights) and `outdegree` entries (destinations,
    // destweights) unless a weight array is a sentinel (MPI's contract);
    // all are read only during this call.
    let graph = unsafe {
        DistGraph {
            sources: ranks(array(sources, nin, "sources")?, "sources")?,
            destinations: ranks(array(destinations, nout, "destinations")?, "destinations")?,
            source_weights: weights(sourceweights, nin, "sourceweights")?,
            destination_weights: weights(destweights, nout, "destweights")?,
        }
    };
    let graph = if graph.source_weights.is_none() || graph.destination_weights.is_none() {
        DistGraph {
            source_weights: None,
            destination_weights: None,
            ..graph
        }
    } else {
        graph
    };
    *comm_dist_graph = create::dist_graph_create_adjacent(comm_old, graph)?;
    Ok(())
}

pub unsafe fn dist_graph_create(
    comm_old: MPI_Comm,
    n: c_int,
    sources: *const c_int,
    degrees: *const c_int,
    destinations: *const c_int,
    weights_arg: *const c_int,
    info: MPI_Info,
    _reorder: c_int,
    comm_dist_graph: &mut MPI_Comm,
) -> MpiResult {
    *comm_dist_graph = MPI_COMM_NULL;
    let n = length(n, "n")?;
    check_info(info)?;
    // SAFETY: MPI_Dist_graph_create's `sources` and `degrees` hold `n` ints
    // (MPI's contract), read only during this call.
    let (sources, degrees) =
        unsafe { (array(sources, n, "sources")?, array(degrees, n, "degrees")?) };
    let sources = ranks(sources, "sources")?;
    let degrees: Vec<usize> = degrees
        .iter()
        .enumerate()
        .map(|(i, &d)| length(d, &format!("degrees[{i}]")))
        .collect::<MpiResult<_>>()?;
    let total = degrees.iter().try_fold(0usize, |t, &d| t.checked_add(d));
    let total = total
        .ok_or_else(|| MpiError::new(MPI_ERR_ARG, "the degrees add up past the address space"))?;
    // SAFETY: `destinations` and (unless a sentinel) `weights` hold one int
    // per edge, the sum of the degrees (MPI's contract).
    let (destinations, weights) = unsafe {
        (
            array(destinations, total, "destinations")?,
            weights(weights_arg, total, "weights")?,
        )
    };
    let destinations = ranks(destinations, "destinations")?;
    let mut edges = Vec::with_capacity(total);
    let mut next = 0;
    for (&source, &degree) in sources.iter().zip(&degrees) {
        for _ in 0..degree {
            edges.push(Edge {
                source,
                destination: destinations[next],
                weight: weights.as_ref().map_or(1, |w| w[next]),
            });
            next += 1;
        }
    }
    *comm_dist_graph = create::dist_graph_create(comm_old, &edges, weights.is_some())?;
    Ok(())
}

pub unsafe fn dist_graph_neighbors_count(
    comm: MPI_Comm,
    indegree: &mut c_int,
    outdegree: &mut c_int,
    weighted: &mut c_int,
) -> MpiResult {
    let t = dist_graph_of(comm)?;
    let d = as_dist_graph(&t);
    *indegree = d.sources.len() as c_int;
    *outdegree = d.destinations.len() as c_int;
    *weighted = c_int::from(d.weighted());
    Ok(())
}

pub unsafe fn dist_graph_neighbors(
    comm: MPI_Comm,
    maxindegree: c_int,
    sources: *mut c_int,
    sourceweights: *mut c_int,
    maxoutdegree: c_int,
    destinations: *mut c_int,
    destweights: *mut c_int,
) -> MpiResult {
    let t = dist_graph_of(comm)?;
    let d = as_dist_graph(&t);
    let (maxin, maxout) = (
        length(maxindegree, "maxindegree")?,
        length(maxoutdegree, "maxoutdegree")?,
    );
    // SAFETY: MPI_Dist_graph_neighbors' arrays hold
    // `maxindegree` (sources, sourceweights) and `maxoutdegree` ints
    // (destinations, destweights) (MPI's contract); `write_ints` writes at
    // most that many. A weight array may be MPI_UNWEIGHTED (never written)
    // and is not read for an unweighted graph.
    unsafe { write_ints(sources, maxin, &ints(&d.sources), "sources") }?;
    // SAFETY: see above.
    unsafe { write_ints(destinations, maxout, &ints(&d.destinations), "destinations") }?;
    if let Some(w) = &d.source_weights {
        if !is_unweighted(sourceweights) {
            // SAFETY: see above.
            unsafe { write_ints(sourceweights, maxin, w, "sourceweights") }?;
        }
    }
    if let Some(w) = &d.destination_weights {
        if !is_unweighted(destweights) {
            // SAFETY: see above.
            unsafe { write_ints(destweights, maxout, w, "destweights") }?;
        }
    }
    Ok(())
}

// ---- Topo_test ----

pub unsafe fn topo_test(comm: MPI_Comm, status: &mut c_int) -> MpiResult {
    *status = create::topology_of(comm)?.map_or(MPI_UNDEFINED, |t| t.kind());
    Ok(())
}
