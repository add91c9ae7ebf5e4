//! `respload memtier`: memtier_benchmark command lines against a real redis-server, the
//! published scenario lines unchanged, and memtier's text, JSON and HDR outputs.

mod common;

use common::Server;
use hdrhistogram::serialization::interval_log::{IntervalLogIterator, LogEntry};
use hdrhistogram::serialization::Deserializer;
use respload::tools::memtier::{parse_line, Invocation, Memtier};
use respload::{run, Report};
use serde_json::Value;
use std::io::Write;
use std::process::{Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_respload");

/// The three lines of scenarios.md section 3, quoted exactly.
const POPULATE: &str = "memtier_benchmark -s your-endpoint -p your-port --hide-histogram --key-maximum=75000000 -n allkeys -d 500 --key-pattern=P:P --ratio=1:0";
const HOT_SET: &str = "memtier_benchmark -s your-endpoint -p your-port --hide-histogram --key-minimum=27250000 --key-maximum=47750000 -n allkeys --key-pattern=P:P --ratio=0:1";
const GAUSSIAN: &str = "memtier_benchmark -s your-endpoint -p your-port --pipeline=11 -c 20 -t 1 -d 500 --key-maximum=75000000 --key-pattern=G:G --key-stddev=5125000 --ratio=1:1 --distinct-client-seed --randomize --test-time=600 --run-count=1 --out-file=test.out";

/// A published line pointed at `server`, with `extra` options appended (a later memtier
/// option overrides an earlier one).
fn line(published: &str, server: &Server, extra: &str) -> String {
    let line = published
        .replace("your-endpoint", "127.0.0.1")
        .replace("your-port", &server.port.to_string());
    format!("{line} {extra}")
}

fn parse(line: &str) -> Memtier {
    match parse_line(line).unwrap_or_else(|e| panic!("{line}: {e}")) {
        Invocation::Run(m) => *m,
        other => panic!("{line}: {other:?}"),
    }
}

/// `OBJECT FREQ` of many keys through one redis-cli.
fn freqs(server: &Server, keys: impl Iterator<Item = u64>) -> Vec<u64> {
    let mut child = Command::new("redis-cli")
        .args(["-p", &server.port.to_string()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = String::new();
    for k in keys {
        input.push_str(&format!("OBJECT FREQ memtier-{k}\n"));
    }
    // Written from another thread: the replies fill the pipe while the commands go in.
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()).unwrap());
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.trim().parse::<u64>().unwrap_or_else(|_| panic!("{l}")))
        .collect()
}

fn mean(v: &[u64]) -> f64 {
    v.iter().sum::<u64>() as f64 / v.len() as f64
}

#[test]
fn the_published_lines_run_unchanged_at_small_scale() {
    // LFU counters with log factor 0 count every access (up to 255) and never decay, so
    // OBJECT FREQ shows how often each key was hit.
    let server = Server::start(common::COUNT_EVERY_READ);

    // 1. Populate: every key of the range exactly once, values of -d bytes.
    let m = parse(&line(POPULATE, &server, "--key-maximum=50000"));
    assert!(m.options.hide_histogram);
    let report = run(&m.workload).unwrap();
    assert_eq!(report.totals.errors, 0);
    assert_eq!(report.totals.ops, 50001);
    assert_eq!(server.dbsize(), 50001);
    assert_eq!(server.calls("set"), 50001);
    assert_eq!(server.cli(&["EXISTS", "memtier-0", "memtier-50000"]), "2");
    assert_eq!(server.cli(&["EXISTS", "memtier-50001", "key:1"]), "0");
    assert_eq!(server.cli(&["STRLEN", "memtier-2500"]), "500");
    assert_eq!(
        server.cli(&["GETRANGE", "memtier-17", "0", "9"]),
        "x".repeat(10)
    );
    let text = respload::tools::memtier::text(&report, &m.options);
    // 50001 keys over 200 connections: 251 requests per client.
    assert!(text.contains("\n251       Requests per client\n"), "{text}");
    assert!(!text.contains("Request Latency Distribution"), "{text}");

    // 2. Read the hot set around the median: every key of its range once, all hits.
    let m = parse(&line(
        HOT_SET,
        &server,
        "--key-minimum=20000 --key-maximum=30000",
    ));
    let report = run(&m.workload).unwrap();
    assert_eq!(report.totals.ops, 10001);
    assert_eq!(server.calls("get"), 10001);
    assert_eq!((report.totals.hits, report.totals.misses), (10001, 0));

    // 3. Gaussian 1:1 around the middle of the range, for 2 seconds instead of 600.
    let m = parse(&line(
        GAUSSIAN,
        &server,
        "--key-maximum=50000 --key-stddev=5000 --test-time=2",
    ));
    assert_eq!(m.options.out_file.as_deref(), Some("test.out"));
    let before = freqs(&server, 0..=50_000);
    let report = run(&m.workload).unwrap();
    assert_eq!(report.totals.errors, 0);
    assert!(
        report.duration_s > 1.8 && report.duration_s < 3.0,
        "{}",
        report.duration_s
    );
    assert!(report.totals.ops > 2000, "{}", report.totals.ops);
    let (sets, gets) = (&report.commands["SET"], &report.commands["GET"]);
    let share = sets.ops as f64 / report.totals.ops as f64;
    assert!((0.45..0.55).contains(&share), "SET share {share}");
    // Every GET finds a key: the range was populated.
    assert_eq!((gets.hits, gets.misses), (gets.ops, 0));
    // Hits per key fall off with the distance from the median (25000), as a normal does
    // (the counters saturate at 255, far above what 2 seconds give here).
    let after = freqs(&server, 0..=50_000);
    let hits: Vec<u64> = after
        .iter()
        .zip(&before)
        .map(|(a, b)| a.saturating_sub(*b))
        .collect();
    let band = |lo: usize, hi: usize| mean(&hits[lo..hi]);
    let (centre, one_sigma, tails) = (
        band(24_000, 26_000),
        (band(19_000, 21_000) + band(29_000, 31_000)) / 2.0,
        (band(0, 5_000) + band(45_001, 50_001)) / 2.0,
    );
    eprintln!("hits per key: centre {centre}, one sigma {one_sigma}, tails {tails}");
    assert!(
        centre > one_sigma * 1.3 && one_sigma > tails * 3.0 && centre > 2.0,
        "centre {centre}, one sigma {one_sigma}, tails {tails}"
    );
}

#[test]
fn requests_are_per_client_times_clients_times_threads() {
    let server = Server::start(&[]);
    let m = parse(&format!(
        "-s 127.0.0.1 -p {} -n 100 -c 3 -t 2 --key-maximum=50",
        server.port
    ));
    let report = run(&m.workload).unwrap();
    assert_eq!(report.totals.ops, 600);
    assert_eq!(server.calls("set") + server.calls("get"), 600);
    assert_eq!(report.client.connections, 6);
    assert_eq!(report.client.threads, 2);
}

fn memtier_cli(args: &[&str]) -> std::process::Output {
    Command::new(BIN)
        .arg("memtier")
        .args(args)
        .output()
        .unwrap()
}

/// The numbers of a table row (`Totals 123.45 ...`), as a memtier output parser reads them.
fn row<'a>(text: &'a str, name: &str) -> Vec<&'a str> {
    text.lines()
        .find(|l| l.split_whitespace().next() == Some(name))
        .unwrap_or_else(|| panic!("no {name} row in:\n{text}"))
        .split_whitespace()
        .skip(1)
        .collect()
}

