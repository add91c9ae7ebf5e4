//! Comparing reports (issue 28): a server made slower by a known amount is marked worse beyond
//! noise and crosses a limit; a run compared with a run of the same server is not; the command
//! line prints the table and sets its exit status by the limits.

mod common;

use common::{measured_unless, one_at_a_time, workload, Measured, Server};
use respload::report::{Comparison, Limit};
use respload::{run, Report};
use serde_json::json;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_respload");

/// Each request spins ARGV[1] microseconds inside the server.
const SPIN: &str = "local s = redis.call('TIME') \
    local t0 = tonumber(s[1]) * 1000000 + tonumber(s[2]) \
    repeat local t = redis.call('TIME') \
      if tonumber(t[1]) * 1000000 + tonumber(t[2]) - t0 >= tonumber(ARGV[1]) then return 1 end \
    until false";

/// 1,500 spins of `us` microseconds on one connection, labelled `spin`.
fn spins(server: &Server, sha: &str, us: u32) -> Report {
    run(&workload(json!({
        "target": { "url": server.url() },
        "load": { "connections": 1, "requests": 1500 },
        "commands": [{ "template": format!("EVALSHA {sha} 0 {us}"), "label": "spin" }],
        "observe": { "info": false },
    })))
    .unwrap()
}

fn row<'a>(c: &'a Comparison, command: &str, metric: &str) -> &'a respload::report::ComparisonRow {
    c.rows
        .iter()
        .find(|r| r.command == command && r.metric == metric)
        .unwrap_or_else(|| panic!("no row {command} {metric}"))
}

#[test]
fn a_slower_server_is_worse_beyond_noise_and_the_same_one_is_not() {
    let _alone = one_at_a_time();
    let server = Server::start(&[]);
    let sha = server.cli(&["SCRIPT", "LOAD", SPIN]);
    assert_eq!(sha.len(), 40, "{sha}");
    let p50 = |r: &Report| r.commands["SPIN"].latency_ms.p50;
    // The base and the same server again, the pair measured again only when the machine was
    // disturbed during it (see `measured`): on this shared machine a busy second moves a short
    // run's p50 past the +50% limit below (0.121 to 0.216 ms in a CI run, three times
    // running), which is the machine, not the comparison. Also when the pair's own medians
    // are 30% or more apart: the comparison's premise (one server measured twice agrees with
    // itself), read from the raw medians, not from the comparison under test; the machine
    // here is bimodal at times (0.122 ms in one run, 0.156-0.165 in the next, every signal
    // quiet). A premise that never held in five pairs fails the test below, naming them.
    let Measured {
        run: (base, same),
        runs,
        ..
    } = measured_unless(
        || {
            let base = spins(&server, &sha, 100);
            let same = spins(&server, &sha, 100);
            let figures = format!("p50 {} then {}", p50(&base), p50(&same));
            ((base, same), figures)
        },
        |(base, same), _| {
            let (a, b) = (p50(base), p50(same));
            ((b / a - 1.0).abs() >= 0.3).then(|| format!("the pair's medians {a} and {b} ms"))
        },
    );
    let slow = spins(&server, &sha, 400);
    assert_eq!(
        server.calls("evalsha"),
        1500 * (2 * runs.len() as u64 + 1),
        "{runs:?}"
    );
    let labels: Vec<String> = ["base", "same", "slow"].map(String::from).to_vec();
    let limits = [Limit::parse("p50_ms=+50%").unwrap()];
    let c = Comparison::of(&[base.clone(), same, slow.clone()], &labels, &limits).unwrap();
    // Rows for the totals and the command, every metric, in each of the three reports.
    assert_eq!(c.rows.len(), 2 * respload::report::LIMITS.len());
    let p50 = row(&c, "SPIN", "p50_ms");
    assert_eq!(p50.values[0], Some(base.commands["SPIN"].latency_ms.p50));
    assert_eq!(p50.values[2], Some(slow.commands["SPIN"].latency_ms.p50));
    // 0.1 ms of spinning became 0.4 ms: the median at least doubles, beyond noise. (Not +300%:
    // the client's own 60-100 us per request on this VM is in both medians.)
    let change = p50.changes[2].unwrap();
    let (from, to) = (p50.values[0].unwrap(), p50.values[2].unwrap());
    assert_eq!(change, to / from - 1.0);
    assert!(
        change > 1.0 && to - from > 0.25,
        "p50 from {from} to {to}, change {change} (runs: {runs:?})"
    );
    assert!(!p50.worse[0] && p50.worse[2], "{:?}", p50.worse);
    assert!(row(&c, "ALL", "ops_per_sec").worse[2]);
    // The same server again (on a quiet machine, or the least disturbed of the runs; see
    // `measured`): no metric is marked worse (two runs differ by more than their sampling
    // error, by up to 12% at the median here; the noise floor of 10% and the confidence
    // intervals keep that from being marked). The medians are within 30% of each other,
    // which the comparison's premise needs: a pair further apart fails here, naming every
    // run, instead of being measured again.
    let (a, b) = (p50.values[0].unwrap(), p50.values[1].unwrap());
    assert!(
        (b / a - 1.0).abs() < 0.3,
        "the same server's medians {a} and {b} ms (runs: {runs:?})"
    );
    for r in &c.rows {
        assert!(
            !r.worse[1],
            "the same server marked worse: {} {} {:?} {:?} (runs: {runs:?})",
            r.command, r.metric, r.values, r.changes
        );
    }
    // A report against itself: no change, nothing worse, no limit crossed.
    let itself = Comparison::of(&[base.clone(), base.clone()], &labels[..2], &limits).unwrap();
    assert!(itself.rows.iter().all(|r| !r.worse[1]));
    assert!(itself
        .rows
        .iter()
        .all(|r| r.values[0].is_none() || matches!(r.changes[1], Some(0.0) | None)));
    assert!(itself.passed());
    // The limit is crossed by the slow run only, and says where.
    assert!(!c.passed());
    assert!(
        c.failures.iter().all(|f| f.starts_with("slow: ")),
        "{:?} (runs: {runs:?})",
        c.failures
    );
    assert!(
        c.failures
            .iter()
            .any(|f| f.contains("SPIN p50_ms of phase `main`")),
        "{:?}",
        c.failures
    );
    let text = c.text();
    assert!(
        text.contains("Phase main") && text.contains("worse"),
        "{text}"
    );
    assert!(text.contains("Limits crossed"), "{text}");
    // Under a limit, a later run that was interrupted, or lacks what the baseline has, fails.
    let mut cut = slow.clone();
    cut.interrupted = true;
    cut.commands.clear();
    cut.phases[0].commands.clear();
    let c = Comparison::of(&[base.clone(), cut], &labels[..2], &limits).unwrap();
    assert!(
        c.failures
            .iter()
            .any(|f| f.contains("same: the run was interrupted")),
        "{:?}",
        c.failures
    );
    assert!(
        c.failures
            .iter()
            .any(|f| f == "same: no SPIN in phase `main`, which the baseline has"),
        "{:?}",
        c.failures
    );
    // Two reports at least, labels for each.
    let e = Comparison::of(std::slice::from_ref(&base), &labels[..1], &[])
        .unwrap_err()
        .to_string();
    assert!(e.contains("at least one other report"), "{e}");
    assert!(Comparison::of(&[base.clone(), base], &labels, &[]).is_err());
}

