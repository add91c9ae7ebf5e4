//! Whether a report can be trusted: the client's own lateness and load against what it
//! measured, its arrivals against the process asked for, its rate against the target
//! (Lancet, USENIX ATC 2019: a load generator checks itself and says when not to trust it).

use super::arrivals::{anderson_darling_exponential, GapSample, AD_CRITICAL_1PCT};
use super::recorder::Timings;
use super::summary::latency_of;
use crate::report::{PhaseReport, Unsent, ValidityCheck};

/// The client's lateness tolerated: this share of the latency's median ...
pub const CLIENT_LAG_SHARE: f64 = 0.1;
/// ... or this many milliseconds (50 us), whichever is larger.
pub const CLIENT_LAG_FLOOR_MS: f64 = 0.05;
/// Relative error of the achieved rate tolerated (widened for small Poisson counts).
pub const RATE_TOLERANCE: f64 = 0.01;
/// A worker thread busier than this (CPU over wall time) delays its own requests.
pub const BUSY_LIMIT: f64 = 0.8;

impl Unsent {
    /// From the recorded waits; `None` when there were none.
    pub fn of(t: Option<&Timings>) -> Option<Unsent> {
        let t = t.filter(|t| !t.histogram.is_empty())?;
        Some(Unsent {
            requests: t.histogram.len(),
            waited_ms: latency_of(t),
        })
    }
}

