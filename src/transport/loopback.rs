//! The `self` transport: frames a process sends to itself, queued in order
//! and delivered at the next poll.
use std::collections::VecDeque;

use super::{ProcessId, Sink, Transport};

pub struct Loopback {
    me: ProcessId,
    queue: VecDeque<Vec<u8>>,
}

/// Frames to oneself carry whole messages of any size (see the engine).
const MAX_FRAME: usize = isize::MAX as usize;

impl Loopback {
    pub fn new(me: ProcessId) -> Loopback {
        Loopback {
            me,
            queue: VecDeque::new(),
        }
    }

    /// Whether no frame waits (a poll would deliver nothing).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }
}

impl Transport for Loopback {
    fn max_frame(&self) -> usize {
        MAX_FRAME
    }

    fn try_send(&mut self, dest: ProcessId, len: usize, fill: &mut dyn FnMut(&mut [u8])) -> bool {
        debug_assert_eq!(dest, self.me);
        let mut frame = vec![0u8; len];
        fill(&mut frame);
        self.queue.push_back(frame);
        true
    }

    fn poll(&mut self, sink: &mut dyn Sink) -> usize {
        // Frames queued while delivering wait for the next poll, so a
        // delivery that answers itself cannot loop forever.
        let n = self.queue.len();
        for _ in 0..n {
            let frame = self.queue.pop_front().expect("n frames are queued");
            sink.deliver(self.me, &frame);
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_come_back_in_order() {
        let mut l = Loopback::new(3);
        for i in 0..3u8 {
            assert!(l.try_send(3, 2, &mut |b: &mut [u8]| b.copy_from_slice(&[i, i])));
        }
        let mut got = Vec::new();
        assert_eq!(l.poll(&mut |src, f: &[u8]| got.push((src, f.to_vec()))), 3);
        assert_eq!(got, vec![(3, vec![0, 0]), (3, vec![1, 1]), (3, vec![2, 2])]);
    }
}
