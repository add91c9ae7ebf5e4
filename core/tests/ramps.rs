//! Ramps against a real redis-server: a rate staircase sends each step's rate in that step,
//! and a connection staircase opens connections step by step (the server sees them).

mod common;

use common::{one_at_a_time, workload, Server};
use respload::{run, Runner};
use serde_json::json;
use std::time::{Duration, Instant};

/// Timing tests run one at a time, so that they do not disturb each other.
#[test]
fn a_rate_ramp_achieves_each_steps_rate() {
    let _one = one_at_a_time();
    // A stall of the busy test machine near a step boundary moves requests to the next
    // step: a run during which the machine was disturbed is measured again (a fresh server
    // each time; see `common::measured`).
    let common::Measured {
        run: (report, server),
        runs,
        ..
    } = common::measured(|| {
        let server = Server::start(&[]);
        let report = run(&workload(json!({
            "target": { "url": server.url() },
            "load": {
                "connections": 10,
                "rate_ramp": { "start": 500, "end": 2000, "step": 500, "step_duration": "2s" },
            },
            "commands": [{ "name": "set" }, { "name": "get" }],
        })))
        .unwrap();
        let figures = step_rates(&report);
        ((report, server), figures)
    });
    let p = &report.phases[0];
    // No duration given: four steps of two seconds.
    assert!((p.duration_s - 8.0).abs() < 0.3, "{}", p.duration_s);
    assert_eq!(p.target_rate, None);
    let rates: Vec<f64> = p.steps.iter().filter_map(|s| s.target_rate).collect();
    assert_eq!(rates, vec![500.0, 1000.0, 1500.0, 2000.0]);
    for s in &p.steps {
        let want = s.target_rate.unwrap();
        // Requests count in the step they finished in.
        assert!(
            (s.ops_per_sec / want - 1.0).abs() < 0.06,
            "{s:?}; every run: {runs:?}"
        );
        assert_eq!(s.errors, 0);
        assert!(s.latency_ms.p99 > 0.0 && s.service_ms.is_some());
    }
    // Every timeline row carries its step's rate.
    for (i, row) in p.timeline.iter().take(8).enumerate() {
        let want = 500.0 * (i / 2 + 1) as f64;
        assert_eq!(row.target_rate, Some(want), "{row:?}");
    }
    let text = respload::output::table(&report);
    assert!(
        text.contains("Rate asked") && text.contains("2000.0"),
        "{text}"
    );
    // The server saw 2 s x (500 + 1000 + 1500 + 2000) requests.
    let sent = server.calls("set") + server.calls("get");
    assert!((sent as f64 / 10_000.0 - 1.0).abs() < 0.03, "{sent}");
    assert_eq!(sent, report.totals.ops);
}

#[test]
fn a_poisson_rate_ramp_keeps_each_steps_mean_rate() {
    let _one = one_at_a_time();
    // Measured again when the machine was disturbed (see `common::measured`).
    let common::Measured {
        run: report, runs, ..
    } = common::measured(|| {
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
        let figures = step_rates(&report);
        (report, figures)
    });
    let steps = &report.phases[0].steps;
    assert_eq!(steps.len(), 2);
    for (s, want) in steps.iter().zip([2000.0, 1000.0]) {
        assert_eq!(s.target_rate, Some(want));
        // 2,000 to 4,000 Poisson arrivals per step: within 8%.
        assert!(
            (s.ops_per_sec / want - 1.0).abs() < 0.08,
            "{s:?}; every run: {runs:?}"
        );
    }
}

/// The steps' rates achieved and asked for, for the messages.
fn step_rates(report: &respload::Report) -> String {
    let figures: Vec<String> = report.phases[0]
        .steps
        .iter()
        .map(|s| format!("{:.0}/{:.0}", s.ops_per_sec, s.target_rate.unwrap_or(0.0)))
        .collect();
    format!("step rates achieved/asked {figures:?}")
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
    let _one = one_at_a_time();
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
    let _one = one_at_a_time();
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

#[test]
fn a_spent_request_budget_ends_the_run_without_waiting_for_the_ramp() {
    let _one = one_at_a_time();
    let server = Server::start(&[]);
    let started = Instant::now();
    let report = run(&workload(json!({
        "target": { "url": server.url() },
        "load": {
            "connections": 4,
            "requests": 2000,
            "connections_ramp": { "start": 2, "step": 1, "step_duration": "30s" },
        },
        "observe": { "info": false },
        "commands": [{ "name": "set" }],
    })))
    .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(report.totals.ops, 2000);
    assert_eq!(server.calls("set"), 2000);
    assert!(report.timeline.iter().all(|r| r.connections <= 2));
}
