//! The report: every figure a run's JSON holds, in one schema for Rust, Python, Node and the
//! file, with reading, writing, merging, joining and comparing. A leaf layer: it uses no engine, network or spec
//! module (checked by `core/tests/layers.rs`), so tools that only read reports need nothing
//! else.

mod assemble;
mod availability;
mod check;
mod compare;
mod file;
mod histogram;
pub mod html;
mod join;
mod lost;
mod merge;
#[cfg(feature = "schema")]
mod names;
mod parallel;
mod phase;
#[cfg(feature = "schema")]
mod schema;
mod server;
mod sparse;
mod stats;
mod thresholds;
mod validity;

pub use availability::{Availability, EventReport};
pub use check::{
    check_report, holds, is_floor, measured, unknown_limit, validity_warning, Budget, Limits,
    LIMITS,
};
pub use compare::{Comparison, ComparisonRow, Limit, ALL, NOISE_FLOOR};
pub use file::ReportSource;
pub use histogram::{decode_histogram, encode_histogram, percentile, percentile_distribution};
pub(crate) use histogram::{percentile_ms, NS_PER_MS};
pub use lost::HOST_LOST;
pub use merge::{HostReport, HostRow, ShardOf};
#[cfg(feature = "schema")]
pub use names::bindings_schema;
pub use phase::{
    ClientCounts, ClientSecond, PhaseReport, PrefillReport, RampStep, ReplayFidelity, ServerFacts,
    SloPoint, SloResult,
};
#[cfg(feature = "schema")]
pub(crate) use schema::field_order;
#[cfg(feature = "schema")]
pub use schema::json_schema;
pub use server::{NodeServer, ServerLoad, ServerSample, CPU_LIMIT_PERCENT};
pub use stats::{ClientStats, IntervalLatency, Latency, Snapshot, Stats, TimelineRow, Transport};
pub use thresholds::Threshold;
pub use validity::{Unsent, Validity, ValidityCheck};

use file::seed_of_json;
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;
use std::collections::BTreeMap;

/// Version of the report schema; bumped when a field changes meaning or goes away.
pub const SCHEMA_VERSION: u32 = 2;

/// The result of a run.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Report {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The respload version that ran it.
    pub respload_version: String,
    /// Start of the run, seconds since the Unix epoch.
    pub started_at: f64,
    /// Measured seconds, summed over measured phases.
    pub duration_s: f64,
    /// Whether the run was stopped early (Ctrl-C, `stop()`, an abort signal, or a phase
    /// that failed: see `error`).
    pub interrupted: bool,
    /// Why the run stopped before its last phase: a phase after the first failed, in practice
    /// because it could not start (its server went away after the earlier phases ran; their
    /// report is kept), with the phase's name and the error. Left out otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Every threshold held (`thresholds`) and the run was complete: not interrupted, no
    /// phase failed, not stopped by a threshold ([`Report::verdict`]). True for a complete
    /// run without thresholds.
    #[serde(default)]
    pub passed: bool,
    /// The spec's `[thresholds]` (the run's, then each phase's), each with the figure it was
    /// checked against and its verdict; left out when the spec has none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thresholds: Vec<Threshold>,
    /// Why a threshold with `abort_on_fail` stopped the run early: its name, figure and
    /// limit, and when. The phases after it did not run. Left out otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_by: Option<String>,
    /// The seed of the request stream (given, or drawn and recorded here to reproduce it).
    #[serde(deserialize_with = "seed_of_json")]
    pub seed: u64,
    /// Measured phases together.
    pub totals: Stats,
    /// Measured phases together, per command label.
    pub commands: BTreeMap<String, Stats>,
    /// Cluster mode: measured phases together, per node (`host:port`); left out when not a
    /// cluster run.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub nodes: BTreeMap<String, Stats>,
    /// Measured phases' timelines, one after the other (`t` keeps counting).
    pub timeline: Vec<TimelineRow>,
    /// The client's own cost over all phases.
    pub client: ClientStats,
    /// Facts about the server.
    pub server: ServerFacts,
    /// Measured phases' server samples, one after the other (`t` keeps counting).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server_timeline: Vec<ServerSample>,
    /// Summary of `server_timeline` (in cluster mode, of `server_nodes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_load: Option<ServerLoad>,
    /// Measured phases: the longest stretch without a successful reply in any of them
    /// (`longest_gap_at_s` on the run's timeline, as `timeline[].t`).
    #[serde(default)]
    pub availability: Availability,
    /// Cluster mode: measured phases' server samples per node (`t` keeps counting).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub server_nodes: BTreeMap<String, NodeServer>,
    /// The normalized workload, secrets redacted.
    pub workload: Json,
    /// Every phase, measured or not, in order.
    pub phases: Vec<PhaseReport>,
    /// The SLO search's result (of the last phase that searched); left out without one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slo: Option<SloResult>,
    /// Measured phases: requests due but never sent (as `phases[].unsent`), together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unsent: Option<Unsent>,
    /// Measured phases: the client's own part of the send lag (as `phases[].client_lag_ms`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_lag_ms: Option<Latency>,
    /// Whether to trust the report: every measured phase's checks (`phases[].validity`).
    #[serde(default)]
    pub validity: Validity,
    /// The machine that ran it (its host name); empty in a merged report.
    #[serde(default)]
    pub host: String,
    /// A shard's report (`--shard I/N`): which share of which workload it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardOf>,
    /// The instant the run was asked to start at (`--start-at`), UNIX seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_at: Option<f64>,
    /// How late the first request went out after `start_at` (ms; negative if early).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_skew_ms: Option<f64>,
    /// A merged report ([`Report::merge`]): the hosts whose reports it merged, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<HostReport>,
}
