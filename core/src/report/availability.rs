//! Availability in reports: the longest stretch without a successful reply, and what each
//! fault drill did to the load.

use serde::{Deserialize, Serialize};

/// Availability of a phase (or of the measured phases together).
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Availability {
    /// The longest stretch of measured time without any successful reply (ms), over all
    /// connections: from one successful reply to the next, or from the start of measurement
    /// to the first, or from the last to the end of measurement.
    pub longest_gap_ms: f64,
    /// When that stretch began, in seconds since the start of measurement (as timeline `t`).
    pub longest_gap_at_s: f64,
}

/// What one fault drill did, and what it did to the load. Times are seconds since the start
/// of measurement of the phase (as timeline `t`); a figure that does not apply, or could not
/// be measured, is `null`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct EventReport {
    /// The drill (`bgsave`, `bgrewriteaof`, `pause`, `failover`, `replica-resync`).
    pub drill: String,
    /// `pause` and `failover`: how it was done (`client-pause`, `debug-sleep`,
    /// `cluster-failover`, `kill`).
    pub mode: Option<String>,
    /// The node the drill acted on (`host:port`): the server saved, paused, failed over, or
    /// the primary of the resynced replica.
    pub node: String,
    /// `failover` and `replica-resync`: the replica involved (`host:port`).
    pub replica: Option<String>,
    /// When it was planned (`at`).
    pub at_s: f64,
    /// When its first command was sent; `null` when the phase ended first.
    pub started_s: Option<f64>,
    /// When the drill's own check said the server was back: the save or rewrite ended, the
    /// pause ended, the replica was promoted (and, in a cluster, says `cluster_state:ok`), the
    /// replica was back in sync. `null` if that did not happen before the phase ended.
    pub finished_s: Option<f64>,
    /// `finished_s - started_s`.
    pub recovery_s: Option<f64>,
    /// `bgsave`, `bgrewriteaof`: the fork's duration (`latest_fork_usec` after the drill).
    pub fork_usec: Option<u64>,
    /// `replica-resync`: from the reattaching `REPLICAOF` until the replica reported
    /// `master_link_status:up` with no sync in progress.
    pub sync_s: Option<f64>,
    /// `replica-resync`: whether the primary made a full sync for it (its `sync_full` grew);
    /// false means a partial resync from the backlog.
    pub full_sync: Option<bool>,
    /// The server refused the drill, or its connection failed: the message. The load
    /// figures are still given.
    pub error: Option<String>,
    /// Requests finished during the drill: from `started_s` until 100 ms after `finished_s`
    /// (or after it failed, or until the end of the phase), to the housekeeping tick (20 ms).
    pub ops_during: Option<u64>,
    /// Failed requests among them.
    pub errors_during: Option<u64>,
    /// p99 latency (ms) of the replies received during the drill.
    pub p99_during_ms: Option<f64>,
    /// p99 latency (ms) over the full timeline intervals before `started_s` (at most 5).
    pub p99_before_ms: Option<f64>,
    /// Successful requests per second over those intervals.
    pub throughput_before: Option<f64>,
    /// Time from `started_s` until the start of the first timeline interval whose successful
    /// requests per second are back at 80% or more of `throughput_before`, after one that
    /// fell below it. 0 when no interval fell below it; `null` when none came back before
    /// the phase ended (or there is no "before").
    pub recovered_after_s: Option<f64>,
    /// The longest stretch without a successful reply that overlaps the drill (ms), when 10 ms
    /// or longer; 0 when there was none that long.
    pub longest_gap_ms: Option<f64>,
}
