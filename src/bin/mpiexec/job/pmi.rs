//! A rank's PMI traffic: what it sends is read from its connection and
//! handed to the PMI server, whose actions (answers, closing, an abort, a
//! protocol error) are carried out here.
//!
//! Invariant: requests reach the PMI server in the order the rank sent
//! them, and answers are written at once (what the socket does not take
//! waits for `POLLOUT`); a connection is dropped here only at its end of
//! file, after a failed write, or once it is closing and every answer was
//! written (so `finalize_ack` reaches the rank).

use crate::connection::Incoming;
use crate::outcome::Ending;
use crate::pmi_server::Action;

use super::Job;

impl Job {
    /// Reads and handles everything rank `rank` has sent.
    pub(super) fn read_rank(&mut self, rank: usize) {
        let Some(connection) = self.ranks[rank].connection.as_mut() else {
            return;
        };
        let (incoming, eof) = connection.read_available();
        for item in incoming {
            match item {
                Incoming::Request(request) => {
                    log::debug!("rank {rank}: {request}");
                    let actions = self.server.handle(rank, &request);
                    self.apply(actions);
                }
                Incoming::Malformed(e) => self.apply(vec![Action::ProtocolError {
                    rank,
                    problem: e.to_string(),
                }]),
            }
        }
        if eof && self.ranks[rank].connection.is_some() {
            if !self.server.has_finalized(rank) {
                log::debug!("rank {rank} closed its PMI connection");
            }
            self.ranks[rank].connection = None;
            self.check_finalized(rank);
        }
    }

    pub(super) fn flush_rank(&mut self, rank: usize) {
        let Some(connection) = self.ranks[rank].connection.as_mut() else {
            return;
        };
        if let Err(e) = connection.flush() {
            log::debug!("rank {rank}: PMI write failed: {e}");
            self.ranks[rank].connection = None;
        } else if connection.is_done() {
            self.ranks[rank].connection = None;
        }
    }

    pub(super) fn apply(&mut self, actions: Vec<Action>) {
        for action in actions {
            match action {
                Action::Reply(to, message) => {
                    if let Some(c) = self.ranks.get_mut(to).and_then(|r| r.connection.as_mut()) {
                        c.send(&message);
                        self.flush_rank(to);
                    }
                }
                Action::Close(rank) => {
                    if let Some(c) = self.ranks[rank].connection.as_mut() {
                        c.close_when_flushed();
                        self.flush_rank(rank);
                    }
                }
                Action::Abort { rank, code } => {
                    let who = self.who(rank);
                    self.end(Ending::Aborted { who, code });
                }
                Action::Spawn {
                    requester,
                    commands,
                } => self.spawn(requester, &commands),
                Action::ProtocolError { rank, problem } => {
                    let who = self.who(rank);
                    self.end(Ending::ProtocolError { who, problem });
                }
            }
        }
    }
}
