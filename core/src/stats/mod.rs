//! Measurement: per-thread recorders, merging, and the Report.

mod arrivals;
mod availability;
mod recorder;
mod summary;
mod validity;

pub use arrivals::GapSample;
pub use availability::{GapTracker, Gaps};
pub use recorder::{new_histogram, CommandRecorder, Recorder, Timings};
pub(crate) use summary::latency_of;
pub use summary::{node_stats, stats_of, summarize, timeline_row};
pub use validity::check_phase;
