//! `[thresholds]` (k6's thresholds): limits on the run's results (at the top of a spec) or
//! on one phase's (in a `[[phases]]` table), checked when the run ends and, with
//! `abort_on_fail`, every second while it runs. The limits are a budget's
//! ([`crate::report::Budget`]: the rules of `check()` and `--check`); the report lists each
//! with its verdict ([`crate::report::Threshold`]).

use super::SpecDuration;
use crate::report::{Budget, Threshold};
use crate::{Error, Result};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{json, Value as Json};
use std::time::Duration;

/// The keys of `[thresholds]` that are not limits.
const SETTINGS: [&str; 2] = ["abort_on_fail", "delay_abort_eval"];

/// Limits on results, and whether crossing one stops the run: a table of `p50_ms`,
/// `p90_ms`, `p99_ms`, `p99_9_ms`, `max_ms` (latency at most, ms), `error_rate` (errors /
/// requests at most, 0 to 1) and `ops_per_sec` (throughput at least), each optional;
/// `commands` (the same limits per command label, `[thresholds.commands.GET]`);
/// `abort_on_fail` (bool, default false) and `delay_abort_eval` (a duration, default 0).
/// At least one limit must be given.
#[derive(Debug, Clone, Default, PartialEq)]
// The keys are written into the schema by hand: serde reads them by hand too.
#[cfg_attr(
    feature = "schema",
    derive(schemars::JsonSchema),
    schemars(transform = super::schema::threshold_keys)
)]
pub struct Thresholds {
    /// The limits: on all commands together, and per command label.
    #[cfg_attr(feature = "schema", schemars(skip))]
    pub budget: Budget,
    /// Stop the run as soon as a limit is crossed (checked each second on the results so
    /// far, after `delay_abort_eval`), as k6's `abortOnFail`. The report names the threshold
    /// that stopped it (`stopped_by`).
    #[cfg_attr(feature = "schema", schemars(skip))]
    pub abort_on_fail: bool,
    /// With `abort_on_fail`: how long into the measured part of the phase before the first
    /// check (k6's `delayAbortEval`), so that a slow first second does not stop a run.
    #[cfg_attr(feature = "schema", schemars(skip))]
    pub delay_abort_eval: Duration,
}

impl Thresholds {
    /// Parse the `[thresholds]` table at `path` (named in errors): limits, `commands`,
    /// `abort_on_fail`, `delay_abort_eval`.
    pub fn from_json(value: &Json, path: &str) -> Result<Thresholds> {
        let budget = Budget::from_json_at(value, path, &SETTINGS)?;
        let abort_on_fail = match value.get("abort_on_fail") {
            None | Some(Json::Null) => false,
            Some(Json::Bool(b)) => *b,
            Some(other) => {
                return Err(Error::spec(
                    format!("{path}.abort_on_fail"),
                    format!("`{other}` is not true or false"),
                ))
            }
        };
        let delay_abort_eval = match value.get("delay_abort_eval") {
            None | Some(Json::Null) => Duration::ZERO,
            Some(v) => {
                SpecDuration::deserialize(v)
                    .map_err(|e| Error::spec(format!("{path}.delay_abort_eval"), e))?
                    .0
            }
        };
        if !abort_on_fail && !delay_abort_eval.is_zero() {
            return Err(Error::spec(
                format!("{path}.delay_abort_eval"),
                "applies with abort_on_fail = true only: set it, or remove delay_abort_eval",
            ));
        }
        if budget.is_empty() {
            return Err(Error::spec(
                path,
                format!(
                    "has no limit: give at least one of {}, e.g. p99_ms = 5",
                    crate::report::LIMITS.join(", ")
                ),
            ));
        }
        Ok(Thresholds {
            budget,
            abort_on_fail,
            delay_abort_eval,
        })
    }

    /// The thresholds as written in a spec (what [`Thresholds::from_json`] reads back).
    pub fn to_json(&self) -> Json {
        let mut out = self.budget.to_json();
        if self.abort_on_fail {
            out["abort_on_fail"] = json!(true);
        }
        if !self.delay_abort_eval.is_zero() {
            out["delay_abort_eval"] =
                serde_json::to_value(SpecDuration(self.delay_abort_eval)).unwrap_or(Json::Null);
        }
        out
    }

    /// The report's entries for these limits, not yet judged: the run's (`phase` None) or
    /// one phase's.
    pub fn entries(&self, phase: Option<&str>) -> Vec<Threshold> {
        Threshold::of(&self.budget, phase)
    }
}

impl Serialize for Thresholds {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        self.to_json().serialize(s)
    }
}

impl<'de> Deserialize<'de> for Thresholds {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let value = Json::deserialize(d)?;
        // A phase's table was read with its full path first (`Phase::from_json`); this
        // message is for other readers.
        Thresholds::from_json(&value, "thresholds").map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(value: Json) -> String {
        Thresholds::from_json(&value, "thresholds")
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn reads_limits_and_settings_and_writes_them_back() {
        let value = json!({ "p99_ms": 5, "max_ms": 50, "commands": { "GET": { "p90_ms": 2 } },
            "abort_on_fail": true, "delay_abort_eval": "3s" });
        let t = Thresholds::from_json(&value, "thresholds").unwrap();
        assert_eq!(t.budget.totals.p99_ms, Some(5.0));
        assert_eq!(t.budget.totals.max_ms, Some(50.0));
        assert_eq!(t.budget.commands["GET"].p90_ms, Some(2.0));
        assert!(t.abort_on_fail);
        assert_eq!(t.delay_abort_eval, Duration::from_secs(3));
        assert_eq!(Thresholds::from_json(&t.to_json(), "x").unwrap(), t);
        let names: Vec<String> = t
            .entries(Some("load"))
            .into_iter()
            .map(|e| e.name)
            .collect();
        assert_eq!(
            names,
            [
                "phases.load.p99_ms",
                "phases.load.max_ms",
                "phases.load.commands.GET.p90_ms"
            ]
        );
    }

    #[test]
    fn a_bad_table_is_refused_by_its_path() {
        assert_eq!(
            err(json!({ "p99": 5 })),
            "invalid spec at `thresholds`: unknown limit `p99` (allowed: p50_ms, p90_ms, \
             p99_ms, p99_9_ms, max_ms, error_rate, ops_per_sec, abort_on_fail, \
             delay_abort_eval, commands)"
        );
        assert_eq!(
            err(json!({ "p99_ms": 5, "abort_on_fail": "yes" })),
            "invalid spec at `thresholds.abort_on_fail`: `\"yes\"` is not true or false"
        );
        assert_eq!(
            err(json!({ "p99_ms": 5, "delay_abort_eval": "5s" })),
            "invalid spec at `thresholds.delay_abort_eval`: applies with abort_on_fail = true \
             only: set it, or remove delay_abort_eval"
        );
        assert!(err(json!({ "abort_on_fail": true })).contains("has no limit"));
        assert!(
            err(json!({ "p99_ms": 5, "abort_on_fail": true, "delay_abort_eval": "soon" }))
                .starts_with("invalid spec at `thresholds.delay_abort_eval`: `soon` is not a")
        );
    }
}
