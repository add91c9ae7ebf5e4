//! Thresholds in the spec (issue 28 item 3), against a real redis-server: each limit listed
//! in the report with the figure it was judged on and its verdict; `abort_on_fail` stopping
//! a run early and saying which threshold did; `respload run` exiting 1 when one fails; bad
//! thresholds refused before any traffic.

mod common;

use common::{workload, Server};
use respload::{run, Report, Workload};
use serde_json::json;
use std::process::Command;
use std::time::Instant;

const BIN: &str = env!("CARGO_BIN_EXE_respload");

fn threshold<'a>(r: &'a Report, name: &str) -> &'a respload::report::Threshold {
    r.thresholds
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("no threshold {name} in {:?}", r.thresholds))
}

#[test]
fn each_threshold_is_judged_on_the_figure_the_report_holds() {
    let server = Server::start(&[]);
    let report = run(&workload(json!({
        "target": { "url": server.url() },
        "thresholds": { "p99_ms": 10000, "max_ms": 0.000001, "error_rate": 0,
            "commands": { "GET": { "p90_ms": 10000, "ops_per_sec": 1e12 } } },
        "phases": [
            { "name": "load", "measured": false, "load": { "requests": 300 },
              "commands": [{ "name": "set" }], "keys": { "range": [1, 100] },
              "thresholds": { "error_rate": 0, "p50_ms": 10000 } },
            { "name": "main", "load": { "requests": 600, "connections": 2 },
              "keys": { "range": [1, 100] } },
        ],
    })))
    .unwrap();
    assert_eq!(server.calls("set") + server.calls("get"), 900);
    let names: Vec<&str> = report.thresholds.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "p99_ms",
            "max_ms",
            "error_rate",
            "commands.GET.p90_ms",
            "commands.GET.ops_per_sec",
            "phases.load.p50_ms",
            "phases.load.error_rate",
        ]
    );
    // Each value is the report's own figure, in its scope.
    let get = &report.commands["GET"];
    assert_eq!(
        threshold(&report, "p99_ms").value,
        Some(report.totals.latency_ms.p99)
    );
    assert_eq!(
        threshold(&report, "max_ms").value,
        Some(report.totals.latency_ms.max)
    );
    assert_eq!(
        threshold(&report, "commands.GET.p90_ms").value,
        Some(get.latency_ms.p90)
    );
    assert_eq!(
        threshold(&report, "commands.GET.ops_per_sec").value,
        Some(get.ops_per_sec)
    );
    let load = report.phase("load").unwrap();
    assert_eq!(
        threshold(&report, "phases.load.p50_ms").value,
        Some(load.totals.latency_ms.p50)
    );
    assert_eq!(
        threshold(&report, "phases.load.error_rate").value,
        Some(0.0)
    );
    // The verdicts: the impossible ones failed, the rest held.
    let failed: Vec<&str> = report
        .thresholds
        .iter()
        .filter(|t| !t.passed)
        .map(|t| t.name.as_str())
        .collect();
    assert_eq!(failed, ["max_ms", "commands.GET.ops_per_sec"]);
    assert!(!report.passed && !report.interrupted);
    assert!(report.stopped_by.is_none());
    let message = report.threshold_failures().unwrap();
    assert!(
        message.starts_with("respload thresholds not met (600 requests in "),
        "{message}"
    );
    assert!(message.contains("- totals: max latency "), "{message}");
    assert!(message.contains("- commands.GET: throughput "), "{message}");
    assert!(!message.contains("phases.load"), "{message}");
    // The JSON keeps them; a report read back says the same.
    let back = Report::from_json_str(&report.to_json()).unwrap();
    assert_eq!(back.thresholds, report.thresholds);
    assert!(!back.passed);
    // Without thresholds, a complete run passes.
    let plain = run(&workload(json!({
        "target": { "url": server.url() }, "load": { "requests": 10 },
    })))
    .unwrap();
    assert!(plain.passed && plain.thresholds.is_empty());
}

