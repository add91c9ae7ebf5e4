//! redis-benchmark: its command line read into a workload ([`args`], with valkey-benchmark's
//! `--dataset` files: [`dataset`]) and its output formats (default, `-q`, `--csv`, the live
//! line: [`report`]).

pub mod args;
pub mod dataset;
pub mod report;

pub use args::*;
pub use report::*;
