//! What a PMI `spawn` asks for: the segments a client sends for one
//! `PMI_Spawn_multiple` (one `mcmd=spawn` block per command, numbered by
//! `spawnssofar` out of `totspawns`), collected per requester into the
//! commands of one spawn, and the meaning of each command's info keys.
//!
//! Invariants: a spawn is answered exactly once, when its last segment
//! (`spawnssofar == totspawns`) arrives, however malformed the segments
//! before it were (the client writes every segment, then reads one answer);
//! a spawn with any bad segment yields no command at all, only the first
//! reason; nothing here touches the file system or starts a process.

use std::collections::HashMap;

use oxmpi::bootstrap::pmi::wire::PmiMessage;

/// One command of a spawn: `nprocs` copies of `execname`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpawnCommand {
    /// How many processes run it (at least 1).
    pub nprocs: usize,
    /// The program as the client named it.
    pub execname: String,
    /// Its arguments (`arg1`.. `argN`, in order).
    pub args: Vec<String>,
    /// Keys put into the new group's KVS before any child starts.
    pub preput: Vec<(String, String)>,
    /// The command's info keys and values, in order.
    pub info: Vec<(String, String)>,
}

/// Where and how a command's processes run, from its info keys.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SpawnSettings {
    /// `wdir`: the working directory (relative to mpiexec's).
    pub wdir: Option<String>,
    /// `path`: directories searched for the program before `PATH`.
    pub path: Option<String>,
    /// `host` / `hosts`: the hosts to run on, in order (the processes go
    /// round them); empty: mpiexec's host.
    pub hosts: Vec<String>,
}

/// A spawn being collected from one requester.
#[derive(Debug)]
struct Collecting {
    total: usize,
    /// The `spawnssofar` the next segment must carry.
    next: usize,
    commands: Vec<SpawnCommand>,
    /// The first thing wrong with the spawn, if any.
    problem: Option<String>,
}

/// The spawns being collected, per requester (a global process id).
#[derive(Debug, Default)]
pub struct SpawnSegments {
    collecting: HashMap<usize, Collecting>,
}

impl SpawnSegments {
    /// Takes one segment from `requester`. `None` while more segments are
    /// due; then the spawn's commands, or the reason it must fail.
    pub fn add(
        &mut self,
        requester: usize,
        segment: &PmiMessage,
    ) -> Option<Result<Vec<SpawnCommand>, String>> {
        // A single-line `cmd=spawn` without the counters is a spawn of one.
        let counter = |key| match segment.get(key) {
            None => Ok(1),
            Some(v) => v
                .trim()
                .parse::<usize>()
                .ok()
                .filter(|&n| n >= 1)
                .ok_or_else(|| format!("bad {key} '{v}'")),
        };
        let (total, sofar) = match (counter("totspawns"), counter("spawnssofar")) {
            (Ok(t), Ok(s)) => (t, s),
            (Err(e), _) | (_, Err(e)) => {
                // Where the spawn ends cannot be told: answer now.
                self.collecting.remove(&requester);
                return Some(Err(e));
            }
        };
        let state = self.collecting.entry(requester).or_insert(Collecting {
            total,
            next: 1,
            commands: Vec::new(),
            problem: None,
        });
        let problem = if total != state.total {
            Some(format!(
                "totspawns changed from {} to {total} within one spawn",
                state.total
            ))
        } else if sofar != state.next {
            Some(format!(
                "segment {sofar} of {total} came where segment {} was due",
                state.next
            ))
        } else {
            match parse_command(segment) {
                Ok(command) => {
                    state.commands.push(command);
                    None
                }
                Err(e) => Some(format!("command {sofar}: {e}")),
            }
        };
        if state.problem.is_none() {
            state.problem = problem;
        }
        state.next = sofar + 1;
        if sofar < total {
            return None;
        }
        let done = self.collecting.remove(&requester)?;
        Some(match done.problem {
            Some(problem) => Err(problem),
            None => Ok(done.commands),
        })
    }

    /// Forgets what `requester` sent of a spawn (it ended).
    pub fn forget(&mut self, requester: usize) {
        self.collecting.remove(&requester);
    }
}

