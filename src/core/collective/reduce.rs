//! `MPI_Reduce`, `MPI_Allreduce`, `MPI_Reduce_scatter(_block)`.
//!
//! Order: a non-commutative operation must see its operands in rank order
//! (`a0 op a1 op ... op a(p-1)`, any bracketing). Every algorithm here
//! combines the partial results of two adjacent runs of ranks, the lower
//! run as the left operand, when the operation is not commutative:
//!
//! - Reduce: a binomial tree (log2 p rounds). Commutative operations use
//!   the tree rooted at the root; others the tree rooted at rank 0, whose
//!   subtrees are runs of ranks, and rank 0 then sends to the root.
//! - Allreduce: recursive doubling (log2 p rounds of whole-vector
//!   exchanges; with p not a power of two, the first 2r ranks pair up
//!   first). Long vectors with a commutative operation use Rabenseifner's
//!   algorithm instead: a reduce-scatter by recursive halving, then a ring
//!   allgather, about 2n bytes per member instead of n log2 p.
//! - Reduce_scatter: recursive halving for commutative operations; others
//!   reduce to rank 0 and scatter from there (both log2 p rounds).
use super::buffer::Buffer;
use super::call::Call;
use super::gather::ring_allgather;
use super::layout::{pack, Blocks};
use super::tree;
use crate::core::error::MpiResult;
use crate::core::op::Reduction;
use crate::core::p2p::user_buffer::UserBuffer;

/// Allreduce vectors at least this long (and with at least p elements)
/// use Rabenseifner's algorithm when the operation commutes.
const LONG: usize = 64 * 1024;

/// `contribution` is this member's input (the receive buffer for
/// `MPI_IN_PLACE` at the root); `result` is the root's receive buffer.
pub async fn reduce(
    call: Call,
    contribution: UserBuffer,
    result: Option<UserBuffer>,
    red: Reduction,
    root: usize,
) -> MpiResult {
    let data = pack(&contribution);
    let data = binomial_reduce(&call, data, &red, root).await?;
    if let Some(r) = &result {
        r.unpack(0, &data);
    }
    Ok(())
}

pub async fn allreduce(
    call: Call,
    contribution: UserBuffer,
    result: UserBuffer,
    red: Reduction,
) -> MpiResult {
    let p = call.size();
    let mut data = pack(&contribution);
    let element = red.element_size();
    let count = data.len().checked_div(element).unwrap_or(0);
    if p > 1 && !data.is_empty() {
        if red.is_commutative() && data.len() >= LONG && count >= p {
            let blocks = Blocks::balanced(p, count, element);
            halving_reduce_scatter(&call, &mut data, &blocks, &red).await?;
            ring_allgather(&call, &mut data, &blocks, 0).await?;
        } else {
            recursive_doubling(&call, &mut data, &red).await?;
        }
    }
    result.unpack(0, &data);
    Ok(())
}

/// `contribution` holds every member's counts' worth (the receive buffer
/// for `MPI_IN_PLACE`); `counts` are the elements each member gets.
pub async fn reduce_scatter(
    call: Call,
    contribution: UserBuffer,
    result: UserBuffer,
    counts: Vec<usize>,
    red: Reduction,
) -> MpiResult {
    let (p, me) = (call.size(), call.rank());
    let blocks = Blocks::from_sizes(counts.iter().map(|c| c * red.element_size()));
    let mut data = pack(&contribution);
    if p > 1 && blocks.total() > 0 {
        if red.is_commutative() {
            halving_reduce_scatter(&call, &mut data, &blocks, &red).await?;
        } else {
            // Reduce to rank 0 (in rank order), then scatter: relative
            // ranks are ranks when the root is 0.
            let reduced = binomial_reduce(&call, data, &red, 0).await?;
            let window = blocks.span(me, tree::subtree(me, p).end);
            data = if me == 0 {
                reduced
            } else {
                Buffer::scratch(window.end)
            };
            tree::scatter(&call, &mut data[window.clone()], &blocks, 0).await?;
        }
    }
    result.unpack(0, &data[blocks.range(me)]);
    Ok(())
}

