//! memtier_benchmark's report of a respload run: its settings ([`Options`]) and the figures
//! every format shows (a view of each phase, a row per command), which
//! [`text`](mod@super::text), [`json`](mod@super::json) and [`hdr`](super::hdr) lay out as
//! memtier_benchmark 2.x writes them, so that tools parsing memtier's output read respload's.
//!
//! Latencies are in milliseconds as memtier prints them, from respload's own measurements
//! (nanosecond histograms; the JSON and HDR files carry them converted to microseconds, the
//! unit of memtier's histograms). Where respload has no figure (per-second bytes, per-second
//! figures of one command when several run), the field is left out rather than invented.

use crate::report::{decode_histogram, percentile, PhaseReport, Report, Stats, TimelineRow};
use hdrhistogram::Histogram;
use serde_json::Value as Json;

pub(super) const NS_PER_MS: f64 = 1e6;

/// One `--command`: its label in respload's report and its name in memtier's table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandRow {
    /// The label of its `[[commands]]` entry (`SET`, `SET#2` for a second SET, ...), or of
    /// the steps of one command name of a `--monitor-input` chain (`MONITOR:SET`); empty for
    /// a row that gets no requests.
    pub label: String,
    /// memtier's command name: the first word, upper-cased (rows are `Sets`, `Hsets`, ...);
    /// rows of one name are added up unless `--command-stats-breakdown=line`.
    pub name: String,
    /// Its name with `--command-stats-breakdown=line` when memtier shows another
    /// (`SET (Line 2)` for `__monitor_line2__`); `None`: `name`.
    pub line_name: Option<String>,
}

/// memtier's name for the row of a `__monitor_line@__` placeholder: its requests are counted
/// under their own commands' rows, so it shows (empty) only with
/// `--command-stats-breakdown=line`.
pub const MONITOR_RANDOM: &str = "MONITOR_RANDOM";

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
    /// `--data-verify` / `--verify-only`: the imported keys to read back and compare.
    pub data_verify: Option<DataVerify>,
}

/// memtier's `--data-verify`: after the run (instead of it with `--verify-only`), each key
/// of the `--data-import` file is read with GET and its value compared with the file's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataVerify {
    /// `--verify-only`: no benchmark, only the verification.
    pub only: bool,
    /// Each key of the file once, with the data of its last item (what a pass over the file
    /// leaves), in the file's order.
    pub items: Vec<(Vec<u8>, Vec<u8>)>,
}

/// What a `--data-verify` pass found, as memtier reports it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Verification {
    /// Keys holding the file's value.
    pub verified: u64,
    /// Keys missing, holding another value or answered with an error.
    pub failed: u64,
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
            data_verify: None,
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
pub(super) struct Cell {
    pub(super) ops: u64,
    pub(super) hits: u64,
    pub(super) misses: u64,
    pub(super) sent: u64,
    pub(super) received: u64,
    /// Sum of latencies of replies received (ms): mean x count.
    pub(super) latency_sum_ms: f64,
    pub(super) min_ms: f64,
    pub(super) max_ms: f64,
    /// Latencies in nanoseconds.
    pub(super) hist: Histogram<u64>,
}

impl Cell {
    pub(super) fn empty() -> Cell {
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

    pub(super) fn from_stats(s: &Stats) -> Cell {
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

    pub(super) fn add(&mut self, o: &Cell) {
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

    pub(super) fn count(&self) -> u64 {
        self.hist.len()
    }

    pub(super) fn mean_ms(&self) -> f64 {
        if self.count() == 0 {
            0.0
        } else {
            self.latency_sum_ms / self.count() as f64
        }
    }

    /// Percentile `p` (0 to 100) in ms, never above the exact maximum.
    pub(super) fn pct_ms(&self, p: f64) -> f64 {
        if self.count() == 0 {
            return 0.0;
        }
        (percentile(&self.hist, p / 100.0) as f64 / NS_PER_MS).min(self.max_ms)
    }

    pub(super) fn zero_hits(&mut self) {
        self.hits = 0;
        self.misses = 0;
    }
}

/// How a row shows: memtier's SET/GET table has `---` where a figure does not apply.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Kind {
    /// `Sets`: no hits or misses.
    Set,
    /// `Gets`.
    Get,
    /// `Waits` (`--wait-ratio`).
    Wait,
    /// A `--command` row or `Totals`: every figure.
    Full,
}

#[derive(Clone)]
pub(super) struct Row {
    /// memtier's row name: `Sets`, `Gets`, `Hsets`, ...
    pub(super) name: String,
    /// memtier's command name for the histogram and HDR files: `SET`, `GET`, `HSET`, ...
    pub(super) command: String,
    pub(super) kind: Kind,
    pub(super) cell: Cell,
}

/// One table: a run, the best or worst run, or the average of the runs.
pub(super) struct View {
    pub(super) title: String,
    pub(super) secs: f64,
    pub(super) start_ms: f64,
    pub(super) interrupted: bool,
    pub(super) rows: Vec<Row>,
    pub(super) totals: Cell,
    pub(super) timeline: Vec<TimelineRow>,
    pub(super) connection_errors: u64,
    pub(super) errors: Vec<(String, u64)>,
}

pub(super) fn pretty(command: &str) -> String {
    let lower = command.to_lowercase();
    let mut chars = lower.chars();
    match chars.next() {
        Some(first) => format!("{}{}s", first.to_uppercase(), chars.as_str()),
        None => "s".into(),
    }
}

pub(super) fn cell_of(commands: &std::collections::BTreeMap<String, Stats>, label: &str) -> Cell {
    commands
        .get(label)
        .map_or_else(Cell::empty, Cell::from_stats)
}

pub(super) fn rows_of(
    commands: &std::collections::BTreeMap<String, Stats>,
    options: &Options,
) -> Vec<Row> {
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
                // memtier counts its `--multi-key-get` MGETs as Gets.
                cell: match commands.contains_key("GET") {
                    true => cell_of(commands, "GET"),
                    false => cell_of(commands, "MGET"),
                },
            },
            Row {
                name: "Waits".into(),
                command: "WAIT".into(),
                kind: Kind::Wait,
                cell: cell_of(commands, "WAIT"),
            },
        ],
        Some(list) => {
            let mut rows: Vec<Row> = Vec::new();
            for CommandRow {
                label,
                name,
                line_name,
            } in list
            {
                if name == MONITOR_RANDOM && !options.stats_by_line {
                    continue;
                }
                let mut cell = cell_of(commands, label);
                if !options.miss_tracking {
                    cell.zero_hits();
                }
                match rows.iter_mut().find(|r| r.command == *name) {
                    Some(row) if !options.stats_by_line => row.cell.add(&cell),
                    _ => {
                        let shown = match line_name {
                            Some(n) if options.stats_by_line => n,
                            _ => name,
                        };
                        rows.push(Row {
                            name: pretty(shown),
                            command: shown.clone(),
                            kind: Kind::Full,
                            cell,
                        })
                    }
                }
            }
            rows
        }
    }
}

pub(super) fn view_of(p: &PhaseReport, title: String, start_ms: f64, options: &Options) -> View {
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
pub(super) fn views(report: &Report, options: &Options) -> Vec<View> {
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

#[cfg(test)]
mod tests {
    use super::super::hdr::*;
    use super::super::json::*;
    use super::super::text::*;
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
