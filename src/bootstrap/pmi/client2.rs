//! The PMI-2 half of the library's client: its handshake (`fullinit`,
//! `job-getid`, the `universeSize` job attribute) and the requests
//! `PmiClient`'s methods turn into under PMI-2 (field names as MPICH's PMI-2
//! client and Hydra 4.0.2 use them).
//!
//! PMI-2 guarantees a `kvs-get` only after a `kvs-fence`; the library
//! fences exactly where it does a PMI-1 barrier (at the start of an epoch
//! under a launcher other than oxmpi's mpiexec, see
//! `Runtime::make_cards_visible`), and oxmpi's mpiexec shows a put to every
//! later get at once under either version, so a peer's card is found
//! without a new fence there. Hydra 4.0.2 holds a `kvs-get` of a missing
//! key until every process has reached the asking process's latest fence:
//! under Hydra every process must start its epochs together, as with
//! PMI-1.
use super::client::{parse_field, spawn_outcome, PmiClient, PmiError, SpawnCommand};
use super::wire::PmiMessage;

impl PmiClient {
    /// After the server accepted PMI-2: who this process is.
    pub(super) fn init_v2(&mut self) -> Result<(), PmiError> {
        // Slurm's pmi2 plugin refuses a fullinit without `threaded` or
        // without the `PMI_JOBID` it set (MPICH's client sends both).
        let mut fullinit = PmiMessage::new("fullinit")
            .with("pmirank", self.placement.rank)
            .with("threaded", "FALSE");
        if let Ok(jobid) = std::env::var("PMI_JOBID") {
            fullinit.push("pmijobid", jobid);
        }
        let answer = self.request_v2(fullinit, "fullinit-response")?;
        self.placement.rank = parse_field("rank", answer.require("rank")?)?;
        self.placement.size = parse_field("size", answer.require("size")?)?;
        self.placement.appnum = parse_field("appnum", answer.require("appnum")?)?;
        let id = self.request_v2(PmiMessage::new("job-getid"), "job-getid-response")?;
        self.placement.kvsname = id.require("jobid")?.to_string();
        // PMI-2's values are at most 1024 bytes (`PMI2_MAX_VALLEN`).
        self.placement.vallen_max = 1024;
        self.placement.universe_size = match self.job_attribute("universeSize")? {
            Some(v) => parse_field("universeSize", &v)?,
            None => -1,
        };
        Ok(())
    }

    /// Sends `msg`, reads the answer `answer` and checks its `rc` is 0.
    pub(super) fn request_v2(
        &mut self,
        msg: PmiMessage,
        answer: &str,
    ) -> Result<PmiMessage, PmiError> {
        let cmd = msg.cmd.clone();
        let reply = self.request(msg, answer)?;
        match reply.get("rc") {
            Some("0") => Ok(reply),
            _ => Err(PmiError::Protocol(format!(
                "{cmd} refused: {}",
                reply.get("errmsg").unwrap_or(&reply.to_string())
            ))),
        }
    }

    /// `kvs-put`. PMI-2 puts into this job's key-value space; a put into
    /// another (`kvsname`: a spawned process's card goes into its parents'
    /// job, see `Process::card_kvs`) names it in `jobid`, an extension only
    /// oxmpi's mpiexec serves (the only launcher that spawns oxmpi
    /// processes, so the only one that sees such a put).
    pub(super) fn put_v2(&mut self, kvsname: &str, key: &str, value: &str) -> Result<(), PmiError> {
        let mut put = PmiMessage::new("kvs-put")
            .with("key", key)
            .with("value", value);
        if kvsname != self.placement.kvsname {
            put.push("jobid", kvsname);
        }
        self.request_v2(put, "kvs-put-response")?;
        Ok(())
    }

    /// `kvs-get` from the job `kvsname` (any source: `srcid=-1`).
    pub(super) fn get_v2(&mut self, kvsname: &str, key: &str) -> Result<Option<String>, PmiError> {
        let answer = self.request_v2(
            PmiMessage::new("kvs-get")
                .with("jobid", kvsname)
                .with("srcid", -1)
                .with("key", key),
            "kvs-get-response",
        )?;
        found_value(&answer, "value")
    }

