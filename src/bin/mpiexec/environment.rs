//! The environment each rank starts with: what it inherits from mpiexec
//! (`-genvall`, `-genvnone`, `-genvlist`), what `-env`/`-genv` set, and the
//! variables that tell it its place in the job.
//!
//! Invariant: the job variables (`PMI_FD` or `PMI_PORT`/`PMI_ID`,
//! `PMI_RANK`, `PMI_SIZE`, `MPI_LOCALNRANKS`, `MPI_LOCALRANKID`,
//! `OXMPI_JOBID`, `OXMPI_JOB_SECRET`, `OXMPI_LAUNCHER_PID`, and for spawned
//! processes `PMI_SPAWNED`, `OXMPI_WORLD_BASE`, `OXMPI_JOB_KVS`) are always
//! mpiexec's, whatever was inherited or given with `-env` (a process that
//! was not spawned never has the spawn ones), and an inherited `PMI_PORT` or `PMI_ID`
//! (from an outer launcher) never reaches a rank, so a rank talks to this
//! mpiexec only.

use std::ffi::{OsStr, OsString};

use crate::options::EnvInheritance;

/// The variables set per rank; never inherited or overridden.
const JOB_VARS: [&str; 13] = [
    "PMI_FD",
    "PMI_PORT",
    "PMI_ID",
    "PMI_RANK",
    "PMI_SIZE",
    "MPI_LOCALNRANKS",
    "MPI_LOCALRANKID",
    "OXMPI_JOBID",
    "OXMPI_JOB_SECRET",
    "OXMPI_LAUNCHER_PID",
    "PMI_SPAWNED",
    "OXMPI_WORLD_BASE",
    "OXMPI_JOB_KVS",
];

/// How a rank reaches the PMI server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PmiAccess {
    /// An inherited socket (local ranks).
    Fd(i32),
    /// TCP to `host:port` (remote ranks), authenticated with the secret.
    Port(String),
}

/// What a rank's job variables say.
#[derive(Debug, Clone)]
pub struct RankVariables<'a> {
    /// The rank.
    pub rank: usize,
    /// The job size.
    pub size: usize,
    /// Its index among the ranks of its node.
    pub local_id: usize,
    /// The number of ranks on its node.
    pub local_count: usize,
    /// `OXMPI_JOBID`.
    pub jobid: &'a str,
    /// `OXMPI_JOB_SECRET`.
    pub secret: &'a str,
    /// How it reaches the PMI server.
    pub pmi: PmiAccess,
}

/// The environment shared by all ranks: `inherited` filtered by `policy`,
/// then `settings` applied in order (a later one wins).
pub fn common_environment(
    policy: &EnvInheritance,
    inherited: impl IntoIterator<Item = (OsString, OsString)>,
    settings: &[(OsString, OsString)],
) -> Vec<(OsString, OsString)> {
    let mut env: Vec<(OsString, OsString)> = inherited
        .into_iter()
        .filter(|(name, _)| match policy {
            EnvInheritance::All => true,
            EnvInheritance::None => false,
            EnvInheritance::Only(names) => names.contains(name),
        })
        .filter(|(name, _)| !is_reserved(name))
        .collect();
    for (name, value) in settings {
        if is_reserved(name) {
            log::warn!(
                "ignoring -env {}: mpiexec sets it for each rank",
                name.to_string_lossy()
            );
            continue;
        }
        set(&mut env, name, value);
    }
    env
}

/// The job variables of one rank.
pub fn job_variables(v: &RankVariables<'_>) -> Vec<(OsString, OsString)> {
    let mut vars = match &v.pmi {
        PmiAccess::Fd(fd) => vec![("PMI_FD", fd.to_string())],
        PmiAccess::Port(port) => vec![("PMI_PORT", port.clone()), ("PMI_ID", v.rank.to_string())],
    };
    vars.extend([
        ("PMI_RANK", v.rank.to_string()),
        ("PMI_SIZE", v.size.to_string()),
        ("MPI_LOCALNRANKS", v.local_count.to_string()),
        ("MPI_LOCALRANKID", v.local_id.to_string()),
        ("OXMPI_JOBID", v.jobid.to_string()),
        ("OXMPI_JOB_SECRET", v.secret.to_string()),
    ]);
    vars.into_iter()
        .map(|(k, v)| (OsString::from(k), OsString::from(v)))
        .collect()
}

