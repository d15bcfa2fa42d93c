//! `MPI_Scatter` (a binomial tree from the root, log2 p rounds) and
//! `MPI_Scatterv` (only the root knows the counts, so it sends to each
//! member directly, as MPICH does).
use super::buffer::Buffer;
use super::call::Call;
use super::layout::{pack, pack_into, Blocks};
use super::tree;
use crate::core::error::MpiResult;
use crate::core::p2p::user_buffer::UserBuffer;

/// `send` is the root's (`p * sendcount` elements; `None` elsewhere);
/// `recv` is `None` for `MPI_IN_PLACE` at the root.
pub async fn scatter(
    call: Call,
    send: Option<UserBuffer>,
    recv: Option<UserBuffer>,
    root: usize,
) -> MpiResult {
    let (p, me) = (call.size(), call.rank());
    let n = match (&send, &recv) {
        (Some(s), _) => s.len() / p,
        (None, Some(r)) => r.len(),
        (None, None) => 0,
    };
    let blocks = Blocks::equal(p, n);
    let v = tree::relative(me, root, p);
    let mut data = match &send {
        // The root packs the blocks in relative order.
        Some(s) => {
            let mut data = Buffer::with_capacity(p * n);
            for j in 0..p {
                pack_into(s, tree::absolute(j, root, p) * n, n, &mut data);
            }
            data
        }
        None => Buffer::scratch(blocks.span(v, tree::subtree(v, p).end).len()),
    };
    if p > 1 {
        tree::scatter(&call, &mut data, &blocks, root).await?;
    }
    if let Some(r) = &recv {
        r.unpack(0, &data[..n]);
    }
    Ok(())
}

/// `sends` holds the root's buffer for each member's block (empty
/// elsewhere); `recv` is `None` for `MPI_IN_PLACE` at the root.
pub async fn scatterv(
    call: Call,
    sends: Vec<UserBuffer>,
    recv: Option<UserBuffer>,
    root: usize,
) -> MpiResult {
    let me = call.rank();
    if me != root {
        let Some(r) = recv else { return Ok(()) };
        let mut data = Buffer::scratch(r.len());
        call.recv(root, &mut data).await?;
        r.unpack(0, &data);
        return Ok(());
    }
    let blocks: Vec<Buffer> = sends.iter().map(pack).collect();
    let mut posted = Vec::new();
    for (rank, block) in blocks.iter().enumerate() {
        if rank != me {
            posted.push(call.post_send(rank, block)?);
        }
    }
    if let Some(r) = &recv {
        r.unpack(0, &blocks[me]);
    }
    call.complete(posted).await
}
