//! A Prometheus endpoint for long runs (`observe.prometheus = "127.0.0.1:9464"`,
//! `--prometheus ADDR`): while the run lasts, `GET /metrics` gives each phase's counters per
//! command (requests, errors by kind, bytes) and its latency histogram, in the Prometheus text
//! format, so that a Grafana dashboard follows a soak. The phases publish their cumulative
//! results once a second (and once more when they end) from the thread that merges them, off
//! the send path; the endpoint renders them on its own thread when scraped.

use crate::plan::Phase;
use crate::report::TimelineRow;
use crate::stats::{CommandRecorder, Recorder};
use crate::{Error, Result};
use std::fmt::Write as _;
use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// Upper bounds of the latency histogram's buckets, in seconds (Prometheus's convention),
/// from 50 us to 10 s: the range of a Redis request, from a local GET to a stalled server.
pub const BUCKETS_S: [f64; 17] = [
    0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0,
    2.5, 5.0, 10.0,
];

/// One command's figures in one phase, as last published.
#[derive(Debug, Clone, Default)]
struct Series {
    ops: u64,
    errors: u64,
    error_kinds: Vec<(String, u64)>,
    bytes_sent: u64,
    bytes_received: u64,
    /// Requests with a latency at most each of [`BUCKETS_S`], then all of them.
    buckets: Vec<u64>,
    count: u64,
    sum_s: f64,
}

impl Series {
    fn of(c: &CommandRecorder) -> Series {
        let h = &c.latency.histogram;
        let count = h.len();
        let buckets = BUCKETS_S
            .iter()
            .map(|b| {
                let ns = (b * 1e9) as u64;
                // Values are recorded in ns; the histogram's last value is its bound.
                h.count_between(0, ns.min(h.high()))
            })
            .collect();
        Series {
            ops: c.ops,
            errors: c.errors,
            error_kinds: c
                .error_kinds
                .iter()
                .map(|(k, n)| (k.to_string(), n))
                .collect(),
            bytes_sent: c.bytes_sent,
            bytes_received: c.bytes_received,
            buckets,
            count,
            sum_s: c.latency.sum_ns as f64 / 1e9,
        }
    }
}

/// A counter of each command: its name, help text and value.
type Counter = (&'static str, &'static str, fn(&Series) -> u64);
/// A gauge of each phase: its name, help text and value.
type Gauge = (&'static str, &'static str, fn(&PhaseSeries) -> f64);

/// One phase's published figures.
#[derive(Debug, Clone, Default)]
struct PhaseSeries {
    name: String,
    measured: bool,
    commands: Vec<(String, Series)>,
    ops_per_sec: f64,
    connections: u32,
}

/// The figures the endpoint serves: every phase run so far, the running one last.
#[derive(Debug, Default)]
pub struct Metrics {
    phases: Mutex<Vec<PhaseSeries>>,
}

impl Metrics {
    /// Publish phase `index`'s results so far: its cumulative recorder `total`, and the
    /// throughput and connections of its last timeline row.
    pub fn publish(&self, index: usize, phase: &Phase, total: &Recorder, last: &TimelineRow) {
        let commands = phase
            .commands
            .iter()
            .zip(&total.commands)
            .map(|(c, r)| (c.label.clone(), Series::of(r)))
            .collect();
        let phase = PhaseSeries {
            name: phase.spec.name.clone(),
            measured: phase.spec.measured,
            commands,
            ops_per_sec: last.ops_per_sec,
            connections: last.connections,
        };
        let Ok(mut phases) = self.phases.lock() else {
            return;
        };
        while phases.len() <= index {
            phases.push(PhaseSeries::default());
        }
        phases[index] = phase;
    }

