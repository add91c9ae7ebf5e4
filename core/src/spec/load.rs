//! How much traffic: `[load]`.

use super::SpecDuration;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::time::Duration;

/// Connections, threads, pipelining and when to stop (`[load]` in a spec).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Load {
    /// Total connections, spread over the worker threads (default 50, like redis-benchmark).
    /// In cluster mode (`target.cluster`): connections per primary node, as with
    /// redis-benchmark `--cluster` and memtier_benchmark `--cluster-mode` (each of these
    /// clients holds one connection to every primary).
    #[serde(default = "default_connections")]
    pub connections: u32,
    /// Worker threads; absent means one per CPU core, at most one per connection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<u32>,
    /// Requests kept in flight on each connection (default 1: no pipelining).
    #[serde(default = "default_pipeline")]
    pub pipeline: u32,
    /// Measured requests to send across all connections, or `"all_keys"`: as many as the
    /// key range holds. With neither `requests` nor `duration`, 100,000 requests
    /// (redis-benchmark's default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<Requests>,
    /// How long to measure. With `requests` too, the run stops at whichever comes first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<SpecDuration>,
    /// Traffic sent before measuring starts; not counted in the report nor in `requests`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup: Option<SpecDuration>,
    /// A connection whose requests get no reply for this long counts them as `TIMEOUT`
    /// errors and reconnects (default 10s).
    #[serde(default = "default_timeout")]
    pub timeout: SpecDuration,
    /// Open loop: requests per second in total, spread evenly over the connections, each
    /// request with an intended send time; latency counts from that time (so a stalled
    /// server shows in it) and service time from the actual write. Absent: closed loop
    /// (each connection sends as fast as replies come back).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    /// How intended send times are spaced in open loop: `uniform` (evenly, the default) or
    /// `poisson` (exponential gaps, as independent users arrive).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrivals: Option<Arrivals>,
    /// Keep each connection open for the whole run (the default). `false`: a connection is
    /// closed once the replies to its requests are in and a new one is opened for the next
    /// ones, as redis-benchmark's `-k 0` does; connect time is not part of latency.
    #[serde(default = "default_true", skip_serializing_if = "is_true")]
    pub keepalive: bool,
    /// Open the connections and hold them without sending anything (redis-benchmark's `-I`),
    /// until `duration` ends or the run is stopped. `requests` cannot be set with it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub idle: bool,
}

fn default_true() -> bool {
    true
}
fn is_true(b: &bool) -> bool {
    *b
}

/// How open-loop send times are spaced.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Arrivals {
    /// Evenly: one request every `connections / rate` seconds per connection.
    #[default]
    Uniform,
    /// Exponentially distributed gaps with the same mean.
    Poisson,
}

fn default_connections() -> u32 {
    50
}
fn default_pipeline() -> u32 {
    1
}
fn default_timeout() -> SpecDuration {
    SpecDuration(Duration::from_secs(10))
}

/// The request count used when neither `requests` nor `duration` is given.
pub const DEFAULT_REQUESTS: u64 = 100_000;

impl Default for Load {
    fn default() -> Self {
        Load {
            connections: default_connections(),
            threads: None,
            pipeline: default_pipeline(),
            requests: None,
            duration: None,
            warmup: None,
            timeout: default_timeout(),
            rate: None,
            arrivals: None,
            keepalive: true,
            idle: false,
        }
    }
}

impl Load {
    /// Check ranges; `p` prefixes error paths.
    pub(crate) fn validate(&self, p: &str) -> crate::Result<()> {
        range(p, "load.connections", self.connections as u64, 1, 1_000_000)?;
        if let Some(t) = self.threads {
            range(p, "load.threads", t as u64, 1, 1024)?;
        }
        range(p, "load.pipeline", self.pipeline as u64, 1, 100_000)?;
        if let Some(Requests::Count(n)) = self.requests {
            range(p, "load.requests", n, 1, u64::MAX)?;
        }
        if let Some(d) = self.duration {
            if d.0.is_zero() {
                return Err(crate::Error::spec(
                    format!("{p}load.duration"),
                    "0s: a duration must be positive (or left out)",
                ));
            }
        }
        if let Some(r) = self.rate {
            if !(r > 0.0 && r <= 100_000_000.0) {
                return Err(crate::Error::spec(
                    format!("{p}load.rate"),
                    format!("{r} is out of range: allowed is above 0 and up to 100000000 requests per second"),
                ));
            }
        }
        if self.arrivals.is_some() && self.rate.is_none() {
            return Err(crate::Error::spec(
                format!("{p}load.arrivals"),
                "applies to open loop only: set load.rate too",
            ));
        }
        if self.idle && (self.requests.is_some() || self.rate.is_some()) {
            let field = if self.rate.is_some() {
                "rate"
            } else {
                "requests"
            };
            return Err(crate::Error::spec(
                format!("{p}load.idle"),
                format!(
                    "idle connections send nothing, so load.{field} cannot be set with it: \
                     give load.duration (or stop the run) instead"
                ),
            ));
        }
        if self.timeout.0 < Duration::from_millis(10) {
            return Err(crate::Error::spec(
                format!("{p}load.timeout"),
                format!("{:?} is too short: allowed is 10ms or more", self.timeout.0),
            ));
        }
        Ok(())
    }

    /// Worker threads actually used: the setting, or one per core, never more than connections.
    pub fn effective_threads(&self) -> u32 {
        let auto = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
        self.threads.unwrap_or(auto).min(self.connections).max(1)
    }

    /// The request budget: `requests` (`all_keys` is the number of keys), or the default
    /// when no `duration` is given either.
    pub fn request_budget(&self, keys: &super::Keys) -> Option<u64> {
        if self.idle {
            return Some(0);
        }
        match (self.requests, self.duration) {
            (Some(Requests::Count(n)), _) => Some(n),
            (Some(Requests::AllKeys), _) => Some(keys.count()),
            (None, None) => Some(DEFAULT_REQUESTS),
            (None, Some(_)) => None,
        }
    }
}

/// `value` must lie in `lo..=hi`.
pub(crate) fn range(p: &str, field: &str, value: u64, lo: u64, hi: u64) -> crate::Result<()> {
    if value < lo || value > hi {
        let allowed = if hi == u64::MAX {
            format!("{lo} or more")
        } else {
            format!("{lo} to {hi}")
        };
        return Err(crate::Error::spec(
            format!("{p}{field}"),
            format!("{value} is out of range: allowed is {allowed}"),
        ));
    }
    Ok(())
}

/// How many measured requests: a count, or one per key of the range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Requests {
    /// Exactly this many.
    Count(u64),
    /// As many as `keys.range` holds (memtier's `-n allkeys`); with the `parallel` or
    /// `sequential` distribution every key is visited exactly once.
    AllKeys,
}

impl Serialize for Requests {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Requests::Count(n) => s.serialize_u64(*n),
            Requests::AllKeys => s.serialize_str("all_keys"),
        }
    }
}

impl<'de> Deserialize<'de> for Requests {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match serde_json::Value::deserialize(d)? {
            serde_json::Value::String(s) if s == "all_keys" => Ok(Requests::AllKeys),
            v => v.as_u64().map(Requests::Count).ok_or_else(|| {
                D::Error::custom(format!(
                    "{v} is not a request count: allowed are a whole number or \"all_keys\""
                ))
            }),
        }
    }
}