/// The command of one segment.
fn parse_command(segment: &PmiMessage) -> Result<SpawnCommand, String> {
    let number = |key: &str| -> Result<usize, String> {
        let value = segment.get(key).ok_or_else(|| format!("missing {key}"))?;
        value
            .trim()
            .parse::<usize>()
            .map_err(|_| format!("bad {key} '{value}'"))
    };
    let text = |key: String| -> Result<String, String> {
        segment
            .get(&key)
            .map(str::to_string)
            .ok_or_else(|| format!("missing {key}"))
    };
    let nprocs = number("nprocs")?;
    if nprocs < 1 {
        return Err(format!("nprocs is {nprocs}, not at least 1"));
    }
    let execname = text("execname".into())?;
    if execname.is_empty() {
        return Err("empty execname".into());
    }
    let argcnt = if segment.get("argcnt").is_some() {
        number("argcnt")?
    } else {
        0
    };
    let args = (1..=argcnt)
        .map(|i| text(format!("arg{i}")))
        .collect::<Result<_, _>>()?;
    let pairs = |count: &str, key: &str, val: &str| -> Result<Vec<(String, String)>, String> {
        let n = if segment.get(count).is_some() {
            number(count)?
        } else {
            0
        };
        (0..n)
            .map(|i| Ok((text(format!("{key}_{i}"))?, text(format!("{val}_{i}"))?)))
            .collect()
    };
    Ok(SpawnCommand {
        nprocs,
        execname,
        args,
        preput: pairs("preput_num", "preput_key", "preput_val")?,
        info: pairs("info_num", "info_key", "info_val")?,
    })
}

/// The commands of a PMI-2 `spawn` (one request for the whole spawn, as
/// MPICH's `PMI2_Job_Spawn` writes it: `ncmds`, `preputcount` with
/// `ppkeyN`/`ppvalN`, then per command `subcmd` (the program), `maxprocs`,
/// `argc` with `argvN`, and `infokeycount` with `infokeyN`/`infovalN`),
/// or the first thing wrong with it. Fields it does not know (`thrid`)
/// are ignored; the preput keys go with every command.
pub fn commands_v2(request: &PmiMessage) -> Result<Vec<SpawnCommand>, String> {
    fn number(key: &str, value: &str) -> Result<usize, String> {
        value
            .trim()
            .parse::<usize>()
            .map_err(|_| format!("bad {key} '{value}'"))
    }
    /// The N of a key `<stem>N`.
    fn index(key: &str, stem: &str) -> Option<usize> {
        key.strip_prefix(stem)?.parse().ok()
    }
    /// Puts `value` at `at` of `list`, which must be where the next goes.
    fn place(list: &mut Vec<String>, at: usize, key: &str, value: &str) -> Result<(), String> {
        if at != list.len() {
            return Err(format!("{key} out of order"));
        }
        list.push(value.to_string());
        Ok(())
    }
    struct Building {
        command: SpawnCommand,
        argc: Option<usize>,
        info_keys: Vec<String>,
        info_values: Vec<String>,
        info_count: usize,
    }
    let mut ncmds = None;
    let mut preput_count = 0;
    let (mut pp_keys, mut pp_values) = (Vec::new(), Vec::new());
    let mut built: Vec<Building> = Vec::new();
    for (key, value) in &request.fields {
        let key = key.as_str();
        if key == "subcmd" {
            if value.is_empty() {
                return Err(format!("command {}: empty subcmd", built.len()));
            }
            built.push(Building {
                command: SpawnCommand {
                    nprocs: 0,
                    execname: value.clone(),
                    args: Vec::new(),
                    preput: Vec::new(),
                    info: Vec::new(),
                },
                argc: None,
                info_keys: Vec::new(),
                info_values: Vec::new(),
                info_count: 0,
            });
            continue;
        }
        match (key, built.last_mut()) {
            ("ncmds", _) => ncmds = Some(number(key, value)?),
            ("preputcount", _) => preput_count = number(key, value)?,
            (k, None) if index(k, "ppkey").is_some() => {
                place(&mut pp_keys, index(k, "ppkey").unwrap_or(0), k, value)?
            }
            (k, None) if index(k, "ppval").is_some() => {
                place(&mut pp_values, index(k, "ppval").unwrap_or(0), k, value)?
            }
            ("maxprocs", Some(b)) => b.command.nprocs = number(key, value)?,
            ("argc", Some(b)) => b.argc = Some(number(key, value)?),
            ("infokeycount", Some(b)) => b.info_count = number(key, value)?,
            (k, Some(b)) if index(k, "argv").is_some() => {
                place(&mut b.command.args, index(k, "argv").unwrap_or(0), k, value)?
            }
            (k, Some(b)) if index(k, "infokey").is_some() => {
                place(&mut b.info_keys, index(k, "infokey").unwrap_or(0), k, value)?
            }
            (k, Some(b)) if index(k, "infoval").is_some() => place(
                &mut b.info_values,
                index(k, "infoval").unwrap_or(0),
                k,
                value,
            )?,
            _ => {}
        }
    }
    let ncmds = ncmds.ok_or("missing ncmds")?;
    if ncmds == 0 || ncmds != built.len() {
        return Err(format!("ncmds is {ncmds}, with {} subcmd", built.len()));
    }
    if pp_keys.len() != preput_count || pp_values.len() != preput_count {
        return Err(format!(
            "preputcount is {preput_count}, with {} ppkey and {} ppval",
            pp_keys.len(),
            pp_values.len()
        ));
    }
    let preput: Vec<(String, String)> = pp_keys.into_iter().zip(pp_values).collect();
    built
        .into_iter()
        .enumerate()
        .map(|(i, b)| {
            let mut command = b.command;
            if command.nprocs < 1 {
                return Err(format!(
                    "command {i}: maxprocs is {}, not at least 1",
                    command.nprocs
                ));
            }
            if b.argc.unwrap_or(0) != command.args.len() {
                return Err(format!(
                    "command {i}: argc is {}, with {} argv",
                    b.argc.unwrap_or(0),
                    command.args.len()
                ));
            }
            if b.info_keys.len() != b.info_count || b.info_values.len() != b.info_count {
                return Err(format!(
                    "command {i}: infokeycount is {}, with {} infokey and {} infoval",
                    b.info_count,
                    b.info_keys.len(),
                    b.info_values.len()
                ));
            }
            command.info = b.info_keys.into_iter().zip(b.info_values).collect();
            command.preput = preput.clone();
            Ok(command)
        })
        .collect()
}

