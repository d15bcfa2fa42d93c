//! The environment each rank starts with: what it inherits from mpiexec
//! (`-genvall`, `-genvnone`, `-genvlist`), what `-env`/`-genv` set, and the
//! variables that tell it its place in the job.
//!
//! Invariant: the job variables (`PMI_FD`, `PMI_RANK`, `PMI_SIZE`,
//! `MPI_LOCALNRANKS`, `MPI_LOCALRANKID`, `OXMPI_JOBID`) are always mpiexec's,
//! whatever was inherited or given with `-env`, and an inherited `PMI_PORT`
//! or `PMI_ID` (from an outer launcher) never reaches a rank, so a rank talks
//! to this mpiexec only.

use std::ffi::{OsStr, OsString};

use crate::options::EnvInheritance;

/// Variables an outer launcher may have set that would send a rank's PMI
/// client elsewhere; never inherited.
const OUTER_LAUNCHER_VARS: [&str; 2] = ["PMI_PORT", "PMI_ID"];

/// The variables set per rank; never inherited or overridden.
const JOB_VARS: [&str; 6] = [
    "PMI_FD",
    "PMI_RANK",
    "PMI_SIZE",
    "MPI_LOCALNRANKS",
    "MPI_LOCALRANKID",
    "OXMPI_JOBID",
];

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

/// The job variables of rank `rank` of `size`, talking PMI on `pmi_fd`.
pub fn job_variables(
    rank: usize,
    size: usize,
    pmi_fd: i32,
    jobid: &str,
) -> Vec<(OsString, OsString)> {
    [
        ("PMI_FD", pmi_fd.to_string()),
        ("PMI_RANK", rank.to_string()),
        ("PMI_SIZE", size.to_string()),
        ("MPI_LOCALNRANKS", size.to_string()),
        ("MPI_LOCALRANKID", rank.to_string()),
        ("OXMPI_JOBID", jobid.to_string()),
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

fn is_reserved(name: &OsStr) -> bool {
    JOB_VARS
        .iter()
        .chain(OUTER_LAUNCHER_VARS.iter())
        .any(|reserved| name == *reserved)
}

fn set(env: &mut Vec<(OsString, OsString)>, name: &OsStr, value: &OsStr) {
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
        let v = job_variables(2, 4, 5, "123-abc");
        assert_eq!(
            v,
            vars(&[
                ("PMI_FD", "5"),
                ("PMI_RANK", "2"),
                ("PMI_SIZE", "4"),
                ("MPI_LOCALNRANKS", "4"),
                ("MPI_LOCALRANKID", "2"),
                ("OXMPI_JOBID", "123-abc"),
            ])
        );
    }
}
