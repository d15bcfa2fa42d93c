//! Eager flow control: a bound on the memory that unexpected eager messages
//! can take at a receiver.
//!
//! An eager message carries its data; when no receive is posted for it, the
//! receiver must keep a copy in its unexpected queue. Without a bound, a
//! sender that floods a receiver that posts late (or never) grows the
//! receiver's memory without limit. Stopping to read the sender's frames
//! instead is not an option: a later frame of the same sender may be the one
//! a posted receive waits for (MPI's progress rule), so that would deadlock
//! a correct program.
//!
//! So each sender holds *credit* for each receiver: a window of bytes it may
//! send eagerly before hearing back. Every eager message costs its length
//! plus [`MESSAGE_OVERHEAD`] (what an unexpected entry costs beyond its
//! data). Out of credit, a message leaves as a rendezvous request instead
//! (the envelope only; the data stays with the sender until a receive
//! matches), so the program goes on and a blocking send waits for its
//! receive, as the standard allows. The receiver counts what it has handed
//! to receives (eager data delivered, whether it waited in the unexpected
//! queue or not) and returns it in a `Credit` frame once a quarter of the
//! window has accumulated.
//!
//! The unexpected eager data a process holds is therefore at most the sum of
//! its peers' windows. Each window is `OXMPI_UNEXPECTED_LIMIT` (default 64
//! MiB) divided by the job size, and at least [`MIN_WINDOW`]; every process
//! of a job must see the same value (as with MPICH's control variables).
//! Messages to oneself are always eager (a blocking send to oneself must not
//! wait for a receive that the same thread posts later); they are counted
//! like the others, so credit towards oneself may run negative.
//!
//! Credits belong to an epoch: both sides start afresh with the next one
//! (a peer reaches this process in a new epoch only through its new card,
//! published after the reset).
use crate::transport::ProcessId;

/// What an unexpected eager message costs beyond its data: its queue
/// entry, envelope and the allocation of its copy.
pub const MESSAGE_OVERHEAD: u64 = 128;
/// The smallest window per peer, whatever the job size: one largest eager
/// message (64 KiB) always fits a quarter of it, so credit keeps coming
/// back.
pub const MIN_WINDOW: u64 = 512 * 1024;

/// Eager credit towards every peer, and credit owed to every peer.
#[derive(Debug)]
pub struct EagerCredits {
    window: u64,
    /// Per destination, bytes (with overhead) sent eagerly and not yet
    /// given back; may exceed the window only towards oneself.
    used: Vec<u64>,
    /// Per source, bytes (with overhead) delivered to receives and not yet
    /// given back.
    owed: Vec<u64>,
}

impl Default for EagerCredits {
    fn default() -> Self {
        EagerCredits::new(crate::config::DEFAULT_UNEXPECTED_LIMIT, 1)
    }
}

impl EagerCredits {
    /// Credits for a job of `job_size` processes, whose unexpected eager
    /// data may take `limit` bytes per process.
    pub fn new(limit: u64, job_size: u32) -> EagerCredits {
        EagerCredits {
            window: (limit / u64::from(job_size.max(1))).max(MIN_WINDOW),
            used: Vec::new(),
            owed: Vec::new(),
        }
    }

    /// The window per peer.
    pub fn window(&self) -> u64 {
        self.window
    }

    /// What a message of `len` bytes costs.
    #[inline(always)]
    pub fn cost(len: usize) -> u64 {
        len as u64 + MESSAGE_OVERHEAD
    }

    /// Takes the credit for an eager message of `len` bytes to `dest` if
    /// there is enough; false (and nothing taken) otherwise.
    #[inline(always)]
    pub fn try_take(&mut self, dest: ProcessId, len: usize) -> bool {
        let cost = Self::cost(len);
        match self.used.get_mut(dest as usize) {
            Some(used) if *used + cost <= self.window => {
                *used += cost;
                true
            }
            Some(_) => false,
            None => {
                self.take(dest, len);
                true
            }
        }
    }

    /// Takes the credit for an eager message of `len` bytes to `dest`
    /// whether or not there is enough (a message to oneself).
    pub fn take(&mut self, dest: ProcessId, len: usize) {
        let i = dest as usize;
        if self.used.len() <= i {
            self.used.resize(i + 1, 0);
        }
        self.used[i] += Self::cost(len);
    }

    /// Gives back credit taken by [`EagerCredits::try_take`] for a message
    /// that did not leave after all.
    pub fn give_back(&mut self, dest: ProcessId, len: usize) {
        self.returned(dest, Self::cost(len));
    }

    /// `bytes` of credit came back from `dest` (a `Credit` frame).
    pub fn returned(&mut self, dest: ProcessId, bytes: u64) {
        if let Some(used) = self.used.get_mut(dest as usize) {
            *used = used.saturating_sub(bytes);
        }
    }

    /// An eager message of `len` bytes from `from` was handed to a receive.
    /// Returns the credit to give back to `from` now, if a quarter of the
    /// window has accumulated.
    #[inline(always)]
    pub fn delivered(&mut self, from: ProcessId, len: usize) -> Option<u64> {
        let i = from as usize;
        if self.owed.len() <= i {
            self.owed.resize(i + 1, 0);
        }
        let owed = &mut self.owed[i];
        *owed += Self::cost(len);
        if *owed < self.window / 4 {
            return None;
        }
        Some(std::mem::take(owed))
    }

