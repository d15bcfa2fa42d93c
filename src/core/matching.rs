//! Message matching: the posted-receive queue and the unexpected-message
//! queue of one process.
//!
//! An arriving message matches the oldest posted receive whose
//! (context id, source, tag) accepts it; a posted receive matches the
//! oldest unexpected message it accepts. Both queues keep arrival order, and
//! every transport delivers the messages of one sender in order, so MPI's
//! non-overtaking rule holds per (sender, communicator), also with
//! `MPI_ANY_SOURCE` and `MPI_ANY_TAG`. Context ids are unique across epochs,
//! so a message of an epoch this process has not entered yet simply waits
//! here until a communicator of that epoch posts a matching receive.
use std::collections::VecDeque;

use crate::core::tool::pvars::Gauge;

/// `MPI_ANY_SOURCE` and `MPI_ANY_TAG` as seen by the matcher.
pub const ANY: i32 = i32::MIN;

/// What a message carries for matching.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Envelope {
    pub context_id: u64,
    /// Sender's rank in the communicator.
    pub source: i32,
    pub tag: i32,
}

/// What a receive (or probe) accepts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pattern {
    pub context_id: u64,
    /// A rank, or [`ANY`].
    pub source: i32,
    /// A tag, or [`ANY`] (which never matches negative internal tags).
    pub tag: i32,
}

impl Pattern {
    pub fn accepts(&self, env: &Envelope) -> bool {
        self.context_id == env.context_id
            && (self.source == ANY || self.source == env.source)
            && (self.tag == env.tag || (self.tag == ANY && env.tag >= 0))
    }
}

/// The two queues. `R` identifies a posted receive (a request id), `M` is
/// what the engine keeps of an unexpected message (its data or a
/// rendezvous handle).
pub struct Matcher<R, M> {
    posted: VecDeque<(Pattern, R)>,
    unexpected: VecDeque<(Envelope, M)>,
    /// Follows the unexpected queue's length (an MPI_T variable), if given.
    gauge: Option<&'static Gauge>,
}

impl<R: PartialEq + Copy, M> Default for Matcher<R, M> {
    fn default() -> Self {
        Matcher {
            posted: VecDeque::new(),
            unexpected: VecDeque::new(),
            gauge: None,
        }
    }
}

impl<R, M> Drop for Matcher<R, M> {
    fn drop(&mut self) {
        if let Some(gauge) = self.gauge {
            gauge.fall(self.unexpected.len() as u64);
        }
    }
}

impl<R: PartialEq + Copy, M> Matcher<R, M> {
    /// Queues whose unexpected length `gauge` follows.
    pub fn counted(gauge: &'static Gauge) -> Self {
        Matcher {
            posted: VecDeque::new(),
            unexpected: VecDeque::new(),
            gauge: Some(gauge),
        }
    }

    /// A message arrived: returns the receive it matches together with the
    /// message, or queues the message as unexpected and returns `None`.
    pub fn arrive(&mut self, env: Envelope, message: M) -> Option<(R, M)> {
        match self.match_posted(&env) {
            Some(r) => Some((r, message)),
            None => {
                self.push_unexpected(env, message);
                None
            }
        }
    }

    /// Whether any receive is posted.
    #[inline]
    pub fn has_posted(&self) -> bool {
        !self.posted.is_empty()
    }

    /// The oldest posted receive that accepts `env`, removed from the queue.
    #[inline(always)]
    pub fn match_posted(&mut self, env: &Envelope) -> Option<R> {
        if self.posted.is_empty() {
            return None;
        }
        self.search_posted(env)
    }

    fn search_posted(&mut self, env: &Envelope) -> Option<R> {
        match self.posted.front() {
            None => return None,
            // The oldest receive takes it (the usual case): no search.
            Some((p, r)) if p.accepts(env) => {
                let r = *r;
                self.posted.pop_front();
                return Some(r);
            }
            Some(_) => {}
        }
        let i = self.posted.iter().position(|(p, _)| p.accepts(env))?;
        self.posted.remove(i).map(|(_, r)| r)
    }

