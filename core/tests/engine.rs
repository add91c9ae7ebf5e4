//! The runner against real redis-server processes: counts, keys, pipelining, errors,
//! reconnects, stopping.

mod common;

use common::{run_with_a_kill, stop_after_a_snapshot, workload, writes_while_busy, Proxy, Server};
use respload::{run, Error, Runner};
use serde_json::json;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::time::{Duration, Instant};

#[test]
fn sequential_set_fills_every_key_then_get_counts_hits_and_misses() {
    let server = Server::start(&[]);
    let report = run(&workload(json!({
        "target": { "url": server.url() },
        "load": { "connections": 8, "threads": 2, "pipeline": 4, "requests": 10000 },
        "keys": { "range": [0, 9999], "distribution": "sequential" },
        "values": { "size": 100 },
        "commands": [{ "name": "set" }],
    })))
    .unwrap();
    assert_eq!(report.totals.ops, 10_000);
    assert_eq!(report.totals.errors, 0);
    assert_eq!(report.commands["SET"].ops, 10_000);
    assert_eq!(server.dbsize(), 10_000);
    for chunk in (0..10_000).collect::<Vec<u32>>().chunks(2_500) {
        let keys: Vec<String> = chunk.iter().map(|i| format!("key:{i}")).collect();
        let mut args = vec!["EXISTS"];
        args.extend(keys.iter().map(String::as_str));
        assert_eq!(server.cli(&args), chunk.len().to_string());
    }
    for i in [0, 1, 4_999, 9_999] {
        assert_eq!(server.cli(&["STRLEN", &format!("key:{i}")]), "100");
    }

    let gets = |range: [u64; 2]| {
        run(&workload(json!({
            "target": { "url": server.url() },
            "load": { "connections": 4, "requests": 5000 },
            "keys": { "range": range },
            "commands": [{ "name": "get" }],
        })))
        .unwrap()
    };
    let hit = gets([0, 9999]);
    assert_eq!(
        (hit.totals.hits, hit.totals.misses, hit.totals.ops),
        (5000, 0, 5000)
    );
    let miss = gets([20_000, 29_999]);
    assert_eq!(
        (miss.totals.hits, miss.totals.misses, miss.totals.ops),
        (0, 5000, 5000)
    );
    // 100-byte values were read back: each hit reply is "$100\r\n" + 100 + "\r\n".
    assert_eq!(hit.totals.bytes_received, 5000 * 108);
}

#[test]
fn replies_split_over_reads_and_larger_than_the_read_buffers_are_framed_whole() {
    // A connection reads into its worker's shared buffer until a read ends in a partial
    // reply, then into its own: 3,000-byte replies (several per read, pipelined) and
    // 100,000-byte ones (larger than either buffer) must all be framed and counted.
    let server = Server::start(&[]);
    for (size, pipeline) in [(3_000u64, 8), (100_000, 1), (100_000, 4)] {
        let prefix = format!("v{size}:");
        let set = run(&workload(json!({
            "target": { "url": server.url() },
            "load": { "connections": 2, "pipeline": 4, "requests": 50 },
            "keys": { "prefix": prefix, "range": [0, 49], "distribution": "sequential" },
            "values": { "size": size },
            "commands": [{ "name": "set" }],
        })))
        .unwrap();
        assert_eq!((set.totals.ops, set.totals.errors), (50, 0));
        let get = run(&workload(json!({
            "target": { "url": server.url() },
            "load": { "connections": 3, "threads": 2, "pipeline": pipeline, "requests": 600 },
            "keys": { "prefix": prefix, "range": [0, 49] },
            "commands": [{ "name": "get" }],
        })))
        .unwrap();
        let t = &get.totals;
        assert_eq!((t.ops, t.hits, t.errors), (600, 600, 0), "{size}");
        // "$<size>\r\n" + the value + "\r\n"
        let reply = size + size.to_string().len() as u64 + 5;
        assert_eq!(t.bytes_received, 600 * reply, "{size}");
    }
}

