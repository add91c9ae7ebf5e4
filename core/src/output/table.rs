//! Human-readable output: the final table (laid out like memtier_benchmark's) and the live line.

use crate::report::Snapshot;
use crate::report::{RampStep, Report, SloResult, Stats};
use std::fmt::Write as _;

/// Width of the table right of the name column.
const NUMBERS_WIDTH: usize = 104;

fn row(out: &mut String, name: &str, s: &Stats, secs: f64, reads: bool, width: usize) {
    let per_sec = |n: u64| if secs > 0.0 { n as f64 / secs } else { 0.0 };
    let (hits, misses) = if reads {
        (
            format!("{:.2}", per_sec(s.hits)),
            format!("{:.2}", per_sec(s.misses)),
        )
    } else {
        ("---".into(), "---".into())
    };
    let kb = per_sec(s.bytes_sent + s.bytes_received) / 1024.0;
    let l = &s.latency_ms;
    let _ = writeln!(
        out,
        "{name:<width$}{:>12.2}{:>12}{:>12}{:>14.5}{:>14.5}{:>14.5}{:>14.5}{:>12.2}",
        s.ops_per_sec, hits, misses, l.mean, l.p50, l.p99, l.p99_9, kb
    );
}

fn stats_block(
    out: &mut String,
    title: &str,
    totals: &Stats,
    commands: &std::collections::BTreeMap<String, Stats>,
    secs: f64,
) {
    // memtier's 12-character name column, widened for long labels (chains, templates).
    let width = commands
        .keys()
        .map(|k| k.len() + 1)
        .max()
        .unwrap_or(0)
        .max(12);
    let _ = writeln!(out, "{title}");
    let _ = writeln!(
        out,
        "{:<width$}{:>12}{:>12}{:>12}{:>14}{:>14}{:>14}{:>14}{:>12}",
        "Type",
        "Ops/sec",
        "Hits/sec",
        "Misses/sec",
        "Avg. Latency",
        "p50 Latency",
        "p99 Latency",
        "p99.9 Latency",
        "KB/sec"
    );
    let _ = writeln!(out, "{}", "-".repeat(NUMBERS_WIDTH + width));
    for (name, s) in commands {
        row(out, name, s, secs, s.hits + s.misses > 0, width);
    }
    row(
        out,
        "Totals",
        totals,
        secs,
        totals.hits + totals.misses > 0,
        width,
    );
    if totals.errors > 0 {
        let kinds: Vec<String> = totals
            .errors_by_kind
            .iter()
            .map(|(k, n)| format!("{k} {n}"))
            .collect();
        let _ = writeln!(
            out,
            "Errors: {} of {} requests ({:.4}%): {}",
            totals.errors,
            totals.ops,
            totals.error_rate * 100.0,
            kinds.join(", ")
        );
    }
}

