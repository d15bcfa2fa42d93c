//! PMI-1 ("simple") protocol: the wire format shared by the client (in the
//! library) and the server (in mpiexec).
pub mod wire;
