//! A doorbell in shared memory: a receiver with nothing to do sleeps on it,
//! and a sender that has just pushed a message wakes it, across processes
//! (a Linux futex on a shared word, not the process-private kind).
//!
//! A doorbell is one 64-byte line holding two `AtomicU32`: `seq`, the futex
//! word, bumped by every ring that finds a sleeper; and `sleepers`, how many
//! waiters are about to sleep or sleeping. An all-zero line is an idle
//! doorbell, so a freshly created segment needs no initialization.
//!
//! The protocol, for a receiver that found all its rings empty:
//! 1. [`Doorbell::prepare_sleep`]: count itself in `sleepers`, then read
//!    `seq` (a full fence in between);
//! 2. check its rings again; if anything arrived, drop the ticket;
//! 3. otherwise [`SleepTicket::wait`]: futex-wait while `seq` is unchanged,
//!    with a timeout.
//!
//! And for a sender, after publishing a message: [`Doorbell::ring`] (a full
//! fence, then a load of `sleepers`; only when someone sleeps, a bump of `seq`
//! and a `FUTEX_WAKE` syscall).
//!
//! Invariant: no wake-up is lost. The two fences order the receiver's "count
//! myself, then look at the rings" against the sender's "publish, then look
//! at `sleepers`": either the receiver sees the message in step 2, or the
//! sender sees the sleeper and bumps `seq`, which makes the futex wait return
//! at once or wakes it. The timeout only covers a peer that died between
//! publishing and ringing.

use std::io;
use std::ptr::NonNull;
use std::sync::atomic::{fence, AtomicU32, Ordering};
use std::time::Duration;

/// Bytes one doorbell occupies (a cache line of its own).
pub const DOORBELL_BYTES: usize = 64;

#[repr(C, align(64))]
struct Words {
    /// The futex word: bumped by each ring that finds a sleeper.
    seq: AtomicU32,
    /// Receivers between `prepare_sleep` and the end of their wait.
    sleepers: AtomicU32,
}

const _: () = assert!(std::mem::size_of::<Words>() == DOORBELL_BYTES);

/// A handle on a doorbell living in shared memory. Any number of senders
/// (threads or processes) may ring it and any number of threads may wait on
/// it, so it is `Send + Sync`.
#[derive(Debug, Clone, Copy)]
pub struct Doorbell {
    words: NonNull<Words>,
}

// SAFETY: a Doorbell only reaches shared memory through atomics, and the
// attach contract keeps the memory mapped while any copy is used.
unsafe impl Send for Doorbell {}
// SAFETY: as above; every method takes `&self` and uses atomics only.
unsafe impl Sync for Doorbell {}

/// How a wait ended. Callers re-check their rings in every case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wake {
    /// Someone rang (before or during the wait), or a spurious wake-up.
    Rung,
    /// The timeout passed without a ring.
    TimedOut,
    /// A signal interrupted the wait.
    Interrupted,
}

impl Doorbell {
    /// Resets the doorbell in `region` to idle (zeroes it). Not needed on a
    /// freshly created segment, which is zero already.
    ///
    /// # Safety
    /// `region` must be 64-byte aligned, point to [`DOORBELL_BYTES`] mapped
    /// writable bytes, and nobody may be waiting on or ringing the doorbell.
    pub unsafe fn init(region: *mut u8) {
        debug_assert_eq!(region as usize % DOORBELL_BYTES, 0, "doorbell misaligned");
        // SAFETY: forwarded caller contract.
        unsafe { region.write_bytes(0, DOORBELL_BYTES) };
    }

    /// A handle on the doorbell in `region`.
    ///
    /// # Safety
    /// `region` must be 64-byte aligned, point to [`DOORBELL_BYTES`] mapped
    /// bytes holding a doorbell (zeroed or in use), and stay mapped while the
    /// handle or any copy of it is used.
    ///
    /// # Panics
    /// If `region` is null or not 64-byte aligned.
    pub unsafe fn attach(region: *mut u8) -> Doorbell {
        assert_eq!(region as usize % DOORBELL_BYTES, 0, "doorbell misaligned");
        Doorbell {
            words: NonNull::new(region.cast()).expect("doorbell region is null"),
        }
    }

