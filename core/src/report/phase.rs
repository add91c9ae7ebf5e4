//! The report of one phase, with its ramp steps, SLO search and server facts.

use super::{
    Availability, ClientStats, EventReport, Latency, NodeServer, ServerLoad, ServerSample,
};
use super::{Stats, TimelineRow, Unsent, Validity};
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;
use std::collections::BTreeMap;

/// Facts about the server, read once before the run (fields it refuses stay empty).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ServerFacts {
    /// The address.
    pub address: String,
    /// `redis_version` from `INFO server` (empty when the server does not give it).
    pub version: String,
    /// `redis_mode`: standalone, cluster, sentinel.
    pub mode: String,
    /// `os`.
    pub os: String,
    /// Relevant configuration: save, appendonly, appendfsync, maxmemory, maxmemory-policy,
    /// io-threads.
    pub config: BTreeMap<String, String>,
}

/// Results of one phase.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PhaseReport {
    /// Phase name.
    pub name: String,
    /// When its measurement began (the end of its warm-up), UNIX seconds: timeline `t` 0.
    #[serde(default)]
    pub started_at: f64,
    /// Whether it counts in the report's totals.
    pub measured: bool,
    /// With `--barrier` (phases in step across hosts): seconds this host waited for the
    /// others before the phase, from its arrival to the barrier's opening (the phase then
    /// starts half a second later, every host at once); not in `duration_s`. A merged
    /// report keeps the longest wait of its hosts. Left out without a barrier, and for a
    /// first phase started at `start_at`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub barrier_wait_s: Option<f64>,
    /// Measured seconds (after warm-up, until the last reply).
    pub duration_s: f64,
    /// Whether the phase was stopped before its end.
    pub interrupted: bool,
    /// All commands together.
    pub totals: Stats,
    /// Per command label (`GET`, `SET`, ...).
    pub commands: BTreeMap<String, Stats>,
    /// One row per interval.
    pub timeline: Vec<TimelineRow>,
    /// The client's own cost.
    pub client: ClientStats,
    /// The server's own figures per interval (INFO sampled on a side connection), aligned
    /// with `timeline`; empty when `observe.info` is off or INFO is refused.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub server_timeline: Vec<ServerSample>,
    /// Summary of `server_timeline` (in cluster mode, of `server_nodes`): peak and mean CPU,
    /// the 80% line, peak memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_load: Option<ServerLoad>,
    /// Cluster mode: the server samples of each node (`host:port`) instead of
    /// `server_timeline`; left out when not a cluster run.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub server_nodes: BTreeMap<String, NodeServer>,
    /// Open loop: the rate asked for (requests per second); compare with
    /// `totals.ops_per_sec` and the timeline's `ops_per_sec` for the rate achieved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_rate: Option<f64>,
    /// Cluster mode: per node (`host:port`), the requests it answered (the last node a
    /// redirected request went to) or failed on, and the redirects it answered; left out
    /// when not a cluster run.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub nodes: BTreeMap<String, Stats>,
    /// The longest stretch without a successful reply.
    #[serde(default)]
    pub availability: Availability,
    /// The fault drills of the phase, in spec order; left out when it has none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<EventReport>,
    /// With `load.rate_ramp` or `load.connections_ramp`: one summary per ramp step (the rate
    /// ramp's steps when both are given); left out otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<RampStep>,
    /// With `slo`: the search's result and its latency-versus-throughput curve.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slo: Option<SloResult>,
    /// A file of the phase's `output` that could not be written when the phase ended: the
    /// path and the operating system's error (the report is kept); left out otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_error: Option<String>,
    /// Facts about this phase's server, read before the run like the report's `server`,
    /// when the phase's target is not the first phase's; left out otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<ServerFacts>,
    /// Open loop: measured requests due but never sent when the phase stopped (the server
    /// or the client fell behind); left out when every request due was sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unsent: Option<Unsent>,
    /// Open loop: the client's own part of the send lag (ms): from the moment a request
    /// could be written (its intended send time, or later, when its connection's pipeline had
    /// room again or the connection was back after a failure) to its write. A slow server
    /// fills pipelines and raises `send_lag_ms`, not this. Cluster mode: its send lag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_lag_ms: Option<Latency>,
    /// Whether to trust this phase's figures, check by check (its own checks only; a phase
    /// not measured has none).
    #[serde(default)]
    pub validity: Validity,
    /// A trace replay (`replay`): what was replayed, what was skipped and why, and how
    /// well the recorded schedule was kept; left out otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<ReplayFidelity>,
    /// The normalized settings of this phase, secrets redacted.
    pub workload: Json,
    /// With `output.client_stats`: each connection's measured requests per command and
    /// second, for memtier's per-client files. Not part of the report's JSON.
    #[serde(skip)]
    #[cfg_attr(feature = "schema", schemars(skip))]
    pub client_seconds: Vec<ClientSecond>,
}

