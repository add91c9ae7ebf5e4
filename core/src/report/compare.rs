//! Comparing reports (`respload compare`, [`Comparison::of`]): a baseline against one or more
//! later runs, phase by phase and command by command, each change marked when it is worse
//! beyond what noise alone would give, and limits (`--fail-on p99_ms=+10%`) that fail a build. The metrics are
//! the limits of a budget ([`LIMITS`]): one vocabulary for `check()` and `compare`.
//!
//! Noise, per metric: a percentile's distribution-free confidence interval from its own
//! histogram (the values at ranks `n p ± 2 sqrt(n p (1 - p))`): worse when the later run's
//! interval lies wholly above the baseline's; throughput's spread over the timeline's whole
//! intervals (worse when lower by more than twice the combined standard error); the error
//! rate's two-proportion test (worse when higher by more than twice its standard error). Two
//! runs of one server on one machine differ by more than their sampling error (caches, CPU
//! frequency, neighbours), so a latency or throughput change is also marked only past
//! [`NOISE_FLOOR`]. A maximum is one sample: it is shown and can be limited, never marked.

use super::check::{is_floor, unknown_limit, LIMITS};
use super::{decode_histogram, percentile, PhaseReport, Report, Stats, TimelineRow, NS_PER_MS};
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::fmt::Write as _;

/// The smallest relative change of a latency or of throughput marked worse: run-to-run
/// variation that sampling error does not capture (two runs of one idle local server here
/// differed by up to 12% at the median of a tight distribution).
pub const NOISE_FLOOR: f64 = 0.1;

/// The label of the rows of a phase's totals (all commands together).
pub const ALL: &str = "ALL";

/// Reports compared: a baseline and later runs.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct Comparison {
    /// The reports' labels (file names by default), the baseline first.
    pub labels: Vec<String>,
    /// One row per measured phase, command (`ALL` for the phase's totals) and metric.
    pub rows: Vec<ComparisonRow>,
    /// The limits given, as read (`p99_ms=+10%`).
    pub limits: Vec<String>,
    /// Each limit a later run crossed, one sentence each; empty when none was.
    pub failures: Vec<String>,
}

/// One metric of one command of one phase, in every report.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub struct ComparisonRow {
    /// The phase (by name; a phase a report does not have leaves its value `null`).
    pub phase: String,
    /// The command's label, or `ALL` for the phase's totals.
    pub command: String,
    /// One of the limit names ([`LIMITS`]): `p50_ms`, `p90_ms`, `p99_ms`, `p99_9_ms`,
    /// `max_ms` (latencies in ms), `error_rate` or `ops_per_sec`.
    pub metric: String,
    /// The value in each report, the baseline's first.
    pub values: Vec<Option<f64>>,
    /// Each report's change against the baseline: relative (0.1 is +10%) for every metric
    /// but `error_rate`, whose change is the difference; `null` for the baseline itself and
    /// where either value is missing (or the baseline's is 0 for a relative change).
    pub changes: Vec<Option<f64>>,
    /// Whether each report is worse than the baseline beyond noise (the baseline's: false).
    pub worse: Vec<bool>,
}

/// One `--fail-on` limit: how far a metric may move, against the baseline, before a run
/// fails.
#[derive(Debug, Clone, PartialEq)]
pub struct Limit {
    /// The metric (one of [`LIMITS`]).
    pub metric: String,
    /// The allowed change: a share (0.1 for `+10%`) when `relative`, else in the metric's
    /// unit (negative when `down`).
    pub change: f64,
    /// Whether a fall past `change` fails (`-5%`, and `ops_per_sec` without a sign); else a
    /// rise does.
    pub down: bool,
    /// Whether given in percent.
    pub relative: bool,
    /// The text as given.
    pub text: String,
}

impl Limit {
    /// A limit from `METRIC=CHANGE` (`p99_ms=+10%`, `ops_per_sec=-5%`, `error_rate=+0.001`),
    /// METRIC one of [`LIMITS`]. A change without a sign moves the bad way: down for
    /// `ops_per_sec`, up for the rest.
    pub fn parse(text: &str) -> Result<Limit> {
        let bad = |why: String| Error::spec("fail_on", format!("`{text}`: {why}"));
        let (metric, value) = text
            .split_once('=')
            .ok_or_else(|| bad("expected METRIC=CHANGE, e.g. p99_ms=+10%".into()))?;
        let metric = metric.trim();
        if !LIMITS.contains(&metric) {
            return Err(bad(unknown_limit(metric, &[])));
        }
        let value = value.trim();
        let (number, relative) = match value.strip_suffix('%') {
            Some(n) => (n, true),
            None => (value, false),
        };
        let signed = number.starts_with(['+', '-']);
        let mut change: f64 = number
            .parse()
            .map_err(|_| bad(format!("`{value}` is not a number (e.g. +10% or 0.001)")))?;
        if !change.is_finite() {
            return Err(bad(format!("`{value}` is not a finite number")));
        }
        if relative {
            change /= 100.0;
        }
        let down = match signed {
            true => number.starts_with('-'),
            false => is_floor(metric),
        };
        if down {
            change = -change.abs();
        }
        Ok(Limit {
            metric: metric.to_string(),
            change,
            down,
            relative,
            text: format!("{metric}={value}"),
        })
    }

