//! The collectives on an intercommunicator in which both groups send and
//! receive:
//!
//! - Barrier: the dissemination barrier over both groups.
//! - Allgather(v): every member sends its block to the other group's
//!   leader, which knows every block's size (its receive counts) and
//!   broadcasts the lot inside its group.
//! - Alltoall(v/w): every member exchanges its blocks with each member of
//!   the other group directly.
//! - Allreduce, Reduce_scatter(_block): each group reduces to its leader
//!   (in rank order), the leaders swap the results, and each leader
//!   broadcasts (or scatters) the other group's result inside its group.
use super::Inter;
use crate::core::collective::buffer::Buffer;
use crate::core::collective::layout::{pack, pack_into, Blocks};
use crate::core::collective::reduce::binomial_reduce;
use crate::core::collective::tree::{self, carve};
use crate::core::error::MpiResult;
use crate::core::op::Reduction;
use crate::core::p2p::user_buffer::UserBuffer;

pub async fn barrier(inter: Inter) -> MpiResult {
    crate::core::collective::barrier::barrier(inter.both).await
}

/// The other group's blocks (`blocks`, in its rank order) at every member
/// of this group; `mine` is this member's block for the other group.
async fn allgather_bytes(inter: &Inter, mine: &[u8], blocks: &Blocks) -> MpiResult<Buffer> {
    let mut data = Buffer::scratch(blocks.total());
    {
        let mut posted = vec![inter.both.post_send(inter.remote(0), mine)?];
        if inter.is_leader() {
            let ranges: Vec<_> = (0..blocks.len()).map(|r| blocks.range(r)).collect();
            for (r, piece) in carve(&mut data, &ranges).into_iter().enumerate() {
                posted.push(inter.both.post_recv(inter.remote(r), piece)?);
            }
        }
        inter.both.complete(posted).await?;
    }
    tree::bcast(&inter.local, &mut data, 0).await?;
    Ok(data)
}

/// `MPI_Allgather`: `recv` holds a block per member of the other group.
pub async fn allgather(inter: Inter, send: UserBuffer, recv: UserBuffer) -> MpiResult {
    let q = inter.remote_size();
    let blocks = Blocks::equal(q, recv.len() / q);
    let data = allgather_bytes(&inter, &pack(&send), &blocks).await?;
    recv.unpack(0, &data);
    Ok(())
}

/// `MPI_Allgatherv`: `recvs` holds the buffer of each member of the other
/// group.
pub async fn allgatherv(inter: Inter, send: UserBuffer, recvs: Vec<UserBuffer>) -> MpiResult {
    let blocks = Blocks::from_sizes(recvs.iter().map(|r| r.len()));
    let data = allgather_bytes(&inter, &pack(&send), &blocks).await?;
    for (rank, r) in recvs.iter().enumerate() {
        r.unpack(0, &data[blocks.range(rank)]);
    }
    Ok(())
}

/// `MPI_Alltoall`: block i of `send` to rank i of the other group, block
/// i of `recv` from it.
pub async fn alltoall(inter: Inter, send: UserBuffer, recv: UserBuffer) -> MpiResult {
    let q = inter.remote_size();
    let outgoing = pack(&send);
    let out_blocks = Blocks::equal(q, outgoing.len() / q);
    let in_blocks = Blocks::equal(q, recv.len() / q);
    let mut incoming = Buffer::scratch(in_blocks.total());
    swap_blocks(&inter, &outgoing, &out_blocks, &mut incoming, &in_blocks).await?;
    recv.unpack(0, &incoming);
    Ok(())
}

/// `MPI_Alltoallv` and `MPI_Alltoallw`: one buffer per member of the
/// other group on each side.
pub async fn alltoallw(inter: Inter, sends: Vec<UserBuffer>, recvs: Vec<UserBuffer>) -> MpiResult {
    let out_blocks = Blocks::from_sizes(sends.iter().map(|s| s.len()));
    let mut outgoing = Buffer::with_capacity(out_blocks.total());
    for s in &sends {
        pack_into(s, 0, s.len(), &mut outgoing);
    }
    let in_blocks = Blocks::from_sizes(recvs.iter().map(|r| r.len()));
    let mut incoming = Buffer::scratch(in_blocks.total());
    swap_blocks(&inter, &outgoing, &out_blocks, &mut incoming, &in_blocks).await?;
    for (i, r) in recvs.iter().enumerate() {
        r.unpack(0, &incoming[in_blocks.range(i)]);
    }
    Ok(())
}

/// Block i of `outgoing` to remote rank i, block i of `incoming` from it;
/// each member starts with a different remote rank (its own rank's turn),
/// so no member is everyone's first target.
async fn swap_blocks(
    inter: &Inter,
    outgoing: &[u8],
    out_blocks: &Blocks,
    incoming: &mut [u8],
    in_blocks: &Blocks,
) -> MpiResult {
    let q = inter.remote_size();
    let order: Vec<usize> = (0..q).map(|i| (inter.rank() + i) % q).collect();
    let ranges: Vec<_> = order.iter().map(|&r| in_blocks.range(r)).collect();
    let mut posted = Vec::new();
    for (&r, piece) in order.iter().zip(carve(incoming, &ranges)) {
        posted.push(inter.both.post_recv(inter.remote(r), piece)?);
    }
    for &r in &order {
        posted.push(
            inter
                .both
                .post_send(inter.remote(r), &outgoing[out_blocks.range(r)])?,
        );
    }
    inter.both.complete(posted).await
}

/// This group's contributions reduced at its leader, swapped with the
/// other group's (`len` bytes) between the leaders; the other group's
/// result at the leader (garbage elsewhere).
async fn reduce_and_swap(
    inter: &Inter,
    contribution: &UserBuffer,
    red: &Reduction,
    len: usize,
) -> MpiResult<Buffer> {
    let reduced = binomial_reduce(&inter.local, pack(contribution), red, 0).await?;
    let mut theirs = Buffer::scratch(len);
    if inter.is_leader() {
        let peer = inter.remote(0);
        inter
            .both
            .exchange(peer, &reduced, peer, &mut theirs)
            .await?;
    }
    Ok(theirs)
}

/// `MPI_Allreduce`: every member of a group gets the reduction of the
/// other group's contributions.
pub async fn allreduce(
    inter: Inter,
    contribution: UserBuffer,
    result: UserBuffer,
    red: Reduction,
) -> MpiResult {
    let mut data = reduce_and_swap(&inter, &contribution, &red, result.len()).await?;
    tree::bcast(&inter.local, &mut data, 0).await?;
    result.unpack(0, &data);
    Ok(())
}

/// `MPI_Reduce_scatter(_block)`: the reduction of the other group's
/// vectors, split among this group by `counts` (elements per local rank).
pub async fn reduce_scatter(
    inter: Inter,
    contribution: UserBuffer,
    result: UserBuffer,
    counts: Vec<usize>,
    red: Reduction,
) -> MpiResult {
    let (p, me) = (inter.local_size(), inter.rank());
    let blocks = Blocks::from_sizes(counts.iter().map(|c| c * red.element_size()));
    let mut data = reduce_and_swap(&inter, &contribution, &red, blocks.total()).await?;
    let window = blocks.span(me, tree::subtree(me, p).end);
    data.truncate(window.len());
    tree::scatter(&inter.local, &mut data, &blocks, 0).await?;
    result.unpack(0, &data[..blocks.size(me)]);
    Ok(())
}
