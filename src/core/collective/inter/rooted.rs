//! The rooted collectives on an intercommunicator: the root talks to the
//! other group's leader (or, for the `v` forms, whose counts only the root
//! knows, to each member of the other group), and that group reduces,
//! gathers, broadcasts or scatters inside itself with the tree algorithms
//! rooted at its leader. The rest of the root's group takes no part.
use super::{Inter, Role};
use crate::core::collective::buffer::Buffer;
use crate::core::collective::layout::{pack, pack_into, Blocks};
use crate::core::collective::reduce::binomial_reduce;
use crate::core::collective::tree;
use crate::core::error::MpiResult;
use crate::core::op::Reduction;
use crate::core::p2p::user_buffer::UserBuffer;

/// `MPI_Bcast`: the root's `buf` to every member of the other group.
pub async fn bcast(inter: Inter, buf: UserBuffer, role: Role) -> MpiResult {
    match role {
        Role::Idle => Ok(()),
        Role::Root => inter.both.send(inter.remote(0), &pack(&buf)).await,
        Role::Leaf(root) => {
            let mut data = Buffer::scratch(buf.len());
            if inter.is_leader() {
                inter.both.recv(inter.remote(root), &mut data).await?;
            }
            tree::bcast(&inter.local, &mut data, 0).await?;
            buf.unpack(0, &data);
            Ok(())
        }
    }
}

/// `MPI_Reduce`: the other group's contributions, reduced in its rank
/// order, into the root's `result`.
pub async fn reduce(
    inter: Inter,
    contribution: Option<UserBuffer>,
    result: Option<UserBuffer>,
    red: Option<Reduction>,
    role: Role,
) -> MpiResult {
    match role {
        Role::Idle => Ok(()),
        Role::Root => {
            let result = result.expect("the root has a receive buffer");
            let mut data = Buffer::scratch(result.len());
            inter.both.recv(inter.remote(0), &mut data).await?;
            result.unpack(0, &data);
            Ok(())
        }
        Role::Leaf(root) => {
            let mine = pack(&contribution.expect("the other group contributes"));
            let red = red.expect("the other group has its reduction");
            let reduced = binomial_reduce(&inter.local, mine, &red, 0).await?;
            if inter.is_leader() {
                inter.both.send(inter.remote(root), &reduced).await?;
            }
            Ok(())
        }
    }
}

/// `MPI_Gather`: the other group's blocks, in its rank order, into the
/// root's `recv`.
pub async fn gather(
    inter: Inter,
    send: Option<UserBuffer>,
    recv: Option<UserBuffer>,
    role: Role,
) -> MpiResult {
    match role {
        Role::Idle => Ok(()),
        Role::Root => {
            let recv = recv.expect("the root has a receive buffer");
            let mut data = Buffer::scratch(recv.len());
            inter.both.recv(inter.remote(0), &mut data).await?;
            recv.unpack(0, &data);
            Ok(())
        }
        Role::Leaf(root) => {
            let send = send.expect("the other group sends");
            let (p, me, n) = (inter.local_size(), inter.rank(), send.len());
            let blocks = Blocks::equal(p, n);
            // Relative ranks are ranks with the leader as the tree's root.
            let window = blocks.span(me, tree::subtree(me, p).end);
            let mut data = Buffer::with_capacity(window.len());
            pack_into(&send, 0, n, &mut data);
            data.resize(window.len(), 0);
            tree::gather(&inter.local, &mut data, &blocks, 0).await?;
            if inter.is_leader() {
                inter.both.send(inter.remote(root), &data).await?;
            }
            Ok(())
        }
    }
}

/// `MPI_Gatherv`: `recvs` holds the root's buffer for each member of the
/// other group; each of those sends its block to the root directly.
pub async fn gatherv(
    inter: Inter,
    send: Option<UserBuffer>,
    recvs: Vec<UserBuffer>,
    role: Role,
) -> MpiResult {
    match role {
        Role::Idle => Ok(()),
        Role::Root => {
            let mut blocks: Vec<Buffer> = recvs.iter().map(|r| Buffer::scratch(r.len())).collect();
            let mut posted = Vec::new();
            for (rank, block) in blocks.iter_mut().enumerate() {
                posted.push(inter.both.post_recv(inter.remote(rank), block)?);
            }
            inter.both.complete(posted).await?;
            for (r, block) in recvs.iter().zip(&blocks) {
                r.unpack(0, block);
            }
            Ok(())
        }
        Role::Leaf(root) => {
            let data = pack(&send.expect("the other group sends"));
            inter.both.send(inter.remote(root), &data).await
        }
    }
}

/// `MPI_Scatter`: block i of the root's `send` to rank i of the other
/// group.
pub async fn scatter(
    inter: Inter,
    send: Option<UserBuffer>,
    recv: Option<UserBuffer>,
    role: Role,
) -> MpiResult {
    match role {
        Role::Idle => Ok(()),
        Role::Root => {
            let data = pack(&send.expect("the root has a send buffer"));
            inter.both.send(inter.remote(0), &data).await
        }
        Role::Leaf(root) => {
            let recv = recv.expect("the other group receives");
            let (p, me, n) = (inter.local_size(), inter.rank(), recv.len());
            let blocks = Blocks::equal(p, n);
            let mut data = Buffer::scratch(blocks.span(me, tree::subtree(me, p).end).len());
            if inter.is_leader() {
                inter.both.recv(inter.remote(root), &mut data).await?;
            }
            tree::scatter(&inter.local, &mut data, &blocks, 0).await?;
            recv.unpack(0, &data[..n]);
            Ok(())
        }
    }
}

/// `MPI_Scatterv`: `sends` holds the root's buffer for each member of the
/// other group, sent to it directly.
pub async fn scatterv(
    inter: Inter,
    sends: Vec<UserBuffer>,
    recv: Option<UserBuffer>,
    role: Role,
) -> MpiResult {
    match role {
        Role::Idle => Ok(()),
        Role::Root => {
            let blocks: Vec<Buffer> = sends.iter().map(pack).collect();
            let mut posted = Vec::new();
            for (rank, block) in blocks.iter().enumerate() {
                posted.push(inter.both.post_send(inter.remote(rank), block)?);
            }
            inter.both.complete(posted).await
        }
        Role::Leaf(root) => {
            let recv = recv.expect("the other group receives");
            let mut data = Buffer::scratch(recv.len());
            inter.both.recv(inter.remote(root), &mut data).await?;
            recv.unpack(0, &data);
            Ok(())
        }
    }
}
