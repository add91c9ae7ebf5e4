//! memtier_benchmark: its command line read into a workload ([`args`]) and its report
//! formats (text, JSON, HdrHistogram files: [`report`]).

pub mod args;
pub mod report;

pub use args::*;
pub use report::*;
