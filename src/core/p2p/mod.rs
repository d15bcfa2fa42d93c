//! Point-to-point communication: the frame format, requests, user buffers
//! and the engine that matches and completes them. The engine's protocols
//! are in `engine`; the request kinds built around them have a file each
//! (`persistent`, `bsend`, `sendrecv`, `matched_probe`, `generalized`);
//! `flow_control` bounds what unexpected eager messages take at a receiver.
pub mod bsend;
pub mod engine;
pub mod flow_control;
pub mod frame;
#[cfg(test)]
mod fuzz;
pub mod generalized;
mod matched_probe;
mod outbox;
pub mod partitioned;
mod persistent;
pub mod receive_lane;
pub mod request;
mod sendrecv;
pub mod user_buffer;