#[test]
fn exactly_n_requests_reach_the_server() {
    let server = Server::start(&[]);
    server.cli(&["CONFIG", "RESETSTAT"]);
    let report = run(&workload(json!({
        "target": { "url": server.url() },
        "load": { "connections": 7, "threads": 2, "pipeline": 3, "requests": 12345 },
        "commands": [{ "name": "get", "weight": 2 }, { "name": "incr" }],
    })))
    .unwrap();
    let (gets, incrs) = (server.calls("get"), server.calls("incr"));
    assert_eq!(gets + incrs, 12_345);
    // The suite ran on the transport asked for (`RESPLOAD_TEST_IO`, epoll when unset).
    assert_eq!(report.client.io, common::test_io());
    assert_eq!(report.commands["GET"].ops, gets);
    assert_eq!(report.commands["INCR"].ops, incrs);
    // The 2:1 weights hold: each request's command is drawn on its own, GET with probability
    // 2/3, so the GETs are Binomial(12,345, 2/3): mean 8,230, standard deviation
    // sqrt(n p (1 - p)) = 52.4. Within 5 standard deviations (7,968 to 8,492): a correct mix
    // falls outside once in 1.7 million runs; 1.5:1 (7,407) or 2.7:1 (9,008), which the
    // bound this replaces accepted, fail.
    let (n, p): (f64, f64) = (12_345.0, 2.0 / 3.0);
    let (mean, sd) = (n * p, (n * p * (1.0 - p)).sqrt());
    assert!(
        (gets as f64 - mean).abs() <= 5.0 * sd,
        "{gets} GETs of 12,345, expected {mean:.0} +- {:.0}",
        5.0 * sd
    );
}

#[test]
fn warmup_traffic_is_sent_but_not_counted() {
    let server = Server::start(&[]);
    server.cli(&["CONFIG", "RESETSTAT"]);
    let report = run(&workload(json!({
        "target": { "url": server.url() },
        "load": { "connections": 2, "requests": 3000, "warmup": "500ms" },
        "commands": [{ "name": "ping" }],
    })))
    .unwrap();
    assert_eq!(report.totals.ops, 3000);
    assert!(server.calls("ping") > 3000, "warm-up sent nothing");
}

#[test]
fn pipeline_depth_is_honoured() {
    let server = Server::start(&[]);
    for depth in [1i64, 8] {
        let proxy = Proxy::start(server.port);
        let report = run(&workload(json!({
            "target": { "port": proxy.port },
            "load": { "connections": 1, "pipeline": depth, "requests": 3000 },
            "commands": [{ "name": "set" }],
        })))
        .unwrap();
        assert_eq!(report.totals.ops, 3000);
        assert_eq!(
            proxy.max_inflight.load(std::sync::atomic::Ordering::SeqCst),
            depth
        );
    }
}

#[test]
fn batch_refill_sends_the_next_requests_only_once_every_reply_is_in() {
    let server = Server::start(&[]);
    // Values of 20 kB: a pipeline's 8 replies (160 kB) reach the client in several reads.
    let fill = run(&workload(json!({
        "target": { "port": server.port },
        "load": { "connections": 1, "pipeline": 8, "requests": 100 },
        "keys": { "range": [0, 99], "distribution": "sequential" },
        "values": { "size": 20000 },
        "commands": [{ "name": "set" }],
    })))
    .unwrap();
    assert_eq!((fill.totals.ops, server.dbsize()), (100, 100));
    let busy = writes_while_busy(server.port, [0, 99], |p| json!({ "port": p.port }));
    // Eager: requests follow each read, while the rest of the pipeline is unanswered.
    // Batch: never before the last reply of the batch is in.
    assert!(busy[0] > 10, "eager: {}", busy[0]);
    assert_eq!(busy[1], 0, "batch");
    // Refused where it cannot apply, naming the field.
    let err = respload::Workload::from_json_value(json!({
        "load": { "refill": "batch", "rate": 1000 },
    }))
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("load.refill") && err.contains("closed loop"),
        "{err}"
    );
    let err = respload::Workload::from_json_value(json!({ "load": { "refill": "half" } }))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("load.refill") && err.contains("batch"),
        "{err}"
    );
}

