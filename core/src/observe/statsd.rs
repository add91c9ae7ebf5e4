//! StatsD metrics and Graphite events (`observe.statsd`, memtier's `--statsd-host`): each
//! second of a measured phase, the figures memtier_benchmark 2.x sends (`ops_sec`,
//! `bytes_sec`, `latency_ms`, `latency_pN`, ...), one UDP datagram each, named
//! `PREFIX.RUN_LABEL.NAME`; and, with `graphite_port`, an HTTP event when each measured phase
//! starts and ends. The merging thread hands the rows over through a channel once a second;
//! a thread of its own formats and sends them, off the send path (a Graphite server slow to
//! accept holds no phase back).

use crate::report::{decode_histogram, percentile, Snapshot};
use crate::spec::Statsd;
use crate::{Error, Result};
use std::fmt::Write as _;
use std::io::Write as _;
use std::net::{SocketAddr, TcpStream, ToSocketAddrs, UdpSocket};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

/// How long a Graphite event may wait to connect or to be written (memtier's 2 s).
const EVENT_TIMEOUT: Duration = Duration::from_secs(2);

/// What a phase hands the sender.
enum Msg {
    /// A measured phase starts: run `run` (from 1), its threads and connections, and what
    /// ends it (requests, or seconds) for `progress_pct`.
    Start {
        run: usize,
        threads: u32,
        connections: u32,
        requests: Option<u64>,
        seconds: Option<f64>,
    },
    /// One second of it, and the bytes written and read in that second.
    Row(Box<Snapshot>, u64),
    /// It ended.
    End { run: usize },
}

/// The sending end a phase holds: cheap to clone, never blocks.
#[derive(Clone)]
pub struct StatsdFeed(Sender<Msg>);

impl StatsdFeed {
    /// Measured phase `index` starts with `threads` and `connections`; it ends after
    /// `requests`, or after `seconds` when it has a duration and no request count.
    pub fn start(
        &self,
        index: usize,
        threads: u32,
        connections: u32,
        requests: Option<u64>,
        seconds: Option<f64>,
    ) {
        let _ = self.0.send(Msg::Start {
            run: index + 1,
            threads,
            connections,
            requests,
            seconds,
        });
    }

    /// One second of the phase: its row and the bytes written and read in it.
    pub fn row(&self, snapshot: &Snapshot, bytes: u64) {
        // Once a second, on the merging thread: the copy is the row and its histogram.
        let _ = self.0.send(Msg::Row(Box::new(snapshot.clone()), bytes));
    }

    /// Measured phase `index` ended.
    pub fn end(&self, index: usize) {
        let _ = self.0.send(Msg::End { run: index + 1 });
    }
}

/// The sender: a thread sending what the phases hand it until the run ends.
pub struct StatsdSender {
    feed: Option<StatsdFeed>,
    thread: Option<JoinHandle<()>>,
}

impl StatsdSender {
    /// Resolve `settings.host` and open the UDP socket (`field` names `observe.statsd` in
    /// errors): a host that does not resolve is an error before any traffic.
    pub fn start(settings: &Statsd, field: &str) -> Result<StatsdSender> {
        let to = (settings.host.as_str(), settings.port)
            .to_socket_addrs()
            .ok()
            .and_then(|mut a| a.next())
            .ok_or_else(|| {
                Error::spec(
                    format!("{field}.host"),
                    format!(
                        "`{}` does not resolve: give the StatsD server's host name or address",
                        settings.host
                    ),
                )
            })?;
        let local: SocketAddr = if to.is_ipv4() {
            ([0, 0, 0, 0], 0).into()
        } else {
            ([0u16; 8], 0).into()
        };
        let socket = UdpSocket::bind(local).map_err(|e| {
            Error::spec(
                field,
                format!("cannot open a UDP socket to send to {to}: {e}"),
            )
        })?;
        let graphite = settings
            .graphite_port
            .map(|p| (SocketAddr::new(to.ip(), p), settings.host.clone()));
        let mut state = State {
            socket,
            to,
            prefix: if settings.prefix.is_empty() {
                format!("{}.", settings.run_label)
            } else {
                format!("{}.{}.", settings.prefix, settings.run_label)
            },
            run_label: settings.run_label.clone(),
            percentiles: settings.percentiles.clone(),
            graphite,
            line: String::with_capacity(256),
            run: Run::default(),
        };
        let (tx, rx) = channel();
        let thread = std::thread::Builder::new()
            .name("respload-statsd".into())
            .spawn(move || state.serve(&rx))
            .map_err(|e| Error::Internal(format!("cannot start the StatsD thread: {e}")))?;
        Ok(StatsdSender {
            feed: Some(StatsdFeed(tx)),
            thread: Some(thread),
        })
    }

    /// The end the phases send through.
    pub fn feed(&self) -> Option<StatsdFeed> {
        self.feed.clone()
    }
}

