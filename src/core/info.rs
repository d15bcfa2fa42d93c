//! Info objects: ordered (key, value) string pairs. Keys are unique, at most
//! `MPI_MAX_INFO_KEY` bytes; values at most `MPI_MAX_INFO_VAL`. Info objects
//! are process-level: they outlive sessions and epochs.
use std::os::raw::c_int;

use super::error::{MpiError, MpiResult};
use crate::mpi_abi::constants::*;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct InfoObject {
    entries: Vec<(String, String)>,
}

fn check_key(key: &str) -> MpiResult {
    use crate::mpi_abi::standard::values::MAX_INFO_KEY;
    if key.is_empty() || key.len() > MAX_INFO_KEY as usize {
        return Err(MpiError::new(
            MPI_ERR_INFO_KEY,
            format!(
                "info key of {} bytes (allowed: 1 to {MAX_INFO_KEY})",
                key.len()
            ),
        ));
    }
    Ok(())
}

impl InfoObject {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn from_pairs<K: Into<String>, V: Into<String>>(
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> Self {
        let mut info = InfoObject::new();
        for (k, v) in pairs {
            info.entries.push((k.into(), v.into()));
        }
        info
    }

    pub fn set(&mut self, key: &str, value: &str) -> MpiResult {
        check_key(key)?;
        if value.is_empty() || value.len() > MPI_MAX_INFO_VAL as usize {
            return Err(MpiError::new(
                MPI_ERR_INFO_VALUE,
                format!(
                    "info value of {} bytes (allowed: 1 to {MPI_MAX_INFO_VAL})",
                    value.len()
                ),
            ));
        }
        match self.entries.iter_mut().find(|(k, _)| k == key) {
            Some(entry) => entry.1 = value.to_string(),
            None => self.entries.push((key.to_string(), value.to_string())),
        }
        Ok(())
    }

    pub fn get(&self, key: &str) -> MpiResult<Option<&str>> {
        check_key(key)?;
        Ok(self
            .entries
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str()))
    }

    pub fn delete(&mut self, key: &str) -> MpiResult {
        check_key(key)?;
        let before = self.entries.len();
        self.entries.retain(|(k, _)| k != key);
        if self.entries.len() == before {
            return Err(MpiError::new(
                MPI_ERR_INFO_NOKEY,
                format!("key '{key}' is not set"),
            ));
        }
        Ok(())
    }

    pub fn nkeys(&self) -> c_int {
        self.entries.len() as c_int
    }

    pub fn nth_key(&self, n: c_int) -> MpiResult<&str> {
        if n < 0 || n as usize >= self.entries.len() {
            return Err(MpiError::new(
                MPI_ERR_ARG,
                format!(
                    "key index {n} out of range (the object has {} keys)",
                    self.entries.len()
                ),
            ));
        }
        Ok(&self.entries[n as usize].0)
    }

    pub fn entries(&self) -> &[(String, String)] {
        &self.entries
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_get_overwrite_delete_keep_order() {
        let mut info = InfoObject::new();
        info.set("b", "1").unwrap();
        info.set("a", "2").unwrap();
        info.set("b", "3").unwrap();
        assert_eq!(info.nkeys(), 2);
        assert_eq!(info.nth_key(0).unwrap(), "b");
        assert_eq!(info.get("b").unwrap(), Some("3"));
        info.delete("b").unwrap();
        assert_eq!(info.get("b").unwrap(), None);
        assert_eq!(info.delete("b").unwrap_err().class, MPI_ERR_INFO_NOKEY);
        assert_eq!(info.nth_key(1).unwrap_err().class, MPI_ERR_ARG);
    }

    #[test]
    fn key_and_value_limits() {
        let mut info = InfoObject::new();
        let long_key = "k".repeat(MPI_MAX_INFO_KEY as usize + 1);
        assert_eq!(
            info.set(&long_key, "v").unwrap_err().class,
            MPI_ERR_INFO_KEY
        );
        assert_eq!(info.set("", "v").unwrap_err().class, MPI_ERR_INFO_KEY);
        let long_val = "v".repeat(MPI_MAX_INFO_VAL as usize + 1);
        assert_eq!(
            info.set("k", &long_val).unwrap_err().class,
            MPI_ERR_INFO_VALUE
        );
    }
}
