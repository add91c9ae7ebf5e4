//! A report printed the way redis-benchmark 7.x prints its results: the default format (per
//! test: header, latency by percentile, cumulative distribution, summary), `-q` and `--csv`.
//!
//! Each measured phase is one test, titled by the phase name. The numbers are respload's own:
//! percentiles come from the phase's latency histogram (nanoseconds, re-bucketed to
//! `--precision` significant digits below 3), mean, min and max are exact.

use crate::report::Snapshot;
use crate::report::{decode_histogram, percentile, PhaseReport, Report};
use hdrhistogram::Histogram;
use std::fmt::Write as _;

/// Which of redis-benchmark's formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Format {
    /// The full report per test.
    #[default]
    Default,
    /// `-q`: one line per test with requests per second and p50.
    Quiet,
    /// `--csv`: a header and one quoted row per test.
    Csv,
}

/// How to print a report as redis-benchmark does, with the facts its header shows that the
/// report does not hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputOptions {
    /// Default, `-q` or `--csv`.
    pub format: Format,
    /// `--precision`: significant digits of the latency histograms shown (1 to 4, default 3;
    /// respload records 3, so 4 shows the same as 3).
    pub precision: u8,
    /// `-l`: run the tests again and again until interrupted (the CLI honours it).
    pub repeat: bool,
    /// `--json FILE`: also write respload's own report there.
    pub json: Option<String>,
    /// The `bytes payload` line: `-d`, or the command's RESP length for a command line.
    pub payload_bytes: u64,
    /// `--threads N` when given (the `multi-thread` and `threads` lines).
    pub threads: Option<u32>,
    /// Whether the tests are one command given on the command line (then no blank line
    /// follows the last test, as in redis-benchmark).
    pub command_line: bool,
    /// `-I`: the number of idle connections held (nothing is measured, nothing printed at
    /// the end; the CLI prints [`idle_banner`] first).
    pub idle: Option<u32>,
    /// `-e`: show the server's error replies (the first of each kind in each test, on
    /// stderr: [`error_replies`]).
    pub show_errors: bool,
}

/// What redis-benchmark `-I` prints before holding its idle connections.
pub fn idle_banner(connections: u32) -> String {
    format!("Creating {connections} idle connections and waiting forever (Ctrl+C when done)\n")
}

impl Default for OutputOptions {
    fn default() -> Self {
        OutputOptions {
            format: Format::Default,
            precision: 3,
            repeat: false,
            json: None,
            payload_bytes: 3,
            threads: None,
            command_line: false,
            idle: None,
            show_errors: false,
        }
    }
}

/// The CSV header redis-benchmark prints before the first test.
pub const CSV_HEADER: &str = "\"test\",\"rps\",\"avg_latency_ms\",\"min_latency_ms\",\"p50_latency_ms\",\"p95_latency_ms\",\"p99_latency_ms\",\"max_latency_ms\"";

const NS_PER_MS: f64 = 1e6;

/// The whole output of a run (every measured phase, in order), as redis-benchmark prints it.
pub fn render(report: &Report, options: &OutputOptions) -> String {
    let mut out = String::new();
    if options.idle.is_some() {
        return out;
    }
    if options.format == Format::Csv {
        out.push_str(CSV_HEADER);
        out.push('\n');
    }
    for phase in report.phases.iter().filter(|p| p.measured) {
        out.push_str(&render_test(report, phase, options));
    }
    if options.format != Format::Csv && !options.command_line {
        out.push('\n');
    }
    out
}

/// The figures of one test, from its histogram at the chosen precision.
struct Figures {
    rps: f64,
    avg: f64,
    min: f64,
    p50: f64,
    p95: f64,
    p99: f64,
    max: f64,
    histogram: Option<Histogram<u64>>,
    max_ns: u64,
}

fn figures(phase: &PhaseReport, precision: u8) -> Figures {
    let l = &phase.totals.latency_ms;
    let max_ns = (l.max * NS_PER_MS).round() as u64;
    let histogram = decode_histogram(&phase.totals.histogram).map(|h| coarsen(h, precision));
    let q = |q: f64| match &histogram {
        Some(h) => percentile(h, q).min(max_ns) as f64 / NS_PER_MS,
        None => 0.0,
    };
    Figures {
        rps: phase.totals.ops_per_sec,
        avg: l.mean,
        min: l.min,
        p50: q(0.5),
        p95: q(0.95),
        p99: q(0.99),
        max: l.max,
        histogram,
        max_ns,
    }
}

