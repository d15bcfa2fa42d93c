//! Distributed graph topologies (`MPI_Dist_graph_create(_adjacent)`): each
//! member knows only its own incoming and outgoing edges, in the order it
//! gave them (adjacent form) or, for the general form, in the order of the
//! giving members' ranks and their arrays.
use std::os::raw::c_int;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DistGraph {
    pub sources: Vec<usize>,
    pub destinations: Vec<usize>,
    /// The weights, one per source and destination; `None`: unweighted
    /// (`MPI_UNWEIGHTED` was given).
    pub source_weights: Option<Vec<c_int>>,
    pub destination_weights: Option<Vec<c_int>>,
}

impl DistGraph {
    pub fn weighted(&self) -> bool {
        self.source_weights.is_some()
    }
}