/// How faithfully a trace was replayed (a phase's `replay`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ReplayFidelity {
    /// The trace file.
    pub file: String,
    /// Its format: `respload`, `monitor` or `twitter`.
    pub format: String,
    /// Commands the trace holds (malformed lines not counted).
    pub traced: u64,
    /// Requests the replay was to send: the trace's commands not skipped (and a `SELECT`
    /// before a command on another database than its connection's), every pass.
    pub planned: u64,
    /// Requests sent and answered (or failed) in the measured replay.
    pub replayed: u64,
    /// Commands of the trace not replayed, by reason (`dropped: FLUSHALL`: dropped by
    /// default or by `replay.drop`/`keep`), per pass.
    pub skipped: std::collections::BTreeMap<String, u64>,
    /// Malformed lines of the trace (not replayed).
    pub malformed: u64,
    /// The first malformed lines: `line N: reason`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub malformed_lines: Vec<String>,
    /// The speed (recorded offsets divided by it).
    pub speed: f64,
    /// The trace's own mean rate (requests per second over its span).
    pub trace_rate: f64,
    /// The mean rate replayed at (the trace's times the speed).
    pub rate: f64,
    /// Passes over the trace.
    pub loops: u32,
    /// Connections: one per recorded client, or `replay.connections`.
    pub connections: u32,
    /// Whether each recorded client had a connection of its own.
    pub per_client: bool,
    /// With the trace's clients split over hosts (`replay.share`, `--shard`): how many
    /// hosts shared it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hosts: Option<u32>,
    /// Commands of the trace the other hosts replayed, per pass (0 when one host replayed
    /// it all, or in a report merged from every host).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub others: u64,
    /// How the recorded schedule was kept: the send lag (ms) from each request's recorded
    /// instant (scaled by the speed) to its write.
    pub schedule_ms: Option<Latency>,
    /// The keys written before the replay (read by the trace before it wrote them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefill: Option<PrefillReport>,
}

/// The prefill of a replay: keys the trace reads before writing them, written first.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct PrefillReport {
    /// Keys written (with SET).
    pub keys: u64,
    /// SETs the server refused (error replies).
    pub errors: u64,
    /// Seconds the prefill took.
    pub duration_s: f64,
    /// Keys read first by commands of other types (not strings), not prefilled: by command.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub not_prefilled: std::collections::BTreeMap<String, u64>,
}

/// One step of a ramp: its part of the timeline, summarized.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct RampStep {
    /// Seconds since the phase's measurement began, at the step's start.
    pub start_s: f64,
    /// Measured seconds in the step (shorter for a step the run cut short; the last step
    /// runs to the end of the phase).
    pub duration_s: f64,
    /// Open loop: the total rate asked for in the step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_rate: Option<f64>,
    /// Most connections open at once in the step.
    pub connections: u32,
    /// Requests finished in the step.
    pub ops: u64,
    /// `ops / duration_s`: the rate achieved.
    pub ops_per_sec: f64,
    /// Failed requests in the step.
    pub errors: u64,
    /// `errors / ops`.
    pub error_rate: f64,
    /// Latency of the step's replies (ms).
    pub latency_ms: Latency,
    /// Open loop only: service time of the step's replies (ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_ms: Option<Latency>,
}

/// The outcome of an SLO search.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SloResult {
    /// The percentile held to the budget (99: p99).
    pub percentile: f64,
    /// The latency budget for it (ms).
    pub budget_ms: f64,
    /// The highest error rate allowed.
    pub max_error_rate: f64,
    /// The lowest achieved rate allowed, as a fraction of the rate asked for.
    pub min_achieved: f64,
    /// The highest rate asked for that met every condition; `null` when none did.
    pub best_rate: Option<f64>,
    /// Every rate tried, sorted by rate: plot `achieved_rate` against `latency_ms.p99` (or
    /// `percentile_ms`) for the latency-versus-throughput curve.
    pub curve: Vec<SloPoint>,
}

/// One rate tried by an SLO search.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct SloPoint {
    /// Order in which the rates were tried (0 first).
    pub run: u32,
    /// The total rate asked for (requests per second).
    pub rate: f64,
    /// The rate achieved: requests finished per measured second.
    pub achieved_rate: f64,
    /// Measured seconds.
    pub duration_s: f64,
    /// Requests finished.
    pub ops: u64,
    /// Failed requests.
    pub errors: u64,
    /// `errors / ops`.
    pub error_rate: f64,
    /// The searched percentile's latency (ms), from intended send times.
    pub percentile_ms: f64,
    /// Latency summary (ms), from intended send times.
    pub latency_ms: Latency,
    /// Service time summary (ms), from the actual writes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_ms: Option<Latency>,
    /// Whether the step met the percentile budget, the error bound and the achieved-rate
    /// bound.
    pub met: bool,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One connection's measured requests of one command within one second of a phase
/// (`output.client_stats`, memtier's per-client statistics).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClientSecond {
    /// The second, from the start of measurement (0 for the first).
    pub second: u64,
    /// The worker thread of the connection.
    pub thread: u32,
    /// The connection's number within its thread (0 for the first).
    pub client: u32,
    /// The command's index (its row in the report's `commands`).
    pub command: u32,
    /// Requests finished in that second.
    pub counts: ClientCounts,
}

/// What one connection finished of one command within one interval.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClientCounts {
    /// Requests finished (error replies included).
    pub ops: u64,
    /// Their latencies added up, in nanoseconds.
    pub latency_ns: u64,
    /// Bytes written for them.
    pub bytes_sent: u64,
    /// Bytes of their replies.
    pub bytes_received: u64,
    /// Reading commands: replies with a value.
    pub hits: u64,
    /// Reading commands: replies without one.
    pub misses: u64,
    /// Error replies.
    pub errors: u64,
}

impl ClientCounts {
    /// Add `other`'s counts to these.
    pub fn add(&mut self, other: &ClientCounts) {
        self.ops += other.ops;
        self.latency_ns += other.latency_ns;
        self.bytes_sent += other.bytes_sent;
        self.bytes_received += other.bytes_received;
        self.hits += other.hits;
        self.misses += other.misses;
        self.errors += other.errors;
    }
}
