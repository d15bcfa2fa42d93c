//! Categories grouping the variables: each lists its control and
//! performance variables and subcategories by name (resolved to indices
//! when asked). Every variable belongs to at least one category; oxmpi has
//! no events, so no category lists any.
use super::{cvars, pvars};

pub struct Category {
    pub name: &'static str,
    pub desc: &'static str,
    pub cvars: &'static [&'static str],
    pub pvars: &'static [&'static str],
    pub categories: &'static [&'static str],
}

pub static CATEGORIES: [Category; 9] = [
    Category {
        name: "oxmpi_transport",
        desc: "how frames move between processes: the choice of transport, the TCP listener, waiting",
        cvars: &[
            "OXMPI_TRANSPORT",
            "OXMPI_IFACE",
            "OXMPI_SPIN_POLLS",
            "OXMPI_OWN_CORE",
        ],
        pvars: &[],
        categories: &["oxmpi_shm", "oxmpi_tcp"],
    },
    Category {
        name: "oxmpi_shm",
        desc: "the shared-memory transport (processes of one node)",
        cvars: &[
            "OXMPI_SHM_SINGLE_COPY",
            "OXMPI_SHM_SEGMENTS",
            "OXMPI_SHM_SHARED_COPY",
        ],
        pvars: &[
            "oxmpi_shm_messages_sent",
            "oxmpi_shm_bytes_sent",
            "oxmpi_rma_single_copy_ops",
            "oxmpi_rma_hardware_atomics",
        ],
        categories: &[],
    },
    Category {
        name: "oxmpi_tcp",
        desc: "the TCP transport (between nodes, or everywhere with OXMPI_TRANSPORT=tcp)",
        cvars: &[],
        pvars: &["oxmpi_tcp_messages_sent", "oxmpi_tcp_bytes_sent"],
        categories: &[],
    },
    Category {
        name: "oxmpi_p2p",
        desc: "point-to-point messaging: matching, eager and rendezvous protocols",
        cvars: &["OXMPI_UNEXPECTED_LIMIT"],
        pvars: &[
            "oxmpi_unexpected_queue_length",
            "oxmpi_unexpected_queue_highwater",
            "oxmpi_rendezvous_sends",
        ],
        categories: &[],
    },
    Category {
        name: "oxmpi_collectives",
        desc: "collective operations: where the members of a node meet in shared memory",
        cvars: &["OXMPI_NODE_COLLECTIVES"],
        pvars: &["oxmpi_node_board_calls"],
        categories: &[],
    },
    Category {
        name: "oxmpi_launch",
        desc: "what the launcher tells each process: job, node identity, process sets, failure notices",
        cvars: &[
            "OXMPI_HOSTNAME",
            "OXMPI_JOBID",
            "OXMPI_PSETS",
            "OXMPI_JOB_SECRET",
            "OXMPI_LAUNCHER_PID",
            "OXMPI_FAILURE_NOTICES",
            "OXMPI_PMI",
            "OXMPI_PMIX_LIBRARY",
            "OXMPI_CC",
        ],
        pvars: &[],
        categories: &[],
    },
    Category {
        name: "oxmpi_reinit",
        desc: "epochs and re-initialization",
        cvars: &["MPIR_CVAR_FINALIZE_ATEXIT", "OXMPI_FINALIZE_ATEXIT"],
        pvars: &["oxmpi_epochs_started"],
        categories: &[],
    },
    Category {
        name: "oxmpi_errors",
        desc: "error handling and diagnostics",
        cvars: &["OXMPI_INITIAL_ERRHANDLER", "OXMPI_LOG"],
        pvars: &[],
        categories: &[],
    },
    Category {
        name: "oxmpi_tools",
        desc: "tools chained in front of the library (QMPI)",
        cvars: &["OXMPI_QMPI_TOOL_LIST", "MPIR_CVAR_QMPI_TOOL_LIST"],
        pvars: &[],
        categories: &[],
    },
];

/// The index of the category called `name`.
pub fn index_of(name: &str) -> Option<usize> {
    CATEGORIES.iter().position(|c| c.name == name)
}

impl Category {
    /// Indices of its control variables.
    pub fn cvar_indices(&self) -> Vec<usize> {
        self.cvars
            .iter()
            .filter_map(|n| cvars::index_of(n))
            .collect()
    }

    /// Indices of its performance variables.
    pub fn pvar_indices(&self) -> Vec<usize> {
        self.pvars
            .iter()
            .filter_map(|n| pvars::PVARS.iter().position(|p| p.name == *n))
            .collect()
    }

    /// Indices of its subcategories.
    pub fn category_indices(&self) -> Vec<usize> {
        self.categories.iter().filter_map(|n| index_of(n)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_listed_exists_and_every_variable_has_a_category() {
        for (i, c) in CATEGORIES.iter().enumerate() {
            assert_eq!(index_of(c.name), Some(i));
            assert_eq!(c.cvar_indices().len(), c.cvars.len(), "{}", c.name);
            assert_eq!(c.pvar_indices().len(), c.pvars.len(), "{}", c.name);
            assert_eq!(c.category_indices().len(), c.categories.len(), "{}", c.name);
            assert!(
                !c.category_indices().contains(&i),
                "{} contains itself",
                c.name
            );
        }
        for (i, v) in cvars::CVARS.iter().enumerate() {
            assert!(
                CATEGORIES.iter().any(|c| c.cvar_indices().contains(&i)),
                "{} has no category",
                v.name
            );
        }
        for (i, v) in pvars::PVARS.iter().enumerate() {
            assert!(
                CATEGORIES.iter().any(|c| c.pvar_indices().contains(&i)),
                "{} has no category",
                v.name
            );
        }
        assert_eq!(index_of("no_such_category"), None);
    }
}
