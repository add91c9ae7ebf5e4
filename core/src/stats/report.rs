//! The Report: one schema for Rust, Python, Node and the JSON file.

use super::availability::{Availability, EventReport};
use super::recorder::{CommandRecorder, Recorder, Timings};
use super::validity::{Unsent, Validity};
use crate::observe::{NodeServer, ServerLoad, ServerSample};
use base64::Engine as _;
use hdrhistogram::serialization::{Serializer as _, V2DeflateSerializer};
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;
use std::collections::BTreeMap;

/// Version of the report schema; bumped when a field changes meaning or goes away.
pub const SCHEMA_VERSION: u32 = 2;

/// Latency summary in milliseconds, from exact sums (mean, stddev, min, max) and the
/// histogram (percentiles: the highest value equivalent to the recorded ones, within 0.1%).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Latency {
    /// Mean.
    pub mean: f64,
    /// Standard deviation.
    pub stddev: f64,
    /// Smallest.
    pub min: f64,
    /// Median.
    pub p50: f64,
    /// 90th percentile.
    pub p90: f64,
    /// 95th percentile.
    pub p95: f64,
    /// 99th percentile.
    pub p99: f64,
    /// 99.9th percentile.
    pub p99_9: f64,
    /// 99.99th percentile.
    pub p99_99: f64,
    /// Largest.
    pub max: f64,
}

/// Counts and latency of one command, or of all (`totals`).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Stats {
    /// Requests finished (replies received plus requests failed without a reply).
    pub ops: u64,
    /// `ops` per second of measured time.
    pub ops_per_sec: f64,
    /// Replies carrying a value, for reading commands.
    pub hits: u64,
    /// Nil or empty replies, for reading commands.
    pub misses: u64,
    /// Failed requests: error replies, lost connections, timeouts.
    pub errors: u64,
    /// `errors / ops` (0 when no ops).
    pub error_rate: f64,
    /// Errors by kind: the first word of an error reply (`WRONGTYPE`, `ERR`, ...), or
    /// `CONNECTION` (connection lost with the request in flight), `TIMEOUT` (no reply within
    /// `load.timeout`), `ABORTED` (cut off by a stop), `PROTOCOL` (an invalid reply stream),
    /// `INTERNAL` (a bug in respload ended a connection's task); kinds past the first 32
    /// are counted together as `OTHER`.
    pub errors_by_kind: BTreeMap<String, u64>,
    /// Request bytes written.
    pub bytes_sent: u64,
    /// Reply bytes read.
    pub bytes_received: u64,
    /// Latency of replies received (error replies included), to the read that completed the
    /// reply from the write that carried the request (closed loop) or from the request's
    /// intended send time (open loop: corrected for coordinated omission).
    pub latency_ms: Latency,
    /// The latency histogram in HdrHistogram's V2 compressed encoding, base64; values are
    /// nanoseconds.
    pub histogram: String,
    /// Open loop only: service time, from the actual write to the reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_ms: Option<Latency>,
    /// Open loop only: the service-time histogram, encoded like `histogram`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_histogram: Option<String>,
    /// Open loop only: send lag, from the request's intended send time to the write that
    /// carried it: the client's own lateness, which `latency_ms` includes and `service_ms`
    /// does not (in cluster mode, of the request's last try).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_lag_ms: Option<Latency>,
    /// Open loop only: the send-lag histogram, encoded like `histogram`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_lag_histogram: Option<String>,
    /// Cluster mode: redirections followed (MOVED, ASK) and retries after TRYAGAIN or
    /// CLUSTERDOWN. They are not errors: a request that succeeds after them is a success.
    /// Per node, they count on the node that answered MOVED, ASK, TRYAGAIN or CLUSTERDOWN.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub redirects: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One row of the per-interval timeline.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct TimelineRow {
    /// Seconds since the measurement began, at the end of this interval.
    pub t: f64,
    /// Length of this interval in seconds (1, shorter for the last).
    pub interval_s: f64,
    /// Requests finished in this interval.
    pub ops: u64,
    /// `ops / interval_s`.
    pub ops_per_sec: f64,
    /// Failed requests in this interval.
    pub errors: u64,
    /// Latency in this interval (ms).
    pub latency_ms: IntervalLatency,
    /// Open loop only: service time in this interval (ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_ms: Option<IntervalLatency>,
    /// Open loop only: send lag of the requests answered in this interval (ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_lag_ms: Option<IntervalLatency>,
    /// Most connections open at once during this interval.
    pub connections: u32,
    /// Open loop: the total rate asked for in this interval (requests per second), which
    /// follows `load.rate_ramp` step by step; compare with `ops_per_sec`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_rate: Option<f64>,
    /// Open loop: the most requests waiting to be sent at once in this interval: due by
    /// their intended send time but not yet written (a full pipeline, a connection down or
    /// reconnecting, a busy client), as seen by each worker's 20 ms check and summed over
    /// the workers. Counted from each connection's schedule: exact for even arrivals, the
    /// expected number for Poisson ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting: Option<u64>,
    /// Open loop: the longest a request due had waited to be written in this interval (ms),
    /// seen at the same checks: how far the client ran behind its schedule (requests never
    /// written included, which `send_lag_ms` cannot count).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub behind_ms: Option<f64>,
    /// The server's CPU in this interval, in percent of one core: the `cpu_percent` of the
    /// `server_timeline` sample taken at this row's end; in cluster mode the busiest node's
    /// (of the nodes sampled then).
    /// Left out when no sample was taken then (`observe.info = false`, an INFO that failed).
    /// Joined when the phase ends: interval snapshots do not carry it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_cpu_percent: Option<f64>,
    /// This interval's latency histogram (all commands), encoded like [`Stats::histogram`];
    /// empty unless the phase's `output.interval_histograms` is true (interval snapshots
    /// always carry it).
    pub histogram: String,
}

