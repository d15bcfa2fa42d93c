//! `MPI_Bcast`: a binomial tree (log2 p rounds) for short messages; for
//! long ones on 8 or more members, each with a core of its own, van de
//! Geijn's scatter then ring allgather, which moves about twice the
//! message per member instead of log2 p times it. When the node's ranks
//! oversubscribe its cores, the tree serves long messages too: the bytes
//! copied in all are about the same, the cores are few to share them out,
//! and the ring's p - 1 dependent steps each wait for a member to be
//! scheduled (1 MiB on 16 ranks on 2 cores: about 1.9 ms against 3.1-4.3
//! ms with scatter and allgather, in alternating runs).
use super::buffer::Buffer;
use super::call::Call;
use super::gather::ring_allgather;
use super::layout::{pack, Blocks};
use super::tree;
use crate::core::error::MpiResult;
use crate::core::p2p::user_buffer::UserBuffer;
use crate::core::progress::has_own_core;

/// Messages at least this long use scatter + allgather.
const LONG: usize = 64 * 1024;
const LONG_MIN_MEMBERS: usize = 8;

pub async fn bcast(call: Call, mut buf: UserBuffer, root: usize) -> MpiResult {
    let p = call.size();
    let n = buf.len();
    if p == 1 || n == 0 {
        return Ok(());
    }
    // A buffer of one block is worked on in place: no scratch copy of the
    // message at either end.
    if let Some(data) = buf.contiguous_mut() {
        return broadcast_bytes(&call, data, root).await;
    }
    let mut data = if call.rank() == root {
        pack(&buf)
    } else {
        Buffer::scratch(n)
    };
    broadcast_bytes(&call, &mut data, root).await?;
    if call.rank() != root {
        buf.unpack(0, &data);
    }
    Ok(())
}

/// Broadcasts the root's `data` (every member passes as many bytes).
async fn broadcast_bytes(call: &Call, data: &mut [u8], root: usize) -> MpiResult {
    let (p, me, n) = (call.size(), call.rank(), data.len());
    if n >= LONG && p >= LONG_MIN_MEMBERS && has_own_core() {
        // Chunk j goes to relative rank j; the data is kept in relative
        // order, which is the chunks' order.
        let chunks = Blocks::balanced(p, n, 1);
        let v = tree::relative(me, root, p);
        let window = chunks.span(v, tree::subtree(v, p).end);
        tree::scatter(call, &mut data[window], &chunks, root).await?;
        ring_allgather(call, data, &chunks, root).await
    } else {
        tree::bcast(call, data, root).await
    }
}
