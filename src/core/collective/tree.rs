//! Binomial trees over ranks relative to a root: relative rank `v` has
//! parent `v - lowbit(v)` and children `v + m` for the powers of two `m`
//! below `lowbit(v)`; its subtree is relative ranks `v..v + lowbit(v)`
//! (clipped to the size), so a subtree's blocks are consecutive when the
//! data is kept in relative order. log2(p) rounds for the root's data to
//! reach everyone or everyone's to reach the root.
use std::ops::Range;

use super::call::Call;
use super::layout::Blocks;
use crate::core::error::MpiResult;

/// `rank` relative to `root`.
pub fn relative(rank: usize, root: usize, p: usize) -> usize {
    (rank + p - root) % p
}

/// The rank of relative rank `v`.
pub fn absolute(v: usize, root: usize, p: usize) -> usize {
    (v + root) % p
}

/// The lowest set bit of `v`, or the first power of two >= p for the
/// root: the subtree of `v` spans `v..v + lowbit` (clipped to p).
fn lowbit(v: usize, p: usize) -> usize {
    if v == 0 {
        p.next_power_of_two()
    } else {
        1 << v.trailing_zeros()
    }
}

/// Relative ranks in the subtree of relative rank `v`.
pub fn subtree(v: usize, p: usize) -> Range<usize> {
    v..(v + lowbit(v, p)).min(p)
}

/// Cuts disjoint ranges out of `data`, returned in the order given.
pub fn carve<'a>(data: &'a mut [u8], ranges: &[Range<usize>]) -> Vec<&'a mut [u8]> {
    let mut order: Vec<usize> = (0..ranges.len()).collect();
    order.sort_by_key(|&i| (ranges[i].start, ranges[i].end));
    let mut pieces: Vec<Option<&mut [u8]>> = (0..ranges.len()).map(|_| None).collect();
    let mut rest = data;
    let mut consumed = 0;
    for i in order {
        let r = &ranges[i];
        if r.is_empty() {
            pieces[i] = Some(&mut []);
            continue;
        }
        let (_, tail) = std::mem::take(&mut rest).split_at_mut(r.start - consumed);
        let (piece, tail) = tail.split_at_mut(r.end - r.start);
        pieces[i] = Some(piece);
        rest = tail;
        consumed = r.end;
    }
    pieces
        .into_iter()
        .map(|p| p.expect("every range was cut"))
        .collect()
}

/// Sends the root's `data` to everyone (every member passes a buffer of
/// the same length; the root's holds the data).
pub async fn bcast(call: &Call, data: &mut [u8], root: usize) -> MpiResult {
    let p = call.size();
    let v = relative(call.rank(), root, p);
    let low = lowbit(v, p);
    if v != 0 {
        let r = call.post_recv_exact(absolute(v - low, root, p), data)?;
        call.complete(vec![r]).await?;
    }
    // After a mismatch (the members' counts differ), an empty message goes
    // on instead, so that every member below sees one too.
    let data: &[u8] = if call.has_kept_mismatch() { &[] } else { data };
    let mut sends = Vec::new();
    let mut m = low >> 1;
    while m > 0 {
        if v + m < p {
            sends.push(call.post_send(absolute(v + m, root, p), data)?);
        }
        m >>= 1;
    }
    call.complete(sends).await
}

/// Distributes blocks from the root: `blocks` are in relative-rank order,
/// and `window` holds this member's subtree's blocks (from its own block
/// on; the root's window is everything, filled). Afterwards each member's
/// window is filled.
pub async fn scatter(call: &Call, window: &mut [u8], blocks: &Blocks, root: usize) -> MpiResult {
    let p = call.size();
    let v = relative(call.rank(), root, p);
    let low = lowbit(v, p);
    let base = blocks.span(0, v).end;
    let mine = subtree(v, p);
    if v != 0 {
        call.recv(absolute(v - low, root, p), window).await?;
    }
    let window: &[u8] = window;
    let mut sends = Vec::new();
    let mut m = low >> 1;
    while m > 0 {
        let child = v + m;
        if child < p {
            let span = blocks.span(child, subtree(child, p).end.min(mine.end));
            let range = span.start - base..span.end - base;
            sends.push(call.post_send(absolute(child, root, p), &window[range])?);
        }
        m >>= 1;
    }
    call.complete(sends).await
}

/// Collects blocks at the root: `blocks` are in relative-rank order and
/// `window` holds this member's subtree's blocks, its own filled.
/// Afterwards the root's window (everything) is filled.
pub async fn gather(call: &Call, window: &mut [u8], blocks: &Blocks, root: usize) -> MpiResult {
    let p = call.size();
    let v = relative(call.rank(), root, p);
    let low = lowbit(v, p);
    let base = blocks.span(0, v).end;
    let mut children = Vec::new();
    let mut ranges = Vec::new();
    let mut m = 1;
    while m < low && v + m < p {
        let child = v + m;
        let span = blocks.span(child, subtree(child, p).end);
        ranges.push(span.start - base..span.end - base);
        children.push(absolute(child, root, p));
        m <<= 1;
    }
    {
        let pieces = carve(window, &ranges);
        let mut recvs = Vec::new();
        for (child, piece) in children.into_iter().zip(pieces) {
            recvs.push(call.post_recv(child, piece)?);
        }
        call.complete(recvs).await?;
    }
    if v != 0 {
        call.send(absolute(v - low, root, p), window).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subtrees_tile_the_ranks() {
        for p in 1..40 {
            let mut covered = vec![0; p];
            for v in 0..p {
                for u in subtree(v, p) {
                    covered[u] += 1;
                }
            }
            // Relative rank u lies in its own subtree and its ancestors'
            // (one per set bit: clearing them one by one reaches the root).
            for (u, &c) in covered.iter().enumerate() {
                assert_eq!(c, u.count_ones() as usize + 1, "p={p} u={u}");
            }
        }
        let mut data: Vec<u8> = (0..10).collect();
        let pieces = carve(&mut data, &[6..8, 0..2, 3..4, 2..2]);
        assert_eq!(
            (&pieces[0][..], &pieces[1][..], &pieces[2][..]),
            (&[6u8, 7][..], &[0u8, 1][..], &[3u8][..])
        );
    }
}
