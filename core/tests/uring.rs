//! The io_uring transport (`load.io = "uring"`) against real redis-server processes: exact
//! counts as the server counts them, pipelining, replies larger than its buffers, a killed
//! connection, stopping, Unix sockets, and the specs it refuses.
#![cfg(target_os = "linux")]

mod common;

use common::{run_with_a_kill, stop_after_a_snapshot, workload, Proxy, Server};
use respload::report::Transport;
use respload::run;
use serde_json::{json, Value};
use std::sync::atomic::Ordering;
use std::sync::{Mutex, MutexGuard};

/// Held by each test: they run one at a time, so the rings a test counts are its own.
static ALONE: Mutex<()> = Mutex::new(());

fn alone() -> MutexGuard<'static, ()> {
    ALONE.lock().unwrap_or_else(|e| e.into_inner())
}

/// This process's open io_uring instances.
fn rings() -> usize {
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter(|l| l.to_string_lossy().contains("io_uring"))
        .count()
}

/// `load` with `io = "uring"` added.
fn uring(mut load: Value) -> Value {
    load["io"] = json!("uring");
    load
}

#[test]
fn counts_match_the_servers_commandstats_exactly() {
    let _alone = alone();
    let server = Server::start(&[]);
    let set = run(&workload(json!({
        "target": { "url": server.url() },
        "load": uring(json!({ "connections": 8, "threads": 2, "requests": 20000 })),
        "keys": { "range": [0, 9999], "distribution": "sequential" },
        "values": { "size": 1024 },
        "commands": [{ "name": "set" }],
    })))
    .unwrap();
    assert_eq!((set.totals.ops, set.totals.errors), (20_000, 0));
    assert_eq!(server.calls("set"), 20_000);
    assert_eq!(server.dbsize(), 10_000);
    assert_eq!(server.cli(&["STRLEN", "key:9999"]), "1024");
    // The client section names the transport that ran, the phase's and the run's.
    assert_eq!(set.client.io, Transport::Uring);
    assert_eq!(set.phases[0].client.io, Transport::Uring);
    let json: Value = serde_json::from_str(&set.to_json()).unwrap();
    assert_eq!(json["client"]["io"], "uring");
    // W1's shape: GET of 1 KiB values, 50 in flight on each connection, hits and misses.
    let get = run(&workload(json!({
        "target": { "url": server.url() },
        "load": uring(json!({ "connections": 10, "threads": 2, "pipeline": 50, "requests": 30000 })),
        "keys": { "range": [0, 19999] },
        "commands": [{ "name": "get" }],
    })))
    .unwrap();
    assert_eq!((get.totals.ops, get.totals.errors), (30_000, 0));
    assert_eq!(server.calls("get"), 30_000);
    assert_eq!(get.totals.hits + get.totals.misses, 30_000);
    assert!(get.totals.hits > 10_000 && get.totals.misses > 10_000);
    // Each hit is "$1024\r\n" + 1024 + "\r\n", each miss "$-1\r\n" (RESP2).
    assert_eq!(
        get.totals.bytes_received,
        get.totals.hits * 1033 + get.totals.misses * 5
    );
    assert!(get.commands["GET"].latency_ms.p50 > 0.0);
}

#[test]
fn pipelines_stay_full_and_replies_larger_than_the_buffers_are_whole() {
    let _alone = alone();
    let server = Server::start(&[]);
    let proxy = Proxy::start(server.port);
    let report = run(&workload(json!({
        "target": { "port": proxy.port },
        "load": uring(json!({ "connections": 2, "threads": 1, "pipeline": 16, "requests": 4000 })),
        "commands": [{ "name": "set" }],
    })))
    .unwrap();
    assert_eq!((report.totals.ops, report.totals.errors), (4000, 0));
    assert_eq!(proxy.max_inflight.load(Ordering::SeqCst), 16);
    // 100,000-byte replies: more than a receive buffer holds (64 KiB), pipelined.
    let fill = run(&workload(json!({
        "target": { "url": server.url() },
        "load": uring(json!({ "connections": 2, "pipeline": 4, "requests": 20 })),
        "keys": { "prefix": "big:", "range": [0, 19], "distribution": "sequential" },
        "values": { "size": 100000 },
        "commands": [{ "name": "set" }],
    })))
    .unwrap();
    assert_eq!((fill.totals.ops, fill.totals.errors), (20, 0));
    let big = run(&workload(json!({
        "target": { "url": server.url() },
        "load": uring(json!({ "connections": 3, "threads": 2, "pipeline": 4, "requests": 300 })),
        "keys": { "prefix": "big:", "range": [0, 19] },
        "commands": [{ "name": "get" }],
    })))
    .unwrap();
    assert_eq!((big.totals.ops, big.totals.hits), (300, 300));
    assert_eq!(big.totals.bytes_received, 300 * (100_000 + 11));
}

