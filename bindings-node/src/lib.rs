//! Node.js bindings of respload: conversions, async bridging and error mapping only.
//!
//! Workloads and capture specs come in as JSON text (the canonical snake_case spec) and
//! reports, snapshots, trace records, models and capture reports go out as JSON text; the
//! JavaScript layer (`bindings-node/index.js`) turns them into typed objects. Every rule about
//! specs, runs, reports and traces lives in the core crate.

#![deny(clippy::all)]

mod cli;
mod error;
mod progress;
mod report;
mod runner;
mod testing;
mod trace;
mod workload;

pub use cli::Cli;
pub use progress::progress_line;
pub use report::{
    check_report, compare_reports, hdr_log, load_report, merge_reports, percentile_distribution,
    reports_html, validity_warning,
};
pub use runner::NativeRunner;
pub use testing::{start_servers, TestClient, TestServer};
pub use trace::{fit_trace_model, NativeCapture, NativeTraceFile};
pub use workload::{
    load_spec, memtier_spec, normalize_spec, parse_start_at, redacted_spec, redis_benchmark_spec,
    shard_spec,
};
