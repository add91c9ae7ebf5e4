//! The workload spec: one schema for TOML files, JSON, Python dicts and JS objects.
//!
//! A spec is either one workload, or a base workload plus `[[phases]]`: each phase is a
//! partial workload laid over the base (tables merge, arrays and values replace), with a
//! `name` and whether it is `measured`. Parsing validates everything before any traffic.

mod command;
mod duration;
mod events;
mod json_text;
mod keys;
mod load;
mod node_addr;
mod output;
mod replay;
#[cfg(feature = "schema")]
mod schema;
mod slo;
mod start_at;
mod statsd;
mod target;
mod template;
mod thresholds;
mod tls;
mod values;
mod vars;

pub(crate) use command::READ_COMMANDS;
pub use command::{CommandSpec, Pick, BUILTINS};
pub use duration::SpecDuration;
pub use events::{Drill, DrillMode, Event, MAX_EVENTS};
pub use keys::{Distribution, Keys, Shares, MAX_SHARES};
pub use load::{
    Arrivals, ConnectionsRamp, Io, Load, Pacing, RampShare, RateProfile, RateRamp, Reconnect,
    Refill, Requests, Retry, DEFAULT_REQUESTS, MAX_RAMP_STEPS, MAX_RATE, MIN_RATE,
};
pub use node_addr::NodeAddr;
pub use output::Output;
pub use replay::{Replay, ReplayShare, DROPPED_BY_DEFAULT, MAX_REPLAY_CONNECTIONS};
#[cfg(feature = "schema")]
pub use schema::json_schema;
pub use slo::Slo;
pub(crate) use start_at::civil_from_days;
pub use start_at::{
    check_not_late, parse_start_at, unix_now, START_AHEAD_LIMIT_S, START_LATE_LIMIT_S,
};
pub use statsd::{sanitize_name_part, Statsd};
pub(crate) use target::redact_url;
pub use target::{Family, ReadFrom, Target};
pub(crate) use template::escape_literal;
pub use template::{
    parse_template, split_line, uses_node_tag, Arg, Part, Template, MAX_TEMPLATE_ARGS,
};
pub use thresholds::Thresholds;
pub use tls::{Tls, TLS_VERSIONS};
pub use values::{ValueData, ValueSize, Values, MAX_VALUE_SIZE};
pub(crate) use vars::{
    apply as apply_vars, escape as escape_vars, expand_repeats, too_many_phases,
};
pub use vars::{SpecParams, MAX_PHASES, MAX_REPEAT};

use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;

/// The settings of one phase, as written (defaults filled in). A spec document holds these
/// at its top level, with `phases`, `repeat`, `vars` and `scales` besides.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct PhaseSpec {
    /// Phase name in the report (default `main`).
    #[serde(default = "default_name")]
    pub name: String,
    /// Whether this phase's results count in the report's totals (default true).
    #[serde(default = "default_true")]
    pub measured: bool,
    /// The server.
    #[serde(default)]
    pub target: Target,
    /// Connections, pipelining, when to stop.
    #[serde(default)]
    pub load: Load,
    /// Key space.
    #[serde(default)]
    pub keys: Keys,
    /// Values.
    #[serde(default)]
    pub values: Values,
    /// Weighted command mix (default: SET and GET 1:10, as memtier_benchmark).
    #[serde(default = "default_commands")]
    pub commands: Vec<CommandSpec>,
    /// Seed of the request stream; absent means one drawn at start (and recorded in the report).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// What respload watches on the server while the phase runs.
    #[serde(default)]
    pub observe: Observe,
    /// Whether each connection draws its own request stream (default true, memtier's
    /// `--distinct-client-seed`); false gives every connection the same stream, as
    /// memtier_benchmark does by default.
    #[serde(default = "default_true")]
    pub distinct_streams: bool,
    /// Fault drills at set times of the measured part of the phase.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<Event>,
    /// SLO search: run the phase as a series of open-loop steps at different rates to find
    /// the highest rate that meets a latency budget (see [`Slo`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slo: Option<Slo>,
    /// Reports written to files when the phase ends (memtier's text report).
    #[serde(default, skip_serializing_if = "Output::is_empty")]
    pub output: Output,
    /// Limits on results, checked when the run ends (and each second while it runs with
    /// `abort_on_fail`): at the top of a spec, on the run's (the measured phases together,
    /// the report's `totals` and `commands`); in a `[[phases]]` table, on that phase's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thresholds: Option<Thresholds>,
    /// Replay a recorded trace instead of generating requests: its commands at their
    /// recorded instants (open loop), each recorded client's in order (docs/traffic.md).
    /// `commands`, `keys` and `values` do not apply to a replay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay: Option<Replay>,
}

