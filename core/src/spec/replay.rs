//! Trace replay (`[replay]`): send a recorded trace's commands at their recorded instants
//! instead of generating requests (docs/traffic.md).

use crate::{Error, Result};
use serde::{Deserialize, Serialize};

/// How a trace is replayed (`replay` in a phase).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Replay {
    /// The trace file: respload's JSON lines (`.jsonl`, `.jsonl.gz`), a `redis-cli MONITOR`
    /// log, or a Twitter cache-trace CSV (told apart by their first line).
    pub file: String,
    /// The trace's format, when its first line does not tell: `respload`, `monitor` or
    /// `twitter` (checked when the trace is read, by the trace layer that knows them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// How much faster than recorded (default 1.0; 2.0 sends every command at half its
    /// recorded offset). Give `speed` or `rate`, not both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub speed: Option<f64>,
    /// The mean rate to replay at, in requests per second: the speed that makes the
    /// trace's own mean rate this one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    /// Connections to hash the recorded clients onto; absent (default), each recorded
    /// client gets a connection of its own. Either way a client's commands keep their
    /// order.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connections: Option<u32>,
    /// Written before every key (e.g. `"replay:"`), so a replay does not touch the keys of
    /// the application it was captured from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_prefix: Option<String>,
    /// Replace every key with a hash of it (16 hex digits; the same key always gets the
    /// same hash), so a trace can be replayed or shared without its key names.
    #[serde(default)]
    pub key_hash: bool,
    /// Replay only these commands (names, any case). A command dropped by default
    /// (FLUSHALL, CONFIG, blocking commands, ...) is replayed only when listed here.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keep: Vec<String>,
    /// Never replay these commands (names, any case), besides those dropped by default.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub drop: Vec<String>,
    /// How many times the trace is replayed, one pass after the other (default 1).
    #[serde(default = "default_loops")]
    pub loops: u32,
    /// Before the measured replay, write the keys the trace reads before it writes them
    /// (strings, with the size of the trace's later write of the key, else
    /// `prefill_size`), so a replay against an empty server measures hits (default true).
    #[serde(default = "default_true")]
    pub prefill: bool,
    /// The value size of a prefilled key whose size the trace does not tell (default 64).
    #[serde(default = "default_prefill_size")]
    pub prefill_size: u32,
    /// This host's share of the recorded clients when a replay is split over hosts
    /// (`--shard I/N` sets it): the clients whose name hashes to `index` of `of`, each
    /// replayed whole at its recorded instants, so the hosts together send the trace once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share: Option<ReplayShare>,
}

/// One host's share of a replay's recorded clients (`replay.share`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct ReplayShare {
    /// This host's share, from 0.
    pub index: u32,
    /// How many hosts share the trace.
    pub of: u32,
}

/// The most connections a replay opens (one per recorded client, or given).
pub const MAX_REPLAY_CONNECTIONS: u32 = 100_000;

fn default_loops() -> u32 {
    1
}
fn default_true() -> bool {
    true
}
fn default_prefill_size() -> u32 {
    64
}

/// Commands never replayed unless `keep` names them: they would wipe, reconfigure or stop
/// the server, or block a connection (and with it every command after it on that
/// connection) for an unknown time.
pub const DROPPED_BY_DEFAULT: &[&str] = &[
    "FLUSHALL",
    "FLUSHDB",
    "SHUTDOWN",
    "CONFIG",
    "DEBUG",
    "MONITOR",
    "SYNC",
    "PSYNC",
    "REPLICAOF",
    "SLAVEOF",
    "FAILOVER",
    "CLUSTER",
    "ACL",
    "AUTH",
    "HELLO",
    "QUIT",
    "RESET",
    "CLIENT",
    "SAVE",
    "BGSAVE",
    "BGREWRITEAOF",
    "MODULE",
    "SCRIPT",
    "FUNCTION",
    "SUBSCRIBE",
    "PSUBSCRIBE",
    "SSUBSCRIBE",
    "UNSUBSCRIBE",
    "PUNSUBSCRIBE",
    "SUNSUBSCRIBE",
    "BLPOP",
    "BRPOP",
    "BRPOPLPUSH",
    "BLMOVE",
    "BLMPOP",
    "BZPOPMIN",
    "BZPOPMAX",
    "BZMPOP",
    "WAIT",
    "WAITAOF",
    "XREAD",
    "XREADGROUP",
];

impl Replay {
    /// Check the fields; `prefix` is the phase's field path prefix.
    pub fn validate(&self, prefix: &str) -> Result<()> {
        let at = |f: &str| format!("{prefix}replay.{f}");
        if self.file.is_empty() {
            return Err(Error::spec(
                at("file"),
                "is empty: give the trace file's path",
            ));
        }
        match (self.speed, self.rate) {
            (Some(_), Some(_)) => {
                return Err(Error::spec(
                    at("rate"),
                    "sets the speed itself: give either replay.speed or replay.rate, not both",
                ))
            }
            (Some(s), None) if !(s.is_finite() && s > 0.0 && s <= 1e6) => {
                return Err(Error::spec(
                    at("speed"),
                    format!("{s}: allowed is a number above 0, up to 1,000,000"),
                ))
            }
            (None, Some(r)) if !(r.is_finite() && r > 0.0 && r <= super::MAX_RATE) => {
                return Err(Error::spec(
                    at("rate"),
                    format!(
                        "{r}: allowed is a rate above 0, up to {} requests per second",
                        super::MAX_RATE
                    ),
                ))
            }
            _ => {}
        }
        if let Some(n) = self.connections {
            if n == 0 || n > MAX_REPLAY_CONNECTIONS {
                return Err(Error::spec(
                    at("connections"),
                    format!(
                        "{n}: allowed are 1 to {MAX_REPLAY_CONNECTIONS} (or no value: a \
                         connection per recorded client)"
                    ),
                ));
            }
        }
        if self.loops == 0 || self.loops > 1_000_000 {
            return Err(Error::spec(
                at("loops"),
                format!("{}: allowed are 1 to 1,000,000 passes", self.loops),
            ));
        }
        if self.prefill_size > super::MAX_VALUE_SIZE {
            return Err(Error::spec(
                at("prefill_size"),
                format!(
                    "{}: allowed are 0 to {} bytes",
                    self.prefill_size,
                    super::MAX_VALUE_SIZE
                ),
            ));
        }
        if let Some(ReplayShare { index, of }) = self.share {
            if of == 0 || index >= of {
                return Err(Error::spec(
                    at("share"),
                    format!(
                        "{{ index = {index}, of = {of} }}: allowed is an index from 0 to of - 1"
                    ),
                ));
            }
        }
        for (field, list) in [("keep", &self.keep), ("drop", &self.drop)] {
            for (i, name) in list.iter().enumerate() {
                if name.is_empty() || name.bytes().any(|b| b.is_ascii_whitespace()) {
                    return Err(Error::spec(
                        format!("{}[{i}]", at(field)),
                        format!("`{name}`: expected a command name, e.g. \"GET\""),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Whether a command named `upper` (upper case) is replayed.
    pub fn replays(&self, upper: &str) -> bool {
        let named = |list: &[String]| list.iter().any(|n| n.eq_ignore_ascii_case(upper));
        if named(&self.drop) {
            return false;
        }
        if !self.keep.is_empty() {
            return named(&self.keep);
        }
        !DROPPED_BY_DEFAULT.contains(&upper)
    }
}
