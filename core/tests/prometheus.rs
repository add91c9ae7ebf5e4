//! The Prometheus endpoint (issue 28 item 5), against a real redis-server: scraped while a
//! run goes on, its counters grow, a finished phase's counts and latency histogram equal the
//! phase's report, and a bad or taken address is an error before any traffic.

mod common;

use common::{free_port, workload, Server};
use respload::{Runner, Workload};
use serde_json::json;
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// The body of `GET path` on `port`, and the status line.
fn get(port: u16, path: &str) -> (String, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(s, "GET {path} HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    (head.lines().next().unwrap().to_string(), body.to_string())
}

/// Each sample line: `name{labels}` to its value.
fn samples(body: &str) -> BTreeMap<String, f64> {
    body.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let (name, value) = l.rsplit_once(' ').unwrap();
            (name.to_string(), value.parse().unwrap())
        })
        .collect()
}

#[test]
fn scraped_during_a_run_the_counts_grow_and_a_finished_phase_matches_its_report() {
    let server = Server::start(&[]);
    let port = free_port();
    let runner = Runner::start(workload(json!({
        "target": { "url": server.url() },
        "observe": { "info": false, "prometheus": format!("127.0.0.1:{port}") },
        "phases": [
            { "name": "first", "load": { "requests": 3000, "connections": 2 } },
            { "name": "second", "load": { "duration": "3s", "rate": 2000, "connections": 2 } },
        ],
    })))
    .unwrap();
    let mut scrapes = Vec::new();
    while !runner.is_finished() {
        if let Some(s) = runner.next_snapshot(Duration::from_millis(100)) {
            // Seconds 1 and 2 of the 3 s phase: the run, and the endpoint, go on.
            if s.phase == "second" && s.row.t < 2.5 {
                scrapes.push(samples(&get(port, "/metrics").1));
            }
        }
    }
    let report = runner.wait().unwrap();
    assert!(scrapes.len() >= 2, "{} scrapes", scrapes.len());
    let first = report.phase("first").unwrap();
    let key = |metric: &str, phase: &str, command: &str| {
        format!("{metric}{{phase=\"{phase}\",measured=\"true\",command=\"{command}\"}}")
    };
    for scrape in &scrapes {
        // The first phase had ended: its counts are final, and the report's.
        for (label, stats) in &first.commands {
            assert_eq!(
                scrape[&key("respload_requests_total", "first", label)],
                stats.ops as f64
            );
            let count = key("respload_latency_seconds_count", "first", label);
            assert_eq!(scrape[&count], stats.ops as f64);
            let inf = format!(
                "respload_latency_seconds_bucket{{phase=\"first\",measured=\"true\",\
                 command=\"{label}\",le=\"+Inf\"}}"
            );
            assert_eq!(scrape[&inf], stats.ops as f64);
            // Buckets are cumulative; the mean is the report's.
            let buckets: Vec<f64> = scrape
                .iter()
                .filter(|(k, _)| {
                    k.starts_with("respload_latency_seconds_bucket{phase=\"first\"")
                        && k.contains(&format!("command=\"{label}\""))
                })
                .map(|(_, v)| *v)
                .collect();
            assert_eq!(buckets.len(), respload::internals::BUCKETS_S.len() + 1);
            let sum = scrape[&key("respload_latency_seconds_sum", "first", label)];
            let mean_ms = sum / stats.ops as f64 * 1e3;
            assert!(
                (mean_ms - stats.latency_ms.mean).abs() < 1e-6 * stats.latency_ms.mean.max(1.0),
                "{mean_ms} vs {}",
                stats.latency_ms.mean
            );
        }
        assert_eq!(
            scrape[&key("respload_errors_total", "first", "GET")],
            first.commands["GET"].errors as f64
        );
    }
    // The running phase's counts grow from scrape to scrape, up to its report's: each scrape
    // follows a snapshot, and a snapshot is sent once its second is published, so the first
    // scrape already counts the phase's first second. (Two scrapes can find the same
    // second when this thread is held up for a second between them, so from one scrape to
    // the next the counts only never fall.)
    let second = |s: &BTreeMap<String, f64>| s[&key("respload_requests_total", "second", "GET")];
    let seen: Vec<f64> = scrapes.iter().map(second).collect();
    assert!(seen[0] > 0.0, "{seen:?}");
    assert!(seen.windows(2).all(|w| w[0] <= w[1]), "{seen:?}");
    let final_get = report.phase("second").unwrap().commands["GET"].ops as f64;
    assert!(
        seen[0] < final_get && *seen.last().unwrap() <= final_get,
        "{seen:?} vs {final_get}"
    );
    // The endpoint closed with the run.
    assert!(TcpStream::connect(("127.0.0.1", port)).is_err());
}