/// Latency of one interval, in milliseconds.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct IntervalLatency {
    /// Mean.
    pub mean: f64,
    /// Median.
    pub p50: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Largest.
    pub max: f64,
}

/// What the load generator itself cost, so a client bottleneck shows.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ClientStats {
    /// Worker threads.
    pub threads: u32,
    /// Connections.
    pub connections: u32,
    /// User CPU seconds of the worker threads.
    pub cpu_user_s: f64,
    /// System CPU seconds of the worker threads.
    pub cpu_sys_s: f64,
    /// (user + system) CPU seconds per million finished requests.
    pub cpu_s_per_million: f64,
    /// Worst lateness of a worker's 20 ms housekeeping tick (ms): a busy client shows here.
    pub loop_lag_ms_max: f64,
    /// Reconnections after lost connections.
    pub reconnects: u64,
    /// Open loop: the most requests waiting to be sent at once (as `timeline[].waiting`), in
    /// the phase, or in the report over every phase (measured or not, as the CPU figures).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting_max: Option<u64>,
    /// Open loop: the longest a due request waited to be written (ms; as
    /// `timeline[].behind_ms`), in the phase, or over every phase.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub behind_ms_max: Option<f64>,
    /// The busiest worker thread's CPU time over the time it ran (0 to 1), in the phase, or
    /// the highest of every phase: near 1, the client itself limits the load and delays
    /// requests (add `load.threads`). With `load.pacing = "spin"` it includes the spinning.
    #[serde(default)]
    pub busy_max: f64,
}

impl ClientStats {
    /// Add a later phase's (or search step's) cost: counts and CPU add up, peaks take the
    /// worst. `cpu_s_per_million` is left for the caller to compute over the whole.
    pub fn add(&mut self, other: &ClientStats) {
        self.threads = self.threads.max(other.threads);
        self.connections = self.connections.max(other.connections);
        self.cpu_user_s += other.cpu_user_s;
        self.cpu_sys_s += other.cpu_sys_s;
        self.loop_lag_ms_max = self.loop_lag_ms_max.max(other.loop_lag_ms_max);
        self.reconnects += other.reconnects;
        self.waiting_max = self.waiting_max.max(other.waiting_max);
        self.busy_max = self.busy_max.max(other.busy_max);
        self.behind_ms_max = match (self.behind_ms_max, other.behind_ms_max) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
    }
}

