//! memtier_benchmark's text report: the `ALL STATS` table and the latency distribution.

use super::report::*;
use crate::report::{PhaseReport, Report};
use hdrhistogram::Histogram;
use std::fmt::Write as _;

pub(super) fn per_sec(n: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        n as f64 / secs
    } else {
        0.0
    }
}

pub(super) fn kb_sec(c: &Cell, secs: f64) -> f64 {
    per_sec(c.sent + c.received, secs) / 1024.0
}

fn f(x: f64, width: usize, decimals: usize) -> String {
    let x = if x.is_finite() { x } else { 0.0 };
    format!("{x:>width$.decimals$} ")
}

fn s(text: &str, width: usize) -> String {
    format!("{text:>width$} ")
}

fn table(out: &mut String, v: &View, options: &Options) {
    let name_width = options
        .commands
        .as_ref()
        .map_or(0, |l| l.iter().map(|c| c.name.len()).max().unwrap_or(0))
        .max(6)
        + 1;
    let pct_labels: Vec<String> = options
        .percentiles
        .iter()
        .map(|p| format!("p{} Latency", trim_float(*p)))
        .collect();
    let pct_widths: Vec<usize> = pct_labels.iter().map(|l| l.len().max(15)).collect();
    let widths_sum =
        name_width + 1 + 13 * 3 + 16 + pct_widths.iter().map(|w| w + 1).sum::<usize>() + 13;
    let _ = writeln!(out, "\n\n{}", v.title);
    let _ = writeln!(out, "{}", "=".repeat(widths_sum));
    let mut line = format!("{:<name_width$} ", "Type");
    line += &s("Ops/sec", 12);
    line += &s("Hits/sec", 12);
    line += &s("Misses/sec", 12);
    line += &s("Avg. Latency", 15);
    for (l, w) in pct_labels.iter().zip(&pct_widths) {
        line += &s(l, *w);
    }
    line += &s("KB/sec", 12);
    let _ = writeln!(out, "{line}");
    let _ = writeln!(out, "{}", "-".repeat(widths_sum));
    let row_line = |name: &str, kind: Kind, c: &Cell| {
        let mut line = format!("{name:<name_width$} ");
        line += &f(per_sec(c.ops, v.secs), 12, 2);
        match kind {
            Kind::Set | Kind::Wait => {
                line += &s("---", 12);
                line += &s("---", 12);
            }
            Kind::Get | Kind::Full => {
                line += &f(per_sec(c.hits, v.secs), 12, 2);
                line += &f(per_sec(c.misses, v.secs), 12, 2);
            }
        }
        let no_latency = kind != Kind::Full && c.count() == 0;
        if no_latency {
            line += &s("---", 15);
        } else {
            line += &f(c.mean_ms(), 15, 5);
        }
        for (p, w) in options.percentiles.iter().zip(&pct_widths) {
            if no_latency {
                line += &s("---", *w);
            } else {
                line += &f(c.pct_ms(*p), *w, 5);
            }
        }
        if kind == Kind::Wait {
            line += &s("---", 12);
        } else {
            line += &f(kb_sec(c, v.secs), 12, 2);
        }
        line
    };
    for r in &v.rows {
        let _ = writeln!(out, "{}", row_line(&r.name, r.kind, &r.cell));
    }
    let _ = writeln!(out, "{}", row_line("Totals", Kind::Full, &v.totals));
    let errors: u64 = v.errors.iter().map(|(_, n)| n).sum();
    if errors > 0 {
        let kinds: Vec<String> = v.errors.iter().map(|(k, n)| format!("{k} {n}")).collect();
        let _ = writeln!(
            out,
            "Errors: {errors} of {} requests ({:.4}%): {}",
            v.totals.ops,
            errors as f64 * 100.0 / v.totals.ops.max(1) as f64,
            kinds.join(", ")
        );
    }
}

/// `%.10g`-like: a percentile without trailing zeros (`50`, `99.9`).
pub(super) fn trim_float(x: f64) -> String {
    let t = format!("{x:.10}");
    let t = t.trim_end_matches('0').trim_end_matches('.');
    t.to_string()
}

/// The latency distribution: (ms, percent) steps, as memtier's `hdr_iter_percentile_init`
/// with 10 ticks per half distance gives them.
pub(super) fn distribution(h: &Histogram<u64>) -> Vec<(f64, f64)> {
    if h.is_empty() {
        return Vec::new();
    }
    h.iter_quantiles(10)
        .map(|v| {
            (
                v.value_iterated_to() as f64 / NS_PER_MS,
                v.quantile_iterated_to() * 100.0,
            )
        })
        .collect()
}

