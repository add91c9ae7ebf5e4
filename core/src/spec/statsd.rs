//! StatsD metrics sent while a run lasts, as memtier_benchmark 2.x sends them
//! (`observe.statsd` in a spec, `--statsd-host` in a memtier line).

use crate::{Error, Result};
use serde::{Deserialize, Serialize};

/// Where and how to send the run's per-second figures to StatsD (UDP, one metric a
/// datagram, named `PREFIX.RUN_LABEL.NAME`), and where to post Graphite event annotations.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Statsd {
    /// The StatsD server's host name or address.
    pub host: String,
    /// Its UDP port (default 8125).
    #[serde(default = "default_port")]
    pub port: u16,
    /// The first part of every metric's name: letters, digits, `_`, `-` and `.` (default
    /// `respload`; memtier's lines give `memtier`).
    #[serde(default = "default_prefix")]
    pub prefix: String,
    /// The second part, telling runs apart in a dashboard: letters, digits, `_` and `-`
    /// (default `default`).
    #[serde(default = "default_run_label")]
    pub run_label: String,
    /// The percentiles of each second's latency sent as `latency_pN` gauges (`.` written
    /// `_`: `latency_p99_9`), from 0 to 100 (default 50, 99 and 99.9, memtier's).
    #[serde(default = "default_percentiles")]
    pub percentiles: Vec<f64>,
    /// Post "Benchmark Started" and "Benchmark Completed" events to Graphite's HTTP events
    /// API (`POST /events/`) on `host` at this TCP port as each measured phase starts and
    /// ends (memtier's `--graphite-port`; default none: no events).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graphite_port: Option<u16>,
}

fn default_port() -> u16 {
    8125
}
fn default_prefix() -> String {
    "respload".into()
}
fn default_run_label() -> String {
    "default".into()
}
fn default_percentiles() -> Vec<f64> {
    vec![50.0, 99.0, 99.9]
}

impl Statsd {
    /// Check every field (`at` is the path of `observe.statsd`).
    pub(crate) fn validate(&self, at: &str) -> Result<()> {
        if self.host.trim().is_empty() {
            return Err(Error::spec(
                format!("{at}.host"),
                "an empty host: give the StatsD server's host name or address",
            ));
        }
        if self.port == 0 {
            return Err(Error::spec(
                format!("{at}.port"),
                "0 is not a port: give the StatsD server's UDP port, 1 to 65535 (default 8125)",
            ));
        }
        if self.graphite_port == Some(0) {
            return Err(Error::spec(
                format!("{at}.graphite_port"),
                "0 is not a port: give Graphite's HTTP port, 1 to 65535",
            ));
        }
        name_part(&self.prefix, &format!("{at}.prefix"), true)?;
        name_part(&self.run_label, &format!("{at}.run_label"), false)?;
        for (i, p) in self.percentiles.iter().enumerate() {
            if !(0.0..=100.0).contains(p) {
                return Err(Error::spec(
                    format!("{at}.percentiles[{i}]"),
                    format!("{p} is not a percentile: give a number from 0 to 100"),
                ));
            }
        }
        Ok(())
    }
}

/// A part of a metric's name: what StatsD and Graphite keep as is.
fn name_part(text: &str, at: &str, dots: bool) -> Result<()> {
    let allowed = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-' || (dots && c == '.');
    if let Some(bad) = text.chars().find(|c| !allowed(*c)) {
        let what = if dots {
            "letters, digits, `_`, `-` and `.`"
        } else {
            "letters, digits, `_` and `-`"
        };
        return Err(Error::spec(
            at,
            format!("`{text}` holds `{bad}`: a metric name part takes {what}"),
        ));
    }
    if text.is_empty() && !dots {
        return Err(Error::spec(at, "an empty label: give e.g. \"default\""));
    }
    Ok(())
}

/// `text` with every character a part of a metric's name may not hold replaced by `_`, as
/// memtier does with its `--statsd-prefix` (`dots`) and `--statsd-run-label`.
pub fn sanitize_name_part(text: &str, dots: bool) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' || (dots && c == '.') {
                c
            } else {
                '_'
            }
        })
        .collect()
}
