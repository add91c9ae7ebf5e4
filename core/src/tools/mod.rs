//! Other benchmark tools, each peer's command line and output formats together:
//! memtier_benchmark ([`memtier`]) and redis-benchmark ([`redis_benchmark`]). Each front end
//! reads the tool's own options, unchanged, into a respload workload plus the settings its
//! report format needs, and prints respload's report the way that tool does, so that scripts
//! written for the tool read respload's output. `docs/compat.md` has every option.

pub mod command_line;
pub mod memtier;
pub mod redis_benchmark;
