//! Server-side observation.

mod sampler;
mod server_info;

pub use sampler::{NodeServer, Sampler, ServerLoad, ServerSample};
pub use server_info::{parse_info, read_facts};
