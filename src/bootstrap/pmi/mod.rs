//! PMI-1 ("simple") protocol: the wire format shared by the client (in the
//! library) and the server (in mpiexec), and the library's client.
pub mod client;
#[cfg(test)]
mod fuzz;
pub mod wire;
