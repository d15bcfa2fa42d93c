//! The blocking collectives oxmpi uses internally (communicator creation,
//! `MPI_Barrier`), on a [`Channel`] and byte buffers. They run outside the
//! per-call tag sequence, on the channel's fixed [`COLLECTIVE_TAG`]: they
//! are blocking and run one at a time per communicator, so a single tag
//! cannot confuse them, and the sequence tags of the program's collectives
//! never equal it.
use std::os::raw::c_int;

use super::call::Call;
use super::channel::{Channel, COLLECTIVE_TAG};
use super::executor::block;
use super::layout::Blocks;
use crate::core::error::MpiResult;

fn internal(ch: &Channel) -> Call {
    Call::with_tag(ch.clone(), COLLECTIVE_TAG)
}

/// Dissemination barrier: ceil(log2 p) rounds of zero-byte exchanges.
pub fn barrier(ch: &Channel) -> MpiResult {
    block(super::barrier::barrier(internal(ch)))
}

/// Every member's `mine` (all of the same length), in rank order.
pub fn allgather(ch: &Channel, mine: &[u8]) -> MpiResult<Vec<u8>> {
    allgather_tagged(ch, COLLECTIVE_TAG, mine)
}

/// [`allgather`] with messages tagged `tag`: for a channel whose members'
/// order changes from call to call on one context (see
/// `core::intercomm::merge`), where the fixed tag could let one call's
/// message match another's receive.
pub fn allgather_tagged(ch: &Channel, tag: c_int, mine: &[u8]) -> MpiResult<Vec<u8>> {
    let (p, n) = (ch.size(), mine.len());
    let mut all = vec![0u8; n * p];
    all[ch.rank * n..(ch.rank + 1) * n].copy_from_slice(mine);
    let call = Call::with_tag(ch.clone(), tag);
    block(super::gather::allgather_bytes(
        &call,
        &mut all,
        &Blocks::equal(p, n),
    ))?;
    Ok(all)
}

/// The largest of every member's value.
pub fn allreduce_max_u64(ch: &Channel, value: u64) -> MpiResult<u64> {
    allreduce_max_u64_tagged(ch, COLLECTIVE_TAG, value)
}

/// [`allreduce_max_u64`] with messages tagged `tag` (see
/// [`allgather_tagged`]).
pub fn allreduce_max_u64_tagged(ch: &Channel, tag: c_int, value: u64) -> MpiResult<u64> {
    let all = allgather_tagged(ch, tag, &value.to_le_bytes())?;
    Ok(all
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
        .max()
        .unwrap_or(value))
}

/// Sends `outgoing[i]` to member i (of any length, empty ones skipped)
/// and returns what each member sent this one: an allgather of the
/// lengths, then the messages.
pub fn alltoallv_bytes(ch: &Channel, outgoing: Vec<Vec<u8>>) -> MpiResult<Vec<Vec<u8>>> {
    let size = ch.size();
    let lengths: Vec<u8> = outgoing
        .iter()
        .flat_map(|o| (o.len() as u64).to_le_bytes())
        .collect();
    let all = allgather(ch, &lengths)?;
    let incoming: Vec<usize> = (0..size)
        .map(|from| {
            let at = (from * size + ch.rank) * 8;
            u64::from_le_bytes(all[at..at + 8].try_into().expect("8 bytes")) as usize
        })
        .collect();
    block(exchange(internal(ch), outgoing, incoming))
}

/// Sends `outgoing[i]` to member i and receives `sizes[i]` bytes from
/// each, skipping empty messages; what this member tells itself is
/// copied.
async fn exchange(
    call: Call,
    mut outgoing: Vec<Vec<u8>>,
    sizes: Vec<usize>,
) -> MpiResult<Vec<Vec<u8>>> {
    let me = call.rank();
    let mut incoming: Vec<Vec<u8>> = sizes.iter().map(|&n| vec![0u8; n]).collect();
    incoming[me] = std::mem::take(&mut outgoing[me]);
    let mut ops = Vec::new();
    for (from, buf) in incoming.iter_mut().enumerate() {
        if from != me && !buf.is_empty() {
            ops.push(call.post_recv(from, buf)?);
        }
    }
    for (to, data) in outgoing.iter().enumerate() {
        if to != me && !data.is_empty() {
            ops.push(call.post_send(to, data)?);
        }
    }
    call.complete(ops).await?;
    Ok(incoming)
}