/// The final report as text: one block per phase, then the measured totals (latencies in ms).
pub fn table(report: &Report) -> String {
    let mut out = String::new();
    let s = &report.server;
    let _ = writeln!(
        out,
        "Server {} (version {}, mode {}, save \"{}\", appendonly {})",
        s.address,
        s.version,
        s.mode,
        s.config.get("save").map(String::as_str).unwrap_or("?"),
        s.config
            .get("appendonly")
            .map(String::as_str)
            .unwrap_or("?"),
    );
    if let Some(tls) = tls_line(&report.workload) {
        let _ = writeln!(out, "{tls}");
    }
    for p in &report.phases {
        let _ = writeln!(
            out,
            "\nPhase {} ({}): {} requests in {:.2} s, {} connections{} on {} threads{}",
            p.name,
            if p.measured {
                "measured"
            } else {
                "not measured"
            },
            p.totals.ops,
            p.duration_s,
            p.client.connections,
            if p.nodes.is_empty() {
                ""
            } else {
                " per primary"
            },
            p.client.threads,
            if p.interrupted { ", INTERRUPTED" } else { "" }
        );
        if let Some(waited) = p.barrier_wait_s {
            let _ = writeln!(
                out,
                "Barrier: waited {waited:.3} s for the other hosts before this phase (not in its time)"
            );
        }
        if let Some(rate) = p.target_rate {
            let achieved = p.totals.ops_per_sec;
            let _ = writeln!(
                out,
                "Open loop: {rate:.1} requests/s asked, {achieved:.1} achieved ({:.1}%)",
                achieved / rate * 100.0
            );
        }
        if let Some(lag) = &p.totals.send_lag_ms {
            let _ = writeln!(
                out,
                "Send lag (intended send time to write): p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
                lag.p50, lag.p99, lag.max
            );
        }
        if let Some(u) = &p.unsent {
            let _ = writeln!(
                out,
                "Unsent: {} requests due were never sent (due for {:.3} ms on average, up to {:.3} ms, when the phase stopped)",
                u.requests, u.waited_ms.mean, u.waited_ms.max
            );
        }
        if !p.steps.is_empty() {
            steps_block(&mut out, &p.steps);
        }
        if let Some(slo) = &p.slo {
            slo_block(&mut out, slo);
        }
        if report.phases.len() > 1 {
            stats_block(&mut out, "", &p.totals, &p.commands, p.duration_s);
        }
        events_block(&mut out, p);
    }
    let _ = writeln!(out);
    let title = if report.interrupted {
        "ALL STATS (interrupted: partial results)"
    } else {
        "ALL STATS"
    };
    stats_block(
        &mut out,
        title,
        &report.totals,
        &report.commands,
        report.duration_s,
    );
    if let Some(l) = &report.server_load {
        let _ = writeln!(
            out,
            "Server: CPU peak {:.1}% of a core{}, mean {:.1}%{}; used_memory peak {:.1} MB (INFO every second, {:.2} ms each)",
            l.peak_cpu_percent,
            l.peak_node.as_ref().map(|n| format!(" (node {n})")).unwrap_or_default(),
            l.mean_cpu_percent,
            if l.cpu_over_limit { " (OVER 80%: the server, not only the client, may be the limit)" } else { "" },
            l.peak_used_memory as f64 / 1e6,
            l.observer_info_ms
        );
    }
    if !report.nodes.is_empty() {
        let _ = writeln!(out);
        stats_block(
            &mut out,
            "PER NODE",
            &report.totals,
            &report.nodes,
            report.duration_s,
        );
    }
    if report.totals.redirects > 0 {
        let _ = writeln!(
            out,
            "Redirects: {} (MOVED/ASK followed, TRYAGAIN/CLUSTERDOWN retried; not errors)",
            report.totals.redirects
        );
    }
    if report.totals.retries > 0 {
        let _ = writeln!(
            out,
            "Retries: {} (requests resent after a transient error or a lost connection; \
             each counted once)",
            report.totals.retries
        );
    }
    let c = &report.client;
    let _ = writeln!(
        out,
        "Client: {:.2} s user + {:.2} s sys CPU ({:.2} CPU s per million requests), worst loop lag {:.1} ms, {} reconnects",
        c.cpu_user_s, c.cpu_sys_s, c.cpu_s_per_million, c.loop_lag_ms_max, c.reconnects
    );
    if let (Some(at), Some(skew)) = (report.start_at, report.start_skew_ms) {
        let _ = writeln!(
            out,
            "Start: asked for {at:.3} (UNIX s), first request {skew:.3} ms after it"
        );
    }
    hosts_block(&mut out, &report.hosts);
    thresholds_block(&mut out, report);
    let _ = writeln!(out, "{}", validity_line(&report.validity));
    out
}

