//! The MPI tool information interface's contents (MPI 4.1 chapter 15):
//! the control variables (one per knob), the performance variables (cheap
//! counters the engines keep), the categories grouping them, the
//! enumerations of enumerated knobs, and the performance-variable sessions
//! and handles. The tables are fixed when the library is built, so an
//! index names the same variable for the whole life of the process (and
//! `MPI_T_category_changed` never changes). The abi layer
//! (`abi::tool`) turns C arguments into calls here.
pub mod categories;
pub mod cvars;
pub mod enums;
pub mod pvars;
pub mod sessions;
pub mod text;