#[test]
fn compare_on_the_command_line_exits_1_past_a_limit() {
    let _alone = one_at_a_time();
    let server = Server::start(&[]);
    let sha = server.cli(&["SCRIPT", "LOAD", SPIN]);
    let (a, b) = (server.dir.join("a.json"), server.dir.join("b.json"));
    spins(&server, &sha, 50).save(&a).unwrap();
    spins(&server, &sha, 300).save(&b).unwrap();
    let compare = |extra: &[&str]| {
        Command::new(BIN)
            .arg("compare")
            .args([&a, &b])
            .args(extra)
            .output()
            .unwrap()
    };
    let out = compare(&["--fail-on", "p50_ms=+50%,error_rate=+0.01"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("Limits crossed") && stdout.contains("p50_ms"),
        "{stdout}"
    );
    // Generous limits hold: exit 0; the JSON is the comparison.
    let json = server.dir.join("c.json");
    let out = compare(&[
        "--fail-on",
        "p50_ms=+100000%",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let c: Comparison = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(c.labels.len(), 2);
    assert!(c.passed());
    // --hgrm: each report's distribution as HdrHistogram's .hgrm text, its median the
    // report's (the 300 us spin's above the 50 us one's).
    let dir = server.dir.join("hgrm");
    let out = compare(&["--hgrm", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let median = |file: &str, report: &std::path::Path| {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        assert!(
            text.starts_with("       Value     Percentile TotalCount"),
            "{text}"
        );
        let at_half = text
            .lines()
            .filter_map(|l| {
                let w: Vec<f64> = l
                    .split_whitespace()
                    .filter_map(|w| w.parse().ok())
                    .collect();
                (w.len() >= 3).then_some(w)
            })
            .find(|w| w[1] >= 0.5)
            .unwrap()[0];
        let p50 = respload::Report::from_file(report)
            .unwrap()
            .totals
            .latency_ms
            .p50;
        assert!((at_half / p50 - 1.0).abs() < 0.01, "{at_half} vs {p50}");
        at_half
    };
    assert!(median("1-b.hgrm", &b) > median("0-a.hgrm", &a));
    // A bad limit: exit 2 naming the option and what is allowed.
    let out = compare(&["--fail-on", "p42=+1%"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--fail-on")
            && err.contains(
                "unknown limit `p42` (allowed: p50_ms, p90_ms, p99_ms, p99_9_ms, \
                 max_ms, error_rate, ops_per_sec)"
            ),
        "{err}"
    );
}
