//! A spec's `[thresholds]` in the report: each limit with the figure it was checked against
//! and its verdict ([`Threshold`]), whether the whole run passed ([`Report::passed`]) and
//! the message listing what failed. The rules are [`Report::check`]'s, so a threshold and a
//! `check()` of the same limit agree.

use super::check::{holds, is_floor, measured, Budget, Limits};
use super::{Report, ShardOf, Stats};
use serde::{Deserialize, Serialize};

/// One limit of a spec's `[thresholds]`, and how the run did against it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Threshold {
    /// Its name: the limit, after the phase (`phases.NAME.`) and command (`commands.LABEL.`)
    /// it applies to, e.g. `p99_ms`, `commands.GET.p99_ms`, `phases.load.error_rate`.
    pub name: String,
    /// The phase whose results it bounds; absent for the run's (the measured phases
    /// together: `totals` and `commands`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// The command label whose results it bounds; absent for all commands together.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// The limit: `ops_per_sec` (at least), `p50_ms`, `p90_ms`, `p99_ms`, `p99_9_ms`,
    /// `max_ms` or `error_rate` (at most).
    pub metric: String,
    /// Its value (ms, a rate from 0 to 1, or requests per second).
    pub limit: f64,
    /// The figure it was checked against; absent when there was none (no requests, a phase
    /// that did not run, a command not in the results).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    /// Whether the figure kept within the limit.
    pub passed: bool,
    /// Whether it stopped the run (`abort_on_fail`): its figure crossed the limit while the
    /// run went on, after the grace period.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stopped_run: bool,
}

impl Threshold {
    /// The thresholds of `budget`, not yet judged: on the run's results (`phase` None) or
    /// on one phase's.
    pub fn of(budget: &Budget, phase: Option<&str>) -> Vec<Threshold> {
        let scopes = std::iter::once((None, &budget.totals))
            .chain(budget.commands.iter().map(|(l, limits)| (Some(l), limits)));
        let mut out = Vec::new();
        for (command, limits) in scopes {
            for (metric, limit) in limits.given() {
                let mut name = String::new();
                if let Some(p) = phase {
                    name = format!("phases.{p}.");
                }
                if let Some(c) = command {
                    name = format!("{name}commands.{c}.");
                }
                out.push(Threshold {
                    name: format!("{name}{metric}"),
                    phase: phase.map(str::to_string),
                    command: command.cloned(),
                    metric: metric.to_string(),
                    limit,
                    ..Threshold::default()
                });
            }
        }
        out
    }

    /// Judge it against `stats` (its scope's results; `None` when they do not exist). A
    /// shard's results hold `share` of the workload's requests: its `ops_per_sec` is
    /// checked against that part of the limit.
    pub fn judge(&mut self, stats: Option<&Stats>, share: f64) {
        let value = stats.map_or(f64::NAN, |s| measured(&self.metric, s));
        self.value = (!value.is_nan()).then_some(value);
        self.passed = !self.stopped_run && holds(&self.metric, self.limit_for(share), value);
    }

    /// The limit for results holding `share` of the workload's requests: a shard's part of
    /// an `ops_per_sec`, the others as written.
    pub fn limit_for(&self, share: f64) -> f64 {
        match is_floor(&self.metric) {
            true => self.limit * share,
            false => self.limit,
        }
    }
}

impl Report {
    /// The results a threshold bounds: the run's or a phase's totals, or one command's.
    fn stats_for(&self, t: &Threshold) -> Option<&Stats> {
        let (totals, commands) = match &t.phase {
            None => (&self.totals, &self.commands),
            Some(name) => {
                let p = self.phase(name)?;
                (&p.totals, &p.commands)
            }
        };
        match &t.command {
            None => Some(totals),
            Some(label) => commands.get(label),
        }
    }

    /// Judge every threshold against the report's figures (again, after a merge), and set
    /// [`Report::passed`].
    pub fn judge_thresholds(&mut self) {
        let share = self.shard.as_ref().map_or(1.0, ShardOf::share);
        let mut thresholds = std::mem::take(&mut self.thresholds);
        for t in &mut thresholds {
            t.judge(self.stats_for(t), share);
        }
        self.thresholds = thresholds;
        self.passed = self.verdict();
    }

    /// Every threshold held and the run was complete: not interrupted, no phase failed, not
    /// stopped by a threshold. True for a complete run without thresholds.
    pub fn verdict(&self) -> bool {
        !self.interrupted
            && self.error.is_none()
            && self.stopped_by.is_none()
            && self.thresholds.iter().all(|t| t.passed)
    }

