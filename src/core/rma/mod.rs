//! One-sided communication (MPI 4.1 chapter 12): windows, the operations
//! on them, and their synchronization.
//!
//! Design: an operation on memory this process maps (its own window
//! memory, a node's `MPI_Win_allocate_shared` segment, the node's
//! `MPI_Win_allocate` segments) is done in place by the origin: a small
//! put or get is a store or a load, an accumulate a read-modify-write
//! under the memory's lock ([`window::DirectTarget`]); it is complete,
//! at the target too, when the call returns. A put or get on
//! `MPI_Win_create` memory of a rank of this node copies straight into or
//! out of it with `process_vm_writev`/`readv` ([`window::SingleCopyTarget`];
//! small puts wait in a batch until the next synchronization, see
//! `origin::PutBatch`). Every other operation is an active message. A window owns a private
//! communicator (a dup of the one it was created on), so its traffic never
//! meets the program's. An origin sends each `MPI_Put`, `MPI_Get`,
//! accumulate, lock request or synchronization notice as one
//! point-to-point message to the target ([`wire`]); the target's progress
//! engine takes them off its window's context in arrival order per origin
//! and applies them to the window memory ([`target`]), answering with data
//! or acknowledgements on tags the origin posted receives for, so the data
//! of a get lands straight in the origin's buffer. Because one origin's
//! requests to one target are applied in order, an unlock, flush or PSCW
//! complete notice that follows operations is acknowledged only once they
//! are applied: remote completion needs no counting. `MPI_Win_fence`
//! counts instead (each rank learns how many operations target it, waits
//! for them, then a barrier closes the epoch).
//!
//! Atomicity: every accumulate (`MPI_Accumulate`, `MPI_Get_accumulate`,
//! `MPI_Fetch_and_op`, `MPI_Compare_and_swap`) on memory other processes
//! map holds that memory's lock word in shared memory for its whole
//! read-modify-write, whether an origin applies it in place or the target
//! applies a message; on memory nobody else maps (`MPI_Win_create`,
//! dynamic windows, ranks of other nodes) the target applies one message
//! at a time under its runtime lock. Either way each accumulate is atomic
//! per element (per call, in fact) with respect to every other, from any
//! origin: the per-window lock the standard allows. Accumulates from one
//! origin to one target stay in order (`accumulate_ordering`): to a
//! target it maps an origin applies all of them in place, to any other
//! all of them are messages, applied in arrival order.
//!
//! Progress: the target applies requests whenever this process makes
//! progress (any MPI call that waits or tests). While a window exists, the
//! collective worker thread also makes progress (see [`progress`]), so a
//! target that computes outside MPI still serves passive-target
//! operations within about a millisecond.
//!
//! Memory model: `MPI_WIN_UNIFIED` on every path. Updates are applied to
//! the window memory itself (there is no separate public copy), so a
//! completed operation is visible to local loads after `MPI_Win_sync`.
//!
//! Windows belong to the epoch that created them; the end of that epoch
//! frees any the program left (an erroneous program: MPI requires
//! `MPI_Win_free` before finalize).
pub mod atomics;
pub mod create;
pub mod memory;
pub mod origin;
pub mod progress;
pub mod sync;
pub mod target;
pub mod window;
pub mod wire;

pub use window::Window;
