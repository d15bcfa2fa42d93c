//! The PMI protocols: the wire formats shared by the client (in the
//! library) and the server (in mpiexec), PMI-1 ("simple", `wire`) and
//! PMI-2 (`wire2`), and the library's client, which speaks either
//! (`client`, with the PMI-2 requests in `client2`; `OXMPI_PMI` chooses);
//! the PMIx client (`pmix`, through the launcher's PMIx library); and the
//! one interface over both that the library uses (`launcher`).
pub mod client;
mod client2;
#[cfg(test)]
mod fuzz;
pub mod launcher;
pub mod pmix;
pub mod wire;
pub mod wire2;