#[test]
fn error_replies_are_counted_by_kind_and_the_run_completes() {
    let server = Server::start(&[]);
    server.cli(&["LPUSH", "alist", "x"]);
    let report = run(&workload(json!({
        "target": { "url": server.url() },
        "load": { "connections": 3, "requests": 900 },
        "commands": [{ "template": "GET alist" }, { "template": "SET okkey {value}" }],
    })))
    .unwrap();
    let get = &report.commands["GET"];
    assert_eq!(get.errors, get.ops);
    assert_eq!(get.errors_by_kind["WRONGTYPE"], get.ops);
    assert_eq!(report.commands["SET"].errors, 0);
    assert_eq!(report.totals.ops, 900);
    assert_eq!(report.totals.errors, get.ops);
    assert!((report.totals.error_rate - get.ops as f64 / 900.0).abs() < 1e-12);
    assert!(!report.interrupted);
}

#[test]
fn killed_connections_reconnect_and_their_requests_count_as_errors() {
    let server = Server::start(&[]);
    let report = run_with_a_kill(
        &server,
        json!({
            "target": { "url": server.url(), "client_name": "victim" },
            "load": { "connections": 4, "pipeline": 16, "duration": "3s" },
            "commands": [{ "name": "set" }],
        }),
    );
    // The timeline shows when: the rows add up to the run's reconnections, and the kill's
    // are in the row of its second (1.2 s in), not in the others.
    let rows: Vec<u64> = report
        .timeline
        .iter()
        .map(|r| r.reconnects.unwrap())
        .collect();
    assert_eq!(
        rows.iter().sum::<u64>(),
        report.client.reconnects,
        "{rows:?}"
    );
    assert!(rows[1] >= 4 && rows[0] == 0, "{rows:?}");
    assert!(
        report
            .totals
            .errors_by_kind
            .get("CONNECTION")
            .copied()
            .unwrap_or(0)
            >= 1
    );
    // Every request is either a success or a counted error.
    let kinds: u64 = report.totals.errors_by_kind.values().sum();
    assert_eq!(kinds, report.totals.errors);
}

#[test]
fn connections_lost_while_the_server_is_down_leave_the_timeline_and_come_back() {
    let server = Server::start(&[]);
    let port = server.port;
    let runner = Runner::start(workload(json!({
        "target": { "port": port },
        "load": { "connections": 3, "threads": 1, "pipeline": 2, "duration": "7s" },
        "commands": [{ "name": "set" }],
    })))
    .unwrap();
    // Down from 1.5 s to about 4 s: the interval (2, 3] lies wholly in the outage.
    std::thread::sleep(Duration::from_millis(1500));
    drop(server);
    std::thread::sleep(Duration::from_millis(2500));
    let server = Server::start_on(port, &[]).expect("the server came back on its port");
    let report = runner.wait().unwrap();
    let rows: Vec<_> = report
        .timeline
        .iter()
        .map(|r| (r.t, r.connections, r.ops, r.errors))
        .collect();
    assert_eq!(report.timeline[0].connections, 3, "{rows:?}");
    let down = report.timeline.iter().find(|r| r.t == 3.0).unwrap();
    assert_eq!((down.connections, down.ops), (0, 0), "{rows:?}");
    // Reconnected (backoff at most 1 s) well before the last second.
    let last = report
        .timeline
        .iter()
        .rfind(|r| r.interval_s > 0.99)
        .unwrap();
    assert!(last.t >= 7.0 && last.connections == 3, "{rows:?}");
    assert!(last.ops > 0 && last.errors == 0, "{rows:?}");
    assert!(report.client.reconnects >= 3, "{:?}", report.client);
    assert!(server.dbsize() > 0);
}

#[test]
fn duration_bounds_the_run_and_the_timeline_has_a_row_per_second() {
    let server = Server::start(&[]);
    let report = run(&workload(json!({
        "target": { "url": server.url() },
        "load": { "connections": 2, "duration": "2s" },
        "commands": [{ "name": "ping" }],
    })))
    .unwrap();
    assert!(
        (2.0..2.5).contains(&report.duration_s),
        "{}",
        report.duration_s
    );
    assert!(
        (2..=3).contains(&report.timeline.len()),
        "{:?}",
        report.timeline.len()
    );
    assert_eq!(report.timeline[0].t, 1.0);
    assert!(report.timeline[0].ops > 0);
    assert_eq!(
        report.timeline.iter().map(|r| r.ops).sum::<u64>(),
        report.totals.ops
    );
    assert_eq!(report.timeline[0].connections, 2);
}

