//! Shards against a real redis-server: N hosts running their shares of one workload send,
//! together, exactly the workload (issue 26: budgets summed exactly, every key of a populate
//! written once, the rate offered in total).

mod common;

use common::{workload, Server};
use respload::tools::memtier::{parse_line, Invocation};
use respload::{run, Workload};
use serde_json::json;
use std::process::Command;

#[test]
fn three_shards_send_the_budget_exactly_and_write_every_key_once() {
    let server = Server::start(&[]);
    let spec = |phases: serde_json::Value| {
        workload(json!({
            "target": { "url": server.url() },
            "seed": 5,
            "load": { "connections": 5 },
            "keys": { "prefix": "k:", "range": [1, 1000] },
            "phases": phases,
        }))
    };
    let fill = spec(json!([
        { "name": "fill", "load": { "requests": "all_keys", "pipeline": 8 },
          "keys": { "distribution": "sequential" }, "commands": [{ "name": "set" }] },
    ]));
    let read = spec(json!([
        { "name": "read", "load": { "requests": 1001 }, "commands": [{ "name": "get" }] },
    ]));
    // One host after another here; on hosts they run at once (with the CLI each on its
    // own clock, so a read phase would start before the others have populated).
    let fills: Vec<_> = (0..3)
        .map(|i| run(&fill.shard(i, 3).unwrap()).unwrap())
        .collect();
    // Together they wrote each of the 1,000 keys exactly once.
    assert_eq!(server.dbsize(), 1000);
    assert_eq!(server.calls("set"), 1000);
    let ops: Vec<u64> = fills.iter().map(|r| r.totals.ops).collect();
    assert_eq!(ops, vec![334, 333, 333]);
    let reads: Vec<_> = (0..3)
        .map(|i| run(&read.shard(i, 3).unwrap()).unwrap())
        .collect();
    // 1,001 GETs: 334 + 334 + 333, every one answered with a value.
    assert_eq!(server.calls("get"), 1001);
    let outcomes: Vec<_> = reads
        .iter()
        .map(|r| (r.totals.errors, r.totals.misses, r.totals.hits))
        .collect();
    assert_eq!(outcomes, vec![(0, 0, 334), (0, 0, 334), (0, 0, 333)]);
    // Connections 2 + 2 + 1, seeds distinct and recorded.
    let conns: Vec<u32> = reads.iter().map(|r| r.client.connections).collect();
    assert_eq!(conns, vec![2, 2, 1]);
    assert!(reads[0].seed != reads[1].seed && reads[1].seed != reads[2].seed);
    // Only shard 0 observes the server.
    assert!(reads[0].phases[0].server_load.is_some());
    assert!(reads[1].phases[0].server_load.is_none());
}

/// The workload of a memtier_benchmark command line against `server`.
fn memtier(server: &Server, options: &str) -> Workload {
    let line = format!(
        "memtier_benchmark -s 127.0.0.1 -p {} {options}",
        server.port
    );
    match parse_line(&line).unwrap_or_else(|e| panic!("{line}: {e}")) {
        Invocation::Run(m) => m.workload,
        other => panic!("{line}: {other:?}"),
    }
}

