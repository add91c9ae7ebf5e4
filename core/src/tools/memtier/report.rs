//! memtier_benchmark's report of a respload run: its text ("ALL STATS" table and latency
//! distribution), its JSON file, and its HdrHistogram files, laid out as memtier_benchmark
//! 2.x writes them so that tools parsing memtier's output read respload's.
//!
//! Latencies are in milliseconds as memtier prints them, from respload's own measurements
//! (nanosecond histograms; the JSON and HDR files carry them converted to microseconds, the
//! unit of memtier's histograms). Where respload has no figure (per-second bytes, per-second
//! figures of one command when several run), the field is left out rather than invented.

use crate::stats::{decode_histogram, percentile, PhaseReport, Report, Stats, TimelineRow};
use crate::{Error, Result};
use hdrhistogram::serialization::{Serializer as _, V2DeflateSerializer};
use hdrhistogram::Histogram;
use serde_json::Value as Json;
use std::fmt::Write as _;

const NS_PER_MS: f64 = 1e6;

/// One `--command`: its label in respload's report and its name in memtier's table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandRow {
    /// The label of its `[[commands]]` entry (`SET`, `SET#2` for a second SET, ...).
    pub label: String,
    /// memtier's command name: the first word, upper-cased (rows are `Sets`, `Hsets`, ...).
    pub name: String,
}

/// memtier_benchmark's report settings, and its configuration as it would echo it.
#[derive(Debug, Clone)]
pub struct Options {
    /// `-o/--out-file`: the text report goes to this file instead of stdout.
    pub out_file: Option<String>,
    /// `--json-out-file`: the report in memtier's JSON layout.
    pub json_out_file: Option<String>,
    /// `--hdr-file-prefix`: HdrHistogram files `PREFIX_FULL_RUN_1.txt` / `.hgrm`, per command.
    pub hdr_file_prefix: Option<String>,
    /// `--hide-histogram`: no "Request Latency Distribution" section.
    pub hide_histogram: bool,
    /// `--print-percentiles` (default 50, 99, 99.9), in percent.
    pub percentiles: Vec<f64>,
    /// `--print-all-runs`: with `--run-count` > 1, also a table per run.
    pub print_all_runs: bool,
    /// `--show-config`: print [`Options::config_text`] before running.
    pub show_config: bool,
    /// `-x/--run-count`.
    pub run_count: u32,
    /// `-t/--threads`.
    pub threads: u32,
    /// `-c/--clients`: connections per thread.
    pub clients: u32,
    /// Requests per client, as memtier prints it in its run information (absent with only
    /// `--test-time`).
    pub requests_per_client: Option<u64>,
    /// `--test-time` in seconds.
    pub test_time: Option<u32>,
    /// The `--command` list in order; `None` for the SET/GET workload (rows `Sets`, `Gets`,
    /// `Waits`).
    pub commands: Option<Vec<CommandRow>>,
    /// `--command-stats-breakdown=line`: one row per `--command` instead of per command name.
    pub stats_by_line: bool,
    /// `--command-miss-tracking` (`off`: no hits or misses for `--command` rows).
    pub miss_tracking: bool,
    /// `--miss-rate-threshold` as a fraction (default 0.01): a higher miss rate is warned of.
    pub miss_rate_threshold: f64,
    /// memtier's configuration, in its order, as (name, JSON value); the password is redacted.
    pub config: Vec<(String, Json)>,
}

/// memtier's `--print-percentiles` default.
pub(crate) const DEFAULT_PERCENTILES: [f64; 3] = [50.0, 99.0, 99.9];
/// memtier's `--miss-rate-threshold` default, as a fraction.
pub(crate) const DEFAULT_MISS_RATE_THRESHOLD: f64 = 0.01;

impl Default for Options {
    /// memtier's defaults: `-t 4 -c 50`, one run, percentiles 50/99/99.9, the histogram shown,
    /// no output files.
    fn default() -> Self {
        Options {
            out_file: None,
            json_out_file: None,
            hdr_file_prefix: None,
            hide_histogram: false,
            percentiles: DEFAULT_PERCENTILES.to_vec(),
            print_all_runs: false,
            show_config: false,
            run_count: 1,
            threads: 4,
            clients: 50,
            requests_per_client: None,
            test_time: None,
            commands: None,
            stats_by_line: false,
            miss_tracking: true,
            miss_rate_threshold: DEFAULT_MISS_RATE_THRESHOLD,
            config: Vec::new(),
        }
    }
}