    /// A new epoch: nothing taken, nothing owed.
    pub fn reset(&mut self, limit: u64, job_size: u32) {
        *self = EagerCredits::new(limit, job_size);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LEN: usize = 1000;

    fn fits(window: u64) -> u64 {
        window / EagerCredits::cost(LEN)
    }

    #[test]
    fn the_window_is_the_limit_shared_by_the_job_but_never_below_the_minimum() {
        assert_eq!(EagerCredits::new(64 << 20, 2).window(), 32 << 20);
        assert_eq!(EagerCredits::new(64 << 20, 1024).window(), MIN_WINDOW);
        assert_eq!(EagerCredits::new(64 << 20, 0).window(), 64 << 20);
    }

    #[test]
    fn a_sender_runs_out_of_credit_after_one_window() {
        let mut c = EagerCredits::new(4 * MIN_WINDOW, 4);
        let n = fits(c.window());
        for _ in 0..n {
            assert!(c.try_take(1, LEN));
        }
        assert!(!c.try_take(1, LEN), "past the window");
        // Other peers have their own windows.
        assert!(c.try_take(2, LEN));
        assert!(c.try_take(0, LEN));
        // A smaller message may still fit what is left.
        let left = c.window() - n * EagerCredits::cost(LEN);
        assert!(left >= MESSAGE_OVERHEAD, "the test's sizes leave room");
        assert!(c.try_take(1, (left - MESSAGE_OVERHEAD) as usize));
        assert!(!c.try_take(1, 0));
    }

    #[test]
    fn credit_given_back_lets_the_sender_go_on() {
        let mut c = EagerCredits::new(MIN_WINDOW, 1);
        while c.try_take(3, LEN) {}
        c.returned(3, EagerCredits::cost(LEN));
        assert!(c.try_take(3, LEN));
        assert!(!c.try_take(3, LEN));
        // A message that did not leave gives its credit back.
        let mut d = EagerCredits::new(MIN_WINDOW, 1);
        while d.try_take(3, LEN) {}
        d.give_back(3, LEN);
        assert!(d.try_take(3, LEN));
        // More back than was taken (a stale frame) is harmless.
        d.returned(3, u64::MAX);
        assert!(d.try_take(3, LEN));
        d.returned(9, 100);
    }

    #[test]
    fn a_receiver_gives_credit_back_a_quarter_window_at_a_time() {
        let mut c = EagerCredits::new(MIN_WINDOW, 1);
        let quarter = c.window() / 4;
        let mut returned = 0;
        let mut delivered = 0;
        for _ in 0..1000 {
            delivered += EagerCredits::cost(LEN);
            if let Some(bytes) = c.delivered(5, LEN) {
                assert!(bytes >= quarter && bytes < quarter + EagerCredits::cost(LEN));
                returned += bytes;
            }
            // What is not returned yet stays under a quarter window.
            assert!(delivered - returned < quarter);
        }
        assert!(returned > 0);
    }

    #[test]
    fn sender_and_receiver_together_never_exceed_the_window_in_flight() {
        // A sender and a receiver that delivers every other step: the
        // data sent and not yet delivered never exceeds the window.
        let mut sender = EagerCredits::new(MIN_WINDOW, 1);
        let mut receiver = EagerCredits::new(MIN_WINDOW, 1);
        let mut in_flight = std::collections::VecDeque::new();
        let (mut eager, mut rendezvous) = (0, 0);
        for step in 0..20_000 {
            if sender.try_take(0, LEN) {
                eager += 1;
                in_flight.push_back(LEN);
            } else {
                rendezvous += 1;
            }
            let queued: u64 = in_flight.iter().map(|&l| EagerCredits::cost(l)).sum();
            assert!(queued <= sender.window());
            if step % 2 == 0 {
                if let Some(len) = in_flight.pop_front() {
                    if let Some(bytes) = receiver.delivered(1, len) {
                        sender.returned(0, bytes);
                    }
                }
            }
        }
        assert!(
            eager > 0 && rendezvous > 0,
            "eager {eager}, rendezvous {rendezvous}"
        );
    }

    #[test]
    fn messages_to_oneself_are_counted_past_the_window() {
        let mut c = EagerCredits::new(MIN_WINDOW, 1);
        for _ in 0..2 * fits(MIN_WINDOW) {
            c.take(0, LEN);
        }
        assert!(!c.try_take(0, LEN));
        c.returned(0, 2 * fits(MIN_WINDOW) * EagerCredits::cost(LEN));
        assert!(c.try_take(0, LEN));
    }

    #[test]
    fn a_new_epoch_starts_afresh() {
        let mut c = EagerCredits::new(MIN_WINDOW, 1);
        while c.try_take(2, LEN) {}
        let _ = c.delivered(2, LEN);
        c.reset(2 * MIN_WINDOW, 1);
        assert_eq!(c.window(), 2 * MIN_WINDOW);
        assert!(c.try_take(2, LEN));
        assert_eq!(c.delivered(2, 0), None);
    }
}
