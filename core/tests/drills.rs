//! Fault drills against real servers: a standalone redis-server, a primary with a replica,
//! and a 6-node cluster. Each drill runs at its time while the load goes on, and the report
//! gives its figures.

mod common;

use common::{primary_and_replica, workload, Cluster, Server};
use respload::report::EventReport;
use respload::run;
use serde_json::json;
use std::time::{Duration, Instant};

// One test at a time (`common::one_at_a_time`): the drills' timings (a 500 ms pause, a
// failover) on two shared cores.

fn show(e: &EventReport) -> String {
    serde_json::to_string(e).unwrap()
}

#[test]
fn bgsave_and_bgrewriteaof_report_their_fork_time() {
    let _one = common::one_at_a_time();
    let server = Server::start(&[]);
    let report = run(&workload(json!({
        "target": { "url": server.url() },
        "load": { "connections": 4, "threads": 1 },
        "keys": { "range": [0, 19999] },
        "values": { "size": 100 },
        "phases": [
            { "name": "fill", "measured": false, "commands": [{ "name": "set" }],
              "keys": { "distribution": "sequential" },
              "load": { "requests": 20000, "pipeline": 16 } },
            { "name": "drills", "load": { "duration": "4s" },
              "events": [{ "at": "1s", "drill": "bgsave" },
                         { "at": "2500ms", "drill": "bgrewriteaof" }] },
        ],
    })))
    .unwrap();
    assert!(report.phases[0].events.is_empty());
    let events = &report.phases[1].events;
    assert_eq!(events.len(), 2);
    for (e, name) in events.iter().zip(["bgsave", "bgrewriteaof"]) {
        assert_eq!(e.drill, name);
        assert_eq!(e.error, None, "{}", show(e));
        assert!(e.fork_usec.unwrap_or(0) > 0, "{}", show(e));
        let (start, end) = (e.started_s.unwrap(), e.finished_s.unwrap());
        assert!(start >= e.at_s && start < e.at_s + 0.5, "{}", show(e));
        assert!(end > start && end < 4.0, "{}", show(e));
        assert!((e.recovery_s.unwrap() - (end - start)).abs() < 1e-9);
        assert_eq!(e.node, format!("127.0.0.1:{}", server.port));
        // The load went on around the fork, and had a level before it.
        assert!(e.ops_during.unwrap() > 0, "{}", show(e));
        assert_eq!(e.errors_during, Some(0));
        assert!(e.p99_before_ms.unwrap() > 0.0 && e.p99_during_ms.unwrap() > 0.0);
        assert!(e.throughput_before.unwrap() > 100.0, "{}", show(e));
        assert!(e.sync_s.is_none() && e.full_sync.is_none() && e.mode.is_none());
    }
    // The fork time is the server's own: the rewrite forked last.
    assert_eq!(
        events[1].fork_usec.unwrap().to_string(),
        server.info("latest_fork_usec")
    );
    assert_eq!(server.info("rdb_last_bgsave_status"), "ok");
    assert_eq!(server.info("aof_last_bgrewrite_status"), "ok");
    assert!(server.dir.join("dump.rdb").exists());
    assert!(server.calls("bgsave") == 1 && server.calls("bgrewriteaof") == 1);
    // The text report has a line per drill.
    let text = respload::output::table(&report);
    let block = &text[text.find("EVENTS").expect("an EVENTS block")..];
    assert!(
        block.contains("bgsave") && block.contains("bgrewriteaof"),
        "{text}"
    );
    assert!(
        block.contains(&format!("fork {} us", events[0].fork_usec.unwrap())),
        "{text}"
    );
    assert!(
        block.contains("Longest stretch without a successful reply"),
        "{text}"
    );
    // Valid JSON, no NaN: nulls for what does not apply.
    let text = report.to_json();
    let back: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert!(back["phases"][1]["events"][0]["sync_s"].is_null());
    assert!(back["phases"][1]["availability"]["longest_gap_ms"].is_number());
}