impl Options {
    /// The configuration as `--show-config` prints it, one `name = value` per line.
    pub fn config_text(&self) -> String {
        let mut out = String::new();
        for (k, v) in &self.config {
            let v = match v {
                Json::String(s) => s.clone(),
                Json::Null => "(null)".into(),
                other => other.to_string(),
            };
            out.push_str(&format!("{k} = {v}\n"));
        }
        out
    }
}

/// The figures of one row of the table over one run (or several runs merged).
#[derive(Clone)]
struct Cell {
    ops: u64,
    hits: u64,
    misses: u64,
    sent: u64,
    received: u64,
    /// Sum of latencies of replies received (ms): mean x count.
    latency_sum_ms: f64,
    min_ms: f64,
    max_ms: f64,
    /// Latencies in nanoseconds.
    hist: Histogram<u64>,
}

impl Cell {
    fn empty() -> Cell {
        Cell {
            ops: 0,
            hits: 0,
            misses: 0,
            sent: 0,
            received: 0,
            latency_sum_ms: 0.0,
            min_ms: 0.0,
            max_ms: 0.0,
            hist: crate::stats::new_histogram(),
        }
    }

    fn from_stats(s: &Stats) -> Cell {
        let hist = decode_histogram(&s.histogram).unwrap_or_else(crate::stats::new_histogram);
        Cell {
            ops: s.ops,
            hits: s.hits,
            misses: s.misses,
            sent: s.bytes_sent,
            received: s.bytes_received,
            latency_sum_ms: s.latency_ms.mean * hist.len() as f64,
            min_ms: s.latency_ms.min,
            max_ms: s.latency_ms.max,
            hist,
        }
    }

    fn add(&mut self, o: &Cell) {
        if !o.hist.is_empty() {
            self.min_ms = if !self.hist.is_empty() {
                self.min_ms.min(o.min_ms)
            } else {
                o.min_ms
            };
            self.max_ms = self.max_ms.max(o.max_ms);
        }
        self.ops += o.ops;
        self.hits += o.hits;
        self.misses += o.misses;
        self.sent += o.sent;
        self.received += o.received;
        self.latency_sum_ms += o.latency_sum_ms;
        let _ = self.hist.add(&o.hist);
    }

    fn count(&self) -> u64 {
        self.hist.len()
    }

    fn mean_ms(&self) -> f64 {
        if self.count() == 0 {
            0.0
        } else {
            self.latency_sum_ms / self.count() as f64
        }
    }

    /// Percentile `p` (0 to 100) in ms, never above the exact maximum.
    fn pct_ms(&self, p: f64) -> f64 {
        if self.count() == 0 {
            return 0.0;
        }
        (percentile(&self.hist, p / 100.0) as f64 / NS_PER_MS).min(self.max_ms)
    }

    fn zero_hits(&mut self) {
        self.hits = 0;
        self.misses = 0;
    }
}

/// How a row shows: memtier's SET/GET table has `---` where a figure does not apply.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    /// `Sets`: no hits or misses.
    Set,
    /// `Gets`.
    Get,
    /// `Waits`: respload sends none.
    Wait,
    /// A `--command` row or `Totals`: every figure.
    Full,
}

#[derive(Clone)]
struct Row {
    /// memtier's row name: `Sets`, `Gets`, `Hsets`, ...
    name: String,
    /// memtier's command name for the histogram and HDR files: `SET`, `GET`, `HSET`, ...
    command: String,
    kind: Kind,
    cell: Cell,
}

/// One table: a run, the best or worst run, or the average of the runs.
struct View {
    title: String,
    secs: f64,
    start_ms: f64,
    interrupted: bool,
    rows: Vec<Row>,
    totals: Cell,
    timeline: Vec<TimelineRow>,
    connection_errors: u64,
    errors: Vec<(String, u64)>,
}

fn pretty(command: &str) -> String {
    let lower = command.to_lowercase();
    let mut chars = lower.chars();
    match chars.next() {
        Some(first) => format!("{}{}s", first.to_uppercase(), chars.as_str()),
        None => "s".into(),
    }
}

