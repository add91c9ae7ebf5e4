//! Server-side observation.

mod server_info;

pub use server_info::{parse_info, read_facts};
