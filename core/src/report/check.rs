//! Service-level checks of a report ([`Report::check`]): one rule set, and one message, for
//! Python's `Report.check()`, Node's `report.check()`, the CLI's `--check` and a spec's
//! `[thresholds]` ([`super::Threshold`]).

use super::{Report, Stats};
use crate::{Error, Result};
use serde_json::Value as Json;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Limits on one set of stats (the totals, or one command's). A limit left out is not checked.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Limits {
    /// Highest p50 latency, in milliseconds.
    pub p50_ms: Option<f64>,
    /// Highest p90 latency, in milliseconds.
    pub p90_ms: Option<f64>,
    /// Highest p99 latency, in milliseconds.
    pub p99_ms: Option<f64>,
    /// Highest p99.9 latency, in milliseconds.
    pub p99_9_ms: Option<f64>,
    /// Highest latency of any request, in milliseconds.
    pub max_ms: Option<f64>,
    /// Highest error rate (errors / requests), 0 to 1.
    pub error_rate: Option<f64>,
    /// Lowest throughput, in requests per second (the one limit that is a floor).
    pub ops_per_sec: Option<f64>,
}

/// What a report is checked against: limits on its totals, and on commands by label.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Budget {
    /// Limits on `totals`.
    pub totals: Limits,
    /// Limits on `commands.<label>`; a label the report does not have fails the check.
    pub commands: BTreeMap<String, Limits>,
}

/// Every limit's name: the one vocabulary of a budget (`check()`, `--check`), a spec's
/// `[thresholds]`, `compare --fail-on` and `Comparison.check()`, and the metrics a comparison's
/// rows hold. Each is the report's figure it bounds, flattened: `ops_per_sec`, `p99_ms` (the
/// report's `latency_ms.p99`), `error_rate`. `ops_per_sec` is a floor, the others ceilings.
pub const LIMITS: [&str; 7] = [
    "p50_ms",
    "p90_ms",
    "p99_ms",
    "p99_9_ms",
    "max_ms",
    "error_rate",
    "ops_per_sec",
];

/// The message for a limit name that is not one of [`LIMITS`]: it names `name` and lists the
/// allowed ones, then the other keys `also` accepted where it was given.
pub fn unknown_limit(name: &str, also: &[&str]) -> String {
    let allowed: Vec<&str> = LIMITS.iter().chain(also).copied().collect();
    format!("unknown limit `{name}` (allowed: {})", allowed.join(", "))
}

/// Whether the limit `name` is a floor (the figure must be at least the limit: throughput)
/// rather than a ceiling (at most: latencies, the error rate).
pub fn is_floor(name: &str) -> bool {
    name == "ops_per_sec"
}

impl Limits {
    /// The limit named `name` (one of [`LIMITS`]), to read or set.
    pub fn slot(&mut self, name: &str) -> Option<&mut Option<f64>> {
        Some(match name {
            "ops_per_sec" => &mut self.ops_per_sec,
            "p50_ms" => &mut self.p50_ms,
            "p90_ms" => &mut self.p90_ms,
            "p99_ms" => &mut self.p99_ms,
            "p99_9_ms" => &mut self.p99_9_ms,
            "max_ms" => &mut self.max_ms,
            "error_rate" => &mut self.error_rate,
            _ => return None,
        })
    }

    /// The limits given, with their names, in [`LIMITS`] order.
    pub fn given(&self) -> Vec<(&'static str, f64)> {
        let all = [
            self.p50_ms,
            self.p90_ms,
            self.p99_ms,
            self.p99_9_ms,
            self.max_ms,
            self.error_rate,
            self.ops_per_sec,
        ];
        LIMITS
            .iter()
            .zip(all)
            .filter_map(|(name, limit)| Some((*name, limit?)))
            .collect()
    }
}

/// The figure of `s` that the limit `name` bounds (NaN when `s` has none: no requests).
pub fn measured(name: &str, s: &Stats) -> f64 {
    if s.ops == 0 {
        return f64::NAN;
    }
    let l = &s.latency_ms;
    match name {
        "ops_per_sec" => s.ops_per_sec,
        "p50_ms" => l.p50,
        "p90_ms" => l.p90,
        "p99_ms" => l.p99,
        "p99_9_ms" => l.p99_9,
        "max_ms" => l.max,
        "error_rate" => s.error_rate,
        _ => f64::NAN,
    }
}

/// Whether `value` keeps within the limit `name` of `limit`: at most, or at least for
/// `ops_per_sec` ([`is_floor`]). No figure (NaN) never does.
pub fn holds(name: &str, limit: f64, value: f64) -> bool {
    match name {
        _ if value.is_nan() => false,
        _ if is_floor(name) => value >= limit,
        _ => value <= limit,
    }
}

