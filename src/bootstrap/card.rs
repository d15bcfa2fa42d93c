//! Business cards: what a process publishes so that peers can reach it in
//! one epoch. A card is keyed by epoch and rank (`oxmpi.e<epoch>.r<rank>`),
//! so every epoch has fresh keys (PMI servers refuse or mishandle a second
//! put of one key) and a peer still in an older epoch is never mistaken for
//! one in the new epoch. Peers read cards lazily, on first contact.
//!
//! A card's fields are separated by `,` and hold no `;`: PMI-2 doubles a
//! `;` inside a value, but Hydra 4.0.2's PMI-2 server splits its messages
//! at every `;`, so a card holding one would come back cut short. (Cards
//! of earlier versions, separated by `;`, still parse.)
use std::fmt;

/// The PMI key of `rank`'s card in `epoch`.
pub fn card_key(epoch: u64, rank: u32) -> String {
    format!("oxmpi.e{epoch}.r{rank}")
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Card {
    /// Host name plus boot id: equal cards' nodes share memory.
    pub node: String,
    pub pid: u32,
    /// Index among the processes of its node, and their number.
    pub local_index: u32,
    pub local_count: u32,
    /// The process's shared-memory inbox for this epoch.
    pub shm_segment: String,
    /// Where its TCP transport listens in this epoch (empty: none).
    pub tcp: String,
}

impl fmt::Display for Card {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "node={},pid={},lid={},nl={},shm={},tcp={}",
            self.node, self.pid, self.local_index, self.local_count, self.shm_segment, self.tcp
        )
    }
}

impl Card {
    pub fn parse(text: &str) -> Option<Card> {
        let mut card = Card {
            node: String::new(),
            pid: 0,
            local_index: 0,
            local_count: 0,
            shm_segment: String::new(),
            tcp: String::new(),
        };
        for field in text.split([',', ';']) {
            let (k, v) = field.split_once('=')?;
            match k {
                "node" => card.node = v.to_string(),
                "pid" => card.pid = v.parse().ok()?,
                "lid" => card.local_index = v.parse().ok()?,
                "nl" => card.local_count = v.parse().ok()?,
                "shm" => card.shm_segment = v.to_string(),
                "tcp" => card.tcp = v.to_string(),
                _ => {} // fields of later versions
            }
        }
        (!card.node.is_empty()).then_some(card)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn card_round_trips_and_keys_differ_by_epoch() {
        let c = Card {
            node: "vm:abc".into(),
            pid: 42,
            local_index: 1,
            local_count: 4,
            shm_segment: "/oxmpi-j-e2-r1".into(),
            tcp: "10.0.0.5:4123".into(),
        };
        assert!(!c.to_string().contains(';'), "{c}");
        assert_eq!(Card::parse(&c.to_string()), Some(c.clone()));
        let old_style = c.to_string().replace(',', ";");
        assert_eq!(Card::parse(&old_style), Some(c));
        assert_eq!(Card::parse("garbage"), None);
        assert_ne!(card_key(1, 3), card_key(2, 3));
    }
}
