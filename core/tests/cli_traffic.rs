//! `respload capture`, `replay` and `model` as a user runs them.

mod common;

use common::Server;
use respload::trace::{Record, TraceArg, TraceReader};
use respload::Report;
use std::process::{Command, Stdio};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_respload");

fn records(path: &str) -> Vec<Record> {
    let mut r = TraceReader::open(path, None).unwrap();
    let (mut out, mut rec) = (Vec::new(), Record::default());
    while r.next_record(&mut rec).unwrap() {
        out.push(rec.clone());
    }
    out
}

fn bytes(a: Option<TraceArg<'_>>) -> String {
    match a {
        Some(TraceArg::Bytes(b)) => String::from_utf8_lossy(b).into_owned(),
        other => format!("{other:?}"),
    }
}

#[test]
fn capture_stops_on_ctrl_c_keeping_a_whole_compressed_trace() {
    let server = Server::start(&[]);
    let out = server.dir.join("capture.jsonl.gz");
    let summary = server.dir.join("capture.json");
    let mut child = Command::new(BIN)
        .args(["capture", &server.url()])
        .args(["--out", out.to_str().unwrap()])
        .args(["--json", summary.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The capture says when MONITOR is on; by then the server lists it so.
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut said = String::new();
    std::io::BufRead::read_line(&mut stderr, &mut said).unwrap();
    assert_eq!(said, "capturing: MONITOR is on (Ctrl-C to stop)\n");
    assert!(server.cli(&["CLIENT", "LIST"]).contains("cmd=monitor"));
    let sets: Vec<String> = (0..100).map(|i| format!("SET cli:{i} \"v {i}\"")).collect();
    server.cli_batch(&sets);
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: sending SIGINT to our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&summary).unwrap()).unwrap();
    assert_eq!(report["interrupted"], true);
    let trace = records(out.to_str().unwrap());
    assert_eq!(report["commands"], trace.len() as u64);
    let got: Vec<(String, String)> = trace
        .iter()
        .filter(|r| r.name() == Some(b"SET"))
        .map(|r| (bytes(r.arg(1)), bytes(r.arg(2))))
        .collect();
    let want: Vec<(String, String)> = (0..100)
        .map(|i| (format!("cli:{i}"), format!("v {i}")))
        .collect();
    assert_eq!(got, want);
}

fn write_trace(path: &std::path::Path, n: u64) {
    let mut text = String::new();
    for i in 0..n {
        let client = ["10.1.1.1:1", "10.1.1.2:2", "10.1.1.3:3"][i as usize % 3];
        text += &format!(
            "{{\"t_us\":{},\"client\":\"{client}\",\"args\":[\"SET\",\"k{}\",{{\"size\":100}}]}}\n",
            1_000_000 + i * 1000,
            i % 50
        );
    }
    std::fs::write(path, text).unwrap();
}

#[test]
fn replay_takes_the_rate_and_connections_from_the_command_line() {
    let server = Server::start(&[]);
    let trace = server.dir.join("t.jsonl");
    write_trace(&trace, 600);
    let json = server.dir.join("r.json");
    let out = Command::new(BIN)
        .args(["replay", trace.to_str().unwrap(), "--url", &server.url()])
        .args(["--rate", "3000", "-c", "2", "--quiet"])
        .args(["--json", json.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Report = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let f = report.phases[0].replay.as_ref().unwrap();
    assert_eq!((f.connections, f.per_client), (2, false));
    assert!((f.rate - 3000.0).abs() < 1e-6, "{}", f.rate);
    assert_eq!(report.commands["SET"].ops, 600);
    assert_eq!(server.cli(&["STRLEN", "k7"]), "100");
    // A bad value is named before any traffic.
    let bad = Command::new(BIN)
        .args(["replay", trace.to_str().unwrap(), "--url", &server.url()])
        .args(["--speed=-1"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(
        stderr.contains("replay.speed") && stderr.contains("-1"),
        "{stderr}"
    );
}

#[test]
fn model_writes_a_spec_that_runs_scaled_as_asked() {
    let dir = std::env::temp_dir().join(format!("respload-cli-model-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let trace = dir.join("t.jsonl");
    write_trace(&trace, 3000);
    let spec = dir.join("spec.toml");
    let fit = dir.join("fit.json");
    let out = Command::new(BIN)
        .args([
            "model",
            trace.to_str().unwrap(),
            "--rate-x",
            "10",
            "--keys-x",
            "4",
        ])
        .args([
            "--out",
            spec.to_str().unwrap(),
            "--json",
            fit.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let w = respload::Workload::from_file(&spec).unwrap();
    let load = &w.phases[0].spec.load;
    // 3000 commands over 3 s of trace, ten times.
    let rate = load.rate.expect("an open-loop model");
    assert!((rate / 10_000.0 - 1.0).abs() < 0.01, "{rate}");
    // 50 keys, four times as many.
    assert_eq!(w.phases[0].spec.keys.count(), 200);
    let fit: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&fit).unwrap()).unwrap();
    assert_eq!(fit["fit"]["commands"], 3000);
    assert!(String::from_utf8_lossy(&out.stdout).contains("SET"));
}
