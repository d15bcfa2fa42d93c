//! Collective buffering (two-phase I/O) for the `*_all` calls.
//!
//! The members agree on the byte range all of them touch, cut it into
//! one contiguous file domain per aggregator (the first member of each
//! node by default: `cb_config_list` `*:N` makes it N per node, `cb_nodes`
//! a number spread over the nodes; see [`aggregator_ranks`]), and send each
//! aggregator the pieces that fall into its domain (offsets, lengths and,
//! for a write, the data). Each aggregator sorts what it got and accesses
//! the file in runs: pieces that touch or overlap become one `pwrite`;
//! for reads, requests less than [`SIEVE_GAP`] apart are read with one
//! `pread` that takes the gap along (data sieving), and the aggregator
//! sends each member its bytes back. Many small interleaved pieces of
//! many ranks thus become few large contiguous accesses.
//!
//! An aggregator holds at most `cb_buffer_size` bytes of its domain at a
//! time: each domain is taken in windows of that size, one window per
//! round, and each round is an exchange of its own (the members agree on
//! how many rounds the fullest domain needs). A member likewise sends and
//! receives at most one window's worth per aggregator per round.
//!
//! Atomic mode locks the file around each aggregator's accesses of a
//! round.
use super::view::Piece;
use crate::core::collective::algorithms::alltoallv_bytes;
use crate::core::collective::channel::Channel;
use crate::core::error::MpiResult;
use std::os::unix::fs::FileExt;

/// Requests at most this far apart are read together (the gap is read
/// and dropped): one larger `pread` beats two small ones.
pub const SIEVE_GAP: u64 = 64 * 1024;

/// How collective buffering is set up for a call: the aggregators (from
/// the `cb_config_list` and `cb_nodes` hints, see [`aggregator_ranks`])
/// and `cb_buffer_size`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Buffering {
    /// The aggregators' ranks, ascending (at least one).
    pub aggregators: Vec<usize>,
    /// Bytes of its domain an aggregator handles per round (at least 1).
    pub window: u64,
}

/// The aggregators of a communicator whose member `r` is the
/// `node_index[r]`-th member on its node: `per_node` on every node (the
/// first members of each), or, with `cb_nodes`, that many, taken first
/// from each node's first members, then from its second ones... (so they
/// spread over the nodes); at least one, at most every member. Ascending.
pub fn aggregator_ranks(
    node_index: &[u32],
    per_node: usize,
    cb_nodes: Option<usize>,
) -> Vec<usize> {
    let mut candidates: Vec<usize> = (0..node_index.len()).collect();
    candidates.sort_by_key(|&r| (node_index[r], r));
    let count = cb_nodes
        .unwrap_or_else(|| {
            node_index
                .iter()
                .filter(|&&i| (i as usize) < per_node)
                .count()
        })
        .clamp(1, node_index.len().max(1));
    let mut chosen: Vec<usize> = candidates.into_iter().take(count).collect();
    chosen.sort_unstable();
    chosen
}

/// How the file range is cut among the aggregators, and each domain into
/// windows (one per round).
struct Domains {
    lo: u64,
    step: u64,
    /// The aggregators' ranks: domain `d` is `aggregators[d]`'s.
    aggregators: Vec<usize>,
    size: usize,
    window: u64,
    /// Rounds every member takes part in: the windows of the longest
    /// domain.
    rounds: usize,
}

/// My pieces cut at window boundaries: per round, per aggregator rank,
/// (file offset, length, offset in my data).
type Cut = Vec<Vec<Vec<(u64, u64, u64)>>>;