#[test]
fn a_killed_connection_reconnects_and_its_requests_count_as_errors() {
    let _alone = alone();
    let server = Server::start(&[]);
    let report = run_with_a_kill(
        &server,
        json!({
            "target": { "url": server.url(), "client_name": "victim" },
            "load": uring(json!({ "connections": 4, "pipeline": 16, "duration": "3s" })),
            "commands": [{ "name": "set" }],
        }),
    );
    let lost = report.totals.errors_by_kind.get("CONNECTION").copied();
    assert!(lost.unwrap_or(0) >= 1, "{:?}", report.totals.errors_by_kind);
    // Every SET the server ran was answered and counted, or in flight when killed.
    let ok = report.totals.ops - report.totals.errors;
    let calls = server.calls("set");
    assert!(calls >= ok && calls <= report.totals.ops, "{calls} {ok}");
}

#[test]
fn stop_returns_a_partial_report_marked_interrupted() {
    let _alone = alone();
    let server = Server::start(&[]);
    let report = stop_after_a_snapshot(
        json!({
            "target": { "url": server.url() },
            "load": uring(json!({ "connections": 4, "threads": 2, "pipeline": 8, "duration": "60s" })),
            "commands": [{ "name": "get" }],
        }),
        // One ring per worker thread (two here) while it runs, none once it ended.
        || assert_eq!(rings(), 2),
    );
    // The server saw every counted GET (and those cut off in flight: at most 4 x 8).
    let calls = server.calls("get");
    assert!(calls >= report.totals.ops - report.totals.errors);
    assert!(
        calls <= report.totals.ops + 32,
        "{calls} {}",
        report.totals.ops
    );
    assert_eq!(rings(), 0);
}

#[test]
fn fifty_replies_completing_at_once_never_stall_the_ring() {
    let _alone = alone();
    let server = Server::start(&[]);
    // 50 connections on one thread, one GET each, held by the server (CLIENT PAUSE) and then
    // answered together: more completions at once than a DEFER_TASKRUN ring's enter runs
    // (the kernel runs 20 and signals the eventfd again only once its list was empty), and
    // no traffic after them to bring a new signal. Stalled, the run would never end: 60 s is
    // a hang, not a time.
    let paused = server.cli(&["CLIENT", "PAUSE", "1500", "ALL"]);
    assert_eq!(paused, "OK");
    let runner = respload::Runner::start(workload(json!({
        "target": { "url": server.url() },
        "load": uring(json!({ "connections": 50, "threads": 1, "requests": 50 })),
        "commands": [{ "name": "get" }],
    })))
    .unwrap();
    let started = std::time::Instant::now();
    while !runner.is_finished() && started.elapsed() < std::time::Duration::from_secs(60) {
        // Taken as they come: a run is finished once its snapshots are.
        runner.next_snapshot(std::time::Duration::from_millis(200));
    }
    let finished = runner.is_finished();
    let report = runner.stop().unwrap();
    assert!(finished, "stalled at {} of 50 requests", report.totals.ops);
    assert_eq!((report.totals.ops, report.totals.errors), (50, 0));
    assert_eq!(server.calls("get"), 50);
}

#[test]
fn unix_sockets_run_through_the_ring() {
    let _alone = alone();
    let server = Server::start(&[]);
    let report = run(&workload(json!({
        "target": { "unix": server.socket() },
        "load": uring(json!({ "connections": 6, "threads": 2, "pipeline": 10, "requests": 12000 })),
        "commands": [{ "template": "INCR counter" }],
    })))
    .unwrap();
    assert_eq!((report.totals.ops, report.totals.errors), (12_000, 0));
    assert_eq!(server.cli(&["GET", "counter"]), "12000");
    assert_eq!(server.calls("incr"), 12_000);
}

#[test]
fn tls_and_unknown_transports_are_refused_naming_load_io() {
    let _alone = alone();
    let err = respload::Workload::from_json_value(json!({
        "target": { "url": "rediss://127.0.0.1:6380" },
        "load": uring(json!({})),
    }))
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("load.io") && err.contains("TLS") && err.contains("\"epoll\""),
        "{err}"
    );
    let err = respload::Workload::from_json_value(json!({ "load": { "io": "iouring" } }))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("load.io") && err.contains("epoll") && err.contains("uring"),
        "{err}"
    );
    // The default is epoll, and a spec saying so is the same spec.
    let w = respload::Workload::from_json_value(json!({ "load": { "io": "epoll" } })).unwrap();
    assert_eq!(w.phases[0].spec.load.io, respload::spec::Io::Epoll);
    let text = w.to_json_value().to_string();
    assert!(!text.contains("\"io\""), "{text}");
}
