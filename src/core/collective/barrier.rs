//! `MPI_Barrier` / `MPI_Ibarrier`: the dissemination barrier, ceil(log2 p)
//! rounds of empty messages; in round k each member signals rank + 2^k and
//! waits for rank - 2^k, so after the last round everyone has heard,
//! directly or not, from everyone.
use super::call::Call;
use crate::core::error::MpiResult;

pub async fn barrier(call: Call) -> MpiResult {
    let (p, me) = (call.size(), call.rank());
    let mut distance = 1;
    while distance < p {
        call.exchange((me + distance) % p, &[], (me + p - distance) % p, &mut [])
            .await?;
        distance *= 2;
    }
    Ok(())
}
