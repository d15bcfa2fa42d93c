//! The transport's connections, each named by a token that the poller
//! hands back with its readiness. A token carries a generation, so a
//! readiness report for a connection closed earlier in the same batch
//! never reaches the connection that took its slot.
use super::connection::Connection;

/// A connection's name: generation in the high half, slot in the low one.
pub type Token = u64;

/// The listener's token (no connection ever gets it: slots stay far below
/// `u32::MAX`).
pub const LISTENER: Token = u64::MAX;

#[derive(Default)]
struct Slot {
    generation: u32,
    connection: Option<Connection>,
}

#[derive(Default)]
pub struct ConnectionTable {
    slots: Vec<Slot>,
    free: Vec<u32>,
}

fn split(token: Token) -> (usize, u32) {
    ((token & u64::from(u32::MAX)) as usize, (token >> 32) as u32)
}

impl ConnectionTable {
    pub fn insert(&mut self, connection: Connection) -> Token {
        let index = match self.free.pop() {
            Some(i) => i as usize,
            None => {
                self.slots.push(Slot::default());
                self.slots.len() - 1
            }
        };
        let slot = &mut self.slots[index];
        slot.connection = Some(connection);
        (u64::from(slot.generation) << 32) | index as u64
    }

    pub fn get_mut(&mut self, token: Token) -> Option<&mut Connection> {
        let (index, generation) = split(token);
        self.slots
            .get_mut(index)
            .filter(|s| s.generation == generation)
            .and_then(|s| s.connection.as_mut())
    }

    pub fn remove(&mut self, token: Token) -> Option<Connection> {
        let (index, generation) = split(token);
        let slot = self.slots.get_mut(index)?;
        if slot.generation != generation {
            return None;
        }
        let connection = slot.connection.take()?;
        slot.generation = slot.generation.wrapping_add(1);
        self.free.push(index as u32);
        Some(connection)
    }

    pub fn iter(&self) -> impl Iterator<Item = (Token, &Connection)> {
        self.slots.iter().enumerate().filter_map(|(i, s)| {
            let token = (u64::from(s.generation) << 32) | i as u64;
            s.connection.as_ref().map(|c| (token, c))
        })
    }

    /// Closes every connection.
    /// Whether no connection is in the table (every slot is free).
    pub fn is_empty(&self) -> bool {
        self.slots.len() == self.free.len()
    }

    pub fn clear(&mut self) {
        self.slots.clear();
        self.free.clear();
    }
}