/// Server observation (`[observe]` in a spec).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Observe {
    /// Read `INFO` once per interval on one extra connection, for the server's CPU, memory,
    /// ops/s, hits, evictions, fork and replication state (default true).
    #[serde(default = "default_true")]
    pub info: bool,
    /// Serve the run's live counters and latency histograms for Prometheus on this address
    /// (`HOST:PORT`, e.g. `127.0.0.1:9464`; `GET /metrics`) while the run lasts; every phase
    /// that sets it gives the same address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prometheus: Option<String>,
    /// Serve a live dashboard on this address (`HOST:PORT`, e.g. `127.0.0.1:8089`; open
    /// `http://HOST:PORT/` in a browser) while the run lasts: the report page, its charts
    /// growing each second, then the final report. Loopback unless another address is given;
    /// every phase that sets it gives the same address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dashboard: Option<String>,
    /// Send the measured phases' per-second figures to StatsD over UDP while the run lasts,
    /// as memtier_benchmark's `--statsd-host` does (see [`Statsd`]); every phase that sets
    /// it gives the same settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub statsd: Option<Statsd>,
}

impl Default for Observe {
    fn default() -> Self {
        Observe {
            info: true,
            prometheus: None,
            dashboard: None,
            statsd: None,
        }
    }
}

fn default_name() -> String {
    "main".into()
}
fn default_true() -> bool {
    true
}
fn default_commands() -> Vec<CommandSpec> {
    vec![
        CommandSpec::builtin("set"),
        CommandSpec {
            weight: 10,
            ..CommandSpec::builtin("get")
        },
    ]
}

/// The most commands (a chain's steps each count) one phase may have: the report labels each.
pub const MAX_COMMANDS: usize = u16::MAX as usize;

pub(crate) fn toml_to_json(text: &str) -> Result<Json> {
    let value: toml::Value = toml::from_str(text).map_err(|e| {
        let at = e.span().map(|s| line_of(text, s.start)).unwrap_or_default();
        Error::spec("", format!("not valid TOML{at}: {}", e.message()))
    })?;
    serde_json::to_value(value).map_err(|e| Error::spec("", e))
}

pub(crate) fn json_from_str(text: &str) -> Result<Json> {
    // A byte-order mark, as some editors write (the TOML reader skips it too).
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    serde_json::from_str(text)
        .map(|json_text::Strict(v)| v)
        .map_err(|e| Error::spec("", format!("not valid JSON: {e}")))
}

/// Lay `over` onto `base`: objects merge key by key, anything else replaces.
pub(crate) fn merge(base: &mut Json, over: Json) {
    match (base, over) {
        (Json::Object(b), Json::Object(o)) => {
            for (k, v) in o {
                match b.get_mut(&k) {
                    Some(slot) => merge(slot, v),
                    None => {
                        b.insert(k, v);
                    }
                }
            }
        }
        (slot, v) => *slot = v,
    }
}

fn line_of(text: &str, offset: usize) -> String {
    let line = text[..offset.min(text.len())].matches('\n').count() + 1;
    format!(" (line {line})")
}
