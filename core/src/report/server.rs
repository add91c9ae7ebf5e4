//! What the server's own figures (`INFO`, sampled each interval) say, per server and
//! summarized.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One interval of the server's own figures, from `INFO`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ServerSample {
    /// Seconds since the measurement began, at the end of this interval (as the timeline's `t`).
    pub t: f64,
    /// Server CPU over the interval, user + system, in percent of one core (Redis executes
    /// commands on one thread: 100 is that thread saturated).
    pub cpu_percent: f64,
    /// `used_memory`, bytes.
    pub used_memory: u64,
    /// Commands processed per second over the interval (the observer's own INFO included).
    pub ops_per_sec: f64,
    /// `connected_clients`.
    pub connected_clients: u64,
    /// Keyspace hits in the interval.
    pub keyspace_hits: u64,
    /// Keyspace misses in the interval.
    pub keyspace_misses: u64,
    /// Keys evicted in the interval.
    pub evicted_keys: u64,
    /// `latest_fork_usec`: duration of the latest fork (BGSAVE, AOF rewrite, full sync).
    pub latest_fork_usec: u64,
    /// An RDB save is running.
    pub rdb_bgsave_in_progress: bool,
    /// An AOF rewrite is running.
    pub aof_rewrite_in_progress: bool,
    /// `role`: master or slave.
    pub role: String,
    /// `master_link_status` on a replica (`up`/`down`), empty on a primary.
    pub master_link_status: String,
    /// `connected_slaves`.
    pub connected_slaves: u64,
    /// How long this INFO took to come back (ms): the observer's own cost.
    pub info_ms: f64,
}

/// A summary of the server samples of a phase or a run.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ServerLoad {
    /// Highest `cpu_percent` of an interval.
    pub peak_cpu_percent: f64,
    /// Mean `cpu_percent` over the intervals.
    pub mean_cpu_percent: f64,
    /// The CPU line capacity guides advise to stay under: 80 (% of a core).
    pub cpu_limit_percent: f64,
    /// Whether any interval went over `cpu_limit_percent`.
    pub cpu_over_limit: bool,
    /// Highest `used_memory`, bytes.
    pub peak_used_memory: u64,
    /// Samples taken.
    pub samples: u64,
    /// Mean INFO round trip (ms), one per interval on one extra connection.
    pub observer_info_ms: f64,
    /// Cluster mode, in the summary over all nodes: the node (`host:port`) with the highest
    /// `cpu_percent` of an interval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_node: Option<String>,
}

/// Cluster mode: one node's server figures.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct NodeServer {
    /// The node's samples, aligned with the timeline like the standalone `server_timeline`.
    pub server_timeline: Vec<ServerSample>,
    /// Their summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_load: Option<ServerLoad>,
}

impl NodeServer {
    /// A node's samples and their summary.
    pub fn new(server_timeline: Vec<ServerSample>) -> Self {
        NodeServer {
            server_load: ServerLoad::of(&server_timeline),
            server_timeline,
        }
    }
}

impl ServerLoad {
    /// The summary of `samples` (`None` when there are none).
    pub fn of(samples: &[ServerSample]) -> Option<ServerLoad> {
        if samples.is_empty() {
            return None;
        }
        let n = samples.len() as f64;
        let peak = samples.iter().map(|s| s.cpu_percent).fold(0.0, f64::max);
        Some(ServerLoad {
            peak_cpu_percent: peak,
            mean_cpu_percent: samples.iter().map(|s| s.cpu_percent).sum::<f64>() / n,
            cpu_limit_percent: CPU_LIMIT_PERCENT,
            cpu_over_limit: peak > CPU_LIMIT_PERCENT,
            peak_used_memory: samples.iter().map(|s| s.used_memory).max().unwrap_or(0),
            samples: samples.len() as u64,
            observer_info_ms: samples.iter().map(|s| s.info_ms).sum::<f64>() / n,
            peak_node: None,
        })
    }

    /// The summary over every node of a cluster: the peak is the busiest node's (named in
    /// `peak_node`), the mean is over every node's intervals (`None` without samples).
    pub fn of_nodes(nodes: &BTreeMap<String, NodeServer>) -> Option<ServerLoad> {
        let all: Vec<ServerSample> = nodes
            .values()
            .flat_map(|n| n.server_timeline.iter().cloned())
            .collect();
        let mut load = Self::of(&all)?;
        load.peak_node = nodes
            .iter()
            .filter_map(|(name, n)| Some((name, n.server_load.as_ref()?.peak_cpu_percent)))
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .map(|(name, _)| name.clone());
        Some(load)
    }
}

/// The server CPU line to stay under, in percent of a core.
pub const CPU_LIMIT_PERCENT: f64 = 80.0;
