//! `MPI_Alltoall`, `MPI_Alltoallv`, `MPI_Alltoallw`.
//!
//! - Short equal blocks: Bruck's algorithm, ceil(log2 p) rounds, each
//!   moving about half the data (MPICH's choice for blocks up to 256
//!   bytes).
//! - Otherwise: every member posts its receives and sends to all others,
//!   a window of peers at a time, in a shifted order (member r sends to
//!   r + 1, r + 2, ... and receives from r - 1, r - 2, ...) so no member is
//!   everyone's first target.
use super::buffer::Buffer;
use super::call::Call;
use super::layout::{pack, pack_into, Blocks};
use super::tree::carve;
use crate::core::error::{MpiError, MpiResult};
use crate::core::p2p::user_buffer::UserBuffer;
use crate::mpi_abi::constants::MPI_ERR_TRUNCATE;

/// Blocks up to this size use Bruck's algorithm (with 4 or more members).
const BRUCK_MAX_BLOCK: usize = 256;
/// Peers in flight at once in the posted exchange.
const WINDOW: usize = 32;

/// `send` is `None` for `MPI_IN_PLACE` (the data is in `recv`); both hold
/// `p` blocks. A member whose send blocks differ in size from its receive
/// blocks (an erroneous program: it sends one of them to itself) takes
/// part with its send blocks cut or padded to the receive size, so that
/// nobody waits for what it would not send, and returns
/// `MPI_ERR_TRUNCATE`.
pub async fn alltoall(call: Call, send: Option<UserBuffer>, recv: UserBuffer) -> MpiResult {
    let p = call.size();
    let n = recv.len() / p;
    let source = send.as_ref().unwrap_or(&recv);
    let sent = source.len() / p;
    let outgoing = if sent == n {
        pack(source)
    } else {
        let mut out = Buffer::scratch(p * n);
        for (i, block) in out.chunks_mut(n.max(1)).enumerate() {
            let fits = sent.min(block.len());
            source.pack(i * sent, &mut block[..fits]);
        }
        out
    };
    let blocks = Blocks::equal(p, n);
    let mut incoming = Buffer::scratch(p * n);
    if n <= BRUCK_MAX_BLOCK && p >= 4 {
        bruck(&call, &outgoing, &mut incoming, n).await?;
    } else {
        posted(&call, &outgoing, &blocks, &mut incoming, &blocks).await?;
    }
    recv.unpack(0, &incoming);
    if sent != n {
        return Err(MpiError::new(
            MPI_ERR_TRUNCATE,
            format!(
                "MPI_Alltoall: this member sends blocks of {sent} bytes but receives blocks of {n}"
            ),
        ));
    }
    Ok(())
}

/// Alltoallv and alltoallw: one buffer per peer on each side; `sends` is
/// `None` for `MPI_IN_PLACE` (the data is in `recvs`).
pub async fn alltoallw(
    call: Call,
    sends: Option<Vec<UserBuffer>>,
    recvs: Vec<UserBuffer>,
) -> MpiResult {
    let sources = sends.as_ref().unwrap_or(&recvs);
    let out_blocks = Blocks::from_sizes(sources.iter().map(|s| s.len()));
    let mut outgoing = Buffer::with_capacity(out_blocks.total());
    for s in sources {
        pack_into(s, 0, s.len(), &mut outgoing);
    }
    let in_blocks = Blocks::from_sizes(recvs.iter().map(|r| r.len()));
    let mut incoming = Buffer::scratch(in_blocks.total());
    posted(&call, &outgoing, &out_blocks, &mut incoming, &in_blocks).await?;
    for (i, r) in recvs.iter().enumerate() {
        r.unpack(0, &incoming[in_blocks.range(i)]);
    }
    Ok(())
}

/// Block i of `outgoing` to member i, block i of `incoming` from member i.
async fn posted(
    call: &Call,
    outgoing: &[u8],
    out_blocks: &Blocks,
    incoming: &mut [u8],
    in_blocks: &Blocks,
) -> MpiResult {
    let (p, me) = (call.size(), call.rank());
    let own = &outgoing[out_blocks.range(me)];
    // A block to itself larger than its receive block (erroneous): what
    // fits is kept and the exchange with the others goes on (they wait
    // for this member's blocks), then the error is returned.
    let too_large = own.len() > in_blocks.size(me);
    let fits = own.len().min(in_blocks.size(me));
    incoming[in_blocks.range(me).start..][..fits].copy_from_slice(&own[..fits]);
    let mut first = 1;
    while first < p {
        let last = (first + WINDOW).min(p);
        let sources: Vec<usize> = (first..last).map(|i| (me + p - i) % p).collect();
        let ranges: Vec<_> = sources.iter().map(|&s| in_blocks.range(s)).collect();
        let mut ops = Vec::new();
        for (&source, piece) in sources.iter().zip(carve(incoming, &ranges)) {
            ops.push(call.post_recv(source, piece)?);
        }
        for i in first..last {
            let dest = (me + i) % p;
            ops.push(call.post_send(dest, &outgoing[out_blocks.range(dest)])?);
        }
        call.complete(ops).await?;
        first = last;
    }
    if too_large {
        return Err(MpiError::new(
            MPI_ERR_TRUNCATE,
            "this member's block to itself is larger than its receive block",
        ));
    }
    Ok(())
}

/// Bruck's all-to-all on blocks of `n` bytes: rotate so position i holds
/// the block for rank + i; in the round for bit b, send the positions with
/// bit b set to rank + b and take the same positions from rank - b; a
/// block moves by its position in total, landing at its destination at
/// position (destination - source).
async fn bruck(call: &Call, outgoing: &[u8], incoming: &mut [u8], n: usize) -> MpiResult {
    let (p, me) = (call.size(), call.rank());
    let mut tmp = Buffer::scratch(p * n);
    for i in 0..p {
        let src = (me + i) % p;
        tmp[i * n..(i + 1) * n].copy_from_slice(&outgoing[src * n..(src + 1) * n]);
    }
    let mut bit = 1;
    while bit < p {
        let positions: Vec<usize> = (0..p).filter(|i| i & bit != 0).collect();
        let mut out = Buffer::with_capacity(positions.len() * n);
        for &i in &positions {
            out.extend_from_slice(&tmp[i * n..(i + 1) * n]);
        }
        let mut into = Buffer::scratch(out.len());
        call.exchange((me + bit) % p, &out, (me + p - bit) % p, &mut into)
            .await?;
        for (k, &i) in positions.iter().enumerate() {
            tmp[i * n..(i + 1) * n].copy_from_slice(&into[k * n..(k + 1) * n]);
        }
        bit <<= 1;
    }
    for j in 0..p {
        let i = (me + p - j) % p;
        incoming[j * n..(j + 1) * n].copy_from_slice(&tmp[i * n..(i + 1) * n]);
    }
    Ok(())
}
