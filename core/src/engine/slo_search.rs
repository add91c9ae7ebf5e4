//! SLO search: run a phase as a series of open-loop steps, one rate each, to find the
//! highest rate whose latency percentile stays under the budget with few errors.
//!
//! The rate doubles from `start_rate` while steps meet the SLO (halves while they fail, down
//! to [`crate::spec::MIN_RATE`]), then bisects between the best rate met and the lowest rate
//! failed, until they are within `precision` of each other, `max_rate` is met, or
//! `max_steps` were run.

use super::phase::{run_phase, PhaseOptions, PhaseOutcome};
use crate::plan::Phase;
use crate::report::Snapshot;
use crate::report::{percentile_ms, ClientStats, SloPoint, SloResult, TimelineRow};
use crate::report::{ServerLoad, ServerSample};
use crate::spec::Slo;
use crate::stats::{latency_of, stats_of, summarize, Recorder};
use crate::Result;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::Arc;

/// How much the rate grows (or shrinks) per step before the search brackets the answer.
const GROWTH: f64 = 2.0;

/// Run `phase` (which has `slo`) as a search; the outcome merges every step.
pub fn run_search(
    phase: &Phase,
    phase_index: usize,
    seed: u64,
    stop: &Arc<AtomicBool>,
    snapshots: &Sender<Snapshot>,
) -> Result<PhaseOutcome> {
    let Some(slo) = phase.spec.slo else {
        return run_phase(
            phase,
            phase_index,
            Vec::new(),
            seed,
            PhaseOptions::default(),
            stop,
            snapshots,
        );
    };
    let started_at = crate::spec::unix_now();
    let labels: Vec<String> = phase.commands.iter().map(|c| c.label.clone()).collect();
    let mut total = Recorder::new(labels.len());
    let mut timeline: Vec<TimelineRow> = Vec::new();
    let mut server_timeline: Vec<ServerSample> = Vec::new();
    let mut client = ClientStats::default();
    let mut duration_s = 0.0;
    let mut availability = crate::report::Availability::default();
    let mut server_nodes: std::collections::BTreeMap<String, crate::report::NodeServer> =
        std::collections::BTreeMap::new();
    let mut curve: Vec<SloPoint> = Vec::new();
    let (mut good, mut bad): (Option<f64>, Option<f64>) = (None, None);
    let mut rate = slo.start_rate;
    for run in 0..slo.max_steps {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let mut step = phase.clone();
        step.spec.slo = None;
        step.spec.load.rate = Some(rate);
        step.spec.load.duration = Some(slo.step_duration);
        let options = PhaseOptions::default();
        let outcome = run_phase(
            &step,
            phase_index,
            Vec::new(),
            seed,
            options,
            stop,
            snapshots,
        )?;
        let r = &outcome.report;
        timeline.extend(r.timeline.iter().map(|row| TimelineRow {
            t: row.t + duration_s,
            ..row.clone()
        }));
        server_timeline.extend(r.server_timeline.iter().map(|s| ServerSample {
            t: s.t + duration_s,
            ..s.clone()
        }));
        for (name, node) in &r.server_nodes {
            let acc = server_nodes.entry(name.clone()).or_default();
            acc.server_timeline
                .extend(node.server_timeline.iter().map(|s| ServerSample {
                    t: s.t + duration_s,
                    ..s.clone()
                }));
        }
        if r.availability.longest_gap_ms > availability.longest_gap_ms {
            availability = crate::report::Availability {
                longest_gap_ms: r.availability.longest_gap_ms,
                longest_gap_at_s: r.availability.longest_gap_at_s + duration_s,
            };
        }
        duration_s += r.duration_s;
        client.add(&r.client);
        total.merge(&outcome.recorder);
        if r.interrupted {
            // A step cut short says nothing about its rate.
            break;
        }
        let point = evaluate(&outcome, run, rate, &slo);
        let met = point.met;
        curve.push(point);
        if met {
            good = Some(good.map_or(rate, |g| g.max(rate)));
        } else {
            bad = Some(bad.map_or(rate, |b| b.min(rate)));
        }
        rate = match (good, bad) {
            (Some(g), None) if g >= slo.max_rate => break,
            (Some(g), None) => (g * GROWTH).min(slo.max_rate),
            // Every step failed down to the lowest rate allowed: none is met.
            (None, Some(b)) if b / GROWTH < crate::spec::MIN_RATE => break,
            (None, Some(b)) => b / GROWTH,
            (Some(g), Some(b)) if b - g <= slo.precision * g => break,
            (Some(g), Some(b)) => (g + b) / 2.0,
            (None, None) => break,
        };
    }
    for node in server_nodes.values_mut() {
        node.server_load = ServerLoad::of(&node.server_timeline);
    }
    curve.sort_by(|a, b| a.rate.total_cmp(&b.rate).then(a.run.cmp(&b.run)));
    let (totals, commands) = summarize(&total, &labels, duration_s);
    client.cpu_s_per_million =
        (client.cpu_user_s + client.cpu_sys_s) / totals.ops.max(1) as f64 * 1e6;
    Ok(PhaseOutcome {
        report: crate::report::PhaseReport {
            name: phase.spec.name.clone(),
            started_at,
            measured: phase.spec.measured,
            barrier_wait_s: None,
            duration_s,
            interrupted: stop.load(Ordering::Relaxed),
            totals,
            commands,
            timeline,
            client,
            server_load: match server_nodes.is_empty() {
                true => ServerLoad::of(&server_timeline),
                false => ServerLoad::of_nodes(&server_nodes),
            },
            server_timeline,
            server_nodes,
            availability,
            events: Vec::new(),
            target_rate: None,
            nodes: crate::stats::node_stats(&total, duration_s),
            steps: Vec::new(),
            output_error: None,
            server: None,
            slo: Some(SloResult {
                percentile: slo.percentile,
                budget_ms: slo.budget_ms,
                max_error_rate: slo.max_error_rate,
                min_achieved: slo.min_achieved,
                best_rate: good,
                curve,
            }),
            unsent: None,
            client_lag_ms: None,
            validity: crate::report::Validity::default(),
            replay: None,
            workload: phase.redacted(),
            // memtier's per-client files come from single phases, not from a search.
            client_seconds: Vec::new(),
        },
        recorder: total,
        start_skew_ms: None,
        stopped: None,
    })
}

/// Judge one step against the SLO.
fn evaluate(outcome: &PhaseOutcome, run: u32, rate: f64, slo: &Slo) -> SloPoint {
    let all = outcome.recorder.total();
    let secs = outcome.report.duration_s;
    let s = stats_of(&all, secs);
    let q = percentile_ms(
        &all.latency.histogram,
        slo.percentile / 100.0,
        all.latency.max_ns,
    );
    let met = s.ops > 0
        && !all.latency.histogram.is_empty()
        && q <= slo.budget_ms
        && s.error_rate <= slo.max_error_rate
        && s.ops_per_sec >= slo.min_achieved * rate;
    SloPoint {
        run,
        rate,
        achieved_rate: s.ops_per_sec,
        duration_s: secs,
        ops: s.ops,
        errors: s.errors,
        error_rate: s.error_rate,
        percentile_ms: q,
        latency_ms: latency_of(&all.latency),
        service_ms: all.service.as_deref().map(latency_of),
        met,
    }
}
