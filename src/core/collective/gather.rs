//! `MPI_Gather`, `MPI_Gatherv`, `MPI_Allgather`, `MPI_Allgatherv`.
//!
//! - Gather: a binomial tree towards the root (log2 p rounds; every member
//!   knows every block's size).
//! - Gatherv: only the root knows the counts, so the root receives from
//!   each member directly (as MPICH does).
//! - Allgather(v): Bruck's algorithm (ceil(log2 p) rounds, any p) for
//!   short data, a ring (p - 1 rounds, each member sends and receives
//!   every block once) for long data.
use super::buffer::Buffer;
use super::call::Call;
use super::layout::{pack, pack_into, read_write, Blocks};
use super::tree;
use crate::core::error::MpiResult;
use crate::core::p2p::user_buffer::UserBuffer;

/// Total sizes up to this use Bruck's algorithm, larger ones the ring.
const BRUCK_MAX: usize = 64 * 1024;

/// `send` is `None` for `MPI_IN_PLACE` at the root; `recv` (the root's,
/// `p * recvcount` elements) is `None` elsewhere.
pub async fn gather(
    call: Call,
    send: Option<UserBuffer>,
    recv: Option<UserBuffer>,
    root: usize,
) -> MpiResult {
    let (p, me) = (call.size(), call.rank());
    let n = match (&recv, &send) {
        (Some(r), _) => r.len() / p,
        (None, Some(s)) => s.len(),
        (None, None) => 0,
    };
    let v = tree::relative(me, root, p);
    let blocks = Blocks::equal(p, n);
    let window = blocks.span(v, tree::subtree(v, p).end);
    let mut data = Buffer::with_capacity(window.len());
    match &send {
        Some(s) => pack_into(s, 0, n, &mut data),
        None => pack_into(
            recv.as_ref().expect("the root has a receive buffer"),
            me * n,
            n,
            &mut data,
        ),
    }
    data.resize(window.len(), 0);
    if p > 1 {
        tree::gather(&call, &mut data, &blocks, root).await?;
    }
    if let Some(r) = &recv {
        for j in 0..p {
            let rank = tree::absolute(j, root, p);
            if rank != me || send.is_some() {
                r.unpack(rank * n, &data[j * n..(j + 1) * n]);
            }
        }
    }
    Ok(())
}

/// `recvs` holds the root's buffer for each member's block (empty
/// elsewhere); `send` is `None` for `MPI_IN_PLACE` at the root.
pub async fn gatherv(
    call: Call,
    send: Option<UserBuffer>,
    recvs: Vec<UserBuffer>,
    root: usize,
) -> MpiResult {
    let me = call.rank();
    if me != root {
        let data = send.as_ref().map(pack).unwrap_or_default();
        return call.send(root, &data).await;
    }
    let mut blocks: Vec<Buffer> = recvs.iter().map(|r| Buffer::scratch(r.len())).collect();
    let mut posted = Vec::new();
    for (rank, block) in blocks.iter_mut().enumerate() {
        if rank != me {
            posted.push(call.post_recv(rank, block)?);
        }
    }
    call.complete(posted).await?;
    for (rank, (r, block)) in recvs.iter().zip(&blocks).enumerate() {
        if rank != me {
            r.unpack(0, block);
        }
    }
    if let Some(s) = &send {
        recvs[me].unpack(0, &pack(s));
    }
    Ok(())
}

/// `send` is `None` for `MPI_IN_PLACE`; `recv` holds `p * recvcount`
/// elements.
pub async fn allgather(call: Call, send: Option<UserBuffer>, recv: UserBuffer) -> MpiResult {
    let (p, me) = (call.size(), call.rank());
    let n = recv.len() / p;
    let blocks = Blocks::equal(p, n);
    let mut data = Buffer::scratch(p * n);
    match &send {
        Some(s) => s.pack(0, &mut data[me * n..(me + 1) * n]),
        None => recv.pack(me * n, &mut data[me * n..(me + 1) * n]),
    };
    allgather_bytes(&call, &mut data, &blocks).await?;
    recv.unpack(0, &data);
    Ok(())
}

/// `recvs` holds the buffer of each member's block.
pub async fn allgatherv(call: Call, send: Option<UserBuffer>, recvs: Vec<UserBuffer>) -> MpiResult {
    let me = call.rank();
    let blocks = Blocks::from_sizes(recvs.iter().map(|r| r.len()));
    let mut data = Buffer::scratch(blocks.total());
    let mine = blocks.range(me);
    match &send {
        Some(s) => s.pack(0, &mut data[mine]),
        None => recvs[me].pack(0, &mut data[mine]),
    };
    allgather_bytes(&call, &mut data, &blocks).await?;
    for (rank, r) in recvs.iter().enumerate() {
        if rank != me || send.is_some() {
            r.unpack(0, &data[blocks.range(rank)]);
        }
    }
    Ok(())
}

/// Every member's block (block `rank` of `data`, filled) to everyone.
pub async fn allgather_bytes(call: &Call, data: &mut [u8], blocks: &Blocks) -> MpiResult {
    if call.size() == 1 {
        return Ok(());
    }
    if blocks.total() <= BRUCK_MAX {
        bruck_allgather(call, data, blocks).await
    } else {
        ring_allgather(call, data, blocks, 0).await
    }
}

/// Bruck: the data is kept rotated (position k holds rank + k's block);
/// in round k each member sends its first min(2^k, p - 2^k) positions to
/// rank - 2^k and receives rank + 2^k's, which are its own next ones.
async fn bruck_allgather(call: &Call, data: &mut [u8], blocks: &Blocks) -> MpiResult {
    let (p, me) = (call.size(), call.rank());
    let rotated = blocks.permuted(|k| (me + k) % p);
    let mut tmp = Buffer::scratch(blocks.total());
    tmp[rotated.range(0)].copy_from_slice(&data[blocks.range(me)]);
    let mut distance = 1;
    while distance < p {
        let n = distance.min(p - distance);
        let (out, into) = read_write(
            &mut tmp,
            rotated.span(0, n),
            rotated.span(distance, distance + n),
        );
        call.exchange((me + p - distance) % p, out, (me + distance) % p, into)
            .await?;
        distance *= 2;
    }
    for k in 0..p {
        data[blocks.range((me + k) % p)].copy_from_slice(&tmp[rotated.range(k)]);
    }
    Ok(())
}

/// The ring, over ranks relative to `root`: block j belongs to relative
/// rank j; in step s each member passes the block it got in step s - 1
/// to its right neighbour.
pub async fn ring_allgather(
    call: &Call,
    data: &mut [u8],
    blocks: &Blocks,
    root: usize,
) -> MpiResult {
    let p = call.size();
    let v = tree::relative(call.rank(), root, p);
    let right = tree::absolute((v + 1) % p, root, p);
    let left = tree::absolute((v + p - 1) % p, root, p);
    for step in 0..p - 1 {
        let send_block = (v + p - step) % p;
        let recv_block = (v + 2 * p - step - 1) % p;
        let (out, into) = read_write(data, blocks.range(send_block), blocks.range(recv_block));
        call.exchange(right, out, left, into).await?;
    }
    Ok(())
}