/// Facts about the server, read once before the run (fields it refuses stay empty).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
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
pub struct PhaseReport {
    /// Phase name.
    pub name: String,
    /// Whether it counts in the report's totals.
    pub measured: bool,
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
    /// The normalized settings of this phase, secrets redacted.
    pub workload: Json,
}

/// One step of a ramp: its part of the timeline, summarized.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
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

/// The result of a run.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
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
}

impl Report {
    /// A report from its JSON text (a `--json` file, a binding's report), or an error saying
    /// it is not one.
    pub fn from_json_str(text: &str) -> crate::Result<Report> {
        serde_json::from_value(Self::upgraded_json(text)?).map_err(not_a_report)
    }

    /// A report's JSON text read as the current schema: a version 1 report upgraded, one of
    /// a later version (from a newer respload) refused, naming its version.
    pub fn upgraded_json(text: &str) -> crate::Result<Json> {
        let mut json: Json = serde_json::from_str(text).map_err(not_a_report)?;
        match json.get("schema_version").and_then(Json::as_u64) {
            None => {
                return Err(crate::Error::spec(
                    "report",
                    "not a respload report: it has no schema_version",
                ))
            }
            Some(v) if v > u64::from(SCHEMA_VERSION) => {
                return Err(crate::Error::spec(
                    "report.schema_version",
                    format!(
                        "{v}: this report was written by a newer respload; this one reads \
                         schema versions 1 to {SCHEMA_VERSION}"
                    ),
                ))
            }
            Some(_) => upgrade(&mut json),
        }
        Ok(json)
    }

    /// Read a report written by `respload run --json` or [`Report::save`] (any schema
    /// version up to this respload's, upgraded).
    pub fn from_file(path: impl AsRef<std::path::Path>) -> crate::Result<Report> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| crate::Error::File {
            path: path.display().to_string(),
            source,
        })?;
        Self::from_json_str(&text).map_err(|e| match e {
            crate::Error::Spec { path: p, message } => crate::Error::Spec {
                path: p,
                message: format!("{message} (in {})", path.display()),
            },
            other => other,
        })
    }

    /// Write the report as pretty JSON (what `respload run --json` writes) to `path`.
    pub fn save(&self, path: impl AsRef<std::path::Path>) -> crate::Result<()> {
        let path = path.as_ref();
        std::fs::write(path, self.to_json()).map_err(|source| crate::Error::File {
            path: path.display().to_string(),
            source,
        })
    }

    /// The phase named `name`, if the run had one.
    pub fn phase(&self, name: &str) -> Option<&PhaseReport> {
        self.phases.iter().find(|p| p.name == name)
    }

    /// The report as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }
}

fn not_a_report(e: serde_json::Error) -> crate::Error {
    crate::Error::spec("report", format!("not a respload report: {e}"))
}

/// A report of schema version 1 read as version 2: the per-interval gauge `send_lag_ms` (a
/// number) and `client.send_lag_ms_max` were renamed `behind_ms` and `behind_ms_max`, the
/// name going to the per-request send-lag summaries.
fn upgrade(json: &mut Json) {
    if json.get("schema_version").and_then(Json::as_u64) != Some(1) {
        return;
    }
    fn rename(obj: &mut Json, from: &str, to: &str) {
        if let Some(o) = obj.as_object_mut() {
            if let Some(v) = o.remove(from) {
                o.insert(to.to_string(), v);
            }
        }
    }
    fn part(json: &mut Json) {
        if let Some(rows) = json.get_mut("timeline").and_then(Json::as_array_mut) {
            rows.iter_mut()
                .for_each(|r| rename(r, "send_lag_ms", "behind_ms"));
        }
        if let Some(client) = json.get_mut("client") {
            rename(client, "send_lag_ms_max", "behind_ms_max");
        }
    }
    part(json);
    if let Some(phases) = json.get_mut("phases").and_then(Json::as_array_mut) {
        phases.iter_mut().for_each(part);
    }
    json["schema_version"] = Json::from(SCHEMA_VERSION);
}

const NS_PER_MS: f64 = 1e6;

