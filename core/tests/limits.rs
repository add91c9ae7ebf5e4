//! Resource limits stated and enforced (issue 29 item 4): too many phases is refused before
//! the spec is copied out, and more connections than the process may open fails before any
//! traffic, saying how to raise the limit.

mod common;

use common::{Cluster, Server};
use respload::spec::{MAX_COMMANDS, MAX_PHASES, MAX_REPEAT, MAX_TEMPLATE_ARGS, MAX_VALUE_SIZE};
use respload::Workload;
use serde_json::json;
use std::process::Command;
use std::time::Instant;

const BIN: &str = env!("CARGO_BIN_EXE_respload");

/// The process's peak resident memory so far, in MiB.
fn peak_rss_mib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kib / 1024
}

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
    // without first making 200,000 copies (that took 3.2 GB).
    let started = Instant::now();
    let peak_before = peak_rss_mib();
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
    // The margin is for the other tests of this binary running meanwhile.
    let grown = peak_rss_mib() - peak_before;
    assert!(grown < 200, "peak memory grew by {grown} MiB");
    // At the limit it is a workload.
    let w = Workload::from_json_value(json!({ "phases": vec![phase; MAX_PHASES] })).unwrap();
    assert_eq!(w.phases.len(), MAX_PHASES);
}

#[test]
fn commands_arguments_and_value_sizes_past_their_limits_are_refused_by_path() {
    let started = Instant::now();
    let many = vec![json!({ "name": "get" }); MAX_COMMANDS + 1];
    assert_eq!(
        err(json!({ "commands": many })),
        format!(
            "invalid spec at `commands`: {} commands (a chain's steps count each): allowed are \
             at most {MAX_COMMANDS}",
            MAX_COMMANDS + 1
        )
    );
    // Refused before each is compiled.
    assert!(started.elapsed().as_secs_f64() < 2.0);
    let mut args = vec!["MGET".to_string()];
    args.extend(std::iter::repeat_n("{key}".to_string(), MAX_TEMPLATE_ARGS));
    let e = err(json!({ "commands": [{ "template": args }] }));
    assert!(
        e.starts_with("invalid spec at `commands[0].template`: `[\"MGET\", \"{key}\"")
            && e.ends_with(&format!(
                "...` has {} arguments: allowed are at most {MAX_TEMPLATE_ARGS} (the command \
                 name and its keys included)",
                MAX_TEMPLATE_ARGS + 1
            ))
            && e.len() < 300,
        "{e}"
    );
    args.pop();
    let w = Workload::from_json_value(json!({ "commands": [{ "template": args }] })).unwrap();
    assert_eq!(w.phases[0].commands[0].args.len(), MAX_TEMPLATE_ARGS);
    let e = err(json!({ "values": { "size": u64::from(MAX_VALUE_SIZE) + 1 } }));
    assert!(
        e.starts_with("invalid spec at `values.size`")
            && e.contains(&format!("allowed is 1 to {MAX_VALUE_SIZE} bytes")),
        "{e}"
    );
    assert_eq!(
        err(json!({ "load": { "connections": 1_000_001 } })),
        "invalid spec at `load.connections`: 1000001 is out of range: allowed is 1 to 1000000"
    );
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

#[test]
fn a_clusters_connections_on_every_primary_count_against_the_limit() {
    let cluster = Cluster::start(3, 0);
    let run = |connections: u32| {
        Command::new("sh")
            .arg("-c")
            .arg(format!(
                "ulimit -n 256 && exec {BIN} run -p {} --cluster -c {connections} -n 600 -q",
                cluster.port()
            ))
            .output()
            .unwrap()
    };
    // 100 per primary fit under the limit alone, but not on 3 primaries.
    let out = run(100);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "invalid spec at `load.connections`: 100 connections per primary node on 3 \
             primaries (300) need about 364 open files, and this process may open 256"
        ),
        "{stderr}"
    );
    let served = || -> u64 {
        let nodes = cluster.primaries();
        nodes.iter().map(|n| n.calls("set") + n.calls("get")).sum()
    };
    assert_eq!(served(), 0);
    let out = run(40);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(served(), 600);
}