#[test]
fn the_cli_writes_memtiers_table_json_and_hdr_files() {
    let server = Server::start(&[]);
    let dir = &server.dir;
    let (out, json, own, hdr) = (
        dir.join("out.txt"),
        dir.join("mb.json"),
        dir.join("respload.json"),
        dir.join("lat"),
    );
    let port = server.port.to_string();
    let o = memtier_cli(&[
        "-s",
        "127.0.0.1",
        "-p",
        &port,
        "-n",
        "200",
        "-c",
        "2",
        "-t",
        "2",
        "--key-maximum=99",
        "--ratio=1:3",
        "--print-percentiles=50,90,99.99",
        &format!("--out-file={}", out.display()),
        &format!("--json-out-file={}", json.display()),
        &format!("--hdr-file-prefix={}", hdr.display()),
        "--json",
        own.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(
        text.starts_with(
            "2         Threads\n2         Connections per thread\n200       Requests per client\n"
        ),
        "{text}"
    );
    assert!(text.contains("\n\nALL STATS\n===="), "{text}");
    let header: Vec<&str> = text
        .lines()
        .find(|l| l.starts_with("Type "))
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(
        header,
        [
            "Type",
            "Ops/sec",
            "Hits/sec",
            "Misses/sec",
            "Avg.",
            "Latency",
            "p50",
            "Latency",
            "p90",
            "Latency",
            "p99.99",
            "Latency",
            "KB/sec"
        ]
    );
    let (sets, gets, waits, totals) = (
        row(&text, "Sets"),
        row(&text, "Gets"),
        row(&text, "Waits"),
        row(&text, "Totals"),
    );
    assert_eq!(sets.len(), 8);
    assert_eq!(&sets[1..3], ["---", "---"]);
    assert_eq!(
        waits,
        ["0.00", "---", "---", "---", "---", "---", "---", "---"]
    );
    let num = |s: &str| s.parse::<f64>().unwrap_or_else(|_| panic!("{s}"));
    let totals: Vec<f64> = totals.iter().map(|s| num(s)).collect();
    let gets: Vec<f64> = gets.iter().map(|s| num(s)).collect();
    assert!(totals.iter().all(|x| x.is_finite()) && totals[0] > 0.0);
    // Hits and misses of GETs are the totals' hits and misses.
    assert_eq!((totals[1], totals[2]), (gets[1], gets[2]));
    assert!(totals[3] > 0.0 && totals[4] <= totals[6] && totals[5] <= totals[6]);
    assert!(text.contains("Request Latency Distribution"));
    assert!(
        text.lines().any(|l| l.starts_with("SET ")) && text.lines().any(|l| l.starts_with("GET "))
    );
    // --out-file took the text: stdout has none of it.
    assert!(!String::from_utf8_lossy(&o.stdout).contains("ALL STATS"));

    // respload's own report, and memtier's JSON agreeing with it.
    let report: Report = serde_json::from_str(&std::fs::read_to_string(&own).unwrap()).unwrap();
    assert_eq!(report.totals.ops, 800);
    let raw = std::fs::read_to_string(&json).unwrap();
    for bad in [": NaN", ": nan", ": inf", ": -inf", "Infinity"] {
        assert!(!raw.contains(bad), "{bad} in {raw}");
    }
    let mb: Value = serde_json::from_str(&raw).unwrap();
    assert_eq!(mb["configuration"]["clients"], 2);
    assert_eq!(mb["configuration"]["ratio"], "1:3");
    assert_eq!(mb["run information"]["Requests per client"], 200);
    assert_eq!(mb["run information"]["Format version"], 2);
    let all = &mb["ALL STATS"];
    for key in [
        "Runtime", "Sets", "Gets", "Waits", "Totals", "SET", "GET", "WAIT",
    ] {
        assert!(!all[key].is_null(), "{key} missing");
    }
    let t = &all["Totals"];
    assert_eq!(t["Count"], 800);
    assert_eq!(
        t["Count"].as_u64().unwrap(),
        all["Sets"]["Count"].as_u64().unwrap() + all["Gets"]["Count"].as_u64().unwrap()
    );
    for key in [
        "Ops/sec",
        "Hits/sec",
        "Misses/sec",
        "Latency",
        "Average Latency",
        "Min Latency",
        "Max Latency",
        "KB/sec",
    ] {
        assert!(t[key].is_number(), "{key}: {}", t[key]);
    }
    let pl = &t["Percentile Latencies"];
    for key in ["p50.00", "p90.00", "p99.99"] {
        assert!(pl[key].as_f64().unwrap() > 0.0, "{key} in {pl}");
    }
    assert!(pl["p50.00"].as_f64() <= pl["p99.99"].as_f64());
    assert!(pl["Histogram log format"]["Compressed Histogram"]
        .as_str()
        .unwrap()
        .starts_with("HISTF"));
    let series = t["Time-Serie"].as_object().unwrap();
    let counted: u64 = series.values().map(|s| s["Count"].as_u64().unwrap()).sum();
    assert_eq!(counted, 800);
    assert_eq!(
        (t["Ops/sec"].as_f64().unwrap() * 100.0).round() / 100.0,
        totals[0]
    );
    assert_eq!(all["Waits"]["Count"], 0);
    assert_eq!(all["Runtime"]["Interrupted"], "false");

    // HDR files: percentile text and a log whose histogram holds every request (in us).
    let full = std::fs::read_to_string(dir.join("lat_FULL_RUN_1.txt")).unwrap();
    assert!(full.contains("Value   Percentile   TotalCount 1/(1-Percentile)"));
    assert!(full.contains("Total count    =          800]"), "{full}");
    for name in ["lat_SET_command_run_1", "lat_GET_command_run_1"] {
        assert!(dir.join(format!("{name}.txt")).exists(), "{name}");
    }
    let log = std::fs::read(dir.join("lat_FULL_RUN_1.hgrm")).unwrap();
    let mut histograms = Vec::new();
    for entry in IntervalLogIterator::new(&log) {
        if let Ok(LogEntry::Interval(h)) = entry {
            let bytes = base64::Engine::decode(
                &base64::engine::general_purpose::STANDARD,
                h.encoded_histogram(),
            )
            .unwrap();
            let hist: hdrhistogram::Histogram<u64> = Deserializer::new()
                .deserialize(&mut bytes.as_slice())
                .unwrap();
            histograms.push(hist);
        }
    }
    assert_eq!(histograms.len(), 1);
    assert_eq!(histograms[0].len(), 800);
    let max_us = histograms[0].max() as f64;
    assert!((max_us / 1000.0 - report.totals.latency_ms.max).abs() < 0.02 + max_us / 1e6);
}

#[test]
fn commands_rows_run_count_and_stdout() {
    let server = Server::start(&[]);
    let port = server.port.to_string();
    let json = server.dir.join("runs.json");
    let o = memtier_cli(&[
        "--server=127.0.0.1",
        "--port",
        &port,
        "--command=SET __key__ __data__",
        "--command-key-pattern=P",
        "--command=GET __key__",
        "--command-ratio",
        "3",
        "--command-key-pattern=P",
        "-n",
        "40",
        "-c",
        "2",
        "-t",
        "1",
        "--key-maximum=79",
        "-x",
        "2",
        "--print-all-runs",
        "--json-out-file",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    for title in [
        "RUN #1 RESULTS",
        "RUN #2 RESULTS",
        "BEST RUN RESULTS",
        "WORST RUN RESULTS",
        "AGGREGATED AVERAGE RESULTS (2 runs)",
    ] {
        assert!(text.contains(&format!("\n\n{title}\n")), "{title}:\n{text}");
    }
    assert!(!text.contains("Waits"));
    assert_eq!(row(&text, "Sets").len(), 8);
    // --command rows show hits and misses as numbers.
    assert!(row(&text, "Gets")[1].parse::<f64>().is_ok());
    assert_eq!(server.calls("set") + server.calls("get"), 2 * 80);
    let mb: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let avg = &mb["AGGREGATED AVERAGE RESULTS (2 runs)"];
    assert_eq!(avg["Totals"]["Count"], 160);
    assert_eq!(mb["RUN #2 RESULTS"]["Totals"]["Count"], 80);
    assert!(mb["BEST RUN RESULTS"]["Gets"]["Count"].as_u64().unwrap() > 0);
}

#[test]
fn unsupported_and_unknown_options_are_errors_naming_them() {
    // Every option is honoured; what respload does not combine yet is an error naming it.
    for (args, needle, why) in [
        (
            vec!["--client-stats=s", "--cluster-mode"],
            "--client-stats",
            "--cluster-mode",
        ),
        (
            vec!["--data-import=d.csv", "--command=GET __key__"],
            "--command",
            "--data-import",
        ),
    ] {
        let o = memtier_cli(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains(&format!("`{needle}`")) && err.contains(why),
            "{args:?}: {err}"
        );
    }
    // memcache is refused for good (respload speaks RESP only), not "yet".
    for protocol in ["memcache_text", "memcache_binary"] {
        let o = memtier_cli(&["-s", "127.0.0.1", &format!("--protocol={protocol}")]);
        assert_eq!(o.status.code(), Some(2));
        assert_eq!(
            String::from_utf8_lossy(&o.stderr).trim_end(),
            format!(
                "respload: invalid spec at `--protocol`: `{protocol}` is not supported: respload \
                 speaks RESP only; allowed are redis, resp2 and resp3"
            )
        );
    }
    let o = memtier_cli(&["--no-such-option"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--no-such-option") && err.contains("not a memtier_benchmark option"));
    // memtier's own error: --no-expiry is about imported data.
    let o = memtier_cli(&["--no-expiry"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("`--no-expiry`") && err.contains("--data-import"),
        "{err}"
    );
    let o = memtier_cli(&["--ratio=1-10"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("--ratio") && err.contains("`1-10`") && err.contains("SET:GET"));
    // memtier's -h is the host; --help shows the usage.
    let o = memtier_cli(&["--help"]);
    assert!(o.status.success());
    assert!(String::from_utf8_lossy(&o.stdout).contains("--key-pattern"));
}

/// `--cluster-mode` runs memtier's workload against a 3-primary cluster: `-n allkeys` with
/// `P:P` writes every key once, each on the primary owning its slot, without redirections.
#[test]
fn cluster_mode_writes_every_key_on_its_owner() {
    let cluster = common::Cluster::start(3, 0);
    let port = cluster.port().to_string();
    let json = cluster.nodes[0].dir.join("mb.json");
    let o = memtier_cli(&[
        "--cluster-mode",
        "-s",
        "127.0.0.1",
        "-p",
        &port,
        "-c",
        "2",
        "-t",
        "1",
        "--key-maximum=300",
        "-n",
        "allkeys",
        "--key-pattern=P:P",
        "--ratio=1:0",
        "-d",
        "20",
        "--hide-histogram",
        &format!("--json-out-file={}", json.display()),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let primaries = cluster.primaries();
    let held: Vec<u64> = primaries.iter().map(|p| p.dbsize()).collect();
    // memtier's keys run from --key-minimum (default 0) to --key-maximum inclusive.
    assert_eq!(held.iter().sum::<u64>(), 301, "{held:?}");
    assert!(
        held.iter().all(|&n| n > 50),
        "keys spread over the primaries: {held:?}"
    );
    for p in &primaries {
        // Every key a node holds belongs to one of its slots: the node would refuse others.
        assert_eq!(p.calls("set"), p.dbsize());
    }
    let mb: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(mb["ALL STATS"]["Totals"]["Count"], 301);
}

#[test]
fn the_client_staircase_adds_clients_per_thread_each_step() {
    let server = Server::start(&[]);
    let m = parse(&format!(
        "memtier_benchmark -s 127.0.0.1 -p {} -t 2 -c 3 --clients-start=1 --clients-step=1 \
         --step-duration=1 --test-time=3 --hide-histogram",
        server.port
    ));
    let report = run(&m.workload).unwrap();
    // 2 threads x 1, then 2, then 3 clients; a row counts the most open during it, so the
    // connections opening right at a row's end may count in it.
    let conns: Vec<u32> = report.timeline.iter().map(|r| r.connections).collect();
    assert!(conns.windows(2).all(|w| w[0] <= w[1]), "{conns:?}");
    assert!((2..=4).contains(&conns[0]), "{conns:?}");
    assert!((4..=6).contains(&conns[1]) && conns[2] == 6, "{conns:?}");
    let steps: Vec<u32> = report.phases[0]
        .steps
        .iter()
        .map(|s| s.connections)
        .collect();
    assert_eq!(steps.len(), 3);
    assert_eq!(steps[2], 6);
    assert_eq!(server.calls("set") + server.calls("get"), report.totals.ops);
    assert_eq!(report.totals.errors, 0);
}

#[test]
fn a_phases_output_memtier_gets_memtiers_text_report_of_that_phase() {
    let server = Server::start(&[]);
    let (mix, incr) = (server.dir.join("mix.out"), server.dir.join("incr.out"));
    let w = common::workload(serde_json::json!({
        "target": { "url": server.url() },
        "keys": { "prefix": "o:", "range": [0, 99] },
        "load": { "connections": 4, "threads": 2 },
        "phases": [
            { "name": "fill", "measured": false, "load": { "requests": "all_keys" },
              "keys": { "distribution": "parallel" }, "commands": [{ "name": "set" }] },
            { "name": "mix", "load": { "requests": 600 }, "output": { "memtier": mix },
              "commands": [{ "name": "set" }, { "name": "get" }] },
            { "name": "count", "load": { "requests": 80 }, "output": { "memtier": incr },
              "commands": [{ "template": "INCR n:{key}" }] },
        ],
    }));
    let report = run(&w).unwrap();
    let p = &report.phases[1];
    let text = std::fs::read_to_string(&mix).unwrap();
    assert!(
        text.starts_with(
            "2         Threads\n2         Connections per thread\n150       Requests per client\n"
        ),
        "{text}"
    );
    assert!(text.contains("\n\nALL STATS\n===="), "{text}");
    // memtier's Ops/sec and Hits/sec are the phase's counts over its measured seconds.
    let per_sec = |n: u64| n as f64 / p.duration_s;
    let close = |cell: &str, want: f64| close_to(cell, want, &text);
    let (sets, gets) = (&p.commands["SET"], &p.commands["GET"]);
    assert_eq!(sets.ops + gets.ops, 600);
    close(row(&text, "Sets")[0], per_sec(sets.ops));
    close(row(&text, "Gets")[0], per_sec(gets.ops));
    // Every key was filled first: every GET hit.
    close(row(&text, "Gets")[1], per_sec(gets.ops));
    close(row(&text, "Totals")[0], per_sec(600));
    assert!(text.contains("Request Latency Distribution"), "{text}");

    let text = std::fs::read_to_string(&incr).unwrap();
    close_to(
        row(&text, "Incrs")[0],
        80.0 / report.phases[2].duration_s,
        &text,
    );
    assert!(!text.contains("Sets "), "{text}");
    assert_eq!(report.phases[1].output_error, None);

    // A file that cannot be written fails before any traffic, naming the field.
    let calls = server.calls("set");
    let mut bad = w.to_json_value();
    bad["phases"][1]["output"]["memtier"] = "/nonexistent-dir/x.out".into();
    let e = run(&common::workload(bad)).unwrap_err().to_string();
    assert!(
        e.contains("phases[1].output.memtier") && e.contains("/nonexistent-dir/x.out"),
        "{e}"
    );
    assert_eq!(server.calls("set"), calls);
    // A run that fails after the files were opened (its Prometheus address is taken) leaves
    // no empty file it created, and a file there before as it was.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let (fresh, before) = (server.dir.join("fresh.out"), std::fs::read(&mix).unwrap());
    let mut fails = w.to_json_value();
    fails["phases"][1]["output"]["memtier"] = fresh.to_str().unwrap().into();
    fails["phases"][2]["output"]["memtier"] = mix.to_str().unwrap().into();
    fails["observe"] = serde_json::json!({ "prometheus": taken.local_addr().unwrap().to_string() });
    let e = run(&common::workload(fails)).unwrap_err().to_string();
    assert!(e.contains("observe.prometheus"), "{e}");
    assert!(!fresh.exists(), "{e}");
    assert_eq!(std::fs::read(&mix).unwrap(), before);
    assert_eq!(server.calls("set"), calls);

    // Two phases cannot write one file: a top-level output would do that.
    let mut shared = w.to_json_value();
    shared["output"] = serde_json::json!({ "memtier": "same.out" });
    for p in shared["phases"].as_array_mut().unwrap() {
        p.as_object_mut().unwrap().remove("output");
    }
    let e = respload::Workload::from_json_value(shared)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("phases[1].output.memtier") && e.contains("also written by phases[0]"),
        "{e}"
    );
}

/// A rate memtier printed with two decimals, against the report's (within 0.5%).
fn close_to(cell: &str, want: f64, text: &str) {
    let got: f64 = cell.parse().unwrap();
    assert!(
        (got - want).abs() <= want * 0.005 + 0.01,
        "{got} vs {want}:\n{text}"
    );
}

/// A MONITOR capture as `redis-cli MONITOR` prints it (its `OK` first), with the server's
/// quoting: spaces inside quotes, `\"`, `\\` and `\xHH`; one line with a proxy's prefix
/// (memtier reads a line from its first double quote).
const CAPTURE: &str = r#"OK
1700000000.000001 [0 127.0.0.1:5000] "SET" "mon:plain" "v"
1700000000.000002 [0 127.0.0.1:5000] "SET" "mon:key with space" "say \"hi\" caf\xc3\xa9 \\ \x01end"
[ proxy7 ] 1700000000.000003 [0 127.0.0.1:5000] "RPUSH" "mon:seq" "1"
1700000000.000004 [0 127.0.0.1:5000] "RPUSH" "mon:seq" "2"
1700000000.000005 [0 127.0.0.1:5000] "RPUSH" "mon:seq" "3"
1700000000.000006 [0 127.0.0.1:5000] "RPUSH" "mon:seq" "4"
1700000000.000007 [0 127.0.0.1:5000] "RPUSH" "mon:seq" "5"
"#;

#[test]
fn monitor_input_replays_one_captured_command() {
    let server = Server::start(&[]);
    let capture = server.dir.join("monitor.txt");
    std::fs::write(&capture, CAPTURE).unwrap();
    let m = parse(&format!(
        "-s 127.0.0.1 -p {} --monitor-input={} --command=__monitor_line2__ -n 100 -c 2 -t 3",
        server.port,
        capture.display()
    ));
    let report = run(&m.workload).unwrap();
    assert_eq!(report.totals.errors, 0);
    // 100 requests x 2 clients x 3 threads, all the same SET, with its quoting undone.
    assert_eq!(report.totals.ops, 600);
    assert_eq!(server.calls("set"), 600);
    assert_eq!(server.calls("rpush"), 0);
    assert_eq!(server.dbsize(), 1);
    assert_eq!(
        server.cli(&["GET", "mon:key with space"]).as_bytes(),
        "say \"hi\" café \\ \x01end".as_bytes()
    );
    let text = respload::tools::memtier::text(&report, &m.options);
    assert!(
        row(&text, "Sets")[0].parse::<f64>().unwrap() > 0.0,
        "{text}"
    );
    // By line, memtier names it by its line of the file.
    let mut by_line = m.options.clone();
    by_line.stats_by_line = true;
    let text = respload::tools::memtier::text(&report, &by_line);
    assert!(text.contains("\nSet (line 2)s "), "{text}");
}

#[test]
fn monitor_line_each_in_turn_and_at_random() {
    let server = Server::start(&[]);
    let capture = server.dir.join("monitor.txt");
    std::fs::write(&capture, CAPTURE).unwrap();
    let line = |extra: &str| {
        format!(
            "-s 127.0.0.1 -p {} --monitor-input={} --command=__monitor_line@__ {extra}",
            server.port,
            capture.display()
        )
    };
    let list = |server: &Server| -> Vec<String> {
        server
            .cli(&["LRANGE", "mon:seq", "0", "-1"])
            .lines()
            .map(str::to_string)
            .collect()
    };

    // S (memtier's default): the file's commands in order, then again from the first:
    // 17 requests = twice the 7 commands, then the 2 SETs and the first RPUSH.
    let m = parse(&line("-n 17 -c 1 -t 1"));
    let report = run(&m.workload).unwrap();
    assert_eq!((report.totals.ops, report.totals.errors), (17, 0));
    assert_eq!(
        list(&server),
        ["1", "2", "3", "4", "5", "1", "2", "3", "4", "5", "1"]
    );
    assert_eq!(server.calls("set"), 6);
    assert_eq!(server.cli(&["GET", "mon:plain"]), "v");
    // Reported under the commands' own names: Sets and Rpushs, no placeholder row.
    let text = respload::tools::memtier::text(&report, &m.options);
    assert!(
        row(&text, "Rpushs")[0].parse::<f64>().unwrap() > 0.0,
        "{text}"
    );
    assert!(
        row(&text, "Sets")[0].parse::<f64>().unwrap() > 0.0,
        "{text}"
    );
    assert!(!text.contains("Monitor_randoms"), "{text}");
    assert_eq!(report.commands["MONITOR:RPUSH"].ops, 11);
    assert_eq!(report.commands["MONITOR:SET"].ops, 6);

    // Several connections walk the file together, as memtier's one shared counter does:
    // 4 connections x 35 requests = 140 = 20 passes over the 7 commands.
    server.cli(&["FLUSHALL"]);
    server.cli(&["CONFIG", "RESETSTAT"]);
    let m = parse(&line("--monitor-pattern=S -n 35 -c 2 -t 2"));
    let report = run(&m.workload).unwrap();
    assert_eq!((report.totals.ops, report.totals.errors), (140, 0));
    let got = list(&server);
    assert_eq!(got.len() as u64, server.calls("rpush"));
    for v in ["1", "2", "3", "4", "5"] {
        let n = got.iter().filter(|x| *x == v).count();
        // 20 each when every connection sends its 35; a connection may send a few more
        // than another (each thread has one budget for its connections).
        assert!((16..=24).contains(&n), "{v}: {n} in {got:?}");
    }

    // R: one command drawn per request, every one with the same chance.
    server.cli(&["FLUSHALL"]);
    server.cli(&["CONFIG", "RESETSTAT"]);
    let m = parse(&line(
        "--monitor-pattern=R -n 700 -c 2 -t 2 --distinct-client-seed",
    ));
    let report = run(&m.workload).unwrap();
    assert_eq!((report.totals.ops, report.totals.errors), (2800, 0));
    let got = list(&server);
    assert_eq!(server.calls("rpush") + server.calls("set"), 2800, "{got:?}");
    // 400 each expected of the 7 commands: 5 RPUSH values, 2 SETs.
    for v in ["1", "2", "3", "4", "5"] {
        let n = got.iter().filter(|x| *x == v).count();
        assert!((320..=480).contains(&n), "{v}: {n}");
    }
    let sets = server.calls("set");
    assert!((640..=960).contains(&sets), "{sets}");
}

#[test]
fn monitor_input_from_the_cli_with_memtiers_rows() {
    let server = Server::start(&[]);
    let capture = server.dir.join("monitor.txt");
    std::fs::write(&capture, CAPTURE).unwrap();
    let port = server.port.to_string();
    let input = format!("--monitor-input={}", capture.display());
    let o = memtier_cli(&[
        "-s",
        "127.0.0.1",
        "-p",
        &port,
        &input,
        "--command=GET mon:plain",
        "--command=__monitor_line@__",
        "--command-stats-breakdown=line",
        "-n",
        "20",
        "-c",
        "1",
        "-t",
        "1",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    // memtier's rows by line: the GET, the placeholder's (never counted), then one per
    // command name of the file.
    let rows: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("Type "))
        .skip(2)
        .map_while(|l| l.split_whitespace().next())
        .take_while(|n| *n != "Totals")
        .collect();
    assert_eq!(
        rows,
        ["Gets", "Monitor_randoms", "Sets", "Rpushs"],
        "{text}"
    );
    assert_eq!(row(&text, "Monitor_randoms")[0], "0.00");
    assert_eq!(
        server.calls("get") + server.calls("set") + server.calls("rpush"),
        20
    );

    // Errors before any traffic, naming the option and the value.
    for (args, needle) in [
        (
            vec![input.as_str(), "--command=__monitor_line9__"],
            "__monitor_line9__",
        ),
        (vec!["--command=__monitor_line1__"], "--monitor-input=FILE"),
        (vec![input.as_str(), "--monitor-pattern=Q"], "`Q`"),
        (
            vec!["--monitor-input=/nonexistent/monitor.txt"],
            "cannot open",
        ),
    ] {
        let o = memtier_cli(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    assert_eq!(
        server.calls("get") + server.calls("set") + server.calls("rpush"),
        20
    );
}

/// The address (`addr=...`) of each load connection the server lists while `line` runs.
fn addresses_while_running(server: &Server, line: &str) -> Vec<String> {
    let m = parse(line);
    let running = std::thread::spawn(move || run(&m.workload));
    let mut seen = Vec::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while seen.is_empty() && std::time::Instant::now() < deadline {
        for l in server.cli(&["CLIENT", "LIST"]).lines() {
            if l.contains("name=respload ") && l.contains(" cmd=get") {
                let addr = l.split(' ').find_map(|f| f.strip_prefix("addr="));
                seen.push(addr.unwrap_or_default().to_string());
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let report = running.join().unwrap().unwrap();
    assert_eq!(report.totals.errors, 0);
    seen
}

#[test]
fn ipv4_and_ipv6_choose_the_address_family() {
    // The test server listens on 127.0.0.1 and ::1.
    let server = Server::start(&[]);
    let p = server.port;
    let common = format!("-p {p} -c 1 -t 1 --ratio=0:1 --test-time=2 --hide-histogram");
    let v6 = addresses_while_running(&server, &format!("-s ::1 -6 {common}"));
    assert!(
        !v6.is_empty() && v6.iter().all(|a| a.starts_with("[::1]:")),
        "{v6:?}"
    );
    let v4 = addresses_while_running(&server, &format!("-s 127.0.0.1 --ipv4 {common}"));
    assert!(
        !v4.is_empty() && v4.iter().all(|a| a.starts_with("127.0.0.1:")),
        "{v4:?}"
    );

    // An address of the other family is refused before any traffic, naming the family.
    let before = server.calls("get");
    for (line, family) in [
        (format!("-s ::1 -4 {common}"), "IPv4"),
        (format!("-s 127.0.0.1 -6 {common}"), "IPv6"),
    ] {
        let err = run(&parse(&line).workload).unwrap_err().to_string();
        assert!(err.contains(&format!("has no {family} address")), "{err}");
    }
    assert_eq!(server.calls("get"), before);
}

#[test]
fn data_offset_sends_setrange_and_getrange_at_the_offset() {
    let server = Server::start(&[]);
    let m = parse(&format!(
        "-s 127.0.0.1 -p {} -c 2 -t 1 -n 100 -d 10 --data-offset=5 --ratio=1:1 \
         --key-maximum=50 --show-config",
        server.port
    ));
    let report = run(&m.workload).unwrap();
    assert_eq!(report.totals.errors, 0);
    let (sets, gets) = (&report.commands["SET"], &report.commands["GET"]);
    assert_eq!(sets.ops + gets.ops, 200);
    assert_eq!(server.calls("setrange"), sets.ops);
    assert_eq!(server.calls("getrange"), gets.ops);
    assert_eq!(server.calls("set") + server.calls("get"), 0);
    // Every value written: 5 zero bytes, then -d bytes of `x` (memtier's fixed data).
    let key = server.cli(&["RANDOMKEY"]);
    assert_eq!(server.cli(&["STRLEN", &key]), "15");
    assert_eq!(server.cli(&["GETRANGE", &key, "5", "-1"]), "x".repeat(10));
    assert_eq!(server.cli(&["GETRANGE", &key, "0", "4"]), "\0".repeat(5));
    // GETRANGE of a written key is a hit, of a missing one an empty string: a miss.
    assert_eq!(gets.hits + gets.misses, gets.ops);
    assert!(gets.hits > 0, "{gets:?}");
    let config = respload::tools::memtier::json(&report, &m.options);
    assert!(config.contains("\"data_offset\": 5"), "{config}");
}

#[test]
fn multi_key_get_reads_keys_in_mgets() {
    let server = Server::start(&[]);
    // 10 GETs per SET as MGETs of 4, 4 and 2 keys, in turn on the one connection.
    let m = parse(&format!(
        "-s 127.0.0.1 -p {} -c 1 -t 1 -n 300 --multi-key-get=4 --key-maximum=100",
        server.port
    ));
    let report = run(&m.workload).unwrap();
    assert_eq!(report.totals.errors, 0);
    let mgets = report.commands["MGET"].ops;
    assert_eq!(report.commands["SET"].ops + mgets, 300);
    assert_eq!(server.calls("mget"), mgets);
    assert_eq!(server.calls("get"), 0);
    // The keys the server looked up: only MGETs count hits and misses.
    let looked_up: u64 = ["keyspace_hits", "keyspace_misses"]
        .iter()
        .map(|f| server.info(f).parse::<u64>().unwrap())
        .sum();
    let expected: u64 = [4, 4, 2].iter().cycle().take(mgets as usize).sum();
    assert_eq!(looked_up, expected);
    // memtier counts MGETs in its Gets row.
    let text = respload::tools::memtier::text(&report, &m.options);
    let ops_per_sec = |name: &str| row(&text, name)[0].parse::<f64>().unwrap();
    assert!(ops_per_sec("Gets") > 0.0, "{text}");
    let share = mgets as f64 / 300.0;
    // A seeded mix of weights 1 (SET) and 3 (MGET): about 3/4 of the picks.
    assert!((0.65..0.85).contains(&share), "{share}");
}

#[test]
fn wait_ratio_sends_wait_to_the_replicas() {
    let (primary, replica) = common::primary_and_replica();
    let m = parse(&format!(
        "-s 127.0.0.1 -p {} -c 2 -t 1 -n 200 --ratio=1:1 --wait-ratio=1:1 --num-slaves=1-1 \
         --wait-timeout=2000-2000 --key-maximum=100 --show-config",
        primary.port
    ));
    let report = run(&m.workload).unwrap();
    assert_eq!(report.totals.errors, 0);
    let waits = report.commands["WAIT"].ops;
    assert_eq!(primary.calls("wait"), waits);
    assert_eq!(
        primary.calls("set") + primary.calls("get") + waits,
        report.totals.ops
    );
    // memtier: a WAIT once SETs / WAITs > 1, one per two SETs: weights SET 2, GET 2, WAIT 1.
    let share = waits as f64 / report.totals.ops as f64;
    assert!((0.1..0.3).contains(&share), "{share}");
    // The Waits row counts them; a replica acknowledged each within the timeout.
    let text = respload::tools::memtier::text(&report, &m.options);
    assert!(
        row(&text, "Waits")[0].parse::<f64>().unwrap() > 0.0,
        "{text}"
    );
    let wait_ms = report.commands["WAIT"].latency_ms.max;
    assert!(wait_ms < 2000.0, "{wait_ms}");
    assert_eq!(replica.info("master_link_status"), "up");
}

/// `total_connections_received` of the server.
fn connections_received(server: &Server) -> u64 {
    server.info("total_connections_received").parse().unwrap()
}

#[test]
fn reconnect_interval_reopens_each_connection_after_n_requests() {
    let server = Server::start(&[]);
    let line = |extra: &str| {
        format!(
            "-s 127.0.0.1 -p {} -c 1 -t 1 -n 100 --ratio=0:1 --pipeline=4 {extra}",
            server.port
        )
    };
    // The connections a plain run opens (its load connection, the server probe...).
    let before = connections_received(&server);
    let report = run(&parse(&line("")).workload).unwrap();
    assert_eq!(report.totals.ops, 100);
    let plain = connections_received(&server) - before;

    // Every 10 requests a new connection: 9 more (none after the last request).
    let before = connections_received(&server);
    let report = run(&parse(&line("--reconnect-interval=10")).workload).unwrap();
    assert_eq!((report.totals.ops, report.totals.errors), (100, 0));
    assert_eq!(connections_received(&server) - before, plain + 9);
    assert_eq!(server.calls("get"), 200);
}

#[test]
fn max_reconnect_attempts_ends_a_run_whose_server_is_gone() {
    let mut server = Server::start(&[]);
    // memtier's waits: 0.1 s, then 0.01 s; then each connection gives up.
    let m = parse(&format!(
        "-s 127.0.0.1 -p {} -c 2 -t 1 --test-time=60 --ratio=0:1 \
         --max-reconnect-attempts=2 --reconnect-backoff-factor=0.1",
        server.port
    ));
    let running = std::thread::spawn(move || run(&m.workload));
    while server.calls("get") < 100 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    server.kill();
    let report = running.join().unwrap().unwrap();
    // Without a limit the connections would retry until the 60 s are up.
    assert!(report.duration_s < 30.0, "{}", report.duration_s);
    let get = &report.commands["GET"];
    assert!(get.ops >= 100, "{get:?}");
    assert!(get.errors <= 2, "{get:?}");
}

#[test]
fn start_jitter_spaces_the_connections_a_thread_opens() {
    let server = Server::start(&[]);
    let line = |extra: &str| {
        format!(
            "-s 127.0.0.1 -p {} -c 4 -t 1 -n 5 --ratio=0:1 {extra}",
            server.port
        )
    };
    // 4 connections of one thread: 3 pauses of 300 ms before measuring starts.
    let m = parse(&line(
        "--thread-conn-start-min-jitter-micros=300000 \
         --thread-conn-start-max-jitter-micros=300000",
    ));
    let started = std::time::Instant::now();
    let report = run(&m.workload).unwrap();
    assert!(started.elapsed() >= std::time::Duration::from_millis(900));
    assert_eq!((report.totals.ops, report.totals.errors), (20, 0));
    // Not in any latency: each request's own time stays far below the pauses.
    assert!(
        report.totals.latency_ms.max < 300.0,
        "{:?}",
        report.totals.latency_ms
    );
    assert_eq!(server.calls("get"), 20);
}

/// How many SCANs a whole walk of `server`'s keyspace takes with these options, from 0.
fn scan_walk_length(server: &Server, options: &[&str]) -> u64 {
    let (mut cursor, mut n) = ("0".to_string(), 0);
    loop {
        let mut args = vec!["SCAN", &cursor];
        args.extend(options);
        let out = server.cli(&args);
        cursor = out.lines().next().unwrap().trim().to_string();
        n += 1;
        if cursor == "0" {
            return n;
        }
    }
}

#[test]
fn scan_incremental_iteration_follows_the_cursor() {
    let server = Server::start(&[]);
    let populate = parse(&format!(
        "-s 127.0.0.1 -p {} -c 1 -t 1 -n allkeys --ratio=1:0 --key-pattern=P:P \
         --key-minimum=1 --key-maximum=300",
        server.port
    ));
    run(&populate.workload).unwrap();
    assert_eq!(server.dbsize(), 300);
    let walk = scan_walk_length(&server, &["MATCH", "memtier-*", "COUNT", "20"]);
    assert!(walk > 4, "{walk}");

    let scans = |extra: &str| {
        let m = parse(&format!(
            "-s 127.0.0.1 -p {} -c 1 -t 1 -n 60 --command=\"SCAN 0 MATCH memtier-* COUNT 20\" \
             --scan-incremental-iteration {extra}",
            server.port
        ));
        let before = server.calls("scan");
        let report = run(&m.workload).unwrap();
        assert_eq!(report.totals.errors, 0);
        assert_eq!(server.calls("scan") - before, 60);
        let text = respload::tools::memtier::text(&report, &m.options);
        assert!(
            text.contains("Scan 0s") && text.contains("Scan <cursor>s"),
            "{text}"
        );
        (
            report.commands["SCAN 0"].ops,
            report.commands["SCAN <cursor>"].ops,
        )
    };
    // Whole walks: one SCAN 0, then walk - 1 SCANs following the cursor, again and again.
    let starts = 60u64.div_ceil(walk);
    assert_eq!(scans(""), (starts, 60 - starts));
    // At most 3 continuations per walk: walks of 4.
    assert_eq!(scans("--scan-incremental-max-iterations=3"), (15, 45));
}

/// `rejected_calls` of one command in INFO commandstats: calls the server refused (BUSY...).
fn rejected(server: &Server, command: &str) -> u64 {
    let info = server.cli(&["INFO", "commandstats"]);
    let prefix = format!("cmdstat_{command}:");
    info.lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .and_then(|l| l.split(',').find_map(|f| f.strip_prefix("rejected_calls=")))
        .map_or(0, |n| n.parse().unwrap())
}

/// A Lua script keeping `server` busy for `ms` milliseconds, run from another thread: past
/// the busy threshold every other client's command gets a `BUSY` error.
fn busy_for(server: &Server, ms: u64) -> std::thread::JoinHandle<()> {
    let port = server.port.to_string();
    let script = format!(
        "local t = redis.call('TIME') while true do local n = redis.call('TIME') \
         if (n[1] - t[1]) * 1000000 + (n[2] - t[2]) > {} then break end end",
        ms * 1000
    );
    std::thread::spawn(move || {
        let out = Command::new("redis-cli")
            .args(["-p", &port, "EVAL", &script, "0"])
            .output()
            .unwrap();
        assert!(out.status.success());
    })
}

#[test]
fn retry_on_error_resends_busy_requests_and_counts_them_once() {
    let server = Server::start(&["--busy-reply-threshold", "20"]);
    let run_busy = |extra: &str| {
        let m = parse(&format!(
            "-s 127.0.0.1 -p {} -c 2 -t 1 --test-time=3 --ratio=0:1 --key-maximum=10 {extra}",
            server.port
        ));
        let running = std::thread::spawn(move || run(&m.workload).unwrap());
        while server.calls("get") < 50 {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        busy_for(&server, 600).join().unwrap();
        running.join().unwrap()
    };

    // Resent every 20 ms until the script ends: no error, each GET counted once, its
    // latency from its first send (over the script's 600 ms, less the 20 ms threshold).
    let before = (server.calls("get"), rejected(&server, "get"));
    let report = run_busy("--retry-on-error --retry-backoff-ms=20 --retry-on=BUSY");
    let get = &report.commands["GET"];
    assert_eq!(get.errors, 0, "{get:?}");
    assert!(get.retries > 0, "{get:?}");
    assert_eq!(server.calls("get") - before.0, get.ops);
    assert_eq!(rejected(&server, "get") - before.1, get.retries);
    assert!(get.latency_ms.max > 400.0, "{:?}", get.latency_ms);
    let table = respload::output::table(&report);
    assert!(
        table.contains(&format!("Retries: {} (", get.retries)),
        "{table}"
    );

    // Without it: each BUSY reply is an error, at once.
    let report = run_busy("");
    let get = &report.commands["GET"];
    assert!(get.errors > 0 && get.retries == 0, "{get:?}");
    assert_eq!(get.errors_by_kind["BUSY"], get.errors);
}

#[test]
fn retry_backoff_factor_and_max_retry_queue_bound_the_resends() {
    let server = Server::start(&["--busy-reply-threshold", "20"]);
    // Two connections of one request in flight, GETs resent on BUSY after 20 ms, then 40,
    // 80, ... (factor 2), while the server answers BUSY for 580 ms (the script's 600 ms
    // less the 20 ms threshold): the resends, each counted by the server as rejected.
    let resends = |queue: &str| {
        let m = parse(&format!(
            "-s 127.0.0.1 -p {} -c 2 -t 1 --test-time=3 --ratio=0:1 --key-maximum=10 \
             --retry-on-error --retry-backoff-ms=20 --retry-backoff-factor=2 --retry-on=BUSY \
             {queue}",
            server.port
        ));
        let running = std::thread::spawn(move || run(&m.workload).unwrap());
        while server.calls("get") < 50 {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let before = rejected(&server, "get");
        busy_for(&server, 600).join().unwrap();
        let report = running.join().unwrap();
        let get = report.commands["GET"].clone();
        assert_eq!(get.errors, 0, "{get:?}");
        assert_eq!(rejected(&server, "get") - before, get.retries, "{get:?}");
        get.retries
    };
    // With one request waiting, a connection starts no other: its one GET is resent 20,
    // 60, 140, 300 and 620 ms after its first BUSY, so 4 or 5 times (3 when the machine
    // delays a wait); at a constant 20 ms it would be about 29 times.
    let one = resends("--max-retry-queue=1");
    assert!((2 * 3..=2 * 5).contains(&one), "{one} resends");
    // By default up to 64 wait per connection (max(pipeline x 4, 64)), and new GETs start
    // meanwhile, so many more are resent (seen: 119 to 361 in all, against at most 10).
    let default = resends("");
    assert!(default > 4 * 2 * 5, "{default} resends");
}

#[test]
fn retry_on_error_resends_the_requests_a_lost_connection_had_in_flight() {
    let mut server = Server::start(&["--enable-debug-command", "yes"]);
    let port = server.port;
    // Long enough that it cannot end between the check below and the DEBUG SLEEP.
    let m = parse(&format!(
        "-s 127.0.0.1 -p {port} -c 2 -t 1 -n 50000 --pipeline=16 --ratio=0:1 --key-maximum=10 \
         --retry-on-error --retry-backoff-ms=10"
    ));
    let mut sleeper = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let running = std::thread::spawn(move || run(&m.workload).unwrap());
    while server.calls("get") < 500 {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    // The server stops answering, so both connections fill their pipelines; killed then,
    // each certainly loses requests in flight.
    sleeper.write_all(b"DEBUG SLEEP 5\r\n").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert!(
        !running.is_finished(),
        "the run ended before the server slept"
    );
    server.kill();
    drop(server);
    // The same port again: the connections come back and resend what they had in flight.
    let server = Server::start_on(port, &[]).expect("the port is free again");
    let report = running.join().unwrap();
    let get = &report.commands["GET"];
    assert_eq!((get.ops, get.errors), (100_000, 0), "{get:?}");
    // Each connection had its full pipeline of 16 unanswered when the server died.
    assert_eq!(get.retries, 2 * 16, "{get:?}");
    assert!(server.calls("get") <= 100_000);
}

/// The lines of a `--failed-keys-file` after its header, each without its timestamp (checked
/// to have the shape of memtier's: `YYYY-MM-DDTHH:MM:SS.uuuuuuZ`, UTC).
fn failed_lines(path: &std::path::Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("timestamp,command,key,status,retries"));
    lines
        .map(|l| {
            let (ts, rest) = l.split_once(',').unwrap();
            let shape: String = ts
                .chars()
                .map(|c| if c.is_ascii_digit() { '9' } else { c })
                .collect();
            assert_eq!(shape, "9999-99-99T99:99:99.999999Z", "{l}");
            rest.to_string()
        })
        .collect()
}

#[test]
fn failed_keys_file_appends_the_requests_that_failed_for_good() {
    let server = Server::start(&[]);
    let dir = std::env::temp_dir().join(format!("respload-failed-keys-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("failed.csv");
    let _ = std::fs::remove_file(&path);
    // Keys 1 to 4 hold strings: an LPUSH to them is a WRONGTYPE error, never resent.
    for k in 1..=4 {
        server.cli(&["SET", &format!("memtier-{k}"), "x"]);
    }
    let base = format!(
        "-s 127.0.0.1 -p {} -c 1 -t 1 -n 4 --key-minimum=1 --key-maximum=4 \
         --failed-keys-file={} --hide-histogram",
        server.port,
        path.display()
    );
    let m = parse(&format!(
        "{base} --command='LPUSH __key__ v' --command-key-pattern=S --retry-on-error \
         --max-retries=10"
    ));
    let report = run(&m.workload).unwrap();
    assert_eq!(report.commands["LPUSH"].errors, 4);
    assert_eq!(server.calls("lpush"), 4, "sent once each");
    let wrongtype = "\"-WRONGTYPE Operation against a key holding the wrong kind of value\"";
    let want: Vec<String> = (1..=4)
        .map(|k| format!("LPUSH,\"memtier-{k}\",{wrongtype},0"))
        .collect();
    assert_eq!(failed_lines(&path), want);

    // Appended to the same file (no second header): a transient error (`-ERR BUSY`, as
    // Redis words a script's error without a code), resent twice (--max-retries=2) and then
    // failed for good.
    let m = parse(&format!(
        "{base} --command='EVAL \"return redis.error_reply(ARGV[1])\" 1 __key__ BUSY' \
         --command-key-pattern=S --retry-on-error --max-retries=2"
    ));
    let report = run(&m.workload).unwrap();
    let eval = &report.commands["EVAL"];
    assert_eq!((eval.errors, eval.retries), (4, 8), "{eval:?}");
    assert_eq!(server.calls("eval"), 12);
    let mut want = want;
    want.extend((1..=4).map(|k| format!("EVAL,\"memtier-{k}\",\"-ERR BUSY\",2")));
    assert_eq!(failed_lines(&path), want);

    // Without --retry-on-error each error reply is a line at once: the successes none.
    let m = parse(&format!(
        "{base} --command='GET __key__' --command-key-pattern=S --key-maximum=6 -n 6"
    ));
    server.cli(&["RPUSH", "memtier-5", "x"]);
    let report = run(&m.workload).unwrap();
    assert_eq!(report.commands["GET"].errors, 1);
    want.push("GET,\"memtier-5\",\"-WRONGTYPE Operation against a key holding the wrong kind of value\",0".into());
    assert_eq!(failed_lines(&path), want);

    // A request lost with its connection: two QUITs written together, the server answers
    // the first and closes, the second was in flight (a command without a key: "").
    let m = parse(&format!("{base} --command=QUIT -n 2 --pipeline=2"));
    let report = run(&m.workload).unwrap();
    let quit = &report.commands["QUIT"];
    assert_eq!((quit.ops, quit.errors), (2, 1), "{quit:?}");
    want.push("QUIT,\"\",\"connection-dropped\",0".into());
    assert_eq!(failed_lines(&path), want);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn transaction_sends_each_rotation_on_one_key_in_order() {
    let server = Server::start(&[]);
    // memtier's rotation MULTI, INCR, INCR, EXEC (INCR's --command-ratio is 2), every
    // __key__ of a rotation the same key; 2 clients x 12 requests: 6 rotations, pipelined.
    let m = parse(&format!(
        "-s 127.0.0.1 -p {} -c 2 -t 1 -n 12 --pipeline=4 --key-minimum=1 --key-maximum=100 \
         --transaction --command=MULTI --command='INCR __key__' --command-ratio=2 \
         --command-key-pattern=S --command=EXEC --hide-histogram",
        server.port
    ));
    let report = run(&m.workload).unwrap();
    assert_eq!(
        report.totals.errors, 0,
        "no nested MULTI, no EXEC without MULTI"
    );
    let config: std::collections::HashMap<_, _> = m.options.config.iter().cloned().collect();
    assert_eq!(config["transaction"], "true");
    let ops = |label: &str| report.commands[label].ops;
    assert_eq!(
        (ops("MULTI"), ops("INCR#2"), ops("INCR#3"), ops("EXEC")),
        (6, 6, 6, 6)
    );
    assert_eq!(
        (
            server.calls("multi"),
            server.calls("incr"),
            server.calls("exec")
        ),
        (6, 12, 6)
    );
    // One key per rotation, drawn in sequence: keys 1 to 6 incremented twice each (two
    // draws per rotation would have made keys 1 to 12 hold 1).
    for k in 1..=6 {
        assert_eq!(
            server.cli(&["GET", &format!("memtier-{k}")]),
            "2",
            "key {k}"
        );
    }
    assert_eq!(server.dbsize(), 6);
    // memtier's rows: one per command name, the two INCR steps added up.
    let mb: Value =
        serde_json::from_str(&respload::tools::memtier::json(&report, &m.options)).unwrap();
    let all = &mb["ALL STATS"];
    let count = |row: &str| all[row]["Count"].as_u64();
    assert_eq!(
        (
            count("Multis"),
            count("Incrs"),
            count("Execs"),
            count("Totals")
        ),
        (Some(6), Some(12), Some(6), Some(24)),
        "{all}"
    );
}

/// A connection to `server` for reading binary values back.
fn raw_client(server: &Server) -> respload_testing::Client {
    respload_testing::Client::connect(&respload_testing::ClientOptions {
        host: "127.0.0.1".into(),
        port: server.port,
        tls: None,
        user: None,
        password: None,
        db: 0,
        timeout: std::time::Duration::from_secs(10),
    })
    .unwrap()
}

fn get(client: &mut respload_testing::Client, key: &[u8]) -> Option<Vec<u8>> {
    use respload_testing::Reply;
    match client.call(&[b"GET", key]).unwrap() {
        Reply::Bulk(v) => Some(v),
        Reply::Nil => None,
        other => panic!("GET {key:?}: {other:?}"),
    }
}

/// A memtier data-import file (its README.import format, quotes doubled) of `items`
/// (key, data, exptime).
fn import_file(path: &std::path::Path, items: &[(Vec<u8>, Vec<u8>, u32)]) {
    let quote = |b: &[u8]| {
        let mut q = vec![b'"'];
        for &c in b {
            q.push(c);
            if c == b'"' {
                q.push(b'"');
            }
        }
        q.push(b'"');
        q
    };
    let mut out =
        b"dumpflags, time, exptime, nbytes, nsuffix, it_flags, clsid, nkey, key, data\n".to_vec();
    for (key, data, exptime) in items {
        out.extend_from_slice(
            format!(
                "0, 0, {exptime}, {}, 0, 0, 1, {}, ",
                data.len() + 2,
                key.len()
            )
            .as_bytes(),
        );
        out.extend(quote(key));
        out.extend_from_slice(b", ");
        out.extend(quote(data));
        out.push(b'\n');
    }
    std::fs::write(path, out).unwrap();
}

/// The items of the import tests: text, a quote, a comma, CRLF, a NUL and braces in the
/// data; item 7 with a TTL.
fn import_items(n: usize) -> Vec<(Vec<u8>, Vec<u8>, u32)> {
    (0..n)
        .map(|i| {
            let key = format!("imp:{i}").into_bytes();
            let mut data = format!("value {i}, \"quoted\" {{key}}").into_bytes();
            if i % 3 == 0 {
                data.extend_from_slice(b"\r\nline two\0\xff");
            }
            (key, data, if i == 7 { 1000 } else { 0 })
        })
        .collect()
}

/// `--data-import` writes each item of the file (its key, its data byte for byte, its TTL);
/// `--data-verify` reads them back after the run; `--verify-only` runs no benchmark and
/// names exactly the keys changed since.
#[test]
fn data_import_writes_the_items_and_verify_finds_the_changed_keys() {
    let server = Server::start(&[]);
    let dir = &server.dir;
    let file = dir.join("import.csv");
    let items = import_items(200);
    import_file(&file, &items);
    let json = dir.join("import.json");
    let port = server.port.to_string();
    let base = ["-s", "127.0.0.1", "-p", &port, "--hide-histogram"];
    let import = format!("--data-import={}", file.display());
    let json_arg = format!("--json-out-file={}", json.display());
    let mut args = base.to_vec();
    args.extend([
        import.as_str(),
        "--ratio=1:0",
        "-n",
        "allkeys",
        "-c",
        "1",
        "-t",
        "4",
        "--data-verify",
        json_arg.as_str(),
    ]);
    let o = memtier_cli(&args);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // One request per item, written once: 4 connections (one per thread, each with an equal
    // share of the requests) walk the file together.
    assert_eq!(server.calls("set"), 200);
    assert_eq!(server.dbsize(), 200);
    let mut client = raw_client(&server);
    for (key, data, _) in &items {
        assert_eq!(get(&mut client, key).as_ref(), Some(data), "{key:?}");
    }
    let ttl: i64 = server.cli(&["TTL", "imp:7"]).parse().unwrap();
    assert!((990..=1000).contains(&ttl), "{ttl}");
    assert_eq!(server.cli(&["TTL", "imp:8"]), "-1");
    assert!(
        stdout.contains(
            "\n\nPerforming data verification...\nData verification completed:\n\
             200        keys verified successfuly.\n0          keys failed.\n"
        ),
        "{stdout}"
    );
    assert_eq!(row(&stdout, "Sets").len(), 8);
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let results = &doc["client verifications results"];
    assert_eq!(results["keys verified successfuly"], 200);
    assert_eq!(results["keys failed"], 0);
    assert_eq!(doc["configuration"]["data_verify"], "true");
    assert!(doc["ALL STATS"]["Totals"]["Count"].as_u64() == Some(200));

    // Three keys changed, two deleted: the verification names exactly those five.
    let changed = ["imp:3", "imp:50", "imp:199"];
    let deleted = ["imp:0", "imp:120"];
    for k in changed {
        server.cli(&["SET", k, "other"]);
    }
    for k in deleted {
        server.cli(&["DEL", k]);
    }
    let mut args = base.to_vec();
    args.extend([import.as_str(), "--verify-only", json_arg.as_str()]);
    let o = memtier_cli(&args);
    assert!(o.status.success());
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!stdout.contains("ALL STATS"), "{stdout}");
    assert!(
        stdout.ends_with("195        keys verified successfuly.\n5          keys failed.\n"),
        "{stdout}"
    );
    let mut named: Vec<&str> = stderr
        .lines()
        .filter_map(|l| l.strip_prefix("error: key ["))
        .map(|l| l.split(']').next().unwrap())
        .collect();
    named.sort();
    let mut want: Vec<&str> = changed.iter().chain(&deleted).copied().collect();
    want.sort();
    assert_eq!(named, want, "{stderr}");
    assert_eq!(server.calls("set"), 203, "--verify-only writes nothing");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc["client verifications results"]["keys failed"], 5);
    assert!(doc.get("ALL STATS").is_none() && doc.get("run information").is_none());
    // respload's own report needs a run.
    let own = dir.join("own.json");
    let mut args = base.to_vec();
    let own_arg = own.display().to_string();
    args.extend([import.as_str(), "--verify-only", "--json", own_arg.as_str()]);
    let o = memtier_cli(&args);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("`--json`"));
    assert!(!own.exists(), "no empty report left behind");
}

/// GETs of an import read the file's keys (R: at random, S: in turn), so they all hit;
/// `--no-expiry` drops the items' TTLs and `--expiry-range` replaces them.
#[test]
fn data_import_gets_read_the_files_keys_and_ttls_follow_the_options() {
    let server = Server::start(&[]);
    let file = server.dir.join("import.csv");
    let items = import_items(20);
    import_file(&file, &items);
    let base = format!(
        "-s 127.0.0.1 -p {} -c 1 -t 1 --data-import={}",
        server.port,
        file.display()
    );
    let report = run(&parse(&format!("{base} --ratio=1:0 -n 20 --no-expiry")).workload).unwrap();
    assert_eq!(report.totals.errors, 0);
    assert_eq!(server.dbsize(), 20);
    assert_eq!(server.cli(&["TTL", "imp:7"]), "-1");
    for pattern in ["R:R", "S:S"] {
        let line = format!("{base} --ratio=0:1 -n 300 --key-pattern={pattern}");
        let report = run(&parse(&line).workload).unwrap();
        assert_eq!(report.totals.ops, 300, "{pattern}");
        assert_eq!(
            (report.totals.hits, report.totals.misses),
            (300, 0),
            "{pattern}"
        );
    }
    // S reads the keys in the file's order: 20 GETs, each key once.
    server.cli(&["CONFIG", "RESETSTAT"]);
    let report =
        run(&parse(&format!("{base} --ratio=0:1 -n 20 --key-pattern=S:S")).workload).unwrap();
    assert_eq!(report.totals.hits, 20);
    let stats = server.cli(&["INFO", "keyspace"]);
    assert!(stats.contains("keys=20"), "{stats}");
    run(&parse(&format!("{base} --ratio=1:0 -n 20 --expiry-range=50-60")).workload).unwrap();
    for i in [0, 7, 19] {
        let ttl: i64 = server.cli(&["TTL", &format!("imp:{i}")]).parse().unwrap();
        assert!((40..=60).contains(&ttl), "imp:{i}: {ttl}");
    }
}

/// `--generate-keys`: the file's values in order, under memtier's generated keys.
#[test]
fn generate_keys_writes_the_files_values_under_generated_keys() {
    let server = Server::start(&[]);
    let file = server.dir.join("import.csv");
    let items = import_items(3);
    import_file(&file, &items);
    let line = format!(
        "-s 127.0.0.1 -p {} -c 1 -t 1 --data-import={} --generate-keys --key-prefix=g: \
         --key-minimum=1 --key-maximum=10 --key-pattern=S:S --ratio=1:0 -n 10",
        server.port,
        file.display()
    );
    let report = run(&parse(&line).workload).unwrap();
    assert_eq!(report.totals.errors, 0);
    assert_eq!(server.dbsize(), 10);
    let mut client = raw_client(&server);
    for k in 1..=10usize {
        let want = &items[(k - 1) % 3].1;
        assert_eq!(
            get(&mut client, format!("g:{k}").as_bytes()).as_ref(),
            Some(want),
            "g:{k}"
        );
    }
    assert_eq!(get(&mut client, b"imp:0"), None);
}

/// The numbers of a per-client file's rows: (second, columns after it).
fn client_rows(path: &std::path::Path) -> Vec<(usize, Vec<f64>)> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("Per-Second Benchmark Data"));
    assert!(lines
        .next()
        .unwrap()
        .starts_with("Second,SET Requests,SET Average Latency,"));
    lines
        .map(|l| {
            let cells: Vec<f64> = l.split(',').map(|c| c.parse().unwrap()).collect();
            assert_eq!(cells.len(), 15, "{l}");
            (cells[0] as usize, cells[1..].to_vec())
        })
        .collect()
}

/// `--client-stats=PREFIX`: a file per client (`PREFIX-RUN-THREAD-CLIENT.csv`) whose rows
/// add up exactly to the report: per command over the run, and per second over the clients.
#[test]
fn client_stats_files_add_up_to_the_report() {
    let server = Server::start(&[]);
    let prefix = server.dir.join("clients");
    // 4 clients at 200 requests/s each, 300 requests each: two seconds of rows.
    let line = format!(
        "-s 127.0.0.1 -p {} -c 2 -t 2 -n 300 --rate-limiting=200 --ratio=1:3 --key-maximum=100 \
         --client-stats={}",
        server.port,
        prefix.display()
    );
    let report = run(&parse(&line).workload).unwrap();
    let phase = &report.phases[0];
    assert_eq!(report.totals.ops, 1200);
    let mut files = Vec::new();
    for thread in 0..2 {
        for client in 0..2 {
            let path = server.dir.join(format!("clients-1-{thread}-{client}.csv"));
            assert!(path.exists(), "{}", path.display());
            files.push(client_rows(&path));
        }
    }
    assert_eq!(
        std::fs::read_dir(&server.dir)
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .file_name()
                    .to_string_lossy()
                    .starts_with("clients-")
            })
            .count(),
        4
    );
    // Columns: 0 SET requests, 2-4 SET bytes (total, TX, RX), 5 GET requests, 7-9 GET bytes,
    // 10 misses, 11 hits.
    let sum = |col: usize| -> f64 { files.iter().flatten().map(|(_, c)| c[col]).sum() };
    let (set, get) = (&phase.commands["SET"], &phase.commands["GET"]);
    assert_eq!(sum(0) as u64, set.ops);
    assert_eq!(sum(3) as u64, set.bytes_sent);
    assert_eq!(sum(4) as u64, set.bytes_received);
    assert_eq!(sum(2) as u64, set.bytes_sent + set.bytes_received);
    assert_eq!(sum(5) as u64, get.ops);
    assert_eq!(sum(8) as u64, get.bytes_sent);
    assert_eq!(sum(9) as u64, get.bytes_received);
    assert_eq!((sum(11) as u64, sum(10) as u64), (get.hits, get.misses));
    assert!(get.hits > 0 && get.misses > 0);
    // Each client's own 300 requests, and each second's rows add up to its timeline row.
    for rows in &files {
        assert_eq!(
            rows.iter().map(|(_, c)| c[0] + c[5]).sum::<f64>() as u64,
            300
        );
    }
    let seconds = files.iter().flatten().map(|(s, _)| *s).max().unwrap() + 1;
    assert!(seconds >= 2, "{seconds}");
    for s in 0..seconds {
        let ops: f64 = files
            .iter()
            .flatten()
            .filter(|(t, _)| *t == s)
            .map(|(_, c)| c[0] + c[5])
            .sum();
        assert_eq!(ops as u64, phase.timeline[s].ops, "second {s}");
    }
    // The average latency is memtier's: seconds with 6 decimals, and plausible.
    let avg = files[0][0].1[1];
    assert!(avg > 0.0 && avg < 1.0, "{avg}");
}

/// `--failed-keys-file` with `--cluster-mode`: each request failed for good on whichever
/// primary is logged once, with its key and the error reply.
#[test]
fn failed_keys_file_in_cluster_mode_logs_each_failed_request() {
    let cluster = common::Cluster::start(3, 0);
    let dir = &cluster.nodes[0].dir;
    let base = format!(
        "--cluster-mode -s 127.0.0.1 -p {} -c 2 -t 1 --key-maximum=99 -n allkeys",
        cluster.port()
    );
    let populate = run(&parse(&format!("{base} --key-pattern=P:P --ratio=1:0")).workload).unwrap();
    assert_eq!((populate.totals.ops, populate.totals.errors), (100, 0));
    let file = dir.join("failed.csv");
    let line = format!(
        "{base} --command=\"LPUSH __key__ x\" --command-key-pattern=P --failed-keys-file={}",
        file.display()
    );
    let report = run(&parse(&line).workload).unwrap();
    assert_eq!((report.totals.ops, report.totals.errors), (100, 100));
    let lines = failed_lines(&file);
    assert_eq!(lines.len(), 100);
    let mut keys: Vec<String> = lines
        .iter()
        .map(|l| {
            let rest = l.strip_prefix("LPUSH,\"").unwrap_or_else(|| panic!("{l}"));
            assert!(
                rest.ends_with(
                    ",\"-WRONGTYPE Operation against a key holding the wrong kind of value\",0"
                ),
                "{l}"
            );
            rest.split('"').next().unwrap().to_string()
        })
        .collect();
    keys.sort();
    let mut want: Vec<String> = (0..100).map(|k| format!("memtier-{k}")).collect();
    want.sort();
    assert_eq!(keys, want);
}

/// `--transaction` with `--cluster-mode`: each rotation's MULTI and EXEC go to the primary
/// of its key, so every transaction runs whole on one node.
#[test]
fn transaction_in_cluster_mode_runs_each_rotation_on_its_keys_primary() {
    let cluster = common::Cluster::start(3, 0);
    // 2 threads of one client x 20 requests (each its own budget, so no rotation is cut
    // short), rotations of MULTI, INCR, INCR, EXEC: 10 rotations, keys 1 to 10 drawn in
    // sequence, pipelined.
    let m = parse(&format!(
        "--cluster-mode -s 127.0.0.1 -p {} -c 1 -t 2 -n 20 --pipeline=4 --key-minimum=1 \
         --key-maximum=100 --transaction --command=MULTI --command='INCR __key__' \
         --command-ratio=2 --command-key-pattern=S --command=EXEC",
        cluster.port()
    ));
    let report = run(&m.workload).unwrap();
    assert_eq!(
        report.totals.errors, 0,
        "{:?}",
        report.totals.errors_by_kind
    );
    assert_eq!(report.totals.ops, 40);
    let primaries = cluster.primaries();
    let mut used = 0;
    for p in &primaries {
        let (multi, exec) = (p.calls("multi"), p.calls("exec"));
        assert_eq!(multi, exec, "each MULTI with its EXEC on one node");
        assert_eq!(p.calls("incr"), 2 * multi);
        used += usize::from(multi > 0);
    }
    assert!(
        used >= 2,
        "the keys' transactions spread over the primaries"
    );
    let total: u64 = primaries.iter().map(|p| p.calls("exec")).sum();
    assert_eq!(total, 10);
    // One key per rotation, each incremented by both INCRs of its transaction.
    let mut keys = 0;
    for p in &primaries {
        for key in p
            .cli(&["KEYS", "memtier-*"])
            .lines()
            .filter(|k| !k.is_empty())
        {
            assert_eq!(p.cli(&["GET", key]), "2", "{key}");
            keys += 1;
        }
    }
    assert_eq!(keys, 10);
}