#[test]
fn a_rewrite_already_running_is_waited_out_and_the_drill_forks_its_own() {
    let _one = common::one_at_a_time();
    let server = Server::start(&["--enable-debug-command", "local"]);
    // 2,000 keys at 0.5 ms each: the server's own rewrite takes about a second.
    assert_eq!(server.cli(&["DEBUG", "POPULATE", "2000"]), "OK");
    server.cli(&["CONFIG", "SET", "rdb-key-save-delay", "500"]);
    assert!(server.cli(&["BGREWRITEAOF"]).contains("started"));
    let report = run(&workload(json!({
        "target": { "url": server.url() },
        "load": { "connections": 2, "threads": 1, "duration": "4s" },
        "keys": { "range": [0, 99] },
        "commands": [{ "name": "get" }],
        "events": [{ "at": "200ms", "drill": "bgrewriteaof" }],
    })))
    .unwrap();
    let e = &report.phases[0].events[0];
    assert_eq!(e.error, None, "{}", show(e));
    // Started once the server's rewrite had ended, and forked again.
    let (start, end) = (e.started_s.unwrap(), e.finished_s.unwrap());
    assert!(start > 0.5 && end > start, "{}", show(e));
    assert!(e.fork_usec.unwrap_or(0) > 0, "{}", show(e));
    assert_eq!(
        server.calls("bgrewriteaof"),
        3,
        "ours, the refused one, the retry"
    );
    assert_eq!(server.info("aof_rewrites"), "2");
    assert_eq!(server.info("aof_last_bgrewrite_status"), "ok");
}

#[test]
fn a_pause_shows_as_a_gap_and_in_the_p99_during_it() {
    let _one = common::one_at_a_time();
    let server = Server::start(&[]);
    // Open loop: every request due during the pause waits for it, and its latency says so.
    let report = run(&workload(json!({
        "target": { "url": server.url() },
        "load": { "connections": 4, "threads": 1, "rate": 2000, "duration": "4s" },
        "keys": { "range": [0, 999] },
        "events": [{ "at": "1500ms", "drill": "pause", "duration": "500ms" }],
    })))
    .unwrap();
    assert_eq!(server.calls("client|pause"), 1);
    let p = &report.phases[0];
    let e = &p.events[0];
    assert_eq!(
        (e.drill.as_str(), e.mode.as_deref()),
        ("pause", Some("client-pause"))
    );
    assert_eq!(e.error, None, "{}", show(e));
    let recovery = e.recovery_s.unwrap();
    assert!((0.45..1.5).contains(&recovery), "{}", show(e));
    let figure = |v: Option<f64>| v.unwrap_or_else(|| panic!("{}", show(e)));
    let (before, during) = (figure(e.p99_before_ms), figure(e.p99_during_ms));
    // The requests due when the pause began waited all of it; before, p99 was a few ms
    // (tens on a busy machine: open loop shows the client's own stalls too).
    assert!(during > 400.0 && during > 4.0 * before, "{}", show(e));
    assert_eq!(e.errors_during, Some(0));
    assert!(e.longest_gap_ms.unwrap() >= 400.0, "{}", show(e));
    // Throughput came back (open loop: the backlog is sent at once after the pause).
    assert!(e.recovered_after_s.is_some(), "{}", show(e));
    // No successful reply for the length of the pause, about when it happened.
    let a = &p.availability;
    assert!((400.0..1500.0).contains(&a.longest_gap_ms), "{a:?}");
    assert!((1.3..2.1).contains(&a.longest_gap_at_s), "{a:?}");
    assert_eq!(report.availability, p.availability);
    // Without drills, the longest gap is short.
    let calm = run(&workload(json!({
        "target": { "url": server.url() },
        "load": { "connections": 4, "threads": 1, "rate": 2000, "duration": "2s" },
    })))
    .unwrap();
    assert!(
        calm.availability.longest_gap_ms < 250.0,
        "{:?}",
        calm.availability
    );
    assert!(calm.phases[0].events.is_empty());
    assert!(!calm.to_json().contains("\"events\""));
}