    /// `kvs-fence`: the job-wide barrier after which every put is visible.
    pub(super) fn fence_v2(&mut self) -> Result<(), PmiError> {
        self.request_v2(PmiMessage::new("kvs-fence"), "kvs-fence-response")?;
        Ok(())
    }

    /// `info-getjobattr`: the job attribute `name`, if the launcher has it.
    pub(super) fn job_attribute(&mut self, name: &str) -> Result<Option<String>, PmiError> {
        let answer = self.request_v2(
            PmiMessage::new("info-getjobattr").with("key", name),
            "info-getjobattr-response",
        )?;
        found_value(&answer, "value")
    }

    /// PMI-2 `spawn`: the whole spawn in one request, in the fields
    /// MPICH's `PMI2_Job_Spawn` writes (`ncmds`, `preputcount`/`ppkeyN`/
    /// `ppvalN`, then per command `subcmd`, `maxprocs`, `argc`/`argvN`,
    /// `infokeycount`/`infokeyN`/`infovalN`), answered by one
    /// `spawn-response`.
    pub(super) fn spawn_v2(
        &mut self,
        commands: &[SpawnCommand],
        preput: &[(String, String)],
    ) -> Result<(), PmiError> {
        if commands.is_empty() {
            return Err(PmiError::Protocol("a spawn of no command".into()));
        }
        let mut m = PmiMessage::new("spawn")
            .with("ncmds", commands.len())
            .with("preputcount", preput.len());
        for (n, (k, v)) in preput.iter().enumerate() {
            m.push(format!("ppkey{n}"), k);
            m.push(format!("ppval{n}"), v);
        }
        for c in commands {
            m.push("subcmd", &c.command);
            m.push("maxprocs", c.maxprocs);
            m.push("argc", c.args.len());
            for (n, arg) in c.args.iter().enumerate() {
                m.push(format!("argv{n}"), arg);
            }
            m.push("infokeycount", c.info.len());
            for (n, (k, v)) in c.info.iter().enumerate() {
                m.push(format!("infokey{n}"), k);
                m.push(format!("infoval{n}"), v);
            }
        }
        let answer = self.request(m, "spawn-response")?;
        spawn_outcome(&answer, "errmsg")
    }

    pub(super) fn publish_name_v2(&mut self, service: &str, port: &str) -> Result<bool, PmiError> {
        let answer = self.request(
            PmiMessage::new("name-publish")
                .with("name", service)
                .with("port", port),
            "name-publish-response",
        )?;
        Ok(answer.get("rc") == Some("0"))
    }

    pub(super) fn unpublish_name_v2(&mut self, service: &str) -> Result<bool, PmiError> {
        let answer = self.request(
            PmiMessage::new("name-unpublish").with("name", service),
            "name-unpublish-response",
        )?;
        Ok(answer.get("rc") == Some("0"))
    }

    pub(super) fn lookup_name_v2(&mut self, service: &str) -> Result<Option<String>, PmiError> {
        let answer = self.request(
            PmiMessage::new("name-lookup").with("name", service),
            "name-lookup-response",
        )?;
        if answer.get("rc") != Some("0") {
            return Ok(None);
        }
        found_value(&answer, "port")
    }
}

/// The field `field` of an answer whose `found` is `TRUE`; `None` when it
/// is `FALSE`.
fn found_value(answer: &PmiMessage, field: &str) -> Result<Option<String>, PmiError> {
    match answer.get("found") {
        Some("TRUE") => Ok(Some(answer.require(field)?.to_string())),
        Some("FALSE") => Ok(None),
        // Hydra's name-lookup says only `port` when it found one.
        None if answer.get(field).is_some() => Ok(answer.get(field).map(str::to_string)),
        _ => Err(PmiError::Protocol(format!("no `found` in {answer}"))),
    }
}

#[cfg(test)]
mod tests {
    use std::fs::File;
    use std::io::{Read, Write};
    use std::os::fd::OwnedFd;
    use std::os::unix::net::UnixStream;

