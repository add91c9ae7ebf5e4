//! Measurement: per-thread recorders, merging, and the Report.

mod arrivals;
mod availability;
mod recorder;
mod summary;
mod validity;

pub use arrivals::{anderson_darling_exponential, GapSample, AD_CRITICAL_1PCT};
pub use availability::{Gap, GapTracker, Gaps};
pub use recorder::{
    new_histogram, CommandRecorder, ErrorKinds, Recorder, SuccessMarks, Timings, MARK_BUCKET_NS,
    MAX_LATENCY_NS, SIGNIFICANT_DIGITS,
};
// The report's types live in `crate::report`; kept here so existing paths still work.
pub(crate) use crate::report::percentile_ms;
pub use crate::report::{
    check_report, decode_histogram, encode_histogram, percentile, validity_warning, Availability,
    Budget, ClientStats, EventReport, IntervalLatency, Latency, Limits, PhaseReport, RampStep,
    Report, ServerFacts, SloPoint, SloResult, Stats, TimelineRow, Unsent, Validity, ValidityCheck,
    SCHEMA_VERSION,
};
pub(crate) use summary::latency_of;
pub use summary::{node_stats, stats_of, summarize, timeline_row};
pub use validity::check_phase;