    /// `None` when every threshold held and the run was complete, else the message listing
    /// each one missed (as [`Report::check`] words it) and why the run is not complete.
    pub fn threshold_failures(&self) -> Option<String> {
        if self.verdict() {
            return None;
        }
        let share = self.shard.as_ref().map_or(1.0, ShardOf::share);
        // The thresholds as budgets, one per scope (the run's, then each phase's in order).
        let mut scopes: Vec<(Option<&str>, Budget)> = Vec::new();
        for t in &self.thresholds {
            let phase = t.phase.as_deref();
            let at = match scopes.iter().position(|(p, _)| *p == phase) {
                Some(i) => i,
                None => {
                    scopes.push((phase, Budget::default()));
                    scopes.len() - 1
                }
            };
            let budget = &mut scopes[at].1;
            let limits: &mut Limits = match &t.command {
                None => &mut budget.totals,
                Some(label) => budget.commands.entry(label.clone()).or_default(),
            };
            if let Some(slot) = limits.slot(&t.metric) {
                *slot = Some(t.limit_for(share));
            }
        }
        let mut failures = Vec::new();
        if let Some(why) = &self.stopped_by {
            failures.push(format!("the run was stopped early: {why}"));
        }
        for (phase, budget) in &scopes {
            self.check_scope(*phase, budget, &mut failures);
        }
        self.run_state(&mut failures);
        // A threshold judged failed whose figure the message does not show as missed.
        if failures.is_empty() {
            for t in self.thresholds.iter().filter(|t| !t.passed) {
                failures.push(format!("{}: failed", t.name));
            }
        }
        self.budget_message("thresholds", failures)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::ShardOf;
    use serde_json::json;

    fn report() -> Report {
        let mut totals = Stats {
            ops: 1000,
            ops_per_sec: 500.0,
            ..Stats::default()
        };
        totals.latency_ms.p90 = 2.0;
        totals.latency_ms.max = 9.0;
        Report {
            duration_s: 2.0,
            commands: [("GET".to_string(), totals.clone())].into(),
            totals,
            ..Report::default()
        }
    }

    fn budget(value: serde_json::Value) -> Budget {
        Budget::from_json_value(&value).unwrap()
    }

    #[test]
    fn judged_at_most_or_at_least_and_never_on_no_figure() {
        let mut r = report();
        r.thresholds = Threshold::of(
            &budget(json!({ "p90_ms": 2, "max_ms": 8.5, "ops_per_sec": 500,
                "commands": { "GET": { "p90_ms": 1 }, "SET": { "p90_ms": 1 } } })),
            None,
        );
        r.judge_thresholds();
        let verdicts: Vec<(&str, Option<f64>, bool)> = r
            .thresholds
            .iter()
            .map(|t| (t.name.as_str(), t.value, t.passed))
            .collect();
        assert_eq!(
            verdicts,
            [
                ("p90_ms", Some(2.0), true),
                ("max_ms", Some(9.0), false),
                ("ops_per_sec", Some(500.0), true),
                ("commands.GET.p90_ms", Some(2.0), false),
                ("commands.SET.p90_ms", None, false),
            ]
        );
        assert!(!r.passed);
        let message = r.threshold_failures().unwrap();
        assert_eq!(
            message,
            "respload thresholds not met (1000 requests in 2 s):\n  \
             - totals: max latency 9 ms is over the budget of 8.5 ms\n  \
             - commands.GET: p90 latency 2 ms is over the budget of 1 ms\n  \
             - commands.SET: not in the report (commands: GET)"
        );
    }

    #[test]
    fn a_shard_meets_its_share_of_a_rate_and_a_stopping_threshold_fails() {
        let mut r = report();
        r.thresholds = Threshold::of(&budget(json!({ "ops_per_sec": 1200 })), None);
        r.judge_thresholds();
        assert!(!r.passed);
        // One of 2 shards: 500 ops/s is not half of 1,200; one of 3: it is more than a third.
        for (count, passed) in [(2, false), (3, true)] {
            r.shard = Some(ShardOf {
                index: 0,
                count,
                workload: json!({}),
            });
            r.judge_thresholds();
            assert_eq!(r.passed, passed, "{count} shards");
        }
        assert_eq!(r.threshold_failures(), None);
        r.thresholds[0].stopped_run = true;
        r.stopped_by = Some("threshold `ops_per_sec` crossed".into());
        r.judge_thresholds();
        assert!(!r.passed && !r.thresholds[0].passed);
        let message = r.threshold_failures().unwrap();
        assert!(
            message.ends_with("- the run was stopped early: threshold `ops_per_sec` crossed"),
            "{message}"
        );
    }

    #[test]
    fn a_report_older_than_passed_gets_the_verdict_of_its_fields() {
        let mut r = report();
        r.thresholds = Threshold::of(&budget(json!({ "p90_ms": 5 })), None);
        r.judge_thresholds();
        let mut json: serde_json::Value = serde_json::from_str(&r.to_json()).unwrap();
        json.as_object_mut().unwrap().remove("passed");
        assert!(Report::from_json_str(&json.to_string()).unwrap().passed);
        json["interrupted"] = json!(true);
        assert!(!Report::from_json_str(&json.to_string()).unwrap().passed);
        json["interrupted"] = json!(false);
        json["thresholds"][0]["passed"] = json!(false);
        assert!(!Report::from_json_str(&json.to_string()).unwrap().passed);
    }
}