#[test]
fn abort_on_fail_stops_the_run_and_names_the_threshold() {
    let server = Server::start(&[]);
    let started = Instant::now();
    let report = run(&workload(json!({
        "target": { "url": server.url() },
        "load": { "connections": 2, "rate": 2000, "duration": "30s" },
        "thresholds": { "p99_ms": 0.000001, "abort_on_fail": true, "delay_abort_eval": "1s" },
        "phases": [{ "name": "main" }, { "name": "after" }],
        "observe": { "info": false },
    })))
    .unwrap();
    let took = started.elapsed().as_secs_f64();
    // Checked each second after the first: stopped after about 2 s, not 30.
    assert!(took < 6.0, "the run took {took} s");
    assert!(report.duration_s >= 1.0, "{}", report.duration_s);
    let why = report.stopped_by.clone().unwrap();
    assert!(
        why.starts_with("threshold `p99_ms` crossed after ") && why.contains("phase `main`"),
        "{why}"
    );
    let t = threshold(&report, "p99_ms");
    assert!(t.stopped_run && !t.passed, "{t:?}");
    assert!(!report.passed);
    // A verdict, not an interruption; the phase after it did not run.
    assert!(!report.interrupted);
    assert_eq!(report.phases.len(), 1);
    assert!(!report.phases[0].interrupted);
    let message = report.threshold_failures().unwrap();
    assert!(
        message.contains("- the run was stopped early: threshold `p99_ms`"),
        "{message}"
    );
    // Every request it sent was answered and counted.
    assert_eq!(server.calls("set") + server.calls("get"), report.totals.ops);
}

#[test]
fn a_phase_threshold_on_errors_stops_it_and_one_that_holds_does_not() {
    let server = Server::start(&[]);
    server.cli(&["SET", "list", "x"]);
    // Every LPUSH to a string key fails with WRONGTYPE.
    let report = run(&workload(json!({
        "target": { "url": server.url() },
        "observe": { "info": false },
        "phases": [
            { "name": "fine", "load": { "duration": "2s", "connections": 1, "rate": 500 },
              "thresholds": { "error_rate": 0, "abort_on_fail": true } },
            { "name": "broken", "load": { "duration": "20s", "connections": 1, "rate": 500 },
              "commands": [{ "template": "LPUSH list x" }],
              "thresholds": { "error_rate": 0.5, "abort_on_fail": true } },
        ],
    })))
    .unwrap();
    assert_eq!(report.phases.len(), 2);
    let broken = report.phase("broken").unwrap();
    assert!(broken.duration_s < 5.0, "{}", broken.duration_s);
    assert!(broken.totals.errors_by_kind["WRONGTYPE"] > 0);
    assert!(threshold(&report, "phases.fine.error_rate").passed);
    let t = threshold(&report, "phases.broken.error_rate");
    assert!(t.stopped_run && t.value == Some(1.0), "{t:?}");
    assert!(report
        .stopped_by
        .as_deref()
        .unwrap()
        .contains("phase `broken`"));
}

