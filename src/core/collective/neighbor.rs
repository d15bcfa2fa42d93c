//! The neighborhood collectives (`MPI_Neighbor_allgather(v)`,
//! `MPI_Neighbor_alltoall(v,w)`): each member sends one block to each of
//! its destinations and receives one from each of its sources, as its
//! topology lists them ([`Neighbors`]). Everything is posted at once: a
//! member has few neighbours. An `MPI_PROC_NULL` neighbour gets nothing and
//! its receive block is left as it was.
//!
//! When a process is a neighbour twice (a periodic dimension of size 1 or
//! 2, a repeated edge) its messages carry the call's one tag and match in
//! order: sends leave in block order and receives are posted in the
//! topology's `receive_order`, which puts each message in the block MPI
//! says it belongs to.
use super::buffer::Buffer;
use super::call::Call;
use super::layout::{pack, Blocks};
use super::tree::carve;
use crate::core::error::MpiResult;
use crate::core::p2p::user_buffer::UserBuffer;
use crate::core::topology::Neighbors;

/// What a member sends: the same block to every destination (allgather)
/// or one block each (alltoall).
#[derive(Clone)]
pub enum Outgoing {
    Same(UserBuffer),
    Each(Vec<UserBuffer>),
}

/// Sends `outgoing` to `neighbors.destinations` and receives block i of
/// `recvs` from `neighbors.sources[i]`.
pub async fn exchange(
    call: Call,
    neighbors: Neighbors,
    outgoing: Outgoing,
    recvs: Vec<UserBuffer>,
) -> MpiResult {
    let packed: Vec<Buffer> = match &outgoing {
        Outgoing::Same(b) => vec![pack(b)],
        Outgoing::Each(bs) => bs.iter().map(pack).collect(),
    };
    let block_for = |j: usize| -> &[u8] {
        match outgoing {
            Outgoing::Same(_) => &packed[0],
            Outgoing::Each(_) => &packed[j],
        }
    };
    let in_blocks = Blocks::from_sizes(recvs.iter().map(|r| r.len()));
    let mut incoming = Buffer::scratch(in_blocks.total());
    let ranges: Vec<_> = (0..recvs.len()).map(|i| in_blocks.range(i)).collect();
    {
        let mut pieces: Vec<Option<&mut [u8]>> = carve(&mut incoming, &ranges)
            .into_iter()
            .map(Some)
            .collect();
        let mut ops = Vec::new();
        for &i in &neighbors.receive_order {
            let piece = pieces[i].take().expect("each block is received once");
            if let Some(source) = neighbors.sources[i] {
                ops.push(call.post_recv(source, piece)?);
            }
        }
        for (j, dest) in neighbors.destinations.iter().enumerate() {
            if let Some(dest) = *dest {
                ops.push(call.post_send(dest, block_for(j))?);
            }
        }
        call.complete(ops).await?;
    }
    for (i, r) in recvs.iter().enumerate() {
        if neighbors.sources[i].is_some() {
            r.unpack(0, &incoming[in_blocks.range(i)]);
        }
    }
    Ok(())
}