#[test]
fn a_resynced_replica_reports_its_sync_time_and_is_back_in_sync() {
    let _one = common::one_at_a_time();
    let (primary, replica) = primary_and_replica();
    let report = run(&workload(json!({
        "target": { "url": primary.url() },
        "load": { "connections": 4, "threads": 1 },
        "keys": { "range": [0, 9999] },
        "values": { "size": 100 },
        "phases": [
            { "name": "fill", "measured": false, "commands": [{ "name": "set" }],
              "keys": { "distribution": "sequential" },
              "load": { "requests": 10000, "pipeline": 16 } },
            // The replica is found in the primary's INFO replication.
            { "name": "resync", "load": { "duration": "4s" }, "commands": [{ "name": "set" }],
              "events": [{ "at": "1s", "drill": "replica-resync", "duration": "500ms" }] },
        ],
    })))
    .unwrap();
    let e = &report.phases[1].events[0];
    assert_eq!(e.error, None, "{}", show(e));
    assert_eq!(e.replica, Some(format!("127.0.0.1:{}", replica.port)));
    assert_eq!(e.node, format!("127.0.0.1:{}", primary.port));
    let sync = e.sync_s.unwrap();
    assert!(sync > 0.0 && sync < 3.0, "{}", show(e));
    // Detached for 500 ms, then synced.
    assert!(e.recovery_s.unwrap() >= 0.5 + sync - 0.01, "{}", show(e));
    assert!(e.full_sync.is_some(), "{}", show(e));
    assert!(e.ops_during.unwrap() > 0 && e.errors_during == Some(0));
    assert_eq!(replica.calls("replicaof"), 2);
    // The replica is back: linked, and holding what the primary holds.
    assert_eq!(replica.info("role"), "slave");
    assert_eq!(replica.info("master_link_status"), "up");
    let deadline = Instant::now() + Duration::from_secs(5);
    while replica.dbsize() != primary.dbsize() {
        assert!(Instant::now() < deadline, "the replica did not catch up");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(primary.dbsize(), 10000);
}

#[test]
fn a_failover_without_a_replica_is_refused_before_any_traffic() {
    let _one = common::one_at_a_time();
    let server = Server::start(&[]);
    let err = run(&workload(json!({
        "target": { "url": server.url() },
        "load": { "connections": 2, "duration": "2s" },
        "phases": [
            { "name": "fill", "measured": false, "load": { "requests": 100 } },
            { "name": "m", "events": [{ "at": "1s", "drill": "failover" }] },
        ],
    })))
    .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("phases[1].events[0].replica") && text.contains("connected_slaves:0"),
        "{text}"
    );
    assert_eq!(err.code(), "ERR_RESPLOAD_SPEC");
    assert_eq!(server.calls("set") + server.calls("get"), 0);
}

#[test]
fn a_drill_given_a_server_that_is_not_the_targets_replica_is_refused_before_any_traffic() {
    let _one = common::one_at_a_time();
    let target = Server::start(&[]);
    let other = Server::start(&[]);
    let other_port = other.port.to_string();
    let elsewhere = Server::start(&["--replicaof", "127.0.0.1", &other_port]);
    let refused = |drill: &str, replica: String| {
        let err = run(&workload(json!({
            "target": { "url": target.url() },
            "load": { "connections": 2, "duration": "2s" },
            "commands": [{ "name": "set" }],
            "events": [{ "at": "1s", "drill": drill, "replica": replica }],
        })))
        .unwrap_err();
        assert_eq!(err.code(), "ERR_RESPLOAD_SPEC", "{err}");
        let text = err.to_string();
        assert!(text.contains("events[0].replica"), "{text}");
        text
    };
    // A failover would stop the target with nothing to take over.
    let a = |s: &Server| format!("127.0.0.1:{}", s.port);
    let text = refused("failover", a(&other));
    assert!(text.contains("is not a replica (role:master"), "{text}");
    let text = refused("failover", a(&target));
    assert!(text.contains("is the target itself"), "{text}");
    let text = refused("replica-resync", a(&elsewhere));
    assert!(
        text.contains(&format!(
            "replicates 127.0.0.1:{other_port}, not 127.0.0.1:{}",
            target.port
        )),
        "{text}"
    );
    // Nothing was sent, and the target is still up.
    assert_eq!(target.calls("set"), 0);
    assert_eq!(target.cli(&["PING"]).trim(), "PONG");
}

