//! The job's process groups: the original world (group 0) and one group
//! per completed spawn, each with its own KVS, its own ranks and its own
//! PMI barrier.
//!
//! Every process of the job has a *global id*: the world's ranks are
//! 0..n-1, the first spawn's children n..n+m-1, and so on, so a group's
//! members are the consecutive ids from its `base`. Invariants: global ids
//! are never reused or renumbered; a group's rank r is global id
//! `base + r`; KVS names are unique within the job (the world's `kvs_<jobid>`,
//! then `kvs_<jobid>_<g>` for group g).

use crate::kvs::{single_node_mapping, Kvs, PROCESS_MAPPING_KEY};

/// One process group.
#[derive(Debug)]
pub struct ProcessGroup {
    /// Its key-value space.
    pub kvs: Kvs,
    /// The global id of its rank 0.
    pub base: usize,
    /// The command index (`appnum`) of each of its ranks.
    pub appnums: Vec<usize>,
    /// Which of its ranks are in its current barrier.
    pub in_barrier: Vec<bool>,
}

impl ProcessGroup {
    /// Its number of ranks.
    pub fn size(&self) -> usize {
        self.appnums.len()
    }

    /// Ranks currently in its barrier.
    pub fn barrier_waiters(&self) -> usize {
        self.in_barrier.iter().filter(|&&b| b).count()
    }
}

/// Where a process is: its group and its rank there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    /// The group's index (0: the original world).
    pub group: usize,
    /// Its rank in the group.
    pub rank: usize,
}

/// Every group of the job.
#[derive(Debug)]
pub struct ProcessGroups {
    groups: Vec<ProcessGroup>,
    /// The group of each global id.
    group_of: Vec<usize>,
}

impl ProcessGroups {
    /// The job's groups at its start: the world of `size` ranks (appnum 0)
    /// with `kvs`.
    pub fn new(size: usize, kvs: Kvs) -> ProcessGroups {
        ProcessGroups {
            groups: vec![ProcessGroup {
                kvs,
                base: 0,
                appnums: vec![0; size],
                in_barrier: vec![false; size],
            }],
            group_of: vec![0; size],
        }
    }

    /// Number of processes of every group.
    pub fn processes(&self) -> usize {
        self.group_of.len()
    }

    /// Adds a group of `appnums.len()` processes on this host, its rank r
    /// running command `appnums[r]`, with `preput` in its KVS; returns its
    /// index. Its members get the next global ids.
    pub fn add(
        &mut self,
        appnums: Vec<usize>,
        preput: &[(String, String)],
        mapping: Option<String>,
    ) -> usize {
        let index = self.groups.len();
        let size = appnums.len();
        let mut kvs = Kvs::for_job(
            format!("{}_{index}", self.groups[0].kvs.name()),
            mapping.unwrap_or_else(|| single_node_mapping(size)),
        );
        for (key, value) in preput {
            if key == PROCESS_MAPPING_KEY {
                log::debug!("spawn: preput of {key} ignored");
                continue;
            }
            kvs.put(key.clone(), value.clone());
        }
        self.groups.push(ProcessGroup {
            kvs,
            base: self.group_of.len(),
            appnums,
            in_barrier: vec![false; size],
        });
        self.group_of.extend(std::iter::repeat_n(index, size));
        index
    }

    /// Where global id `id` is.
    pub fn locate(&self, id: usize) -> Option<Place> {
        let group = *self.group_of.get(id)?;
        Some(Place {
            group,
            rank: id - self.groups[group].base,
        })
    }

    /// Group `index`.
    pub fn group(&self, index: usize) -> &ProcessGroup {
        &self.groups[index]
    }

    /// Group `index`, to change.
    pub fn group_mut(&mut self, index: usize) -> &mut ProcessGroup {
        &mut self.groups[index]
    }

    /// Every group, in order.
    pub fn iter(&self) -> impl Iterator<Item = &ProcessGroup> {
        self.groups.iter()
    }

    /// The index of the group whose KVS is called `name`.
    pub fn with_kvs(&self, name: &str) -> Option<usize> {
        self.groups.iter().position(|g| g.kvs.name() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn global_ids_continue_group_after_group() {
        let mut groups = ProcessGroups::new(3, Kvs::new("kvs_j"));
        assert_eq!(groups.locate(2), Some(Place { group: 0, rank: 2 }));
        assert_eq!(groups.locate(3), None);
        let g = groups.add(vec![0, 0, 1], &[("port".into(), "p".into())], None);
        assert_eq!(g, 1);
        assert_eq!(groups.processes(), 6);
        assert_eq!(groups.locate(3), Some(Place { group: 1, rank: 0 }));
        assert_eq!(groups.locate(5), Some(Place { group: 1, rank: 2 }));
        let group = groups.group(1);
        assert_eq!((group.base, group.size()), (3, 3));
        assert_eq!(group.kvs.name(), "kvs_j_1");
        assert_eq!(group.kvs.get("port"), Some("p"));
        assert_eq!(group.kvs.get(PROCESS_MAPPING_KEY), Some("(vector,(0,1,3))"));
        let mapping = Some("(vector,(0,2,1))".to_string());
        assert_eq!(groups.add(vec![0, 0], &[], mapping), 2);
        assert_eq!(
            groups.group(2).kvs.get(PROCESS_MAPPING_KEY),
            Some("(vector,(0,2,1))")
        );
        assert_eq!(groups.locate(7), Some(Place { group: 2, rank: 1 }));
        assert_eq!(groups.with_kvs("kvs_j_2"), Some(2));
        assert_eq!(groups.with_kvs("kvs_j"), Some(0));
        assert_eq!(groups.with_kvs("kvs_x"), None);
    }
}