fn histogram_text(out: &mut String, v: &View) {
    let _ = write!(
        out,
        "\n\nRequest Latency Distribution\n{:<6} {:>12} {:>12}\n{}\n",
        "Type",
        "<= msec   ",
        "Percent",
        "-".repeat(72)
    );
    let n = v.rows.len();
    for (i, r) in v.rows.iter().enumerate() {
        for (ms, pct) in distribution(&r.cell.hist) {
            let _ = writeln!(out, "{:<6} {:>8.3} {:>12.3}", r.command, ms, pct);
        }
        // memtier closes every section but the SET/GET table's last (WAIT) with `---`.
        if !(r.kind == Kind::Wait && i + 1 == n) {
            let _ = writeln!(out, "---");
        }
    }
}

/// The text memtier_benchmark prints (or writes to `--out-file`): run information, the
/// table(s), and the latency distribution unless `--hide-histogram`.
pub fn text(report: &Report, options: &Options) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{:<9} Threads", options.threads);
    let _ = writeln!(out, "{:<9} Connections per thread", options.clients);
    match (options.requests_per_client, options.test_time) {
        (Some(n), _) => {
            let _ = writeln!(out, "{n:<9} Requests per client");
        }
        (None, t) => {
            let _ = writeln!(out, "{:<9} Seconds", t.unwrap_or(0));
        }
    }
    for v in views(report, options) {
        table(&mut out, &v, options);
        if !options.hide_histogram {
            histogram_text(&mut out, &v);
        }
    }
    out
}

/// The lines memtier prints after its report for `--data-verify` (its spelling kept).
pub fn verification_text(v: &Verification) -> String {
    format!(
        "\n\nPerforming data verification...\nData verification completed:\n\
         {:<10} keys verified successfuly.\n{:<10} keys failed.\n",
        v.verified, v.failed
    )
}

/// memtier_benchmark's text report of one phase of a run (what its `output.memtier` file
/// holds): run information from the phase's threads, connections and stop condition, its
/// `ALL STATS` table and latency distribution. A phase of only SET and GET gets memtier's
/// Sets/Gets/Waits rows (WAIT too); any other mix one row per command, as with `--command`.
pub fn phase_text(phase: &crate::plan::Phase, report: &PhaseReport, started_at: f64) -> String {
    use crate::spec::Requests;
    let threads = report.client.threads.max(1);
    let connections = report.client.connections.max(1);
    let load = &phase.spec.load;
    let set_get = phase
        .commands
        .iter()
        .all(|c| matches!(c.label.as_str(), "SET" | "GET" | "WAIT"));
    let commands = (!set_get).then(|| {
        phase
            .commands
            .iter()
            .map(|c| CommandRow {
                label: c.label.clone(),
                name: c.label.split('#').next().unwrap_or("").to_uppercase(),
                line_name: None,
            })
            .collect()
    });
    let options = Options {
        threads,
        clients: (connections / threads).max(1),
        requests_per_client: match load.requests {
            Some(Requests::Count(n)) => Some(n / u64::from(connections)),
            Some(Requests::AllKeys) => Some(report.totals.ops / u64::from(connections)),
            None => None,
        },
        test_time: load.duration.map(|d| d.0.as_secs() as u32),
        commands,
        ..Options::default()
    };
    let single = Report {
        started_at,
        interrupted: report.interrupted,
        phases: vec![PhaseReport {
            measured: true,
            ..report.clone()
        }],
        ..Report::default()
    };
    text(&single, &options)
}

/// Warnings memtier prints on stderr: a miss rate above `--miss-rate-threshold`.
pub fn warnings(report: &Report, options: &Options) -> Vec<String> {
    let mut out = Vec::new();
    let threshold = options.miss_rate_threshold;
    for v in views(report, options) {
        let checks: Vec<(&str, &Cell)> = match options.commands {
            None => vec![("GET", &v.totals)],
            Some(_) => v
                .rows
                .iter()
                .map(|r| (r.command.as_str(), &r.cell))
                .collect(),
        };
        for (name, c) in checks {
            let total = c.hits + c.misses;
            if total == 0 {
                continue;
            }
            let rate = c.misses as f64 / total as f64;
            if rate > threshold {
                let w = format!(
                    "warning: {name} miss rate {:.2}% above target {:.2}% ({} misses / {} ops)",
                    rate * 100.0,
                    threshold * 100.0,
                    c.misses,
                    total
                );
                if !out.contains(&w) {
                    out.push(w);
                }
            }
        }
    }
    out
}