impl Budget {
    /// A budget from its JSON form: `{"p99_ms": 5, "error_rate": 0.001, "commands": {"GET":
    /// {"p99_ms": 2}}}`. An unknown key, a value that is not a number, a negative one or an
    /// error rate above 1 is an error naming it (`check.commands.GET.p99_ms`).
    pub fn from_json_value(value: &Json) -> Result<Budget> {
        Budget::from_json_at(value, "check", &[])
    }

    /// [`Budget::from_json_value`] of the object at `path` (named in errors), whose keys
    /// `also` are the caller's to read (a spec's `abort_on_fail`).
    pub fn from_json_at(value: &Json, path: &str, also: &[&str]) -> Result<Budget> {
        let object = as_object(value, path)?;
        let mut budget = Budget {
            totals: limits(object, path, also, true)?,
            ..Budget::default()
        };
        if let Some(commands) = object.get("commands").filter(|c| !c.is_null()) {
            for (label, value) in as_object(commands, &format!("{path}.commands"))? {
                let path = format!("{path}.commands.{label}");
                let limits = limits(as_object(value, &path)?, &path, &[], false)?;
                budget.commands.insert(label.clone(), limits);
            }
        }
        Ok(budget)
    }

    /// The budget as JSON ([`Budget::from_json_value`] reads it back).
    pub fn to_json(&self) -> Json {
        fn object(l: &Limits) -> serde_json::Map<String, Json> {
            l.given()
                .into_iter()
                .map(|(name, limit)| (name.to_string(), Json::from(limit)))
                .collect()
        }
        let mut out = object(&self.totals);
        if !self.commands.is_empty() {
            let commands = self
                .commands
                .iter()
                .map(|(label, l)| (label.clone(), Json::Object(object(l))))
                .collect();
            out.insert("commands".into(), Json::Object(commands));
        }
        Json::Object(out)
    }

    /// Whether no limit is given.
    pub fn is_empty(&self) -> bool {
        self.totals.given().is_empty() && self.commands.values().all(|l| l.given().is_empty())
    }

    /// [`Budget::from_json_value`] of JSON text.
    pub fn from_json_str(text: &str) -> Result<Budget> {
        let value = serde_json::from_str(text)
            .map_err(|e| Error::spec("check", format!("not valid JSON: {e}")))?;
        Budget::from_json_value(&value)
    }
}

fn as_object<'a>(value: &'a Json, path: &str) -> Result<&'a serde_json::Map<String, Json>> {
    value
        .as_object()
        .ok_or_else(|| Error::spec(path, format!("expected an object of limits, got `{value}`")))
}

fn limits(
    object: &serde_json::Map<String, Json>,
    path: &str,
    also: &[&str],
    totals: bool,
) -> Result<Limits> {
    let mut limits = Limits::default();
    for (key, value) in object {
        if (totals && key == "commands") || also.contains(&key.as_str()) {
            continue;
        }
        let Some(slot) = limits.slot(key) else {
            let extra: Vec<&str> = also
                .iter()
                .copied()
                .chain(totals.then_some("commands"))
                .collect();
            return Err(Error::spec(path, unknown_limit(key, &extra)));
        };
        if value.is_null() {
            continue;
        }
        let field = format!("{path}.{key}");
        let n = value
            .as_f64()
            .ok_or_else(|| Error::spec(&field, format!("`{value}` is not a number")))?;
        if n < 0.0 || (key == "error_rate" && n > 1.0) {
            let allowed = if key == "error_rate" {
                "0 to 1"
            } else {
                "0 or more"
            };
            return Err(Error::spec(
                &field,
                format!("{n} is out of range ({allowed})"),
            ));
        }
        *slot = Some(n);
    }
    Ok(limits)
}

/// `n` as written in a message: whole numbers as they are, others with `digits` decimals.
pub(super) fn number(n: f64, digits: usize) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{n}")
    } else {
        format!("{n:.digits$}")
    }
}

