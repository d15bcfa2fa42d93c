//! `MPI_Scan` and `MPI_Exscan`: recursive doubling, log2 p rounds. Each
//! member keeps the reduction of its aligned group so far (`partial`) and
//! of the ranks up to itself (`result`); in round k it exchanges `partial`
//! with rank ^ 2^k. What comes from below is the left operand, so the
//! order of a non-commutative operation is kept.
use super::buffer::Buffer;
use super::call::Call;
use super::layout::pack;
use crate::core::error::MpiResult;
use crate::core::op::Reduction;
use crate::core::p2p::user_buffer::UserBuffer;

/// Inclusive (`MPI_Scan`) or exclusive (`MPI_Exscan`) prefix reduction.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Prefix {
    Inclusive,
    Exclusive,
}

/// `contribution` is the input (the receive buffer for `MPI_IN_PLACE`).
/// For the exclusive scan rank 0's `result` is left alone.
pub async fn scan(
    call: Call,
    contribution: UserBuffer,
    result: UserBuffer,
    red: Reduction,
    prefix: Prefix,
) -> MpiResult {
    let (p, me) = (call.size(), call.rank());
    let own = pack(&contribution);
    let mut partial = own.clone();
    let mut below: Option<Buffer> = None;
    let mut incoming = Buffer::scratch(partial.len());
    let mut mask = 1;
    while mask < p && !partial.is_empty() {
        let partner = me ^ mask;
        if partner < p {
            call.exchange(partner, &partial, partner, &mut incoming)
                .await?;
            if partner < me {
                red.combine(&incoming, &mut partial);
                match &mut below {
                    Some(b) => red.combine(&incoming, b),
                    None => below = Some(incoming.clone()),
                }
            } else if red.is_commutative() {
                red.combine(&incoming, &mut partial);
            } else {
                red.combine(&partial, &mut incoming);
                std::mem::swap(&mut partial, &mut incoming);
            }
        }
        mask <<= 1;
    }
    match prefix {
        Prefix::Exclusive => {
            if let Some(b) = &below {
                result.unpack(0, b);
            }
        }
        Prefix::Inclusive => {
            // This member's own value, with everything below it in front.
            let mut own = own;
            if let Some(b) = &below {
                red.combine(b, &mut own);
            }
            result.unpack(0, &own);
        }
    }
    Ok(())
}