/// The settings `info` asks for. Unknown keys are ignored, as MPI lets
/// implementations do.
pub fn settings(info: &[(String, String)]) -> Result<SpawnSettings, String> {
    let mut settings = SpawnSettings::default();
    for (key, value) in info {
        match key.as_str() {
            "wdir" => settings.wdir = Some(value.clone()),
            "path" => settings.path = Some(value.clone()),
            "host" | "hosts" => {
                let names: Vec<&str> = value.split(',').map(str::trim).collect();
                if names.iter().any(|n| n.is_empty()) {
                    return Err(format!("info {key}={value}: an empty host name"));
                }
                settings.hosts.extend(names.iter().map(|n| n.to_string()));
            }
            "file" | "hostfile" => {
                return Err(format!(
                    "info {key}={value}: host files are not supported for spawn; \
                     name the hosts with the info key \"host\""
                ))
            }
            other => log::debug!("spawn: ignoring info key {other}={value}"),
        }
    }
    Ok(settings)
}

/// `reason` as a PMI value: spaces become underscores.
pub fn wire_reason(reason: &str) -> String {
    reason.replace(char::is_whitespace, "_")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The segment `k` of `total` for `nprocs` copies of `exec`, with
    /// `extra` lines (`key=value`) as the client would add them.
    fn segment(
        total: usize,
        k: usize,
        nprocs: usize,
        exec: &str,
        extra: &[(&str, &str)],
    ) -> PmiMessage {
        let mut m = PmiMessage::new("spawn")
            .with("nprocs", nprocs)
            .with("execname", exec)
            .with("totspawns", total)
            .with("spawnssofar", k);
        for (key, value) in extra {
            m.push(*key, value);
        }
        m
    }

    /// A PMI-2 spawn request of `fields` (`key=value;...`).
    fn v2(fields: &str) -> PmiMessage {
        let mut m = PmiMessage::new("spawn");
        for pair in fields.split(';').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').expect("key=value");
            m.push(k, v);
        }
        m
    }

    #[test]
    fn a_pmi2_spawn_of_two_commands() {
        let commands = commands_v2(&v2(
            "thrid=7;ncmds=2;preputcount=1;ppkey0=PARENT_ROOT_PORT_NAME;ppval0=tag#1;\
             subcmd=./a;maxprocs=2;argc=2;argv0=-x;argv1=y;infokeycount=1;infokey0=wdir;infoval0=/tmp;\
             subcmd=./b;maxprocs=1;argc=0",
        ))
        .unwrap();
        let port = ("PARENT_ROOT_PORT_NAME".to_string(), "tag#1".to_string());
        assert_eq!(
            commands,
            [
                SpawnCommand {
                    nprocs: 2,
                    execname: "./a".into(),
                    args: vec!["-x".into(), "y".into()],
                    preput: vec![port.clone()],
                    info: vec![("wdir".into(), "/tmp".into())],
                },
                SpawnCommand {
                    nprocs: 1,
                    execname: "./b".into(),
                    args: vec![],
                    preput: vec![port],
                    info: vec![],
                },
            ]
        );
    }

    #[test]
    fn a_malformed_pmi2_spawn_says_what_is_wrong() {
        let wrong = |fields: &str| commands_v2(&v2(fields)).unwrap_err();
        assert!(wrong("subcmd=./a;maxprocs=1").contains("missing ncmds"));
        assert!(wrong("ncmds=2;subcmd=./a;maxprocs=1").contains("ncmds is 2"));
        assert!(wrong("ncmds=1;subcmd=./a;maxprocs=0").contains("maxprocs is 0"));
        assert!(wrong("ncmds=1;subcmd=./a;maxprocs=1;argc=2;argv0=x").contains("argc is 2"));
        assert!(wrong("ncmds=1;subcmd=./a;maxprocs=1;argc=1;argv1=x").contains("out of order"));
        assert!(wrong("ncmds=1;preputcount=1;subcmd=./a;maxprocs=1").contains("preputcount is 1"));
        assert!(
            wrong("ncmds=1;subcmd=./a;maxprocs=1;infokeycount=1;infokey0=k")
                .contains("infokeycount is 1")
        );
        assert!(wrong("ncmds=1;subcmd=;maxprocs=1").contains("empty subcmd"));
        assert!(wrong("ncmds=1;subcmd=./a;maxprocs=x").contains("bad maxprocs"));
    }

    #[test]
    fn a_single_command_with_args_preput_and_info() {
        let mut s = SpawnSegments::default();
        let seg = segment(
            1,
            1,
            2,
            "./child",
            &[
                ("arg1", "a b=c"),
                ("arg2", "x"),
                ("argcnt", "2"),
                ("preput_num", "1"),
                ("preput_key_0", "PARENT_ROOT_PORT_NAME"),
                ("preput_val_0", "tag#1"),
                ("info_num", "1"),
                ("info_key_0", "wdir"),
                ("info_val_0", "/tmp"),
            ],
        );
        let commands = s.add(7, &seg).unwrap().unwrap();
        assert_eq!(
            commands,
            [SpawnCommand {
                nprocs: 2,
                execname: "./child".into(),
                args: vec!["a b=c".into(), "x".into()],
                preput: vec![("PARENT_ROOT_PORT_NAME".into(), "tag#1".into())],
                info: vec![("wdir".into(), "/tmp".into())],
            }]
        );
        // A bare single-line spawn is a spawn of one command.
        let bare = PmiMessage::new("spawn")
            .with("nprocs", 1)
            .with("execname", "x");
        assert_eq!(s.add(7, &bare).unwrap().unwrap()[0].execname, "x");
    }

    #[test]
    fn multiple_commands_are_answered_after_the_last() {
        let mut s = SpawnSegments::default();
        assert_eq!(s.add(0, &segment(3, 1, 1, "a", &[])), None);
        // Another requester's spawn does not mix with it.
        assert!(s.add(1, &segment(1, 1, 4, "z", &[])).unwrap().is_ok());
        assert_eq!(s.add(0, &segment(3, 2, 2, "b", &[])), None);
        let commands = s.add(0, &segment(3, 3, 3, "c", &[])).unwrap().unwrap();
        let shape: Vec<(usize, &str)> = commands
            .iter()
            .map(|c| (c.nprocs, c.execname.as_str()))
            .collect();
        assert_eq!(shape, [(1, "a"), (2, "b"), (3, "c")]);
    }

    #[test]
    fn a_bad_segment_fails_the_spawn_once_at_its_end() {
        let mut s = SpawnSegments::default();
        assert_eq!(s.add(0, &segment(2, 1, 0, "a", &[])), None);
        assert_eq!(
            s.add(0, &segment(2, 2, 1, "b", &[])),
            Some(Err("command 1: nprocs is 0, not at least 1".into()))
        );
        // Missing arguments, preput values and info values.
        for extra in [
            &[("argcnt", "2"), ("arg1", "x")][..],
            &[("preput_num", "1"), ("preput_key_0", "k")][..],
            &[("info_num", "1"), ("info_key_0", "wdir")][..],
            &[("argcnt", "two")][..],
        ] {
            let answer = s.add(0, &segment(1, 1, 1, "a", extra)).unwrap();
            assert!(answer.is_err(), "{extra:?}: {answer:?}");
        }
        let no_exec = PmiMessage::new("spawn").with("nprocs", 1);
        assert_eq!(
            s.add(0, &no_exec),
            Some(Err("command 1: missing execname".into()))
        );
    }

    #[test]
    fn inconsistent_segments_fail_the_spawn() {
        let mut s = SpawnSegments::default();
        assert_eq!(s.add(0, &segment(3, 1, 1, "a", &[])), None);
        assert_eq!(
            s.add(0, &segment(2, 2, 1, "b", &[])),
            Some(Err("totspawns changed from 3 to 2 within one spawn".into()))
        );
        // A second spawn's first segment in the middle of one.
        assert_eq!(s.add(0, &segment(2, 1, 1, "a", &[])), None);
        assert_eq!(s.add(0, &segment(2, 1, 1, "a", &[])), None);
        assert_eq!(
            s.add(0, &segment(2, 2, 1, "a", &[])),
            Some(Err("segment 1 of 2 came where segment 2 was due".into()))
        );
        // Counters that cannot be read are answered at once.
        let bad = segment(1, 1, 1, "a", &[]).with("x", 1);
        let mut bad = bad;
        bad.fields.retain(|(k, _)| k != "totspawns");
        bad.push("totspawns", "many");
        assert_eq!(s.add(0, &bad), Some(Err("bad totspawns 'many'".into())));
        // Forgetting a requester drops its partial spawn.
        assert_eq!(s.add(4, &segment(2, 1, 1, "a", &[])), None);
        s.forget(4);
        assert!(s.add(4, &segment(1, 1, 1, "a", &[])).unwrap().is_ok());
    }

    #[test]
    fn info_keys() {
        let info = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        assert_eq!(
            settings(&info(&[
                ("wdir", "sub"),
                ("path", "/opt/bin:/x"),
                ("host", "localhost"),
                ("hosts", "node-a, 127.0.0.1"),
                ("soft", "1:4"),
            ])),
            Ok(SpawnSettings {
                wdir: Some("sub".into()),
                path: Some("/opt/bin:/x".into()),
                hosts: vec!["localhost".into(), "node-a".into(), "127.0.0.1".into()],
            })
        );
        let err = settings(&info(&[("host", "localhost,,node-b")])).unwrap_err();
        assert!(err.contains("an empty host name"), "{err}");
        for key in ["file", "hostfile"] {
            let err = settings(&info(&[(key, "hosts.txt")])).unwrap_err();
            assert!(err.contains("not supported"), "{err}");
        }
        assert_eq!(wire_reason("a b\tc"), "a_b_c");
    }
}