#[test]
fn the_command_line_exits_1_on_a_failed_threshold_and_shows_them_all() {
    let server = Server::start(&[]);
    let dir = std::env::temp_dir().join(format!("respload-thr-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let spec = dir.join("t.toml");
    std::fs::write(
        &spec,
        format!(
            "[target]\nurl = \"{}\"\n[load]\nrequests = 400\n\
             [thresholds]\np99_ms = 10000\nops_per_sec = 1e12\n",
            server.url()
        ),
    )
    .unwrap();
    let json = dir.join("r.json");
    let out = Command::new(BIN)
        .args([
            "run",
            spec.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("THRESHOLDS"), "{stdout}");
    assert!(stdout.contains("p99_ms"), "{stdout}");
    assert!(stdout.contains("FAIL"), "{stdout}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("respload thresholds not met (400 requests in ")
            && stderr.contains("- totals: throughput "),
        "{stderr}"
    );
    let report = Report::from_file(&json).unwrap();
    assert!(!report.passed);
    let failed = dir.join("failed.json");
    std::fs::copy(&json, &failed).unwrap();
    // `--check` adds to the spec's thresholds: one more, and with the failing one replaced
    // the run passes.
    let out = Command::new(BIN)
        .args([
            "run",
            spec.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
            "--check",
            "ops_per_sec=1",
            "--check",
            "commands.GET.max_ms=10000",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let report = Report::from_file(&json).unwrap();
    assert!(report.passed);
    let names: Vec<&str> = report.thresholds.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["p99_ms", "ops_per_sec", "commands.GET.max_ms"]);
    assert_eq!(server.calls("set") + server.calls("get"), 800);
    // `respload merge` judges the thresholds again on the merged figures, and exits as
    // `run` does: 1 when one fails, 0 when all hold.
    for (file, code) in [(&failed, 1), (&json, 0)] {
        let out = Command::new(BIN)
            .arg("merge")
            .args([file, file])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(code), "{out:?}");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains("THRESHOLDS"), "{stdout}");
        assert_eq!(stdout.contains("FAIL"), code == 1, "{stdout}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            stderr.contains("respload thresholds not met"),
            code == 1,
            "{stderr}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_thresholds_are_refused_by_path_before_any_traffic() {
    let err = |spec: serde_json::Value| Workload::from_json_value(spec).unwrap_err().to_string();
    assert_eq!(
        err(json!({ "thresholds": { "p99_ms": 5, "commands": { "HGET": { "p99_ms": 1 } } } })),
        "invalid spec at `thresholds.commands.HGET`: no measured command is labelled `HGET`: \
         allowed are SET, GET"
    );
    assert_eq!(
        err(json!({ "phases": [
            { "name": "a" },
            { "name": "a", "thresholds": { "p99_ms": 5 } },
        ] })),
        "invalid spec at `phases[1].thresholds`: the report names thresholds by phase, and \
         phases[0] is named `a` too: give this phase a distinct `name`"
    );
    assert!(err(json!({ "thresholds": { "p99_ms": 5 },
        "phases": [{ "name": "a", "measured": false }] }))
    .starts_with("invalid spec at `thresholds`: bound the measured phases' results"));
    assert_eq!(
        err(json!({ "phases": [{ "thresholds": { "error_rate": 3 } }] })),
        "invalid spec at `phases[0].thresholds.error_rate`: 3 is out of range (0 to 1)"
    );
    assert_eq!(
        err(json!({ "phases": [{ "thresholds": { "p99_ms": 1,
            "commands": { "GET": { "p99": 1 } } } }] })),
        "invalid spec at `phases[0].thresholds.commands.GET`: unknown limit `p99` (allowed: \
         p50_ms, p90_ms, p99_ms, p99_9_ms, max_ms, error_rate, ops_per_sec)"
    );
    // A workload's thresholds survive its normalized form and overrides.
    let w = Workload::from_json_value(json!({
        "thresholds": { "p99_ms": 5, "abort_on_fail": true },
        "phases": [{ "name": "a", "thresholds": { "max_ms": 50 } }, { "name": "b" }],
    }))
    .unwrap();
    let again = Workload::from_json_value(w.to_json_value()).unwrap();
    assert_eq!(again.thresholds, w.thresholds);
    assert_eq!(again.phases[0].spec.thresholds, w.phases[0].spec.thresholds);
    let over = w
        .with_overrides(None, Some(json!({ "load": { "requests": 5 } })))
        .unwrap();
    assert_eq!(over.thresholds, w.thresholds);
    // An override's `thresholds` replace the run's (they do not go into each phase).
    let replaced = w
        .with_overrides(None, Some(json!({ "thresholds": { "p50_ms": 1 } })))
        .unwrap();
    let t = replaced.thresholds.unwrap();
    assert_eq!(
        (t.budget.totals.p50_ms, t.budget.totals.p99_ms),
        (Some(1.0), None)
    );
    assert!(replaced.phases[1].spec.thresholds.is_none());
    assert_eq!(w.redacted()["thresholds"]["p99_ms"], json!(5.0));
}
