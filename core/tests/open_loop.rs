//! Open loop against a real redis-server: the rate asked for is the rate sent, and a stalled
//! server shows in the latency counted from intended send times.

mod common;

use common::{workload, Server};
use respload::{run, Report};
use serde_json::json;
use std::time::Duration;

#[test]
fn the_achieved_rate_is_within_one_percent_of_the_target() {
    let server = Server::start(&[]);
    let w = workload(json!({
        "target": { "url": server.url() },
        "load": { "connections": 10, "rate": 2000, "duration": "10s" },
        "commands": [{ "name": "set" }, { "name": "get" }],
    }));
    // This VM pauses every thread for 5-50 ms in phases of minutes: a pause stretches the run
    // and empties a second's row. A run during which the machine was disturbed is measured
    // again (see `common::measured`; each run's figures in the failure); a client that does
    // not hold the rate fails.
    let common::Measured {
        run: (achieved, sent, rows),
        runs,
        ..
    } = common::measured(|| {
        server.cli(&["CONFIG", "RESETSTAT"]);
        let report = run(&w).unwrap();
        let p = &report.phases[0];
        assert_eq!(p.target_rate, Some(2000.0));
        assert!(report.totals.service_ms.is_some() && report.totals.service_histogram.is_some());
        assert!(report.timeline[..9].iter().all(|r| r.service_ms.is_some()));
        let achieved = report.totals.ops_per_sec;
        let sent = server.calls("set") + server.calls("get");
        // Every full interval ran at the rate too, not in bursts.
        let rows: Vec<f64> = report.timeline[..9].iter().map(|r| r.ops_per_sec).collect();
        let figures = format!("achieved {achieved:.1}/s, sent {sent}, rows {rows:?}");
        ((achieved, sent, rows), figures)
    });
    assert!((achieved / 2000.0 - 1.0).abs() < 0.01, "{runs:?}");
    assert!((sent as f64 / 20_000.0 - 1.0).abs() < 0.01, "{runs:?}");
    for r in &rows {
        assert!((r / 2000.0 - 1.0).abs() < 0.05, "{runs:?}");
    }
}

#[test]
fn no_request_due_after_the_measured_duration_is_sent() {
    // At 20,000/s, noticing the end at the workers' 20 ms tick would send up to 400 more.
    let server = Server::start(&[]);
    let (rate, connections) = (20_000u64, 20u64);
    let report = run(&workload(json!({
        "target": { "url": server.url() },
        "load": { "connections": connections, "rate": rate, "duration": "1s" },
        "commands": [{ "name": "get" }],
    })))
    .unwrap();
    let unsent = report.unsent.as_ref().map_or(0, |u| u.requests);
    let due = report.totals.ops + unsent;
    // Each connection's schedule is staggered: one request more or less each.
    assert!(
        due.abs_diff(rate) <= connections,
        "ops {} + unsent {unsent}",
        report.totals.ops
    );
    assert_eq!(server.calls("get"), report.totals.ops);
}

/// Run GETs for 4 s with the server asleep for 500 ms after 1.5 s.
fn with_a_stall(server: &Server, load: serde_json::Value) -> Report {
    let port = server.port;
    let staller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(1500));
        let out = std::process::Command::new("redis-cli")
            .args(["-p", &port.to_string(), "DEBUG", "SLEEP", "0.5"])
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "OK");
    });
    let report = run(&workload(json!({
        "target": { "url": server.url() },
        "load": load,
        "commands": [{ "name": "get" }],
    })))
    .unwrap();
    staller.join().unwrap();
    report
}