pub(super) fn check_stats(
    where_: &str,
    s: &Stats,
    l: &Limits,
    duration_s: f64,
    out: &mut Vec<String>,
) {
    let latency = [
        (l.p50_ms, s.latency_ms.p50, "p50"),
        (l.p90_ms, s.latency_ms.p90, "p90"),
        (l.p99_ms, s.latency_ms.p99, "p99"),
        (l.p99_9_ms, s.latency_ms.p99_9, "p99.9"),
        (l.max_ms, s.latency_ms.max, "max"),
    ];
    for (limit, actual, label) in latency {
        if let Some(limit) = limit.filter(|limit| actual.is_nan() || actual > *limit) {
            out.push(format!(
                "{where_}: {label} latency {} ms is over the budget of {limit} ms",
                number(actual, 3)
            ));
        }
    }
    if let Some(limit) = l
        .error_rate
        .filter(|limit| s.error_rate.is_nan() || s.error_rate > *limit)
    {
        let mut kinds = String::new();
        for (kind, n) in &s.errors_by_kind {
            let sep = if kinds.is_empty() { ": " } else { ", " };
            let _ = write!(kinds, "{sep}{kind} {n}");
        }
        out.push(format!(
            "{where_}: error rate {}% ({} of {} requests{kinds}) is over the budget of {}%",
            number(s.error_rate * 100.0, 2),
            s.errors,
            s.ops,
            // 0.07 * 100 is 7.000000000000001: shown as the 7 it was meant to be.
            (limit * 100.0 * 1e9).round() / 1e9
        ));
    }
    if let Some(limit) = l
        .ops_per_sec
        .filter(|limit| s.ops_per_sec.is_nan() || s.ops_per_sec < *limit)
    {
        out.push(format!(
            "{where_}: throughput {} ops/s ({} requests in {} s) is under the budget of {limit} ops/s",
            number(s.ops_per_sec, 1),
            s.ops,
            number(duration_s, 3)
        ));
    }
}

impl Report {
    /// Check the report against `budget`: `None` when every limit holds, or the message
    /// listing every one missed. A run that finished no request, or that was interrupted
    /// (its report is partial), never passes.
    pub fn check(&self, budget: &Budget) -> Option<String> {
        let mut failures = Vec::new();
        self.check_scope(None, budget, &mut failures);
        self.run_state(&mut failures);
        self.budget_message("budget", failures)
    }

    /// The limits of `budget` missed by the run's totals and commands (`phase` None) or by
    /// one phase's, as lines of [`Report::check`]'s message.
    pub(super) fn check_scope(&self, phase: Option<&str>, budget: &Budget, out: &mut Vec<String>) {
        let (prefix, totals, commands, duration_s) = match phase {
            None => ("", &self.totals, &self.commands, self.duration_s),
            Some(name) => match self.phase(name) {
                Some(p) => (name, &p.totals, &p.commands, p.duration_s),
                None => {
                    out.push(format!("phases.{name}: did not run"));
                    return;
                }
            },
        };
        let scope = |what: &str| match phase {
            None => what.to_string(),
            Some(_) if what == "totals" => format!("phases.{prefix}"),
            Some(_) => format!("phases.{prefix}.{what}"),
        };
        if totals.ops == 0 {
            let what = if phase.is_some() { "phase" } else { "run" };
            out.push(format!(
                "{}: the {what} finished no requests",
                scope("totals")
            ));
        } else {
            check_stats(&scope("totals"), totals, &budget.totals, duration_s, out);
        }
        for (label, limits) in &budget.commands {
            let where_ = scope(&format!("commands.{label}"));
            match commands.get(label) {
                Some(stats) => check_stats(&where_, stats, limits, duration_s, out),
                None => {
                    let have: Vec<&str> = commands.keys().map(String::as_str).collect();
                    let have = if have.is_empty() {
                        "none".to_string()
                    } else {
                        have.join(", ")
                    };
                    out.push(format!("{where_}: not in the report (commands: {have})"));
                }
            }
        }
    }

    /// A line for a run that stopped early or was interrupted: its figures are partial.
    pub(super) fn run_state(&self, out: &mut Vec<String>) {
        match &self.error {
            Some(error) => out.push(format!("the run stopped early: {error}")),
            None if self.interrupted => {
                out.push("the run was interrupted: its report is partial".to_string());
            }
            None => {}
        }
    }

    /// `None` when nothing failed, else the message listing `failures` under a header
    /// saying what was not met (`budget`, `thresholds`).
    pub(super) fn budget_message(&self, what: &str, failures: Vec<String>) -> Option<String> {
        if failures.is_empty() {
            return None;
        }
        let interrupted = if self.interrupted {
            ", interrupted"
        } else {
            ""
        };
        Some(format!(
            "respload {what} not met ({} requests in {} s{interrupted}):\n  - {}",
            self.totals.ops,
            number(self.duration_s, 3),
            failures.join("\n  - ")
        ))
    }
}

/// The warning of a report (its JSON text) whose validity checks failed
/// ([`super::Validity::warning`]), for the bindings' `check()`; `None` when trusted.
pub fn validity_warning(report_json: &str) -> Result<Option<String>> {
    Ok(Report::from_json_str(report_json)?.validity.warning())
}