/// The value at quantile `q` (0 to 1): the highest value equivalent to the sample of rank
/// `round(q * count)`, at least rank 1, as Python's `hdrhistogram` and Go's
/// `hdrhistogram-go` rank, so a notebook decoding our histograms reports the same
/// percentiles. Java's HdrHistogram and the Rust crate rank by `ceil` (one rank higher where
/// `q * count` has a fraction below one half).
pub fn percentile(h: &hdrhistogram::Histogram<u64>, q: f64) -> u64 {
    let n = h.len();
    if n == 0 {
        return 0;
    }
    let rank = ((q.min(1.0) * n as f64 + 0.5) as u64).clamp(1, n);
    // The crate takes ceil(q' * n): aim half a rank below so it lands on `rank` exactly.
    h.value_at_quantile((rank as f64 - 0.5) / n as f64)
}

/// A percentile in milliseconds, capped at the exact maximum `max_ns` (0 when empty).
pub(crate) fn percentile_ms(h: &hdrhistogram::Histogram<u64>, q: f64, max_ns: u64) -> f64 {
    percentile(h, q).min(max_ns) as f64 / NS_PER_MS
}

/// The summary of some timings.
pub(crate) fn latency_of(t: &Timings) -> Latency {
    let h = &t.histogram;
    let received = h.len();
    if received == 0 {
        return Latency::default();
    }
    let q = |q| percentile_ms(h, q, t.max_ns);
    let n = received as f64;
    let mean = t.sum_ns as f64 / n;
    let var = (t.sum_sq / n - mean * mean).max(0.0);
    Latency {
        mean: mean / NS_PER_MS,
        stddev: var.sqrt() / NS_PER_MS,
        min: t.min_ns as f64 / NS_PER_MS,
        p50: q(0.5),
        p90: q(0.9),
        p95: q(0.95),
        p99: q(0.99),
        p99_9: q(0.999),
        p99_99: q(0.9999),
        max: t.max_ns as f64 / NS_PER_MS,
    }
}

/// The interval summary of some timings.
fn interval_latency_of(t: &Timings) -> IntervalLatency {
    let h = &t.histogram;
    if h.is_empty() {
        return IntervalLatency::default();
    }
    IntervalLatency {
        mean: t.sum_ns as f64 / h.len() as f64 / NS_PER_MS,
        p50: percentile_ms(h, 0.5, t.max_ns),
        p99: percentile_ms(h, 0.99, t.max_ns),
        max: t.max_ns as f64 / NS_PER_MS,
    }
}

/// Summarize one recorder over `secs` of measured time.
pub fn stats_of(r: &CommandRecorder, secs: f64) -> Stats {
    Stats {
        ops: r.ops,
        ops_per_sec: if secs > 0.0 { r.ops as f64 / secs } else { 0.0 },
        hits: r.hits,
        misses: r.misses,
        errors: r.errors,
        error_rate: if r.ops > 0 {
            r.errors as f64 / r.ops as f64
        } else {
            0.0
        },
        errors_by_kind: r
            .error_kinds
            .iter()
            .map(|(k, n)| (k.to_string(), n))
            .collect(),
        bytes_sent: r.bytes_sent,
        bytes_received: r.bytes_received,
        latency_ms: latency_of(&r.latency),
        histogram: encode_histogram(&r.latency.histogram),
        service_ms: r.service.as_deref().map(latency_of),
        service_histogram: r.service.as_deref().map(|s| encode_histogram(&s.histogram)),
        send_lag_ms: r.send_lag.as_deref().map(latency_of),
        send_lag_histogram: r
            .send_lag
            .as_deref()
            .map(|s| encode_histogram(&s.histogram)),
        redirects: r.redirects,
    }
}

/// Cluster mode: the stats of each node (by `host:port`), from a merged recorder; empty when
/// not a cluster run.
pub fn node_stats(rec: &Recorder, secs: f64) -> BTreeMap<String, Stats> {
    rec.nodes
        .iter()
        .filter(|(_, r)| r.ops > 0 || r.redirects > 0)
        .map(|(name, r)| (name.to_string(), stats_of(r, secs)))
        .collect()
}