impl Drop for StatsdSender {
    /// Everything handed over is sent before the run returns.
    fn drop(&mut self) {
        self.feed = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The sending thread's state.
struct State {
    socket: UdpSocket,
    to: SocketAddr,
    /// `PREFIX.RUN_LABEL.`
    prefix: String,
    run_label: String,
    percentiles: Vec<f64>,
    /// Graphite's events address and the host name its requests give.
    graphite: Option<(SocketAddr, String)>,
    /// The datagram being written (reused).
    line: String,
    run: Run,
}

/// The running phase's figures so far.
#[derive(Default)]
struct Run {
    requests: Option<u64>,
    seconds: Option<f64>,
    ops: u64,
    bytes: u64,
    /// Latency summed over the requests (ms), for `latency_avg_ms`.
    latency_ms: f64,
    reconnects: u64,
}

impl State {
    fn serve(&mut self, rx: &Receiver<Msg>) {
        while let Ok(msg) = rx.recv() {
            match msg {
                Msg::Start {
                    run,
                    threads,
                    connections,
                    requests,
                    seconds,
                } => {
                    self.run = Run {
                        requests,
                        seconds,
                        ..Run::default()
                    };
                    self.event(
                        "Benchmark Started",
                        &format!("threads={threads} connections={connections} run={run}"),
                        "memtier,start",
                    );
                }
                Msg::Row(s, bytes) => self.row(&s, bytes),
                Msg::End { run } => {
                    self.event("Benchmark Completed", &format!("run={run}"), "memtier,end");
                    // Back to 0, so that a dashboard's graphs show the run over.
                    for name in ["ops_sec", "ops_sec_avg", "bytes_sec", "bytes_sec_avg"] {
                        self.send(name, format_args!("0"), "g");
                    }
                    self.send("progress_pct", format_args!("0"), "g");
                }
            }
        }
    }

    fn row(&mut self, s: &Snapshot, bytes: u64) {
        let row = &s.row;
        let run = &mut self.run;
        run.ops += row.ops;
        run.bytes += bytes;
        run.latency_ms += row.latency_ms.mean * row.ops as f64;
        run.reconnects += row.reconnects.unwrap_or(0);
        let (ops, bytes_total, latency_sum, reconnects) =
            (run.ops, run.bytes, run.latency_ms, run.reconnects);
        let progress = match (run.requests, run.seconds) {
            (Some(n), _) if n > 0 => 100.0 * ops as f64 / n as f64,
            (_, Some(d)) if d > 0.0 => 100.0 * row.t / d,
            _ => 0.0,
        }
        .min(100.0);
        // respload's own counters: every request counted once, whatever the intervals.
        self.send("ops", format_args!("{}", row.ops), "c");
        self.send("errors", format_args!("{}", row.errors), "c");
        if row.partial {
            // A few milliseconds of late replies: no rate to speak of.
            return;
        }
        let per_s = |n: f64, s: f64| if s > 0.0 { (n / s) as i64 } else { 0 };
        self.send(
            "ops_sec",
            format_args!("{}", per_s(row.ops as f64, row.interval_s)),
            "g",
        );
        self.send(
            "ops_sec_avg",
            format_args!("{}", per_s(ops as f64, row.t)),
            "g",
        );
        self.send(
            "bytes_sec",
            format_args!("{}", per_s(bytes as f64, row.interval_s)),
            "g",
        );
        self.send(
            "bytes_sec_avg",
            format_args!("{}", per_s(bytes_total as f64, row.t)),
            "g",
        );
        self.send(
            "latency_ms",
            format_args!("{:.3}", row.latency_ms.mean),
            "ms",
        );
        let avg = if ops > 0 {
            latency_sum / ops as f64
        } else {
            0.0
        };
        self.send("latency_avg_ms", format_args!("{avg:.3}"), "ms");
        self.send("connections", format_args!("{}", row.connections), "g");
        self.send("progress_pct", format_args!("{progress:.6}"), "g");
        if reconnects > 0 {
            self.send("connection_errors", format_args!("{reconnects}"), "g");
        }
        let Some(h) = decode_histogram(&row.histogram).filter(|h| !h.is_empty()) else {
            return;
        };
        for i in 0..self.percentiles.len() {
            let q = self.percentiles[i];
            let ms = percentile(&h, q / 100.0) as f64 / 1e6;
            let name = format!("latency_p{}", q.to_string().replace('.', "_"));
            self.send(&name, format_args!("{ms:.6}"), "g");
        }
    }

    /// One datagram, `PREFIX.RUN_LABEL.NAME:VALUE|TYPE`; a failed send is dropped, as UDP
    /// metrics are.
    fn send(&mut self, name: &str, value: std::fmt::Arguments, kind: &str) {
        self.line.clear();
        let _ = write!(self.line, "{}{name}:{value}|{kind}", self.prefix);
        let _ = self.socket.send_to(self.line.as_bytes(), self.to);
    }

    /// Post an event to Graphite's events API (when `graphite_port` is set), tagged with
    /// the run label; a server that does not answer in 2 s is skipped.
    fn event(&self, what: &str, data: &str, tags: &str) {
        let Some((address, host)) = &self.graphite else {
            return;
        };
        let body = serde_json::json!({
            "what": what,
            "tags": format!("{tags},run:{}", self.run_label),
            "data": data,
        })
        .to_string();
        let Ok(mut stream) = TcpStream::connect_timeout(address, EVENT_TIMEOUT) else {
            return;
        };
        let _ = stream.set_write_timeout(Some(EVENT_TIMEOUT));
        let _ = write!(
            stream,
            "POST /events/ HTTP/1.1\r\nHost: {host}:{}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            address.port(),
            body.len()
        );
    }
}