    /// Whether moving from `base` to `value` crosses this limit.
    fn crossed(&self, base: f64, value: f64) -> bool {
        let moved = match self.relative {
            // From 0, any rise is past a relative limit on a rise (an error rate of 0).
            true if base == 0.0 => return !self.down && value > 0.0,
            true => value / base - 1.0,
            false => value - base,
        };
        match self.down {
            true => moved < self.change,
            false => moved > self.change,
        }
    }
}

impl Comparison {
    /// Compare `reports` (the baseline first, at least two) named by `labels` (as many), and
    /// check `limits` on every later report.
    pub fn of(reports: &[Report], labels: &[String], limits: &[Limit]) -> Result<Comparison> {
        if reports.len() < 2 {
            return Err(Error::spec(
                "reports",
                format!(
                    "{} given: compare a baseline with at least one other report",
                    reports.len()
                ),
            ));
        }
        if labels.len() != reports.len() {
            return Err(Error::spec(
                "labels",
                format!("{} labels for {} reports", labels.len(), reports.len()),
            ));
        }
        let mut phases: Vec<&str> = Vec::new();
        for r in reports {
            for p in r.phases.iter().filter(|p| p.measured) {
                if !phases.contains(&p.name.as_str()) {
                    phases.push(&p.name);
                }
            }
        }
        let mut rows = Vec::new();
        for phase in phases {
            let found: Vec<Option<&PhaseReport>> = reports
                .iter()
                .map(|r| r.phases.iter().find(|p| p.measured && p.name == phase))
                .collect();
            let mut commands: Vec<&str> = vec![ALL];
            for p in found.iter().flatten() {
                for label in p.commands.keys() {
                    if !commands.contains(&label.as_str()) {
                        commands.push(label);
                    }
                }
            }
            for command in commands {
                let stats: Vec<Option<Measured>> = found
                    .iter()
                    .map(|p| {
                        let p = (*p)?;
                        let s = match command {
                            ALL => &p.totals,
                            label => p.commands.get(label)?,
                        };
                        Some(Measured::of(s, p))
                    })
                    .collect();
                for metric in LIMITS {
                    rows.push(row(phase, command, metric, &stats));
                }
            }
        }
        let mut failures = Vec::new();
        if !limits.is_empty() {
            for (r, label) in reports.iter().zip(labels).skip(1) {
                match (&r.error, r.interrupted) {
                    (Some(e), _) => failures.push(format!("{label}: the run failed: {e}")),
                    (None, true) => failures.push(format!(
                        "{label}: the run was interrupted: its figures are partial"
                    )),
                    (None, false) => {}
                }
            }
        }
        failures.extend(self::failures(&rows, labels, limits));
        Ok(Comparison {
            labels: labels.to_vec(),
            rows,
            limits: limits.iter().map(|l| l.text.clone()).collect(),
            failures,
        })
    }

    /// Whether no limit was crossed.
    pub fn passed(&self) -> bool {
        self.failures.is_empty()
    }

    /// The comparison's JSON text with its [`Comparison::text`] added as `text`: what the
    /// bindings hand over, so that `str(comparison)` / `comparison.text` print the table
    /// `respload compare` prints.
    pub fn to_json_with_text(&self) -> Result<String> {
        let mut value =
            serde_json::to_value(self).map_err(|e| Error::Internal(format!("comparison: {e}")))?;
        value["text"] = serde_json::Value::String(self.text());
        Ok(value.to_string())
    }