    fn words(&self) -> &Words {
        // SAFETY: attach's contract keeps the line mapped and aligned.
        unsafe { self.words.as_ref() }
    }

    /// Step 1 of going to sleep: registers this waiter and snapshots `seq`.
    /// Check for work after this call, then either drop the ticket (work
    /// found) or [`SleepTicket::wait`] on it.
    pub fn prepare_sleep(&self) -> SleepTicket<'_> {
        let words = self.words();
        words.sleepers.fetch_add(1, Ordering::SeqCst);
        // Pairs with the fence in `ring`: our re-check of the rings after
        // this point sees a message published before a ring that missed us.
        fence(Ordering::SeqCst);
        SleepTicket {
            bell: self,
            seq: words.seq.load(Ordering::Acquire),
        }
    }

    /// Wakes every waiter, if there is any; call after publishing a message
    /// (once per batch is enough). Returns true if it had to wake someone.
    /// Fast path (nobody asleep): a fence and a load, no syscall.
    #[inline]
    pub fn ring(&self) -> bool {
        let words = self.words();
        // Pairs with the fence in `prepare_sleep`: orders our caller's publish
        // (a Release store in a ring) before the load of `sleepers`.
        fence(Ordering::SeqCst);
        if words.sleepers.load(Ordering::Relaxed) == 0 {
            return false;
        }
        words.seq.fetch_add(1, Ordering::Release);
        futex_wake(&words.seq);
        true
    }

    /// How many waiters are registered right now (for tests and debugging).
    pub fn sleepers(&self) -> u32 {
        self.words().sleepers.load(Ordering::Relaxed)
    }
}

/// A registered waiter (from [`Doorbell::prepare_sleep`]). Dropping it, with
/// or without waiting, unregisters it.
#[derive(Debug)]
#[must_use = "check for work, then wait on the ticket or drop it"]
pub struct SleepTicket<'a> {
    bell: &'a Doorbell,
    seq: u32,
}

impl SleepTicket<'_> {
    /// Sleeps until the doorbell rings, `timeout` passes or a signal comes.
    /// Returns at once if it rang since [`Doorbell::prepare_sleep`].
    pub fn wait(self, timeout: Duration) -> Wake {
        futex_wait(&self.bell.words().seq, self.seq, timeout)
        // `self` drops here and unregisters.
    }
}

impl Drop for SleepTicket<'_> {
    fn drop(&mut self) {
        self.bell.words().sleepers.fetch_sub(1, Ordering::Release);
    }
}

/// `FUTEX_WAIT` (shared, not private) on `word` while it equals `expected`.
fn futex_wait(word: &AtomicU32, expected: u32, timeout: Duration) -> Wake {
    let timeout = libc::timespec {
        tv_sec: libc::time_t::try_from(timeout.as_secs()).unwrap_or(libc::time_t::MAX),
        tv_nsec: timeout.subsec_nanos().into(),
    };
    // SAFETY: `word` is a live, aligned u32 (in shared memory); `timeout` is a
    // valid timespec that outlives the call; the remaining arguments are
    // unused by FUTEX_WAIT.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT,
            expected,
            &timeout as *const libc::timespec,
            std::ptr::null::<u32>(),
            0u32,
        )
    };
    if rc == 0 {
        return Wake::Rung;
    }
    match io::Error::last_os_error().raw_os_error() {
        Some(libc::ETIMEDOUT) => Wake::TimedOut,
        Some(libc::EINTR) => Wake::Interrupted,
        // EAGAIN: the word changed before we slept, i.e. it rang.
        _ => Wake::Rung,
    }
}