/// The histogram at `precision` significant digits (only coarser than recorded: respload
/// records 3 digits).
fn coarsen(h: Histogram<u64>, precision: u8) -> Histogram<u64> {
    if precision >= h.sigfig() {
        return h;
    }
    let Ok(mut coarse) = Histogram::<u64>::new_with_bounds(1, h.high().max(2), precision.max(1))
    else {
        return h;
    };
    for v in h.iter_recorded() {
        coarse.saturating_record_n(v.value_iterated_to(), v.count_at_value());
    }
    coarse
}

fn csv_field(text: &str) -> String {
    format!("\"{}\"", text.replace('"', "\"\""))
}

/// One test's output in the chosen format.
pub fn render_test(report: &Report, phase: &PhaseReport, options: &OutputOptions) -> String {
    let f = figures(phase, options.precision);
    let title = &phase.name;
    let mut out = String::new();
    match options.format {
        Format::Quiet => {
            let _ = writeln!(
                out,
                "{title}: {:.2} requests per second, p50={:.3} msec",
                f.rps, f.p50
            );
        }
        Format::Csv => {
            let values = [f.avg, f.min, f.p50, f.p95, f.p99, f.max];
            let mut row = vec![csv_field(title), csv_field(&format!("{:.2}", f.rps))];
            row.extend(values.iter().map(|v| csv_field(&format!("{v:.3}"))));
            let _ = writeln!(out, "{}", row.join(","));
        }
        Format::Default => {
            let _ = writeln!(out, "====== {title} ======");
            let _ = writeln!(
                out,
                "  {} requests completed in {:.2} seconds",
                phase.totals.ops, phase.duration_s
            );
            let _ = writeln!(out, "  {} parallel clients", phase.client.connections);
            let _ = writeln!(out, "  {} bytes payload", options.payload_bytes);
            let _ = writeln!(out, "  keep alive: 1");
            let config = &report.server.config;
            if let (Some(save), Some(aof)) = (config.get("save"), config.get("appendonly")) {
                let _ = writeln!(out, "  host configuration \"save\": {save}");
                let _ = writeln!(out, "  host configuration \"appendonly\": {aof}");
            }
            match options.threads {
                Some(n) => {
                    let _ = writeln!(out, "  multi-thread: yes");
                    let _ = writeln!(out, "  threads: {n}");
                }
                None => {
                    let _ = writeln!(out, "  multi-thread: no");
                }
            }
            let _ = writeln!(out);
            let _ = writeln!(out, "Latency by percentile distribution:");
            if let Some(h) = &f.histogram {
                for (pct, value, count) in percentile_distribution(h, f.max_ns) {
                    line(&mut out, pct, value, count);
                }
            }
            let _ = writeln!(out);
            let _ = writeln!(out, "Cumulative distribution of latencies:");
            if let Some(h) = &f.histogram {
                for (pct, value, count) in cumulative_distribution(h) {
                    line(&mut out, pct, value, count);
                }
            }
            let _ = writeln!(out);
            let _ = writeln!(out, "Summary:");
            let _ = writeln!(
                out,
                "  throughput summary: {:.2} requests per second",
                f.rps
            );
            let _ = writeln!(out, "  latency summary (msec):");
            let _ = writeln!(
                out,
                "    {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
                "avg", "min", "p50", "p95", "p99", "max"
            );
            let _ = writeln!(
                out,
                "    {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>9.3}",
                f.avg, f.min, f.p50, f.p95, f.p99, f.max
            );
        }
    }
    out
}

fn line(out: &mut String, pct: f64, value_ns: u64, count: u64) {
    let _ = writeln!(
        out,
        "{pct:.3}% <= {:.3} milliseconds (cumulative count {count})",
        value_ns as f64 / NS_PER_MS
    );
}

/// "Latency by percentile distribution": HdrHistogram's percentile iteration with one tick
/// per half distance (0%, 50%, 75%, 87.5%, ...), each line the percentile iterated to, the
/// highest value of the bucket that reached it (capped at the exact maximum) and the count
/// up to it; a line is shown when its count differs from the previous one, and always at
/// the end (100%).
pub fn percentile_distribution(h: &Histogram<u64>, max_ns: u64) -> Vec<(f64, u64, u64)> {
    let total = h.len();
    let mut lines = Vec::new();
    let mut shown: Option<u64> = None;
    let mut push = |pct: f64, value: u64, count: u64| {
        if shown != Some(count) || count == total {
            lines.push((pct, value.min(max_ns.max(1)), count));
        }
        shown = Some(count);
    };
    let mut target = 0.0f64;
    let mut count = 0u64;
    let mut last = 0u64;
    'buckets: for v in h.iter_recorded() {
        count += v.count_at_value();
        last = v.value_iterated_to();
        let reached = 100.0 * count as f64 / total as f64;
        while target <= reached {
            push(target, last, count);
            // The next percentile: half the remaining distance, in halving ticks.
            let ticks = (100.0 / (100.0 - target)).log2().floor() as i32 + 1;
            let step = 100.0 / 2f64.powi(ticks.min(1000));
            if count >= total || step <= 0.0 || target + step == target {
                break 'buckets;
            }
            target += step;
        }
    }
    push(100.0, last, count);
    lines
}

