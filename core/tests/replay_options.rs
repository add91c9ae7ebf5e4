//! A replay's options against a real server, each proven by what the server ran: the
//! commands dropped by default and `keep`/`drop`, a client's order when clients share
//! connections, prefill sizes from the trace, latency counted from the
//! recorded instant, and a Twitter cache trace replayed as RESP.

mod common;

use common::traces::{commandstats, write_trace};
use common::{workload, Server};
use respload::spec::DROPPED_BY_DEFAULT;
use respload::trace::{jsonl, Record};
use serde_json::json;
use std::collections::BTreeMap;
use std::time::Duration;

fn temp(name: &str) -> String {
    let dir = std::env::temp_dir().join(format!("respload-replay-opts-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name).display().to_string()
}

fn rec(client: &str, ms: u64, args: &[&str]) -> (String, u64, Vec<String>) {
    (
        client.to_string(),
        ms,
        args.iter().map(|s| s.to_string()).collect(),
    )
}

/// What the server ran between two readings, by command (only those that moved).
fn ran(before: &BTreeMap<String, u64>, after: &BTreeMap<String, u64>) -> BTreeMap<String, u64> {
    after
        .iter()
        .map(|(k, v)| (k.clone(), v - before.get(k).unwrap_or(&0)))
        .filter(|(_, n)| *n > 0)
        .collect()
}

/// The tool's own commands: the report's readings of the server, a connection's handshake.
fn own(cmd: &str) -> bool {
    matches!(
        cmd,
        "INFO" | "PING" | "CLIENT|SETNAME" | "HELLO" | "CONFIG|GET"
    )
}

#[test]
fn every_command_dropped_by_default_is_skipped_by_name_and_keep_brings_one_back() {
    let server = Server::start(&[]);
    let path = temp("drops.jsonl");
    // Each command dropped by default once, by its name alone (SHUTDOWN, FLUSHDB, ... would
    // stop or wipe the server: sent, they would show), between INCRs that are replayed.
    let mut recs = vec![rec("c:1", 0, &["SET", "keep-me", "1"])];
    for (i, name) in DROPPED_BY_DEFAULT.iter().enumerate() {
        recs.push(rec("c:1", 1 + i as u64, &[name]));
        recs.push(rec("c:1", 1 + i as u64, &["INCR", "n"]));
    }
    recs.push(rec("c:1", 100, &["DEL", "gone"]));
    write_trace(&path, &recs);
    let before = commandstats(&server);
    let report = respload::run(&workload(json!({
        "target": { "url": server.url() },
        "replay": { "file": path, "speed": 10.0, "prefill": false },
    })))
    .unwrap();
    let after = commandstats(&server);
    // The replay's own commands and the readings of INFO, nothing else reached the server.
    let n = DROPPED_BY_DEFAULT.len() as u64;
    let mut want = BTreeMap::from([
        ("SET".to_string(), 1),
        ("INCR".to_string(), n),
        ("DEL".to_string(), 1),
    ]);
    let mut got = ran(&before, &after);
    // The report's server readings (INFO) and the connections' handshakes are the tool's own.
    got.retain(|k, _| !own(k));
    want.retain(|_, v| *v > 0);
    assert_eq!(got, want);
    assert_eq!(server.cli(&["GET", "n"]), n.to_string());
    let f = report.phases[0].replay.as_ref().unwrap();
    assert_eq!((f.traced, f.replayed), (2 * n + 2, n + 2));
    for name in DROPPED_BY_DEFAULT {
        assert_eq!(
            f.skipped.get(&format!("dropped: {name}")),
            Some(&1),
            "{name}: {:?}",
            f.skipped
        );
    }
    assert_eq!(f.skipped.len(), DROPPED_BY_DEFAULT.len());

    // `keep`: only the commands named, a default-dropped one (FLUSHDB) included; `drop`
    // removes one more.
    let before = commandstats(&server);
    let report = respload::run(&workload(json!({
        "target": { "url": server.url() },
        "replay": {
            "file": path, "speed": 10.0, "prefill": false,
            "keep": ["incr", "FLUSHDB", "del"], "drop": ["DEL"],
        },
    })))
    .unwrap();
    let mut got = ran(&before, &commandstats(&server));
    got.retain(|k, _| !own(k));
    assert_eq!(
        got,
        BTreeMap::from([("INCR".to_string(), n), ("FLUSHDB".to_string(), 1)])
    );
    let f = report.phases[0].replay.as_ref().unwrap();
    assert_eq!(f.replayed, n + 1);
    assert_eq!(f.skipped.values().sum::<u64>(), f.traced - f.replayed);
    // FLUSHDB came after the first INCRs: only those after it are left.
    let flushdb_at = DROPPED_BY_DEFAULT
        .iter()
        .position(|c| *c == "FLUSHDB")
        .unwrap() as u64;
    assert_eq!(server.cli(&["GET", "n"]), (n - flushdb_at).to_string());
    assert_eq!(server.cli(&["EXISTS", "keep-me"]), "0");
}

#[test]
fn clients_hashed_onto_fewer_connections_keep_each_clients_order() {
    let server = Server::start(&[]);
    let path = temp("hashed.jsonl");
    // Eight clients, each pushing 0..99 onto its own list, interleaved at the same instants.
    let mut recs = Vec::new();
    for i in 0..100u64 {
        for c in 0..8 {
            let client = format!("10.0.0.{c}:4000");
            recs.push(rec(
                &client,
                i,
                &["RPUSH", &format!("list:{c}"), &i.to_string()],
            ));
        }
    }
    write_trace(&path, &recs);
    let report = respload::run(&workload(json!({
        "target": { "url": server.url() },
        "replay": { "file": path, "connections": 3, "speed": 4.0 },
    })))
    .unwrap();
    let f = report.phases[0].replay.as_ref().unwrap();
    assert_eq!((f.connections, f.per_client), (3, false));
    assert_eq!(report.totals.ops, 800);
    assert_eq!(report.totals.errors, 0);
    let want: Vec<String> = (0..100).map(|i| i.to_string()).collect();
    for c in 0..8 {
        let got = server.cli(&["LRANGE", &format!("list:{c}"), "0", "-1"]);
        assert_eq!(got.lines().collect::<Vec<_>>(), want, "client {c}");
    }
}

#[test]
fn prefill_takes_each_keys_size_from_the_traces_later_write() {
    let server = Server::start(&[]);
    let path = temp("prefill-size.jsonl");
    // Read before written: `sized` is written later by SETNX (which then finds it, so the
    // prefill's value stays), `plain` never (the default size).
    let recs = vec![
        rec("a:1", 0, &["GET", "sized"]),
        rec("a:1", 1, &["GET", "plain"]),
        rec("a:1", 2, &["SETNX", "sized", "0123456789abc"]),
    ];
    write_trace(&path, &recs);
    let report = respload::run(&workload(json!({
        "target": { "url": server.url() },
        "replay": { "file": path, "prefill_size": 7 },
    })))
    .unwrap();
    assert_eq!(report.commands["GET"].hits, 2);
    assert_eq!(server.cli(&["STRLEN", "sized"]), "13");
    assert_ne!(server.cli(&["GET", "sized"]), "0123456789abc");
    assert_eq!(server.cli(&["STRLEN", "plain"]), "7");
    let p = report.phases[0]
        .replay
        .as_ref()
        .unwrap()
        .prefill
        .as_ref()
        .unwrap();
    assert_eq!(p.keys, 2);
}

#[test]
fn latency_counts_from_the_recorded_instant_when_the_server_stalls() {
    let server = Server::start(&["--enable-debug-command", "yes"]);
    let path = temp("stall.jsonl");
    // One client, a SET of 1 MiB every 5 ms for 1.5 s (the trace holds the size, the
    // replay writes the bytes); the server sleeps 0.6 s from about 0.3 s in. Asleep, it reads
    // nothing: once the sockets' buffers are full the client cannot write, and its requests
    // go out late.
    let mut w = jsonl::Writer::create(&path).unwrap();
    let mut r = Record::default();
    for i in 0..300u64 {
        r.clear();
        r.client = "c:1".into();
        r.t_us = 1_700_000_000_000_000 + i * 5000;
        r.push_bytes(b"SET");
        r.push_bytes(b"big");
        r.push_size(1 << 20);
        w.write(&r).unwrap();
    }
    w.finish().unwrap();
    let url = server.url();
    let staller = {
        let port = server.port.to_string();
        std::thread::spawn(move || {
            let cli = |args: &[&str]| {
                let out = std::process::Command::new("redis-cli")
                    .args(["-p", &port])
                    .args(args)
                    .output()
                    .unwrap();
                assert!(out.status.success());
                String::from_utf8_lossy(&out.stdout).into_owned()
            };
            // Once the replay is 60 SETs (0.3 s) in, by the server's count.
            let deadline = std::time::Instant::now() + Duration::from_secs(60);
            loop {
                let info = cli(&["INFO", "commandstats"]);
                let sets = info
                    .lines()
                    .find_map(|l| l.strip_prefix("cmdstat_set:calls="))
                    .and_then(|r| r.split(',').next())
                    .map_or(0, |n| n.parse::<u64>().unwrap());
                if sets >= 60 {
                    break;
                }
                assert!(
                    std::time::Instant::now() < deadline,
                    "the replay never started"
                );
                std::thread::sleep(Duration::from_millis(5));
            }
            assert_eq!(cli(&["DEBUG", "SLEEP", "0.6"]).trim(), "OK");
        })
    };
    let report = respload::run(&workload(json!({
        "target": { "url": url },
        "replay": { "file": path, "prefill": false },
    })))
    .unwrap();
    staller.join().unwrap();
    let t = &report.phases[0].totals;
    assert_eq!(t.ops, 300);
    let lat = &t.latency_ms;
    let lag = t.send_lag_ms.as_ref().expect("a replay is open loop");
    let svc = t.service_ms.as_ref().expect("a replay is open loop");
    // The stall made the client late: requests went out well after their instants...
    assert!(lag.max >= 200.0, "send lag max {} ms", lag.max);
    // ...and their latency counts that lateness: from the recorded instant, not the write.
    let sum = lag.mean + svc.mean;
    assert!(
        (lat.mean - sum).abs() <= 0.02 * lat.mean + 0.05,
        "latency mean {} ms, send lag {} + service {} = {sum} ms",
        lat.mean,
        lag.mean,
        svc.mean
    );
    assert!(lat.max >= 300.0, "latency max {} ms", lat.max);
    // A replay is judged as every open-loop run is: the client's own lag among the checks.
    let checks: Vec<&str> = report
        .validity
        .checks
        .iter()
        .map(|c| c.check.as_str())
        .collect();
    assert!(checks.contains(&"client_lag"), "{checks:?}");
}

#[test]
fn a_twitter_cache_trace_replays_as_the_resp_commands_it_maps_to() {
    let server = Server::start(&[]);
    let path = temp("twitter.csv");
    // A generated sample: every operation of the format, in rotation, over 40 keys.
    let ops = [
        "get", "set", "gets", "add", "replace", "cas", "append", "prepend", "delete", "incr",
        "decr",
    ];
    let mut csv = String::new();
    let mut want: BTreeMap<&str, u64> = BTreeMap::new();
    for i in 0..440u64 {
        let op = ops[i as usize % ops.len()];
        let key = format!("ns:u:{:04}", i % 40);
        let (size, ttl) = if matches!(op, "set" | "add" | "replace" | "cas") {
            (100 + i % 7, if i % 2 == 0 { 3600 } else { 0 })
        } else if matches!(op, "append" | "prepend") {
            (3, 0)
        } else {
            (0, 0)
        };
        csv.push_str(&format!(
            "{},{key},{},{size},{},{op},{ttl}\n",
            i / 220,
            key.len(),
            i % 5
        ));
        let resp = match op {
            "get" | "gets" => "GET",
            "set" | "cas" | "add" | "replace" => "SET",
            "append" | "prepend" => "APPEND",
            "delete" => "DEL",
            "incr" => "INCRBY",
            _ => "DECRBY",
        };
        *want.entry(resp).or_default() += 1;
    }
    std::fs::write(&path, csv).unwrap();
    let before = commandstats(&server);
    let report = respload::run(&workload(json!({
        "target": { "url": server.url() },
        "replay": { "file": path, "speed": 20.0, "prefill": false },
    })))
    .unwrap();
    let after = commandstats(&server);
    let f = report.phases[0].replay.as_ref().unwrap();
    assert_eq!(f.format, "twitter");
    assert_eq!((f.traced, f.replayed, f.malformed), (440, 440, 0));
    // Five clients, each on its connection.
    assert_eq!(f.connections, 5);
    let got = ran(&before, &after);
    for (cmd, n) in &want {
        assert_eq!(got.get(*cmd), Some(n), "{cmd}: {got:?}");
    }
    // A SET carries a value of the trace's size, and its TTL when positive: each key whose
    // last operation was a plain write holds that write's size and TTL.
    let mut last: BTreeMap<String, (&str, u64, u64)> = BTreeMap::new();
    for i in 0..440u64 {
        let op = ops[i as usize % ops.len()];
        last.insert(format!("ns:u:{:04}", i % 40), (op, 100 + i % 7, i));
    }
    let mut checked = 0;
    for (key, (op, size, i)) in &last {
        if matches!(*op, "set" | "cas") {
            assert_eq!(server.cli(&["STRLEN", key]), size.to_string(), "{key}");
            let ttl: i64 = server.cli(&["TTL", key]).parse().unwrap();
            assert_eq!(ttl > 0, i % 2 == 0, "{key}: TTL {ttl}");
            checked += 1;
        } else if *op == "delete" {
            assert_eq!(server.cli(&["EXISTS", key]), "0", "{key}");
            checked += 1;
        }
    }
    assert!(checked >= 5, "{checked} keys checked");
}