/// Base64 of the V2 compressed encoding, as HdrHistogram's other implementations read it.
pub fn encode_histogram(h: &hdrhistogram::Histogram<u64>) -> String {
    thread_local! {
        // The serializer zero-fills a ~300 KB buffer per call: reused, every interval's
        // row is encoded without a fresh allocation (a long run's RSS stays flat).
        static SERIALIZER: std::cell::RefCell<V2DeflateSerializer> =
            std::cell::RefCell::new(V2DeflateSerializer::new());
    }
    let mut bytes = Vec::new();
    let done = SERIALIZER.with(|s| match s.try_borrow_mut() {
        Ok(mut s) => s.serialize(h, &mut bytes).is_ok(),
        Err(_) => V2DeflateSerializer::new().serialize(h, &mut bytes).is_ok(),
    });
    match done {
        true => base64::engine::general_purpose::STANDARD.encode(&bytes),
        false => String::new(),
    }
}

/// Decode a histogram written by [`encode_histogram`].
pub fn decode_histogram(text: &str) -> Option<hdrhistogram::Histogram<u64>> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .ok()?;
    hdrhistogram::serialization::Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .ok()
}

/// Per-command and total stats of a merged recorder.
pub fn summarize(rec: &Recorder, labels: &[String], secs: f64) -> (Stats, BTreeMap<String, Stats>) {
    let commands = labels
        .iter()
        .zip(&rec.commands)
        .filter(|(_, c)| c.ops > 0)
        .map(|(l, c)| (l.clone(), stats_of(c, secs)))
        .collect();
    (stats_of(&rec.total(), secs), commands)
}

/// A report's seed read back: the exact integer, or the nearest double a JavaScript number
/// held (a seed near 2^64 rounds above `u64::MAX`), so that Node's `check()` and `hdrLog()`
/// read back any report Node was given.
fn seed_of_json<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<u64, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Seed {
        Exact(u64),
        Rounded(f64),
    }
    const TWO_TO_64: f64 = 18_446_744_073_709_551_616.0;
    match Seed::deserialize(d)? {
        Seed::Exact(seed) => Ok(seed),
        // A double holds 2^64 - 1 as 2^64.
        Seed::Rounded(seed) if seed.fract() == 0.0 && (0.0..=TWO_TO_64).contains(&seed) => {
            Ok(seed as u64) // saturating: 2^64 is u64::MAX
        }
        Seed::Rounded(seed) => Err(serde::de::Error::custom(format!(
            "seed: `{seed}` is not a whole number from 0 to 2^64 - 1"
        ))),
    }
}

