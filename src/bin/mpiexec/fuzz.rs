//! Fuzz targets (proptest) of what mpiexec takes from its user and its
//! ranks: host lists and host files (any text parses or is refused with a
//! message; generated lists come back as written), the placement of any
//! host list (every rank on one node, and the `PMI_process_mapping` it
//! publishes read back by the library's own parser to the same nodes),
//! the command line (any arguments parse or give a usage error), and the
//! PMI server driven by any sequence of requests from any ranks (never a
//! panic; every request but `barrier_in` and `abort` answered exactly once,
//! to its sender).
use std::ffi::OsString;

use oxmpi::bootstrap::pmi::wire::PmiMessage;
use oxmpi::bootstrap::process_mapping;
use proptest::prelude::*;

use crate::hosts::{parse_file, parse_list, place, HostEntry, LocalNames};
use crate::kvs::Kvs;
use crate::options::parse;
use crate::pmi_server::{Action, PmiServer};

fn entry() -> impl Strategy<Value = HostEntry> {
    (
        prop_oneof!["[a-z][a-z0-9.-]{0,8}", "[0-9a-f]{1,4}(:[0-9a-f]{0,4}){2,4}"],
        prop::option::of(1usize..5),
    )
        .prop_map(|(name, slots)| HostEntry { name, slots })
}

/// How an entry is written in a list or a file.
fn written(e: &HostEntry) -> String {
    let ipv6 = e.name.contains(':');
    match (e.slots, ipv6) {
        (Some(n), true) => format!("[{}]:{n}", e.name),
        (Some(n), false) => format!("{}:{n}", e.name),
        (None, _) => e.name.clone(),
    }
}

fn option_word() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("-n".to_string()),
        Just("-np".to_string()),
        Just("-env".to_string()),
        Just("-genvlist".to_string()),
        Just("-genvnone".to_string()),
        Just("-wdir".to_string()),
        Just("-timeout".to_string()),
        Just("-pset".to_string()),
        Just("-initial-errhandler".to_string()),
        Just("-hosts".to_string()),
        Just("-f".to_string()),
        Just("-ppn".to_string()),
        Just("-launcher".to_string()),
        Just("-launcher-exec".to_string()),
        Just("-pmi-addr".to_string()),
        Just("-iface".to_string()),
        Just("-hostname-env".to_string()),
        Just("-disable-auto-cleanup".to_string()),
        Just("--".to_string()),
        "-{1,2}[a-z-]{1,12}",
        "[0-9]{1,3}",
        "\\PC{0,12}",
    ]
}

fn request() -> impl Strategy<Value = (usize, String)> {
    let cmd = prop_oneof![
        Just("init pmi_version=1 pmi_subversion=1"),
        Just("init pmi_version=2 pmi_subversion=0"),
        Just("initack pmiid=1"),
        Just("get_maxes"),
        Just("get_appnum"),
        Just("get_my_kvsname"),
        Just("get_universe_size"),
        Just("put kvsname=kvs_fuzz key=k value=v"),
        Just("put key=k"),
        Just("get kvsname=kvs_fuzz key=k"),
        Just("get kvsname=other key=k"),
        Just("get"),
        Just("barrier_in"),
        Just("finalize"),
        Just("abort exitcode=3"),
        Just("publish_name service=s port=p"),
        Just("unpublish_name service=s"),
        Just("lookup_name service=s"),
        Just("spawn"),
        Just("spawn nprocs=1 execname=x totspawns=2 spawnssofar=1"),
        Just("spawn nprocs=1 execname=x totspawns=2 spawnssofar=2"),
        Just("get_my_kvsname kvsname=kvs_fuzz_1"),
        Just("oxmpi_failure_notices"),
        Just("no_such_command a=b"),
        Just("fullinit pmirank=1"),
        Just("kvs-put key=k value=v"),
        Just("kvs-get jobid=kvs_fuzz srcid=-1 key=k"),
        Just("kvs-fence"),
        Just("info-getjobattr key=PMI_process_mapping"),
        Just("info-getnodeattr key=a wait=TRUE"),
        Just("info-putnodeattr key=a value=1"),
    ];
    (0usize..5, cmd).prop_map(|(rank, c)| (rank, format!("cmd={c}")))
}

