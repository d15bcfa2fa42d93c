//! Epochs: the heart of re-initialization.
//!
//! An *instance* exists while the world model or any session is
//! initialized; an *epoch* is one instance's life, from an initialization
//! with no instance to the finalize that ends the last user. Epochs are
//! numbered from 1 and grow by one per process; peers may be in different
//! epochs at the same moment.
//!
//! Everything a peer can see is keyed by the epoch, and every such key is
//! built here, by [`Epoch`]:
//! - context ids carry the epoch in their high bits ([`Epoch::context_id`]),
//!   so a message of epoch e matches only receives of epoch e: one from a
//!   newer epoch waits in the unexpected queue until this process enters
//!   that epoch, and the end of an epoch drops what is left of it and of
//!   older ones ([`Epoch::of_context`]);
//! - business cards are published under a fresh PMI key per epoch
//!   ([`Epoch::card_key`]) and looked up lazily, so a peer is contacted only
//!   once it has entered the epoch;
//! - each epoch has its own shared-memory inbox ([`Epoch::segment_name`]),
//!   so a peer in another epoch can never write into it;
//! - the TCP hello carries the epoch ([`Epoch::tag`]) and a hello of another
//!   epoch is refused (its sender retries until the peer has caught up).
//!
//! [`Epochs`] is the process's sequence of epochs: [`Epochs::enter`] starts
//! one when none is live (opening its transports and publishing the card)
//! or joins the live one; [`Epochs::leave`] says when the last user has
//! left. The runtime then ends the epoch (`runtime::leave_instance`):
//! frames still queued are delivered, the epoch's communicators and
//! unreceived messages are dropped, [`Epochs::close`] releases the
//! transports (shm segments unlinked, sockets closed), and the
//! nonblocking-collective worker is joined. With
//! `MPIR_CVAR_FINALIZE_ATEXIT` the transports are kept instead and the
//! next epoch renews them (new epoch tag, every peer found again through
//! its new card); an `atexit` handler tears them down.
use std::fmt;

use super::context_numbers::ContextNumbers;
use super::error::{MpiError, MpiResult};
use super::process::Process;
use crate::bootstrap::card::Card;
use crate::bootstrap::ProcessId;
use crate::config::TransportChoice;
use crate::mpi_abi::constants::*;
use crate::transport::endpoints::Endpoints;
use crate::transport::shm::inbox::{job_prefix, InboxBacking, ShmTransport};
use crate::transport::tcp::TcpTransport;
use crate::transport::EpochTag;

/// One epoch of this process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Epoch(u64);

/// A context id holds its epoch from this bit up and the per-epoch context
/// number (see `context_numbers`) below it.
const CONTEXT_EPOCH_SHIFT: u32 = 40;

impl Epoch {
    /// Before the first epoch: no epoch has started yet.
    const NONE: Epoch = Epoch(0);
    /// The first epoch of a process.
    pub const FIRST: Epoch = Epoch(1);

    /// The epoch after this one.
    pub fn next(self) -> Epoch {
        Epoch(self.0 + 1)
    }

    /// The context id of context `number` in this epoch.
    pub fn context_id(self, number: u64) -> u64 {
        debug_assert!(number < 1 << CONTEXT_EPOCH_SHIFT);
        (self.0 << CONTEXT_EPOCH_SHIFT) | number
    }

    /// The epoch a context id belongs to.
    pub fn of_context(context_id: u64) -> Epoch {
        Epoch(context_id >> CONTEXT_EPOCH_SHIFT)
    }

    /// The PMI key of `rank`'s business card in this epoch. Fresh keys per
    /// epoch: PMI servers refuse or mishandle a second put of one key, and
    /// a peer still in an older epoch is never mistaken for one in this.
    pub fn card_key(self, rank: ProcessId) -> String {
        format!("oxmpi.e{}.r{rank}", self.0)
    }

    /// The name of `rank`'s shared-memory inbox in this epoch of job `job`
    /// (under the job's prefix, which mpiexec cleans up after a killed job).
    pub fn segment_name(self, job: &str, rank: ProcessId) -> String {
        format!("/{}e{}-r{rank}", job_prefix(job), self.0)
    }

    /// This epoch as the transports see it (and the TCP hello carries it).
    pub fn tag(self) -> EpochTag {
        EpochTag::new(self.0)
    }
}

