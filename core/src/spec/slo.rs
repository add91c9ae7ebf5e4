//! SLO search (`[slo]`): find the highest open-loop rate that keeps a latency percentile
//! under a budget and errors under a bound.

use super::load::{whole_seconds, MAX_RATE, MIN_RATE};
use super::SpecDuration;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// What to search for and how (`slo` in a phase).
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct Slo {
    /// The latency percentile held to the budget (default 99: p99), above 0 and up to 100.
    #[serde(default = "default_percentile")]
    pub percentile: f64,
    /// The latency budget in milliseconds, for the percentile (counted from intended send
    /// times, as every open-loop latency).
    pub budget_ms: f64,
    /// Highest error rate (errors / requests) a step may have (default 0.001).
    #[serde(default = "default_max_error_rate")]
    pub max_error_rate: f64,
    /// Lowest achieved rate, as a fraction of the rate asked for (default 0.95): a rate the
    /// client or server cannot reach does not count as met.
    #[serde(default = "default_min_achieved")]
    pub min_achieved: f64,
    /// The first rate tried (requests per second in total, 0.001 to 100,000,000; default 1000).
    #[serde(default = "default_start_rate")]
    pub start_rate: f64,
    /// The highest rate tried (default 10,000,000).
    #[serde(default = "default_max_rate")]
    pub max_rate: f64,
    /// How long each rate is measured: a whole number of seconds (default 5s). `load.warmup`
    /// runs before each step.
    #[serde(default = "default_step_duration")]
    pub step_duration: SpecDuration,
    /// The most rates tried (default 12).
    #[serde(default = "default_max_steps")]
    pub max_steps: u32,
    /// Stop bisecting once the first failing rate is within this fraction above the best
    /// rate met (default 0.05).
    #[serde(default = "default_precision")]
    pub precision: f64,
}

fn default_percentile() -> f64 {
    99.0
}
fn default_max_error_rate() -> f64 {
    0.001
}
fn default_min_achieved() -> f64 {
    0.95
}
fn default_start_rate() -> f64 {
    1000.0
}
fn default_max_rate() -> f64 {
    10_000_000.0
}
fn default_step_duration() -> SpecDuration {
    SpecDuration(Duration::from_secs(5))
}
fn default_max_steps() -> u32 {
    12
}
fn default_precision() -> f64 {
    0.05
}

impl Slo {
    /// Check ranges and conflicts with `[load]`; `p` prefixes error paths.
    pub(crate) fn validate(&self, p: &str, load: &super::Load) -> crate::Result<()> {
        let at = |f: &str| format!("{p}slo.{f}");
        let check = |f: &str, v: f64, ok: bool, allowed: &str| {
            if ok {
                Ok(())
            } else {
                Err(crate::Error::spec(
                    at(f),
                    format!("{v} is out of range: allowed is {allowed}"),
                ))
            }
        };
        let p_ = self.percentile;
        check(
            "percentile",
            p_,
            p_ > 0.0 && p_ <= 100.0,
            "above 0 and up to 100",
        )?;
        let b = self.budget_ms;
        check(
            "budget_ms",
            b,
            b > 0.0 && b <= 3_600_000.0,
            "above 0 and up to 3600000 ms",
        )?;
        let e = self.max_error_rate;
        check("max_error_rate", e, (0.0..=1.0).contains(&e), "0 to 1")?;
        let m = self.min_achieved;
        check(
            "min_achieved",
            m,
            m > 0.0 && m <= 1.0,
            "above 0 and up to 1",
        )?;
        let rate_range = format!("{MIN_RATE} to {MAX_RATE} requests per second");
        let s = self.start_rate;
        check(
            "start_rate",
            s,
            (MIN_RATE..=MAX_RATE).contains(&s),
            &rate_range,
        )?;
        let x = self.max_rate;
        check(
            "max_rate",
            x,
            x >= s && x <= MAX_RATE,
            &format!("from slo.start_rate ({s}) up to {MAX_RATE}"),
        )?;
        whole_seconds(&at("step_duration"), self.step_duration)?;
        super::load::range(p, "slo.max_steps", self.max_steps as u64)?;
        let q = self.precision;
        check("precision", q, q > 0.0 && q <= 1.0, "above 0 and up to 1")?;
        // The search sets the rate and the length of each step itself.
        for (field, set) in [
            ("rate", load.rate.is_some()),
            ("rate_ramp", load.rate_ramp.is_some()),
            ("rate_profile", load.rate_profile.is_some()),
            ("connections_ramp", load.connections_ramp.is_some()),
            ("requests", load.requests.is_some()),
            ("duration", load.duration.is_some()),
        ] {
            if set {
                return Err(crate::Error::spec(
                    format!("{p}load.{field}"),
                    "cannot be combined with slo: the search sets the rate of each step and \
                     measures it for slo.step_duration",
                ));
            }
        }
        Ok(())
    }
}