    /// The comparison as text: one table per phase, each value with its change, `worse`
    /// where it is worse beyond noise; then the limits crossed.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let width = self
            .labels
            .iter()
            .map(|l| l.len())
            .max()
            .unwrap_or(0)
            .max(22)
            + 2;
        let mut phase = None;
        for r in &self.rows {
            if phase != Some(&r.phase) {
                phase = Some(&r.phase);
                let _ = write!(
                    out,
                    "\nPhase {}\n{:<16}{:<12}",
                    r.phase, "Command", "Metric"
                );
                for l in &self.labels {
                    let _ = write!(out, "{l:>width$}");
                }
                let _ = writeln!(out);
            }
            let _ = write!(out, "{:<16}{:<12}", r.command, r.metric);
            for i in 0..r.values.len() {
                let cell = match (r.values[i], r.changes[i]) {
                    (None, _) => "-".to_string(),
                    (Some(v), None) => number(&r.metric, v),
                    (Some(v), Some(c)) => {
                        let change = match r.metric.as_str() {
                            "error_rate" => format!("{c:+.4}"),
                            _ => format!("{:+.1}%", c * 100.0),
                        };
                        let mark = if r.worse[i] { " worse" } else { "" };
                        format!("{} ({change}){mark}", number(&r.metric, v))
                    }
                };
                let _ = write!(out, "{cell:>width$}");
            }
            let _ = writeln!(out);
        }
        if !self.limits.is_empty() {
            let _ = writeln!(out);
            match self.failures.as_slice() {
                [] => {
                    let _ = writeln!(out, "Limits held: {}", self.limits.join(", "));
                }
                failed => {
                    let _ = writeln!(out, "Limits crossed ({}):", failed.len());
                    for f in failed {
                        let _ = writeln!(out, "  - {f}");
                    }
                }
            }
        }
        out
    }
}

fn number(metric: &str, v: f64) -> String {
    match metric {
        "ops_per_sec" => format!("{v:.1}"),
        "error_rate" => format!("{v:.4}"),
        _ => format!("{v:.3}"),
    }
}

/// What one report says about one command of one phase, with what its noise needs.
struct Measured<'a> {
    stats: &'a Stats,
    histogram: Option<hdrhistogram::Histogram<u64>>,
    /// Relative standard error of the phase's throughput, from its timeline.
    rate_se: f64,
}

