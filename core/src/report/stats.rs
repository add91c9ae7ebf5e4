//! Counts and latency summaries: of a command, of all (`totals`), of one timeline interval,
//! and what the client itself cost.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Latency summary in milliseconds, from exact sums (mean, stddev, min, max) and the
/// histogram (percentiles: the highest value equivalent to the recorded ones, within 0.1%).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
    /// The first error reply of each kind that is a reply (`WRONGTYPE Operation against a
    /// key holding the wrong kind of value`), without its `-`, up to 512 bytes: what
    /// redis-benchmark `-e` shows. Left out when there was none.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub first_errors: BTreeMap<String, String>,
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
    /// With `load.retry`: resends of requests that failed (an error reply of a kind it
    /// retries, or a lost connection). A resent request counts once in `ops`, its latency
    /// from its first send to its last reply; `errors` counts those that failed for good.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub retries: u64,
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// One interval's figures, streamed while a run goes on (the runner's progress).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Snapshot {
    /// Name of the phase running.
    pub phase: String,
    /// Whether that phase is measured.
    pub measured: bool,
    /// The interval's figures, as in the timeline.
    #[serde(flatten)]
    pub row: TimelineRow,
}

/// One row of the per-interval timeline.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct TimelineRow {
    /// Seconds since the measurement began, at the end of this interval.
    pub t: f64,
    /// The end of the interval in UNIX seconds (wall clock): rows of several hosts line up
    /// by it.
    #[serde(default)]
    pub unix_s: f64,
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
    /// Reconnections after lost connections in this interval (those of the warm-up count in
    /// the first row); the rows add up to `client.reconnects`. Left out in reports written
    /// before it was kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reconnects: Option<u64>,
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
    /// A last interval shorter than half the others (the replies that came in after the
    /// measured time ended, often over a few milliseconds): its `ops_per_sec` is not the
    /// rate the run held. Plots and frames leave it out; its requests count everywhere.
    #[serde(default, skip_serializing_if = "is_false")]
    pub partial: bool,
    /// This interval's latency histogram (all commands), encoded like [`Stats::histogram`];
    /// empty unless the phase's `output.interval_histograms` is true (interval snapshots
    /// always carry it).
    pub histogram: String,
}

/// Latency of one interval, in milliseconds.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
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
    /// The transport the load connections ran on (`load.io`): `epoll` or `uring`; `mixed` in
    /// a report whose phases (or merged hosts) ran on both. A report written before it was
    /// kept reads as `epoll`, the default (an io_uring run's report of then too).
    // A string in the schema: the report's generated types hold structs and scalars only.
    #[serde(default)]
    #[cfg_attr(feature = "schema", schemars(with = "String"))]
    pub io: Transport,
}

/// The transport a phase's load connections ran on ([`ClientStats::io`]).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    /// Readiness from epoll, a `read` and a `write` system call per connection per round.
    #[default]
    Epoll,
    /// One io_uring per worker thread (`load.io = "uring"`).
    Uring,
    /// Phases, or hosts of a merged report, that ran on both.
    Mixed,
}

impl ClientStats {
    /// Add a later phase's (or search step's) cost: counts and CPU add up, peaks take the
    /// worst. `cpu_s_per_million` is left for the caller to compute over the whole.
    pub fn add(&mut self, other: &ClientStats) {
        // Nothing added yet (every phase runs a thread at least): take the other's transport.
        self.io = match self.threads == 0 || self.io == other.io {
            true => other.io,
            false => Transport::Mixed,
        };
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
