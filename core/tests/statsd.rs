//! StatsD metrics and Graphite events (`observe.statsd`, memtier's `--statsd-host`, issue 48)
//! against a real redis-server: a UDP listener parses every datagram and a TCP listener every
//! events request, and what they got agrees with the run's report.

mod common;

use common::{workload, Server};
use respload::tools::memtier::{parse_line, Invocation};
use respload::{run, Report};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read};
use std::net::{TcpListener, UdpSocket};
use std::thread::JoinHandle;
use std::time::Duration;

/// One StatsD datagram: `NAME:VALUE|TYPE`.
#[derive(Debug, Clone)]
struct Metric {
    name: String,
    value: f64,
    kind: String,
}

/// A StatsD server: a UDP socket on a free loopback port.
fn statsd() -> (UdpSocket, u16) {
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    socket
        .set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let port = socket.local_addr().unwrap().port();
    (socket, port)
}

/// Every datagram received, in order, each one metric with `prefix` taken off its name.
fn received(socket: &UdpSocket, prefix: &str) -> Vec<Metric> {
    let mut out = Vec::new();
    let mut buf = [0u8; 2048];
    while let Ok(n) = socket.recv(&mut buf) {
        let text = std::str::from_utf8(&buf[..n]).unwrap();
        assert!(!text.contains('\n'), "one metric a datagram: {text:?}");
        let (name, rest) = text.split_once(':').unwrap();
        let (value, kind) = rest.split_once('|').unwrap();
        let name = name
            .strip_prefix(prefix)
            .unwrap_or_else(|| panic!("{text:?} does not start with {prefix:?}"));
        out.push(Metric {
            name: name.to_string(),
            value: value.parse().unwrap_or_else(|_| panic!("{text:?}")),
            kind: kind.to_string(),
        });
    }
    out
}

/// A Graphite events API: accepts `n` requests and returns each one's path and JSON body.
fn graphite(n: usize) -> (u16, JoinHandle<Vec<(String, Value)>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let thread = std::thread::spawn(move || {
        (0..n)
            .map(|_| {
                let (stream, _) = listener.accept().unwrap();
                stream
                    .set_read_timeout(Some(Duration::from_secs(5)))
                    .unwrap();
                let mut reader = BufReader::new(stream);
                let mut head = String::new();
                let mut length = 0;
                loop {
                    let mut line = String::new();
                    reader.read_line(&mut line).unwrap();
                    if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                        length = v.trim().parse().unwrap();
                    }
                    if line == "\r\n" {
                        break;
                    }
                    head.push_str(&line);
                }
                let mut body = vec![0; length];
                reader.read_exact(&mut body).unwrap();
                let request = head.lines().next().unwrap().to_string();
                (request, serde_json::from_slice(&body).unwrap())
            })
            .collect()
    });
    (port, thread)
}

fn values<'a>(metrics: &'a [Metric], name: &str) -> Vec<&'a Metric> {
    metrics.iter().filter(|m| m.name == name).collect()
}