#[test]
fn interval_histograms_reach_the_snapshots_but_stay_in_the_report_only_when_asked() {
    let server = Server::start(&[]);
    let spec = |keep: bool| {
        workload(json!({
            "target": { "url": server.url() },
            "load": { "connections": 2, "duration": "2s" },
            "commands": [{ "name": "ping" }],
            "output": { "interval_histograms": keep },
        }))
    };
    let runner = Runner::start(spec(false)).unwrap();
    let mut seen = Vec::new();
    while !runner.is_finished() {
        if let Some(s) = runner.next_snapshot(Duration::from_millis(200)) {
            seen.push(s);
        }
    }
    let report = runner.wait().unwrap();
    assert_eq!(seen.len(), report.timeline.len());
    for (s, row) in seen.iter().zip(&report.timeline) {
        let h = respload::report::decode_histogram(&s.row.histogram).expect("a histogram");
        assert_eq!(h.len(), s.row.ops);
        assert_eq!(row.ops, s.row.ops);
        assert!(row.histogram.is_empty(), "{}", row.histogram.len());
    }

    let kept = run(&spec(true)).unwrap();
    assert!(kept.timeline.len() >= 2);
    for row in &kept.timeline {
        let h = respload::report::decode_histogram(&row.histogram).expect("a histogram");
        assert_eq!(h.len(), row.ops);
    }
    assert!(kept.timeline[0].ops > 0);
}

#[test]
fn stop_returns_a_partial_report_marked_interrupted() {
    let server = Server::start(&[]);
    stop_after_a_snapshot(
        json!({
            "target": { "url": server.url() },
            "load": { "connections": 4, "duration": "60s" },
            "commands": [{ "name": "get" }],
        }),
        || {},
    );
}

#[test]
fn same_seed_gives_the_same_data_and_another_seed_does_not() {
    let server = Server::start(&["--enable-debug-command", "yes"]);
    let digest = |seed: u64| {
        server.cli(&["FLUSHALL"]);
        run(&workload(json!({
            "target": { "url": server.url() },
            "load": { "connections": 1, "requests": 2000 },
            "keys": { "range": [0, 999] },
            "values": { "size": [10, 50] },
            "commands": [{ "name": "set" }, { "template": "HSET h {rand:1..100} {value}" }],
            "seed": seed,
        })))
        .unwrap();
        server.cli(&["DEBUG", "DIGEST"])
    };
    let a = digest(7);
    assert_eq!(a.len(), 40);
    assert_eq!(a, digest(7));
    assert_ne!(a, digest(8));
}

#[test]
fn an_unreachable_server_fails_fast_with_the_address_and_os_error() {
    let port = common::free_port();
    let started = Instant::now();
    let err = run(&workload(json!({ "target": { "port": port } }))).unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(2));
    let text = err.to_string();
    assert!(matches!(err, Error::Connect { .. }), "{text}");
    assert!(
        text.contains(&format!("127.0.0.1:{port}")) && text.contains("refused"),
        "{text}"
    );
}

