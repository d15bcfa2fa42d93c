//! Process sets: the named groups a session offers. `mpi://WORLD` (every
//! process of the job), `mpi://SELF` (this process), `mpix://SHARED` (the
//! processes on this node), and sets the launcher defines (`mpiexec -pset
//! NAME=RANKLIST`, passed as `OXMPI_PSETS`). Names match case-insensitively.
use std::os::raw::c_int;
use std::sync::Arc;

use super::error::{MpiError, MpiResult};
use crate::mpi_abi::constants::*;
use crate::transport::ProcessId;

#[derive(Clone, Debug)]
pub struct ProcessSets {
    sets: Vec<(String, Arc<[ProcessId]>)>,
}

pub use crate::bootstrap::rank_list::parse as parse_rank_list;

impl ProcessSets {
    /// The sets of process `me` of the world `world` (process ids), whose
    /// node holds `shared` (None: unknown, then only itself). The ranks of
    /// `launcher_sets` are ranks of the world.
    pub fn new(
        world: std::ops::Range<ProcessId>,
        me: ProcessId,
        shared: Option<Vec<ProcessId>>,
        launcher_sets: Option<&str>,
    ) -> ProcessSets {
        let size = world.end - world.start;
        let mut sets: Vec<(String, Arc<[ProcessId]>)> = vec![
            ("mpi://WORLD".to_string(), world.clone().collect()),
            ("mpi://SELF".to_string(), vec![me].into()),
            (
                "mpix://SHARED".to_string(),
                shared.unwrap_or_else(|| vec![me]).into(),
            ),
        ];
        for def in launcher_sets
            .unwrap_or("")
            .split(';')
            .map(str::trim)
            .filter(|d| !d.is_empty())
        {
            let Some((name, list)) = def.split_once('=') else {
                log::warn!("ignoring process set definition '{def}' (want NAME=RANKLIST)");
                continue;
            };
            match parse_rank_list(list, size) {
                Ok(ranks) => sets.push((
                    name.trim().to_string(),
                    ranks.into_iter().map(|r| world.start + r).collect(),
                )),
                Err(e) => log::warn!("ignoring process set '{name}': {e}"),
            }
        }
        ProcessSets { sets }
    }

    /// A set the launcher defines (PMIx's `pmix.pset.names`), unless one of
    /// that name is there already: `mpi://WORLD` and `mpi://SELF` are
    /// oxmpi's own (the same processes), and `OXMPI_PSETS` goes first.
    pub fn add_launcher_set(&mut self, name: &str, members: Vec<ProcessId>) {
        if name.is_empty() || members.is_empty() {
            return;
        }
        if self.sets.iter().any(|(n, _)| n.eq_ignore_ascii_case(name)) {
            log::debug!("process set {name} from the launcher: already defined");
            return;
        }
        self.sets.push((name.to_string(), members.into()));
    }

    pub fn len(&self) -> usize {
        self.sets.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sets.is_empty()
    }

    pub fn name(&self, n: c_int) -> MpiResult<&str> {
        if n < 0 || n as usize >= self.sets.len() {
            return Err(MpiError::new(
                MPI_ERR_ARG,
                format!("process set index {n} is not in 0..{}", self.sets.len()),
            ));
        }
        Ok(&self.sets[n as usize].0)
    }

    pub fn members(&self, name: &str) -> MpiResult<Arc<[ProcessId]>> {
        self.sets
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, m)| m.clone())
            .ok_or_else(|| MpiError::new(MPI_ERR_ARG, format!("no process set is named '{name}'")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launcher_sets_come_after_and_never_replace_ours() {
        let mut sets = ProcessSets::new(0..4, 1, None, Some("app=0-1"));
        sets.add_launcher_set("mpi://WORLD", vec![0]);
        sets.add_launcher_set("APP", vec![3]);
        sets.add_launcher_set("user:even", vec![0, 2]);
        sets.add_launcher_set("empty", vec![]);
        assert_eq!(sets.len(), 5);
        assert_eq!(sets.name(4).unwrap(), "user:even");
        assert_eq!(&*sets.members("mpi://WORLD").unwrap(), &[0, 1, 2, 3]);
        assert_eq!(&*sets.members("app").unwrap(), &[0, 1]);
    }

    #[test]
    fn predefined_and_launcher_sets_case_insensitive() {
        let s = ProcessSets::new(
            0..6,
            2,
            Some(vec![0, 1, 2]),
            Some("app://even=0,2,4;app://high=3-5;bad"),
        );
        assert_eq!(s.len(), 5);
        assert_eq!(&*s.members("mpi://world").unwrap(), &[0, 1, 2, 3, 4, 5]);
        assert_eq!(&*s.members("MPI://SELF").unwrap(), &[2]);
        assert_eq!(&*s.members("mpix://shared").unwrap(), &[0, 1, 2]);
        assert_eq!(&*s.members("app://even").unwrap(), &[0, 2, 4]);
        assert_eq!(&*s.members("app://high").unwrap(), &[3, 4, 5]);
        assert_eq!(s.members("mpi://nope").unwrap_err().class, MPI_ERR_ARG);
        assert_eq!(s.name(9).unwrap_err().class, MPI_ERR_ARG);
        assert!(parse_rank_list("0,9", 4).is_err());
    }

    #[test]
    fn a_spawned_world_names_its_own_processes() {
        // The second world of a job: process ids 4..7, this one rank 1.
        let s = ProcessSets::new(4..7, 5, Some(vec![4, 5, 6]), Some("app://last=2"));
        assert_eq!(&*s.members("mpi://WORLD").unwrap(), &[4, 5, 6]);
        assert_eq!(&*s.members("mpi://SELF").unwrap(), &[5]);
        assert_eq!(&*s.members("app://last").unwrap(), &[6]);
    }
}
