//! Merging the reports of hosts that ran one workload together (issue 26): shards started
//! at one instant against a real redis-server, merged, hold what the server counted and the
//! percentiles of their histograms added; merges that would not be one workload's refused.

mod common;

use common::{workload, Server};
use respload::internals::{stats_of, CommandRecorder};
use respload::report::{decode_histogram, percentile, TimelineRow, HOST_LOST};
use respload::{run, Report, Snapshot};
use serde_json::json;
use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

fn now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

/// The shards of `w` run at once (one thread each, as hosts would), started together.
fn run_shards(w: &respload::Workload, count: u32) -> Vec<Report> {
    let at = now() + 1.0;
    let shards: Vec<_> = (0..count)
        .map(|i| w.shard(i, count).unwrap().starting_at(at).unwrap())
        .collect();
    let handles: Vec<_> = shards
        .into_iter()
        .map(|s| std::thread::spawn(move || run(&s).unwrap()))
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

#[test]
fn merged_shards_hold_what_the_server_counted_and_their_added_histograms() {
    let server = Server::start(&[]);
    let w = workload(json!({
        "target": { "url": server.url() },
        "seed": 11,
        "load": { "connections": 5, "requests": 20_003, "pipeline": 2 },
        "keys": { "prefix": "m:", "range": [0, 499] },
        "commands": [{ "name": "set" }, { "name": "get", "weight": 3 }],
        "output": { "interval_histograms": true },
    }));
    let shards = run_shards(&w, 3);
    // Reports in any order: the merge orders them by shard.
    let reversed: Vec<Report> = shards.iter().rev().cloned().collect();
    let merged = Report::merge(&reversed).unwrap();
    // Every request the server executed, and no more.
    let (sets, gets) = (server.calls("set"), server.calls("get"));
    assert_eq!(sets + gets, 20_003);
    assert_eq!(merged.totals.ops, 20_003);
    assert_eq!(merged.commands["SET"].ops, sets);
    assert_eq!(merged.commands["GET"].ops, gets);
    assert_eq!(merged.totals.errors, 0);
    assert_eq!(
        merged.commands["GET"].hits + merged.commands["GET"].misses,
        gets
    );
    // The percentiles are those of one histogram holding every host's latencies.
    let mut added = decode_histogram(&shards[0].totals.histogram).unwrap();
    for s in &shards[1..] {
        added
            .add(decode_histogram(&s.totals.histogram).unwrap())
            .unwrap();
    }
    assert_eq!(added.len(), 20_003);
    let max_ns = shards
        .iter()
        .map(|s| (s.totals.latency_ms.max * 1e6).round() as u64)
        .max()
        .unwrap();
    for (q, got) in [
        (0.5, merged.totals.latency_ms.p50),
        (0.99, merged.totals.latency_ms.p99),
        (0.999, merged.totals.latency_ms.p99_9),
    ] {
        let want = percentile(&added, q).min(max_ns) as f64 / 1e6;
        assert_eq!(got, want, "p{q}");
    }
    assert_eq!(merged.totals.latency_ms.max, max_ns as f64 / 1e6);
    let merged_h = decode_histogram(&merged.totals.histogram).unwrap();
    assert_eq!(merged_h.len(), 20_003);
    // The mean from exact sums: each host's mean weighted by its requests.
    let mean: f64 = shards
        .iter()
        .map(|s| s.totals.latency_ms.mean * s.totals.ops as f64)
        .sum::<f64>()
        / 20_003.0;
    assert!((merged.totals.latency_ms.mean - mean).abs() < 1e-9);
    // Rates and connections summed; each host listed, started together (one machine).
    let rate: f64 = shards.iter().map(|s| s.totals.ops_per_sec).sum();
    assert!((merged.totals.ops_per_sec - rate).abs() < 1e-6);
    assert_eq!(merged.client.connections, 5);
    assert_eq!(merged.hosts.len(), 3);
    assert_eq!(
        merged.hosts.iter().map(|h| h.shard).collect::<Vec<_>>(),
        vec![Some(0), Some(1), Some(2)]
    );
    assert_eq!(
        merged.hosts.iter().map(|h| h.ops).sum::<u64>(),
        merged.totals.ops
    );
    for (h, s) in merged.hosts.iter().zip(&shards) {
        let skew = h.start_skew_ms;
        assert_eq!(Some(skew), s.start_skew_ms);
        // Small on one machine (a loaded one: threads wake late).
        assert!((0.0..250.0).contains(&skew), "start skew {skew} ms");
    }
    // The whole workload, not a share: its budget and connections.
    assert_eq!(merged.workload["load"]["requests"], json!(20_003));
    assert_eq!(merged.workload["load"]["connections"], json!(5));
    assert!(merged.shard.is_none());
    // Timeline rows line up by wall-clock second and sum to the totals.
    let rows: u64 = merged.timeline.iter().map(|r| r.ops).sum();
    assert_eq!(rows, 20_003);
    let longest = shards.iter().map(|s| s.timeline.len()).max().unwrap();
    assert_eq!(
        merged.timeline.len(),
        longest,
        "rows from hosts of {longest}"
    );
    let conns = merged.timeline.iter().map(|r| r.connections).max();
    assert_eq!(conns, Some(5));
    // Phases merge the same way; the merged report saves and loads back.
    assert_eq!(merged.phases[0].totals, merged.totals);
    let text = merged.to_json();
    assert_eq!(Report::from_json_str(&text).unwrap(), merged);
}

#[test]
fn merging_refuses_what_is_not_one_workloads_reports() {
    let server = Server::start(&[]);
    let spec = |requests: u64| {
        workload(json!({
            "target": { "url": server.url() },
            "seed": 3,
            "load": { "connections": 2, "requests": requests },
        }))
    };
    let w = spec(300);
    let shards: Vec<Report> = (0..2)
        .map(|i| run(&w.shard(i, 2).unwrap()).unwrap())
        .collect();
    let err = |reports: &[Report]| Report::merge(reports).unwrap_err().to_string();
    // A missing shard, a shard twice.
    let e = err(&shards[..1]);
    assert!(e.contains("shard(s) 1 of 2 missing"), "{e}");
    let e = err(&[shards[0].clone(), shards[0].clone()]);
    assert!(
        e.contains("reports[1].shard") && e.contains("also reports[0]"),
        "{e}"
    );
    // Another workload's shard: named by where the workloads differ.
    let other = run(&spec(302).shard(1, 2).unwrap()).unwrap();
    let e = err(&[shards[0].clone(), other]);
    assert!(
        e.contains("reports[1].workload") && e.contains("load.requests"),
        "{e}"
    );
    // Shards with an unsharded run; a merged report again; another schema version.
    let whole = run(&w).unwrap();
    let e = err(&[shards[0].clone(), shards[1].clone(), whole.clone()]);
    assert!(
        e.contains("reports[2].shard") && e.contains("missing"),
        "{e}"
    );
    let merged = Report::merge(&shards).unwrap();
    let e = err(&[merged.clone(), shards[0].clone()]);
    assert!(e.contains("already a merged report"), "{e}");
    let mut old = shards[1].clone();
    old.schema_version = 1;
    let e = err(&[shards[0].clone(), old]);
    assert!(e.contains("reports[1].schema_version"), "{e}");
    assert!(err(&[]).contains("no report to merge"));
    // A shard count from a file is not an allocation: a huge one is refused by what is missing.
    let huge: Vec<Report> = shards
        .iter()
        .map(|r| {
            let mut r = r.clone();
            r.shard.as_mut().unwrap().count = u32::MAX;
            r
        })
        .collect();
    let e = err(&huge);
    assert!(
        e.contains("shard(s) 2, 3,") && e.contains("of 4294967295 missing"),
        "{e}"
    );
    // Unsharded runs of one workload merge too (the same spec run on several hosts).
    let twice = Report::merge(&[whole.clone(), run(&w).unwrap()]).unwrap();
    assert_eq!(twice.totals.ops, 600);
    assert_eq!(merged.totals.ops, 300);
    assert_eq!(
        server.calls("set") + server.calls("get"),
        300 + 151 + 300 + 300
    );
}

#[test]
fn a_start_instant_already_past_fails_before_any_traffic() {
    let server = Server::start(&[]);
    let w = workload(json!({
        "target": { "url": server.url() },
        "load": { "connections": 1, "requests": 100 },
    }));
    let e = run(&w.starting_at(now() - 5.0).unwrap())
        .unwrap_err()
        .to_string();
    assert!(e.contains("start_at") && e.contains("passed"), "{e}");
    assert_eq!(server.calls("set") + server.calls("get"), 0);
    // Half a second late is allowed, and reported as the skew.
    let r = run(&w.starting_at(now() - 0.5).unwrap()).unwrap();
    assert_eq!(r.totals.ops, 100);
    let skew = r.start_skew_ms.unwrap();
    assert!(skew >= 500.0, "{skew}");
    // On time: the first request went out after the instant, not before.
    let at = now() + 1.0;
    let r = run(&w.starting_at(at).unwrap()).unwrap();
    assert_eq!(r.start_at, Some(at));
    let skew = r.start_skew_ms.unwrap();
    assert!((0.0..250.0).contains(&skew), "{skew}");
    assert!(r.phases[0].started_at >= at);
    assert!((r.timeline[0].unix_s - (r.phases[0].started_at + r.timeline[0].t)).abs() < 1e-6);
    let e = w.starting_at(f64::NAN).unwrap_err().to_string();
    assert!(e.contains("start_at"), "{e}");
    // Milliseconds given for seconds: refused, not a wait of 55,000 years.
    let e = w.starting_at(now() * 1000.0).unwrap_err().to_string();
    assert!(e.contains("more than a day ahead"), "{e}");
}

/// What `server` says in one `INFO clients commandstats` (one redis-cli, itself a client):
/// the clients connected besides that redis-cli, and each command's calls by name (`get`,
/// `client|setname`).
fn clients_and_calls(server: &Server) -> (u64, BTreeMap<String, u64>) {
    let info = server.cli(&["INFO", "clients", "commandstats"]);
    let clients = info
        .lines()
        .find_map(|l| l.strip_prefix("connected_clients:"))
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or_else(|| panic!("{info}"));
    let calls = info
        .lines()
        .filter_map(|l| l.strip_prefix("cmdstat_")?.split_once(":calls="))
        .map(|(name, rest)| {
            (
                name.to_string(),
                rest.split(',').next().unwrap().parse().unwrap(),
            )
        })
        .collect();
    (clients - 1, calls)
}

#[test]
fn a_run_opens_its_connections_then_sends_nothing_until_its_start_instant() {
    let server = Server::start(&[]);
    let w = workload(json!({
        "target": { "url": server.url() },
        "load": { "connections": 6, "threads": 2, "requests": 600 },
        "commands": [{ "name": "set" }, { "name": "get" }],
    }));
    let at = now() + 3.0;
    let waiting = w.starting_at(at).unwrap();
    let host = std::thread::spawn(move || run(&waiting).unwrap());
    // What the server saw while the run waited: samples whose answer came before the
    // instant (one asked just before it may be answered after).
    let mut seen = Vec::new();
    while now() < at - 0.1 {
        let (clients, calls) = clients_and_calls(&server);
        let answered = now();
        if answered < at {
            seen.push((at - answered, clients, calls));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let report = host.join().unwrap();
    let figures: Vec<String> = seen
        .iter()
        .map(|(before, clients, calls)| {
            format!("{before:.2} s before: {clients} clients, {calls:?}")
        })
        .collect();
    // All 6 connections open well before the instant, and held open until it (the
    // connection that first reached the server is closed; observing it begins at the start).
    let open = seen.iter().position(|s| s.1 == 6).unwrap_or(seen.len());
    assert!(open < seen.len() && seen[open].0 > 1.0, "{figures:#?}");
    assert!(seen[open..].iter().all(|s| s.1 == 6), "{figures:#?}");
    assert!(seen.last().unwrap().0 < 1.0, "{figures:#?}");
    // Not one of the workload's commands before the instant (the setup's, CLIENT SETNAME,
    // CONFIG GET, INFO, may be there).
    let sent = |calls: &BTreeMap<String, u64>| {
        calls.get("get").unwrap_or(&0) + calls.get("set").unwrap_or(&0)
    };
    assert!(seen.iter().all(|s| sent(&s.2) == 0), "{figures:#?}");
    // Then, from the instant on, all of it.
    let (_, calls) = clients_and_calls(&server);
    assert_eq!(sent(&calls), 600, "{calls:?}");
    assert_eq!(report.totals.ops, 600);
    assert!(report.phases[0].started_at >= at);
}

/// Each host's rows keyed by the wall-clock second they began, counted from `at` (host `i`
/// started `offsets[i]` whole seconds after it): its measurement starts within a fraction of
/// a second of its instant, and a row begins `t - interval_s` into it.
fn rows_by_second(hosts: &[Report], offsets: &[i64]) -> BTreeMap<i64, Vec<u64>> {
    let mut by_second: BTreeMap<i64, Vec<u64>> = BTreeMap::new();
    for (h, offset) in hosts.iter().zip(offsets) {
        for row in &h.timeline {
            let second = offset + (row.t - row.interval_s).round() as i64;
            by_second.entry(second).or_default().push(row.ops);
        }
    }
    by_second
}

/// The wall-clock end of each second of [`rows_by_second`]: its latest row's.
fn want_ends(hosts: &[Report], offsets: &[i64]) -> Vec<f64> {
    let mut ends: BTreeMap<i64, f64> = BTreeMap::new();
    for (h, offset) in hosts.iter().zip(offsets) {
        for row in &h.timeline {
            let second = offset + (row.t - row.interval_s).round() as i64;
            let end = ends.entry(second).or_insert(row.unix_s);
            *end = end.max(row.unix_s);
        }
    }
    ends.into_values().collect()
}

#[test]
fn a_host_started_seconds_later_adds_its_rows_into_the_seconds_they_began() {
    let server = Server::start(&[]);
    let w = workload(json!({
        "target": { "url": server.url() },
        "load": { "connections": 2, "rate": 600, "duration": "3s" },
        "commands": [{ "name": "set" }],
        "output": { "interval_histograms": true },
    }));
    // Host 1 starts 2 s after host 0: whole seconds, so that each of its rows falls in a
    // known second of host 0's (a row is placed by the second nearest its start, and the
    // hosts' start skews are a small fraction of one).
    let at = now() + 1.0;
    let offsets = [0, 2];
    let handles: Vec<_> = (0..2u32)
        .map(|i| {
            let s = w
                .shard(i, 2)
                .unwrap()
                .starting_at(at + offsets[i as usize] as f64)
                .unwrap();
            std::thread::spawn(move || run(&s).unwrap())
        })
        .collect();
    let hosts: Vec<Report> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    // The hosts started late by about the same (a busy machine wakes threads late): far
    // from the half second between them that would move host 1's rows by one.
    let skews: Vec<f64> = hosts.iter().map(|h| h.start_skew_ms.unwrap()).collect();
    assert!((skews[1] - skews[0]).abs() < 400.0, "{skews:?}");
    let want = rows_by_second(&hosts, &offsets);
    // Host 0's three whole seconds, then host 1's two seconds later: they share second 2,
    // and second 3 when host 0 has a short last row (it begins at its third second).
    let both: Vec<i64> = want
        .iter()
        .filter(|(_, ops)| ops.len() == 2)
        .map(|(&s, _)| s)
        .collect();
    assert!(both == [2, 3] || both == [2], "{want:?}");
    let merged = Report::merge(&hosts).unwrap();
    // One merged row per second of the union, in order, each the sum of that second's rows.
    let got: Vec<u64> = merged.timeline.iter().map(|r| r.ops).collect();
    let sums: Vec<u64> = want.values().map(|ops| ops.iter().sum()).collect();
    assert_eq!(got, sums, "{want:?}");
    // The union of the seconds: every host's row, less one per second they share.
    let rows: usize = hosts.iter().map(|h| h.timeline.len()).sum();
    assert_eq!(merged.timeline.len(), rows - both.len());
    let conns: Vec<u32> = merged.timeline.iter().map(|r| r.connections).collect();
    let hosts_of: Vec<u32> = want.values().map(|ops| ops.len() as u32).collect();
    assert_eq!(conns, hosts_of, "one connection per host and row");
    // Each merged row ends when its latest host's row ends (wall clock), its `t` counted
    // from the first host's start: rising, and the phase measured for the whole span.
    let start = hosts
        .iter()
        .map(|h| h.phases[0].started_at)
        .fold(f64::INFINITY, f64::min);
    for (r, ends) in merged.timeline.iter().zip(want_ends(&hosts, &offsets)) {
        assert_eq!(r.unix_s, ends, "{:?}", merged.timeline);
        assert!(
            (r.t - (r.unix_s - start)).abs() < 0.01,
            "{:?}",
            merged.timeline
        );
    }
    let ts: Vec<f64> = merged.timeline.iter().map(|r| r.t).collect();
    assert!(ts.windows(2).all(|w| w[0] < w[1]), "{ts:?}");
    let phase = &merged.phases[0];
    let last = hosts
        .iter()
        .map(|h| h.phases[0].started_at + h.phases[0].duration_s)
        .fold(0.0, f64::max);
    assert!(
        (phase.duration_s - (last - start)).abs() < 1e-6,
        "{}",
        phase.duration_s
    );
    assert!(phase.duration_s > 4.5 && ts.last().unwrap() <= &(phase.duration_s + 0.01));
    assert_eq!(merged.duration_s, phase.duration_s);
    // Together, every request the server executed.
    assert_eq!(got.iter().sum::<u64>(), merged.totals.ops);
    assert_eq!(merged.totals.ops, server.calls("set"));
    assert_eq!(
        merged.totals.ops,
        hosts.iter().map(|h| h.totals.ops).sum::<u64>()
    );
}

#[test]
fn merged_latency_equals_one_recorder_holding_every_hosts_requests() {
    // Two hosts' recorders and the one recorder a single host would have had.
    let (mut a, mut b, mut both) = (
        CommandRecorder::default(),
        CommandRecorder::default(),
        CommandRecorder::default(),
    );
    for i in 0..5000u64 {
        let ns = 20_000 + (i * 7919) % 3_000_000;
        let r = if i % 3 == 0 { &mut a } else { &mut b };
        r.record_latency(ns);
        r.ops += 1;
        both.record_latency(ns);
        both.ops += 1;
    }
    let (sa, sb, sboth) = (stats_of(&a, 1.0), stats_of(&b, 1.0), stats_of(&both, 1.0));
    let report = |s: &respload::report::Stats| Report {
        schema_version: respload::report::SCHEMA_VERSION,
        totals: s.clone(),
        ..Report::default()
    };
    let merged = Report::merge(&[report(&sa), report(&sb)]).unwrap().totals;
    let (m, want) = (&merged.latency_ms, &sboth.latency_ms);
    assert_eq!(
        (m.p50, m.p90, m.p95, m.p99, m.p99_9, m.p99_99, m.min, m.max),
        (
            want.p50,
            want.p90,
            want.p95,
            want.p99,
            want.p99_9,
            want.p99_99,
            want.min,
            want.max
        )
    );
    assert!((m.mean - want.mean).abs() < 1e-9 * want.mean);
    assert!((m.stddev - want.stddev).abs() < 1e-6 * want.stddev);
    assert_eq!(merged.ops, 5000);
    assert_eq!(merged.ops_per_sec, 5000.0);
}

/// A timeline row of `ops` requests ending at `t` (wall clock `start + t`), `interval_s` long.
fn row(start: f64, t: f64, interval_s: f64, ops: u64) -> respload::report::TimelineRow {
    respload::report::TimelineRow {
        t,
        unix_s: start + t,
        interval_s,
        ops,
        ops_per_sec: ops as f64 / interval_s,
        connections: 1,
        partial: interval_s < 0.5,
        ..Default::default()
    }
}

#[test]
fn rows_line_up_by_the_second_they_began_and_short_last_rows_stay_apart() {
    let host = |start: f64, shard: u32| {
        let mut r = Report {
            schema_version: respload::report::SCHEMA_VERSION,
            shard: Some(respload::report::ShardOf {
                index: shard,
                count: 2,
                workload: json!({}),
            }),
            ..Report::default()
        };
        r.timeline = vec![
            row(start, 1.0, 1.0, 100),
            row(start, 2.0, 1.0, 100),
            row(start, 2.004, 0.004, 2),
        ];
        // The run's timeline is its measured phases': the merge makes it from theirs.
        r.phases = vec![respload::report::PhaseReport {
            name: "main".into(),
            measured: true,
            duration_s: 2.004,
            timeline: r.timeline.clone(),
            ..Default::default()
        }];
        r
    };
    // The second host started 30 ms after the first.
    let merged = Report::merge(&[host(1000.0, 0), host(1000.03, 1)]).unwrap();
    let rows: Vec<(u64, u32, bool)> = merged
        .timeline
        .iter()
        .map(|r| (r.ops, r.connections, r.partial))
        .collect();
    assert_eq!(rows, vec![(200, 2, false), (200, 2, false), (4, 2, true)]);
    assert_eq!(merged.timeline[0].ops_per_sec, 200.0);
    // Rows without a wall-clock time (reports written before it) line up by `t`.
    let mut old = [host(0.0, 0), host(0.0, 1)];
    for r in &mut old {
        r.timeline.iter_mut().for_each(|row| row.unix_s = 0.0);
        r.phases[0]
            .timeline
            .iter_mut()
            .for_each(|row| row.unix_s = 0.0);
    }
    assert_eq!(Report::merge(&old).unwrap().timeline.len(), 3);
}

#[test]
fn a_lost_hosts_report_is_made_of_its_snapshots_and_merges_with_the_others() {
    let server = Server::start(&[]);
    let w = workload(json!({
        "target": { "url": server.url() },
        "load": { "connections": 3, "rate": 1500, "duration": "3s" },
        "commands": [{ "name": "set" }],
    }));
    let at = now() + 1.0;
    let shard = |i: u32| w.shard(i, 3).unwrap().starting_at(at).unwrap();
    let kept: Vec<_> = [0, 2]
        .into_iter()
        .map(|i| {
            let s = shard(i);
            std::thread::spawn(move || run(&s).unwrap())
        })
        .collect();
    // Shard 1 streams its snapshots and is gone after its second measured one (a host lost).
    let runner = respload::Runner::start(shard(1)).unwrap();
    let mut snapshots: Vec<Snapshot> = Vec::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while snapshots
        .iter()
        .filter(|s| s.measured && s.row.t > 0.0)
        .count()
        < 2
    {
        assert!(std::time::Instant::now() < deadline, "{snapshots:?}");
        if let Some(s) = runner.next_snapshot(std::time::Duration::from_secs(5)) {
            snapshots.push(s);
        }
    }
    drop(runner);
    let kept: Vec<Report> = kept.into_iter().map(|h| h.join().unwrap()).collect();
    let why = "host 1 was lost mid-run";
    let lost = Report::of_lost_host(&kept[0], 1, "h1", &snapshots, why);
    let rows: Vec<&TimelineRow> = snapshots
        .iter()
        .filter(|s| s.row.t > 0.0)
        .map(|s| &s.row)
        .collect();
    let ops: u64 = rows.iter().map(|r| r.ops).sum();
    assert!(
        (900..1500).contains(&ops),
        "{ops} ops in two seconds at 500/s"
    );
    assert_eq!(lost.totals.ops, ops);
    assert_eq!(lost.timeline.iter().map(|r| r.ops).sum::<u64>(), ops);
    assert_eq!(lost.phases[0].totals, lost.totals);
    assert!(lost.interrupted && lost.phases[0].interrupted);
    assert_eq!(lost.error.as_deref(), Some(why));
    assert_eq!(
        (lost.host.as_str(), lost.shard.as_ref().map(|s| s.index)),
        ("h1", Some(1))
    );
    assert!(!lost.validity.trusted);
    let check = &lost.phases[0].validity.checks[0];
    assert_eq!((check.check.as_str(), check.passed), (HOST_LOST, false));
    // Its latency is that of its rows' interval histograms added.
    let mut added = decode_histogram(&rows[0].histogram).unwrap();
    for r in &rows[1..] {
        added.add(decode_histogram(&r.histogram).unwrap()).unwrap();
    }
    let max_ns = (lost.totals.latency_ms.max * 1e6).round() as u64;
    assert_eq!(added.len(), ops);
    assert_eq!(
        lost.totals.latency_ms.p99,
        percentile(&added, 0.99).min(max_ns) as f64 / 1e6
    );
    // Merged with the others: they are kept whole, it is marked failed with what it sent.
    let merged = Report::merge(&[kept[0].clone(), lost.clone(), kept[1].clone()]).unwrap();
    assert_eq!(
        merged.totals.ops,
        kept[0].totals.ops + ops + kept[1].totals.ops
    );
    assert!(merged.hosts[1].interrupted && !merged.hosts[0].interrupted);
    assert_eq!(merged.hosts[1].ops, ops);
    assert!(!merged.validity.trusted);
    assert!(merged.validity.checks.iter().any(|c| c.check == HOST_LOST));
    // The server holds every request the reports count, and at most the lost host's last
    // second more (sent after its last snapshot).
    let extra = server.calls("set") - merged.totals.ops;
    assert!(extra <= 600, "{extra} requests the reports do not hold");

    // The live line: one second's snapshots of two hosts, merged.
    let (a, b) = (rows[0], rows[1]);
    let both = Snapshot::merge(&[snapshots_of(a, true), snapshots_of(b, false)]).unwrap();
    assert_eq!(both.row.ops, a.ops + b.ops);
    assert_eq!(both.row.connections, a.connections + b.connections);
    assert!(both.measured);
    let mut pair = decode_histogram(&a.histogram).unwrap();
    pair.add(decode_histogram(&b.histogram).unwrap()).unwrap();
    assert_eq!(decode_histogram(&both.row.histogram).unwrap(), pair);
    let max_ns = (a.latency_ms.max.max(b.latency_ms.max) * 1e6).round() as u64;
    assert_eq!(
        both.row.latency_ms.p50,
        percentile(&pair, 0.5).min(max_ns) as f64 / 1e6
    );
    assert!(Snapshot::merge(&[]).is_none());

    // A host stopped before a later phase gets that phase, empty, to merge by.
    let mut two = kept[0].clone();
    let mut later = two.phases[0].clone();
    later.name = "later".into();
    two.phases.push(later);
    let padded = kept[1].clone().with_phases_of(&two);
    let names: Vec<&str> = padded.phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, [kept[1].phases[0].name.as_str(), "later"]);
    let empty = &padded.phases[1];
    assert!(empty.interrupted && empty.timeline.is_empty() && empty.validity.trusted);
    assert_eq!(empty.totals.ops, 0);
    assert_eq!(padded.phases[0], kept[1].phases[0]);
}

/// A snapshot of the main phase holding `row`.
fn snapshots_of(row: &TimelineRow, measured: bool) -> Snapshot {
    Snapshot {
        phase: "main".into(),
        measured,
        row: row.clone(),
    }
}

/// What the merge sums besides the totals, against a real 3-primary cluster: each node's
/// stats (the hosts' summed, and what that primary executed), errors by kind, the client's
/// cost (each host's kept, and summed); the server's samples are taken once (shard 0
/// observes), not once per host.
#[test]
fn nodes_errors_and_client_cost_are_summed_and_server_samples_taken_once() {
    let cluster = common::Cluster::start(3, 0);
    let w = workload(json!({
        "target": { "port": cluster.port(), "cluster": true },
        "seed": 5,
        "load": { "connections": 3, "rate": 1200, "duration": "2500ms" },
        "keys": { "prefix": "n:", "range": [0, 299] },
        // Two kinds of error, counted per host and summed: INCRBY's increment is no integer
        // (ERR, every time), and HINCRBY fails on a key SET wrote (WRONGTYPE).
        "commands": [
            { "name": "set" },
            { "template": "HINCRBY {key} f 1" },
            { "template": "INCRBY {key} x" },
        ],
    }));
    let shards = run_shards(&w, 3);
    let merged = Report::merge(&shards).unwrap();
    assert_eq!(
        merged.totals.ops, 3000,
        "{:?}",
        merged.totals.errors_by_kind
    );
    // Per node: the hosts' stats summed, and what the node executed.
    assert_eq!(merged.nodes.len(), 3, "{:?}", merged.nodes.keys());
    for p in cluster.primaries() {
        let addr = format!("127.0.0.1:{}", p.port);
        let node = &merged.nodes[&addr];
        let hosts: u64 = shards.iter().map(|s| s.nodes[&addr].ops).sum();
        assert_eq!(node.ops, hosts, "{addr}");
        let calls = p.calls("set") + p.calls("hincrby") + p.calls("incrby");
        assert_eq!(node.ops, calls, "{addr}");
        let errors: u64 = shards.iter().map(|s| s.nodes[&addr].errors).sum();
        assert_eq!(node.errors, errors, "{addr}");
    }
    // Errors by kind: each kind the sum of the hosts'.
    let (incrby, hincrby) = (&merged.commands["INCRBY"], &merged.commands["HINCRBY"]);
    assert!(incrby.ops > 0 && hincrby.errors > 0);
    assert_eq!(incrby.errors, incrby.ops);
    assert_eq!(merged.totals.errors, incrby.errors + hincrby.errors);
    let errors: u64 = shards.iter().map(|s| s.totals.errors).sum();
    assert_eq!(merged.totals.errors, errors);
    let mut kinds = std::collections::BTreeMap::<String, u64>::new();
    for s in &shards {
        for (kind, n) in &s.totals.errors_by_kind {
            *kinds.entry(kind.clone()).or_default() += n;
        }
    }
    assert_eq!(kinds.len(), 2, "ERR and WRONGTYPE expected: {kinds:?}");
    assert_eq!(merged.totals.errors_by_kind, kinds);
    // The client's cost: each host's as its report says, and their sum.
    for (h, s) in merged.hosts.iter().zip(&shards) {
        assert_eq!(h.client, s.client);
        assert_eq!(h.errors, s.totals.errors);
    }
    let sum = |f: fn(&respload::report::ClientStats) -> f64| -> f64 {
        shards.iter().map(|s| f(&s.client)).sum()
    };
    assert!((merged.client.cpu_user_s - sum(|c| c.cpu_user_s)).abs() < 1e-9);
    assert!((merged.client.cpu_sys_s - sum(|c| c.cpu_sys_s)).abs() < 1e-9);
    assert_eq!(merged.client.threads, 3);
    assert_eq!(merged.client.connections, 3);
    // Server samples: shard 0's, taken once for the run, not once per host.
    assert!(shards[1..]
        .iter()
        .all(|s| s.server_timeline.is_empty() && s.server_nodes.is_empty()));
    assert!(!shards[0].server_nodes.is_empty());
    assert_eq!(merged.server_timeline, shards[0].server_timeline);
    assert_eq!(merged.server_nodes, shards[0].server_nodes);
}