#[test]
fn a_later_phases_unreachable_or_refusing_target_fails_before_any_traffic() {
    let server = Server::start(&[]);
    let guarded = Server::start(&["--requirepass", "secret"]);
    let port = common::free_port();
    let spec = |second: serde_json::Value| {
        workload(json!({
            "target": { "port": server.port },
            "load": { "connections": 2, "requests": 500 },
            "keys": { "range": [0, 99], "distribution": "sequential" },
            "commands": [{ "name": "set" }],
            "phases": [{ "name": "first" }, { "name": "second", "target": second }],
        }))
    };
    let err = run(&spec(json!({ "port": port }))).unwrap_err();
    let text = err.to_string();
    assert!(matches!(err, Error::Connect { .. }), "{text}");
    assert!(text.contains(&format!("127.0.0.1:{port}")), "{text}");
    let err = run(&spec(json!({ "port": guarded.port, "password": "wrong" }))).unwrap_err();
    assert!(matches!(err, Error::Auth { .. }), "{err}");
    // The first phase sent nothing.
    assert_eq!(server.dbsize(), 0);
    assert_eq!(server.calls("set"), 0);
    // With the right password both phases run, each on its own server.
    let report = run(&spec(json!({ "port": guarded.port, "password": "secret" }))).unwrap();
    assert_eq!(report.phases.len(), 2);
    // The second phase's server is described in its own report; the first's is the run's.
    assert_eq!(report.server.address, format!("127.0.0.1:{}", server.port));
    assert!(report.phases[0].server.is_none());
    let second = report.phases[1].server.as_ref().unwrap();
    assert_eq!(second.address, format!("127.0.0.1:{}", guarded.port));
    assert_eq!(second.version, report.server.version);
    assert_eq!(second.config["save"], "");
    assert_eq!(server.calls("set"), 500);
    assert_eq!(
        guarded.cli(&["-a", "secret", "--no-auth-warning", "DBSIZE"]),
        "100"
    );
}

#[test]
fn a_phase_whose_server_went_away_ends_the_run_with_the_earlier_phases_report() {
    let server = Server::start(&[]);
    let second = Server::start(&[]);
    let port = second.port;
    let runner = Runner::start(workload(json!({
        "target": { "port": server.port },
        "load": { "connections": 2, "duration": "3s" },
        "keys": { "range": [0, 99] },
        "commands": [{ "name": "set" }],
        "phases": [
            { "name": "first" },
            { "name": "second", "target": { "port": port } },
            { "name": "third" },
        ],
    })))
    .unwrap();
    // The first phase is running (the second server was reached up front): its server
    // goes away before the second phase starts.
    let snapshot = runner.next_snapshot(Duration::from_secs(10)).unwrap();
    assert_eq!(snapshot.phase, "first");
    drop(second);
    let report = runner.wait().unwrap();
    assert!(report.interrupted);
    let error = report.error.as_deref().unwrap();
    assert!(error.starts_with("phase `second` failed: "), "{error}");
    assert!(error.contains(&format!("127.0.0.1:{port}")), "{error}");
    // The first phase's results are all there; the third never ran.
    let names: Vec<&str> = report.phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["first"]);
    assert!(report.totals.ops > 0);
    assert_eq!(report.totals.ops, server.calls("set"));
    assert!(report.duration_s > 2.5, "{}", report.duration_s);
    let back: respload::Report = serde_json::from_str(&report.to_json()).unwrap();
    assert_eq!(back.error, report.error);
}

#[test]
fn the_report_names_the_server_and_round_trips_through_json() {
    let server = Server::start(&["--maxmemory-policy", "allkeys-lru"]);
    let report = run(&workload(json!({
        "target": { "url": server.url() },
        "load": { "connections": 2, "requests": 2000 },
    })))
    .unwrap();
    let version = server.cli(&["INFO", "server"]);
    assert!(version.contains(&format!("redis_version:{}", report.server.version)));
    assert_eq!(report.server.mode, "standalone");
    assert_eq!(report.server.config["maxmemory-policy"], "allkeys-lru");
    assert_eq!(report.server.config["appendonly"], "no");
    let text = report.to_json();
    let back: respload::Report = serde_json::from_str(&text).unwrap();
    assert!(back == report, "the report changed in a JSON round trip");
    let h = respload::report::decode_histogram(&back.totals.histogram).unwrap();
    assert_eq!(h.len(), 2000);
    assert_eq!(
        respload::report::percentile(&h, 0.99) as f64 / 1e6,
        back.totals.latency_ms.p99
    );
    assert_eq!(
        respload::report::percentile(&h, 0.5) as f64 / 1e6,
        back.totals.latency_ms.p50
    );
    assert_eq!(back.schema_version, respload::report::SCHEMA_VERSION);
    // A drawn seed survives JSON in JavaScript (below 2^53).
    assert!(back.seed < 1 << 53);
    assert_eq!(back.workload["load"]["connections"], 2);
}