/// The spec's thresholds, one line each with its limit, figure and verdict (k6's summary).
fn thresholds_block(out: &mut String, report: &Report) {
    let all = &report.thresholds;
    if all.is_empty() {
        return;
    }
    let failed = all.iter().filter(|t| !t.passed).count();
    let verdict = match failed {
        0 => format!("all {} passed", all.len()),
        n => format!("{n} of {} FAILED", all.len()),
    };
    let _ = writeln!(out, "\nTHRESHOLDS ({verdict})");
    let width = all.iter().map(|t| t.name.len()).max().unwrap_or(0).max(9) + 2;
    let _ = writeln!(
        out,
        "{:<width$}{:>16}{:>14}  Verdict",
        "Threshold", "Limit", "Value"
    );
    for t in all {
        let op = if crate::report::is_floor(&t.metric) {
            ">="
        } else {
            "<="
        };
        let value = t.value.map_or("-".to_string(), |v| format!("{v:.3}"));
        let verdict = match (t.passed, t.stopped_run) {
            (_, true) => "FAIL (stopped the run)",
            (true, false) => "ok",
            (false, false) => "FAIL",
        };
        let _ = writeln!(
            out,
            "{:<width$}{:>16}{value:>14}  {verdict}",
            t.name,
            format!("{op} {}", t.limit)
        );
    }
    if let Some(why) = &report.stopped_by {
        let _ = writeln!(out, "Stopped early: {why}");
    }
}

/// A merged report's hosts, one line each.
fn hosts_block(out: &mut String, hosts: &[crate::report::HostReport]) {
    if hosts.is_empty() {
        return;
    }
    let _ = writeln!(out, "\nHOSTS");
    let _ = writeln!(
        out,
        "{:<24}{:>7}{:>14}{:>12}{:>10}{:>14}  status",
        "Host", "Shard", "Start skew ms", "Ops", "Errors", "CPU s/M req"
    );
    for h in hosts {
        let shard = h.shard.map_or("-".to_string(), |s| s.to_string());
        let status = match (&h.error, h.interrupted) {
            (Some(e), _) => format!("failed: {e}"),
            (None, true) => "interrupted".to_string(),
            (None, false) => "ok".to_string(),
        };
        let _ = writeln!(
            out,
            "{:<24}{:>7}{:>14.3}{:>12}{:>10}{:>14.2}  {status}",
            h.name, shard, h.start_skew_ms, h.ops, h.errors, h.client.cpu_s_per_million
        );
    }
}

/// One line: whether to trust the figures, and why not.
pub fn validity_line(v: &crate::report::Validity) -> String {
    match v.trusted {
        true => format!(
            "Validity: trusted ({} checks passed: {})",
            v.checks.len(),
            v.checks
                .iter()
                .map(|c| c.check.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        false => format!("Validity: NOT TRUSTED: {}", v.failures().join("; ")),
    }
}

/// The phase's fault drills, one line each, and its longest stretch without a success.
fn events_block(out: &mut String, p: &crate::report::PhaseReport) {
    if p.events.is_empty() {
        return;
    }
    let secs = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.3}"));
    let ms = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.2}"));
    let _ = writeln!(out, "EVENTS");
    let _ = writeln!(
        out,
        "{:<16}{:>8}{:>10}{:>11}{:>10}{:>10}{:>12}{:>12}{:>12}{:>11}  detail",
        "Drill",
        "At",
        "Started",
        "Recovery",
        "Errors",
        "Gap ms",
        "p99 before",
        "p99 during",
        "Ops/s before",
        "Back after"
    );
    for e in &p.events {
        let mut detail = Vec::new();
        if let Some(m) = &e.mode {
            detail.push(m.clone());
        }
        detail.push(format!("node {}", e.node));
        if let Some(r) = &e.replica {
            detail.push(format!("replica {r}"));
        }
        if let Some(f) = e.fork_usec {
            detail.push(format!("fork {f} us"));
        }
        if let Some(s) = e.sync_s {
            let kind = match e.full_sync {
                Some(true) => " (full)",
                Some(false) => " (partial)",
                None => "",
            };
            detail.push(format!("sync {s:.3} s{kind}"));
        }
        if e.started_s.is_none() {
            detail.push("not reached: the phase ended first".into());
        }
        if let Some(err) = &e.error {
            detail.push(format!("ERROR {err}"));
        }
        let _ = writeln!(
            out,
            "{:<16}{:>8.3}{:>10}{:>11}{:>10}{:>10}{:>12}{:>12}{:>12}{:>11}  {}",
            e.drill,
            e.at_s,
            secs(e.started_s),
            secs(e.recovery_s),
            e.errors_during.map_or("-".into(), |n| n.to_string()),
            ms(e.longest_gap_ms),
            ms(e.p99_before_ms),
            ms(e.p99_during_ms),
            e.throughput_before
                .map_or("-".into(), |v| format!("{v:.0}")),
            secs(e.recovered_after_s),
            detail.join(", ")
        );
    }
    let a = &p.availability;
    let _ = writeln!(
        out,
        "Longest stretch without a successful reply: {:.1} ms, from {:.3} s",
        a.longest_gap_ms, a.longest_gap_at_s
    );
}

