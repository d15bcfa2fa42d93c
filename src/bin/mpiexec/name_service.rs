//! Published service names (`MPI_Publish_name`/`MPI_Lookup_name` through PMI
//! `publish_name`, `unpublish_name`, `lookup_name`), for the job's lifetime.
//!
//! Invariant: a service name maps to at most one port; publishing a name that
//! is already published fails instead of replacing it, and unpublishing
//! removes it for everyone.

use std::collections::HashMap;

/// The job's service-name registry.
#[derive(Debug, Default, Clone)]
pub struct NameService {
    ports: HashMap<String, String>,
}

impl NameService {
    /// Records `service` → `port`; `false` if `service` is already published.
    pub fn publish(&mut self, service: &str, port: &str) -> bool {
        if self.ports.contains_key(service) {
            return false;
        }
        self.ports.insert(service.to_string(), port.to_string());
        true
    }

    /// Removes `service`; `false` if it was not published.
    pub fn unpublish(&mut self, service: &str) -> bool {
        self.ports.remove(service).is_some()
    }

    /// The port published for `service`.
    pub fn lookup(&self, service: &str) -> Option<&str> {
        self.ports.get(service).map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn publish_lookup_unpublish() {
        let mut names = NameService::default();
        assert_eq!(names.lookup("svc"), None);
        assert!(names.publish("svc", "port-1"));
        assert!(!names.publish("svc", "port-2"));
        assert_eq!(names.lookup("svc"), Some("port-1"));
        assert!(names.unpublish("svc"));
        assert!(!names.unpublish("svc"));
        assert_eq!(names.lookup("svc"), None);
        assert!(names.publish("svc", "port-2"));
        assert_eq!(names.lookup("svc"), Some("port-2"));
    }
}
