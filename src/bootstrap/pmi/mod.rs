//! The PMI protocols: the wire formats shared by the client (in the
//! library) and the server (in mpiexec), PMI-1 ("simple", `wire`) and
//! PMI-2 (`wire2`), and the library's client.
pub mod client;
#[cfg(test)]
mod fuzz;
pub mod wire;
pub mod wire2;