/// "Cumulative distribution of latencies": HdrHistogram's linear iteration in steps of
/// 0.1 ms, then of 1 ms once past 2 ms, each line the share and count of requests at or
/// below the step's value (the highest value of the bucket holding it); a line is shown when
/// its count differs from the previous one, and always once all requests are counted.
pub fn cumulative_distribution(h: &Histogram<u64>) -> Vec<(f64, u64, u64)> {
    const FINE: u64 = 100_000;
    const COARSE: u64 = 1_000_000;
    const SWITCH: u64 = 2_000_000;
    let total = h.len();
    let mut lines = Vec::new();
    if total == 0 {
        return lines;
    }
    let mut buckets = h
        .iter_recorded()
        .map(|v| (v.value_iterated_to(), v.count_at_value()))
        .peekable();
    let mut step = FINE;
    let mut level = FINE;
    let mut count = 0u64;
    let mut shown: Option<u64> = None;
    loop {
        let highest = h.highest_equivalent(level);
        while let Some(&(value, n)) = buckets.peek() {
            if value > highest {
                break;
            }
            count += n;
            buckets.next();
        }
        if shown != Some(count) || count == total {
            lines.push((100.0 * count as f64 / total as f64, highest, count));
        }
        shown = Some(count);
        let next = level.saturating_add(step);
        if highest > SWITCH {
            step = COARSE;
        }
        let more = count < total || highest.saturating_add(1) > h.lowest_equivalent(next);
        if !more || next == level {
            break;
        }
        level = next;
    }
    lines
}

/// Warnings for the tests that had errors (redis-benchmark stops at the first error reply;
/// respload counts them), one line each, for the caller to show on stderr.
pub fn error_lines(report: &Report) -> Vec<String> {
    report
        .phases
        .iter()
        .filter(|p| p.totals.errors > 0)
        .map(|p| {
            let kinds: Vec<String> = p
                .totals
                .errors_by_kind
                .iter()
                .map(|(k, n)| format!("{k} {n}"))
                .collect();
            format!(
                "{}: {} of {} requests failed ({})",
                p.name,
                p.totals.errors,
                p.totals.ops,
                kinds.join(", ")
            )
        })
        .collect()
}

/// What `-e` shows: `Error from server: MESSAGE` (redis-benchmark's words) for the first
/// error reply of each kind in each test, in the tests' order. redis-benchmark 7.0 prints
/// such a line at most once a second while it runs; respload prints them after the results.
pub fn error_replies(report: &Report) -> Vec<String> {
    report
        .phases
        .iter()
        .flat_map(|p| p.totals.first_errors.values())
        .map(|m| format!("Error from server: {m}"))
        .collect()
}

/// The live line redis-benchmark rewrites in place while a test runs: this interval's rate
/// and mean latency, and the test's so far. Feed it every snapshot.
#[derive(Debug, Default)]
pub struct Progress {
    phase: String,
    ops: u64,
    seconds: f64,
    latency_sum_ms: f64,
}

impl Progress {
    /// A new tracker.
    pub fn new() -> Self {
        Self::default()
    }

