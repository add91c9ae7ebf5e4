//! Resource limits stated and enforced (issue 29 item 4): too many phases is refused before
//! the spec is copied out, and more connections than the process may open fails before any
//! traffic, saying how to raise the limit.

mod common;

use common::Server;
use respload::spec::{MAX_PHASES, MAX_REPEAT};
use respload::Workload;
use serde_json::json;
use std::process::Command;
use std::time::Instant;

const BIN: &str = env!("CARGO_BIN_EXE_respload");

fn err(spec: serde_json::Value) -> String {
    match Workload::from_json_value(spec) {
        Ok(w) => panic!("accepted, {} phases", w.phases.len()),
        Err(e) => e.to_string(),
    }
}

#[test]
fn too_many_phases_is_refused_quickly_by_path() {
    let phase = json!({ "load": { "requests": 1 } });
    assert_eq!(
        err(json!({ "phases": vec![phase.clone(); MAX_PHASES + 1] })),
        format!(
            "invalid spec at `phases`: makes {} phases: allowed are at most {MAX_PHASES} (with \
             `repeat` expanded); split the run into several, or use a longer phase",
            MAX_PHASES + 1
        )
    );
    // 2,000 phases each repeated 100 times: refused at the phase that passes the limit,
    // without first making 200,000 copies.
    let started = Instant::now();
    let repeated = json!({ "load": { "requests": 1 }, "repeat": MAX_REPEAT });
    let e = err(json!({ "phases": vec![repeated.clone(); 11] }));
    assert!(
        e.starts_with("invalid spec at `phases[10].repeat`: makes 1100 phases"),
        "{e}"
    );
    let e = err(json!({ "phases": vec![repeated; 2000] }));
    assert!(
        e.starts_with("invalid spec at `phases`: makes 2000 phases"),
        "{e}"
    );
    assert!(started.elapsed().as_secs_f64() < 5.0);
    // At the limit it is a workload.
    let w = Workload::from_json_value(json!({ "phases": vec![phase; MAX_PHASES] })).unwrap();
    assert_eq!(w.phases.len(), MAX_PHASES);
}

#[test]
fn connections_beyond_the_open_files_limit_fail_before_traffic() {
    let server = Server::start(&[]);
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -n 256 && exec {BIN} run -p {} -c 1000 -n 5000",
            server.port
        ))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with(
            "respload: invalid spec at `load.connections`: 1000 connections need about 1064 \
             open files, and this process may open 256 (`ulimit -n`): raise the limit \
             (`ulimit -n 2048`"
        ),
        "{stderr}"
    );
    assert_eq!(server.calls("get") + server.calls("set"), 0);
    // Under the limit, the same run goes.
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -n 256 && exec {BIN} run -p {} -c 100 -n 500 -q",
            server.port
        ))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(server.calls("get") + server.calls("set"), 500);
}