/// Reduces everyone's `data` to `root` (other members' return values are
/// partial results).
pub async fn binomial_reduce(
    call: &Call,
    mut data: Buffer,
    red: &Reduction,
    root: usize,
) -> MpiResult<Buffer> {
    let (p, me) = (call.size(), call.rank());
    if p == 1 || data.is_empty() {
        return Ok(data);
    }
    let commutative = red.is_commutative();
    let tree_root = if commutative { root } else { 0 };
    let v = tree::relative(me, tree_root, p);
    let mut incoming = Buffer::scratch(data.len());
    let mut mask = 1;
    while mask < p {
        if v & mask != 0 {
            call.send(tree::absolute(v & !mask, tree_root, p), &data)
                .await?;
            break;
        }
        let child = v | mask;
        if child < p {
            call.recv(tree::absolute(child, tree_root, p), &mut incoming)
                .await?;
            // The child's run of ranks follows this member's.
            if commutative {
                red.combine(&incoming, &mut data);
            } else {
                red.combine(&data, &mut incoming);
                std::mem::swap(&mut data, &mut incoming);
            }
        }
        mask <<= 1;
    }
    if tree_root != root {
        if me == tree_root {
            call.send(root, &data).await?;
        } else if me == root {
            call.recv(tree_root, &mut data).await?;
        }
    }
    Ok(data)
}

/// The largest power of two not above `p` and how many ranks exceed it.
fn power_of_two_below(p: usize) -> (usize, usize) {
    let pof2 = if p.is_power_of_two() {
        p
    } else {
        p.next_power_of_two() / 2
    };
    (pof2, p - pof2)
}

/// Recursive doubling: members exchange their whole partial result with
/// the member whose (reduced) rank differs in one bit, for each bit.
async fn recursive_doubling(call: &Call, data: &mut Vec<u8>, red: &Reduction) -> MpiResult {
    let (p, me) = (call.size(), call.rank());
    let (pof2, rem) = power_of_two_below(p);
    let mut incoming = Buffer::scratch(data.len());
    // The first 2 * rem ranks pair up: the even one hands its data to the
    // odd one and waits for the result.
    let reduced_rank = if me < 2 * rem {
        if me % 2 == 0 {
            call.send(me + 1, data).await?;
            None
        } else {
            call.recv(me - 1, &mut incoming).await?;
            red.combine(&incoming, data);
            Some(me / 2)
        }
    } else {
        Some(me - rem)
    };
    if let Some(nr) = reduced_rank {
        let mut mask = 1;
        while mask < pof2 {
            let partner_reduced = nr ^ mask;
            let partner = if partner_reduced < rem {
                partner_reduced * 2 + 1
            } else {
                partner_reduced + rem
            };
            call.exchange(partner, data, partner, &mut incoming).await?;
            if partner < me {
                red.combine(&incoming, data);
            } else {
                red.combine(data, &mut incoming);
                std::mem::swap(data, &mut *incoming);
            }
            mask <<= 1;
        }
    }
    if me < 2 * rem {
        if me % 2 == 1 {
            call.send(me - 1, data).await?;
        } else {
            call.recv(me + 1, data).await?;
        }
    }
    Ok(())
}

/// Reduce-scatter by recursive halving (commutative operations): leaves
/// the reduction of block `rank` of `data` (blocks in rank order) there.
/// Reduced ranks (as in [`recursive_doubling`]) own runs of blocks: one
/// of the first 2r ranks' pairs owns both of its blocks. Each round, a
/// member keeps the half of its current run of blocks on its side of its
/// partner, sends the other half, and combines what it receives.
pub async fn halving_reduce_scatter(
    call: &Call,
    data: &mut [u8],
    blocks: &Blocks,
    red: &Reduction,
) -> MpiResult {
    let (p, me) = (call.size(), call.rank());
    let (pof2, rem) = power_of_two_below(p);
    // The first real block of reduced block i (pof2 gives p).
    let first_block = |i: usize| if i < rem { 2 * i } else { i + rem };
    let real_rank = |i: usize| if i < rem { 2 * i + 1 } else { i + rem };
    let mut incoming = Buffer::scratch(data.len());
    let nr = if me < 2 * rem {
        if me % 2 == 0 {
            call.send(me + 1, data).await?;
            return call.recv(me + 1, &mut data[blocks.range(me)]).await;
        }
        call.recv(me - 1, &mut incoming).await?;
        red.combine(&incoming, data);
        me / 2
    } else {
        me - rem
    };
    let (mut lo, mut hi) = (0, pof2);
    let mut mask = pof2 / 2;
    while mask >= 1 {
        let partner = nr ^ mask;
        let mid = lo + mask;
        let (keep, give) = if nr < partner {
            ((lo, mid), (mid, hi))
        } else {
            ((mid, hi), (lo, mid))
        };
        let keep_bytes = blocks.span(first_block(keep.0), first_block(keep.1));
        let give_bytes = blocks.span(first_block(give.0), first_block(give.1));
        let into = &mut incoming[..keep_bytes.len()];
        call.exchange(
            real_rank(partner),
            &data[give_bytes],
            real_rank(partner),
            into,
        )
        .await?;
        red.combine(into, &mut data[keep_bytes]);
        (lo, hi) = keep;
        mask /= 2;
    }
    if me < 2 * rem {
        call.send(me - 1, &data[blocks.range(me - 1)]).await?;
    }
    Ok(())
}
