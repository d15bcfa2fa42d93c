//! Ports and connections between groups of one job: `MPI_Open_port`,
//! `MPI_Close_port`, `MPI_Comm_accept`, `MPI_Comm_connect` and
//! `MPI_Comm_join`.
//!
//! A port name says which process opened it, in which epoch, and which of
//! its ports it is: `oxmpi-port:<job>:<process>:<epoch>:<n>`. Both sides of
//! a connection derive from the name a private context (a pre-context, as
//! `MPI_Comm_create_from_group` uses, that no communicator has) whose
//! ranks are the job's process ids; the connecting group's leader sends
//! its context proposal and members there to the port's owner, which
//! answers with its group's, and both groups then build the
//! intercommunicator as `MPI_Intercomm_create` does
//! (`intercomm::create_with`). Several connections to one port are served
//! one per `MPI_Comm_accept`, in the order they came.
//!
//! Limits, said where they bite: a port connects processes of the job that
//! opened it (its first world and the worlds spawned from it: `spawn`;
//! oxmpi cannot reach processes of another job), in
//! the epoch in which it was opened; `MPI_Comm_connect` to a port nobody
//! accepts on waits (MPI allows an error after a timeout).
use std::collections::HashSet;
use std::os::raw::c_int;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{LazyLock, Mutex};

use super::collective::channel::Channel;
use super::comm::ProcessId;
use super::context_numbers::pre_context_number;
use super::epoch::Epoch;
use super::error::{MpiError, MpiResult};
use super::intercomm::{create_with, recv_list, send_list};
use super::runtime;
use crate::mpi_abi::constants::*;
use crate::mpi_abi::types::MPI_Comm;

/// The connecting leader's message (its proposal and members).
const TAG_CONNECT: c_int = 1;
/// The accepting leader's answer.
const TAG_ACCEPT: c_int = 2;

/// Ports this process opened and has not closed.
static OPEN: LazyLock<Mutex<HashSet<String>>> = LazyLock::new(Default::default);
/// Ports this process opened so far (numbers them).
static OPENED: AtomicU64 = AtomicU64::new(0);

fn open_ports() -> std::sync::MutexGuard<'static, HashSet<String>> {
    OPEN.lock().unwrap_or_else(|e| e.into_inner())
}

/// What a port name says.
#[derive(Debug, PartialEq, Eq)]
struct Port {
    job: String,
    owner: ProcessId,
    /// The epoch's context bits (`Epoch::context_id(0)`).
    epoch: u64,
    number: u64,
}

impl Port {
    fn name(&self) -> String {
        format!(
            "oxmpi-port:{}:{}:{:x}:{}",
            self.job, self.owner, self.epoch, self.number
        )
    }

    fn parse(name: &str) -> MpiResult<Port> {
        let bad = || {
            MpiError::new(
                MPI_ERR_PORT,
                format!("\"{name}\" is not a port name oxmpi gave out"),
            )
        };
        let rest = name.trim().strip_prefix("oxmpi-port:").ok_or_else(bad)?;
        let mut parts = rest.rsplitn(4, ':');
        let number = parts.next().and_then(|s| s.parse().ok()).ok_or_else(bad)?;
        let epoch = parts
            .next()
            .and_then(|s| u64::from_str_radix(s, 16).ok())
            .ok_or_else(bad)?;
        let owner = parts.next().and_then(|s| s.parse().ok()).ok_or_else(bad)?;
        let job = parts.next().ok_or_else(bad)?.to_string();
        Ok(Port {
            job,
            owner,
            epoch,
            number,
        })
    }
}

/// This process's job, id and epoch.
struct Here {
    job: String,
    me: ProcessId,
    epoch: Epoch,
}

fn here() -> MpiResult<Here> {
    let mut rt = runtime::lock();
    let epoch = rt.contexts()?.0;
    let process = rt.process()?;
    Ok(Here {
        job: process.job_id.clone(),
        me: process.id(),
        epoch,
    })
}

impl Here {
    /// A private channel whose ranks are process ids, covering this
    /// process and `others` (ids are job-wide: processes a spawn started
    /// come after the first world, see `Process::world_base`).
    fn channel(&self, others: &[ProcessId], context_id: u64) -> Channel {
        let end = others.iter().copied().chain([self.me]).max().unwrap_or(0) + 1;
        Channel {
            members: (0..end).collect(),
            rank: self.me as usize,
            context_id,
        }
    }
}

/// `MPI_Open_port`.
pub fn open() -> MpiResult<String> {
    let h = here()?;
    let name = Port {
        job: h.job,
        owner: h.me,
        epoch: h.epoch.context_id(0),
        number: OPENED.fetch_add(1, Ordering::Relaxed),
    }
    .name();
    open_ports().insert(name.clone());
    Ok(name)
}

/// `MPI_Close_port`.
pub fn close(name: &str) -> MpiResult {
    if open_ports().remove(name.trim()) {
        Ok(())
    } else {
        Err(MpiError::new(
            MPI_ERR_PORT,
            format!("\"{name}\" is not a port this process has open"),
        ))
    }
}