impl fmt::Display for Epoch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// The live epoch's state.
pub struct Instance {
    /// The world model plus the open sessions.
    users: u32,
    /// This epoch's transports.
    pub endpoints: Endpoints,
    /// This epoch's context numbers.
    pub contexts: ContextNumbers,
}

/// The process's epochs: the latest one's number, its state while it is
/// live, and (with `MPIR_CVAR_FINALIZE_ATEXIT`) the transports kept from
/// the last one for the next.
pub struct Epochs {
    /// The latest epoch started (`Epoch::NONE` before the first); the live
    /// one, if any.
    latest: Epoch,
    live: Option<Instance>,
    retained: Option<Endpoints>,
}

impl Default for Epochs {
    fn default() -> Epochs {
        Epochs {
            latest: Epoch::NONE,
            live: None,
            retained: None,
        }
    }
}

impl Epochs {
    /// The live epoch.
    pub fn current(&self) -> Option<Epoch> {
        self.live.as_ref().map(|_| self.latest)
    }

    /// The live epoch and its state.
    #[inline(always)]
    pub fn live(&mut self) -> Option<(Epoch, &mut Instance)> {
        let latest = self.latest;
        self.live.as_mut().map(|instance| (latest, instance))
    }

    /// Before the first epoch of a spawned process: its epochs continue
    /// its parents' numbering, so that its first epoch is theirs (peers
    /// talk only within one epoch).
    pub fn start_at(&mut self, first: Epoch) {
        if self.latest == Epoch::NONE && first > Epoch::NONE {
            self.latest = Epoch(first.0 - 1);
        }
    }

    /// A new user of the instance (the world model or a session): starts
    /// an epoch when none is live, else joins the live one.
    pub fn enter(&mut self, process: &mut Process) -> MpiResult<Epoch> {
        if let Some((epoch, instance)) = self.live() {
            instance.users += 1;
            return Ok(epoch);
        }
        let epoch = self.latest.next();
        let endpoints = self.open_endpoints(process, epoch)?;
        log::debug!("epoch {epoch} begins");
        crate::core::tool::pvars::count(&crate::core::tool::pvars::EPOCHS_STARTED);
        self.latest = epoch;
        self.live = Some(Instance {
            users: 1,
            endpoints,
            contexts: ContextNumbers::default(),
        });
        Ok(epoch)
    }

    /// A user leaves; returns the epoch when that was its last user (the
    /// epoch is still live: the caller ends it, then calls [`Epochs::close`]).
    pub fn leave(&mut self) -> Option<Epoch> {
        let (epoch, instance) = self.live()?;
        instance.users -= 1;
        (instance.users == 0).then_some(epoch)
    }

    /// The end of the live epoch: its transports are released (segments
    /// unlinked, sockets closed), or kept for the next epoch with
    /// `MPIR_CVAR_FINALIZE_ATEXIT`.
    pub fn close(&mut self) {
        let Some(instance) = self.live.take() else {
            return;
        };
        log::debug!("epoch {} ends", self.latest);
        if crate::config::get().finalize_atexit {
            self.retained = Some(instance.endpoints);
        }
    }

    /// Process exit: whatever is live or kept is released.
    pub fn abandon(&mut self) {
        if self.live.take().is_some() {
            log::debug!("process exits with epoch {} open", self.latest);
        }
        self.retained = None;
    }