impl Domains {
    /// The members' common range, from every member's lowest and highest
    /// byte, and the rounds its windows need; `None` when nobody accesses
    /// anything.
    fn agree(ch: &Channel, pieces: &[Piece], buffering: Buffering) -> MpiResult<Option<Domains>> {
        let lo = pieces.iter().map(|p| p.0).min().unwrap_or(u64::MAX);
        let hi = pieces.iter().map(|p| p.0 + p.1).max().unwrap_or(0);
        let all = super::gather_pairs(ch, lo, hi)?;
        let lo = all.iter().map(|p| p.0).min().unwrap_or(u64::MAX);
        let hi = all.iter().map(|p| p.1).max().unwrap_or(0);
        if lo >= hi {
            return Ok(None);
        }
        let mut aggregators = buffering.aggregators;
        aggregators.retain(|&r| r < ch.size());
        if aggregators.is_empty() {
            aggregators.push(0);
        }
        let step = (hi - lo).div_ceil(aggregators.len() as u64);
        let window = buffering.window.max(1);
        Ok(Some(Domains {
            lo,
            step,
            aggregators,
            size: ch.size(),
            window,
            // No domain is longer than `step`: every member derives the
            // same count from the agreed range.
            rounds: step.div_ceil(window) as usize,
        }))
    }

    /// The domain holding byte `offset`, the window (round) of that domain
    /// holding it, and where that window ends.
    fn cell_of(&self, offset: u64) -> (usize, usize, u64) {
        let d = (((offset - self.lo) / self.step) as usize).min(self.aggregators.len() - 1);
        let start = self.lo + d as u64 * self.step;
        let end = if d + 1 == self.aggregators.len() {
            u64::MAX
        } else {
            start + self.step
        };
        let k = (offset - start) / self.window;
        let window_end = start.saturating_add((k + 1).saturating_mul(self.window));
        (d, k as usize, window_end.min(end))
    }

    /// The rank of aggregator `d`.
    fn rank_of(&self, d: usize) -> usize {
        self.aggregators[d]
    }

    /// My pieces cut at window boundaries (see [`Cut`]).
    fn split(&self, pieces: &[Piece]) -> Cut {
        let mut out = vec![vec![Vec::new(); self.size]; self.rounds];
        let mut stream = 0;
        for &(mut offset, mut len) in pieces {
            while len > 0 {
                let (d, k, end) = self.cell_of(offset);
                let n = len.min(end - offset);
                out[k][self.rank_of(d)].push((offset, n, stream));
                (offset, len, stream) = (offset + n, len - n, stream + n);
            }
        }
        out
    }
}

fn put(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn word(b: &[u8], i: usize) -> u64 {
    u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().expect("8 bytes"))
}

/// A message's list of (offset, length) and the bytes after it.
fn pieces_of(msg: &[u8]) -> (Vec<Piece>, &[u8]) {
    if msg.is_empty() {
        return (Vec::new(), msg);
    }
    let n = word(msg, 0) as usize;
    let list = (0..n)
        .map(|i| (word(msg, 1 + 2 * i), word(msg, 2 + 2 * i)))
        .collect();
    (list, &msg[8 + 16 * n..])
}

fn header(list: &[(u64, u64, u64)]) -> Vec<u8> {
    let mut msg = Vec::with_capacity(8 + 16 * list.len());
    put(&mut msg, list.len() as u64);
    for &(offset, len, _) in list {
        put(&mut msg, offset);
        put(&mut msg, len);
    }
    msg
}

/// Collective write of `data` (this member's bytes in stream order) to
/// `pieces` of the file. `io` runs an aggregator's file accesses of one
/// round (it takes the atomic-mode lock).
pub fn write(
    ch: &Channel,
    fd: &std::fs::File,
    pieces: &[Piece],
    data: &[u8],
    buffering: Buffering,
    mut io: impl FnMut(&mut dyn FnMut() -> MpiResult) -> MpiResult,
) -> MpiResult {
    let Some(domains) = Domains::agree(ch, pieces, buffering)? else {
        return Ok(());
    };
    for round in domains.split(pieces) {
        let outgoing = round
            .into_iter()
            .map(|list| {
                if list.is_empty() {
                    return Vec::new();
                }
                let mut msg = header(&list);
                for &(_, len, at) in &list {
                    msg.extend_from_slice(&data[at as usize..(at + len) as usize]);
                }
                msg
            })
            .collect();
        let incoming = alltoallv_bytes(ch, outgoing)?;
        write_window(fd, &incoming, &mut io)?;
    }
    Ok(())
}

