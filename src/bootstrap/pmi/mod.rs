//! The PMI protocols: the wire formats shared by the client (in the
//! library) and the server (in mpiexec), PMI-1 ("simple", `wire`) and
//! PMI-2 (`wire2`), and the library's client, which speaks either
//! (`client`, with the PMI-2 requests in `client2`; `OXMPI_PMI` chooses).
pub mod client;
mod client2;
#[cfg(test)]
mod fuzz;
pub mod wire;
pub mod wire2;
