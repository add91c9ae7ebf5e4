//! Measurement: per-thread recorders, merging, and the Report.

mod arrivals;
mod availability;
mod recorder;
mod summary;
mod validity;

pub use arrivals::GapSample;
pub use availability::{GapTracker, Gaps};
pub use recorder::{new_histogram, CommandRecorder, Recorder, Timings};
// The report's types the layer's files name through `stats` (they live in `crate::report`).
pub(crate) use crate::report::percentile_ms;
pub use crate::report::{
    decode_histogram, percentile, Availability, Budget, ClientStats, EventReport, PhaseReport,
    RampStep, Report, ServerFacts, SloPoint, SloResult, Stats, TimelineRow, Unsent, Validity,
    SCHEMA_VERSION,
};
pub(crate) use summary::latency_of;
pub use summary::{node_stats, stats_of, summarize, timeline_row};
pub use validity::check_phase;