#[test]
fn a_killed_primary_fails_over_with_its_errors_and_recovery_reported() {
    let _one = common::one_at_a_time();
    let cluster = Cluster::start(3, 1);
    let primaries = cluster.primaries();
    let victim = primaries[0].port;
    let replicas: Vec<String> = cluster
        .nodes
        .iter()
        .filter(|s| s.info("master_port") == victim.to_string())
        .map(|s| format!("127.0.0.1:{}", s.port))
        .collect();
    assert_eq!(replicas.len(), 1);
    // Open loop with a request budget: every request issued is accounted for.
    let report = run(&workload(json!({
        "target": { "port": primaries[1].port, "cluster": true },
        "load": { "connections": 2, "threads": 1, "rate": 2000, "requests": 16000,
                  "timeout": "1s" },
        "keys": { "range": [0, 9999] },
        "values": { "size": 8 },
        "commands": [{ "name": "set" }],
        "events": [{ "at": "1s", "drill": "failover", "mode": "kill",
                     "node": format!("127.0.0.1:{victim}") }],
    })))
    .unwrap();
    let t = &report.totals;
    assert_eq!(t.ops, 16000);
    let e = &report.phases[0].events[0];
    assert_eq!(e.error, None, "{}", show(e));
    assert_eq!(e.mode.as_deref(), Some("kill"));
    assert_eq!(e.node, format!("127.0.0.1:{victim}"));
    assert_eq!(e.replica.as_ref(), Some(&replicas[0]), "{}", show(e));
    // Node timeout 2 s: the replica takes over after it.
    let recovery = e.recovery_s.unwrap();
    assert!((1.5..7.0).contains(&recovery), "{}", show(e));
    let during = e.errors_during.unwrap();
    assert!(
        during > 0 && during <= t.errors,
        "{} {:?}",
        show(e),
        t.errors_by_kind
    );
    assert!(e.ops_during.unwrap() >= during);
    assert!(e.throughput_before.unwrap() > 1000.0, "{}", show(e));
    assert!(e.recovered_after_s.is_some(), "{}", show(e));
    // Once the primary is marked failed and until its replica takes over, the whole cluster
    // answers CLUSTERDOWN (full coverage is required): the phase's longest stretch without
    // a success falls within the drill.
    let gap = e.longest_gap_ms.unwrap();
    assert!(gap > 0.0 && gap <= recovery * 1e3, "{}", show(e));
    assert_eq!(report.phases[0].availability.longest_gap_ms, gap);
    // The replica is the primary now.
    let promoted = cluster
        .nodes
        .iter()
        .find(|s| format!("127.0.0.1:{}", s.port) == replicas[0])
        .unwrap();
    assert_eq!(promoted.info("role"), "master");
    // Every request issued is a success or an error, counted once, on some node.
    let by_node: u64 = report.nodes.values().map(|n| n.ops).sum();
    assert_eq!(by_node, t.ops);
    let successes: u64 = report.nodes.values().map(|n| n.ops - n.errors).sum();
    assert_eq!(successes + t.errors, 16000);
}

#[test]
fn a_cluster_failover_promotes_the_replica_of_the_primary_serving_slot_0() {
    let _one = common::one_at_a_time();
    let cluster = Cluster::start(3, 1);
    let report = run(&workload(json!({
        "target": { "port": cluster.port(), "cluster": true },
        "load": { "connections": 2, "threads": 1, "duration": "4s" },
        "keys": { "range": [0, 999] },
        "events": [{ "at": "1s", "drill": "failover" }],
    })))
    .unwrap();
    let e = &report.phases[0].events[0];
    assert_eq!(e.error, None, "{}", show(e));
    assert_eq!(e.mode.as_deref(), Some("cluster-failover"));
    let recovery = e.recovery_s.unwrap();
    assert!(recovery > 0.0 && recovery < 2.5, "{}", show(e));
    // The node acted on served slot 0; its replica serves it now.
    let replica = e.replica.as_ref().unwrap();
    let promoted = cluster
        .nodes
        .iter()
        .find(|s| &format!("127.0.0.1:{}", s.port) == replica)
        .unwrap();
    assert_eq!(promoted.info("role"), "master");
    assert!(promoted.calls("cluster|failover") == 1);
    let nodes = promoted.cli(&["CLUSTER", "NODES"]);
    let me = nodes.lines().find(|l| l.contains("myself")).unwrap();
    assert!(me.contains("master") && me.contains(" 0-"), "{nodes}");
    let old = cluster
        .nodes
        .iter()
        .find(|s| format!("127.0.0.1:{}", s.port) == e.node)
        .unwrap();
    assert_eq!(old.info("role"), "slave");
    // A coordinated failover loses nothing: every request is answered.
    let t = &report.totals;
    assert_eq!(t.errors, 0, "{:?}", t.errors_by_kind);
    assert_eq!(e.errors_during, Some(0));
    assert!(e.ops_during.unwrap() > 0);
}
