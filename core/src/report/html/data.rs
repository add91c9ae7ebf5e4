//! What the page draws, taken from reports: a compact JSON of columns (one array per series,
//! numbers to 4 significant digits) rather than the report itself, whose histograms would
//! make an hour's page several megabytes.

use super::super::{decode_histogram, Comparison, PhaseReport, Report, Stats, TimelineRow};
use serde_json::{json, Map, Value as Json};

/// The most points of one percentile spectrum (HdrHistogram's 5 ticks per half-distance
/// give about 100 for a long tail).
const MAX_SPECTRUM_POINTS: usize = 400;

/// `x` to 4 significant digits (integers as they are): the page's numbers, read by people.
fn sig(x: f64) -> Json {
    if !x.is_finite() {
        return Json::Null;
    }
    if x == x.trunc() && x.abs() < 1e15 {
        return json!(x as i64);
    }
    let digits = 4 - x.abs().log10().ceil() as i32;
    let p = 10f64.powi(digits.clamp(0, 12));
    json!((x * p).round() / p)
}

fn opt(x: Option<f64>) -> Json {
    x.map_or(Json::Null, sig)
}

/// The page's data for `runs` (label, report); with two or more, `comparison` is
/// `respload compare`'s of them, the first the baseline.
pub(super) fn page_data(runs: &[(&str, &Report)], comparison: Option<&Comparison>) -> Json {
    json!({
        "runs": runs.iter().map(|(label, r)| run(label, r)).collect::<Vec<_>>(),
        "comparison": comparison.map(|c| json!({
            "labels": c.labels,
            "limits": c.limits,
            "failures": c.failures,
            "passed": c.passed(),
            "rows": c.rows.iter().map(|r| json!({
                "phase": r.phase,
                "command": r.command,
                "metric": r.metric,
                "values": r.values.iter().map(|v| opt(*v)).collect::<Vec<_>>(),
                "changes": r.changes.iter().map(|v| opt(*v)).collect::<Vec<_>>(),
                "worse": r.worse,
            })).collect::<Vec<_>>(),
        })),
    })
}

fn run(label: &str, r: &Report) -> Json {
    let mut m = Map::new();
    m.insert("label".into(), json!(label));
    m.insert("host".into(), json!(r.host));
    m.insert("version".into(), json!(r.respload_version));
    m.insert("started_at".into(), sig(r.started_at));
    m.insert("duration_s".into(), sig(r.duration_s));
    m.insert("passed".into(), json!(r.passed));
    m.insert("interrupted".into(), json!(r.interrupted));
    m.insert("error".into(), json!(r.error));
    m.insert("stopped_by".into(), json!(r.stopped_by));
    m.insert("validity".into(), json!(r.validity));
    m.insert("thresholds".into(), json!(r.thresholds));
    m.insert("totals".into(), stats_row("all", &r.totals));
    m.insert(
        "commands".into(),
        Json::Array(r.commands.iter().map(|(k, s)| stats_row(k, s)).collect()),
    );
    m.insert("timeline".into(), timeline(&r.timeline));
    m.insert("server".into(), server(r));
    let (phases, events) = phases_and_events(r);
    m.insert("phases".into(), phases);
    m.insert("events".into(), events);
    m.insert("spectra".into(), spectra(r));
    m.insert(
        "hosts".into(),
        Json::Array(
            r.hosts
                .iter()
                .map(|h| {
                    json!({
                        "name": h.name,
                        "shard": h.shard,
                        "ops": h.ops,
                        "errors": h.errors,
                        "interrupted": h.interrupted,
                        "error": h.error,
                        "start_skew_ms": sig(h.start_skew_ms),
                        "cpu_s_per_million": sig(h.client.cpu_s_per_million),
                        "timeline": {
                            "t": h.timeline.iter().map(|r| sig(r.t)).collect::<Vec<_>>(),
                            "ops_per_sec": h.timeline.iter().map(|r| sig(r.ops_per_sec)).collect::<Vec<_>>(),
                            "p99": h.timeline.iter().map(|r| sig(r.p99_ms)).collect::<Vec<_>>(),
                        },
                    })
                })
                .collect(),
        ),
    );
    m.insert(
        "client".into(),
        json!({
            "threads": r.client.threads,
            "connections": r.client.connections,
            "cpu_user_s": sig(r.client.cpu_user_s),
            "cpu_sys_s": sig(r.client.cpu_sys_s),
            "cpu_s_per_million": sig(r.client.cpu_s_per_million),
            "io": r.client.io,
        }),
    );
    m.insert(
        "server_facts".into(),
        json!({
            "address": r.server.address,
            "version": r.server.version,
            "mode": r.server.mode,
        }),
    );
    m.insert("workload".into(), r.workload.clone());
    Json::Object(m)
}

fn stats_row(label: &str, s: &Stats) -> Json {
    let l = &s.latency_ms;
    json!({
        "label": label,
        "ops": s.ops,
        "ops_per_sec": sig(s.ops_per_sec),
        "hits": s.hits,
        "misses": s.misses,
        "errors": s.errors,
        "error_rate": sig(s.error_rate),
        "errors_by_kind": s.errors_by_kind,
        "mean": sig(l.mean),
        "p50": sig(l.p50),
        "p99": sig(l.p99),
        "p99_9": sig(l.p99_9),
        "max": sig(l.max),
        "service_p99": opt(s.service_ms.as_ref().map(|x| x.p99)),
        "send_lag_p99": opt(s.send_lag_ms.as_ref().map(|x| x.p99)),
    })
}