/// The checks every run's metrics pass against its report (one measured phase, `phase`).
fn agree_with_report(metrics: &[Metric], report: &Report, phase: &str, percentiles: &[&str]) {
    let types = [
        ("ops", "c"),
        ("errors", "c"),
        ("ops_sec", "g"),
        ("ops_sec_avg", "g"),
        ("bytes_sec", "g"),
        ("bytes_sec_avg", "g"),
        ("latency_ms", "ms"),
        ("latency_avg_ms", "ms"),
        ("connections", "g"),
        ("progress_pct", "g"),
    ];
    for (name, kind) in types {
        let found = values(metrics, name);
        assert!(!found.is_empty(), "no {name}: {metrics:?}");
        assert!(found.iter().all(|m| m.kind == kind), "{name}: {found:?}");
    }
    for p in percentiles {
        let found = values(metrics, &format!("latency_p{p}"));
        assert!(!found.is_empty(), "no latency_p{p}");
        assert!(found.iter().all(|m| m.kind == "g"));
    }
    // Every request of the measured phase counted once, and nothing else.
    let ops: f64 = values(metrics, "ops").iter().map(|m| m.value).sum();
    assert_eq!(ops, report.totals.ops as f64);
    let errors: f64 = values(metrics, "errors").iter().map(|m| m.value).sum();
    assert_eq!(errors, report.totals.errors as f64);
    // One ops_sec a full second of the timeline, its rate, then 0 when the phase ended.
    let timeline = &report.phase(phase).unwrap().timeline;
    let rates: Vec<f64> = timeline
        .iter()
        .filter(|r| !r.partial)
        .map(|r| (r.ops as f64 / r.interval_s).trunc())
        .collect();
    let sent: Vec<f64> = values(metrics, "ops_sec").iter().map(|m| m.value).collect();
    assert_eq!(sent[..sent.len() - 1], rates[..]);
    assert_eq!(sent.last(), Some(&0.0));
    // The last figures: as the report counts them, and the gauges back at 0.
    let last = metrics.len() - 5;
    let ends: Vec<(&str, f64)> = metrics[last..]
        .iter()
        .map(|m| (m.name.as_str(), m.value))
        .collect();
    assert_eq!(
        ends,
        [
            ("ops_sec", 0.0),
            ("ops_sec_avg", 0.0),
            ("bytes_sec", 0.0),
            ("bytes_sec_avg", 0.0),
            ("progress_pct", 0.0)
        ]
    );
    let t = &report.totals;
    let bytes_avg = values(metrics, "bytes_sec_avg");
    let bytes_avg = bytes_avg[bytes_avg.len() - 2].value;
    let expected = (t.bytes_sent + t.bytes_received) as f64 / report.duration_s;
    assert!(
        (bytes_avg / expected - 1.0).abs() < 0.1,
        "bytes_sec_avg {bytes_avg} vs the report's {expected}"
    );
    let (lo, hi) = (t.latency_ms.min, t.latency_ms.max);
    let mut latencies: Vec<f64> = ["latency_ms", "latency_avg_ms"]
        .iter()
        .flat_map(|n| values(metrics, n))
        .map(|m| m.value)
        .collect();
    for p in percentiles {
        latencies.extend(
            values(metrics, &format!("latency_p{p}"))
                .iter()
                .map(|m| m.value),
        );
    }
    for l in latencies {
        // Sent with 3 (timings) or 6 decimals; histogram buckets hold 3 significant digits.
        assert!(
            l >= lo * 0.99 - 0.001 && l <= hi * 1.01 + 0.001,
            "{l} ms outside the report's {lo}..{hi}"
        );
    }
    let progress: Vec<f64> = values(metrics, "progress_pct")
        .iter()
        .map(|m| m.value)
        .collect();
    let running = &progress[..progress.len() - 1];
    assert!(running.windows(2).all(|w| w[0] <= w[1]), "{progress:?}");
    assert!(
        *running.last().unwrap() >= 50.0 && *running.last().unwrap() <= 100.0,
        "{progress:?}"
    );
}

#[test]
fn a_spec_sends_the_measured_phases_metrics_and_posts_events_to_graphite() {
    let server = Server::start(&[]);
    let (socket, port) = statsd();
    let (graphite_port, events) = graphite(2);
    let w = workload(json!({
        "target": { "url": server.url() },
        "observe": { "info": false, "statsd": {
            "host": "127.0.0.1", "port": port, "prefix": "rl.bench", "run_label": "test-1",
            "graphite_port": graphite_port,
        } },
        "phases": [
            { "name": "fill", "measured": false, "load": { "requests": 500, "connections": 1 } },
            { "name": "main", "load": { "duration": "3s", "rate": 1000, "connections": 2, "threads": 1 } },
        ],
    }));
    let report = run(&w).unwrap();
    let metrics = received(&socket, "rl.bench.test-1.");
    // The unmeasured phase sent nothing: the counters add up to the measured requests.
    assert!(report.totals.ops > 2000, "{}", report.totals.ops);
    agree_with_report(&metrics, &report, "main", &["50", "99", "99_9"]);
    assert!(values(&metrics, "connections")
        .iter()
        .all(|m| m.value == 2.0));
    let events = events.join().unwrap();
    assert_eq!(events[0].0, "POST /events/ HTTP/1.1");
    assert_eq!(
        events[0].1,
        json!({ "what": "Benchmark Started", "tags": "memtier,start,run:test-1",
                "data": "threads=1 connections=2 run=2" })
    );
    assert_eq!(
        events[1].1,
        json!({ "what": "Benchmark Completed", "tags": "memtier,end,run:test-1",
                "data": "run=2" })
    );
}

/// A memtier line against `server` for 2 s, sending to StatsD at `port`, with `extra`
/// options: its report (some requests made).
fn memtier_run(server: &Server, port: u16, extra: &str) -> Report {
    let line = format!(
        "memtier_benchmark -s 127.0.0.1 -p {} -t 1 -c 2 --test-time=2 --ratio=1:1 \
         --hide-histogram --statsd-host=127.0.0.1 --statsd-port={port} {extra}",
        server.port
    );
    let m = match parse_line(&line).unwrap() {
        Invocation::Run(m) => m,
        other => panic!("{other:?}"),
    };
    let report = run(&m.workload).unwrap();
    assert!(report.totals.ops > 0);
    report
}