#[test]
fn a_stall_shows_in_open_loop_latency_but_not_in_service_time_or_closed_loop_percentiles() {
    let server = Server::start(&["--enable-debug-command", "yes"]);
    let open = with_a_stall(
        &server,
        json!({ "connections": 10, "rate": 1000, "duration": "4s" }),
    );
    let (lat, svc) = (
        &open.totals.latency_ms,
        open.totals.service_ms.as_ref().unwrap(),
    );
    // About 500 of 4,000 requests were due during the stall: a tenth of them waited for it.
    assert!(lat.p99 > 250.0, "corrected p99 {} ms", lat.p99);
    assert!(lat.max > 400.0, "{}", lat.max);
    // With one request in flight per connection, only ten requests were written before the
    // stall; the rest were held back until it ended, and service time starts at the write.
    assert!(
        svc.p99 < lat.p99 / 2.0,
        "service p99 {} vs {}",
        svc.p99,
        lat.p99
    );
    assert!(svc.p50 < 50.0, "{}", svc.p50);
    assert!((open.totals.ops_per_sec / 1000.0 - 1.0).abs() < 0.05);
    // The requests held back are counted as waiting to be sent: near the stall's end about
    // 490 were due (10 connections at 100/s each, less the 10 written before it), the
    // oldest for nearly 500 ms. Before the stall, next to none.
    let rows: Vec<_> = open
        .timeline
        .iter()
        .map(|r| (r.t, r.waiting.unwrap(), r.behind_ms.unwrap()))
        .collect();
    let most = rows.iter().map(|r| r.1).max().unwrap();
    let longest = rows.iter().map(|r| r.2).fold(0.0, f64::max);
    assert!((380..=520).contains(&most), "{rows:?}");
    assert!((380.0..=520.0).contains(&longest), "{rows:?}");
    assert_eq!(open.client.waiting_max, Some(most));
    assert_eq!(open.client.behind_ms_max, Some(longest));
    assert!(rows[0].1 < 50 && rows[0].2 < 50.0, "{rows:?}");
    assert!(rows.iter().filter(|r| r.1 >= 50).count() <= 2, "{rows:?}");

    let closed = with_a_stall(&server, json!({ "connections": 10, "duration": "4s" }));
    assert!(closed.totals.service_ms.is_none());
    // A closed loop sends each request when it is made: nothing waits, nothing is counted.
    assert!(closed.timeline.iter().all(|r| r.waiting.is_none()));
    assert_eq!(closed.client.waiting_max, None);
    // The same stall: visible in the maximum, hidden by the percentiles of a closed loop.
    assert!(closed.totals.latency_ms.max > 400.0);
    assert!(
        closed.totals.latency_ms.p99 < 50.0,
        "closed p99 {}",
        closed.totals.latency_ms.p99
    );
}

#[test]
fn connections_waiting_for_their_next_request_end_once_the_requests_are_sent() {
    let server = Server::start(&[]);
    // 2 requests a second over 20 connections: each connection's first request is due at
    // its own point of a 10 s cycle. The first two due send the two requests asked for; the
    // others, asleep until theirs, must end then rather than at their due times.
    let started = std::time::Instant::now();
    let report = run(&workload(json!({
        "target": { "url": server.url() },
        "load": { "connections": 20, "rate": 2, "requests": 2, "threads": 1 },
        "commands": [{ "name": "get" }],
    })))
    .unwrap();
    let took = started.elapsed().as_secs_f64();
    assert!(took < 5.0, "the run took {took:.1} s");
    assert_eq!((report.totals.ops, report.totals.errors), (2, 0));
    assert_eq!(server.calls("get"), 2);
}

/// How many reads the server made (INFO stats `total_reads_processed`) while `f` ran: one
/// per batch of requests that reached it together.
fn server_reads<T>(server: &Server, f: impl FnOnce() -> T) -> (T, u64) {
    let reads = || -> u64 { server.info("total_reads_processed").parse().unwrap() };
    let before = reads();
    let out = f();
    // Less the read of the INFO that asked.
    (out, reads() - before - 1)
}

#[test]
fn requests_due_together_on_a_connection_go_in_one_write() {
    let server = Server::start(&[]);
    // One connection at 5,000/s with room for 16 in flight: with tokio's 1 ms timer (coarse)
    // about 5 requests fall due at each tick and go out in one write, which the server
    // reads at once; paced precisely, each goes out alone, 200 us after the one before.
    let paced = |pacing: &str| {
        let w = workload(json!({
            "target": { "url": server.url() },
            "load": { "connections": 1, "threads": 1, "pipeline": 16, "rate": 5000,
                      "duration": "2s", "pacing": pacing },
            "commands": [{ "name": "get" }],
            "observe": { "info": false },
        }));
        let (report, reads) = server_reads(&server, || run(&w).unwrap());
        let ops = report.totals.ops;
        assert_eq!(report.totals.errors, 0);
        assert!(ops >= 9_000, "{pacing}: {ops} requests");
        (ops, reads)
    };
    let (ops, reads) = paced("coarse");
    assert!(reads * 2 < ops, "coarse: {reads} reads of {ops} requests");
    // The control: the same requests, not due together, are read one by one (but for a
    // pause of the machine, after which the overdue ones go together: measured again when
    // the machine was disturbed, see `common::measured`).
    let common::Measured {
        run: (ops, reads),
        runs,
        ..
    } = common::measured(|| {
        let (ops, reads) = paced("precise");
        ((ops, reads), format!("{reads} reads of {ops} requests"))
    });
    assert!(reads * 10 >= ops * 8, "precise: {runs:?}");
}
