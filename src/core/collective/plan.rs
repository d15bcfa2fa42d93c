//! A collective call prepared but not made: its communicator's channel,
//! the checked arguments (user buffers, counts, reduction...) and the
//! algorithm to run on them. The builders of `abi::collective` return one,
//! so a blocking call, its nonblocking form and its persistent form
//! (MPI 4.1 §6.13) come from the same checks:
//!
//! - [`Collective::once`]: the call made once (blocking or `I` form), with
//!   the next tag of its communicator's sequence, taken when it is made;
//! - [`Persistent::into_calls`]: the calls of a persistent collective
//!   request, one at each `MPI_Start`, with a copy of the arguments.
//!
//! Tags of persistent collectives: MPI orders the initialization calls
//! (members make them in the same order, relative to their other
//! collectives) but not the starts: members may start their persistent
//! requests in different orders (MPI 4.1 §6.13, unless the program asserts
//! `mpi_assert_strict_persistent_collective_ordering`), and `MPI_Startall`
//! starts its requests in any order. So a persistent request takes its
//! sequence number, and with it its tag, at initialization, and every call
//! made from it uses that tag: members agree on it whatever the order of
//! starts. Calls of one request never overlap (a request is started again
//! only once its call completed), and messages between two members with
//! one tag arrive in order, so a member that is one call ahead never takes
//! a slower member's messages. (A request that lives through 2^30 other
//! collectives on its communicator meets its own tag again: see
//! [`super::sequence`].)
//!
//! The arguments were read once, when the plan was made: the arrays of
//! counts and displacements are copies, the datatypes and operation are
//! held, so only the buffers (MPI's contract: until the request is freed)
//! must stay.
use std::future::Future;
use std::os::raw::c_int;
use std::pin::Pin;
use std::sync::Arc;

use super::call::Call;
use super::channel::Channel;
use super::sequence;
use crate::core::error::MpiResult;
use crate::core::p2p::request::CollectiveCalls;

pub struct Plan<S, A> {
    ch: Channel,
    /// The arguments, as the algorithm takes them.
    args: S,
    algorithm: A,
}

impl<S, A, Fut> Plan<S, A>
where
    S: Clone + Send + Sync + 'static,
    A: Fn(Call, S) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = MpiResult> + Send + 'static,
{
    pub fn new(ch: Channel, args: S, algorithm: A) -> Self {
        Plan {
            ch,
            args,
            algorithm,
        }
    }
}

/// A collective call that can be made once. Plans are; so is any
/// algorithm future (a builder that returns one gets the blocking and
/// nonblocking forms, not the persistent one).
pub trait Collective: Send + 'static {
    /// Makes the call: takes the communicator's next tag now.
    fn once(self) -> impl Future<Output = MpiResult> + Send + 'static;
}

/// A collective call that can be made any number of times.
pub trait Persistent: Collective + Sync {
    /// Takes the next number of the communicator's sequence: the tag of
    /// every call made from this plan.
    fn reserve_tag(&self) -> c_int;

    /// Makes the call again, with `tag`.
    fn again(&self, tag: c_int) -> impl Future<Output = MpiResult> + Send + 'static;

    /// The calls of a persistent request, type-erased for its template;
    /// the tag is taken now, at initialization (see the module
    /// documentation).
    fn into_calls(self) -> CollectiveCalls
    where
        Self: Sized,
    {
        let tag = self.reserve_tag();
        Arc::new(move || -> Pin<Box<dyn Future<Output = MpiResult> + Send>> {
            Box::pin(self.again(tag))
        })
    }
}

impl<S, A, Fut> Collective for Plan<S, A>
where
    S: Clone + Send + Sync + 'static,
    A: Fn(Call, S) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = MpiResult> + Send + 'static,
{
    fn once(self) -> impl Future<Output = MpiResult> + Send + 'static {
        let Plan {
            ch,
            args,
            algorithm,
        } = self;
        Call::start(ch).run(move |call| algorithm(call, args))
    }
}

impl<S, A, Fut> Persistent for Plan<S, A>
where
    S: Clone + Send + Sync + 'static,
    A: Fn(Call, S) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = MpiResult> + Send + 'static,
{
    fn reserve_tag(&self) -> c_int {
        sequence::next_tag(self.ch.context_id)
    }

    fn again(&self, tag: c_int) -> impl Future<Output = MpiResult> + Send + 'static {
        let args = self.args.clone();
        Call::with_tag(self.ch.clone(), tag).run(|call| (self.algorithm)(call, args))
    }
}

impl<F> Collective for F
where
    F: Future<Output = MpiResult> + Send + 'static,
{
    fn once(self) -> impl Future<Output = MpiResult> + Send + 'static {
        self
    }
}
