//! Collective algorithms over a [`Channel`], on byte buffers.
use super::channel::{Channel, COLLECTIVE_TAG};
use crate::core::error::MpiResult;

/// Dissemination barrier: ceil(log2 p) rounds of zero-byte exchanges.
pub fn barrier(ch: &Channel) -> MpiResult {
    let p = ch.size();
    let mut distance = 1;
    while distance < p {
        let to = (ch.rank + distance) % p;
        let from = (ch.rank + p - distance) % p;
        ch.exchange(to, &[], from, &mut [])?;
        distance *= 2;
    }
    Ok(())
}

/// Every member's `mine` (all of the same length), in rank order:
/// recursive doubling when p is a power of two, a ring otherwise.
pub fn allgather(ch: &Channel, mine: &[u8]) -> MpiResult<Vec<u8>> {
    let p = ch.size();
    let n = mine.len();
    let mut all = vec![0u8; n * p];
    all[ch.rank * n..(ch.rank + 1) * n].copy_from_slice(mine);
    if p.is_power_of_two() {
        // After round k, each process holds the 2^(k+1) blocks of its
        // aligned group.
        let mut width = 1;
        while width < p {
            let partner = ch.rank ^ width;
            let my_start = (ch.rank / width) * width;
            let their_start = (partner / width) * width;
            let send = all[my_start * n..(my_start + width) * n].to_vec();
            let mut recv = vec![0u8; width * n];
            ch.exchange(partner, &send, partner, &mut recv)?;
            all[their_start * n..(their_start + width) * n].copy_from_slice(&recv);
            width *= 2;
        }
    } else {
        let right = (ch.rank + 1) % p;
        let left = (ch.rank + p - 1) % p;
        for step in 0..p - 1 {
            let send_block = (ch.rank + p - step) % p;
            let recv_block = (ch.rank + p - step - 1) % p;
            let send = all[send_block * n..(send_block + 1) * n].to_vec();
            let mut recv = vec![0u8; n];
            ch.exchange(right, &send, left, &mut recv)?;
            all[recv_block * n..(recv_block + 1) * n].copy_from_slice(&recv);
        }
    }
    let _ = COLLECTIVE_TAG;
    Ok(all)
}

/// The largest of every member's value.
pub fn allreduce_max_u64(ch: &Channel, value: u64) -> MpiResult<u64> {
    let all = allgather(ch, &value.to_le_bytes())?;
    Ok(all
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
        .max()
        .unwrap_or(value))
}
