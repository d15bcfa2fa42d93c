//! `MPI_Bcast`: a binomial tree (log2 p rounds) for short messages; for
//! long ones on 8 or more members, van de Geijn's scatter then ring
//! allgather, which moves about twice the message per member instead of
//! log2 p times it.
use super::buffer::Buffer;
use super::call::Call;
use super::gather::ring_allgather;
use super::layout::{pack, Blocks};
use super::tree;
use crate::core::error::MpiResult;
use crate::core::p2p::user_buffer::UserBuffer;

/// Messages at least this long use scatter + allgather.
const LONG: usize = 64 * 1024;
const LONG_MIN_MEMBERS: usize = 8;

pub async fn bcast(call: Call, buf: UserBuffer, root: usize) -> MpiResult {
    let (p, me) = (call.size(), call.rank());
    let n = buf.len();
    if p == 1 || n == 0 {
        return Ok(());
    }
    let mut data = if me == root {
        pack(&buf)
    } else {
        Buffer::scratch(n)
    };
    if n >= LONG && p >= LONG_MIN_MEMBERS {
        // Chunk j goes to relative rank j; the data is kept in relative
        // order, which is the chunks' order.
        let chunks = Blocks::balanced(p, n, 1);
        let v = tree::relative(me, root, p);
        let window = chunks.span(v, tree::subtree(v, p).end);
        tree::scatter(&call, &mut data[window], &chunks, root).await?;
        ring_allgather(&call, &mut data, &chunks, root).await?;
    } else {
        tree::bcast(&call, &mut data, root).await?;
    }
    if me != root {
        buf.unpack(0, &data);
    }
    Ok(())
}
