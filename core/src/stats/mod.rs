//! Measurement: per-thread recorders, merging, and the Report.

mod arrivals;
mod availability;
mod check;
mod recorder;
mod report;
mod validity;

pub use arrivals::{anderson_darling_exponential, GapSample, AD_CRITICAL_1PCT};
pub use availability::{Availability, EventReport, Gap, GapTracker, Gaps};
pub use check::{check_report, validity_warning, Budget, Limits};
pub use recorder::{
    new_histogram, CommandRecorder, ErrorKinds, Recorder, SuccessMarks, Timings, MARK_BUCKET_NS,
    MAX_LATENCY_NS, SIGNIFICANT_DIGITS,
};
pub use report::{
    decode_histogram, encode_histogram, node_stats, percentile, stats_of, summarize, timeline_row,
    ClientStats, IntervalLatency, Latency, PhaseReport, RampStep, Report, ServerFacts, SloPoint,
    SloResult, Stats, TimelineRow, SCHEMA_VERSION,
};
pub(crate) use report::{latency_of, percentile_ms};
pub use validity::{check_phase, Unsent, Validity, ValidityCheck};