    /// Sets up an epoch's transports (or renews the kept ones) and
    /// publishes this process's card for the epoch.
    fn open_endpoints(&mut self, process: &mut Process, epoch: Epoch) -> MpiResult<Endpoints> {
        let me = process.id();
        let Some(pmi) = process.pmi.as_mut() else {
            return Ok(Endpoints::new(me, epoch.tag()));
        };
        let choice = crate::config::get().transport;
        let endpoints = match self.retained.take() {
            Some(mut endpoints) => {
                endpoints.renew(epoch.tag());
                endpoints
            }
            None => {
                let name = epoch.segment_name(&process.job_id, me);
                // Anonymous segments leave nothing behind; a name only
                // where they cannot be shared (see transport::shm::segment).
                let backing = if crate::config::get().shm_named_segments
                    || !crate::transport::shm::segment::anonymous_supported()
                {
                    InboxBacking::Named(&name)
                } else {
                    InboxBacking::Anonymous
                };
                let shm = if choice == TransportChoice::Tcp {
                    None
                } else {
                    Some(
                        ShmTransport::create(
                            backing,
                            me,
                            process.local_index as usize,
                            process.local_count as usize,
                        )
                        .map_err(|e| MpiError::new(MPI_ERR_OTHER, format!("shared memory: {e}")))?,
                    )
                };
                let single_node = process
                    .psets
                    .members("mpix://SHARED")
                    .is_ok_and(|m| m.len() as u32 == process.placement.size);
                let tcp = if choice == TransportChoice::Shm {
                    None
                } else {
                    Some(open_tcp(
                        me,
                        epoch,
                        &process.job_id,
                        &process.placement.kvsname,
                        single_node,
                    )?)
                };
                let mut endpoints = Endpoints::with_transports(
                    me,
                    epoch.tag(),
                    process.node.clone(),
                    shm,
                    tcp,
                    choice == TransportChoice::Tcp,
                );
                endpoints.set_single_node(single_node);
                endpoints.set_node_peers(process.node_ranks.clone());
                endpoints
            }
        };
        let name = endpoints.inbox_address().unwrap_or_default();
        let card = Card {
            node: process.node.clone(),
            pid: std::process::id(),
            local_index: process.local_index,
            local_count: process.local_count,
            shm_segment: name,
            tcp: endpoints.tcp_address().unwrap_or_default(),
        };
        pmi.put_in(&process.card_kvs, &epoch.card_key(me), &card.to_string())
            .map_err(|e| {
                MpiError::new(
                    MPI_ERR_OTHER,
                    format!("publishing this process's card: {e}"),
                )
            })?;
        Ok(endpoints)
    }
}

/// An epoch's TCP transport: listening on `OXMPI_IFACE` (else loopback for
/// a world on one node, else the first interface that is up; `auto`: that
/// interface even for a world on one node), authenticated
/// with the launcher's job secret (`OXMPI_JOB_SECRET`; under another
/// launcher, the KVS name).
fn open_tcp(
    me: ProcessId,
    epoch: Epoch,
    job_id: &str,
    kvsname: &str,
    single_node: bool,
) -> MpiResult<TcpTransport> {
    let config = crate::config::get();
    // A job on one node needs no network interface: loopback will do.
    let iface = config
        .iface
        .as_deref()
        .or(single_node.then_some("127.0.0.1"));
    let bind = crate::transport::tcp::listen_address(iface).map_err(|e| {
        MpiError::new(
            MPI_ERR_OTHER,
            format!("TCP listening address (OXMPI_IFACE): {e}"),
        )
    })?;
    let secret = config.job_secret.as_ref().map_or(kvsname, |s| s.expose());
    let secret: String = secret
        .chars()
        .take(crate::transport::tcp::SECRET_MAX)
        .collect();
    TcpTransport::new(me, epoch.tag(), job_id, &secret, bind)
        .map_err(|e| MpiError::new(MPI_ERR_OTHER, format!("TCP transport on {bind}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_ids_of_two_epochs_never_meet() {
        let (e1, e2) = (Epoch::FIRST, Epoch::FIRST.next());
        assert_ne!(e1.context_id(16), e2.context_id(16));
        assert_eq!(Epoch::of_context(e2.context_id(16)), e2);
        assert_eq!(Epoch::of_context(e1.context_id((1 << 40) - 1)), e1);
        assert!(e1 < e2);
    }

    #[test]
    fn card_keys_and_segment_names_are_fresh_per_epoch() {
        let (e1, e2) = (Epoch::FIRST, Epoch::FIRST.next());
        assert_ne!(e1.card_key(3), e2.card_key(3));
        assert_ne!(e1.card_key(3), e1.card_key(4));
        assert_eq!(e1.card_key(3), "oxmpi.e1.r3");
        let name = e2.segment_name("job7", 1);
        assert_eq!(name, "/oxmpi-job7-e2-r1");
        assert!(name[1..].starts_with(&job_prefix("job7")));
        assert_ne!(name, e1.segment_name("job7", 1));
    }

    #[test]
    fn the_tag_tells_epochs_apart_on_the_wire() {
        let e = Epoch::FIRST.next().next();
        assert_eq!(EpochTag::from_le_bytes(e.tag().to_le_bytes()), e.tag());
        assert_ne!(e.tag(), e.next().tag());
    }
}
