//! Where the ranks run: the host list (`-hosts`, `-f hostfile`), the number
//! of ranks per host (`:slots`, `-ppn`), and what follows from the
//! placement: the nodes, each rank's node and place on it
//! (`MPI_LOCALRANKID`/`MPI_LOCALNRANKS`) and `PMI_process_mapping`.
//!
//! Placement rule (Hydra's): hosts are filled in the order given, each with
//! its slots (or `-ppn` ranks), and the list is cycled again while ranks
//! remain. A host without a count has one slot.
//!
//! Invariants: every rank is on exactly one node; node numbers follow the
//! order in which hosts first appear; all names of this host (`localhost`,
//! its host name) are one local node, and so is every host under
//! `-launcher fork`, where each distinct name is still its own node (so a
//! single machine can pretend to be several); the mapping string describes
//! the placement exactly under the PMI wrap-around rule.

use std::fmt;

/// One entry of a host list: a name and its slot count, if given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostEntry {
    /// Host name (or address) as written.
    pub name: String,
    /// Ranks per pass over the list (`host:N`); one when `None`.
    pub slots: Option<usize>,
}

/// A host list that cannot be used; the text says why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostError(pub String);

impl fmt::Display for HostError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Parses one `host[:slots]` entry (`[v6addr]:slots` for an IPv6 address).
pub fn parse_entry(text: &str) -> Result<HostEntry, String> {
    let text = text.trim();
    if text.is_empty() {
        return Err("empty host name".to_string());
    }
    let (name, slots) = if let Some(rest) = text.strip_prefix('[') {
        let Some((addr, after)) = rest.split_once(']') else {
            return Err(format!("'{text}': missing ']'"));
        };
        match after {
            "" => (addr, None),
            _ => match after.strip_prefix(':') {
                Some(count) => (addr, Some(count)),
                None => return Err(format!("'{text}': unexpected text after ']'")),
            },
        }
    } else if text.matches(':').count() > 1 {
        // A bare IPv6 address: no slot count possible.
        (text, None)
    } else {
        match text.split_once(':') {
            Some((name, count)) => (name, Some(count)),
            None => (text, None),
        }
    };
    if name.is_empty() {
        return Err(format!("'{text}': empty host name"));
    }
    if name.chars().any(|c| c.is_whitespace() || c == ',') {
        return Err(format!("'{text}': invalid host name"));
    }
    let slots = match slots {
        None => None,
        Some(count) => match count.parse::<usize>() {
            Ok(n) if n > 0 => Some(n),
            _ => return Err(format!("'{text}': invalid slot count '{count}'")),
        },
    };
    Ok(HostEntry {
        name: name.to_string(),
        slots,
    })
}

/// Parses a `-hosts` value: comma-separated `host[:slots]` entries.
pub fn parse_list(text: &str) -> Result<Vec<HostEntry>, HostError> {
    let entries = text
        .split(',')
        .map(parse_entry)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| HostError(format!("-hosts: {e}")))?;
    Ok(entries)
}

/// Parses the text of a host file named `file`: one `host[:slots]` per
/// line, `#` starts a comment, blank lines are skipped.
pub fn parse_file(file: &str, text: &str) -> Result<Vec<HostEntry>, HostError> {
    let mut entries = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let mut words = line.split_whitespace();
        let first = words.next().unwrap_or("");
        if let Some(extra) = words.next() {
            return Err(HostError(format!(
                "{file}:{}: unexpected '{extra}' after the host (lines are host[:slots])",
                index + 1
            )));
        }
        entries
            .push(parse_entry(first).map_err(|e| HostError(format!("{file}:{}: {e}", index + 1)))?);
    }
    if entries.is_empty() {
        return Err(HostError(format!("{file}: no hosts in the file")));
    }
    Ok(entries)
}

/// One node of the job: a machine that runs some of its ranks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// The host name, as first written in the host list (this host's own
    /// name for a job without a host list).
    pub name: String,
    /// Whether its ranks are started by mpiexec itself (fork) rather than
    /// through the launcher.
    pub local: bool,
    /// Its ranks, ascending.
    pub ranks: Vec<usize>,
}

/// Where every rank runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    /// The nodes, numbered in order of first appearance.
    pub nodes: Vec<Node>,
    /// The node of each rank.
    pub node_of_rank: Vec<usize>,
    /// The host name each rank was placed on, as written in the host list.
    pub host_of_rank: Vec<String>,
}

/// How to tell which host names mean this machine.
#[derive(Debug, Clone)]
pub struct LocalNames {
    /// This host's name (`gethostname`).
    pub hostname: String,
    /// `-launcher fork`: every host is run locally.
    pub fork_everything: bool,
}

