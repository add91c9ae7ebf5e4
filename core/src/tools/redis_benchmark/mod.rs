//! redis-benchmark: its command line read into a workload (`args`, with valkey-benchmark's
//! `--dataset` files: [`dataset`]) and its output formats (default, `-q`, `--csv`, the live
//! line: `report`); the private modules' items are reached here, at
//! `tools::redis_benchmark::` (one path each).

mod args;
pub mod dataset;
mod report;

pub use args::*;
pub use report::*;