    /// Queues a message no posted receive accepted.
    pub fn push_unexpected(&mut self, env: Envelope, message: M) {
        self.unexpected.push_back((env, message));
        if let Some(gauge) = self.gauge {
            gauge.rise();
        }
    }

    /// A receive is posted: returns the oldest unexpected message it
    /// accepts, or queues the receive.
    pub fn post(&mut self, pattern: Pattern, receive: R) -> Option<(Envelope, M)> {
        if let Some(found) = self.take_unexpected(&pattern) {
            return Some(found);
        }
        self.posted.push_back((pattern, receive));
        None
    }

    /// Removes and returns the oldest unexpected message `pattern` accepts
    /// (`MPI_Mprobe`, or a receive that must not be queued).
    pub fn take_unexpected(&mut self, pattern: &Pattern) -> Option<(Envelope, M)> {
        if self.unexpected.is_empty() {
            return None;
        }
        let i = self
            .unexpected
            .iter()
            .position(|(e, _)| pattern.accepts(e))?;
        if let Some(gauge) = self.gauge {
            gauge.fall(1);
        }
        self.unexpected.remove(i)
    }

    /// The context ids of the unexpected messages with `tag`, each once,
    /// in arrival order.
    pub fn unexpected_contexts(&self, tag: i32) -> Vec<u64> {
        let mut contexts = Vec::new();
        for (e, _) in &self.unexpected {
            if e.tag == tag && !contexts.contains(&e.context_id) {
                contexts.push(e.context_id);
            }
        }
        contexts
    }

    /// The oldest unexpected message `pattern` accepts (`MPI_Iprobe`).
    pub fn peek(&self, pattern: &Pattern) -> Option<&(Envelope, M)> {
        if self.unexpected.is_empty() {
            return None;
        }
        self.unexpected.iter().find(|(e, _)| pattern.accepts(e))
    }

    /// Withdraws a posted receive (`MPI_Cancel`); false if it already matched.
    pub fn cancel(&mut self, receive: R) -> bool {
        match self.posted.iter().position(|(_, r)| *r == receive) {
            Some(i) => {
                self.posted.remove(i);
                true
            }
            None => false,
        }
    }

    /// Withdraws the posted receives for which `select` gives a value, and
    /// returns them with it, oldest first.
    pub fn withdraw_posted<X>(
        &mut self,
        mut select: impl FnMut(&Pattern) -> Option<X>,
    ) -> Vec<(R, X)>
    where
        R: Copy,
    {
        let mut taken = Vec::new();
        self.posted.retain(|(pattern, r)| match select(pattern) {
            Some(x) => {
                taken.push((*r, x));
                false
            }
            None => true,
        });
        taken
    }

    /// Drops everything queued for the context ids `dead` says are gone
    /// (the end of an epoch); returns how many unexpected messages went.
    pub fn purge(&mut self, mut dead: impl FnMut(u64) -> bool) -> usize {
        self.posted.retain(|(p, _)| !dead(p.context_id));
        let before = self.unexpected.len();
        self.unexpected.retain(|(e, _)| !dead(e.context_id));
        let gone = before - self.unexpected.len();
        if let Some(gauge) = self.gauge {
            gauge.fall(gone as u64);
        }
        gone
    }

    pub fn posted_len(&self) -> usize {
        self.posted.len()
    }

