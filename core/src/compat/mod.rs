//! Command lines of other benchmark tools, read unchanged and turned into respload workloads.

pub mod memtier;
pub mod words;
