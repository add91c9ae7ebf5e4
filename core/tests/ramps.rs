//! Ramps against a real redis-server: a rate staircase sends each step's rate in that step,
//! and a connection staircase opens connections step by step (the server sees them).

mod common;

use common::{workload, Server};
use respload::{run, Runner};
use serde_json::json;
use std::time::{Duration, Instant};

#[test]
fn a_rate_ramp_achieves_each_steps_rate() {
    let server = Server::start(&[]);
    let report = run(&workload(json!({
        "target": { "url": server.url() },
        "load": {
            "connections": 10,
            "rate_ramp": { "start": 500, "end": 2000, "step": 500, "step_duration": "1s" },
        },
        "commands": [{ "name": "set" }, { "name": "get" }],
    })))
    .unwrap();
    let p = &report.phases[0];
    // No duration given: four steps of one second.
    assert!((p.duration_s - 4.0).abs() < 0.2, "{}", p.duration_s);
    assert_eq!(p.target_rate, None);
    let rates: Vec<f64> = p.steps.iter().filter_map(|s| s.target_rate).collect();
    assert_eq!(rates, vec![500.0, 1000.0, 1500.0, 2000.0]);
    for s in &p.steps {
        let want = s.target_rate.unwrap();
        assert!((s.ops_per_sec / want - 1.0).abs() < 0.05, "{s:?}");
        assert_eq!(s.errors, 0);
        assert!(s.latency_ms.p99 > 0.0 && s.service_ms.is_some());
    }
    // Every full timeline row carries its step's rate, and ran at it.
    for (i, row) in p.timeline.iter().take(4).enumerate() {
        let want = 500.0 * (i + 1) as f64;
        assert_eq!(row.target_rate, Some(want), "{row:?}");
        if row.interval_s > 0.99 {
            assert!((row.ops_per_sec / want - 1.0).abs() < 0.05, "{row:?}");
        }
    }
    let text = respload::output::table(&report);
    assert!(
        text.contains("Rate asked") && text.contains("2000.0"),
        "{text}"
    );
    // The server saw 500 + 1000 + 1500 + 2000 requests.
    let sent = server.calls("set") + server.calls("get");
    assert!((sent as f64 / 5000.0 - 1.0).abs() < 0.03, "{sent}");
    assert_eq!(sent, report.totals.ops);
}

#[test]
fn a_poisson_rate_ramp_keeps_each_steps_mean_rate() {
    let server = Server::start(&[]);
    let report = run(&workload(json!({
        "target": { "url": server.url() },
        "load": {
            "connections": 8,
            "arrivals": "poisson",
            "rate_ramp": { "start": 2000, "end": 1000, "step": 1000, "step_duration": "2s" },
        },
        "commands": [{ "name": "get" }],
    })))
    .unwrap();
    let steps = &report.phases[0].steps;
    assert_eq!(steps.len(), 2);
    for (s, want) in steps.iter().zip([2000.0, 1000.0]) {
        assert_eq!(s.target_rate, Some(want));
        // 2,000 to 4,000 Poisson arrivals per step: within 8%.
        assert!((s.ops_per_sec / want - 1.0).abs() < 0.08, "{s:?}");
    }
}

/// `connected_clients` on the server, less the asking redis-cli.
fn connected(server: &Server) -> u64 {
    let info = server.cli(&["INFO", "clients"]);
    info.lines()
        .find_map(|l| l.strip_prefix("connected_clients:"))
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap()
        - 1
}

#[test]
fn a_connection_ramp_opens_connections_step_by_step() {
    let server = Server::start(&[]);
    let runner = Runner::start(workload(json!({
        "target": { "url": server.url() },
        "load": {
            "connections": 12,
            "threads": 2,
            "rate": 1200,
            "duration": "4s",
            "connections_ramp": { "start": 4, "step": 4, "step_duration": "1s" },
        },
        "observe": { "info": false },
        "commands": [{ "name": "get" }],
    })))
    .unwrap();
    // What the server sees, every 100 ms while the run goes on.
    let mut seen = Vec::new();
    let until = Instant::now() + Duration::from_secs(10);
    while !runner.is_finished() && Instant::now() < until {
        seen.push(connected(&server));
        std::thread::sleep(Duration::from_millis(100));
    }
    let report = runner.wait().unwrap();
    let first = |n: u64| seen.iter().position(|&c| c == n);
    let (a, b, c) = (first(4), first(8), first(12));
    assert!(
        a.is_some() && b.is_some() && c.is_some(),
        "server saw {seen:?}"
    );
    assert!(a < b && b < c, "server saw {seen:?}");
    // Each level held for about a second (ten samples): not all opened at once.
    let held = |n: u64| seen.iter().filter(|&&c| c == n).count();
    assert!(held(4) >= 4 && held(8) >= 4, "server saw {seen:?}");
    assert!(seen.iter().all(|&c| c <= 12), "server saw {seen:?}");

    let p = &report.phases[0];
    let conns: Vec<u32> = p.timeline.iter().map(|r| r.connections).collect();
    assert!(conns.windows(2).all(|w| w[0] <= w[1]), "{conns:?}");
    assert!((4..=8).contains(&conns[0]), "{conns:?}");
    assert!(
        conns[1] >= 8 && conns[2] == 12 && conns[3] == 12,
        "{conns:?}"
    );
    let steps: Vec<u32> = p.steps.iter().map(|s| s.connections).collect();
    assert_eq!(steps.len(), 3, "{:?}", p.steps);
    assert!(
        steps[0] <= 8 && steps[1] >= 8 && steps[2] == 12,
        "{steps:?}"
    );
    // The rate is shared per connection: a third, then two thirds, then all of it.
    for (s, want) in p.steps.iter().zip([400.0, 800.0]) {
        assert!((s.ops_per_sec / want - 1.0).abs() < 0.1, "{s:?}");
    }
    let last = &p.steps[2];
    assert!((last.ops_per_sec / 1200.0 - 1.0).abs() < 0.1, "{last:?}");
    assert_eq!(report.totals.errors, 0);
    assert_eq!(report.client.reconnects, 0);
    assert_eq!(server.calls("get"), report.totals.ops);
}

#[test]
fn a_connection_ramp_stopped_early_ends_without_opening_the_rest() {
    let server = Server::start(&[]);
    let runner = Runner::start(workload(json!({
        "target": { "url": server.url() },
        "load": {
            "connections": 6,
            "connections_ramp": { "start": 2, "step": 2, "step_duration": "5s" },
        },
        "observe": { "info": false },
        "commands": [{ "name": "get" }],
    })))
    .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let started = Instant::now();
    let report = runner.stop().unwrap();
    assert!(started.elapsed() < Duration::from_secs(2));
    assert!(report.interrupted);
    assert_eq!(report.timeline[0].connections, 2);
    assert!(report.timeline.iter().all(|r| r.connections == 2));
    assert!(report.totals.ops > 0);
}