    /// The line for `snapshot` (without the trailing `\r`).
    pub fn line(&mut self, snapshot: &Snapshot) -> String {
        if snapshot.phase != self.phase {
            *self = Progress {
                phase: snapshot.phase.clone(),
                ..Progress::default()
            };
        }
        let r = &snapshot.row;
        self.ops += r.ops;
        self.seconds += r.interval_s;
        self.latency_sum_ms += r.latency_ms.mean * r.ops as f64;
        let overall_rps = if self.seconds > 0.0 {
            self.ops as f64 / self.seconds
        } else {
            0.0
        };
        let overall_ms = if self.ops > 0 {
            self.latency_sum_ms / self.ops as f64
        } else {
            0.0
        };
        format!(
            "{}: rps={:.1} (overall: {:.1}) avg_msec={:.3} (overall: {:.3})",
            snapshot.phase, r.ops_per_sec, overall_rps, r.latency_ms.mean, overall_ms
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{encode_histogram, Latency, Stats};
    use crate::stats::new_histogram;

    fn phase(name: &str, samples_us: &[u64]) -> PhaseReport {
        let mut h = new_histogram();
        for &us in samples_us {
            h.record(us * 1000).unwrap();
        }
        let n = samples_us.len() as u64;
        let max = *samples_us.iter().max().unwrap() as f64 / 1000.0;
        let min = *samples_us.iter().min().unwrap() as f64 / 1000.0;
        let mean = samples_us.iter().sum::<u64>() as f64 / n as f64 / 1000.0;
        PhaseReport {
            name: name.into(),
            measured: true,
            duration_s: 0.5,
            totals: Stats {
                ops: n,
                ops_per_sec: n as f64 / 0.5,
                latency_ms: Latency {
                    mean,
                    min,
                    max,
                    ..Latency::default()
                },
                histogram: encode_histogram(&h),
                ..Stats::default()
            },
            client: crate::report::ClientStats {
                connections: 50,
                threads: 1,
                ..Default::default()
            },
            ..PhaseReport::default()
        }
    }

    fn report(phases: Vec<PhaseReport>) -> Report {
        let mut r = Report::default();
        r.server.config.insert("save".into(), "".into());
        r.server.config.insert("appendonly".into(), "no".into());
        r.phases = phases;
        r
    }

    #[test]
    fn percentile_lines_follow_hdr_iteration() {
        let samples: Vec<u64> = (1..=1000).map(|i| 100 + i).collect(); // 101..1100 us
        let p = phase("GET", &samples);
        let h = decode_histogram(&p.totals.histogram).unwrap();
        let lines = percentile_distribution(&h, 1_100_000);
        let pcts: Vec<f64> = lines.iter().map(|l| l.0).collect();
        assert_eq!(&pcts[..5], &[0.0, 50.0, 75.0, 87.5, 93.75]);
        assert_eq!(lines[0].2, 1);
        assert_eq!(lines[1].2, 500);
        let last = lines.last().unwrap();
        assert_eq!((last.0, last.1, last.2), (100.0, 1_100_000, 1000));
        // Counts never go down, and the line before 100% holds every request too.
        assert!(lines
            .windows(2)
            .all(|w| w[0].2 <= w[1].2 && w[0].0 < w[1].0));
        assert_eq!(lines[lines.len() - 2].2, 1000);
    }

    #[test]
    fn cumulative_lines_step_by_a_tenth_then_by_a_millisecond() {
        let mut samples: Vec<u64> = (0..100).map(|i| 50 + i * 20).collect(); // 50..2030 us
        samples.push(4_500);
        let p = phase("SET", &samples);
        let h = decode_histogram(&p.totals.histogram).unwrap();
        let lines = cumulative_distribution(&h);
        let ms: Vec<String> = lines
            .iter()
            .map(|l| format!("{:.3}", l.1 as f64 / 1e6))
            .collect();
        assert_eq!(ms[0], "0.100");
        assert_eq!(ms[1], "0.200");
        assert!(ms.contains(&"2.101".to_string()), "{ms:?}");
        assert!(ms.last().unwrap().starts_with("5.10"), "{ms:?}");
        let last = lines.last().unwrap();
        assert_eq!((last.0, last.2), (100.0, 101));
        assert_eq!(lines[0].2, 3); // 50, 70, 90 us
    }

    #[test]
    fn the_three_formats() {
        let samples: Vec<u64> = (1..=2000).map(|i| 200 + i % 300).collect();
        let r = report(vec![
            phase("SET", &samples),
            phase("MSET (10 keys)", &samples),
        ]);
        let quiet = render(
            &r,
            &OutputOptions {
                format: Format::Quiet,
                ..OutputOptions::default()
            },
        );
        let lines: Vec<&str> = quiet.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(
            lines[0].starts_with("SET: 4000.00 requests per second, p50=0.3"),
            "{quiet}"
        );
        assert_eq!(lines[2], "");
        let csv = render(
            &r,
            &OutputOptions {
                format: Format::Csv,
                ..OutputOptions::default()
            },
        );
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines[0], CSV_HEADER);
        assert!(
            lines[2].starts_with("\"MSET (10 keys)\",\"4000.00\",\""),
            "{csv}"
        );
        assert_eq!(lines.len(), 3);
        let full = render(&r, &OutputOptions::default());
        assert!(full.starts_with(
            "====== SET ======\n  2000 requests completed in 0.50 seconds\n  50 parallel clients\n  3 bytes payload\n  keep alive: 1\n  host configuration \"save\": \n  host configuration \"appendonly\": no\n  multi-thread: no\n\nLatency by percentile distribution:\n0.000% <= 0.200 milliseconds (cumulative count 6)\n"
        ), "{full}");
        assert!(full.contains("\nSummary:\n  throughput summary: 4000.00 requests per second\n  latency summary (msec):\n          avg       min       p50       p95       p99       max\n"), "{full}");
        assert!(full.ends_with("\n\n"));
        assert_eq!(full.matches("======").count(), 4);
    }

    #[test]
    fn csv_titles_are_quoted() {
        assert_eq!(csv_field(r#"eval "x" 0"#), r#""eval ""x"" 0""#);
    }
}