#[test]
fn every_builtin_command_runs_without_errors_and_reaches_the_server() {
    let server = Server::start(&[]);
    server.cli(&["CONFIG", "RESETSTAT"]);
    let names = respload::spec::BUILTINS;
    let commands: Vec<serde_json::Value> = names.iter().map(|n| json!({ "name": n })).collect();
    let report = run(&workload(json!({
        "target": { "url": server.url() },
        "load": { "connections": 4, "pipeline": 4, "requests": 19_000 },
        "keys": { "range": [0, 999] },
        "values": { "size": 16 },
        "commands": commands,
    })))
    .unwrap();
    assert_eq!(report.totals.ops, 19_000);
    assert_eq!(
        report.totals.errors, 0,
        "{:?}",
        report.totals.errors_by_kind
    );
    for name in names {
        let label = name.to_uppercase();
        let ops = report.commands[&label].ops;
        assert!(ops > 0, "{label} never ran");
        // lrange_100 .. lrange_600 are all LRANGE on the server.
        let server_name = label.split('_').next().unwrap();
        if server_name != "LRANGE" {
            assert_eq!(server.calls(server_name), ops, "{label}");
        }
    }
    let lranges: u64 = names
        .iter()
        .filter(|n| n.starts_with("lrange"))
        .map(|n| report.commands[&n.to_uppercase()].ops)
        .sum();
    assert_eq!(server.calls("lrange"), lranges);
    // HSET only adds: redis-benchmark's hash exists (the pops may empty the list and sets).
    assert_eq!(server.cli(&["TYPE", "myhash"]), "hash");
}

#[test]
fn idle_connections_are_held_for_the_duration_and_send_nothing() {
    let server = Server::start(&[]);
    let started = Instant::now();
    let report = run(&workload(json!({
        "target": { "url": server.url() },
        "load": { "connections": 12, "threads": 2, "idle": true, "duration": "2s" },
        "observe": { "info": false },
    })))
    .unwrap();
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(1900), "{took:?}");
    assert!(took < Duration::from_secs(10), "{took:?}");
    assert_eq!(report.totals.ops, 0);
    assert!(!report.interrupted);
    let timeline = &report.phases[0].timeline;
    assert!(timeline.len() >= 2, "{timeline:?}");
    assert!(timeline.iter().all(|r| r.connections == 12 && r.ops == 0));
    assert_eq!(server.calls("get") + server.calls("set"), 0);
}

#[test]
fn keepalive_off_uses_a_new_connection_per_batch() {
    let server = Server::start(&[]);
    let info = || server.cli(&["INFO", "stats"]);
    let received = |text: String| -> u64 {
        text.lines()
            .find_map(|l| l.strip_prefix("total_connections_received:"))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    let before = received(info());
    let report = run(&workload(json!({
        "target": { "url": server.url() },
        "load": { "connections": 3, "threads": 1, "pipeline": 5, "requests": 300, "keepalive": false },
        "keys": { "range": [0, 299], "distribution": "sequential" },
        "commands": [{ "name": "set" }],
        "observe": { "info": false },
    })))
    .unwrap();
    assert_eq!((report.totals.ops, report.totals.errors), (300, 0));
    assert_eq!(server.dbsize(), 300);
    // 300 requests in batches of 5: 60 connections (the 3 first included); besides: at most
    // 2 reopened ones that found the budget spent, respload's server probes and this INFO
    // call. With keepalive it would be 3.
    let opened = received(info()) - before;
    assert!((60..=66).contains(&opened), "{opened}");
    assert_eq!(report.client.reconnects, 0);
    // Each closed before it was opened again: never more than 3 open at once.
    let most = report.timeline.iter().map(|r| r.connections).max();
    assert_eq!(most, Some(3), "{:?}", report.timeline);
}

/// What a [`misbehaving_proxy`] does with the server's bytes once its time is up.
#[derive(Clone, Copy)]
enum Misbehave {
    /// Pass them on one byte at a time, this long apart.
    Trickle(Duration),
    /// Send a simple string that never ends instead.
    Endless,
    /// Send this reply header instead (a length no server sends), then nothing, the
    /// connection left open: the client must refuse it, not wait for what it declares.
    Declares(&'static [u8]),
}

/// A proxy in front of `upstream` that passes the server's bytes on as they come for `after`
/// on each connection, then misbehaves: replies that keep coming and never end.
fn misbehaving_proxy(upstream: u16, after: Duration, how: Misbehave) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for client in listener.incoming() {
            let Ok(client) = client else { return };
            let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)) else {
                return;
            };
            let (mut from_client, mut to_server) =
                (client.try_clone().unwrap(), server.try_clone().unwrap());
            std::thread::spawn(move || {
                let _ = std::io::copy(&mut from_client, &mut to_server);
                let _ = to_server.shutdown(Shutdown::Both);
            });
            let (mut from_server, mut to_client) = (server, client);
            std::thread::spawn(move || {
                let start = Instant::now();
                let mut buf = [0u8; 65536];
                while let Ok(n @ 1..) = from_server.read(&mut buf) {
                    let sent = match how {
                        _ if start.elapsed() < after => to_client.write_all(&buf[..n]).is_ok(),
                        Misbehave::Trickle(pause) => buf[..n].iter().all(|b| {
                            std::thread::sleep(pause);
                            to_client.write_all(&[*b]).is_ok()
                        }),
                        Misbehave::Endless => {
                            let endless = [b'a'; 65536];
                            let _ = to_client.write_all(b"+");
                            while to_client.write_all(&endless).is_ok() {}
                            false
                        }
                        Misbehave::Declares(header) => {
                            let _ = to_client.write_all(header);
                            // Until the client hangs up (the server then closes too).
                            while from_server.read(&mut buf).is_ok_and(|n| n > 0) {}
                            false
                        }
                    };
                    if !sent {
                        break;
                    }
                }
                let _ = to_client.shutdown(Shutdown::Both);
            });
        }
    });
    port
}