/// One line per ramp step: rate asked and achieved, connections, latency, errors.
fn steps_block(out: &mut String, steps: &[RampStep]) {
    let _ = writeln!(
        out,
        "{:>8}{:>12}{:>12}{:>8}{:>12}{:>12}{:>10}",
        "Step at", "Rate asked", "Achieved", "Conns", "p50 (ms)", "p99 (ms)", "Errors"
    );
    for s in steps {
        let asked = s.target_rate.map_or("---".into(), |r| format!("{r:.1}"));
        let _ = writeln!(
            out,
            "{:>7.0}s{asked:>12}{:>12.1}{:>8}{:>12.3}{:>12.3}{:>10}",
            s.start_s, s.ops_per_sec, s.connections, s.latency_ms.p50, s.latency_ms.p99, s.errors
        );
    }
}

/// The SLO search: the curve (sorted by rate) and the answer.
fn slo_block(out: &mut String, slo: &SloResult) {
    let pct = format!("p{}", slo.percentile);
    let _ = writeln!(
        out,
        "SLO search: {pct} <= {} ms, error rate <= {}, achieved >= {}% of the rate",
        slo.budget_ms,
        slo.max_error_rate,
        slo.min_achieved * 100.0
    );
    let _ = writeln!(
        out,
        "{:>12}{:>12}{:>12}{:>12}{:>14}{:>12}{:>6}",
        "Rate asked",
        "Achieved",
        "p50 (ms)",
        "p99 (ms)",
        format!("{pct} (ms)"),
        "Error rate",
        "Met"
    );
    for p in &slo.curve {
        let _ = writeln!(
            out,
            "{:>12.1}{:>12.1}{:>12.3}{:>12.3}{:>14.3}{:>12.5}{:>6}",
            p.rate,
            p.achieved_rate,
            p.latency_ms.p50,
            p.latency_ms.p99,
            p.percentile_ms,
            p.error_rate,
            if p.met { "yes" } else { "no" }
        );
    }
    let _ = match slo.best_rate {
        Some(r) => writeln!(out, "Highest rate meeting the SLO: {r:.1} requests/s"),
        None => writeln!(out, "No rate tried met the SLO"),
    };
}

/// `TLS: ...` when some phase of the (normalized) workload uses TLS; insecure stands out.
fn tls_line(workload: &serde_json::Value) -> Option<&'static str> {
    let phases = match workload.get("phases").and_then(|p| p.as_array()) {
        Some(list) => list.iter().collect::<Vec<_>>(),
        None => vec![workload],
    };
    let mut on = false;
    for phase in phases {
        let target = &phase["target"];
        let tls = &target["tls"];
        if tls["insecure"].as_bool() == Some(true) {
            return Some("TLS: insecure (certificate not verified)");
        }
        on |= tls["enabled"].as_bool() == Some(true)
            || target["url"]
                .as_str()
                .is_some_and(|u| u.starts_with("rediss://"));
    }
    on.then_some("TLS: on (server certificate verified)")
}

/// The live line printed each interval.
pub fn progress_line(s: &Snapshot) -> String {
    let r = &s.row;
    format!(
        "[{}] {:>6.1}s {:>12.0} ops/s  p50 {:.3} ms  p99 {:.3} ms  max {:.3} ms  errors {}  conns {}",
        s.phase, r.t, r.ops_per_sec, r.latency_ms.p50, r.latency_ms.p99, r.latency_ms.max, r.errors, r.connections
    )
}