/// [`Report::check`] of a report's JSON text against a budget's ([`Budget::from_json_str`]),
/// for the bindings, which hold reports as JSON.
pub fn check_report(report_json: &str, budget_json: &str) -> Result<Option<String>> {
    let budget = Budget::from_json_str(budget_json)?;
    Ok(Report::from_json_str(report_json)?.check(&budget))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn report(ops: u64, errors: u64, p99: f64) -> Report {
        let mut totals = Stats {
            ops,
            errors,
            error_rate: errors as f64 / ops.max(1) as f64,
            ops_per_sec: ops as f64 / 2.0,
            ..Stats::default()
        };
        totals.latency_ms.p50 = p99 / 2.0;
        totals.latency_ms.p99 = p99;
        totals.latency_ms.p99_9 = p99 * 2.0;
        if errors > 0 {
            totals.errors_by_kind.insert("WRONGTYPE".into(), errors);
        }
        Report {
            duration_s: 2.0,
            commands: BTreeMap::from([("SET".to_string(), totals.clone())]),
            totals,
            ..Report::default()
        }
    }

    fn budget(value: Json) -> Budget {
        Budget::from_json_value(&value).unwrap()
    }

    #[test]
    fn every_limit_met_passes_and_each_missed_one_is_named() {
        let r = report(2000, 20, 1.5);
        let seven = r.check(&budget(json!({ "error_rate": 0.0007 }))).unwrap();
        assert!(seven.ends_with("is over the budget of 0.07%"), "{seven}");
        let all = json!({ "p50_ms": 0.75, "p99_ms": 1.5, "p99_9_ms": 3, "error_rate": 0.01,
            "ops_per_sec": 1000, "commands": { "SET": { "p99_ms": 1.5 } } });
        assert_eq!(r.check(&budget(all)), None);
        let message = r
            .check(&budget(
                json!({ "p50_ms": 0.7, "p99_ms": 1.4, "p99_9_ms": 2.9,
                "error_rate": 0.001, "ops_per_sec": 1000.5,
                "commands": { "SET": { "p99_ms": 1 }, "GET": { "p99_ms": 1 } } }),
            ))
            .unwrap();
        assert_eq!(
            message,
            "respload budget not met (2000 requests in 2 s):\n  \
             - totals: p50 latency 0.750 ms is over the budget of 0.7 ms\n  \
             - totals: p99 latency 1.500 ms is over the budget of 1.4 ms\n  \
             - totals: p99.9 latency 3 ms is over the budget of 2.9 ms\n  \
             - totals: error rate 1% (20 of 2000 requests: WRONGTYPE 20) is over the budget of 0.1%\n  \
             - totals: throughput 1000 ops/s (2000 requests in 2 s) is under the budget of 1000.5 ops/s\n  \
             - commands.GET: not in the report (commands: SET)\n  \
             - commands.SET: p99 latency 1.500 ms is over the budget of 1 ms"
        );
    }

    #[test]
    fn an_empty_interrupted_or_stopped_run_never_passes() {
        let empty = report(0, 0, 0.0);
        let message = empty.check(&Budget::default()).unwrap();
        assert!(
            message.contains("totals: the run finished no requests"),
            "{message}"
        );
        let mut partial = report(10, 0, 1.0);
        partial.interrupted = true;
        let message = partial.check(&Budget::default()).unwrap();
        assert!(message.starts_with("respload budget not met (10 requests in 2 s, interrupted)"));
        assert!(message.ends_with("- the run was interrupted: its report is partial"));
        partial.error = Some("phase `b` failed: cannot connect".into());
        let message = partial.check(&Budget::default()).unwrap();
        assert!(message.ends_with("- the run stopped early: phase `b` failed: cannot connect"));
    }

    #[test]
    fn a_bad_budget_is_refused_by_its_path() {
        let err = |value: Json| Budget::from_json_value(&value).unwrap_err().to_string();
        assert_eq!(
            err(json!({ "p99": 5 })),
            "invalid spec at `check`: unknown limit `p99` (allowed: p50_ms, p90_ms, p99_ms, \
             p99_9_ms, max_ms, error_rate, ops_per_sec, commands)"
        );
        assert_eq!(
            err(json!({ "commands": { "GET": { "commands": {} } } })),
            "invalid spec at `check.commands.GET`: unknown limit `commands` (allowed: p50_ms, \
             p90_ms, p99_ms, p99_9_ms, max_ms, error_rate, ops_per_sec)"
        );
        assert_eq!(
            err(json!({ "p99_ms": "5" })),
            "invalid spec at `check.p99_ms`: `\"5\"` is not a number"
        );
        assert_eq!(
            err(json!({ "error_rate": 2 })),
            "invalid spec at `check.error_rate`: 2 is out of range (0 to 1)"
        );
        assert_eq!(
            err(json!({ "commands": { "GET": { "p99_ms": -1 } } })),
            "invalid spec at `check.commands.GET.p99_ms`: -1 is out of range (0 or more)"
        );
        assert_eq!(
            err(json!([1])),
            "invalid spec at `check`: expected an object of limits, got `[1]`"
        );
        // Left out and null are the same: not checked.
        assert_eq!(
            budget(json!({ "p99_ms": null, "commands": null })),
            Budget::default()
        );
    }
}