    use super::super::wire2::{self, FrameBuffer};
    use super::*;
    use crate::config::PmiChoice;

    /// A server thread answering, in order, each request it reads with the
    /// answers given (the first as a PMI-1 line, the rest as PMI-2
    /// messages); it returns the requests it read.
    fn serve(answers: Vec<&'static str>) -> (File, std::thread::JoinHandle<Vec<String>>) {
        let (ours, theirs) = UnixStream::pair().expect("socket pair");
        let server = std::thread::spawn(move || {
            let mut socket = theirs;
            let mut requests = Vec::new();
            // The init line.
            let mut line = Vec::new();
            let mut byte = [0u8; 1];
            while socket.read(&mut byte).unwrap_or(0) == 1 && byte[0] != b'\n' {
                line.push(byte[0]);
            }
            requests.push(String::from_utf8(line).unwrap());
            let mut answers = answers.into_iter();
            if let Some(first) = answers.next() {
                writeln!(socket, "{first}").unwrap();
            }
            let mut frames = FrameBuffer::new();
            for answer in answers {
                let request = loop {
                    if let Some(m) = frames.next_message() {
                        break m.unwrap();
                    }
                    if frames.fill_from(&mut socket).unwrap_or(0) == 0 {
                        return requests;
                    }
                };
                requests.push(request.to_string());
                let mut parts = answer.splitn(2, ';');
                let mut msg = PmiMessage::new(parts.next().unwrap());
                for field in parts
                    .next()
                    .unwrap_or("")
                    .split(';')
                    .filter(|f| !f.is_empty())
                {
                    let (k, v) = field.split_once('=').unwrap();
                    msg.push(k, v);
                }
                socket.write_all(&wire2::encode(&msg).unwrap()).unwrap();
            }
            requests
        });
        (File::from(OwnedFd::from(ours)), server)
    }

    const HANDSHAKE: [&str; 4] = [
        "cmd=response_to_init pmi_version=2 pmi_subversion=0 rc=0",
        "fullinit-response;pmi-version=2;pmi-subversion=0;rank=1;size=4;appnum=0;debugged=FALSE;pmiverbose=FALSE;rc=0",
        "job-getid-response;jobid=kvs_7;rc=0",
        "info-getjobattr-response;found=TRUE;value=6;rc=0",
    ];

    #[test]
    fn the_handshake_learns_rank_size_job_and_universe() {
        let (end, server) = serve(HANDSHAKE.to_vec());
        let client = PmiClient::connect_for_test_with(end, PmiChoice::V2).unwrap();
        assert!(client.is_pmi2());
        let p = &client.placement;
        assert_eq!((p.rank, p.size, p.appnum, p.universe_size), (1, 4, 0, 6));
        assert_eq!(p.kvsname, "kvs_7");
        drop(client);
        assert_eq!(
            server.join().unwrap(),
            [
                "cmd=init pmi_version=2 pmi_subversion=0",
                "cmd=fullinit pmirank=0 threaded=FALSE",
                "cmd=job-getid",
                "cmd=info-getjobattr key=universeSize",
            ]
        );
    }

