//! Point-to-point communication: the frame format, requests, user buffers
//! and the engine that matches and completes them.
pub mod bsend;
pub mod engine;
pub mod frame;
pub mod generalized;
pub mod request;
pub mod user_buffer;