impl LocalNames {
    /// Whether `name` is this machine.
    pub fn is_local(&self, name: &str) -> bool {
        if self.fork_everything {
            return true;
        }
        let short = |n: &str| n.split('.').next().unwrap_or(n).to_ascii_lowercase();
        let name_lower = name.to_ascii_lowercase();
        matches!(
            name_lower.as_str(),
            "localhost" | "localhost.localdomain" | "127.0.0.1" | "::1"
        ) || name_lower == self.hostname.to_ascii_lowercase()
            || (!self.hostname.is_empty()
                && name.parse::<std::net::IpAddr>().is_err()
                && short(name) == short(&self.hostname))
    }
}

/// This host's name.
pub fn this_hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most buf.len() bytes into buf.
    if unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } != 0 {
        return "localhost".to_string();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// Places `nprocs` ranks (the total slots of one pass when `None`) on
/// `hosts` with `ppn` ranks per host if given. Without hosts every rank
/// runs here, on one node.
pub fn place(
    hosts: Option<&[HostEntry]>,
    nprocs: Option<usize>,
    ppn: Option<usize>,
    local: &LocalNames,
) -> Result<Placement, HostError> {
    let default_hosts;
    let hosts = match hosts {
        Some(list) if !list.is_empty() => list,
        _ => {
            default_hosts = [HostEntry {
                name: local.hostname.clone(),
                slots: Some(nprocs.unwrap_or(1)),
            }];
            return Ok(place_on(
                &default_hosts,
                nprocs.unwrap_or(1),
                None,
                &LocalNames {
                    hostname: local.hostname.clone(),
                    fork_everything: true,
                },
            ));
        }
    };
    let slots_of = |h: &HostEntry| ppn.or(h.slots).unwrap_or(1);
    let one_pass: usize = hosts.iter().map(slots_of).sum();
    let size = nprocs.unwrap_or(one_pass);
    if size == 0 {
        return Err(HostError("no ranks to place".to_string()));
    }
    Ok(place_on(hosts, size, ppn, local))
}

fn place_on(hosts: &[HostEntry], size: usize, ppn: Option<usize>, local: &LocalNames) -> Placement {
    let mut nodes: Vec<Node> = Vec::new();
    // The key under which ranks of a host share a node: all names of this
    // machine are one node, unless every host runs locally on purpose.
    let key_of = |name: &str| -> (bool, String) {
        let is_local = local.is_local(name);
        if is_local && !local.fork_everything {
            (true, String::new())
        } else {
            (is_local, name.to_string())
        }
    };
    let mut keys: Vec<String> = Vec::new();
    let mut node_of_rank = Vec::with_capacity(size);
    let mut host_of_rank = Vec::with_capacity(size);
    while node_of_rank.len() < size {
        for host in hosts {
            let (is_local, key) = key_of(&host.name);
            let node = match keys.iter().position(|k| *k == key) {
                Some(i) => i,
                None => {
                    keys.push(key);
                    nodes.push(Node {
                        name: host.name.clone(),
                        local: is_local,
                        ranks: Vec::new(),
                    });
                    nodes.len() - 1
                }
            };
            let count = ppn.or(host.slots).unwrap_or(1);
            for _ in 0..count {
                if node_of_rank.len() == size {
                    break;
                }
                nodes[node].ranks.push(node_of_rank.len());
                node_of_rank.push(node);
                host_of_rank.push(host.name.clone());
            }
        }
    }
    nodes.retain(|n| !n.ranks.is_empty());
    // Renumber in case a node got no rank (fewer ranks than hosts).
    for (index, node) in nodes.iter().enumerate() {
        for &rank in &node.ranks {
            node_of_rank[rank] = index;
        }
    }
    Placement {
        nodes,
        node_of_rank,
        host_of_rank,
    }
}

impl Placement {
    /// Number of ranks.
    pub fn size(&self) -> usize {
        self.node_of_rank.len()
    }

    /// `(MPI_LOCALRANKID, MPI_LOCALNRANKS)` of `rank`.
    pub fn local_position(&self, rank: usize) -> (usize, usize) {
        let node = &self.nodes[self.node_of_rank[rank]];
        let id = node.ranks.iter().position(|&r| r == rank).unwrap_or(0);
        (id, node.ranks.len())
    }

    /// Whether every rank runs on this machine.
    pub fn all_local(&self) -> bool {
        self.nodes.iter().all(|n| n.local)
    }

    /// The `PMI_process_mapping` value.
    pub fn process_mapping(&self) -> String {
        process_mapping(&self.node_of_rank)
    }
}

/// The `(vector,(first_node,node_count,ranks_per_node),...)` string for the
/// node of each rank: the shortest block list of one pass if wrapping it
/// around reproduces the placement, else the explicit list.
pub fn process_mapping(node_of_rank: &[usize]) -> String {
    let blocks = blocks_of(node_of_rank);
    // Try ever longer prefixes of the block list as the repeating cycle.
    for len in 1..=blocks.len() {
        if expand(&blocks[..len], node_of_rank.len()) == node_of_rank {
            return render(&blocks[..len]);
        }
    }
    render(&blocks)
}

/// Consecutive ranks grouped into `(first_node, node_count, per_node)`.
fn blocks_of(node_of_rank: &[usize]) -> Vec<(usize, usize, usize)> {
    // Runs of equal nodes first.
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for &node in node_of_rank {
        match runs.last_mut() {
            Some((n, len)) if *n == node => *len += 1,
            _ => runs.push((node, 1)),
        }
    }
    let mut blocks: Vec<(usize, usize, usize)> = Vec::new();
    for (node, len) in runs {
        match blocks.last_mut() {
            Some((first, count, per)) if *per == len && *first + *count == node => *count += 1,
            _ => blocks.push((node, 1, len)),
        }
    }
    blocks
}

/// The node of each of `size` ranks under `blocks`, wrapping around.
fn expand(blocks: &[(usize, usize, usize)], size: usize) -> Vec<usize> {
    let mut nodes = Vec::with_capacity(size);
    while nodes.len() < size {
        for &(first, count, per) in blocks {
            for node in first..first + count {
                for _ in 0..per {
                    if nodes.len() < size {
                        nodes.push(node);
                    }
                }
            }
        }
    }
    nodes
}

fn render(blocks: &[(usize, usize, usize)]) -> String {
    let mut text = String::from("(vector");
    for (first, count, per) in blocks {
        text.push_str(&format!(",({first},{count},{per})"));
    }
    text.push(')');
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(hostname: &str) -> LocalNames {
        LocalNames {
            hostname: hostname.to_string(),
            fork_everything: false,
        }
    }

    fn entry(name: &str, slots: Option<usize>) -> HostEntry {
        HostEntry {
            name: name.to_string(),
            slots,
        }
    }

    #[test]
    fn entries() {
        assert_eq!(parse_entry("a"), Ok(entry("a", None)));
        assert_eq!(parse_entry(" b:4 "), Ok(entry("b", Some(4))));
        assert_eq!(parse_entry("[::1]:2"), Ok(entry("::1", Some(2))));
        assert_eq!(parse_entry("[fe80::1]"), Ok(entry("fe80::1", None)));
        assert_eq!(parse_entry("fe80::1"), Ok(entry("fe80::1", None)));
        assert!(parse_entry("a:0")
            .unwrap_err()
            .contains("invalid slot count"));
        assert!(parse_entry("a:x")
            .unwrap_err()
            .contains("invalid slot count"));
        assert!(parse_entry(":3").unwrap_err().contains("empty host name"));
        assert!(parse_entry("").is_err());
        assert!(parse_entry("[::1").is_err());
    }

    #[test]
    fn host_lists() {
        assert_eq!(
            parse_list("h1,h2:4").unwrap(),
            vec![entry("h1", None), entry("h2", Some(4))]
        );
        assert!(parse_list("h1,,h2").unwrap_err().0.starts_with("-hosts: "));
    }

    #[test]
    fn host_files() {
        let text = "# cluster\n\nnode1:2   # two\n  node2\nnode3:1\n";
        assert_eq!(
            parse_file("hf", text).unwrap(),
            vec![
                entry("node1", Some(2)),
                entry("node2", None),
                entry("node3", Some(1))
            ]
        );
        assert_eq!(
            parse_file("hf", "a\nb c\n").unwrap_err().0,
            "hf:2: unexpected 'c' after the host (lines are host[:slots])"
        );
        assert_eq!(
            parse_file("hf", "a:-1\n").unwrap_err().0,
            "hf:1: 'a:-1': invalid slot count '-1'"
        );
        assert_eq!(
            parse_file("hf", "# none\n").unwrap_err().0,
            "hf: no hosts in the file"
        );
    }

    #[test]
    fn local_names() {
        let n = names("vm.example.org");
        assert!(n.is_local("localhost"));
        assert!(n.is_local("vm"));
        assert!(n.is_local("VM.example.org"));
        assert!(n.is_local("127.0.0.1"));
        assert!(!n.is_local("vm2"));
        assert!(!n.is_local("10.0.0.1"));
        let fork = LocalNames {
            hostname: "vm".into(),
            fork_everything: true,
        };
        assert!(fork.is_local("anything"));
    }

    #[test]
    fn no_hosts_means_one_local_node() {
        let p = place(None, Some(3), None, &names("vm")).unwrap();
        assert_eq!(p.nodes.len(), 1);
        assert!(p.nodes[0].local && p.all_local());
        assert_eq!(p.process_mapping(), "(vector,(0,1,3))");
        assert_eq!(p.local_position(2), (2, 3));
        assert_eq!(place(None, None, None, &names("vm")).unwrap().size(), 1);
    }

    #[test]
    fn fills_hosts_in_order_by_slots() {
        let hosts = parse_list("a:2,b:2").unwrap();
        let p = place(Some(&hosts), Some(4), None, &names("vm")).unwrap();
        assert_eq!(p.node_of_rank, vec![0, 0, 1, 1]);
        assert_eq!(p.host_of_rank, vec!["a", "a", "b", "b"]);
        assert_eq!(p.process_mapping(), "(vector,(0,2,2))");
        assert_eq!(p.local_position(3), (1, 2));
        assert!(!p.nodes[0].local && !p.all_local());

        let hosts = parse_list("a:1,b:3").unwrap();
        let p = place(Some(&hosts), None, None, &names("vm")).unwrap();
        assert_eq!(p.size(), 4, "without -n: the slots of one pass");
        assert_eq!(p.process_mapping(), "(vector,(0,1,1),(1,1,3))");
    }

    #[test]
    fn cycles_when_ranks_exceed_slots() {
        let hosts = parse_list("a,b").unwrap();
        let p = place(Some(&hosts), Some(5), None, &names("vm")).unwrap();
        assert_eq!(p.node_of_rank, vec![0, 1, 0, 1, 0]);
        assert_eq!(p.process_mapping(), "(vector,(0,2,1))");
        assert_eq!(p.nodes[0].ranks, vec![0, 2, 4]);
        assert_eq!(p.local_position(4), (2, 3));
        let hosts = parse_list("a:2,b:1").unwrap();
        let p = place(Some(&hosts), Some(5), None, &names("vm")).unwrap();
        assert_eq!(p.node_of_rank, vec![0, 0, 1, 0, 0]);
        assert_eq!(p.process_mapping(), "(vector,(0,1,2),(1,1,1))");
    }

    #[test]
    fn ppn_overrides_slots() {
        let hosts = parse_list("a:5,b").unwrap();
        let p = place(Some(&hosts), None, Some(2), &names("vm")).unwrap();
        assert_eq!(p.node_of_rank, vec![0, 0, 1, 1]);
        let p = place(Some(&hosts), Some(3), Some(2), &names("vm")).unwrap();
        assert_eq!(p.node_of_rank, vec![0, 0, 1]);
        assert_eq!(p.process_mapping(), "(vector,(0,1,2),(1,1,1))");
    }

    #[test]
    fn names_of_this_host_are_one_local_node() {
        let hosts = parse_list("localhost:1,remote:1,vm:1").unwrap();
        let p = place(Some(&hosts), Some(3), None, &names("vm")).unwrap();
        assert_eq!(p.node_of_rank, vec![0, 1, 0]);
        assert!(p.nodes[0].local && !p.nodes[1].local);
        assert_eq!(p.process_mapping(), "(vector,(0,2,1))");
        // Under -launcher fork each name is its own (local) node.
        let fork = LocalNames {
            hostname: "vm".into(),
            fork_everything: true,
        };
        let p = place(Some(&hosts), Some(3), None, &fork).unwrap();
        assert_eq!(p.node_of_rank, vec![0, 1, 2]);
        assert!(p.all_local());
    }

    #[test]
    fn fewer_ranks_than_hosts() {
        let hosts = parse_list("a:2,b:2,c").unwrap();
        let p = place(Some(&hosts), Some(2), None, &names("vm")).unwrap();
        assert_eq!(p.nodes.len(), 1);
        assert_eq!(p.process_mapping(), "(vector,(0,1,2))");
    }

    #[test]
    fn mapping_strings() {
        assert_eq!(process_mapping(&[0, 0, 0, 0]), "(vector,(0,1,4))");
        assert_eq!(process_mapping(&[0, 1, 2, 0, 1, 2]), "(vector,(0,3,1))");
        assert_eq!(process_mapping(&[1, 0]), "(vector,(1,1,1),(0,1,1))");
        assert_eq!(
            process_mapping(&[0, 0, 1, 2, 2]),
            "(vector,(0,1,2),(1,1,1),(2,1,2))"
        );
    }
}
