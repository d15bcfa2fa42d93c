//! A collective call prepared but not made: its communicator's channel,
//! the checked arguments (user buffers, counts, reduction...) and the
//! algorithm to run on them. The builders of `abi::collective` return one,
//! so a blocking call, its nonblocking form and its persistent form
//! (MPI 4.1 §6.13) come from the same checks:
//!
//! - [`Collective::once`]: the call made once (blocking or `I` form);
//! - [`Persistent::again`]: the call made again, at each `MPI_Start` of a
//!   persistent collective request, with a copy of the arguments.
//!
//! Invariant: a plan takes no collective sequence number; each call made
//! from it takes the next one of its communicator when it is made, so a
//! persistent collective started between other collectives gets the tag of
//! that place in the sequence at every member (members start in the same
//! order relative to their other collectives, as MPI requires). The
//! arguments were read once, when the plan was made: the arrays of counts
//! and displacements are copies, the datatypes and operation are held, so
//! only the buffers (MPI's contract: until the request is freed) must stay.
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use super::call::Call;
use super::channel::Channel;
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
    /// Makes the call again (with the next tag of the sequence).
    fn again(&self) -> impl Future<Output = MpiResult> + Send + 'static;

    /// Type-erased, for a persistent request's template.
    fn into_calls(self) -> CollectiveCalls
    where
        Self: Sized,
    {
        Arc::new(move || -> Pin<Box<dyn Future<Output = MpiResult> + Send>> {
            Box::pin(self.again())
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
    fn again(&self) -> impl Future<Output = MpiResult> + Send + 'static {
        let args = self.args.clone();
        Call::start(self.ch.clone()).run(|call| (self.algorithm)(call, args))
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