    #[test]
    fn puts_gets_fences_and_attributes() {
        let mut answers = HANDSHAKE.to_vec();
        answers.extend([
            "kvs-put-response;rc=0",
            "kvs-fence-response;rc=0",
            "kvs-get-response;found=TRUE;value=node=a,pid=1;rc=0",
            "kvs-get-response;found=FALSE;rc=0",
            "info-getjobattr-response;found=TRUE;value=(vector,(0,1,4));rc=0",
            "kvs-get-response;rc=-1;errmsg=no",
            "kvs-put-response;rc=0",
            "finalize-response;rc=0",
        ]);
        let (end, server) = serve(answers);
        let mut client = PmiClient::connect_for_test_with(end, PmiChoice::Auto).unwrap();
        client.put("k", "a;b").unwrap();
        client.barrier().unwrap();
        assert_eq!(client.get("k").unwrap().as_deref(), Some("node=a,pid=1"));
        assert_eq!(client.get("missing").unwrap(), None);
        assert_eq!(
            client.process_mapping().unwrap().as_deref(),
            Some("(vector,(0,1,4))")
        );
        assert!(client.get("x").is_err(), "rc=-1 is an error");
        // A put into another job's space names it (oxmpi's extension).
        client.put_in("kvs_other", "k", "v").unwrap();
        assert!(client.spawn(&[], &[]).is_err());
        client.finalize().unwrap();
        client.finalize().unwrap();
        let requests = server.join().unwrap();
        assert_eq!(
            &requests[4..],
            [
                "cmd=kvs-put key=k value=a;b",
                "cmd=kvs-fence",
                "cmd=kvs-get jobid=kvs_7 srcid=-1 key=k",
                "cmd=kvs-get jobid=kvs_7 srcid=-1 key=missing",
                "cmd=info-getjobattr key=PMI_process_mapping",
                "cmd=kvs-get jobid=kvs_7 srcid=-1 key=x",
                "cmd=kvs-put key=k value=v jobid=kvs_other",
                "cmd=finalize",
            ]
        );
    }

    #[test]
    fn a_spawn_is_one_request_and_its_refusal_an_error() {
        let mut answers = HANDSHAKE.to_vec();
        answers.extend([
            "spawn-response;rc=0;jobid=kvs_8;nerrs=0;errcodes=0,0,0",
            "spawn-response;rc=-1;errmsg=no_such_program",
        ]);
        let (end, server) = serve(answers);
        let mut client = PmiClient::connect_for_test_with(end, PmiChoice::V2).unwrap();
        let commands = super::super::client::test_spawn_commands();
        let preput = [("PARENT".to_string(), "port#1".to_string())];
        client.spawn(&commands, &preput).unwrap();
        let refused = client.spawn(&commands[1..], &[]).unwrap_err();
        assert!(refused.to_string().contains("no such program"), "{refused}");
        let requests = server.join().unwrap();
        assert_eq!(
            &requests[4..],
            [
                "cmd=spawn ncmds=2 preputcount=1 ppkey0=PARENT ppval0=port#1 \
                 subcmd=./a maxprocs=2 argc=1 argv0=x y infokeycount=1 infokey0=wdir infoval0=/tmp \
                 subcmd=./b maxprocs=1 argc=0 infokeycount=0",
                "cmd=spawn ncmds=1 preputcount=0 subcmd=./b maxprocs=1 argc=0 infokeycount=0",
            ]
        );
    }

    #[test]
    fn v2_insists_on_pmi2() {
        let (end, server) = serve(vec![
            "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=-1",
        ]);
        let err = PmiClient::connect_for_test_with(end, PmiChoice::V2);
        assert!(matches!(err, Err(PmiError::Protocol(m)) if m.contains("refused PMI-2")));
        server.join().unwrap();
    }

    #[test]
    fn auto_falls_back_to_pmi1_on_the_same_connection() {
        use std::io::{BufRead, BufReader};
        let (ours, theirs) = UnixStream::pair().expect("socket pair");
        let server = std::thread::spawn(move || {
            let mut reader = BufReader::new(theirs);
            let mut requests = Vec::new();
            for answer in [
                "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=-1",
                "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0",
                "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024",
                "cmd=appnum appnum=0",
                "cmd=my_kvsname kvsname=kvs_1",
                "cmd=universe_size size=2",
            ] {
                let mut line = String::new();
                reader.read_line(&mut line).unwrap();
                requests.push(line.trim_end().to_string());
                writeln!(reader.get_mut(), "{answer}").unwrap();
            }
            requests
        });
        let client =
            PmiClient::connect_for_test_with(File::from(OwnedFd::from(ours)), PmiChoice::Auto)
                .unwrap();
        assert!(!client.is_pmi2());
        assert_eq!(client.placement.kvsname, "kvs_1");
        let requests = server.join().unwrap();
        assert_eq!(requests[0], "cmd=init pmi_version=2 pmi_subversion=0");
        assert_eq!(requests[1], "cmd=init pmi_version=1 pmi_subversion=1");
    }
}
