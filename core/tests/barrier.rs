//! Phases in step across hosts without Ray (issue 48, part 3): three `respload run --shard
//! I/3 --barrier URL` processes on this machine, sharing one barrier redis-server and one
//! target, run every phase together; a host started late is waited for; a host killed makes
//! the others fail, naming the phase and how many hosts arrived.

mod common;

use common::Server;
use respload::Report;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_respload");

/// A populate phase, then two read phases: a read finds every key only when every host
/// finished populating first. 5 connections make shards of 2, 2 and 1: shard 2 populates
/// its third of the keys at about half the others' pace.
fn spec(dir: &Path, target: &Server, measure: &str) -> PathBuf {
    let path = dir.join("phases.toml");
    std::fs::write(
        &path,
        format!(
            r#"
            seed = 7
            target = {{ url = "{}" }}
            [load]
            connections = 5
            [keys]
            prefix = "k:"
            range = [1, 3000]
            [[phases]]
            name = "populate"
            measured = false
            load = {{ requests = "all_keys" }}
            keys = {{ distribution = "sequential" }}
            commands = [{{ name = "set" }}]
            [[phases]]
            name = "read"
            load = {measure}
            commands = [{{ name = "get" }}]
            [[phases]]
            name = "again"
            load = {{ requests = 600 }}
            commands = [{{ name = "get" }}]
            "#,
            target.url()
        ),
    )
    .unwrap();
    path
}