/// The private channel of a port, in this epoch, checked against the
/// name's job and epoch.
fn channel(port: &Port, h: &Here) -> MpiResult<Channel> {
    if port.job != h.job {
        return Err(MpiError::new(
            MPI_ERR_PORT,
            "the port belongs to another job: oxmpi connects processes of one job only",
        ));
    }
    if port.epoch != h.epoch.context_id(0) {
        return Err(MpiError::new(
            MPI_ERR_PORT,
            "the port was opened in another epoch (before a re-initialization)",
        ));
    }
    Ok(h.channel(
        &[port.owner],
        h.epoch.context_id(pre_context_number(&port.name(), &[], 0)),
    ))
}

/// The epoch a port was opened in (a spawned process's first epoch is
/// its parents', see `Epochs::start_at`); `None` for a name oxmpi did not
/// give out.
pub fn epoch_of(name: &str) -> Option<Epoch> {
    Port::parse(name).ok().map(|p| Epoch::of_context(p.epoch))
}

/// `MPI_Comm_accept`: `name` is significant at `root` only, which must
/// have opened the port.
pub fn accept(name: &str, root: c_int, comm: MPI_Comm) -> MpiResult<MPI_Comm> {
    create_with(comm, root, |mine| answer(name, mine))
}

/// The accepting leader's side of a connection to port `name`, which this
/// process has open: the first connecting group's list in, this group's
/// (`mine`) out (see `intercomm::create_with`).
pub fn answer(name: &str, mine: &[u64]) -> MpiResult<Vec<u64>> {
    let h = here()?;
    let port = Port::parse(name)?;
    if port.owner != h.me || !open_ports().contains(name.trim()) {
        return Err(MpiError::new(
            MPI_ERR_PORT,
            format!("\"{name}\" is not a port this process has open"),
        ));
    }
    let ch = channel(&port, &h)?;
    let (from, theirs) = recv_list_from_any(&ch, TAG_CONNECT)?;
    // The connecting leader may be a process this one has not heard of
    // (a spawned one): the answer goes on a channel that covers it.
    let ch = h.channel(&[from as ProcessId], ch.context_id);
    send_list(&ch, from, TAG_ACCEPT, mine)?;
    Ok(theirs)
}

/// `MPI_Comm_connect`: `name` is significant at `root` only.
pub fn connect(name: &str, root: c_int, comm: MPI_Comm) -> MpiResult<MPI_Comm> {
    create_with(comm, root, |mine| {
        let h = here()?;
        let port = Port::parse(name)?;
        let ch = channel(&port, &h)?;
        let owner = port.owner as usize;
        send_list(&ch, owner, TAG_CONNECT, mine)?;
        recv_list(&ch, owner, TAG_ACCEPT)
    })
}

/// `MPI_Comm_join`: `peer` is the other process's id, learnt over the
/// program's socket; `comm` is `MPI_COMM_SELF`. The process with the
/// lower id answers, as an accepting leader does; `use_count` numbers the
/// joins of the pair, so each has its own context.
pub fn join(peer: ProcessId, comm: MPI_Comm, use_count: u64) -> MpiResult<MPI_Comm> {
    let h = here()?;
    if peer == h.me {
        return Err(MpiError::new(
            MPI_ERR_ARG,
            format!("the other end of the socket is process {peer}, which cannot join this one"),
        ));
    }
    let (low, high) = (h.me.min(peer), h.me.max(peer));
    let ch = h.channel(
        &[peer],
        h.epoch
            .context_id(pre_context_number("join", &[low, high], use_count)),
    );
    create_with(comm, 0, |mine| {
        if h.me == low {
            let theirs = recv_list(&ch, peer as usize, TAG_CONNECT)?;
            send_list(&ch, peer as usize, TAG_ACCEPT, mine)?;
            Ok(theirs)
        } else {
            send_list(&ch, peer as usize, TAG_CONNECT, mine)?;
            recv_list(&ch, peer as usize, TAG_ACCEPT)
        }
    })
}

/// Receives a list (as `intercomm::recv_list` sends it) from whichever
/// process sends first; returns that process's rank on `ch` and the list.
fn recv_list_from_any(ch: &Channel, tag: c_int) -> MpiResult<(usize, Vec<u64>)> {
    let mut len = [0u8; 8];
    let r = ch.irecv_any(tag, &mut len)?;
    let status = ch.wait_all(&[r])?[0];
    let from = usize::try_from(status.MPI_SOURCE)
        .map_err(|_| MpiError::new(MPI_ERR_INTERN, "a connection from no process"))?;
    let mut body = vec![0u8; u64::from_le_bytes(len) as usize * 8];
    let r = ch.irecv(from, tag, &mut body)?;
    ch.wait_all(&[r])?;
    Ok((
        from,
        body.chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn port_names_round_trip_and_strangers_are_refused() {
        let p = Port {
            job: "job:with:colons".into(),
            owner: 3,
            epoch: 7 << 40,
            number: 12,
        };
        assert_eq!(Port::parse(&p.name()).unwrap(), p);
        assert_eq!(
            Port::parse("tcp://10.0.0.1:5000").unwrap_err().class,
            MPI_ERR_PORT
        );
        assert!(Port::parse("oxmpi-port:j:x:1:2").is_err());
    }
}