/// `FUTEX_WAKE` (shared) of every waiter on `word`.
fn futex_wake(word: &AtomicU32) {
    // SAFETY: `word` is a live, aligned u32; FUTEX_WAKE reads only the
    // address (as a key) and the count.
    unsafe {
        libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE, i32::MAX);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::shm::ring::{self, Consumer, Producer, RingLayout};
    use crate::transport::shm::segment::Segment;
    use crate::transport::shm::test_fork::Child;
    use std::time::Instant;

    /// Long enough that a lost wake-up shows up as a `TimedOut`.
    const LONG: Duration = Duration::from_secs(10);

    /// A doorbell and a ring in one shared-memory segment, mapped twice
    /// (at two addresses, as two processes would see it).
    struct Setup {
        segment: Segment,
        second_mapping: Segment,
        layout: RingLayout,
    }

    impl Setup {
        fn new(tag: &str) -> Setup {
            let layout = RingLayout::new(16, 1).unwrap();
            let name = format!("/oxmpi-test-{}-doorbell-{tag}", std::process::id());
            let segment = Segment::create(&name, DOORBELL_BYTES + layout.bytes()).unwrap();
            let second_mapping = Segment::open(&name).unwrap();
            // The mappings suffice; drop the name now so no test leaves one.
            segment.unlink().unwrap();
            // SAFETY: the ring region follows the doorbell line, 64-aligned.
            unsafe { ring::init(segment.as_ptr().add(DOORBELL_BYTES), layout).unwrap() };
            Setup {
                segment,
                second_mapping,
                layout,
            }
        }

        fn bell(&self) -> Doorbell {
            // SAFETY: the first line of the live segment, page aligned.
            unsafe { Doorbell::attach(self.segment.as_ptr()) }
        }

        fn ring_region(&self) -> *mut u8 {
            // SAFETY: inside the segment.
            unsafe { self.segment.as_ptr().add(DOORBELL_BYTES) }
        }
    }

    /// Receives `count` sequenced messages, sleeping on `bell` whenever the
    /// ring is empty. Returns (sleeps that were rung, timeouts).
    fn receive_sleeping(bell: &Doorbell, consumer: &mut Consumer, count: u64) -> (u64, u64) {
        let (mut rung, mut timeouts) = (0, 0);
        for seq in 0..count {
            while !consumer.has_pending() {
                let ticket = bell.prepare_sleep();
                if consumer.has_pending() {
                    break;
                }
                match ticket.wait(LONG) {
                    Wake::Rung => rung += 1,
                    Wake::TimedOut => timeouts += 1,
                    Wake::Interrupted => {}
                }
            }
            let cell = consumer.peek().unwrap();
            assert_eq!(cell.payload, &seq.to_le_bytes(), "message {seq}");
            consumer.pop();
        }
        (rung, timeouts)
    }

    /// Sends `count` sequenced messages, ringing after each; pauses `pause`
    /// every `every` messages so the receiver falls asleep. Allocation-free,
    /// so a forked child may run it.
    fn send_ringing(
        bell: &Doorbell,
        producer: &mut Producer,
        count: u64,
        every: u64,
        pause_us: u32,
    ) {
        for seq in 0..count {
            while !producer.try_push(0, 8, |p| {
                p[..8].copy_from_slice(&seq.to_le_bytes());
                8
            }) {
                bell.ring();
                // SAFETY: sched_yield has no preconditions.
                unsafe { libc::sched_yield() };
            }
            bell.ring();
            if pause_us > 0 && seq % every == every - 1 {
                // SAFETY: usleep has no preconditions (async-signal-safe).
                unsafe { libc::usleep(pause_us) };
            }
        }
    }

    #[test]
    fn idle_ring_is_cheap_and_stale_ticket_returns_at_once() {
        let setup = Setup::new("idle");
        let bell = setup.bell();
        assert!(!bell.ring(), "nobody sleeps: no wake-up");
        let ticket = bell.prepare_sleep();
        assert_eq!(bell.sleepers(), 1);
        assert!(bell.ring(), "a registered sleeper is woken");
        let start = Instant::now();
        assert_eq!(
            ticket.wait(LONG),
            Wake::Rung,
            "rang after prepare: no sleep"
        );
        assert!(start.elapsed() < Duration::from_secs(1));
        assert_eq!(bell.sleepers(), 0, "wait unregisters");
        drop(bell.prepare_sleep());
        assert_eq!(bell.sleepers(), 0, "drop unregisters");
    }

    #[test]
    fn wait_times_out_when_nobody_rings() {
        let setup = Setup::new("timeout");
        let bell = setup.bell();
        let start = Instant::now();
        assert_eq!(
            bell.prepare_sleep().wait(Duration::from_millis(30)),
            Wake::TimedOut
        );
        assert!(start.elapsed() >= Duration::from_millis(25));
    }

    #[test]
    fn two_threads_lose_no_wake_up() {
        const COUNT: u64 = 200_000;
        let setup = Setup::new("threads");
        let bell = setup.bell();
        // SAFETY: the segment outlives both ends (the thread is joined below).
        let mut producer = unsafe { Producer::attach(setup.ring_region(), setup.layout) }.unwrap();
        // SAFETY: as above.
        let mut consumer = unsafe { Consumer::attach(setup.ring_region(), setup.layout) }.unwrap();
        let sender = std::thread::spawn(move || {
            // First with pauses (the receiver surely sleeps), then flat out
            // (many close races between sleeping and ringing).
            send_ringing(&bell, &mut producer, 2_000, 100, 500);
            send_ringing(&bell, &mut producer, COUNT - 2_000, 1, 0);
        });
        // Each phase numbers its messages from 0.
        let (rung_paused, timeouts_paused) = receive_sleeping(&bell, &mut consumer, 2_000);
        let (rung_flat, timeouts_flat) = receive_sleeping(&bell, &mut consumer, COUNT - 2_000);
        sender.join().unwrap();
        assert_eq!(timeouts_paused + timeouts_flat, 0, "a wake-up was lost");
        let total = rung_paused + rung_flat;
        assert!(
            total > 0,
            "the receiver never slept: the test proves nothing"
        );
        assert_eq!(bell.sleepers(), 0);
    }

    #[test]
    fn cross_process_wake_up() {
        const COUNT: u64 = 3_000;
        let setup = Setup::new("fork");
        let bell = setup.bell();
        let (region, layout) = (setup.ring_region(), setup.layout);
        // The child uses the other mapping, so the futex and the ring are
        // shared through different virtual addresses, as between ranks.
        let other = setup.second_mapping.as_ptr();
        assert_ne!(other, setup.segment.as_ptr());
        let child = Child::fork(|| {
            // SAFETY: the inherited second mapping stays until _exit; its
            // first line is the doorbell, then the ring, whose only producer
            // this is.
            let (bell, mut producer) = unsafe {
                let bell = Doorbell::attach(other);
                match Producer::attach(other.add(DOORBELL_BYTES), layout) {
                    Ok(producer) => (bell, producer),
                    Err(_) => return 1,
                }
            };
            send_ringing(&bell, &mut producer, COUNT, 50, 1_000);
            0
        });
        // SAFETY: the segment outlives the consumer; its only consumer.
        let mut consumer = unsafe { Consumer::attach(region, layout) }.unwrap();
        let (rung, timeouts) = receive_sleeping(&bell, &mut consumer, COUNT);
        assert_eq!(child.wait(), 0, "child sender failed");
        assert_eq!(timeouts, 0, "a wake-up across processes was lost");
        assert!(
            rung > 0,
            "the receiver never slept: the test proves nothing"
        );
    }

    /// Cost of `ring` when nobody sleeps (the per-send fast path). Run with
    /// `cargo test --release --lib ring_fast_path_cost -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn ring_fast_path_cost() {
        const CALLS: u32 = 50_000_000;
        let setup = Setup::new("bench");
        let bell = setup.bell();
        let start = Instant::now();
        for _ in 0..CALLS {
            std::hint::black_box(bell.ring());
        }
        let ns = start.elapsed().as_nanos() as f64 / f64::from(CALLS);
        println!("doorbell ring with no sleeper: {ns:.1} ns/call");
    }
}