    /// The Prometheus text format (version 0.0.4) of everything published.
    pub fn render(&self) -> String {
        let phases = match self.phases.lock() {
            Ok(p) => p.clone(),
            Err(_) => return String::new(),
        };
        let mut out = String::new();
        let counters: [Counter; 4] = [
            (
                "respload_requests_total",
                "Requests finished (answered or failed), by phase and command.",
                |s| s.ops,
            ),
            (
                "respload_errors_total",
                "Requests failed (error replies, timeouts, lost connections).",
                |s| s.errors,
            ),
            ("respload_sent_bytes_total", "Request bytes written.", |s| {
                s.bytes_sent
            }),
            ("respload_received_bytes_total", "Reply bytes read.", |s| {
                s.bytes_received
            }),
        ];
        for (metric, help, value) in counters {
            let _ = writeln!(out, "# HELP {metric} {help}\n# TYPE {metric} counter");
            for p in phases.iter().filter(|p| !p.name.is_empty()) {
                for (label, s) in &p.commands {
                    let _ = writeln!(out, "{metric}{{{}}} {}", labels(p, label), value(s));
                }
            }
        }
        let metric = "respload_errors_by_kind_total";
        let _ = writeln!(
            out,
            "# HELP {metric} Failed requests by kind (the error reply's first word, or \
             TIMEOUT, CONNECTION).\n# TYPE {metric} counter"
        );
        for p in phases.iter().filter(|p| !p.name.is_empty()) {
            for (label, s) in &p.commands {
                for (kind, n) in &s.error_kinds {
                    let _ = writeln!(
                        out,
                        "{metric}{{{},kind=\"{}\"}} {n}",
                        labels(p, label),
                        escape(kind)
                    );
                }
            }
        }
        let metric = "respload_latency_seconds";
        let _ = writeln!(
            out,
            "# HELP {metric} Request latency (from the intended send time in open loop).\n\
             # TYPE {metric} histogram"
        );
        for p in phases.iter().filter(|p| !p.name.is_empty()) {
            for (label, s) in &p.commands {
                let l = labels(p, label);
                for (bound, n) in BUCKETS_S.iter().zip(&s.buckets) {
                    let _ = writeln!(out, "{metric}_bucket{{{l},le=\"{bound}\"}} {n}");
                }
                let _ = writeln!(out, "{metric}_bucket{{{l},le=\"+Inf\"}} {}", s.count);
                let _ = writeln!(out, "{metric}_sum{{{l}}} {}", s.sum_s);
                let _ = writeln!(out, "{metric}_count{{{l}}} {}", s.count);
            }
        }
        let gauges: [Gauge; 2] = [
            (
                "respload_ops_per_second",
                "Requests finished in the last second, by phase.",
                |p| p.ops_per_sec,
            ),
            (
                "respload_connections",
                "Connections open at the end of the last second, by phase.",
                |p| f64::from(p.connections),
            ),
        ];
        for (metric, help, value) in gauges {
            let _ = writeln!(out, "# HELP {metric} {help}\n# TYPE {metric} gauge");
            for p in phases.iter().filter(|p| !p.name.is_empty()) {
                let _ = writeln!(
                    out,
                    "{metric}{{phase=\"{}\",measured=\"{}\"}} {}",
                    escape(&p.name),
                    p.measured,
                    value(p)
                );
            }
        }
        out
    }
}

fn labels(p: &PhaseSeries, command: &str) -> String {
    format!(
        "phase=\"{}\",measured=\"{}\",command=\"{}\"",
        escape(&p.name),
        p.measured,
        escape(command)
    )
}

/// A label value as the text format writes it: `\`, `"` and newlines escaped.
fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// The endpoint: a thread answering scrapes until the run ends.
pub struct Endpoint {
    /// What it serves.
    pub metrics: Arc<Metrics>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Endpoint {
    /// Listen on `address` (`HOST:PORT`; `observe.prometheus` names it in errors): an address
    /// that does not resolve or cannot be bound is an error before any traffic.
    pub fn start(address: &str, field: &str) -> Result<Endpoint> {
        let listener = super::http::listen(address, field, 9464)?;
        let metrics = Arc::new(Metrics::default());
        let stop = Arc::new(AtomicBool::new(false));
        let (m, s) = (Arc::clone(&metrics), Arc::clone(&stop));
        let thread = std::thread::Builder::new()
            .name("respload-prometheus".into())
            .spawn(move || serve(&listener, &m, &s))
            .map_err(|e| Error::Internal(format!("cannot start the metrics thread: {e}")))?;
        Ok(Endpoint {
            metrics,
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for Endpoint {
    /// The endpoint closes with the run.
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(listener: &TcpListener, metrics: &Metrics, stop: &AtomicBool) {
    while !stop.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok((stream, _)) => answer(stream, metrics),
            // Nothing waiting: look at the stop flag again soon.
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

/// Answer one request: the metrics for `GET /metrics` (or `/`), 404 otherwise.
fn answer(mut stream: TcpStream, metrics: &Metrics) {
    let (status, body) = match super::http::get_path(&mut stream).as_deref() {
        Some("/metrics" | "/") => ("200 OK", metrics.render()),
        _ => (
            "404 Not Found",
            "respload serves GET /metrics\n".to_string(),
        ),
    };
    let _ = write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
}