/// Start shard `i` of 3 with `args`, its report going to `dir/shardI.json`.
fn host(spec: &Path, i: u32, args: &[&str]) -> Child {
    let json = spec.with_file_name(format!("shard{i}.json"));
    Command::new(BIN)
        .args([
            "run",
            spec.to_str().unwrap(),
            "-q",
            "--shard",
            &format!("{i}/3"),
        ])
        .args(["--json", json.to_str().unwrap()])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Wait for a host; its exit code, the table it printed and its stderr.
fn finish_with_table(mut child: Child) -> (Option<i32>, String, String) {
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    (child.wait().unwrap().code(), stdout, stderr)
}

/// Wait for a host; its exit code and stderr.
fn finish(child: Child) -> (Option<i32>, String) {
    let (code, _, stderr) = finish_with_table(child);
    (code, stderr)
}

fn report(spec: &Path, i: u32) -> Report {
    let json = spec.with_file_name(format!("shard{i}.json"));
    serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap()
}

/// No host starts phase k + 1 before every host ended phase k (by the reports' own
/// instants: measurement start, plus measured seconds to the last reply), and every host
/// starts it within `skew` seconds of the others.
fn assert_in_step(reports: &[Report], skew: f64) {
    let phases = reports[0].phases.len();
    for k in 1..phases {
        let ended = reports
            .iter()
            .map(|r| r.phases[k - 1].started_at + r.phases[k - 1].duration_s)
            .fold(0.0, f64::max);
        let starts: Vec<f64> = reports.iter().map(|r| r.phases[k].started_at).collect();
        let first = starts.iter().copied().fold(f64::INFINITY, f64::min);
        let last = starts.iter().copied().fold(0.0, f64::max);
        assert!(
            first >= ended,
            "phase {k} started at {first} before phase {} ended at {ended}",
            k - 1
        );
        assert!(last - first < skew, "phase {k} starts {starts:?}");
    }
}

#[test]
fn three_hosts_run_every_phase_in_step_and_read_every_key_populated() {
    let target = Server::start(&[]);
    let meet = Server::start(&[]);
    let spec = spec(&target.dir, &target, "{ requests = 3000 }");
    let at = (respload::spec::unix_now() + 4.0).to_string();
    let url = meet.url();
    let hosts: Vec<Child> = (0..3)
        .map(|i| host(&spec, i, &["--start-at", &at, "--barrier", &url]))
        .collect();
    for (i, h) in hosts.into_iter().enumerate() {
        let (code, stdout, stderr) = finish_with_table(h);
        assert_eq!(code, Some(0), "host {i}: {stderr}");
        // The table says it too, for the two phases started at the barrier.
        assert_eq!(stdout.matches("Barrier: waited ").count(), 2, "{stdout}");
    }
    let reports: Vec<Report> = (0..3).map(|i| report(&spec, i)).collect();
    for r in &reports {
        assert_eq!(r.phases.len(), 3);
        assert!(!r.interrupted && r.error.is_none());
        // The first phase started at --start-at, the others at the barrier.
        assert_eq!(r.phases[0].barrier_wait_s, None);
        assert!(r.phases[1].barrier_wait_s.is_some() && r.phases[2].barrier_wait_s.is_some());
    }
    assert_in_step(&reports, 0.3);
    // Every read found its key: each host had finished populating before any read.
    assert_eq!(target.dbsize(), 3000);
    let (hits, misses): (u64, u64) = reports.iter().fold((0, 0), |(h, m), r| {
        let read = &r.phases[1].totals;
        (h + read.hits, m + read.misses)
    });
    assert_eq!((hits, misses), (3000, 0));
    // The faster hosts waited for the slower one; a merged report keeps the longest wait.
    let waits: Vec<f64> = reports
        .iter()
        .map(|r| r.phases[1].barrier_wait_s.unwrap())
        .collect();
    let merged = Report::merge(&reports).unwrap();
    assert_eq!(
        merged.phases[1].barrier_wait_s,
        Some(waits.iter().copied().fold(0.0, f64::max))
    );
    // What the barriers of phases 1 and 2 left (their wake-up lists were emptied by the
    // hosts) expires.
    let keys = meet.cli(&["KEYS", "respload:barrier:*"]);
    let mut keys: Vec<&str> = keys.lines().collect();
    keys.sort_unstable();
    let shapes: Vec<String> = keys
        .iter()
        .map(|k| k.split_once('}').unwrap().1.to_string())
        .collect();
    assert_eq!(shapes, [":1:arrived", ":1:state", ":2:arrived", ":2:state"]);
    for k in keys {
        let ttl: i64 = meet.cli(&["TTL", k]).parse().unwrap();
        assert!(ttl > 0 && ttl <= 300 + 61, "{k}: {ttl}");
    }
}

#[test]
fn a_host_started_late_is_waited_for_before_the_first_phase() {
    let target = Server::start(&[]);
    let meet = Server::start(&[]);
    let spec = spec(&target.dir, &target, "{ requests = 3000 }");
    let url = meet.url();
    let args = ["--barrier", &url, "--barrier-id", "late-test"];
    let early: Vec<Child> = (0..2).map(|i| host(&spec, i, &args)).collect();
    std::thread::sleep(Duration::from_millis(1500));
    let late_launch = respload::spec::unix_now();
    let late = host(&spec, 2, &args);
    for (i, h) in early.into_iter().chain([late]).enumerate() {
        let (code, stderr) = finish(h);
        assert_eq!(code, Some(0), "host {i}: {stderr}");
    }
    let reports: Vec<Report> = (0..3).map(|i| report(&spec, i)).collect();
    for (i, r) in reports.iter().enumerate() {
        // Nobody sent anything before the late host was there.
        assert!(r.phases[0].started_at > late_launch, "host {i}");
    }
    // The early hosts waited about as long as the late one was late.
    for r in &reports[..2] {
        let waited = r.phases[0].barrier_wait_s.unwrap();
        assert!(waited > 1.2, "{waited}");
    }
    assert!(reports[2].phases[0].barrier_wait_s.unwrap() < 1.0);
    assert_in_step(&reports, 0.3);
    let misses: u64 = reports.iter().map(|r| r.phases[1].totals.misses).sum();
    assert_eq!(misses, 0);
}

#[test]
fn a_host_killed_mid_phase_fails_the_others_at_the_next_barrier() {
    let target = Server::start(&[]);
    let meet = Server::start(&[]);
    let spec = spec(&target.dir, &target, "{ duration = \"2s\" }");
    let url = meet.url();
    let at = (respload::spec::unix_now() + 3.0).to_string();
    let args = [
        "--start-at",
        &at,
        "--barrier",
        &url,
        "--barrier-timeout",
        "2s",
    ];
    let mut hosts: Vec<Child> = (0..3).map(|i| host(&spec, i, &args)).collect();
    // Shard 2 dies in the measured phase (`read`, 2 s): the others never see it at the
    // barrier before `again`.
    let killed = hosts.pop().unwrap();
    let read_started = loop {
        let keys = meet.cli(&["KEYS", "respload:barrier:*:1:state"]);
        if !keys.is_empty() {
            break Instant::now();
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut killed = killed;
    std::thread::sleep(Duration::from_millis(1000));
    killed.kill().unwrap();
    killed.wait().unwrap();
    for (i, h) in hosts.into_iter().enumerate() {
        let (code, stderr) = finish(h);
        assert_eq!(code, Some(2), "host {i}: {stderr}");
        assert!(
            stderr.contains("barrier before phase `again`: 2 of 3 hosts arrived within 2s")
                && stderr.contains("missing: shard 2;"),
            "host {i}: {stderr}"
        );
        let r = report(&spec, i as u32);
        assert_eq!(r.phases.len(), 2, "host {i}");
        assert!(r.interrupted);
        assert!(r.error.unwrap().contains("2 of 3 hosts arrived"));
    }
    // They failed once the timeout passed, not before: 2 s of reading, then 2 s of waiting.
    assert!(read_started.elapsed() > Duration::from_secs(3));
}

#[test]
fn a_host_stopped_at_the_barrier_keeps_its_partial_report_and_fails_the_others_at_once() {
    let target = Server::start(&[]);
    let meet = Server::start(&[]);
    let spec = spec(&target.dir, &target, "{ requests = 3000 }");
    let url = meet.url();
    let args = ["--barrier", &url, "--barrier-id", "stop-test"];
    // Shard 2 never comes: 0 and 1 wait at the first phase's barrier.
    let stopped = host(&spec, 0, &args);
    let waiting = host(&spec, 1, &args);
    loop {
        let n = meet.cli(&["SCARD", "respload:barrier:{stop-test}:0:arrived"]);
        if n == "2" {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let sent = Instant::now();
    // SAFETY: sending SIGINT to our own child process.
    unsafe { libc::kill(stopped.id() as i32, libc::SIGINT) };
    let (code, stderr) = finish(stopped);
    assert_eq!(code, Some(0), "{stderr}");
    let r = report(&spec, 0);
    assert!(r.interrupted && r.phases.is_empty());
    // The other host learns it at once (its timeout is 5 minutes).
    let (code, stderr) = finish(waiting);
    assert!(sent.elapsed() < Duration::from_secs(5));
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("barrier before phase `populate`: shard 0 was stopped while waiting"),
        "{stderr}"
    );
    assert_eq!(target.calls("set"), 0);
}

#[test]
fn a_barrier_server_lost_while_waiting_fails_the_run_naming_it() {
    let target = Server::start(&[]);
    let mut meet = Server::start(&[]);
    let spec = spec(&target.dir, &target, "{ requests = 3000 }");
    let url = meet.url();
    let waiting = host(&spec, 0, &["--barrier", &url, "--barrier-id", "lost"]);
    loop {
        if meet.cli(&["SCARD", "respload:barrier:{lost}:0:arrived"]) == "1" {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    meet.kill();
    let (code, stderr) = finish(waiting);
    assert_eq!(code, Some(2), "{stderr}");
    let said = format!("respload: barrier before phase `populate`: the barrier server {url}");
    assert!(stderr.contains(&said), "{stderr}");
    assert_eq!(target.calls("set"), 0);
}

#[test]
fn a_host_that_cannot_run_fails_the_others_at_once() {
    let target = Server::start(&[]);
    let meet = Server::start(&[]);
    let spec = spec(&target.dir, &target, "{ requests = 3000 }");
    let url = meet.url();
    let args = ["--barrier", &url, "--barrier-id", "cannot-run"];
    let waiting = host(&spec, 0, &args);
    loop {
        if meet.cli(&["SCARD", "respload:barrier:{cannot-run}:0:arrived"]) == "1" {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    // Shard 1 is pointed at a port nothing listens on: it fails before any traffic.
    let dead = respload_testing::free_port().to_string();
    let sent = Instant::now();
    let broken = host(&spec, 1, &[&args[..], &["--port", &dead]].concat());
    let (code, stderr) = finish(broken);
    assert_eq!(code, Some(2), "{stderr}");
    let (code, stderr) = finish(waiting);
    assert_eq!(code, Some(2), "{stderr}");
    // Told at once (its timeout is 5 minutes), with shard 1's own error.
    assert!(sent.elapsed() < Duration::from_secs(10));
    let said = format!(
        "barrier before phase `populate`: shard 1 could not run: cannot connect to 127.0.0.1:{dead}"
    );
    assert!(stderr.contains(&said), "{stderr}");
    assert_eq!(target.calls("set"), 0);
}

#[test]
fn barrier_options_are_checked_before_any_traffic() {
    let target = Server::start(&[]);
    let spec = spec(&target.dir, &target, "{ requests = 10 }");
    let run = |args: &[&str]| {
        let out = Command::new(BIN)
            .args(["run", spec.to_str().unwrap()])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    let e = run(&["--shard", "0/3", "--barrier", &target.url()]);
    assert!(
        e.contains("`barrier_id`") && e.contains("--start-at"),
        "{e}"
    );
    let e = run(&[
        "--shard",
        "0/3",
        "--barrier",
        "redis://127.0.0.1:1/",
        "--barrier-id",
        "x",
    ]);
    assert!(e.contains("cannot connect to 127.0.0.1:1"), "{e}");
    let e = run(&[
        "--shard",
        "0/3",
        "--barrier",
        "nope://h/",
        "--barrier-id",
        "x",
    ]);
    assert!(e.contains("`barrier`") && e.contains("nope://h/"), "{e}");
    let e = run(&["--barrier", &target.url(), "--barrier-id", "x"]);
    assert!(e.contains("--shard"), "{e}");
    let e = run(&[
        "--shard",
        "0/3",
        "--barrier",
        &target.url(),
        "--barrier-id",
        "x y",
    ]);
    assert!(e.contains("`barrier_id`") && e.contains("`x y`"), "{e}");
    assert_eq!(target.calls("set") + target.calls("get"), 0);
}
