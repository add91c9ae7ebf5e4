//! Fault drills: `events = [{ at = "3s", drill = "bgsave" }, ...]` in a phase. Each event
//! acts on the server at a set time of the measured part of the phase, from a side
//! connection, while the load goes on.

use super::SpecDuration;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// At most this many events per phase (each gets one bit of the workers' drill mask).
pub const MAX_EVENTS: usize = 64;

/// One fault drill at a set time.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Event {
    /// When, from the start of the measured part of the phase (after warm-up).
    pub at: SpecDuration,
    /// What to do.
    pub drill: Drill,
    /// `pause`: how long the server is paused (default 500ms); `replica-resync`: how long the
    /// replica stays detached before it is reattached (default 1s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<SpecDuration>,
    /// `failover`: `cluster-failover` (default in cluster mode) or `kill` (default
    /// otherwise); `pause`: `client-pause` (default) or `debug-sleep`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<DrillMode>,
    /// Cluster mode: the node (`host:port`) the drill acts on: a primary (default: the one
    /// serving slot 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// `replica-resync`, and `failover` without cluster: the replica, `host:port` or
    /// `redis://[user:password@]host:port` (default: the first replica the primary lists in
    /// `INFO replication`). Credentials are the target's unless the URL gives some; TLS
    /// settings are always the target's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica: Option<String>,
}

/// The drills.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum Drill {
    /// `BGSAVE`, until the save ends; reports the fork time (`latest_fork_usec`). One the
    /// server runs already is waited out first.
    Bgsave,
    /// `BGREWRITEAOF`, until the rewrite ends; reports the fork time. One the server runs
    /// already (an automatic rewrite) is waited out first.
    Bgrewriteaof,
    /// `CLIENT PAUSE` (or `DEBUG SLEEP`) for `duration`.
    Pause,
    /// Fail a primary over to its replica (`CLUSTER FAILOVER`, or stop the primary).
    Failover,
    /// Detach a replica (`REPLICAOF NO ONE`), reattach it, time until it is back in sync.
    ReplicaResync,
}

impl Drill {
    /// The name as written in a spec.
    pub fn name(self) -> &'static str {
        match self {
            Drill::Bgsave => "bgsave",
            Drill::Bgrewriteaof => "bgrewriteaof",
            Drill::Pause => "pause",
            Drill::Failover => "failover",
            Drill::ReplicaResync => "replica-resync",
        }
    }
}

/// How a drill is carried out.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "kebab-case")]
pub enum DrillMode {
    /// `failover`: `CLUSTER FAILOVER` sent to a replica of the primary (cluster only).
    ClusterFailover,
    /// `failover`: stop the primary with `SHUTDOWN NOSAVE NOW`; in cluster mode its replica
    /// is promoted by the cluster, otherwise respload promotes it (`REPLICAOF NO ONE`).
    Kill,
    /// `pause`: `CLIENT PAUSE ms` (every client, the drill's own connection included).
    ClientPause,
    /// `pause`: `DEBUG SLEEP s` (the server's main thread sleeps; needs
    /// `enable-debug-command`).
    DebugSleep,
}

impl DrillMode {
    /// The name as written in a spec.
    pub fn name(self) -> &'static str {
        match self {
            DrillMode::ClusterFailover => "cluster-failover",
            DrillMode::Kill => "kill",
            DrillMode::ClientPause => "client-pause",
            DrillMode::DebugSleep => "debug-sleep",
        }
    }
}

impl Event {
    /// The mode used: the one given, or the drill's default (`None` for drills without modes).
    pub fn effective_mode(&self, cluster: bool) -> Option<DrillMode> {
        match self.drill {
            Drill::Failover if cluster => Some(self.mode.unwrap_or(DrillMode::ClusterFailover)),
            Drill::Failover => Some(self.mode.unwrap_or(DrillMode::Kill)),
            Drill::Pause => Some(self.mode.unwrap_or(DrillMode::ClientPause)),
            _ => None,
        }
    }

    /// The duration used: the one given, or the drill's default.
    pub fn effective_duration(&self) -> Duration {
        match (self.duration, self.drill) {
            (Some(d), _) => d.0,
            (None, Drill::ReplicaResync) => Duration::from_secs(1),
            (None, _) => Duration::from_millis(500),
        }
    }
}
