//! Server observation against a real redis-server: INFO sampled each interval, aligned with
//! the timeline.

mod common;

use common::{workload, Server};
use respload::run;
use serde_json::json;
use std::time::Duration;

#[test]
fn info_sampling_gives_a_server_cpu_series_aligned_with_the_timeline() {
    let server = Server::start(&[]);
    let port = server.port;
    // A fork during the run shows up in latest_fork_usec.
    let saver = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(1200));
        std::process::Command::new("redis-cli")
            .args(["-p", &port.to_string(), "BGSAVE"])
            .output()
            .unwrap();
    });
    // Beside a probe of how late a thread wakes (see `common::watch`).
    let (report, machine) = common::watch(|| {
        run(&workload(json!({
            "target": { "url": server.url() },
            "load": { "connections": 8, "duration": "3s" },
            "commands": [{ "name": "set" }, { "name": "get" }],
        })))
        .unwrap()
    });
    saver.join().unwrap();
    let samples = &report.server_timeline;
    assert!(samples.len() >= 3, "{samples:?}");
    // Full intervals: the server counted what the client finished. The server's count runs
    // from one INFO to the next, the client's over its row: at each edge the two windows are
    // apart by the sample's offset from the row's end, by when, within the INFO's round
    // trip (`info_ms`, from the moment it was due), the server ran it, and by when the
    // worker cut the row: at its first 20 ms tick after the row's end, later by as much as
    // a thread woke late (the probe's longest). The first edge is the reading at the
    // start, whose moment the report does not give: it is held to the 50 ms every reading
    // is held to below (one run read it 5 ms into the load: 462 requests). A closed loop of
    // 8 connections runs at most about twice its mean rate in such a sliver (its mean is
    // the server's capacity, less the fork's pause), so the counts differ by at most twice
    // the edges' share of the interval, plus the 8 requests in flight at each edge and the
    // few commands that are not the load's (INFO, BGSAVE). (Seen: 0.1% to 1.8% apart.)
    let cut = 0.020 + machine.probe_ms[2] / 1000.0;
    let mut edge = 0.05 + cut;
    for (s, row) in samples.iter().zip(&report.timeline).take(2) {
        assert!((s.t - row.t).abs() < 0.05, "{} vs {}", s.t, row.t);
        assert!(s.cpu_percent > 1.0, "{s:?}");
        let end = (s.t - row.t).abs() + s.info_ms / 1000.0 + cut;
        let tolerance = 2.0 * (edge + end) / row.interval_s + 20.0 / row.ops as f64;
        let off = (s.ops_per_sec / row.ops_per_sec - 1.0).abs();
        eprintln!(
            "server {:.0}/s vs client {:.0}/s: {:.2}% apart, tolerance {:.2}%",
            s.ops_per_sec,
            row.ops_per_sec,
            off * 100.0,
            tolerance * 100.0
        );
        assert!(
            off < tolerance,
            "server {} vs client {}: {:.2}% apart, more than {:.2}% ({s:?}, {row:?}; {machine})",
            s.ops_per_sec,
            row.ops_per_sec,
            off * 100.0,
            tolerance * 100.0
        );
        edge = end;
        assert_eq!(s.role, "master");
        assert!(s.connected_clients >= 9, "{s:?}");
        assert!(s.used_memory > 0);
    }
    // Each timeline row carries its interval's server CPU, the top-level rows too: the full
    // intervals their sample's; the last, short one the sample read at the end, unless a
    // starved observer read it late enough to stand for the interval before.
    for (row, s) in report.timeline.iter().zip(samples).take(2) {
        assert_eq!(row.server_cpu_percent, Some(s.cpu_percent), "{row:?}");
    }
    let joined: Vec<f64> = report
        .timeline
        .iter()
        .filter_map(|r| r.server_cpu_percent)
        .collect();
    assert!(joined.len() + 1 >= report.timeline.len(), "{joined:?}");
    assert!(joined
        .iter()
        .all(|c| samples.iter().any(|s| s.cpu_percent == *c)));
    assert_eq!(report.phases[0].timeline, report.timeline);
    assert!(samples.last().unwrap().latest_fork_usec > 0);
    let load = report.server_load.as_ref().unwrap();
    assert!(load.peak_cpu_percent >= load.mean_cpu_percent && load.mean_cpu_percent > 0.0);
    assert_eq!(load.cpu_over_limit, load.peak_cpu_percent > 80.0);
    assert_eq!(load.samples, samples.len() as u64);
    assert_eq!(report.phases[0].server_timeline.len(), samples.len());
    // A single server: no per-node series, no peak node.
    assert!(report.server_nodes.is_empty() && load.peak_node.is_none());

    let quiet = run(&workload(json!({
        "target": { "url": server.url() },
        "load": { "connections": 2, "requests": 100 },
        "observe": { "info": false },
    })))
    .unwrap();
    assert!(quiet.server_timeline.is_empty() && quiet.server_load.is_none());
    assert!(quiet
        .timeline
        .iter()
        .all(|r| r.server_cpu_percent.is_none()));
}

/// A server that answers nothing at the end of a run (CLIENT PAUSE) holds the run's end by
/// the observer's last reading at most (300 ms), not by two sampling intervals (found by the
/// chaos soak: 2 s past the end).
#[test]
fn a_server_paused_at_the_end_holds_the_run_a_moment_only() {
    let server = Server::start(&[]);
    let port = server.port;
    let pauser = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(2000));
        std::process::Command::new("redis-cli")
            .args(["-p", &port.to_string(), "CLIENT", "PAUSE", "6000", "ALL"])
            .output()
            .unwrap();
    });
    let started = std::time::Instant::now();
    let report = run(&workload(json!({
        "target": { "url": server.url() },
        "load": { "connections": 2, "threads": 1, "duration": "4s", "rate": 500,
                  "timeout": "300ms" },
        "commands": [{ "name": "set" }],
    })))
    .unwrap();
    let took = started.elapsed().as_secs_f64();
    pauser.join().unwrap();
    // The run's own end: its first row's wall clock less its `t`, plus the duration.
    let row = &report.timeline[0];
    let end = row.unix_s - row.t + 4.0;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    let past = now - end;
    assert!(
        past < 1.0,
        "returned {past:.3} s past the end (took {took:.1} s)"
    );
    // The paused seconds fail as timeouts; the observer's samples stop at the pause.
    assert!(
        report.totals.errors > 0,
        "{:?}",
        report.totals.errors_by_kind
    );
    assert!(!report.server_timeline.is_empty());
}
