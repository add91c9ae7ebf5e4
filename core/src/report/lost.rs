//! The report of a host lost mid-run, made of the snapshots it streamed before (the Ray
//! engine's, `respload.distributed`), and the phases a host stopped early never reached:
//! what lets [`Report::merge`] keep the other hosts' results when one host is gone.

use super::assemble::measured_timeline;
use super::merge::rows_latency;
use super::{
    decode_histogram, Latency, PhaseReport, Report, Snapshot, Stats, TimelineRow, Validity,
    ValidityCheck, NS_PER_MS,
};

/// The validity check a lost host fails, in every phase of its report.
pub const HOST_LOST: &str = "host_lost";

impl Report {
    /// The report of shard `index` (named `host`), lost mid-run (`why` says how), made of the
    /// `snapshots` it streamed and shaped like `template`, another host's report of the same
    /// run (its phases, workload, server and shard): interrupted, `error` = `why`, a failed
    /// `host_lost` validity check in every phase. Its counts and latencies are those of the
    /// snapshots' rows (the interval histograms added); hits, misses, bytes, error kinds and
    /// per-command figures are not in snapshots and stay empty.
    pub fn of_lost_host(
        template: &Report,
        index: u32,
        host: &str,
        snapshots: &[Snapshot],
        why: &str,
    ) -> Report {
        let phases: Vec<PhaseReport> = template
            .phases
            .iter()
            .map(|p| {
                let rows: Vec<&TimelineRow> = snapshots
                    .iter()
                    .filter(|s| s.phase == p.name)
                    .map(|s| &s.row)
                    .collect();
                phase_of_rows(p, &rows, Some(why))
            })
            .collect();
        let timeline = measured_timeline(&phases);
        let started = phases
            .iter()
            .map(|p| p.started_at)
            .filter(|&s| s != 0.0)
            .fold(f64::INFINITY, f64::min);
        let checks = phases.iter().map(|p| lost_check(&p.name, why)).collect();
        Report {
            schema_version: template.schema_version,
            respload_version: template.respload_version.clone(),
            seed: template.seed,
            server: template.server.clone(),
            workload: template.workload.clone(),
            shard: template.shard.clone().map(|mut of| {
                of.index = index;
                of
            }),
            start_at: template.start_at,
            started_at: match started.is_finite() {
                true => started,
                false => template.start_at.unwrap_or(0.0),
            },
            duration_s: phases
                .iter()
                .filter(|p| p.measured)
                .map(|p| p.duration_s)
                .sum(),
            interrupted: true,
            error: Some(why.to_string()),
            totals: stats_of_rows(&timeline.iter().collect::<Vec<_>>()),
            timeline,
            phases,
            validity: Validity {
                trusted: false,
                checks,
            },
            host: host.to_string(),
            ..Report::default()
        }
    }

    /// This report with the phases of `template` after its own added, empty and
    /// interrupted: a host stopped before it reached them. [`Report::merge`] takes reports of
    /// the same phases only.
    pub fn with_phases_of(mut self, template: &Report) -> Report {
        let missing = template.phases.iter().skip(self.phases.len());
        let padded: Vec<PhaseReport> = missing.map(|p| phase_of_rows(p, &[], None)).collect();
        self.phases.extend(padded);
        self
    }
}

/// A phase like `template` (its name, whether measured, its workload) holding only `rows`
/// (their measured part): a lost host's (`why` says how it was lost), or one a stopped host
/// never reached (`None`).
fn phase_of_rows(template: &PhaseReport, rows: &[&TimelineRow], why: Option<&str>) -> PhaseReport {
    let measured: Vec<TimelineRow> = rows
        .iter()
        .filter(|r| r.t > 0.0)
        .map(|&r| r.clone())
        .collect();
    let started_at = measured
        .first()
        .map_or(template.started_at, |r| r.unix_s - r.t);
    PhaseReport {
        name: template.name.clone(),
        started_at,
        measured: template.measured,
        duration_s: measured.iter().map(|r| r.interval_s).sum(),
        interrupted: true,
        totals: stats_of_rows(&measured.iter().collect::<Vec<_>>()),
        timeline: measured,
        validity: Validity {
            trusted: why.is_none(),
            checks: why
                .map(|w| lost_check(&template.name, w))
                .into_iter()
                .collect(),
        },
        workload: template.workload.clone(),
        ..PhaseReport::default()
    }
}

fn lost_check(phase: &str, why: &str) -> ValidityCheck {
    ValidityCheck {
        check: HOST_LOST.to_string(),
        phase: phase.to_string(),
        passed: false,
        value: 1.0,
        limit: 0.0,
        detail: why.to_string(),
    }
}

/// `Stats` of timeline rows: counts summed, the rate over their seconds, latency from their
/// interval histograms added (stddev and min, which rows do not keep, from the sum).
fn stats_of_rows(rows: &[&TimelineRow]) -> Stats {
    let ops: u64 = rows.iter().map(|r| r.ops).sum();
    let errors: u64 = rows.iter().map(|r| r.errors).sum();
    let seconds: f64 = rows.iter().map(|r| r.interval_s).sum();
    let kept: Vec<&TimelineRow> = rows
        .iter()
        .copied()
        .filter(|r| !r.histogram.is_empty())
        .collect();
    let (mut latency_ms, histogram) = match kept.is_empty() {
        true => (Latency::default(), String::new()),
        false => rows_latency(&kept),
    };
    if let Some(h) = decode_histogram(&histogram).filter(|h| !h.is_empty()) {
        latency_ms.stddev = h.stdev() / NS_PER_MS;
        latency_ms.min = h.min() as f64 / NS_PER_MS;
    }
    Stats {
        ops,
        ops_per_sec: if seconds > 0.0 {
            ops as f64 / seconds
        } else {
            0.0
        },
        errors,
        error_rate: if ops > 0 {
            errors as f64 / ops as f64
        } else {
            0.0
        },
        latency_ms,
        histogram,
        ..Stats::default()
    }
}