fn cell_of(commands: &std::collections::BTreeMap<String, Stats>, label: &str) -> Cell {
    commands
        .get(label)
        .map_or_else(Cell::empty, Cell::from_stats)
}

fn rows_of(commands: &std::collections::BTreeMap<String, Stats>, options: &Options) -> Vec<Row> {
    match &options.commands {
        None => vec![
            Row {
                name: "Sets".into(),
                command: "SET".into(),
                kind: Kind::Set,
                cell: cell_of(commands, "SET"),
            },
            Row {
                name: "Gets".into(),
                command: "GET".into(),
                kind: Kind::Get,
                cell: cell_of(commands, "GET"),
            },
            Row {
                name: "Waits".into(),
                command: "WAIT".into(),
                kind: Kind::Wait,
                cell: Cell::empty(),
            },
        ],
        Some(list) => {
            let mut rows: Vec<Row> = Vec::new();
            for CommandRow { label, name } in list {
                let mut cell = cell_of(commands, label);
                if !options.miss_tracking {
                    cell.zero_hits();
                }
                match rows.iter_mut().find(|r| r.command == *name) {
                    Some(row) if !options.stats_by_line => row.cell.add(&cell),
                    _ => rows.push(Row {
                        name: pretty(name),
                        command: name.clone(),
                        kind: Kind::Full,
                        cell,
                    }),
                }
            }
            rows
        }
    }
}

fn view_of(p: &PhaseReport, title: String, start_ms: f64, options: &Options) -> View {
    let mut totals = Cell::from_stats(&p.totals);
    if options.commands.is_some() && !options.miss_tracking {
        totals.zero_hits();
    }
    View {
        title,
        secs: p.duration_s,
        start_ms,
        interrupted: p.interrupted,
        rows: rows_of(&p.commands, options),
        totals,
        timeline: p.timeline.clone(),
        connection_errors: p
            .totals
            .errors_by_kind
            .get("CONNECTION")
            .copied()
            .unwrap_or(0),
        errors: p
            .totals
            .errors_by_kind
            .iter()
            .map(|(k, n)| (k.clone(), *n))
            .collect(),
    }
}

/// The tables memtier would print: `ALL STATS` for one run; with several, the runs (with
/// `--print-all-runs`), the best, the worst and the average.
fn views(report: &Report, options: &Options) -> Vec<View> {
    let mut runs = Vec::new();
    let mut at_ms = report.started_at * 1000.0;
    for p in report.phases.iter().filter(|p| p.measured) {
        runs.push((p, at_ms));
        at_ms += p.duration_s * 1000.0;
    }
    if runs.is_empty() {
        // Stopped before the first run began: an empty table.
        let empty = PhaseReport {
            interrupted: report.interrupted,
            ..PhaseReport::default()
        };
        return vec![view_of(&empty, "ALL STATS".into(), at_ms, options)];
    }
    if runs.len() == 1 && options.run_count <= 1 {
        let (p, start) = runs[0];
        return vec![view_of(p, "ALL STATS".into(), start, options)];
    }
    let mut out = Vec::new();
    if options.print_all_runs {
        for (i, (p, start)) in runs.iter().enumerate() {
            out.push(view_of(
                p,
                format!("RUN #{} RESULTS", i + 1),
                *start,
                options,
            ));
        }
    }
    let rate = |p: &PhaseReport| {
        if p.duration_s > 0.0 {
            p.totals.ops as f64 / p.duration_s
        } else {
            0.0
        }
    };
    let best = runs
        .iter()
        .copied()
        .reduce(|a, b| if rate(b.0) > rate(a.0) { b } else { a })
        .unwrap_or(runs[0]);
    let worst = runs
        .iter()
        .copied()
        .reduce(|a, b| if rate(b.0) < rate(a.0) { b } else { a })
        .unwrap_or(runs[0]);
    out.push(view_of(best.0, "BEST RUN RESULTS".into(), best.1, options));
    out.push(view_of(
        worst.0,
        "WORST RUN RESULTS".into(),
        worst.1,
        options,
    ));
    // The average: every run merged over their summed time (a time-weighted mean of rates).
    let mut avg = view_of(
        runs[0].0,
        format!("AGGREGATED AVERAGE RESULTS ({} runs)", runs.len()),
        runs[0].1,
        options,
    );
    avg.timeline.clear();
    for (p, _) in &runs[1..] {
        let other = view_of(p, String::new(), 0.0, options);
        avg.secs += other.secs;
        avg.interrupted |= other.interrupted;
        avg.totals.add(&other.totals);
        avg.connection_errors += other.connection_errors;
        for (row, o) in avg.rows.iter_mut().zip(&other.rows) {
            row.cell.add(&o.cell);
        }
        for (k, n) in other.errors {
            match avg.errors.iter_mut().find(|(kk, _)| *kk == k) {
                Some(e) => e.1 += n,
                None => avg.errors.push((k, n)),
            }
        }
    }
    out.push(avg);
    out
}

