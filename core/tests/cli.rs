//! The `respload` binary: report files, the table, Ctrl-C, help, bad input.

mod common;

use common::Server;
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use hdrhistogram::serialization::Deserializer;
use respload::Report;
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_respload");

/// Run respload with `args`, expect exit code 2 (bad input) and return its stderr.
fn stderr_of_bad_input(args: &[&str]) -> String {
    let out = Command::new(BIN).args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(2), "{args:?}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Wait for a running respload's first live line on stderr (traffic is flowing); what it
/// wrote so far. Its stderr is left in place for the rest.
fn child_started(child: &mut std::process::Child) -> Vec<u8> {
    let stderr = child.stderr.as_mut().unwrap();
    let mut seen = Vec::new();
    let mut byte = [0u8; 1];
    while !String::from_utf8_lossy(&seen).contains("ops/s") {
        assert_eq!(stderr.read(&mut byte).unwrap(), 1, "no live line");
        seen.push(byte[0]);
    }
    seen
}

/// The table an ended respload printed says it is partial; the report it wrote.
fn partial_report(child: &mut std::process::Child, json: &std::path::Path) -> Report {
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    assert!(stdout.contains("interrupted: partial results"), "{stdout}");
    serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap()
}

fn scenario(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("scenario.toml");
    std::fs::write(
        &path,
        r#"
        seed = 3
        [load]
        connections = 4
        [keys]
        range = [0, 1999]
        [[phases]]
        name = "populate"
        measured = false
        load = { requests = 2000 }
        keys = { distribution = "sequential" }
        commands = [{ name = "set" }]
        [[phases]]
        name = "measure"
        load = { duration = "2s" }
        commands = [{ name = "get" }]
        "#,
    )
    .unwrap();
    path
}

#[test]
fn run_writes_a_table_a_json_report_and_an_hdr_log() {
    let server = Server::start(&[]);
    let spec = scenario(&server.dir);
    let (json, log) = (server.dir.join("r.json"), server.dir.join("r.hlog"));
    let out = Command::new(BIN)
        .args([
            "run",
            spec.to_str().unwrap(),
            "--port",
            &server.port.to_string(),
        ])
        .args([
            "--json",
            json.to_str().unwrap(),
            "--hdr-log",
            log.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("ALL STATS") && stdout.contains("Totals"),
        "{stdout}"
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("[measure]"));

    let report: Report = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(report.phases.len(), 2);
    assert_eq!(report.phases[0].totals.ops, 2000);
    // Every GET of the measured phase found a key the populate phase wrote.
    assert_eq!(report.totals.hits, report.totals.ops);
    assert!(report.totals.ops > 1000);
    assert_eq!(server.dbsize(), 2000);
    let gets = stdout.lines().find(|l| l.starts_with("GET")).unwrap();
    let ops_per_sec: f64 = gets.split_whitespace().nth(1).unwrap().parse().unwrap();
    assert!(
        (ops_per_sec - report.commands["GET"].ops_per_sec).abs() < 0.01,
        "{gets}"
    );

    let text = std::fs::read(&log).unwrap();
    let mut decoder = Deserializer::new();
    let mut intervals = 0;
    for entry in IntervalLogIterator::new(&text) {
        if let Ok(LogEntry::Interval(h)) = entry {
            let bytes = base64::Engine::decode(
                &base64::engine::general_purpose::STANDARD,
                h.encoded_histogram(),
            )
            .unwrap();
            let hist: hdrhistogram::Histogram<u64> =
                decoder.deserialize(&mut bytes.as_slice()).unwrap();
            let row = &report.timeline[intervals];
            assert_eq!(hist.len(), row.ops);
            // Percentiles are the histogram's, capped at the exact maximum.
            let p99 =
                (respload::report::percentile(&hist, 0.99) as f64 / 1e6).min(row.latency_ms.max);
            assert_eq!(p99, row.latency_ms.p99);
            intervals += 1;
        }
    }
    assert_eq!(intervals, report.timeline.len());
}

#[test]
fn ctrl_c_stops_within_a_second_and_keeps_the_partial_report() {
    let server = Server::start(&[]);
    let json = server.dir.join("partial.json");
    let mut child = Command::new(BIN)
        .args([
            "run",
            "--port",
            &server.port.to_string(),
            "-c",
            "4",
            "--duration",
            "60s",
        ])
        .args(["--json", json.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait for the first live line: traffic is flowing.
    child_started(&mut child);
    let sent = Instant::now();
    // SAFETY: sending SIGINT to our own child process.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert!(
        sent.elapsed() < Duration::from_secs(1),
        "{:?}",
        sent.elapsed()
    );
    assert!(status.success(), "{status:?}");
    let report = partial_report(&mut child, &json);
    assert!(report.interrupted);
    assert!(report.totals.ops > 0);
}

#[test]
fn a_phase_that_cannot_run_prints_the_earlier_phases_and_exits_2() {
    let server = Server::start(&[]);
    let second = Server::start(&[]);
    let spec = server.dir.join("two.toml");
    std::fs::write(
        &spec,
        format!(
            r#"
            target = {{ port = {} }}
            [load]
            connections = 2
            duration = "3s"
            [[phases]]
            name = "first"
            [[phases]]
            name = "second"
            target = {{ port = {} }}
            "#,
            server.port, second.port
        ),
    )
    .unwrap();
    let json = server.dir.join("partial.json");
    let mut child = Command::new(BIN)
        .args(["run", spec.to_str().unwrap()])
        .args(["--json", json.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The first phase is running; the second one's server goes away.
    let mut seen = child_started(&mut child);
    let mut stderr = child.stderr.take().unwrap();
    let port = second.port;
    drop(second);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(2));
    stderr.read_to_end(&mut seen).unwrap();
    let stderr = String::from_utf8_lossy(&seen);
    let said = format!("respload: phase `second` failed: cannot connect to 127.0.0.1:{port}");
    assert!(stderr.contains(&said), "{stderr}");
    assert!(stderr.contains("; the report above is partial"), "{stderr}");
    let report = partial_report(&mut child, &json);
    assert_eq!(report.phases.len(), 1);
    assert!(report.totals.ops > 0);
    assert!(report.error.unwrap().contains(&port.to_string()));
}

#[test]
fn help_documents_every_flag() {
    let out = Command::new(BIN).args(["run", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    for flag in [
        "--json",
        "--hdr-log",
        "--quiet",
        "--url",
        "--host",
        "--port",
        "--unix",
        "--password",
        "--user",
        "--connections",
        "--threads",
        "--pipeline",
        "--requests",
        "--duration",
        "--rate",
        "--warmup",
        "--seed",
        "--shard",
        "--start-at",
        "--barrier",
        "--barrier-id",
        "--barrier-timeout",
    ] {
        assert!(help.contains(flag), "{flag} missing from:\n{help}");
    }
}

#[test]
fn no_short_flag_means_what_the_peers_make_it_mean_otherwise() {
    // redis-benchmark and memtier read -d as the data size and -t as the tests (threads in
    // memtier): respload's run has neither short flag, so a peer's habit fails loudly.
    for (flag, value) in [("-d", "10s"), ("-t", "2")] {
        let e = stderr_of_bad_input(&["run", flag, value, "spec.toml"]);
        assert!(e.contains(&format!("'{flag}'")), "{flag}: {e}");
    }
    let out = Command::new(BIN).args(["run", "--help"]).output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    for line in help.lines().map(str::trim_start) {
        assert!(
            !line.starts_with("-d,") && !line.starts_with("-t,"),
            "{line}"
        );
    }
}

#[test]
fn help_and_guide_list_every_subcommand_and_limit() {
    let help = |args: &[&str]| {
        let out = Command::new(BIN).args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let top = help(&["--help"]);
    let commands: Vec<&str> = top
        .lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .collect();
    assert!(commands.len() >= 12, "{top}");
    let guide = std::fs::read_to_string(format!("{}/../docs/guide.md", env!("CARGO_MANIFEST_DIR")))
        .unwrap();
    let synopsis: String = guide
        .split("## The command line")
        .nth(1)
        .and_then(|s| s.split("```").nth(1))
        .expect("the guide's command-line synopsis")
        .into();
    for c in &commands {
        let line = format!("respload {c} ");
        assert!(
            synopsis.contains(&line),
            "`{line}` missing from the guide's synopsis"
        );
    }
    // Every limit name, in `run --check`'s and `compare --fail-on`'s help and in the guide.
    let (run, compare) = (help(&["run", "--help"]), help(&["compare", "--help"]));
    for limit in respload::report::LIMITS {
        assert!(
            run.contains(limit),
            "{limit} missing from run --help:\n{run}"
        );
        assert!(
            compare.contains(limit),
            "{limit} missing from compare --help"
        );
        assert!(
            guide.contains(&format!("`{limit}`")),
            "{limit} missing from the guide"
        );
    }
}

#[test]
fn schema_prints_the_json_schemas_as_published() {
    let schema_of = |of: &str| -> serde_json::Value {
        let out = Command::new(BIN).args(["schema", of]).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        // The files the docs publish are this output (docs.sh --check regenerates them).
        let published = std::fs::read(format!(
            "{}/../docs/reference/{of}.schema.json",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&published),
            String::from_utf8_lossy(&out.stdout),
            "{of}"
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let report = schema_of("report");
    assert_eq!(report["x-schema-version"], respload::report::SCHEMA_VERSION);
    assert_eq!(report["title"], "Report");
    for def in ["Stats", "Latency", "TimelineRow", "Snapshot", "Validity"] {
        assert!(report["$defs"][def]["properties"].is_object(), "{def}");
    }
    let spec = schema_of("spec");
    assert_eq!(spec["additionalProperties"], false);
    for key in [
        "target", "load", "keys", "values", "commands", "phases", "vars",
    ] {
        assert!(spec["properties"][key].is_object(), "{key}");
    }
    assert_eq!(spec["$defs"]["Phase"]["properties"]["repeat"]["minimum"], 1);
    // The names the bindings generate their error classes, limits and comparison types from.
    let out = Command::new(BIN)
        .args(["schema", "bindings"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let names: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(names, respload::report::bindings_schema());
    let codes: Vec<&str> = names["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["code"].as_str().unwrap())
        .collect();
    let all: Vec<&str> = respload::error::ErrorKind::ALL
        .iter()
        .map(|k| k.code())
        .collect();
    assert_eq!(codes, all);
    assert_eq!(names["limits"][0]["name"], "p50_ms");
    let err = stderr_of_bad_input(&["schema", "nonsense"]);
    assert!(
        err.contains("nonsense")
            && err.contains("spec")
            && err.contains("report")
            && err.contains("bindings"),
        "{err}"
    );
}

#[test]
fn bad_input_fails_before_traffic_with_the_field_and_value() {
    let dir = std::env::temp_dir().join(format!("respload-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let spec = dir.join("bad.toml");
    std::fs::write(&spec, "[load]\npipeline = 0\n").unwrap();
    let err = stderr_of_bad_input(&["run", spec.to_str().unwrap()]);
    assert!(
        err.contains("load.pipeline") && err.contains("0 is out of range"),
        "{err}"
    );
    let err = stderr_of_bad_input(&["run", "--duration", "forever"]);
    assert!(
        err.contains("load.duration") && err.contains("forever"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn output_files_that_cannot_be_written_or_are_named_twice_stop_before_traffic() {
    let server = Server::start(&[]);
    let port = server.port.to_string();
    let dir = std::env::temp_dir().join(format!("respload-cli-out-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let d = dir.to_str().unwrap();
    let file = dir.join("same.out");
    let f = file.to_str().unwrap();
    let run = ["run", "--port", &port, "-q", "-c", "1", "-n", "100"];
    let err = stderr_of_bad_input(&[&run[..], &["--json", d]].concat());
    assert!(
        err.contains("`--json`: `") && err.contains("cannot be written"),
        "{err}"
    );
    let err = stderr_of_bad_input(&[&run[..], &["--json", f, "--hdr-log", f]].concat());
    assert!(
        err.contains("`--hdr-log`: `") && err.contains("is also where --json writes"),
        "{err}"
    );
    let spec = dir.join("spec.json");
    let memtier_file = serde_json::json!({ "output": { "memtier": f } }).to_string();
    std::fs::write(&spec, memtier_file).unwrap();
    let with_spec = [
        "run",
        spec.to_str().unwrap(),
        "--port",
        &port,
        "-q",
        "-n",
        "100",
    ];
    let err = stderr_of_bad_input(&[&with_spec[..], &["--json", f]].concat());
    assert!(err.contains("is also where output.memtier writes"), "{err}");
    let rb = [
        "redis-benchmark",
        "-p",
        &port,
        "-n",
        "100",
        "-t",
        "set",
        "-q",
    ];
    let err = stderr_of_bad_input(&[&rb[..], &["--json", d]].concat());
    assert!(
        err.contains("`--json`") && err.contains("cannot be written"),
        "{err}"
    );
    let mt = ["memtier", "-p", &port, "-n", "10", "-c", "1", "-t", "1"];
    let err = stderr_of_bad_input(&[&mt[..], &["--out-file", d]].concat());
    assert!(
        err.contains("`--out-file`") && err.contains("cannot be written"),
        "{err}"
    );
    let err = stderr_of_bad_input(&[&mt[..], &["--hdr-file-prefix", "/nonexistent-rl/x"]].concat());
    assert!(err.contains("does not exist"), "{err}");
    assert_eq!(server.calls("set") + server.calls("get"), 0);
    // A writable pair of files: both written.
    let log = dir.join("run.hlog");
    let out = Command::new(BIN)
        .args([&run[..], &["--json", f, "--hdr-log", log.to_str().unwrap()]].concat())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(std::fs::read_to_string(f)
        .unwrap()
        .contains("\"schema_version\""));
    assert!(std::fs::read_to_string(&log).unwrap().starts_with("#"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn check_budgets_set_the_exit_status_and_bad_ones_stop_before_traffic() {
    let server = Server::start(&[]);
    let port = server.port.to_string();
    let run = |checks: &[&str]| {
        let mut args = vec!["run", "--port", &port, "-q", "-c", "2", "-n", "500"];
        for c in checks {
            args.extend(["--check", c]);
        }
        Command::new(BIN).args(&args).output().unwrap()
    };
    // Met: exit 0, nothing said.
    let out = run(&["p99_ms=10000", "error_rate=0", "commands.SET.p99_ms=10000"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(!String::from_utf8_lossy(&out.stderr).contains("not met"));
    // Missed: the table still printed, every limit missed named on stderr, exit 1.
    let out = run(&[
        "p99_ms=0.000001",
        "commands.GET.ops_per_sec=1e12",
        "error_rate=0",
    ]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("ALL STATS"));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("respload: respload thresholds not met (500 requests in "),
        "{err}"
    );
    assert!(err.contains("- totals: p99 latency"), "{err}");
    assert!(err.contains("is over the budget of 0.000001 ms"), "{err}");
    assert!(err.contains("- commands.GET: throughput"), "{err}");
    assert!(!err.contains("error rate"), "{err}");
    let sent = server.calls("set") + server.calls("get");
    assert_eq!(sent, 1000);
    // Bad limits are refused by name before any traffic.
    let err = stderr_of_bad_input(&["run", "--port", &port, "--check", "p99=5"]);
    assert!(err.contains("`check`: unknown limit `p99`"), "{err}");
    let err = stderr_of_bad_input(&["run", "--port", &port, "--check", "error_rate=2"]);
    assert!(
        err.contains("`check.error_rate`: 2 is out of range (0 to 1)"),
        "{err}"
    );
    let err = stderr_of_bad_input(&["run", "--port", &port, "--check", "p99_ms=fast"]);
    assert!(err.contains("`fast` is not a number"), "{err}");
    let twice = [
        "--check",
        "commands.GET.p99_ms=2",
        "--check",
        "commands.GET.p99_ms=3",
    ];
    let err = stderr_of_bad_input(&[&["run", "--port", &port][..], &twice].concat());
    assert!(
        err.contains("`check.commands.GET.p99_ms`: given twice (2 and 3)"),
        "{err}"
    );
    let err = stderr_of_bad_input(&["run", "--port", &port, "--check", "commands=5"]);
    assert!(err.contains("`commands.LABEL.LIMIT=VALUE`"), "{err}");
    let nope = ["run", "--port", &port, "--check", "commands.NOPE.p99_ms=5"];
    let err = stderr_of_bad_input(&nope);
    assert!(
        err.contains(
            "`check.commands.NOPE`: no measured command is labelled `NOPE`: allowed are SET, GET"
        ),
        "{err}"
    );
    assert_eq!(server.calls("set") + server.calls("get"), sent);
}

#[test]
fn scale_and_var_set_the_spec_files_variables_and_repeat_numbers_the_runs() {
    let server = Server::start(&[]);
    let spec = server.dir.join("vars.toml");
    std::fs::write(
        &spec,
        r#"
        [vars]
        url = "redis://127.0.0.1:1"
        keys = 999999
        runs = 1
        [scales.ci]
        keys = 299
        runs = 2
        [target]
        url = "${url}"
        [keys]
        prefix = "v${keys}:"
        range = [0, "${keys}"]
        [[phases]]
        name = "fill"
        measured = false
        load = { requests = "all_keys", connections = 2 }
        keys = { distribution = "sequential" }
        commands = [{ name = "set" }]
        [[phases]]
        name = "read"
        repeat = "${runs}"
        load = { requests = 100, connections = 2 }
        commands = [{ name = "get" }]
        "#,
    )
    .unwrap();
    let json = server.dir.join("vars.json");
    let url = format!("--var=url={}", server.url());
    let out = Command::new(BIN)
        .args(["run", spec.to_str().unwrap(), "--scale", "ci", &url])
        .args(["--var", "keys=499", "-q", "--json", json.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Report = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let names: Vec<&str> = report.phases.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        ["fill", "read #1", "read #2"],
        "the ci scale's runs = 2"
    );
    // --var keys=499 wins over the scale's 299: keys v499:0 ... v499:499 were written.
    assert_eq!(server.dbsize(), 500);
    assert_eq!(report.phases[0].totals.ops, 500);
    assert_eq!(report.totals.hits, 200);

    let err = stderr_of_bad_input(&["check", spec.to_str().unwrap(), "--var", "kyes=1"]);
    assert!(
        err.contains("vars.kyes") && err.contains("declared are"),
        "{err}"
    );
    let err = stderr_of_bad_input(&["check", spec.to_str().unwrap(), "--scale", "full"]);
    assert!(err.contains("no scale `full`: defined: ci"), "{err}");
}

/// Run respload with `args`, expect success and return the JSON report it wrote to `json`.
fn report_of(args: &[&str], json: &std::path::Path) -> Report {
    let out = Command::new(BIN)
        .args(args)
        .args(["-q", "--json", json.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap()
}

#[test]
fn host_port_and_unix_flags_replace_a_spec_files_url_and_keep_its_credentials() {
    let server = Server::start(&["--requirepass", "secret"]);
    let port = server.port.to_string();
    let keys_in = |db: &str| -> u64 {
        let out = server.cli(&["--no-auth-warning", "-a", "secret", "-n", db, "DBSIZE"]);
        out.parse()
            .unwrap_or_else(|_| panic!("DBSIZE of db {db}: {out}"))
    };
    // The file points at a port nobody listens on: only the flag can make the run work.
    let nobody = common::free_port();
    let spec = |name: &str, url: &str| {
        let path = server.dir.join(name);
        let text = format!(
            "[target]\nurl = \"{url}\"\n[load]\nconnections = 2\nrequests = 300\n\
             [keys]\nrange = [0, 99]\ndistribution = \"sequential\"\n[[commands]]\nname = \"set\"\n"
        );
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    };
    let json = server.dir.join("r.json");

    // -p: the URL's password and database are kept.
    let file = spec(
        "port.toml",
        &format!("redis://:secret@127.0.0.1:{nobody}/3"),
    );
    let report = report_of(&["run", &file, "-p", &port], &json);
    assert_eq!((report.totals.ops, report.totals.errors), (300, 0));
    assert_eq!(keys_in("3"), 100);
    let target = &report.phases[0].workload["target"];
    assert_eq!(target["port"], server.port);
    assert!(target.get("url").is_none(), "{target}");
    assert_eq!(target["password"], "***");

    // --host and --port together, the same.
    let report = report_of(&["run", &file, "-H", "127.0.0.1", "--port", &port], &json);
    assert_eq!(report.totals.ops, 300);

    // --unix with -a: the flag's password wins over the URL's, its database is kept.
    let file = spec("unix.toml", &format!("redis://:wrong@127.0.0.1:{nobody}/4"));
    let sock = server.socket();
    let report = report_of(&["run", &file, "--unix", &sock, "-a", "secret"], &json);
    assert_eq!((report.totals.ops, report.totals.errors), (300, 0));
    assert_eq!(keys_in("4"), 100);
    assert_eq!(report.phases[0].workload["target"]["unix"], sock.as_str());

    // --url replaces a file's host and port.
    let path = server.dir.join("hostport.toml");
    std::fs::write(
        &path,
        format!("[target]\nhost = \"127.0.0.1\"\nport = {nobody}\n[load]\nrequests = 50\n"),
    )
    .unwrap();
    let url = format!("redis://:secret@127.0.0.1:{port}/5");
    let report = report_of(&["run", path.to_str().unwrap(), "--url", &url], &json);
    assert_eq!((report.totals.ops, report.totals.errors), (50, 0));

    // Without the flag, the file's URL is used, and fails: the test above proved something.
    let out = Command::new(BIN)
        .args(["run", &file, "-q"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    // --unix with --port names both.
    let err = stderr_of_bad_input(&["run", &file, "--unix", &sock, "-p", &port]);
    assert!(err.contains("--unix") && err.contains("--port"), "{err}");
}

#[test]
fn rate_runs_the_measured_phases_open_loop_and_leaves_populate_alone() {
    let server = Server::start(&[]);
    let spec = scenario(&server.dir);
    let json = server.dir.join("r.json");
    let port = server.port.to_string();
    let report = report_of(
        &["run", spec.to_str().unwrap(), "-p", &port, "--rate", "500"],
        &json,
    );
    let (populate, measure) = (&report.phases[0], &report.phases[1]);
    // The populate phase stays closed loop, its request count unchanged.
    assert_eq!(populate.totals.ops, 2000);
    assert_eq!(populate.target_rate, None);
    assert!(populate.workload["load"].get("rate").is_none());
    // The measured phase: 500/s for its 2 s, latency from intended send times.
    assert_eq!(measure.target_rate, Some(500.0));
    assert_eq!(measure.workload["load"]["rate"], 500.0);
    let expected = 500.0 * measure.duration_s;
    let ops = measure.totals.ops as f64;
    assert!((ops / expected - 1.0).abs() < 0.05, "{ops} of {expected}");
    assert!(measure.client_lag_ms.is_some());
    assert_eq!(server.calls("get"), measure.totals.ops);

    // Out of range, or not a number: refused before any traffic, naming the value.
    let err = stderr_of_bad_input(&["run", "-p", &port, "--rate", "0"]);
    assert!(
        err.contains("load.rate") && err.contains("0 is out of range"),
        "{err}"
    );
    let err = stderr_of_bad_input(&["run", "-p", &port, "-R", "nan"]);
    assert!(err.contains("`nan` is not a number"), "{err}");
    assert_eq!(server.calls("get"), measure.totals.ops);
}

#[test]
fn shards_run_by_hand_merge_on_the_command_line_as_in_the_library() {
    let server = Server::start(&[]);
    let spec = server.dir.join("w.toml");
    std::fs::write(
        &spec,
        format!(
            "seed = 2\n[target]\nurl = \"{}\"\n[load]\nconnections = 4\nrequests = 4001\n",
            server.url()
        ),
    )
    .unwrap();
    let at = (std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
        + 1.0)
        .to_string();
    let json = |i: usize| server.dir.join(format!("s{i}.json"));
    let hosts: Vec<_> = (0..2)
        .map(|i| {
            Command::new(BIN)
                .args(["run", spec.to_str().unwrap(), "-q", "--start-at", &at])
                .args(["--shard", &format!("{i}/2"), "--json"])
                .arg(json(i))
                .stdout(Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut h in hosts {
        assert!(h.wait().unwrap().success());
    }
    let merged_path = server.dir.join("merged.json");
    let out = Command::new(BIN)
        .arg("merge")
        .args([json(1), json(0)])
        .arg("--json")
        .arg(&merged_path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("ALL STATS") && stdout.contains("HOSTS"),
        "{stdout}"
    );
    let merged = Report::from_file(&merged_path).unwrap();
    let shards = [0, 1].map(|i| Report::from_file(json(i)).unwrap());
    assert_eq!(merged, Report::merge(&shards).unwrap());
    assert_eq!(merged.totals.ops, 4001);
    assert_eq!(server.calls("set") + server.calls("get"), 4001);
    assert!(merged.hosts.iter().all(|h| h.start_skew_ms.abs() < 250.0));
    // Each host's own seed is kept, so that its part can be run again.
    let seeds: Vec<Option<u64>> = shards.iter().map(|s| Some(s.seed)).collect();
    assert_eq!(
        merged.hosts.iter().map(|h| h.seed).collect::<Vec<_>>(),
        seeds
    );
    assert_ne!(seeds[0], seeds[1]);
    // A missing shard is named, with the file; a start already past fails before traffic.
    let out = Command::new(BIN)
        .arg("merge")
        .arg(json(1))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("shard(s) 0 of 2 missing"));
    let err = stderr_of_bad_input(&["run", spec.to_str().unwrap(), "--start-at", "1000"]);
    assert!(err.contains("start_at") && err.contains("passed"), "{err}");
    let err = stderr_of_bad_input(&["run", spec.to_str().unwrap(), "--start-at", "noon"]);
    assert!(err.contains("RFC 3339"), "{err}");
    assert_eq!(server.calls("set") + server.calls("get"), 4001);
    // A host that could not run (its start passed while it connected) leaves no empty
    // report for `merge s*.json` to trip on, and keeps a report already there.
    let late = (std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
        - 5.0)
        .to_string();
    let kept = std::fs::read(json(0)).unwrap();
    for (i, path) in [(1, server.dir.join("s2.json")), (0, json(0))] {
        let out = Command::new(BIN)
            .args(["run", spec.to_str().unwrap(), "-q", "--start-at", &late])
            .args(["--shard", &format!("{i}/2"), "--json"])
            .arg(&path)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("start_at") && err.contains("passed"), "{err}");
    }
    assert!(!server.dir.join("s2.json").exists());
    assert_eq!(std::fs::read(json(0)).unwrap(), kept);
    assert_eq!(server.calls("set") + server.calls("get"), 4001);
}

/// The one `Validity:` line of a table (panics unless there is exactly one).
fn validity_line(stdout: &str) -> &str {
    let lines: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("Validity:"))
        .collect();
    assert_eq!(lines.len(), 1, "{stdout}");
    lines[0]
}

/// Load into `server` a script that keeps it busy for `ARGV[1]` microseconds (it spins on
/// `TIME`, as core/tests/calibration.rs does); its SHA1.
fn load_spin_script(server: &Server) -> String {
    let sha = server.cli(&[
        "SCRIPT",
        "LOAD",
        "local s = redis.call('TIME') \
         local t0 = tonumber(s[1]) * 1000000 + tonumber(s[2]) \
         repeat local t = redis.call('TIME') \
         until tonumber(t[1]) * 1000000 + tonumber(t[2]) - t0 >= tonumber(ARGV[1])",
    ]);
    assert_eq!(sha.len(), 40, "SCRIPT LOAD answered {sha:?}");
    sha
}

#[test]
fn the_table_says_whether_to_trust_the_figures_and_check_repeats_it_on_stderr() {
    let server = Server::start(&[]);
    let port = server.port.to_string();
    let json = server.dir.join("r.json");
    let run = |args: &[&str]| {
        let out = Command::new(BIN)
            .args(["run", "-p", &port, "-q", "--json", json.to_str().unwrap()])
            .args(args)
            .output()
            .unwrap();
        let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
        let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
        let written = std::fs::read_to_string(&json).unwrap_or_else(|e| panic!("{e}: {stderr}"));
        let report: Report = serde_json::from_str(&written).unwrap();
        (out.status.code(), stdout, stderr, report)
    };

    // A closed loop with room to spare: its one check (the client's busy fraction) passed.
    let (code, stdout, stderr, report) = run(&["-c", "2", "-n", "2000"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(report.validity.trusted, "{:?}", report.validity);
    assert_eq!(
        validity_line(&stdout),
        "Validity: trusted (1 checks passed: client_busy)"
    );
    assert!(!stderr.contains("not trusted"), "{stderr}");

    // Open loop at 2,000/s on one connection to a server that takes over 1 ms a request
    // (under 1,000/s achieved): the rate check fails, on any machine.
    let sha = load_spin_script(&server);
    let spec = server.dir.join("over.toml");
    std::fs::write(
        &spec,
        format!(
            "[load]\nconnections = 1\nthreads = 1\nrate = 2000\nduration = \"1s\"\n\
             [[commands]]\ntemplate = \"EVALSHA {sha} 0 1000\"\n"
        ),
    )
    .unwrap();
    let spec = spec.to_str().unwrap();
    let (code, stdout, stderr, report) = run(&[spec]);
    let failures = report.validity.failures();
    // Said, not failed: the exit status is 0.
    assert_eq!(code, Some(0), "{stderr}");
    assert!(!report.validity.trusted);
    assert!(
        failures.iter().any(|f| f.starts_with("rate (main): ")
            && f.ends_with("the rate asked for was not achieved")),
        "{failures:?}"
    );
    // The line names every failed check, with its phase and why.
    let line = validity_line(&stdout);
    assert_eq!(
        line,
        format!("Validity: NOT TRUSTED: {}", failures.join("; ")),
        "{stdout}"
    );
    assert!(line.contains("rate (main): "), "{line}");
    // Without thresholds the table alone says it: no warning on stderr.
    assert!(!stderr.contains("not trusted"), "{stderr}");

    // With thresholds (met here), the same verdict is a warning on stderr, and the exit
    // status is still 0.
    let (code, stdout, stderr, report) = run(&[spec, "--check", "error_rate=0"]);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("THRESHOLDS (all 1 passed)"), "{stdout}");
    let line = validity_line(&stdout);
    assert!(
        line.starts_with("Validity: NOT TRUSTED: ") && line.contains("rate (main): "),
        "{stdout}"
    );
    let failures = report.validity.failures();
    let warning = format!(
        "respload: this report's figures are not trusted ({} of {} validity checks failed):{}\n",
        failures.len(),
        report.validity.checks.len(),
        failures
            .iter()
            .map(|f| format!("\n  - {f}"))
            .collect::<String>()
    );
    assert_eq!(stderr, warning);
    assert!(stderr.contains("\n  - rate (main): "), "{stderr}");
}
