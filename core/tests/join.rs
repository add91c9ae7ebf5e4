//! Joining the reports of a workload's phases run one by one (the Ray engine's barrier
//! between phases, issue 26) into the report of one run: against real redis-servers, a
//! 2-phase workload run whole and run phase by phase give the same exact figures, and
//! reports that are not the phases of one workload in order are refused.

mod common;

use common::{workload, Server};
use respload::report::{decode_histogram, percentile};
use respload::{run, Report, Workload};
use serde_json::{json, Value as Json};

/// A populate phase writing keys 0..=999 in order, then a measured phase of GETs on them;
/// a limit on the run's results and one on the measure phase's.
fn spec(url: &str) -> Json {
    json!({
        "target": { "url": url },
        "seed": 5,
        "keys": { "prefix": "j:", "range": [0, 999] },
        "load": { "connections": 3, "pipeline": 4 },
        "output": { "interval_histograms": true },
        "thresholds": { "max_ms": 60_000, "ops_per_sec": 1 },
        "phases": [
            { "name": "populate", "load": { "requests": 1000 },
              "keys": { "distribution": "sequential" }, "commands": [{ "name": "set" }] },
            { "name": "measure", "load": { "requests": 4000 },
              "commands": [{ "name": "get" }], "thresholds": { "error_rate": 0 } },
        ],
    })
}

/// Each phase of `w` as a workload of its own (as the Ray engine runs them).
fn phases_of(w: &Workload) -> Vec<Workload> {
    let all = w.to_json_value()["phases"].as_array().unwrap().clone();
    all.into_iter().map(workload).collect()
}

fn names(r: &Report) -> Vec<&str> {
    r.phases.iter().map(|p| p.name.as_str()).collect()
}