/// The variables that tell a spawned process so, besides its job
/// variables: `PMI_SPAWNED=1` (as Hydra sets it), `OXMPI_WORLD_BASE`, the
/// global id of its group's rank 0, and `OXMPI_JOB_KVS`, the original
/// world's KVS name (where the library puts and gets its cards).
pub fn spawned_variables(world_base: usize, job_kvs: &str) -> Vec<(OsString, OsString)> {
    [
        ("PMI_SPAWNED", "1".to_string()),
        ("OXMPI_WORLD_BASE", world_base.to_string()),
        ("OXMPI_JOB_KVS", job_kvs.to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (OsString::from(k), OsString::from(v)))
    .collect()
}

/// The value of `name` in `env`.
pub fn lookup<'a>(env: &'a [(OsString, OsString)], name: &str) -> Option<&'a OsStr> {
    env.iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_os_str())
}

/// Whether `name` is a job variable, which only mpiexec sets.
pub fn is_reserved(name: &OsStr) -> bool {
    JOB_VARS.iter().any(|reserved| name == *reserved)
}

/// Sets `name` in `env` (replacing its value if present).
pub fn set(env: &mut Vec<(OsString, OsString)>, name: &OsStr, value: &OsStr) {
    match env.iter_mut().find(|(k, _)| k == name) {
        Some(entry) => entry.1 = value.to_os_string(),
        None => env.push((name.to_os_string(), value.to_os_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(list: &[(&str, &str)]) -> Vec<(OsString, OsString)> {
        list.iter()
            .map(|(k, v)| (OsString::from(k), OsString::from(v)))
            .collect()
    }

    #[test]
    fn inherits_all_but_reserved_names() {
        let parent = vars(&[
            ("HOME", "/h"),
            ("PMI_PORT", "host:1"),
            ("PMI_RANK", "9"),
            ("PATH", "/bin"),
        ]);
        let env = common_environment(&EnvInheritance::All, parent, &[]);
        assert_eq!(env, vars(&[("HOME", "/h"), ("PATH", "/bin")]));
    }

    #[test]
    fn none_and_list_policies() {
        let parent = vars(&[("HOME", "/h"), ("PATH", "/bin"), ("X", "1")]);
        let settings = vars(&[("A", "1")]);
        assert_eq!(
            common_environment(&EnvInheritance::None, parent.clone(), &settings),
            settings
        );
        let only = EnvInheritance::Only(vec!["PATH".into(), "X".into()]);
        assert_eq!(
            common_environment(&only, parent, &[]),
            vars(&[("PATH", "/bin"), ("X", "1")])
        );
    }

    #[test]
    fn settings_override_in_order_but_not_job_variables() {
        let parent = vars(&[("A", "old")]);
        let settings = vars(&[("A", "new"), ("B", "1"), ("B", "2"), ("PMI_SIZE", "99")]);
        let env = common_environment(&EnvInheritance::All, parent, &settings);
        assert_eq!(env, vars(&[("A", "new"), ("B", "2")]));
        assert_eq!(lookup(&env, "B"), Some(OsStr::new("2")));
        assert_eq!(lookup(&env, "C"), None);
    }

    #[test]
    fn job_variables_of_a_rank() {
        let mut v = RankVariables {
            rank: 2,
            size: 4,
            local_id: 0,
            local_count: 2,
            jobid: "123-abc",
            secret: "s3",
            pmi: PmiAccess::Fd(5),
        };
        assert_eq!(
            job_variables(&v),
            vars(&[
                ("PMI_FD", "5"),
                ("PMI_RANK", "2"),
                ("PMI_SIZE", "4"),
                ("MPI_LOCALNRANKS", "2"),
                ("MPI_LOCALRANKID", "0"),
                ("OXMPI_JOBID", "123-abc"),
                ("OXMPI_JOB_SECRET", "s3"),
            ])
        );
        v.pmi = PmiAccess::Port("10.0.0.1:80".into());
        assert_eq!(
            job_variables(&v)[..3],
            vars(&[
                ("PMI_PORT", "10.0.0.1:80"),
                ("PMI_ID", "2"),
                ("PMI_RANK", "2")
            ])[..]
        );
        assert!(is_reserved(OsStr::new("OXMPI_JOB_SECRET")));
        assert_eq!(
            spawned_variables(4, "kvs_1_x"),
            vars(&[
                ("PMI_SPAWNED", "1"),
                ("OXMPI_WORLD_BASE", "4"),
                ("OXMPI_JOB_KVS", "kvs_1_x")
            ])
        );
        for name in ["PMI_SPAWNED", "OXMPI_WORLD_BASE", "OXMPI_JOB_KVS"] {
            assert!(is_reserved(OsStr::new(name)), "{name}");
        }
        assert!(!is_reserved(OsStr::new("OXMPI_HOSTNAME")));
    }
}