#[test]
fn other_paths_are_404_and_a_bad_or_taken_address_fails_before_traffic() {
    let server = Server::start(&[]);
    let err = |spec: serde_json::Value| Workload::from_json_value(spec).unwrap_err().to_string();
    assert_eq!(
        err(json!({ "observe": { "prometheus": "9464" } })),
        "invalid spec at `observe.prometheus`: `9464` is not HOST:PORT: give e.g. \
         \"127.0.0.1:9464\""
    );
    assert!(err(json!({ "phases": [
        { "observe": { "prometheus": "127.0.0.1:9464" } },
        { "observe": { "prometheus": "127.0.0.1:9465" } },
    ] }))
    .starts_with(
        "invalid spec at `phases[1].observe.prometheus`: `127.0.0.1:9465` differs from \
         `127.0.0.1:9464` at `phases[0].observe.prometheus`"
    ));
    // A port already taken: an error naming the field, and no request sent.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let w = workload(json!({
        "target": { "url": server.url() },
        "load": { "requests": 100 },
        "observe": { "prometheus": format!("127.0.0.1:{port}") },
    }));
    let e = respload::run(&w).unwrap_err().to_string();
    assert!(
        e.starts_with(&format!(
            "invalid spec at `observe.prometheus`: cannot listen on `127.0.0.1:{port}`"
        )),
        "{e}"
    );
    assert_eq!(server.calls("get") + server.calls("set"), 0);
    drop(taken);
    // While a run goes on, a path other than /metrics is 404.
    let port = free_port();
    let runner = Runner::start(workload(json!({
        "target": { "url": server.url() },
        "load": { "duration": "2s", "rate": 100, "connections": 1 },
        "observe": { "info": false, "prometheus": format!("127.0.0.1:{port}") },
    })))
    .unwrap();
    let _ = runner.next_snapshot(Duration::from_secs(3));
    let (status, body) = get(port, "/other");
    assert_eq!(status, "HTTP/1.1 404 Not Found");
    assert_eq!(body, "respload serves GET /metrics\n");
    let (status, body) = get(port, "/metrics");
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert!(
        body.contains("# TYPE respload_latency_seconds histogram"),
        "{body}"
    );
    runner.wait().unwrap();
}

#[test]
fn the_command_line_serves_the_endpoint_given_with_prometheus() {
    let server = Server::start(&[]);
    let port = free_port();
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_respload"))
        .args([
            "run",
            "--url",
            &server.url(),
            "--duration",
            "3s",
            "-R",
            "1000",
            "-c",
            "2",
            "-q",
        ])
        .args(["--prometheus", &format!("127.0.0.1:{port}")])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Scrape once the run has sent some: the counter of the run's GETs grows.
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let mut seen = Vec::new();
    while std::time::Instant::now() < deadline && seen.len() < 2 {
        std::thread::sleep(Duration::from_millis(700));
        if let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) {
            let _ = write!(s, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
            let mut text = String::new();
            let _ = s.read_to_string(&mut text);
            if let Some((_, body)) = text.split_once("\r\n\r\n") {
                let total: f64 = samples(body)
                    .iter()
                    .filter(|(k, _)| {
                        k.starts_with("respload_requests_total{") && k.contains("command=\"GET\"")
                    })
                    .map(|(_, v)| v)
                    .sum();
                if total > 0.0 {
                    seen.push(total);
                }
            }
        }
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(
        seen.len() >= 2 && seen[1] > seen[0],
        "GETs scraped: {seen:?}"
    );
    // The endpoint lasts as long as the run: once it is over, nothing listens.
    assert!(TcpStream::connect(("127.0.0.1", port)).is_err());
    assert!(server.calls("get") as f64 >= seen[1]);
}