#[test]
fn joined_phases_hold_what_one_run_of_the_workload_holds() {
    let (a, b) = (Server::start(&[]), Server::start(&[]));
    let whole = run(&workload(spec(&a.url()))).unwrap();
    let w = workload(spec(&b.url()));
    let parts: Vec<Report> = phases_of(&w).iter().map(|p| run(p).unwrap()).collect();
    let joined = Report::join(&w.redacted(), &parts).unwrap();

    // What the server executed, as one run of the workload executes it.
    assert_eq!(b.calls("set"), 1000);
    assert_eq!(b.calls("get"), 4000);
    assert_eq!(names(&joined), names(&whole));
    assert_eq!(joined.workload, w.redacted());
    for r in [&whole, &joined] {
        assert_eq!(r.totals.ops, 5000);
        assert_eq!(r.totals.errors, 0);
        assert_eq!(r.commands["SET"].ops, 1000);
        assert_eq!(r.commands["GET"].ops, 4000);
        assert_eq!(r.commands["GET"].hits, 4000, "every key was written first");
        assert_eq!(r.phases[1].totals.ops, 4000);
    }
    // The phases as they ran, each keeping its own figures.
    for (p, part) in joined.phases.iter().zip(&parts) {
        assert_eq!(p.totals, part.phases[0].totals);
        assert_eq!(p.timeline, part.phases[0].timeline);
    }
    // Percentiles of one histogram holding both phases' latencies.
    let mut added = decode_histogram(&parts[0].totals.histogram).unwrap();
    added
        .add(decode_histogram(&parts[1].totals.histogram).unwrap())
        .unwrap();
    assert_eq!(added.len(), 5000);
    let max = parts
        .iter()
        .map(|p| p.totals.latency_ms.max)
        .fold(0.0, f64::max);
    assert_eq!(joined.totals.latency_ms.max, max);
    for (q, got) in [
        (0.5, joined.totals.latency_ms.p50),
        (0.99, joined.totals.latency_ms.p99),
        (0.999, joined.totals.latency_ms.p99_9),
    ] {
        let want = percentile(&added, q).min((max * 1e6).round() as u64) as f64 / 1e6;
        assert_eq!(got, want, "p{q}");
    }
    assert_eq!(
        decode_histogram(&joined.totals.histogram).unwrap().len(),
        5000
    );
    // Per command, the phase that ran it; the rate over the measured seconds of both.
    let (get, measured_get) = (&joined.commands["GET"], &parts[1].commands["GET"]);
    assert_eq!(get.latency_ms.p99, measured_get.latency_ms.p99);
    let secs: f64 = parts.iter().map(|p| p.duration_s).sum();
    assert_eq!(joined.duration_s, secs);
    assert_eq!(joined.totals.ops_per_sec, 5000.0 / secs);
    // The run's timeline: the phases' rows, `t` counting on.
    let rows = parts[0].timeline.len() + parts[1].timeline.len();
    assert_eq!(joined.timeline.len(), rows);
    let first_of_measure = &joined.timeline[parts[0].timeline.len()];
    assert_eq!(
        first_of_measure.t,
        parts[1].timeline[0].t + parts[0].duration_s
    );
    assert_eq!(joined.timeline.iter().map(|r| r.ops).sum::<u64>(), 5000);
    // The run's thresholds judged on the joined figures, each phase's under its name.
    let listed = |r: &Report| {
        r.thresholds
            .iter()
            .map(|t| t.name.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(listed(&joined), listed(&whole));
    assert_eq!(
        listed(&joined),
        ["max_ms", "ops_per_sec", "phases.measure.error_rate"]
    );
    let rate = &joined.thresholds[1];
    assert_eq!(rate.value, Some(joined.totals.ops_per_sec));
    assert!(joined.passed && whole.passed);
    assert!(!joined.interrupted && joined.error.is_none());
    // Client cost added over the phases; it saves and loads back.
    let cpu: f64 = parts.iter().map(|p| p.client.cpu_user_s).sum();
    assert!((joined.client.cpu_user_s - cpu).abs() < 1e-9);
    assert_eq!(Report::from_json_str(&joined.to_json()).unwrap(), joined);
}

#[test]
fn a_run_threshold_fails_on_the_joined_figures() {
    let server = Server::start(&[]);
    let mut s = spec(&server.url());
    // The run's limits hold; the measure phase's own cannot.
    s["thresholds"] = json!({ "commands": { "GET": { "p99_ms": 60_000 } }, "error_rate": 0 });
    s["phases"][1]["thresholds"] = json!({ "ops_per_sec": 1e12 });
    let w = workload(s);
    let parts: Vec<Report> = phases_of(&w).iter().map(|p| run(p).unwrap()).collect();
    assert!(!parts[1].passed);
    let joined = Report::join(&w.redacted(), &parts).unwrap();
    assert!(!joined.passed);
    let failed: Vec<&str> = joined
        .thresholds
        .iter()
        .filter(|t| !t.passed)
        .map(|t| t.name.as_str())
        .collect();
    assert_eq!(failed, ["phases.measure.ops_per_sec"]);
    let get = joined
        .thresholds
        .iter()
        .find(|t| t.name == "commands.GET.p99_ms")
        .unwrap();
    assert_eq!(get.value, Some(joined.commands["GET"].latency_ms.p99));
}

#[test]
fn each_hosts_phases_joined_then_merged_hold_the_merged_phases_joined() {
    let server = Server::start(&[]);
    let w = workload(spec(&server.url()));
    let phases = phases_of(&w);
    // Two hosts, each phase run as shards started together (a barrier between phases).
    let by_phase: Vec<Vec<Report>> = phases
        .iter()
        .map(|p| {
            let shards: Vec<Workload> = (0..2).map(|i| p.shard(i, 2).unwrap()).collect();
            let handles: Vec<_> = shards
                .into_iter()
                .map(|s| std::thread::spawn(move || run(&s).unwrap()))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        })
        .collect();
    assert_eq!(server.calls("set"), 1000);
    assert_eq!(server.calls("get"), 4000);
    let merged: Vec<Report> = by_phase.iter().map(|r| Report::merge(r).unwrap()).collect();
    let joined = Report::join(&w.redacted(), &merged).unwrap();
    let hosts: Vec<Report> = (0..2)
        .map(|i| {
            let own: Vec<Report> = by_phase.iter().map(|r| r[i].clone()).collect();
            Report::join(&w.redacted(), &own).unwrap()
        })
        .collect();
    assert_eq!(hosts[1].shard.as_ref().unwrap().workload, w.redacted());
    let again = Report::merge(&hosts).unwrap();
    for r in [&joined, &again] {
        assert_eq!(names(r), ["populate", "measure"]);
        assert_eq!(r.totals.ops, 5000);
        assert_eq!(r.commands["GET"].hits, 4000, "every key was written first");
        assert_eq!(r.hosts.len(), 2);
        assert_eq!(r.workload, w.redacted());
        assert!(r.passed);
    }
    let (a, b) = (&joined.totals.latency_ms, &again.totals.latency_ms);
    assert_eq!((a.p50, a.p99, a.max), (b.p50, b.p99, b.max));
    assert_eq!(joined.hosts[0].ops, hosts[0].totals.ops);
    assert_eq!(joined.timeline.len(), again.timeline.len());
    // Each host's own seconds, joined run after run as its report's timeline is, and as
    // merging the joined hosts gives them.
    for (i, h) in hosts.iter().enumerate() {
        let ts: Vec<f64> = joined.hosts[i].timeline.iter().map(|r| r.t).collect();
        let want: Vec<f64> = h.timeline.iter().map(|r| r.t).collect();
        assert_eq!(ts, want, "host {i}");
        assert_eq!(
            joined.hosts[i].timeline, again.hosts[i].timeline,
            "host {i}"
        );
    }
}

#[test]
fn joining_refuses_what_is_not_the_phases_of_the_workload_in_order() {
    let server = Server::start(&[]);
    let w = workload(spec(&server.url()));
    let whole = w.redacted();
    let parts: Vec<Report> = phases_of(&w).iter().map(|p| run(p).unwrap()).collect();
    let err = |reports: &[Report]| Report::join(&whole, reports).unwrap_err().to_string();
    // Out of order: named by where the settings differ.
    let e = err(&[parts[1].clone(), parts[0].clone()]);
    assert!(
        e.contains("reports[0].workload") && e.contains("workload.phases[0]"),
        "{e}"
    );
    // A phase of another workload (another budget).
    let mut other = spec(&server.url());
    other["phases"][1]["load"]["requests"] = json!(4001);
    let theirs = run(&phases_of(&workload(other))[1]).unwrap();
    let e = err(&[parts[0].clone(), theirs]);
    assert!(e.contains("(at `load.requests`)"), "{e}");
    // A phase missing from a complete run; a run of the whole workload; none; too many.
    let e = err(&parts[..1]);
    assert!(e.contains("phase(s) measure missing"), "{e}");
    let full = run(&w).unwrap();
    assert!(err(&[full]).contains("holds 2 phases"));
    assert!(err(&[]).contains("no report to join"));
    let e = err(&[parts[0].clone(), parts[1].clone(), parts[1].clone()]);
    assert!(e.contains("3 reports for a workload of 2 phase(s)"), "{e}");
    // One host's phases, not another's.
    let host = |i: u32, p: usize| run(&phases_of(&w)[p].shard(i, 2).unwrap()).unwrap();
    let e = err(&[host(0, 0), host(1, 1)]);
    assert!(
        e.contains("shard 1/2 differs from reports[0]'s shard 0/2"),
        "{e}"
    );
    // A run stopped in its first phase joins alone, interrupted.
    let mut stopped = parts[0].clone();
    stopped.interrupted = true;
    let joined = Report::join(&whole, &[stopped]).unwrap();
    assert!(joined.interrupted && !joined.passed);
    assert_eq!(names(&joined), ["populate"]);
    assert_eq!(joined.totals.ops, 1000);
}