    pub fn unexpected_len(&self) -> usize {
        self.unexpected.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(cid: u64, source: i32, tag: i32) -> Envelope {
        Envelope {
            context_id: cid,
            source,
            tag,
        }
    }
    fn pat(cid: u64, source: i32, tag: i32) -> Pattern {
        Pattern {
            context_id: cid,
            source,
            tag,
        }
    }

    #[test]
    fn posted_receives_match_in_post_order() {
        let mut m: Matcher<u32, &str> = Matcher::default();
        assert!(m.post(pat(1, ANY, 5), 10).is_none());
        assert!(m.post(pat(1, 2, 5), 11).is_none());
        assert_eq!(m.arrive(env(1, 2, 5), "a"), Some((10, "a")));
        assert_eq!(m.arrive(env(1, 2, 5), "b"), Some((11, "b")));
        assert_eq!(m.posted_len(), 0);
    }

    #[test]
    fn unexpected_messages_keep_arrival_order_per_sender_with_wildcards() {
        let mut m: Matcher<u32, u32> = Matcher::default();
        for i in 0..5 {
            assert!(m.arrive(env(7, (i % 2) as i32, i as i32), i).is_none());
        }
        // ANY_SOURCE/ANY_TAG takes the oldest; a specific source its oldest.
        assert_eq!(m.post(pat(7, ANY, ANY), 1).map(|x| x.1), Some(0));
        assert_eq!(m.post(pat(7, 1, ANY), 2).map(|x| x.1), Some(1));
        assert_eq!(m.post(pat(7, 0, 4), 3).map(|x| x.1), Some(4));
        assert_eq!(m.post(pat(7, 0, ANY), 4).map(|x| x.1), Some(2));
        assert_eq!(m.unexpected_len(), 1);
    }

    #[test]
    fn context_ids_separate_communicators_and_any_tag_skips_internal_tags() {
        let mut m: Matcher<u32, ()> = Matcher::default();
        assert!(m.arrive(env(1, 0, 3), ()).is_none());
        assert!(m.arrive(env(2, 0, -10), ()).is_none());
        assert!(
            m.post(pat(2, 0, 3), 1).is_none(),
            "other communicator's message"
        );
        assert!(
            m.post(pat(2, 0, ANY), 2).is_none(),
            "ANY_TAG never takes an internal tag"
        );
        assert!(m.peek(&pat(2, 0, -10)).is_some());
        assert!(m.peek(&pat(1, ANY, ANY)).is_some());
    }

    #[test]
    fn cancel_withdraws_only_unmatched_receives() {
        let mut m: Matcher<u32, ()> = Matcher::default();
        m.post(pat(1, 0, 0), 1);
        m.post(pat(1, 0, 0), 2);
        assert!(m.cancel(1));
        assert!(!m.cancel(1));
        assert_eq!(m.arrive(env(1, 0, 0), ()), Some((2, ())));
        assert!(!m.cancel(2));
    }

    #[test]
    fn a_counted_matcher_keeps_its_gauge_at_the_unexpected_length() {
        static GAUGE: Gauge = Gauge::new();
        {
            let mut m: Matcher<u32, ()> = Matcher::counted(&GAUGE);
            for i in 0..4 {
                m.arrive(env(1, 0, i), ());
            }
            m.arrive(env(2, 0, 0), ());
            assert_eq!((GAUGE.level(), GAUGE.high()), (5, 5));
            assert!(m.post(pat(1, 0, 2), 7).is_some());
            assert!(m.take_unexpected(&pat(1, 0, 3)).is_some());
            assert_eq!(GAUGE.level(), 3);
            assert_eq!(m.purge(|cid| cid == 2), 1);
            assert_eq!(GAUGE.level(), 2);
        }
        assert_eq!(
            (GAUGE.level(), GAUGE.high()),
            (0, 5),
            "dropped queues count no more"
        );
    }

    #[test]
    fn purge_drops_a_dead_epochs_queues() {
        let mut m: Matcher<u32, ()> = Matcher::default();
        m.arrive(env(100, 0, 0), ());
        m.arrive(env(200, 0, 0), ());
        m.post(pat(100, 1, 1), 9);
        assert_eq!(m.purge(|cid| cid < 150), 1);
        assert_eq!(m.unexpected_len(), 1);
        assert_eq!(m.posted_len(), 0);
    }
}