/// Each shard of `w` (of `count`) run at once, one thread each, as hosts would.
fn run_at_once(w: &Workload, count: u32) -> Vec<respload::Report> {
    let handles: Vec<_> = (0..count)
        .map(|i| w.shard(i, count).unwrap())
        .map(|s| std::thread::spawn(move || run(&s).unwrap()))
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

/// `OBJECT FREQ` of `memtier-{k}` for each key of `keys`, through one redis-cli.
fn freqs(server: &Server, keys: std::ops::RangeInclusive<u64>) -> Vec<u64> {
    let commands: Vec<String> = keys.map(|k| format!("OBJECT FREQ memtier-{k}")).collect();
    let replies = server.cli_batch(&commands);
    assert_eq!(replies.len(), commands.len(), "{:?}", replies.last());
    replies
        .iter()
        .map(|l| l.trim().parse().unwrap_or_else(|_| panic!("{l}")))
        .collect()
}

#[test]
fn three_shards_of_memtiers_parallel_pattern_write_and_read_every_key_once() {
    // LFU counters with log factor 0 count every access and never decay: OBJECT FREQ tells
    // how many times each key was read.
    let server = Server::start(common::COUNT_EVERY_READ);
    // The published populate line (P:P: each connection walks its own slice of the keys)
    // at a small scale: 10,007 keys, 14 connections (7 clients on 2 threads), so that
    // neither the keys nor the connections divide by 3.
    let populate = memtier(
        &server,
        "--hide-histogram --key-minimum=100 --key-maximum=10106 -n allkeys -d 32 \
         --key-pattern=P:P --ratio=1:0 -c 7 -t 2",
    );
    assert!(populate.phases[0].parallel_all_keys());
    let ranges: Vec<[u64; 2]> = (0..3)
        .map(|i| populate.shard(i, 3).unwrap().phases[0].spec.keys.range)
        .collect();
    assert_eq!(ranges, vec![[100, 3435], [3436, 6771], [6772, 10106]]);
    let fills = run_at_once(&populate, 3);
    let ops: Vec<(u64, u64, u32)> = fills
        .iter()
        .map(|r| (r.totals.ops, r.totals.errors, r.client.connections))
        .collect();
    assert_eq!(ops, vec![(3336, 0, 5), (3336, 0, 5), (3335, 0, 4)]);
    // As many keys as SETs, and they are the range's: every key written exactly once.
    assert_eq!(server.calls("set"), 10_007);
    assert_eq!(server.dbsize(), 10_007);
    let mut keys: Vec<u64> = server
        .cli(&["--scan"])
        .lines()
        .map(|k| k.strip_prefix("memtier-").unwrap().parse().unwrap())
        .collect();
    keys.sort_unstable();
    assert!(
        keys.len() == 10_007 && keys.iter().zip(100..).all(|(&k, want)| k == want),
        "{} keys, from {:?} to {:?}",
        keys.len(),
        keys.first(),
        keys.last()
    );

    // The hot-set read line (P:P, GETs only) over part of the range, from 3 hosts: every key
    // of that part read exactly once, none outside it.
    let read = memtier(
        &server,
        "--hide-histogram --key-minimum=2000 --key-maximum=7000 -n allkeys \
         --key-pattern=P:P --ratio=0:1 -c 7 -t 2",
    );
    let before = freqs(&server, 100..=10_106);
    let reads = run_at_once(&read, 3);
    let after = freqs(&server, 100..=10_106);
    let got: Vec<(u64, u64, u64)> = reads
        .iter()
        .map(|r| (r.totals.ops, r.totals.hits, r.totals.misses))
        .collect();
    assert_eq!(got, vec![(1667, 1667, 0), (1667, 1667, 0), (1667, 1667, 0)]);
    assert_eq!(server.calls("get"), 5001);
    for (k, (a, b)) in (100..=10_106u64).zip(after.iter().zip(&before)) {
        let want = u64::from((2000..=7000).contains(&k));
        assert_eq!(a - b, want, "memtier-{k} read {} times", a - b);
    }
}

#[test]
fn open_loop_shards_offer_the_workloads_rate_together() {
    let server = Server::start(&[]);
    let w = workload(json!({
        "target": { "url": server.url() },
        "load": { "connections": 6, "rate": 3000, "duration": "2s" },
        "commands": [{ "name": "get" }],
        "observe": { "info": false },
    }));
    // This VM pauses every thread for 5-50 ms in phases of minutes: a pause stretches a run,
    // and its achieved rate (requests over the time they took) falls below the rate offered.
    // A run during which the machine was disturbed is measured again (see
    // `common::measured`); shards that do not offer the rate fail.
    let common::Measured {
        run: (achieved, sent),
        runs,
        ..
    } = common::measured(|| {
        server.cli(&["CONFIG", "RESETSTAT"]);
        let shards: Vec<_> = (0..2).map(|i| w.shard(i, 2).unwrap()).collect();
        // Run at once, as hosts would.
        let handles: Vec<_> = shards
            .into_iter()
            .map(|s| std::thread::spawn(move || run(&s).unwrap()))
            .collect();
        let reports: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
        let rates: Vec<f64> = reports
            .iter()
            .map(|r| r.phases[0].target_rate.unwrap())
            .collect();
        assert_eq!(rates, vec![1500.0, 1500.0]);
        let achieved: f64 = reports.iter().map(|r| r.totals.ops_per_sec).sum();
        let sent = server.calls("get");
        (
            (achieved, sent),
            format!("achieved {achieved:.1}/s, sent {sent}"),
        )
    });
    assert!((achieved / 3000.0 - 1.0).abs() < 0.03, "{runs:?}");
    assert!((sent as f64 / 6000.0 - 1.0).abs() < 0.03, "{runs:?}");
}

#[test]
fn a_connection_ramp_from_three_hosts_opens_the_whole_ramps_connections_at_each_step() {
    let server = Server::start(&[]);
    // 10 connections, 2 at first and 4 more a step: 2, 6, 10; host 2 opens none at first.
    // Steps of two timeline rows: a step counts the fewest connections its rows saw.
    let w = workload(json!({
        "target": { "url": server.url() },
        "load": { "connections": 10, "rate": 2000, "duration": "6s",
                  "connections_ramp": { "start": 2, "step": 4, "step_duration": "2s" } },
        "commands": [{ "name": "get" }],
    }));
    let handles: Vec<_> = (0..3)
        .map(|i| w.shard(i, 3).unwrap())
        .map(|s| std::thread::spawn(move || run(&s).unwrap()))
        .collect();
    let reports: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let steps = |r: &respload::Report| -> Vec<u32> {
        r.phases[0].steps.iter().map(|s| s.connections).collect()
    };
    let hosts: Vec<Vec<u32>> = reports.iter().map(steps).collect();
    assert_eq!(hosts, vec![vec![1, 2, 4], vec![1, 2, 3], vec![0, 2, 3]]);
    let merged = respload::Report::merge(&reports).unwrap();
    assert_eq!(steps(&merged), vec![2, 6, 10]);
    // Every connection sends at 200/s once open: the steps' rates follow the whole ramp.
    let rates: Vec<f64> = merged.phases[0]
        .steps
        .iter()
        .map(|s| s.ops_per_sec)
        .collect();
    for (rate, conns) in rates.iter().zip([2.0, 6.0, 10.0]) {
        assert!((rate / (conns * 200.0) - 1.0).abs() < 0.1, "{rates:?}");
    }
    assert_eq!(merged.totals.ops, server.calls("get"));
}

#[test]
fn the_cli_runs_a_shard_and_names_a_bad_one() {
    let server = Server::start(&[]);
    let dir = std::env::temp_dir().join(format!("respload-shard-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let spec = dir.join("spec.json");
    let body = json!({
        "target": { "url": server.url() },
        "load": { "connections": 4, "requests": 10 },
        "commands": [{ "name": "ping" }],
    });
    std::fs::write(&spec, body.to_string()).unwrap();
    let report = dir.join("report.json");
    let cli = |shard: &str| {
        Command::new(env!("CARGO_BIN_EXE_respload"))
            .args(["run", "-q", "--shard", shard, "--json"])
            .arg(&report)
            .arg(&spec)
            .output()
            .unwrap()
    };
    let out = cli("2/3");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = respload::Report::from_json_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    // 10 requests on 3 shards: 4 + 3 + 3; 4 connections: 2 + 1 + 1.
    assert_eq!((r.totals.ops, r.client.connections), (3, 1));
    // The server counted exactly those (Server::start waits on its log, not with a PING).
    assert_eq!(server.calls("ping"), 3);
    for bad in ["3/3", "1", "a/2", "0/0"] {
        let out = cli(bad);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("--shard") && err.contains("I/N"),
            "{bad}: {err}"
        );
    }
    let out = cli("0/5");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("load.connections") && err.contains("4 connections"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
