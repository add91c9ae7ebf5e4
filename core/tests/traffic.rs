//! The user's own traffic against real servers: capture (MONITOR into a trace), replay (a
//! trace's commands at their recorded instants, each client's in order), prefill.

mod common;

use common::traces::{commandstats, write_trace};
use common::{workload, Server};
use respload::capture::{capture, CaptureControl, CaptureSpec};
use respload::trace::{jsonl, Record, TraceArg, TraceReader};
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn temp(name: &str) -> String {
    let dir = std::env::temp_dir().join(format!("respload-traffic-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name).display().to_string()
}

/// Every record of a trace file.
fn records(path: &str) -> Vec<Record> {
    let mut r = TraceReader::open(path, None).unwrap();
    let mut out = Vec::new();
    let mut rec = Record::default();
    while r.next_record(&mut rec).unwrap() {
        out.push(rec.clone());
    }
    assert_eq!(r.malformed(), 0, "{:?}", r.malformed_lines());
    out
}

fn text(a: TraceArg<'_>) -> String {
    match a {
        TraceArg::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        TraceArg::Size(n) => format!("<{n}>"),
    }
}

fn name(r: &Record) -> String {
    String::from_utf8_lossy(r.name().unwrap()).to_uppercase()
}

/// Start capturing `server` on a thread; returns once MONITOR is on.
fn start_capture(
    server: &Server,
    out: &str,
) -> (
    Arc<CaptureControl>,
    std::thread::JoinHandle<respload::Result<respload::capture::CaptureReport>>,
) {
    let (control, handle) = start_capture_with(server, out, json!({}));
    // The signal is the server's word: at once, it lists the capture's connection in MONITOR.
    assert!(server.cli(&["CLIENT", "LIST"]).contains("cmd=monitor"));
    (control, handle)
}

#[test]
fn a_capture_the_server_refuses_fails_without_ever_saying_it_started() {
    let server = Server::start(&[]);
    server.cli(&[
        "ACL", "SETUSER", "watcher", "on", ">pw", "~*", "+@all", "-monitor",
    ]);
    let url = format!("redis://watcher:pw@127.0.0.1:{}", server.port);
    let spec = CaptureSpec::from_json_value(json!({
        "target": { "url": url },
        "out": temp("refused.jsonl"),
        "duration": "30s",
    }))
    .unwrap();
    let control = CaptureControl::default();
    let started = Instant::now();
    let e = capture(&spec, &control).unwrap_err().to_string();
    assert!(e.contains("MONITOR refused: NOPERM"), "{e}");
    assert!(!control.is_started());
    // Refused at once, not at the end of its 30 s.
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn a_capture_holds_exactly_the_commands_respload_sent_in_their_order() {
    let server = Server::start(&[]);
    let out = temp("capture.jsonl");
    let (stop, handle) = start_capture(&server, &out);
    // One connection walking the keys in order: the trace must hold that order. Then four
    // connections of a mix: the trace must hold their counts exactly.
    let seq = workload(json!({
        "target": { "url": server.url() },
        "load": { "connections": 1, "requests": 500 },
        "keys": { "prefix": "seq:", "range": [0, 499], "distribution": "sequential" },
        "commands": [{ "name": "set" }],
    }));
    let seq_report = respload::run(&seq).unwrap();
    let mix = workload(json!({
        "target": { "url": server.url() },
        "load": { "connections": 4, "requests": 2000, "pipeline": 4 },
        "keys": { "prefix": "mix:", "range": [0, 99] },
        "commands": [{ "name": "get", "weight": 3 }, { "name": "incr", "weight": 1 }],
    }));
    let mix_report = respload::run(&mix).unwrap();
    // MONITOR writes a command after it ran: the last replies are in, so are their lines.
    std::thread::sleep(Duration::from_millis(300));
    stop.stop();
    let report = handle.join().unwrap().unwrap();
    assert!(report.interrupted);
    let trace = records(&out);
    assert_eq!(report.commands, trace.len() as u64);
    let sets: Vec<&Record> = trace
        .iter()
        .filter(|r| name(r) == "SET" && text(r.arg(1).unwrap()).starts_with("seq:"))
        .collect();
    assert_eq!(sets.len() as u64, seq_report.commands["SET"].ops);
    let keys: Vec<String> = sets.iter().map(|r| text(r.arg(1).unwrap())).collect();
    let want: Vec<String> = (0..500).map(|i| format!("seq:{i}")).collect();
    assert_eq!(keys, want, "one connection's SETs in the order sent");
    assert_eq!(
        sets.iter()
            .map(|r| &r.client)
            .collect::<std::collections::HashSet<_>>()
            .len(),
        1
    );
    let count = |cmd: &str, prefix: &str| {
        trace
            .iter()
            .filter(|r| name(r) == cmd && text(r.arg(1).unwrap()).starts_with(prefix))
            .count() as u64
    };
    assert_eq!(count("GET", "mix:"), mix_report.commands["GET"].ops);
    assert_eq!(count("INCR", "counter:"), mix_report.commands["INCR"].ops);
    assert_eq!(
        mix_report.commands["GET"].ops + mix_report.commands["INCR"].ops,
        2000
    );
    // Instants: microseconds of the server's clock, in order per client.
    let mut last: BTreeMap<&str, u64> = BTreeMap::new();
    for r in &trace {
        let t = last.entry(&r.client).or_default();
        assert!(r.t_us >= *t, "a client's instants go forward");
        *t = r.t_us;
    }
    // Nothing else: what is not one of the runs' requests is the runs' own (a connection's
    // handshake, the report's readings of the server).
    let others: Vec<String> = trace
        .iter()
        .filter(|r| {
            let key = r.arg(1).map(text).unwrap_or_default();
            !((name(r) == "SET" && key.starts_with("seq:"))
                || (name(r) == "GET" && key.starts_with("mix:"))
                || (name(r) == "INCR" && key.starts_with("counter:")))
        })
        .map(name)
        .collect();
    assert!(
        others
            .iter()
            .all(|n| matches!(n.as_str(), "CLIENT" | "HELLO" | "PING" | "INFO" | "CONFIG")),
        "{others:?}"
    );
    assert_eq!(trace.len() - others.len(), 2500);
    // MONITOR's cost shows: the server worked harder during the capture than before it.
    let node = &report.nodes[0];
    assert!(
        node.cpu_during_percent.unwrap() > node.cpu_before_percent.unwrap(),
        "{node:?}"
    );
    // The capture's own INFO readings are not in it.
    assert!(!trace
        .iter()
        .any(|r| name(r) == "INFO" && r.len() == 2 && text(r.arg(1).unwrap()) == "cpu"));
    let node = &report.nodes[0];
    assert_eq!(node.commands, report.commands);
    assert!(node.cpu_before_percent.is_some() && node.cpu_during_percent.is_some());
}

/// Start a capture of `server` with `fields` (besides target and out) on a thread, and wait
/// until MONITOR is on.
fn start_capture_with(
    server: &Server,
    out: &str,
    fields: serde_json::Value,
) -> (
    Arc<CaptureControl>,
    std::thread::JoinHandle<respload::Result<respload::capture::CaptureReport>>,
) {
    let mut spec = json!({ "target": { "url": server.url() }, "out": out });
    spec.as_object_mut()
        .unwrap()
        .extend(fields.as_object().unwrap().clone());
    let spec = CaptureSpec::from_json_value(spec).unwrap();
    let control = Arc::new(CaptureControl::default());
    let flag = Arc::clone(&control);
    let handle = std::thread::spawn(move || capture(&spec, &flag));
    while !control.is_started() {
        assert!(
            !handle.is_finished(),
            "the capture ended before MONITOR was on"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    (control, handle)
}

#[test]
fn a_capture_ends_by_itself_at_its_duration_or_its_command_count() {
    let server = Server::start(&[]);
    // A duration: one command during it, one after; the capture ends unasked.
    let out = temp("timed.jsonl");
    let (_, handle) = start_capture_with(&server, &out, json!({ "duration": "1s" }));
    server.cli(&["SET", "during", "1"]);
    let report = handle.join().unwrap().unwrap();
    server.cli(&["SET", "after", "1"]);
    assert!(!report.interrupted);
    // It looks at its clock every 100 ms.
    assert!(
        report.duration_s >= 1.0 && report.duration_s < 1.6,
        "{} s",
        report.duration_s
    );
    let trace = records(&out);
    let got: Vec<String> = trace
        .iter()
        .map(|r| {
            (0..r.len())
                .map(|i| text(r.arg(i).unwrap()))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    assert_eq!(got, ["SET during 1"]);
    assert_eq!(report.commands, 1);

    // A command count: it ends at the third, however long the duration.
    let out = temp("counted.jsonl");
    let (_, handle) = start_capture_with(
        &server,
        &out,
        json!({ "duration": "60s", "max_commands": 3 }),
    );
    let started = Instant::now();
    for i in 0..3 {
        server.cli(&["INCR", &format!("c{i}")]);
    }
    let report = handle.join().unwrap().unwrap();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(!report.interrupted);
    assert_eq!(report.commands, 3);
    assert_eq!(records(&out).len(), 3);
}

#[test]
fn secrets_never_reach_a_trace() {
    let server = Server::start(&[]);
    let out = temp("secrets.jsonl.gz");
    let (stop, handle) = start_capture(&server, &out);
    for cmd in [
        vec!["CONFIG", "SET", "masterauth", "s3cret-1"],
        vec!["AUTH", "s3cret-2"],
        vec!["HELLO", "3", "AUTH", "default", "s3cret-3"],
        vec!["ACL", "SETUSER", "bob", "on", ">s3cret-4", "~*", "+get"],
        vec!["SET", "visible", "value"],
    ] {
        server.cli(&cmd);
    }
    let t0 = Instant::now();
    while !records_so_far(&out).iter().any(|r| name(r) == "SET") {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "the SET never arrived"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    stop.stop();
    let report = handle.join().unwrap().unwrap();
    let mut raw = Vec::new();
    use std::io::Read;
    flate2_read(&out).read_to_end(&mut raw).unwrap();
    let raw = String::from_utf8_lossy(&raw);
    assert!(!raw.contains("s3cret"), "{raw}");
    let trace = records(&out);
    // Redis 7 leaves CONFIG and ACL out of MONITOR and redacts AUTH and HELLO itself; the
    // capture's own redaction (trace::redact's tests) covers servers that do not.
    let auth = trace
        .iter()
        .find(|r| name(r) == "AUTH")
        .expect("AUTH captured");
    assert_eq!(text(auth.arg(1).unwrap()), "(redacted)");
    let hello = trace
        .iter()
        .find(|r| name(r) == "HELLO")
        .expect("HELLO captured");
    assert_eq!(text(hello.arg(4).unwrap()), "(redacted)");
    assert_eq!(report.commands, trace.len() as u64);
}

/// What a gzip trace holds so far (a capture flushes every 100 ms).
fn records_so_far(path: &str) -> Vec<Record> {
    let Ok(mut r) = TraceReader::open(path, Some(respload::trace::Format::Respload)) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut rec = Record::default();
    while let Ok(true) = r.next_record(&mut rec) {
        out.push(rec.clone());
    }
    out
}

fn flate2_read(path: &str) -> Box<dyn std::io::Read> {
    let file = std::fs::File::open(path).unwrap();
    Box::new(miniz_reader(file))
}

/// A gzip file's content (the test's own decoder: the crate's reader is under test).
fn miniz_reader(mut file: std::fs::File) -> std::io::Cursor<Vec<u8>> {
    use std::io::Read;
    let mut gz = Vec::new();
    file.read_to_end(&mut gz).unwrap();
    // gzip: a 10-byte header (no optional fields from our writer), deflate data, 8 bytes.
    assert_eq!(&gz[..2], &[0x1f, 0x8b]);
    let data = miniz_oxide::inflate::decompress_to_vec(&gz[10..gz.len() - 8]).unwrap();
    std::io::Cursor::new(data)
}

fn args(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| s.to_string()).collect()
}

#[test]
fn a_replay_sends_exactly_the_trace_and_keeps_each_clients_order() {
    let server = Server::start(&[]);
    let path = temp("replay.jsonl");
    let mut recs = Vec::new();
    for i in 0..300u64 {
        recs.push(("10.0.0.1:1", i, args(&["RPUSH", "list:a", &i.to_string()])));
        recs.push(("10.0.0.2:2", i, args(&["RPUSH", "list:b", &i.to_string()])));
        if i % 3 == 0 {
            recs.push(("10.0.0.3:3", i, args(&["INCR", "n"])));
            recs.push(("10.0.0.3:3", i, args(&["SET", &format!("k{i}"), "v"])));
        }
    }
    recs.push(("10.0.0.3:3", 150, args(&["FLUSHALL"])));
    recs.push((
        "10.0.0.3:3",
        151,
        args(&["CONFIG", "SET", "maxmemory", "1"]),
    ));
    recs.sort_by_key(|r| r.1);
    write_trace(&path, &recs);
    let before = commandstats(&server);
    let w = workload(json!({
        "target": { "url": server.url() },
        "replay": { "file": path, "speed": 4.0 },
    }));
    let report = respload::run(&w).unwrap();
    let after = commandstats(&server);
    let delta = |c: &str| after.get(c).unwrap_or(&0) - before.get(c).unwrap_or(&0);
    assert_eq!(delta("RPUSH"), 600);
    assert_eq!(delta("INCR"), 100);
    assert_eq!(delta("SET"), 100);
    assert_eq!(delta("FLUSHALL"), 0);
    // Each recorded client's order kept: the lists hold 0..299 in order.
    let want: Vec<String> = (0..300).map(|i| i.to_string()).collect();
    for list in ["list:a", "list:b"] {
        let got = server.cli(&["LRANGE", list, "0", "-1"]);
        assert_eq!(got.lines().collect::<Vec<_>>(), want, "{list}");
    }
    assert_eq!(server.cli(&["GET", "n"]), "100");
    assert_eq!(report.totals.ops, 800);
    assert_eq!(report.totals.errors, 0);
    let f = report.phases[0].replay.as_ref().expect("a replay section");
    assert_eq!((f.traced, f.planned, f.replayed), (802, 800, 800));
    assert_eq!(f.skipped.get("dropped: FLUSHALL"), Some(&1));
    assert_eq!(f.skipped.get("dropped: CONFIG"), Some(&1));
    assert_eq!(f.connections, 3);
    assert!(f.per_client);
    assert!(f.schedule_ms.is_some());
}

#[test]
fn loops_start_each_pass_on_the_database_the_last_one_ended_on() {
    let server = Server::start(&[]);
    let path = temp("loops-db.jsonl");
    // One client: 10 SETs on db 0, then 10 on db 3. The first pass starts on db 0 (one
    // SELECT, before the db 3 ones); every later pass starts on db 3, so it needs a SELECT
    // before its first command as well: 1 + 2 + 2 SELECTs over three passes.
    let mut w = jsonl::Writer::create(&path).unwrap();
    let mut rec = Record::default();
    for i in 0..20u64 {
        rec.clear();
        rec.client = "c:1".into();
        rec.db = if i < 10 { 0 } else { 3 };
        rec.t_us = 1_700_000_000_000_000 + i * 1000;
        for a in ["INCR", &format!("n{}", i % 10)] {
            rec.push_bytes(a.as_bytes());
        }
        w.write(&rec).unwrap();
    }
    w.finish().unwrap();
    let before = commandstats(&server);
    let report = respload::run(&workload(json!({
        "target": { "url": server.url() },
        "replay": { "file": path, "loops": 3, "speed": 4.0 },
    })))
    .unwrap();
    let after = commandstats(&server);
    let delta = |c: &str| after.get(c).unwrap_or(&0) - before.get(c).unwrap_or(&0);
    assert_eq!((delta("INCR"), delta("SELECT")), (60, 5));
    let f = report.phases[0].replay.as_ref().unwrap();
    assert_eq!((f.planned, f.replayed), (65, 65));
    assert_eq!(report.totals.errors, 0);
    // Every pass's commands ran, each on its database.
    for db in ["0", "3"] {
        for k in 0..10 {
            let got = server.cli(&["-n", db, "GET", &format!("n{k}")]);
            assert_eq!(got, "3", "db {db} n{k}");
        }
    }
}

#[test]
fn a_replay_at_speed_2_takes_half_the_recorded_time_and_at_a_rate_what_it_gives() {
    let server = Server::start(&[]);
    let path = temp("speed.jsonl");
    // 2 s of trace: 401 commands 5 ms apart on two clients (a mean of 200.5/s).
    let recs: Vec<_> = (0..=400u64)
        .map(|i| {
            let c = if i % 2 == 0 { "c:1" } else { "c:2" };
            (c, i * 5, args(&["SET", &format!("k{i}"), "v"]))
        })
        .collect();
    write_trace(&path, &recs);
    // Twice as fast: the last command due 1 s in; at 802/s, four times: 0.5 s in.
    for (option, value, rate, last_due_s) in
        [("speed", 2.0, 401.0, 1.0), ("rate", 802.0, 802.0, 0.5)]
    {
        let w = workload(json!({
            "target": { "url": server.url() },
            "replay": { "file": path, option: value },
        }));
        let report = respload::run(&w).unwrap();
        let p = &report.phases[0];
        let f = p.replay.as_ref().unwrap();
        assert_eq!(p.totals.ops, 401);
        assert!((f.rate - rate).abs() < 1e-6, "{option}: {}", f.rate);
        let lag = f.schedule_ms.as_ref().unwrap();
        // The last command ended after its send lag and latency.
        let bound = last_due_s + (lag.max + p.totals.latency_ms.max) / 1000.0 + 0.01;
        assert!(
            p.duration_s >= last_due_s - 0.01 && p.duration_s <= bound,
            "{option}: {} s, bound {bound} s",
            p.duration_s
        );
    }
}

#[test]
fn prefill_writes_the_keys_read_before_written_so_the_replay_hits() {
    let path = temp("prefill.jsonl");
    // GETs of keys never written before (hits only when prefilled), a key written then
    // read (never prefilled: it exists by then), and a hash read (not a string: reported).
    let mut recs = Vec::new();
    for i in 0..50u64 {
        recs.push(("a:1", i, args(&["GET", &format!("cold{i}")])));
    }
    recs.push(("a:1", 60, args(&["SET", "warm", "12345"])));
    recs.push(("a:1", 61, args(&["GET", "warm"])));
    recs.push(("a:1", 62, args(&["SET", "cold0", "0123456789"])));
    recs.push(("a:1", 63, args(&["HGET", "h", "f"])));
    write_trace(&path, &recs);
    for prefill in [true, false] {
        let server = Server::start(&[]);
        let w = workload(json!({
            "target": { "url": server.url() },
            "replay": { "file": path, "prefill": prefill, "key_prefix": "r:" },
        }));
        let report = respload::run(&w).unwrap();
        let get = &report.commands["GET"];
        let f = report.phases[0].replay.as_ref().unwrap();
        if prefill {
            assert_eq!((get.hits, get.misses), (51, 0));
            let p = f.prefill.as_ref().unwrap();
            assert_eq!((p.keys, p.errors), (50, 0));
            assert_eq!(p.not_prefilled.get("HGET"), Some(&1));
            // The size of the key's later write; else the default 64 bytes.
            assert_eq!(server.cli(&["STRLEN", "r:cold1"]), "64");
            assert_eq!(server.cli(&["DBSIZE"]), "51");
        } else {
            assert_eq!((get.hits, get.misses), (1, 50));
            assert!(f.prefill.is_none());
        }
        assert_eq!(server.cli(&["GET", "r:warm"]), "12345");
    }
}

#[test]
fn a_monitor_log_replays_with_its_quoting_and_a_hashed_key_space() {
    let server = Server::start(&[]);
    let path = temp("monitor.log");
    let log = "OK\n\
        1700000000.000001 [0 127.0.0.1:50001] \"SET\" \"a b\" \"say \\\"hi\\\"\"\n\
        1700000000.000500 [0 127.0.0.1:50001] \"SET\" \"bin\" \"\\x00\\xff\\r\\n\"\n\
        1700000000.001000 [0 lua] \"GET\" \"a b\"\n\
        this line is not a command\n\
        1700000000.002000 [0 unix:/tmp/redis.sock] \"APPEND\" \"bin\" \"!\"\n";
    std::fs::write(&path, log).unwrap();
    let w = workload(json!({
        "target": { "url": server.url() },
        "replay": { "file": path, "connections": 2, "key_hash": true },
    }));
    let report = respload::run(&w).unwrap();
    let f = report.phases[0].replay.as_ref().unwrap();
    assert_eq!((f.format.as_str(), f.traced, f.replayed), ("monitor", 4, 4));
    assert_eq!(f.malformed, 1);
    assert!(
        f.malformed_lines[0].starts_with("line 5:"),
        "{:?}",
        f.malformed_lines
    );
    assert_eq!(f.connections, 2);
    // No key kept its name: two keys, each 16 hex digits.
    let keys = server.cli(&["KEYS", "*"]);
    let keys: Vec<&str> = keys.lines().collect();
    assert_eq!(keys.len(), 2, "{keys:?}");
    assert!(keys
        .iter()
        .all(|k| k.len() == 16 && k.bytes().all(|b| b.is_ascii_hexdigit())));
    // The binary value arrived whole, its APPEND after it: 4 bytes + 1.
    assert!(keys.iter().any(|k| server.cli(&["STRLEN", k]) == "5"));
}

#[test]
fn a_replay_spec_is_checked_before_any_traffic() {
    let path = temp("check.jsonl");
    write_trace(&path, &[("c", 0, args(&["PING"]))]);
    let err = |spec: serde_json::Value| match respload::Workload::from_json_value(spec) {
        Ok(_) => panic!("accepted"),
        Err(e) => e.to_string(),
    };
    let e = err(json!({ "replay": { "file": path, "speed": 0 } }));
    assert!(e.contains("replay.speed") && e.contains("above 0"), "{e}");
    let e = err(json!({ "replay": { "file": path, "speed": 2, "rate": 5 } }));
    assert!(e.contains("replay.rate"), "{e}");
    let e = err(json!({ "replay": { "file": path, "format": "csv" } }));
    assert!(e.contains("replay.format") && e.contains("csv"), "{e}");
    let e = err(json!({ "replay": { "file": path }, "load": { "requests": 10 } }));
    assert!(
        e.contains("load.requests") && e.contains("does not apply"),
        "{e}"
    );
    let e = err(json!({ "replay": { "file": "/nonexistent/trace.jsonl" } }));
    assert!(e.contains("/nonexistent/trace.jsonl"), "{e}");
    let empty = temp("empty.jsonl");
    write_trace(&empty, &[("c", 0, args(&["FLUSHALL"]))]);
    let e = err(json!({ "replay": { "file": empty } }));
    assert!(
        e.contains("no command to replay") && e.contains("dropped: FLUSHALL"),
        "{e}"
    );
    // The trace's rate: a spec read back keeps it, another one is refused.
    let w = respload::Workload::from_json_value(json!({ "replay": { "file": path } })).unwrap();
    respload::Workload::from_json_value(w.to_json_value()).unwrap();
    let e = err(json!({ "replay": { "file": path }, "load": { "rate": 12345 } }));
    assert!(e.contains("load.rate") && e.contains("12345"), "{e}");
    // Split over hosts: a share is checked, and one without a recorded client refused.
    let e = err(json!({ "replay": { "file": path, "share": { "index": 2, "of": 2 } } }));
    assert!(e.contains("replay.share") && e.contains("index = 2"), "{e}");
    let e = err(json!({ "replay": { "file": path, "share": { "index": 0, "of": 0 } } }));
    assert!(e.contains("replay.share"), "{e}");
    let other = (0..2)
        .find(|&i| !respload::plan::in_share(respload::spec::ReplayShare { index: i, of: 2 }, "c"))
        .unwrap();
    let e = err(json!({ "replay": { "file": path, "share": { "index": other, "of": 2 } } }));
    assert!(
        e.contains("replay.share") && e.contains("none of") && e.contains("fewer hosts"),
        "{e}"
    );
    let two = respload::Workload::from_json_value(
        json!({ "replay": { "file": path, "connections": 1 } }),
    )
    .unwrap();
    let e = two
        .shard(0, 2)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        e.contains("replay.connections") && e.contains("1 connections"),
        "{e}"
    );
}

#[test]
fn a_replay_split_over_hosts_sends_the_trace_once_on_one_clock() {
    let server = Server::start(&[]);
    let path = temp("shared.jsonl");
    let share = |i| respload::spec::ReplayShare { index: i, of: 3 };
    // 60 recorded clients, each appending its own 20 numbers to its own list. Host 2's
    // clients record only from 1.0 s on, the others' in the first 0.4 s: on the trace's one
    // clock host 2 waits a second before its first send; on a clock of its own it would not.
    let names: Vec<String> = (0..60).map(|c| format!("10.1.0.{c}:4{c}")).collect();
    let mut recs = Vec::new();
    for (c, name) in names.iter().enumerate() {
        let late = respload::plan::in_share(share(2), name);
        for i in 0..20u64 {
            let ms = if late { 1000 + i * 10 } else { i * 20 } + c as u64 % 7;
            recs.push((
                name.as_str(),
                ms,
                args(&["RPUSH", &format!("l{c}"), &i.to_string()]),
            ));
        }
    }
    recs.sort_by_key(|r| r.1);
    write_trace(&path, &recs);
    let per_host: Vec<usize> = (0..3)
        .map(|i| {
            names
                .iter()
                .filter(|n| respload::plan::in_share(share(i), n))
                .count()
        })
        .collect();
    assert!(per_host.iter().all(|&n| n > 0), "{per_host:?}");
    let whole = workload(json!({
        "target": { "url": server.url() },
        "replay": { "file": path },
    }));
    let before = commandstats(&server);
    let reports: Vec<respload::Report> = (0..3)
        .map(|i| respload::run(&whole.shard(i, 3).unwrap()).unwrap())
        .collect();
    let after = commandstats(&server);
    assert_eq!(after["RPUSH"] - before.get("RPUSH").unwrap_or(&0), 1200);
    // Every list whole and in its client's order: each client was replayed by one host.
    let want: Vec<String> = (0..20).map(|i| i.to_string()).collect();
    for c in 0..60 {
        let got = server.cli(&["LRANGE", &format!("l{c}"), "0", "-1"]);
        assert_eq!(got.lines().collect::<Vec<_>>(), want, "l{c}");
    }
    for (i, r) in reports.iter().enumerate() {
        let f = r.phases[0].replay.as_ref().unwrap();
        let mine = per_host[i] as u64 * 20;
        assert_eq!(
            (f.planned, f.replayed, f.others),
            (mine, mine, 1200 - mine),
            "host {i}"
        );
        assert_eq!(
            (f.hosts, f.connections as usize),
            (Some(3), per_host[i]),
            "host {i}"
        );
        assert_eq!(r.totals.errors, 0);
    }
    // Host 2's first command was due 1.0 s after the trace's first instant.
    let late = &reports[2].phases[0];
    assert!(late.duration_s >= 1.0, "host 2 took {} s", late.duration_s);
    // The hosts' reports merged: the whole trace, its rate the sum of the hosts'.
    let merged = respload::Report::merge(&reports).unwrap();
    let f = merged.phases[0].replay.as_ref().unwrap();
    assert_eq!(
        (f.planned, f.replayed, f.others, f.connections),
        (1200, 1200, 0, 60)
    );
    let trace_rate: f64 = reports
        .iter()
        .map(|r| r.phases[0].replay.as_ref().unwrap().trace_rate)
        .sum();
    assert!(
        (f.trace_rate - trace_rate).abs() < 1e-9,
        "{} vs {trace_rate}",
        f.trace_rate
    );
    assert_eq!(merged.totals.ops, 1200);
}

/// Ranks 0..n drawn with weight (rank + 1)^-s, by inverse CDF (xorshift64* for the draws).
fn zipf_ranks(n: usize, s: f64, count: usize, seed: u64) -> Vec<usize> {
    let mut cdf = Vec::with_capacity(n);
    let mut acc = 0.0;
    for r in 1..=n {
        acc += (r as f64).powf(-s);
        cdf.push(acc);
    }
    let mut x = seed;
    (0..count)
        .map(|_| {
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            let u = (x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64;
            cdf.partition_point(|&c| c < u * acc).min(n - 1)
        })
        .collect()
}

/// A model's spec run against `server` while it is captured into `file`: the report, the
/// workload, and the GETs and SETs captured (exactly the run's requests).
fn run_captured(
    server: &Server,
    model: &respload::trace::model::Model,
    file: &str,
) -> (respload::Report, respload::Workload, Vec<Record>) {
    let out = temp(file);
    let (stop, handle) = start_capture(server, &out);
    let w = respload::Workload::from_json_value(model.spec.clone()).unwrap();
    let report = respload::run(&w).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    stop.stop();
    handle.join().unwrap().unwrap();
    let ran: Vec<Record> = records(&out)
        .into_iter()
        .filter(|r| matches!(name(r).as_str(), "GET" | "SET"))
        .collect();
    assert_eq!(ran.len() as u64, report.totals.ops);
    (report, w, ran)
}

#[test]
fn a_model_run_against_a_server_gives_back_the_traces_mix_and_popularity() {
    use respload::trace::model::{ModelBuilder, ModelOptions};
    let server = Server::start(&[]);
    // The trace: 20,000 commands over 2 s, GET:SET 4:1, Zipf(0.99) keys over 2,000 keys.
    let path = temp("zipf.jsonl");
    let ranks = zipf_ranks(2000, 0.99, 20_000, 0x9e37_79b9_7f4a_7c15);
    let recs: Vec<_> = ranks
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let key = format!("user:{r}");
            let a = match i % 5 {
                4 => args(&["SET", &key, "0123456789"]),
                _ => args(&["GET", &key]),
            };
            (["c:1", "c:2", "c:3", "c:4"][i % 4], i as u64 / 10, a)
        })
        .collect();
    write_trace(&path, &recs);
    let opts = ModelOptions {
        target_url: Some(server.url()),
        ..ModelOptions::default()
    };
    let model = respload::trace::fit_file(&path, None, &opts).unwrap();
    let traced = model.fit.zipf_exponent.expect("a zipf fit");
    assert!((traced - 0.99).abs() < 0.05, "{traced}");
    // The model run, captured; the capture fitted again on its GETs and SETs.
    let (report, _, ran) = run_captured(&server, &model, "model-run.jsonl");
    let mut again = ModelBuilder::new();
    ran.iter().for_each(|r| again.observe(r));
    let refit = again.fit(&ModelOptions::default());
    let share = |m: &respload::trace::model::Model, cmd: &str| {
        m.fit
            .mix
            .iter()
            .find(|s| s.name == cmd)
            .map_or(0.0, |s| s.trace_share)
    };
    for cmd in ["GET", "SET"] {
        let (want, got) = (share(&model, cmd), share(&refit, cmd));
        // Binomial noise of n draws: well within 1.5 points at n ~ 20,000.
        assert!((want - got).abs() < 0.015, "{cmd}: trace {want}, run {got}");
    }
    let ran = refit.fit.zipf_exponent.expect("a zipf fit of the run");
    assert!((ran - traced).abs() < 0.05, "trace {traced}, run {ran}");
    // The rate: the trace's 10,000/s, achieved.
    let achieved = report.totals.ops_per_sec;
    assert!((achieved / 10_000.0 - 1.0).abs() < 0.1, "{achieved}");
}

#[test]
fn a_cluster_is_captured_from_every_primary_into_one_trace() {
    let cluster = common::Cluster::start(3, 0);
    let out = temp("cluster.jsonl");
    let spec = CaptureSpec::from_json_value(json!({
        "target": { "port": cluster.port(), "cluster": true },
        "out": out,
    }))
    .unwrap();
    let stop = Arc::new(CaptureControl::default());
    let flag = Arc::clone(&stop);
    let handle = std::thread::spawn(move || capture(&spec, &flag));
    while !stop.is_started() {
        assert!(
            !handle.is_finished(),
            "the capture ended before MONITOR was on"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    // Every primary acknowledged MONITOR before the signal.
    for p in cluster.primaries() {
        assert!(p.cli(&["CLIENT", "LIST"]).contains("cmd=monitor"));
    }
    let w = workload(json!({
        "target": { "port": cluster.port(), "cluster": true },
        "load": { "connections": 3, "requests": 3000 },
        "keys": { "prefix": "c:", "range": [0, 999] },
        "commands": [{ "name": "set" }, { "name": "get" }],
    }));
    let run = respload::run(&w).unwrap();
    std::thread::sleep(Duration::from_millis(300));
    stop.stop();
    let report = handle.join().unwrap().unwrap();
    assert_eq!(report.nodes.len(), 3);
    let trace = records(&out);
    let count = |cmd: &str| {
        trace
            .iter()
            .filter(|r| name(r) == cmd && text(r.arg(1).unwrap()).starts_with("c:"))
            .count() as u64
    };
    // Every request ran once, on the primary of its key's slot, and was captured there.
    assert_eq!(count("SET"), run.commands["SET"].ops);
    assert_eq!(count("GET"), run.commands["GET"].ops);
    assert!(
        report.nodes.iter().all(|n| n.commands > 0),
        "{:?}",
        report.nodes
    );
    assert_eq!(
        report.nodes.iter().map(|n| n.commands).sum::<u64>(),
        trace.len() as u64
    );
}

/// What `args` answers on the primary of `cluster` that holds its key (the others answer
/// MOVED).
fn on_owner(cluster: &common::Cluster, args: &[&str]) -> String {
    let answers: Vec<String> = cluster
        .primaries()
        .iter()
        .map(|s| s.cli(args))
        .filter(|a| !a.starts_with("MOVED"))
        .collect();
    assert_eq!(answers.len(), 1, "{args:?}: {answers:?}");
    answers.into_iter().next().unwrap()
}

#[test]
fn a_replay_against_a_cluster_sends_each_command_to_its_keys_primary() {
    let cluster = common::Cluster::start(3, 0);
    let path = temp("cluster-replay.jsonl");
    let names: Vec<String> = (0..6).map(|c| format!("10.2.0.{c}:5{c}")).collect();
    let mut recs = Vec::new();
    for (c, client) in names.iter().enumerate() {
        for i in 0..30u64 {
            let ms = i * 5 + c as u64;
            recs.push((
                client.as_str(),
                ms,
                args(&["RPUSH", &format!("list{c}"), &i.to_string()]),
            ));
            recs.push((client.as_str(), ms, args(&["GET", &format!("cold{c}:{i}")])));
        }
        let (zset, union) = (format!("{{z{c}}}a"), format!("{{z{c}}}u"));
        let script = "return redis.call('INCR', KEYS[1])";
        recs.push((
            client.as_str(),
            200,
            args(&["EVAL", script, "1", &format!("n{c}")]),
        ));
        recs.push((client.as_str(), 201, args(&["ZADD", &zset, "1", "m"])));
        recs.push((
            client.as_str(),
            202,
            args(&["ZUNIONSTORE", &union, "1", &zset]),
        ));
        recs.push((client.as_str(), 203, args(&["PING"])));
        recs.push((client.as_str(), 204, args(&["ZUNION", "1", &zset])));
    }
    recs.sort_by_key(|r| r.1);
    write_trace(&path, &recs);
    let w = workload(json!({
        "target": { "port": cluster.port(), "cluster": true },
        "replay": { "file": path, "key_prefix": "r:" },
    }));
    let before: Vec<_> = cluster
        .primaries()
        .iter()
        .map(|s| commandstats(s))
        .collect();
    let report = respload::run(&w).unwrap();
    let after: Vec<_> = cluster
        .primaries()
        .iter()
        .map(|s| commandstats(s))
        .collect();
    let delta = |cmd: &str| -> u64 {
        let calls = |m: &BTreeMap<String, u64>| *m.get(cmd).unwrap_or(&0);
        after.iter().map(calls).sum::<u64>() - before.iter().map(calls).sum::<u64>()
    };
    let p = &report.phases[0];
    assert_eq!(
        (p.totals.errors, p.totals.redirects),
        (0, 0),
        "{:?}",
        p.totals.errors_by_kind
    );
    let sent = [
        ("RPUSH", 180),
        ("EVAL", 6),
        ("ZUNIONSTORE", 6),
        ("PING", 6),
        ("ZUNION", 6),
    ];
    for (cmd, n) in sent {
        assert_eq!(delta(cmd), n, "{cmd}");
    }
    // The prefill's SETs, each on its key's primary, and then every GET a hit.
    assert_eq!(delta("SET"), 180);
    let f = p.replay.as_ref().unwrap();
    let fill = f.prefill.as_ref().unwrap();
    assert_eq!((fill.keys, fill.errors), (180, 0));
    let get = &p.commands["GET"];
    assert_eq!((get.hits, get.misses), (180, 0));
    // Each client's order kept, on the primary of its rewritten key.
    let want: Vec<String> = (0..30).map(|i| i.to_string()).collect();
    for c in 0..6 {
        let got = on_owner(&cluster, &["LRANGE", &format!("r:list{c}"), "0", "-1"]);
        assert_eq!(got.lines().collect::<Vec<_>>(), want, "r:list{c}");
        assert_eq!(on_owner(&cluster, &["GET", &format!("r:n{c}")]), "1");
        assert_eq!(on_owner(&cluster, &["ZCARD", &format!("r:{{z{c}}}u")]), "1");
    }
}

#[test]
fn a_model_of_hot_keys_and_a_changing_rate_runs_them_back() {
    use respload::trace::model::{ModelBuilder, ModelOptions};
    let server = Server::start(&[]);
    // 12 s: 4 s at 500/s, 4 s at 2,000/s, 4 s at 800/s. Five keys take 8% of the commands
    // each, the rest is Zipf(0.8) over 3,000 keys; GET:SET 4:1.
    let path = temp("hot-head.jsonl");
    let tail = zipf_ranks(3000, 0.8, 20_000, 0x2545_f491_4f6c_dd1d);
    let mut w = jsonl::Writer::create(&path).unwrap();
    let mut rec = Record::default();
    let mut i = 0usize;
    for (from_s, rate) in [(0u64, 500u64), (4, 2000), (8, 800)] {
        for n in 0..4 * rate {
            rec.clear();
            rec.client = "10.0.0.9:4000".into();
            rec.t_us = 1_700_000_000_000_000 + from_s * 1_000_000 + n * 1_000_000 / rate;
            // Every fifth of the first 25 of each 50 goes to a hot key: 5 x 8% = 40%.
            let key = match i % 50 {
                j if j < 20 => format!("user:h{}", j % 5),
                _ => format!("user:{}", tail[i % tail.len()]),
            };
            if i % 5 == 4 {
                rec.push_bytes(b"SET");
                rec.push_bytes(key.as_bytes());
                rec.push_bytes(b"0123456789");
            } else {
                rec.push_bytes(b"GET");
                rec.push_bytes(key.as_bytes());
            }
            w.write(&rec).unwrap();
            i += 1;
        }
    }
    w.finish().unwrap();
    let traced_ops = i as u64;
    let opts = ModelOptions {
        target_url: Some(server.url()),
        ..ModelOptions::default()
    };
    let model = respload::trace::fit_file(&path, None, &opts).unwrap();
    assert_eq!(model.fit.popularity, "empirical", "{}", model.summary());
    let profile = &model.spec["load"]["rate_profile"];
    let rates: Vec<f64> = profile["rates"]
        .as_array()
        .unwrap_or_else(|| panic!("{}", model.spec))
        .iter()
        .map(|r| r.as_f64().unwrap())
        .collect();
    let want: Vec<f64> = [500.0, 2000.0, 800.0]
        .iter()
        .flat_map(|&r| [r; 4])
        .collect();
    assert_eq!(rates, want);

    let (report, w, ran) = run_captured(&server, &model, "hot-head-run.jsonl");
    let p = &report.phases[0];
    // Every intended request is sent (open loop), whatever the machine did meanwhile; the
    // trace's count, less at most a request per connection in flight at the end.
    let conns = u64::from(w.phases[0].spec.load.connections);
    assert!(
        report.totals.ops <= traced_ops && report.totals.ops + conns >= traced_ops,
        "{} of {traced_ops}",
        report.totals.ops
    );
    // Each 4 s block at its rate: requests count where they finished, so a block loses or
    // gains at most what a stall at its edges moves (a connection's few requests).
    assert_eq!(p.steps.len(), 12);
    for (block, rate) in [500.0, 2000.0, 800.0].iter().enumerate() {
        let steps = &p.steps[block * 4..block * 4 + 4];
        assert!(steps.iter().all(|s| s.target_rate == Some(*rate)));
        let ops: f64 = steps.iter().map(|s| s.ops_per_sec * s.duration_s).sum();
        let asked = rate * 4.0;
        assert!(
            (ops - asked).abs() <= 0.05 * asked,
            "block {block}: {ops} of {asked}; steps {steps:?}"
        );
    }
    // The popularity: the five hot keys are the run's five first keys, each with its 8%.
    let mut per_key: BTreeMap<String, u64> = BTreeMap::new();
    let mut again = ModelBuilder::new();
    for r in &ran {
        *per_key.entry(text(r.arg(1).unwrap())).or_default() += 1;
        again.observe(r);
    }
    let n = ran.len() as u64;
    let prefix = model.spec["keys"]["prefix"].as_str().unwrap();
    for k in 0..5 {
        let got = per_key.get(&format!("{prefix}{k}")).copied().unwrap_or(0) as f64;
        // Binomial: n = 13,200 draws of p = 0.08, sd about 31; within 4 sd.
        let sd = (n as f64 * 0.08 * 0.92).sqrt();
        assert!(
            (got - 0.08 * n as f64).abs() <= 4.0 * sd,
            "key {k}: {got} of {n}"
        );
    }
    let refit = again.fit(&ModelOptions::default());
    assert_eq!(refit.fit.popularity, "empirical", "{}", refit.summary());
}