// ----------------------------------------------------------------------------------------
// Text.

fn per_sec(n: u64, secs: f64) -> f64 {
    if secs > 0.0 {
        n as f64 / secs
    } else {
        0.0
    }
}

fn kb_sec(c: &Cell, secs: f64) -> f64 {
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
fn trim_float(x: f64) -> String {
    let t = format!("{x:.10}");
    let t = t.trim_end_matches('0').trim_end_matches('.');
    t.to_string()
}

/// The latency distribution: (ms, percent) steps, as memtier's `hdr_iter_percentile_init`
/// with 10 ticks per half distance gives them.
fn distribution(h: &Histogram<u64>) -> Vec<(f64, f64)> {
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

/// memtier_benchmark's text report of one phase of a run (what its `output.memtier` file
/// holds): run information from the phase's threads, connections and stop condition, its
/// `ALL STATS` table and latency distribution. A phase of only SET and GET gets memtier's
/// Sets/Gets/Waits rows; any other mix one row per command, as with `--command`.
pub fn phase_text(phase: &crate::spec::Phase, report: &PhaseReport, started_at: f64) -> String {
    use crate::spec::Requests;
    let threads = report.client.threads.max(1);
    let connections = report.client.connections.max(1);
    let load = &phase.spec.load;
    let set_get = phase
        .commands
        .iter()
        .all(|c| c.label == "SET" || c.label == "GET");
    let commands = (!set_get).then(|| {
        phase
            .commands
            .iter()
            .map(|c| CommandRow {
                label: c.label.clone(),
                name: c.label.split('#').next().unwrap_or("").to_uppercase(),
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

// ----------------------------------------------------------------------------------------
// JSON, in memtier's order (its json_handler writes keys as it goes).

/// A JSON value whose objects keep their keys in the order written.
enum OrderedJson {
    Obj(Vec<(String, OrderedJson)>),
    Arr(Vec<OrderedJson>),
    Raw(String),
    Str(String),
    Null,
}

fn num(x: f64, decimals: usize) -> OrderedJson {
    OrderedJson::Raw(if x.is_finite() {
        format!("{x:.decimals$}")
    } else {
        "0".into()
    })
}

fn int(n: u64) -> OrderedJson {
    OrderedJson::Raw(n.to_string())
}

fn from_json(v: &Json) -> OrderedJson {
    match v {
        Json::Null => OrderedJson::Null,
        Json::String(s) => OrderedJson::Str(s.clone()),
        Json::Number(n) => match n.as_f64() {
            Some(x) if !x.is_finite() => OrderedJson::Raw("0".into()),
            _ => OrderedJson::Raw(n.to_string()),
        },
        Json::Bool(b) => OrderedJson::Raw(b.to_string()),
        Json::Array(a) => OrderedJson::Arr(a.iter().map(from_json).collect()),
        Json::Object(o) => {
            OrderedJson::Obj(o.iter().map(|(k, v)| (k.clone(), from_json(v))).collect())
        }
    }
}

fn write_json(out: &mut String, j: &OrderedJson, depth: usize) {
    let tabs = |n: usize| "\t".repeat(n);
    match j {
        OrderedJson::Null => out.push_str("null"),
        OrderedJson::Raw(r) => out.push_str(r),
        OrderedJson::Str(s) => {
            out.push_str(&serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into()))
        }
        OrderedJson::Arr(items) => {
            if items.is_empty() {
                out.push_str("[]");
                return;
            }
            out.push_str("[\n");
            for (i, item) in items.iter().enumerate() {
                out.push_str(&tabs(depth + 1));
                write_json(out, item, depth + 1);
                out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
            }
            out.push_str(&tabs(depth));
            out.push(']');
        }
        OrderedJson::Obj(fields) => {
            if fields.is_empty() {
                out.push_str("{}");
                return;
            }
            out.push_str("{\n");
            for (i, (k, v)) in fields.iter().enumerate() {
                out.push_str(&tabs(depth + 1));
                out.push_str(&serde_json::to_string(k).unwrap_or_else(|_| "\"\"".into()));
                out.push_str(": ");
                write_json(out, v, depth + 1);
                out.push_str(if i + 1 < fields.len() { ",\n" } else { "\n" });
            }
            out.push_str(&tabs(depth));
            out.push('}');
        }
    }
}

/// memtier's percentile keys: `p%.3f` (or `p%.2f` per second) cut to 6 characters, as its
/// 7-byte buffer cuts them (`p50.00`, `p99.90`).
fn pct_key(p: f64, decimals: usize) -> String {
    format!("p{p:.decimals$}").chars().take(6).collect()
}

/// A microsecond histogram like memtier's (10 us to 60 s, 3 significant digits).
fn to_micros(h: &Histogram<u64>) -> Histogram<u64> {
    let mut us = Histogram::<u64>::new_with_bounds(10, 60_000_000, 3)
        .expect("constant histogram bounds are valid");
    for v in h.iter_recorded() {
        let ns = h.median_equivalent(v.value_iterated_to());
        us.saturating_record_n(ns / 1000, v.count_at_value());
    }
    us
}

fn encode(h: &Histogram<u64>) -> String {
    use base64::Engine as _;
    let mut bytes = Vec::new();
    match V2DeflateSerializer::new().serialize(h, &mut bytes) {
        Ok(_) => base64::engine::general_purpose::STANDARD.encode(&bytes),
        Err(_) => String::new(),
    }
}

fn per_second(timeline: &[TimelineRow], percentiles: &[f64]) -> OrderedJson {
    let mut fields = Vec::new();
    for (i, row) in timeline.iter().enumerate() {
        let mut sec = vec![("Count".to_string(), int(row.ops))];
        if row.ops > 0 {
            let h = decode_histogram(&row.histogram);
            let l = &row.latency_ms;
            let count = h.as_ref().map_or(0, |h| h.len());
            sec.push(("Average Latency".into(), num(l.mean, 3)));
            sec.push((
                "Accumulated Latency".into(),
                int((l.mean * count as f64).round() as u64),
            ));
            let min = h.as_ref().map_or(0.0, |h| h.min() as f64 / NS_PER_MS);
            sec.push(("Min Latency".into(), num(min, 3)));
            sec.push(("Max Latency".into(), num(l.max, 3)));
            for p in percentiles {
                let key = pct_key(*p, 2);
                if sec.iter().any(|(k, _)| *k == key) {
                    continue;
                }
                let v = h.as_ref().map_or(0.0, |h| {
                    (percentile(h, p / 100.0) as f64 / NS_PER_MS).min(l.max)
                });
                sec.push((key, num(v, 3)));
            }
        }
        fields.push((i.to_string(), OrderedJson::Obj(sec)));
    }
    OrderedJson::Obj(fields)
}

fn type_json(
    c: &Cell,
    kind: Kind,
    secs: f64,
    timeline: Option<&[TimelineRow]>,
    connection_errors: u64,
    percentiles: &[f64],
) -> OrderedJson {
    let wait = kind == Kind::Wait;
    let hits = if matches!(kind, Kind::Set | Kind::Wait) {
        0.0
    } else {
        per_sec(c.hits, secs)
    };
    let misses = if matches!(kind, Kind::Set | Kind::Wait) {
        0.0
    } else {
        per_sec(c.misses, secs)
    };
    let kb = |bytes: u64| {
        if wait {
            0.0
        } else {
            per_sec(bytes, secs) / 1024.0
        }
    };
    let mut f = vec![
        ("Count".to_string(), int(c.ops)),
        ("Ops/sec".into(), num(per_sec(c.ops, secs), 2)),
        ("Hits/sec".into(), num(hits, 2)),
        ("Misses/sec".into(), num(misses, 2)),
        (
            "Connection Errors/sec".into(),
            num(per_sec(connection_errors, secs), 2),
        ),
        ("Connection Errors".into(), int(connection_errors)),
        ("Latency".into(), num(c.mean_ms(), 3)),
        ("Average Latency".into(), num(c.mean_ms(), 3)),
        (
            "Accumulated Latency".into(),
            int(c.latency_sum_ms.max(0.0).round() as u64),
        ),
        ("Min Latency".into(), num(c.min_ms, 3)),
        ("Max Latency".into(), num(c.max_ms, 3)),
        ("KB/sec".into(), num(kb(c.sent + c.received), 2)),
        ("KB/sec RX/TX".into(), num(kb(c.sent + c.received), 2)),
        ("KB/sec RX".into(), num(kb(c.received), 2)),
        ("KB/sec TX".into(), num(kb(c.sent), 2)),
        (
            "Time-Serie".into(),
            timeline.map_or(OrderedJson::Obj(Vec::new()), |t| per_second(t, percentiles)),
        ),
    ];
    let mut pcts = Vec::new();
    for p in percentiles {
        let key = pct_key(*p, 3);
        if pcts.iter().any(|(k, _)| *k == key) {
            continue;
        }
        pcts.push((key, num(c.pct_ms(*p), 3)));
    }
    pcts.push((
        "Histogram log format".into(),
        OrderedJson::Obj(vec![(
            "Compressed Histogram".into(),
            OrderedJson::Str(encode(&to_micros(&c.hist))),
        )]),
    ));
    f.push(("Percentile Latencies".into(), OrderedJson::Obj(pcts)));
    OrderedJson::Obj(f)
}

fn view_json(v: &View, options: &Options) -> OrderedJson {
    let finish = v.start_ms + v.secs * 1000.0;
    let mut fields = vec![(
        "Runtime".to_string(),
        OrderedJson::Obj(vec![
            ("Start time".into(), int(v.start_ms.max(0.0) as u64)),
            ("Finish time".into(), int(finish.max(0.0) as u64)),
            (
                "Total duration".into(),
                int((finish - v.start_ms).max(0.0) as u64),
            ),
            ("Time unit".into(), OrderedJson::Str("MILLISECONDS".into())),
            (
                "Interrupted".into(),
                OrderedJson::Str(if v.interrupted { "true" } else { "false" }.into()),
            ),
        ]),
    )];
    // Per-second figures exist for all commands together only: a row gets them when it is
    // the only one with traffic.
    let busy = v.rows.iter().filter(|r| r.cell.ops > 0).count();
    let timeline = (!v.timeline.is_empty()).then_some(v.timeline.as_slice());
    for r in &v.rows {
        let t = if busy == 1 && r.cell.ops > 0 {
            timeline
        } else {
            None
        };
        fields.push((
            r.name.clone(),
            type_json(&r.cell, r.kind, v.secs, t, 0, &options.percentiles),
        ));
    }
    fields.push((
        "Totals".into(),
        type_json(
            &v.totals,
            Kind::Full,
            v.secs,
            timeline,
            v.connection_errors,
            &options.percentiles,
        ),
    ));
    if !options.hide_histogram {
        for r in &v.rows {
            let steps = distribution(&r.cell.hist)
                .into_iter()
                .map(|(ms, pct)| {
                    OrderedJson::Obj(vec![
                        ("<=msec".into(), num(ms, 3)),
                        ("percent".into(), num(pct, 3)),
                    ])
                })
                .collect();
            fields.push((r.command.clone(), OrderedJson::Arr(steps)));
        }
    }
    OrderedJson::Obj(fields)
}

/// The report in memtier's JSON layout (`--json-out-file`): `configuration`,
/// `run information` and one object per table (`ALL STATS`, or `BEST RUN RESULTS` ...).
/// Numbers are always finite.
pub fn json(report: &Report, options: &Options) -> String {
    let mut top = vec![(
        "configuration".to_string(),
        OrderedJson::Obj(
            options
                .config
                .iter()
                .map(|(k, v)| (k.clone(), from_json(v)))
                .collect(),
        ),
    )];
    let mut info = vec![
        ("Threads".to_string(), int(options.threads as u64)),
        ("Connections per thread".into(), int(options.clients as u64)),
    ];
    match options.requests_per_client {
        Some(n) => info.push(("Requests per client".into(), int(n))),
        None => info.push(("Seconds".into(), int(options.test_time.unwrap_or(0) as u64))),
    }
    info.push(("Format version".into(), int(2)));
    top.push(("run information".into(), OrderedJson::Obj(info)));
    for v in views(report, options) {
        top.push((v.title.clone(), view_json(&v, options)));
    }
    let mut out = String::new();
    write_json(&mut out, &OrderedJson::Obj(top), 0);
    out.push('\n');
    out
}

// ----------------------------------------------------------------------------------------
// HdrHistogram files.

/// `hdr_percentiles_print` (CLASSIC format, values in ms) of a microsecond histogram.
fn percentiles_text(us: &Histogram<u64>) -> String {
    let mut out = format!(
        "{:>12} {:>12} {:>12} {:>12}\n\n",
        "Value", "Percentile", "TotalCount", "1/(1-Percentile)"
    );
    let mut cumulative = 0u64;
    for v in us.iter_quantiles(10) {
        cumulative += v.count_since_last_iteration();
        let q = v.quantile_iterated_to();
        let inverted = 1.0 / (1.0 - q);
        let inv = if inverted.is_finite() {
            format!("{inverted:>12.2}")
        } else {
            format!("{:>12}", "inf")
        };
        let _ = writeln!(
            out,
            "{:>12.3} {:>12.6} {:>12} {inv}",
            us.highest_equivalent(v.value_iterated_to()) as f64 / 1000.0,
            q,
            cumulative
        );
    }
    let sub_buckets = (2.0 * 10f64.powi(us.sigfig() as i32)).log2().ceil().exp2() as u64;
    let _ = write!(
        out,
        "#[Mean    = {:>12.3}, StdDeviation   = {:>12.3}]\n#[Max     = {:>12.3}, Total count    = {:>12}]\n#[Buckets = {:>12}, SubBuckets     = {:>12}]\n",
        us.mean() / 1000.0,
        us.stdev() / 1000.0,
        us.max() as f64 / 1000.0,
        us.len(),
        us.buckets(),
        sub_buckets
    );
    out
}

/// `Www Mmm HH:MM:SS GMT YYYY` (C's `%a %b %X %Z %Y` in GMT) of seconds since the epoch.
fn gmt(secs: f64) -> String {
    let t = secs.max(0.0) as i64;
    let days = t.div_euclid(86_400);
    let rem = t.rem_euclid(86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{} {} {:02}:{:02}:{:02} GMT {}",
        DAYS[days.rem_euclid(7) as usize],
        MONTHS[(month - 1) as usize],
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        year
    )
}

/// `hdr_log_write_header` + `hdr_log_write` of one histogram, as memtier writes its `.hgrm`.
fn log_text(us: &Histogram<u64>, header: &str, start_s: f64, end_s: f64) -> String {
    format!(
        "#[{header}]\n#[Histogram log format version 1.2]\n#[StartTime: {start_s:.3} (seconds since epoch), {}]\n\"StartTimestamp\",\"EndTimestamp\",\"Interval_Max\",\"Interval_Compressed_Histogram\"\n{start_s:.3},{end_s:.3},{}.0,{}\n",
        gmt(start_s),
        us.max(),
        encode(us)
    )
}

/// Write memtier's HdrHistogram files for every run: `PREFIX_FULL_RUN_N.txt` and `.hgrm`,
/// and per command `PREFIX_SET_command_run_N.txt` / `.hgrm` (GET, or each `--command`
/// name), for histograms that hold values. Returns the paths written.
pub fn write_hdr_files(report: &Report, options: &Options) -> Result<Vec<String>> {
    let Some(prefix) = &options.hdr_file_prefix else {
        return Ok(Vec::new());
    };
    let mut written = Vec::new();
    let mut at_s = report.started_at;
    let runs = report.phases.iter().filter(|p| p.measured);
    for (i, p) in runs.enumerate() {
        let run = i + 1;
        let v = view_of(p, String::new(), at_s * 1000.0, options);
        let (start, end) = (at_s, at_s + p.duration_s);
        at_s = end;
        let mut files = vec![(
            format!("{prefix}_FULL_RUN_{run}"),
            "Full Run command HDR latency histogram results".to_string(),
            &v.totals,
        )];
        for r in &v.rows {
            files.push((
                format!("{prefix}_{}_command_run_{run}", r.command),
                format!("{} command HDR latency histogram results", r.command),
                &r.cell,
            ));
        }
        for (base, header, cell) in files {
            if cell.count() == 0 {
                continue;
            }
            let us = to_micros(&cell.hist);
            for (path, text) in [
                (format!("{base}.txt"), percentiles_text(&us)),
                (format!("{base}.hgrm"), log_text(&us, &header, start, end)),
            ] {
                std::fs::write(&path, text).map_err(|source| Error::File {
                    path: path.clone(),
                    source,
                })?;
                written.push(path);
            }
        }
    }
    Ok(written)
}

/// What is left to print once a memtier run is reported.
#[derive(Debug, Clone, Default)]
pub struct Printed {
    /// The text for stdout (empty when `--out-file` took it).
    pub stdout: String,
    /// Lines for stderr: where results went, warnings.
    pub stderr: Vec<String>,
}

/// Report a finished run as memtier_benchmark would: write `--out-file`, `--json-out-file`
/// and `--hdr-file-prefix` files, and return what to print.
pub fn finish(report: &Report, options: &Options) -> Result<Printed> {
    let mut printed = Printed::default();
    let text = text(report, options);
    let write = |path: &str, body: &str| {
        std::fs::write(path, body).map_err(|source| Error::File {
            path: path.into(),
            source,
        })
    };
    match &options.out_file {
        Some(path) => {
            write(path, &text)?;
            printed.stderr.push(format!("Writing results to {path}..."));
        }
        None => printed.stdout = text,
    }
    for path in write_hdr_files(report, options)? {
        printed.stderr.push(format!(
            "Writing HDR latency histogram results to {path}..."
        ));
    }
    if let Some(path) = &options.json_out_file {
        write(path, &json(report, options))?;
        printed
            .stderr
            .push(format!("Saving JSON output file: {path}"));
    }
    printed.stderr.extend(warnings(report, options));
    Ok(printed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers_match_memtiers_formats() {
        assert_eq!(pct_key(50.0, 3), "p50.00");
        assert_eq!(pct_key(99.9, 3), "p99.90");
        assert_eq!(pct_key(99.99, 2), "p99.99");
        assert_eq!(pct_key(100.0, 3), "p100.0");
        assert_eq!(trim_float(99.9), "99.9");
        assert_eq!(trim_float(50.0), "50");
        assert_eq!(pretty("HSET"), "Hsets");
        assert_eq!(pretty("json.set"), "Json.sets");
        assert_eq!(gmt(0.0), "Thu Jan 00:00:00 GMT 1970");
        assert_eq!(gmt(1_403_476_110.183), "Sun Jun 22:28:30 GMT 2014");
        let mut out = String::new();
        write_json(
            &mut out,
            &OrderedJson::Obj(vec![
                ("a".into(), num(f64::NAN, 2)),
                ("b".into(), OrderedJson::Arr(vec![int(1)])),
                ("c \"q\"".into(), OrderedJson::Null),
            ]),
            0,
        );
        let back: Json = serde_json::from_str(&out).unwrap();
        assert_eq!(back["a"], serde_json::json!(0));
        assert_eq!(back["c \"q\""], Json::Null);
    }

    #[test]
    fn micro_histograms_and_hdr_text() {
        let mut h = crate::stats::new_histogram();
        for us in 1..=1000u64 {
            h.record(us * 1000).unwrap();
        }
        let us = to_micros(&h);
        assert_eq!(us.len(), 1000);
        // memtier's histogram (lowest discernible 10 us) has 8 us steps below 16 ms.
        assert!((us.value_at_quantile(0.5) as i64 - 500).abs() <= 8);
        let text = percentiles_text(&us);
        assert!(text.starts_with("       Value   Percentile   TotalCount 1/(1-Percentile)\n\n"));
        assert!(
            text.contains("#[Max     =        1.007, Total count    =         1000]"),
            "{text}"
        );
        assert!(text.contains("SubBuckets     =         2048]"));
        let log = log_text(&us, "Full Run", 10.0, 12.5);
        let last = log.lines().last().unwrap();
        assert!(last.starts_with("10.000,12.500,1007.0,HISTFAA"), "{last}");
    }
}