/// An aggregator writes what a round brought it: every piece with its
/// bytes, in file order, pieces that touch or overlap as one run (later
/// ranks win overlaps).
fn write_window(
    fd: &std::fs::File,
    incoming: &[Vec<u8>],
    io: &mut impl FnMut(&mut dyn FnMut() -> MpiResult) -> MpiResult,
) -> MpiResult {
    let mut all: Vec<(u64, &[u8])> = Vec::new();
    for msg in incoming {
        let (list, mut bytes) = pieces_of(msg);
        for (offset, len) in list {
            let (piece, rest) = bytes.split_at(len as usize);
            all.push((offset, piece));
            bytes = rest;
        }
    }
    if all.is_empty() {
        return Ok(());
    }
    all.sort_by_key(|p| p.0);
    io(&mut || {
        let mut run: Vec<u8> = Vec::new();
        let mut start = all[0].0;
        for &(offset, bytes) in &all {
            let end = start + run.len() as u64;
            if offset > end {
                write_run(fd, start, &run)?;
                run.clear();
                start = offset;
            }
            let at = (offset - start) as usize;
            if at + bytes.len() > run.len() {
                run.resize(at + bytes.len(), 0);
            }
            run[at..at + bytes.len()].copy_from_slice(bytes);
        }
        write_run(fd, start, &run)
    })
}

fn write_run(fd: &std::fs::File, offset: u64, run: &[u8]) -> MpiResult {
    fd.write_all_at(run, offset)
        .map_err(|e| super::io_error("write failed", &e))
}

/// Collective read into `data` (this member's bytes in stream order) from
/// `pieces` of the file. Bytes past the end of the file read as zeros;
/// the caller counts what was really there. `io` runs an aggregator's
/// file accesses of one round.
pub fn read(
    ch: &Channel,
    fd: &std::fs::File,
    pieces: &[Piece],
    data: &mut [u8],
    buffering: Buffering,
    mut io: impl FnMut(&mut dyn FnMut() -> MpiResult) -> MpiResult,
) -> MpiResult {
    let Some(domains) = Domains::agree(ch, pieces, buffering)? else {
        return Ok(());
    };
    for mine in domains.split(pieces) {
        let requests = mine
            .iter()
            .map(|list| {
                if list.is_empty() {
                    Vec::new()
                } else {
                    header(list)
                }
            })
            .collect();
        let incoming = alltoallv_bytes(ch, requests)?;
        let answers = serve_window(fd, &incoming, &mut io)?;
        let replies = alltoallv_bytes(ch, answers)?;
        for (list, reply) in mine.iter().zip(&replies) {
            let mut at = 0usize;
            for &(_, len, stream) in list {
                let len = len as usize;
                data[stream as usize..stream as usize + len].copy_from_slice(&reply[at..at + len]);
                at += len;
            }
        }
    }
    Ok(())
}