/// A timeline row from one interval's merged recorder.
pub fn timeline_row(rec: &Recorder, t: f64, interval_s: f64, connections: u32) -> TimelineRow {
    let total = rec.total();
    TimelineRow {
        t,
        interval_s,
        ops: total.ops,
        ops_per_sec: if interval_s > 0.0 {
            total.ops as f64 / interval_s
        } else {
            0.0
        },
        errors: total.errors,
        latency_ms: interval_latency_of(&total.latency),
        service_ms: total.service.as_deref().map(interval_latency_of),
        send_lag_ms: total.send_lag.as_deref().map(interval_latency_of),
        connections,
        target_rate: None,
        waiting: None,
        behind_ms: None,
        server_cpu_percent: None,
        histogram: encode_histogram(&total.latency.histogram),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_a_javascript_number_rounded_reads_back() {
        let text = serde_json::to_string(&Report::default()).unwrap();
        assert!(text.contains("\"seed\":0,"));
        let json = |seed: &str| text.replace("\"seed\":0,", &format!("\"seed\":{seed},"));
        let seed = |text: &str| Report::from_json_str(&json(text)).map(|r| r.seed);
        assert_eq!(seed("18446744073709551615").unwrap(), u64::MAX);
        // What JSON.stringify writes for 2^64 - 1 held in a double.
        assert_eq!(seed("18446744073709552000").unwrap(), u64::MAX);
        assert_eq!(seed("9007199254740993").unwrap(), 9_007_199_254_740_993);
        assert!(seed("\"7\"").is_err());
        for bad in ["-1", "7.5", "1e300"] {
            let err = seed(bad).unwrap_err().to_string();
            assert!(
                err.contains("is not a whole number from 0 to 2^64 - 1"),
                "{err}"
            );
        }
    }

    #[test]
    fn a_schema_1_report_loads_with_its_gauges_renamed() {
        let mut v: Json = serde_json::to_value(Report::default()).unwrap();
        v["schema_version"] = Json::from(1);
        let row = serde_json::json!({"t": 1.0, "interval_s": 1.0, "ops": 5, "ops_per_sec": 5.0,
            "errors": 0, "latency_ms": {"mean": 1.0, "p50": 1.0, "p99": 1.0, "max": 1.0},
            "connections": 1, "send_lag_ms": 2.5, "histogram": ""});
        v["timeline"] = Json::Array(vec![row]);
        v["client"]["send_lag_ms_max"] = Json::from(2.5);
        let r = Report::from_json_str(&v.to_string()).unwrap();
        assert_eq!(r.schema_version, SCHEMA_VERSION);
        assert_eq!(r.timeline[0].behind_ms, Some(2.5));
        assert_eq!(r.timeline[0].send_lag_ms, None);
        assert_eq!(r.client.behind_ms_max, Some(2.5));
        // A version 2 report with a number there is not one.
        v["schema_version"] = Json::from(2);
        let e = Report::from_json_str(&v.to_string())
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a respload report"), "{e}");
        // A newer one is refused by its version; one without a version is not a report.
        v["schema_version"] = Json::from(SCHEMA_VERSION + 1);
        let e = Report::from_json_str(&v.to_string())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("report.schema_version") && e.contains("newer respload"),
            "{e}"
        );
        let e = Report::from_json_str("{}").unwrap_err().to_string();
        assert!(e.contains("no schema_version"), "{e}");
    }

    #[test]
    fn a_saved_report_loads_back_and_finds_its_phases() {
        let mut r = Report {
            schema_version: SCHEMA_VERSION,
            seed: 7,
            ..Report::default()
        };
        r.phases.push(PhaseReport {
            name: "fill".into(),
            ..PhaseReport::default()
        });
        let dir = std::env::temp_dir().join(format!("respload-save-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("r.json");
        r.save(&path).unwrap();
        let back = Report::from_file(&path).unwrap();
        assert_eq!(back, r);
        assert_eq!(back.phase("fill").map(|p| p.name.as_str()), Some("fill"));
        assert!(back.phase("nope").is_none());
        let e = Report::from_file(dir.join("missing.json"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("missing.json"), "{e}");
        std::fs::write(&path, "{\"schema_version\": 99}").unwrap();
        let e = Report::from_file(&path).unwrap_err().to_string();
        assert!(e.contains("99") && e.contains("r.json"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn percentile_ranks_like_the_reference_implementation() {
        let mut h = crate::stats::new_histogram();
        for v in 1..=1000u64 {
            h.record(v).unwrap();
        }
        // 0.0014 * 1000 = 1.4: Python's and Go's rule rounds to rank 1, ceil (Java's, the
        // crate's) gives 2.
        assert_eq!(percentile(&h, 0.0014), 1);
        assert_eq!(h.value_at_quantile(0.0014), 2);
        assert_eq!(percentile(&h, 0.5), 500);
        assert_eq!(percentile(&h, 1.0), 1000);
        assert_eq!(percentile(&h, 0.0), 1);
        assert_eq!(percentile(&crate::stats::new_histogram(), 0.5), 0);
    }

    #[test]
    fn histogram_round_trips_and_percentiles_are_not_lower_edges() {
        let mut r = CommandRecorder::default();
        for us in 1..=1000u64 {
            r.record_latency(us * 1000 + 7);
            r.ops += 1;
        }
        let s = stats_of(&r, 2.0);
        assert_eq!(s.ops_per_sec, 500.0);
        let h = decode_histogram(&s.histogram).unwrap();
        assert_eq!(h.len(), 1000);
        assert_eq!(percentile(&h, 0.99) as f64 / 1e6, s.latency_ms.p99);
        // True p99 (rank 990) is 990.007 µs: the reported one is not below it, and within 0.1%.
        assert!(s.latency_ms.p99 >= 0.990007 && s.latency_ms.p99 <= 0.990007 * 1.001);
        assert!((s.latency_ms.mean - 0.500507).abs() < 1e-9);
        assert_eq!(s.latency_ms.max, 1.000007);
        assert_eq!(s.latency_ms.min, 0.001007);
    }
}