#[test]
fn a_reply_that_trickles_in_without_ending_times_out() {
    let server = Server::start(&[]);
    server.cli(&["SET", "big", &"x".repeat(64)]);
    // After 0.8 s a reply of 71 bytes takes 3.5 s, a byte every 50 ms: no whole reply within
    // the 400 ms timeout, though bytes keep coming.
    let port = misbehaving_proxy(
        server.port,
        Duration::from_millis(800),
        Misbehave::Trickle(Duration::from_millis(50)),
    );
    let report = run(&workload(json!({
        "target": { "port": port, "client_name": "" },
        "load": { "connections": 2, "threads": 1, "duration": "3s", "timeout": "400ms" },
        "commands": [{ "template": "GET big" }],
        "observe": { "info": false },
    })))
    .unwrap();
    let t = &report.totals;
    let timeouts = t.errors_by_kind.get("TIMEOUT").copied().unwrap_or(0);
    assert!(
        timeouts >= 2,
        "{:?} {:?}",
        t.errors_by_kind,
        report.client.reconnects
    );
    assert!(
        t.ops > t.errors,
        "replies before the trickle: {} ops",
        t.ops
    );
}

#[test]
fn a_reconnect_hanging_in_its_handshake_does_not_hold_up_the_end_of_the_run() {
    let server = Server::start(&[]);
    let info = server.cli(&["INFO", "server"]);
    let pid = info
        .lines()
        .find_map(|l| l.strip_prefix("process_id:"))
        .unwrap()
        .trim()
        .to_string();
    let signal = |sig: &str| {
        let ok = std::process::Command::new("kill")
            .args([sig, &pid])
            .status()
            .unwrap();
        assert!(ok.success());
    };
    // Requests time out after 300 ms; the reconnects that follow get a TCP connection (the
    // kernel accepts for a stopped server) and wait for the handshake's reply, for up to 20 s.
    let runner = Runner::start(workload(json!({
        "target": { "port": server.port, "connect_timeout": "20s" },
        "load": { "connections": 4, "threads": 1, "duration": "2s", "timeout": "300ms" },
        "commands": [{ "name": "set" }],
        "observe": { "info": false },
    })))
    .unwrap();
    // Traffic flows (the first interval is in) before the server stops answering.
    assert!(runner.next_snapshot(Duration::from_secs(10)).is_some());
    signal("-STOP");
    let stopped = Instant::now();
    let report = runner.wait();
    let waited = stopped.elapsed();
    signal("-CONT");
    let report = report.unwrap();
    assert!(
        waited < Duration::from_secs(4),
        "the run ended {waited:?} after the stop"
    );
    assert!(
        report.phases[0].duration_s < 3.0,
        "{}",
        report.phases[0].duration_s
    );
    let kinds = &report.totals.errors_by_kind;
    assert!(kinds.get("TIMEOUT").copied().unwrap_or(0) > 0, "{kinds:?}");
}