#[test]
fn a_memtier_line_sends_what_memtier_sends() {
    let server = Server::start(&[]);
    let (socket, port) = statsd();
    let (graphite_port, events) = graphite(2);
    let report = memtier_run(
        &server,
        port,
        &format!(
            "--print-percentiles=50,99.99 --statsd-run-label=nightly/run \
             --graphite-port={graphite_port}"
        ),
    );
    // memtier's prefix by default; the label made valid as memtier makes it.
    let metrics = received(&socket, "memtier.nightly_run.");
    agree_with_report(&metrics, &report, "run 1", &["50", "99_99"]);
    assert!(values(&metrics, "latency_p99").is_empty());
    let events = events.join().unwrap();
    assert_eq!(events[0].1["what"], "Benchmark Started");
    assert_eq!(events[0].1["tags"], "memtier,start,run:nightly_run");
    assert_eq!(events[1].1["what"], "Benchmark Completed");
}

#[test]
fn a_memtier_statsd_prefix_heads_every_metric() {
    let server = Server::start(&[]);
    let (socket, port) = statsd();
    let report = memtier_run(
        &server,
        port,
        "--print-percentiles=50,99 --statsd-prefix=bench.redis --statsd-run-label=r1",
    );
    // `received` fails on a datagram without the prefix.
    let metrics = received(&socket, "bench.redis.r1.");
    agree_with_report(&metrics, &report, "run 1", &["50", "99"]);
}

#[test]
fn bad_settings_are_errors_naming_the_field_before_any_traffic() {
    let server = Server::start(&[]);
    let cases = [
        (json!({ "host": "" }), "observe.statsd.host", "empty host"),
        (
            json!({ "host": "127.0.0.1", "port": 0 }),
            "observe.statsd.port",
            "1 to 65535",
        ),
        (
            json!({ "host": "127.0.0.1", "prefix": "a b" }),
            "observe.statsd.prefix",
            "`a b` holds ` `",
        ),
        (
            json!({ "host": "127.0.0.1", "run_label": "x.y" }),
            "observe.statsd.run_label",
            "letters, digits, `_` and `-`",
        ),
        (
            json!({ "host": "127.0.0.1", "percentiles": [50, 101] }),
            "observe.statsd.percentiles[1]",
            "101 is not a percentile",
        ),
        (
            json!({ "host": "127.0.0.1", "graphite_port": 0 }),
            "observe.statsd.graphite_port",
            "0 is not a port",
        ),
        (
            json!({ "host": "127.0.0.1", "colour": "red" }),
            "observe.statsd",
            "colour",
        ),
    ];
    for (statsd, field, says) in cases {
        let err = respload::Workload::from_json_value(json!({
            "target": { "url": server.url() },
            "observe": { "statsd": statsd },
        }))
        .unwrap_err()
        .to_string();
        assert!(err.contains(field) && err.contains(says), "{statsd}: {err}");
    }
    // Phases that name two StatsD servers.
    let err = respload::Workload::from_json_value(json!({
        "target": { "url": server.url() },
        "phases": [
            { "observe": { "statsd": { "host": "127.0.0.1" } } },
            { "observe": { "statsd": { "host": "127.0.0.1", "port": 9125 } } },
        ],
    }))
    .unwrap_err()
    .to_string();
    assert!(err.contains("phases[1].observe.statsd"), "{err}");
    // A host that does not resolve: found before any request.
    let w = workload(json!({
        "target": { "url": server.url() },
        "load": { "requests": 100 },
        "observe": { "statsd": { "host": "no-such-host.invalid" } },
    }));
    let err = run(&w).unwrap_err().to_string();
    assert!(
        err.contains("observe.statsd.host") && err.contains("no-such-host.invalid"),
        "{err}"
    );
    assert_eq!(server.calls("set") + server.calls("get"), 0);
    // memtier's options.
    for (line, option, says) in [
        (
            "--statsd-host=127.0.0.1 --statsd-port=0",
            "--statsd-port",
            "1 to 65535",
        ),
        (
            "--statsd-host=127.0.0.1 --statsd-port=70000",
            "--statsd-port",
            "1 to 65535",
        ),
        (
            "--statsd-host=127.0.0.1 --graphite-port=x",
            "--graphite-port",
            "`x`",
        ),
        ("--statsd-host=", "--statsd-host", "host name"),
    ] {
        let err = parse_line(&format!("memtier_benchmark {line}"))
            .unwrap_err()
            .to_string();
        assert!(err.contains(option) && err.contains(says), "{line}: {err}");
    }
}