proptest! {
    #[test]
    fn fuzz_hosts_any_list_or_file(text in "\\PC{0,60}") {
        if let Err(e) = parse_list(&text) {
            prop_assert!(!e.0.is_empty());
        }
        if let Ok(entries) = parse_file("f", &text) {
            prop_assert!(!entries.is_empty());
        }
    }

    #[test]
    fn fuzz_hosts_written_lists_come_back(entries in prop::collection::vec(entry(), 1..6), comments in any::<bool>()) {
        let list = entries.iter().map(written).collect::<Vec<_>>().join(",");
        prop_assert_eq!(parse_list(&list).expect("a written list"), entries.clone());
        let file = entries
            .iter()
            .map(|e| if comments { format!("  {}  # a comment\n\n", written(e)) } else { format!("{}\n", written(e)) })
            .collect::<String>();
        prop_assert_eq!(parse_file("f", &file).expect("a written file"), entries);
    }

    #[test]
    fn fuzz_hosts_placement_and_its_mapping_agree(
        entries in prop::collection::vec(entry(), 1..5),
        nprocs in prop::option::of(1usize..24),
        ppn in prop::option::of(1usize..4),
        fork in any::<bool>(),
    ) {
        let local = LocalNames { hostname: "here".to_string(), fork_everything: fork };
        let placement = place(Some(&entries), nprocs, ppn, &local).expect("a placement");
        let size = placement.size();
        if let Some(n) = nprocs {
            prop_assert_eq!(size, n);
        }
        for rank in 0..size {
            let node = placement.node_of_rank[rank];
            prop_assert!(placement.nodes[node].ranks.contains(&rank));
            let (id, count) = placement.local_position(rank);
            prop_assert!(id < count);
        }
        let triples = process_mapping::parse(&placement.process_mapping()).expect("a vector mapping");
        let nodes = process_mapping::node_of_each_rank(&triples, size as u32);
        let expected: Vec<u32> = placement.node_of_rank.iter().map(|&n| n as u32).collect();
        prop_assert_eq!(nodes, expected);
    }

    #[test]
    fn fuzz_command_line_parses_or_refuses(words in prop::collection::vec(option_word(), 0..10)) {
        let args: Vec<OsString> = words.iter().map(OsString::from).collect();
        if let Err(e) = parse(&args, None) {
            prop_assert!(!e.0.is_empty());
        }
    }

    #[test]
    fn fuzz_pmi_server_any_requests(requests in prop::collection::vec(request(), 0..40)) {
        let mut server = PmiServer::new(5, Kvs::for_single_node_job("kvs_fuzz", 5), None);
        for (rank, line) in requests {
            let message = PmiMessage::parse(&line).expect("well-formed");
            // After a PMI-2 init every command but init is a PMI-2 one:
            // answered once (these names are all unknown there), but abort.
            let v2 = server.version_of(rank) == 2 && !message.is("init");
            let actions = server.handle(rank, &message);
            let to_sender = actions
                .iter()
                .filter(|a| matches!(a, Action::Reply(to, _) if *to == rank))
                .count();
            let barrier_fine = actions.iter().all(|a| match a {
                Action::Reply(_, m) => m.is("barrier_out") || m.is("kvs-fence-response"),
                Action::ProtocolError { rank: r, .. } => *r == rank,
                _ => false,
            });
            let aborted = matches!(actions.as_slice(), [Action::Abort { .. }]);
            match message.cmd.as_str() {
                "abort" => prop_assert!(aborted),
                "finalize" if v2 => prop_assert_eq!(to_sender, 1),
                "kvs-fence" if v2 => prop_assert!(barrier_fine),
                "info-getnodeattr" if v2 => prop_assert!(actions.len() <= 1),
                // The putter may be one of the waiters it answers.
                "info-putnodeattr" if v2 => prop_assert!(to_sender >= 1),
                _ if v2 => prop_assert_eq!(actions.len(), 1, "{} under PMI-2", line),
                "barrier_in" => prop_assert!(barrier_fine),
                "initack" => prop_assert_eq!(to_sender, 4),
                // A spawn is answered at its last segment, by the server
                // (refused) or by the job (Action::Spawn).
                "spawn" => prop_assert!(actions.len() <= 1),
                _ => prop_assert_eq!(to_sender, 1, "{} answered {} times", line, to_sender),
            }
        }
    }
}