/// The process's peak resident memory so far, in KiB.
fn peak_rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn a_reply_that_never_ends_is_a_protocol_error_long_before_memory_runs_out() {
    let server = Server::start(&[]);
    let port = misbehaving_proxy(server.port, Duration::from_millis(500), Misbehave::Endless);
    let before = peak_rss_kib();
    let report = run(&workload(json!({
        "target": { "port": port, "client_name": "" },
        "load": { "connections": 2, "threads": 1, "duration": "2s" },
        "commands": [{ "name": "set" }],
        "observe": { "info": false },
    })))
    .unwrap();
    let grown_mib = (peak_rss_kib() - before) / 1024;
    let kinds = &report.totals.errors_by_kind;
    assert!(
        kinds.get("PROTOCOL").copied().unwrap_or(0) >= 2,
        "{kinds:?}"
    );
    // A line is refused at 1 MiB: the buffers stay small (they grew by 2 GiB without the
    // limit; the margin is for other tests of this binary running meanwhile).
    assert!(grown_mib < 600, "peak memory grew by {grown_mib} MiB");
    assert!(
        report.client.reconnects >= 2,
        "{}",
        report.client.reconnects
    );
}

#[test]
fn a_bulk_of_2_62_bytes_or_an_array_of_2_40_is_a_protocol_error_not_an_allocation() {
    let server = Server::start(&[]);
    for header in [&b"$4611686018427387904\r\n"[..], b"*1099511627776\r\n"] {
        let how = Misbehave::Declares(header);
        let port = misbehaving_proxy(server.port, Duration::from_millis(300), how);
        let before = peak_rss_kib();
        let report = run(&workload(json!({
            "target": { "port": port, "client_name": "" },
            "load": { "connections": 2, "threads": 1, "duration": "1s", "timeout": "3s" },
            "commands": [{ "name": "get" }],
            "observe": { "info": false },
        })))
        .unwrap();
        let grown_mib = (peak_rss_kib() - before) / 1024;
        let kinds = &report.totals.errors_by_kind;
        let what = String::from_utf8_lossy(header);
        assert!(
            kinds.get("PROTOCOL").copied().unwrap_or(0) >= 2,
            "{what}: {kinds:?}"
        );
        // Refused at once, not by the 3 s timeout, and nothing the size declared was reserved.
        assert_eq!(kinds.get("TIMEOUT"), None, "{what}: {kinds:?}");
        assert!(
            grown_mib < 600,
            "{what}: peak memory grew by {grown_mib} MiB"
        );
    }
}

#[test]
fn the_short_last_interval_is_marked_partial_and_still_counted() {
    let server = Server::start(&[]);
    let r = run(&workload(json!({
        "target": { "url": server.url() },
        "load": { "connections": 2, "duration": "2s" },
        "observe": { "info": false },
    })))
    .unwrap();
    let rows = &r.timeline;
    assert!(rows.len() >= 2, "{} rows", rows.len());
    // Whole seconds are not partial; the replies after the end (a row of a few ms) are.
    for row in &rows[..rows.len() - 1] {
        assert!(
            !row.partial && row.interval_s > 0.9,
            "t {} {}",
            row.t,
            row.interval_s
        );
    }
    let last = rows.last().unwrap();
    assert_eq!(
        last.partial,
        last.interval_s < 0.5,
        "last {}",
        last.interval_s
    );
    let counted: u64 = rows.iter().map(|row| row.ops).sum();
    assert_eq!(counted, r.totals.ops);
    // Left out of the JSON when false, read back when true (the run's timeline and its
    // phase's both hold the row).
    let text = r.to_json();
    assert_eq!(
        text.matches("\"partial\"").count(),
        2 * usize::from(last.partial)
    );
    let back = respload::Report::from_json_str(&text).unwrap();
    assert_eq!(back.timeline.last().unwrap().partial, last.partial);
}