/// An aggregator serves the requests of a round: one sieved run at a
/// time; the answer to each member.
fn serve_window(
    fd: &std::fs::File,
    incoming: &[Vec<u8>],
    io: &mut impl FnMut(&mut dyn FnMut() -> MpiResult) -> MpiResult,
) -> MpiResult<Vec<Vec<u8>>> {
    let asked: Vec<Vec<Piece>> = incoming.iter().map(|m| pieces_of(m).0).collect();
    let mut spans: Vec<Piece> = asked.iter().flatten().copied().collect();
    if spans.is_empty() {
        return Ok(vec![Vec::new(); incoming.len()]);
    }
    spans.sort_unstable();
    let mut runs: Vec<(u64, Vec<u8>)> = Vec::new();
    for (offset, len) in spans {
        match runs.last_mut() {
            Some((start, buf)) if offset <= *start + buf.len() as u64 + SIEVE_GAP => {
                let end = (offset + len).max(*start + buf.len() as u64);
                buf.resize((end - *start) as usize, 0);
            }
            _ => runs.push((offset, vec![0u8; len as usize])),
        }
    }
    io(&mut || {
        for (start, buf) in runs.iter_mut() {
            super::access::read_fully(fd, buf, *start)?;
        }
        Ok(())
    })?;
    Ok(asked
        .iter()
        .map(|list| {
            let mut out = Vec::new();
            for &(offset, len) in list {
                let r = runs.partition_point(|(s, _)| *s <= offset) - 1;
                let (start, buf) = &runs[r];
                let at = (offset - start) as usize;
                out.extend_from_slice(&buf[at..at + len as usize]);
            }
            out
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn domains(window: u64, rounds: usize) -> Domains {
        Domains {
            lo: 100,
            step: 50,
            aggregators: vec![0, 2],
            size: 4,
            window,
            rounds,
        }
    }

    #[test]
    fn io_aggregators_spread_over_the_nodes() {
        // Two nodes of 3: ranks 0, 1, 2 and 3, 4, 5.
        let two_nodes = [0, 1, 2, 0, 1, 2];
        assert_eq!(aggregator_ranks(&two_nodes, 1, None), [0, 3]);
        assert_eq!(aggregator_ranks(&two_nodes, 2, None), [0, 1, 3, 4]);
        assert_eq!(
            aggregator_ranks(&two_nodes, usize::MAX, None),
            [0, 1, 2, 3, 4, 5]
        );
        // cb_nodes takes the first of each node first.
        assert_eq!(aggregator_ranks(&two_nodes, 1, Some(3)), [0, 1, 3]);
        assert_eq!(
            aggregator_ranks(&two_nodes, 1, Some(99)),
            [0, 1, 2, 3, 4, 5]
        );
        // Interleaved placement: ranks 0, 2, 4 on one node, 1, 3, 5 on the other.
        assert_eq!(aggregator_ranks(&[0, 0, 1, 1, 2, 2], 1, None), [0, 1]);
        // One node: one aggregator by default; never none.
        assert_eq!(aggregator_ranks(&[0, 1, 2, 3], 1, None), [0]);
        assert_eq!(aggregator_ranks(&[0, 1, 2, 3], 0, None), [0]);
    }

    #[test]
    fn io_two_phase_domains_cut_pieces_at_their_bounds() {
        let d = domains(1 << 20, 1);
        assert_eq!(d.rank_of(0), 0);
        assert_eq!(d.rank_of(1), 2);
        let cut = d.split(&[(120, 10), (140, 30), (190, 10)]);
        assert_eq!(cut.len(), 1);
        assert_eq!(cut[0][0], vec![(120, 10, 0), (140, 10, 10)]);
        assert_eq!(cut[0][2], vec![(150, 20, 20), (190, 10, 40)]);
        assert!(cut[0][1].is_empty() && cut[0][3].is_empty());
    }

    #[test]
    fn io_two_phase_windows_cut_domains_into_rounds() {
        // Domains [100, 150) and [150, ...), windows of 20 bytes: rounds
        // cover [100, 120), [120, 140), [140, 150) of the first and
        // [150, 170), [170, 190), [190, 210) of the second.
        let d = domains(20, 3);
        assert_eq!(d.cell_of(100), (0, 0, 120));
        assert_eq!(d.cell_of(145), (0, 2, 150));
        assert_eq!(d.cell_of(150), (1, 0, 170));
        assert_eq!(d.cell_of(199), (1, 2, 210));
        let cut = d.split(&[(110, 45), (195, 5)]);
        assert_eq!(cut[0][0], vec![(110, 10, 0)]);
        assert_eq!(cut[1][0], vec![(120, 20, 10)]);
        assert_eq!(cut[2][0], vec![(140, 10, 30)]);
        assert_eq!(cut[0][2], vec![(150, 5, 40)]);
        assert!(cut[1][2].is_empty());
        assert_eq!(cut[2][2], vec![(195, 5, 45)]);
        // Every byte once, in stream order.
        let total: u64 = cut.iter().flatten().flatten().map(|p| p.1).sum();
        assert_eq!(total, 50);
    }

    #[test]
    fn io_two_phase_messages_round_trip() {
        let mut msg = header(&[(5, 2, 0), (9, 1, 2)]);
        msg.extend_from_slice(b"abc");
        let (list, bytes) = pieces_of(&msg);
        assert_eq!(list, vec![(5, 2), (9, 1)]);
        assert_eq!(bytes, b"abc");
        assert_eq!(pieces_of(&[]).0, vec![]);
    }
}
