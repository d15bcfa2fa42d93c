//! The job's key-value space, the store behind PMI `put` and `get`.
//!
//! Invariant: a put is visible to every later get at once (PMI allows earlier
//! visibility than the barrier, never later), and the job's well-known keys
//! (`PMI_process_mapping`) are present from the start. A second put of a key
//! replaces its value.

use std::collections::HashMap;

/// Key under which PMI clients find the node layout of the job.
pub const PROCESS_MAPPING_KEY: &str = "PMI_process_mapping";

/// One named key-value space.
#[derive(Debug, Clone)]
pub struct Kvs {
    name: String,
    entries: HashMap<String, String>,
}

impl Kvs {
    /// An empty space called `name`.
    pub fn new(name: impl Into<String>) -> Kvs {
        Kvs {
            name: name.into(),
            entries: HashMap::new(),
        }
    }

    /// The space of a job of `size` ranks, all on this node, holding
    /// `PMI_process_mapping`.
    #[cfg(test)]
    pub fn for_single_node_job(name: impl Into<String>, size: usize) -> Kvs {
        Kvs::for_job(name, single_node_mapping(size))
    }

    /// The space of a job whose `PMI_process_mapping` is `mapping`.
    pub fn for_job(name: impl Into<String>, mapping: String) -> Kvs {
        let mut kvs = Kvs::new(name);
        kvs.put(PROCESS_MAPPING_KEY, mapping);
        kvs
    }

    /// The name clients use for this space (`kvsname=`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Stores `value` under `key`, replacing an earlier value.
    pub fn put(&mut self, key: impl Into<String>, value: impl Into<String>) {
        self.entries.insert(key.into(), value.into());
    }

    /// The value stored under `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.entries.get(key).map(String::as_str)
    }
}

/// `PMI_process_mapping` for `size` ranks on one node: one block starting at
/// node 0, spanning 1 node, with `size` ranks per node.
pub fn single_node_mapping(size: usize) -> String {
    format!("(vector,(0,1,{size}))")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn put_then_get() {
        let mut kvs = Kvs::new("kvs_1");
        assert_eq!(kvs.name(), "kvs_1");
        assert_eq!(kvs.get("a"), None);
        kvs.put("a", "1");
        assert_eq!(kvs.get("a"), Some("1"));
        kvs.put("a", "2");
        assert_eq!(kvs.get("a"), Some("2"));
    }

    #[test]
    fn job_space_knows_the_process_mapping() {
        let kvs = Kvs::for_single_node_job("kvs_x", 4);
        assert_eq!(kvs.get(PROCESS_MAPPING_KEY), Some("(vector,(0,1,4))"));
        assert_eq!(single_node_mapping(1), "(vector,(0,1,1))");
    }
}