/// The timeline as columns: `t` (seconds, row ends) and one array per series.
fn timeline(rows: &[TimelineRow]) -> Json {
    let col = |f: &dyn Fn(&TimelineRow) -> Json| rows.iter().map(f).collect::<Vec<_>>();
    json!({
        "t": col(&|r| sig(r.t)),
        "unix_s": col(&|r| sig(r.unix_s)),
        "ops_per_sec": col(&|r| sig(r.ops_per_sec)),
        "target_rate": col(&|r| opt(r.target_rate)),
        "p50": col(&|r| sig(r.latency_ms.p50)),
        "p99": col(&|r| sig(r.latency_ms.p99)),
        "max": col(&|r| sig(r.latency_ms.max)),
        "service_p99": col(&|r| opt(r.service_ms.as_ref().map(|x| x.p99))),
        "send_lag_p99": col(&|r| opt(r.send_lag_ms.as_ref().map(|x| x.p99))),
        "errors": col(&|r| json!(r.errors)),
        "connections": col(&|r| json!(r.connections)),
        "server_cpu": col(&|r| opt(r.server_cpu_percent)),
    })
}

/// One row as the dashboard streams it: the run's seconds, the phase, the series.
pub(super) fn live_row(phase: &str, measured: bool, r: &TimelineRow, started_at: f64) -> Json {
    json!({
        "phase": phase,
        "measured": measured,
        "t": sig(r.unix_s - started_at),
        "ops_per_sec": sig(r.ops_per_sec),
        "target_rate": opt(r.target_rate),
        "p50": sig(r.latency_ms.p50),
        "p99": sig(r.latency_ms.p99),
        "max": sig(r.latency_ms.max),
        "service_p99": opt(r.service_ms.as_ref().map(|x| x.p99)),
        "send_lag_p99": opt(r.send_lag_ms.as_ref().map(|x| x.p99)),
        "errors": r.errors,
        "connections": r.connections,
        "server_cpu": opt(r.server_cpu_percent),
    })
}

/// The server's samples as columns (CPU %, used memory MiB), from the run's server timeline.
fn server(r: &Report) -> Json {
    let s = &r.server_timeline;
    json!({
        "t": s.iter().map(|x| sig(x.t)).collect::<Vec<_>>(),
        "cpu": s.iter().map(|x| sig(x.cpu_percent)).collect::<Vec<_>>(),
        "memory_mib": s.iter().map(|x| sig(x.used_memory as f64 / 1048576.0)).collect::<Vec<_>>(),
    })
}

/// Each measured phase's span on the run's time axis (its rows of the run's timeline, which
/// are the measured phases' in order), and its events there.
fn phases_and_events(r: &Report) -> (Json, Json) {
    let mut phases = Vec::new();
    let mut events = Vec::new();
    let mut at = 0usize;
    for p in r.phases.iter().filter(|p| p.measured) {
        let rows =
            &r.timeline[at.min(r.timeline.len())..(at + p.timeline.len()).min(r.timeline.len())];
        at += p.timeline.len();
        let (start, end) = match (rows.first(), rows.last()) {
            (Some(a), Some(b)) => (a.t - a.interval_s, b.t),
            _ => continue,
        };
        phases.push(json!({ "name": p.name, "start": sig(start), "end": sig(end) }));
        for e in &p.events {
            let what = match &e.mode {
                Some(mode) => format!("{} ({mode}) {}", e.drill, e.node),
                None => format!("{} {}", e.drill, e.node),
            };
            events.push(json!({
                "t": sig(start + e.started_s.unwrap_or(e.at_s)),
                "end": opt(e.finished_s.map(|f| start + f)),
                "label": what,
                "error": e.error,
            }));
        }
    }
    (Json::Array(phases), Json::Array(events))
}

/// Percentile spectra: per measured phase, all commands and each command; points of
/// (percentile, ms) from the histograms, as HdrHistogram's plotter draws them.
fn spectra(r: &Report) -> Json {
    let mut out = Vec::new();
    for p in r.phases.iter().filter(|p| p.measured) {
        push_spectrum(&mut out, p, "all", &p.totals);
        for (label, s) in &p.commands {
            push_spectrum(&mut out, p, label, s);
        }
    }
    Json::Array(out)
}

fn push_spectrum(out: &mut Vec<Json>, p: &PhaseReport, command: &str, s: &Stats) {
    let Some(h) = decode_histogram(&s.histogram) else {
        return;
    };
    if h.is_empty() {
        return;
    }
    let mut nines = Vec::new();
    let mut ms = Vec::new();
    for v in h.iter_quantiles(5) {
        let q = v.quantile_iterated_to();
        // The last point is 100%: off a log axis of nines, so drawn as the count allows.
        if q >= 1.0 {
            break;
        }
        // The axis position, -log10(1 - q): 1 at 90%, 2 at 99%, ... (a percentile rounded
        // to 4 digits would put 99.9996% at 100%, infinitely far).
        nines.push(sig(-(1.0 - q).log10()));
        ms.push(sig(h.highest_equivalent(v.value_iterated_to()) as f64 / 1e6));
        if nines.len() >= MAX_SPECTRUM_POINTS {
            break;
        }
    }
    out.push(json!({
        "phase": p.name,
        "command": command,
        "count": h.len(),
        "max": sig(s.latency_ms.max),
        "nines": nines,
        "ms": ms,
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_significant_digits() {
        assert_eq!(sig(1234.5678), json!(1235.0));
        assert_eq!(sig(0.012345), json!(0.01235));
        assert_eq!(sig(7.0), json!(7));
        assert_eq!(sig(f64::NAN), Json::Null);
    }
}
