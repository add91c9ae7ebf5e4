//! RESP wire protocol: command encoding and reply framing, and Redis Cluster's key slots.
//!
//! Both halves are built for the load-generator hot path: the encoder appends
//! into a caller-owned buffer and the framer only classifies replies, so
//! neither allocates per command or per reply.

pub mod encode;
mod framer;
pub mod request;
pub mod slot;

pub use framer::{Framer, ProtocolError, Reply};