impl<'a> Measured<'a> {
    fn of(stats: &'a Stats, phase: &PhaseReport) -> Measured<'a> {
        Measured {
            stats,
            histogram: decode_histogram(&stats.histogram),
            // A rare command's rate is noisier than the phase's.
            rate_se: relative_rate_se(&phase.timeline, phase.totals.ops)
                .max(1.0 / (stats.ops.max(1) as f64).sqrt()),
        }
    }

    fn value(&self, metric: &str) -> f64 {
        let l = &self.stats.latency_ms;
        match metric {
            "ops_per_sec" => self.stats.ops_per_sec,
            "p50_ms" => l.p50,
            "p90_ms" => l.p90,
            "p99_ms" => l.p99,
            "p99_9_ms" => l.p99_9,
            "max_ms" => l.max,
            _ => self.stats.error_rate,
        }
    }

    /// The confidence interval (ms) of the percentile `q`, from the histogram.
    fn interval(&self, q: f64) -> Option<(f64, f64)> {
        let h = self.histogram.as_ref().filter(|h| !h.is_empty())?;
        let n = h.len() as f64;
        let spread = 2.0 * (n * q * (1.0 - q)).sqrt();
        let at = |rank: f64| {
            let rank = rank.clamp(1.0, n);
            percentile(h, rank / n) as f64 / NS_PER_MS
        };
        Some((
            at((n * q - spread).floor()),
            at((n * q + spread).ceil() + 1.0),
        ))
    }
}

/// The relative standard error of a phase's mean throughput: the spread of its whole
/// intervals' rates, or a Poisson count's when it has fewer than two.
fn relative_rate_se(timeline: &[TimelineRow], ops: u64) -> f64 {
    let rates: Vec<f64> = timeline
        .iter()
        .filter(|r| r.interval_s >= 0.9)
        .map(|r| r.ops_per_sec)
        .collect();
    let k = rates.len() as f64;
    let mean = rates.iter().sum::<f64>() / k.max(1.0);
    if rates.len() < 2 || mean <= 0.0 {
        return 1.0 / (ops.max(1) as f64).sqrt();
    }
    let var = rates.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / (k - 1.0);
    var.sqrt() / k.sqrt() / mean
}

fn row(phase: &str, command: &str, metric: &str, stats: &[Option<Measured>]) -> ComparisonRow {
    let values: Vec<Option<f64>> = stats
        .iter()
        .map(|m| m.as_ref().map(|m| m.value(metric)))
        .collect();
    let base = values[0];
    let changes = values
        .iter()
        .enumerate()
        .map(|(i, v)| match (i, base, *v) {
            (0, ..) => None,
            (_, Some(b), Some(v)) if metric == "error_rate" => Some(v - b),
            (_, Some(b), Some(v)) if b != 0.0 => Some(v / b - 1.0),
            _ => None,
        })
        .collect();
    let worse = stats
        .iter()
        .enumerate()
        .map(|(i, m)| match (i, &stats[0], m) {
            (0, ..) => false,
            (_, Some(b), Some(c)) => worse_beyond_noise(metric, b, c),
            _ => false,
        })
        .collect();
    ComparisonRow {
        phase: phase.to_string(),
        command: command.to_string(),
        metric: metric.to_string(),
        values,
        changes,
        worse,
    }
}

fn worse_beyond_noise(metric: &str, base: &Measured, current: &Measured) -> bool {
    let quantile = match metric {
        "p50_ms" => Some(0.5),
        "p90_ms" => Some(0.9),
        "p99_ms" => Some(0.99),
        "p99_9_ms" => Some(0.999),
        _ => None,
    };
    let (b, c) = (base.value(metric), current.value(metric));
    if let Some(q) = quantile {
        return match (base.interval(q), current.interval(q)) {
            (Some((_, base_hi)), Some((current_lo, _))) => {
                current_lo > base_hi && c > b * (1.0 + NOISE_FLOOR)
            }
            _ => false,
        };
    }
    match metric {
        "ops_per_sec" => {
            let se = ((b * base.rate_se).powi(2) + (c * current.rate_se).powi(2)).sqrt();
            b - c > 2.0 * se && c < b * (1.0 - NOISE_FLOOR)
        }
        "error_rate" => {
            let (n1, n2) = (base.stats.ops as f64, current.stats.ops as f64);
            let (e1, e2) = (base.stats.errors as f64, current.stats.errors as f64);
            if n1 == 0.0 || n2 == 0.0 {
                return false;
            }
            let pooled = (e1 + e2) / (n1 + n2);
            let se = (pooled * (1.0 - pooled) * (1.0 / n1 + 1.0 / n2)).sqrt();
            e2 / n2 - e1 / n1 > 2.0 * se && se > 0.0
        }
        // A maximum is one sample: no noise estimate.
        _ => false,
    }
}

fn failures(rows: &[ComparisonRow], labels: &[String], limits: &[Limit]) -> Vec<String> {
    let mut out = Vec::new();
    for limit in limits {
        for r in rows.iter().filter(|r| r.metric == limit.metric) {
            let Some(base) = r.values[0] else { continue };
            for (i, value) in r.values.iter().enumerate().skip(1) {
                let Some(value) = *value else {
                    let missing = format!(
                        "{}: no {} in phase `{}`, which the baseline has",
                        labels[i], r.command, r.phase
                    );
                    if !out.contains(&missing) {
                        out.push(missing);
                    }
                    continue;
                };
                if limit.crossed(base, value) {
                    let change = match r.changes[i] {
                        Some(c) if r.metric == "error_rate" => format!("{c:+.4}"),
                        Some(c) => format!("{:+.1}%", c * 100.0),
                        None => "from 0".to_string(),
                    };
                    out.push(format!(
                        "{}: {} {} of phase `{}` went from {} to {} ({change}), past the limit {}",
                        labels[i],
                        r.command,
                        r.metric,
                        r.phase,
                        number(&r.metric, base),
                        number(&r.metric, value),
                        limit.text
                    ));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_read_their_direction_and_unit() {
        let l = Limit::parse("p99_ms=+10%").unwrap();
        assert_eq!((l.change, l.relative), (0.1, true));
        assert!(l.crossed(1.0, 1.11) && !l.crossed(1.0, 1.09) && !l.crossed(1.0, 0.5));
        let l = Limit::parse("ops_per_sec=5%").unwrap();
        assert_eq!(l.change, -0.05);
        assert!(l.crossed(100.0, 94.0) && !l.crossed(100.0, 96.0) && !l.crossed(100.0, 200.0));
        // No fall at all: `-0%`.
        let l = Limit::parse("ops_per_sec=-0%").unwrap();
        assert!(l.down && l.crossed(100.0, 99.9) && !l.crossed(100.0, 1000.0));
        // A relative rise from 0 is past the limit.
        let l = Limit::parse("error_rate=+1%").unwrap();
        assert!(l.crossed(0.0, 0.5) && !l.crossed(0.0, 0.0));
        let l = Limit::parse("error_rate=+0.001").unwrap();
        assert!(!l.relative && l.crossed(0.0, 0.002) && !l.crossed(0.0, 0.0005));
        for (bad, says) in [
            (
                "p98_ms=+1%",
                "unknown limit `p98_ms` (allowed: p50_ms, p90_ms",
            ),
            // The names of the report's latency_ms are not limit names.
            ("p99=+1%", "unknown limit `p99`"),
            ("p99_ms", "expected METRIC=CHANGE"),
            ("p99_ms=ten", "is not a number"),
            ("p99_ms=inf", "not a finite number"),
        ] {
            let e = Limit::parse(bad).unwrap_err().to_string();
            assert!(e.contains("fail_on") && e.contains(says), "{bad}: {e}");
        }
    }
}