/// The checks of one finished phase: `poisson` when its arrivals were asked to be Poisson,
/// `gaps` the sample of the gaps between its sends.
pub fn check_phase(p: &PhaseReport, poisson: bool, gaps: &GapSample) -> Vec<ValidityCheck> {
    let mut checks = Vec::new();
    let check = |name: &str, value: f64, limit: f64, detail: String| ValidityCheck {
        check: name.into(),
        phase: p.name.clone(),
        passed: value <= limit,
        value,
        limit,
        detail,
    };
    if let Some(lag) = &p.client_lag_ms {
        let limit = (p.totals.latency_ms.p50 * CLIENT_LAG_SHARE).max(CLIENT_LAG_FLOOR_MS);
        let verdict = match lag.p99 <= limit {
            true => "the client sent on time",
            false => "the client, not the server, is in these figures",
        };
        checks.push(check(
            "client_lag",
            lag.p99,
            limit,
            format!(
                "the client's own send lag p99 {:.3} ms against latency p50 {:.3} ms \
                 (limit {limit:.3} ms): {verdict}",
                lag.p99, p.totals.latency_ms.p50
            ),
        ));
    }
    if poisson && p.client_lag_ms.is_some() {
        if let Some(a) = anderson_darling_exponential(&gaps.gaps) {
            let verdict = match a <= AD_CRITICAL_1PCT {
                true => "consistent with Poisson arrivals",
                false => "the sends were not a Poisson process",
            };
            checks.push(check(
                "arrivals",
                a,
                AD_CRITICAL_1PCT,
                format!(
                    "Anderson-Darling A*2 {a:.3} of {} gaps between sends against the exponential \
                     (1% critical value {AD_CRITICAL_1PCT}): {verdict}",
                    gaps.gaps.len()
                ),
            ));
        }
    }
    let due: f64 = p
        .timeline
        .iter()
        .filter_map(|r| r.target_rate.map(|rate| rate * r.interval_s))
        .sum();
    if due >= 1.0 {
        let achieved = p.totals.ops as f64;
        let error = (achieved / due - 1.0).abs();
        let limit = RATE_TOLERANCE.max(3.0 / due.sqrt());
        let verdict = match error <= limit {
            true => "the rate asked for was sent",
            false => "the rate asked for was not achieved",
        };
        checks.push(check(
            "rate",
            error,
            limit,
            format!(
                "{achieved:.0} requests finished of {due:.0} due at the target rate \
                 ({:+.2}%, limit {:.2}%): {verdict}",
                (achieved / due - 1.0) * 100.0,
                limit * 100.0
            ),
        ));
    }
    let busy = p.client.busy_max;
    let verdict = match busy <= BUSY_LIMIT {
        true => "the client had room",
        false => "the client was near its limit: add load.threads",
    };
    checks.push(check(
        "client_busy",
        busy,
        BUSY_LIMIT,
        format!(
            "busiest worker thread {:.0}% busy (limit {:.0}%): {verdict}",
            busy * 100.0,
            BUSY_LIMIT * 100.0
        ),
    ));
    checks
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Latency, Stats, TimelineRow, Validity};

    fn phase(lag_p99: Option<f64>, p50: f64, ops: u64, busy: f64) -> PhaseReport {
        let mut p = PhaseReport {
            name: "m".into(),
            ..PhaseReport::default()
        };
        p.totals = Stats {
            ops,
            ..Stats::default()
        };
        p.totals.latency_ms.p50 = p50;
        p.client_lag_ms = lag_p99.map(|p99| Latency {
            p99,
            ..Latency::default()
        });
        p.client.busy_max = busy;
        if lag_p99.is_some() {
            p.timeline = (0..10)
                .map(|_| TimelineRow {
                    interval_s: 1.0,
                    target_rate: Some(10_000.0),
                    ..TimelineRow::default()
                })
                .collect();
        }
        p
    }

    fn verdicts(checks: &[ValidityCheck]) -> Vec<(&str, bool)> {
        checks.iter().map(|c| (&*c.check, c.passed)).collect()
    }

    #[test]
    fn each_check_passes_and_fails_at_its_limit() {
        let none = GapSample::default();
        // On time, at the rate, with room.
        let good = check_phase(&phase(Some(0.04), 0.2, 100_000, 0.3), false, &none);
        let want = vec![("client_lag", true), ("rate", true), ("client_busy", true)];
        assert_eq!(verdicts(&good), want);
        // 0.05 ms is the floor; above 10% of a 2 ms median, 0.2 ms is the limit.
        let late = check_phase(&phase(Some(0.06), 0.2, 100_000, 0.3), false, &none);
        assert!(!late[0].passed && late[0].detail.contains("the client, not the server"));
        let slow_server = check_phase(&phase(Some(0.19), 2.0, 100_000, 0.3), false, &none);
        assert!(slow_server[0].passed);
        assert_eq!(slow_server[0].limit, 0.2);
        // 1.5% short of 100,000 due.
        let short = check_phase(&phase(Some(0.01), 0.2, 98_500, 0.3), false, &none);
        assert_eq!(verdicts(&short)[1], ("rate", false));
        let busy = check_phase(&phase(Some(0.01), 0.2, 100_000, 0.85), false, &none);
        assert_eq!(verdicts(&busy)[2], ("client_busy", false));
        // Closed loop: the busy check only.
        let closed = check_phase(&phase(None, 0.2, 100_000, 0.3), true, &none);
        assert_eq!(verdicts(&closed), vec![("client_busy", true)]);
        let v = Validity::of(late);
        assert!(!v.trusted);
        assert_eq!(v.failures().len(), 1);
        let w = v.warning().unwrap();
        assert!(w.starts_with("respload: this report's figures are not trusted (1 of 3 validity checks failed):\n  - client_lag (m): the client's own send lag p99 0.060 ms"), "{w}");
        assert_eq!(Validity::of(good).warning(), None);
    }

    #[test]
    fn the_arrivals_check_tells_poisson_from_even_gaps() {
        let mut unit = super::super::arrivals::test_uniform(5);
        let mut poisson = GapSample::new(1);
        let mut even = GapSample::new(1);
        for _ in 0..50_000 {
            poisson.offer(-(1.0 - unit()).ln());
            even.offer(1.0);
        }
        let p = phase(Some(0.01), 0.2, 100_000, 0.1);
        let a = check_phase(&p, true, &poisson);
        assert_eq!(verdicts(&a)[1], ("arrivals", true));
        let b = check_phase(&p, true, &even);
        assert_eq!(verdicts(&b)[1], ("arrivals", false));
    }
}
