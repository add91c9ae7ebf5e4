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
    let report = run(&workload(json!({
        "target": { "url": server.url() },
        "load": { "connections": 8, "duration": "3s" },
        "commands": [{ "name": "set" }, { "name": "get" }],
    })))
    .unwrap();
    saver.join().unwrap();
    let samples = &report.server_timeline;
    assert!(samples.len() >= 3, "{samples:?}");
    // Full intervals: the server counted what the client finished, give or take the
    // requests in flight at the edges and the observer's own INFO.
    for (s, row) in samples.iter().zip(&report.timeline).take(2) {
        assert!((s.t - row.t).abs() < 0.05, "{} vs {}", s.t, row.t);
        assert!(s.cpu_percent > 1.0, "{s:?}");
        assert!(
            (s.ops_per_sec / row.ops_per_sec - 1.0).abs() < 0.25,
            "server {} vs client {}",
            s.ops_per_sec,
            row.ops_per_sec
        );
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
